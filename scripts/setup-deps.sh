#!/usr/bin/env bash
# Installs the Debian 12 packages torch-syncfree needs, only those missing:
# a no-op (no apt-get at all) when everything is present.
set -euo pipefail

PACKAGES=(
  clang-22 clang-tidy-22 clang-tools-22 libclang-22-dev libclang-cpp22-dev
  llvm-22-dev llvm-22-tools          # find_package(Clang) needs this whole set; lit-22, FileCheck-22
  libtorch-dev                       # LibTorch 1.13 headers and CPU libraries (real-header tests, CPU harness)
  cmake ninja-build ccache python3 g++
  neovim                             # a real LSP client for test/tool/nvim.test
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "setup-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"

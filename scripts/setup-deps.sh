#!/usr/bin/env bash
# Installs the Debian 12 packages torch-syncfree needs, only those missing:
# a no-op (no apt-get at all) when everything is present.
set -euo pipefail

PACKAGES=(
  clang-22 clang-tidy-22 clang-tools-22 libclang-22-dev libclang-cpp22-dev
  llvm-22-dev llvm-22-tools          # find_package(Clang) needs this whole set; lit-22, FileCheck-22
  libtorch-dev                       # LibTorch 1.13 headers and CPU libraries (real-header tests, CPU harness)
  cmake ninja-build ccache python3 g++
  patch                              # test/tool/file-safety.test applies a dry-run diff
  clang-format-22                    # test/tool/format-style.test: fixed lines pass clang-format
  libclang-rt-22-dev                 # ASan/UBSan runtime for scripts/test.sh (sanitizer suites)
  dpkg-dev                           # cpack -G DEB (test/tool/install.test)
  pre-commit                         # the hook run by pre-commit itself (test/tool/pre-commit.test)
  neovim                             # a real LSP client for test/tool/nvim.test
  emacs-nox elpa-eglot               # the other editor's client for test/tool/emacs.test
  python3-jsonschema                 # SARIF schema validation in test/tool/sarif.test
  libgtest-dev                       # unit tests of the engine (test/unit, gtest)
  python3-psutil                     # lit's per-test time limit (the suite's only one)
  lld                                # the CPU harness links its 62 programs with it (0.22 s
                                     # instead of ld.bfd's 1.23 s each against LibTorch)
  libc++-22-dev libc++abi-22-dev     # common companions of clang-22: the build must not
                                     # depend on their absence (issue 39: cxxabi.h)
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-deps: all ${#PACKAGES[@]} packages present"
else
  echo "setup-deps: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Sarif.Multitool (npm) checks the SARIF output against GitHub's code-scanning
# rules in test/tool/sarif-multitool.test; optional: the test is UNSUPPORTED
# (with a note) where npm or the registry is not available.
MULTITOOL_DIR="$(cd "$(dirname "$0")/.." && pwd)/.cache/sarif-multitool"
if command -v npm >/dev/null 2>&1 && [ ! -x "$MULTITOOL_DIR/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool" ]; then
  echo "setup-deps: installing @microsoft/sarif-multitool-linux into .cache/"
  npm install --silent --no-audit --no-fund --prefix "$MULTITOOL_DIR" @microsoft/sarif-multitool-linux \
    || echo "setup-deps: note: Sarif.Multitool not installed (sarif-multitool.test will be UNSUPPORTED)"
fi

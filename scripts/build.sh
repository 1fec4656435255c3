#!/usr/bin/env bash
# Configures and builds torch-syncfree (Ninja, clang++-22, ccache when present).
#   scripts/build.sh                         -> build/
#   scripts/build.sh build-asan -DTORCH_SYNCFREE_SANITIZE=ON   (any dir, extra cmake args)
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build}"
shift || true
if [ ! -f "$dir/build.ninja" ]; then
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++-22 "$@"
elif [ $# -gt 0 ]; then
  cmake -S . -B "$dir" "$@" > /dev/null   # an existing build takes the options given now
fi
cmake --build "$dir" -j "$(nproc)"

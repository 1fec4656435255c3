#!/usr/bin/env bash
# Configures and builds torch-syncfree in build/ (Ninja, clang++-22, ccache when present).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++-22
fi
cmake --build build -j "$(nproc)"

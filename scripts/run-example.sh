#!/usr/bin/env bash
# The README's "run" command: install what is missing, build, and run torch-syncfree
# on the bundled training loop (against Debian's real LibTorch headers), printing
# its findings and the diff its fixes would make. Nothing is written.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-deps.sh
scripts/build.sh
echo "== torch-syncfree examples/train_loop.cpp (LibTorch 1.13 headers) =="
set +e
build/bin/torch-syncfree --fix --dry-run examples/train_loop.cpp -- \
  -std=c++17 -isystem /usr/include/torch/csrc/api/include
status=$?
set -e
# 1 means "findings": the expected outcome on this example.
if [ "$status" -ne 1 ]; then
  echo "run-example: torch-syncfree exited $status" >&2
  exit 1
fi

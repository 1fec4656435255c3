#!/usr/bin/env bash
# The README's "run" command: install what is missing, build, and run torch-syncfree
# on the two bundled training loops (against Debian's real LibTorch headers),
# printing the findings and the diff their fixes would make. Nothing is written.
#   1. examples/train_epoch.cpp: every sync in the step is a false dependency, and
#      every finding comes with its fix.
#   2. examples/train_loop.cpp: a similar loop with an early stop on the loss; the
#      step waits for that value anyway, so most fixes are withheld (and say why).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-deps.sh
scripts/build.sh
flags=(-std=c++17 -isystem /usr/include/torch/csrc/api/include)
# Findings go to stderr and the diff to stdout: each is flushed before the next
# example, so a terminal shows them in this order.
run() {
  local status=0
  build/bin/torch-syncfree --quiet --fix --dry-run "$1" -- "${flags[@]}" || status=$?
  # 1 means "findings": the expected outcome on both examples.
  if [ "$status" -ne 1 ]; then
    echo "run-example: torch-syncfree exited $status on $1" >&2
    exit 1
  fi
}
echo "== 1/2: torch-syncfree --fix --dry-run examples/train_epoch.cpp (LibTorch 1.13 headers) =="
echo "A training loop that needs no value on the host during a step: every finding has a fix."
echo
run examples/train_epoch.cpp 2>&1
echo
echo "== 2/2: torch-syncfree --fix --dry-run examples/train_loop.cpp (LibTorch 1.13 headers) =="
echo "A similar loop with an early stop: \`if (loss.item<float>() < 1e-4f) break;\` makes the host"
echo "wait for the GPU every step anyway, so a non_blocking copy or a device-side sum there saves"
echo "nothing. Those findings say \"no fix: no gain while ... waits every iteration\" and their"
echo "fixes are withheld. Check the loss every N steps (or set the RewriteDespiteWaits option) to get them."
echo
run examples/train_loop.cpp 2>&1

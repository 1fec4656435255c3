#!/usr/bin/env bash
# The README's "test" command (and CI's): install what is missing, build, run every
# lit suite (per-check cases through both front ends, the standalone tool, the
# real-header suite against LibTorch 1.13 and 2.11).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-deps.sh
scripts/build.sh
lit-22 -v --time-tests build/test

#!/usr/bin/env bash
# The README's "test" command (and CI's): install what is missing, build, run every
# lit suite (per-check cases through both front ends, the standalone tool, the
# real-header suite against LibTorch 1.13 and 2.11), then the mock-header suites
# again under AddressSanitizer+UndefinedBehaviorSanitizer (build-asan/) and the
# batch runner under ThreadSanitizer (build-tsan/; both skipped with
# --no-sanitize), then print one summary line.
#   scripts/test.sh               everything (what .ci/run runs)
#   scripts/test.sh --no-sanitize the normal build's suites only
#   scripts/test.sh --sanitize    the sanitizer suites only
set -euo pipefail
cd "$(dirname "$0")/.."
normal=1 sanitize=1
case "${1:-}" in
  --no-sanitize) sanitize=0 ;;
  --sanitize) normal=0 ;;
  "") ;;
  *) echo "usage: scripts/test.sh [--no-sanitize|--sanitize]" >&2; exit 2 ;;
esac
# Each phase prints its wall time (bench/ci_time.sh collects them into a table).
phase_start=$SECONDS
phase() { echo "== phase: $1: $((SECONDS - phase_start)) s"; phase_start=$SECONDS; }
scripts/setup-deps.sh
phase "set-up (packages)"
status=0
results=()
if [ "$normal" = 1 ]; then
  scripts/build.sh build -DTORCH_SYNCFREE_WERROR=ON
  phase "build (build/)"
  scripts/check-style.sh || status=$?
  phase "style of the changed lines"
  lit-22 -v --time-tests -o build/test/results.json build/test || status=$?
  phase "lit (build/test)"
  results+=(build/test/results.json)
fi
if [ "$sanitize" = 1 ]; then
  echo "== the mock-header suites under ASan+UBSan (build-asan/) =="
  # Not under the sanitizers: tool/fixed-point.test analyses and fixes every
  # check input twice; the checks suite runs the same inputs and fixes once
  # under them, and what it adds (a second run changes nothing) is no memory
  # property (86 s of sanitizer test time).
  scripts/build.sh build-asan -DTORCH_SYNCFREE_SANITIZE=ON -DTORCH_SYNCFREE_WERROR=ON
  phase "build (build-asan/)"
  lit-22 -v --time-tests -o build-asan/test/results.json \
    --filter-out "tool/fixed-point.test" \
    build-asan/test/checks build-asan/test/catalog build-asan/test/tool || status=$?
  phase "lit (build-asan/test)"
  results+=(build-asan/test/results.json)
fi
if [ "$sanitize" = 1 ]; then
  echo "== the batch runner under ThreadSanitizer (build-tsan/) =="
  if [ ! -f build-tsan/build.ninja ]; then
    cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++-22 \
      -DTORCH_SYNCFREE_TSAN=ON -DTORCH_SYNCFREE_WERROR=ON
  fi
  cmake --build build-tsan --target torch-syncfree -j "$(nproc)"
  phase "build (build-tsan/)"
  lit-22 -v --time-tests -o build-tsan/test/results.json build-tsan/test/tsan || status=$?
  phase "lit (build-tsan/test/tsan)"
  results+=(build-tsan/test/results.json)
fi
python3 - "${results[@]}" <<'PY'
import json
import sys
tests = []
for path in sys.argv[1:]:
    tag = " (sanitizers)" if "asan" in path else " (thread sanitizer)" if "tsan" in path else ""
    tests += [(t["name"] + tag, t["code"]) for t in json.load(open(path))["tests"]]
codes = [c for _, c in tests]
passed = sum(c in ("PASS", "XFAIL") for c in codes)
failed = sum(c in ("FAIL", "XPASS", "UNRESOLVED", "TIMEOUT") for c in codes)
skipped = sum(c == "UNSUPPORTED" for c in codes)
for name, code in tests:
    if code == "UNSUPPORTED":
        print("skipped (UNSUPPORTED: a REQUIRES feature is missing; the lit notes above say why):", name)
print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
PY
exit $status

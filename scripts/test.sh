#!/usr/bin/env bash
# The README's "test" command (and CI's): install what is missing, build, run every
# lit suite (per-check cases through both front ends, the standalone tool, the
# real-header suite against LibTorch 1.13 and 2.11), then print one summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-deps.sh
scripts/build.sh
status=0
lit-22 -v --time-tests -o build/test/results.json build/test || status=$?
python3 - <<'PY'
import json
results = json.load(open("build/test/results.json"))["tests"]
codes = [t["code"] for t in results]
passed = sum(c in ("PASS", "XFAIL") for c in codes)
failed = sum(c in ("FAIL", "XPASS", "UNRESOLVED", "TIMEOUT") for c in codes)
skipped = sum(c == "UNSUPPORTED" for c in codes)
for t in results:
    if t["code"] == "UNSUPPORTED":
        print("skipped (UNSUPPORTED: a REQUIRES feature is missing; the lit notes above say why):", t["name"])
print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
PY
exit $status

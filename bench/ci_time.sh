#!/usr/bin/env bash
# What CI costs on a fresh clone with an empty compiler cache (issue 27): clones
# the committed HEAD into a temporary directory (with ../shared beside it, as CI
# has it), runs the README's test command there with CCACHE_DISABLE=1, and
# prints the time of each phase and the ten slowest tests.
#   bench/ci_time.sh [--keep] [extra args for scripts/test.sh]
# Run it on an idle machine: it is a measurement, not a test.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
keep=0
if [ "${1:-}" = "--keep" ]; then keep=1; shift; fi
work="$(mktemp -d "${TMPDIR:-/tmp}/torch-syncfree-ci-time.XXXXXX")"
# mktemp makes it 0700; CI's clone is in an ordinary directory, and
# untrusted-unenterable.test runs the tool as another user (setpriv), who must
# be able to enter the checkout.
chmod 755 "$work"
[ "$keep" = 1 ] || trap 'rm -rf "$work"' EXIT
git clone -q --no-local "$repo" "$work/main"
# The 2.11 header tarball lies in ../shared beside the checkout.
[ -d "$repo/../shared" ] && ln -s "$(cd "$repo/../shared" && pwd)" "$work/shared"
cd "$work/main"
start=$SECONDS
set +e
CCACHE_DISABLE=1 CI=true bash scripts/test.sh "$@" > "$work/test.log" 2>&1
code=$?
set -e
total=$((SECONDS - start))
echo "fresh clone of $(git -C "$repo" rev-parse --short HEAD), CCACHE_DISABLE=1, $(nproc) cores, $(date -u +%Y-%m-%d)"
echo
echo "| phase | seconds |"
echo "|---|---|"
sed -n 's/^== phase: \(.*\): \([0-9]*\) s$/| \1 | \2 |/p' "$work/test.log"
echo "| **total (exit $code)** | **$total** |"
echo
tail -n 1 "$work/test.log"
echo
python3 - "$work/main" <<'PY'
import json, os, sys
rows = []
for d in ("build", "build-asan"):
    path = os.path.join(sys.argv[1], d, "test", "results.json")
    if os.path.exists(path):
        for t in json.load(open(path))["tests"]:
            rows.append((t.get("elapsed") or 0.0, t["name"] + (" (asan)" if d == "build-asan" else "")))
rows.sort(reverse=True)
print("| ten slowest tests | seconds |")
print("|---|---|")
for elapsed, name in rows[:10]:
    print("| %s | %.0f |" % (name, elapsed))
PY
[ "$keep" = 0 ] || echo "kept: $work"

#!/usr/bin/env bash
# The project's own code style on the lines a commit changes (CI runs it after
# the build): clang-format (matchers/.clang-format) and clang-tidy
# (matchers/.clang-tidy) over matchers/, tool/ and test/unit/.
#   scripts/check-style.sh [BASE]   lines changed since BASE (default HEAD~1),
#                                   working tree included; needs build/compile_commands.json
set -euo pipefail
cd "$(dirname "$0")/.."
base="${1:-HEAD~1}"
if ! git rev-parse -q --verify "$base^{commit}" > /dev/null; then
  echo "check-style: skipped: no commit $base here (a shallow clone)"
  exit 0
fi
paths=(matchers tool test/unit)
changed() { git diff -U0 --no-color "$base" -- "${paths[@]/%//*.cpp}" "${paths[@]/%//*.h}"; }
status=0
format="$(changed | clang-format-diff-22 -p1 || true)"
if [ -n "$format" ]; then
  printf '%s\n' "$format"
  echo "check-style: the changed lines above are not formatted (clang-format-diff-22 -p1 -i fixes them)"
  status=1
fi
# clang-tidy on the changed lines of the changed sources (headers through them).
tidy_diff=/usr/lib/llvm-22/share/clang/clang-tidy-diff.py
if [ -n "$(changed)" ]; then
  if ! changed | python3 "$tidy_diff" -p1 -path build -clang-tidy-binary clang-tidy-22 -quiet \
      -j "$(nproc)" -regex '.*\.cpp' > build/check-style-tidy.log 2>&1; then
    grep -E "(warning|error):" build/check-style-tidy.log || tail -20 build/check-style-tidy.log
    echo "check-style: clang-tidy reports on the changed lines (build/check-style-tidy.log)"
    status=1
  fi
fi
[ "$status" = 0 ] && echo "check-style: the lines changed since $(git rev-parse --short "$base") are clean"
exit "$status"

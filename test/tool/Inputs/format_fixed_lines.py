"""Every check input, fixed with --fix --format-style=llvm, passes
`clang-format --dry-run --Werror` (LLVM style) on the lines the fix changed.
Prints one line per input and a total; exits 1 on any violation.
usage: format_fixed_lines.py TOOL CLANG_FORMAT WORK INPUT... -- FLAGS..."""
import difflib
import os
import shutil
import subprocess
import sys

args = sys.argv[1:]
split = args.index("--")
tool, clang_format, work = args[:3]
inputs, flags = args[3:split], args[split + 1:]
os.makedirs(work, exist_ok=True)
failures = fixed_files = 0
for source in inputs:
    path = os.path.join(work, os.path.basename(source))
    shutil.copy(source, path)
    before = open(path).read().split("\n")
    subprocess.run([tool, path, "--fix", "--format-style=llvm", "--quiet", "--"] + flags,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = open(path).read().split("\n")
    # The changed lines of the fixed file (1-based, inclusive ranges).
    ranges = []
    for tag, _, _, j1, j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if tag in ("replace", "insert") and j2 > j1:
            ranges.append((j1 + 1, j2))
    if not ranges:
        continue
    fixed_files += 1
    command = [clang_format, "--dry-run", "--Werror", "--style=llvm"]
    command += ["--lines=%d:%d" % r for r in ranges] + [path]
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if result.returncode:
        failures += 1
        print("NOT FORMATTED %s:\n%s" % (os.path.basename(source), result.stdout[:2000]))
    else:
        print("formatted %s (%d changed ranges)" % (os.path.basename(source), len(ranges)))
print("fixed files: %d, not formatted: %d" % (fixed_files, failures))
sys.exit(1 if failures else 0)

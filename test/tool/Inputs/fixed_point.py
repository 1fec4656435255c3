"""fixed_point.py TOOL WORKDIR FLAGS... -- FILES...: for each file, one --fix run
must reach the fixed point: a second --fix run changes nothing, and every
finding of the second run was already a finding of the first (same check, same
message up to line numbers, counted as a multiset): the tool never reports what
it inserted. Prints one line per file
and 'fixed point: N files, M fixes, 0 problems'; exit 1 on a problem."""
import collections
import json
import re
import os
import shutil
import subprocess
import sys

tool, work = sys.argv[1], sys.argv[2]
sep = sys.argv.index("--")
flags, files = sys.argv[3:sep], sys.argv[sep + 1:]
os.makedirs(work, exist_ok=True)


def run(path):
    out = subprocess.run([tool, "--fix", "--format=json", "--quiet", path, "--"] + flags,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if out.returncode not in (0, 1):
        sys.exit("%s: exit %d\n%s" % (path, out.returncode, out.stderr))
    findings = collections.Counter()
    for f in json.loads(out.stdout or "[]"):
        findings[(f["check"], re.sub(r"[0-9]+", "N", f["message"]))] += 1
    applied = [l for l in out.stderr.splitlines() if "applied" in l]
    return findings, applied[-1] if applied else ""


problems = total = 0
for source in files:
    path = os.path.join(work, os.path.basename(source))
    shutil.copy(source, path)
    first, summary = run(path)
    after_first = open(path).read()
    second, summary2 = run(path)
    changed = open(path).read() != after_first
    new = sorted(f for f in second if second[f] > first[f])
    status = "ok"
    if changed:
        status = "CHANGED by the second run (%s)" % summary2
    elif new:
        status = "NEW findings in the second run: %s" % new
    problems += status != "ok"
    total += int(summary.split("applied ")[1].split(" ")[0]) if "applied " in summary else 0
    print("%s: %s" % (os.path.basename(source), status))
print("fixed point: %d files, %d fixes, %d problems" % (len(files), total, problems))
sys.exit(1 if problems else 0)

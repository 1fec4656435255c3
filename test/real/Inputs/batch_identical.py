"""Findings, fixes and exit codes are byte-identical with and without each
batch accelerator: shared PCH (cold, then reused), results cache (reused),
and the unit selection of a line filter. A repository of the real-header
inputs (one PCH group) and generated mock-header units (a second group).
usage: batch_identical.py TOOL WORK INPUTS MOCK_INCLUDE REAL_FLAGS..."""
import json
import os
import shutil
import subprocess
import sys

tool, work, inputs, mock = sys.argv[1:5]
real_flags = sys.argv[5:]
MOCK_TU = """#include <torch/torch.h>
#include <vector>
double metric_{i}(std::vector<torch::Tensor> &xs) {{
  double total = 0;
  for (auto &x : xs) {{
    auto g = x.cuda();
    total += g.index({{g > 0}}).sum().item<double>();
  }}
  return total;
}}
"""


def make_repo(root):
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(os.path.join(root, "build"))
    entries = []
    for name in sorted(os.listdir(inputs)):
        if name.endswith(".cpp"):
            shutil.copy(os.path.join(inputs, name), os.path.join(root, name))
            entries.append((name, real_flags))
    for i in range(6):
        name = "mock_%d.cpp" % i
        open(os.path.join(root, name), "w").write(MOCK_TU.format(i=i))
        entries.append((name, ["-std=c++17", "-isystem", mock]))
    # A macro before the includes: its block cannot be shared, it is parsed in full.
    open(os.path.join(root, "macro_first.cpp"), "w").write(
        "#define METRIC_SCALE 2\n" + MOCK_TU.format(i=99).replace("total;", "total * METRIC_SCALE;"))
    entries.append(("macro_first.cpp", ["-std=c++17", "-isystem", mock]))
    json.dump([{"directory": root, "file": os.path.join(root, n),
                "arguments": ["clang++"] + f + ["-c", n, "-o", n + ".o"]} for n, f in entries],
              open(os.path.join(root, "build", "compile_commands.json"), "w"))


def run(root, *args):
    proc = subprocess.run([tool, "-p", "build", "-j2", "--format=json"] + list(args), cwd=root,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc.returncode, proc.stdout, proc.stderr


def summary(err, word):
    return [l.strip() for l in err.split("\n") if l.strip().startswith(word)]


repo = os.path.join(work, "repo")
make_repo(repo)
cache = os.path.join(work, "cache")
# The --no-pch reference is analysed once, in a copy of its own, with a results
# cache: its --fix below writes those results without parsing again (CI time:
# each real input costs a full parse of <torch/torch.h>). Its paths are the copy's.
plain_root = os.path.join(work, "fix-full")
make_repo(plain_root)
plain_cache = "--cache-dir=" + os.path.join(work, "plain-cache")
full = run(plain_root, "--no-pch", plain_cache)
full = (full[0], full[1].replace(plain_root, repo), full[2])
print("full parse: exit %d, %d findings" % (full[0], len(json.loads(full[1]))))
summaries = os.path.join(work, "summaries.json")
for label, args in (("cold PCH", ["--summaries=" + summaries]),
                    ("reused PCH", []),
                    ("cold PCH + results cache", ["--cache-dir=" + cache]),
                    ("reused PCH + results cache", ["--cache-dir=" + cache])):
    code, out, err = run(repo, *args)
    print("%s: exit %d, identical JSON: %s" % (label, code, (code, out) == full[:2]))
    for line in summary(err, "shared PCH") + summary(err, "results cache"):
        print("  " + line)

# A line filter naming one unit: the others are not analysed. Given the whole
# run's summaries, the result equals the full run's findings in that file;
# without them, the same findings with the project-wide judgements (`uncalled`)
# not made, and the summary says why.
target = os.path.join(repo, "mock_3.cpp")
expected = [f for f in json.loads(full[1]) if f["file"] == target]
filter_arg = '--line-filter=[{"name":"mock_3.cpp"}]'
code, out, err = run(repo, "--no-pch", filter_arg, "--summaries=" + summaries)
print("line filter: exit %d, identical to the full run's findings in that file: %s, %d uncalled" % (
    code, json.loads(out) == expected and len(expected) > 0, sum(1 for f in expected if f["uncalled"])))
print("  " + summary(err, "not analysed")[0])
code, out, err = run(repo, "--no-pch", filter_arg)
unjudged = [dict(f, uncalled=None) for f in expected]
print("line filter without summaries: exit %d, identical but for `uncalled`: %s" % (
    code, json.loads(out) == unjudged))
print("  " + summary(err, "project-wide")[0])

# --fix: from a full parse, and from the caches (results reused).
fixed = {}
for label, args in (("full", ["--no-pch", plain_cache]), ("cached", ["--cache-dir=" + cache])):
    root = os.path.join(work, "fix-" + label)
    if label == "cached":  # the cache was filled on `repo`: same contents, other paths
        make_repo(root)
        run(root, *args)
        make_repo(root)
    code, _, err = run(root, "--fix", *args)
    fixed[label] = (code, {n: open(os.path.join(root, n)).read()
                           for n in sorted(os.listdir(root)) if n.endswith(".cpp")})
    for line in summary(err, "results cache"):
        print("  fix run (%s): %s" % (label, line))
changed = sum(1 for n, t in fixed["full"][1].items()
              if t != open(os.path.join(repo, n)).read())
print("fixed files: %d changed, identical with the caches: %s, exit codes %d %d" % (
    changed, fixed["full"] == fixed["cached"], fixed["full"][0], fixed["cached"][0]))

# Two tool processes at once on one empty cache directory (mock-header units
# only): both build the same PCH to temporary files and rename; both results
# equal a full parse.
small = os.path.join(work, "two-processes")
make_repo(small)
db = os.path.join(small, "build", "compile_commands.json")
json.dump([e for e in json.load(open(db)) if "mock" in e["file"] or "macro" in e["file"]],
          open(db, "w"))
reference = run(small, "--no-pch")
shared = os.path.join(work, "shared-cache")
procs = [subprocess.Popen([tool, "-p", "build", "-j2", "--format=json", "--cache-dir=" + shared],
                          cwd=small, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
         for _ in range(2)]
outputs = [p.communicate() + (p.returncode,) for p in procs]
print("two processes: identical to a full parse: %s, PCH files: %d, temporary files left: %d" % (
    all((code, out) == reference[:2] for out, _, code in outputs),
    len([f for f in os.listdir(os.path.join(shared, "pch")) if f.endswith(".pch")]),
    len([f for f in os.listdir(os.path.join(shared, "pch")) if ".tmp-" in f])))

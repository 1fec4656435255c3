"""The tool fails exactly where clang fails (issue 21): every real-header input
of the suite (and one that does not compile) is parsed by `clang++-22
-fsyntax-only` and analysed by the tool in one batch with its default shortcuts
(shared PCH, skipped LibTorch instantiations). Prints one line per input and
a summary.
usage: parse_parity.py TOOL CLANGXX WORK INPUTS_DIR [--pch-cache=DIR] FLAGS..."""
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys

tool, clangxx, work, inputs = sys.argv[1:5]
flags = sys.argv[5:]
pch_cache = None
if flags and flags[0].startswith("--pch-cache="):
    pch_cache, flags = flags[0].split("=", 1)[1], flags[1:]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from syntax_oracle import syntax_check  # noqa: E402
shutil.rmtree(work, ignore_errors=True)
os.makedirs(os.path.join(work, "build"))
files = []
for name in sorted(os.listdir(inputs)):
    if name.endswith(".cpp"):
        shutil.copy(os.path.join(inputs, name), os.path.join(work, name))
        files.append(os.path.join(work, name))
broken = os.path.join(work, "zz_does_not_compile.cpp")
open(broken, "w").write("#include <torch/torch.h>\nfloat f(torch::Tensor t) { return t.item<float>() + undeclared; }\n")
files.append(broken)
json.dump([{"directory": work, "file": f, "arguments": ["clang++"] + flags + ["-c", f]} for f in files],
          open(os.path.join(work, "build", "compile_commands.json"), "w"))


def clang_ok(path):
    # With the lit run's shared PCH of <torch/torch.h> (test/syntax_oracle.py).
    return syntax_check(clangxx, flags, path, pch_cache).returncode == 0


with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
    clang = dict(zip(files, pool.map(clang_ok, files)))
proc = subprocess.run([tool, "-p", "build", "-j2", "--format=json"], cwd=work,
                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
failed = set(re.findall(r"torch-syncfree: error: (\S+) does not compile", proc.stderr))
same = 0
for f in files:
    tool_ok = f not in failed
    same += tool_ok == clang[f]
    print("%s: clang %s, tool %s" % (os.path.basename(f), "parses" if clang[f] else "fails",
                                      "analyses" if tool_ok else "fails"))
print("exit %d; %d of %d inputs: the tool fails exactly where clang fails: %s" % (
    proc.returncode, same, len(files), same == len(files)))

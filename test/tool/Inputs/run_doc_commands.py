"""Runs every `torch-syncfree` command line of docs/ci.md and the pre-commit hook's
entry from .pre-commit-hooks.yaml in a generated repository, so the documented
commands are the tested ones. usage: run_doc_commands.py SRC_ROOT BIN_DIR WORK_DIR"""
import json
import os
import re
import shlex
import subprocess
import sys

src, bindir, work = sys.argv[1:4]
env = dict(os.environ, PATH=bindir + os.pathsep + os.environ["PATH"])
doc = open(os.path.join(src, "docs", "ci.md")).read()
# In document order (the baseline is written before it is read), each once.
commands = []
for line in doc.splitlines():
    command = line.strip().lstrip("- ").strip()
    if command.startswith("torch-syncfree ") and command not in commands:
        commands.append(command)
hook = open(os.path.join(src, ".pre-commit-hooks.yaml")).read()
entry = re.search(r"^\s*entry:\s*(.+)$", hook, re.M).group(1)
args = json.loads(re.search(r"^\s*args:\s*(\[.*\])$", hook, re.M).group(1))
commands.append(" ".join([entry] + args + ["src/tu0.cpp"]))
assert len(commands) >= 4, commands
# The hook reads git (which lines count, the baseline at a ref): the repository is a git one, with
# its sources committed.
for git in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"]):
    subprocess.run(["git"] + git, cwd=work, check=True)
for command in commands:
    # Shell redirections in the docs are kept: run through the shell.
    proc = subprocess.run(command, shell=True, cwd=work, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    print("%s -> exit %d" % (command, proc.returncode))
    if proc.returncode not in (0, 1):
        print(proc.stderr)
        sys.exit(1)
sarif = json.load(open(os.path.join(work, "torch-syncfree.sarif")))
print("sarif results:", len(sarif["runs"][0]["results"]))

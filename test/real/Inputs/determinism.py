"""Results are a function of the input alone (issue 22): the same files give
byte-identical JSON, SARIF and --fix results at -j1 and at -j8. The -j8 runs
analyse in-process (--tu-timeout=0: eight threads share the engine, where a
process-wide memo once changed a classification) and in worker processes (the
default); -j1 is the reference.
  * the corpus (test/corpus, real LibTorch 1.13 headers; the shared PCH is built
    by the -j1 run and reused by the others): JSON;
  * every check input (test/checks, mock headers): JSON, SARIF and the fixed files.
usage: determinism.py TOOL WORK SRC_DIR MOCK_FLAGS -- REAL_FLAGS"""
import glob
import json
import os
import shutil
import subprocess
import sys

tool, work, src = sys.argv[1:4]
rest = sys.argv[4:]
split = rest.index("--")
mock_flags, real_flags = rest[:split], rest[split + 1:]
cuda = ["--cuda-host-only", "-Wno-unknown-cuda-version", "-isystem", "/usr/local/cuda/include/cccl"]
has_cuda = os.path.exists("/usr/local/cuda/include/cuda_runtime.h")
shutil.rmtree(work, ignore_errors=True)


def make_db(root, files, flags):
    os.makedirs(os.path.join(root, "build"), exist_ok=True)
    json.dump([{"directory": root, "file": f,
                "arguments": ["clang++"] + flags + (cuda if f.endswith(".cu") else []) + ["-fsyntax-only", f]}
               for f in files], open(os.path.join(root, "build", "compile_commands.json"), "w"))


# -j1 (the reference) analyses in worker processes; -j8 both ways. The corpus
# (real headers, the costly part) is analysed twice: -j1 in workers against
# -j8 in-process, which differ in both the schedule and the mode.
IN_PROCESS = "--tu-timeout=0"
WORKERS = "--tu-timeout=600"


def run(root, jobs, *args):
    proc = subprocess.run([tool, "-p", "build", "-j%d" % jobs, "--quiet"] + list(args), cwd=root,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return proc.returncode, proc.stdout


def copy_inputs(root, pattern_dir, exts):
    os.makedirs(root, exist_ok=True)
    files = []
    for name in sorted(os.listdir(pattern_dir)):
        if os.path.splitext(name)[1] in exts and (has_cuda or not name.endswith(".cu")):
            shutil.copy(os.path.join(pattern_dir, name), os.path.join(root, name))
            files.append(os.path.join(root, name))
    return files


# The corpus with the real headers.
corpus = os.path.join(work, "corpus")
make_db(corpus, copy_inputs(corpus, os.path.join(src, "test", "corpus"), (".cpp", ".cu")), real_flags)
reference = run(corpus, 1, WORKERS, "--format=json")
same = [run(corpus, 8, IN_PROCESS, "--format=json") == reference]
print("corpus JSON: %d findings, exit %d; -j8 in-process identical to -j1 in workers: %s" % (
    len(json.loads(reference[1])), reference[0], same))

# The check inputs with the mock headers: JSON, SARIF, --fix.
checks = os.path.join(work, "checks")
files = copy_inputs(checks, os.path.join(src, "test", "checks"), (".cpp", ".cu"))
make_db(checks, files, mock_flags)
for fmt in ("json", "sarif"):
    reference = run(checks, 1, WORKERS, "--format=" + fmt)
    same = [run(checks, 8, mode, "--format=" + fmt) == reference for mode in (IN_PROCESS, WORKERS)]
    print("check inputs %s: %d bytes, exit %d; -j8 in-process, -j8 workers identical to -j1: %s" % (
        fmt.upper(), len(reference[1]), reference[0], same))
fixed = []
for label, jobs, mode in (("j1", 1, WORKERS), ("j8-a", 8, IN_PROCESS), ("j8-b", 8, WORKERS)):
    root = os.path.join(work, "fix-" + label)
    names = copy_inputs(root, os.path.join(src, "test", "checks"), (".cpp", ".cu"))
    make_db(root, names, mock_flags)
    code, _ = run(root, jobs, mode, "--fix")
    fixed.append((code, {os.path.basename(n): open(n).read() for n in names}))
changed = sum(1 for n, t in fixed[0][1].items() if t != open(os.path.join(checks, n)).read())
print("check inputs --fix: %d files changed, exit %d; -j8 in-process, -j8 workers identical to -j1: %s" % (
    changed, fixed[0][0], [f == fixed[0] for f in fixed[1:]]))

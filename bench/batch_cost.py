#!/usr/bin/env python3
"""Batch benchmark (not a test: it prints figures and never fails on them).

A generated repository of TUs (per header tree), analysed:
  torch-syncfree -p, cold      empty cache directory (the shared PCH is built in the run)
  torch-syncfree -p, warm      PCH built by an earlier run, results cache off
  torch-syncfree -p, results   --cache-dir with the results of an earlier run, tree unchanged
  run-clang-tidy-22 -load <plugin> on the same compile database
  clang++-22 -fsyntax-only     per TU, for scale
each at -j1 and -j2: wall time and the peak RSS of the largest process (ours: one process;
run-clang-tidy: one clang-tidy process on one TU; clang++: the largest, i.e. per worker).

Layouts (--layout):
  flat   every TU begins with `#include <torch/torch.h>` (the shape the shared PCH was
         first built for)
  real   the layouts users have (issue 24): sources that include their own header
         first, found beside them ("data.h", include guard) or through -I
         ("proj/model.h" -> "proj/common.h" -> <torch/torch.h>, #pragma once), a
         project-wide common header, two flag groups (-DPROJ_FAST_MATH -O2 for a
         third of the TUs) and one .cu launcher (host code, --cuda-host-only)

usage: bench/batch_cost.py [--layout flat|real] [--tus 24] [--trees 1.13,2.11] [--jobs 1,2]
                           [--build build]
"""
import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TU = """#include <torch/torch.h>
#include <iostream>
float step_{i}(torch::Tensor x, torch::Device device, std::vector<torch::Tensor> &batches) {{
  double running = 0;
  for (auto &b : batches) {{
    auto y = b.to(device);
    auto loss = (y * x).sum();
    running += loss.item<double>();
    std::cout << loss.item<float>() << "\\n";
  }}
  auto z = torch::zeros({{4}}).to(device);
  return running + z.sum().item<float>();
}}
"""


BODY = """float step_{i}(torch::Tensor x, torch::Device device, std::vector<torch::Tensor> &batches) {{
  double running = 0;
  for (auto &b : batches) {{
    auto y = b.to(device);
    auto loss = (y * x).sum();
    running += loss.item<double>();
  }}
  auto z = torch::zeros({{4}}).to(device);
  return running + z.sum().item<float>();
}}
"""
REAL_HEADERS = {
    "include/proj/common.h": "#pragma once\n#include <torch/torch.h>\n#include <string>\n#include <vector>\n"
                             "namespace proj {{ inline std::string tag() {{ return \"proj\"; }} }}\n",
    "include/proj/model.h": "#pragma once\n#include \"common.h\"\n"
                            "struct ProjNet : torch::nn::Module {{\n"
                            "  ProjNet() : fc(register_module(\"fc\", torch::nn::Linear(8, 2))) {{}}\n"
                            "  torch::Tensor forward(torch::Tensor x) {{ return fc(x); }}\n"
                            "  torch::nn::Linear fc;\n}};\n",
    "src/data/data.h": "#ifndef PROJ_DATA_H\n#define PROJ_DATA_H\n#include <torch/torch.h>\n#include <vector>\n"
                       "std::vector<torch::Tensor> make_batches(int n);\n#endif\n",
}
CU = """#include <torch/torch.h>
#include <cuda_runtime.h>
float launch_{i}(torch::Tensor x) {{
  auto y = x.cuda();
  cudaDeviceSynchronize();
  return y.sum().item<float>();
}}
"""


def make_real_repo(repo, flags, tus):
    """A project in the layouts users have; returns its compile commands."""
    for name, text in REAL_HEADERS.items():
        path = os.path.join(repo, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "w").write(text.format())
    commands = []
    shapes = [("src/models/net{i}.cpp", '#include "proj/model.h"\n'),
              ("src/data/loader{i}.cpp", '#include "data.h"\n'),
              ("src/train/step{i}.cpp", '#include "proj/common.h"\n')]
    for i in range(tus - 1):
        rel, include = shapes[i % 3]
        path = os.path.join(repo, rel.format(i=i))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "w").write(include + "#include <cstdio>\n" + BODY.format(i=i))
        group = ["-DPROJ_FAST_MATH=1", "-O2"] if i % 3 == 2 else ["-O0"]
        commands.append({"directory": os.path.join(repo, "build"), "file": path,
                         "arguments": ["clang++"] + flags + group + ["-I" + os.path.join(repo, "include"),
                                                                      "-c", path, "-o", path + ".o"]})
    cu = os.path.join(repo, "src", "kernels", "launch.cu")
    os.makedirs(os.path.dirname(cu), exist_ok=True)
    open(cu, "w").write(CU.format(i=0))
    commands.append({"directory": os.path.join(repo, "build"), "file": cu,
                     "arguments": ["clang++", "-x", "cuda", "--cuda-host-only", "-Wno-unknown-cuda-version",
                                   "--cuda-path=/usr/local/cuda", "-isystem", "/usr/local/cuda/include/cccl"]
                     + flags + ["-c", cu, "-o", cu + ".o"]})
    os.makedirs(os.path.join(repo, "build"), exist_ok=True)
    return commands


def syntax_args(command):
    """A compile command's arguments for `clang++-22 -fsyntax-only` (no -c, -o)."""
    args, skip = [], False
    for a in command["arguments"][1:]:
        if skip:
            skip = False
        elif a == "-o":
            skip = True
        elif a != "-c":
            args.append(a)
    return args


def timed(cmd, cwd, stderr_path=None):
    """Wall seconds, and the peak RSS (MiB) of the process itself (wait4)."""
    start = time.perf_counter()
    err = open(stderr_path, "w") if stderr_path else subprocess.DEVNULL
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit("failed (%d): %s" % (code, " ".join(cmd)))
    return wall, usage.ru_maxrss / 1024.0


def trees(build):
    found = {}
    if os.path.exists("/usr/include/torch/csrc/api/include/torch/torch.h"):
        found["1.13"] = ["-std=c++17", "-isystem", "/usr/include/torch/csrc/api/include"]
    tree = os.path.join(build, "third_party", "libtorch-2.11", "include")
    if os.path.exists(tree):
        found["2.11"] = ["-std=c++17", "-isystem", tree, "-isystem",
                         os.path.join(tree, "torch", "csrc", "api", "include")]
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--layout", choices=("flat", "real"), default="flat")
    parser.add_argument("--tus", type=int, default=24)
    parser.add_argument("--trees", default="1.13,2.11")
    parser.add_argument("--jobs", default="1,2")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = parser.parse_args()
    available = trees(args.build)
    work = tempfile.mkdtemp(prefix="torch-syncfree-bench-")
    # Copies: a rebuild during the benchmark must not change the binary between
    # the runs (the results cache keys on the binary).
    tool = os.path.join(work, "torch-syncfree")
    plugin = os.path.join(work, "TorchSyncFreeTidyModule.so")
    shutil.copy2(os.path.join(args.build, "bin", "torch-syncfree"), tool)
    shutil.copy2(os.path.join(args.build, "lib", "TorchSyncFreeTidyModule.so"), plugin)
    rows = []
    try:
        for name in args.trees.split(","):
            if name not in available:
                print("LibTorch %s headers not found: skipped" % name)
                continue
            flags = available[name]
            repo = os.path.join(work, name)
            os.makedirs(repo)
            commands = []
            if args.layout == "real":
                commands = make_real_repo(repo, flags, args.tus)
            for i in range(args.tus if args.layout == "flat" else 0):
                path = os.path.join(repo, "tu%d.cpp" % i)
                open(path, "w").write(TU.format(i=i))
                commands.append({"directory": repo, "file": path,
                                 "arguments": ["clang++"] + flags + ["-c", path, "-o", path + ".o"]})
            json.dump(commands, open(os.path.join(repo, "compile_commands.json"), "w"))

            for jobs in [int(j) for j in args.jobs.split(",")]:
                cache = os.path.join(work, "cache-%s-%d" % (name, jobs))
                ours = [tool, "-p", repo, "--quiet", "-j", str(jobs), "--cache-dir", cache]
                shutil.rmtree(cache, ignore_errors=True)
                # Cold: builds the PCH, fills the results; its summary (no --quiet) says how
                # many units the shared PCH served, and why not the others.
                log = os.path.join(work, "cold-%s-%d.log" % (name, jobs))
                cold = timed([a for a in ours if a != "--quiet"], repo, log)
                for line in open(log).read().splitlines():
                    if "shared PCH" in line:
                        print("%s -j%d cold:%s" % (name, jobs, line))
                results = timed(ours, repo)       # every result reused
                shutil.rmtree(os.path.join(cache, "results"))
                # warm: the PCH of the cold run, no results cache (--cache-dir turns the
                # results cache on, so point the default PCH directory at the same PCH).
                pch_home = os.path.join(repo, ".torch-syncfree-cache")
                shutil.rmtree(pch_home, ignore_errors=True)
                shutil.copytree(os.path.join(cache, "pch"), os.path.join(pch_home, "pch"))
                warm = timed([tool, "-p", repo, "--quiet", "-j", str(jobs)], repo)
                tidy = timed(["run-clang-tidy-22", "-load", plugin, "-checks=-*,torch-sync-*",
                              "-p", repo, "-quiet", "-j", str(jobs)], repo)
                # run-clang-tidy's workers are its children: one clang-tidy alone for the RSS.
                tidy = (tidy[0], timed(["clang-tidy-22", "--load=" + plugin,
                                        "--checks=-*,torch-sync-*", "-p", repo,
                                        commands[0]["file"]], repo)[1])
                procs, peak = [], 0.0
                start = time.perf_counter()
                pending = list(commands)
                while pending or procs:
                    while pending and len(procs) < jobs:
                        c = pending.pop(0)
                        procs.append(subprocess.Popen(["clang++-22", "-fsyntax-only"] + syntax_args(c),
                                                      cwd=c["directory"], stderr=subprocess.DEVNULL))
                    pid, status, usage = os.wait4(-1, 0)
                    peak = max(peak, usage.ru_maxrss / 1024.0)
                    procs = [p for p in procs if p.pid != pid]
                syntax = (time.perf_counter() - start, peak)
                rows.append((name, args.tus, jobs, cold, warm, results, tidy, syntax))
        print("%d TUs per tree, %s; wall time / peak RSS of the largest process" % (
            args.tus, "each `#include <torch/torch.h>`" if args.layout == "flat" else
            "real layout (own header first, -I headers, two flag groups, one .cu)"))
        print("| LibTorch | -j | ours cold | ours warm PCH | ours results cache | run-clang-tidy "
              "| clang++ -fsyntax-only | warm vs run-clang-tidy | cold vs run-clang-tidy "
              "| results vs cold |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        fmt = lambda m: "%.1f s / %.0f MiB" % m
        for name, tus, jobs, cold, warm, results, tidy, syntax in rows:
            print("| %s | %d | %s | %s | %s | %s | %s | %.2fx faster | %.2fx faster | %.1f%% |" % (
                name, jobs, fmt(cold), fmt(warm), fmt(results), fmt(tidy), fmt(syntax),
                tidy[0] / warm[0], tidy[0] / cold[0], 100.0 * results[0] / cold[0]))
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()

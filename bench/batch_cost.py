#!/usr/bin/env python3
"""Batch benchmark (not a test): a generated repository of LibTorch TUs (mock headers,
plus a few real <torch/torch.h> ones), analysed by `torch-syncfree -p` at -j1 and -j2 and
by `run-clang-tidy-22 -load <plugin>` at -j1 and -j2 on the same compile database.
Prints wall times and their ratios.

usage: bench/batch_cost.py [--mock 40] [--real 4]
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


def timed(cmd, cwd):
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if proc.returncode not in (0, 1):
        raise SystemExit("failed (%d): %s" % (proc.returncode, " ".join(cmd)))
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mock", type=int, default=40)
    parser.add_argument("--real", type=int, default=4)
    args = parser.parse_args()
    tool = os.path.join(ROOT, "build", "bin", "torch-syncfree")
    plugin = os.path.join(ROOT, "build", "lib", "TorchSyncFreeTidyModule.so")
    work = tempfile.mkdtemp(prefix="torch-syncfree-bench-")
    try:
        rows = []
        for kind, count, flags in (
                ("mock headers", args.mock, "-std=c++17 -isystem " + os.path.join(ROOT, "test", "mock", "include")),
                ("torch.h 1.13", args.real, "-std=c++17 -isystem /usr/include/torch/csrc/api/include")):
            if count == 0:
                continue
            repo = os.path.join(work, kind.replace(" ", "_"))
            os.makedirs(repo)
            commands = []
            for i in range(count):
                path = os.path.join(repo, "tu%d.cpp" % i)
                open(path, "w").write(TU.format(i=i))
                commands.append({"directory": repo, "file": path,
                                 "command": "clang++ %s -c %s" % (flags, path)})
            json.dump(commands, open(os.path.join(repo, "compile_commands.json"), "w"))
            row = [kind, count]
            for jobs in (1, 2):
                row.append(timed([tool, "-p", repo, "--quiet", "-j", str(jobs)], repo))
            for jobs in (1, 2):
                row.append(timed(["run-clang-tidy-22", "-load", plugin, "-checks=-*,torch-sync-*",
                                  "-p", repo, "-quiet", "-j", str(jobs)], repo))
            rows.append(row)
        print("| TUs | torch-syncfree -j1 | -j2 | run-clang-tidy -j1 | -j2 | speed-up -j2/-j1 (ours) | ours/run-clang-tidy at -j2 |")
        print("|---|---|---|---|---|---|---|")
        for kind, count, o1, o2, r1, r2 in rows:
            print("| %d (%s) | %.1f s | %.1f s | %.1f s | %.1f s | %.2fx | %.2fx |" %
                  (count, kind, o1, o2, r1, r2, o1 / o2, o2 / r2))
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()

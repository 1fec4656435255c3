#!/usr/bin/env python3
"""Prints the parse cost of torch-syncfree against `clang++-22 -fsyntax-only` and
clang-tidy with the plugin on the same inputs: wall time (median of N runs) and peak
RSS, and their ratios. A benchmark, not a test: it prints figures and never fails on them.

usage: bench/parse_cost.py [--runs N] [--build build]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def measure_with_cpu(cmd, runs):
    """Median wall seconds, max peak RSS (MiB) and median user CPU seconds of cmd."""
    walls, rss, users = [], [], []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        walls.append(time.perf_counter() - start)
        rss.append(usage.ru_maxrss / 1024.0)  # KiB -> MiB
        users.append(usage.ru_utime)
        code = os.waitstatus_to_exitcode(status)
        if code not in (0, 1):
            sys.exit("benchmark command failed (%d): %s" % (code, " ".join(cmd)))
    return statistics.median(walls), max(rss), statistics.median(users)


def measure(cmd, runs):
    wall, rss, _ = measure_with_cpu(cmd, runs)
    return wall, rss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = parser.parse_args()
    tool = os.path.join(args.build, "bin", "torch-syncfree")
    plugin = os.path.join(args.build, "lib", "TorchSyncFreeTidyModule.so")
    example = os.path.join(ROOT, "examples", "train_loop.cpp")
    inputs = [("mock headers", ["-std=c++17", "-isystem", os.path.join(ROOT, "test", "mock", "include")])]
    if os.path.exists("/usr/include/torch/csrc/api/include/torch/torch.h"):
        inputs.append(("torch.h 1.13", ["-std=c++17", "-isystem", "/usr/include/torch/csrc/api/include"]))
    tree = os.path.join(args.build, "third_party", "libtorch-2.11", "include")
    if os.path.exists(tree):
        inputs.append(("torch.h 2.11", ["-std=c++17", "-isystem", tree, "-isystem",
                                        os.path.join(tree, "torch", "csrc", "api", "include")]))
    print("input: examples/train_loop.cpp; median of %d runs; peak RSS is the max" % args.runs)
    print("| headers | clang++ -fsyntax-only | torch-syncfree | ratio | clang-tidy + plugin | ratio |")
    print("|---|---|---|---|---|---|")
    for name, flags in inputs:
        base = measure(["clang++-22", "-fsyntax-only"] + flags + [example], args.runs)
        ours = measure([tool, example, "--"] + flags, args.runs)
        tidy = measure(["clang-tidy-22", "--load=" + plugin, "--checks=-*,torch-sync-*", example,
                        "--"] + flags, args.runs)
        fmt = lambda m: "%.2f s / %.0f MiB" % m
        ratio = lambda m: "%.2fx time, %.2fx RSS" % (m[0] / base[0], m[1] / base[1])
        print("| %s | %s | %s | %s | %s | %s |" % (name, fmt(base), fmt(ours), ratio(ours),
                                                  fmt(tidy), ratio(tidy)))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Prints, for the real-header TUs of test/real/Inputs, the wall and user CPU time of
torch-syncfree (--no-pch --tu-timeout=0, every check) against `clang++-22 -fsyntax-only`
on the same file and headers (LibTorch 2.11 from build/third_party), one run each
unless --runs says more (the median is printed), and the median ratio. A benchmark,
not a test: it prints figures and never fails on them.

usage: bench/per_tu_cost.py [--runs N] [--build build]
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parse_cost import measure_with_cpu  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UNITS = ["torchscript_user", "training_step", "catalog_fixes", "device_guards", "linalg_ex", "remaining_fixes"]


def measure(cmd, runs):
    wall, _, user = measure_with_cpu(cmd, runs)
    return wall, user


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = parser.parse_args()
    tool = os.path.join(args.build, "bin", "torch-syncfree")
    inc = os.path.join(args.build, "third_party", "libtorch-2.11", "include")
    if not os.path.isdir(inc):
        sys.exit("per_tu_cost: no LibTorch 2.11 headers under %s (run the lit tests once)" % inc)
    flags = ["-std=c++17", "-isystem", inc, "-isystem", os.path.join(inc, "torch", "csrc", "api", "include")]
    print("| TU | clang++ -fsyntax-only wall / user (s) | torch-syncfree wall / user (s) | ratio (wall) |")
    print("|---|---|---|---|")
    ratios = []
    for unit in UNITS:
        path = os.path.join(ROOT, "test", "real", "Inputs", unit + ".cpp")
        clang = measure(["clang++-22", "-fsyntax-only"] + flags + [path], args.runs)
        ours = measure([tool, "--no-pch", "--tu-timeout=0", "--quiet", path, "--"] + flags, args.runs)
        ratios.append(ours[0] / clang[0])
        print("| %s | %.2f / %.2f | %.2f / %.2f | %.2fx |" % (unit, clang[0], clang[1], ours[0], ours[1],
                                                             ratios[-1]))
    print("median ratio (wall): %.2fx" % statistics.median(ratios))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Cost of the project summaries (issue 42; not a test: it prints figures).

On bench/batch_cost.py's real layout (own headers, -I, a common header, two
flag groups, one .cu launcher), the same cold batch run (empty cache
directory: the shared PCH is built in the run) with the summaries on (the
default) and off (`ProjectSummaries: false`), interleaved, and a warm run from
the results cache each way. Prints the median wall time of each and the ratio.

usage: bench/summary_cost.py [--tus 24] [--tree 2.11] [--jobs 2] [--repeats 3] [--build build]
"""
import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import batch_cost  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tus", type=int, default=24)
    parser.add_argument("--tree", default="2.11")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--build", default=os.path.join(batch_cost.ROOT, "build"))
    args = parser.parse_args()
    flags = batch_cost.trees(args.build).get(args.tree)
    if not flags:
        sys.exit("summary_cost: LibTorch %s headers not found" % args.tree)
    tool = os.path.join(args.build, "bin", "torch-syncfree")
    work = tempfile.mkdtemp(prefix="summary-cost-")
    try:
        repo = os.path.join(work, "repo")
        commands = batch_cost.make_real_repo(repo, flags, args.tus)
        json.dump(commands, open(os.path.join(repo, "build", "compile_commands.json"), "w"))
        runs = {"on": [], "off": [], "on warm": [], "off warm": []}
        for _ in range(args.repeats):
            for mode in ("on", "off"):
                cache = os.path.join(work, "cache-" + mode)
                shutil.rmtree(cache, ignore_errors=True)
                cmd = [tool, "-p", os.path.join(repo, "build"), "--quiet", "-j", str(args.jobs),
                       "--cache-dir=" + cache]
                if mode == "off":
                    cmd.append("--config={CheckOptions: {ProjectSummaries: false}}")
                runs[mode].append(batch_cost.timed(cmd, repo)[0])
                runs[mode + " warm"].append(batch_cost.timed(cmd, repo)[0])
        median = {k: statistics.median(v) for k, v in runs.items()}
        print("| LibTorch | TUs | -j | cold, summaries on | cold, off | on/off | warm, on | warm, off | on/off |")
        print("|---|---|---|---|---|---|---|---|---|")
        print("| %s | %d | %d | %.1f s | %.1f s | %.3f | %.2f s | %.2f s | %.3f |" % (
            args.tree, len(commands), args.jobs, median["on"], median["off"], median["on"] / median["off"],
            median["on warm"], median["off warm"], median["on warm"] / median["off warm"]))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Scores torch-syncfree against the hand-annotated corpus in this folder.

Every sync site in a corpus file carries, on its line, a comment written by hand
before the tool was run on the file:

    loss_sum += loss.item<double>();  // SYNC: false

(the class of each sync site on the line: false, true or intentional, one word per
site). `interval` marks a false dependency read only under a log interval
(`if (step % N == 0)`): it is the remedy already and must not be reported (a
finding there counts against precision). A file whose first lines say `// CORPUS: cpu-only` never touches the GPU:
every finding in it is a false positive.

A call of one of the file's own functions that syncs is a sync site of its own only
inside a loop (torch-sync-call-in-loop); elsewhere its syncs are counted once, where
they are, in the callee.

A finding that names several lines (torch-sync-coalesce's run of reads) also
counts on the named lines no other finding reports; when other findings report
all of them, it is a summary of those sites and counts only if it names a line
that is not an annotated sync (then against precision). Findings match annotations on the same line (which check reports a site is the
tool's business; that it is found, and its class, are scored). Printed:
recall (annotations found), precision (findings annotated), class accuracy (matched
findings whose dependency class is the annotated one) and false positives per 1,000
lines of the cpu-only files. With --min-* the exit status is 1 below a threshold.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ANNOTATION = re.compile(r"//\s*SYNC:\s*(.*)$")


def annotations(path):
    sites, cpu_only, lines = {}, False, 0
    with open(path) as f:
        for number, text in enumerate(f, 1):
            lines += 1
            if number <= 5 and "CORPUS: cpu-only" in text:
                cpu_only = True
            match = ANNOTATION.search(text)
            if not match:
                continue
            classes = match.group(1).split()
            if not classes or any(c not in ("false", "true", "intentional", "interval") for c in classes):
                sys.exit("%s:%d: malformed SYNC annotation %r" % (path, number, match.group(1)))
            expected = sorted(c for c in classes if c != "interval")
            if expected:
                sites[number] = expected
    return sites, cpu_only, lines


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tool", required=True)
    parser.add_argument("--work", required=True, help="scratch folder (compile database, caches)")
    parser.add_argument("--min-recall", type=float, default=0)
    parser.add_argument("--min-precision", type=float, default=0)
    parser.add_argument("--min-class", type=float, default=0)
    parser.add_argument("--max-cpu-fp-per-kloc", type=float, default=float("inf"))
    parser.add_argument("flags", nargs=argparse.REMAINDER, help="-- compiler flags")
    args = parser.parse_args()
    flags = args.flags[1:] if args.flags[:1] == ["--"] else args.flags
    files = sorted(glob.glob(os.path.join(HERE, "*.cpp")))
    cuda = "/usr/local/cuda"
    if os.path.exists(os.path.join(cuda, "include", "cuda_runtime.h")):
        files += sorted(glob.glob(os.path.join(HERE, "*.cu")))
    else:
        print("score: no CUDA toolkit at %s: the .cu files are not scored" % cuda)
    os.makedirs(args.work, exist_ok=True)
    database = []
    for path in files:
        extra = (["--cuda-host-only", "-Wno-unknown-cuda-version", "-isystem", os.path.join(cuda, "include", "cccl")]
                 if path.endswith(".cu") else [])
        database.append({"directory": HERE, "file": path,
                         "arguments": ["clang++"] + flags + extra + ["-fsyntax-only", path]})
    with open(os.path.join(args.work, "compile_commands.json"), "w") as f:
        json.dump(database, f, indent=1)
    proc = subprocess.run([args.tool, "-p", args.work, "--format=json", "--cache-dir",
                           os.path.join(args.work, "cache")] + files,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode not in (0, 1):
        sys.exit("score: torch-syncfree failed (exit %d):\n%s" % (proc.returncode, proc.stderr[-4000:]))
    findings = {}
    for f in json.loads(proc.stdout):
        findings.setdefault(os.path.realpath(f["file"]), []).append(f)

    annotated = found = reported = matched_findings = right_class = 0
    cpu_lines = cpu_fp = total_lines = 0
    problems = []
    for path in files:
        sites, cpu_only, lines = annotations(path)
        total_lines += lines
        name = os.path.basename(path)
        got = {}
        runs = []
        for f in findings.get(os.path.realpath(path), []):
            # A finding that names the sites it covers ("3 `item()` reads ... (lines
            # 12, 14, 15)") stands for the named sites no other finding reports; one
            # whose sites are all reported by others is a summary of them (counted
            # once, against precision, only if it names a line that is no sync).
            named = re.search(r"\(lines ([0-9, ]+)\)", f["message"])
            if named:
                runs.append((sorted({int(n) for n in named.group(1).split(",")} | {f["line"]}), f))
            else:
                got.setdefault(f["line"], []).append((f["dependency"], f["check"]))
        for lines_named, f in runs:
            uncovered = [n for n in lines_named if n not in got]
            for n in uncovered:
                got[n] = [(f["dependency"], f["check"])]
            if not uncovered and any(n not in sites for n in lines_named):
                got.setdefault(f["line"], []).append((f["dependency"], f["check"]))
        annotated += sum(len(v) for v in sites.values())
        reported += sum(len(v) for v in got.values())
        if cpu_only:
            cpu_lines += lines
            cpu_fp += sum(len(v) for v in got.values())
        for line in sorted(set(sites) | set(got)):
            want = list(sites.get(line, []))
            have = got.get(line, [])
            pairs = min(len(want), len(have))
            found += pairs
            matched_findings += pairs
            # Classes: the best pairing of annotated and reported classes on the line.
            remaining = list(want)
            correct = 0
            for cls, _ in have:
                if cls in remaining:
                    remaining.remove(cls)
                    correct += 1
            right_class += min(correct, pairs)
            checks = ",".join(sorted(c for _, c in have))
            if len(want) > len(have):
                problems.append("%s:%d: missed %d (annotated %s, reported %s)" %
                                (name, line, len(want) - len(have), " ".join(want), checks or "nothing"))
            elif len(have) > len(want):
                problems.append("%s:%d: %d not annotated (%s)" % (name, line, len(have) - len(want),
                                                               ", ".join("%s %s" % (c, d) for d, c in have)))
            if correct < pairs:
                problems.append("%s:%d: class %s, annotated %s" %
                                (name, line, " ".join(d for d, _ in have), " ".join(want)))

    recall = found / annotated if annotated else 1.0
    precision = matched_findings / reported if reported else 1.0
    class_accuracy = right_class / matched_findings if matched_findings else 1.0
    fp_per_kloc = 1000.0 * cpu_fp / cpu_lines if cpu_lines else 0.0
    for p in problems:
        print("  " + p)
    print("corpus: %d files, %d lines, %d annotated sync sites, %d findings" %
          (len(files), total_lines, annotated, reported))
    print("recall %.3f  precision %.3f  class accuracy %.3f  cpu-only false positives %.2f per 1,000 lines "
          "(%d lines)" % (recall, precision, class_accuracy, fp_per_kloc, cpu_lines))
    ok = (recall >= args.min_recall and precision >= args.min_precision and
          class_accuracy >= args.min_class and fp_per_kloc <= args.max_cpu_fp_per_kloc)
    print("thresholds: %s" % ("met" if ok else "NOT met"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

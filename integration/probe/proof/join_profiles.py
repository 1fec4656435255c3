#!/usr/bin/env python3
"""Joins the device run's profiles (run.sh profile/oracle) with the tool's findings.

usage: join_profiles.py <profile dir> [--out DIR] [--tool PATH] [--only NAME ...]

<profile dir> holds what run.sh brought back: <name>.profile.json, <name>.debug
(objcopy --only-keep-debug), <name>.on.txt (the profiled run's output) and
<name>.oracle.txt (the harness's own sync-debug-mode oracle over the same steps).

For each program the profile is joined twice with `torch-syncfree --profile`
over the staged source (integration/staged-P/<name>.cpp, the path in the DWARF)
and the LibTorch 2.11 headers: once whole, once with only the sync sites whose
stack passes through the harness's step (syncprobe::Harness::markStep; every
site of a program without the harness). The second gives what the issue asks:
each in-step runtime sync mapped to its finding or listed as missed, per step.
Writes <out>/joined.txt (the tool's reports), <out>/joined.json (the summary,
per program and per finding) and prints the table.
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
TREE = ROOT + "/build/third_party/libtorch-2.11"
FLAGS = ["-std=c++17", "-isystem", ROOT + "/integration/staged-P", "-isystem", TREE + "/include",
         "-isystem", TREE + "/include/torch/csrc/api/include", "-isystem", "/usr/local/cuda/include",
         "-I", ROOT + "/probe/include", "-DSYNCPROBE_CUDA", "-DTORCH_SYNCFREE_PROBE_STEPS"]
RUNTIME = ("cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize", "cudaMemcpy")


def committed_oracles():
    """syncs/step of each original program in the committed GPU report (sync debug
    mode, steps 3-7 after 3 warm-up steps)."""
    report = json.load(open(os.path.join(ROOT, "integration", "report", "report.json")))
    return {r["program"]: float(r["original"]["probe"]["debug_syncs_per_step"])
            for r in report["programs"] if "original" in r}


def probe_line(path, key):
    try:
        for line in open(path, errors="replace"):
            parts = line.split()
            if len(parts) == 3 and parts[0] == "SYNCPROBE" and parts[1] == key:
                return float(parts[2])
    except OSError:
        pass
    return None


def symbolize(debug, offsets):
    """offset -> [(function, file, line)] innermost first, for return addresses
    (looked up one byte back, as the tool does)."""
    if not offsets:
        return {}
    text = subprocess.run(["llvm-symbolizer", "--inlining", "--output-style=JSON", "--obj=" + debug],
                          input="\n".join("0x%x" % (o - 1) for o in offsets), capture_output=True,
                          text=True).stdout
    result = {}
    for offset, line in zip(offsets, text.splitlines()):
        frames = json.loads(line).get("Symbol", [])
        result[offset] = [(f.get("FunctionName", ""), f.get("FileName", ""), f.get("Line", 0)) for f in frames]
    return result


def in_step(frames, harness):
    """A sync inside a step: its stack passes through the harness's step call."""
    if not harness:
        return True
    return any("markStep" in function for function, _, _ in frames)


def run_tool(tool, source, profile):
    out = subprocess.run([tool, "--format=json", "--no-pch", "--profile=" + profile, source, "--"] + FLAGS,
                         capture_output=True, text=True)
    try:
        findings = json.loads(out.stdout or "[]")
    except json.JSONDecodeError:
        findings = []
    report = [l for l in out.stderr.splitlines() if l.startswith("  ") or "measured syncs" in l]
    return findings, report, out.returncode


def missed_syncs(report):
    """The tool's 'missed by the analysis' lines -> {where: {kind: (count, wait ms)}}."""
    missed = collections.defaultdict(dict)
    prefix, nowhere = "missed by the analysis: ", "(no frame in the analysed files)"
    for line in report:
        line = line.strip()
        if not line.startswith(prefix):
            continue
        rest = line[len(prefix):]
        if rest.startswith(nowhere):
            where, what = nowhere, rest[len(nowhere) + 2:]
        else:
            where, what = rest.split(": ", 1)
        kind = what.split(" ", 1)[0].rstrip(",")
        count = re.search(r", (\d+) syncs", what)
        wait = re.search(r", ([\d.]+) ms waited", what)
        old = missed[where].get(kind, (0, 0.0))
        missed[where][kind] = (old[0] + (int(count.group(1)) if count else 0),
                               old[1] + (float(wait.group(1)) if wait else 0.0))
    return missed


def join(name, pdir, tool, work, oracles):
    prof_path = os.path.join(pdir, name + ".profile.json")
    if not os.path.exists(prof_path):
        return None, ["== %s: no profile" % name]
    profile = json.load(open(prof_path))
    source_name = name[:-len("_tailcall")] if name.endswith("_tailcall") else name
    source = os.path.join(ROOT, "integration", "staged-P", source_name + ".cpp")
    harness = '#include "syncprobe.h"' in open(source).read()
    # The program's frames: its debug info, kept by run.sh.
    offsets = collections.defaultdict(set)
    for sync in profile["syncs"]:
        for frame in sync["frames"]:
            debug = os.path.join(pdir, os.path.basename(frame.get("module", "")) + ".debug")
            if frame.get("module") and os.path.exists(debug):
                frame["module"] = debug
                offsets[debug].add(frame["offset"])
    symbols = {debug: symbolize(debug, sorted(offs)) for debug, offs in offsets.items()}
    steps = profile["steps"]
    whole, inside = dict(profile), dict(profile)
    inside["syncs"] = []
    count = collections.Counter()  # (kind class, in step) -> count
    for sync in profile["syncs"]:
        frames = []
        for frame in sync["frames"]:
            frames += symbols.get(frame.get("module"), {}).get(frame.get("offset"), [])
        step = in_step(frames, harness)
        kind = "debug" if sync["kind"] == "sync-debug-mode" else sync["kind"]
        count[(kind, step)] += sync["count"]
        if step:
            inside["syncs"].append(sync)
    paths = {}
    for label, data in (("whole", whole), ("steps", inside)):
        paths[label] = os.path.join(work, "%s.%s.json" % (name, label))
        json.dump(data, open(paths[label], "w"))
    f_whole, r_whole, rc1 = run_tool(tool, source, paths["whole"])
    f_steps, r_steps, rc2 = run_tool(tool, source, paths["steps"])
    missed = missed_syncs(r_steps)
    missed_whole = missed_syncs(r_whole)
    # A sync event at a site: an item() is seen by debug mode and as its
    # cudaStreamSynchronize; the larger of the two counts, as the tool counts it.
    def events(kinds):
        debug = sum(c for k, (c, w) in kinds.items() if k == "sync-debug-mode")
        runtime = sum(c for k, (c, w) in kinds.items() if k != "sync-debug-mode")
        return max(debug, runtime)
    mapped = sum(f.get("measured", {}).get("count", 0) for f in f_steps)
    missed_events = {where: events(kinds) for where, kinds in missed.items()}
    findings = []
    for f in f_steps:
        m = f.get("measured", {})
        findings.append({"file": os.path.basename(f["file"]), "line": f["line"], "check": f["check"],
                         "dependency": f["dependency"], "count": m.get("count", 0),
                         "per_step": m.get("per_step", 0), "wait_ms": m.get("wait_ms", 0.0)})
    executed_whole = {(os.path.basename(f["file"]), f["line"], f["check"]) for f in f_whole
                      if f.get("measured", {}).get("count", 0)}
    program_findings = [f for f in findings if f["file"] == source_name + ".cpp"]
    row = {
        "program": name, "steps": steps, "step_ms_probe": profile.get("step_ms"),
        "wall_ms_per_step_on": probe_line(os.path.join(pdir, name + ".on.txt"), "wall_ms_per_step"),
        "oracle_committed": oracles.get(source_name),
        "oracle_same_steps": probe_line(os.path.join(pdir, source_name + ".oracle.txt"), "debug_syncs_per_step"),
        "debug_per_step": count[("debug", True)] / steps if steps else None,
        "debug_outside_steps": count[("debug", False)],
        "runtime_per_step": {k: count[(k, True)] / steps for k in RUNTIME if count[(k, True)]},
        "runtime_outside_steps": {k: count[(k, False)] for k in RUNTIME if count[(k, False)]},
        "mapped_per_step": mapped / steps if steps else None,
        "missed": {w: {"events": e, "per_step": e / steps, "kinds": missed[w]} for w, e in missed_events.items()},
        "missed_per_step": sum(missed_events.values()) / steps if steps else None,
        "missed_outside_steps": {w: kinds for w, kinds in missed_whole.items() if w not in missed},
        "findings": findings,
        "program_findings": len(program_findings),
        "never_executed_in_steps": [f for f in program_findings if not f["count"]],
        "never_executed": [f for f in program_findings
                           if (f["file"], f["line"], f["check"]) not in executed_whole],
        "tool_rc": [rc1, rc2],
    }
    text = ["== %s: %d steps; debug-mode syncs in the steps %.2f/step (oracle, same steps: %s; committed "
            "report: %s); runtime waits in the steps %s; outside the steps: debug %d, runtime %s"
            % (name, steps, row["debug_per_step"], row["oracle_same_steps"], row["oracle_committed"],
               {k: round(v, 2) for k, v in row["runtime_per_step"].items()}, row["debug_outside_steps"],
               row["runtime_outside_steps"])]
    text += ["-- the steps only:"] + r_steps + ["-- the whole run:"] + r_whole
    return row, text


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("profiles")
    parser.add_argument("--out", default=None)
    parser.add_argument("--tool", default=os.path.join(ROOT, "build", "bin", "torch-syncfree"))
    parser.add_argument("--only", nargs="*")
    args = parser.parse_args()
    out = args.out or args.profiles
    work = os.path.join(out, "local")
    os.makedirs(work, exist_ok=True)
    names = sorted(f[:-len(".profile.json")] for f in os.listdir(args.profiles)
                   if f.endswith(".profile.json") and ".overhead-" not in f)
    if args.only:
        names = [n for n in names if n in args.only]
    oracles = committed_oracles()
    rows, lines = [], []
    for name in names:
        row, text = join(name, args.profiles, args.tool, work, oracles)
        lines += text
        print("\n".join(text), flush=True)
        if row:
            rows.append(row)
    with open(os.path.join(out, "joined.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(out, "joined.json"), "w") as f:
        json.dump(rows, f, indent=1)
    print("\n| program | oracle syncs/step (committed; same steps) | debug-mode syncs/step | runtime waits/step "
          "| mapped/step | missed/step | findings never executed (in steps; whole run) |")
    for r in rows:
        print("| %s | %s; %s | %.2f | %s | %.2f | %.2f | %d; %d of %d |" % (
            r["program"], r["oracle_committed"], r["oracle_same_steps"], r["debug_per_step"],
            ", ".join("%s %.2f" % (k, v) for k, v in r["runtime_per_step"].items()) or "-",
            r["mapped_per_step"], r["missed_per_step"], len(r["never_executed_in_steps"]),
            len(r["never_executed"]), r["program_findings"]))


if __name__ == "__main__":
    main()

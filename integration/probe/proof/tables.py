#!/usr/bin/env python3
"""Markdown tables from join_profiles.py's joined.json (integration/report/profiles.md).

usage: tables.py <joined.json>

Prints the per-program summary (oracle against the probe's debug-mode count,
mapped, missed, never executed) and the joined table of every program: each
finding of the program's file with its measured syncs and host wait per step in
the steps, each sync listed as missed (in the steps, and outside them: set-up
and the harness's own), and the findings that never ran.
"""
import json
import os
import sys


def short(where):
    return os.path.basename(where) if where.startswith("/") else where


def events(kinds):
    debug = sum(c for k, (c, _) in kinds.items() if k == "sync-debug-mode")
    runtime = sum(c for k, (c, _) in kinds.items() if k != "sync-debug-mode")
    return max(debug, runtime), sum(w for _, (_, w) in kinds.items())


def main():
    rows = json.load(open(sys.argv[1]))
    print("| program | oracle syncs/step: committed report (steps 3-7); same steps 0-9 | debug-mode syncs/step "
          "(probe) | runtime waits/step (probe) | mapped to a finding, /step | missed, /step | findings never "
          "executed: in the steps; whole run (of the program's) |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        fmt = lambda v: "-" if v is None else "%.2f" % v
        runtime = ", ".join("%s %.2f" % (k.replace("cuda", ""), v) for k, v in r["runtime_per_step"].items())
        print("| %s | %s; %s | %.2f | %s | %.2f | %.2f | %d; %d (of %d) |" % (
            r["program"], fmt(r["oracle_committed"]), fmt(r["oracle_same_steps"]), r["debug_per_step"],
            runtime or "-", r["mapped_per_step"], r["missed_per_step"], len(r["never_executed_in_steps"]),
            len(r["never_executed"]), r["program_findings"]))
    print()
    print("Joined table of every program (the steps only unless marked): the findings of the program's file "
          "with the syncs and the host wait the probe measured at them per step, the syncs listed as missed, "
          "and the findings that never ran.")
    print()
    print("| program | finding or sync | check (dependency) | syncs/step | ms waited/step |")
    print("|---|---|---|---|---|")
    for r in rows:
        steps = r["steps"]
        name = r["program"]
        source = name[:-len("_tailcall")] if name.endswith("_tailcall") else name
        first = True
        def line(what, check, per_step, wait):
            nonlocal first
            print("| %s | %s | %s | %s | %s |" % (name if first else "", what, check, per_step, wait))
            first = False
        for f in sorted(r["findings"], key=lambda f: (f["file"], f["line"])):
            if f["file"] != source + ".cpp" or not f["count"]:
                continue
            line("line %d" % f["line"], "%s (%s)" % (f["check"], f["dependency"]), "%.2f" % f["per_step"],
                 "%.3f" % (f["wait_ms"] / steps))
        for where, m in sorted(r["missed"].items()):
            line("**missed**: %s" % short(where), ", ".join(sorted(m["kinds"])), "%.2f" % m["per_step"],
                 "%.3f" % (sum(w for _, w in m["kinds"].values()) / steps))
        for where, kinds in sorted(r["missed_outside_steps"].items()):
            n, w = events(kinds)
            line("missed, outside the steps: %s" % short(where), ", ".join(sorted(kinds)),
                 "%d in the run" % n, "%.3f in the run" % w)
        for f in r["never_executed_in_steps"]:
            shared = any(g is not f and g["file"] == f["file"] and g["line"] == f["line"] and g["count"]
                         for g in r["findings"])
            if shared:  # the join matches by line: the first finding on it takes the line's syncs
                what = "line %d, second finding on the line: its syncs are counted at the first" % f["line"]
            elif f not in r["never_executed"]:
                what = "never executed in the steps (ran outside them): line %d" % f["line"]
            else:
                what = "never executed: line %d" % f["line"]
            line(what, "%s (%s)" % (f["check"], f["dependency"]), "0", "-")


if __name__ == "__main__":
    main()

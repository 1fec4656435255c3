"""Writes GPU-mode program rows (out/programs/*.json) for the harness's regression
rule: two unchanged programs set the noise band (1.00x - 1.03x); the others are
rewrites below it or not, measured with 3 or 5 runs a side."""
import json, os, statistics, sys

def row(name, fixable, before, after):
    variant = lambda runs: {"results": {}, "wall_ms_per_step_runs": runs,
                            "probe": {"wall_ms_per_step": "%.4f" % statistics.median(runs)}}
    return {"program": name, "findings": fixable or 1, "fixable": fixable, "checks": ["torch-sync-item"],
            "remaining": [], "original": variant(before), "fixed": variant(after)}

rows = [
    row("unchanged_a", 0, [1.00, 1.01, 0.99], [1.03, 0.98, 1.00]),
    row("unchanged_b", 0, [1.00, 1.02, 1.01], [0.98, 0.99, 0.97]),
    # 0.75x with 3 runs a side: every rewrite run slower, yet p = 0.05 at best.
    row("slower_three_runs", 2, [0.226, 0.230, 0.224], [0.301, 0.305, 0.298]),
    # 0.75x with 5 runs a side, all slower: p = 1/252.
    row("slower_five_runs", 2, [0.226, 0.230, 0.224, 0.228, 0.225], [0.301, 0.305, 0.298, 0.300, 0.302]),
    # Below the band by its median, but the runs overlap: not shown slower.
    row("overlapping_five_runs", 2, [1.00, 1.30, 0.90, 1.25, 0.95], [1.10, 0.92, 1.28, 1.05, 0.97]),
    # Faster.
    row("faster_five_runs", 2, [1.0, 1.0, 1.0, 1.0, 1.0], [0.5, 0.5, 0.5, 0.5, 0.5]),
]
os.makedirs(os.path.join(sys.argv[1], "programs"), exist_ok=True)
for r in rows:
    json.dump(r, open(os.path.join(sys.argv[1], "programs", r["program"] + ".json"), "w"))

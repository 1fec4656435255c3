"""Writes a GPU-mode report.json whose sync counts break each harness rule once."""
import json, os, sys

def row(name, checks, findings, fixable, before, after, waited_after="5/5"):
    probe = lambda syncs, waited: {"debug_syncs_per_step": "%.2f" % syncs, "host_waited_steps": waited}
    return {"program": name, "findings": findings, "fixable": fixable, "checks": checks,
            "remaining": [], "original": {"results": {}, "probe": probe(before, "5/5")},
            "fixed": {"results": {}, "probe": probe(after, waited_after)}}

rows = [
    row("removed_ok", ["torch-sync-index-put"], 2, 2, 2, 0, "0/5"),
    row("removed_still_syncs", ["torch-sync-index-put"], 2, 2, 2, 1),
    row("deferred_ok", ["torch-sync-deferred-accumulate"], 2, 2, 16, 2),
    row("deferred_no_drop", ["torch-sync-deferred-accumulate"], 2, 2, 2, 2),
    row("any_same", ["torch-sync-dynamic-shape"], 1, 1, 1, 1),
    row("flag_only_more", ["torch-sync-item"], 1, 0, 1, 2),
]
os.makedirs(sys.argv[1], exist_ok=True)
report = {"mode": "gpu", "repeats": 1, "tolerance": {"rtol": 1e-5, "atol": 1e-6},
          "programs": rows, "failures": ["old_program: every finding was fixed but the rewritten program still syncs"]}
json.dump(report, open(os.path.join(sys.argv[1], "report.json"), "w"))

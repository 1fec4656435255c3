"""Writes a GPU-mode report.json whose sync counts break each harness rule once."""
import json, os, sys

def row(name, checks, findings, fixable, before, after, waited_after="5/5", kept_waits=0):
    probe = lambda syncs, waited: {"debug_syncs_per_step": "%.2f" % syncs, "host_waited_steps": waited}
    return {"program": name, "findings": findings, "fixable": fixable, "checks": checks, "kept_waits": kept_waits,
            "remaining": [], "original": {"results": {}, "probe": probe(before, "5/5")},
            "fixed": {"results": {}, "probe": probe(after, waited_after)}}

rows = [
    row("removed_ok", ["torch-sync-index-put"], 2, 2, 2, 0, "0/5"),
    row("removed_still_syncs", ["torch-sync-index-put"], 2, 2, 2, 1),
    row("deferred_ok", ["torch-sync-deferred-accumulate"], 2, 2, 16, 2),
    row("deferred_no_drop", ["torch-sync-deferred-accumulate"], 2, 2, 2, 2),
    row("any_same", ["torch-sync-dynamic-shape"], 1, 1, 1, 1),
    row("flag_only_more", ["torch-sync-item"], 1, 0, 1, 2),
    # A restructuring keeps one wait on purpose (the tool's marker in the rewrite):
    # fewer syncs are required, not none.
    row("hoisted_ok", ["torch-sync-device-to-host"], 1, 1, 8, 1, kept_waits=1),
    row("hoisted_no_drop", ["torch-sync-device-to-host"], 1, 1, 8, 8, kept_waits=1),
]
os.makedirs(sys.argv[1], exist_ok=True)
report = {"mode": "gpu", "repeats": 1, "tolerance": {"rtol": 1e-5, "atol": 1e-6},
          "programs": rows, "failures": ["old_program: every finding was fixed but the rewritten program still syncs"]}
json.dump(report, open(os.path.join(sys.argv[1], "report.json"), "w"))

"""Joins the device run's profiles (integration/staged-P) with the tool's findings."""
import json, os, subprocess, sys
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))); p = sys.argv[1] if len(sys.argv) > 1 else "/tmp/s10-probe/p"
tree = root + "/build/third_party/libtorch-2.11"
flags = ["-std=c++17", "-isystem", root + "/integration", "-isystem", tree + "/include",
         "-isystem", tree + "/include/torch/csrc/api/include", "-isystem", "/usr/local/cuda/include",
         "-I", root + "/probe/include", "-DSYNCPROBE_CUDA", "-DTORCH_SYNCFREE_PROBE_STEPS"]
oracle = {"d2h_readback": 1, "deferred_metrics": 16, "explicit_sync": 0, "item_logging": 1,
          "mask_reduce": 2, "tensor_factory": 1, "h2d_batches": 3, "explicit_loop": None}
for name in sorted(oracle):
    prof = os.path.join(p, name + ".profile.json")
    if not os.path.exists(prof):
        print(name, "no profile"); continue
    d = json.load(open(prof))
    for s in d["syncs"]:
        for f in s["frames"]:
            # The program's own frames: its debug info, kept by run.sh (the
            # module is named as it was run: ./build/<name> or the build path).
            debug = os.path.join(p, os.path.basename(f.get("module", "")) + ".debug")
            if f.get("module") and os.path.exists(debug):
                f["module"] = debug
    local = "/tmp/s10-probe/%s.local.json" % name
    json.dump(d, open(local, "w"))
    # The sources as the device built them (DWARF names integration/staged-P/...).
    src = root + "/integration/staged-P/" + name + ".cpp"
    out = subprocess.run([root + "/build/bin/torch-syncfree", "--format=json", "--no-pch", "--profile=" + local, src, "--"] + flags,
                         capture_output=True, text=True)
    findings = json.loads(out.stdout or "[]")
    report = [l for l in out.stderr.splitlines() if l.startswith("  ") or "measured syncs" in l]
    steps = d["steps"]
    debug = sum(s["count"] for s in d["syncs"] if s["kind"] == "sync-debug-mode")
    waits = {}
    for s in d["syncs"]:
        if s["kind"] != "sync-debug-mode":
            waits[s["kind"]] = waits.get(s["kind"], 0) + s["count"]
    print("== %s: steps %d, debug-mode syncs %d (%.2f/step; harness oracle %s/step), runtime waits %s"
          % (name, steps, debug, debug / steps if steps else float("nan"), oracle[name], waits))
    for l in report:
        print(l)

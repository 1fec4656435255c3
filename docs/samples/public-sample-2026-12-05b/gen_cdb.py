#!/usr/bin/env python3
"""Generate compile_commands.json per repository from cfg.json (approach copied from /tmp/sample/tools/gen_cdb.py).
cfg entry: {"root": dir, "std": "-std=c++17", "incs": [...], "extra": [...], "files": [...],
            "groups": [ {"files": [...], "incs": [...], "extra": [...]} ] }  (groups optional; group incs/extra are added to the repo-wide ones)"""
import json, os, sys
BASE = "/tmp/sample2"
T = ["-isystem", "/tmp/torch211/include", "-isystem", "/tmp/torch211/include/torch/csrc/api/include"]
CUDA = ["-x", "cuda", "--cuda-host-only", "-Wno-unknown-cuda-version", "-isystem", "/usr/local/cuda/include/cccl", "-isystem", "/usr/local/cuda/include"]
def entry(root, f, std, incs, extra):
    f = os.path.join(root, f)
    args = ["clang++", std]
    if f.endswith(".cu"):
        args += CUDA
    args += T + extra + ["-I" + os.path.join(root, i) for i in incs] + ["-fsyntax-only", f]
    return {"directory": root, "file": f, "arguments": args}
def gen(r):
    root = os.path.join(BASE, r["root"])
    std = r.get("std", "-std=c++17")
    out = [entry(root, f, std, r.get("incs", []), r.get("extra", [])) for f in r.get("files", [])]
    for g in r.get("groups", []):
        out += [entry(root, f, std, r.get("incs", []) + g.get("incs", []), r.get("extra", []) + g.get("extra", [])) for f in g["files"]]
    json.dump(out, open(os.path.join(root, "compile_commands.json"), "w"), indent=1)
    print(root, len(out))
if __name__ == "__main__":
    cfg = json.load(open(sys.argv[1]))
    only = sys.argv[2:]
    for r in cfg:
        if not only or r["root"] in only:
            gen(r)

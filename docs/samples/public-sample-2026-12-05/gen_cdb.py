import json, os, sys, glob
T = ["-isystem", "/tmp/torch211/include", "-isystem", "/tmp/torch211/include/torch/csrc/api/include"]
CUDA = ["-x", "cuda", "--cuda-host-only", "-Wno-unknown-cuda-version", "-isystem", "/usr/local/cuda/include/cccl", "-isystem", "/usr/local/cuda/include"]
def gen(root, files, incs, extra=[], std="-std=c++17"):
    root = os.path.abspath(root)
    out = []
    for f in files:
        f = os.path.join(root, f)
        args = ["clang++", std]
        if f.endswith(".cu"):
            args += CUDA
        args += T + extra + ["-I" + os.path.join(root, i) for i in incs] + ["-fsyntax-only", f]
        out.append({"directory": root, "file": f, "arguments": args})
    json.dump(out, open(os.path.join(root, "compile_commands.json"), "w"), indent=1)
    print(root, len(out))
if __name__ == "__main__":
    cfg = json.load(open(sys.argv[1]))
    for r in cfg:
        gen(r["root"], r["files"], r.get("incs", []), r.get("extra", []))

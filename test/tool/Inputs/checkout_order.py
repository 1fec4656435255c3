"""checkout_order.py TOOL WORK FLAGS...: one project checked out in two
directories of different names; prints whether each JSON report lists its
units in path order, and whether the two reports are identical once each
checkout's directory is replaced by <repo>."""
import json
import os
import shutil
import subprocess
import sys

tool, work, flags = sys.argv[1], sys.argv[2], sys.argv[3:]
NAMES = ["zeta", "alpha", "mid/omega", "mid/beta", "kappa", "b", "a", "x/y/z", "delta", "c2", "c10", "last"]


def checkout(root):
    shutil.rmtree(root, ignore_errors=True)
    commands = []
    for name in NAMES:  # the database lists them out of order
        path = os.path.join(root, name + ".cpp")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "w").write("#include <torch/torch.h>\n"
                              "float f(torch::Tensor t) { return t.cuda().sum().item<float>(); }\n")
        commands.append({"directory": root, "file": path,
                         "arguments": ["clang++"] + flags + ["-c", path]})
    json.dump(commands, open(os.path.join(root, "compile_commands.json"), "w"))
    proc = subprocess.run([tool, "-p", root, "--format=json", "--no-pch"], cwd=root,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return proc.stdout.replace(root, "<repo>")


reports = [checkout(os.path.join(work, d)) for d in ("a", "second-checkout-with-a-longer-name")]
for report in reports:
    files = []
    for finding in json.loads(report):
        if not files or files[-1] != finding["file"]:
            files.append(finding["file"])
    print("units: %d, in path order: %s" % (len(files), files == sorted(files)))
print("identical reports: %s" % (reports[0] == reports[1]))

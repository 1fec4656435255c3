"""make_repo.py DIR FLAGS...: a small repository of LibTorch TUs and its
compile_commands.json (with code-loading flags that torch-syncfree must drop)."""
import json
import os
import shutil
import sys

args = sys.argv[1:]
clean = args[0] == "--clean"  # without the code-loading flags (for clang-tidy itself)
if clean:
    args = args[1:]
root, flags = args[0], " ".join(args[1:])
src, build = os.path.join(root, "src"), os.path.join(root, "build")
os.makedirs(src, exist_ok=True)
os.makedirs(build, exist_ok=True)
shutil.copy(os.path.join(os.path.dirname(__file__), "user_header.h"), src)
commands = []
for i in range(4):
    with open(os.path.join(src, "tu%d.cpp" % i), "w") as f:
        f.write('#include <torch/torch.h>\n#include "user_header.h"\n'
                "float f%d(torch::Tensor t) { auto h = torch::rand({4}); auto g = h.cuda(); "
                "return t.item<float>() + g.sum().item<float>(); }\n" % i)
    commands.append({"directory": src, "file": os.path.join(src, "tu%d.cpp" % i),
                     "command": "clang++ %s -I%s %s-c tu%d.cpp" % (
                         flags, src, "" if clean else "-Xclang -load -Xclang /nonexistent/evil.so "
                         "-fplugin=/nonexistent/evil2.so ", i)})
with open(os.path.join(build, "compile_commands.json"), "w") as f:
    json.dump(commands, f, indent=1)

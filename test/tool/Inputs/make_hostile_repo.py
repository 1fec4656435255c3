"""make_hostile_repo.py DIR MOCK_INCLUDE: a repository whose compile commands and
.clang-tidy try every way of running a program, writing a file or loading code
that issue 10 found. Each attempt would create a file under DIR/markers/ (or a
line in DIR/markers/ran) if it reached clang or the driver."""
import json
import os
import stat
import sys

root, mock = sys.argv[1], sys.argv[2]
src, tools, build, markers = (os.path.join(root, d) for d in ("src", "tools", "build", "markers"))
for d in (src, tools, build, markers):
    os.makedirs(d, exist_ok=True)

# A program the driver would run for --offload-arch=native, and argv[0] inside
# the repository with a clang++.cfg beside it.
for name in ("offload-arch", "nvptx-arch", "amdgpu-arch", "clang++", "ptxas"):
    path = os.path.join(tools, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\necho %s >> %s/ran\nexit 0\n" % (name, markers))
    os.chmod(path, 0o755)
with open(os.path.join(tools, "clang++.cfg"), "w") as f:
    f.write("-MD -MF %s/from-cfg.d\n" % markers)
with open(os.path.join(root, "evil.cfg"), "w") as f:
    f.write("-MD -MF %s/from-config.d\n" % markers)
with open(os.path.join(root, "flags.rsp"), "w") as f:
    f.write("-std=c++17 -isystem %s -MD -MF %s/from-rsp.d -Xclang -load -Xclang %s/evil.so\n"
            % (mock, markers, root))

with open(os.path.join(src, "train.cpp"), "w") as f:
    f.write("#include <torch/torch.h>\n"
            "float step(torch::Tensor t) { auto g = torch::rand({4}).cuda(); "
            "return t.item<float>(); }\n")

m = markers
attempts = [
    "-Wp,-MD,%s/wp.d -Wp,-MT,evil" % m,
    "-MD -MF %s/md.d" % m,
    "-MJ %s/mj.json" % m,
    "--serialize-diagnostics %s/diag.dia" % m,
    "-Xclang -header-include-file -Xclang %s/headers.txt" % m,
    "-Xclang=-load -Xclang=%s/evil.so" % root,
    "-stats-file=%s/stats.txt" % m,
    "-Xclang -module-dependency-dir -Xclang %s/moddeps" % m,
    "-ftime-trace=%s/trace.json" % m,
    "-fcrash-diagnostics-dir=%s/crash" % m,
    "-mllvm -load -mllvm %s/evil.so" % root,
    "-fplugin=%s/evil.so -fpass-plugin=%s/evil.so" % (root, root),
    "--config=%s/evil.cfg" % root,
    "-B%s" % tools,
    "@%s/flags.rsp" % root,
    "-save-temps=obj",
]
command = "%s/clang++ %s -c train.cpp -o %s/train.o" % (tools, " ".join(attempts), m)
cuda = "%s/clang++ -x cuda --offload-arch=native --cuda-host-only -nocudainc -nocudalib " \
       "-std=c++17 -isystem %s -c train.cpp -o %s/cuda.o" % (tools, mock, m)
with open(os.path.join(build, "compile_commands.json"), "w") as f:
    json.dump([{"directory": src, "file": os.path.join(src, "train.cpp"), "command": command}],
              f, indent=1)
os.makedirs(os.path.join(root, "cuda", "build"), exist_ok=True)
with open(os.path.join(root, "cuda", "build", "compile_commands.json"), "w") as f:
    json.dump([{"directory": src, "file": os.path.join(src, "train.cpp"), "command": cuda}],
              f, indent=1)
with open(os.path.join(src, ".clang-tidy"), "w") as f:
    f.write("ExtraArgs: ['-MD', '-MF', '%s/extra.d', '-Xclang', '-load', '-Xclang', '%s/evil.so']\n"
            "ExtraArgsBefore: ['-Wp,-MD,%s/extra-before.d']\n" % (m, root, m))

"""A project laid out as real ones are (issue 24): sources include their own
header first ("model.h" with #pragma once, "data.h" with an include guard,
"loss.h" found through -I include), the headers include LibTorch; two sources
begin with a project-wide "pch.h" and form a second flag group (-DPROJ_FAST_MATH);
two CUDA launchers (.cu, host code) include "kernels.h"; one source defines a
macro first. The shared PCH must apply to all but the last (through their
headers), say why not for it, and change nothing: findings, exit codes, the
exported fixes and the files --fix writes are identical to --no-pch, cold and
warm. Prints what it compared and the summary's PCH lines.
usage: real_layout.py TOOL WORK CUDA_INCLUDE FLAGS...  (CUDA_INCLUDE: the toolkit's
include directory, or "none": no .cu sources)"""
import json
import os
import shutil
import subprocess
import sys

tool, work, cuda_include = sys.argv[1:4]
flags = sys.argv[4:]
FILES = {
    "model.h": "#pragma once\n// The model, declared for its users.\n#include <torch/torch.h>\n\n"
               "struct Net : torch::nn::Module {\n"
               "  Net() : fc(register_module(\"fc\", torch::nn::Linear(8, 2))) {}\n"
               "  torch::Tensor forward(torch::Tensor x) { return fc(x); }\n"
               "  torch::nn::Linear fc;\n};\n",
    "model.cpp": "#include \"model.h\"\n#include <cstdio>\n\n"
                 "double evaluate(Net &net, torch::Tensor data) {\n  double total = 0;\n"
                 "  for (int i = 0; i < 4; ++i)\n"
                 "    total += net.forward(data.to(torch::kCUDA)).sum().item<double>();\n"
                 "  return total;\n}\n",
    "data.h": "// Batches on the host.\n#ifndef DATA_H\n#define DATA_H\n#include <torch/torch.h>\n"
              "#include <vector>\nstd::vector<torch::Tensor> make_batches(int n);\n#endif\n",
    "data.cpp": "#include \"data.h\"\n#include <cstdio>\n\nstd::vector<torch::Tensor> make_batches(int n) {\n"
                "  std::vector<torch::Tensor> out;\n  for (int i = 0; i < n; ++i) {\n"
                "    auto b = torch::randn({4, 8}, torch::kCUDA);\n"
                "    std::printf(\"%f\\n\", b.sum().item<float>());\n    out.push_back(b);\n  }\n"
                "  return out;\n}\n",
    "include/loss.h": "#pragma once\n#include <torch/torch.h>\n\ndouble total_loss(torch::Tensor t);\n",
    "loss.cpp": "#include \"loss.h\"\n\ndouble total_loss(torch::Tensor t) {\n  double sum = 0;\n"
                "  for (int i = 0; i < 3; ++i)\n    sum += t.cuda().sum().item<double>();\n  return sum;\n}\n",
    "train.cpp": "#define TRAIN_VERBOSE 1\n#include \"model.h\"\n#include \"data.h\"\n#include <cstdio>\n\n"
                 "int main() {\n  Net net;\n  net.to(torch::kCUDA);\n  double sum = 0;\n"
                 "  for (auto &b : make_batches(3))\n    sum += net.forward(b).sum().item<double>();\n"
                 "  std::printf(\"%f\\n\", sum);\n}\n",
    "pch.h": "#pragma once\n#include <torch/torch.h>\n#include <string>\n#include <vector>\n",
    "metrics.cpp": "#include \"pch.h\"\n#include <cstdio>\n\n"
                   "void report(std::vector<torch::Tensor> &losses) {\n"
                   "  for (auto &l : losses)\n    std::printf(\"%f\\n\", l.item<float>());\n}\n",
    "summary.cpp": "#include \"pch.h\"\n\n"
                   "std::string summary(torch::Tensor t) {\n"
                   "  auto cpu = t.to(torch::kCUDA).cpu();\n  return std::to_string(cpu.size(0));\n}\n",
}
CUDA_FILES = {
    "kernels/kernels.h": "#pragma once\n#include <torch/torch.h>\n#include <cuda_runtime.h>\n",
    "kernels/launch_a.cu": "#include \"kernels.h\"\n\nfloat launch_a(torch::Tensor x) {\n"
                           "  auto y = x.cuda();\n  cudaDeviceSynchronize();\n"
                           "  return y.sum().item<float>();\n}\n",
    "kernels/launch_b.cu": "#include \"kernels.h\"\n\nvoid launch_b(torch::Tensor x, float *host) {\n"
                           "  for (int i = 0; i < 4; ++i)\n    host[i] = x[i].item<float>();\n}\n",
}
if cuda_include != "none":
    FILES.update(CUDA_FILES)


def command(root, name):
    """Two flag groups for C++ (pch.h's users add a macro) and CUDA host code."""
    extra = ["-DPROJ_FAST_MATH=1"] if name in ("metrics.cpp", "summary.cpp") else []
    if name.endswith(".cu"):
        extra = ["-x", "cuda", "--cuda-host-only", "-Wno-unknown-cuda-version",
                 "--cuda-path=" + os.path.dirname(cuda_include),
                 "-isystem", os.path.join(cuda_include, "cccl")]
    return {"directory": root, "file": os.path.join(root, name),
            "arguments": ["clang++"] + extra + flags + ["-Iinclude", "-c", os.path.join(root, name)]}


def make_repo(root):
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    for name, text in FILES.items():
        os.makedirs(os.path.dirname(os.path.join(root, name)), exist_ok=True)
        open(os.path.join(root, name), "w").write(text)
    sources = sorted(n for n in FILES if n.endswith(".cpp") or n.endswith(".cu"))
    json.dump([command(root, n) for n in sources], open(os.path.join(root, "compile_commands.json"), "w"))
    return root


def fixed_tree(root, *extra):
    """The sources after --fix (cache directories apart)."""
    proc = subprocess.run([tool, "-p", root, "-j2", "--fix"] + list(extra), cwd=root,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    cache = [l.strip() for l in proc.stderr.splitlines() if "results cache:" in l]
    return proc.returncode, {name: open(os.path.join(root, name)).read() for name in FILES}, cache


def run(root, name, *extra):
    fixes = os.path.join(root, name + ".yaml")
    proc = subprocess.run([tool, "-p", root, "-j2", "--format=json", "--export-fixes=" + fixes] + list(extra),
                          cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    exported = open(fixes).read().replace(root, "<repo>") if os.path.exists(fixes) else ""
    return proc.returncode, proc.stdout.replace(root, "<repo>"), proc.stderr, exported


repo = make_repo(os.path.join(work, "repo"))
# The --no-pch reference is analysed once, in a copy of its own, with a results
# cache: its --fix below writes those results without parsing again (CI time).
fix_plain_root = make_repo(os.path.join(work, "fix-plain"))
plain_cache = "--cache-dir=" + os.path.join(work, "plain-cache")
plain = run(fix_plain_root, "plain", "--no-pch", plain_cache)
cold = run(repo, "cold")
warm = run(repo, "warm")
print("exit codes: no-pch %d, cold %d, warm %d" % (plain[0], cold[0], warm[0]))
print("findings identical (cold): %s" % (cold[1] == plain[1]))
print("findings identical (warm): %s" % (warm[1] == plain[1]))
print("fixes identical (cold, warm): %s, %s" % (cold[3] == plain[3], warm[3] == plain[3]))
print("findings: %d, fixes exported: %s, units that do not compile: %d" % (
    len(json.loads(plain[1])), "ReplacementText" in plain[3], plain[2].count("cannot be analysed")))
for line in warm[2].splitlines():
    if "shared PCH" in line:
        print("warm:" + line)
# --fix: in the --no-pch copy (its results reused), and in the project itself,
# whose PCHs are warm now (analysed again).
fix_plain = fixed_tree(fix_plain_root, "--no-pch", plain_cache)
fix_warm = fixed_tree(repo)
changed = sorted(n for n in FILES if fix_plain[1][n] != FILES[n])
print("--fix: files changed %d (%s), identical with the warm PCH: %s; exit codes %d %d" % (
    len(changed), " ".join(changed), fix_warm[1] == fix_plain[1], fix_plain[0], fix_warm[0]))
print("--fix --no-pch: %s" % " ".join(fix_plain[2]))

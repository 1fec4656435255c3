#!/usr/bin/env python3
"""Language-server cost on a <torch/torch.h> file (a benchmark, not a test: it prints
figures and never fails on them). Drives `torch-syncfree --lsp` with the suite's scripted
client, per header tree:
  first     didOpen -> publishDiagnostics (preamble built, then the file analysed)
  edit      an edit in a function body, then didSave -> publishDiagnostics (median)
  RSS       the server's resident memory with one, then five files open and analysed
and, for scale, `clang++-22 -fsyntax-only` on the same file.

usage: bench/lsp_cost.py [--build build] [--edits 5]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "test", "tool", "Inputs"))
import lsp_client  # noqa: E402
from batch_cost import trees as header_trees  # noqa: E402 (the one list of header trees)

SOURCE = """#include <torch/torch.h>
#include <iostream>

struct Net : torch::nn::Module {{
  Net() {{ fc = register_module("fc", torch::nn::Linear(16, 4)); }}
  torch::Tensor forward(torch::Tensor x) {{ return fc->forward(x); }}
  torch::nn::Linear fc{{nullptr}};
}};

double train_{index}(Net &net, torch::optim::SGD &opt, std::vector<torch::Tensor> &batches,
                     torch::Device device) {{
  double total = 0;
  for (auto &batch : batches) {{
    auto x = batch.to(device);
    opt.zero_grad();
    auto loss = net.forward(x).pow(2).mean();
    loss.backward();
    opt.step();
    total += loss.item<double>();
    // EDIT
  }}
  return total;
}}
"""


def rss_mib(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return float("nan")


def timed_diagnostics(client, uri, action):
    start = time.perf_counter()
    action()
    diagnostics = client.diagnostics(uri)
    return time.perf_counter() - start, diagnostics


def measure(tool, flags, edits):
    work = tempfile.mkdtemp(prefix="lsp-cost-")
    files = [os.path.join(work, "train_%d.cpp" % i) for i in range(5)]
    texts = [SOURCE.format(index=i) for i in range(5)]
    for path, text in zip(files, texts):
        open(path, "w").write(text)
    lsp_client.write_db(os.path.join(work, "build"), [
        {"directory": work, "file": path, "arguments": ["clang++"] + flags + ["-c", path]}
        for path in files])
    lsp_client.tool, lsp_client.work = tool, work
    client = lsp_client.Client()
    uri = lsp_client.uri_of(files[0])
    first, diagnostics = timed_diagnostics(client, uri, lambda: client.open(files[0], texts[0]))
    findings = len(diagnostics)
    after = []
    text = texts[0]
    for n in range(edits):
        line = text[:text.index("    // EDIT")].count("\n")
        insert = "    total += %d;\n" % n

        def edit():
            client.notify("textDocument/didChange", {
                "textDocument": {"uri": uri, "version": n + 2},
                "contentChanges": [{"range": {"start": {"line": line, "character": 0},
                                              "end": {"line": line, "character": 0}},
                                    "text": insert}]})
            client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
        seconds, diagnostics = timed_diagnostics(client, uri, edit)
        text = text.replace("    // EDIT", insert + "    // EDIT", 1)
        if len(diagnostics) != findings:
            print("  warning: %d findings after edit %d, %d before" % (len(diagnostics), n, findings))
        after.append(seconds)
    rss_one = rss_mib(client.server.pid)
    for path, text in zip(files[1:], texts[1:]):
        client.open(path, text)
        client.diagnostics(lsp_client.uri_of(path))
    rss_five = rss_mib(client.server.pid)
    client.close()
    start = time.perf_counter()
    subprocess.run(["clang++-22", "-fsyntax-only"] + flags + [files[0]], check=True)
    syntax = time.perf_counter() - start
    return first, statistics.median(after), findings, rss_one, rss_five, syntax


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--edits", type=int, default=5)
    args = parser.parse_args()
    tool = os.path.join(args.build, "bin", "torch-syncfree")
    trees = sorted(header_trees(args.build).items())
    print("torch-syncfree --lsp on a <torch/torch.h> training file; after-edit = median of %d"
          " edits in the loop body, each followed by didSave" % args.edits)
    print("| LibTorch | clang++ -fsyntax-only | first diagnosis | after an edit | ratio | findings "
          "| RSS, 1 file | RSS, 5 files |")
    print("|---|---|---|---|---|---|---|---|")
    for name, flags in trees:
        first, after, findings, one, five, syntax = measure(tool, flags, args.edits)
        print("| %s | %.2f s | %.2f s | %.2f s | %.3fx | %d | %.0f MiB | %.0f MiB |" % (
            name, syntax, first, after, after / first, findings, one, five))


if __name__ == "__main__":
    main()

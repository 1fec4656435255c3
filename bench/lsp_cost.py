#!/usr/bin/env python3
"""Language-server cost on a <torch/torch.h> file (a benchmark, not a test: it prints
figures and never fails on them). Drives `torch-syncfree --lsp` with the suite's scripted
client, per header tree:
  first     didOpen -> publishDiagnostics (preamble built, then the file analysed)
  edit      an edit in a function body, then didSave -> publishDiagnostics (median)
  RSS       the server's resident memory with one, then five files open and analysed
and, for scale, `clang++-22 -fsyntax-only` on the same file.

--layout real (issue 24) measures on the project layout of `bench/batch_cost.py --layout real`
(sources that include their own header first, -I headers, two flag groups):
  first, cold    didOpen -> publishDiagnostics with an empty cache directory
  first, warm    the same after one batch run (`torch-syncfree -p build`) filled the build
                 directory's cache: a new server, a file whose include block is cached
  body edit      an edit in a function body (median of --edits), each followed by didSave
  include edits  a comment at the top of the file, a new `#include` of a small project
                 header after the existing ones, a `#define` above the includes: the time to
                 the first diagnostics after the edit, and to the last (a server that
                 answers from a patched preamble publishes again once the new one is built)
  RSS            server and its children, resident, with 1 and then 5 files open and analysed
                 (the 5 share one include block: net*.cpp)

usage: bench/lsp_cost.py [--build build] [--edits 5] [--layout flat|real] [--trees 1.13,2.11]
"""
import argparse
import os
import queue
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


def tree_rss_mib(pid):
    """Resident memory of pid and every process below it."""
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            total += rss_mib(p)
            children = open("/proc/%d/task/%d/children" % (p, p)).read().split()
        except OSError:
            continue
        todo += [int(c) for c in children]
    return total


def more_diagnostics(client, uri, timeout):
    """A later publish for uri within timeout seconds (the exact result after a patched
    one), or None."""
    # The suite's client waits without a clock (issue 39); a benchmark may.
    deadline = time.perf_counter() + timeout
    while True:
        left = deadline - time.perf_counter()
        if left <= 0:
            return None
        try:
            message = client.inbox.get(timeout=left)
        except queue.Empty:
            return None
        if message is None:
            return None
        if message.get("method") == "textDocument/publishDiagnostics" and message["params"]["uri"] == uri:
            return message["params"]["diagnostics"]


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


def measure_real(tool, flags, edits, settle):
    """The real-layout figures (see the module's docstring)."""
    from batch_cost import make_real_repo
    work = tempfile.mkdtemp(prefix="lsp-cost-real-")
    repo = os.path.join(work, "repo")
    commands = make_real_repo(repo, flags, 24)
    small = os.path.join(repo, "include", "proj", "small.h")
    open(small, "w").write("#pragma once\ninline int proj_small() { return 1; }\n")
    build = os.path.join(repo, "build")
    lsp_client.write_db(build, commands)
    nets = [c["file"] for c in commands if "/models/" in c["file"]][:5]
    texts = [open(f).read() for f in nets]
    lsp_client.tool, lsp_client.work = tool, repo
    figures = {}

    def open_first(label):
        client = lsp_client.Client("--compile-commands-dir=" + build)
        seconds, diagnostics = timed_diagnostics(client, lsp_client.uri_of(nets[0]),
                                                 lambda: client.open(nets[0], texts[0]))
        figures[label] = seconds
        return client, diagnostics

    # Cold: nothing cached (the build directory's cache removed).
    subprocess.run(["rm", "-rf", os.path.join(build, ".torch-syncfree-cache")], check=True)
    client, diagnostics = open_first("first, cold")
    figures["findings"] = len(diagnostics)
    client.close()
    # Warm: one batch run filled the build directory's cache (and wrote the
    # project summaries the editor may join with: issue 42).
    summaries = os.path.join(build, "summaries.json")
    subprocess.run([tool, "-p", build, "--quiet", "--summaries=" + summaries], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    client, diagnostics = open_first("first, warm")
    uri = lsp_client.uri_of(nets[0])
    text = texts[0]

    def change(new_text):
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                                 "contentChanges": [{"text": new_text}]})
        client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})

    after = []
    for n in range(edits):
        text = text.replace("  return running", "  running += %d;\n  return running" % n, 1)
        seconds, _ = timed_diagnostics(client, uri, lambda: change(text))
        after.append(seconds)
    figures["body edit"] = statistics.median(after)
    # The same edits in a server that joins each analysis with the summaries.
    joined = lsp_client.Client("--compile-commands-dir=" + build, "--summaries=" + summaries)
    joined_text = texts[0]
    timed_diagnostics(joined, uri, lambda: joined.open(nets[0], joined_text))
    with_summaries = []
    for n in range(edits):
        joined_text = joined_text.replace("  return running", "  running += %d;\n  return running" % n, 1)
        joined.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                                 "contentChanges": [{"text": joined_text}]})
        seconds, _ = timed_diagnostics(
            joined, uri, lambda: joined.notify("textDocument/didSave", {"textDocument": {"uri": uri}}))
        with_summaries.append(seconds)
    figures["body edit, --summaries"] = statistics.median(with_summaries)
    joined.close()
    include_edits = [
        ("comment at the top", lambda t: "// a comment above the includes\n" + t),
        ("new #include", lambda t: t.replace("#include <cstdio>\n", "#include <cstdio>\n#include \"proj/small.h\"\n", 1)),
        ("#define above the includes", lambda t: "#define PROJ_VERBOSE 1\n" + t),
    ]
    for label, edit in include_edits:
        text = edit(text)
        start = time.perf_counter()
        seconds, _ = timed_diagnostics(client, uri, lambda: change(text))
        last = seconds
        while more_diagnostics(client, uri, settle) is not None:
            last = time.perf_counter() - start
        figures[label] = (seconds, last)
    figures["RSS, 1 file"] = tree_rss_mib(client.server.pid)
    for path, t in zip(nets[1:], texts[1:]):
        client.open(path, t)
        client.diagnostics(lsp_client.uri_of(path))
    time.sleep(settle)
    figures["RSS, 5 files"] = tree_rss_mib(client.server.pid)
    client.close()
    start = time.perf_counter()
    subprocess.run(["clang++-22", "-fsyntax-only"] + flags + ["-I" + os.path.join(repo, "include"), nets[0]],
                   check=True)
    figures["clang++ -fsyntax-only"] = time.perf_counter() - start
    subprocess.run(["rm", "-rf", work])
    return figures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--edits", type=int, default=5)
    parser.add_argument("--layout", choices=("flat", "real"), default="flat")
    parser.add_argument("--trees", default="1.13,2.11")
    parser.add_argument("--settle", type=float, default=30.0,
                        help="seconds to wait for a second publish after an include edit")
    args = parser.parse_args()
    tool = os.path.join(args.build, "bin", "torch-syncfree")
    trees = sorted((n, f) for n, f in header_trees(args.build).items() if n in args.trees.split(","))
    if args.layout == "real":
        print("torch-syncfree --lsp on the real layout (net0.cpp: `#include \"proj/model.h\"` first);"
              " include edits: first / last diagnostics after the edit")
        for name, flags in trees:
            f = measure_real(tool, flags, args.edits, args.settle)
            print("| LibTorch %s | value |" % name)
            print("|---|---|")
            for key, value in f.items():
                if isinstance(value, tuple):
                    print("| %s | %.2f s / %.2f s |" % (key, value[0], value[1]))
                elif key.startswith("RSS"):
                    print("| %s | %.0f MiB |" % (key, value))
                elif key == "findings":
                    print("| %s | %d |" % (key, value))
                else:
                    print("| %s | %.2f s |" % (key, value))
        return
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

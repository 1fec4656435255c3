#!/usr/bin/env python3
"""Prints how torch-syncfree's time grows with pathological input sizes, as a
ratio to `clang++-22 -fsyntax-only` on the same file (issue 10: each case
within 3x clang). A benchmark, not a test: it prints figures and never fails.

Cases (n = 1k, 10k, 100k by default):
  chain  `t.cuda().cpu()` repeated n/2 times in one expression (n sync calls)
  ifs    n/2 `if (...) x = x.cuda(); else x = x.cpu();` reassigning one variable
  sum    a sum of n tensor terms

LSP framing (issue 23; --lsp-sizes in KiB, 0 to skip): the language server reads
one message of that size whose JSON is full of "Content-Length:" (in strings, and bare
in a second, invalid message), then `exit`; time per KiB must stay flat (linear).

usage: bench/growth.py [--sizes 1000,10000,100000] [--cases chain,ifs,sum] [--build build]
                      [--timeout 600] [--lsp-sizes 100,330,1000]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MOCK = os.path.join(ROOT, "test", "mock", "include")


def source(case, n):
    head = "#include <torch/torch.h>\n"
    if case == "chain":
        return head + "float f(torch::Tensor t) { auto x = t" + ".cuda().cpu()" * (n // 2) + \
            "; return x.sum().item<float>(); }\n"
    if case == "ifs":
        body = "".join("  if (t.dim() > %d) x = x.cuda(); else x = x.cpu();\n" % (i % 5)
                       for i in range(n // 2))
        return head + "float f(torch::Tensor t) {\n  auto x = t;\n" + body + \
            "  return x.sum().item<float>();\n}\n"
    return head + "float f(torch::Tensor t) { auto x = t" + " + t" * n + \
        "; return x.sum().item<float>(); }\n"


def timed(cmd, timeout):
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        return elapsed, "exit %d" % proc.returncode
    return elapsed, ""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--timeout", type=int, default=600)
    parser.add_argument("--cases", default="chain,ifs,sum")
    parser.add_argument("--lsp-sizes", default="100,330,1000")
    args = parser.parse_args()
    tool = os.path.join(args.build, "bin", "torch-syncfree")
    flags = ["-std=c++17", "-isystem", MOCK, "-fbracket-depth=1000000"]
    print("%-6s %8s %10s %10s %7s  %s" % ("case", "n", "clang s", "tool s", "ratio", "note"))
    with tempfile.TemporaryDirectory() as tmp:
        for case in args.cases.split(","):
            for n in [int(s) for s in args.sizes.split(",")]:
                path = os.path.join(tmp, "%s_%d.cpp" % (case, n))
                with open(path, "w") as f:
                    f.write(source(case, n))
                clang, clang_note = timed(["clang++-22", "-fsyntax-only"] + flags + [path],
                                          args.timeout)
                ours, our_note = timed([tool, "--quiet", path, "--"] + flags, args.timeout)
                ratio = "%.2fx" % (ours / clang) if clang and ours else "-"
                note = "; ".join(x for x in ("clang " + clang_note if clang_note else "",
                                             "tool " + our_note if our_note else "") if x)
                print("%-6s %8d %10s %10s %7s  %s" % (
                    case, n, "%.2f" % clang if clang else "-", "%.2f" % ours if ours else "-",
                    ratio, note))
                sys.stdout.flush()
    lsp_framing(tool, [int(k) for k in args.lsp_sizes.split(",") if int(k) > 0], args.timeout)


def frame(body):
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def lsp_framing(tool, sizes_kib, timeout):
    if not sizes_kib:
        return
    print("\n%-8s %8s %10s %12s" % ("framing", "KiB", "server s", "ms per KiB"))
    for kind in ("string", "bare"):
        for kib in sizes_kib:
            pad = b"Content-Length: 12 " * (kib * 1024 // 19)
            body = (b'{"jsonrpc":"2.0","method":"bench/pad","params":{"pad":"' + pad + b'"}}'
                    if kind == "string" else b'{"jsonrpc":"2.0","method":"bench/pad","params":' + pad + b"}")
            data = frame(body) + frame(b'{"jsonrpc":"2.0","method":"exit"}')
            with tempfile.NamedTemporaryFile() as f:
                f.write(data)
                f.flush()
                start = time.perf_counter()
                try:
                    subprocess.run([tool, "--lsp"], stdin=open(f.name, "rb"), stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, timeout=timeout)
                    elapsed = time.perf_counter() - start
                    print("%-8s %8d %10.2f %12.3f" % (kind, kib, elapsed, 1000 * elapsed / kib))
                except subprocess.TimeoutExpired:
                    print("%-8s %8d %10s %12s" % (kind, kib, "timeout", "-"))
            sys.stdout.flush()


if __name__ == "__main__":
    main()

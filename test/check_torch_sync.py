#!/usr/bin/env python3
"""Runs one lit case through BOTH torch-syncfree front ends and checks them.

In the spirit of clang-tidy's check_clang_tidy.py:
  * the CHECK-MESSAGES / CHECK-FIXES comments are blanked in the copy that is
    analysed, so a pattern can never match its own comment;
  * the diagnostics of each front end are FileChecked against CHECK-MESSAGES
    with --implicit-check-not for any other warning or error, so every finding
    a case does not expect fails it (negative cases are asserted, not assumed);
  * each front end's --fix output is FileChecked against CHECK-FIXES; without
    CHECK-FIXES lines the file must come back unchanged;
  * both front ends must print the same findings and produce the same fixed text;
  * with --compile-fixed the fixed file is compiled with clang++ -fsyntax-only.

usage: check_torch_sync.py [tool paths] [--tool-only] <source> <checks> <temp> [-config=...] [-- <flags>]
"""
import argparse
import os
import re
import subprocess
import sys


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from syntax_oracle import syntax_check  # noqa: E402

def run(cmd, **kwargs):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kwargs)


def filecheck(filecheck_bin, check_file, prefix, text, extra=()):
    proc = subprocess.run([filecheck_bin, check_file, "--check-prefixes=" + prefix, "--allow-unused-prefixes",
                           "--dump-input=fail"] + list(extra),
                          input=text, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return proc.returncode, proc.stdout


def main():
    parser = argparse.ArgumentParser()
    for name in ("tool", "plugin", "clang-tidy", "clangxx", "filecheck"):
        parser.add_argument("--" + name, required=True)
    parser.add_argument("--pch-cache", default=None,
                        help="directory of the lit run's shared <torch/torch.h> PCHs (test/syntax_oracle.py)")
    parser.add_argument("--compile-fixed", action="store_true",
                        help="compile the fixed file with clang++ -fsyntax-only")
    parser.add_argument("--tool-only", action="store_true",
                        help="run the standalone tool only (real-header cases whose subject is a "
                             "check's behaviour: the plugin's full parse of LibTorch costs 15-20 s, and "
                             "the front ends' parity on real headers is asserted by torchscript.test "
                             "and catalog-2.11.test)")
    parser.add_argument("--check-prefix", default="",
                        help="prefixes of this run's CHECK lines, comma-separated, e.g. CHECK,CHECK211 "
                             "reads CHECK-MESSAGES and CHECK211-MESSAGES")
    parser.add_argument("source")
    parser.add_argument("checks")
    parser.add_argument("temp")
    parser.add_argument("rest", nargs=argparse.REMAINDER)
    args = parser.parse_args()

    config_args = [a for a in args.rest if a.startswith("-config=")]
    rest = [a for a in args.rest if not a.startswith("-config=")]
    if rest and rest[0] == "--":
        rest = rest[1:]
    flags = rest

    prefixes = (args.check_prefix or "CHECK").split(",")
    msg_prefix = ",".join(p + "-MESSAGES" for p in prefixes)
    fix_prefix = ",".join(p + "-FIXES" for p in prefixes)
    original = open(args.source, encoding="utf-8").read()
    has_fix_checks = any((p + "-FIXES:") in original for p in prefixes)
    # Blank every CHECK comment so nothing can match itself.
    cleaned = re.sub(r"//\s*[A-Z0-9]+-[A-Z0-9\-]*:[^\r\n]*", "//", original)

    ext = os.path.splitext(args.source)[1]
    os.makedirs(os.path.dirname(os.path.abspath(args.temp)) or ".", exist_ok=True)
    outputs, fixed_texts, failures = {}, {}, []
    # A sanitizer build (scripts/test.sh --sanitize) checks the tool only: its
    # instrumented plugin cannot be loaded into the uninstrumented clang-tidy.
    frontends = ("tool",) if os.environ.get("TORCH_SYNCFREE_TOOL_ONLY") or args.tool_only else ("plugin", "tool")
    for frontend in frontends:
        work = "%s.%s%s" % (args.temp, frontend, ext)
        with open(work, "w", encoding="utf-8") as f:
            f.write(cleaned)
        if frontend == "plugin":
            cmd = [args.clang_tidy, "--load=" + args.plugin, "--checks=-*," + args.checks,
                   "--fix", "--header-filter=.*", "--quiet"] + \
                  [c.replace("-config=", "--config=") for c in config_args] + [work, "--"] + flags
        else:
            cmd = [args.tool, "--checks=" + args.checks, "--fix"] + \
                  [c.replace("-config=", "--config=") for c in config_args] + [work, "--"] + flags
        proc = run(cmd)
        if proc.returncode not in (0, 1):
            failures.append("%s exited %d:\n%s" % (frontend, proc.returncode, proc.stdout))
            continue
        # Keep only diagnostics lines (file:line:col: level: ...), with the path
        # removed so both front ends are compared on the same text.
        lines = [l.replace(work, "INPUT") for l in proc.stdout.splitlines()
                 if re.match(r".*:\d+:\d+: (warning|error|note): ", l)
                 and "FIX-IT applied" not in l]
        outputs[frontend] = "\n".join(lines) + "\n"
        with open("%s.%s.out" % (args.temp, frontend), "w", encoding="utf-8") as f:
            f.write(proc.stdout)  # kept for debugging a failing case
        fixed_texts[frontend] = open(work, encoding="utf-8").read()

        code, out = filecheck(args.filecheck, args.source, msg_prefix, outputs[frontend],
                              ["--implicit-check-not={{warning|error}}:"])
        if code:
            failures.append("%s: %s failed:\n%s\n--- output ---\n%s" %
                            (frontend, msg_prefix, out, proc.stdout))
        if has_fix_checks:
            code, out = filecheck(args.filecheck, args.source, fix_prefix, fixed_texts[frontend],
                                  ["--strict-whitespace"])
            if code:
                failures.append("%s: %s failed:\n%s" % (frontend, fix_prefix, out))
        elif fixed_texts[frontend] != cleaned:
            failures.append("%s: the file was changed although the case has no %s lines" %
                            (frontend, fix_prefix))

    if not failures:
        if "plugin" in outputs and outputs["plugin"] != outputs["tool"]:
            failures.append("the front ends disagree:\n--- plugin ---\n%s--- tool ---\n%s" %
                            (outputs["plugin"], outputs["tool"]))
        if "plugin" in fixed_texts and fixed_texts["plugin"] != fixed_texts["tool"]:
            failures.append("the front ends fixed the file differently")
        if args.compile_fixed:
            fixed = "%s.fixed%s" % (args.temp, ext)
            with open(fixed, "w", encoding="utf-8") as f:
                f.write(fixed_texts["tool"])
            proc = syntax_check(args.clangxx, flags, fixed, args.pch_cache,
                                extra=["-Wno-unused-variable", "-Wno-unused-value"])
            if proc.returncode:
                failures.append("the fixed file does not compile:\n" + proc.stdout)

    if failures:
        print("\n\n".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Findings of the language server against a full parse by clang-tidy with the
plugin (clang-tidy's own driver: no preamble, no scope) on the real-header
inputs, along the editor's preamble paths (lsp/Analysis.h): the shared PCH of
the include block, built and then reused after a body edit; a #define above the
includes, answered first from that PCH plus the edit (provisional) and then from
the document's own preamble, built in the background; and that preamble reused
after a body edit. Prints the counts and every difference, for each final result.
usage: preamble_identical.py TOOL 'CLANG_TIDY --load=PLUGIN' WORK INPUTS_DIR FLAGS..."""
import os
import re
import subprocess
import sys

tool, tidy, work, inputs = sys.argv[1:5]
flags = sys.argv[5:]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tool",
                                "Inputs"))
import lsp_client  # noqa: E402

# One TU of all the inputs (one preamble to build): their includes first, each
# body in a namespace of its own.
includes, bodies = [], []
for n, name in enumerate(sorted(f for f in os.listdir(inputs) if f.endswith(".cpp"))):
    lines = open(os.path.join(inputs, name)).read().split("\n")
    includes += [l for l in lines if l.startswith("#include") and l not in includes]
    bodies.append("namespace input_%d {\n%s\n}\n" % (
        n, "\n".join(l for l in lines if not l.startswith("#include"))))
os.makedirs(work, exist_ok=True)
source = os.path.join(work, "all_inputs.cpp")
text = "\n".join(includes) + "\n" + "".join(bodies)
open(source, "w").write(text)
lsp_client.write_db(work, [{"directory": work, "file": source,
                            "arguments": ["clang++"] + flags + ["-c", source]}])

lsp_client.tool, lsp_client.work = tool, work
client = lsp_client.Client()
uri = lsp_client.uri_of(source)
client.open(source, text)
client.diagnostics(uri)  # the first analysis builds the shared PCH


def findings(diagnostics):
    return sorted("%d:%d: %s [%s]" % (d["range"]["start"]["line"] + 1, d["range"]["start"]["character"] + 1,
                                      d["message"], d["code"]) for d in diagnostics)


def tidy_findings(text):
    open(source, "w").write(text)
    run = subprocess.run(tidy.split() + ["--checks=-*,torch-sync-*", source, "--"] + flags,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    pattern = re.compile(r"^" + re.escape(source) + r":(\d+):(\d+): (?:warning|error): (.*) \[(.*)\]$")
    return sorted("%s:%s: %s [%s]" % m.groups() for m in map(pattern.match, run.stdout.split("\n")) if m)


def change(version, new_text):
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                             "contentChanges": [{"text": new_text}]})
    client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})


def compare(label, from_server, from_tidy):
    print("%s: language server %d findings, clang-tidy full parse %d" % (label, len(from_server), len(from_tidy)))
    for line in sorted(set(from_server) ^ set(from_tidy)):
        print("differs (%s): %s" % ("server only" if line in from_server else "clang-tidy only", line))
    print("%s identical: %s" % (label, from_server == from_tidy))


# A body edit: the shared PCH is reused. (Each edit appends a comment at the
# end, which moves no finding: clang-tidy parses each include block once, CI time.)
text += "// edited\n"
change(2, text)
compare("shared PCH", findings(client.diagnostics(uri)), tidy_findings(text))
# A #define above the includes: the block is no longer shared. The first answer
# is provisional (the shared PCH and the edit); the final one comes from the
# document's preamble once it is built.
text = "#define PREAMBLE_TEST_MACRO 1\n" + text
change(3, text)
provisional = findings(client.diagnostics(uri))
final = findings(client.diagnostics(uri))
expected = tidy_findings(text)
print("provisional identical: %s" % (provisional == expected))
compare("document preamble", final, expected)
text += "// edited again\n"
change(4, text)
compare("document preamble after an edit", findings(client.diagnostics(uri)), expected)
client.close()

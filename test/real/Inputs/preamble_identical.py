"""Findings of the language server (a precompiled preamble, reused after an
edit, and the user-code traversal scope) against a full parse by clang-tidy with
the plugin (clang-tidy's own driver: no preamble, no scope) on the real-header
inputs. Prints the counts and every difference.
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
client.diagnostics(uri)  # the first analysis builds the preamble
end = text.count("\n")
client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                         "contentChanges": [{
                                             "range": {"start": {"line": end, "character": 0},
                                                       "end": {"line": end, "character": 0}},
                                             "text": "// edited\n"}]})
client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
from_server = sorted("%d:%d: %s [%s]" % (d["range"]["start"]["line"] + 1,
                                          d["range"]["start"]["character"] + 1, d["message"],
                                          d["code"]) for d in client.diagnostics(uri))
client.close()

run = subprocess.run(tidy.split() + ["--checks=-*,torch-sync-*", source, "--"] + flags,
                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
pattern = re.compile(r"^" + re.escape(source) + r":(\d+):(\d+): (?:warning|error): (.*) \[(.*)\]$")
from_tidy = sorted("%s:%s: %s [%s]" % m.groups() for m in map(pattern.match, run.stdout.split("\n"))
                   if m)
print("language server: %d findings" % len(from_server))
print("clang-tidy full parse: %d findings" % len(from_tidy))
for line in sorted(set(from_server) ^ set(from_tidy)):
    print("differs (%s): %s" % ("server only" if line in from_server else "clang-tidy only", line))
print("identical:", from_server == from_tidy)

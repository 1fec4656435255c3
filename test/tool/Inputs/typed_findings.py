"""Issue 22: findings are typed data end to end. Runs every check input through
the JSON and SARIF outputs of one batch run and through the language server,
and prints one line per disagreement: a finding whose dependency class differs
between the three, is missing from one, is "unknown" (no facts reached the
output), or whose class disagrees with the label its message prints (the
message is text for people; the class comes from the record, never from it).
usage: typed_findings.py TOOL WORKDIR MOCK_INCLUDE INPUT..."""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lsp_client  # noqa: E402

tool, work, inputs = sys.argv[1], sys.argv[2], sys.argv[4:]
mock = os.path.abspath(sys.argv[3])
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
sources = []
for path in inputs:
    target = os.path.join(work, os.path.basename(path))
    shutil.copy(path, target)
    sources.append(target)
lsp_client.write_db(work, [{"directory": work, "file": s,
                            "arguments": ["clang++", "-std=c++17", "-isystem", mock, "-c", s]}
                           for s in sources])
LABELS = {"false": "; false dependency: ", "true": "; true dependency: ",
          "intentional": "; intentional barrier: "}


def run(fmt):
    proc = subprocess.run([tool, "-p", work, "--format=" + fmt] + sources,
                          capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise SystemExit("%s run failed (%d): %s" % (fmt, proc.returncode, proc.stderr[-2000:]))
    return json.loads(proc.stdout)


classes = {}  # (file, line, check, message) -> {front end: class}


def note(front, file, line, check, message, dependency):
    classes.setdefault((os.path.basename(file), line, check, message), {})[front] = dependency


for f in run("json"):
    if f["file"] in sources:
        note("json", f["file"], f["line"], f["check"], f["message"], f["dependency"])
sarif = run("sarif")["runs"][0]
for r in sarif["results"]:
    loc = r["locations"][0]["physicalLocation"]
    uri = loc["artifactLocation"]["uri"]
    note("sarif", uri, loc["region"]["startLine"], r["ruleId"], r["message"]["text"],
         r["properties"]["dependency"])
lsp_client.work = work
lsp_client.tool = tool
client = lsp_client.Client()
for source in sources:
    text = open(source).read()
    client.open(source, text)
    for d in client.diagnostics(lsp_client.uri_of(source)):
        if d.get("source") == "torch-syncfree" and d["code"].startswith("torch-sync-"):
            note("lsp", source, d["range"]["start"]["line"] + 1, d["code"], d["message"],
                 d["data"]["dependency"])
client.close()

problems = 0
for key in sorted(classes):
    seen = classes[key]
    values = set(seen.values())
    # A message that prints a class label (graph-capture's prints none) prints this one.
    printed = {v for v, label in LABELS.items() if label in key[3]}
    label_ok = not printed or printed == values
    if set(seen) != {"json", "sarif", "lsp"} or len(values) != 1 or "unknown" in values or not label_ok:
        problems += 1
        print("MISMATCH %s:%d %s %s" % (key[0], key[1], key[2], json.dumps(seen, sort_keys=True)))
counts = {}
for seen in classes.values():
    for v in set(seen.values()):
        counts[v] = counts.get(v, 0) + 1
print("findings: %d in %d files; classes: %s; mismatches: %d" % (
    len(classes), len(sources), json.dumps(counts, sort_keys=True), problems))

"""A scripted LSP client for `torch-syncfree --lsp`.
usage: lsp_client.py TOOL WORKDIR MOCK_INCLUDE SCENARIO
Each scenario prints one line per observation for FileCheck."""
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import urllib.parse

# Set from the command line, or by a script that imports this module (bench/).
tool, work, mock, scenario = (sys.argv[1:5] if __name__ == "__main__" else (None,) * 4)

STEP = ('#include <torch/torch.h>\n'
        'float step(torch::Tensor t) {\n'
        '  auto host = torch::rand({4});\n'
        '  auto g = host.cuda();\n'
        '  return t.item<float>() + g.sum().item<float>();\n'
        '}\n')


def uri_of(path):
    return "file://" + urllib.parse.quote(path)


def write_db(directory, entries):
    os.makedirs(directory, exist_ok=True)
    json.dump(entries, open(os.path.join(directory, "compile_commands.json"), "w"))


class Client:
    def __init__(self, *extra, capabilities=None):
        self.server = subprocess.Popen([tool, "--lsp", *extra], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE)
        self.inbox = queue.Queue()
        self.next_id = 100
        threading.Thread(target=self._read, daemon=True).start()
        self.request("initialize", {"rootUri": uri_of(work), "capabilities": capabilities or {}})
        self.init = self.wait_response(100)
        self.notify("initialized", {})

    def _read(self):
        out = self.server.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    self.inbox.put(None)
                    return
                line = line.strip()
                if not line:
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            self.inbox.put(json.loads(out.read(length)))

    def send_raw(self, data):
        self.server.stdin.write(data)
        self.server.stdin.flush()

    def send(self, message):
        body = json.dumps(message).encode()
        self.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def request(self, method, params):
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        self.next_id += 1
        return self.next_id - 1

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait(self, predicate):
        # No clock: the server's answer (or its end of the stream) ends the
        # wait; lit's per-test limit is the only limit (issue 39).
        while True:
            message = self.inbox.get()
            if message is None:
                raise SystemExit("server closed the stream")
            if message.get("id") and message.get("method") == "window/workDoneProgress/create":
                print("progress: create")
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
                continue
            if message.get("method") == "$/progress":
                print("progress:", message["params"]["value"]["kind"])
                continue
            if predicate(message):
                return message

    def wait_response(self, id):
        return self.wait(lambda m: m.get("id") == id and "method" not in m)

    def diagnostics(self, uri):
        m = self.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                      and m["params"]["uri"] == uri)
        return m["params"]["diagnostics"]

    def open(self, path, text):
        self.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri_of(path), "languageId": "cpp", "version": 1, "text": text}})

    def close(self):
        self.request("shutdown", None)
        self.wait_response(self.next_id - 1)
        self.notify("exit", None)
        return self.server.wait()


def show(diagnostics, text=None):
    for d in diagnostics:
        r = d["range"]
        print("diagnostic: %d:%d-%d:%d %s %s" % (r["start"]["line"], r["start"]["character"],
                                                 r["end"]["line"], r["end"]["character"], d["code"],
                                                 d["message"].split(";")[0]))


def apply_edits(text, edits, utf8=False):
    """Applies LSP text edits as an editor does (UTF-16 or UTF-8 columns)."""
    lines = text.split("\n")

    def offset(pos):
        line = lines[pos["line"]]
        units, i = 0, 0
        while i < len(line) and units < pos["character"]:
            ch = line[i]
            units += len(ch.encode("utf-8")) if utf8 else (2 if ord(ch) > 0xFFFF else 1)
            i += 1
        return sum(len(l) + 1 for l in lines[:pos["line"]]) + i

    for e in sorted(edits, key=lambda e: (e["range"]["start"]["line"],
                                          e["range"]["start"]["character"]), reverse=True):
        s, t = offset(e["range"]["start"]), offset(e["range"]["end"])
        text = text[:s] + e["newText"] + text[t:]
    return text


if scenario == "profile":
    # --profile (issue 26): each diagnostic carries the cost measured at its
    # line. WORKDIR holds train.cpp and profile.json (profile-join.test).
    source = os.path.join(work, "train.cpp")
    write_db(work, [{"directory": work, "file": source,
                     "command": "clang++ -std=c++17 -isystem %s -c train.cpp" % mock}])
    c = Client("--profile=" + os.path.join(work, "profile.json"))
    c.open(source, open(source).read())
    for d in sorted(c.diagnostics(uri_of(source)), key=lambda d: d["range"]["start"]["line"]):
        data = d["data"]
        print("diagnostic: %d %s measured=%s wait=%s executed=%s | %s" % (
            d["range"]["start"]["line"] + 1, d["code"], data.get("measuredCount"),
            data.get("measuredWaitMs"), data.get("executed"), d["message"].split("[")[-1]))
    print("exit status:", c.close())

if scenario == "basic":
    source = os.path.join(work, "step.cpp")
    open(source, "w").write(STEP)
    write_db(work, [{"directory": work, "file": source,
                     "command": "clang++ -std=c++17 -isystem %s -c step.cpp" % mock}])
    c = Client()
    print("initialize:", json.dumps(c.init["result"]["capabilities"], sort_keys=True))
    uri = uri_of(source)
    c.open(source, STEP)
    diags = c.diagnostics(uri)
    show(diags)
    d = diags[0]
    print("code: %s href: %s dependency: %s" % (d["code"], d["codeDescription"]["href"],
                                                 d["data"]["dependency"]))
    rid = c.request("textDocument/codeAction", {
        "textDocument": {"uri": uri},
        "range": {"start": {"line": 3, "character": 0}, "end": {"line": 3, "character": 0}},
        "context": {"diagnostics": []}})
    for action in c.wait_response(rid)["result"]:
        for edit in action["edit"]["changes"][uri]:
            r = edit["range"]
            print("codeAction: %s %s preferred=%s %d:%d-%d:%d -> %s" % (
                action["kind"], action["title"], action["isPreferred"], r["start"]["line"],
                r["start"]["character"], r["end"]["line"], r["end"]["character"], edit["newText"]))
    c.send_raw(b"Content-Length: 17\r\n\r\n{this is not json")
    print("malformed:", c.wait(lambda m: "error" in m)["error"]["code"])
    rid = c.request("no/such/method", {})
    print("unknown method:", c.wait_response(rid)["error"]["code"])
    print("exit status:", c.close())

elif scenario == "incomplete":
    # A file that does not compile: one diagnostic says so, and each finding's
    # data says it is incomplete, with no quick fix; a file that compiles
    # beside it is complete (WORKDIR holds broken.cpp and good.cpp).
    names = ["broken.cpp", "good.cpp"]
    write_db(work, [{"directory": work, "file": os.path.join(work, n),
                     "command": "clang++ -std=c++17 -isystem %s -c %s" % (mock, n)} for n in names])
    c = Client()
    for n in names:
        source = os.path.join(work, n)
        c.open(source, open(source).read())
        for d in c.diagnostics(uri_of(source)):
            data = d.get("data") or {}
            print("diagnostic: %s:%d %s incomplete=%s fixable=%s" % (
                n, d["range"]["start"]["line"] + 1, d["code"], data.get("incomplete"), data.get("fixable")))
    print("exit status:", c.close())

elif scenario == "pch-crash":
    # Issue 38, hole 4: a header of the leading #include block crashes clang.
    # The shared PCH is compiled in a worker process: that build fails, the
    # server lives on and answers for this file and the next one.
    root = os.path.join(work, "proj")
    os.makedirs(os.path.join(root, "sys"), exist_ok=True)
    os.makedirs(os.path.join(root, "src"), exist_ok=True)
    open(os.path.join(root, "sys", "crash.h"), "w").write("#pragma once\n#pragma clang __debug crash\n")
    crashing = os.path.join(root, "src", "crashing.cpp")
    clean = os.path.join(root, "src", "clean.cpp")
    crashing_text = "#include <crash.h>\n" + STEP
    open(crashing, "w").write(crashing_text)
    open(clean, "w").write(STEP)
    args = ["clang++", "-std=c++17", "-isystem", os.path.join(root, "sys"), "-isystem", mock]
    write_db(os.path.join(root, "build"), [
        {"directory": os.path.join(root, "build"), "file": f, "arguments": args + ["-c", f]}
        for f in (crashing, clean)])
    c = Client()
    c.open(crashing, crashing_text)
    print("crashing:", len(c.diagnostics(uri_of(crashing))))
    c.open(clean, STEP)
    print("clean:")
    show(c.diagnostics(uri_of(clean)))
    print("exit status:", c.close())

elif scenario == "layout":
    # A CMake project in a path with a space and non-ASCII characters: the
    # database only in build/, a header with no entry of its own.
    root = os.path.join(work, "my proj ü")
    os.makedirs(os.path.join(root, "src"), exist_ok=True)
    os.makedirs(os.path.join(root, "include"), exist_ok=True)
    source = os.path.join(root, "src", "train.cpp")
    header = os.path.join(root, "include", "util.h")
    open(source, "w").write(STEP)
    header_text = ('#pragma once\n#include <torch/torch.h>\n'
                   'inline float mean_of(torch::Tensor t) { return t.mean().item<float>(); }\n')
    open(header, "w").write(header_text)
    write_db(os.path.join(root, "build"), [{
        "directory": os.path.join(root, "build"), "file": source,
        "arguments": ["clang++", "-std=c++17", "-isystem", mock,
                      "-I" + os.path.join(root, "include"), "-c", source]}])
    c = Client()
    c.open(source, STEP)
    print("source:")
    show(c.diagnostics(uri_of(source)))
    c.open(header, header_text)
    print("header:")
    show(c.diagnostics(uri_of(header)))
    print("exit status:", c.close())

elif scenario == "utf16" or scenario == "utf8":
    utf8 = scenario == "utf8"
    source = os.path.join(work, "wide.cpp")
    text = ('#include <torch/torch.h>\n'
            'void f() {\n'
            '  /* é 😀 */ auto g = torch::rand({4}).cuda();\n'
            '}\n')
    open(source, "w", encoding="utf-8").write(text)
    write_db(work, [{"directory": work, "file": source,
                     "command": "clang++ -std=c++17 -isystem %s -c wide.cpp" % mock}])
    caps = {"general": {"positionEncodings": ["utf-8", "utf-16"]}} if utf8 else {}
    c = Client(capabilities=caps)
    print("encoding:", c.init["result"]["capabilities"]["positionEncoding"])
    uri = uri_of(source)
    c.open(source, text)
    show(c.diagnostics(uri))
    rid = c.request("textDocument/codeAction", {
        "textDocument": {"uri": uri},
        "range": {"start": {"line": 2, "character": 0}, "end": {"line": 2, "character": 0}},
        "context": {"diagnostics": []}})
    edits = c.wait_response(rid)["result"][0]["edit"]["changes"][uri]
    fixed = apply_edits(text, edits, utf8)
    print("fixed:", fixed.splitlines()[2])
    print("exit status:", c.close())

elif scenario == "edits":
    # Incremental didChange (analysed after a debounce, from the unsaved
    # buffer), didSave, cancel, progress, a compile error shown in the editor.
    source = os.path.join(work, "edit.cpp")
    open(source, "w").write(STEP)
    write_db(work, [{"directory": work, "file": source,
                     "command": "clang++ -std=c++17 -isystem %s -c edit.cpp" % mock}])
    c = Client(capabilities={"window": {"workDoneProgress": True}})
    uri = uri_of(source)
    c.open(source, STEP)
    print("opened: %d diagnostics" % len(c.diagnostics(uri)))
    # Replace `host.cuda()` (line 3, 11..22) by `host` in the buffer only.
    c.notify("textDocument/didChange", {
        "textDocument": {"uri": uri, "version": 2},
        "contentChanges": [{"range": {"start": {"line": 3, "character": 11},
                                      "end": {"line": 3, "character": 22}}, "text": "host"}]})
    c.notify("$/cancelRequest", {"id": 12345})
    print("after change:")
    show(c.diagnostics(uri))
    # Two quick edits: one analysis, of the last text (debounced).
    for i, name in enumerate(["ab", "abcd"]):
        c.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": 3 + i},
            "contentChanges": [{"text": STEP.replace("t.item", name + ".item").replace(
                "float step(torch::Tensor t)", "float step(torch::Tensor %s)" % name)}]})
    d = c.diagnostics(uri)
    print("after two edits: %d diagnostics, item at column %d" % (
        len(d), [x for x in d if x["code"] == "torch-sync-item"][0]["range"]["start"]["character"]))
    broken = STEP.replace("return t.item", "return undeclared + t.item")
    open(source, "w").write(broken)
    c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 9},
                                        "contentChanges": [{"text": broken}]})
    c.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    print("broken:")
    show(c.diagnostics(uri))
    print("exit status:", c.close())

elif scenario == "hostile":
    # Bad frames, a database whose directory is gone, a document that
    # includes /dev/stdin, a client that goes away.
    source = os.path.join(work, "h.cpp")
    text = '#include "/dev/stdin"\n#include <torch/torch.h>\nfloat f(torch::Tensor t) { return t.item<float>(); }\n'
    open(source, "w").write(text)
    write_db(work, [{"directory": work, "file": source,
                     "command": "clang++ -std=c++17 -isystem %s -c h.cpp" % mock}])
    c = Client()
    # A bad frame, then a good request: the error is answered and the stream
    # recovers (Content-Length too large, too small, missing).
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "no/such"}).encode()
    for label, frame in (("too long", b"Content-Length: %d\r\n\r\n" % (len(body) + 50) + body),
                         ("too short", b"Content-Length: 5\r\n\r\n" + body),
                         ("no length", b"Garbage-Header: 1\r\n\r\n")):
        c.send_raw(frame)
        rid = c.request("no/such/method", {})
        print("%s:" % label, c.wait(lambda m: "error" in m and m.get("id") is None)["error"]["code"])
        print("next request:", c.wait_response(rid)["error"]["code"])
    c.open(source, text)
    show(c.diagnostics(uri_of(source)))
    gone = os.path.join(work, "gone")
    os.makedirs(gone, exist_ok=True)
    other = os.path.join(gone, "g.cpp")
    open(other, "w").write(STEP)
    write_db(gone, [{"directory": os.path.join(work, "no-such-dir"), "file": other,
                     "command": "clang++ -c g.cpp"}])
    c.open(other, STEP)
    show(c.diagnostics(uri_of(other)))
    # Compile commands are data here too: options that would write a file or
    # load code never reach clang (the same sanitiser as the batch tool).
    evil = os.path.join(work, "evil")
    os.makedirs(evil, exist_ok=True)
    evil_src = os.path.join(evil, "e.cpp")
    open(evil_src, "w").write(STEP)
    marker = os.path.join(work, "marker.d")
    write_db(evil, [{"directory": evil, "file": evil_src,
                     "arguments": ["clang++", "-std=c++17", "-isystem", mock,
                                   "-Wp,-MD," + marker, "-MD", "-MF", marker,
                                   "-Xclang", "-load", "-Xclang", os.path.join(work, "evil.so"),
                                   "-c", evil_src]}])
    c.open(evil_src, STEP)
    print("hostile flags: %d diagnostics, marker written: %s" % (
        len(c.diagnostics(uri_of(evil_src))), os.path.exists(marker)))
    # Issue 38: a response file naming /dev/stdin (the server's own input) is
    # refused, never read: the next request is still answered.
    rsp = os.path.join(work, "rsp")
    os.makedirs(rsp, exist_ok=True)
    rsp_src = os.path.join(rsp, "r.cpp")
    open(rsp_src, "w").write(STEP)
    write_db(rsp, [{"directory": rsp, "file": rsp_src,
                    "arguments": ["clang++", "-std=c++17", "-isystem", mock, "@/dev/stdin",
                                  "-c", rsp_src]}])
    c.open(rsp_src, STEP)
    show(c.diagnostics(uri_of(rsp_src)))
    rid = c.request("no/such/method", {})
    print("after a stdin response file:", c.wait_response(rid)["error"]["code"])
    bad_uri = "file:///bad%zzuri.cpp"
    c.notify("textDocument/didOpen", {"textDocument": {"uri": bad_uri, "languageId": "cpp",
                                                       "version": 1, "text": ""}})
    rid = c.request("no/such/method", {})
    print("after bad uri:", c.wait_response(rid)["error"]["code"])
    print("exit status:", c.close())
    # A client that stops reading, then goes away: no SIGPIPE death.
    raw = subprocess.Popen([tool, "--lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    raw.stdout.close()
    for message in ({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
                    {"jsonrpc": "2.0", "method": "textDocument/didOpen",
                     "params": {"textDocument": {"uri": uri_of(source), "text": text}}}):
        body = json.dumps(message).encode()
        raw.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    raw.stdin.flush()
    raw.stdin.close()
    code = raw.wait()
    print("client gone: exit", code, "(killed by a signal)" if code < 0 else "")

elif scenario == "clip-helper":
    # Two clip_grad_norm_ sites: the editor applies one quick fix at a time, so
    # each one carries the helper's (guarded) definition, the later site's too.
    text = ('#include <torch/torch.h>\n'
            'void step(torch::nn::Linear &a, torch::nn::Linear &b) {\n'
            '  torch::nn::utils::clip_grad_norm_(a->parameters(), 1.0);\n'
            '  torch::nn::utils::clip_grad_norm_(b->parameters(), 1.0);\n'
            '}\n')
    source = os.path.join(work, "clip.cpp")
    open(source, "w").write(text)
    write_db(work, [{"directory": work, "file": source,
                     "command": "clang++ -std=c++17 -isystem %s -c clip.cpp" % mock}])
    c = Client()
    uri = uri_of(source)
    c.open(source, text)
    c.diagnostics(uri)
    for line in (2, 3):
        rid = c.request("textDocument/codeAction", {
            "textDocument": {"uri": uri},
            "range": {"start": {"line": line, "character": 2}, "end": {"line": line, "character": 2}},
            "context": {"diagnostics": []}})
        for action in c.wait_response(rid)["result"]:
            edits = action["edit"]["changes"][uri]
            helper = sum("static torch::Tensor torch_syncfree_clip_grad_norm(" in e["newText"] for e in edits)
            calls = [e["newText"] for e in edits if e["newText"].startswith("torch_syncfree_clip_grad_norm(")]
            print("line %d: %d helper definition(s), call %s" % (line + 1, helper, calls))
    print("exit status:", c.close())

elif scenario == "tempdirs":
    # Issue 23: preambles live in a private per-user directory
    # ($XDG_RUNTIME_DIR/torch-syncfree, 0700); stale entries of dead servers are
    # removed without following links; names in the shared $TMPDIR are never
    # touched (another user's link there once made a server empty its target).
    run, tmp, victim = (os.path.join(work, d) for d in ("run", "tmp", "victim"))
    for d in (run, tmp, victim):
        os.makedirs(d, exist_ok=True)
    os.chmod(run, 0o700)
    base = os.path.join(run, "torch-syncfree")
    os.makedirs(base, mode=0o700, exist_ok=True)
    open(os.path.join(victim, "keep.txt"), "w").write("keep")
    os.symlink(victim, os.path.join(base, "preamble-2147483646-link"))
    os.makedirs(os.path.join(base, "preamble-2147483645-dead", "sub"))
    open(os.path.join(base, "preamble-2147483645-dead", "sub", "x.pch"), "w").write("x")
    os.makedirs(os.path.join(base, "preamble-1-live"))
    os.symlink(victim, os.path.join(tmp, "torch-syncfree-preamble-2147483644-x"))
    os.environ["XDG_RUNTIME_DIR"] = run
    os.environ["TMPDIR"] = tmp
    source = os.path.join(work, "step.cpp")
    open(source, "w").write(STEP)
    write_db(work, [{"directory": work, "file": source,
                     "command": "clang++ -std=c++17 -isystem %s -c step.cpp" % mock}])
    c = Client()
    c.open(source, STEP)
    print("diagnostics:", len(c.diagnostics(uri_of(source))))
    during = sorted(os.listdir(base))
    print("during:", [n for n in during if not n.startswith("preamble-%d-" % c.server.pid)],
          "own:", sum(n.startswith("preamble-%d-" % c.server.pid) for n in during))
    print("exit status:", c.close())
    print("after:", sorted(os.listdir(base)))
    print("victim:", sorted(os.listdir(victim)), "tmp:", sorted(os.listdir(tmp)))
    print("base mode:", oct(os.stat(base).st_mode & 0o777))

elif scenario == "summaries":
    # Issue 42: the editor joins the open file with the records of the other
    # units that a batch run wrote (`--summaries=<file>`): a call in a loop to
    # a function of another file that waits; without the file, or with one
    # that cannot be read (said as a diagnostic), the file is analysed alone.
    train, metrics = os.path.join(work, "train.cpp"), os.path.join(work, "metrics.cpp")
    TRAIN = ('#include <torch/torch.h>\n'
             'double batch_error(const torch::Tensor &pred, const torch::Tensor &target);\n'
             'void train(torch::Tensor w, const torch::Tensor &x, const torch::Tensor &y, int steps) {\n'
             '  double err = 0;\n'
             '  for (int i = 0; i < steps; ++i)\n'
             '    err += batch_error(x * w, y);\n'
             '  std::printf("%f\\n", err);\n'
             '}\n'
             'int main() { train(torch::ones({2}), torch::ones({2}), torch::ones({2}), 2); }\n')
    open(train, "w").write(TRAIN)
    open(metrics, "w").write('#include <torch/torch.h>\n'
                             'double batch_error(const torch::Tensor &pred, const torch::Tensor &target) {\n'
                             '  return (pred - target).abs().mean().item<double>();\n'
                             '}\n')
    write_db(work, [{"directory": work, "file": f, "command": "clang++ -std=c++17 -isystem %s -c %s" % (mock, f)}
                    for f in (train, metrics)])
    summaries = os.path.join(work, "summaries.json")
    batch = subprocess.run([tool, "-p", work, "--quiet", "--summaries=" + summaries], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
    print("batch exit:", batch.returncode, "summaries written:", os.path.exists(summaries))
    for label, extra in (("with", ["--summaries=" + summaries]), ("without", []),
                         ("unreadable", ["--summaries=" + os.path.join(work, "missing.json")])):
        c = Client(*extra)
        c.open(train, TRAIN)
        print(label + ":")
        show(c.diagnostics(uri_of(train)))
        c.close()

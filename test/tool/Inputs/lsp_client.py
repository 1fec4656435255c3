"""A scripted LSP client for `torch-syncfree --lsp`: initialize, didOpen,
publishDiagnostics, codeAction, a malformed message, shutdown, exit.
usage: lsp_client.py TOOL WORKDIR MOCK_INCLUDE"""
import json
import os
import subprocess
import sys

tool, work, mock = sys.argv[1:4]
source = os.path.join(work, "step.cpp")
text = ('#include <torch/torch.h>\n'
        'float step(torch::Tensor t) {\n'
        '  auto host = torch::rand({4});\n'
        '  auto g = host.cuda();\n'
        '  return t.item<float>() + g.sum().item<float>();\n'
        '}\n')
open(source, "w").write(text)
json.dump([{"directory": work, "file": source,
            "command": "clang++ -std=c++17 -isystem %s -c step.cpp" % mock}],
          open(os.path.join(work, "compile_commands.json"), "w"))
uri = "file://" + source
server = subprocess.Popen([tool, "--lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def send(message, raw=None):
    body = raw if raw is not None else json.dumps(message).encode()
    server.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    server.stdin.flush()


def receive():
    length = None
    while True:
        line = server.stdout.readline()
        if not line:
            raise SystemExit("server closed the stream")
        line = line.strip()
        if not line:
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(server.stdout.read(length))


send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"rootUri": "file://" + work}})
init = receive()
print("initialize:", json.dumps(init["result"]["capabilities"], sort_keys=True))
send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
send({"jsonrpc": "2.0", "method": "textDocument/didOpen",
      "params": {"textDocument": {"uri": uri, "languageId": "cpp", "version": 1, "text": text}}})
published = receive()
assert published["method"] == "textDocument/publishDiagnostics", published
for d in published["params"]["diagnostics"]:
    r = d["range"]
    print("diagnostic: %d:%d-%d:%d %s %s" % (r["start"]["line"], r["start"]["character"],
                                             r["end"]["line"], r["end"]["character"], d["code"],
                                             d["message"].split(";")[0]))
send({"jsonrpc": "2.0", "id": 2, "method": "textDocument/codeAction",
      "params": {"textDocument": {"uri": uri},
                 "range": {"start": {"line": 3, "character": 0}, "end": {"line": 3, "character": 0}},
                 "context": {"diagnostics": []}}})
actions = receive()["result"]
for action in actions:
    for edit in action["edit"]["changes"][uri]:
        r = edit["range"]
        print("codeAction: %s %d:%d-%d:%d -> %s" % (action["title"], r["start"]["line"],
                                                   r["start"]["character"], r["end"]["line"],
                                                   r["end"]["character"], edit["newText"]))
# Malformed input: a JSON error reply, and the server keeps serving.
send(None, raw=b"{this is not json")
bad = receive()
print("malformed:", bad["error"]["code"])
send({"jsonrpc": "2.0", "id": 3, "method": "no/such/method"})
print("unknown method:", receive()["error"]["code"])
send({"jsonrpc": "2.0", "id": 4, "method": "shutdown"})
print("shutdown:", receive()["result"])
send({"jsonrpc": "2.0", "method": "exit"})
print("exit status:", server.wait(timeout=30))

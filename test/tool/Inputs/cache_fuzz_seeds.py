"""Seeds for torch-syncfree-fuzz-caches (tool/fuzz/FuzzCaches.cpp): the first
byte picks the reader (odd: a results entry, even: a shared-PCH manifest), the
rest is the entry's text before signing.
usage: cache_fuzz_seeds.py DIR"""
import json
import os
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
finding = {"check": "torch-sync-item", "level": 1, "buildDirectory": "/tmp", "warningAsError": False,
           "message": {"message": "`item()` on a GPU tensor ...; false dependency: only logged",
                       "filePath": "/tmp/input.cpp", "fileOffset": 12,
                       "replacements": [{"filePath": "/tmp/input.cpp", "offset": 0, "length": 3,
                                         "text": "int"}]},
           "notes": [], "facts": {"dependency": "false", "loopLine": 3}}
seeds = {
    "entry": {"inputs": [{"file": "/tmp/input.cpp", "hash": "0123456789abcdef"}], "findings": [finding],
              "absent": ["/tmp/no-such-header.h", {"hex": "2f746d702f62ff"}]},
    "empty-inputs": {"inputs": [], "findings": []},
    "deep": {"inputs": [[[[[[[[]]]]]]]], "findings": {}},
}
for name, value in seeds.items():
    with open(os.path.join(out, "results-" + name), "wb") as f:
        f.write(b"\x01" + json.dumps(value).encode())
manifests = {
    "manifest": "torch-syncfree shared PCH v3\npch 00ff\n12 1700000000000000000 /tmp/input.cpp\n",
    "no-deps": "torch-syncfree shared PCH v3\npch 00ff\n",
    "bad-line": "torch-syncfree shared PCH v3\npch \n  /dev/zero\nx y\n",
    "absent": "torch-syncfree shared PCH v3\npch 00ff\n12 1700000000000000000 /tmp/input.cpp\nabsent /tmp/no-such.h\nabsent \n",
}
for name, text in manifests.items():
    with open(os.path.join(out, "pch-" + name), "wb") as f:
        f.write(b"\x00" + text.encode())

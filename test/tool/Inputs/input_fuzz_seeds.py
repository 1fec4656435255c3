"""Seeds for torch-syncfree-fuzz-inputs (tool/fuzz/FuzzInputs.cpp): the first
byte picks the reader (0 .clang-tidy, 1 .clang-format, 2 response file,
3 profile JSON, 4 a profile's module: 8 bytes of offset, then the module).
usage: input_fuzz_seeds.py DIR [MODULE]"""
import json
import os
import struct
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
seeds = {
    "tidy": b"\x00Checks: '-*,torch-sync-*'\nHeaderFilterRegex: '.*'\nCheckOptions:\n  - key: torch-sync-item.Fix\n    value: true\nExtraArgs: ['-DX=1']\n",
    "tidy-flow": b"\x00{Checks: [a, {b: [c, d]}], CheckOptions: {x: 'y'}}\n",
    "format": b"\x01BasedOnStyle: LLVM\nColumnLimit: 100\nIncludeCategories:\n  - Regex: '^<torch'\n    Priority: 2\n",
    "format-inline": b"\x01BasedOnStyle: Google, IndentWidth: 4",
    "rsp": b"\x02-std=c++17 -DX=1 '-I/a b' \"-DY=\\\"q\\\"\" -fplugin=x.so\n",
    "profile": b"\x03" + json.dumps({
        "format": "torch-syncfree-profile", "version": 1, "program": "p", "steps": 3,
        "step_ms": 1.5, "waits_from": "cupti",
        "syncs": [{"kind": "cudaStreamSynchronize", "op": "aten::item", "count": 2, "wait_ms": 0.25,
                   "frames": [{"file": "a.cpp", "line": 3, "column": 7, "function": "f"},
                              {"module": "/nonexistent.so", "offset": 4096}]}]}).encode(),
}
for name, data in seeds.items():
    with open(os.path.join(out, "seed-" + name), "wb") as f:
        f.write(data)
if len(sys.argv) > 2:
    module = open(sys.argv[2], "rb").read()
    for offset in (0x1100, 0x1110):
        with open(os.path.join(out, "seed-module-%x" % offset), "wb") as f:
            f.write(b"\x04" + struct.pack("<Q", offset) + module)

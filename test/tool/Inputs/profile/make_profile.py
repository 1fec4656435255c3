"""Writes the recorded profile of profile-join.test: syncs at train.cpp's lines
(pre-symbolized frames), one in host.cpp given as a raw frame (module + offset
of `work`), and one with no frame in the analysed files.
usage: make_profile.py OUT TRAIN_CPP HOST_BINARY HOST_CPP"""
import json
import subprocess
import sys

out, train, binary, host = sys.argv[1:5]
symbols = subprocess.run(["nm", binary], capture_output=True, text=True, check=True).stdout
work = next(int(l.split()[0], 16) for l in symbols.splitlines() if l.split()[-1] in ("_Z4worki", "work"))


def frame(line, function="train(at::Tensor, at::Tensor)"):
    return {"file": train, "line": line, "function": function}


libtorch = {"file": "/opt/libtorch/include/ATen/core/TensorBody.h", "line": 100, "function": "at::Tensor::item"}
profile = {
    "format": "torch-syncfree-profile", "version": 1, "program": binary,
    "steps": 10, "step_ms": 2.0,
    "syncs": [
        {"kind": "sync-debug-mode", "op": "aten::_local_scalar_dense", "count": 100, "wait_ms": 12.0,
         "frames": [libtorch, frame(9)]},
        {"kind": "sync-debug-mode", "op": "aten::_local_scalar_dense", "count": 100, "wait_ms": 1.0,
         "frames": [libtorch, frame(10)]},
        {"kind": "cudaStreamSynchronize", "count": 100, "wait_ms": 0.5,
         "frames": [frame(8)]},
        {"kind": "cudaDeviceSynchronize", "count": 10, "wait_ms": 4.0,
         "frames": [{"module": binary, "offset": work + 1}]},
        {"kind": "cudaMemcpy", "count": 1, "wait_ms": 0.1, "frames": [libtorch]},
    ],
}
json.dump(profile, open(out, "w"), indent=1)

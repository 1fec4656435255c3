"""`clang++ -fsyntax-only` for the real-header tests, with one precompiled
<torch/torch.h> per flag set shared by every test of a lit run (CI time: a full
parse of LibTorch's headers costs 10-15 s, loading the PCH about 1 s).

Only a file whose first directive is `#include <torch/torch.h>` (comments and
blank lines before it) uses the PCH: then compiling it with the header already
loaded is compiling it as written (the header's include guard skips the second
inclusion). Any other file, or a PCH that cannot be built, is parsed in full,
and so is a file the PCH parse rejects (the verdict "does not compile" is always
a full parse's).
The PCH is built once per flag set under a file lock, into a temporary file
renamed into place, so parallel tests wait for one build and never read half a
file."""
import fcntl
import hashlib
import os
import re
import subprocess

_FIRST_DIRECTIVE = re.compile(r"\s*#\s*include\s*<torch/torch\.h>")


def _starts_with_torch(path):
    in_block = False
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            text = line.strip()
            if in_block:
                if "*/" in text:
                    in_block = False
                    text = text.split("*/", 1)[1].strip()
                else:
                    continue
            if not text or text.startswith("//"):
                continue
            if text.startswith("/*"):
                in_block = "*/" not in text
                continue
            return bool(_FIRST_DIRECTIVE.match(text))
    return False


def _pch(clangxx, flags, cache_dir):
    """The PCH of <torch/torch.h> for these flags, or None when it cannot be built."""
    key = hashlib.sha256("\0".join([clangxx] + list(flags)).encode()).hexdigest()[:16]
    os.makedirs(cache_dir, exist_ok=True)
    pch = os.path.join(cache_dir, "torch-%s.pch" % key)
    failed = pch + ".failed"
    with open(os.path.join(cache_dir, "torch-%s.lock" % key), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(pch):
            return pch
        if os.path.exists(failed):
            return None
        header = os.path.join(cache_dir, "torch-%s.h" % key)
        with open(header, "w") as f:
            f.write("#include <torch/torch.h>\n")
        temporary = "%s.tmp-%d" % (pch, os.getpid())
        proc = subprocess.run([clangxx, "-x", "c++-header"] + list(flags) + [header, "-o", temporary],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if proc.returncode != 0:
            open(failed, "w").close()
            return None
        os.replace(temporary, pch)
        return pch


def syntax_check(clangxx, flags, path, cache_dir=None, extra=()):
    """Runs `clangxx -fsyntax-only extra flags path`; returns the CompletedProcess
    (stdout and stderr together)."""
    cmd = [clangxx, "-fsyntax-only"] + list(extra) + list(flags)
    pch = _pch(clangxx, flags, cache_dir) if cache_dir and _starts_with_torch(path) else None
    if pch:
        proc = subprocess.run(cmd + ["-include-pch", pch, path], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        if proc.returncode == 0:
            return proc
        # A failure is confirmed by a full parse: a PCH made stale by headers
        # changed since it was built must not fail a test.
    return subprocess.run(cmd + [path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

#!/usr/bin/env python3
"""expect_exit.py N cmd...: runs cmd, passes its stdout/stderr through, and fails
unless it exited with status N (lit's internal shell has no `$?`)."""
import subprocess
import sys

expected = int(sys.argv[1])
code = subprocess.call(sys.argv[2:])
if code != expected:
    sys.stderr.write("expected exit status %d, got %d: %s\n" % (expected, code, " ".join(sys.argv[2:])))
    sys.exit(1)

"""Issue 38, hole 15: the batch's exchange files with its worker processes.
usage: worker_files.py TOOL TMPDIR SOURCE MOCK_INCLUDE
Runs TOOL on SOURCE with TMPDIR as its temporary directory and the worker
paused after its analysis (TORCH_SYNCFREE_TESTING_PAUSE=worker:...), prints the
mode of every torch-syncfree file in TMPDIR while the worker is paused, stops the
run with SIGTERM, and prints what is left. The only wait is for the worker's own
"paused" line (or the run's end), never a clock."""
import os
import signal
import stat
import subprocess
import sys
import time

tool, tmp, source, mock = sys.argv[1:5]
env = dict(os.environ, TMPDIR=tmp, TORCH_SYNCFREE_TESTING_PAUSE="worker:" + os.path.join(tmp, "never"))
run = subprocess.Popen([tool, "--quiet", source, "--", "-std=c++17", "-isystem", mock], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def ours():
    return sorted(n for n in os.listdir(tmp) if n.startswith("torch-syncfree-"))


def paused():
    for name in ours():
        try:
            if b"paused at worker" in open(os.path.join(tmp, name), "rb").read():
                return True
        except OSError:
            pass
    return False


while not paused():
    if run.poll() is not None:
        raise SystemExit("the run ended before its worker paused (exit %d)" % run.returncode)
    time.sleep(0.05)  # a poll interval, not a limit
for name in ours():
    mode = stat.S_IMODE(os.lstat(os.path.join(tmp, name)).st_mode)
    print("file", name[len("torch-syncfree-"):].split("-")[0], oct(mode))
run.send_signal(signal.SIGTERM)
run.wait()
print("exit signal", -run.returncode if run.returncode < 0 else run.returncode)
print("left", len(ours()))

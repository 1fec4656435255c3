"""readonly.py on|off FILE: makes FILE unwritable, also for root (chattr +i), or
writable again. Used by unwritable.test; lit.cfg.py checks that it works here."""
import os
import subprocess
import sys

mode, path = sys.argv[1], sys.argv[2]
if os.geteuid() == 0:
    subprocess.check_call(["chattr", "+i" if mode == "on" else "-i", path])
else:
    os.chmod(path, 0o444 if mode == "on" else 0o644)
    os.chmod(os.path.dirname(os.path.abspath(path)), 0o555 if mode == "on" else 0o755)

#!/usr/bin/env python3
"""full_disk.py KIB DIR -- CMD...: runs CMD with a full file system mounted at DIR.

DIR gets a tmpfs of KIB KiB in a mount namespace of this process alone (so
nothing outside sees it and nothing needs unmounting). KIB 0: a tmpfs filled
with one file until no byte is free, so the first write of any file fails.
Needs root (CI runs as root); lit's 'full-disk' feature says whether it works.
Exit status: CMD's, or 125 when the file system cannot be set up."""
import ctypes
import os
import subprocess
import sys

CLONE_NEWNS = 0x00020000


def main():
    kib, directory = int(sys.argv[1]), sys.argv[2]
    command = sys.argv[sys.argv.index("--") + 1:]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNS) != 0:
        sys.stderr.write("full_disk.py: unshare: %s\n" % os.strerror(ctypes.get_errno()))
        return 125
    os.makedirs(directory, exist_ok=True)
    try:
        subprocess.check_call(["mount", "--make-rprivate", "/"])
        subprocess.check_call(["mount", "-t", "tmpfs", "-o", "size=%dk,mode=0700" % max(kib, 4),
                               "tmpfs", directory])
    except (OSError, subprocess.CalledProcessError) as error:
        sys.stderr.write("full_disk.py: mount: %s\n" % error)
        return 125
    if kib == 0:  # fill every block: the first write of any file fails
        filler = open(os.path.join(directory, "filler"), "wb", buffering=0)
        try:
            while True:
                filler.write(b"\0" * 4096)
        except OSError:
            pass
        finally:
            filler.close()
    if not command:
        return 0
    os.execvp(command[0], command)


if __name__ == "__main__":
    sys.exit(main())

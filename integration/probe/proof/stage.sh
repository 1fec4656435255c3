#!/bin/bash
# Stages the probe's GPU proof into integration/staged-P (git-ignored; carried to
# the device with `carry: ["integration/staged-P"]`): the harness header, every
# harness program (integration/programs/*.cpp), the probe's example loop, and the
# proof's CMake project, run script and dladdr bench. The probe itself is built
# from probe/ (tracked) through PROBE_DIR.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
dest=$root/integration/staged-P
rm -rf "$dest"
mkdir -p "$dest/bench"
cp "$root/integration/syncprobe.h" "$root"/integration/programs/*.cpp \
   "$root/probe/example/explicit_loop.cpp" "$here/CMakeLists.txt" "$here/run.sh" "$dest/"
cp "$here/bench/dladdr_cost.cpp" "$dest/bench/"
echo "staged $(ls "$dest"/*.cpp | wc -l) programs into $dest"

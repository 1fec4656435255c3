#!/bin/bash
# Builds and runs the probe proof; everything it reports goes under $OUT.
set -u
P=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')
cd "$(dirname "$0")"
mkdir -p $OUT/p
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$P" -DPROBE_DIR=$PWD/../../probe > $OUT/p/build.log 2>&1 || { tail -30 $OUT/p/build.log; exit 1; }
cmake --build build -j 16 >> $OUT/p/build.log 2>&1 || { tail -40 $OUT/p/build.log; exit 1; }
# 10 steps each, timing-only (the harness leaves sync debug mode to the probe).
export SYNCPROBE_TIMING_ONLY=1 SYNCPROBE_WARMUP=0 SYNCPROBE_PROBE_STEPS=0 SYNCPROBE_TIMED_STEPS=0 SYNCPROBE_WALL_STEPS=10
for b in build/*; do
  [ -x "$b" ] && [ -f "$b" ] || continue
  n=$(basename $b)
  case $n in *_noprobe) continue ;; esac
  TORCH_SYNCFREE_PROFILE=$OUT/p/$n.profile.json ./$b > $OUT/p/$n.on.txt 2>&1; echo "$n on rc=$?"
  objcopy --only-keep-debug $b $OUT/p/$n.debug
done
# Overhead: wall ms/step without the probe, with it off, with it on (50 steps, 3 rounds).
export SYNCPROBE_WALL_STEPS=50
for n in item_logging; do
  for r in 1 2 3; do
    a=$(./build/${n}_noprobe | awk '/wall_ms_per_step/{print $3}')
    b=$(./build/$n | awk '/wall_ms_per_step/{print $3}')
    c=$(TORCH_SYNCFREE_PROFILE=/tmp/x.json ./build/$n | awk '/wall_ms_per_step/{print $3}')
    echo "$n $r noprobe=$a off=$b on=$c"
  done
done > $OUT/p/overhead.txt 2>&1
cat $OUT/p/overhead.txt
sed -i "s#$PWD/build/#DEVICE_BUILD/#g" $OUT/p/*.profile.json
ls -la $OUT/p | head -40
cd $OUT && tar czf probe.tgz p && rm -rf p

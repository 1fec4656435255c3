#!/bin/bash
# The probe's GPU proof (issue 26), run on the device from the staged tree
# (integration/staged-P, made by stage.sh). Phases, in the order given:
#   build     configure and build every program with the probe (-j16)
#   profile   each program, 10 steps (indices 0-9) with TORCH_SYNCFREE_PROFILE;
#             keeps the profile, the run's output and the debug info
#   interposed  a few programs' profiles again with TORCH_SYNCFREE_CUPTI=off
#   oracle    the harness's own sync-debug-mode oracle over the same 10 steps
#             (probe linked, off), 8 programs at a time (counts only)
#   overhead  wall ms/step of OVERHEAD_PROGRAMS: without the probe (two identical
#             builds), probe linked and off, probe on; REPEATS interleaved rounds,
#             the order rotating each round, pinned to cores 2-5
#   bench     what one dladdr() costs (the probe's per-frame lookup)
#   pack      $OUT/p.tgz (profiles, logs) and $OUT/dbg-*.tgz (debug info)
# e.g. bash integration/staged-P/run.sh build profile oracle pack
set -u
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/probe-out}
P=$OUT/p
# The build lives outside the staged tree: carrying integration/staged-P to a warm
# device replaces that folder, and a build inside it would be lost between calls.
B=${BUILD_DIR:-/tmp/probe-proof-build}
mkdir -p "$P"
log() { echo "[$(date +%T)] $*" | tee -a "$P/phases.log"; }
# Cores 2-5, as the harness pins its timed runs (when the machine has 8 or more).
pin() { if [ "$(nproc)" -ge 8 ] && command -v taskset >/dev/null; then taskset -c 2-5 "$@"; else "$@"; fi; }
# Cheap programs first: if the command runs out of time, the costly ones are lost.
HEAVY="many_small_kernels training_epochs inference_loop vector_batches_small vector_batches_large \
eval_metrics_interval inference_early_exit mlp_train_small mlp_train_large class_batches data_loader_train"
programs() {
  local all=$(ls *.cpp | sed 's/\.cpp$//')
  for n in $all; do case " $HEAVY " in *" $n "*) ;; *) echo $n ;; esac; done
  for n in $HEAVY; do [ -f $n.cpp ] && echo $n; done
  echo explicit_sync_tailcall
}

# The overhead phase's programs (built without the probe too) and rounds.
OVERHEAD_PROGRAMS=${OVERHEAD_PROGRAMS:-"item_logging deferred_metrics tensor_factory"}
REPEATS=${REPEATS:-10}

phase_build() {
  local prefix=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')
  log "build: configure"
  cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
    -DPROBE_DIR=$PWD/../../probe -DOVERHEAD_PROGRAMS="${OVERHEAD_PROGRAMS// /;}" > $P/build.log 2>&1 || { tail -30 $P/build.log; exit 1; }
  log "build: compile"
  cmake --build $B -j 16 >> $P/build.log 2>&1 || { tail -40 $P/build.log; exit 1; }
  log "build: done"
}

phase_profile() {
  # Timing-only harness runs: the harness leaves sync debug mode to the probe.
  # WARMUP=0: the profile's 10 steps are step indices 0-9.
  for n in $(programs); do
    local s=$(date +%s.%N)
    SYNCPROBE_TIMING_ONLY=1 SYNCPROBE_WARMUP=0 SYNCPROBE_PROBE_STEPS=0 SYNCPROBE_TIMED_STEPS=0 \
      SYNCPROBE_WALL_STEPS=10 TORCH_SYNCFREE_PROFILE=$P/$n.profile.json \
      timeout 150 $B/$n > $P/$n.on.txt 2>&1
    local rc=$?
    log "profile $n rc=$rc $(python3 -c "print('%.1f s' % ($(date +%s.%N) - $s))")"
    objcopy --only-keep-debug $B/$n $P/$n.debug
  done
  sed -i "s#$B/#DEVICE_BUILD/#g" $P/*.profile.json
}

phase_interposed() {
  # The same profile with CUPTI switched off (the interposers time the waits), for
  # INTERPOSED_PROGRAMS: both sources must count the same waiting calls.
  for n in ${INTERPOSED_PROGRAMS:-explicit_loop explicit_sync item_logging inference_loop}; do
    TORCH_SYNCFREE_CUPTI=off SYNCPROBE_TIMING_ONLY=1 SYNCPROBE_WARMUP=0 SYNCPROBE_PROBE_STEPS=0 \
      SYNCPROBE_TIMED_STEPS=0 SYNCPROBE_WALL_STEPS=10 TORCH_SYNCFREE_PROFILE=$P/$n.interposed.json \
      timeout 150 $B/$n > $P/$n.interposed.txt 2>&1
    log "interposed $n rc=$?"
  done
  sed -i "s#$B/#DEVICE_BUILD/#g" $P/*.interposed.json
  python3 - $P <<'PY' | tee -a $P/phases.log
import collections, json, os, sys
d = sys.argv[1]
for f in sorted(os.listdir(d)):
    if not f.endswith(".interposed.json"):
        continue
    n = f[:-len(".interposed.json")]
    rows = []
    for label, path in (("cupti", "%s/%s.profile.json" % (d, n)), ("interposed", "%s/%s" % (d, f))):
        p = json.load(open(path))
        c = collections.Counter()
        w = collections.Counter()
        for s in p["syncs"]:
            c[s["kind"]] += s["count"]; w[s["kind"]] += s["wait_ms"]
        rows.append("%s(waits_from=%s) %s" % (label, p.get("waits_from"), " ".join(
            "%s=%d/%.2fms" % (k, c[k], w[k]) for k in sorted(c))))
    print(n, "|", " | ".join(rows))
PY
}

phase_oracle() {
  # The harness's oracle 1 (sync debug mode, its own counting handler) over step
  # indices 0-9, the profile's steps; the probe is linked but off.
  log "oracle: start"
  programs | grep -v -e explicit_loop -e _tailcall | xargs -P 8 -I{} sh -c \
    'SYNCPROBE_WARMUP=0 SYNCPROBE_PROBE_STEPS=10 SYNCPROBE_TIMED_STEPS=0 SYNCPROBE_WALL_STEPS=1 \
     timeout 120 '$B'/{} > '$P'/{}.oracle.txt 2>&1; echo "oracle {} rc=$?"' >> $P/phases.log
  grep -H debug_syncs_per_step $P/*.oracle.txt | sed 's#.*/##' | tee -a $P/phases.log
  log "oracle: done"
}

phase_overhead() {
  # Steps per wall sample: the harness's own (>= 300 ms of the program without the
  # probe, report.json's wall_steps). "On" runs fewer steps where a slow record
  # would make a sample long (the per-step mean is what is compared); with dladdr
  # in the hot path (before dada92b) a record cost 6.5-10.5 ms and "on" ran 40, 5, 40.
  declare -A off_steps=([item_logging]=4800 [deferred_metrics]=148 [tensor_factory]=13453 [mlp_train_small]=13)
  declare -A on_steps=([item_logging]=1200 [deferred_metrics]=148 [tensor_factory]=3000 [mlp_train_small]=13)
  local variants=(noprobe off on noprobe_b)
  log "overhead: $OVERHEAD_PROGRAMS, $REPEATS rounds, taskset $(command -v taskset || echo none)"
  for r in $(seq 0 $((REPEATS - 1))); do
    for n in $OVERHEAD_PROGRAMS; do
      for i in 0 1 2 3; do
        local v=${variants[$(((i + r) % 4))]} exe=$B/$n steps=${off_steps[$n]} env=""
        case $v in
          noprobe|noprobe_b) exe=$B/${n}_$v ;;
          on) steps=${on_steps[$n]}; env="TORCH_SYNCFREE_PROFILE=/tmp/ovh-$n.json" ;;
        esac
        local ms=$(pin env $env SYNCPROBE_TIMING_ONLY=1 SYNCPROBE_WARMUP=3 SYNCPROBE_PROBE_STEPS=0 \
          SYNCPROBE_TIMED_STEPS=0 SYNCPROBE_WALL_STEPS=$steps $exe 2>/dev/null |
          awk '/wall_ms_per_step/{print $3}')
        echo "$n $v $r $steps ${ms:-FAILED}" >> $P/overhead.txt
      done
    done
  done
  for n in $OVERHEAD_PROGRAMS; do cp /tmp/ovh-$n.json $P/$n.overhead-on.profile.json 2>/dev/null; done
  log "overhead: done"
  python3 - "$P/overhead.txt" <<'EOF' | tee -a $P/phases.log
import sys, collections
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    n, v, r, steps, ms = line.split()
    if ms != "FAILED":
        runs[(n, v)].append(float(ms))
for (n, v), xs in sorted(runs.items()):
    xs.sort(); med = xs[len(xs) // 2]
    print("%-18s %-10s n=%2d median %9.4f ms/step spread %5.1f%%" % (n, v, len(xs), med, 100 * (xs[-1] - xs[0]) / med))
EOF
}

phase_bench() {
  pin $B/dladdr_cost > $P/dladdr_cost.txt 2>&1
  cat $P/dladdr_cost.txt
}

phase_pack() {
  ls -la $P > $P/listing.txt
  (cd $OUT && tar czf p.tgz --exclude='*.debug' p)
  local i=0
  for group in "[a-e]" "[f-l]" "[m-z]"; do
    i=$((i + 1))
    (cd $OUT && ls p/$group*.debug >/dev/null 2>&1 && tar czf dbg-$i.tgz p/$group*.debug)
  done
  rm -rf $P
  ls -la $OUT
}

for phase in "$@"; do
  phase_$phase
done

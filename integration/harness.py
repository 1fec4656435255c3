#!/usr/bin/env python3
"""The integration harness: proves that torch-syncfree's fixes remove syncs and keep results.

Stages (see docs/integration.md):
  prepare  on any machine with the tool: rewrite a copy of every program in
           integration/programs with `torch-syncfree --fix`, keeping the original, and
           stage both (with hand-written twins, syncprobe.h and a CMake project) as a
           self-contained tree. The GPU machine needs no clang.
  run      on a machine with LibTorch (CUDA for the sync oracles): build every variant with
           CMake find_package(Torch), run them, compare their RESULT lines, and write
           report.md / report.json / report.png.
  cpu      prepare + run against Debian's LibTorch (CPU): what CI runs. It proves the fixes
           compile and keep results; the GPU mode proves they remove syncs.
"""
import argparse
import concurrent.futures
import json
import math
import itertools
import os
import shlex
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RTOL, ATOL = 1e-5, 1e-6  # outputs equal when |a-b| <= ATOL + RTOL*|b|; NaN never passes


def torch_header_flags(which):
    tree = os.path.join(ROOT, "build", "third_party", "libtorch-2.11", "include")
    if which == "2.11" and os.path.exists(tree):
        return ["-isystem", tree, "-isystem", os.path.join(tree, "torch", "csrc", "api", "include")]
    if which == "2.11":
        sys.exit("harness: LibTorch 2.11 headers not found at %s (run the lit suite once to "
                 "extract them, or use --headers 1.13)" % tree)
    return ["-isystem", "/usr/include/torch/csrc/api/include"]


def prepare(args):
    tool = os.path.abspath(args.tool)
    out = os.path.abspath(args.out)
    if os.path.exists(out) and not args.only:
        shutil.rmtree(out)
    os.makedirs(out, exist_ok=True)
    shutil.copy(os.path.join(HERE, "syncprobe.h"), out)
    for header in os.listdir(os.path.join(HERE, "twins")):  # code the twins share
        if header.endswith(".h"):
            shutil.copy(os.path.join(HERE, "twins", header), out)
    shutil.copy(os.path.join(HERE, "staged.cmake"), os.path.join(out, "CMakeLists.txt"))
    if os.path.exists(os.path.join(out, "probe")):
        shutil.rmtree(os.path.join(out, "probe"))
    shutil.copytree(os.path.join(HERE, "probe"), os.path.join(out, "probe"))
    flags = ["-std=c++17", "-isystem", HERE] + torch_header_flags(args.headers)
    programs = sorted(p[:-4] for p in os.listdir(os.path.join(HERE, "programs")) if p.endswith(".cpp"))
    programs = [name for name in programs if not args.only or name in args.only]

    cache = os.path.join(out, ".tool-cache")

    def rewrite(name):
        dest = os.path.join(out, name)
        if os.path.exists(dest):
            shutil.rmtree(dest)
        os.makedirs(dest)
        source = os.path.join(HERE, "programs", name + ".cpp")
        shutil.copy(source, os.path.join(dest, "original.cpp"))
        fixed = os.path.join(dest, "fixed.cpp")
        shutil.copy(source, fixed)
        # `// harness-tool-args: --config=...` in a program: the options a user would
        # opt in to (the report marks those programs: their fix is not the default).
        tool_args = []
        for line in open(source):
            if line.startswith("// harness-tool-args:"):
                tool_args = shlex.split(line.split(":", 1)[1])
        # One cache directory for every program: the first builds the shared
        # PCH of <torch/torch.h> (via "syncprobe.h" on the -isystem path), the
        # others load it instead of parsing the headers again.
        proc = subprocess.run([tool, "--fix", "--format=json", "--cache-dir=" + cache] + tool_args +
                              [fixed, "--"] + flags,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if proc.returncode not in (0, 1):
            return name, None, "torch-syncfree failed on %s (exit %d):\n%s" % (name, proc.returncode, proc.stderr)
        findings = json.loads(proc.stdout)
        for f in findings:
            f["file"] = os.path.basename(f["file"])
        with open(os.path.join(dest, "findings.json"), "w") as f:
            json.dump(findings, f, indent=2)
        with open(os.path.join(dest, "tool-args.json"), "w") as f:
            json.dump(tool_args, f)
        twin = os.path.join(HERE, "twins", name + ".cpp")
        if os.path.exists(twin):
            shutil.copy(twin, os.path.join(dest, "twin.cpp"))
        return name, findings, None

    # Each program is its own translation unit: rewrite them in parallel.
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        for name, findings, error in pool.map(rewrite, programs):
            if error:
                sys.exit("harness: " + error)
            print("prepared %-22s %d findings, %d fixable" %
                  (name, len(findings), sum(f["fixable"] for f in findings)))
    print("staged tree: %s" % out)


def parse_output(text):
    results, probe = {}, {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "RESULT":
            results[parts[1]] = float(parts[2])
        elif len(parts) == 3 and parts[0] == "SYNCPROBE":
            probe[parts[1]] = parts[2]
    return results, probe


def outputs_equal(a, b):
    if set(a) != set(b) or not a:
        return False, "different or missing RESULT keys"
    for key in a:
        x, y = a[key], b[key]
        if math.isnan(x) or math.isnan(y) or abs(x - y) > ATOL + RTOL * abs(y):
            return False, "%s: %r vs %r" % (key, x, y)
    return True, ""


def run(args):
    staged = os.path.abspath(args.staged)
    build = os.path.abspath(args.build)
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    prefix = args.torch_prefix
    if not prefix and args.mode == "gpu":
        prefix = subprocess.check_output(
            [sys.executable, "-c", "import torch; print(torch.utils.cmake_prefix_path)"], text=True).strip()
    # CPU mode checks results, not speed: -O0 (with NDEBUG, as in Release)
    # compiles each program about 1.5x faster (8.2 s vs 12.0 s with the PCH).
    build_type = (["-DCMAKE_BUILD_TYPE=Release"] if args.mode == "gpu" else
                  ["-DCMAKE_BUILD_TYPE=Debug", "-DCMAKE_CXX_FLAGS_DEBUG=-O0 -DNDEBUG"])
    configure = ["cmake", "-S", staged, "-B", build, "-G", "Ninja"] + build_type + [
                 "-DSYNCPROBE_CUDA=" + ("ON" if args.mode == "gpu" else "OFF"),
                 "-DSYNCPROBE_SKIP_IDENTICAL=" + ("ON" if args.mode == "cpu" else "OFF")]
    # CPU mode builds with clang++-22 where it is installed (CI's machine; the
    # GPU machine has no clang): 2.0 s instead of g++ 12's 7.5 s per program
    # and 15 s instead of 40 s for the PCH, measured on the same staged tree.
    clangxx = shutil.which("clang++-22") if args.mode == "cpu" else None
    if clangxx:
        configure.append("-DCMAKE_CXX_COMPILER=" + clangxx)
        # and links with lld where it is installed: 0.22 s instead of 1.23 s a program.
        if shutil.which("ld.lld"):
            configure.append("-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld")
    if prefix:
        configure.append("-DCMAKE_PREFIX_PATH=" + prefix)
    if args.mode == "gpu" and os.path.exists("/usr/local/cuda/bin/nvcc"):
        configure.append("-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc")
    log = open(os.path.join(out, "build.log"), "w")
    for cmd in (configure, ["cmake", "--build", build, "-j", str(args.jobs)]):
        if subprocess.call(cmd, stdout=log, stderr=subprocess.STDOUT):
            log.close()
            sys.stdout.write(open(os.path.join(out, "build.log")).read()[-6000:])
            sys.exit("harness: build failed: %s" % " ".join(cmd))
    log.close()

    env = dict(os.environ)
    if args.mode == "cpu":  # fewer steps: CPU mode checks results, not speed
        env.update(SYNCPROBE_WARMUP="1", SYNCPROBE_PROBE_STEPS="1", SYNCPROBE_TIMED_STEPS="2",
                   SYNCPROBE_WALL_STEPS="2")
    names = sorted(d for d in os.listdir(staged) if os.path.exists(os.path.join(staged, d, "original.cpp")))
    if args.only:
        names = [n for n in names if n in args.only]
    # One JSON file per program under out/programs/: `run --only a b` re-measures those
    # programs and the report is recomputed from every program measured into `out`
    # (the device allows 10 minutes per command: a full report takes two).
    rows_dir = os.path.join(out, "programs")
    if not args.only and os.path.exists(rows_dir):
        shutil.rmtree(rows_dir)
    os.makedirs(rows_dir, exist_ok=True)
    for name in names:
        row, raw = measure_program(args, staged, build, env, name)
        with open(os.path.join(rows_dir, name + ".json"), "w") as f:
            json.dump(row, f, indent=2)
        with open(os.path.join(rows_dir, name + ".out.txt"), "w") as f:
            for key in sorted(raw):
                f.write("==== %s\n%s\n" % (key, raw[key]))

    # The sync reference table, measured here by the harness itself (GPU only).
    table = os.path.join(build, "sync_table")
    table_failures = []
    if args.mode == "gpu" and os.path.exists(table) and (args.sync_table or not args.only):
        proc = subprocess.run([table], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=args.timeout)
        with open(os.path.join(out, "sync-table.md"), "w") as f:
            f.write("# Which LibTorch calls make the host wait (measured by integration/probe/sync_table.cpp)\n\n")
            f.write(proc.stdout)
        if proc.returncode:
            table_failures.append("sync_table exited %d" % proc.returncode)
    summarize(args, out, table_failures)


VARIANTS = ("original", "fixed", "twin")


def measure_program(args, staged, build, env, name):
    """Builds nothing: runs the variants of one program `repeats` times, interleaved, and
    returns its report row (with the failures it shows) and the first run's output."""
    findings = json.load(open(os.path.join(staged, name, "findings.json")))
    row = {"program": name, "findings": len(findings),
           "fixable": sum(f["fixable"] for f in findings),
           "checks": sorted(set(f["check"] for f in findings)),
           "remaining": [("%s:%d %s (%s dependency)" % (f["file"], f["line"], f["check"], f["dependency"]))
                         for f in findings if not f["fixable"]],
           "failures": []}
    args_file = os.path.join(staged, name, "tool-args.json")
    row["tool_args"] = json.load(open(args_file)) if os.path.exists(args_file) else []
    # A rewrite that keeps a wait on purpose carries the tool's marker on it (one copy
    # before the loop, one copy for both reads, one read after the loop): it must
    # sync less, not never.
    fixed_text = open(os.path.join(staged, name, "fixed.cpp")).read()
    row["kept_waits"] = fixed_text.count("/* torch-syncfree: ") + fixed_text.count("): torch-syncfree, ")
    raw = {}
    # Each wall-time sample must last >= MIN_SAMPLE_MS: a calibration run of the
    # original sets the step count, the same for every variant (same results).
    # Every timed process runs on the same few cores (no migrations between sockets or
    # cores with other clocks between the runs being compared).
    cores = measurement_cores() if args.mode == "gpu" else None
    pin = (lambda: os.sched_setaffinity(0, cores)) if cores else None
    run_env = dict(env)
    if args.mode == "gpu":
        exe = os.path.join(build, "%s_original" % name)
        try:
            calib = subprocess.run([exe], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                   env=dict(env, SYNCPROBE_TIMING_ONLY="1"), timeout=args.timeout,
                                   preexec_fn=pin)
            per_step = float(parse_output(calib.stdout)[1].get("wall_ms_per_step", "nan"))
            steps = max(10, int(math.ceil(MIN_SAMPLE_MS / per_step))) if per_step > 0 else 50
        except (subprocess.TimeoutExpired, ValueError):
            steps = 50
        run_env["SYNCPROBE_WALL_STEPS"] = str(steps)
        # The CUDA-event phase: 20 steps, or fewer long ones (>= 10 steps and MIN_SAMPLE_MS).
        run_env["SYNCPROBE_TIMED_STEPS"] = str(min(20, max(10, steps)))
        row["wall_steps"] = steps
    def executable(variant):
        exe = os.path.join(build, "%s_%s" % (name, variant))
        # CPU mode does not build a rewrite identical to the original (staged.cmake).
        if variant == "fixed" and not os.path.exists(exe) and args.mode == "cpu":
            with open(os.path.join(staged, name, "original.cpp")) as a, \
                    open(os.path.join(staged, name, "fixed.cpp")) as b:
                if a.read() == b.read():
                    return os.path.join(build, "%s_original" % name)
        return exe

    present = [v for v in VARIANTS if os.path.exists(executable(v))]
    samples = {}  # variant -> {"wall_ms_per_step": [...], "step_ms": [...]}
    for repeat in range(args.repeats):
        # Interleaved and rotated (repeat r starts with the r-th variant): the GPU's clocks
        # and the host's state drift over a run, and whichever variant runs first after
        # another program measured slower in every round (an order bias of up to 1.27x
        # between identical builds). The first run of each variant also runs the oracles
        # and the profiler; the others only time.
        order = present[repeat % len(present):] + present[:repeat % len(present)] if present else []
        for variant in order:
            if repeat and variant not in row:
                continue
            exe = executable(variant)
            env_r = dict(run_env, SYNCPROBE_TIMING_ONLY="1") if repeat else run_env
            try:
                proc = subprocess.run([exe], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                      env=env_r, timeout=args.timeout, preexec_fn=pin)
                text, code = proc.stdout, proc.returncode
            except subprocess.TimeoutExpired:
                text, code = "timeout", -1
            if code != 0:
                row["failures"].append("%s_%s exited %d: %s" % (name, variant, code, text[-800:]))
                continue
            results, probe = parse_output(text)
            if repeat == 0:
                raw["%s_%s" % (name, variant)] = text
                row[variant] = {"results": results, "probe": probe}
            for key in ("wall_ms_per_step", "step_ms"):
                if key in probe:
                    samples.setdefault(variant, {}).setdefault(key, []).append(float(probe[key]))
    for variant, by_key in samples.items():
        for key, values in by_key.items():
            values = sorted(values)
            median = values[len(values) // 2]
            row[variant]["probe"][key] = "%.4f" % median
            row[variant][key + "_runs"] = values
            row[variant][key + "_spread"] = (values[-1] - values[0]) / median if median > 0 else float("nan")
        if "wall_ms_per_step_spread" in row[variant]:  # the name earlier reports used
            row[variant]["wall_spread"] = row[variant]["wall_ms_per_step_spread"]
    if "original" in row and "fixed" in row:
        equal, why = outputs_equal(row["original"]["results"], row["fixed"]["results"])
        row["outputs_equal"], row["difference"] = equal, why
        if not equal:
            row["failures"].append("%s: outputs differ: %s" % (name, why))
        if args.mode == "gpu":
            row["failures"] += sync_expectation_failures(row)
    if "original" in row and "twin" in row:
        # A twin is the same program written sync-free by hand: same results.
        equal, why = outputs_equal(row["original"]["results"], row["twin"]["results"])
        row["twin_outputs_equal"] = equal
        if not equal:
            row["failures"].append("%s: the twin's outputs differ from the original's: %s" % (name, why))
    return row, raw


def summarize(args, out, extra_failures=()):
    """The report from every program measured into `out`: the noise band, regressions,
    report.md/json/png."""
    rows_dir = os.path.join(out, "programs")
    rows = [json.load(open(os.path.join(rows_dir, f))) for f in sorted(os.listdir(rows_dir)) if f.endswith(".json")]
    failures = [f for r in rows for f in r.get("failures", [])] + list(extra_failures)
    # The noise band: original/rewritten wall ratios of programs the tool did not
    # change (their two builds are the same code). A rewrite is a regression only
    # when its ratio falls below that band.
    # GPU mode only: CPU mode runs a few steps to compare results, its times mean nothing.
    unchanged = [ratio(r) for r in rows
                 if args.mode == "gpu" and r.get("fixable") == 0 and ratio(r) == ratio(r)]
    band = (min(unchanged), max(unchanged)) if unchanged else (float("nan"), float("nan"))
    # A regression: the median ratio is below the band AND the rewrite's runs are slower
    # than the original's by a one-sided exact Mann-Whitney test at 5 % (with spreads of
    # 20-60 % per variant, a median ratio of 5 runs falls below the band by chance).
    # The test cannot reach p < 0.05 with 3 runs a side (its smallest p is 1/C(6,3) =
    # 0.05): there a ratio below the band is a regression on its own, and the report
    # says the test could not decide.
    for r in rows:
        rr = ratio(r)
        p = slower_p_value(r)
        floor = smallest_p_value(r)
        r["slower_p"] = p
        r["smallest_p"] = floor
        decidable = floor < SIGNIFICANCE
        r["test_undecidable"] = bool(r.get("fixable") and not decidable)
        below = bool(r.get("fixable") and rr == rr and unchanged and rr < band[0])
        r["regression"] = below and (p < SIGNIFICANCE or not decidable)
        if r["regression"]:
            evidence = ("p = %.3f" % p if decidable else
                        "%s; the test cannot decide at these repeats, smallest p %.3f" % (
                            run_counts(r), floor))
            what = ("%s: the rewrite is slower than the unchanged programs' noise band (%.2fx < %.2fx, "
                    "%s)" % (r["program"], rr, band[0], evidence))
            if r.get("tool_args"):  # an opt-in fix: reported, not a failure of the defaults
                r["opt_in_regression"] = what + " with opt-in options " + " ".join(r["tool_args"])
            else:
                failures.append(what)
    report = {"mode": args.mode, "repeats": args.repeats, "noise_band": band,
              "tolerance": {"rtol": RTOL, "atol": ATOL}, "programs": rows, "failures": failures}
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump(report, f, indent=2)
    with open(os.path.join(out, "outputs.txt"), "w") as f:
        for r in rows:
            path = os.path.join(rows_dir, r["program"] + ".out.txt")
            if os.path.exists(path):
                f.write(open(path).read())
    write_markdown(report, os.path.join(out, "report.md"))
    write_chart(report, os.path.join(out, "report.png"))
    sys.stdout.write(open(os.path.join(out, "report.md")).read())
    if failures:
        print("\nFAILURES:\n  " + "\n  ".join(failures))
        sys.exit(1)


# Fixes that move or merge a sync rather than remove it: a deferred accumulation still
# reads its total once after the loop, coalesced reads copy once, an emptiness test
# rewritten to any() still reads one bool.
SYNC_REDUCING_CHECKS = {"torch-sync-deferred-accumulate": "fewer",
                        "torch-sync-coalesce": "fewer",
                        "torch-sync-dynamic-shape": "not more"}


MIN_SAMPLE_MS = 300


def measurement_cores():
    """Four cores other than the first two (where the system's interrupts tend to land),
    when the machine has at least eight; else None (no pinning)."""
    try:
        available = sorted(os.sched_getaffinity(0))
    except AttributeError:
        return None
    return set(available[2:6]) if len(available) >= 8 else None


SIGNIFICANCE = 0.05


def run_counts(row):
    """"n = 3 + 3": the runs a side the test had."""
    runs = lambda variant: len(row.get(variant, {}).get("wall_ms_per_step_runs") or [])
    return "n = %d + %d" % (runs("original"), runs("fixed"))


def smallest_p_value(row):
    """The smallest p-value the exact one-sided test can give with this row's runs:
    1 / C(n_original + n_fixed, n_fixed) (every rewrite run slower than every original one)."""
    try:
        n_before = len(row["original"]["wall_ms_per_step_runs"])
        n_after = len(row["fixed"]["wall_ms_per_step_runs"])
    except KeyError:
        return 1.0
    if not n_before or not n_after:
        return 1.0
    return 1.0 / math.comb(n_before + n_after, n_after)


def slower_p_value(row):
    """One-sided exact Mann-Whitney p-value that the rewrite's wall times are larger than
    the original's (every split of the pooled runs counted; 1.0 without runs)."""
    try:
        before = row["original"]["wall_ms_per_step_runs"]
        after = row["fixed"]["wall_ms_per_step_runs"]
    except KeyError:
        return 1.0
    if not before or not after:
        return 1.0

    # The exact permutation distribution of the rank sum, by dynamic programming
    # over the pooled runs (midranks for ties, doubled to stay integers): every
    # split of the pooled runs counted, in O(n^2 * sum) instead of enumerating
    # C(n1 + n2, n2) splits (155 million at 15 repeats a side).
    pooled = sorted(before + after)
    doubled_rank = {}
    i = 0
    while i < len(pooled):
        j = i
        while j < len(pooled) and pooled[j] == pooled[i]:
            j += 1
        doubled_rank[pooled[i]] = i + j + 1  # 2 * the midrank of positions i..j-1 (1-based)
        i = j
    observed = sum(doubled_rank[y] for y in after)
    m = len(after)
    ways = [dict() for _ in range(m + 1)]  # ways[k][sum of k doubled ranks] = splits
    ways[0][0] = 1
    for value in pooled:
        r = doubled_rank[value]
        for k in range(min(m, len(pooled)), 0, -1):
            for total, count in ways[k - 1].items():
                ways[k][total + r] = ways[k].get(total + r, 0) + count
    total = sum(ways[m].values())
    return sum(count for s, count in ways[m].items() if s >= observed) / total


def ratio(row):
    """original / rewritten wall time per step (> 1: the rewrite is faster)."""
    try:
        return float(row["original"]["probe"]["wall_ms_per_step"]) / float(row["fixed"]["probe"]["wall_ms_per_step"])
    except (KeyError, ValueError, ZeroDivisionError):
        return float("nan")


def sync_expectation_failures(row):
    """What the sync counts of a program must show: 0 after when every finding was fixed
    by a removing fix; fewer (or not more) when a reducing fix was applied; never more
    syncs after than before."""
    name = row["program"]
    before = float(row["original"]["probe"].get("debug_syncs_per_step", "nan"))
    after = float(row["fixed"]["probe"].get("debug_syncs_per_step", "nan"))
    waited_after = row["fixed"]["probe"].get("host_waited_steps", "?")
    fully_fixed = row["findings"] > 0 and row["fixable"] == row["findings"]
    reducing = [SYNC_REDUCING_CHECKS[c] for c in row["checks"] if c in SYNC_REDUCING_CHECKS]
    if row.get("kept_waits"):
        reducing.append("fewer")
    row["expect_sync_free"] = fully_fixed and not reducing
    failures = []
    if after > before:
        failures.append("%s: the rewritten program syncs more (debug %.2f -> %.2f/step)" % (name, before, after))
    if row["expect_sync_free"] and (after != 0 or not waited_after.startswith("0/")):
        failures.append("%s: every finding was fixed but the rewritten program still syncs "
                        "(debug %.2f/step, host waited %s)" % (name, after, waited_after))
    if fully_fixed and "fewer" in reducing and not after < before:
        failures.append("%s: a sync-reducing fix was applied but syncs did not drop (debug %.2f -> %.2f/step)"
                        % (name, before, after))
    return failures


def rejudge(args):
    """Re-applies the sync expectations to a committed report's measurements and
    rewrites report.md/json/png (the measurements themselves are not touched)."""
    path = os.path.join(args.report, "report.json")
    report = json.load(open(path))
    kept = [f for f in report["failures"]
            if "still syncs" not in f and "syncs more" not in f and "did not drop" not in f]
    if report["mode"] == "gpu":
        for row in report["programs"]:
            if "original" in row and "fixed" in row:
                kept += sync_expectation_failures(row)
    report["failures"] = kept
    with open(path, "w") as f:
        json.dump(report, f, indent=2)
    write_markdown(report, os.path.join(args.report, "report.md"))
    write_chart(report, os.path.join(args.report, "report.png"))
    print("\n".join(kept) if kept else "no failures")
    return 1 if kept else 0


def fmt_probe(row, variant, key):
    return row.get(variant, {}).get("probe", {}).get(key, "-")


def write_markdown(report, path):
    gpu = report["mode"] == "gpu"
    lines = ["# torch-syncfree integration report (%s mode)" % report["mode"], "",
             "Outputs equal: every RESULT within atol %g + rtol %g; NaN never passes." %
             (report["tolerance"]["atol"], report["tolerance"]["rtol"]),
             "Wall ms/step: wall-clock time of N steps with one synchronization at the end "
             "(throughput; N chosen per program so that one sample lasts >= %d ms), median of %d "
             "interleaved runs of each variant (the order rotates each round), spread = (max - min) / median. "
             "GPU ms/step: CUDA events around one step, median of 10-20 steps per run, median of the runs "
             "(spread likewise). Kernels/step: CUDA kernels LibTorch's profiler records in one step. "
             "A twin's outputs must equal the original's too." % (MIN_SAMPLE_MS, report.get("repeats", 1))]
    band = report.get("noise_band")
    if band and band[0] == band[0]:
        lines.append("Noise band (original/rewritten wall ratio of the programs the tool did not change): "
                     "%.2fx - %.2fx. A rewrite is a regression when its ratio is below the band and its "
                     "runs are slower than the original's (one-sided exact Mann-Whitney test, p < 0.05)."
                     % tuple(band))
        undecidable = [r["program"] for r in report["programs"] if r.get("test_undecidable")]
        if undecidable:
            lines.append("The test cannot reach p < 0.05 with the runs of %s (its smallest p is "
                         "1/C(n1 + n2, n2) = %.3f at %d repeats): there a ratio below the band counts "
                         "as a regression by itself. Measure with --repeats 5 or more." % (
                             ", ".join(undecidable),
                             min(r["smallest_p"] for r in report["programs"] if r.get("test_undecidable")),
                             report.get("repeats", 1)))
    lines.append("")
    if gpu:
        lines += ["| program | findings (fixed) | syncs/step, debug mode: before → after | host waited (steps): before → after "
                  "| outputs equal | wall ms/step: before → after (spread) | speed-up | GPU ms/step: before → after "
                  "| kernels/step: before → after | sync-free twin: wall, GPU ms/step, kernels | rewrite vs twin (GPU: median; best run) |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
    else:
        lines += ["| program | findings (fixed) | outputs equal | wall ms/step: before → after |", "|---|---|---|---|"]
    for row in report["programs"]:
        before_ms = fmt_probe(row, "original", "wall_ms_per_step")
        after_ms = fmt_probe(row, "fixed", "wall_ms_per_step")
        speedup = "%.2fx" % ratio(row) if ratio(row) == ratio(row) else "-"
        equal = {True: "yes", False: "NO"}.get(row.get("outputs_equal"), "-")
        if gpu:
            spread = lambda v, key="wall_spread": (("%.0f%%" % (100 * row[v][key])) if key in row.get(v, {})
                                                   else "-")
            gpu_ms = lambda v: "%s (%s)" % (fmt_probe(row, v, "step_ms"), spread(v, "step_ms_spread"))
            twin = "-"
            vs_twin = "-"
            if "twin" in row:
                twin = "%s, %s, %s%s" % (fmt_probe(row, "twin", "wall_ms_per_step"), gpu_ms("twin"),
                                         fmt_probe(row, "twin", "kernels_per_step"),
                                         "" if row.get("twin_outputs_equal", True) else ", outputs differ")
                try:
                    vs_twin = "%+.1f%%" % (100 * (float(fmt_probe(row, "fixed", "step_ms")) /
                                                  float(fmt_probe(row, "twin", "step_ms")) - 1))
                except ValueError:
                    pass
                # Best of the runs beside the median: on a machine whose runs fall
                # in a fast and a slow state, the best run shows what the code can do.
                fixed_runs = row.get("fixed", {}).get("step_ms_runs") or []
                twin_runs = row.get("twin", {}).get("step_ms_runs") or []
                if fixed_runs and twin_runs and vs_twin != "-":
                    vs_twin += "; best %+.1f%%" % (100 * (min(fixed_runs) / min(twin_runs) - 1))
            lines.append("| %s | %d (%d) | %s → %s | %s → %s | %s | %s → %s (%s, %s) | %s%s | %s → %s | %s → %s | %s | %s |" % (
                row["program"], row["findings"], row["fixable"],
                fmt_probe(row, "original", "debug_syncs_per_step"), fmt_probe(row, "fixed", "debug_syncs_per_step"),
                fmt_probe(row, "original", "host_waited_steps"), fmt_probe(row, "fixed", "host_waited_steps"),
                equal, before_ms, after_ms, spread("original"), spread("fixed"), speedup,
                " (regression)" if row.get("regression") else "",
                gpu_ms("original"), gpu_ms("fixed"),
                fmt_probe(row, "original", "kernels_per_step"), fmt_probe(row, "fixed", "kernels_per_step"),
                twin, vs_twin))
        else:
            lines.append("| %s | %d (%d) | %s | %s → %s |" % (row["program"], row["findings"], row["fixable"],
                                                            equal, before_ms, after_ms))
    lines += ["", "Findings left unfixed (flagged: true dependencies, or checks without a fix):", ""]
    for row in report["programs"]:
        for item in row["remaining"]:
            lines.append("- %s: %s" % (row["program"], item))
    opt_in = [r for r in report["programs"] if r.get("tool_args")]
    if opt_in:
        lines += ["", "Programs rewritten with opt-in options (not the defaults):", ""]
        for r in opt_in:
            lines.append("- %s: %s%s" % (r["program"], " ".join(r["tool_args"]),
                                         ("; " + r["opt_in_regression"]) if r.get("opt_in_regression") else ""))
    if report["failures"]:
        lines += ["", "## Failures", ""] + ["- " + f for f in report["failures"]]
    open(path, "w").write("\n".join(lines) + "\n")


def write_chart(report, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("harness: matplotlib not available, no chart written")
        return
    rows = [r for r in report["programs"] if "original" in r and "fixed" in r]
    names = [r["program"] for r in rows]
    get = lambda r, v, k: float(r.get(v, {}).get("probe", {}).get(k, "nan"))
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 4.5))
    xs = range(len(rows))
    w = 0.38
    ax1.bar([x - w / 2 for x in xs], [get(r, "original", "wall_ms_per_step") for r in rows], w, label="original")
    ax1.bar([x + w / 2 for x in xs], [get(r, "fixed", "wall_ms_per_step") for r in rows], w, label="rewritten")
    ax1.set_ylabel("wall ms per step (N steps, one sync)")
    ax1.set_yscale("log")
    ax1.set_xticks(list(xs))
    ax1.set_xticklabels(names, rotation=30, ha="right")
    ax1.legend()
    ax2.bar([x - w / 2 for x in xs], [get(r, "original", "debug_syncs_per_step") for r in rows], w, label="original")
    ax2.bar([x + w / 2 for x in xs], [get(r, "fixed", "debug_syncs_per_step") for r in rows], w, label="rewritten")
    ax2.set_ylabel("syncs per step (sync debug mode)")
    ax2.set_xticks(list(xs))
    ax2.set_xticklabels(names, rotation=30, ha="right")
    ax2.legend()
    fig.suptitle("torch-syncfree: before and after (%s mode)" % report["mode"])
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="stage", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--tool", default=os.path.join(ROOT, "build", "bin", "torch-syncfree"))
    p.add_argument("--headers", choices=["1.13", "2.11"], default="2.11")
    p.add_argument("--out", default=os.path.join(HERE, "staged"))
    p.add_argument("--only", nargs="*")
    r = sub.add_parser("run")
    r.add_argument("--staged", default=os.path.join(HERE, "staged"))
    r.add_argument("--mode", choices=["gpu", "cpu"], default="gpu")
    r.add_argument("--build", default=os.path.join(HERE, "staged-build"))
    r.add_argument("--out", default=os.path.join(HERE, "report"))
    r.add_argument("--torch-prefix", default="")
    r.add_argument("--jobs", type=int, default=os.cpu_count())
    r.add_argument("--timeout", type=int, default=180)
    r.add_argument("--repeats", type=int, default=5, help="interleaved runs per variant (median time)")
    r.add_argument("--only", nargs="*", help="measure only these programs; the report covers every "
                   "program measured into --out so far")
    r.add_argument("--sync-table", action="store_true", help="with --only: also measure the sync table")
    s = sub.add_parser("report", help="recompute the report from the programs measured into --out "
                       "(out/programs/*.json, e.g. merged from several device runs)")
    s.add_argument("--out", default=os.path.join(HERE, "report"))
    s.add_argument("--mode", choices=["gpu", "cpu"], default="gpu")
    s.add_argument("--repeats", type=int, default=5)
    c = sub.add_parser("cpu")
    c.add_argument("--tool", default=os.path.join(ROOT, "build", "bin", "torch-syncfree"))
    c.add_argument("--out", default=os.path.join(ROOT, "build", "integration-cpu"))
    c.add_argument("--jobs", type=int, default=os.cpu_count())
    j = sub.add_parser("rejudge", help="re-apply the sync expectations to a report's measurements")
    j.add_argument("--report", default=os.path.join(HERE, "report"))
    args = parser.parse_args()
    if getattr(args, "mode", None) == "gpu" and getattr(args, "repeats", 5) < 5 and args.stage == "run":
        parser.error("--repeats %d: the regression test needs at least 5 runs a side in GPU mode "
                     "(at 3 its smallest p-value is 0.05, so it could never call a rewrite slower)"
                     % args.repeats)
    if args.stage == "prepare":
        prepare(args)
    elif args.stage == "run":
        run(args)
    elif args.stage == "rejudge":
        sys.exit(rejudge(args))
    elif args.stage == "report":
        summarize(args, os.path.abspath(args.out))
    else:
        staged = os.path.join(args.out, "staged")
        prepare(argparse.Namespace(tool=args.tool, headers="1.13", out=staged, only=None))
        run(argparse.Namespace(staged=staged, mode="cpu", build=os.path.join(args.out, "build"),
                               out=os.path.join(args.out, "report"), torch_prefix="", jobs=args.jobs,
                               timeout=600, repeats=1, only=None, sync_table=False))


if __name__ == "__main__":
    main()

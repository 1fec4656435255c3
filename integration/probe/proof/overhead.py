#!/usr/bin/env python3
"""The probe's overhead from run.sh's overhead phase (overhead.txt: program, variant,
round, steps, wall ms/step).

usage: overhead.py <overhead.txt> [<dir with <program>.overhead-on.profile.json> [<dir with the .debug files>]]

Variants: noprobe and noprobe_b (two identical builds without the probe: the A/A
pair, the noise the harness's band measures), off (probe linked, variable unset),
on (TORCH_SYNCFREE_PROFILE set). Prints a markdown table: median, min-max and
spread = (max - min) / median per variant, the ratios of medians, and an exact
two-sided Mann-Whitney p-value for off against noprobe (every split counted, as
the harness's regression test does). With the profiles of the "on" runs, also
the cost of one recorded sync: (on - off) per step / records per step, in µs.
"""
import collections
import json
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import slower_p_value  # noqa: E402  (the harness's exact test)
from join_profiles import in_step, symbolize  # noqa: E402

NOISE_BAND = (0.83, 1.13)  # integration/report/report.md (original/rewritten, unchanged programs)


def two_sided(a, b):
    """Exact two-sided Mann-Whitney p-value that b's runs differ from a's."""
    row = {"original": {"wall_ms_per_step_runs": a}, "fixed": {"wall_ms_per_step_runs": b}}
    flipped = {"original": {"wall_ms_per_step_runs": b}, "fixed": {"wall_ms_per_step_runs": a}}
    return min(1.0, 2 * min(slower_p_value(row), slower_p_value(flipped)))


def ratio_interval(a, b, rounds=10000):
    """95 % percentile-bootstrap interval of median(b) / median(a) (fixed seed)."""
    rng = random.Random(26)
    med = lambda xs: sorted(xs)[len(xs) // 2]
    ratios = sorted(med(rng.choices(b, k=len(b))) / med(rng.choices(a, k=len(a))) for _ in range(rounds))
    return ratios[int(0.025 * rounds)], ratios[int(0.975 * rounds)]


def main():
    runs = collections.defaultdict(list)
    for line in open(sys.argv[1]):
        program, variant, _, _, ms = line.split()
        if ms != "FAILED":
            runs[(program, variant)].append(float(ms))
    profiles = sys.argv[2] if len(sys.argv) > 2 else None
    debug_dir = sys.argv[3] if len(sys.argv) > 3 else profiles
    med = lambda xs: sorted(xs)[len(xs) // 2]
    print("| program | variant | runs | median ms/step | min - max | spread |")
    print("|---|---|---|---|---|---|")
    programs = sorted({p for p, _ in runs})
    for p in programs:
        for v in ("noprobe", "noprobe_b", "off", "on"):
            xs = sorted(runs.get((p, v), []))
            if xs:
                print("| %s | %s | %d | %.4f | %.4f - %.4f | %.0f%% |" % (
                    p, v, len(xs), med(xs), xs[0], xs[-1], 100 * (xs[-1] - xs[0]) / med(xs)))
    print()
    print("| program | noprobe / off (band %.2f-%.2f) | A/A: noprobe / noprobe_b | off / noprobe, 95 %% "
          "bootstrap interval | off vs noprobe, exact two-sided p | on / off, 95 %% bootstrap interval "
          "| on vs off, exact two-sided p | on - off, ms/step | records/step | µs per recorded sync |"
          % NOISE_BAND)
    print("|---|---|---|---|---|---|---|---|---|---|")
    for p in programs:
        no, no_b, off, on = (runs.get((p, v), []) for v in ("noprobe", "noprobe_b", "off", "on"))
        ratio = "%.3f" % (med(no) / med(off)) if no and off else "-"
        aa = "%.3f" % (med(no) / med(no_b)) if no and no_b else "-"
        p_value = "%.2f" % two_sided(no, off) if no and off else "-"
        interval = "%.3f - %.3f" % ratio_interval(no, off) if no and off else "-"
        on_off = "%.3f (%.3f - %.3f)" % ((med(on) / med(off),) + ratio_interval(off, on)) if on and off else "-"
        p_on = "%.2g" % two_sided(off, on) if on and off else "-"
        extra = on and off and med(on) - med(off)
        records = per_record = "-"
        path = profiles and os.path.join(profiles, p + ".overhead-on.profile.json")
        if path and os.path.exists(path):
            # Records in the steps: the sites whose stack passes through the
            # harness's step (symbolized from the profile run's debug info, the
            # same binaries), per step.
            d = json.load(open(path))
            steps, inside = d["steps"], 0
            for s in d["syncs"]:
                frames = []
                for f in s["frames"]:
                    debug = os.path.join(debug_dir, os.path.basename(f["module"]) + ".debug")
                    if os.path.exists(debug):
                        frames += symbolize(debug, [f["offset"]])[f["offset"]]
                if in_step(frames, True):
                    inside += s["count"]
            records = inside / steps
            per_record = "%.1f" % (1000 * extra / records) if extra and records else "-"
            records = "%.1f" % records
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            p, ratio, aa, interval, p_value, on_off, p_on, "%.4f" % extra if extra else "-", records, per_record))


if __name__ == "__main__":
    main()

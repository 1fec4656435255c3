#!/usr/bin/env python3
"""The cost per finding measured by the probe, as an SVG bar chart (written by hand:
no plotting library needed).

usage: plot_cost.py <joined.json> <out.svg>

One bar per finding that ran inside the steps (joined.json's "steps only" join):
host milliseconds waited per step at the finding, log scale, highest first; the
label carries the program, the line, the check and the syncs per step.
"""
import json
import math
import sys
from xml.sax.saxutils import escape


def main():
    rows = json.load(open(sys.argv[1]))
    bars = []
    for r in rows:
        if r["program"].endswith("_tailcall"):
            continue
        for f in r["findings"]:
            if f["count"] and f["file"].startswith(r["program"]):
                bars.append((f["wait_ms"] / r["steps"], f["per_step"],
                             "%s:%d %s" % (r["program"], f["line"], f["check"].replace("torch-sync-", ""))))
    bars.sort(key=lambda b: -b[0])
    lo, hi = 1e-3, 10 ** math.ceil(math.log10(max(b[0] for b in bars)))
    left, width, row_h, top = 330, 560, 15, 64
    height = top + row_h * len(bars) + 40
    x = lambda ms: left + width * (math.log10(max(ms, lo)) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="10">'
           % (left + width + 110, height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="10" y="18" font-size="13" font-weight="bold">Measured cost per finding: host ms waited per step '
           '(sync probe, H200, LibTorch 2.11, 10 steps)</text>',
           '<text x="10" y="32" font-size="10">Log scale. Bar: the runtime waits (cudaStreamSynchronize, '
           'cudaDeviceSynchronize) joined to the finding, per step; right: ms and syncs per step.</text>',
           '<text x="10" y="45" font-size="10">The host\'s real block time: the probe records a sync in '
           'microseconds (raw addresses, resolved at write); the first sync after queued GPU work takes the wait.</text>']
    decade = lo
    while decade <= hi * 1.0001:
        gx = x(decade)
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ccc"/>' % (gx, top - 4, gx, top + row_h * len(bars)))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%g ms</text>' % (gx, top + row_h * len(bars) + 14, decade))
        decade *= 10
    for i, (ms, per_step, label) in enumerate(bars):
        y = top + i * row_h
        out.append('<text x="%d" y="%d" text-anchor="end">%s</text>' % (left - 6, y + 10, escape(label)))
        out.append('<rect x="%d" y="%d" width="%.1f" height="%d" fill="#4878a8"/>' % (left, y + 2, x(ms) - left, row_h - 4))
        out.append('<text x="%.1f" y="%d">%.3f ms, %.1f/step</text>' % (x(ms) + 4, y + 10, ms, per_step))
    out.append('</svg>')
    open(sys.argv[2], "w").write("\n".join(out) + "\n")
    print("%d findings plotted" % len(bars))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause-Patent
"""Summary of a VMAF_CUDA_TRACE file (engine/frame_trace.h): where a CUDA session's
frames spend their time.

    frame_trace.py TRACE.tsv [--skip N]

Prints the frame rate of the pairs' arrival (submit_begin) and of the scores' hand-on
(retrieved), and percentiles (ms) of:
  arrival gap    submit_begin(i) - submit_end(i - 1): time the library had no work to take
                 (the caller's input, e.g. FFmpeg's decoders and framesync);
  enqueue        submit_end - submit_begin (includes blocking for a full pipeline);
  device         ready - submit_end (the frame's kernels, queued behind earlier frames);
  host finish    done - ready;
  to hand-on     retrieved - done (waiting for earlier frames, or for the caller);
and the share of wall time spent blocked for results (waited). --skip leaves out the
first N frames (start-up). Standard library only.
"""
import argparse
import csv
import sys


def pct(v, q):
    if not v:
        return float("nan")
    s = sorted(v)
    return s[min(len(s) - 1, int(q * (len(s) - 1) + 0.5))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--skip", type=int, default=30)
    a = ap.parse_args()
    with open(a.trace) as f:
        rows = [{k: int(v) for k, v in r.items()} for r in csv.DictReader(f, delimiter="\t")]
    rows.sort(key=lambda r: r["index"])
    rows = rows[a.skip:]
    if len(rows) < 2:
        sys.exit("frame_trace.py: fewer than 2 frames after --skip")
    span_in = (rows[-1]["submit_begin"] - rows[0]["submit_begin"]) / 1e6
    span_out = (rows[-1]["retrieved"] - rows[0]["retrieved"]) / 1e6
    print(f"frames {len(rows)}: arrival {(len(rows) - 1) / span_in:.1f} fps, "
          f"hand-on {(len(rows) - 1) / span_out:.1f} fps")
    series = {
        "arrival gap": [rows[i]["submit_begin"] - rows[i - 1]["submit_end"] for i in range(1, len(rows))],
        "enqueue": [r["submit_end"] - r["submit_begin"] for r in rows],
        "device": [r["ready"] - r["submit_end"] for r in rows],
        "host finish": [r["done"] - r["ready"] for r in rows],
        "to hand-on": [r["retrieved"] - r["done"] for r in rows],
    }
    print(f"{'ms':<12} {'p10':>8} {'p50':>8} {'p90':>8} {'p99':>8} {'max':>8} {'mean':>8}")
    for name, v in series.items():
        v = [x / 1000 for x in v]
        print(f"{name:<12} {pct(v, .1):8.3f} {pct(v, .5):8.3f} {pct(v, .9):8.3f} "
              f"{pct(v, .99):8.3f} {max(v):8.3f} {sum(v) / len(v):8.3f}")
    waited = sum(r["waited"] for r in rows) / 1e6
    wall = (rows[-1]["retrieved"] - rows[0]["submit_begin"]) / 1e6
    print(f"blocked for results: {waited:.3f} s of {wall:.3f} s ({100 * waited / wall:.0f} %), "
          f"in {sum(1 for r in rows if r['waited'])} hand-ons")


if __name__ == "__main__":
    main()

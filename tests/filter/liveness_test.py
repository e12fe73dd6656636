#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause-Patent
"""Liveness of the filter: every input queued and ended before the graph runs.

    liveness_test.py --ffmpeg PATH [--cc CC]

Compiles tests/filter/liveness.c against the static FFmpeg tree the binary was built
from (PATH/../../src, with the link flags of its ffbuild/config.mak) and runs it on
two-input filters and ladders: the filter must give every output frame and every output
its end, with the frames n_subsample scores carrying lavfi.vmaf.score, although no
input can bring anything more (ffmpeg's state once the decoders are done; there it
aborts with "Assertion best_input >= 0 failed" if the filter stalls). FFmpeg 7.1's
buffersink then returns EAGAIN, which the harness reports; 9.0's asks the filter again
whenever nothing is ready, which hides a missing wake-up (a filter that can never go on
spins: reported after 120 s). So the 7.1 run (meson's ffmpeg_extra_versions) is the one
that checks the wake-up; both check the frames and scores. Cases: lengths
equal and not, n_subsample, one frame, the CPU backend's worker threads (scores come
later than the send), live windows with SEI. Standard library only.
"""

import argparse
import os
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# (reference frames, main frames per rendition, n_subsample, more options)
CASES = [
    (30, "30", 1, ""),
    (30, "30", 3, ""),
    (30, "45", 3, ""),
    (30, "20", 3, ""),
    (1, "1", 1, ""),
    (30, "30", 3, "n_threads=4"),
    (40, "40", 1, "n_threads=3:window=5:sei=1"),
    (30, "30,20,45", 3, ""),
    (30, "30,30,30", 1, "n_threads=4"),
    (40, "40,25", 3, "n_threads=2:window=5:sei=1"),
]


def link_flags(src):
    libs = {}
    with open(os.path.join(src, "ffbuild", "config.mak")) as f:
        for line in f:
            if line.startswith("EXTRALIBS-") and "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                libs[k[len("EXTRALIBS-"):]] = v
    order = ["avfilter", "avformat", "avcodec", "swresample", "swscale", "avutil"]
    archives = [os.path.join(src, "lib" + n, "lib" + n + ".a") for n in order]
    archives = [a for a in archives if os.path.exists(a)]
    extra = []
    for n in order:
        extra += shlex.split(libs.get(n, ""))
    return archives, extra + ["-lm"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ffmpeg", required=True, help="the built ffmpeg binary (bin/ffmpeg of its tree)")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"), help="C compiler")
    a = ap.parse_args()
    src = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(a.ffmpeg)), "..", "src"))
    if not os.path.exists(os.path.join(src, "ffbuild", "config.mak")):
        print("FAIL: no FFmpeg build tree at %s (expected next to the ffmpeg binary)" % src)
        return 1
    archives, extra = link_flags(src)
    with tempfile.TemporaryDirectory(prefix="vmaf_cuda_liveness_") as tmp:
        exe = os.path.join(tmp, "liveness")
        cmd = [a.cc, "-O1", "-I" + src, os.path.join(HERE, "liveness.c")] + archives + extra + ["-o", exe]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode:
            print("FAIL: building the harness:\n$ %s\n%s" % (" ".join(cmd), p.stderr[-4000:]))
            return 1
        failed = 0
        for ref, mains, sub, opts in CASES:
            args = [exe, "176", "144", str(ref), mains, str(sub)] + ([opts] if opts else [])
            name = "ref %d, main %s, n_subsample=%d%s" % (ref, mains, sub, ", " + opts if opts else "")
            try:
                p = subprocess.run(args, capture_output=True, text=True, timeout=120)
            except subprocess.TimeoutExpired:
                # FFmpeg 9.0's buffersink asks the filter again whenever the graph has
                # nothing ready: a filter that can never go on spins there
                failed += 1
                print("FAIL %s: no end after 120 s (the filter spins without progress)\n$ %s"
                      % (name, " ".join(args[1:])))
                continue
            outs = "; ".join(l for l in p.stdout.splitlines() if l.startswith("output"))
            if p.returncode == 0:
                print("PASS %s: %s" % (name, outs))
            else:
                failed += 1
                err = "\n".join(l for l in p.stderr.splitlines() if "] " not in l or "error" in l.lower())
                print("FAIL %s (exit %d):\n$ %s\n%s" % (name, p.returncode, " ".join(args[1:]), err[-3000:]))
    print("%d passed, %d failed" % (len(CASES) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

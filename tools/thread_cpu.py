#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause-Patent
"""Where a pipeline's host time goes: runs a command and prints its wall time and the CPU
seconds of its threads grouped by thread name (FFmpeg names its demuxer, decoder, filter
and muxer threads), read from /proc every 0.1 s.

    thread-cpu.py COMMAND [ARGS...]

A thread near 100 % of the wall time limits the pipeline. Linux only; standard library.
"""
import os, subprocess, sys, time
tck = os.sysconf("SC_CLK_TCK")
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
t0 = time.time(); seen = {}
while p.poll() is None:
    try:
        for tid in os.listdir(f"/proc/{p.pid}/task"):
            try:
                s = open(f"/proc/{p.pid}/task/{tid}/stat").read()
                comm = s[s.index("(") + 1:s.rindex(")")]
                f = s[s.rindex(")") + 2:].split()
                seen[tid] = (comm, (int(f[11]) + int(f[12])) / tck)
            except OSError:
                pass
    except OSError:
        pass
    time.sleep(0.1)
wall = time.time() - t0
agg = {}
for comm, cpu in seen.values():
    n, c = agg.get(comm, (0, 0.0)); agg[comm] = (n + 1, c + cpu)
print(f"wall {wall:.2f} s, rc {p.returncode}; threads by name (count, cpu s, % of wall):")
for comm, (n, c) in sorted(agg.items(), key=lambda x: -x[1][1])[:14]:
    print(f"  {comm:20s} {n:3d} {c:7.2f} {100*c/wall:6.1f}%")

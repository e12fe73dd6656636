#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause-Patent
"""Where a pipeline's host time goes: runs a command and prints its wall time and the CPU
seconds of its threads grouped by thread name (FFmpeg names its demuxer, decoder, filter
and muxer threads), read from /proc every 0.1 s; with --gpu also the mean SM, memory and
decoder use of `nvidia-smi dmon` over the run.

    thread_cpu.py [--gpu] COMMAND [ARGS...]

A thread near 100 % of the wall time limits the pipeline. Linux only; standard library.
tests/filter/bench.py --profile uses profile_run().
"""
import os
import shutil
import subprocess
import sys
import threading
import time


def _dmon(stop, samples):
    """nvidia-smi dmon -s u rows (sm, mem, enc, dec %) until stop is set."""
    if not shutil.which("nvidia-smi"):
        return
    p = subprocess.Popen(["nvidia-smi", "dmon", "-s", "u", "-d", "1"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    try:
        for line in p.stdout:
            if stop.is_set():
                break
            f = line.split()
            if f and not line.startswith("#") and len(f) >= 5:
                try:
                    samples.append([float(x) for x in f[1:5]])
                except ValueError:
                    pass
    finally:
        p.kill()
        p.wait()


def profile_run(cmd, gpu=False, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE):
    """Runs cmd; returns (wall s, returncode, stderr text, {thread name: (count, cpu s)},
    mean [sm, mem, enc, dec] % or None)."""
    tck = os.sysconf("SC_CLK_TCK")
    stop, samples = threading.Event(), []
    mon = threading.Thread(target=_dmon, args=(stop, samples), daemon=True) if gpu else None
    if mon:
        mon.start()
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=stdout, stderr=stderr, text=True)
    err_chunks = []
    reader = None
    if stderr == subprocess.PIPE:
        reader = threading.Thread(target=lambda: err_chunks.append(p.stderr.read()), daemon=True)
        reader.start()
    seen = {}
    while p.poll() is None:
        try:
            for tid in os.listdir("/proc/%d/task" % p.pid):
                try:
                    with open("/proc/%d/task/%s/stat" % (p.pid, tid)) as f:
                        s = f.read()
                    rest = s[s.rindex(")") + 2:].split()
                    seen[tid] = (s[s.index("(") + 1:s.rindex(")")], (int(rest[11]) + int(rest[12])) / tck)
                except (OSError, ValueError, IndexError):
                    pass
        except OSError:
            pass
        time.sleep(0.1)
    wall = time.monotonic() - t0
    if reader:
        reader.join()
    stop.set()
    agg = {}
    for name, cpu in seen.values():
        n, c = agg.get(name, (0, 0.0))
        agg[name] = (n + 1, c + cpu)
    mean = [sum(col) / len(samples) for col in zip(*samples)] if samples else None
    return wall, p.returncode, "".join(err_chunks), agg, mean


def summary(wall, agg, mean, top=6):
    """One line: GPU use, then the busiest thread names with their % of the wall time."""
    busiest = sorted(agg.items(), key=lambda x: -x[1][1])[:top]
    gpu = ("sm %.0f%% mem %.0f%% dec %.0f%% | " % (mean[0], mean[1], mean[3])) if mean else ""
    return gpu + ", ".join("%s%s %.0f%%" % (n, "x%d" % k if k > 1 else "", 100 * c / wall)
                           for n, (k, c) in busiest)


def main():
    args = sys.argv[1:]
    gpu = bool(args) and args[0] == "--gpu"
    if gpu:
        args = args[1:]
    if not args:
        sys.exit(__doc__)
    wall, rc, _, agg, mean = profile_run(args, gpu=gpu, stderr=subprocess.DEVNULL)
    print("wall %.2f s, rc %d; %s" % (wall, rc, summary(wall, agg, mean, top=14)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

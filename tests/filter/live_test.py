#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause-Patent
"""Live QA through the patched ffmpeg (issue 12), software frames, CPU backend.

    live_test.py --ffmpeg PATH --shared DIR [--gpu] [--only NAME ...] [--skip NAME ...]
                 [--workdir DIR] [-v] [--frames N] [--cli PATH]

--gpu: the same on the CUDA backend, the BBB cases on NVDEC frames, the raw ones through
software frames uploaded by the CUDA backend, device memory (nvidia-smi) sampled beside VmRSS; "SKIPPED" and exit 77
without a CUDA device. On the device, --frames 1000000 is the hour-long-equivalent run.

- windows: lavfi.vmaf.window.{frames,min,mean,harmonic_mean,percN} of every frame against
  values computed here from the per-frame scores of the same run's JSON log (precision=max):
  mean = math.fsum(window) / n and harmonic_mean = n / math.fsum(1 / (v + 1)) - 1 exactly
  (the library's vmaf_cuda_live_open(), engine/pooling.h), min, the nearest-rank
  percentile; frame windows and 1 s windows (by pts), one model and two;
- pool=perc1|perc5|perc10: the "VMAF score:" line is the nearest-rank percentile of the
  golden per-frame scores; an unknown pool name is an error listing the valid ones;
- log_fmt=ndjson: read from a named pipe while ffmpeg runs (-re inputs): lines arrive
  before ffmpeg exits, every line is JSON without NaN/Infinity, frame lines bit-exact with
  the golden values, window lines every window_log frames, a final pooled line; to pipe:1;
- sei=1: the SEI user data unregistered side data on every output frame (showinfo), with
  our UUID and a JSON payload matching the frame's metadata;
- cli_ndjson (with --cli): the vmaf-cuda CLI's NDJSON (--ndjson -, the distorted frames
  piped into its standard input as Y4M) equals the filter's NDJSON of the same frames
  byte for byte, windows, pooled line and pool=perc5 score line included;
- latency: frames written in real time into named pipes; how long after its input each
  frame's NDJSON line arrives (reported; the check is loose);
- flat memory: a run of --frames (default 30000) 64x64 frames (a looped raw clip) with
  window=2s, sei=1 and the NDJSON log: VmRSS sampled from /proc, at most 5 % above its value
  after the first 10 % of the frames; the same length with log_fmt=json: a complete log.

Standard library only. Prints one line per test and "N passed, N failed" at the end.
"""

import argparse
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import threading
import time

import filter_test as ft
import parity_cases
from filter_test import TestFailure

SEI_UUID = "0f45043e-7bf6-415b-bbff-2b7dcf51213c"
POOL_NAMES = "mean, harmonic_mean, min, max, perc1, perc5, perc10"
TICKS_PER_SECOND = 12288   # the BBB clips' time base (1/12288, 24 fps, 512 per frame)


def nearest_rank(values, p):
    s = sorted(values)
    rank = max(1, (p * len(s) + 99) // 100)
    return s[rank - 1]


def sequential_mean(values):
    """libvmaf's mean: a left-to-right double sum (Python 3.12's sum() is compensated)."""
    acc = 0.0
    for v in values:
        acc += v
    return acc / len(values)


def expected_window(values, perc=0):
    """The window values of vmaf_cuda_live_open() (vmaf_cuda.h), computed here."""
    n = len(values)
    out = {"frames": n, "min": min(values), "mean": math.fsum(values) / n,
           "harmonic_mean": n / math.fsum(1.0 / (v + 1.0) for v in values) - 1.0}
    if perc:
        out["perc%d" % perc] = nearest_rank(values, perc)
    return out


def json_log_scores(path, key):
    with open(path) as f:
        doc = json.load(f)
    return [fr["metrics"][key] for fr in doc["frames"]]


def strict_json(line):
    """json.loads that refuses NaN and Infinity (not JSON)."""
    def bad(c):
        raise TestFailure("non-JSON constant %s in: %s" % (c, line[:200]))
    return json.loads(line, parse_constant=bad)


def check_windows(frames, scores, prefix, size=None, pts_window=None, perc=0):
    """frames: metadata of each output frame (pts, {key: value}); scores: per-frame model
    scores from the JSON log; size: frames, or pts_window: ticks."""
    if len(frames) != len(scores):
        raise TestFailure("%d frames with metadata, %d in the log" % (len(frames), len(scores)))
    pts = [int(p) for p, _ in frames]
    for i, (_, kv) in enumerate(frames):
        if size:
            win = scores[max(0, i + 1 - size):i + 1]
        else:
            win = [s for s, t in zip(scores[:i + 1], pts[:i + 1]) if t > pts[i] - pts_window]
        for stat, want in expected_window(win, perc).items():
            key = "%s.%s" % (prefix, stat)
            if key not in kv:
                raise TestFailure("frame %d: no %s (has %s)" % (
                    i, key, sorted(k for k in kv if ".window." in k)))
            got = int(kv[key]) if stat == "frames" else float(kv[key])
            if got != want:
                raise TestFailure("frame %d: %s = %r, expected %r (window of %d)"
                                  % (i, key, got, want, len(win)))


def window_run(r, name, options, models="version=vmaf_v0.6.1"):
    log, meta = r.tmp(name + ".json"), r.tmp(name + ".meta")
    graph = ("[0:v][1:v]vmaf_cuda=backend=%s:model=%s:log_fmt=json:log_path=%s:precision=max%s,"
             "metadata=print:file=%s" % (r.backend, models, log, options, meta))
    _, err, _ = r.ffmpeg_run(["-v", "verbose"] + r.inputs(ft.BBB_DIS, ft.BBB_REF, r.hw) +
                             ["-an", "-lavfi", graph, "-f", "null", "-"])
    if "per-frame history: kept" not in err:
        raise TestFailure("a JSON log: no 'per-frame history: kept' in the log")
    return log, ft.read_metadata(meta), err


def t_window_frames(r):
    log, frames, _ = window_run(r, "window10", ":window=10")
    scores = json_log_scores(log, "vmaf")
    check_windows(frames, scores, "lavfi.vmaf.window", size=10)
    if any(".window.vmaf." in k for k in frames[0][1]):
        raise TestFailure("per-model window keys with one model")
    return "%d frames: window of 10 frames exact (fsum mean, harmonic mean, min)" % len(frames)


def t_window_perc_and_pool(r):
    log, frames, err = window_run(r, "window_p5", ":window=40:pool=perc5")
    scores = json_log_scores(log, "vmaf")
    check_windows(frames, scores, "lavfi.vmaf.window", size=40, perc=5)
    golden, _ = ft.read_golden(r.path(ft.BBB_GOLDEN))
    want = "%f" % nearest_rank([g["vmaf"] for g in golden], 5)
    printed = ft.vmaf_score_line(err)
    if printed != want:
        raise TestFailure("pool=perc5: VMAF score %s, expected %s" % (printed, want))
    return "window.perc5 over 40 frames exact; VMAF score (perc5) %s" % printed


def t_window_duration_two_models(r):
    log, frames, _ = window_run(r, "window1s", ":window=1s",
                                models="version=vmaf_v0.6.1|version=vmaf_v0.6.1neg")
    names = [k[len("lavfi.vmaf.score."):] for k in frames[0][1] if k.startswith("lavfi.vmaf.score.")]
    if len(names) != 2:
        raise TestFailure("expected two lavfi.vmaf.score.<model> keys, got %s" % names)
    for name in names:
        check_windows(frames, json_log_scores(log, name), "lavfi.vmaf.window.%s" % name,
                      pts_window=TICKS_PER_SECOND)
    check_windows(frames, json_log_scores(log, "vmaf"), "lavfi.vmaf.window",
                  pts_window=TICKS_PER_SECOND)
    n = int(frames[-1][1]["lavfi.vmaf.window.frames"])
    if n != 24:
        raise TestFailure("a 1 s window at 24 fps holds %d frames" % n)
    return "1 s windows (24 frames) of %s exact" % " and ".join(names)


def t_err_pool(r):
    return ft.error_case(r, "[0:v][1:v]vmaf_cuda=backend=%s:pool=median" % r.backend,
                         "pool 'median' is not one of " + POOL_NAMES)


def t_err_window(r):
    return ft.error_case(r, "[0:v][1:v]vmaf_cuda=backend=%s:window=3x" % r.backend,
                         "window '3x' is neither")


def t_err_window_log(r):
    return ft.error_case(r, "[0:v][1:v]vmaf_cuda=backend=%s:window_log=5" % r.backend,
                         "window_log=5")


def check_ndjson(lines, golden, window_log=0):
    """Frame lines bit-exact with golden, window lines, the pooled line last."""
    docs = [strict_json(l) for l in lines]
    kinds = [d.get("type") for d in docs]
    frames = [d for d in docs if d.get("type") == "frame"]
    if len(frames) != len(golden):
        raise TestFailure("%d frame lines, expected %d (types %s)" % (len(frames), len(golden),
                                                                     sorted(set(kinds))))
    for i, (d, g) in enumerate(zip(frames, golden)):
        if d["frameNum"] != i or not isinstance(d.get("pts_time"), float):
            raise TestFailure("frame line %d: frameNum %s, pts_time %r" % (i, d["frameNum"], d.get("pts_time")))
        m = {ft.canon(k): v for k, v in d["metrics"].items()}
        for name, value in g.items():
            if name in m and m[name] != value:
                raise TestFailure("frame %d %s: %r, golden %r" % (i, name, m[name], value))
        if m.get("vmaf") != g["vmaf"]:
            raise TestFailure("frame %d vmaf: %r, golden %r" % (i, m.get("vmaf"), g["vmaf"]))
    if window_log:
        wins = [d for d in docs if d.get("type") == "window"]
        if len(wins) != len(golden) // window_log:
            raise TestFailure("%d window lines, expected %d" % (len(wins), len(golden) // window_log))
        for w in wins:
            want = expected_window([g["vmaf"] for g in golden[max(0, w["frameNum"] + 1 - 24):w["frameNum"] + 1]])
            got = w["window"]["vmaf"]
            for k, v in want.items():
                if got[k] != v:
                    raise TestFailure("window line at %d: %s %r, expected %r" % (w["frameNum"], k, got[k], v))
    if kinds[-1] != "pooled":
        raise TestFailure("last line is %s, not the pooled line" % kinds[-1])
    return docs[-1]


def t_ndjson_fifo(r):
    fifo = r.tmp("live.fifo")
    if os.path.exists(fifo):
        os.unlink(fifo)
    os.mkfifo(fifo)
    graph = ("[0:v][1:v]vmaf_cuda=backend=%s:log_fmt=ndjson:log_path=%s:precision=max:"
             "window=24:window_log=24" % (r.backend, fifo))
    hw = ["-hwaccel", "cuda", "-hwaccel_output_format", "cuda"] if r.hw else []
    cmd = [r.ffmpeg, "-hide_banner", "-nostdin", "-y", "-re"] + hw + ["-i", r.path(ft.BBB_DIS),
           "-re"] + hw + ["-i", r.path(ft.BBB_REF), "-an", "-lavfi", graph, "-f", "null", "-"]
    if r.verbose:
        print("  $ " + " ".join(cmd), flush=True)
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    err_chunks, lines, running_at = [], [], []

    def read_fifo():
        # opening waits for ffmpeg to open the pipe (at its first scored frame)
        with open(fifo) as f:
            for line in f:
                lines.append(line.rstrip("\n"))
                running_at.append(p.poll() is None)

    threads = [threading.Thread(target=read_fifo),
               threading.Thread(target=lambda: err_chunks.append(p.stderr.read()))]
    start = time.monotonic()
    for t in threads:
        t.start()
    try:
        rc = p.wait(timeout=600)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = p.wait()
    elapsed = time.monotonic() - start
    if threads[0].is_alive():
        # ffmpeg never opened the pipe: open it once ourselves so that the reader ends
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass
    for t in threads:
        t.join(timeout=60)
    if rc != 0:
        raise TestFailure("ffmpeg exited with %d:\n%s" % (rc, ft.tail("".join(err_chunks))))
    live = sum(running_at)
    if live < len(lines) // 2:
        raise TestFailure("only %d of %d lines were read while ffmpeg ran" % (live, len(lines)))
    golden, pooled = ft.read_golden(r.path(ft.BBB_GOLDEN))
    last = check_ndjson(lines, golden, window_log=24)
    if last["frames"] != len(golden) or last["pooled_metrics"]["vmaf"]["mean"] != float(pooled["mean"]):
        raise TestFailure("pooled line %s, golden mean %s" % (json.dumps(last)[:300], pooled["mean"]))
    return "%d lines in %.1f s, %d read while ffmpeg ran; frames exact, 5 window lines, pooled mean exact" % (
        len(lines), elapsed, live)


def t_ndjson_stdout(r):
    out = []
    for path in ("pipe\\\\:1", "-"):   # the colon escaped for the graph and the option level
        meta = r.tmp("ndjson_stdout.meta")
        graph = ("[0:v]trim=end_frame=12[d];[1:v]trim=end_frame=12[f];[d][f]vmaf_cuda=backend=%s:"
                 "log_fmt=ndjson:log_path=%s:precision=max,metadata=print:file=%s"
                 % (r.backend, path, meta))
        _, err, stdout = r.ffmpeg_run(["-v", "verbose"] + r.inputs(ft.BBB_DIS, ft.BBB_REF, r.hw) +
                                      ["-an", "-lavfi", graph, "-f", "null", "-"],
                                      stdout=subprocess.PIPE)
        if "per-frame history: not kept" not in err:
            raise TestFailure("log_fmt=ndjson: no 'per-frame history: not kept' in the log")
        lines = stdout.decode().splitlines()
        # the 12-frame stream's own scores (its last frame has no successor): the metadata
        meta_frames = ft.metadata_features(ft.read_metadata(meta))
        expected = [{k: float(v) for k, v in m.items()} for m in meta_frames]
        for e in expected:
            e["vmaf"] = e.pop("score")
        last = check_ndjson(lines, expected)
        mean = last["pooled_metrics"]["vmaf"]["mean"]
        want = sequential_mean([e["vmaf"] for e in expected])
        if mean != want or "%f" % mean != ft.vmaf_score_line(err):
            raise TestFailure("pooled mean %r, expected %r (VMAF score %s)"
                              % (mean, want, ft.vmaf_score_line(err)))
        out.append("%s: %d lines" % (path, len(lines)))
    return ", ".join(out) + " (history not kept)"


def sei_payloads(stderr):
    """(uuid, payload bytes) of every SEI user data unregistered block showinfo printed."""
    pat = re.compile(r"UUID=([0-9a-f-]{36})[^\n]*\n[^\n]*?User Data=([0-9a-f]*)")
    return [(m.group(1), bytes.fromhex(m.group(2))) for m in pat.finditer(stderr)]


def t_sei(r):
    meta = r.tmp("sei.meta")
    graph = ("[0:v]trim=end_frame=20[d];[1:v]trim=end_frame=20[f];[d][f]vmaf_cuda=backend=%s:"
             "sei=1:window=5:precision=max,metadata=print:file=%s,showinfo=checksum=0"
             % (r.backend, meta))
    _, err, _ = r.ffmpeg_run(["-nostats"] + r.inputs(ft.BBB_DIS, ft.BBB_REF, r.hw) +
                             ["-an", "-lavfi", graph, "-f", "null", "-"])
    ours = [strict_json(p.decode()) for u, p in sei_payloads(err) if u == SEI_UUID]
    frames = ft.read_metadata(meta)
    if len(ours) != 20 or len(frames) != 20:
        raise TestFailure("%d SEI payloads with our UUID, %d frames (showinfo printed %d UUIDs)"
                          % (len(ours), len(frames), err.count("UUID=")))
    for i, (d, (_, kv)) in enumerate(zip(ours, frames)):
        if d["frameNum"] != i or d["scores"]["vmaf"] != float(kv["lavfi.vmaf.score"]):
            raise TestFailure("SEI %d: %s, metadata score %s" % (i, d, kv["lavfi.vmaf.score"]))
        w = d["window"]["vmaf"]
        if w["frames"] != min(i + 1, 5) or w["mean"] != float(kv["lavfi.vmaf.window.mean"]):
            raise TestFailure("SEI %d window %s, metadata mean %s" % (i, w, kv["lavfi.vmaf.window.mean"]))
    return "20 frames carry UUID %s + JSON (scores and window equal to the metadata)" % SEI_UUID


def t_cli_ndjson(r):
    """The CLI and the filter on the same 48 frames: the same NDJSON bytes."""
    if not r.cli:
        raise parity_cases.Skip("no --cli given: the CLI's NDJSON is not compared")
    n = 48
    nd = r.tmp("filter_vs_cli.ndjson")
    graph = ("[0:v]trim=end_frame=%d[d];[1:v]trim=end_frame=%d[f];[d][f]vmaf_cuda=backend=%s:"
             "log_fmt=ndjson:log_path=%s:precision=max:window=10:window_log=7:pool=perc5"
             % (n, n, r.backend, nd))
    _, err, _ = r.ffmpeg_run(r.inputs(ft.BBB_DIS, ft.BBB_REF, r.hw) + ["-an", "-lavfi", graph,
                                                                       "-f", "null", "-"])
    ref_y4m = r.tmp("cli_ref.y4m")
    r.ffmpeg_run(["-i", r.path(ft.BBB_REF), "-frames:v", str(n), "-pix_fmt", "yuv420p",
                  "-f", "yuv4mpegpipe", ref_y4m])
    dec = subprocess.Popen([r.ffmpeg, "-hide_banner", "-nostdin", "-v", "error", "-i",
                            r.path(ft.BBB_DIS), "-frames:v", str(n), "-pix_fmt", "yuv420p",
                            "-f", "yuv4mpegpipe", "-"], stdout=subprocess.PIPE)
    cmd = [r.cli, "-r", ref_y4m, "-d", "-", "--backend", r.backend, "--precision", "max",
           "--ndjson", "-", "--window", "10", "--window-log", "7", "--pool", "perc5"]
    if r.verbose:
        print("  $ " + " ".join(cmd), flush=True)
    cli = subprocess.run(cmd, stdin=dec.stdout, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    dec.stdout.close()
    dec.wait()
    cli_err = cli.stderr.decode(errors="replace")
    if cli.returncode != 0 or dec.returncode != 0:
        raise TestFailure("vmaf-cuda exited with %d (decoder %d):\n%s"
                          % (cli.returncode, dec.returncode, ft.tail(cli_err)))
    with open(nd, "rb") as f:
        filt = f.read()
    if filt != cli.stdout:
        a, b = filt.decode().splitlines(), cli.stdout.decode().splitlines()
        diff = [i for i in range(min(len(a), len(b))) if a[i] != b[i]]
        first = diff[0] if diff else min(len(a), len(b))
        raise TestFailure("NDJSON differs: filter %d lines, CLI %d; first at line %d:\n  %s\n  %s"
                          % (len(a), len(b), first, a[first][:300] if first < len(a) else "-",
                             b[first][:300] if first < len(b) else "-"))
    lines = filt.decode().splitlines()
    # strict JSON, frames 0..n-1 in order, the pooled line last (the values are the filter's)
    check_ndjson(lines, [d["metrics"] for d in map(json.loads, lines) if d["type"] == "frame"])
    if ft.vmaf_score_line(err) != ft.vmaf_score_line(cli_err):
        raise TestFailure("pool=perc5: filter's VMAF score %s, CLI's %s"
                          % (ft.vmaf_score_line(err), ft.vmaf_score_line(cli_err)))
    return "%d NDJSON lines (%d bytes) equal, window and pooled lines included; VMAF score (perc5) %s" % (
        len(lines), len(filt), ft.vmaf_score_line(err))


def make_raw_clip(r, w, h, n):
    """Reference and distorted raw yuv420p clips of n frames (deterministic noise)."""
    rnd = random.Random(12)
    ref, dis = bytearray(), bytearray()
    for k in range(n):
        luma = bytes((40 + ((x * 3 + y * 5 + 7 * k) % 160)) for y in range(h) for x in range(w))
        noisy = bytes(min(255, max(0, v + rnd.randint(-12, 12))) for v in luma)
        chroma = bytes([128]) * (2 * (w // 2) * (h // 2))
        ref += luma + chroma
        dis += noisy + chroma
    paths = r.tmp("live_ref_%dx%d.yuv" % (w, h)), r.tmp("live_dis_%dx%d.yuv" % (w, h))
    for path, data in zip(paths, (ref, dis)):
        with open(path, "wb") as f:
            f.write(data)
    return paths


def rss_kib(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def device_mib(pid):
    """GPU memory of process pid (MiB) from nvidia-smi, or None."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory",
                              "--format=csv,noheader,nounits"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for line in out.splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) == 2 and cells[0] == str(pid) and cells[1].isdigit():
            return int(cells[1])
    return None


def flat(samples, frames, unit):
    """Checks samples (frames, value) after the first 10 % of frames: at most 5 % growth."""
    after = [(f, v) for f, v in samples if f >= frames // 10]
    if len(after) < 10:
        raise TestFailure("only %d %s samples after warm-up (%d in all): the run was too fast "
                          "to sample" % (len(after), unit, len(samples)))
    base = after[0][1]
    peak_frame, peak = max(after, key=lambda s: s[1])
    if peak > base * 1.05:
        raise TestFailure("%s grew from %d (frame %d) to %d (frame %d): +%.1f %%"
                          % (unit, base, after[0][0], peak, peak_frame, 100.0 * (peak - base) / base))
    return "%s %d after warm-up, peak %d (+%.2f %%)" % (unit, base, peak, 100.0 * (peak - base) / base)


def sampled_run(r, cmd, sample=True):
    """Runs ffmpeg `cmd` (with -progress pipe:1) to its end, sampling its VmRSS every 0.2 s
    and, with r.hw, its device memory every second, each against the frames output so far.
    Returns (frames output, [(frames, VmRSS KiB)], [(frames, device MiB)], stderr, exit code)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    progress = [0]
    samples, dev_samples, err_chunks = [], [], []

    def read_progress():
        for line in p.stdout:
            if line.startswith("frame="):
                progress[0] = int(line.split("=", 1)[1])

    threads = [threading.Thread(target=read_progress),
               threading.Thread(target=lambda: err_chunks.append(p.stderr.read()))]
    for t in threads:
        t.start()
    last_dev = 0.0
    while p.poll() is None:
        if sample:
            v = rss_kib(p.pid)
            if v:
                samples.append((progress[0], v))
            if r.hw and time.monotonic() - last_dev > 1.0:
                last_dev = time.monotonic()
                d = device_mib(p.pid)
                if d:
                    dev_samples.append((progress[0], d))
        time.sleep(0.2)
    for t in threads:
        t.join()
    return progress[0], samples, dev_samples, "".join(err_chunks), p.returncode


def long_run(r, options, frames, sample=True):
    w, h, clip = 64, 64, 50
    if frames % clip:
        raise TestFailure("--frames must be a multiple of %d" % clip)
    ref, dis = make_raw_clip(r, w, h, clip)
    raw = ["-f", "rawvideo", "-pix_fmt", "yuv420p", "-video_size", "%dx%d" % (w, h),
           "-framerate", "25", "-stream_loop", str(frames // clip - 1)]
    cmd = [r.ffmpeg, "-hide_banner", "-nostdin", "-y", "-nostats", "-progress", "pipe:1"] + \
        r.upload_device + raw + ["-i", dis] + raw + ["-i", ref] + \
        ["-lavfi", r.upload_graph + "vmaf_cuda=backend=%s" % r.backend + options, "-f", "null", "-"]
    if r.verbose:
        print("  $ " + " ".join(cmd), flush=True)
    progress, samples, dev_samples, err, rc = sampled_run(r, cmd, sample)
    if rc != 0:
        raise TestFailure("ffmpeg exited with %d:\n%s" % (rc, ft.tail(err)))
    if progress != frames:
        raise TestFailure("%d frames output, expected %d" % (progress, frames))
    r.dev_samples = dev_samples
    return samples, err


def t_memory_flat(r):
    frames = r.frames
    nd = r.tmp("long.ndjson")
    samples, err = long_run(r, ":window=2s:sei=1:log_fmt=ndjson:log_path=%s:window_log=1000" % nd, frames)
    if "not kept" not in err and "per-frame history" in err:
        raise TestFailure("the session kept the per-frame history")
    with open(nd) as f:
        n_lines = sum(1 for _ in f)
    if n_lines != frames + frames // 1000 + 1:
        raise TestFailure("%d NDJSON lines for %d frames" % (n_lines, frames))
    info = flat(samples, frames, "VmRSS KiB")
    if r.hw:
        info += "; " + flat(r.dev_samples, frames, "device MiB")
    return "%d frames, %d samples: %s" % (frames, len(samples), info)


def t_long_json_log(r):
    frames = r.frames
    log = r.tmp("long.json")
    _, err = long_run(r, ":log_fmt=json:log_path=%s" % log, frames, sample=False)
    with open(log) as f:
        doc = json.load(f)
    nums = [fr["frameNum"] for fr in doc["frames"]]
    if nums != list(range(frames)) or "vmaf" not in doc["pooled_metrics"]:
        raise TestFailure("JSON log: %d frames (first %s, last %s)" % (len(nums), nums[:1], nums[-1:]))
    if "%f" % doc["pooled_metrics"]["vmaf"]["mean"] != ft.vmaf_score_line(err):
        raise TestFailure("log mean %r vs VMAF score %s" % (doc["pooled_metrics"]["vmaf"]["mean"],
                                                           ft.vmaf_score_line(err)))
    return "JSON log of %d frames complete and valid" % frames


def t_latency(r):
    """Frames fed in real time (25 fps, 320x180, through named pipes): how long after both
    inputs of frame k were written its NDJSON line arrives. Reported (frames and ms); the
    check is loose (a busy machine): the median under 1 s."""
    w, h, n, fps = 320, 180, 250, 25.0
    names = [r.tmp("lat_%s.fifo" % k) for k in ("dis", "ref", "out")]
    for f in names:
        if os.path.exists(f):
            os.unlink(f)
        os.mkfifo(f)
    rnd = random.Random(5)
    luma = [bytes(rnd.randrange(30, 220) for _ in range(w * h)) for _ in range(4)]
    chroma = bytes([128]) * (2 * (w // 2) * (h // 2))
    raw = ["-f", "rawvideo", "-pix_fmt", "yuv420p", "-video_size", "%dx%d" % (w, h),
           "-framerate", "25"]
    cmd = [r.ffmpeg, "-hide_banner", "-nostdin", "-y", "-nostats"] + r.upload_device + raw + \
        ["-i", names[0]] + raw + ["-i", names[1]] + \
        ["-lavfi", r.upload_graph + "vmaf_cuda=backend=%s:log_fmt=ndjson:log_path=%s"
         % (r.backend, names[2]), "-f", "null", "-"]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    written = [[None] * n, [None] * n]
    arrived = {}
    err_chunks = []

    def feed(which):
        with open(names[which], "wb") as f:
            t0 = time.monotonic()
            for k in range(n):
                delay = t0 + k / fps - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                y = luma[k % 4] if which else bytes(min(255, v + 9) for v in luma[k % 4][:64]) + luma[k % 4][64:]
                f.write(y + chroma)
                f.flush()
                written[which][k] = time.monotonic()

    def read_out():
        with open(names[2]) as f:
            for line in f:
                d = json.loads(line)
                if d.get("type") == "frame":
                    arrived[d["frameNum"]] = time.monotonic()

    threads = [threading.Thread(target=feed, args=(0,)), threading.Thread(target=feed, args=(1,)),
               threading.Thread(target=read_out),
               threading.Thread(target=lambda: err_chunks.append(p.stderr.read()))]
    for t in threads:
        t.start()
    try:
        rc = p.wait(timeout=300)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = p.wait()
    for f in names:   # unblock a side still waiting in open()
        try:
            os.close(os.open(f, os.O_RDWR | os.O_NONBLOCK))
        except OSError:
            pass
    for t in threads:
        t.join(timeout=60)
    if rc != 0:
        raise TestFailure("ffmpeg exited with %d:\n%s" % (rc, ft.tail("".join(err_chunks))))
    if sorted(arrived) != list(range(n)):
        raise TestFailure("%d of %d frame lines" % (len(arrived), n))
    # steady state: leave out the first second (input probing) and the last frame (flush)
    lat = sorted(arrived[k] - max(written[0][k], written[1][k]) for k in range(int(fps), n - 1))
    med, p95 = lat[len(lat) // 2], lat[int(0.95 * len(lat))]
    if med > 1.0:
        raise TestFailure("median latency %.0f ms" % (med * 1000))
    return ("scores of frame k %.0f ms (%.2f frames) after its input, median; p95 %.0f ms, "
            "max %.0f ms (one frame of motion lookahead: >= %.0f ms)"
            % (med * 1000, med * fps, p95 * 1000, lat[-1] * 1000, 1000 / fps))


TESTS = [t_window_frames, t_window_perc_and_pool, t_window_duration_two_models, t_err_pool,
         t_err_window, t_err_window_log, t_ndjson_fifo, t_ndjson_stdout, t_sei, t_cli_ndjson,
         t_latency, t_memory_flat, t_long_json_log]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ffmpeg", required=True)
    ap.add_argument("--shared", required=True, help="folder with media/ and golden/")
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--skip", action="append", default=[], help="leave out tests whose name contains this")
    ap.add_argument("--workdir")
    ap.add_argument("--frames", type=int, default=30000, help="length of the long runs")
    ap.add_argument("--gpu", action="store_true",
                    help="NVDEC frames (BBB cases) and uploaded software frames (raw cases), backend=cuda; "
                         "device memory sampled too; exit 77 without a CUDA device")
    ap.add_argument("--cli", help="the vmaf-cuda CLI: its NDJSON is compared with the filter's "
                                  "(cli_ndjson; skipped without it)")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    if a.gpu and not ft.has_cuda_device():
        print("SKIPPED: no CUDA device found")
        return ft.SKIP_CODE
    r = ft.bbb_runner(a, "vmaf_cuda_live_")
    if isinstance(r, int):
        return r
    r.frames = a.frames
    r.hw = a.gpu
    r.backend = "cuda" if a.gpu else "cpu"
    # Raw inputs with --gpu: software frames that the CUDA backend uploads itself (each
    # hwupload_cuda makes a CUDA context of its own, and the filter refuses frames of two
    # contexts); the NVDEC cases above give CUDA frames.
    r.upload_device = []
    r.upload_graph = "[0:v][1:v]"
    r.cli = os.path.abspath(a.cli) if a.cli else None
    tests = [t for t in TESTS if not a.only or any(o in t.__name__ for o in a.only)]
    tests = [t for t in tests if not any(s in t.__name__ for s in a.skip)]
    return ft.run_tests(r, tests, "", r.workdir, keep=bool(a.workdir))


if __name__ == "__main__":
    sys.exit(main())

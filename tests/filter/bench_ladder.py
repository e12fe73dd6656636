#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause-Patent
"""A ladder of six renditions scored against one 4K reference: frames/s of our ffmpeg
(vmaf_cuda) next to the libvmaf anchor's ffmpeg (libvmaf_cuda), all on NVDEC frames.

    bench_ladder.py --ffmpeg OURS --anchor ANCHOR --clips DIR [--sw] [--companion]
                    [--pair-dir DIR] [--min-seconds S] [--timeout S] [--workdir DIR] [-v]

DIR holds ladder_ref_2160p.mp4 and ladder_{2160p,1440p,1080p,720p,540p,360p}.mp4
(tools/make-ladder-clips.sh). Every input is NVDEC-decoded to CUDA frames
(-hwaccel cuda -hwaccel_output_format cuda) and each rendition is upscaled to 3840x2160
by scale_cuda in the graph. Runs, each one ffmpeg process:
  a   decode + scale only (ours): seven inputs decoded, six scaled, into -f null
  a2  the same with the reference and renditions made yuv420p (the anchor's graph of d
      without libvmaf_cuda, which takes yuv420p or yuv444p16 only, not NVDEC's nv12)
  b   vmaf_cuda=renditions=6 (ours): six scaled renditions then the reference, six outputs
  c   six vmaf_cuda instances (ours), the reference split=6 into them
  d   six libvmaf_cuda instances (anchor), the same way on yuv420p frames
  e1..e3  one pair (2160p rendition vs reference): decode only, vmaf_cuda, libvmaf_cuda
frames/s = reference frames / wall seconds of the ffmpeg process; cpu = user + system
seconds of that process. Inputs are read several times (-stream_loop) so that each run
of a lasts --min-seconds (a is measured first, then repeated with more loops when it
was shorter; every other run uses a's loops).
Our scores (precision=max JSON logs) of b and c must be identical, frame by frame and
pooled, and e2's those of c's 2160p instance; libvmaf_cuda's are printed beside them
(not bit-exact with libvmaf's C code, so they differ slightly).

--companion (issue 9): on a 4K HEVC pair (--pair-dir, bbb_{dis,ref}_4k_hevc.mp4 as
tests/filter/bench.py makes them), the default model plus psnr, float_ssim, float_ms_ssim
and cambi: vmaf_cuda on NVDEC frames, libvmaf (CPU, --threads) on software-decoded and
on NVDEC + hwdownload frames, libvmaf with the features only (model=), and decode-only
baselines; wall and CPU time, and the pooled scores of both.

--sw: a dry run without a GPU: the same graphs with software decoding, scale instead of
scale_cuda, backend=cpu and libvmaf instead of libvmaf_cuda, at 640x360 and a few frames,
to check that every command line is accepted and its output parsed.
Standard library only. Exit status 1 when a run failed or scores that must be identical
are not.
"""

import argparse
import glob
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

RENDITIONS = ["2160p", "1440p", "1080p", "720p", "540p", "360p"]
REF = "ladder_ref_2160p.mp4"
FEATURES = "name=psnr|name=float_ssim|name=float_ms_ssim|name=cambi"
COMPANION_METRICS = ["vmaf", "psnr_y", "float_ssim", "float_ms_ssim", "cambi"]


class Bench:
    def __init__(self, a):
        self.a = a
        self.failed = []
        self.rows = []

    def run(self, name, ffmpeg, args):
        """One ffmpeg process: (wall s, cpu s, stderr) or None when it failed."""
        cmd = [ffmpeg, "-hide_banner", "-nostdin", "-y"] + args
        if self.a.verbose:
            print("  $ " + " ".join(cmd), flush=True)
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        try:
            p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True, errors="replace", timeout=self.a.timeout)
            rc, err = p.returncode, p.stderr
        except subprocess.TimeoutExpired as e:
            rc = "timeout (%d s)" % self.a.timeout
            err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        wall = time.monotonic() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        if rc != 0:
            tail = "\n".join([l for l in err.replace("\r", "\n").splitlines()
                              if not l.startswith(("frame=", " ", "Input #"))][-10:])
            print("FAILED %s (exit %s)%s\n%s" % (name, rc, ": " + " ".join(cmd) if self.a.verbose
                                              else " (-v prints the command)", tail), flush=True)
            self.failed.append(name)
            return None
        return wall, cpu, err

    def has_option(self, ffmpeg, filt, opt):
        p = subprocess.run([ffmpeg, "-hide_banner", "-h", "filter=" + filt],
                           capture_output=True, text=True, errors="replace")
        return re.search(r"^\s+%s\s" % re.escape(opt), p.stdout, re.M) is not None

    def probe(self, path):
        """(frames, fps) of a clip's first video stream, by a stream copy into null."""
        p = subprocess.run([self.a.ffmpeg, "-hide_banner", "-nostdin", "-i", path, "-map", "0:v:0",
                            "-c", "copy", "-f", "null", "-"], capture_output=True, text=True,
                           errors="replace")
        n = last_frame_count(p.stderr)
        m = re.search(r"Stream #0:\d+.*Video:.*?([\d.]+) fps", p.stderr)
        if p.returncode != 0 or n is None or not m:
            raise SystemExit("cannot read %s:\n%s" % (path, p.stderr[-2000:]))
        return n, float(m.group(1))


def last_frame_count(stderr):
    lines = [l for l in stderr.replace("\r", "\n").splitlines() if l.startswith("frame=")]
    m = re.search(r"frame=\s*(\d+)", lines[-1]) if lines else None
    return int(m.group(1)) if m else None


def read_log(path):
    """(per-frame metric dicts, pooled means) of a libvmaf-format JSON log, or None."""
    try:
        with open(path) as f:
            j = json.load(f)
    except (OSError, ValueError) as e:
        print("note: log %s not read: %s" % (path, e))
        return None
    frames = [fr["metrics"] for fr in j.get("frames", [])]
    pooled = {k: v.get("mean") for k, v in j.get("pooled_metrics", {}).items()}
    return frames, pooled


class Setup:
    """The inputs and filters of one mode (NVDEC + CUDA filters, or the --sw dry run)."""

    def __init__(self, a):
        self.sw = a.sw
        self.w, self.h = (640, 360) if a.sw else (3840, 2160)
        self.dec = ([] if a.sw else ["-hwaccel", "cuda", "-hwaccel_output_format", "cuda"]) + \
            a.dec_opts.split()
        self.backend = "cpu" if a.sw else "cuda"
        self.anchor_vmaf = "libvmaf" if a.sw else "libvmaf_cuda"

    def inputs(self, paths, loops, limit):
        args = []
        for p in paths:
            args += (["-stream_loop", str(loops - 1)] if loops > 1 else []) + \
                    (["-t", limit] if limit else []) + self.dec + ["-i", p]
        return args

    def scale(self, fmt=None):
        """Rendition to the reference size; fmt=yuv420p for libvmaf_cuda."""
        if self.sw:
            return "scale=%d:%d:flags=bicubic" % (self.w, self.h)
        return "scale_cuda=%d:%d" % (self.w, self.h) + (":format=" + fmt if fmt else "")

    def ref_filter(self, fmt=None):
        """The reference as the filters get it: unchanged on the GPU (nv12), or yuv420p."""
        if self.sw:
            return "scale=%d:%d:flags=bicubic" % (self.w, self.h)
        return "scale_cuda=format=" + fmt if fmt else "null"


def null_out(labels):
    args = []
    for l in labels:
        args += ["-map", l]
    return args + ["-c:v", "wrapped_avframe", "-f", "null", "-"]


def ladder_graphs(st, n, wd, extra=""):
    """filter_complex + output labels of each ladder run, inputs 0..n-1 renditions, n ref."""
    g = {}
    sc = ";".join("[%d:v]%s[s%d]" % (i, st.scale(), i) for i in range(n))
    sc420 = ";".join("[%d:v]%s[s%d]" % (i, st.scale("yuv420p"), i) for i in range(n))
    outs = ["[o%d]" % i for i in range(n)]
    split = "split=%d%s" % (n, "".join("[r%d]" % i for i in range(n)))
    ours = "vmaf_cuda=backend=%s:log_fmt=json:precision=max" % st.backend + (":" + extra if extra else "")
    dec_outs = ["[s%d]" % i for i in range(n)] + ["[o%d]" % n]
    g["a"] = ("ours", sc + ";[%d:v]%s[o%d]" % (n, st.ref_filter(), n), dec_outs)
    g["a2"] = ("anchor", sc420 + ";[%d:v]%s[o%d]" % (n, st.ref_filter("yuv420p"), n), dec_outs)
    g["b"] = ("ours", sc + ";[%d:v]%s[ref];%s[ref]%s:renditions=%d:log_path=%s%s" % (
        n, st.ref_filter(), "".join("[s%d]" % i for i in range(n)), ours, n,
        os.path.join(wd, "b_%d.json"), "".join(outs)), outs)
    g["c"] = ("ours", sc + ";[%d:v]%s,%s;" % (n, st.ref_filter(), split) + ";".join(
        "[s%d][r%d]%s:log_path=%s[o%d]" % (i, i, ours, os.path.join(wd, "c_%d.json" % i), i)
        for i in range(n)), outs)
    g["d"] = ("anchor", sc420 + ";[%d:v]%s,%s;" % (n, st.ref_filter("yuv420p"), split) + ";".join(
        "[s%d][r%d]%s=log_fmt=json:log_path=%s[o%d]" % (
            i, i, st.anchor_vmaf, os.path.join(wd, "d_%d.json" % i), i) for i in range(n)), outs)
    g["e1"] = ("ours", "[0:v]%s[o0];[1:v]%s[o1]" % (st.scale(), st.ref_filter()), ["[o0]", "[o1]"])
    g["e2"] = ("ours", "[0:v]%s[s0];[1:v]%s[r0];[s0][r0]%s:log_path=%s[o0]" % (
        st.scale(), st.ref_filter(), ours, os.path.join(wd, "e2_0.json")), ["[o0]"])
    g["e3"] = ("anchor", "[0:v]%s[s0];[1:v]%s[r0];[s0][r0]%s=log_fmt=json:log_path=%s[o0]" % (
        st.scale("yuv420p"), st.ref_filter("yuv420p"), st.anchor_vmaf,
        os.path.join(wd, "e3_0.json")), ["[o0]"])
    return g


TITLES = {
    "a": "decode + scale (ours)", "a2": "decode + scale, yuv420p (anchor)",
    "b": "vmaf_cuda renditions=6 (ours)", "c": "6 x vmaf_cuda, split (ours)",
    "d": "6 x %s, split (anchor)", "e1": "pair decode + scale (ours)",
    "e2": "pair vmaf_cuda (ours)", "e3": "pair %s (anchor)",
}


def logs_of(wd, run, n):
    """The run's JSON logs in rendition order (b: log_path's %d, 0- or 1-based)."""
    files = glob.glob(os.path.join(wd, "%s_*.json" % run))
    files.sort(key=lambda f: int(re.search(r"_(\d+)\.json$", f).group(1)))
    if len(files) < n:
        print("note: run %s wrote %d of its %d logs" % (run, len(files), n))
    return [read_log(f) for f in files[:n]] + [None] * (n - len(files))


def measure(bench, name, ffmpeg, mk_args, frames_per_loop, loops, adapt):
    """Runs mk_args(loops); with adapt, once more with more loops when it was too short."""
    r = bench.run(name, ffmpeg, mk_args(loops))
    if r and adapt and r[0] < bench.a.min_seconds:
        loops = max(loops + 1, int(loops * bench.a.min_seconds * 1.15 / max(r[0], 0.05)) + 1)
        r = bench.run(name, ffmpeg, mk_args(loops))
    if not r:
        return None, loops
    wall, cpu, err = r
    if wall < bench.a.min_seconds and not bench.a.sw:
        print("warning: %s lasted %.2f s only (--min-seconds %g)" % (name, wall, bench.a.min_seconds))
    frames = frames_per_loop * loops
    seen = last_frame_count(err)
    if seen is not None and seen != frames:
        print("warning: %s: %d output frames, expected %d" % (name, seen, frames))
    return {"wall": wall, "cpu": cpu, "frames": frames, "fps": frames / wall, "err": err}, loops


def fmt_row(key, title, m, scores):
    if not m:
        return "%-3s %-34s %s" % (key, title, "FAILED" if m is None else "skipped")
    return "%-3s %-34s %6d %7.2f %8.1f %7.1f  %s" % (
        key, title, m["frames"], m["wall"], m["fps"], m["cpu"], scores)


def pooled_str(logs, metric="vmaf"):
    return " ".join("%8.4f" % l[1][metric] if l and isinstance(l[1].get(metric), (int, float))
                    else "       ?" for l in logs)


def same_scores(x, y):
    """Frame by frame (every metric) and pooled, exactly."""
    return x is not None and y is not None and x[0] == y[0] and x[1] == y[1] and len(x[0]) > 0


def ladder(bench, st):
    a = bench.a
    n = len(RENDITIONS)
    wd = a.workdir
    clips = [os.path.join(a.clips, "ladder_%s.mp4" % r) for r in RENDITIONS] + [os.path.join(a.clips, REF)]
    for c in clips:
        if not os.path.exists(c):
            raise SystemExit("missing %s (tools/make-ladder-clips.sh makes it)" % c)
    ref_frames, fps = bench.probe(clips[-1])
    limit, per_loop = None, ref_frames
    if st.sw:
        per_loop = min(a.sw_frames, ref_frames)
        limit = "%.6f" % (per_loop / fps)
    graphs = ladder_graphs(st, n, wd, a.vmaf_opts)
    have_ladder = bench.has_option(a.ffmpeg, "vmaf_cuda", "renditions")
    res, loops = {}, {}
    for key in ["a", "a2", "b", "c", "d", "e1", "e2", "e3"]:
        who, fc, outs = graphs[key]
        if a.only and key not in a.only and key != "a":
            res[key] = False
            continue
        ff = a.ffmpeg if who == "ours" else a.anchor
        pair = key.startswith("e")
        ins = [clips[0], clips[-1]] if pair else clips
        for f in glob.glob(os.path.join(wd, "%s_*.json" % key)):
            os.remove(f)
        if key == "b" and not have_ladder:
            print("note: %s's vmaf_cuda has no renditions option: b skipped" % a.ffmpeg)
            res[key] = False
            continue
        base = 1 if st.sw else loops.get("a", a.loops)
        if key == "a" and not st.sw:
            # untimed warm-up: the first CUDA process JIT-compiles FFmpeg's PTX kernels
            # (scale_cuda) into the driver's cache and reads the clips into the page cache
            subprocess.run([ff, "-hide_banner", "-nostdin", "-y"] + st.inputs(ins, 1, None) +
                           ["-filter_complex", fc] + null_out(outs),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=a.timeout)
        mk = lambda l, ins=ins, fc=fc, outs=outs: st.inputs(ins, l, limit) + \
            ["-filter_complex", fc] + null_out(outs)
        res[key], loops[key] = measure(bench, key, ff, mk, per_loop, base, key == "a" and not st.sw)
    logs = {k: logs_of(wd, k, 1 if k.startswith("e") else n) for k in ("b", "c", "d", "e2", "e3")}

    print("\nladder: reference %s (%d frames, %.3g fps), renditions %s upscaled to %dx%d%s" % (
        REF, ref_frames, fps, " ".join(RENDITIONS), st.w, st.h,
        " [--sw dry run: software decode, backend=cpu, libvmaf]" if st.sw else ""))
    print("%-3s %-34s %6s %7s %8s %7s  %s" % ("run", "", "frames", "wall s", "ref fps", "cpu s",
                                              "VMAF " + " ".join("%8s" % r for r in RENDITIONS)))
    for key in ["a", "a2", "b", "c", "d", "e1", "e2", "e3"]:
        title = TITLES[key] % st.anchor_vmaf if "%s" in TITLES[key] else TITLES[key]
        print(fmt_row(key, title, res[key], pooled_str(logs[key]) if key in logs else ""))
    ok = True
    f = lambda k: res[k]["fps"] if res.get(k) else None
    ratios = [("b/a", "b", "a"), ("b/d", "b", "d"), ("c/a", "c", "a"), ("b/c", "b", "c"),
              ("d/a2", "d", "a2"), ("e2/e1", "e2", "e1"), ("e2/e3", "e2", "e3")]
    print("ratios (fps): " + "  ".join("%s %.2f" % (t, f(x) / f(y)) for t, x, y in ratios
                                         if f(x) and f(y)))
    if res.get("b") and res.get("c"):
        same = [same_scores(x, y) for x, y in zip(logs["b"], logs["c"])]
        print("b == c (every frame and metric, pooled): %s" % " ".join(
            "%s:%s" % (r, "yes" if s else "NO") for r, s in zip(RENDITIONS, same)))
        ok &= all(same)
    if res.get("c") and res.get("e2"):
        s = same_scores(logs["c"][0], logs["e2"][0])
        print("e2 == c's 2160p: %s" % ("yes" if s else "NO"))
        ok &= s
    if res.get("c") and res.get("d"):
        num = lambda l: isinstance(l[1].get("vmaf"), (int, float)) if l else False
        d = [abs(x[1]["vmaf"] - y[1]["vmaf"]) if num(x) and num(y) else float("nan")
             for x, y in zip(logs["c"], logs["d"])]
        print("|c - d| pooled VMAF: " + " ".join("%.4f" % v for v in d))
    if not st.sw:
        print("loops (-stream_loop + 1): " + " ".join("%s=%d" % kv for kv in loops.items()))
    return ok


def companion(bench, st):
    a = bench.a
    dis = os.path.join(a.pair_dir, "bbb_dis_4k_hevc.mp4")
    ref = os.path.join(a.pair_dir, "bbb_ref_4k_hevc.mp4")
    for c in (dis, ref):
        if not os.path.exists(c):
            raise SystemExit("missing %s (tests/filter/bench.py makes it on a GPU machine)" % c)
    ref_frames, fps = bench.probe(ref)
    wd = a.workdir
    limit, per_loop = None, ref_frames
    if st.sw:
        per_loop = min(a.sw_frames, ref_frames)
        limit = "%.6f" % (per_loop / fps)
    feats = "feature='%s'" % FEATURES
    small = ",scale=%d:%d" % (st.w, st.h) if st.sw else ""
    pre = "[0:v]null%s[d];[1:v]null%s[r];" % (small, small)
    nvdec = [] if st.sw else ["-hwaccel", "cuda", "-hwaccel_output_format", "cuda"]
    down = "" if st.sw else ",hwdownload,format=nv12,format=yuv420p"
    lv = "[d][r]libvmaf=%s:n_threads=%d:log_fmt=json:log_path=%s"
    # key, title, ffmpeg, NVDEC, graph, log, loops: a run's key (its loops; the run itself:
    # measured until it lasts --min-seconds) or a number (libvmaf on the CPU: --cpu-loops)
    runs = [
        ("n1", "decode NVDEC (ours)", a.ffmpeg, True, pre.rstrip(";").replace("[d]", "[o0]")
         .replace("[r]", "[o1]"), None, "n1"),
        ("n2", "vmaf_cuda + features, NVDEC (ours)", a.ffmpeg, True,
         pre + "[d][r]vmaf_cuda=backend=%s:%s:log_fmt=json:precision=max:log_path=%s[o0]" % (
             st.backend, feats, os.path.join(wd, "n2.json")), "n2", "n1"),
        ("s1", "decode software (anchor)", a.anchor, False,
         pre.rstrip(";").replace("[d]", "[o0]").replace("[r]", "[o1]"), None, "s1"),
        ("s2", "libvmaf + features, sw decode (anchor)", a.anchor, False,
         pre + (lv % (feats, a.threads, os.path.join(wd, "s2.json"))) + "[o0]", "s2", a.cpu_loops),
        ("s3", "libvmaf + features, NVDEC+hwdownload", a.anchor, True,
         "[0:v]null%s%s[d];[1:v]null%s%s[r];" % (down, small, down, small)
         + (lv % (feats, a.threads, os.path.join(wd, "s3.json"))) + "[o0]", "s3", a.cpu_loops),
        ("s4", "libvmaf features only (model=), sw", a.anchor, False,
         pre + (lv % ("model=:" + feats, a.threads, os.path.join(wd, "s4.json"))) + "[o0]",
         "s4", a.cpu_loops),
    ]
    res, loops = {}, {}
    for key, title, ff, hw, fc, log, loops_of in runs:
        if log:
            for f in glob.glob(os.path.join(wd, log + ".json")):
                os.remove(f)
        outs = ["[o0]", "[o1]"] if log is None else ["[o0]"]
        dec = nvdec if hw else []
        mk = lambda l, fc=fc, outs=outs, dec=dec: sum(
            [(["-stream_loop", str(l - 1)] if l > 1 else []) + (["-t", limit] if limit else [])
             + dec + ["-i", p] for p in (dis, ref)], []) + ["-filter_complex", fc] + null_out(outs)
        if isinstance(loops_of, int):
            start = loops_of
        else:
            start = loops.get(loops_of, a.loops if hw else a.cpu_loops)
        if st.sw:
            start = 1
        res[key], loops[key] = measure(bench, key, ff, mk, per_loop, start,
                                       loops_of == key and not st.sw)
        res[key + "_title"] = title
        res[key + "_log"] = read_log(os.path.join(wd, log + ".json")) if log and res[key] else None
    print("\ncompanion: %s vs %s (%d frames, %.3g fps), model vmaf_v0.6.1 + %s, libvmaf n_threads=%d%s" % (
        os.path.basename(dis), os.path.basename(ref), ref_frames, fps, FEATURES, a.threads,
        " [--sw dry run]" if st.sw else ""))
    print("%-3s %-38s %6s %7s %8s %7s %8s %6s  %s" % (
        "run", "", "frames", "wall s", "fps", "cpu s", "cpu ms/f", "cores",
        " ".join("%13s" % m for m in COMPANION_METRICS)))
    for key, *_ in runs:
        m, lg = res[key], res[key + "_log"]
        if not m:
            print("%-3s %-38s FAILED" % (key, res[key + "_title"]))
            continue
        sc = " ".join("%13.6f" % lg[1][k] if lg and k in lg[1] else "%13s" % "-" for k in COMPANION_METRICS)
        print("%-3s %-38s %6d %7.2f %8.1f %7.1f %8.2f %6.2f  %s" % (
            key, res[key + "_title"], m["frames"], m["wall"], m["fps"], m["cpu"],
            1000 * m["cpu"] / m["frames"], m["cpu"] / m["wall"], sc))
    if res.get("n2") and res.get("s2"):
        x, y = res["n2_log"], res["s2_log"]
        if x and y:
            ks = [k for k in COMPANION_METRICS if k in x[1] and k in y[1]]
            print("|n2 - s2| pooled: " + " ".join("%s %.2g" % (k, abs(x[1][k] - y[1][k])) for k in ks)
                  + " (libvmaf's log has 6 decimals); equal to 6 decimals: " + " ".join(
                      "%s %s" % (k, "yes" if "%.6f" % x[1][k] == "%.6f" % y[1][k] else "NO") for k in ks))
        print("fps n2/s2 %.2f   cpu per frame s2/n2 %.1f" % (
            res["n2"]["fps"] / res["s2"]["fps"],
            (res["s2"]["cpu"] / res["s2"]["frames"]) / max(res["n2"]["cpu"] / res["n2"]["frames"], 1e-9)))
    if not st.sw:
        print("loops (-stream_loop + 1): " + " ".join("%s=%d" % kv for kv in loops.items()))
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ffmpeg", required=True, help="our ffmpeg (vmaf_cuda)")
    ap.add_argument("--anchor", required=True, help="the anchor's ffmpeg (libvmaf, libvmaf_cuda)")
    ap.add_argument("--clips", help="the ladder clips (tools/make-ladder-clips.sh)")
    ap.add_argument("--companion", action="store_true", help="the issue 9 companion table instead")
    ap.add_argument("--pair-dir", help="bbb_{dis,ref}_4k_hevc.mp4 for --companion")
    ap.add_argument("--sw", action="store_true", help="dry run without a GPU (640x360, few frames)")
    ap.add_argument("--sw-frames", type=int, default=12, help="frames per input with --sw")
    ap.add_argument("--loops", type=int, default=4, help="first -stream_loop count + 1 (default 4)")
    ap.add_argument("--min-seconds", type=float, default=5.0, help="shortest decode-only run")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per ffmpeg process")
    ap.add_argument("--threads", type=int, default=16, help="libvmaf n_threads (--companion)")
    ap.add_argument("--cpu-loops", type=int, default=1,
                    help="reads of each input for libvmaf on the CPU (--companion; default 1)")
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "bench_ladder"))
    ap.add_argument("--vmaf-opts", default="", help="more vmaf_cuda options (b, c, e2), e.g. prefetch=16")
    ap.add_argument("--dec-opts", default="",
                    help="more input options for every input of every ladder run, the decode-only "
                         "ones too, e.g. \"-thread_queue_size 256\"")
    ap.add_argument("--only", type=lambda v: v.split(","), default=None,
                    help="ladder runs to make, e.g. b,c (a always runs: it sets the loops)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each command")
    a = ap.parse_args()
    a.ffmpeg, a.anchor = os.path.abspath(a.ffmpeg), os.path.abspath(a.anchor)
    os.makedirs(a.workdir, exist_ok=True)
    bench, st = Bench(a), Setup(a)
    if a.companion:
        if not a.pair_dir:
            ap.error("--companion needs --pair-dir")
        ok = companion(bench, st)
    else:
        if not a.clips:
            ap.error("--clips is needed")
        ok = ladder(bench, st)
    if bench.failed:
        print("failed runs: " + " ".join(bench.failed))
    return 0 if ok and not bench.failed else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause-Patent
"""Encoder ladders in the filter: vmaf_cuda=renditions=N against separate two-input runs.

    ladder_test.py --ffmpeg PATH --shared DIR [--gpu] [--only NAME ...] [--skip NAME ...]
                   [--workdir DIR] [--clip-ffmpeg PATH] [--frames N]

Each case runs one ffmpeg with vmaf_cuda=renditions=N (inputs main0..mainN-1 + reference,
outputs out0..outN-1) and, for every rendition k, a separate two-input vmaf_cuda of that
rendition against the reference, with the same options and the same per-input filters;
then, per rendition, compares value for value: the JSON log (log_fmt=json, precision=max:
every frame's metrics and the pooled metrics, as text), the metadata of every output
frame (metadata=print), the output frames themselves (rawvideo, sha256), the pairs and
unscored frames of the -loglevel debug lines, the warnings and the "VMAF score:" lines
(the ladder's carry a "rendition k: " prefix, taken off for the comparison). Cases:
renditions of different quality; of different lengths (default, shortest=1,
eof_action=pass, prefetch=0); other frame rates, start times, dropped frames, MKV time
bases with ts_sync_mode=nearest; -frames:v on every output and on one; n_subsample with
live QA (window, NDJSON with window lines, SEI through showinfo); upscaled renditions
(scale= per rendition, docs/ladders.md's recipe); psnr with a v1.0.16 model (chroma, SpEED);
a rendition that pairs nothing; the errors (a rendition of another size, log_path without
%d); flat memory over a long run (VmRSS) and, with valgrind installed, no leak.

Without --gpu: software frames, backend=cpu. With --gpu: NVDEC frames (-hwaccel cuda
-hwaccel_output_format cuda), scale_cuda for the upscaled renditions, the CUDA backend,
device memory sampled in the long run; "SKIPPED: no CUDA device found" and exit 77
without a device. Clips are made with the system ffmpeg (--clip-ffmpeg, with libx264) in
the work folder; clips already there are used as they are (a GPU machine gets them from
tools/device-bundle.sh). Standard library only.
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import filter_test as ft
import live_test as lt
import parity_cases
from filter_test import TestFailure

SIZE = (176, 144)
LINE_RE = re.compile(r"^\[Parsed_vmaf_cuda_\d+ @ [^]]*\] \[(\w+)\] (?:rendition (\d+): )?(.*)$")
PAIR_RE = re.compile(r"^pair (\d+): main (\S+) s, reference (\S+) s$")
SEND_RE = re.compile(r"^ladder send (\d+): reference frame (\d+), renditions ([\d ]*)$")
SHOWINFO_RE = re.compile(r"\[Parsed_showinfo_(\d+) @ ")

# Clips of this test (beside parity_cases.CLIP_NAMES), made by LadderClips.get.
CLIP_NAMES = ["q20.mp4", "q45.mp4", "dist45.mp4", "dist_late.mkv", "small128.mp4",
              "small88.mp4", "ref240.mp4", "q25_240.mp4", "q40_240.mp4"]


class LadderClips(parity_cases.Clips):
    """parity_cases' clips plus the ladder's: other qualities, a longer rendition, one that
    starts after the reference's end, smaller renditions, and 320x240 clips (v1.0.16's
    cambi needs 216 rows)."""

    def get(self, name):
        path = self.r.tmp("clip_" + name)
        if os.path.exists(path) or name not in CLIP_NAMES:
            return super().get(name)
        self._check()
        src = lambda size, d=1: ["-f", "lavfi", "-i", "testsrc2=size=%s:rate=30:duration=%s"
                                 % (size, d)]
        enc = lambda crf: ["-c:v", "libx264", "-crf", str(crf), "-pix_fmt", "yuv420p"]
        recipes = {
            "q20.mp4": src("176x144") + enc(20),
            "q45.mp4": src("176x144") + enc(45),
            "dist45.mp4": src("176x144", 1.5) + enc(35),
            "small128.mp4": src("176x144") + ["-vf", "scale=128:96"] + enc(25),
            "small88.mp4": src("176x144") + ["-vf", "scale=88:72"] + enc(25),
            "ref240.mp4": src("320x240") + enc(5),
            "q25_240.mp4": src("320x240") + enc(25),
            "q40_240.mp4": src("320x240") + enc(40),
            # the distorted clip two seconds late (MKV keeps its timestamps): read with
            # -copyts it starts after the reference (one second) has ended
            "dist_late.mkv": ["-i", self.get("dist.mp4"), "-vf", "setpts=PTS+2/TB"] + enc(35),
        }
        self._run(recipes[name] + [path])
        return path


class Run:
    """One ffmpeg run of vmaf_cuda: per rendition, what the comparison reads."""

    def __init__(self, n):
        self.log = [None] * n        # JSON log: {"frames": [...], "pooled": {...}} as text
        self.meta = [""] * n         # metadata=print file
        self.raw = [None] * n        # (sha256, bytes) of the output frames
        self.pairs = [[] for _ in range(n)]
        self.unscored = [[] for _ in range(n)]
        self.warnings = [[] for _ in range(n)]
        self.errors = [[] for _ in range(n)]
        self.scores = [[] for _ in range(n)]
        self.sends = []               # (send, reference frame, [renditions])
        self.general = []             # the ladder's messages about no one rendition
        self.order = []               # (rendition, "warning" | "score") in stderr order
        self.ndjson = [None] * n
        self.sei = [[] for _ in range(n)]
        self.rc = 0
        self.err = ""


def run_vmaf(r, dists, ref, opts="", name="run", pre=None, extra=(), out_args=None,
             expect_ok=True, log=True, sei=False, ndjson=False, raw=True, debug=True, meta=True):
    """Runs vmaf_cuda on the clips `dists` against `ref`: two inputs without renditions=
    for one clip, renditions=N for N. pre: per rendition, the filters before vmaf_cuda
    (None: none); out_args: per output, extra output options (-frames:v)."""
    n = len(dists)
    hw = r.hw
    hwargs = ["-hwaccel", "cuda", "-hwaccel_output_format", "cuda"] if hw else []
    parts = ["[%d:v]%s[m%d];" % (k, pre[k], k) for k in range(n) if pre and pre[k]]
    ins = "".join("[m%d]" % k if pre and pre[k] else "[%d:v]" % k for k in range(n))
    base = r.tmp(name)
    items = (["renditions=%d" % n] if n > 1 else []) + ([] if hw else ["backend=cpu"])
    if ndjson:
        items += ["log_fmt=ndjson", "log_path=%s_%s.ndjson" % (base, "%d" if n > 1 else "0")]
    elif log:
        items += ["log_fmt=json", "log_path=%s_%s.json" % (base, "%d" if n > 1 else "0"),
                  "precision=max"]
    vm = "vmaf_cuda=" + ":".join(items) + (opts if items else opts.lstrip(":"))
    outs = "".join("[o%d]" % k for k in range(n))
    graph = "".join(parts) + ins + "[%d:v]" % n + vm + outs
    for k in range(n):
        chain = ["metadata=print:file=%s_%d.meta" % (base, k)] if meta else []
        if sei:
            chain.append("showinfo=checksum=0")
        if raw and hw:
            chain.append("hwdownload,format=nv12")
        if chain:
            graph += ";[o%d]%s[p%d]" % (k, ",".join(chain), k)
    # (showinfo prints a payload in pieces: other threads' debug lines would split it)
    args = ["-loglevel", "level+debug" if debug else "level+info", "-nostats"] + list(extra)
    for d in dists + [ref]:
        args += hwargs + ["-i", d]
    args += ["-an", "-lavfi", graph]
    for k in range(n):
        # (mapped straight from the filter without one after it: -frames:v then counts
        # what the filter counts, see t_frames_limit)
        args += ["-map", "[%s%d]" % ("p" if meta or sei or (raw and hw) else "o", k)]
        args += list(out_args[k] if out_args else [])
        if raw:
            args += ["-c:v", "rawvideo", "-f", "rawvideo", "%s_%d.yuv" % (base, k)]
        else:
            args += ["-f", "null", "-"]
    for k in range(n):
        for ext in (".json", ".ndjson", ".meta", ".yuv"):
            if os.path.exists("%s_%d%s" % (base, k, ext)):
                os.unlink("%s_%d%s" % (base, k, ext))
    rc, err, _ = r.ffmpeg_run(args, expect_ok=expect_ok)
    res = Run(n)
    res.rc, res.err = rc, err
    for line in err.splitlines():
        m = LINE_RE.match(line)
        if not m:
            continue
        level, k, msg = m.group(1), int(m.group(2) or 0), m.group(3)
        # messages that name the rendition's own log: the same words as a separate run's
        msg = msg.replace("%s_%d." % (base, k), "<the log>.")
        if n > 1 and m.group(2) is None:
            sm = SEND_RE.match(msg)
            if sm:
                res.sends.append((int(sm.group(1)), int(sm.group(2)),
                                  [int(x) for x in sm.group(3).split()]))
            elif level in ("warning", "error"):
                res.general.append(msg)
            continue
        pm = PAIR_RE.match(msg)
        if pm:
            res.pairs[k].append((int(pm.group(1)), pm.group(2), pm.group(3)))
        elif msg.startswith("unscored: "):
            res.unscored[k].append(msg)
        elif "VMAF score: " in msg or ", ci.p95: [" in msg:
            res.scores[k].append(msg)
            res.order.append((k, "score"))
        elif level == "warning":
            res.warnings[k].append(msg)
            res.order.append((k, "warning"))
        elif level == "error":
            res.errors[k].append(msg)
    if sei:
        # showinfo instances are numbered in graph order: output k's is the k-th
        blocks = {}
        for chunk in re.split(r"(?=\[Parsed_showinfo_\d+ @ )", err):
            m = SHOWINFO_RE.match(chunk)
            if m:
                blocks.setdefault(int(m.group(1)), []).append(chunk)
        for k, inst in enumerate(sorted(blocks)):
            res.sei[k] = [p for u, p in lt.sei_payloads("".join(blocks[inst])) if u == lt.SEI_UUID]
    for k in range(n):
        path = "%s_%d" % (base, k)
        if os.path.exists(path + ".json"):
            with open(path + ".json") as f:
                doc = json.load(f, parse_float=str, parse_int=str)
            res.log[k] = {"frames": doc["frames"], "pooled": doc["pooled_metrics"]}
        if os.path.exists(path + ".ndjson"):
            with open(path + ".ndjson") as f:
                res.ndjson[k] = f.read()
        if os.path.exists(path + ".meta"):
            with open(path + ".meta") as f:
                res.meta[k] = f.read()
        if os.path.exists(path + ".yuv"):
            with open(path + ".yuv", "rb") as f:
                data = f.read()
            res.raw[k] = (hashlib.sha256(data).hexdigest(), len(data))
    return res


def frames_of(raw):
    return raw[1] * 2 // (3 * SIZE[0] * SIZE[1]) if raw else 0


def compare(label, lad, k, one):
    """Rendition k of the ladder run `lad` against the two-input run `one`."""
    what = "%s, rendition %d" % (label, k)
    checks = [("JSON log", lad.log[k], one.log[0]), ("NDJSON log", lad.ndjson[k], one.ndjson[0]),
              ("metadata", lad.meta[k], one.meta[0]), ("output frames", lad.raw[k], one.raw[0]),
              ("pairs", lad.pairs[k], one.pairs[0]), ("unscored frames", lad.unscored[k], one.unscored[0]),
              ("warnings", lad.warnings[k], one.warnings[0]), ("errors", lad.errors[k], one.errors[0]),
              ("VMAF score lines", lad.scores[k], one.scores[0]), ("SEI payloads", lad.sei[k], one.sei[0])]
    for name, a, b in checks:
        if a != b:
            if name == "JSON log" and a and b:
                diff = [i for i, (x, y) in enumerate(zip(a["frames"], b["frames"])) if x != y]
                raise TestFailure("%s: %s differs (%d vs %d frames; first differing frame %s; "
                                  "pooled equal: %s)" % (what, name, len(a["frames"]),
                                  len(b["frames"]), diff[:1], a["pooled"] == b["pooled"]))
            raise TestFailure("%s: %s differ:\n  ladder:   %s\n  separate: %s"
                              % (what, name, str(a)[:600], str(b)[:600]))


def ladder_vs_separate(r, label, dists, ref, opts="", pre=None, extra=(), out_args=None,
                       expect_ok=True, **kw):
    """The ladder of `dists` and each rendition alone; returns (ladder run, separate runs)."""
    name = re.sub(r"\W+", "_", label)
    lad = run_vmaf(r, dists, ref, opts, name, pre, extra, out_args, expect_ok, **kw)
    expect(not lad.general, "%s: %s" % (label, lad.general))
    ones = []
    for k, d in enumerate(dists):
        one = run_vmaf(r, [d], ref, opts, "%s_sep%d" % (name, k), [pre[k]] if pre else None,
                       extra, [out_args[k]] if out_args else None, expect_ok, **kw)
        compare(label, lad, k, one)
        ones.append(one)
    return lad, ones


def summary(lad):
    return ", ".join("r%d: %d pairs%s" % (
        k, len(lad.pairs[k]),
        (", " + lad.scores[k][0].split("VMAF score: ")[1]) if lad.scores[k] else "")
        for k in range(len(lad.pairs)))


def expect(cond, msg):
    if not cond:
        raise TestFailure(msg)


# ------------------------------------------------------------------ cases

def t_aligned(r):
    """Three renditions of different quality, two models (one a bootstrap collection)."""
    c = r.clips
    dists = [c.get("q20.mp4"), c.get("dist.mp4"), c.get("q45.mp4")]
    lad, ones = ladder_vs_separate(r, "aligned", dists, c.get("ref.mp4"),
                                   ":model=version=vmaf_v0.6.1|version=vmaf_b_v0.6.3")
    expect(all(len(lad.log[k]["frames"]) == 30 and frames_of(lad.raw[k]) == 30 for k in range(3)),
           "aligned: not 30 frames logged and output per rendition")
    expect(lad.sends == [(i, i, [0, 1, 2]) for i in range(30)],
           "aligned: sends %s, expected one per reference frame with all three" % lad.sends[:5])
    means = [float(lad.log[k]["pooled"]["vmaf"]["mean"]) for k in range(3)]
    expect(means[0] > means[1] > means[2], "aligned: means %s not in quality order" % means)
    # one "VMAF score:" line per rendition and model, then the collection's, in order
    lines = [l for l in lad.err.splitlines() if "VMAF score: " in l or ", ci.p95: [" in l]
    order = [int(l.split("rendition ")[1].split(":")[0]) for l in lines]
    expect(order == [0, 0, 0, 1, 1, 1, 2, 2, 2] and
           all(lad.scores[k][0].startswith("VMAF score: ") for k in range(3)),
           "aligned: score lines %s" % lines)
    return "30 sends of 3 renditions, each equal to its separate run; %s" % summary(lad)


def t_lengths(r):
    """One rendition shorter than the reference, one longer, one aligned."""
    c = r.clips
    dists = [c.get("dist20.mp4"), c.get("dist45.mp4"), c.get("dist.mp4")]
    done = []
    for opts, want in (("", [30, 45, 30]), (":shortest=1", [20, 30, 30]),
                       (":eof_action=pass", [20, 45, 30]), (":repeatlast=0", [20, 45, 30]),
                       (":prefetch=0", [30, 45, 30])):
        label = "lengths" + opts.replace(":", " ").replace("=", "_")
        lad, _ = ladder_vs_separate(r, label, dists, c.get("ref.mp4"), opts)
        out = [frames_of(x) for x in lad.raw]
        expect(out == want, "%s: %s frames out, expected %s" % (label, out, want))
        # The renditions end at different times; their end-of-stream warnings still come
        # in rendition order, each rendition's before its score line.
        expect(lad.order == sorted(lad.order, key=lambda e: (e[0], e[1] == "score")),
               "%s: warnings and score lines out of rendition order: %s" % (label, lad.order))
        expect(opts or any(kind == "warning" for _, kind in lad.order), "%s: no warning" % label)
        done.append("%s: %s out" % (opts.lstrip(":") or "default", out))
    return "each rendition equal to its separate run; " + "; ".join(done)


def t_rates_offsets(r):
    """A 60 fps rendition, one starting 0.5 s late (-copyts), one with dropped frames."""
    c = r.clips
    dists = [c.get("dist60.mp4"), c.get("dist_off.mp4"), c.get("dist_vfr.mp4")]
    lad, _ = ladder_vs_separate(r, "rates", dists, c.get("ref.mp4"), extra=["-copyts"])
    expect([len(p) for p in lad.pairs] == [60, 15, 24], "rates: pairs %s" % [len(p) for p in lad.pairs])
    expect(all(lad.warnings[k] for k in range(3)), "rates: a rendition without warnings")
    two = sum(1 for s in lad.sends if len(s[2]) > 1)
    return "pairs 60/15/24, warnings per rendition equal; %d of %d sends shared" % (two, len(lad.sends))


def t_timebases(r):
    """MKV (1 ms) against MP4 time bases, default and ts_sync_mode=nearest."""
    c = r.clips
    dists = [c.get("dist24.mkv"), c.get("dist24.mp4")]
    done = []
    for opts in ("", ":ts_sync_mode=nearest"):
        lad, _ = ladder_vs_separate(r, "timebases" + opts.replace(":", "_").replace("=", "_"),
                                    dists, c.get("ref24.mp4"), opts)
        done.append("%s: warnings %s" % (opts.lstrip(":") or "default",
                                          [len(w) for w in lad.warnings]))
    return "; ".join(done)


def t_ts_reset(r):
    """Rendition 1's timestamps reset to 0 at its frame 12 (setpts): warned for it alone,
    paired on its continuous timeline, equal to its separate run; the reference and the
    other rendition untouched."""
    c = r.clips
    dists = [c.get("dist.mp4"), c.get("dist.mp4")]
    reset = "setpts=if(gte(N\\,12)\\,PTS-12/(30*TB)\\,PTS)"
    lad, _ = ladder_vs_separate(r, "ts_reset", dists, c.get("ref.mp4"), pre=[None, reset])
    want = ["the main input's timestamps go back from 0.366667 s to 0 s at its frame 12 (a "
            "reset or a wrap): its frames from there are paired as if they followed on at 0.4 s"]
    expect(lad.warnings == [[], want], "ts_reset: warnings %s" % lad.warnings)
    expect(lad.log[0]["frames"] == lad.log[1]["frames"] and len(lad.log[1]["frames"]) == 30,
           "ts_reset: rendition 1's log differs from rendition 0's (the same clip)")
    return "rendition 1 warned, its 30 frames scored as rendition 0's, equal to its separate run"


def t_frames_limit(r):
    """-frames:v N on every output (mapped straight from the filter): each rendition's log
    and score equal those of a separate two-input run with -frames:v N, exactly (fftools
    reports where each output was closed: the integration patch). On one output only:
    that rendition's log covers its first N frames, the others all theirs; the same as
    trim=end_frame=N on its input with shortest=1."""
    c = r.clips
    ref = c.get("ref.mp4")
    dists = [c.get("q20.mp4"), c.get("dist.mp4"), c.get("q45.mp4")]
    ten = [["-frames:v", "10"]] * 3
    lad = run_vmaf(r, dists, ref, name="frames_all", out_args=ten, meta=False, raw=False)
    sep = [run_vmaf(r, [d], ref, name="frames_sep%d" % k, out_args=ten[:1], meta=False, raw=False)
           for k, d in enumerate(dists)]
    for k in range(3):
        took, base = len(lad.log[k]["frames"]), sep[k]
        expect(took == 10 and len(base.log[0]["frames"]) == 10 and lad.log[k] == base.log[0] and
               lad.scores[k] == base.scores[0],
               "-frames:v 10 on every output: rendition %d: %d frames logged, separate run %d, "
               "logs equal: %s" % (k, took, len(base.log[0]["frames"]), lad.log[k] == base.log[0]))
    one = run_vmaf(r, dists, ref, name="frames_one", out_args=[[], ["-frames:v", "10"], []])
    full = [run_vmaf(r, [d], ref, name="frames_full%d" % k) for k, d in enumerate(dists)]
    for k in (0, 2):
        expect(one.log[k] == full[k].log[0], "-frames:v 10 on output 1: rendition %d's log "
               "differs from the whole separate run" % k)
    expect(one.log[1] == sep[1].log[0] and one.scores[1] == sep[1].scores[0],
           "-frames:v 10 on output 1: rendition 1's log (%d frames) differs from the separate "
           "-frames:v 10 run" % len(one.log[1]["frames"]))
    expect([frames_of(x) for x in one.raw] == [30, 10, 30],
           "-frames:v 10 on output 1: %s frames out" % [frames_of(x) for x in one.raw])
    cut = run_vmaf(r, dists, ref, ":shortest=1", "frames_trim", pre=[None, "trim=end_frame=10", None])
    compare("trim=end_frame=10 + shortest=1", cut, 0, full[0])
    compare("trim=end_frame=10 + shortest=1", cut, 2, full[2])
    expect(cut.log[1] == sep[1].log[0] and cut.scores[1] == sep[1].scores[0],
           "trim=end_frame=10 + shortest=1: rendition 1's log differs from the separate "
           "-frames:v 10 run")
    return ("-frames:v 10 on every output: logs and scores equal to separate -frames:v 10 runs; "
            "on output 1 only: 30/10/30 out, rendition 1 logs its 10, the others whole; "
            "trim=end_frame=10 + shortest=1: the same")


def t_subsample_live(r):
    c = r.clips
    dists = [c.get("q20.mp4"), c.get("dist20.mp4"), c.get("q45.mp4")]
    lad, _ = ladder_vs_separate(r, "live", dists, c.get("ref.mp4"),
                                ":n_subsample=3:window=5:window_log=4:sei=1:precision=max",
                                ndjson=True, sei=True, debug=False)
    for k in range(3):
        lines = lad.ndjson[k].splitlines()
        expect(len(lad.sei[k]) == 10 and len(lines) == 10 + 2 + 1 and
               "lavfi.vmaf.window.mean" in lad.meta[k],
               "live: rendition %d: %d SEI, %d NDJSON lines" % (k, len(lad.sei[k]), len(lines)))
    return "n_subsample=3, window, NDJSON (frame, window, pooled lines), SEI: equal per rendition"


def t_upscaled(r):
    """Smaller renditions scaled to the reference's size in the graph (docs/ladders.md's recipe)."""
    c = r.clips
    w, h = SIZE
    scale = ("scale_cuda=%d:%d" if r.hw else "scale=%d:%d") % (w, h)
    dists = [c.get("small88.mp4"), c.get("small128.mp4"), c.get("dist.mp4")]
    lad, _ = ladder_vs_separate(r, "upscaled", dists, c.get("ref.mp4"), pre=[scale, scale, None])
    return "%s on two renditions: %s" % (scale, summary(lad))


def t_psnr_v1016(r):
    c = r.clips
    dists = [c.get("q25_240.mp4"), c.get("q40_240.mp4")]
    lad, _ = ladder_vs_separate(r, "psnr_v1016", dists, c.get("ref240.mp4"),
                                ":feature=name=psnr:model=version=vmaf_v1.0.16_3d0h")
    keys = set(lad.log[0]["frames"][0]["metrics"])
    expect({"psnr_cb", "psnr_cr"} <= keys and any("speed" in k for k in keys),
           "psnr_v1016: metrics %s" % sorted(keys))
    return "psnr (luma, chroma) + vmaf_v1.0.16_3d0h (%d metrics): %s" % (len(keys), summary(lad))


def t_no_pair(r):
    """eof_action=pass with a rendition that starts after the reference has ended: that
    rendition pairs nothing (an error, as alone), the other is scored in full."""
    c = r.clips
    dists = [c.get("dist.mp4"), c.get("dist_late.mkv")]
    lad, ones = ladder_vs_separate(r, "no_pair", dists, c.get("ref.mp4"), ":eof_action=pass",
                                   extra=["-copyts"], expect_ok=False)
    expect(lad.rc != 0 and ones[1].rc != 0 and ones[0].rc == 0,
           "no_pair: exit codes ladder %d, separate %d/%d" % (lad.rc, ones[0].rc, ones[1].rc))
    expect(lad.log[1] is None and len(lad.log[0]["frames"]) == 30 and
           any("no frame pair was scored" in e for e in lad.errors[1]),
           "no_pair: logs %s, errors %s" % ([x is not None for x in lad.log], lad.errors))
    return "rendition 1: %s; rendition 0: 30 frames logged; exit %d" % (lad.errors[1][0], lad.rc)


def error_case(r, dists, ref, opts, expected, pre=None):
    res = run_vmaf(r, dists, ref, opts, "err", pre, expect_ok=False, log=False)
    expect(res.rc != 0, "ffmpeg succeeded; expected an error with '%s'" % expected)
    for e in expected:
        expect(e in res.err, "exit %d but no '%s' in:\n%s" % (res.rc, e, ft.tail(res.err)))
    return next(l for l in res.err.splitlines() if expected[0] in l).split("] ", 2)[-1]


def t_err_size(r):
    c = r.clips
    w, h = SIZE
    return error_case(r, [c.get("dist.mp4"), c.get("small128.mp4")], c.get("ref.mp4"), "",
                      ["rendition 1 (main1) is 128x96, the reference is %dx%d" % (w, h),
                       "scale_cuda=%d:%d for CUDA frames" % (w, h),
                       "scale=%d:%d for software frames" % (w, h)])


def t_err_format(r):
    """A rendition of another pixel format (10-bit, 4:4:4) than the reference: an error
    naming both, not a silent conversion to another rendition's format (software frames)."""
    c = r.clips
    d = [c.get("dist.mp4"), c.get("q20.mp4"), c.get("dist.mp4")]
    a = error_case(r, d, c.get("ref.mp4"), "", ["rendition 1 (main1) is", "yuv420p10le",
                   "the reference is", "convert it first"], pre=[None, "format=yuv420p10le", None])
    error_case(r, d, c.get("ref.mp4"), "", ["rendition 2 (main2) is", "yuv444p"],
               pre=[None, None, "format=yuv444p"])
    return a


def t_err_log_path(r):
    c = r.clips
    d = [c.get("dist.mp4"), c.get("q20.mp4")]
    a = error_case(r, d, c.get("ref.mp4"), ":log_fmt=json:log_path=%s" % r.tmp("one.json"),
                   ["log_path '%s' has no %%d: with renditions=2" % r.tmp("one.json")])
    b = error_case(r, d, c.get("ref.mp4"), ":log_fmt=ndjson:log_path=pipe\\\\:1",
                   ["log_path 'pipe:1' has no %d"])
    return "%s; ndjson to pipe:1 refused too" % a


def t_memory_flat(r):
    """Three renditions over --frames 64x64 frames (looped raw clips): VmRSS (and device
    memory with --gpu) flat; window, SEI and the NDJSON logs on."""
    frames, clip, w, h = r.frames, 50, 64, 64
    ref, dis = lt.make_raw_clip(r, w, h, clip)
    raw = ["-f", "rawvideo", "-pix_fmt", "yuv420p", "-video_size", "%dx%d" % (w, h),
           "-framerate", "25", "-stream_loop", str(frames // clip - 1)]
    nd = r.tmp("long_%d.ndjson")
    graph = ("[0:v][1:v][2:v][3:v]vmaf_cuda=renditions=3:backend=%s:window=2s:sei=1:"
             "log_fmt=ndjson:log_path=%s:window_log=1000[a][b][c]" % ("cuda" if r.hw else "cpu", nd))
    cmd = [r.ffmpeg, "-hide_banner", "-nostdin", "-y", "-nostats", "-progress", "pipe:1"]
    for path in (dis, ref, dis, ref):
        cmd += raw + ["-i", path]
    cmd += ["-lavfi", graph] + sum((["-map", "[%s]" % o, "-f", "null", "-"] for o in "abc"), [])
    _, samples, dev, err, rc = lt.sampled_run(r, cmd)
    expect(rc == 0, "ffmpeg exited with %d:\n%s" % (rc, ft.tail(err)))
    for k in range(3):
        with open(nd % k) as f:
            n_lines = sum(1 for _ in f)
        expect(n_lines == frames + frames // 1000 + 1,
               "rendition %d: %d NDJSON lines for %d frames" % (k, n_lines, frames))
    info = lt.flat(samples, frames, "VmRSS KiB")
    if r.hw:
        info += "; " + lt.flat(dev, frames, "device MiB")
    return "%d frames x 3 renditions: %s" % (frames, info)


def t_valgrind(r):
    """The lengths case (renditions ending at different times, one output cut by
    -frames:v) under valgrind: no invalid access, nothing lost."""
    vg = shutil.which("valgrind")
    if not vg or r.hw:
        raise parity_cases.Skip("no valgrind" if not vg else "not with --gpu")
    c = r.clips
    dists = [c.get("dist20.mp4"), c.get("dist45.mp4"), c.get("dist.mp4")]
    graph = ("[0:v][1:v][2:v][3:v]vmaf_cuda=renditions=3:backend=cpu:log_fmt=json:log_path=%s:"
             "window=4:sei=1:n_subsample=2[a][b][c]" % r.tmp("vg_%d.json"))
    cmd = [vg, "-q", "--leak-check=full", "--errors-for-leak-kinds=definite,indirect",
           "--error-exitcode=9", r.ffmpeg, "-hide_banner", "-nostdin", "-nostats", "-y",
           "-v", "error"]
    for d in dists + [c.get("ref.mp4")]:
        cmd += ["-i", d]
    cmd += ["-lavfi", graph, "-map", "[a]", "-f", "null", "-", "-map", "[b]", "-frames:v", "12",
            "-f", "null", "-", "-map", "[c]", "-f", "null", "-"]
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    expect(p.returncode == 0, "valgrind exit %d:\n%s" % (p.returncode, ft.tail(p.stderr, 40)))
    return "no error, no leak (3 renditions, ends at 20/30/45 frames, -frames:v 12 on one)"


CPU_TESTS = [t_aligned, t_lengths, t_rates_offsets, t_timebases, t_ts_reset, t_frames_limit,
             t_subsample_live, t_upscaled, t_psnr_v1016, t_no_pair, t_err_size, t_err_format,
             t_err_log_path, t_memory_flat, t_valgrind]
# NVDEC frames: the same cases on the CUDA backend (scale_cuda for the upscaled ones)
GPU_TESTS = [t_aligned, t_lengths, t_rates_offsets, t_frames_limit, t_subsample_live,
             t_upscaled, t_psnr_v1016, t_err_size, t_memory_flat]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ffmpeg", required=True, help="the built ffmpeg binary")
    ap.add_argument("--shared", required=True, help="folder with media/ and golden/")
    ap.add_argument("--gpu", action="store_true", help="NVDEC frames, CUDA backend")
    ap.add_argument("--only", action="append", default=[], help="run tests whose name contains this")
    ap.add_argument("--skip", action="append", default=[], help="leave out tests whose name contains this")
    ap.add_argument("--workdir", help="keep outputs (and clips) here (default: a temporary folder)")
    ap.add_argument("--frames", type=int, default=20000, help="length of the long run (a multiple of 50)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print the ffmpeg commands")
    ap.add_argument("--clip-ffmpeg", default="ffmpeg",
                    help="the ffmpeg (with libx264) that makes the test clips (default: on PATH)")
    a = ap.parse_args()
    if not os.access(a.ffmpeg, os.X_OK):
        print("ffmpeg binary not found: %s" % a.ffmpeg)
        return 1
    if a.gpu and not ft.has_cuda_device():
        print("SKIPPED: no CUDA device found")
        return ft.SKIP_CODE
    workdir = a.workdir or tempfile.mkdtemp(prefix="vmaf_cuda_ladder_")
    os.makedirs(workdir, exist_ok=True)
    r = ft.Runner(os.path.abspath(a.ffmpeg), os.path.abspath(a.shared), workdir, a.verbose)
    r.hw = a.gpu
    r.frames = a.frames
    r.clips = LadderClips(r, a.clip_ffmpeg)
    tests = GPU_TESTS if a.gpu else CPU_TESTS
    if a.only:
        tests = [t for t in tests if any(o in t.__name__ for o in a.only)]
    tests = [t for t in tests if not any(s in t.__name__ for s in a.skip)]
    return ft.run_tests(r, tests, "gpu_" if a.gpu else "", workdir, keep=bool(a.workdir))


if __name__ == "__main__":
    sys.exit(main())

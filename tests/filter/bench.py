#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause-Patent
"""End-to-end frames/s of ffmpeg + vmaf_cuda next to decode-only frames/s.

    bench.py --ffmpeg PATH --shared DIR [--workdir DIR] [--loops N] [--sw] [--profile]

Cases: the BBB pair of DIR/media (854x480 H.264), and 1080p and 4K HEVC pairs that this
script makes once from the BBB reference with NVDEC + scale_cuda + hevc_nvenc (reference
at QP 12, distorted at QP 34; kept in --workdir). Each input is read --loops times
(-stream_loop) so that start-up costs little. For each case, in the same call:
  decode-only: both inputs NVDEC-decoded to CUDA frames, into -f null;
  end to end:  the same, through vmaf_cuda (no conversion filter in between).
frames/s = frame pairs / wall seconds of the ffmpeg process (ffmpeg's own fps= is printed
too). --sw runs the BBB case with software decoding and backend=cpu (no GPU needed).
--profile adds, per run, the mean SM / memory / NVDEC use and the busiest threads
(tools/thread_cpu.py): whether a pipeline is bound by the GPU or by a host thread.
Standard library only.
"""

import argparse
import os
import re
import subprocess
import sys
import time

BBB_DIS = "media/bbb_dis_854x480_120f.mp4"
BBB_REF = "media/bbb_ref_854x480_120f.mp4"
CLIP_FRAMES = 120


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import thread_cpu  # noqa: E402  (tools/thread_cpu.py)

PROFILE = {"on": False, "lines": []}


def run(cmd, verbose, label=None):
    if verbose:
        print("  $ " + " ".join(cmd), flush=True)
    secs, rc, err, agg, mean = thread_cpu.profile_run(cmd, gpu=PROFILE["on"])
    if rc != 0:
        sys.stderr.write(err[-4000:])
        raise SystemExit("command failed (%d): %s" % (rc, " ".join(cmd)))
    if PROFILE["on"] and label:
        PROFILE["lines"].append("%s: %s" % (label, thread_cpu.summary(secs, agg, mean)))
    return secs, err


def last_progress(stderr):
    lines = [l for l in stderr.replace("\r", "\n").splitlines() if l.startswith("frame=")]
    if not lines:
        return None, None
    m = re.search(r"frame=\s*(\d+)\s+fps=\s*([\d.]+)", lines[-1])
    return (int(m.group(1)), float(m.group(2))) if m else (None, None)


def make_clip(ffmpeg, src, out, width, height, qp, verbose):
    if os.path.exists(out) and os.path.getsize(out) > 0:
        return
    tmp = out + ".part.mp4"
    run([ffmpeg, "-hide_banner", "-nostdin", "-y", "-hwaccel", "cuda",
         "-hwaccel_output_format", "cuda", "-i", src, "-an",
         "-vf", "scale_cuda=%d:%d" % (width, height),
         "-c:v", "hevc_nvenc", "-rc", "constqp", "-qp", str(qp), "-g", "60", tmp], verbose)
    os.replace(tmp, out)


def bench_case(a, name, dis, ref, sw):
    dec = [] if sw else ["-hwaccel", "cuda", "-hwaccel_output_format", "cuda"]
    dec = dec + a.dec_opts.split()
    loop = ["-stream_loop", str(a.loops - 1)] if a.loops > 1 else []
    inputs = loop + dec + ["-i", dis] + loop + dec + ["-i", ref]
    base = [a.ffmpeg, "-hide_banner", "-nostdin", "-y"]
    frames = CLIP_FRAMES * a.loops

    t_dec, err_dec = run(base + inputs + ["-an", "-map", "0:v", "-map", "1:v",
                                          "-c:v", "wrapped_avframe", "-f", "null", "-"], a.verbose,
                         name + ", decode-only")
    backend = "cpu" if sw else "auto"
    opts = "backend=%s" % backend + (":" + a.vmaf_opts if a.vmaf_opts else "")
    t_e2e, err_e2e = run(base + inputs + ["-an", "-lavfi",
                                          "[0:v][1:v]vmaf_cuda=%s" % opts,
                                          "-f", "null", "-"], a.verbose, name + ", end to end")
    n_e2e, fps_e2e = last_progress(err_e2e)
    _, fps_dec = last_progress(err_dec)
    score = re.findall(r"VMAF score: ([\d.]+)", err_e2e)
    used = re.findall(r"\] vmaf_cuda \S+ \([^)]*\): (.*)", err_e2e)
    if n_e2e is not None and n_e2e != frames:
        print("warning: %s: %d output frames, expected %d" % (name, n_e2e, frames))
    return {
        "case": name, "frames": frames,
        "dec_fps": frames / t_dec, "e2e_fps": frames / t_e2e,
        "dec_fps_ffmpeg": fps_dec, "e2e_fps_ffmpeg": fps_e2e,
        "score": score[-1] if score else "?", "backend": used[-1].strip() if used else "?",
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ffmpeg", required=True)
    ap.add_argument("--shared", required=True)
    ap.add_argument("--workdir", default="build-bench")
    ap.add_argument("--loops", type=int, default=5, help="reads of each input (default 5: 600 frames)")
    ap.add_argument("--sw", action="store_true", help="software decode + backend=cpu, BBB only")
    ap.add_argument("--cases", default="bbb,1080p,4k")
    ap.add_argument("--vmaf-opts", default="",
                    help="more vmaf_cuda options, e.g. \"feature='name=psnr|name=cambi'\" or "
                         "\"model=version=vmaf_v1.0.16_3d0h\"")
    ap.add_argument("--dec-opts", default="",
                    help="more input options for both inputs, in the decode-only and the "
                         "end-to-end runs alike, e.g. \"-extra_hw_frames 16\"")
    ap.add_argument("--profile", action="store_true",
                    help="per run: mean SM, memory and NVDEC use (nvidia-smi dmon) and the "
                         "busiest threads' CPU share of the wall time (tools/thread_cpu.py)")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    PROFILE["on"] = a.profile
    a.ffmpeg = os.path.abspath(a.ffmpeg)
    os.makedirs(a.workdir, exist_ok=True)

    cases = [("bbb 854x480 h264", os.path.join(a.shared, BBB_DIS), os.path.join(a.shared, BBB_REF))]
    wanted = a.cases.split(",")
    if not a.sw:
        for tag, w, h in (("1080p", 1920, 1080), ("4k", 3840, 2160)):
            if tag not in wanted:
                continue
            ref = os.path.join(a.workdir, "bbb_ref_%s_hevc.mp4" % tag)
            dis = os.path.join(a.workdir, "bbb_dis_%s_hevc.mp4" % tag)
            make_clip(a.ffmpeg, os.path.join(a.shared, BBB_REF), ref, w, h, 12, a.verbose)
            make_clip(a.ffmpeg, os.path.join(a.shared, BBB_REF), dis, w, h, 34, a.verbose)
            cases.append(("bbb %dx%d hevc" % (w, h), dis, ref))
    if "bbb" not in wanted:
        cases = cases[1:]

    rows = [bench_case(a, name, dis, ref, a.sw) for name, dis, ref in cases]
    print("%-22s %7s %14s %14s %7s  %-9s %s" % ("case", "pairs", "decode fps", "e2e fps",
                                              "e2e/dec", "VMAF", "filter"))
    for r in rows:
        print("%-22s %7d %8.1f (%4s) %8.1f (%4s) %7.2f  %-9s %s" % (
            r["case"], r["frames"], r["dec_fps"], r["dec_fps_ffmpeg"], r["e2e_fps"],
            r["e2e_fps_ffmpeg"], r["e2e_fps"] / r["dec_fps"], r["score"], r["backend"]))
    print("(fps = frame pairs / wall seconds of the ffmpeg process; ffmpeg's own fps= in parentheses)")
    if a.vmaf_opts:
        print("(vmaf_cuda options: %s)" % a.vmaf_opts)
    if a.dec_opts:
        print("(input options: %s)" % a.dec_opts)
    for line in PROFILE["lines"]:
        print("profile " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())

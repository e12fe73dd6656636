# SPDX-License-Identifier: BSD-2-Clause-Patent
"""A rendition's media file through ffprobe: its video bitrate, size and frame rate.

Bitrate: the sum of the first video stream's packet sizes over its duration (the span from
the earliest packet time to the end of the latest packet), in kbit/s (1000 bit/s): the
video's own bits in any container (MP4, MKV, MPEG-TS, raw .264/.ivf), without audio or
container overhead. A raw elementary stream (.264, .265, .obu: packets without times) is
timed by packets / frame rate, else by its packets' durations; where packets give neither
size nor duration, the container's bit_rate is used."""

import fractions
import json
import os
import shutil
import subprocess


class MediaError(Exception):
    pass


def find_ffprobe(opt=None, ffmpeg=None):
    """--ffprobe PATH, else $VMAF_CUDA_FFPROBE, else the ffprobe beside the project's ffmpeg
    (build-ffmpeg/VERSION/bin/ has both), else ffprobe on PATH. None when there is none."""
    cands = [opt, os.environ.get("VMAF_CUDA_FFPROBE")]
    if ffmpeg:
        cands.append(os.path.join(os.path.dirname(os.path.abspath(ffmpeg)), "ffprobe"))
    cands.append("ffprobe")
    for c in cands:
        if not c:
            continue
        p = shutil.which(c) if os.sep not in c else (c if os.path.isfile(c) and os.access(c, os.X_OK) else None)
        if p:
            return os.path.abspath(p)
        if c == opt:
            raise MediaError("--ffprobe %s: %s" % (c, "not an executable" if os.path.exists(c) else "no such file"))
        if c == cands[1]:
            raise MediaError("$VMAF_CUDA_FFPROBE=%s: %s" % (c, "not an executable" if os.path.exists(c) else "no such file"))
    return None


# raw elementary streams: no container, no timestamps of their own; ffprobe's frame rate is
# the stream's (H.264/HEVC VUI timing) or a guess of 25 (AV1 OBU without timing info)
RAW_FORMATS = ("h264", "hevc", "obu", "av1", "vvc", "mpegvideo", "m4v", "cavsvideo")


def _rate(text):
    try:
        r = fractions.Fraction(text)
        return float(r) if r > 0 else None
    except (ValueError, ZeroDivisionError, TypeError):
        return None


def probe(ffprobe, path):
    """{"bitrate_kbps", "width", "height", "fps", "duration_s", "bitrate_from"} of the
    first video stream of path; raises MediaError naming the file."""
    if not os.path.isfile(path):
        raise MediaError("missing file: %s" % path)
    argv = [ffprobe, "-v", "error", "-select_streams", "v:0",
            "-show_entries", "packet=size,pts_time,dts_time,duration_time",
            "-show_entries", "stream=width,height,avg_frame_rate,r_frame_rate,duration",
            "-show_entries", "format=bit_rate,duration,format_name", "-of", "json=c=1", path]
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.SubprocessError) as e:
        raise MediaError("ffprobe on %s: %s" % (path, e))
    if p.returncode != 0:
        raise MediaError("ffprobe on %s failed: %s" % (path, (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]))
    try:
        d = json.loads(p.stdout)
    except ValueError:
        raise MediaError("ffprobe on %s: unreadable output" % path)
    streams = d.get("streams") or []
    if not streams:
        raise MediaError("%s has no video stream" % path)
    st, fmt = streams[0], d.get("format") or {}
    raw = (fmt.get("format_name") or "").split(",")[0] in RAW_FORMATS
    out = {"width": st.get("width"), "height": st.get("height"),
           "fps": _rate(st.get("avg_frame_rate")) or _rate(st.get("r_frame_rate")),
           "bitrate_kbps": None, "duration_s": None, "bitrate_from": None, "raw": raw,
           "format": fmt.get("format_name"), "packets": 0, "size_bytes": 0}
    size, lo, hi, durs, n = 0, None, None, 0.0, 0
    for pk in d.get("packets") or []:
        n += 1
        size += int(pk.get("size") or 0)
        dur = float(pk.get("duration_time") or 0.0)
        durs += dur
        t = pk.get("pts_time", pk.get("dts_time"))
        if t is None:
            continue
        t = float(t)
        lo = t if lo is None or t < lo else lo
        hi = t + dur if hi is None or t + dur > hi else hi
    out.update(packets=n, size_bytes=size)
    # the duration: the packets' time span; a raw stream without times: the sum of the
    # packets / frame rate, else the sum of the packets' durations; else the stream's or container's
    span = hi - lo if lo is not None and hi is not None and not raw else None
    if not span or span <= 0:
        span = n / out["fps"] if n and out["fps"] else durs if durs > 0 else None
    if not span or span <= 0:
        span = float(st.get("duration") or fmt.get("duration") or 0) or None
    if size and span:
        out.update(bitrate_kbps=size * 8 / span / 1000.0, duration_s=span, bitrate_from="packets")
    elif fmt.get("bit_rate"):
        out.update(bitrate_kbps=float(fmt["bit_rate"]) / 1000.0, bitrate_from="container",
                   duration_s=float(fmt.get("duration") or 0) or None)
    return out

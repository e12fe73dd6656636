# SPDX-License-Identifier: BSD-2-Clause-Patent
"""Drop-in parity with FFmpeg's libvmaf filter, and the pairing warnings (issue 8).

Used by filter_test.py. Clips are made at test time, in the work folder, with the
system's ffmpeg (Debian's, with libx264): testsrc2 at 176x144, one second, encoded at
high quality (reference) and low quality (main), then trimmed, offset, thinned with
select, at 30 and 60 fps, remuxed from MP4 (90 kHz-like 1/15360) into MKV (1 ms).

Each case asserts the pairs (from the filter's "pair N: main T s, reference T s" debug
lines), the number of frames in the log, the exact warnings, and their absence on
aligned inputs; the format cases assert per-frame values equal to a run on inputs
converted explicitly, bit-exact.
"""

import json
import os
import re
import shutil
import subprocess

PAIR_RE = re.compile(r"\] \[debug\] pair (\d+): main (\S+) s, reference (\S+) s")
WARN_RE = re.compile(r"\[Parsed_vmaf_cuda_\d+ @ [^]]*\] \[warning\] (.*)")

SIZE = "176x144"


class Skip(Exception):
    pass


# set by filter_test.py: its failure exception and the BBB clips (dis, ref)
TestFailure = AssertionError
BBB = (None, None)


def _fail(msg):
    raise TestFailure(msg)


# The repository's copies of libvmaf's model files (models/ at the repository root).
REPO_MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "models")

CLIP_NAMES = ["ref.mp4", "dist.mp4", "ref444.mp4", "ref10.mp4", "ref60.mp4", "dist60.mp4", "ref25.mp4",
              "ref24.mp4", "dist24.mp4", "ref_il_pq.mp4", "dist20.mp4", "ref20.mp4",
              "dist_off.mp4", "ref_off.mp4", "dist_vfr.mp4", "ref24.mkv", "dist24.mkv",
              "bbb_ref_gaps.ts", "resize_ref.ts", "resize_dist.ts", "resize_ref_a.ts",
              "resize_ref_b.ts", "resize_ref_c.ts", "resize_dist_a.ts", "resize_dist_b.ts",
              "resize_dist_c.ts", "resize_dist_fixed.ts", "sync_ref.mp4", "sync_dist.mp4",
              "sync_dist_late.mp4", "sync_ref_lost.mp4"]

# The resolution-change clips (resize_cases.py): three segments of 176x144, 128x96 and
# 176x144 at 25 fps, 25, 25 and 13 frames, one MPEG-TS stream (timestamps run on)
RESIZE_SEGMENTS = (("a", "176x144", 25, 0.0), ("b", "128x96", 25, 1.0), ("c", "176x144", 13, 2.0))


class Clips:
    """Makes (once) and names the test clips in the work folder."""

    def __init__(self, r, clip_ffmpeg):
        self.r = r
        self.ffmpeg = shutil.which(clip_ffmpeg) if clip_ffmpeg else None
        self.checked = False

    def _run(self, args):
        p = subprocess.run([self.ffmpeg, "-hide_banner", "-nostdin", "-v", "error", "-y"] + args,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if p.returncode:
            _fail("making a clip failed: %s\n%s" % (" ".join(args), p.stderr[-2000:]))

    def _check(self):
        if self.checked:
            return
        if not self.ffmpeg:
            raise Skip("no system ffmpeg to make clips")
        p = subprocess.run([self.ffmpeg, "-hide_banner", "-encoders"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
        if "libx264" not in p.stdout:
            raise Skip("the system ffmpeg has no libx264")
        self.checked = True

    def get(self, name):
        """Path of clip `name` (see the table below), made on first use (clips already in
        the work folder are used as they are: a GPU machine without an encoder gets them
        made beforehand, see tools/device-bundle.sh)."""
        path = self.r.tmp("clip_" + name)
        if os.path.exists(path):
            return path
        self._check()
        src = lambda rate: ["-f", "lavfi", "-i", "testsrc2=size=%s:rate=%s:duration=1" % (SIZE, rate)]
        hi, lo = ["-c:v", "libx264", "-crf", "5"], ["-c:v", "libx264", "-crf", "35"]
        yuv = ["-pix_fmt", "yuv420p"]
        recipes = {
            "ref.mp4": src(30) + hi + yuv,
            "dist.mp4": src(30) + lo + yuv,
            "ref444.mp4": src(30) + hi + ["-pix_fmt", "yuv444p"],
            "ref10.mp4": src(30) + hi + ["-pix_fmt", "yuv420p10le"],
            "ref60.mp4": src(60) + hi + yuv,
            "ref25.mp4": src(25) + hi + yuv,
            "dist60.mp4": src(60) + lo + yuv,
            "ref24.mp4": src("24000/1001") + hi + yuv,
            "dist24.mp4": src("24000/1001") + lo + yuv,
            # MBAFF-coded (decoded frames flagged interlaced), PQ transfer in the VUI
            "ref_il_pq.mp4": src(30) + hi + yuv + ["-x264-params", "interlaced=1",
                                                   "-color_trc", "smpte2084"],
        }
        if name in recipes:
            self._run(recipes[name] + [path])
        elif name == "dist20.mp4":
            self._run(["-i", self.get("dist.mp4"), "-frames:v", "20", "-c", "copy", path])
        elif name == "ref20.mp4":
            self._run(["-i", self.get("ref.mp4"), "-frames:v", "20", "-c", "copy", path])
        elif name in ("dist_off.mp4", "ref_off.mp4"):
            # starts at 0.5 s (15 frames in), timestamps kept
            self._run(["-ss", "0.5", "-copyts", "-i", self.get(name.replace("_off", "")),
                       "-c:v", "libx264", "-crf", "35" if name[0] == "d" else "5", path])
        elif name == "dist_vfr.mp4":
            # frames 2, 7, 12, ... dropped, the others keep their timestamps
            self._run(["-i", self.get("dist.mp4"), "-vf", "select='not(eq(mod(n\\,5)\\,2))'",
                       "-fps_mode", "passthrough"] + lo + [path])
        elif name == "bbb_ref_gaps.ts":
            # BBB's reference losslessly, its frames 40-87 (2 s) and 100-102 missing as on a
            # feed that stalled and dropped frames: MPEG-TS, whose frame durations come from
            # the frame rate (an MP4's would span the gaps)
            src = (self.r.path(BBB[1]) if hasattr(self.r, "path") else
                   os.path.join(REPO_MODELS, "..", "..", "shared", "media",
                                "bbb_ref_854x480_120f.mp4"))
            self._run(["-i", src, "-an", "-vf", "select=not(between(n\\,40\\,87)+between(n\\,100\\,102))",
                       "-fps_mode", "passthrough", "-c:v", "libx264", "-qp", "0", "-bf", "0",
                       "-preset", "ultrafast", path])
        elif name.startswith("resize_") and name[-5:-3] in ("_a", "_b", "_c"):
            # one segment: H.264 without B-frames, its timestamps where it lies in the stream
            seg = [g for g in RESIZE_SEGMENTS if g[0] == name[-4]][0]
            self._run(["-f", "lavfi", "-i", "testsrc2=size=%s:rate=25" % seg[1], "-frames:v",
                       str(seg[2]), "-c:v", "libx264", "-crf", "5" if "_ref" in name else "35",
                       "-bf", "0", "-g", "25", "-pix_fmt", "yuv420p", "-muxdelay", "0",
                       "-muxpreload", "0", "-output_ts_offset", str(seg[3]), path])
        elif name in ("resize_ref.ts", "resize_dist.ts"):
            # a feed that switches from 176x144 to 128x96 and back: the segments one after
            # the other (MPEG-TS concatenates)
            with open(path + ".part", "wb") as out:
                for g in RESIZE_SEGMENTS:
                    with open(self.get(name[:-3] + "_" + g[0] + ".ts"), "rb") as f:
                        out.write(f.read())
            os.rename(path + ".part", path)
        elif name == "resize_dist_fixed.ts":
            # the encoder's output at one size while the reference switches
            self._run(["-f", "lavfi", "-i", "testsrc2=size=176x144:rate=25", "-frames:v", "63",
                       "-c:v", "libx264", "-crf", "35", "-bf", "0", "-g", "25", "-pix_fmt",
                       "yuv420p", "-muxdelay", "0", "-muxpreload", "0", path])
        elif name == "sync_ref.mp4":
            # 20 s of moving pictures that do not repeat (sync_cases.py): every third frame
            # of BBB's reference (at 8 fps: more motion from frame to frame) as it is,
            # mirrored, upside down and in negative, one after the other, 320x180
            src = (self.r.path(BBB[1]) if hasattr(self.r, "path") else
                   os.path.join(REPO_MODELS, "..", "..", "shared", "media",
                                "bbb_ref_854x480_120f.mp4"))
            self._run(["-i", src, "-an", "-filter_complex",
                       "[0:v]scale=320:180,select=not(mod(n\\,3)),split=4[a][b][c][d];[b]hflip[b2];"
                       "[c]vflip[c2];[d]negate[d2];[a][b2][c2][d2]concat=n=4:v=1:a=0,setpts=N/8/TB",
                       "-r", "8", "-c:v", "libx264", "-crf", "5", "-bf", "0", "-pix_fmt",
                       "yuv420p", path])
        elif name == "sync_dist.mp4":
            self._run(["-i", self.get("sync_ref.mp4"), "-c:v", "libx264", "-crf", "36",
                       "-pix_fmt", "yuv420p", path])
        elif name == "sync_dist_late.mp4":
            # the encoder's output from frame 13 on, its timestamps from 0 (a probe that
            # joined late): the main leads the reference by 13 frames (offset -1.625 s)
            self._run(["-i", self.get("sync_dist.mp4"), "-vf", "trim=start_frame=13,setpts=PTS-STARTPTS",
                       "-c:v", "libx264", "-qp", "0", "-preset", "ultrafast", "-pix_fmt",
                       "yuv420p", path])
        elif name == "sync_ref_lost.mp4":
            # the reference's frame 100 lost, the timestamps regenerated (continuous), the
            # pictures losslessly as they were
            self._run(["-i", self.get("sync_ref.mp4"), "-vf", "select=not(eq(n\\,100)),setpts=N/8/TB",
                       "-c:v", "libx264", "-qp", "0", "-preset", "ultrafast", "-pix_fmt",
                       "yuv420p", path])
        elif name.endswith(".mkv"):
            # the same stream remuxed: 1 ms timestamps instead of MP4's 1/15360 s
            self._run(["-i", self.get(name[:-4] + ".mp4"), "-c", "copy", path])
        else:
            raise KeyError(name)
        return path


def run_pairing(r, dis, ref, options="", pre="", hw=False, extra=(), name="pairing"):
    """Runs vmaf_cuda on two clips at debug level; returns (pairs, warnings, log frames,
    output frame count, stderr). pairs: [(index, main s, reference s)]."""
    log = r.tmp(name + ".json")
    if os.path.exists(log):
        os.unlink(log)
    graph = (pre or "[0:v][1:v]") + "vmaf_cuda=log_fmt=json:log_path=%s:precision=max%s" % (
        log, options if hw else ":backend=cpu" + options)
    hwargs = ["-hwaccel", "cuda", "-hwaccel_output_format", "cuda"] if hw else []
    _, err, _ = r.ffmpeg_run(["-loglevel", "level+debug"] + list(extra) + hwargs + ["-i", dis] +
                             hwargs + ["-i", ref, "-an", "-lavfi", graph, "-f", "null", "-"])
    pairs = [(int(m.group(1)), float(m.group(2)), float(m.group(3)))
             for m in PAIR_RE.finditer(err)]
    warnings = [m.group(1).strip() for m in WARN_RE.finditer(err)]
    with open(log) as f:
        frames = json.load(f, parse_float=str, parse_int=str)["frames"]
    counts = [l.split("frame=", 1)[1].split()[0] for l in err.replace("\r", "\n").splitlines()
              if "frame=" in l and "fps=" in l]
    return pairs, warnings, frames, int(counts[-1]) if counts else None, err


def expect_warnings(label, warnings, expected):
    """Each expected text is in exactly one warning, and there are no others."""
    left = list(warnings)
    for e in expected:
        hits = [w for w in left if e in w]
        if len(hits) != 1:
            _fail("%s: expected one warning with '%s', got %s" % (label, e, warnings))
        left.remove(hits[0])
    if left:
        _fail("%s: unexpected warnings %s" % (label, left))


def expect_pairs(label, pairs, expected, tol=1e-4):
    """expected: [(main s, reference s)] in order."""
    got = [(m, f) for _, m, f in pairs]
    if len(got) != len(expected) or any(abs(a - c) > tol or abs(b - d) > tol
                                        for (a, b), (c, d) in zip(got, expected)):
        _fail("%s: pairs %s, expected %s" % (label, got[:40], expected[:40]))
    if [i for i, _, _ in pairs] != list(range(len(pairs))):
        _fail("%s: pair indices %s" % (label, [i for i, _, _ in pairs]))


def same(n, fps):
    return [(k / fps, k / fps) for k in range(n)]


# ------------------------------------------------------------------ pairing cases

def case_aligned(r, c, hw=False):
    pairs, warns, frames, out, _ = run_pairing(r, c.get("dist.mp4"), c.get("ref.mp4"), hw=hw)
    expect_pairs("aligned", pairs, same(30, 30))
    expect_warnings("aligned", warns, [])
    if len(frames) != 30 or out != 30:
        _fail("aligned: %d frames in the log, %s out" % (len(frames), out))
    return "30 pairs aligned, no warning"


def case_main_shorter(r, c, hw=False):
    pairs, warns, frames, _, _ = run_pairing(r, c.get("dist20.mp4"), c.get("ref.mp4"), hw=hw)
    expect_pairs("trimmed main", pairs, same(20, 30) + [(19 / 30, k / 30) for k in range(20, 30)])
    expect_warnings("trimmed main", warns, [
        "the main input ended first: its last frame was paired with 10 more reference frames; "
        "add shortest=1 to stop at the end of the shorter input"])
    if len(frames) != 30:
        _fail("trimmed main: %d frames in the log" % len(frames))
    pairs, warns, frames, _, _ = run_pairing(r, c.get("dist20.mp4"), c.get("ref.mp4"),
                                             ":shortest=1", hw=hw)
    expect_pairs("trimmed main, shortest=1", pairs, same(20, 30))
    expect_warnings("trimmed main, shortest=1", warns, [])
    if len(frames) != 20:
        _fail("shortest=1: %d frames in the log" % len(frames))
    return "20 + 10 repeated pairs, warned; shortest=1: 20 pairs, no warning"


def case_ref_shorter(r, c, hw=False):
    pairs, warns, frames, _, _ = run_pairing(r, c.get("dist.mp4"), c.get("ref20.mp4"), hw=hw)
    expect_pairs("trimmed reference", pairs, same(20, 30) + [(k / 30, 19 / 30) for k in range(20, 30)])
    expect_warnings("trimmed reference", warns, [
        "the reference ended first: its last frame was repeated for 10 more main frames "
        "(eof_action=repeat); add shortest=1 to stop at the end of the shorter input"])
    pairs, warns, frames, out, _ = run_pairing(r, c.get("dist.mp4"), c.get("ref20.mp4"),
                                               ":eof_action=pass", hw=hw)
    expect_pairs("eof_action=pass", pairs, same(20, 30))
    expect_warnings("eof_action=pass", warns, [
        "10 main frames after the end of the reference passed through unscored "
        "(eof_action=pass or repeatlast=0): in neither the log nor the score; shortest=1 ends "
        "the output with the reference"])
    if len(frames) != 20 or out != 30:
        _fail("eof_action=pass: %d frames in the log, %s out (expected 20, 30)" % (len(frames), out))
    return "10 repeated, warned; eof_action=pass: 10 unscored, warned, 30 out, 20 logged"


def case_copyts_offset(r, c, hw=False):
    pairs, warns, frames, _, _ = run_pairing(r, c.get("dist_off.mp4"), c.get("ref.mp4"),
                                             hw=hw, extra=["-copyts"])
    expect_pairs("main 0.5 s late", pairs, [(k / 30, k / 30) for k in range(15, 30)])
    expect_warnings("main 0.5 s late", warns, [
        "the inputs start at different times: main at 0.5 s, reference at 0 s (0 main frames "
        "passed through unscored and 15 reference frames never paired before the first pair); "
        "if both start with the same picture, add setpts=PTS-STARTPTS to both inputs"])
    pairs, warns, frames, out, _ = run_pairing(r, c.get("dist.mp4"), c.get("ref_off.mp4"),
                                               hw=hw, extra=["-copyts"])
    expect_pairs("reference 0.5 s late", pairs, [(k / 30, k / 30) for k in range(15, 30)])
    expect_warnings("reference 0.5 s late", warns, [
        "the inputs start at different times: main at 0 s, reference at 0.5 s (15 main frames "
        "passed through unscored and 0 reference frames never paired before the first pair)"])
    if len(frames) != 15 or out != 30:
        _fail("reference late: %d frames in the log, %s out" % (len(frames), out))
    return "15 pairs each way, the offset warned"


def case_vfr_drop(r, c, hw=False):
    pairs, warns, frames, _, _ = run_pairing(r, c.get("dist_vfr.mp4"), c.get("ref.mp4"), hw=hw)
    kept = [k for k in range(30) if k % 5 != 2]
    expect_pairs("VFR drop", pairs, [(k / 30, k / 30) for k in kept])
    expect_warnings("VFR drop", warns, [
        "6 reference frames never paired with a main frame (gaps in the main's timestamps: "
        "dropped frames or a variable frame rate); the scores leave them out"])
    if len(frames) != 24:
        _fail("VFR drop: %d frames in the log" % len(frames))
    return "24 pairs, 6 reference frames never paired, warned"


def case_rates(r, c, hw=False):
    pairs, warns, frames, _, _ = run_pairing(r, c.get("dist.mp4"), c.get("ref60.mp4"), hw=hw)
    expect_pairs("30 vs 60", pairs, [(k / 30, k / 30) for k in range(30)] + [(29 / 30, 59 / 60)])
    # the unpaired reference frames are the rate's doing: one warning, with the count
    # (not "dropped frames or a variable frame rate")
    expect_warnings("30 vs 60", warns, [
        "frame rates differ: main 30/1 (30.000 fps), reference 60/1 (60.000 fps); each main "
        "frame is paired with the last reference frame at or before its timestamp; 29 "
        "reference frames between pairs were never paired"])
    pairs, warns, frames, _, _ = run_pairing(r, c.get("dist60.mp4"), c.get("ref.mp4"), hw=hw)
    expect_pairs("60 vs 30", pairs, [(k / 60, (k // 2) / 30) for k in range(60)])
    expect_warnings("60 vs 30", warns, [
        "frame rates differ: main 60/1 (60.000 fps), reference 30/1 (30.000 fps)"])
    if len(frames) != 60:
        _fail("60 vs 30: %d frames in the log" % len(frames))
    # 30 vs 25: main frame k pairs with reference floor(k * 25 / 30); the next one is often
    # nearer, which the frame-rate warning says (no second warning about time bases).
    pairs, warns, frames, _, _ = run_pairing(r, c.get("dist.mp4"), c.get("ref25.mp4"), hw=hw)
    expect_pairs("30 vs 25", pairs, [(k / 30, (k * 25 // 30) / 25) for k in range(30)])
    # in units of 1/150 s: main k at 5k, reference j at 6j (a tie is not nearer)
    nearer = sum(1 for k in range(30) for j in [k * 25 // 30]
                 if j + 1 < 25 and 6 * (j + 1) - 5 * k < 5 * k - 6 * j)
    expect_warnings("30 vs 25", warns, [
        "frame rates differ: main 30/1 (30.000 fps), reference 25/1 (25.000 fps); each main "
        "frame is paired with the last reference frame at or before its timestamp (%d of 30 "
        "pairs had a nearer next one; ts_sync_mode=nearest takes the nearest)" % nearer])
    return "30/60, 60/30 and 30/25 paired by timestamp, rates warned once"


def case_timebases(r, c, hw=False):
    done = []
    for dis, ref in (("dist24.mkv", "ref24.mp4"), ("dist24.mp4", "ref24.mkv")):
        label = "%s vs %s" % (dis, ref)
        pairs, warns, frames, _, _ = run_pairing(r, c.get(dis), c.get(ref), hw=hw)
        off = [p for p in pairs if abs(p[1] - p[2]) > 0.002]
        near = [w for w in warns if "pairs took an earlier reference frame although the next "
                "one was nearer in time" in w and "ts_sync_mode=nearest" in w]
        if not off or len(near) != 1:
            _fail("%s: %d pairs off by more than 2 ms, warnings %s" % (label, len(off), warns))
        n = int(near[0].split()[0])
        if n != len([p for p in pairs if p[1] - p[2] > 0.5 / 24]):
            _fail("%s: warning counts %d, pairs %s" % (label, n, pairs))
        pairs, warns, frames, _, _ = run_pairing(r, c.get(dis), c.get(ref), ":ts_sync_mode=nearest",
                                                 hw=hw)
        expect_pairs(label + " nearest", pairs, same(24, 24000 / 1001), tol=0.002)
        expect_warnings(label + " nearest", warns, [])
        nearest = frames
        _, _, frames, _, _ = run_pairing(r, c.get("dist24.mp4"), c.get("ref24.mp4"), hw=hw)
        if [f["metrics"] for f in nearest] != [f["metrics"] for f in frames]:
            _fail("%s nearest: scores differ from the MP4-only run" % label)
        done.append("%s: %d pairs off, warned" % (label, n))
    return "; ".join(done) + "; ts_sync_mode=nearest: aligned, no warning, scores exact"


# ------------------------------------------------------------------ formats

def case_formats(r, c, hw=False):
    done = []
    for dis, ref, conv in (("dist.mp4", "ref444.mp4", "yuv420p"), ("dist.mp4", "ref10.mp4", "yuv420p"),
                           ("ref10.mp4", "dist.mp4", "yuv420p10le")):
        label = "%s vs %s" % (dis, ref)
        _, warns, auto, _, err = run_pairing(r, c.get(dis), c.get(ref))
        expect_warnings(label, warns, [])
        bits = "10-bit" if conv.endswith("10le") else "8-bit"
        if ", %s" % bits not in err:
            _fail("%s: expected a %s session" % (label, bits))
        _, _, conv_frames, _, _ = run_pairing(r, c.get(dis), c.get(ref),
                                              pre="[1:v]format=%s[r];[0:v][r]" % conv)
        if not auto or [f["metrics"] for f in auto] != [f["metrics"] for f in conv_frames]:
            _fail("%s: per-frame scores differ from the run with format=%s" % (label, conv))
        done.append("%s = format=%s" % (label, conv))
    return "; ".join(done) + " (bit-exact)"


# ------------------------------------------------------------------ -frames:v, n_subsample

def case_frames_limit(r, c, hw=False, dis=None, ref=None):
    BBB_DIS, BBB_REF = BBB
    dis, ref = r.path(dis or BBB_DIS), r.path(ref or BBB_REF)
    models = ":model=version=vmaf_v0.6.1|version=vmaf_v0.6.1neg"
    done = []
    for n, sub in ((10, 1), (3, 4)):
        opts = models + ":n_subsample=%d" % sub
        pairs, limited, out, err = run_frames(r, dis, ref, opts, n, hw)
        # fftools tells the filter the last frame its consumer took (the integration
        # patch): exactly the first n frames, also on NVDEC frames
        took = n
        _, _, trimmed, _, err2 = run_pairing(
            r, dis, ref, opts, hw=False, name="trim%d" % n,
            pre="[0:v]trim=end_frame=%d[d];[1:v]trim=end_frame=%d[r];[d][r]" % (took, took))
        want = (took + sub - 1) // sub
        if out != n or len(limited) != want:
            _fail("-frames:v %d n_subsample=%d: %s out, %d logged (expected %d, %d)"
                  % (n, sub, out, len(limited), n, want))
        if limited != trimmed:
            _fail("-frames:v %d: the log differs from the log of %d trimmed frames" % (n, took))
        expect_warnings("-frames:v %d" % n, [m.group(1).strip() for m in WARN_RE.finditer(err)], [])
        s1 = [l.split("VMAF score: ")[1] for l in err.splitlines() if "VMAF score: " in l]
        s2 = [l.split("VMAF score: ")[1] for l in err2.splitlines() if "VMAF score: " in l]
        if len(s1) != 2 or s1 != s2:
            _fail("-frames:v %d: VMAF score lines %s, trimmed run %s" % (n, s1, s2))
        if sub > 1 and max(i for i, _, _ in pairs) > sub:
            # frames that n_subsample skips leave at once: -frames:v 3 needs at most
            # frame 0, its lookahead and the two skipped ones
            _fail("-frames:v %d n_subsample=%d: %d pairs were read" % (n, sub, len(pairs)))
        done.append("-frames:v %d n_subsample=%d: %d logged = trimmed run, %d pairs read%s"
                    % (n, sub, len(limited), len(pairs),
                       " (ffmpeg took %d past its limit)" % (took - n) if took > n else ""))
    return "; ".join(done)


def case_ref_no_frames(r, c, hw=False):
    """The reference delivers no frame: the error, and a warning that says so (not a
    start time of NOPTS with advice to add setpts)."""
    _, err, _ = r.ffmpeg_run(["-loglevel", "level+info", "-i", c.get("dist.mp4"), "-ss", "100",
                              "-i", c.get("ref.mp4"), "-an", "-lavfi",
                              "[0:v][1:v]vmaf_cuda=backend=cpu", "-f", "null", "-"], expect_ok=False)
    warns = [m.group(1).strip() for m in WARN_RE.finditer(err)]
    expect_warnings("no reference frame", warns, [
        "the reference delivered no frame: the 30 main frames passed through unscored"])
    if "NOPTS" in err or "no frame pair was scored" not in err:
        _fail("no reference frame:\n%s" % err[-1500:])
    return "warned: the reference delivered no frame"


def case_subframe_offset(r, c, hw=False):
    """Timestamps offset by part of a frame (-itsoffset, -copyts): the pairs that took an
    earlier reference frame are explained by the offset, not by MKV and MP4 time bases."""
    pairs, warns, _, _, _ = run_pairing(r, c.get("dist.mp4"), c.get("ref.mp4"),
                                        extra=["-itsoffset", "0.025"], hw=hw)
    expect_pairs("main 0.025 s late", pairs, [(k / 30 + 0.025, k / 30) for k in range(30)])
    expect_warnings("main 0.025 s late", warns, [
        "the inputs start at different times: main at 0.025 s, reference at 0 s",
        "29 of 30 pairs took an earlier reference frame although the next one was nearer in "
        "time: the inputs' timestamps are 0.025 s apart, not a whole number of frames"])
    if "MKV and MP4" in " ".join(warns):
        _fail("offset blamed on time bases: %s" % warns)
    return "30 pairs, the offset named"


def run_frames(r, dis, ref, opts, n, hw):
    """Runs vmaf_cuda with -frames:v n: (pairs, log frames, output count, stderr)."""
    log = r.tmp("limit%d.json" % n)
    if os.path.exists(log):
        os.unlink(log)
    graph = "[0:v][1:v]vmaf_cuda=log_fmt=json:log_path=%s:precision=max%s" % (
        log, opts if hw else ":backend=cpu" + opts)
    hwargs = ["-hwaccel", "cuda", "-hwaccel_output_format", "cuda"] if hw else []
    _, err, _ = r.ffmpeg_run(["-loglevel", "level+debug"] + hwargs + ["-i", dis] + hwargs +
                             ["-i", ref, "-an", "-lavfi", graph, "-frames:v", str(n), "-f", "null", "-"])
    pairs = [(int(m.group(1)), float(m.group(2)), float(m.group(3))) for m in PAIR_RE.finditer(err)]
    with open(log) as f:
        frames = json.load(f, parse_float=str, parse_int=str)["frames"]
    counts = [l.split("frame=", 1)[1].split()[0] for l in err.replace("\r", "\n").splitlines()
              if "frame=" in l and "fps=" in l]
    return pairs, frames, int(counts[-1]) if counts else None, err


# ------------------------------------------------------------------ log file, errors, small ones

def case_no_frames(r, c, hw=False):
    BBB_DIS, BBB_REF = BBB
    log = r.tmp("no_frames.json")
    if os.path.exists(log):
        os.unlink(log)
    graph = "[0:v]trim=start_frame=500[d];[d][1:v]vmaf_cuda=log_fmt=json:log_path=%s%s" % (
        log, "" if hw else ":backend=cpu")
    hwargs = ["-hwaccel", "cuda", "-hwaccel_output_format", "cuda"] if hw else []
    rc, err, _ = r.ffmpeg_run(hwargs + ["-i", r.path(BBB_DIS)] + hwargs + ["-i", r.path(BBB_REF),
                              "-an", "-lavfi", graph, "-f", "null", "-"], expect_ok=False)
    if rc == 0 or "no frame pair was scored" not in err:
        _fail("zero frames: exit %d, log:\n%s" % (rc, err[-1500:]))
    if os.path.exists(log):
        _fail("zero frames: a log file was left behind")
    return "exit %d, no log file" % rc


def case_log_file(r, c, hw=False):
    """The log appears whole under its name (temporary name, renamed); nothing else is
    left in its folder; an existing file is replaced only when the run succeeds."""
    folder = r.tmp("logdir")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    log = os.path.join(folder, "vmaf.xml")
    with open(log, "w") as f:
        f.write("old")
    graph = "[0:v][1:v]vmaf_cuda=backend=cpu:log_path=%s" % log
    r.ffmpeg_run(["-i", c.get("dist.mp4"), "-i", c.get("ref.mp4"), "-lavfi", graph, "-f", "null", "-"])
    if os.listdir(folder) != ["vmaf.xml"]:
        _fail("log folder holds %s" % os.listdir(folder))
    with open(log) as f:
        text = f.read()
    if not text.startswith("<VMAF") or "</VMAF>" not in text or text.count("<frame ") != 30:
        _fail("log is not a whole libvmaf XML log of 30 frames")
    return "30-frame XML log, no temporary file left"


def case_vflip(r, c, hw=False):
    """Flipped software frames (negative linesize) score as the same pictures stored
    top to bottom (made by the system ffmpeg into Y4M)."""
    flipped = []
    for name in ("dist.mp4", "ref.mp4"):
        out = r.tmp("clip_flipped_" + name + ".y4m")
        if not os.path.exists(out):
            c._run(["-i", c.get(name), "-vf", "vflip", out])
        flipped.append(out)
    _, _, a, _, _ = run_pairing(r, c.get("dist.mp4"), c.get("ref.mp4"),
                                pre="[0:v]vflip[d];[1:v]vflip[r];[d][r]")
    _, _, b, _, _ = run_pairing(r, flipped[0], flipped[1])
    if len(a) != 30 or [f["metrics"] for f in a] != [f["metrics"] for f in b]:
        _fail("vflip: scores differ from the pre-flipped inputs")
    return "30 frames, bit-exact with pre-flipped inputs"


def case_model_default_opts(r, c, hw=False):
    """A model file whose feature_opts_dicts spells out default values is accepted and
    scores as the built-in model."""
    src = os.path.join(REPO_MODELS, "vmaf_v0.6.1.json")
    with open(src) as f:
        model = json.load(f)
    model["model_dict"]["feature_opts_dicts"] = [
        {"adm_csf_mode": 0, "adm_enhn_gain_limit": 100.0}, {"motion_force_zero": False},
        {"vif_enhn_gain_limit": 100.0}, {}, {}, {}]
    path = r.tmp("model_default_opts.json")
    with open(path, "w") as f:
        json.dump(model, f)
    _, _, a, _, _ = run_pairing(r, c.get("dist.mp4"), c.get("ref.mp4"), ":model=path=%s" % path)
    _, _, b, _, _ = run_pairing(r, c.get("dist.mp4"), c.get("ref.mp4"))
    if [f["metrics"] for f in a] != [f["metrics"] for f in b]:
        _fail("model with default feature options: scores differ from the built-in model")
    return "accepted, scores equal to version=vmaf_v0.6.1"


def case_log_key_order(r, c, hw=False):
    """Keys of the JSON log in libvmaf's order and values, against libvmaf's own log."""
    BBB_DIS, BBB_REF = BBB
    golden = os.path.join(r.path("golden"), "libvmaf", "bbb_854x480_120f_8bit.vmaf_4k_v0.6.1neg.json")
    with open(golden) as f:
        want = json.load(f, parse_float=float, parse_int=float)
    model = os.path.join(REPO_MODELS, "vmaf_4k_v0.6.1neg.json")
    # (two levels of escaping: the graph's, then the filter options')
    _, _, frames, _, _ = run_pairing(r, r.path(BBB_DIS), r.path(BBB_REF),
                                     ":model=path=%s\\\\:name=vmaf_4k_v0.6.1neg" % model,
                                     hw=hw, name="key_order")
    with open(r.tmp("key_order.json")) as f:
        doc = json.load(f, parse_float=float, parse_int=float)
    keys, gold_keys = list(frames[0]["metrics"]), list(want["frames"][0]["metrics"])
    if keys != gold_keys:
        _fail("frame keys %s, libvmaf %s" % (keys, gold_keys))
    if list(doc["pooled_metrics"]) != list(want["pooled_metrics"]):
        _fail("pooled keys %s, libvmaf %s" % (list(doc["pooled_metrics"]), list(want["pooled_metrics"])))
    for i, (ours, theirs) in enumerate(zip(doc["frames"], want["frames"])):
        if ours["metrics"] != theirs["metrics"]:
            _fail("frame %d differs from libvmaf's log" % i)
    if len(doc["frames"]) != len(want["frames"]) or doc["pooled_metrics"] != want["pooled_metrics"]:
        _fail("frame count or pooled values differ from libvmaf's log")
    return "%d keys in libvmaf's order, 120 frames and pooled values exact" % len(keys)


def case_start_warnings(r, c, hw=False):
    """Interlaced frames and a PQ transfer are warned about at the first pair; PQ only
    with built-in (SDR) models."""
    _, warns, frames, _, _ = run_pairing(r, c.get("dist.mp4"), c.get("ref_il_pq.mp4"), hw=hw)
    expect_warnings("interlaced PQ reference", warns, [
        "the reference input is interlaced: VMAF scores each frame as one progressive picture; "
        "deinterlace both inputs first (e.g. bwdif)",
        "the reference input has the PQ transfer of HDR video (smpte2084), but the built-in "
        "VMAF models score SDR video: the scores are not meaningful for it"])
    if len(frames) != 30:
        _fail("interlaced PQ reference: %d frames in the log" % len(frames))
    model = os.path.join(REPO_MODELS, "vmaf_v0.6.1.json")
    _, warns, _, _, _ = run_pairing(r, c.get("dist.mp4"), c.get("ref_il_pq.mp4"),
                                    ":model=path=%s" % model, hw=hw)
    expect_warnings("interlaced PQ reference, model file", warns, [
        "the reference input is interlaced"])
    return "interlaced and PQ warned once each; PQ not with a model file"


def case_threads(r, c, hw=False):
    """n_threads beyond frames_in_flight: the same log as one thread."""
    _, _, a, _, _ = run_pairing(r, c.get("dist.mp4"), c.get("ref.mp4"), ":n_threads=8")
    _, _, b, _, _ = run_pairing(r, c.get("dist.mp4"), c.get("ref.mp4"))
    if a != b:
        _fail("n_threads=8: the log differs from one thread's")
    return "n_threads=8: 30 frames, log identical"


# ------------------------------------------------------------------ timestamp discontinuities

def case_ts_reset(r, c, hw=False):
    """A timestamp reset on one input or both (setpts before the filter, as a feed whose
    encoder restarts): warned at the frame, and paired on the continuous timeline, so
    every frame's VMAF equals libvmaf's of the clips without the reset; a jump ahead is
    warned and kept."""
    dis, ref = r.path(BBB[0]), r.path(BBB[1])
    with open(r.path("golden/bbb_854x480_120f_8bit.csv")) as f:
        golden = [float(l.rsplit(",", 1)[1]) for l in f if l[:1].isdigit()]
    reset = "setpts=if(gte(N\\,{n})\\,PTS-{n}/(24*TB)\\,PTS)"
    done = []
    for label, m, f, warned in (("main", 60, None, ["main"]), ("reference", None, 40, ["reference"]),
                                ("both", 60, 60, ["main", "reference"])):
        pre = "[0:v]%s[m];[1:v]%s[f];[m][f]" % (reset.format(n=m) if m else "null",
                                                 reset.format(n=f) if f else "null")
        pairs, warns, frames, _, _ = run_pairing(r, dis, ref, pre=pre, hw=hw, name="ts_reset")
        expected = ["the %s input's timestamps go back from %s s to 0 s at its frame %d (a reset "
                    "or a wrap): its frames from there are paired as if they followed on at %s s"
                    % (w, fmt_s((n - 1) / 24), n, fmt_s(n / 24))
                    for w, n in zip(warned, [x for x in (m, f) if x])]
        expect_warnings("reset of " + label, warns, expected)
        scores = [float(fr["metrics"]["vmaf"]) for fr in frames]
        if scores != golden:
            bad = [i for i, (a, b) in enumerate(zip(scores, golden)) if a != b][:5]
            _fail("reset of %s: %d frames; VMAF differs from libvmaf's at frames %s"
                  % (label, len(scores), bad))
        done.append(label)
    # a reset in a variable frame rate (12 fps from frame 50, durations left at 1/24 s):
    # placed one current step after the previous frame
    vfr = "if(lt(N\\,50)\\,N\\,50+(N-50)*2)/(24*TB)"
    pre = "[0:v]setpts=if(gte(N\\,60)\\,%s-70/(24*TB)\\,%s)[m];[1:v]setpts=%s[f];[m][f]" % (vfr, vfr, vfr)
    _, warns, frames, _, _ = run_pairing(r, dis, ref, pre=pre, hw=hw, name="ts_reset")
    if [float(fr["metrics"]["vmaf"]) for fr in frames] != golden or len(warns) != 1:
        _fail("reset at a variable frame rate: VMAF differs from libvmaf's, or warnings %s" % warns)
    # two frames out of order (main 50 and 51 swapped) are no reset: only those two differ
    pre = ("[0:v]setpts=if(eq(N\\,50)\\,PTS+1/(24*TB)\\,if(eq(N\\,51)\\,PTS-1/(24*TB)\\,PTS))"
           "[m];[m][1:v]")
    _, warns, frames, _, _ = run_pairing(r, dis, ref, pre=pre, hw=hw, name="ts_reset")
    differ = [i for i, (fr, g) in enumerate(zip(frames, golden)) if float(fr["metrics"]["vmaf"]) != g]
    if len(frames) != 120 or differ != [50, 51] or any("go back" in w for w in warns):
        _fail("two frames swapped: %d frames, differing at %s, warnings %s" % (len(frames), differ, warns))
    pre = "[0:v]setpts=if(gte(N\\,60)\\,PTS+20/TB\\,PTS)[m];[m][1:v]"
    _, warns, _, _, _ = run_pairing(r, dis, ref, pre=pre, hw=hw, name="ts_reset")
    jump = [w for w in warns if "the main input's timestamps jump ahead by 20 s at its "
            "frame 60 (from 2.458333 s to 22.5 s): frames lost or a stall; paired by its "
            "timestamps" in w]
    if len(jump) != 1:
        _fail("jump ahead: warnings %s" % warns)
    return ("reset of %s, and at a variable frame rate: warned at the frame, 120 frames = "
            "libvmaf's; two swapped frames no reset; a jump ahead warned" % ", ".join(done))


def fmt_s(sec):
    """Seconds as FFmpeg's av_ts_make_time_string2() prints them (6 decimals, zeros cut)."""
    return ("%.6f" % sec).rstrip("0").rstrip(".")

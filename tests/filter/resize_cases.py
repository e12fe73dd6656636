"""Resolution changes: both inputs switch size (176x144 -> 128x96 -> 176x144, a feed
switching between SD and HD, parity_cases.RESIZE_SEGMENTS) and scoring goes on.

The whole stream's log must hold every frame, numbered on, each with exactly the values of
a run over its own segment's files (a new segment starts the temporal features afresh),
the segments recorded, one score line over all frames, and identical runs must give
identical logs. One input switching alone is an error naming the frame, its time and both
sizes, after a log of the frames before; the documented recipe (scale the one that
changes) then scores every frame. A graph with a filter that does not follow a size
change is re-created by FFmpeg: the log still keeps every segment and one score line.
"""

import json
import re

import parity_cases
from parity_cases import RESIZE_SEGMENTS, WARN_RE, _fail

SCORE_RE = re.compile(r"VMAF score: ([0-9.]+)")


def run(r, dis, ref, name, options="", pre="[0:v][1:v]", hw=False, expect_ok=True, nd=False):
    """vmaf_cuda over two clips (NVDEC frames with hw); returns (exit status, log as a
    dict or None, stderr)."""
    log = r.tmp(name + (".ndjson" if nd else ".json"))
    graph = pre + "vmaf_cuda=log_fmt=%s:log_path=%s:precision=max%s%s" % (
        "ndjson" if nd else "json", log, "" if hw else ":backend=cpu", options)
    hwargs = ["-hwaccel", "cuda", "-hwaccel_output_format", "cuda"] if hw else []
    rc, err, _ = r.ffmpeg_run(["-loglevel", "level+info"] + hwargs + ["-i", dis] + hwargs +
                              ["-i", ref, "-an", "-lavfi", graph, "-f", "null", "-"],
                              expect_ok=expect_ok)
    try:
        with open(log) as f:
            data = [json.loads(l) for l in f] if nd else json.load(f)
    except (OSError, ValueError):
        data = None
    return rc, data, err


def without_fps(log):
    return {k: v for k, v in log.items() if k != "fps"}


def segment_frames(r, c, hw, tag):
    """Each segment's frames from a run over its own files (frameNum from 0 in each)."""
    frames = []
    for g in RESIZE_SEGMENTS:
        _, log, _ = run(r, c.get("resize_dist_%s.ts" % g[0]), c.get("resize_ref_%s.ts" % g[0]),
                        "%s_seg_%s" % (tag, g[0]), hw=hw)
        if not log or len(log["frames"]) != g[2]:
            _fail("segment %s alone: %s frames" % (g[0], log and len(log["frames"])))
        frames += [f["metrics"] for f in log["frames"]]
    return frames


def check_whole(label, log, err, want_frames):
    """The log of the whole stream: every frame numbered on with its segment's values, the
    segments, and one score line with the mean over every frame."""
    got = log["frames"]
    if [f["frameNum"] for f in got] != list(range(len(want_frames))):
        _fail("%s: frameNum %s" % (label, [f["frameNum"] for f in got]))
    for n, (f, want) in enumerate(zip(got, want_frames)):
        if f["metrics"] != want:
            _fail("%s: frame %d differs from its segment's own run: %s vs %s" %
                  (label, n, f["metrics"], want))
    first, segs = 0, []
    for g in RESIZE_SEGMENTS:
        w, h = (int(x) for x in g[1].split("x"))
        segs.append({"first_frame": first, "frames": g[2], "width": w, "height": h,
                     "bit_depth": 8})
        first += g[2]
    if log.get("segments") != segs:
        _fail("%s: segments %s, expected %s" % (label, log.get("segments"), segs))
    mean = 0.0
    for f in got:
        mean += f["metrics"]["vmaf"]
    mean /= len(got)
    if log["pooled_metrics"]["vmaf"]["mean"] != mean:
        _fail("%s: pooled mean %r, the frames' %r" % (label, log["pooled_metrics"]["vmaf"]["mean"],
                                                    mean))
    scores = SCORE_RE.findall(err)
    if scores != ["%f" % mean]:
        _fail("%s: score lines %s, expected one of %f" % (label, scores, mean))


def case_resize_both(r, c, hw=False):
    """Both inputs switch size: every frame scored, in one log, as each segment alone."""
    dis, ref = c.get("resize_dist.ts"), c.get("resize_ref.ts")
    want = segment_frames(r, c, hw, "resize")
    _, log, err = run(r, dis, ref, "resize_both", hw=hw)
    check_whole("both switch", log, err, want)
    told = [w.strip() for w in WARN_RE.findall(err) if "picture size" in w]
    expect = ["the picture size changed from 176x144 to 128x96 at frame 25: scoring goes on at "
              "the new size (a new segment of the log)",
              "the picture size changed from 128x96 to 176x144 at frame 50: scoring goes on at "
              "the new size (a new segment of the log)"]
    if told != expect or "re-creat" in err:
        _fail("both switch: warnings %s (the graph must not be re-created)" % told)
    # identical runs, identical logs (nothing depends on how frames were queued)
    _, again, _ = run(r, dis, ref, "resize_both_again", hw=hw)
    if without_fps(again) != without_fps(log):
        _fail("two identical runs gave different logs")
    # the NDJSON stream: the frames, then the change told after the first frame at the
    # new size, and the pooled line over every frame
    _, lines, _ = run(r, dis, ref, "resize_nd", hw=hw, nd=True)
    kinds = [(l["type"], l.get("frameNum"), l.get("event"), l.get("input")) for l in lines]
    for at, msg in ((25, expect[0]), (50, expect[1])):
        i = kinds.index(("frame", at, None, None))
        ev = lines[i + 1]
        if ev.get("type") != "event" or ev.get("event") != "resized" or \
                ev.get("input") != "both" or ev.get("message") != msg or \
                ev.get("pts_time") != lines[i]["pts_time"]:
            _fail("NDJSON: after frame %d: %s" % (at, ev))
    frames = [l for l in lines if l["type"] == "frame"]
    if [l["metrics"] for l in frames] != want or lines[-1]["type"] != "pooled" or \
            lines[-1]["frames"] != len(want):
        _fail("NDJSON: %d frame lines, last line %s" % (len(frames), lines[-1]))
    # a ladder of two (the same distorted stream twice) logs what the two-input filter logs
    lad = r.tmp("resize_ladder%d.json")
    hwargs = ["-hwaccel", "cuda", "-hwaccel_output_format", "cuda"] if hw else []
    r.ffmpeg_run(hwargs + ["-i", dis] + hwargs + ["-i", ref, "-an", "-lavfi",
                 "[0:v]split[a][b];[a][b][1:v]vmaf_cuda=renditions=2:log_fmt=json:log_path=%s:"
                 "precision=max%s[o0][o1]" % (lad, "" if hw else ":backend=cpu"),
                 "-map", "[o0]", "-f", "null", "-", "-map", "[o1]", "-f", "null", "-"])
    for k in range(2):
        with open(lad % k) as f:
            got = json.load(f)
        if without_fps(got) != without_fps(log):
            _fail("ladder rendition %d: its log differs from the two-input filter's" % k)
    return ("%d frames in 3 segments, each frame as its segment's own run; one score line; "
            "identical reruns; NDJSON events; a ladder of 2 the same" % len(want))


def case_resize_one(r, c, hw=False):
    """The reference alone switches size: an error naming the frame, its time and both
    sizes, a log of the frames before and a non-zero exit; scaling it scores them all."""
    dis, ref = c.get("resize_dist_fixed.ts"), c.get("resize_ref.ts")
    rc, log, err = run(r, dis, ref, "resize_one", hw=hw, expect_ok=False)
    msg = ("at frame 25 (pts_time 1) the reference changed size alone: main is 176x144, the "
           "reference is 128x96 (the stream so far was 176x144)")
    if rc == 0 or msg not in err:
        _fail("reference alone: exit %d, stderr:\n%s" % (rc, err[-1500:]))
    # (frame 24 waits for frame 25's motion, so it is not output when the error stops the
    # run, and the log covers the frames output)
    if not log or [f["frameNum"] for f in log["frames"]] != list(range(24)):
        _fail("reference alone: the log of the frames before: %s" %
              (log and [f["frameNum"] for f in log["frames"]]))
    # the recipe: the input that changes scaled to the other's size
    scale = "scale_cuda=176:144" if hw else "scale=176:144"
    _, log, err = run(r, dis, ref, "resize_one_scaled", pre="[1:v]%s[r];[0:v][r]" % scale, hw=hw)
    if len(log["frames"]) != 63 or "segments" in log or len(SCORE_RE.findall(err)) != 1:
        _fail("reference scaled: %d frames, segments %s" % (len(log["frames"]),
                                                            log.get("segments")))
    return "error at frame 25 naming both sizes, exit %d, 24 frames logged; scaled: 63" % rc


LOST_RE = re.compile(r"FFmpeg re-created the filter graph (\d+) times?.*?: (\d+) main frames? it "
                     r"held (?:was|were) dropped and (\d+) passed through unscored")


def case_resize_recreated(r, c, hw=False):
    """A graph with a filter that does not follow a size change (hflip): FFmpeg re-creates
    it at each change and drops the frames queued inside it (as many as timing leaves
    there). The log still keeps every segment, numbered on, with one score line, and the
    frames lost are counted: every one of the 63 main frames is logged, dropped or told
    unscored, and a run that lost any exits non-zero."""
    dis, ref = c.get("resize_dist.ts"), c.get("resize_ref.ts")
    pre = ("[0:v]hwdownload,format=nv12,hflip[m];[1:v]hwdownload,format=nv12,hflip[r];[m][r]"
           if hw else "[0:v]hflip[m];[1:v]hflip[r];[m][r]")
    rc, log, err = run(r, dis, ref, "resize_recreated", pre=pre, hw=hw, expect_ok=False)
    n = len(log["frames"]) if log else 0
    sizes = []
    for g in log.get("segments", []) if log else []:
        if not sizes or sizes[-1] != (g["width"], g["height"]):
            sizes.append((g["width"], g["height"]))
    if sizes != [(176, 144), (128, 96), (176, 144)] or \
            [f["frameNum"] for f in log["frames"]] != list(range(n)):
        _fail("re-created graph: %d frames, segments %s" % (n, log and log.get("segments")))
    lost = LOST_RE.search(err)
    if lost:
        dropped, unscored = int(lost.group(2)), int(lost.group(3))
        if rc == 0 or n + dropped + unscored != 63:
            _fail("re-created graph: exit %d, %d logged + %d dropped + %d unscored != 63" %
                  (rc, n, dropped, unscored))
    elif rc != 0 or n != 63 or "no frame was lost" not in err:
        _fail("re-created graph: exit %d, %d frames, stderr:\n%s" % (rc, n, err[-2000:]))
    if len(SCORE_RE.findall(err)) != 1:
        _fail("re-created graph: score lines %s" % SCORE_RE.findall(err))
    return "%d of 63 frames logged in the sizes' order, the rest counted as lost (exit %d)" % (n, rc)


CPU_CASES = [case_resize_both, case_resize_one, case_resize_recreated]
GPU_CASES = [case_resize_both, case_resize_one, case_resize_recreated]

"""The filter's live rules (input_timeout=): nothing stands in for a missing frame.

BBB's pair (libvmaf's values in golden/bbb_854x480_120f_8bit.csv) with the reference cut
as a live feed cuts it: a stall of 2 s and three dropped frames (an MPEG-TS clip made with
the system ffmpeg, parity_cases.Clips), an end 60 frames early, and a run stopped with
SIGINT while both inputs play in real time. Every frame the filter scores must be main
frame k against reference frame k (its non-temporal features equal libvmaf's for frame
k), the frames without their reference go out unscored with lavfi.vmaf.unscored, each
start and end of a gap is told at once (a warning and an NDJSON event line, in order with
the frame lines), and the pooled line covers exactly the frame lines.
"""

import json
import os
import signal
import subprocess
import time

import parity_cases
from parity_cases import WARN_RE, _fail, fmt_s

# features that depend on one frame pair only (motion compares neighbours, and the
# neighbours of the frames next to a gap are other frames than in libvmaf's run)
PAIR_FEATURES = ("integer_adm2", "integer_vif_scale0", "integer_vif_scale3")
GOLDEN_COLUMNS = {"integer_adm2": "VMAF_integer_feature_adm2_score",
                  "integer_vif_scale0": "VMAF_integer_feature_vif_scale0_score",
                  "integer_vif_scale3": "VMAF_integer_feature_vif_scale3_score", "vmaf": "vmaf"}


def golden(r):
    with open(r.path("golden/bbb_854x480_120f_8bit.csv")) as f:
        rows = [l.strip().split(",") for l in f]
    head = rows[0]
    return [{k: float(row[head.index(c)]) for k, c in GOLDEN_COLUMNS.items()}
            for row in rows[1:] if row[0].isdigit()]


def run_live(r, dis, ref, options, pre="[0:v][1:v]", hw=False, name="live", out_opts=()):
    """vmaf_cuda with the NDJSON stream at full precision and the unscored frames printed;
    returns (NDJSON lines as dicts, filter warnings, unscored reasons, output frames)."""
    nd = r.tmp(name + ".ndjson")
    graph = (pre + "vmaf_cuda=log_fmt=ndjson:log_path=%s:precision=max%s%s,"
             "metadata=mode=print:key=lavfi.vmaf.unscored" % (nd, backend(hw), options))
    _, err, _ = r.ffmpeg_run(["-loglevel", "level+info", "-i", dis, "-i", ref, "-an", "-lavfi",
                              graph] + list(out_opts) + ["-f", "null", "-"])
    return read_ndjson(nd), WARN_RE.findall(err), unscored_reasons(err), frames_out(err)


def backend(hw):
    """The GPU variant scores software frames on the CUDA backend: the gap clip is lossless
    H.264 (High 4:4:4 Predictive), which NVDEC does not decode, and the rules are the
    pairing's, whatever memory the frames are in."""
    return ":backend=cuda" if hw else ":backend=cpu"


def read_ndjson(path):
    with open(path) as f:
        return [json.loads(l) for l in f]


def unscored_reasons(err):
    return [l.split("lavfi.vmaf.unscored=", 1)[1].strip() for l in err.splitlines()
            if "lavfi.vmaf.unscored=" in l]


def frames_out(err):
    counts = [l.split("frame=", 1)[1].split()[0] for l in err.replace("\r", "\n").splitlines()
              if "frame=" in l and "fps=" in l]
    return int(counts[-1]) if counts else None


def check_pairs(label, lines, gold):
    """Every frame line is main frame k against reference frame k (k from its pts at
    24 fps), in increasing order; frameNum counts on; VMAF is libvmaf's where the frames
    before and after k were scored too (motion compares neighbours); the pooled line is
    last and covers the frame lines. Returns the frame indices scored."""
    frames = [l for l in lines if l["type"] == "frame"]
    ks = [round(fr["pts_time"] * 24) if fr["pts_time"] is not None else -1 for fr in frames]
    for n, (fr, k) in enumerate(zip(frames, ks)):
        if fr["frameNum"] != n or not 0 <= k < len(gold) or (n and k <= ks[n - 1]):
            _fail("%s: frame line %d: frameNum %s, pts_time %s" % (label, n, fr["frameNum"],
                                                                  fr["pts_time"]))
        neighbours = (k == 0 or (n and ks[n - 1] == k - 1)) and n + 1 < len(ks) and ks[n + 1] == k + 1
        want = PAIR_FEATURES + (("vmaf",) if neighbours else ())
        bad = [f for f in want if fr["metrics"][f] != gold[k][f]]
        if bad:
            _fail("%s: frame %d (main frame %d) differs from libvmaf's frame %d in %s: "
                  "scored against another reference frame" % (label, n, k, k, bad))
    last = lines[-1] if lines else {}
    if last.get("type") != "pooled" or last.get("frames") != len(frames):
        _fail("%s: the NDJSON stream ends with %s, after %d frame lines" % (label, str(last)[:200],
                                                                          len(frames)))
    return ks


def events(lines):
    return [(l["event"], l.get("input"), l["pts_time"], l["message"]) for l in lines
            if l["type"] == "event"]


def case_live_gap(r, c, hw=False):
    """A stall of 2 s (reference frames 40-87) and three dropped frames (100-102):
    input_timeout=1s leaves the 51 main frames without their reference unscored, tells
    the stall when it starts and ends, and scores the 69 others as libvmaf does; without
    it, framesync's default scores them against the frame before each gap (warned)."""
    gold = golden(r)
    dis, ref = r.path(parity_cases.BBB[0]), c.get("bbb_ref_gaps.ts")
    lines, warns, reasons, out = run_live(r, dis, ref, ":input_timeout=1s", hw=hw)
    scored = check_pairs("gaps", lines, gold)
    want = [k for k in range(120) if not (40 <= k <= 87 or 100 <= k <= 102)]
    if scored != want:
        _fail("gaps: scored main frames %s, expected %s" % (scored, want))
    stall = ("the reference has no frame between 1.625 s and 3.666667 s (more than 1 s, "
             "input_timeout): main frames from 1.666667 s pass through unscored until it "
             "delivers again")
    resume = ("the reference delivers again (its frame at 3.666667 s, main at 3.666667 s): 48 "
              "main frames from 1.666667 s to 3.625 s passed through unscored")
    got = events(lines)
    if got != [("stalled", "reference", 1.666667, stall), ("resumed", "reference", 3.666667, resume)]:
        _fail("gaps: event lines %s" % got)
    # the event lines come in order with the frame lines, after the line of the frame
    # they came with (the unscored frames of the stall have none)
    order = [l.get("event") or round(l.get("pts_time") or 0, 6) for l in lines
             if l["type"] != "pooled"]
    if order[39:43] != [1.625, "stalled", 3.666667, "resumed"]:
        _fail("gaps: lines around the stall: %s" % order[37:44])
    jump = ("the reference input's timestamps jump ahead by 2 s at its frame 40 (from 1.625 s "
            "to 3.666667 s): frames lost or a stall; paired by its timestamps")
    summary = ("51 main frames passed through unscored where the reference had no frame of "
               "their time (gaps in it: dropped frames, a stall, the frames a stop cut off; "
               "input_timeout): in neither the log nor the score")
    if [w.strip() for w in warns if "VMAF score" not in w] != [jump, stall, resume, summary]:
        _fail("gaps: warnings %s" % warns)
    if reasons != ["reference_stalled"] * 48 + ["reference_gap"] * 3 or out != 120:
        _fail("gaps: unscored %s, %s frames out" % (reasons, out))
    # -frames:v 60 (40 scored frames, then 20 unscored in the stall): the NDJSON file is
    # cut back to the frames output and keeps the event line of the stall's first frame
    lines, _, _, out = run_live(r, dis, ref, ":input_timeout=1s", hw=hw, name="live_frames",
                                out_opts=["-frames:v", "60"])
    if check_pairs("-frames:v 60", lines, gold) != list(range(40)) or out != 60 or \
            events(lines) != [("stalled", "reference", 1.666667, stall)]:
        _fail("-frames:v 60: %s out, events %s" % (out, events(lines)))
    # ts_sync_mode=nearest pairs the frame after a gap when it is nearer: unscored too
    lines, _, reasons, _ = run_live(r, dis, ref, ":input_timeout=1s:ts_sync_mode=nearest",
                                    hw=hw, name="live_nearest")
    if check_pairs("nearest", lines, gold) != want or len(reasons) != 51:
        _fail("ts_sync_mode=nearest: %d unscored" % len(reasons))
    # a ladder's renditions follow the same rules (its own copy of framesync's)
    nd = r.tmp("live_ladder%d.ndjson")
    r.ffmpeg_run(["-i", dis, "-i", ref, "-an", "-lavfi",
                 "[0:v]split[a][b];[a][b][1:v]vmaf_cuda=renditions=2:input_timeout=1s:"
                 "log_fmt=ndjson:log_path=%s:precision=max%s[o0][o1]" % (nd, backend(hw)),
                 "-map", "[o0]", "-f", "null", "-", "-map", "[o1]", "-f", "null", "-"])
    for k in range(2):
        lad = read_ndjson(nd % k)
        told = [(e[0], e[3]) for e in events(lad)]
        if check_pairs("ladder %d" % k, lad, gold) != want or \
                told != [("stalled", "rendition %d: %s" % (k, stall)),
                         ("resumed", "rendition %d: %s" % (k, resume))]:
            _fail("ladder rendition %d: events %s" % (k, told))
    # without the live rules: framesync's default, every main frame scored, warned at the end
    lines, warns, reasons, _ = run_live(r, dis, ref, "", hw=hw, name="gap_default")
    reused = [w for w in warns if w.startswith("51 main frames paired with a reference frame "
                                               "already paired before")]
    if len([l for l in lines if l["type"] == "frame"]) != 120 or reasons or len(reused) != 1:
        _fail("gaps without input_timeout: %d frame lines, unscored %s, warnings %s"
              % (len(lines) - 1, reasons, warns))
    return "69 of 120 scored as libvmaf's pairs, 51 unscored, the stall told at 1.67 s and 3.67 s"


def case_live_end(r, c, hw=False):
    """The reference ends 60 frames early: with input_timeout its last frame is not
    repeated (the main frames after it go out unscored, told at the first); with
    shortest=1 the run ends there, told too."""
    gold = golden(r)
    dis, ref = r.path(parity_cases.BBB[0]), r.path(parity_cases.BBB[1])
    pre = "[1:v]trim=end_frame=60[f];[0:v][f]"
    lines, warns, reasons, out = run_live(r, dis, ref, ":input_timeout=5s", pre=pre, hw=hw)
    if check_pairs("end", lines, gold) != list(range(60)):
        _fail("end: not frames 0-59 scored")
    told = ("the reference ended after its frame at 2.458333 s: main frames from 2.5 s on pass "
            "through unscored (input_timeout: an input's end is not repeated)")
    if events(lines) != [("ended", "reference", 2.5, told)] or reasons != ["reference_ended"] * 60 \
            or out != 120 or told not in [w.strip() for w in warns]:
        _fail("end: events %s, unscored %d, %s out, warnings %s" % (events(lines), len(reasons),
                                                                    out, warns))
    lines, warns, reasons, out = run_live(r, dis, ref, ":input_timeout=5s:shortest=1", pre=pre,
                                          hw=hw, name="live_shortest")
    told = ("the reference ended after its frame at 2.458333 s while the main input had frames "
            "left: the run ends here (shortest=1 or eof_action=endall)")
    if check_pairs("shortest", lines, gold) != list(range(60)) or \
            events(lines) != [("ended", "reference", None, told)] or out != 60 or reasons:
        _fail("shortest=1: events %s, %s out, unscored %s" % (events(lines), out, reasons))
    return "60 scored, 60 unscored, the end told at 2.5 s; shortest=1: 60, told"


def case_live_stop(r, c, hw=False, runs=3):
    """Both inputs in real time (-re), the run stopped with SIGINT as an operator stops a
    live run: the frames one input delivered after the other was cut off (the last
    reference frame, or a group of pictures the stop cut short) are not scored against
    an older reference frame; the NDJSON stream ends with its pooled line."""
    gold = golden(r)
    nd = r.tmp("live_stop.ndjson")
    hwargs = ["-hwaccel", "cuda", "-hwaccel_output_format", "cuda"] if hw else []
    done = []
    for run in range(runs):
        graph = "[0:v][1:v]vmaf_cuda=input_timeout=5s:log_fmt=ndjson:log_path=%s:precision=max%s" % (
            nd, "" if hw else ":backend=cpu")  # (NVDEC frames on the GPU)
        cmd = [r.ffmpeg, "-hide_banner", "-nostdin", "-y"] + \
              hwargs + ["-re", "-i", r.path(parity_cases.BBB[0])] + \
              hwargs + ["-re", "-i", r.path(parity_cases.BBB[1]), "-an", "-lavfi", graph,
                        "-f", "null", "-"]
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(1.6 + 0.7 * run)
        p.send_signal(signal.SIGINT)
        try:
            _, err = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            _fail("stop: ffmpeg did not end within 120 s of SIGINT")
        lines = read_ndjson(nd)
        scored = check_pairs("stop %d" % run, lines, gold)
        # (a gap the stop cut into the main input leaves reference frames out, never a
        # main frame scored against another reference frame: checked above)
        if len(scored) < 10 or scored[0] != 0:
            _fail("stop %d: scored frames %s" % (run, scored))
        if "already paired before" in err or "was repeated" in err:
            _fail("stop %d: a frame was scored against a stand-in:\n%s" % (run, err[-2000:]))
        done.append(len(scored))
    return "stopped after %s frames: every frame scored against its own reference frame" % done


CPU_CASES = [case_live_gap, case_live_end, case_live_stop]
GPU_CASES = [case_live_gap, case_live_end, case_live_stop]

"""sync=auto: the offset between the inputs found from their pictures, then paired with.

On 20 s of moving pictures that do not repeat (parity_cases' sync_ref.mp4, 8 fps, and its
encode sync_dist.mp4): a main that leads the reference (a file whose first 13 frames
were cut, timestamps from 0; and 2 frames cut in the graph), one that lags it (the
reference's first 9 frames cut), and aligned inputs. Each log must equal, value for
value, the log of a run over the same frames paired by hand (trim and setpts on the
other input), with "sync_offset" in seconds, the line that tells it, an NDJSON "sync"
event, and identical runs giving identical logs. A reference that loses a frame
mid-stream (timestamps continuous) makes the scores collapse: the re-check finds the
new offset, says so, and from the frame recorded in "sync_changes" on every frame equals
the run over the intact reference. Misuse is a clear error.
"""

import re

from parity_cases import WARN_RE, _fail
from resize_cases import run  # vmaf_cuda over two clips: (exit status, log, stderr)

INFO_RE = re.compile(r"\[info\] (?:\[[^]]*\] )*(sync: .*)")


def cut(inp, frames):
    return "[%d:v]trim=start_frame=%d,setpts=PTS-STARTPTS" % (inp, frames)


def same_frames(label, got, want):
    if len(got) != len(want):
        _fail("%s: %d frames, expected %d" % (label, len(got), len(want)))
    for n, (g, w) in enumerate(zip(got, want)):
        if g["metrics"] != w["metrics"]:
            _fail("%s: frame %d: %s, expected %s" % (label, n, g["metrics"], w["metrics"]))


def case_sync_offsets(r, c, hw=False):
    dist, ref = c.get("sync_dist.mp4"), c.get("sync_ref.mp4")
    late = c.get("sync_dist_late.mp4")
    tag = "sync_hw" if hw else "sync"
    opts = ":sync=auto:sync_window=3s"
    cases = [
        # (label, main, reference, graph, the same frames paired by hand, offset, line)
        ("main leads by 13 frames (file)", late, ref, "[0:v][1:v]",
         "[0:v]null[m];%s[r];[m][r]" % cut(1, 13), -1.625,
         "sync: the main is ahead of the reference by 1.625 s (offset -1.625 s; "),
        ("main leads by 2 frames", dist, ref, "%s[m];[m][1:v]" % cut(0, 2),
         "%s[m];%s[r];[m][r]" % (cut(0, 2), cut(1, 2)), -0.25,
         "sync: the main is ahead of the reference by 0.250 s (offset -0.250 s; "),
        ("main lags by 9 frames", dist, ref, "[0:v]null[m];%s[r];[m][r]" % cut(1, 9),
         "%s[m];%s[r];[m][r]" % (cut(0, 9), cut(1, 9)), 1.125,
         "sync: the main is behind the reference by 1.125 s (offset +1.125 s; "),
        ("aligned", dist, ref, "[0:v][1:v]", "[0:v][1:v]", 0.0,
         "sync: the inputs are aligned (offset +0.000 s; "),
    ]
    for n, (label, main, reference, graph, by_hand, offset, line) in enumerate(cases):
        _, want, _ = run(r, main, reference, "%s_hand_%d" % (tag, n), pre=by_hand, hw=hw)
        _, got, err = run(r, main, reference, "%s_auto_%d" % (tag, n), opts, pre=graph, hw=hw)
        said = INFO_RE.findall(err)
        if not any(s.startswith(line) for s in said):
            _fail("%s: no line '%s...' in %s\n%s" % (label, line, said, err[-3000:]))
        if not got or got.get("sync_offset") != offset:
            _fail("%s: sync_offset %r, expected %r" % (label, got and got.get("sync_offset"), offset))
        if "sync_changes" in got:
            _fail("%s: sync_changes %r without a re-check" % (label, got["sync_changes"]))
        same_frames(label, got["frames"], want["frames"])
        if got["pooled_metrics"] != want["pooled_metrics"]:
            _fail("%s: pooled %s, expected %s" % (label, got["pooled_metrics"], want["pooled_metrics"]))
        warns = WARN_RE.findall(err)
        if any("setpts=PTS-STARTPTS" in w for w in warns):
            _fail("%s: the start warning's setpts advice after sync=auto aligned: %s" % (label, warns))
        if label.startswith("main lags") and not any(
                "sync=auto: after the offset, the main starts at 0 s and the reference at 1.125 s: "
                "9 main frames passed through unscored" in w for w in warns):
            _fail("%s: the unscored frames before the first pair are not told: %s" % (label, warns))
    # an offset beyond the window is not taken for one at its edge: none found, said, and
    # "sync_offset" null (the inputs paired as their timestamps say)
    _, far, err = run(r, dist, ref, tag + "_far", ":sync=auto:sync_window=2s",
                      pre="[0:v]null[m];%s[r];[m][r]" % cut(1, 20), hw=hw)
    warns = WARN_RE.findall(err)
    if not far or "sync_offset" not in far or far["sync_offset"] is not None or \
            not any(w.startswith("sync: ") and "give a larger sync_window" in w for w in warns):
        _fail("2.5 s against a 2 s window: sync_offset %r, warnings %s" %
              (far and far.get("sync_offset", "absent"), warns))
    # identical runs, identical logs; the NDJSON stream has the event
    _, a, _ = run(r, late, ref, tag + "_again_a", opts, hw=hw)
    _, b, _ = run(r, late, ref, tag + "_again_b", opts, hw=hw)
    if {k: v for k, v in a.items() if k != "fps"} != {k: v for k, v in b.items() if k != "fps"}:
        _fail("two identical sync=auto runs gave different logs")
    _, nd, _ = run(r, late, ref, tag + "_nd", opts, hw=hw, nd=True)
    events = [l for l in nd or [] if l.get("type") == "event"]
    if not events or events[0].get("event") != "sync" or events[0].get("input") != "both" or \
            not events[0].get("message", "").startswith("sync: the main is ahead of the reference by 1.625 s"):
        _fail("NDJSON: no sync event line first: %s" % events[:3])
    frames = [l for l in nd if l.get("type") == "frame"]
    if len(frames) != len(a["frames"]) or nd[-1].get("type") != "pooled":
        _fail("NDJSON: %d frame lines (log %d), last %s" % (len(frames), len(a["frames"]), nd[-1:]))
    return "offsets -1.625, -0.25, +1.125, 0 s found; logs equal the frames paired by hand"


def case_sync_recheck(r, c, hw=False):
    dist, ref, lost = c.get("sync_dist.mp4"), c.get("sync_ref.mp4"), c.get("sync_ref_lost.mp4")
    tag = "sync_re_hw" if hw else "sync_re"
    _, want, _ = run(r, dist, ref, tag + "_intact", hw=hw)
    _, got, err = run(r, dist, lost, tag + "_lost", ":sync=auto:sync_window=3s", hw=hw)
    warns = [w.strip() for w in WARN_RE.findall(err)]
    if not any(w.startswith("sync: the scores collapsed (mean ") and "re-checking the offset "
               "(+0.000 s now)" in w for w in warns):
        _fail("no collapse told: %s" % warns)
    if not any(w.startswith("sync: re-checked: the offset is now +0.125 s (was +0.000 s;")
               for w in warns):
        _fail("no new offset told: %s" % warns)
    changes = got.get("sync_changes") if got else None
    if got.get("sync_offset") != 0.0 or not changes or len(changes) != 1 or \
            changes[0]["offset"] != 0.125:
        _fail("sync_offset %r, sync_changes %r" % (got.get("sync_offset"), changes))
    start = changes[0]["frame"]
    # the reference lost its frame 100: frames before are the intact run's; the re-check
    # needs the collapse (half a second), the frames in flight, and 2 s of frames
    if not 100 < start < 160:
        _fail("the new offset took effect at frame %d" % start)
    _, again, _ = run(r, dist, lost, tag + "_lost_again", ":sync=auto:sync_window=3s", hw=hw)
    if {k: v for k, v in again.items() if k != "fps"} != {k: v for k, v in got.items() if k != "fps"}:
        _fail("two identical runs with a re-check gave different logs: sync_changes %s, %s" %
              (changes, again.get("sync_changes")))
    same_frames("before the loss", got["frames"][:100], want["frames"][:100])
    same_frames("after the re-check", got["frames"][start:], want["frames"][start:])
    return "collapse told, re-check found +0.125 s, the intact run's values from frame %d" % start


def case_sync_errors(r, c, hw=False):
    dist, ref = c.get("sync_dist.mp4"), c.get("sync_ref.mp4")
    for opts, pre, want in [
            (":sync=auto:renditions=2", "[0:v][0:v][1:v]", "sync=auto pairs two inputs; a ladder"),
            (":sync=auto:sync_window=0s", "[0:v][1:v]", "sync_window '0s' is not a duration from 100ms to 300s"),
            (":sync=auto:sync_window=12", "[0:v][1:v]", "sync_window '12' is not a duration from 100ms to 300s"),
            (":sync=auto:sync_window=1e15s", "[0:v][1:v]", "sync_window '1e15s' is not a duration from 100ms to 300s"),
            (":sync=sometimes", "[0:v][1:v]", "sync")]:
        rc, _, err = run(r, dist, ref, "sync_err", opts, pre=pre, hw=hw, expect_ok=False)
        if rc == 0 or want not in err:
            _fail("%s: exit %d, no '%s' in\n%s" % (opts, rc, want, err[-1500:]))
    return "ladder, bad windows and modes refused"


CPU_CASES = [case_sync_offsets, case_sync_recheck, case_sync_errors]
GPU_CASES = [case_sync_offsets, case_sync_recheck]

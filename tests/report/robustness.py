#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause-Patent
"""Suite `report`, part 2: vmaf-cuda-report on odd input and output (the defects a hostile
test found, each reproduced here): `$` and CJK in labels, logs and manifests of the wrong
shape, raw elementary streams, subsampled logs, BD over all points or the hull, output that
cannot be written, names from log file names, missing logs, -o through a symlink, titles
without scores or only in the other run, plot files and their size, ticks and the legend,
cut NDJSON streams, renditions off every hull, progress intervals, wrong options.

    robustness.py --tools tools [--clip-ffmpeg ffmpeg]     (or from report_test.py)

Fast (small synthetic logs; a few 48-frame clips of testsrc for the raw streams)."""

import contextlib
import io
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile


class Fail(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)
    print("ok: " + what, flush=True)


def mklog(path, vals, nums=None, pooled=True, extra=None):
    """A libvmaf JSON log: vmaf = vals (None: null), psnr_y = vals / 2 + 10."""
    frames = []
    for k, v in enumerate(vals):
        m = {"vmaf": v, "psnr_y": None if v is None else v / 2 + 10}
        m.update((extra or {}).get(k, {}))
        frames.append({"frameNum": nums[k] if nums else k, "metrics": m})
    d = {"frames": frames}
    if pooled:
        d["pooled_metrics"] = {}
        for key in ("vmaf", "psnr_y"):
            xs = [None if v is None else (v if key == "vmaf" else v / 2 + 10) for v in vals]
            ok = [x for x in xs if x is not None]
            bad = len(ok) != len(xs) or not xs
            d["pooled_metrics"][key] = {"min": min(ok) if ok else None, "max": max(ok) if ok else None,
                                        "mean": None if bad else sum(ok) / len(ok),
                                        "harmonic_mean": None if bad else len(ok) / sum(1 / (x + 1) for x in ok) - 1}
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(d, f)
    return path


def mkndjson(path, vals, fps=24.0, pooled=True, cut=None, times=True):
    lines = [json.dumps({"type": "frame", "frameNum": k, **({"pts_time": k / fps} if times is True or
                                                            (times and k in times) else {}),
                         "metrics": {"vmaf": v}}) for k, v in enumerate(vals)]
    if pooled:
        lines.append(json.dumps({"type": "pooled", "frames": len(vals), "pooled_metrics": {
            "vmaf": {"min": min(vals), "max": max(vals), "mean": sum(vals) / len(vals),
                     "harmonic_mean": len(vals) / sum(1 / (x + 1) for x in vals) - 1}}}))
    text = "\n".join(lines) + "\n"
    if cut:
        text = cut(lines)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path


def mkmanifest(path, titles):
    with open(path, "w") as f:
        for t in titles:
            f.write((t if isinstance(t, str) else json.dumps(t)) + "\n")
    return path


class Ctx:
    def __init__(self, tools, w, ffmpeg):
        self.tools, self.w, self.ffmpeg = tools, w, ffmpeg
        sys.path.insert(0, tools)
        from vmaf_cuda_report import bd, build, cli, logs, media, plots, sources
        self.bd, self.build, self.cli, self.logs, self.media, self.plots, self.sources = \
            bd, build, cli, logs, media, plots, sources
        self.ffprobe = shutil.which("ffprobe")

    def p(self, *parts):
        return os.path.join(self.w, *parts)

    def report(self, argv):
        """cli.main in this process: (exit status, stderr, report.json or None)."""
        err = io.StringIO()
        out = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            try:
                rc = self.cli.main(["--jobs", "1"] + argv)
            except SystemExit as e:
                rc = e.code
        o = argv[argv.index("-o") + 1] if "-o" in argv else None
        rj = os.path.join(o, "report.json") if o else None
        rep = json.load(open(rj)) if rc == 0 and rj and os.path.isfile(rj) else None
        return rc, err.getvalue(), rep

    def tool(self, argv, env=None):
        return subprocess.run([os.path.join(self.tools, "vmaf-cuda-report")] + argv, capture_output=True,
                              text=True, env=dict(os.environ, **(env or {})), timeout=300)


def ladder_manifest(c, name, title, rates, quals, nframes=24, models=None):
    rends = []
    for k, (r, q) in enumerate(zip(rates, quals)):
        log = mklog(c.p(name, "%s_%d.json" % (title.replace("/", "_"), k)), [q] * nframes)
        rends.append({"name": "r%d" % k, "log": log, "kbps": r})
    t = {"title": title, "renditions": rends}
    if models:
        t["models"] = models
    return t


# ------------------------------------------------------------------------------ the tests
def labels_and_fonts(c):
    """#1 and #13 (fonts): `$` in a title or a rendition name is text, CJK draws without
    warnings, a plot that fails becomes a note on its title."""
    title = "cost $5 and $10 \\frac{a$ 日本語"
    m = mkmanifest(c.p("dollar.jsonl"), [ladder_manifest(c, "dollar", title, [300, 800, 2000], [60, 75, 85])])
    with open(m) as f:
        t = json.loads(f.readline())
    t["renditions"][0]["name"] = "a$b$c"
    mkmanifest(m, [t, ladder_manifest(c, "dollar", "plain", [300, 800, 2000], [60, 75, 85])])
    out = c.p("dollar-out")
    p = c.tool(["-o", out, "--manifest", m])
    rep = json.load(open(os.path.join(out, "report.json"))) if p.returncode == 0 else {}
    t0 = (rep.get("titles") or [{}])[0]
    svg = open(os.path.join(out, t0["plots"]["rate_quality"]["vmaf"]), encoding="utf-8").read() if t0 else ""
    check(p.returncode == 0 and p.stderr == "" and "$5 and $10 \\frac{a$ 日本語" in svg and "a$b$c" in svg and
          not any(n.startswith("plots:") for n in t0["notes"]),
          "a title with `$` and CJK: written, the plot's text is the title as typed, no warnings on stderr (%r)"
          % p.stderr[-300:])
    # a plot that fails is a note on its title, the others are drawn
    orig = c.plots.rate_quality

    def boom(t, *a, **k):
        if t["title"] == "plain":
            raise ValueError("synthetic failure")
        return orig(t, *a, **k)
    c.plots.rate_quality = boom
    try:
        rc, err, rep = c.report(["-o", c.p("dollar-out2"), "--manifest", m])
    finally:
        c.plots.rate_quality = orig
    check(rc == 0 and rep["titles"][0]["plots"]["rate_quality"] and not rep["titles"][1]["plots"]["rate_quality"] and
          any("plots: the vmaf rate-quality plot failed (ValueError: synthetic failure)" in n
              for n in rep["titles"][1]["notes"]),
          "a plot that fails: a note on its title, the report and the other titles' plots written")


def odd_logs(c):
    """#2: odd logs are a note on their rendition; odd manifests and batch.json exit 2."""
    good = mklog(c.p("odd", "good.json"), [80] * 24)
    nd = mkndjson(c.p("odd", "nd.ndjson"), [70.0] * 24, cut=lambda ls: "\n".join(ls[:5] + ["[1,2]"] + ls[5:]) + "\n")
    high = mklog(c.p("odd", "high.json"), [80] * 24, extra={3: {"vmaf": "high"}})
    obj = mklog(c.p("odd", "obj.json"), [80] * 24, extra={5: {"psnr_y": {"x": 1}}})
    m = mkmanifest(c.p("odd.jsonl"), [{"title": "t", "renditions": [
        {"name": "good", "log": good, "kbps": 1000}, {"name": "nd", "log": nd, "kbps": 500},
        {"name": "high", "log": high, "kbps": 2000}, {"name": "obj", "log": obj, "kbps": 3000}]}])
    rc, err, rep = c.report(["-o", c.p("odd-out"), "--manifest", m])
    t = rep["titles"][0] if rep else {}
    r = {x["name"]: x for x in t.get("renditions", [])}
    notes = " | ".join(t.get("notes", []))
    check(rc == 0 and r["nd"]["frames"] == 24 and r["nd"]["pooled"]["vmaf"]["mean"] == 70.0 and
          "nd: 1 line of the stream skipped" in notes and r["high"]["frames"] == 0 and
          'frame 3: vmaf is "high", not a number' in notes and r["obj"]["frames"] == 0 and
          'frame 5: psnr_y is {"x": 1}, not a number' in notes and r["good"]["pooled"]["vmaf"]["mean"] == 80,
          "an NDJSON line [1,2] skipped with a note; a metric \"high\" or {\"x\":1}: a note, that rendition "
          "without scores, the others scored")
    os.makedirs(c.p("badbatch"), exist_ok=True)
    with open(c.p("badbatch", "batch.json"), "w") as f:
        json.dump({"titles": [{"title": "x"}]}, f)
    rc, err, _ = c.report(["-o", c.p("bb-out"), "--batch", c.p("badbatch")])
    check(rc == 2 and "batch.json: titles[0]: \"dir\" is missing" in err, "batch.json without dir: exit 2, %s" % err.strip())
    cases = [({"title": "t", "renditions": [{"name": 720, "log": good}]}, ':1: renditions[0]: "name" must be'),
             ({"title": "t", "models": 5, "renditions": [{"name": "a", "log": good}]}, ':1: "models" must be'),
             ({"title": "t", "models": "vmaf", "renditions": [{"name": "a", "log": good}]}, ':1: "models" must be'),
             ({"title": "t", "renditions": [{"name": "a", "log": good}, {"name": "a", "log": good}]},
              ":1: renditions[1]: rendition name 'a' appears twice"),
             ({"title": "t", "renditions": [{"name": "a", "log": good, "kbps": True}]}, ':1: renditions[0]: "kbps" must be'),
             ('{"title": "t", "renditions": [{"name": "a", "log": "%s", "kbps": 1e999}]}' % good,
              ':1: renditions[0]: "kbps" must be a finite number above 0, not infinite')]
    for k, (line, want) in enumerate(cases):
        m = mkmanifest(c.p("bad%d.jsonl" % k), [line])
        rc, err, _ = c.report(["-o", c.p("bad-out"), "--manifest", m])
        if rc != 2 or (m + want) not in err:
            raise Fail("manifest %s: exit %s, %r (wanted %r)" % (line, rc, err, want))
    check(True, "manifests with name 720, models 5 or \"vmaf\", a name twice, kbps true or 1e999: exit 2, "
                "the manifest's line and field named (#2, #16)")


def clips(c):
    """48 frames of testsrc at 24 fps, 128x72: h264 in mp4 and raw, hevc raw, AV1 OBU raw."""
    d = c.p("clips")
    os.makedirs(d)
    src = ["-f", "lavfi", "-i", "testsrc=size=128x72:rate=24", "-frames:v", "48", "-pix_fmt", "yuv420p"]
    mk = lambda args, name: subprocess.run([c.ffmpeg, "-nostdin", "-v", "error", "-y"] + args + [os.path.join(d, name)],
                                           check=True, capture_output=True, timeout=300)
    mk(src + ["-c:v", "libx264", "-preset", "ultrafast", "-crf", "30"], "a.mp4")
    mk(["-i", os.path.join(d, "a.mp4"), "-c:v", "copy", "-bsf:v", "h264_mp4toannexb", "-f", "h264"], "a.264")
    mk(src + ["-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=none", "-f", "hevc"], "a.265")
    mk(src + ["-c:v", "libaom-av1", "-cpu-used", "8", "-crf", "50", "-f", "obu"], "a.obu")
    return d


def raw_streams(c, d):
    """#3: raw elementary streams get a bitrate (packets over packets / frame rate), an OBU
    stream the title's frame rate (24, not ffprobe's guess of 25), a note where it is guessed."""
    mp4 = c.media.probe(c.ffprobe, os.path.join(d, "a.mp4"))
    h264 = c.media.probe(c.ffprobe, os.path.join(d, "a.264"))
    hevc = c.media.probe(c.ffprobe, os.path.join(d, "a.265"))
    check(h264["bitrate_kbps"] == h264["size_bytes"] * 8 / 2.0 / 1000 and
          abs(h264["bitrate_kbps"] - mp4["bitrate_kbps"]) < 0.01 * mp4["bitrate_kbps"] and
          hevc["bitrate_kbps"] == hevc["size_bytes"] * 8 / 2.0 / 1000 and hevc["packets"] == 48,
          "raw .264: %.3f kbit/s (its 48 packets over 48/24 s; the mp4 of the same stream: %.3f), raw .265: %.3f" % (
              h264["bitrate_kbps"], mp4["bitrate_kbps"], hevc["bitrate_kbps"] or 0))
    obu = c.media.probe(c.ffprobe, os.path.join(d, "a.obu"))
    log = mklog(c.p("raw", "x.json"), [80] * 48)
    spec = {"title": "raw", "renditions": [{"name": "mp4", "path": os.path.join(d, "a.mp4"), "log": log},
                                            {"name": "obu", "path": os.path.join(d, "a.obu"), "log": log}]}
    t = c.build.build_title(spec, c.build.Prober(c.ffprobe))
    want = obu["size_bytes"] * 8 / (48 / 24.0) / 1000
    check(obu["fps"] == 25 and abs(t["renditions"][1]["bitrate_kbps"] - want) < 1e-9 * want and
          any("obu: a raw obu stream" in n and "at 24 frames/s" in n for n in t["notes"]),
          "raw .obu beside an mp4 at 24 fps: %.3f kbit/s at 24 frames/s, not ffprobe's 25; a note says so" % want)
    alone = c.build.build_title({"title": "o", "renditions": spec["renditions"][1:]}, c.build.Prober(c.ffprobe))
    check(any("assumes ffprobe's 25 frames/s" in n for n in alone["notes"]),
          "a raw .obu alone: a note that its bitrate assumes ffprobe's 25 frames/s")
    # an ffprobe that finds a video stream but no packets (nor duration, nor container rate)
    fake = c.p("fake-ffprobe")
    with open(fake, "w") as fh:
        fh.write('#!/bin/sh\necho \'{"streams": [{"width": 64, "height": 64}], "format": {}}\'\n')
    os.chmod(fake, 0o755)
    t = c.build.build_title({"title": "p", "renditions": [{"name": "x", "path": os.path.join(d, "a.mp4"), "log": log}]},
                            c.build.Prober(fake))
    check(t["renditions"][0]["bitrate_kbps"] is None and any(n.startswith("x: no bitrate: ffprobe gives no packets")
                                                             for n in t["notes"]),
          "media without a bitrate: a note (%s)" % t["notes"])


def subsampled(c, d):
    """#4: a subsampled log's times are frameNum / fps (not its position)."""
    nums = list(range(0, 48, 4))                 # 12 frames: 0, 4, ..., 44 of 48 at 24 fps
    vals = [90 if n < 24 else 40 for n in nums]   # the second second is the bad one
    log = mklog(c.p("sub", "s.json"), vals, nums=nums)
    t = c.build.build_title({"title": "s", "renditions": [{"name": "s", "path": os.path.join(d, "a.mp4"), "log": log}]},
                            c.build.Prober(c.ffprobe), worst=2)
    w = t["worst_seconds"]["s"]
    check(w[0]["start_s"] == 1.0 and w[0]["first_frame"] == 24 and w[0]["last_frame"] == 44 and w[0]["mean"] == 40 and
          t["_series"]["s"][1][:3] == [0.0, 4 / 24.0, 8 / 24.0],
          "a log of every 4th frame: its worst second is 1-2 s, frames 24-44; times frameNum / 24 (%s)" % w[:1])


def bd_points(c):
    """#5: BD values over every rendition's point by default (sorted by rate), the hull on
    request; fewer than 4 points: one cubic note per title; a non-monotone ladder: a note."""
    A = ladder_manifest(c, "bdA", "t", [300, 700, 1500, 3000, 6000], [50, 65, 78, 88, 93])
    # r2 is off the hull (below the segment r1-r3)
    B = ladder_manifest(c, "bdB", "t", [280, 650, 1300, 2700, 5500], [52, 66, 70, 89, 94])
    ma, mb = mkmanifest(c.p("bdA.jsonl"), [A]), mkmanifest(c.p("bdB.jsonl"), [B])
    rc, _, rep = c.report(["-o", c.p("bd-all"), "--manifest", mb, "--against-manifest", ma])
    rc2, _, rep2 = c.report(["-o", c.p("bd-hull"), "--manifest", mb, "--against-manifest", ma, "--bd-points", "hull"])
    q = lambda t: [x[1] for x in t]
    ra, qa = [300, 700, 1500, 3000, 6000], [50, 65, 78, 88, 93]
    rb, qb = [280, 650, 1300, 2700, 5500], [52, 66, 70, 89, 94]
    want_all = c.bd.bd(ra, qa, rb, qb)["bd_rate"]
    t, t2 = rep["titles"][0], rep2["titles"][0]
    hb = [i for i in c.build.hull.upper_hull(list(zip(rb, qb)))]
    want_hull = c.bd.bd(ra, qa, [rb[i] for i in hb], [qb[i] for i in hb])["bd_rate"]
    check(rc == rc2 == 0 and t["hull"]["vmaf"] == ["r0", "r1", "r3", "r4"] and t["bd_rate"]["vmaf"] == want_all and
          t2["bd_rate"]["vmaf"] == want_hull and want_all["pchip"] != want_hull["pchip"] and
          rep["bd_points"] == "all" and rep2["bd_points"] == "hull",
          "BD-rate over all 5 points by default (pchip %.4f %%), over the hull's 4 with --bd-points hull (%.4f %%)" % (
              want_all["pchip"], want_hull["pchip"]))
    A3 = ladder_manifest(c, "bdA3", "t", [300, 1000, 3000], [50, 75, 90])
    B3 = ladder_manifest(c, "bdB3", "t", [300, 1000, 3000], [55, 70, 92])
    rc, _, rep = c.report(["-o", c.p("bd3"), "--manifest", mkmanifest(c.p("b3.jsonl"), [B3]),
                           "--against-manifest", mkmanifest(c.p("a3.jsonl"), [A3])])
    t = rep["titles"][0]
    cub = [n for n in t["notes"] if "cubic" in n]
    check(len(cub) == 1 and "this run has 3, the other 3" in cub[0] and t["bd_rate"]["psnr_y"]["cubic"] is None and
          t["bd_rate"]["vmaf"]["pchip"] is not None,
          "3 points, 2 metrics: one note on the cubic for the title (%s)" % cub)
    Bn = ladder_manifest(c, "bdBn", "t", [300, 1000, 3000], [55, 80, 76])
    rc, _, rep = c.report(["-o", c.p("bdn"), "--manifest", mkmanifest(c.p("bn.jsonl"), [Bn]),
                           "--against-manifest", mkmanifest(c.p("a3.jsonl"), [A3])])
    check(any(n.startswith("vmaf, psnr_y: quality is not monotone in bitrate in this run (r2 has more bits than r1")
              for n in rep["titles"][0]["notes"]),
          "a ladder whose quality falls at the top: one note says it is not monotone")


def output(c):
    """#6, #9, #12: output errors are one line and exit 1, nothing half-written; -o through
    a symlink to a batch folder refused; plot files once (SVG), stale ones cleaned."""
    m = mkmanifest(c.p("out.jsonl"), [ladder_manifest(c, "outl", "t", [300, 800, 2000], [60, 75, 85])])
    f = c.p("afile")
    open(f, "w").close()
    p = c.tool(["-o", f, "--manifest", m])
    check(p.returncode == 1 and p.stderr == "vmaf-cuda-report: error: cannot write '%s': Not a directory\n" % f,
          "-o a file: %s" % p.stderr.strip())
    out = c.p("out-ok")
    os.makedirs(os.path.join(out, "plots"))
    for stale in ("007-old-frames.png", "007-old-rq-vmaf.svg", "mine.txt"):
        open(os.path.join(out, "plots", stale), "w").close()
    rc, _, rep = c.report(["-o", out, "--manifest", m])
    files = sorted(os.listdir(os.path.join(out, "plots")))
    page = open(os.path.join(out, "report.html"), encoding="utf-8").read()
    check(rc == 0 and files == ["000-t-frames.svg", "000-t-rq-vmaf.svg", "mine.txt"] and page.count("<img ") == 2 and
          ".png" not in page,
          "plot files: SVG once each; an earlier report's plot files removed, other files kept (%s)" % files)
    rc, _, _ = c.report(["-o", c.p("out-none"), "--manifest", m, "--plot-files", "none"])
    check(rc == 0 and not os.path.exists(c.p("out-none", "plots")), "--plot-files none: the page alone")
    # a full disk while writing report.json: the earlier report stays whole, no temporary file
    before = {x: open(os.path.join(out, x), "rb").read() for x in ("report.json", "report.html")}
    orig = c.cli.tables.write_json

    def full(path, rep):
        raise OSError(28, os.strerror(28), path)
    c.cli.tables.write_json = full
    try:
        rc, err, _ = c.report(["-o", out, "--manifest", m])
    finally:
        c.cli.tables.write_json = orig
    after = {x: open(os.path.join(out, x), "rb").read() for x in ("report.json", "report.html")}
    left = [x for x in os.listdir(out) if x.endswith(".tmp") or x.startswith(".vmaf-cuda-report-")]
    check(rc == 1 and "vmaf-cuda-report: error: cannot write '" in err and "No space left on device" in err and
          after == before and left == [] and "Traceback" not in err,
          "a full disk: one error line, exit 1, the earlier report.json and report.html as they were, no temp files")
    # -o through a symlink to a batch folder
    bdir = c.p("batchdir")
    os.makedirs(os.path.join(bdir, "titles", "t"))
    with open(os.path.join(bdir, "batch.json"), "w") as fh:
        json.dump({"titles": [{"title": "t", "dir": "t", "renditions": [{"name": "a", "path": "/x.mp4"}]}]}, fh)
    os.symlink(bdir, c.p("blink"))
    rc, err, _ = c.report(["-o", c.p("blink"), "--batch", bdir])
    check(rc == 2 and "is a batch folder" in err and not os.path.exists(os.path.join(bdir, "report.html")),
          "-o a symlink to the batch folder: refused (%s)" % err.strip())


def names_and_missing(c):
    """#7, #8: names from log file names keep their digits; '=' in names; missing logs."""
    a = mklog(c.p("nm", "1080-4500k.json"), [90] * 24)
    b = mklog(c.p("nm", "720-4500k.json"), [80] * 24)
    e = mklog(c.p("nm", "crf=30.json"), [70] * 24)
    media = c.p("nm", "x=1.mp4")
    open(media, "w").close()
    run = c.sources.from_logs([a, b, e + "=" + media], "t")
    r = run["titles"][0]["renditions"]
    check([x["name"] for x in r] == ["1080-4500k", "720-4500k", "crf=30"] and r[2]["log"] == e and r[2]["path"] == media,
          "names 1080-4500k, 720-4500k (no clash), crf=30 (its log crf=30.json, media x=1.mp4: the last '=' "
          "with an existing file on each side)")
    tdir = c.p("nm", "titles", "t1")
    lg = mklog(os.path.join(tdir, "0-720p.json"), [80] * 24)
    with open(os.path.join(tdir, "task.json"), "w") as fh:
        json.dump({"renditions": [{"name": "720p", "log": "0-720p.json"}]}, fh)
    check(c.sources.from_logs([lg], "t")["titles"][0]["renditions"][0]["name"] == "720p",
          "a vmaf-cuda-batch log K-NAME.json: its task.json's name")
    missing = c.p("nm", "nope.json")
    p = c.tool(["-o", c.p("nm-out"), a, missing])
    check(p.returncode == 2 and "no such log: %s" % missing in p.stderr, "a log that does not exist: exit 2 (%s)" % p.stderr.strip())


def scoreless_and_only_other(c):
    """#10, #11: a title without scores shows the other run's; titles only in the other run
    are listed."""
    A = [ladder_manifest(c, "soA", "t", [300, 800, 2000], [60, 75, 85]),
         ladder_manifest(c, "soA", "only-old", [300, 800], [60, 75])]
    B = {"title": "t", "renditions": [{"name": "r%d" % k, "log": c.p("soB", "missing%d.json" % k), "kbps": r}
                                      for k, r in enumerate([300, 800, 2000])]}
    rc, _, rep = c.report(["-o", c.p("so-out"), "--manifest", mkmanifest(c.p("soB.jsonl"), [B]),
                           "--against-manifest", mkmanifest(c.p("soA.jsonl"), A)])
    page = open(c.p("so-out", "report.html"), encoding="utf-8").read()
    other = page[page.index('id="a0"'):]
    other = other[:other.index("</table>")]
    check(rc == 0 and "None" not in page and "vmaf mean" in other and ">75.000<" in other and 'class="off"' not in other
          and "n/a</td><td data-v=\"\">n/a</td><td data-v=\"\">n/a</td><td data-v=\"\">n/a</td><td data-v=\"\">n/a" not in other,
          "a title without scores: no 'None mean' header, the other run's rows show its scores (75.000)")
    check(rep["only_in_against"] == ["only-old"] and 'id="only-in-against"' in page and "<li>only-old</li>" in page and
          rep["notes"] == ["1 title only in the other run (not compared): only-old"],
          "a title only in the other run: report.json's only_in_against, a note, a list on the page")


def plots_readable(c):
    """#13: plain kbit/s ticks on the bitrate axis; the per-frame legend below the axes."""
    ticks = c.plots.bitrate_ticks(300, 6000)
    narrow = c.plots.bitrate_ticks(400, 900)
    check(ticks == [300.0, 500.0, 1000.0, 2000.0, 3000.0, 5000.0] or (len(ticks) >= 4 and 1000.0 in ticks),
          "a 300-6000 kbit/s ladder: ticks %s; 400-900: %s" % (ticks, narrow))
    check(len(narrow) >= 4, "a narrow ladder still gets 4 ticks or more")
    svg = open(c.p("out-ok", "plots", "000-t-rq-vmaf.svg"), encoding="utf-8").read()
    check(all(">%s<" % x in svg for x in ("300", "500", "1000", "2000")) and "10^" not in svg and "10<" not in svg,
          "the rate-quality plot's bitrate ticks read 300, 500, 1000, 2000 (no 10^3)")
    figs = []
    orig = c.plots._save
    c.plots._save = lambda fig, *a, **k: figs.append(fig) or {"svg_text": "", "svg": None, "png": None}
    try:
        log = c.logs.load(mklog(c.p("leg", "a.json"), [50 + k % 40 for k in range(240)]))
        t = {"title": "t", "primary": "vmaf", "renditions": [{"name": "r%d" % k} for k in range(5)],
             "_series": {"r%d" % k: (log.series, None, log.nums) for k in range(5)}, "worst_seconds": {}}
        c.plots.frames(t, c.w, "x")
    finally:
        c.plots._save = orig
    fig = figs[0]
    fig.canvas.draw()
    ax = fig.axes[0]
    leg, box = ax.get_legend().get_window_extent(), ax.get_window_extent()
    fb = fig.bbox
    check(leg.y1 <= box.y0 and leg.y0 >= fb.y0 - 1, "the per-frame legend is below the axes, inside the figure")


def cut_streams(c, d):
    """#14, #15: cut or odd NDJSON streams and null scores give notes, not lost renditions."""
    full = mkndjson(c.p("cut", "full.ndjson"), [80.0 + k % 5 for k in range(48)])
    short = mkndjson(c.p("cut", "short.ndjson"), [70.0] * 48, cut=lambda ls: "\n".join(ls[:30]) + "\n")
    mid = mkndjson(c.p("cut", "mid.ndjson"), [60.0] * 48, cut=lambda ls: "\n".join(
        ls[:10] + [ls[10][:25], ""] + ls[11:]) + "\n")
    mixed = mkndjson(c.p("cut", "mixed.ndjson"), [65.0] * 48, times=set(range(0, 48, 2)))
    empty = c.p("cut", "empty.json")
    with open(empty, "w") as fh:
        json.dump({"frames": [], "pooled_metrics": {}}, fh)
    nulls = mklog(c.p("cut", "nulls.json"), [75.0] * 8 + [None, None])
    mp4 = os.path.join(d, "a.mp4")
    spec = {"title": "c", "renditions": [{"name": n, "path": mp4, "log": lg} for n, lg in (
        ("full", full), ("short", short), ("mid", mid), ("mixed", mixed), ("empty", empty), ("nulls", nulls))]}
    t = c.build.build_title(spec, c.build.Prober(c.ffprobe))
    r = {x["name"]: x for x in t["renditions"]}
    notes = " | ".join(t["notes"])
    check(r["short"]["frames"] == 30 and "short: the stream has no pooled line (cut short?): 30 frames" in notes and
          "short: 30 frames, the title's other renditions up to 48" in notes,
          "a stream cut at 30 of 48 frames: notes (no pooled line, fewer frames than the others)")
    check(r["mid"]["frames"] == 47 and r["mid"]["pooled"]["vmaf"]["mean"] == 60.0 and
          "mid: 1 line of the stream skipped" in notes and "mid: the pooled line counts 48 frames, the stream holds 47" in notes,
          "a partial line in the middle, then a blank line: that line skipped with notes, 47 frames kept")
    check(r["mixed"]["frames"] == 48 and t["_series"]["mixed"][1][1] == 1 / 24.0 and
          t["worst_seconds"]["mixed"][0]["start_s"] == 0.0 and "mixed: 24 of 48 frames have no pts_time" in notes,
          "pts_time on every other frame: times from the frame rate (24), a note")
    check("empty: the log has no frames: no scores, on no hull" in notes and
          "nulls: no mean vmaf, psnr_y (2 of 10 frames without a score): on no hull of vmaf, psnr_y" in notes and
          "nulls" not in t["hull"]["vmaf"],
          "a log without frames, a pooled mean null for null frames: notes say why they are on no hull")


def progress_and_options(c):
    """#17, #19: the progress interval is checked; wrong options are errors or warnings."""
    sys.path.insert(0, c.tools)
    from vmaf_cuda_batch import progress
    got = {}
    for v in ("abc", "0", "-1", "nan", "0.01", "2.5"):
        os.environ["VMAF_CUDA_BATCH_PROGRESS_INTERVAL"] = v
        warns = []
        got[v] = (progress.env_interval(warns.append), warns)
    del os.environ["VMAF_CUDA_BATCH_PROGRESS_INTERVAL"]
    check(got["abc"][0] == got["0"][0] == got["-1"][0] == got["nan"][0] == 10.0 and got["0.01"][0] == 0.1 and
          got["2.5"] == (2.5, []) and all("VMAF_CUDA_BATCH_PROGRESS_INTERVAL=%s" % v in got[v][1][0]
                                          for v in ("abc", "0", "-1", "0.01")),
          "VMAF_CUDA_BATCH_PROGRESS_INTERVAL abc/0/-1/nan: a warning naming it, 10 s; 0.01: 0.1 s; 2.5: 2.5 s")
    env = dict(os.environ, VMAF_CUDA_BATCH_PROGRESS_INTERVAL="abc")
    p = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, %r); from vmaf_cuda_batch.progress import "
                        "Progress; import io; print(Progress(3, stream=io.StringIO()).interval)" % c.tools],
                       capture_output=True, text=True, env=env, timeout=60)
    check(p.returncode == 0 and p.stdout.strip() == "10.0" and "Traceback" not in p.stderr,
          "Progress with VMAF_CUDA_BATCH_PROGRESS_INTERVAL=abc: no traceback, 10 s")
    lg = mklog(c.p("opt", "a.json"), [80] * 24)
    rc, err, _ = c.report(["-o", c.p("opt-out"), "--worst", "-1", lg])
    check(rc == 2 and "--worst: -1" in err, "--worst -1: exit 2")
    rc, err, rep = c.report(["-o", c.p("opt-out"), "--metric", "nonexistent", lg])
    check(rc == 0 and "warning: --metric nonexistent: no log of the report has it" in err and
          any(n.startswith("--metric nonexistent") for n in rep["notes"]), "--metric nonexistent: a warning naming it")
    p = c.tool(["-o", c.p("opt-out"), lg], env={"VMAF_CUDA_FFPROBE": c.p("no-ffprobe")})
    check(p.returncode == 2 and "$VMAF_CUDA_FFPROBE=%s: no such file" % c.p("no-ffprobe") in p.stderr,
          "VMAF_CUDA_FFPROBE pointing at a missing file: exit 2 naming it")


def numpy_scalars(c):
    """numpy 2's scalars print as np.float64(...): the CSV and the page's sort keys must
    hold plain numbers whatever the numpy (a float subclass that prints so stands in)."""
    sys.path.insert(0, c.tools)
    from vmaf_cuda_report import html, tables

    class Np2(float):
        def __repr__(self):
            return "np.float64(%s)" % float.__repr__(self)

    v = Np2(-67.74734100046844)
    check(tables.fmt(v) == "-67.74734100046844", "CSV cell of a numpy 2 scalar: %r" % tables.fmt(v))
    check('data-v="-67.74734100046844"' in html.num(v), "page sort key: %s" % html.num(v))
    check('data-v="-67.74734100046844"' in html._pct(v), "page BD cell: %s" % html._pct(v))


def run_all(tools, ffmpeg, keep=False):
    w = tempfile.mkdtemp(prefix="vmaf_report_rob_")
    c = Ctx(tools, w, ffmpeg)
    ok = False
    try:
        numpy_scalars(c)
        labels_and_fonts(c)
        odd_logs(c)
        d = clips(c)
        raw_streams(c, d)
        subsampled(c, d)
        bd_points(c)
        output(c)
        names_and_missing(c)
        scoreless_and_only_other(c)
        plots_readable(c)
        cut_streams(c, d)
        progress_and_options(c)
        ok = True
    finally:
        if ok and not keep:
            shutil.rmtree(w, ignore_errors=True)
        elif not ok:
            print("work folder kept: %s" % w)


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--tools", required=True)
    ap.add_argument("--clip-ffmpeg", default=shutil.which("ffmpeg"))
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    try:
        run_all(os.path.abspath(a.tools), a.clip_ffmpeg, a.keep)
    except Fail as e:
        print("FAIL: %s" % e)
        sys.exit(1)
    print("robustness: all passed")

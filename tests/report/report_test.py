#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause-Patent
"""Suite `report`: vmaf-cuda-report (tools/vmaf_cuda_report) and vmaf-cuda-batch's progress.

    report_test.py --tools tools --ffmpeg build-ffmpeg/9.0/bin/ffmpeg --clip-ffmpeg ffmpeg
                   --media ../shared/media --venv DIR [--artifacts DIR] [--keep]

- hull: Andrew's monotone chain against a brute-force upper hull on random ladders, and
  hand-made cases (collinear, equal rates, a falling tail);
- BD-rate and BD-quality against the `bjontegaard` package (PyPI, in a virtualenv over
  Debian's numpy/scipy/matplotlib: --venv, made on first use) to 1e-9 on random ladders,
  exact values on shifted curves, the message when curves do not overlap;
- real ladders: bbb_ref re-encoded (the system ffmpeg's libx264, ultrafast and medium, three
  CRFs and a half-size rendition), scored by vmaf-cuda-batch run (CPU backend, its progress
  lines checked), `vmaf-cuda-batch report B --against A -o OUT`: report.json's schema, the
  bitrates (video only: one file carries audio), sizes, pooled values against the logs,
  hull against the brute force, BD against the package, worst seconds, the CSVs; the same
  report from the logs (LOG=MEDIA) and from an NDJSON stream; curves that do not overlap;
- the page in headless chromium: every plot present and loaded, no console error, the
  sort of a table on a header click, a screenshot (--artifacts/report-screenshot.png);
- odd input and output (robustness.py): labels with `$`, odd logs and manifests, raw
  streams, subsampled and cut logs, BD points, output errors, names, notes, options.
"""

import argparse
import csv
import html
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import traceback

from robustness import Fail, check  # (one failure type for both files)

BJONTEGAARD = "bjontegaard==1.3.0"


def run(argv, check_rc=True, timeout=600, **kw):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)
    if check_rc and p.returncode != 0:
        raise Fail("%s exited %d:\n%s%s" % (" ".join(argv), p.returncode, p.stdout[-3000:], p.stderr[-3000:]))
    return p


def ensure_venv(venv):
    """Re-executes this script in a virtualenv over Debian's python3 (its numpy, scipy,
    matplotlib) with the bjontegaard package, made on first use."""
    py = os.path.join(venv, "bin", "python")
    if os.path.realpath(sys.prefix) == os.path.realpath(venv):
        return
    if not os.path.exists(os.path.join(venv, ".complete")):
        shutil.rmtree(venv, ignore_errors=True)
        base = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
        run([base, "-m", "venv", "--system-site-packages", venv])
        p = run([py, "-m", "pip", "install", "--quiet", "--no-deps", BJONTEGAARD], check_rc=False)
        if p.returncode != 0:
            raise Fail("pip install %s (from PyPI) failed: %s" % (BJONTEGAARD, (p.stderr or p.stdout)[-1500:]))
        open(os.path.join(venv, ".complete"), "w").close()
    os.execv(py, [py] + sys.argv)


# --------------------------------------------------------------- hull and BD, synthetic
def brute_hull(points):
    """The rate-quality hull by definition: a point is on the upper hull of (ln r, q) when
    no segment between two other points passes on or above it (the extremes in rate are
    on it); then the part up to the highest quality. Points: distinct rates and qualities."""
    pts = sorted((math.log(r), q, i) for i, (r, q) in enumerate(points))
    on = []
    for k, (x, y, i) in enumerate(pts):
        under = False
        for a in range(k):
            for b in range(k + 1, len(pts)):
                xa, ya, _ = pts[a]
                xb, yb, _ = pts[b]
                if ya + (yb - ya) * (x - xa) / (xb - xa) >= y - 1e-12 * max(1, abs(y)):
                    under = True
        if not under:
            on.append((x, y, i))
    top = max(range(len(on)), key=lambda k: on[k][1])
    return [i for _, _, i in on[:top + 1]]


def ladder(rng, n):
    a, b = rng.uniform(-40, 10), rng.uniform(5, 15)
    rates = sorted(rng.uniform(100, 20000) for _ in range(n))
    return [(r, min(100.0, a + b * math.log(r) + rng.uniform(-1.5, 1.5))) for r in rates]


def synthetic(hull, bd, bj):
    check(hull.upper_hull([(100, 50), (200, 60), (400, 70), (800, 75)]) == [0, 2, 3],
          "hull: a point on a segment of the hull (collinear in ln rate) is dropped")
    check(hull.upper_hull([(100, 50), (200, 65), (200, 60), (400, 66), (800, 64)]) == [0, 1, 3],
          "hull: at equal rate the better quality only; the hull ends at its best quality")
    check(hull.upper_hull([(100, 50), (150, 40), (None, 90), (300, float("nan")), (400, 70)]) == [0, 4],
          "hull: a point below it, points without a bitrate or a quality are not on it")
    rng = random.Random(38)
    n = 0
    for _ in range(400):
        pts = ladder(rng, rng.randint(2, 9))
        if len(set(q for _, q in pts)) != len(pts):
            continue
        got, want = hull.upper_hull(pts), brute_hull(pts)
        if got != want:
            raise Fail("hull of %r: %r, brute force %r" % (pts, got, want))
        n += 1
    check(n > 250, "hull equals the brute-force upper hull on %d random ladders" % n)

    import warnings
    warnings.simplefilter("ignore")
    worst, m = 0.0, 0
    for _ in range(800):
        A, B = [[pts[i] for i in hull.upper_hull(pts)] for pts in (ladder(rng, rng.randint(2, 8)),
                                                                      ladder(rng, rng.randint(2, 8)))]
        if len(A) < 2 or len(B) < 2:
            continue
        ra, qa, rt, qt = [p[0] for p in A], [p[1] for p in A], [p[0] for p in B], [p[1] for p in B]
        res = bd.bd(ra, qa, rt, qt)
        for method in ("pchip", "cubic"):
            for key, fn in (("bd_rate", bj.bd_rate), ("bd_quality", bj.bd_psnr)):
                ref = fn(ra, qa, rt, qt, method, require_matching_points=False, min_overlap=0)
                got = res[key][method]
                if got is None:
                    if not (math.isnan(ref) or (method == "cubic" and min(len(A), len(B)) < 4)):
                        raise Fail("%s %s of %r vs %r: none, the package %r" % (key, method, A, B, ref))
                    continue
                err = abs(got - ref) / max(1.0, abs(ref))
                if not err <= 1e-9:
                    raise Fail("%s %s of %r vs %r: %r, the package %r" % (key, method, A, B, got, ref))
                worst, m = max(worst, err), m + 1
    check(m > 700, "BD-rate and BD-quality (pchip, cubic) equal the bjontegaard package on %d random "
                   "pairs of ladders (worst difference %.2g, relative above 1)" % (m, worst))
    ra, qa = [1000, 2000, 4000, 8000, 16000], [70, 80, 88, 93, 96]
    res = bd.bd(ra, qa, [r * 0.9 for r in ra], qa)
    check(all(abs(res["bd_rate"][k] + 10) < 1e-9 for k in ("pchip", "cubic")),
          "the same qualities at 0.9 times the bits: BD-rate -10 %% (%r)" % res["bd_rate"])
    res = bd.bd(ra, qa, ra, [q + 2 for q in qa])
    check(all(abs(res["bd_quality"][k] - 2) < 1e-9 for k in ("pchip", "cubic")),
          "the same bits 2 points better: BD-quality +2 (%r)" % res["bd_quality"])
    res = bd.bd(ra, qa, ra, qa)
    check(res["bd_rate"] == {"pchip": 0.0, "cubic": 0.0}, "the same curve: BD-rate 0 exactly")
    res = bd.bd([1000, 2000], [40, 50], [3000, 6000], [60, 70], metric="vmaf")
    check(res["bd_rate"] == {"pchip": None, "cubic": None} and
          any("do not overlap in quality" in n for n in res["notes"]) and
          math.isnan(bj.bd_rate([1000, 2000], [40, 50], [3000, 6000], [60, 70], "pchip", min_overlap=0)),
          "curves that do not overlap: no BD-rate, a note says so (%s)" % res["notes"])


# --------------------------------------------------------------- real ladders
PRESETS = {"A": "ultrafast", "B": "medium"}
CRFS = (22, 30, 38)


def make_ladders(ff, media, d):
    """The reference (48 frames of bbb at 428x240) and two ladders of it."""
    src = os.path.join(media, "bbb_ref_854x480_120f.mp4")
    x264 = lambda preset, crf: ["-c:v", "libx264", "-preset", preset, "-crf", str(crf), "-pix_fmt", "yuv420p"]
    mk = lambda args, name: run([ff, "-nostdin", "-v", "error", "-y"] + args + [os.path.join(d, name)])
    # the reference keeps the clip's audio: a rendition's bitrate is its video's only
    mk(["-i", src, "-frames:v", "48", "-vf", "scale=428:240"] + x264("ultrafast", 0) + ["-c:a", "aac", "-b:a", "128k", "-shortest"],
       "ref.mp4")
    ref = ["-i", os.path.join(d, "ref.mp4")]
    for run_, preset in PRESETS.items():
        for crf in CRFS:
            audio = ["-c:a", "copy"] if crf == 22 else ["-an"]
            mk(ref + x264(preset, crf) + audio, "%s_crf%d.mp4" % (run_, crf))
        mk(ref + ["-an", "-vf", "scale=214:120"] + x264(preset, 26), "%s_small.mp4" % run_)
    for run_ in PRESETS:
        with open(os.path.join(d, run_ + ".jsonl"), "w") as f:
            rends = [{"name": "crf%d" % c, "path": "%s_crf%d.mp4" % (run_, c)} for c in CRFS]
            rends.append({"name": "small", "path": "%s_small.mp4" % run_, "scale": "428:240"})
            f.write(json.dumps({"title": "bbb", "reference": "ref.mp4", "renditions": rends,
                                "options": "model=version=vmaf_v0.6.1|version=vmaf_v0.6.1neg:feature=name=psnr"}) + "\n")
            f.write(json.dumps({"title": "bbb one", "reference": "ref.mp4",
                                "renditions": [{"name": "crf30", "path": "%s_crf30.mp4" % run_}]}) + "\n")


def probe_stream(path):
    p = run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
             "stream=bit_rate,width,height", "-show_entries", "format=bit_rate", "-of", "json", path])
    d = json.loads(p.stdout)
    return d["streams"][0], d["format"]


def per_second_worst(values, fps):
    secs = {}
    for i, v in enumerate(values):
        secs.setdefault(int(i // fps), []).append(v)
    full = {k: v for k, v in secs.items() if len(v) >= fps / 2}
    return min(sum(v) / len(v) for v in full.values())


def real_ladders(a, w, bd, bj):
    media = os.path.join(w, "media")
    os.makedirs(media)
    make_ladders(a.clip_ffmpeg, a.media, media)
    batch = os.path.join(a.tools, "vmaf-cuda-batch")
    env = dict(os.environ, VMAF_CUDA_BATCH_PROGRESS_INTERVAL="0.5")
    for run_ in PRESETS:
        p = run([sys.executable, batch, "run", os.path.join(media, run_ + ".jsonl"), "--out", os.path.join(w, run_),
                 "--backend", "cpu", "--ffmpeg", a.ffmpeg], env=env)
        lines = [l for l in p.stdout.splitlines() if "progress: " in l]
        last = lines[-1] if lines else ""
        check(re.search(r"progress: 2/2 titles done, 0 running, 0 failed, 0 pending; 240 frames in \S+, "
                        r"[0-9.]+ frames/s; ETA 0:00:00$", last) and
              any(re.search(r"1 running.*; [1-9]\d* frames in .*frames/s", l) for l in lines),
              "run %s: progress lines (not a terminal): titles done/running/failed, frames/s, ETA; "
              "frames counted while a title runs (%d lines, last: %s)" % (run_, len(lines), last))
    out = os.path.join(w, "rep")
    p = run([sys.executable, batch, "report", os.path.join(w, "B"), "--against", os.path.join(w, "A"), "-o", out])
    check(os.path.isfile(os.path.join(out, "report.html")) and os.path.isfile(os.path.join(w, "B", "report.csv")),
          "vmaf-cuda-batch report B --against A -o OUT: the batch tables and OUT/report.html")
    rep = json.load(open(os.path.join(out, "report.json")))
    t = rep["titles"][0]
    keys = {"name", "path", "bitrate_kbps", "width", "height", "frames", "pooled"}
    rends = t["renditions"] + t["against"]["renditions"]
    check(len(rep["titles"]) == 2 and all(set(r) == keys for x in rep["titles"] for r in x["renditions"]) and
          all(set(r) == keys for r in t["against"]["renditions"]) and
          {"title", "renditions", "hull", "bd_rate", "against"} <= set(t) and
          all(set(p) == {"mean", "harmonic_mean", "min", "perc1", "perc5"} for r in rends for p in r["pooled"].values()) and
          all(set(v) == {"pchip", "cubic"} for v in t["bd_rate"].values()),
          "report.json: titles, renditions (name, path, bitrate_kbps, width, height, frames, pooled), hull, "
          "bd_rate {pchip, cubic}, against.renditions")
    check(t["metrics"] == ["vmaf", "vmaf_v0.6.1neg", "psnr_y", "psnr_cb", "psnr_cr"] and
          sorted(t["bd_rate"]) == sorted(t["metrics"]),
          "hull and BD for the two models and PSNR (%s)" % t["metrics"])
    # bitrates: the video stream's (the mp4 track's bit_rate), never the container's
    for side, rr in (("B", t["renditions"]), ("A", t["against"]["renditions"])):
        for r in rr:
            st, fmt = probe_stream(r["path"])
            if abs(r["bitrate_kbps"] - int(st["bit_rate"]) / 1000) > 0.5:
                raise Fail("%s %s: bitrate %r kbit/s, the mp4 track says %s bit/s" % (side, r["name"], r["bitrate_kbps"], st["bit_rate"]))
            if (r["width"], r["height"]) != (st["width"], st["height"]):
                raise Fail("%s %s: size %sx%s" % (side, r["name"], r["width"], r["height"]))
    with_audio = [r for r in t["renditions"] if r["name"] == "crf22"][0]
    fmt_rate = int(probe_stream(with_audio["path"])[1]["bit_rate"]) / 1000
    check(fmt_rate > with_audio["bitrate_kbps"] + 50,
          "bitrates are the video's: crf22 (with audio) %.1f kbit/s, its container %.1f" % (with_audio["bitrate_kbps"], fmt_rate))
    check([(r["width"], r["height"]) for r in t["renditions"]] == [(428, 240)] * 3 + [(214, 120)],
          "sizes 428x240 and 214x120 (the rendition's own, before scaling)")
    # pooled values: the logs' exactly; perc5 the batch report's; perc1 of 48 frames the min
    bcsv = {r["rendition"]: r for r in csv.DictReader(open(os.path.join(w, "B", "report.csv"))) if r["title"] == "bbb"}
    tdir = [d for d in os.listdir(os.path.join(w, "B", "titles")) if d.startswith("bbb-")]
    tdir = [d for d in tdir if os.path.exists(os.path.join(w, "B", "titles", d, "0-crf22.json"))][0]
    n = 0
    for k, r in enumerate(t["renditions"]):
        log = json.load(open(os.path.join(w, "B", "titles", tdir, "%d-%s.json" % (k, r["name"]))))
        for m, pm in log["pooled_metrics"].items():
            for key in ("mean", "harmonic_mean", "min"):
                if r["pooled"][m][key] != pm[key]:
                    raise Fail("%s %s %s: %r, the log %r" % (r["name"], m, key, r["pooled"][m][key], pm[key]))
                n += 1
            if r["pooled"][m]["perc1"] != pm["min"]:
                raise Fail("%s %s perc1 of 48 frames is not the min" % (r["name"], m))
        if r["frames"] != 48 or r["pooled"]["vmaf"]["perc5"] != float(bcsv[r["name"]]["vmaf_perc5"]):
            raise Fail("%s: frames %d, perc5 %r vs the batch report's %s" % (
                r["name"], r["frames"], r["pooled"]["vmaf"]["perc5"], bcsv[r["name"]]["vmaf_perc5"]))
        worst = per_second_worst([f["metrics"]["vmaf"] for f in log["frames"]], 24)
        if abs(t["worst_seconds"][r["name"]][0]["mean"] - worst) > 1e-9:
            raise Fail("%s: worst second %r, computed here %r" % (r["name"], t["worst_seconds"][r["name"]], worst))
    check(n > 300, "%d pooled values equal the logs' exactly; perc1, perc5 and the worst seconds too" % n)
    # hull by brute force, BD by the package, on the report's own numbers
    for m in t["metrics"]:
        for hull_, rr in ((t["hull"], t["renditions"]), (t["against_hull"], t["against"]["renditions"])):
            pts = [(r["bitrate_kbps"], r["pooled"][m]["mean"]) for r in rr]
            want = [rr[i]["name"] for i in brute_hull(pts)]
            if hull_[m] != want:
                raise Fail("%s: hull %r, brute force %r" % (m, hull_[m], want))
        check(sorted(t["hull"][m] + t["not_on_hull"][m]) == sorted(r["name"] for r in t["renditions"]),
              "%s: hull %s (brute force agrees), not on it: %s" % (m, t["hull"][m], t["not_on_hull"][m]))
        # BD values over every rendition's point (the default, as Netflix's bd_rate), in
        # bitrate order; the package's interpolation wants its x ascending: quality for
        # BD-rate, bitrate for BD-quality
        pts = lambda rr: sorted((r["bitrate_kbps"], r["pooled"][m]["mean"]) for r in rr)
        A_, B_ = pts(t["against"]["renditions"]), pts(t["renditions"])
        byq = lambda P: ([p[0] for p in sorted(P, key=lambda p: p[1])], sorted(p[1] for p in P))
        for method in ("pchip", "cubic"):
            got = t["bd_rate"][m][method]
            if len(A_) < 4 or len(B_) < 4:
                if method == "cubic":
                    check(got is None and any("no cubic BD values" in x for x in t["notes"]),
                          "%s: fewer than 4 points: no cubic BD-rate, a note" % m)
                    continue
            ref = bj.bd_rate(*byq(A_), *byq(B_), method, require_matching_points=False, min_overlap=0)
            refq = bj.bd_psnr([p[0] for p in A_], [p[1] for p in A_], [p[0] for p in B_], [p[1] for p in B_], method,
                              require_matching_points=False, min_overlap=0)
            check(abs(got - ref) <= 1e-9 * max(1, abs(ref)) and
                  abs(t["bd_quality"][m][method] - refq) <= 1e-9 * max(1, abs(refq)),
                  "%s %s over all 4 points: BD-rate %.6f %%, BD-quality %.6f (the package: %.6f %%, %.6f)" % (
                      m, method, got, t["bd_quality"][m][method], ref, refq))
    check(t["bd_rate"]["vmaf"]["pchip"] < -10 and t["bd_quality"]["vmaf"]["pchip"] > 1,
          "x264 medium against ultrafast: fewer bits at equal VMAF (%.2f %%)" % t["bd_rate"]["vmaf"]["pchip"])
    one = rep["titles"][1]
    check(one["bd_rate"]["vmaf"] == {"pchip": None, "cubic": None} and one["hull"]["vmaf"] == ["crf30"] and
          any("1 point" in x for x in one["notes"]),
          "a title of one rendition: its hull, no BD values, a note (%s)" % one["notes"][:1])
    rows = list(csv.DictReader(open(os.path.join(out, "bd.csv"))))
    vrow = [r for r in rows if r["title"] == "bbb" and r["metric"] == "vmaf"][0]
    rrows = list(csv.DictReader(open(os.path.join(out, "renditions.csv"))))
    check(float(vrow["bd_rate_pchip"]) == t["bd_rate"]["vmaf"]["pchip"] and vrow["hull"] == "|".join(t["hull"]["vmaf"])
          and len(rrows) == 10 and float([r for r in rrows if r["run"] == "this" and r["rendition"] == "small"][0]
                                         ["vmaf_perc5"]) == t["renditions"][3]["pooled"]["vmaf"]["perc5"],
          "bd.csv and renditions.csv hold report.json's numbers exactly")
    return out, rep, tdir


def from_logs(a, w, rep, tdir):
    """The standalone command on the batch logs gives the batch report's numbers; NDJSON
    too; curves that do not overlap give a note and no value."""
    tool = os.path.join(a.tools, "vmaf-cuda-report")
    t = rep["titles"][0]
    items = lambda side, rr: ["%s=%s" % (os.path.join(w, side, "titles", tdir, "%d-%s.json" % (k, r["name"])), r["path"])
                              for k, r in enumerate(rr)]
    out = os.path.join(w, "logs-rep")
    run([tool, "-o", out, "--title", "bbb"] + items("B", t["renditions"]) + ["--against"] + items("A", t["against"]["renditions"]))
    t2 = json.load(open(os.path.join(out, "report.json")))["titles"][0]
    check(t2["bd_rate"] == t["bd_rate"] and t2["hull"] == t["hull"] and
          [r["pooled"] for r in t2["renditions"]] == [r["pooled"] for r in t["renditions"]],
          "vmaf-cuda-report LOG=MEDIA ... --against ...: the batch report's hull, BD-rate and pools")
    # NDJSON of crf30 from the filter: same pools, same worst seconds
    nd = os.path.join(w, "crf30.ndjson")
    run([a.ffmpeg, "-nostdin", "-v", "error", "-i", os.path.join(w, "media", "B_crf30.mp4"), "-i",
         os.path.join(w, "media", "ref.mp4"), "-lavfi",
         "[0:v][1:v]vmaf_cuda=backend=cpu:precision=max:log_fmt=ndjson:log_path=%s" % nd, "-f", "null", "-"])
    out = os.path.join(w, "nd-rep")
    run([tool, "-o", out, "%s=%s" % (nd, os.path.join(w, "media", "B_crf30.mp4"))])
    r_nd = json.load(open(os.path.join(out, "report.json")))["titles"][0]
    crf30 = [r for r in t["renditions"] if r["name"] == "crf30"][0]
    check(r_nd["renditions"][0]["pooled"]["vmaf"] == crf30["pooled"]["vmaf"] and r_nd["renditions"][0]["frames"] == 48
          and r_nd["worst_seconds"]["crf30"] == t["worst_seconds"]["crf30"],
          "an NDJSON stream: the JSON log's pools and worst seconds (pts_time)")
    # no overlap: B's two best against A's two worst
    out = os.path.join(w, "no-overlap")
    b = items("B", t["renditions"])
    a_ = items("A", t["against"]["renditions"])
    p = run([tool, "-o", out, b[0], b[1], "--against", a_[2], a_[3]])
    t3 = json.load(open(os.path.join(out, "report.json")))["titles"][0]
    check(t3["bd_rate"]["vmaf"] == {"pchip": None, "cubic": None} and
          any(x.startswith("vmaf: the curves do not overlap in quality") for x in t3["notes"]) and
          "note" in p.stdout and "do not overlap" in open(os.path.join(out, "report.html")).read(),
          "curves that do not overlap: null BD values, the note in report.json and on the page")


# --------------------------------------------------------------- the page in chromium
PROBE = """<script>
window.__errors = [];
window.addEventListener('error', function (e) { __errors.push('error: ' + (e.message || e.target.src || e.type)); }, true);
['error', 'warn'].forEach(function (k) { var f = console[k]; console[k] = function () {
  __errors.push(k + ': ' + Array.prototype.join.call(arguments, ' ')); f.apply(console, arguments); }; });
window.addEventListener('load', function () { setTimeout(function () {
  var r = {errors: __errors, plots: [], sorted: []};
  document.querySelectorAll('img.plot').forEach(function (i) {
    r.plots.push({plot: i.getAttribute('data-plot'), loaded: i.complete && i.naturalWidth > 0, width: i.naturalWidth}); });
  var t = document.getElementById('r0'), th = t.querySelectorAll('th')[2];
  var names = function () { return Array.prototype.map.call(t.tBodies[0].rows, function (x) { return x.cells[0].textContent; }); };
  th.click(); r.sorted.push(names()); th.click(); r.sorted.push(names());
  var pre = document.createElement('pre'); pre.id = '__probe'; pre.textContent = JSON.stringify(r);
  document.body.appendChild(pre); }, 200); });
</script>"""


def chromium_bin():
    for c in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(c):
            return shutil.which(c)
    raise Fail("no chromium (Debian: apt-get install chromium; tools/setup-debian.sh)")


def browser(a, w, out, rep):
    chrome = chromium_bin()
    flags = [chrome, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--user-data-dir=" + os.path.join(w, "chromium"), "--no-first-run", "--disable-extensions"]
    page = open(os.path.join(out, "report.html"), encoding="utf-8").read()
    check("http://" not in page.replace("http://www.w3.org", "") and "https://" not in page and
          not re.search(r"""(src|href)=["'](?!data:|#|plots/)""", page),
          "the page loads nothing from the network (plots inline, links to its own files)")
    probe = os.path.join(out, "probe.html")
    with open(probe, "w", encoding="utf-8") as f:
        f.write(page.replace("<head>", "<head>" + PROBE, 1))
    p = run(flags + ["--enable-logging=stderr", "--v=0", "--virtual-time-budget=15000", "--dump-dom",
                     "file://" + probe], timeout=180)
    m = re.search(r'<pre id="__probe">(.*?)</pre>', p.stdout, re.S)
    check(m is not None, "chromium rendered the page and ran its script (--dump-dom)")
    r = json.loads(html.unescape(m.group(1)))
    console = [l for l in p.stderr.splitlines() if "CONSOLE" in l or "Uncaught" in l]
    check(r["errors"] == [] and console == [], "no console errors or warnings (%s %s)" % (r["errors"], console[:3]))
    want = []
    for t in rep["titles"]:
        want += ["%s rate-quality %s" % (t["title"], m_) for m_ in t["plots"]["rate_quality"]]
        want += ["%s frames %s" % (t["title"], t["primary"])] if t["plots"]["frames"] else []
    got = [x["plot"] for x in r["plots"]]
    check(sorted(got) == sorted(want) and len(want) >= 5 and all(x["loaded"] and x["width"] > 300 for x in r["plots"]),
          "every plot is on the page and loaded (%d: %s)" % (len(got), ", ".join(got)))
    for t in rep["titles"]:
        for f in list(t["plots"]["rate_quality"].values()) + [t["plots"]["frames"]]:
            path = os.path.join(out, f)
            if not (f.endswith(".svg") and os.path.isfile(path) and os.path.getsize(path) > 2000 and
                    not os.path.exists(path[:-4] + ".png")):
                raise Fail("plot file missing or empty, or a PNG beside it: %s" % path)
    by_rate = [r_["name"] for r_ in sorted(rep["titles"][0]["renditions"], key=lambda x: x["bitrate_kbps"])]
    check(r["sorted"] == [by_rate, by_rate[::-1]],
          "a click on the bitrate header sorts the renditions ascending, a second descending (%s)" % r["sorted"])
    shot = os.path.join(a.artifacts or w, "report-screenshot.png")
    run(flags + ["--window-size=1280,2400", "--screenshot=" + shot, "file://" + os.path.join(out, "report.html")],
        timeout=180)
    import matplotlib.image
    img = matplotlib.image.imread(shot)
    dark = float((img[:, :, :3].mean(axis=2) < 0.5).mean())
    check(img.shape[0] == 2400 and img.shape[1] == 1280 and 0.005 < dark < 0.5,
          "screenshot %s: 1280x2400, text and plots drawn (%.1f %% dark pixels)" % (shot, 100 * dark))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tools", required=True, help="the tools/ folder (vmaf-cuda-report, vmaf-cuda-batch)")
    ap.add_argument("--ffmpeg", required=True, help="the project's ffmpeg (vmaf_cuda)")
    ap.add_argument("--clip-ffmpeg", default=shutil.which("ffmpeg"), help="an ffmpeg with libx264 for the clips")
    ap.add_argument("--media", required=True, help="the shared media folder (bbb_ref_854x480_120f.mp4)")
    ap.add_argument("--venv", required=True, help="virtualenv for the bjontegaard package (made when missing)")
    ap.add_argument("--artifacts", help="where the screenshot is left")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    for k in ("tools", "ffmpeg", "media", "venv", "artifacts"):
        if getattr(a, k):
            setattr(a, k, os.path.abspath(getattr(a, k)))
    w = None
    try:
        ensure_venv(a.venv)
        sys.path.insert(0, a.tools)
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import bjontegaard as bj
        from vmaf_cuda_report import bd, hull
        synthetic(hull, bd, bj)
        if not a.clip_ffmpeg or "libx264" not in run([a.clip_ffmpeg, "-hide_banner", "-encoders"]).stdout:
            raise Fail("no ffmpeg with libx264 to make the ladders (Debian's ffmpeg: tools/setup-debian.sh)")
        w = tempfile.mkdtemp(prefix="vmaf_report_")
        out, rep, tdir = real_ladders(a, w, bd, bj)
        from_logs(a, w, rep, tdir)
        browser(a, w, out, rep)
        import robustness  # odd input and output (tests/report/robustness.py)
        robustness.run_all(a.tools, a.clip_ffmpeg)
        print("1 passed, 0 failed")
        return 0
    except Exception as e:  # noqa: BLE001 (a failure of any kind is the test's)
        if not isinstance(e, Fail):
            traceback.print_exc(file=sys.stdout)
        print("FAIL: %s" % e)
        print("0 passed, 1 failed%s" % (" (work folder kept: %s)" % w if w else ""))
        a.keep = True
        return 1
    finally:
        if w and not a.keep:
            shutil.rmtree(w, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

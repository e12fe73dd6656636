# SPDX-License-Identifier: BSD-2-Clause-Patent
"""The report's data: per title its renditions (bitrate, size, frames, pooled scores of
every metric), the convex hull and the renditions off it per quality metric, the worst
seconds, and with another run the BD-rate and BD-quality against that run's same title.
The result is report.json's object (docs/report.md); keys starting with "_" hold what the
plots need and are not written."""

import math
import re

from . import VERSION, bd, hull, logs, media

# companion metrics that are qualities (higher is better) and get a hull and BD values
QUALITY_METRICS = ("psnr_y", "psnr_cb", "psnr_cr", "psnr_hvs", "psnr_hvs_y", "psnr_hvs_cb",
                   "psnr_hvs_cr", "float_ssim", "float_ms_ssim", "ciede2000")
# a bootstrapped model's extra outputs: not a score of their own
MODEL_EXTRA = re.compile(r"_(\d{4}|bagging|stddev|ci_p95_lo|ci_p95_hi)$")


def score_metrics(names, models=None, extra=()):
    """The metrics that get a hull and BD values, models first: the models named (a batch
    run's task.json knows them), else every metric named vmaf* (not a bootstrap model's
    per-model values, bagging or intervals), then the companion qualities present, then
    --metric names."""
    if models:
        out = [m for m in models if m in names]
    else:
        out = [n for n in names if n.startswith("vmaf") and not MODEL_EXTRA.search(n)]
    out += [q for q in QUALITY_METRICS if q in names and q not in out]
    out += [e for e in extra if e in names and e not in out]
    return out


def worst_seconds(values, times, fps, count):
    """The `count` one-second windows of lowest mean score (second k: the frames at times
    [k, k+1) s from the first frame; times from the log's pts_time, else frame / fps).
    Without a frame rate, windows of 25 frames with null times. A window of fewer than
    half a second's frames (the last, partial one) is left out unless no other exists."""
    n = len(values)
    if not n:
        return []
    if times is None and fps:
        times = [i / fps for i in range(n)]
    groups = {}
    if times is not None and all(t is not None for t in times):
        t0 = min(times)
        for i, t in enumerate(times):
            groups.setdefault(int(math.floor(t - t0 + 1e-9)), []).append(i)
        nominal = fps or (n / max(1e-9, (max(times) - t0)) if n > 1 else 1)
    else:
        t0 = None
        for i in range(n):
            groups.setdefault(i // 25, []).append(i)
        nominal = 25
    full = {k: g for k, g in groups.items() if len(g) >= max(1, nominal / 2)} or groups
    rows = []
    for k, g in full.items():
        vals = [values[i] for i in g if not math.isnan(values[i])]
        if not vals:
            continue
        rows.append({"start_s": None if t0 is None else float(k), "end_s": None if t0 is None else float(k + 1),
                     "first_frame": g[0], "last_frame": g[-1], "mean": sum(vals) / len(vals)})
    rows.sort(key=lambda r: (r["mean"], r["first_frame"]))
    return rows[:count]


class Prober:
    """ffprobe results per media file (each file probed once); errors kept per file."""

    def __init__(self, ffprobe):
        self.ffprobe, self.cache = ffprobe, {}

    def __call__(self, path):
        if path not in self.cache:
            if not self.ffprobe:
                self.cache[path] = (None, "no ffprobe (install ffmpeg, or pass --ffprobe PATH): no "
                                          "bitrate for %s" % path)
            else:
                try:
                    self.cache[path] = (media.probe(self.ffprobe, path), None)
                except media.MediaError as e:
                    self.cache[path] = (None, str(e))
        return self.cache[path]


def _rendition(spec, prober, notes):
    """(report.json rendition, its Log or None, its frame rate)."""
    r = {"name": spec["name"], "path": spec.get("path"), "bitrate_kbps": spec.get("kbps"),
         "width": None, "height": None, "frames": 0, "pooled": {}}
    fps = None
    if spec.get("path") and spec.get("kbps") is None:
        info, err = prober(spec["path"])
        if err:
            notes.append("%s: %s" % (spec["name"], err))
        else:
            r.update(bitrate_kbps=info["bitrate_kbps"], width=info["width"], height=info["height"])
            fps = info["fps"]
    elif not spec.get("path") and spec.get("kbps") is None:
        notes.append("%s: no media file and no kbps: no bitrate, not on any hull" % spec["name"])
    log = None
    if spec.get("log") and spec.get("status", "done") == "done":
        try:
            log = logs.load(spec["log"])
        except logs.LogError as e:
            notes.append("%s: %s" % (spec["name"], e))
    elif spec.get("status") not in (None, "done"):
        notes.append("%s: %s%s" % (spec["name"], spec["status"], ": " + spec["error"] if spec.get("error") else ""))
    if log:
        r["frames"] = len(log.frames)
        r["pooled"] = {m: logs.pool(log, m) for m in log.metrics()}
    return r, log, fps


def build_title(spec, prober, pool="mean", worst=3, extra=()):
    notes = []
    rends, series = [], {}
    names = []
    for rs in spec["renditions"]:
        r, log, fps = _rendition(rs, prober, notes)
        rends.append(r)
        if log:
            series[r["name"]] = (log, fps)
            names += [m for m in log.metrics() if m not in names]
    metrics = score_metrics(names, spec.get("models"), extra)
    t = {"title": spec["title"], "status": spec.get("status", "done"), "error": spec.get("error"),
         "renditions": rends, "hull": {}, "not_on_hull": {}, "bd_rate": {}, "bd_quality": {},
         "against": None, "against_hull": None, "metrics": metrics, "primary": metrics[0] if metrics else None,
         "worst_seconds": {}, "notes": notes}
    for m in metrics:
        pts = [(r["bitrate_kbps"], (r["pooled"].get(m) or {}).get(pool)) for r in rends]
        on = hull.upper_hull(pts)
        t["hull"][m] = [rends[i]["name"] for i in on]
        t["not_on_hull"][m] = [r["name"] for i, r in enumerate(rends) if i not in on and r["frames"]]
    if t["primary"]:
        for name, (log, fps) in series.items():
            t["worst_seconds"][name] = worst_seconds(log.series(t["primary"]), log.times, fps, worst)
    t["_series"] = {name: (log.series, log.times, fps) for name, (log, fps) in series.items()}
    return t


def _curve(t, metric, pool):
    by = {r["name"]: r for r in t["renditions"]}
    names = t["hull"].get(metric, [])
    return [by[n]["bitrate_kbps"] for n in names], [by[n]["pooled"][metric][pool] for n in names]


def compare(t, other, pool="mean"):
    """BD-rate and BD-quality of title t (the test) against the same title of another run
    (the anchor), per metric both have, on each run's hull."""
    t["against"] = {"renditions": other["renditions"]}
    t["against_hull"] = other["hull"]
    t["_against"] = other
    for m in t["metrics"]:
        if m not in other["metrics"]:
            t["notes"].append("%s: not in the other run: no BD values" % m)
            continue
        ra, qa = _curve(other, m, pool)
        rt, qt = _curve(t, m, pool)
        res = bd.bd(ra, qa, rt, qt, metric=m)
        t["bd_rate"][m] = res["bd_rate"]
        t["bd_quality"][m] = res["bd_quality"]
        t["notes"] += res["notes"]


def build(run, against=None, ffprobe=None, pool="mean", worst=3, extra=()):
    """report.json's object for a run (sources.py), optionally against another run."""
    prober = Prober(ffprobe)
    rep = {"version": VERSION, "source": run.get("source"),
           "against_source": against.get("source") if against else None,
           "quality_pool": pool, "titles": []}
    others = {}
    if against:
        for spec in against["titles"]:
            others[spec["title"]] = spec
    for spec in run["titles"]:
        t = build_title(spec, prober, pool, worst, extra)
        if against:
            if spec["title"] in others:
                compare(t, build_title(others[spec["title"]], prober, pool, worst, extra), pool)
            else:
                t["notes"].append("title not in the other run: no BD values")
        rep["titles"].append(t)
    return rep

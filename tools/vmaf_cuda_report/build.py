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


def worst_seconds(values, times, nums, count):
    """The `count` one-second windows of lowest mean score (second k: the frames at times
    [k, k+1) s from the first frame; times: the log's pts_time, else frame number / fps, so
    a subsampled log's frames fall in their own seconds). Without times, windows of 25
    frame numbers with null times. A window of fewer than half a full window's frames (the
    last, partial one) is left out unless no other exists. first_frame / last_frame are
    frame numbers (the log's frameNum)."""
    n = len(values)
    if not n or count <= 0:
        return []
    keys, unit = (times, 1.0) if times is not None else (nums, 25.0)
    k0 = min(keys)
    groups = {}
    for i, x in enumerate(keys):
        groups.setdefault(int(math.floor((x - k0) / unit + 1e-9)), []).append(i)
    step = (max(keys) - k0) / (n - 1) if n > 1 else unit
    nominal = unit / step if step > 0 else 1.0   # frames in a full window
    full = {k: g for k, g in groups.items() if len(g) >= max(1, nominal / 2)} or groups
    rows = []
    for k, g in full.items():
        vals = [values[i] for i in g if not math.isnan(values[i])]
        if not vals:
            continue
        timed = times is not None
        rows.append({"start_s": float(k) if timed else None, "end_s": float(k + 1) if timed else None,
                     "first_frame": nums[g[0]], "last_frame": nums[g[-1]], "mean": sum(vals) / len(vals)})
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
    """(report.json rendition, its Log or None, its ffprobe info or None)."""
    r = {"name": spec["name"], "path": spec.get("path"), "bitrate_kbps": spec.get("kbps"),
         "width": None, "height": None, "frames": 0, "pooled": {}}
    info = None
    if spec.get("path") and spec.get("kbps") is None:
        info, err = prober(spec["path"])
        if err:
            notes.append("%s: %s" % (spec["name"], err))
        else:
            r.update(bitrate_kbps=info["bitrate_kbps"], width=info["width"], height=info["height"])
            if info["bitrate_kbps"] is None:
                notes.append("%s: no bitrate: ffprobe gives %s for %s" % (
                    spec["name"], "no packets" if not info["packets"] else "no duration or frame rate",
                    spec["path"]))
    elif not spec.get("path") and spec.get("kbps") is None:
        notes.append("%s: no media file and no kbps: no bitrate, not on any hull" % spec["name"])
    log = None
    if spec.get("log") and spec.get("status", "done") == "done":
        try:
            log = logs.load(spec["log"])
        except logs.LogError as e:
            notes.append("%s: %s: no scores" % (spec["name"], e))
        except Exception as e:  # noqa: BLE001 (one odd log never loses the report)
            notes.append("%s: the log %s cannot be read (%s: %s): no scores" % (
                spec["name"], spec["log"], type(e).__name__, e))
    elif spec.get("status") not in (None, "done"):
        notes.append("%s: %s%s" % (spec["name"], spec["status"], ": " + spec["error"] if spec.get("error") else ""))
    if log:
        notes += ["%s: %s" % (spec["name"], w) for w in log.warnings]
        r["frames"] = len(log.frames)
        r["pooled"] = {m: logs.pool(log, m) for m in log.metrics()}
        if not log.frames:
            notes.append("%s: the log has no frames: no scores, on no hull" % spec["name"])
    return r, log, info


def _log_fps(log):
    """The frame rate a log's own times (NDJSON pts_time) give, or None."""
    if not log or not log.times or len(log.times) < 2:
        return None
    span = log.times[-1] - log.times[0]
    frames = log.nums[-1] - log.nums[0]
    return frames / span if span > 0 and frames > 0 else None


def _raw_rates(spec, rends, logs_, infos, notes):
    """A raw elementary stream (.264/.265/.obu) has no container to time it: its frame rate
    is the one its log's times give, else that of the title's renditions in containers
    (when they agree), else ffprobe's (for AV1 OBU often a guess of 25: a note says so).
    Its bitrate is its packets' bits over packets / frame rate."""
    contained = {round(i["fps"], 3) for i in infos if i and not i["raw"] and i["fps"]}
    for r, log, info in zip(rends, logs_, infos):
        if not info or not info["raw"] or not info["packets"] or not info["size_bytes"]:
            continue
        fps, why = _log_fps(log), "its log's frame times"
        if not fps and len(contained) == 1:
            fps, why = next(iter(contained)), "the frame rate of the title's other renditions"
        if fps and (not info["fps"] or abs(fps - info["fps"]) > 1e-3 * fps):
            r["bitrate_kbps"] = info["size_bytes"] * 8 / (info["packets"] / fps) / 1000.0
            notes.append("%s: a raw %s stream (no container): its bitrate is at %.6g frames/s, %s "
                         "(ffprobe's rate: %s)" % (r["name"], info["format"], fps, why,
                                                    "%.6g" % info["fps"] if info["fps"] else "none"))
        elif not fps and info["fps"]:
            notes.append("%s: a raw %s stream (no container): its bitrate assumes ffprobe's %.6g "
                         "frames/s (the stream's own timing, or ffprobe's guess)" % (
                             r["name"], info["format"], info["fps"]))


def build_title(spec, prober, pool="mean", worst=3, extra=()):
    notes = []
    rends, logs_, infos, names = [], [], [], []
    for rs in spec["renditions"]:
        r, log, info = _rendition(rs, prober, notes)
        rends.append(r)
        logs_.append(log)
        infos.append(info)
        if log:
            names += [m for m in log.metrics() if m not in names]
    _raw_rates(spec, rends, logs_, infos, notes)
    metrics = score_metrics(names, spec.get("models"), extra)
    t = {"title": spec["title"], "status": spec.get("status", "done"), "error": spec.get("error"),
         "renditions": rends, "hull": {}, "not_on_hull": {}, "bd_rate": {}, "bd_quality": {},
         "against": None, "against_hull": None, "metrics": metrics, "primary": metrics[0] if metrics else None,
         "worst_seconds": {}, "notes": notes}
    most = max([r["frames"] for r in rends] or [0])
    for r, log in zip(rends, logs_):
        if log and 0 < r["frames"] < most:
            notes.append("%s: %d frames, the title's other renditions up to %d (cut short?): its "
                         "scores cover %d frames" % (r["name"], r["frames"], most, r["frames"]))
    for m in metrics:
        pts = [(r["bitrate_kbps"], (r["pooled"].get(m) or {}).get(pool)) for r in rends]
        on = hull.upper_hull(pts)
        t["hull"][m] = [rends[i]["name"] for i in on]
        t["not_on_hull"][m] = [r["name"] for i, r in enumerate(rends) if i not in on and r["frames"]]
    for r, log in zip(rends, logs_):
        if not r["frames"]:
            continue
        null = [m for m in metrics if (r["pooled"].get(m) or {}).get(pool) is None]
        if null:
            nan = sum(1 for v in log.series(null[0]) if math.isnan(v))
            notes.append("%s: no %s %s (%s): on no hull of %s" % (
                r["name"], pool, ", ".join(null),
                "%d of %d frames without a score" % (nan, r["frames"]) if nan else "not in its log",
                ", ".join(null)))
    series = {}
    for r, log, info in zip(rends, logs_, infos):
        if not log:
            continue
        fps = info["fps"] if info else None
        if info and info["raw"]:
            fps = _log_fps(log) or fps
        times = log.times if log.times is not None else ([n / fps for n in log.nums] if fps else None)
        series[r["name"]] = (log.series, times, log.nums)
        if t["primary"]:
            t["worst_seconds"][r["name"]] = worst_seconds(log.series(t["primary"]), times, log.nums, worst)
    t["_series"] = series
    return t


def _curve(t, metric, pool, points="all"):
    """The rate-quality points BD values are computed on, in ascending bitrate: every
    rendition with a bitrate and a score ("all", the ladder's points, as Netflix's bd_rate
    and the JCT-VC/AOM sheets take them) or the hull's ("hull")."""
    by = {r["name"]: r for r in t["renditions"]}
    if points == "hull":
        names = t["hull"].get(metric, [])
    else:
        names = [r["name"] for r in t["renditions"] if r["bitrate_kbps"] and
                 (r["pooled"].get(metric) or {}).get(pool) is not None]
        names.sort(key=lambda n: by[n]["bitrate_kbps"])
    return [by[n]["bitrate_kbps"] for n in names], [by[n]["pooled"][metric][pool] for n in names], names


def _not_monotone(rates, qs, names):
    """The first pair of points (in bitrate order) where quality does not increase."""
    for k in range(1, len(qs)):
        if not qs[k] > qs[k - 1]:
            return "%s has more bits than %s and no more quality" % (names[k], names[k - 1])
    return None


def merge_notes(notes):
    """Notes "METRIC: text" with the same text for several metrics become one note
    "M1, M2: text" (in the order first seen); other notes are kept as they are."""
    out, where = [], {}
    for n in notes:
        m, sep, text = n.partition(": ")
        if sep and text in where:
            out[where[text]][0].append(m)
        elif sep:
            where[text] = len(out)
            out.append(([m], text))
        else:
            out.append(([], n))
    return [("%s: %s" % (", ".join(ms), text)) if ms else text for ms, text in out]


def compare(t, other, pool="mean", points="all"):
    """BD-rate and BD-quality of title t (the test) against the same title of another run
    (the anchor), per metric both have, on each run's points (all renditions, or the hull)."""
    t["against"] = {"renditions": other["renditions"]}
    t["against_hull"] = other["hull"]
    t["_against"] = other
    if not t["metrics"]:
        t["notes"].append("no scores in this run: no BD values")
        return
    bd_notes, cubic = [], {}
    for m in t["metrics"]:
        if m not in other["metrics"]:
            bd_notes.append("%s: not in the other run: no BD values" % m)
            continue
        ra, qa, na = _curve(other, m, pool, points)
        rt, qt, nt = _curve(t, m, pool, points)
        if points == "all":
            for who, (r_, q_, n_) in (("this run", (rt, qt, nt)), ("the other run", (ra, qa, na))):
                why = _not_monotone(r_, q_, n_)
                if why:
                    bd_notes.append("%s: quality is not monotone in bitrate in %s (%s): BD values "
                                    "interpolate all points (--bd-points hull: each run's hull)" % (m, who, why))
        res = bd.bd(ra, qa, rt, qt, metric=m)
        t["bd_rate"][m] = res["bd_rate"]
        t["bd_quality"][m] = res["bd_quality"]
        for n in res["notes"]:
            if "the cubic needs 4 points" in n:
                cubic.setdefault((len(rt), len(ra)), []).append(m)
            else:
                bd_notes.append(n)
    for (n_t, n_a), ms in cubic.items():
        t["notes"].append("no cubic BD values%s: the cubic (VCEG-M33) needs 4 points on each curve; "
                          "this run has %d, the other %d (pchip is computed from 2)" % (
                              "" if len(ms) == len(t["metrics"]) else " for " + ", ".join(ms),
                              n_t, n_a))
    t["notes"] += merge_notes(bd_notes)


def build(run, against=None, ffprobe=None, pool="mean", worst=3, extra=(), points="all"):
    """report.json's object for a run (sources.py), optionally against another run."""
    prober = Prober(ffprobe)
    rep = {"version": VERSION, "source": run.get("source"),
           "against_source": against.get("source") if against else None,
           "quality_pool": pool, "bd_points": points, "titles": [], "only_in_against": [], "notes": []}
    others = {}
    if against:
        for spec in against["titles"]:
            others[spec["title"]] = spec
    mine = {spec["title"] for spec in run["titles"]}
    seen_metrics = set()
    for spec in run["titles"]:
        t = build_title(spec, prober, pool, worst, extra)
        if against:
            if spec["title"] in others:
                o = build_title(others[spec["title"]], prober, pool, worst, extra)
                seen_metrics.update(o["metrics"])
                compare(t, o, pool, points)
            else:
                t["notes"].append("title not in the other run: no BD values")
        seen_metrics.update(t["metrics"])
        rep["titles"].append(t)
    if against:
        rep["only_in_against"] = [s["title"] for s in against["titles"] if s["title"] not in mine]
        if rep["only_in_against"]:
            rep["notes"].append("%d title%s only in the other run (not compared): %s" % (
                len(rep["only_in_against"]), "" if len(rep["only_in_against"]) == 1 else "s",
                ", ".join(rep["only_in_against"])))
    for e in extra:
        if e not in seen_metrics:
            rep["notes"].append("--metric %s: no log of the report has it (metrics with a hull: %s)" % (
                e, ", ".join(sorted(seen_metrics)) or "none"))
    return rep

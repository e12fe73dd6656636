# SPDX-License-Identifier: BSD-2-Clause-Patent
"""The plots (matplotlib, Agg): per title a rate-quality plot per plotted metric (the
renditions, the hull, the other run's in grey) and a score-over-time plot of the primary
metric (every rendition, the other run's dashed, each rendition's worst second shaded).
Each is written as PNG and SVG; the SVG text goes into the page."""

import math
import os
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

plt.rcParams.update({"svg.hashsalt": "vmaf_cuda_report", "svg.fonttype": "path", "font.size": 9})
COLORS = plt.rcParams["axes.prop_cycle"].by_key()["color"]
MAX_POINTS = 2000  # per line of a time plot: the minimum of each bucket (dips stay visible)


def slug(text):
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._")[:60] or "x"


def _save(fig, out_dir, stem):
    os.makedirs(os.path.join(out_dir, "plots"), exist_ok=True)
    rel = os.path.join("plots", stem)
    fig.savefig(os.path.join(out_dir, rel + ".png"), dpi=96, metadata={"Software": None})
    fig.savefig(os.path.join(out_dir, rel + ".svg"), metadata={"Date": None})
    plt.close(fig)
    with open(os.path.join(out_dir, rel + ".svg"), encoding="utf-8") as f:
        return {"png": rel + ".png", "svg": rel + ".svg", "svg_text": f.read()}


def _points(t, metric, pool):
    return [(r["name"], r["bitrate_kbps"], (r["pooled"].get(metric) or {}).get(pool)) for r in t["renditions"]
            if r["bitrate_kbps"] and (r["pooled"].get(metric) or {}).get(pool) is not None]


def rate_quality(t, metric, pool, out_dir, stem):
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    other = t.get("_against")
    if other:
        pts = _points(other, metric, pool)
        on = set(other["hull"].get(metric, []))
        hp = sorted((p for p in pts if p[0] in on), key=lambda p: p[1])
        ax.plot([p[1] for p in hp], [p[2] for p in hp], "--", color="0.55", lw=1.2, label="other run: hull")
        ax.scatter([p[1] for p in pts], [p[2] for p in pts], marker="s", s=18, color="0.55",
                   label="other run: renditions", zorder=2)
    pts = _points(t, metric, pool)
    on = set(t["hull"].get(metric, []))
    hp = sorted((p for p in pts if p[0] in on), key=lambda p: p[1])
    ax.plot([p[1] for p in hp], [p[2] for p in hp], "-", color=COLORS[0], lw=1.8, label="hull")
    ax.scatter([p[1] for p in hp], [p[2] for p in hp], color=COLORS[0], s=28, zorder=3, label="on the hull")
    off = [p for p in pts if p[0] not in on]
    if off:
        ax.scatter([p[1] for p in off], [p[2] for p in off], facecolors="none", edgecolors=COLORS[3],
                   s=34, zorder=3, label="not on the hull")
    for name, x, y in pts:
        ax.annotate(name, (x, y), textcoords="offset points", xytext=(4, -10), fontsize=7)
    if pts:
        ax.set_xscale("log")
    ax.set_xlabel("bitrate (kbit/s, log scale)")
    ax.set_ylabel("%s (%s)" % (metric, pool))
    bd = (t.get("bd_rate") or {}).get(metric)
    extra = ""
    if bd:
        f = lambda v: "n/a" if v is None else "%+.2f %%" % v
        extra = "  BD-rate pchip %s, cubic %s" % (f(bd["pchip"]), f(bd["cubic"]))
    ax.set_title("%s: %s%s" % (t["title"], metric, extra), fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return _save(fig, out_dir, stem)


def _decimate(xs, ys):
    n = len(xs)
    if n <= MAX_POINTS:
        return xs, ys
    step = math.ceil(n / MAX_POINTS)
    ox, oy = [], []
    for i in range(0, n, step):
        seg = [(ys[j], j) for j in range(i, min(n, i + step)) if not math.isnan(ys[j])]
        if seg:
            v, j = min(seg)
            ox.append(xs[j])
            oy.append(v)
    return ox, oy


def _xs(times, fps, n):
    if times is not None and all(v is not None for v in times):
        t0 = min(times)
        return [v - t0 for v in times], "time (s)"
    if fps:
        return [i / fps for i in range(n)], "time (s)"
    return list(range(n)), "frame"


def frames(t, out_dir, stem):
    metric = t["primary"]
    fig, ax = plt.subplots(figsize=(9.6, 3.6))
    label = "frame"
    names = [r["name"] for r in t["renditions"]]
    other = t.get("_against") or {}
    for k, name in enumerate(names):
        color = COLORS[k % len(COLORS)]
        if name in t["_series"]:
            series, times, fps = t["_series"][name]
            ys = series(metric)
            xs, label = _xs(times, fps, len(ys))
            ax.plot(*_decimate(xs, ys), color=color, lw=1.0, label=name)
            for w in t["worst_seconds"].get(name, [])[:1]:
                if w["start_s"] is not None:
                    ax.axvspan(w["start_s"], w["end_s"], color=color, alpha=0.15, lw=0)
                    ax.plot([(w["start_s"] + w["end_s"]) / 2], [w["mean"]], "v", color=color, ms=6)
                else:
                    ax.axvspan(w["first_frame"], w["last_frame"] + 1, color=color, alpha=0.15, lw=0)
        if name in other.get("_series", {}) and metric in other.get("metrics", []):
            series, times, fps = other["_series"][name]
            ys = series(metric)
            xs, _ = _xs(times, fps, len(ys))
            ax.plot(*_decimate(xs, ys), "--", color=color, lw=0.8, alpha=0.7, label=name + " (other run)")
    ax.set_xlabel(label)
    ax.set_ylabel(metric)
    ax.set_title("%s: %s per frame (shaded: each rendition's worst second)" % (t["title"], metric), fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="lower left", ncol=4)
    fig.tight_layout()
    return _save(fig, out_dir, stem)


def plot_title(t, index, out_dir, pool, metrics):
    """Every plot of a title: {"rate_quality": {metric: plot}, "frames": plot or None}."""
    base = "%03d-%s" % (index, slug(t["title"]))
    res = {"rate_quality": {}, "frames": None}
    for m in metrics:
        if _points(t, m, pool):
            res["rate_quality"][m] = rate_quality(t, m, pool, out_dir, "%s-rq-%s" % (base, slug(m)))
    if t["primary"] and t["_series"]:
        res["frames"] = frames(t, out_dir, base + "-frames")
    return res

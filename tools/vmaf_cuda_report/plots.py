# SPDX-License-Identifier: BSD-2-Clause-Patent
"""The plots (matplotlib, Agg): per title a rate-quality plot per plotted metric (the
renditions, the hull, the other run's in grey) and a score-over-time plot of the primary
metric (every rendition, the other run's dashed, each rendition's worst second shaded).

Each plot is drawn once as SVG (its text goes into the page); files: OUT_DIR/plots/ as SVG
(default), PNG, both or none (--plot-files). Labels are plain text (no mathtext: a `$` in
a title is a dollar sign); text stays text in the SVG (the browser's fonts, CJK
included); missing-glyph warnings are silenced. The bitrate axis is logarithmic with
plain kbit/s ticks (1-2-5 steps, finer for a narrow ladder)."""

import io
import logging
import math
import os
import re
import warnings

import matplotlib

matplotlib.use("Agg")
from matplotlib import font_manager, ticker  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.backends.backend_svg import FigureCanvasSVG  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

logging.getLogger("matplotlib.font_manager").setLevel(logging.ERROR)
warnings.filterwarnings("ignore", message=r"(?s).*Glyph \d+ .*missing from")
warnings.filterwarnings("ignore", message=r"(?s).*[Ff]ont family .* not found")
_FALLBACK = ("Noto Sans CJK JP", "Noto Sans CJK SC", "WenQuanYi Zen Hei", "Droid Sans Fallback",
             "Noto Sans CJK", "Source Han Sans")
_have = {f.name for f in font_manager.fontManager.ttflist}
matplotlib.rcParams.update({"svg.hashsalt": "vmaf_cuda_report", "svg.fonttype": "none", "font.size": 9,
                            "text.parse_math": False, "text.usetex": False,
                            "font.family": ["DejaVu Sans"] + [f for f in _FALLBACK if f in _have]})
COLORS = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
FILES = ("svg", "png", "both", "none")
MAX_POINTS = 1000  # per line of a time plot: the minimum of each bucket (dips stay visible)


def slug(text):
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._")[:60] or "x"


def _figure(w, h):
    fig = Figure(figsize=(w, h))
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot()


_ATTR = re.compile(r'\b(d|transform|x|y|x1|x2|y1|y2|points)="([^"]*)"')
_LONG = re.compile(r"(-?\d+\.\d)(\d{2,})")


def compact_svg(svg):
    """The SVG smaller and the same to the eye: coordinates in its geometry attributes
    rounded to 0.01 px (matplotlib writes 6 decimals), line breaks and indentation folded
    to one space. Text (titles, labels, rendition names) is left as it is."""
    def num(m):
        v = "%.2f" % float(m.group(0))
        return v.rstrip("0").rstrip(".") if "." in v else v

    def attr(m):
        return '%s="%s"' % (m.group(1), _LONG.sub(num, " ".join(m.group(2).split())))
    return re.sub(r">\s*\n\s*<", "><", _ATTR.sub(attr, svg))


def _save(fig, out_dir, stem, files="svg"):
    """Draws the figure as SVG (its text: for the page) and writes the files asked for
    under out_dir/plots/ (out_dir: the report's staging folder)."""
    buf = io.StringIO()
    FigureCanvasSVG(fig).print_svg(buf, metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    svg = compact_svg(buf.getvalue())
    rel = "plots/" + stem
    res = {"svg_text": svg, "svg": None, "png": None}
    if files != "none":
        os.makedirs(os.path.join(out_dir, "plots"), exist_ok=True)
    if files in ("svg", "both"):
        with open(os.path.join(out_dir, rel + ".svg"), "w", encoding="utf-8") as f:
            f.write(svg)
        res["svg"] = rel + ".svg"
    if files in ("png", "both"):
        FigureCanvasAgg(fig).print_png(os.path.join(out_dir, rel + ".png"), dpi=96, metadata={"Software": None})
        res["png"] = rel + ".png"
    return res


def bitrate_ticks(lo, hi):
    """Plain kbit/s ticks for a log axis from lo to hi: 1-2-5 steps, finer (1-1.5-2-3-5-7)
    or every integer multiple where the ladder is narrow, so at least 4 ticks show."""
    if not (lo > 0 and hi >= lo):
        return []
    for subs in ((1, 2, 5), (1, 1.5, 2, 3, 5, 7), (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8, 9)):
        ticks = []
        for e in range(int(math.floor(math.log10(lo))) - 1, int(math.ceil(math.log10(hi))) + 1):
            for sub in subs:
                v = sub * 10.0 ** e
                if lo * 0.999 <= v <= hi * 1.001:
                    ticks.append(float("%.6g" % v))
        if len(ticks) >= 4:
            break
    return sorted(set(ticks))


def _tick_label(v, _pos=None):
    return "%g" % v if v < 1e6 else "%.0f" % v


def _bitrate_axis(ax, rates):
    lo, hi = min(rates), max(rates)
    pad = (hi / lo) ** 0.06 if hi > lo else 1.3
    ax.set_xscale("log")
    ax.set_xlim(lo / pad, hi * pad)
    ticks = bitrate_ticks(lo / pad, hi * pad)
    ax.xaxis.set_major_locator(ticker.FixedLocator(ticks))
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(_tick_label))
    ax.xaxis.set_minor_locator(ticker.NullLocator())


def _points(t, metric, pool):
    return [(r["name"], r["bitrate_kbps"], (r["pooled"].get(metric) or {}).get(pool)) for r in t["renditions"]
            if r["bitrate_kbps"] and (r["pooled"].get(metric) or {}).get(pool) is not None]


def rate_quality(t, metric, pool, out_dir, stem, files="svg"):
    fig, ax = _figure(6.4, 4.0)
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
    allr = [p[1] for p in pts] + ([p[1] for p in _points(other, metric, pool)] if other else [])
    if allr:
        _bitrate_axis(ax, allr)
    ax.set_xlabel("bitrate (kbit/s, log scale)")
    ax.set_ylabel("%s (%s)" % (metric, pool))
    bd = (t.get("bd_rate") or {}).get(metric)
    extra = ""
    if bd:
        f = lambda v: "n/a" if v is None else "%+.2f %%" % v
        extra = "  BD-rate pchip %s, cubic %s" % (f(bd["pchip"]), f(bd["cubic"]))
    ax.set_title("%s: %s%s" % (t["title"], metric, extra), fontsize=9)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.subplots_adjust(left=0.11, right=0.97, top=0.92, bottom=0.12)  # (tight_layout: 3 times slower)
    return _save(fig, out_dir, stem, files)


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


def _xs(times, nums):
    """Seconds from the first frame (pts_time, else frameNum / fps), else frame numbers."""
    if times is not None:
        t0 = min(times)
        return [v - t0 for v in times], "time (s)"
    return list(nums), "frame"


def frames(t, out_dir, stem, files="svg"):
    metric = t["primary"]
    fig, ax = _figure(9.6, 4.2)
    label = "frame"
    names = [r["name"] for r in t["renditions"]]
    other = t.get("_against") or {}
    for k, name in enumerate(names):
        color = COLORS[k % len(COLORS)]
        if name in t["_series"]:
            series, times, nums = t["_series"][name]
            ys = series(metric)
            xs, label = _xs(times, nums)
            ax.plot(*_decimate(xs, ys), color=color, lw=1.0, label=name)
            for w in t["worst_seconds"].get(name, [])[:1]:
                if w["start_s"] is not None:
                    ax.axvspan(w["start_s"], w["end_s"], color=color, alpha=0.15, lw=0)
                    ax.plot([(w["start_s"] + w["end_s"]) / 2], [w["mean"]], "v", color=color, ms=6)
                else:
                    ax.axvspan(w["first_frame"], w["last_frame"] + 1, color=color, alpha=0.15, lw=0)
        if name in other.get("_series", {}) and metric in other.get("metrics", []):
            series, times, nums = other["_series"][name]
            ys = series(metric)
            xs, _ = _xs(times, nums)
            ax.plot(*_decimate(xs, ys), "--", color=color, lw=0.8, alpha=0.7, label=name + " (other run)")
    ax.set_xlabel(label)
    ax.set_ylabel(metric)
    ax.set_title("%s: %s per frame (shaded: each rendition's worst second)" % (t["title"], metric), fontsize=9)
    ax.grid(True, alpha=0.3)
    # the legend below the axes, never over the curves
    handles = ax.get_legend_handles_labels()[0]
    ncol = min(6, max(1, len(handles)))
    rows = -(-len(handles) // ncol)
    fig.set_size_inches(9.6, 3.6 + 0.18 * rows)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=ncol, frameon=False)
    fig.subplots_adjust(left=0.07, right=0.98, top=0.93, bottom=(0.5 + 0.18 * rows) / (3.6 + 0.18 * rows))
    return _save(fig, out_dir, stem, files)


def plot_title(t, index, out_dir, pool, metrics, files="svg"):
    """Every plot of a title: {"rate_quality": {metric: plot}, "frames": plot or None,
    "error": None or what failed}. A plot that fails is left out and named in "error"
    (the report goes on: one title's plot never loses the catalog)."""
    base = "%03d-%s" % (index, slug(t["title"]))
    res = {"rate_quality": {}, "frames": None, "error": None}
    errors = []
    for m in metrics:
        if _points(t, m, pool):
            try:
                res["rate_quality"][m] = rate_quality(t, m, pool, out_dir, "%s-rq-%s" % (base, slug(m)), files)
            except OSError:
                raise  # the output cannot be written: the report's error, not a plot's
            except Exception as e:  # noqa: BLE001
                errors.append("the %s rate-quality plot failed (%s: %s)" % (m, type(e).__name__, e))
    if t["primary"] and t["_series"]:
        try:
            res["frames"] = frames(t, out_dir, base + "-frames", files)
        except OSError:
            raise
        except Exception as e:  # noqa: BLE001
            errors.append("the per-frame plot failed (%s: %s)" % (type(e).__name__, e))
    res["error"] = "; ".join(errors) or None
    return res

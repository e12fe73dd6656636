# SPDX-License-Identifier: BSD-2-Clause-Patent
"""Bjontegaard deltas of two rate-quality curves (an anchor and a test).

BD-rate: the average difference of log10(bitrate) over the quality range both curves
cover, as a percentage of the anchor's bitrate, (10**avg - 1) * 100: negative when the
test needs fewer bits for the same quality. BD-quality (BD-PSNR, BD-VMAF): the average
quality difference over the log10(bitrate) range both cover, in the metric's points.

Two interpolations:
- "pchip": piecewise cubic Hermite with the Fritsch-Carlson monotone slopes (MATLAB's
  pchip, used by the JCT-VC/AOM common test conditions' BD-rate sheets and Netflix's
  bd_rate), integrated exactly per piece;
- "cubic": the classic least-squares cubic polynomial of VCEG-M33 (numpy's polyfit,
  integrated exactly), which needs 4 points on each curve.
Both equal the `bjontegaard` package's 'pchip' and 'cubic' (tests/report)."""

import math

import numpy as np


def pchip_slopes(x, y):
    """Derivatives at the points of the monotone piecewise cubic Hermite interpolant:
    interior, the weighted harmonic mean of the neighbouring secants (0 where they differ
    in sign or one is 0); ends, the shape-preserving three-point formula."""
    n = len(x)
    h = np.diff(x)
    m = np.diff(y) / h
    if n == 2:
        return np.array([m[0], m[0]])
    d = np.zeros(n)
    for k in range(1, n - 1):
        if m[k - 1] == 0 or m[k] == 0 or np.sign(m[k - 1]) != np.sign(m[k]):
            d[k] = 0.0
        else:
            w1, w2 = 2 * h[k] + h[k - 1], h[k] + 2 * h[k - 1]
            d[k] = 1.0 / ((w1 / m[k - 1] + w2 / m[k]) / (w1 + w2))

    def edge(h0, h1, m0, m1):
        e = ((2 * h0 + h1) * m0 - h0 * m1) / (h0 + h1)
        if np.sign(e) != np.sign(m0):
            return 0.0
        if np.sign(m0) != np.sign(m1) and abs(e) > 3 * abs(m0):
            return 3 * m0
        return e
    d[0] = edge(h[0], h[1], m[0], m[1])
    d[-1] = edge(h[-1], h[-2], m[-1], m[-2])
    return d


def pchip_integral(x, y, a, b):
    """Integral over [a, b] (within [x[0], x[-1]]) of the PCHIP interpolant of (x, y),
    x strictly increasing."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    d = pchip_slopes(x, y)

    def prim(t):  # antiderivatives of the Hermite basis h00, h10, h01, h11 in t
        return (t - t ** 3 + t ** 4 / 2, t ** 2 / 2 - 2 * t ** 3 / 3 + t ** 4 / 4,
                t ** 3 - t ** 4 / 2, -t ** 3 / 3 + t ** 4 / 4)
    total = 0.0
    for k in range(len(x) - 1):
        lo, hi = max(a, x[k]), min(b, x[k + 1])
        if hi <= lo:
            continue
        h = x[k + 1] - x[k]
        ta, tb = (lo - x[k]) / h, (hi - x[k]) / h
        pa, pb = prim(ta), prim(tb)
        c = (y[k], h * d[k], y[k + 1], h * d[k + 1])
        total += h * sum(ci * (pb[i] - pa[i]) for i, ci in enumerate(c))
    return total


def cubic_integral(x, y, a, b):
    p = np.polyint(np.polyfit(x, y, 3))
    return np.polyval(p, b) - np.polyval(p, a)


def _ascending(x, y):
    """x, y as arrays with x ascending (a curve given the other way round is reversed,
    as the bjontegaard package does; a curve in order is used as given, since the
    cubic's least squares depend in the last bits on the order of the points)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) > 1 and x[-1] < x[0]:
        x, y = x[::-1], y[::-1]
    if np.any(np.diff(x) <= 0):
        o = np.argsort(x, kind="stable")
        x, y = x[o], y[o]
    return x, y


def _delta(base_a, val_a, base_t, val_t, method):
    """Average of test minus anchor over the bases' common range; (value, None) or
    (None, why)."""
    lo, hi = max(min(base_a), min(base_t)), min(max(base_a), max(base_t))
    if not hi > lo:
        return None, "no overlap"
    if method == "cubic" and (len(base_a) < 4 or len(base_t) < 4):
        return None, "the cubic needs 4 points on each curve"
    f = pchip_integral if method == "pchip" else cubic_integral
    ia = f(*_ascending(base_a, val_a), lo, hi)
    it = f(*_ascending(base_t, val_t), lo, hi)
    return float((it - ia) / (hi - lo)), None  # (a plain double, whatever numpy returns)


def _check(rate, quality, who):
    if len(rate) < 2:
        return "%s has %d point%s on its curve (2 are needed)" % (who, len(rate), "" if len(rate) == 1 else "s")
    if any(not (r > 0 and math.isfinite(r)) for r in rate) or any(not math.isfinite(q) for q in quality):
        return "%s has a point without a positive bitrate or a finite quality" % who
    if len(set(quality)) != len(quality) or len(set(rate)) != len(rate):
        return "%s's curve repeats a bitrate or a quality (--bd-points hull uses its hull)" % who
    return None


def bd(rate_a, q_a, rate_t, q_t, metric="quality"):
    """BD-rate (percent) and BD-quality (points) of the test curve against the anchor, by
    both methods: {"bd_rate": {"pchip", "cubic"}, "bd_quality": {"pchip", "cubic"},
    "overlap": fraction of the union of the quality ranges both cover, "notes": [...]}.
    A value that cannot be computed is None and a note says why, e.g. curves whose
    quality ranges do not overlap."""
    res = {"bd_rate": {"pchip": None, "cubic": None}, "bd_quality": {"pchip": None, "cubic": None},
           "overlap": None, "notes": []}
    why = _check(rate_a, q_a, "the anchor") or _check(rate_t, q_t, "the test")
    if why:
        res["notes"].append("%s: no BD values: %s" % (metric, why))
        return res
    la, lt = list(np.log10(np.asarray(rate_a, float))), list(np.log10(np.asarray(rate_t, float)))
    union = max(max(q_a), max(q_t)) - min(min(q_a), min(q_t))
    common = min(max(q_a), max(q_t)) - max(min(q_a), min(q_t))
    res["overlap"] = max(common, 0.0) / union if union > 0 else 0.0
    if common <= 0:
        res["notes"].append(
            "%s: the curves do not overlap in quality (this run %.4g..%.4g, the other %.4g..%.4g): "
            "no BD-rate; compare renditions of a common quality range" % (
                metric, min(q_t), max(q_t), min(q_a), max(q_a)))
    elif res["overlap"] < 0.75:
        res["notes"].append("%s: the curves share only %.0f %% of their quality range: BD values "
                            "cover that part only" % (metric, 100 * res["overlap"]))
    for method in ("pchip", "cubic"):
        v, w = _delta(q_a, la, q_t, lt, method)
        if v is not None:
            res["bd_rate"][method] = (10 ** v - 1) * 100
        elif w != "no overlap":
            res["notes"].append("%s: no %s BD-rate: %s" % (metric, method, w))
        v, w = _delta(la, q_a, lt, q_t, method)
        if v is not None:
            res["bd_quality"][method] = v
        elif w == "no overlap":
            res["notes"].append("%s: the curves do not overlap in bitrate: no BD-quality" % metric)
    # (a cubic note is given once)
    seen, notes = set(), []
    for n in res["notes"]:
        if n not in seen:
            seen.add(n)
            notes.append(n)
    res["notes"] = notes
    return res

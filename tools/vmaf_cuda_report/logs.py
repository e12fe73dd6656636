# SPDX-License-Identifier: BSD-2-Clause-Patent
"""The project's score logs: libvmaf's JSON log (the filter's and the CLI's log_fmt=json,
vmaf-cuda-batch's K-NAME.json) and the NDJSON stream (log_fmt=ndjson, --ndjson).

A Log holds every frame's values per metric (float, NaN where the log has null), the frame
times where the log has them (NDJSON pts_time), and the pooled values the log itself
carries (libvmaf's mean, harmonic_mean, min, max: exact, as the filter computed them)."""

import json
import math

POOLS = ("mean", "harmonic_mean", "min", "perc1", "perc5")


class LogError(Exception):
    """A log that cannot be read: the message names the file and what is wrong."""


class Log:
    def __init__(self, path, frames, times, pooled):
        self.path = path
        self.frames = frames      # [{metric: float}] in frame order
        self.times = times        # [seconds or None] per frame (NDJSON pts_time), or None
        self.pooled = pooled      # {metric: {"min", "max", "mean", "harmonic_mean"}} of the log

    def metrics(self):
        """Metric names in the log's order (the pooled block's, then any only in frames)."""
        names = list(self.pooled)
        for f in self.frames:
            for k in f:
                if k not in self.pooled and k not in names:
                    names.append(k)
        return names

    def series(self, metric):
        return [f.get(metric, math.nan) for f in self.frames]


def _num(v):
    return math.nan if v is None else float(v)


def load(path):
    """A JSON log or an NDJSON stream (told apart by its first line), as a Log."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise LogError("cannot read the log %s: %s" % (path, e.strerror or e))
    first = text.lstrip().split("\n", 1)[0]
    try:
        head = json.loads(first) if first else None
    except ValueError:
        head = None
    if isinstance(head, dict) and "type" in head:
        return _load_ndjson(path, text)
    try:
        d = json.loads(text)
    except ValueError as e:
        raise LogError("%s: neither a JSON log nor an NDJSON stream: %s" % (path, e))
    if not isinstance(d, dict) or not isinstance(d.get("frames"), list):
        raise LogError("%s: not a libvmaf JSON log (no \"frames\" list)" % path)
    frames = []
    for fr in d["frames"]:
        m = fr.get("metrics") if isinstance(fr, dict) else None
        if not isinstance(m, dict):
            raise LogError("%s: a frame without \"metrics\"" % path)
        frames.append({k: _num(v) for k, v in m.items()})
    pooled = d.get("pooled_metrics") if isinstance(d.get("pooled_metrics"), dict) else {}
    return Log(path, frames, None, pooled)


def _load_ndjson(path, text):
    frames, times, pooled = [], [], {}
    for no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            o = json.loads(line)
        except ValueError as e:
            # a stream cut while a line was written: only the last line may be partial
            if no == len(text.splitlines()):
                break
            raise LogError("%s:%d: not JSON: %s" % (path, no, e))
        t = o.get("type")
        if t == "frame":
            frames.append({k: _num(v) for k, v in (o.get("metrics") or {}).items()})
            pt = o.get("pts_time")
            times.append(None if pt is None else float(pt))
        elif t == "pooled":
            pooled = o.get("pooled_metrics") or {}
    has_times = any(t is not None for t in times)
    return Log(path, frames, times if has_times else None, pooled)


def percentile_nearest_rank(values, p):
    """The filter's pool=percN: the value at rank max(1, ceil(p*n/100)) of the values sorted
    ascending, NaN last (integer arithmetic for the rank). None without values."""
    if not values:
        return None
    vals = sorted(values, key=lambda v: (math.isnan(v), v))
    rank = max(1, (p * len(vals) + 99) // 100)
    return vals[rank - 1]


def pool(log, metric):
    """{"mean", "harmonic_mean", "min", "perc1", "perc5"} of a metric: mean, harmonic mean
    and min as the log pooled them (computed from the frames as libvmaf does where the log
    has no pooled block, e.g. a cut NDJSON stream), perc1/perc5 nearest rank over the
    frames. NaN is None."""
    vals = log.series(metric)
    out = {}
    pm = log.pooled.get(metric)
    if isinstance(pm, dict) and all(k in pm for k in ("mean", "harmonic_mean", "min")):
        for k in ("mean", "harmonic_mean", "min"):
            out[k] = None if pm[k] is None else float(pm[k])
    else:
        finite = [v for v in vals if not math.isnan(v)]
        s = 0.0
        for v in vals:  # libvmaf: left-to-right sums over every frame
            s += v
        h = 0.0
        for v in vals:
            h += 1.0 / (v + 1.0)
        out["mean"] = s / len(vals) if vals else None
        out["harmonic_mean"] = len(vals) / h - 1.0 if vals and h else None
        out["min"] = min(finite) if finite else None
    for p in (1, 5):
        v = percentile_nearest_rank(vals, p)
        out["perc%d" % p] = v
    return {k: None if v is None or (isinstance(v, float) and not math.isfinite(v)) else v
            for k, v in ((k, out[k]) for k in POOLS)}

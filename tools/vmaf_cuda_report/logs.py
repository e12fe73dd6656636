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
    def __init__(self, path, frames, times, pooled, nums=None, expected=None, warnings=None):
        self.path = path
        self.frames = frames      # [{metric: float}] in frame order
        self.times = times        # [seconds] per frame (NDJSON pts_time), or None
        self.pooled = pooled      # {metric: {"min", "max", "mean", "harmonic_mean"}} of the log
        # the frames' numbers (frameNum: 0, N, 2N, ... with n_subsample=N), else 0, 1, 2, ...
        self.nums = nums if nums and len(nums) == len(frames) else list(range(len(frames)))
        self.expected = expected  # the frames the stream's pooled line counts, when it has one
        self.warnings = warnings or []  # what was skipped or is missing, for the report's notes

    def metrics(self):
        """Metric names in the log's order (the pooled block's, then any only in frames)."""
        names = list(self.pooled)
        seen = set(names)
        for f in self.frames:
            for k in f:
                if k not in seen:
                    seen.add(k)
                    names.append(k)
        return names

    def series(self, metric):
        return [f.get(metric, math.nan) for f in self.frames]


class _Bad(ValueError):
    pass


def _num(v, what):
    """A score: a number or null (NaN); anything else (a string, an object, true) is bad."""
    if v is None:
        return math.nan
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise _Bad("%s is %s, not a number" % (what, json.dumps(v)[:40]))
    return float(v)


def _metrics(m, what):
    if not isinstance(m, dict):
        raise _Bad("%s: \"metrics\" is not an object" % what)
    return {k: _num(v, "%s: %s" % (what, k)) for k, v in m.items()}


def _frame_num(o, fallback):
    v = o.get("frameNum")
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else fallback


def _pooled(p, where):
    """The log's pooled block, checked: {metric: {"min", "max", "mean", "harmonic_mean"}}
    with numbers or null; a metric whose block is not of that shape is left out (its pools
    are then computed from the frames)."""
    out = {}
    if not isinstance(p, dict):
        return out
    for k, v in p.items():
        if isinstance(v, dict) and all(x is None or (isinstance(x, (int, float)) and not isinstance(x, bool))
                                       for x in v.values()):
            out[k] = v
    return out


def load(path):
    """A JSON log or an NDJSON stream (told apart by its first line), as a Log. Raises
    LogError naming the file (and the frame or line) when it cannot be used."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise LogError("cannot read the log %s: %s" % (path, getattr(e, "strerror", None) or e))
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
        if head is not None or first.startswith("{\"type\""):
            return _load_ndjson(path, text)
        raise LogError("%s: neither a JSON log nor an NDJSON stream: %s" % (path, e))
    if not isinstance(d, dict) or not isinstance(d.get("frames"), list):
        raise LogError("%s: not a libvmaf JSON log (no \"frames\" list)" % path)
    frames, nums = [], []
    try:
        for k, fr in enumerate(d["frames"]):
            if not isinstance(fr, dict):
                raise _Bad("frame %d is not an object" % k)
            frames.append(_metrics(fr.get("metrics"), "frame %d" % k))
            nums.append(_frame_num(fr, k))
    except _Bad as e:
        raise LogError("%s: %s" % (path, e))
    return Log(path, frames, None, _pooled(d.get("pooled_metrics"), path), nums)


def _load_ndjson(path, text):
    """An NDJSON stream: frame lines, then a pooled line. A line that is not JSON or not a
    frame of the right shape (a stream cut while a line was written, a stray line) is
    skipped with a warning; so is a stream without its pooled line (cut short), and frame
    times are used only where every frame has its pts_time."""
    frames, times, nums, pooled, expected = [], [], [], {}, None
    bad, has_pooled = [], False
    for no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            o = json.loads(line)
            if not isinstance(o, dict):
                raise _Bad("not an object")
            t = o.get("type")
            if t == "frame":
                m = _metrics(o.get("metrics"), "frame")
                pt = o.get("pts_time")
                if pt is not None and (isinstance(pt, bool) or not isinstance(pt, (int, float))):
                    raise _Bad("pts_time is not a number")
                frames.append(m)
                times.append(None if pt is None else float(pt))
                nums.append(_frame_num(o, len(nums)))
            elif t == "pooled":
                has_pooled = True
                pooled = _pooled(o.get("pooled_metrics"), path)
                n = o.get("frames")
                expected = n if isinstance(n, int) and not isinstance(n, bool) else None
        except (ValueError, _Bad) as e:
            bad.append((no, str(e)))
    warnings = []
    if bad:
        warnings.append("%d line%s of the stream skipped (not a frame or pooled line of the right form: line %d%s)" % (
            len(bad), "" if len(bad) == 1 else "s", bad[0][0],
            "".join(", %d" % b[0] for b in bad[1:4]) + (", ..." if len(bad) > 4 else "")))
    if frames and not has_pooled:
        warnings.append("the stream has no pooled line (cut short?): %d frames read, pools "
                        "computed from them" % len(frames))
    if expected is not None and expected != len(frames):
        warnings.append("the pooled line counts %d frames, the stream holds %d" % (expected, len(frames)))
    n_times = sum(1 for t in times if t is not None)
    if 0 < n_times < len(times):
        warnings.append("%d of %d frames have no pts_time: times from the frame rate" % (
            len(times) - n_times, len(times)))
    if not frames and not has_pooled:
        raise LogError("%s: an NDJSON stream without frames%s" % (path, " (%d unreadable lines)" % len(bad) if bad else ""))
    return Log(path, frames, times if times and n_times == len(times) else None, pooled, nums, expected, warnings)


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

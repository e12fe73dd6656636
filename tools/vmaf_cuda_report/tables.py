# SPDX-License-Identifier: BSD-2-Clause-Patent
"""report.json and the CSV tables (renditions.csv, bd.csv). Numbers are exact (the
shortest text that reads back as the same double); NaN and infinities are null/empty."""

import csv
import json
import math
import os


def clean(v):
    """v without the keys starting with "_" (the plots' data), non-finite floats as None."""
    if isinstance(v, dict):
        return {k: clean(x) for k, x in v.items() if not (isinstance(k, str) and k.startswith("_"))}
    if isinstance(v, list):
        return [clean(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def _atomic(path, write):
    """Writes path through path.tmp (removed when the write fails)."""
    tmp = path + ".tmp"
    try:
        with open(tmp, "w", encoding="utf-8", newline="") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def write_json(path, rep):
    def w(f):
        json.dump(clean(rep), f, indent=1, allow_nan=False)
        f.write("\n")
    _atomic(path, w)


def fmt(v):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return ""
    # (numpy 2's scalars print as np.float64(...): the plain double's shortest repr)
    return repr(float(v)) if isinstance(v, float) else str(v)


def rendition_rows(rep):
    metrics, rows = [], []
    for t in rep["titles"]:
        runs = [("this", t["renditions"], t["hull"])]
        if t.get("against"):
            runs.append(("other", t["against"]["renditions"], t.get("against_hull") or {}))
        for run, rends, hull in runs:
            for r in rends:
                row = {"run": run, "title": t["title"], "rendition": r["name"], "path": r["path"],
                       "bitrate_kbps": r["bitrate_kbps"], "width": r["width"], "height": r["height"],
                       "frames": r["frames"],
                       "on_hull": "|".join(m for m, names in hull.items() if r["name"] in names)}
                for m, pools in r["pooled"].items():
                    if m not in metrics:
                        metrics.append(m)
                    for p, v in pools.items():
                        row["%s_%s" % (m, p)] = v
                rows.append(row)
    cols = ["run", "title", "rendition", "path", "bitrate_kbps", "width", "height", "frames", "on_hull"]
    pools = ("mean", "harmonic_mean", "min", "perc1", "perc5")
    return cols + ["%s_%s" % (m, p) for m in metrics for p in pools], rows


def bd_rows(rep):
    rows = []
    for t in rep["titles"]:
        for m in t["metrics"]:
            br, bq = t["bd_rate"].get(m) or {}, t["bd_quality"].get(m) or {}
            rows.append({"title": t["title"], "metric": m, "hull": "|".join(t["hull"].get(m, [])),
                         "not_on_hull": "|".join(t["not_on_hull"].get(m, [])),
                         "other_hull": "|".join((t.get("against_hull") or {}).get(m, [])),
                         "bd_rate_pchip": br.get("pchip"), "bd_rate_cubic": br.get("cubic"),
                         "bd_quality_pchip": bq.get("pchip"), "bd_quality_cubic": bq.get("cubic"),
                         "notes": " | ".join(n for n in t["notes"] if m in n.partition(": ")[0].split(", "))})
    cols = ["title", "metric", "hull", "not_on_hull", "other_hull", "bd_rate_pchip", "bd_rate_cubic",
            "bd_quality_pchip", "bd_quality_cubic", "notes"]
    return cols, rows


def write_csv(path, cols, rows):
    def w(f):
        wr = csv.writer(f)
        wr.writerow(cols)
        for r in rows:
            wr.writerow([fmt(r.get(c)) for c in cols])
    _atomic(path, w)


def write_all(out_dir, rep):
    write_json(os.path.join(out_dir, "report.json"), rep)
    write_csv(os.path.join(out_dir, "renditions.csv"), *rendition_rows(rep))
    write_csv(os.path.join(out_dir, "bd.csv"), *bd_rows(rep))

# SPDX-License-Identifier: BSD-2-Clause-Patent
"""vmaf-cuda-report: the report of a vmaf-cuda-batch run, a manifest of logs, or logs.

    vmaf-cuda-report -o OUT --batch DIR [--against OTHER_DIR]
    vmaf-cuda-report -o OUT --manifest FILE.jsonl [--against-manifest FILE.jsonl]
    vmaf-cuda-report -o OUT [--title NAME] LOG[=MEDIA] ... [--against LOG[=MEDIA] ...]

Writes OUT/report.html, OUT/report.json, OUT/renditions.csv, OUT/bd.csv and OUT/plots/.
Exit status 0 when written, 2 on a usage or input error. docs/report.md says the rest."""

import argparse
import os
import sys

from . import VERSION, build, html, media, plots, sources, tables
from .logs import POOLS


class ReportError(Exception):
    pass


def write_report(run, against, out_dir, ffprobe=None, pool="mean", worst=3, extra=(), plot_metrics="models"):
    """Builds and writes the report of a run (sources.py) into out_dir; returns report.json's
    object."""
    rep = build.build(run, against, ffprobe=ffprobe, pool=pool, worst=worst, extra=extra)
    os.makedirs(out_dir, exist_ok=True)
    pl = []
    for i, t in enumerate(rep["titles"]):
        ms = t["metrics"] if plot_metrics == "all" else \
            [m for m in t["metrics"] if m not in build.QUALITY_METRICS][:8] or t["metrics"][:1]
        pl.append(plots.plot_title(t, i, out_dir, pool, ms))
        t["plots"] = {"rate_quality": {m: p["svg"] for m, p in pl[-1]["rate_quality"].items()},
                      "frames": pl[-1]["frames"]["svg"] if pl[-1]["frames"] else None}
    tables.write_all(out_dir, rep)
    text = html.page(rep, pl, pool)
    tmp = os.path.join(out_dir, "report.html.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, os.path.join(out_dir, "report.html"))
    return rep


def parser():
    ap = argparse.ArgumentParser(prog="vmaf-cuda-report", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    ap.add_argument("--version", action="version", version="vmaf-cuda-report " + VERSION)
    ap.add_argument("logs", nargs="*", metavar="LOG[=MEDIA]",
                    help="JSON or NDJSON logs of one title's renditions, each with its media file")
    ap.add_argument("-o", "--out", required=True, help="output folder")
    ap.add_argument("--batch", metavar="DIR", help="a vmaf-cuda-batch output folder")
    ap.add_argument("--manifest", help="JSON lines: {title, renditions: [{name, log, path | kbps}]}")
    ap.add_argument("--title", default="title", help="the title's name with LOG arguments")
    ap.add_argument("--against", nargs="+", metavar="X",
                    help="the other run: a batch folder (with --batch) or LOG[=MEDIA] ...")
    ap.add_argument("--against-manifest", help="the other run as a manifest")
    ap.add_argument("--ffprobe", help="ffprobe (default: $VMAF_CUDA_FFPROBE, the one beside the "
                                      "batch run's ffmpeg, ffprobe on PATH)")
    ap.add_argument("--pool", choices=POOLS, default="mean",
                    help="the pooled value a rendition's quality is (hull, BD; default mean)")
    ap.add_argument("--metric", action="append", default=[],
                    help="also give this metric a hull and BD values (models and PSNR/SSIM/CIEDE have them)")
    ap.add_argument("--worst", type=int, default=3, help="worst seconds listed per rendition (default 3)")
    ap.add_argument("--plots", choices=("models", "all"), default="models",
                    help="rate-quality plots of the models only (default) or of every metric with a hull")
    return ap


def load_runs(a):
    modes = [x for x in (a.batch, a.manifest, a.logs or None) if x]
    if len(modes) != 1:
        raise ReportError("give one of --batch DIR, --manifest FILE or LOG arguments")
    if a.batch:
        run = sources.from_batch(a.batch)
        if a.against_manifest or (a.against and len(a.against) != 1):
            raise ReportError("with --batch, --against names one other batch folder")
        other = sources.from_batch(a.against[0]) if a.against else None
        if os.path.abspath(a.out) in (run["source"], other and other["source"]):
            raise ReportError("-o %s is a batch folder (its report.json is the batch's own): name "
                              "another folder" % a.out)
    elif a.manifest:
        run = sources.from_manifest(a.manifest)
        if a.against:
            raise ReportError("with --manifest, the other run is --against-manifest FILE")
        other = sources.from_manifest(a.against_manifest) if a.against_manifest else None
    else:
        run = sources.from_logs(a.logs, a.title)
        if a.against_manifest:
            raise ReportError("with LOG arguments, the other run is --against LOG[=MEDIA] ...")
        other = sources.from_logs(a.against, a.title) if a.against else None
    return run, other


def main(argv=None):
    a = parser().parse_args(argv)
    try:
        run, other = load_runs(a)
        ffprobe = media.find_ffprobe(a.ffprobe, run.get("ffmpeg"))
        rep = write_report(run, other, a.out, ffprobe=ffprobe, pool=a.pool, worst=a.worst,
                           extra=a.metric, plot_metrics=a.plots)
    except (ReportError, sources.SourceError, media.MediaError) as e:
        print("vmaf-cuda-report: error: %s" % e, file=sys.stderr)
        return 2
    notes = sum(len(t["notes"]) for t in rep["titles"])
    print("vmaf-cuda-report: %s (%d title(s)%s)" % (
        os.path.join(a.out, "report.html"), len(rep["titles"]),
        ", %d note(s): see the page" % notes if notes else ""))
    return 0

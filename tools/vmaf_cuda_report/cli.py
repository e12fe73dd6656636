# SPDX-License-Identifier: BSD-2-Clause-Patent
"""vmaf-cuda-report: the report of a vmaf-cuda-batch run, a manifest of logs, or logs.

    vmaf-cuda-report -o OUT --batch DIR [--against OTHER_DIR]
    vmaf-cuda-report -o OUT --manifest FILE.jsonl [--against-manifest FILE.jsonl]
    vmaf-cuda-report -o OUT [--title NAME] LOG[=MEDIA] ... [--against LOG[=MEDIA] ...]

Writes OUT/report.html, OUT/report.json, OUT/renditions.csv, OUT/bd.csv and OUT/plots/.
Exit status 0 when written, 2 on a usage or input error. docs/report.md says the rest."""

import argparse
import errno
import multiprocessing
import os
import re
import shutil
import sys
import tempfile

from . import VERSION, build, html, media, plots, sources, tables
from .logs import POOLS


class ReportError(Exception):
    pass


class WriteError(ReportError):
    """The output cannot be written: exit status 1."""


# the plot files this tool writes (OUT_DIR/plots/NNN-TITLE-rq-METRIC.EXT, NNN-TITLE-frames.EXT)
PLOT_FILE = re.compile(r"^\d{3,}-.*-(rq-.+|frames)\.(png|svg)$")
OUTPUTS = ("report.json", "renditions.csv", "bd.csv")


def _cannot(path, e):
    return WriteError("cannot write '%s': %s" % (getattr(e, "filename", None) or path,
                                                  getattr(e, "strerror", None) or e))


def write_report(run, against, out_dir, ffprobe=None, pool="mean", worst=3, extra=(), plot_metrics="models",
                 plot_files="svg", points="all", jobs=1):
    """Builds and writes the report of a run (sources.py) into out_dir; returns report.json's
    object. Everything is written into a staging folder inside out_dir first and renamed
    into place at the end (report.html last), so a failure (a read-only folder, a full
    disk) leaves the earlier report as it was and no temporary file; the plot files of an
    earlier report (OUT_DIR/plots/, only those this tool names) are replaced."""
    rep = build.build(run, against, ffprobe=ffprobe, pool=pool, worst=worst, extra=extra, points=points)
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise WriteError("cannot write '%s': %s" % (out_dir, os.strerror(errno.ENOTDIR)))
    try:
        os.makedirs(out_dir, exist_ok=True)
        stage = tempfile.mkdtemp(prefix=".vmaf-cuda-report-", dir=out_dir)
    except OSError as e:
        raise _cannot(out_dir, e)
    try:
        pl = _plot_all(rep, stage, pool, plot_metrics, plot_files, jobs)
        for t, p in zip(rep["titles"], pl):
            if p["error"]:
                t["notes"].append("plots: " + p["error"])
            t["plots"] = {"rate_quality": {m: x["svg"] or x["png"] for m, x in p["rate_quality"].items()},
                          "frames": (p["frames"]["svg"] or p["frames"]["png"]) if p["frames"] else None}
        tables.write_all(stage, rep)
        with open(os.path.join(stage, "report.html"), "w", encoding="utf-8") as f:
            f.write(html.page(rep, pl, pool))
        _commit(stage, out_dir)
    except OSError as e:
        raise _cannot(out_dir, e)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return rep


_JOB = None  # (rep, stage, pool, plot_metrics, plot_files): the plotting processes' work (fork)


def _plot_one(i):
    rep, stage, pool, plot_metrics, files = _JOB
    t = rep["titles"][i]
    ms = t["metrics"] if plot_metrics == "all" else \
        [m for m in t["metrics"] if m not in build.QUALITY_METRICS][:8] or t["metrics"][:1]
    return plots.plot_title(t, i, stage, pool, ms, files)


def _plot_all(rep, stage, pool, plot_metrics, files, jobs):
    """Every title's plots, in `jobs` processes (forked: they share the report's data)."""
    global _JOB
    _JOB = (rep, stage, pool, plot_metrics, files)
    n = len(rep["titles"])
    try:
        if jobs > 1 and n >= 4 and "fork" in multiprocessing.get_all_start_methods():
            with multiprocessing.get_context("fork").Pool(min(jobs, n)) as p:
                return p.map(_plot_one, range(n), chunksize=max(1, n // (4 * jobs)))
        return [_plot_one(i) for i in range(n)]
    finally:
        _JOB = None


def _commit(stage, out_dir):
    """Moves the staged report into out_dir: the old page first out of the way (a failure
    midway leaves no page that disagrees with report.json), the earlier plot files this
    tool wrote removed, then the tables, the plots and the page."""
    old = os.path.join(out_dir, "report.html")
    if os.path.exists(old):
        os.remove(old)
    pdir = os.path.join(out_dir, "plots")
    if os.path.isdir(pdir):
        for f in os.listdir(pdir):
            if PLOT_FILE.match(f):
                os.remove(os.path.join(pdir, f))
    for f in OUTPUTS:
        os.replace(os.path.join(stage, f), os.path.join(out_dir, f))
    sp = os.path.join(stage, "plots")
    if os.path.isdir(sp):
        os.makedirs(pdir, exist_ok=True)
        for f in os.listdir(sp):
            os.replace(os.path.join(sp, f), os.path.join(pdir, f))
        if not os.listdir(pdir):
            os.rmdir(pdir)
    elif os.path.isdir(pdir) and not os.listdir(pdir):
        os.rmdir(pdir)
    os.replace(os.path.join(stage, "report.html"), old)


def _nonneg(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a whole number" % text)
    if v < 0:
        raise argparse.ArgumentTypeError("%d: give 0 or more" % v)
    return v


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
    ap.add_argument("--worst", type=_nonneg, default=3, help="worst seconds listed per rendition (default 3)")
    ap.add_argument("--plots", choices=("models", "all"), default="models",
                    help="rate-quality plots of the models only (default) or of every metric with a hull")
    ap.add_argument("--plot-files", choices=plots.FILES, default="svg",
                    help="plot files written under OUT/plots/ (default svg; the page holds the plots either way)")
    ap.add_argument("--jobs", type=_nonneg, default=min(8, os.cpu_count() or 1),
                    help="processes drawing the plots (default: the CPUs, at most 8)")
    ap.add_argument("--bd-points", choices=("all", "hull"), default="all",
                    help="BD values over every rendition's point (default, as Netflix's bd_rate) or each run's hull")
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
        if os.path.realpath(a.out) in (os.path.realpath(run["source"]),
                                       other and os.path.realpath(other["source"])):
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
                           extra=a.metric, plot_metrics=a.plots, plot_files=a.plot_files, points=a.bd_points, jobs=a.jobs)
    except (ReportError, sources.SourceError, media.MediaError) as e:
        print("vmaf-cuda-report: error: %s" % e, file=sys.stderr)
        return 1 if isinstance(e, WriteError) else 2
    for n in rep["notes"]:
        if n.startswith("--metric"):
            print("vmaf-cuda-report: warning: %s" % n, file=sys.stderr)
    notes = sum(len(t["notes"]) for t in rep["titles"]) + len(rep["notes"])
    print("vmaf-cuda-report: %s (%d title(s)%s)" % (
        os.path.join(a.out, "report.html"), len(rep["titles"]),
        ", %d note(s): see the page" % notes if notes else ""))
    return 0

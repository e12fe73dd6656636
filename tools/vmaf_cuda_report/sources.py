# SPDX-License-Identifier: BSD-2-Clause-Patent
"""Where a report's titles come from: a vmaf-cuda-batch run folder, a manifest of logs, or
logs named on the command line. Each gives a run: {"source", "ffmpeg", "titles": [{"title",
"status", "error", "models", "renditions": [{"name", "path", "log", "kbps", "status",
"error"}]}]} (path: the media file, for ffprobe; log: the score log; kbps: a bitrate given
instead of a media file; models: the model names, when known)."""

import json
import os
import re


class SourceError(Exception):
    pass


def _read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def from_batch(out):
    """A vmaf-cuda-batch output folder: batch.json's titles, each title's task.json (its
    outcome, models and logs titles/<dir>/K-<rendition>.json)."""
    out = os.path.abspath(out)
    state = _read_json(os.path.join(out, "batch.json"))
    if not isinstance(state, dict) or "titles" not in state:
        raise SourceError("%s is not a vmaf-cuda-batch output folder (no batch.json)" % out)
    titles = []
    for t in state["titles"]:
        tdir = os.path.join(out, "titles", t["dir"])
        task = _read_json(os.path.join(tdir, "task.json")) or {}
        recs = {r.get("name"): r for r in task.get("renditions", [])}
        status = task.get("status") or ("running" if os.path.exists(os.path.join(tdir, "running.json"))
                                        else "pending")
        rends = []
        for r in t["renditions"]:
            rec = recs.get(r["name"], {})
            log = os.path.join(tdir, rec["log"]) if rec.get("log") else None
            rends.append({"name": r["name"], "path": r["path"], "log": log, "kbps": None,
                          "status": rec.get("status") or status, "error": rec.get("error")})
        titles.append({"title": t["title"], "status": status, "error": task.get("error"),
                       "models": task.get("models"), "renditions": rends})
    return {"source": out, "ffmpeg": state.get("ffmpeg"), "titles": titles}


def from_manifest(path):
    """JSON lines, one title a line: {"title": "t1", "models": ["vmaf"] (optional),
    "renditions": [{"name": "1080p", "log": "t1/1080p.json", "path": "t1/1080p.mp4"}]}
    ("kbps": N instead of "path" where the media file is not at hand), paths relative to
    the manifest."""
    base = os.path.dirname(os.path.abspath(path))
    absp = lambda p: None if p is None else os.path.normpath(os.path.join(base, p))
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError as e:
        raise SourceError("cannot read the manifest %s: %s" % (path, e.strerror or e))
    titles, seen = [], set()
    for no, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = "%s:%d" % (path, no)
        try:
            t = json.loads(line)
        except ValueError as e:
            raise SourceError("%s: not JSON: %s" % (where, e))
        if not isinstance(t, dict) or not isinstance(t.get("title"), str) or not t["title"]:
            raise SourceError("%s: a title is a JSON object with a \"title\"" % where)
        if t["title"] in seen:
            raise SourceError("%s: title %r appears twice" % (where, t["title"]))
        seen.add(t["title"])
        rends = t.get("renditions")
        if not isinstance(rends, list) or not rends:
            raise SourceError("%s: \"renditions\" must be a non-empty list" % where)
        out = []
        for r in rends:
            if not isinstance(r, dict) or not r.get("name") or not r.get("log"):
                raise SourceError("%s: each rendition needs \"name\" and \"log\"" % where)
            kbps = r.get("kbps")
            if kbps is not None and not (isinstance(kbps, (int, float)) and kbps > 0):
                raise SourceError("%s: rendition %r: kbps must be a number above 0" % (where, r["name"]))
            out.append({"name": r["name"], "path": absp(r.get("path")), "log": absp(r["log"]),
                        "kbps": kbps, "status": "done", "error": None})
        titles.append({"title": t["title"], "status": "done", "error": None,
                       "models": t.get("models"), "renditions": out})
    if not titles:
        raise SourceError("%s: no titles" % path)
    return {"source": os.path.abspath(path), "ffmpeg": None, "titles": titles}


def from_logs(items, title):
    """LOG or LOG=MEDIA arguments (one title): the rendition is named by the log's file
    name without .json/.ndjson (and without vmaf-cuda-batch's "K-" prefix)."""
    rends, names = [], set()
    for it in items:
        log, sep, media = it.partition("=")
        if sep and not media:
            raise SourceError("%r: LOG=MEDIA names no media file" % it)
        name = re.sub(r"\.(nd)?json$", "", os.path.basename(log))
        name = re.sub(r"^\d+-", "", name) or name
        if name in names:
            raise SourceError("two logs give the rendition name %r; use a manifest (--manifest) "
                              "to name them" % name)
        names.add(name)
        rends.append({"name": name, "path": os.path.abspath(media) if media else None,
                      "log": os.path.abspath(log), "kbps": None, "status": "done", "error": None})
    return {"source": None, "ffmpeg": None,
            "titles": [{"title": title, "status": "done", "error": None, "models": None, "renditions": rends}]}

# SPDX-License-Identifier: BSD-2-Clause-Patent
"""Where a report's titles come from: a vmaf-cuda-batch run folder, a manifest of logs, or
logs named on the command line. Each gives a run: {"source", "ffmpeg", "titles": [{"title",
"status", "error", "models", "renditions": [{"name", "path", "log", "kbps", "status",
"error"}]}]} (path: the media file, for ffprobe; log: the score log; kbps: a bitrate given
instead of a media file; models: the model names, when known).

Inputs are checked before anything is read: a manifest or batch.json of the wrong shape is
an error (SourceError: the file, its line where it has lines, and the field)."""

import json
import math
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


def _str(v):
    return isinstance(v, str) and v != ""


def from_batch(out):
    """A vmaf-cuda-batch output folder: batch.json's titles, each title's task.json (its
    outcome, models and logs titles/<dir>/K-<rendition>.json)."""
    out = os.path.abspath(out)
    bj = os.path.join(out, "batch.json")
    state = _read_json(bj)
    if not isinstance(state, dict) or "titles" not in state:
        raise SourceError("%s is not a vmaf-cuda-batch output folder (no batch.json)" % out)
    if not isinstance(state["titles"], list):
        raise SourceError("%s: \"titles\" is not a list" % bj)
    titles = []
    for k, t in enumerate(state["titles"]):
        where = "%s: titles[%d]" % (bj, k)
        if not isinstance(t, dict):
            raise SourceError("%s is not an object" % where)
        for key in ("title", "dir"):
            if not _str(t.get(key)):
                raise SourceError("%s: \"%s\" is missing or not a string" % (where, key))
        if not isinstance(t.get("renditions"), list):
            raise SourceError("%s: \"renditions\" is missing or not a list" % where)
        for j, r in enumerate(t["renditions"]):
            if not isinstance(r, dict) or not _str(r.get("name")) or not _str(r.get("path")):
                raise SourceError("%s.renditions[%d]: needs \"name\" and \"path\" (strings)" % (where, j))
        tdir = os.path.join(out, "titles", t["dir"])
        task = _read_json(os.path.join(tdir, "task.json"))
        task = task if isinstance(task, dict) else {}
        recs = {r.get("name"): r for r in task.get("renditions") or [] if isinstance(r, dict)}
        status = task.get("status") if _str(task.get("status")) else \
            ("running" if os.path.exists(os.path.join(tdir, "running.json")) else "pending")
        models = task.get("models")
        if not (isinstance(models, list) and all(_str(m) for m in models)):
            models = None
        rends = []
        for r in t["renditions"]:
            rec = recs.get(r["name"], {})
            log = os.path.join(tdir, rec["log"]) if _str(rec.get("log")) else None
            rends.append({"name": r["name"], "path": r["path"], "log": log, "kbps": None,
                          "status": rec.get("status") if _str(rec.get("status")) else status,
                          "error": rec.get("error") if isinstance(rec.get("error"), str) else None})
        titles.append({"title": t["title"], "status": status,
                       "error": task.get("error") if isinstance(task.get("error"), str) else None,
                       "models": models, "renditions": rends})
    return {"source": out, "ffmpeg": state.get("ffmpeg") if _str(state.get("ffmpeg")) else None,
            "titles": titles}


def from_manifest(path):
    """JSON lines, one title a line: {"title": "t1", "models": ["vmaf"] (optional),
    "renditions": [{"name": "1080p", "log": "t1/1080p.json", "path": "t1/1080p.mp4"}]}
    ("kbps": N instead of "path" where the media file is not at hand), paths relative to
    the manifest. Every field is checked: the error names the manifest, the line and the
    field."""
    base = os.path.dirname(os.path.abspath(path))
    absp = lambda p: None if p is None else os.path.normpath(os.path.join(base, p))
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise SourceError("cannot read the manifest %s: %s" % (path, getattr(e, "strerror", None) or e))
    titles, seen = [], set()
    for no, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = "%s:%d" % (path, no)
        try:
            t = json.loads(line)
        except ValueError as e:
            raise SourceError("%s: not JSON: %s" % (where, e))
        if not isinstance(t, dict) or not _str(t.get("title")):
            raise SourceError("%s: a title is a JSON object with a \"title\" (a non-empty string)" % where)
        if t["title"] in seen:
            raise SourceError("%s: title %r appears twice" % (where, t["title"]))
        seen.add(t["title"])
        models = t.get("models")
        if models is not None and not (isinstance(models, list) and models and all(_str(m) for m in models)):
            raise SourceError("%s: \"models\" must be a non-empty list of model names (strings), not %s" % (
                where, json.dumps(models)))
        rends = t.get("renditions")
        if not isinstance(rends, list) or not rends:
            raise SourceError("%s: \"renditions\" must be a non-empty list" % where)
        out, names = [], set()
        for j, r in enumerate(rends):
            rw = "%s: renditions[%d]" % (where, j)
            if not isinstance(r, dict):
                raise SourceError("%s: a rendition is a JSON object" % rw)
            for key in ("name", "log"):
                if not _str(r.get(key)):
                    raise SourceError("%s: \"%s\" must be a non-empty string, not %s" % (
                        rw, key, json.dumps(r.get(key))))
            if r["name"] in names:
                raise SourceError("%s: rendition name %r appears twice in title %r" % (rw, r["name"], t["title"]))
            names.add(r["name"])
            if r.get("path") is not None and not _str(r["path"]):
                raise SourceError("%s: \"path\" must be a string (the media file)" % rw)
            kbps = r.get("kbps")
            if kbps is not None and (isinstance(kbps, bool) or not isinstance(kbps, (int, float)) or
                                     not math.isfinite(kbps) or kbps <= 0):
                raise SourceError("%s: \"kbps\" must be a finite number above 0, not %s" % (
                    rw, "infinite" if isinstance(kbps, float) and math.isinf(kbps) else json.dumps(kbps)))
            out.append({"name": r["name"], "path": absp(r.get("path")), "log": absp(r["log"]),
                        "kbps": None if kbps is None else float(kbps), "status": "done", "error": None})
        titles.append({"title": t["title"], "status": "done", "error": None,
                       "models": models, "renditions": out})
    if not titles:
        raise SourceError("%s: no titles" % path)
    return {"source": os.path.abspath(path), "ffmpeg": None, "titles": titles}


def split_item(item):
    """LOG[=MEDIA] -> (log, media or None). A file name may hold '=': the split is at the
    last '=' whose left side is an existing file and right side an existing file; else, when
    the whole argument is an existing file, it is a LOG alone; else at the last '='."""
    cuts = [i for i, c in enumerate(item) if c == "="]
    for i in reversed(cuts):
        if os.path.isfile(item[:i]) and os.path.exists(item[i + 1:]):
            return item[:i], item[i + 1:]
    if os.path.isfile(item) or not cuts:
        return item, None
    i = cuts[-1]
    if not item[i + 1:]:
        raise SourceError("%r: LOG=MEDIA names no media file" % item)
    return item[:i], item[i + 1:]


def _batch_name(log):
    """The rendition's name when the log is vmaf-cuda-batch's titles/<dir>/K-NAME.json (its
    folder holds task.json, which names it), else None."""
    task = _read_json(os.path.join(os.path.dirname(os.path.abspath(log)), "task.json"))
    if isinstance(task, dict):
        for r in task.get("renditions") or []:
            if isinstance(r, dict) and r.get("log") == os.path.basename(log) and _str(r.get("name")):
                return r["name"]
    return None


def from_logs(items, title):
    """LOG or LOG=MEDIA arguments (one title): the rendition is named by the log's file
    name without .json/.ndjson; a vmaf-cuda-batch log (K-NAME.json beside its task.json) by
    its rendition's name. A log that does not exist is an error."""
    rends, names = [], set()
    for it in items:
        log, media = split_item(it)
        if not os.path.isfile(log):
            raise SourceError("no such log: %s%s" % (log, " (from %r)" % it if log != it else ""))
        name = _batch_name(log) or re.sub(r"\.(nd)?json$", "", os.path.basename(log)) or os.path.basename(log)
        if name in names:
            raise SourceError("two logs give the rendition name %r; use a manifest (--manifest) "
                              "to name them" % name)
        names.add(name)
        rends.append({"name": name, "path": os.path.abspath(media) if media else None,
                      "log": os.path.abspath(log), "kbps": None, "status": "done", "error": None})
    return {"source": None, "ffmpeg": None,
            "titles": [{"title": title, "status": "done", "error": None, "models": None, "renditions": rends}]}

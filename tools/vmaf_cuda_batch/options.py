# SPDX-License-Identifier: BSD-2-Clause-Patent
"""The vmaf_cuda filter options of a manifest title, read as FFmpeg reads them."""

import os

from . import BatchError


def get_token(text, i, delims):
    """One token from text[i:] as FFmpeg's av_get_token reads it: '\\' escapes the next
    character, '...' quotes, surrounding blanks dropped. Returns (token, index of the
    delimiter or len(text))."""
    out, n, end_keep = [], len(text), 0
    while i < n and text[i] in " \n\t\r":
        i += 1
    while i < n and text[i] not in delims:
        c = text[i]
        if c == "\\" and i + 1 < n:
            out.append(text[i + 1])
            i += 2
            end_keep = len(out)
        elif c == "'":
            j = text.find("'", i + 1)
            j = n if j < 0 else j
            out.append(text[i + 1:j])
            i = j + 1
            end_keep = len(out)
        else:
            out.append(c)
            i += 1
            if c not in " \n\t\r":
                end_keep = len(out)
    return "".join(out[:end_keep]), i


def parse_filter_options(text):
    """'k=v:k=v' (filter escaping) as a list of (key, value); raises BatchError."""
    pairs, i = [], 0
    while i < len(text):
        key, i = get_token(text, i, "=:")
        if i >= len(text) or text[i] != "=":
            raise BatchError("option %r has no '=' (options are key=value pairs)" % key)
        value, i = get_token(text, i + 1, ":")
        pairs.append((key, value))
        i += 1
    return pairs


def model_and_feature_names(options):
    """Score keys of the models (the filter's: name=, else "vmaf" for the first, the
    version or the file's stem for the others) and the names of the extra features."""
    opts = dict(parse_filter_options(options))
    models = [e for e in opts.get("model", "version=vmaf_v0.6.1").split("|") if e.strip()]
    names = []
    for k, entry in enumerate(models or ["version=vmaf_v0.6.1"]):
        kv = dict(p.split("=", 1) for p in entry.split(":") if "=" in p)
        if "name" in kv:
            names.append(kv["name"])
        elif k == 0:
            names.append("vmaf")
        elif "version" in kv:
            names.append(kv["version"])
        else:
            stem = os.path.basename(kv.get("path", "model"))
            names.append(stem[:-5] if stem.endswith(".json") and len(stem) > 5 else stem)
    feats = []
    for entry in opts.get("feature", "").split("|"):
        kv = dict(p.split("=", 1) for p in entry.split(":") if "=" in p)
        if kv.get("name"):
            feats.append(kv["name"])
    return names, feats


def graph_quote(text):
    """text as one quoted piece of a filter graph (the graph level of the escaping)."""
    return "'" + text.replace("'", "'\\''") + "'"

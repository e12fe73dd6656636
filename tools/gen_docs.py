#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause-Patent
"""Generates the parts of docs/*.md that the code defines, so the docs cannot drift:

  <!-- generated: KIND -->
  ...
  <!-- end generated -->

KIND is one of
  features      every extractor, its outputs and options (registry-docs features)
  models        every built-in model (registry-docs models)
  cli-help      `vmaf-cuda --help`
  filter-help   the filter's options, from `ffmpeg -h filter=vmaf_cuda` (its AVOption table)

    gen_docs.py [--check] [--registry-docs PATH] [--cli PATH] [--ffmpeg PATH] [DOCS_DIR]

Only the kinds whose program is given are touched; a program that exits 77 (registry-docs
built without CUDA) leaves its kinds unchecked, saying so (exit 77 when nothing was). --check changes nothing and exits 1
naming every block that differs from what the programs print (and the command that
updates them). Standard library only.
"""

import argparse
import os
import re
import subprocess
import sys

BLOCK = re.compile(r"(<!-- generated: (?P<kind>[a-z-]+) -->\n)(?P<body>.*?)(<!-- end generated -->)",
                   re.S)


class Unavailable(Exception):
    """A program exited 77: it cannot print that here (registry-docs without CUDA)."""


def run(cmd, argv0=None):
    """The standard output of cmd; argv0: the name the program sees as its argv[0]
    (default: the path it is run from)."""
    p = subprocess.run([argv0 or cmd[0]] + cmd[1:], executable=cmd[0],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode == 77:
        raise Unavailable("%s: %s" % (os.path.basename(cmd[0]), (p.stdout + p.stderr).strip()))
    if p.returncode != 0:
        sys.exit("gen_docs.py: %s exited with %d:\n%s" % (" ".join(cmd), p.returncode, p.stderr))
    return p.stdout


def filter_help(ffmpeg):
    """The option lines of `ffmpeg -h filter=vmaf_cuda` (the AVOption table), without the
    framesync options' addresses and the filter's header."""
    out = run([ffmpeg, "-hide_banner", "-h", "filter=vmaf_cuda"])
    lines = out.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith("vmaf_cuda AVOptions")), None)
    if start is None:
        sys.exit("gen_docs.py: no 'vmaf_cuda AVOptions' in `ffmpeg -h filter=vmaf_cuda`")
    keep = [l.rstrip() for l in lines[start:] if l.strip()
            and not l.startswith("This filter has support for timeline")
            and not l.startswith("Exiting with exit code")]
    return "```\n" + "\n".join(keep) + "\n```\n"


def generators(a):
    g = {}
    if a.registry_docs:
        g["features"] = lambda: run([a.registry_docs, "features"])
        g["models"] = lambda: run([a.registry_docs, "models"])
    if a.cli:
        # run as "vmaf-cuda": its usage line names argv[0], which must not depend on where
        # the program was built
        g["cli-help"] = lambda: "```\n" + run([a.cli, "--help"], "vmaf-cuda").rstrip() + "\n```\n"
    if a.ffmpeg:
        g["filter-help"] = lambda: filter_help(a.ffmpeg)
    return g


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("docs", nargs="?", default=os.path.join(os.path.dirname(__file__), "..", "docs"))
    ap.add_argument("--check", action="store_true", help="only compare; exit 1 when stale")
    ap.add_argument("--registry-docs", help="the built registry-docs program")
    ap.add_argument("--cli", help="the built vmaf-cuda program")
    ap.add_argument("--ffmpeg", help="the built ffmpeg with the vmaf_cuda filter")
    a = ap.parse_args()
    gens = generators(a)
    if not gens:
        sys.exit("gen_docs.py: name at least one of --registry-docs, --cli, --ffmpeg")
    cache, stale, seen, unavailable = {}, [], set(), {}
    for name in sorted(os.listdir(a.docs)):
        if not name.endswith(".md"):
            continue
        path = os.path.join(a.docs, name)
        with open(path) as f:
            text = f.read()

        def fill(m):
            kind = m.group("kind")
            if kind not in gens:
                return m.group(0)
            if kind in unavailable:
                return m.group(0)
            if kind not in cache:
                try:
                    cache[kind] = gens[kind]()
                except Unavailable as e:
                    unavailable[kind] = str(e)
                    return m.group(0)
            seen.add(kind)
            if m.group("body") != cache[kind]:
                stale.append("%s (%s)" % (name, kind))
            return m.group(1) + cache[kind] + m.group(4)

        new = BLOCK.sub(fill, text)
        if new != text and not a.check:
            with open(path, "w") as f:
                f.write(new)
    for kind, why in sorted(unavailable.items()):
        print("gen_docs.py: %s not checked: %s" % (kind, why))
    if unavailable and not seen:
        print("SKIPPED: %s" % "; ".join(sorted(set(unavailable.values()))))
        return 77
    missing = sorted(set(gens) - seen - set(unavailable))
    if missing:
        print("gen_docs.py: no block for %s in %s" % (", ".join(missing), a.docs))
        return 1
    if stale and a.check:
        print("gen_docs.py: out of date: %s; run tools/gen_docs.py with the same programs "
              "(without --check) to update them" % ", ".join(stale))
        return 1
    print("gen_docs.py: %s %s" % ("checked" if a.check else "updated",
                                  ", ".join(sorted(seen))))
    return 0


if __name__ == "__main__":
    sys.exit(main())

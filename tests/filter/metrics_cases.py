"""Dashboards: metrics_port serves the live run's metrics in the Prometheus text format.

BBB's pair with the reference cut as a live feed cuts it (parity_cases.Clips'
bbb_ref_gaps.ts: a stall of 2 s, three dropped frames), played in real time (-re) with
input_timeout=1s, scraped with an HTTP client while it runs: every scrape must be valid
exposition text (each family once, HELP and TYPE before its samples), its last frame's
values must be those of the NDJSON line of that frame, the window's frame count the
window's, and once a frame after the stall was scored, the stall's events and unscored
frames must be counted. A port already taken is an error naming it, before any frame.
"""

import os
import re
import socket
import subprocess
import time
import urllib.error
import urllib.request

import parity_cases
from parity_cases import _fail

from live_cases import backend, read_ndjson

SAMPLE_RE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*"'
                       r'(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*")*)?\})? '
                       r'(NaN|[+-]Inf|-?[0-9]+(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?)$')
LABEL_RE = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(text):
    """The exposition text as {(name, frozenset(labels)): value}; fails on a malformed
    line, a family seen twice, or a sample before its family's TYPE line."""
    samples, typed, current = {}, set(), None
    for line in text.splitlines():
        if line.startswith("# HELP "):
            continue
        if line.startswith("# TYPE "):
            name, kind = line[7:].split(" ")
            if name in typed or kind not in ("gauge", "counter"):
                _fail("metrics: TYPE line %r (again, or of a kind not used)" % line)
            typed.add(name)
            current = name
            continue
        m = SAMPLE_RE.match(line)
        if not m or m.group(1) != current:
            _fail("metrics: malformed line or a sample outside its family: %r" % line)
        labels = frozenset(LABEL_RE.findall(m.group(2) or ""))
        samples[(m.group(1), labels)] = float(m.group(3).replace("Inf", "inf"))
    return samples


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def scrape(port, path="/metrics"):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=5) as f:
        return f.status, f.headers.get("Content-Type", ""), f.read().decode()


def case_metrics(r, c, hw=False):
    """Scrapes while BBB's pair with the gaps plays in real time."""
    dis, ref = r.path(parity_cases.BBB[0]), c.get("bbb_ref_gaps.ts")
    port, nd = free_port(), r.tmp("metrics.ndjson")
    graph = ("[0:v][1:v]vmaf_cuda=input_timeout=1s:window=10:metrics_port=%d:log_fmt=ndjson:"
             "log_path=%s:precision=max%s" % (port, nd, backend(hw)))
    cmd = [r.ffmpeg, "-hide_banner", "-nostdin", "-y", "-re", "-i", dis, "-re", "-i", ref,
           "-an", "-lavfi", graph, "-f", "null", "-"]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    scrapes, not_found = [], None
    try:
        while p.poll() is None:
            time.sleep(0.05)
            try:
                status, ctype, text = scrape(port)
            except (OSError, urllib.error.URLError):
                continue
            if status != 200 or not ctype.startswith("text/plain; version=0.0.4"):
                _fail("metrics: HTTP %s, Content-Type %r" % (status, ctype))
            scrapes.append(parse(text))
            if not_found is None:
                try:
                    scrape(port, "/nothing")
                    not_found = False
                except urllib.error.HTTPError as e:
                    not_found = e.code == 404
                except (OSError, urllib.error.URLError):
                    pass
        err = p.stderr.read()
    finally:
        if p.poll() is None:
            p.kill()
        p.wait()
    if p.returncode != 0:
        _fail("metrics: ffmpeg exited with %d:\n%s" % (p.returncode, err[-2000:]))
    if not_found is not True:
        _fail("metrics: a path other than /metrics did not get 404")
    lines = {l["frameNum"]: l for l in read_ndjson(nd) if l["type"] == "frame"}
    g = lambda s, name, **lab: s.get((name, frozenset(lab.items())))
    past_stall, last_n = 0, -1
    for s in scrapes:
        n = g(s, "vmaf_cuda_frame_number")
        if n is None:
            continue
        n = int(n)
        if n < last_n or g(s, "vmaf_cuda_frames_scored_total") < n + 1:
            _fail("metrics: frame %d after %d, %s scored" % (n, last_n,
                                                            g(s, "vmaf_cuda_frames_scored_total")))
        last_n = n
        line = lines[n]
        for metric, v in line["metrics"].items():
            if g(s, "vmaf_cuda_frame_score", metric=metric) != v:
                _fail("metrics: frame %d's %s is %r, its NDJSON line says %r" %
                      (n, metric, g(s, "vmaf_cuda_frame_score", metric=metric), v))
        if g(s, "vmaf_cuda_frame_pts_seconds") != round(line["pts_time"], 6) and \
                abs(g(s, "vmaf_cuda_frame_pts_seconds") - line["pts_time"]) > 1e-6:
            _fail("metrics: frame %d's time %r, its line says %r" %
                  (n, g(s, "vmaf_cuda_frame_pts_seconds"), line["pts_time"]))
        if g(s, "vmaf_cuda_window_score", model="vmaf", stat="frames") != min(n + 1, 10):
            _fail("metrics: window frames %r at frame %d" %
                  (g(s, "vmaf_cuda_window_score", model="vmaf", stat="frames"), n))
        if n >= 41:  # scored frames after the stall: it was told and its frames counted
            past_stall += 1
            if g(s, "vmaf_cuda_events_total", event="stalled", input="reference") != 1 or \
                    g(s, "vmaf_cuda_events_total", event="resumed", input="reference") != 1 or \
                    g(s, "vmaf_cuda_frames_unscored_total", reason="reference_stalled") != 48:
                _fail("metrics: after the stall (frame %d): %s" %
                      (n, {k: v for k, v in s.items() if "events" in k[0] or "unscored" in k[0]}))
    if not past_stall:
        _fail("metrics: %d scrapes, none after the stall (last frame %d)" % (len(scrapes), last_n))

    # a port already taken: an error naming it, before any frame
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]
    try:
        rc, err, _ = r.ffmpeg_run(["-i", dis, "-i", ref, "-an", "-lavfi",
                                   "[0:v][1:v]vmaf_cuda=metrics_port=%d%s" % (port, backend(hw)),
                                   "-f", "null", "-"], expect_ok=False)
    finally:
        taken.close()
    want = "metrics_port: cannot listen on 127.0.0.1:%d" % port
    if rc == 0 or want not in err or "VMAF score:" in err:
        _fail("metrics: a taken port: exit %d, stderr:\n%s" % (rc, err[-1500:]))
    return "%d scrapes, %d after the stall, each as the NDJSON lines; a taken port refused" % (
        len(scrapes), past_stall)


CPU_CASES = [case_metrics]
GPU_CASES = [case_metrics]

#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause-Patent
"""Network inputs of the bundled ffmpeg (issue 34, item 1), software frames, CPU backend.

    network_test.py --ffmpeg PATH --shared DIR [--only NAME ...] [--skip NAME ...]
                    [--workdir DIR] [-v] [--sender-ffmpeg PATH]

The BBB pair (../shared/media, H.264) is remuxed to MPEG-TS, FLV and HLS here by the
system ffmpeg (--sender-ffmpeg, default `ffmpeg` on PATH; Debian's is built with libsrt),
which also streams it to 127.0.0.1, paced at four times real time (-readrate 4); the
bundled ffmpeg reads both inputs from the network and scores them with vmaf_cuda. Each
case checks every frame's features and VMAF score in the JSON log, and the "VMAF score:"
line, against libvmaf's golden values of the same clips read from files
(golden/bbb_854x480_120f_8bit.csv), and the exit status 0:

- protocols: the bundled ffmpeg lists the protocols and demuxers a live probe needs;
- udp_srt: the reference as MPEG-TS over UDP (the receiver binds first: `?timeout=` ends
  the input once the sender stops), the main input over SRT (the sender listens, the
  probe calls, as a probe calls a contribution encoder);
- tcp: both over TCP, the sender listening;
- rtmp: both published over RTMP to the probe (`-listen 1`, FFmpeg's RTMP server mode);
- hls_http: both as HLS playlists with 1 s segments over HTTP from a server on loopback;
- hls_https: the same over HTTPS (a certificate made here with the openssl program).

Without the sender ffmpeg (or without SRT in it, or the openssl program) those cases are
SKIP with the reason. Standard library only. Prints one line per test and "N passed,
N failed" at the end.
"""

import argparse
import functools
import http.server
import os
import shutil
import socket
import ssl
import subprocess
import sys
import threading
import time

import filter_test as ft
import parity_cases
from filter_test import TestFailure

PROBE = ["-probesize", "1000000", "-analyzeduration", "1000000"]
WAIT = 120   # seconds a case's receiver may run


def free_port(kind=socket.SOCK_STREAM):
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bound(port, proto):
    """Whether a socket on this machine is bound to 127.0.0.1:port or to every address
    (FFmpeg 7.1's UDP input) (/proc/net/tcp: listening; /proc/net/udp: bound)."""
    want = ("0100007F:%04X" % port, "00000000:%04X" % port)
    try:
        with open("/proc/net/" + proto) as f:
            for line in f.readlines()[1:]:
                cells = line.split()
                if cells[1] in want and (proto == "udp" or cells[3] == "0A"):
                    return True
    except OSError:
        pass
    return False


def wait_bound(port, proto, proc, what):
    """Waits up to 30 s for port to be bound (proc: the receiver, None for a sender)."""
    end = time.monotonic() + 30
    while time.monotonic() < end:
        if bound(port, proto):
            return
        if proc and proc.poll() is not None:
            raise TestFailure("%s: the receiver exited with %d before it listened:\n%s"
                              % (what, proc.returncode, ft.tail(proc.communicate()[1])))
        time.sleep(0.05)
    raise TestFailure("%s: nothing listens on %s port %d after 30 s" % (what, proto, port))


class Net:
    """The remuxed clips and the sender processes of one run."""

    def __init__(self, r, sender):
        self.r, self.sender = r, sender
        self.procs = []

    def remux(self, rel, fmt, ext, extra=()):
        out = self.r.tmp(os.path.basename(rel).rsplit(".", 1)[0] + ext)
        if not os.path.exists(out):
            cmd = [self.sender, "-hide_banner", "-loglevel", "error", "-nostdin", "-y",
                   "-i", self.r.path(rel), "-map", "0:v", "-c", "copy"] + list(extra) + ["-f", fmt, out]
            p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if p.returncode:
                raise TestFailure("remuxing %s: %s" % (rel, ft.tail(p.stderr)))
        return out

    def remux_pair(self, fmt, ext):
        """The BBB main and reference clips in fmt: (main, reference) paths."""
        return self.remux(ft.BBB_DIS, fmt, ext), self.remux(ft.BBB_REF, fmt, ext)

    def send(self, src, fmt, url, extra=(), live=False):
        """Streams src to url: at four times real time to its end, or with live=True in
        real time for ever (looped), as a feed does, until finish() stops it."""
        pace = ["-readrate", "1", "-stream_loop", "-1"] if live else ["-readrate", "4"]
        cmd = [self.sender, "-hide_banner", "-loglevel", "error", "-nostdin"] + pace + [
               "-i", src, "-map", "0:v", "-c", "copy"] + list(extra) + ["-f", fmt, url]
        if self.r.verbose:
            print("  $ " + " ".join(cmd), flush=True)
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.procs.append((p, url, live))
        return p

    def finish(self):
        errs = []
        for p, url, live in self.procs:
            if live:
                p.kill()
                p.communicate()
                continue
            try:
                _, err = p.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                _, err = p.communicate()
                errs.append("the sender to %s did not end" % url)
                continue
            if p.returncode:
                errs.append("the sender to %s exited with %d: %s" % (url, p.returncode, ft.tail(err, 5)))
        self.procs = []
        return errs

    def kill(self):
        for p, _, _ in self.procs:
            if p.poll() is None:
                p.kill()
                p.communicate()
        self.procs = []


def receiver(r, name, inputs, frames=None, env=None):
    """Starts the bundled ffmpeg on two network inputs (main first), -frames:v `frames`
    when given (a live feed does not end); returns the process and its JSON log path."""
    log = r.tmp(name + ".json")
    if os.path.exists(log):
        os.unlink(log)
    graph = "[0:v][1:v]vmaf_cuda=backend=cpu:log_fmt=json:log_path=%s:precision=max" % log
    cmd = [r.ffmpeg, "-hide_banner", "-nostdin", "-y"]
    for opts, url in inputs:
        cmd += PROBE + list(opts) + ["-i", url]
    cmd += ["-an", "-lavfi", graph] + (["-frames:v", str(frames)] if frames else []) + ["-f", "null", "-"]
    if r.verbose:
        print("  $ " + " ".join(cmd), flush=True)
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env=env), log


def check_run(r, name, proc, log, net):
    try:
        _, err = proc.communicate(timeout=WAIT)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        net.kill()
        raise TestFailure("%s: the receiver did not end within %d s:\n%s" % (name, WAIT, ft.tail(err)))
    with open(r.tmp(name + ".log"), "w") as f:
        f.write(err)
    sender_errs = net.finish()
    if proc.returncode != 0:
        raise TestFailure("%s: the receiver exited with %d:\n%s" % (name, proc.returncode, ft.tail(err)))
    if sender_errs:
        raise TestFailure("%s: %s" % (name, "; ".join(sender_errs)))
    golden, pooled = ft.read_golden(r.path(ft.BBB_GOLDEN))
    compared = ft.compare_frames(name + " json log", ft.json_features(log), golden, ft.REQUIRED, "vmaf")
    printed = ft.vmaf_score_line(err)
    if printed != "%f" % float(pooled["mean"]):
        raise TestFailure("%s: VMAF score: printed %s, golden mean %s" % (name, printed, pooled["mean"]))
    return "%d frames, %d features + vmaf exact, VMAF score %s" % (len(golden), len(compared), printed)


def sender_for(r):
    if not getattr(r, "sender_ok", None):
        if not shutil.which(r.sender):
            raise parity_cases.Skip("no sender ffmpeg '%s' on PATH (--sender-ffmpeg)" % r.sender)
        r.sender_ok = True
    return Net(r, r.sender)


def sender_has(r, kind, name):
    p = subprocess.run([r.sender, "-hide_banner", "-" + kind], capture_output=True, text=True)
    return any(line.split()[-1:] == [name] for line in p.stdout.splitlines())


# ------------------------------------------------------------------ cases

def t_protocols(r):
    need = {"protocols": ["udp", "rtp", "srt", "tcp", "rtmp", "rtmps", "http", "https", "tls", "file", "pipe"],
            "demuxers": ["mpegts", "flv", "hls", "rtp", "sdp"]}
    found = []
    for kind, names in need.items():
        p = subprocess.run([r.ffmpeg, "-hide_banner", "-" + kind], capture_output=True, text=True)
        if kind == "protocols":
            # "Input:" names, then "Output:" names
            text = p.stdout.split("Output:")[0]
            have = {l.strip() for l in text.splitlines()}
        else:
            have = {l.split()[1] for l in p.stdout.splitlines() if l[:3].strip() in ("D", "DE")
                    and len(l.split()) > 1}
            have = {n for h in have for n in h.split(",")}
        missing = [n for n in names if n not in have]
        if missing:
            raise TestFailure("the bundled ffmpeg has no %s %s" % (kind[:-1], ", ".join(missing)))
        found.append("%s: %s" % (kind, " ".join(names)))
    return "; ".join(found)


def t_udp_srt(r):
    net = sender_for(r)
    if not sender_has(r, "protocols", "srt"):
        raise parity_cases.Skip("the sender ffmpeg has no SRT")
    dis, ref = net.remux_pair("mpegts", ".ts")
    srt_port, udp_port = free_port(socket.SOCK_DGRAM), free_port(socket.SOCK_DGRAM)
    # Live feeds, looped in real time: SRT's live mode drops what is in flight when the
    # sender closes, as a feed never does; the probe stops after the clip's 120 frames.
    # The main input over SRT: the sender listens for the probe's call.
    net.send(dis, "mpegts", "srt://127.0.0.1:%d?mode=listener&latency=200000" % srt_port, live=True)
    proc, log = receiver(r, "udp_srt", [
        ((), "srt://127.0.0.1:%d?mode=caller&latency=200000&connect_timeout=10000" % srt_port),
        ((), "udp://127.0.0.1:%d?timeout=5000000&fifo_size=100000&overrun_nonfatal=1" % udp_port)],
        frames=120)
    try:
        wait_bound(udp_port, "udp", proc, "udp_srt")
        net.send(ref, "mpegts", "udp://127.0.0.1:%d?pkt_size=1316" % udp_port, live=True)
    except TestFailure:
        proc.kill()
        net.kill()
        raise
    return "main over SRT, reference over UDP: " + check_run(r, "udp_srt", proc, log, net)


def t_tcp(r):
    net = sender_for(r)
    dis, ref = net.remux_pair("mpegts", ".ts")
    ports = [free_port(), free_port()]
    for src, port in zip((dis, ref), ports):
        net.send(src, "mpegts", "tcp://127.0.0.1:%d?listen=1" % port)
    for port in ports:
        wait_bound(port, "tcp", None, "tcp")
    proc, log = receiver(r, "tcp", [((), "tcp://127.0.0.1:%d" % p) for p in ports])
    return "both over TCP: " + check_run(r, "tcp", proc, log, net)


def t_rtmp(r):
    net = sender_for(r)
    dis, ref = net.remux_pair("flv", ".flv")
    ports = [free_port(), free_port()]
    proc, log = receiver(r, "rtmp", [(("-listen", "1", "-timeout", "30"),
                                      "rtmp://127.0.0.1:%d/live/%s" % (p, n))
                                     for p, n in zip(ports, ("main", "reference"))])
    try:
        # the receiver opens its inputs one after the other: publish each once it listens
        for src, port, n in zip((dis, ref), ports, ("main", "reference")):
            wait_bound(port, "tcp", proc, "rtmp")
            net.send(src, "flv", "rtmp://127.0.0.1:%d/live/%s" % (port, n))
    except TestFailure:
        proc.kill()
        net.kill()
        raise
    return "both published over RTMP: " + check_run(r, "rtmp", proc, log, net)


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def hls_case(r, name, tls):
    net = sender_for(r)
    root = r.tmp(name + "_www")
    os.makedirs(root, exist_ok=True)
    urls = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(QuietHandler, directory=root))
    if tls:
        if not shutil.which("openssl"):
            raise parity_cases.Skip("no openssl program to make a certificate")
        key, cert = r.tmp("key.pem"), r.tmp("cert.pem")
        p = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                            "-keyout", key, "-out", cert],
                           capture_output=True, text=True)
        if p.returncode:
            raise TestFailure("openssl req: " + ft.tail(p.stderr))
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    port = server.server_address[1]
    for rel, n in ((ft.BBB_DIS, "main"), (ft.BBB_REF, "reference")):
        out = os.path.join(root, n + ".m3u8")
        if not os.path.exists(out):
            cmd = [net.sender, "-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-i",
                   r.path(rel), "-map", "0:v", "-c", "copy", "-f", "hls", "-hls_time", "1",
                   "-hls_list_size", "0", "-hls_playlist_type", "vod",
                   "-hls_segment_filename", os.path.join(root, n + "_%03d.ts"), out]
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode:
                raise TestFailure("making the HLS playlist: " + ft.tail(p.stderr))
        urls.append("%s://127.0.0.1:%d/%s.m3u8" % ("https" if tls else "http", port, n))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        # the server's certificate checked against our own authority, as a probe reading
        # a private CDN would: OpenSSL's SSL_CERT_FILE (the HLS demuxer passes no -ca_file
        # to its segment requests; FFmpeg 9.0 verifies by default, 7.1 with -tls_verify 1)
        opts = ("-tls_verify", "1") if tls else ()
        checked = ""
        if tls:
            # without our authority the certificate is refused, the run an error
            proc, _ = receiver(r, name + "_untrusted", [(opts, u) for u in urls],
                               env=dict(os.environ, SSL_CERT_FILE=r.tmp("none.pem")))
            _, err = proc.communicate(timeout=WAIT)
            if proc.returncode == 0 or "certificate verify failed" not in err:
                raise TestFailure("%s: an untrusted certificate: exit %d\n%s"
                                  % (name, proc.returncode, ft.tail(err)))
            checked = "an untrusted certificate refused; "
        env = dict(os.environ, SSL_CERT_FILE=r.tmp("cert.pem")) if tls else None
        proc, log = receiver(r, name, [(opts, u) for u in urls], env=env)
        return "both as HLS over %s: %s" % ("HTTPS" if tls else "HTTP", checked) + check_run(r, name, proc, log, net)
    finally:
        server.shutdown()
        server.server_close()


def t_hls_http(r):
    return hls_case(r, "hls_http", tls=False)


def t_hls_https(r):
    return hls_case(r, "hls_https", tls=True)


TESTS = [t_protocols, t_udp_srt, t_tcp, t_rtmp, t_hls_http, t_hls_https]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ffmpeg", required=True, help="the bundled ffmpeg")
    ap.add_argument("--shared", required=True, help="folder with media/ and golden/")
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--skip", action="append", default=[])
    ap.add_argument("--workdir")
    ap.add_argument("--sender-ffmpeg", default="ffmpeg",
                    help="the ffmpeg that remuxes and streams the clips (with SRT for udp_srt)")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    r = ft.bbb_runner(a, "vmaf_cuda_network_")
    if isinstance(r, int):
        return r
    r.sender = a.sender_ffmpeg
    tests = [t for t in TESTS if not a.only or any(o in t.__name__ for o in a.only)]
    tests = [t for t in tests if not any(s in t.__name__ for s in a.skip)]
    return ft.run_tests(r, tests, "", r.workdir, keep=bool(a.workdir))


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause-Patent
"""Suite `batch`: vmaf-cuda-batch on a real one-node Slurm cluster (CPU backend).

    batch_test.py --tool tools/vmaf-cuda-batch --ffmpeg build-ffmpeg/9.0/bin/ffmpeg
                  [--clip-ffmpeg ffmpeg] [--workdir DIR] [--keep]

Starts munged, slurmctld and slurmd in a temporary folder (its own key, socket, ports,
slurm.conf), makes small clips with the system ffmpeg (libx264), then:
  - submits a manifest of 4 good titles (ladders of 2 and 3 renditions, renditions of
    other sizes scaled in the graph, one shorter than its reference: a misalignment
    warning; one title of one rendition), a title with a missing file and one with a
    broken file, as one job array plus the report job, and requeues a running task
    (scontrol requeue, as a preemption does);
  - checks the report (CSV and JSON) against the project's ffmpeg run directly, one
    rendition at a time, with the pooled values and a 5th percentile computed here;
  - fixes the missing file and resumes: only the unfinished tasks are submitted, and a
    full resubmission skips the finished ones (their logs and outcome untouched);
  - runs the same manifest locally (the HTML report of the array's run against it:
    report --against -o), the dry run, and a ladder whose ffmpeg fails for one
    rendition only (an ffmpeg wrapper doing what the filter does for a rendition that
    pairs no frame): the other rendition's row is done, the title failed.
Without root, the Slurm or munge binaries, or when the daemons do not start, it prints
"SKIPPED: reason" and exits 77.
--gpu (suite gpu): the manifest on NVDEC frames and the CUDA backend, on every GPU of the
host, against direct runs on NVDEC frames (scale_cuda); then, where Slurm can run here,
on a cluster with GPU gres (each task --gres=gpu:1). Without a CUDA device: SKIP.
--make-clips --clips DIR makes the clips only (for a GPU machine without an encoder).
Standard library only.
"""

import argparse
import importlib.machinery
import importlib.util
import csv
import json
import math
import re
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback

SKIP = 77


class Skip(Exception):
    pass


class Fail(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)
    print("ok: " + what, flush=True)


def run(argv, env=None, check_rc=True, timeout=300, **kw):
    p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout, **kw)
    if check_rc and p.returncode != 0:
        raise Fail("%s exited %d:\n%s%s" % (" ".join(argv), p.returncode, p.stdout[-3000:], p.stderr[-3000:]))
    return p


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --------------------------------------------------------------- a one-node cluster
class Cluster:
    def __init__(self, root, gpus=0):
        self.root, self.procs, self.gpus = root, [], gpus
        self.env = dict(os.environ, SLURM_CONF=os.path.join(root, "slurm.conf"))

    def start(self):
        r = self.root
        for d in ("state", "spool", "log", "munge", "run"):
            os.makedirs(os.path.join(r, d), exist_ok=True)
        os.chmod(os.path.join(r, "munge"), 0o700)
        key, sock = os.path.join(r, "munge", "munge.key"), os.path.join(r, "munge", "munge.sock")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        self.spawn("munged", ["munged", "-F", "--force", "--socket=" + sock, "--key-file=" + key,
                              "--log-file=" + os.path.join(r, "log", "munged.log"),
                              "--pid-file=" + os.path.join(r, "run", "munged.pid"),
                              "--seed-file=" + os.path.join(r, "munge", "seed")])
        for _ in range(50):
            if os.path.exists(sock):
                break
            time.sleep(0.1)
        else:
            raise Skip("munged did not start (no socket): " + self.tail("munged"))
        node = socket.gethostname().split(".")[0]
        hw = run(["slurmd", "-C"], check_rc=False).stdout
        cpus = int(next((w.split("=")[1] for w in hw.split() if w.startswith("CPUs=")), "1"))
        mem = int(next((w.split("=")[1] for w in hw.split() if w.startswith("RealMemory=")), "1000"))
        conf = {
            "ClusterName": "vmafbatchtest", "SlurmctldHost": "%s(127.0.0.1)" % node,
            "SlurmctldPort": free_port(), "SlurmdPort": free_port(),
            "SlurmUser": "root", "SlurmdUser": "root",
            "AuthType": "auth/munge", "CredType": "cred/munge", "AuthInfo": "socket=%s,cred_expire=10" % sock,
            "StateSaveLocation": os.path.join(r, "state"), "SlurmdSpoolDir": os.path.join(r, "spool"),
            "SlurmctldPidFile": os.path.join(r, "run", "slurmctld.pid"),
            "SlurmdPidFile": os.path.join(r, "run", "slurmd.pid"),
            "SlurmctldLogFile": os.path.join(r, "log", "slurmctld.log"),
            "SlurmdLogFile": os.path.join(r, "log", "slurmd.log"),
            "ProctrackType": "proctrack/linuxproc", "TaskPlugin": "task/none",
            "SelectType": "select/cons_tres", "SelectTypeParameters": "CR_Core",
            "JobAcctGatherType": "jobacct_gather/none", "AccountingStorageType": "accounting_storage/none",
            "MpiDefault": "none", "ReturnToService": "2", "SlurmdTimeout": "60",
            "MinJobAge": "600", "JobRequeue": "1",
        }
        gres = ""
        if self.gpus:  # GPU gres: each task gets one (CUDA_VISIBLE_DEVICES)
            conf["GresTypes"] = "gpu"
            gres = " Gres=gpu:%d" % self.gpus
            with open(os.path.join(r, "gres.conf"), "w") as f:
                f.write("Name=gpu File=/dev/nvidia[0-%d]\n" % (self.gpus - 1))
        with open(self.env["SLURM_CONF"], "w") as f:
            for k, v in conf.items():
                f.write("%s=%s\n" % (k, v))
            f.write("NodeName=%s NodeAddr=127.0.0.1 CPUs=%d RealMemory=%d%s State=UNKNOWN\n" % (
                node, cpus, mem, gres))
            # up to 4 tasks a core: the tiny test tasks run side by side
            f.write("PartitionName=batch Nodes=%s Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4\n"
                    % node)
        self.spawn("slurmctld", ["slurmctld", "-D", "-f", self.env["SLURM_CONF"]])
        self.spawn("slurmd", ["slurmd", "-D", "-f", self.env["SLURM_CONF"], "-N", node])
        deadline = time.time() + 60
        while time.time() < deadline:
            for name, p in self.procs:
                if p.poll() is not None:
                    raise Skip("%s exited (%d) at start: %s" % (name, p.returncode, self.tail(name)))
            s = run(["sinfo", "-h", "-o", "%t"], env=self.env, check_rc=False).stdout.split()
            if s and s[0] in ("idle", "mix", "alloc"):
                return
            time.sleep(0.5)
        raise Skip("the node did not come up in 60 s (sinfo: %s); slurmctld: %s; slurmd: %s" % (
            " ".join(s), self.tail("slurmctld"), self.tail("slurmd")))

    def spawn(self, name, argv):
        out = open(os.path.join(self.root, "log", name + ".out"), "w")
        self.procs.append((name, subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                                  env=self.env, start_new_session=True)))

    def tail(self, name):
        for f in (name + ".out", name + ".log"):
            try:
                lines = open(os.path.join(self.root, "log", f)).read().strip().splitlines()
                if lines:
                    return " / ".join(lines[-4:])
            except OSError:
                pass
        return "(no output)"

    def stop(self):
        if any(p.poll() is None for n, p in self.procs if n == "slurmctld"):
            run(["scancel", "--full", "-u", "root"], env=self.env, check_rc=False, timeout=30)
        for name, p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()


# --------------------------------------------------------------- clips and expectations
CLIPS = ["%s_%s.mp4" % (t, k) for t in "abc" for k in ("ref", "hi", "lo", "small")] + ["c_short.mp4", "broken.mp4"]


def make_clips(ff, d):
    """The clips in folder d, made with ff (libx264) unless all are there already (a GPU
    machine without an encoder gets them made beforehand: --make-clips)."""
    if all(os.path.isfile(os.path.join(d, c)) for c in CLIPS):
        return
    if not ff:
        raise Skip("no system ffmpeg to make the clips")
    p = run([ff, "-hide_banner", "-encoders"], check_rc=False)
    if "libx264" not in p.stdout:
        raise Skip("the system ffmpeg (%s) has no libx264 to make the clips" % ff)
    x264 = lambda crf: ["-c:v", "libx264", "-preset", "ultrafast", "-crf", str(crf), "-pix_fmt", "yuv420p"]
    mk = lambda args, name: run([ff, "-nostdin", "-v", "error", "-y"] + args + [os.path.join(d, name)])
    for name, src in (("a", "testsrc2=size=176x144:rate=25"), ("b", "testsrc=size=160x120:rate=25"),
                      ("c", "smptehdbars=size=128x96:rate=25")):
        lavfi = ["-f", "lavfi", "-i", src, "-frames:v", "10"]
        mk(lavfi + ["-vf", "noise=alls=12:allf=t"] + x264(1), name + "_ref.mp4")
        ref = ["-i", os.path.join(d, name + "_ref.mp4")]
        mk(ref + x264(28), name + "_hi.mp4")
        mk(ref + x264(40), name + "_lo.mp4")
        w, h = {"a": (88, 72), "b": (80, 60), "c": (64, 48)}[name]
        mk(ref + ["-vf", "scale=%d:%d" % (w, h)] + x264(30), name + "_small.mp4")
    mk(["-i", os.path.join(d, "c_ref.mp4"), "-frames:v", "7"] + x264(33), "c_short.mp4")
    with open(os.path.join(d, "broken.mp4"), "wb") as f:
        f.write(b"this is not a video file\n" * 20)


# the manifest: ladders of 2 and 3 renditions (scaled ones, a short one), a single
# rendition (the two-input filter), a missing file, a broken file
TITLES = [
    {"title": "alpha", "reference": "media/a_ref.mp4",
     "options": "model=version=vmaf_v0.6.1|version=vmaf_v0.6.1neg:feature=name=psnr",
     "renditions": [{"name": "hi", "path": "media/a_hi.mp4"}, {"name": "lo", "path": "media/a_lo.mp4"},
                    {"name": "small", "path": "media/a_small.mp4", "scale": "176:144"}]},
    {"title": "bravo 'quoted', [b]", "reference": "media/b_ref.mp4",
     "options": "model=version=vmaf_v0.6.1\\:name=main",
     "renditions": [{"name": "hi", "path": "media/b_hi.mp4"},
                    {"name": "small", "path": "media/b_small.mp4", "scale": "160x120"}]},
    {"title": "charlie", "reference": "media/c_ref.mp4",
     "renditions": [{"name": "lo", "path": "media/c_lo.mp4"}, {"name": "short", "path": "media/c_short.mp4"}]},
    {"title": "delta missing", "reference": "media/a_ref.mp4",
     "renditions": [{"name": "gone", "path": "media/gone.mp4"}, {"name": "hi", "path": "media/a_hi.mp4"}]},
    {"title": "echo broken", "reference": "media/b_ref.mp4",
     "renditions": [{"name": "broken", "path": "media/broken.mp4"}]},
    {"title": "foxtrot", "reference": "media/c_ref.mp4",
     "renditions": [{"name": "small", "path": "media/c_small.mp4", "scale": "128:96"}]},
]


# the options of each manifest title written for a -filter_complex by hand (graph quoting)
DIRECT_OPTIONS = {"alpha": ":model=version=vmaf_v0.6.1|version=vmaf_v0.6.1neg:feature=name=psnr",
                  "bravo 'quoted', [b]": ":'model=version=vmaf_v0.6.1\\:name=main'", "charlie": ""}
DIRECT_MODELS = {"alpha": ["vmaf", "vmaf_v0.6.1neg"], "bravo 'quoted', [b]": ["main"], "charlie": ["vmaf"]}


def perc5(values):
    v = sorted(values)
    return v[max(1, math.ceil(5 * len(v) / 100)) - 1]


def direct(ffmpeg, root, title, rend, work, gpu=False):
    """The expected report row of one rendition: the filter run alone on it (gpu: NVDEC
    frames, scale_cuda, backend=cuda)."""
    base = title["title"].split("/")[0]
    logp = os.path.join(work, "direct-%d.json" % len(os.listdir(work)))
    pre = "[0:v]%s=%s[d];[d]" % ("scale_cuda" if gpu else "scale", rend["scale"].replace("x", ":")) \
        if rend.get("scale") else "[0:v]"
    graph = "%s[1:v]vmaf_cuda=log_fmt=json:backend=%s:precision=max:log_path=%s%s" % (
        pre, "cuda" if gpu else "cpu", logp, DIRECT_OPTIONS.get(base, ""))
    hw = ["-hwaccel", "cuda", "-hwaccel_output_format", "cuda"] if gpu else []
    p = run([ffmpeg, "-nostdin", "-hide_banner"] + hw + ["-i", os.path.join(root, rend["path"])] + hw +
            ["-i", os.path.join(root, title["reference"]), "-filter_complex", graph, "-f", "null", "-"])
    d = json.load(open(logp))
    pm, models = d["pooled_metrics"], DIRECT_MODELS.get(base, ["vmaf"])
    row = {"frames": len(d["frames"]), "vmaf_mean": pm[models[0]]["mean"]}
    for k, m in enumerate(models):
        if k:
            row[m + "_mean"] = pm[m]["mean"]
        row[m + "_harmonic_mean"] = pm[m]["harmonic_mean"]
        row[m + "_min"] = pm[m]["min"]
        row[m + "_perc5"] = perc5([f["metrics"][m] for f in d["frames"]])
    if "psnr" in DIRECT_OPTIONS.get(base, ""):
        for c in ("psnr_y", "psnr_cb", "psnr_cr"):
            row[c + "_mean"] = pm[c]["mean"]
    row["warned"] = "ended first" in p.stderr
    return row


# --------------------------------------------------------------- the test
class T:
    def __init__(self, a, work, cluster):
        self.a, self.work, self.cl = a, work, cluster

    def tool(self, *args, env=None, check_rc=True):
        e = dict(self.cl.env if self.cl else os.environ, **(env or {}))
        return run([sys.executable, self.a.tool] + list(args), env=e, check_rc=check_rc)

    def wait_all(self, out, timeout=300, during=None):
        deadline = time.time() + timeout
        while time.time() < deadline:
            st = json.loads(self.tool("status", out, "--json").stdout)
            if during:
                during(st)
            c = st["counts"]
            rep = st["report_written"] or 0
            if c["done"] + c["failed"] == sum(c.values()) and not st["report_job_queue"] and \
                    rep >= st["jobs"]["submitted"]:
                return st
            time.sleep(1)
        raise Fail("the batch did not finish in %d s: %s\n%s" % (
            timeout, self.tool("status", out).stdout, self.cl.tail("slurmctld")))


def compare(label, report_dir, expected, min_values=40, warning=True):
    rows = list(csv.DictReader(open(os.path.join(report_dir, "report.csv"))))
    jrows = json.load(open(os.path.join(report_dir, "report.json")))["rows"]
    header = open(os.path.join(report_dir, "report.csv")).readline().strip().split(",")
    check(header[:5] == ["title", "rendition", "status", "frames", "vmaf_mean"],
          "%s: report.csv starts with title,rendition,status,frames,vmaf_mean" % label)
    # the first model's mean is vmaf_mean only ("bravo" names its one model "main")
    check("main_mean" not in header and "vmaf_mean" in header,
          "%s: the first model's mean only as vmaf_mean" % label)
    by = {(r["title"], r["rendition"]): (r, j) for r, j in zip(rows, jrows)}
    check(len(by) == len(expected), "%s: one row per title and rendition (%d)" % (label, len(expected)))
    n = 0
    for key, exp in expected.items():
        r, j = by[key]
        if exp.get("error"):
            check(r["status"] == "failed" and exp["error"] in r["error"] and j["error"] == r["error"],
                  "%s: %s / %s failed: %s" % (label, key[0], key[1], r["error"]))
            continue
        if r["status"] != "done":
            raise Fail("%s: %s is %s: %s" % (label, key, r["status"], r["error"]))
        for c, v in exp.items():
            if c == "warned":
                if v != bool(r["warnings"]):
                    raise Fail("%s: %s: warnings %r, direct run warned: %s" % (label, key, r["warnings"], v))
                continue
            if c not in r or float(r[c]) != v or j[c] != v:
                raise Fail("%s: %s column %s: csv %r json %r, direct %r" % (label, key, c, r.get(c), j.get(c), v))
            n += 1
    check(n > min_values, "%s: %d values of the report equal the direct runs exactly" % (label, n))
    if warning:
        check(any(e.get("warned") for e in expected.values()) and
              any("ended first" in r["warnings"] for r in rows),
              "%s: the short rendition's misalignment warning is in the report" % label)


def cuda_devices():
    try:
        p = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return 0
    return sum(1 for l in p.stdout.splitlines() if l.startswith("GPU ")) if p.returncode == 0 else 0


def slurm_missing():
    if os.geteuid() != 0:
        return "not root: the test cluster runs slurmctld and slurmd as SlurmUser=root"
    missing = [b for b in ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scontrol", "scancel")
               if not shutil.which(b)]
    if missing:
        return "not installed: %s (Debian: slurm-wlm munge; tools/setup-debian.sh)" % " ".join(missing)
    return None


def slurm_suite(a, work, t, ts, manifest, expected):
    cl, ntitles = t.cl, len(ts)
    # dry run: the scripts and sbatch commands, nothing written
    dry = t.tool("run", manifest, "--out", os.path.join(work, "dry"), "--slurm", "--dry-run",
                 "--backend", "cpu", "--ffmpeg", a.ffmpeg).stdout
    check("#!/bin/sh" in dry and "--array=0-%d" % (ntitles - 1) in dry and "--dependency=afterok:" in dry
          and not os.path.exists(os.path.join(work, "dry")),
          "dry run prints the scripts and the sbatch commands, writes nothing")

    # the array, with a task requeued while it runs (as a preemption does)
    out = os.path.join(work, "out")
    slow = ts[0]["title"]
    sub = t.tool("run", manifest, "--out", out, "--slurm", "--backend", "cpu", "--ffmpeg", a.ffmpeg,
                 env={"VMAF_CUDA_BATCH_TEST_DELAY": slow + "=8"}).stdout
    print(sub.strip())
    state = json.load(open(os.path.join(out, "batch.json")))
    job = state["submissions"][-1]["arrays"][0]["job"]
    check(state["submissions"][-1]["arrays"][0]["tasks"] == "0-%d" % (ntitles - 1),
          "one array job of %d tasks (job %s) and a report job" % (ntitles, job))
    seen = {"requeued": False, "human": ""}

    def during(st):
        if not seen["requeued"] and st["titles"][0]["status"] == "running":
            seen["human"] = t.tool("status", out).stdout
            # requeued, it starts again after cred_expire (AuthInfo: 10 s)
            run(["scontrol", "requeue", "%s_0" % job], env=cl.env)
            seen["requeued"] = True
    st = t.wait_all(out, during=during)
    print(seen["human"].strip())
    check(seen["requeued"] and re.search(r"running [1-9]", seen["human"]) and "%s_0 on" % job in seen["human"],
          "status while the array runs: a task running (job %s_0 on the node)" % job)
    rec = json.load(open(os.path.join(out, "titles", state["titles"][0]["dir"], "task.json")))
    check(rec["status"] == "done" and rec["slurm_restart_count"] == 1,
          "the requeued task ran again (SLURM_RESTART_COUNT=1) and completed")
    check(st["counts"] == {"done": ntitles - 2, "running": 0, "failed": 2, "pending": 0},
          "status: %d done, 2 failed" % (ntitles - 2))
    human = t.tool("status", out).stdout
    print(human.strip())
    check("failed 2" in human and "missing file" in human and "report: " + out in human,
          "status is readable: counts, the failed titles with their errors, the report")
    compare("slurm", out, expected)
    titles_csv = list(csv.DictReader(open(os.path.join(out, "titles.csv"))))
    check(len(titles_csv) == ntitles and titles_csv[0]["status"] == "done" and
          float(titles_csv[0]["vmaf_mean_worst"]) == min(
              v["vmaf_mean"] for k, v in expected.items() if k[0] == ts[0]["title"]),
          "titles.csv: a summary per title (worst rendition's vmaf_mean)")

    # resume after fixing the missing file: only the unfinished tasks are submitted
    done_dirs = [x["dir"] for x in state["titles"] if not x["title"].startswith(("delta", "echo"))]
    started = lambda: {d: json.load(open(os.path.join(out, "titles", d, "task.json")))["started"]
                       for d in done_dirs}
    before = started()
    shutil.copy(os.path.join(work, "media", "a_lo.mp4"), os.path.join(work, "media", "gone.mp4"))
    t.tool("resume", out)
    state = json.load(open(os.path.join(out, "batch.json")))
    failed_idx = [i for i, x in enumerate(ts) if x["title"].startswith(("delta", "echo"))]
    tasks = state["submissions"][-1]["arrays"][0]["tasks"]
    check(tasks in (",".join(map(str, failed_idx)), "%d-%d" % (failed_idx[0], failed_idx[-1])),
          "resume submits only the unfinished tasks (%s)" % tasks)
    t.wait_all(out)
    check(before == started(), "resume left the finished titles alone")
    gone = [x for x in ts if x["title"].startswith("delta")][0]
    for r in gone["renditions"]:
        expected[(gone["title"], r["name"])] = direct(a.ffmpeg, work, gone, r, os.path.join(work, "direct"))
    compare("resumed", out, expected)

    # a full resubmission: every task starts, the complete ones skip themselves
    t.tool("run", manifest, "--out", out, "--slurm", "--backend", "cpu", "--ffmpeg", a.ffmpeg)
    st = t.wait_all(out)
    logs = "".join(open(os.path.join(out, "slurm", "logs", f)).read()
                   for f in os.listdir(os.path.join(out, "slurm", "logs")))
    check(before == started() and logs.count("complete, skipped") >= len(done_dirs) and
          st["counts"]["done"] == ntitles - 1,
          "a full resubmission skips the complete tasks (logs and outcome untouched)")
    compare("resubmitted", out, expected)

    # the same manifest on this host
    lout = os.path.join(work, "local")
    p = t.tool("run", manifest, "--out", lout, "--backend", "cpu", "--jobs", "2", "--ffmpeg", a.ffmpeg,
               check_rc=False)
    check(p.returncode == 1 and "1 of %d title(s) failed" % ntitles in p.stdout,
          "local run: exit 1, one title failed")
    compare("local", lout, expected)
    html_report(work, t, out, lout, ntitles)
    partial(a, work, t)
    model_file(a, work, t)
    options_checked(a, work, t)


def html_report(work, t, out, lout, ntitles):
    """report DIR --against OTHER -o OUT (vmaf-cuda-report, tests/report has the rest): the
    Slurm run against the local run of the same manifest: the pooled values of the batch
    report, bitrates and sizes from the media, BD-rate 0 (the same scores)."""
    rdir = os.path.join(work, "html-report")
    p = t.tool("report", out, "--against", lout, "-o", rdir)
    rep = json.load(open(os.path.join(rdir, "report.json")))
    rows = {(r["title"], r["rendition"]): r for r in csv.DictReader(open(os.path.join(out, "report.csv")))}
    n = bd = 0
    for x in rep["titles"]:
        m = x["primary"]
        for r in x["renditions"]:
            row = rows[(x["title"], r["name"])]
            if row["status"] != "done":
                if r["frames"] or r["pooled"]:
                    raise Fail("html report: %s / %s failed in the batch, has scores" % (x["title"], r["name"]))
                continue
            if r["pooled"][m]["mean"] != float(row["vmaf_mean"]) or \
                    r["pooled"][m]["perc5"] != float(row[m + "_perc5"]) or r["frames"] != int(row["frames"]) or \
                    not r["bitrate_kbps"] > 0 or not r["width"] > 0:
                raise Fail("html report: %s / %s: %r against the batch report's row %r" % (x["title"], r["name"], r, row))
            n += 1
        if len(x["hull"].get(m, [])) >= 2:
            if x["bd_rate"][m]["pchip"] != 0.0:
                raise Fail("html report: %s: BD-rate of a run against the same scores: %r" % (x["title"], x["bd_rate"][m]))
            bd += 1
    check(p.returncode == 0 and len(rep["titles"]) == ntitles and n >= 9 and bd >= 2 and
          os.path.isfile(os.path.join(rdir, "report.html")) and
          os.path.getsize(os.path.join(rdir, "report.html")) > 20000,
          "report --against -o: report.html, report.json: %d renditions' pools equal the batch report, "
          "%d titles' BD-rate against a run of the same scores 0" % (n, bd))


# what the ladder filter does when one rendition pairs no frame (tests/filter/ladder_test.py
# checks the filter): the others' logs written, that rendition's error, exit non-zero
WRAPPER = """#!%s
import os, subprocess, sys
rc = subprocess.call([%r] + sys.argv[1:])
if "-filters" not in sys.argv:
    os.unlink("r.1.json")
    sys.stderr.write("[Parsed_vmaf_cuda_2 @ 0x1] [error] rendition 1: no frame pair was scored\\n")
    rc = 1
sys.exit(rc)
"""


def partial(a, work, t):
    wrapper = os.path.join(work, "ffmpeg-one-rendition-fails")
    with open(wrapper, "w") as f:
        f.write(WRAPPER % (sys.executable, a.ffmpeg))
    os.chmod(wrapper, 0o755)
    title = {"title": "golf", "reference": "media/a_ref.mp4",
             "renditions": [{"name": "hi", "path": "media/a_hi.mp4"}, {"name": "lo", "path": "media/a_lo.mp4"}]}
    manifest = os.path.join(work, "partial.jsonl")
    with open(manifest, "w") as f:
        f.write(json.dumps(title) + "\n")
    out = os.path.join(work, "partial")
    p = t.tool("run", manifest, "--out", out, "--backend", "cpu", "--ffmpeg", wrapper, check_rc=False)
    check(p.returncode == 1, "a ladder with one failed rendition: exit 1")
    expected = {("golf", "hi"): direct(a.ffmpeg, work, title, title["renditions"][0], os.path.join(work, "direct")),
                ("golf", "lo"): {"error": "no frame pair was scored"}}
    compare("partial", out, expected, min_values=4, warning=False)
    summary = list(csv.DictReader(open(os.path.join(out, "titles.csv"))))
    check(summary[0]["status"] == "failed" and summary[0]["renditions_done"] == "1" and
          summary[0]["error"].startswith("ffmpeg failed (exit 1): rendition 1: no frame pair"),
          "titles.csv: the title failed, 1 of 2 renditions done")


def model_file(a, work, t):
    """A model given by a relative path= (taken from the manifest's folder): editing the
    file makes the title run again (it is part of what a complete title depends on)."""
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    mdir = os.path.join(work, "mdl")
    os.makedirs(mdir, exist_ok=True)
    model = json.load(open(os.path.join(repo, "models", "vmaf_v0.6.1.json")))
    mpath = os.path.join(mdir, "m.json")
    json.dump(model, open(mpath, "w"))
    title = {"title": "hotel", "reference": "media/a_ref.mp4", "options": "model=path=mdl/m.json",
             "renditions": [{"name": "hi", "path": "media/a_hi.mp4"}]}
    manifest = os.path.join(work, "model.jsonl")
    with open(manifest, "w") as f:
        f.write(json.dumps(title) + "\n")
    out = os.path.join(work, "model-run")
    mean = lambda: float(list(csv.DictReader(open(os.path.join(out, "report.csv"))))[0]["vmaf_mean"])
    p = t.tool("run", manifest, "--out", out, "--backend", "cpu", "--ffmpeg", a.ffmpeg, check_rc=False)
    check(p.returncode == 0, "a model by relative path=: run (exit %d)\n%s" % (p.returncode, p.stdout[-2000:]))
    first = mean()
    check(first > 50, "the model's score above 50 (%.3f) before the edit" % first)
    p = t.tool("run", manifest, "--out", out, "--backend", "cpu", "--ffmpeg", a.ffmpeg, check_rc=False)
    check("complete, skipped" in p.stdout + p.stderr, "unchanged model file: the title is skipped")
    model["model_dict"]["score_clip"] = [0.0, 50.0]
    json.dump(model, open(mpath, "w"))
    os.utime(mpath, ns=(os.stat(mpath).st_atime_ns, os.stat(mpath).st_mtime_ns + 10**9))
    p = t.tool("run", manifest, "--out", out, "--backend", "cpu", "--ffmpeg", a.ffmpeg, check_rc=False)
    check("complete, skipped" not in p.stdout + p.stderr and mean() <= 50.0 and mean() != first,
          "an edited model file: the title runs again with it (%.3f)" % mean())


def options_checked(a, work, t):
    """The tool's list of filter options is the built filter's; a manifest whose options
    set a key vmaf_cuda does not have (a model's name= with its ':' not escaped) fails at
    `run`, naming the key and the escape, before any ffmpeg runs."""
    loader = importlib.machinery.SourceFileLoader("vmaf_cuda_batch", a.tool)
    spec = importlib.util.spec_from_loader("vmaf_cuda_batch", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    helptext = run([a.ffmpeg, "-hide_banner", "-h", "filter=vmaf_cuda"]).stdout
    names = re.findall(r"^   (\w+)\s+<", helptext, re.M)
    check(sorted(names) == sorted(mod.FILTER_OPTIONS),
          "FILTER_OPTIONS equal ffmpeg -h filter=vmaf_cuda's options (%s vs %s)" %
          (sorted(names), sorted(mod.FILTER_OPTIONS)))
    title = {"title": "india", "reference": "media/a_ref.mp4",
             "options": "model=version=vmaf_v0.6.1:name=main",
             "renditions": [{"name": "hi", "path": "media/a_hi.mp4"}]}
    manifest = os.path.join(work, "unescaped.jsonl")
    with open(manifest, "w") as f:
        f.write(json.dumps(title) + "\n")
    out = os.path.join(work, "unescaped-run")
    p = t.tool("run", manifest, "--out", out, "--backend", "cpu", "--ffmpeg", a.ffmpeg, check_rc=False)
    text = p.stdout + p.stderr
    check(p.returncode != 0 and "'name' is not an option of vmaf_cuda" in text and "\\:" in text
          and not os.path.exists(os.path.join(out, "report.csv")),
          "unescaped ':' in a model entry: run refuses the manifest (exit %d): %s" %
          (p.returncode, text.strip()[-400:]))


def gpu_suite(a, work, ts, manifest, expected, ngpu):
    """NVDEC frames on every GPU of the host, then (with Slurm here) on GPU gres."""
    t = T(a, work, None)
    lout = os.path.join(work, "gpu-local")
    p = t.tool("run", manifest, "--out", lout, "--ffmpeg", a.ffmpeg, check_rc=False)
    print(p.stdout.strip())
    check(p.returncode == 1 and "on %d GPU(s)" % ngpu in p.stdout and "2 of %d title(s) failed" % len(ts) in p.stdout,
          "local run on %d GPU(s) (backend auto): exit 1, the two bad titles failed" % ngpu)
    recs = [json.load(open(os.path.join(lout, "titles", d, "task.json"))) for d in os.listdir(os.path.join(lout, "titles"))]
    check(all(r.get("backend") == "cuda" for r in recs if r["status"] == "done"), "every title scored on the GPU")
    compare("gpu local", lout, expected)
    why = slurm_missing()
    if why:
        print("note: Slurm with GPU gres not tried: %s" % why)
        return
    t.cl = Cluster(os.path.join(work, "slurm"), gpus=ngpu)
    try:
        t.cl.start()
    except Skip as e:
        print("note: Slurm with GPU gres not tried: %s" % e)
        return
    try:
        out = os.path.join(work, "gpu-slurm")
        t.tool("run", manifest, "--out", out, "--slurm", "--ffmpeg", a.ffmpeg)
        state = json.load(open(os.path.join(out, "batch.json")))
        check(state["gres"] == "gpu:1", "the cluster's GPU gres is found: --gres=gpu:1 per task")
        t.wait_all(out)
        recs = [json.load(open(os.path.join(out, "titles", x["dir"], "task.json"))) for x in state["titles"]]
        check(all(r.get("backend") == "cuda" for r in recs if r["status"] == "done"),
              "every Slurm task scored on its GPU")
        compare("gpu slurm", out, expected)
    finally:
        t.cl.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool")
    ap.add_argument("--ffmpeg")
    ap.add_argument("--clip-ffmpeg", default=shutil.which("ffmpeg"))
    ap.add_argument("--clips", help="folder of the clips (made there when missing)")
    ap.add_argument("--make-clips", action="store_true", help="only make the clips (--clips)")
    ap.add_argument("--gpu", action="store_true", help="NVDEC and the CUDA backend (locally; on Slurm "
                                                      "with GPU gres when it can run here)")
    ap.add_argument("--workdir")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    if a.make_clips:
        if not a.clips:
            ap.error("--make-clips needs --clips DIR")
        os.makedirs(a.clips, exist_ok=True)
        make_clips(a.clip_ffmpeg, a.clips)
        return 0
    if not a.tool or not a.ffmpeg:
        ap.error("--tool and --ffmpeg are required")
    a.tool, a.ffmpeg = os.path.abspath(a.tool), os.path.abspath(a.ffmpeg)
    work = tempfile.mkdtemp(prefix="vmaf_batch_", dir=a.workdir)
    t = None
    try:
        ngpu = cuda_devices() if a.gpu else 0
        if a.gpu and not ngpu:
            raise Skip("no CUDA device found (nvidia-smi -L)")
        why = None if a.gpu else slurm_missing()
        if why:
            raise Skip(why)
        if not os.access(a.ffmpeg, os.X_OK):
            raise Fail("no project ffmpeg at %s" % a.ffmpeg)
        if "renditions" not in run([a.ffmpeg, "-hide_banner", "-h", "filter=vmaf_cuda"]).stdout:
            raise Fail("%s's vmaf_cuda has no renditions= (the ladder filter)" % a.ffmpeg)
        media = os.path.join(work, "media")
        if a.clips:
            make_clips(a.clip_ffmpeg, a.clips)
            shutil.copytree(a.clips, media)
        else:
            os.makedirs(media)
            make_clips(a.clip_ffmpeg, media)
        ts = TITLES
        manifest = os.path.join(work, "manifest.jsonl")
        with open(manifest, "w") as f:
            f.write("# vmaf-cuda-batch test manifest\n")
            for x in ts:
                f.write(json.dumps(x) + "\n")
        dwork = os.path.join(work, "direct")
        os.makedirs(dwork)
        expected = {}
        for x in ts:
            for r in x["renditions"]:
                key = (x["title"], r["name"])
                if x["title"].startswith("delta"):
                    expected[key] = {"error": "missing file: " + os.path.join(media, "gone.mp4")}
                elif x["title"].startswith("echo"):
                    expected[key] = {"error": "ffmpeg failed"}
                else:
                    expected[key] = direct(a.ffmpeg, work, x, r, dwork, gpu=a.gpu)
        if a.gpu:
            gpu_suite(a, work, ts, manifest, expected, ngpu)
        else:
            t = T(a, work, Cluster(os.path.join(work, "slurm")))
            t.cl.start()
            print("cluster up: %s" % run(["sinfo", "-h"], env=t.cl.env).stdout.strip())
            slurm_suite(a, work, t, ts, manifest, expected)
        print("1 passed, 0 failed")
        return 0
    except Skip as e:
        print("SKIPPED: %s" % e)
        return SKIP
    except (Fail, Exception) as e:
        if not isinstance(e, Fail):
            traceback.print_exc(file=sys.stdout)
        print("FAIL: %s" % e)
        if t and t.cl:
            print("slurmctld: %s\nslurmd: %s" % (t.cl.tail("slurmctld"), t.cl.tail("slurmd")))
        print("0 passed, 1 failed (work folder kept: %s)" % work)
        a.keep = True
        return 1
    finally:
        if t and t.cl:
            t.cl.stop()
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

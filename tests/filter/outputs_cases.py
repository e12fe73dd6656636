# SPDX-License-Identifier: BSD-2-Clause-Patent
"""Nothing lost, nothing silent (issue 32): what the filter's outputs promise.

Used by filter_test.py (CPU suite; the -frames:v case also on NVDEC frames). Each case
asserts exit statuses, the messages (the user's path and the system's reason), the logs'
frames against a run that could not have lost anything, and that identical runs give
identical logs:

- -frames:v N gives exactly N frames in the log, run after run (CPU workers, filters
  before and after vmaf_cuda, a ladder's outputs limited one by one), and in an NDJSON
  file (the lines of frames that went out after them are cut; a stream says it has them);
- a ladder rendition that pairs nothing: an error for it and a non-zero exit status,
  while the other renditions are scored in full (their logs equal separate runs');
- a log that cannot be written (/dev/full, a full file system, a full disk under the
  NDJSON stream) is a non-zero exit status and an error naming the path and the reason;
  the NDJSON stream keeps whole lines;
- log paths that are not regular files: a symbolic link stays a link (also one to
  /proc/self/fd/1, what /dev/stdout is), "-" and "pipe:1" are standard output;
- a run that writes no log removes an older file at its path, saying so;
- an option given twice, n_threads above 64: errors before the first frame.
"""

import json
import os
import shutil
import subprocess

import parity_cases
from parity_cases import Skip, run_pairing

# set by filter_test.py
TestFailure = AssertionError


def _fail(msg):
    raise TestFailure(msg)


def _frames(path):
    with open(path) as f:
        return json.load(f, parse_float=str, parse_int=str)["frames"]


def _run(r, args, cwd=None, stdout=None):
    """ffmpeg with args; returns (exit status, stderr)."""
    cmd = [r.ffmpeg, "-hide_banner", "-nostdin", "-y", "-loglevel", "level+info"] + args
    p = subprocess.run(cmd, cwd=cwd, stdout=stdout or subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stderr


def _cpu(hw):
    return "" if hw else ":backend=cpu"


def _hw(hw):
    return ["-hwaccel", "cuda", "-hwaccel_output_format", "cuda"] if hw else []


def case_frames_exact(r, c, hw=False):
    """-frames:v N: N frames in the log, equal to a run of the first N frames, every time."""
    dis, ref = c.get("dist.mp4"), c.get("ref.mp4")
    # (label, options, the main's filters before vmaf_cuda, filters after it, N)
    variants = [("n_threads=8", ":n_threads=8", "", "", 10),
                ("scale,format before", "", "scale=176:144,format=yuv420p", "", 12),
                ("format,scale after", "", "", ",format=gray,scale=88:72", 7)]
    if hw:
        variants = [("NVDEC", "", "", "", 10), ("scale_cuda before", "", "scale_cuda=176:144", "", 12)]
    done = []
    for label, opts, pre, post, n in variants:
        chain = "[0:v]%s[d];[d][1:v]" % pre if pre else "[0:v][1:v]"
        trim = "[0:v]trim=end_frame=%d%s[d];[1:v]trim=end_frame=%d[r];[d][r]" % (
            n, "," + pre if pre else "", n)
        _, _, trimmed, _, _ = run_pairing(r, dis, ref, opts, hw=hw, name="exact_trim", pre=trim)
        for run in range(4):
            log = r.tmp("exact%d.json" % run)
            if os.path.exists(log):
                os.unlink(log)
            graph = chain + "vmaf_cuda=log_fmt=json:log_path=%s:precision=max%s%s%s" % (
                log, _cpu(hw), opts, post)
            rc, err = _run(r, _hw(hw) + ["-i", dis] + _hw(hw) + ["-i", ref, "-an", "-lavfi", graph,
                                                                  "-frames:v", str(n), "-f", "null", "-"])
            if rc:
                _fail("%s run %d: exit %d\n%s" % (label, run, rc, err[-1500:]))
            got = _frames(log)
            if len(got) != n or got != trimmed:
                _fail("%s, -frames:v %d, run %d: %d frames in the log%s" % (
                    label, n, run, len(got), "" if len(got) != n else ", not those of the first %d" % n))
        done.append("%s: %d x4" % (label, n))
    return "; ".join(done)


def case_ndjson_frames(r, c, hw=False):
    """-frames:v N with log_fmt=ndjson: a file holds the lines of exactly N frames (the
    frames that went out after them are cut), run after run; a stream keeps them and says
    so."""
    dis, ref = c.get("dist.mp4"), c.get("ref.mp4")
    n = 12
    texts = set()
    for run in range(4):
        log = r.tmp("frames.ndjson")
        rc, err = _run(r, _hw(hw) + ["-i", dis] + _hw(hw) + ["-i", ref, "-an", "-lavfi",
                       "[0:v][1:v]vmaf_cuda=n_threads=4:log_fmt=ndjson:log_path=%s:window=5:"
                       "window_log=2%s" % (log, _cpu(hw)), "-frames:v", str(n), "-f", "null", "-"])
        if rc:
            _fail("ndjson run %d: exit %d\n%s" % (run, rc, err[-1500:]))
        with open(log) as f:
            text = f.read()
        lines = [json.loads(l) for l in text.splitlines()]
        frames = [l["frameNum"] for l in lines if l["type"] == "frame"]
        windows = [l for l in lines if l["type"] == "window"]
        if frames != list(range(n)) or len(windows) != n // 2 or lines[-1]["type"] != "pooled" \
                or lines[-1]["frames"] != n:
            _fail("ndjson run %d, -frames:v %d: frame lines %s, %d window lines, last %s" % (
                run, n, frames, len(windows), lines[-1]))
        texts.add(text)
    if len(texts) != 1:
        _fail("ndjson: identical runs gave %d different logs" % len(texts))
    out = r.tmp("frames_stream.ndjson")
    with open(out, "w") as so:
        rc, err = _run(r, _hw(hw) + ["-i", dis] + _hw(hw) + ["-i", ref, "-an", "-lavfi",
                       "[0:v][1:v]vmaf_cuda=log_fmt=ndjson:log_path=-%s" % _cpu(hw),
                       "-frames:v", "3", "-f", "null", "-"], stdout=so)
    with open(out) as f:
        lines = [json.loads(l) for l in f.read().splitlines()]
    said = "already carries the lines of frames after the 3 output" in err
    if rc or lines[-1] != dict(lines[-1], type="pooled", frames=3) or \
            (len(lines) > 4) != said:
        _fail("ndjson to a stream, -frames:v 3: exit %d, %d lines, warned %s\n%s" % (
            rc, len(lines), said, err[-1500:]))
    return "a file: %d frame lines x4, identical; a stream: %d lines%s" % (
        n, len(lines), ", said" if said else "")


def case_ladder_frames(r, c, hw=False):
    """A ladder's outputs limited one by one (-frames:v per output): each log has its
    output's frames, equal to a separate run of that many frames."""
    dis, ref = c.get("dist.mp4"), c.get("ref.mp4")
    logs = [r.tmp("ladf_%d.json" % k) for k in range(2)]
    graph = "[0:v][1:v][2:v]vmaf_cuda=renditions=2:log_fmt=json:log_path=%s:precision=max%s[o0][o1]" % (
        r.tmp("ladf_%d.json"), _cpu(hw))
    for run in range(3):
        for log in logs:
            if os.path.exists(log):
                os.unlink(log)
        rc, err = _run(r, _hw(hw) + ["-i", dis] + _hw(hw) + ["-i", ref] + _hw(hw) + ["-i", ref, "-lavfi", graph,
                       "-map", "[o0]", "-frames:v", "9", "-f", "null", "-",
                       "-map", "[o1]", "-frames:v", "17", "-f", "null", "-"])
        if rc:
            _fail("ladder -frames:v: exit %d\n%s" % (rc, err[-1500:]))
        for log, n, d in ((logs[0], 9, dis), (logs[1], 17, ref)):
            _, _, want, _, _ = run_pairing(r, d, ref, hw=hw, name="ladf_trim",
                                           pre="[0:v]trim=end_frame=%d[d];[1:v]trim=end_frame=%d[r];[d][r]" % (n, n))
            if _frames(log) != want:
                _fail("ladder run %d: %s has %d frames, not the %d of a separate run" % (
                    run, os.path.basename(log), len(_frames(log)), n))
    return "9 and 17 frames, equal to separate runs, 3 runs"


def case_ladder_empty(r, c, hw=False):
    """A rendition with no frame in range: an error naming it, a non-zero exit, and the
    other renditions scored in full (their logs equal separate two-input runs')."""
    dis, ref = c.get("dist.mp4"), c.get("ref.mp4")
    _, _, full_dis, _, _ = run_pairing(r, dis, ref, name="lade_dis")
    _, _, full_ref, _, _ = run_pairing(r, ref, ref, name="lade_ref")
    done = []
    for n, empty in ((2, 1), (3, 0)):
        renditions = [dis, ref, dis][:n]
        logs = [r.tmp("lade%d_%d.json" % (n, k)) for k in range(n)]
        for k, log in enumerate(logs):
            with open(log, "w") as f:
                f.write("an older run's log")
        args = []
        for k, d in enumerate(renditions):
            args += (["-ss", "100"] if k == empty else []) + ["-i", d]
        args += ["-i", ref, "-lavfi",
                 "".join("[%d:v]" % k for k in range(n + 1)) +
                 "vmaf_cuda=renditions=%d:log_fmt=json:log_path=%s:precision=max:backend=cpu%s" % (
                     n, r.tmp("lade%d_%%d.json" % n), "".join("[o%d]" % k for k in range(n)))]
        for k in range(n):
            args += ["-map", "[o%d]" % k, "-f", "null", "-"]
        for run in range(2):
            rc, err = _run(r, args)
            if rc == 0:
                _fail("%d renditions, rendition %d empty: exit status 0" % (n, empty))
            if "rendition %d: no frame pair was scored" % empty not in err:
                _fail("%d renditions: no error for rendition %d:\n%s" % (n, empty, err[-1500:]))
            if os.path.exists(logs[empty]):
                _fail("%d renditions: the older file at rendition %d's log path was left" % (n, empty))
            if "removed the older file at '%s'" % logs[empty] not in err:
                _fail("%d renditions: the removal of the older log is not said:\n%s" % (n, err[-1500:]))
            for k, d in enumerate(renditions):
                if k == empty:
                    continue
                want = full_dis if d == dis else full_ref
                got = _frames(logs[k])
                if got != want:
                    _fail("%d renditions, run %d: rendition %d logged %d frames, a separate run %d"
                          % (n, run, k, len(got), len(want)))
            with open(logs[empty], "w") as f:
                f.write("an older run's log")
        done.append("%d renditions: rendition %d an error, exit %d, the others whole" % (n, empty, rc))
    return "; ".join(done)


def case_log_lost(r, c, hw=False):
    """A log that cannot be written: non-zero exit, the user's path and the reason."""
    dis, ref = c.get("dist.mp4"), c.get("ref.mp4")
    base = ["-i", dis, "-i", ref, "-an", "-lavfi"]
    rc, err = _run(r, base + ["[0:v][1:v]vmaf_cuda=backend=cpu:log_fmt=xml:log_path=/dev/full",
                              "-f", "null", "-"])
    if rc == 0 or '"/dev/full": No space left on device' not in err:
        _fail("XML log to /dev/full: exit %d\n%s" % (rc, err[-1500:]))
    if "VMAF score: " not in err:
        _fail("XML log to /dev/full: no score line (the scores themselves are fine)")
    rc2, err2 = _run(r, base + ["[0:v][1:v]vmaf_cuda=backend=cpu:log_fmt=json:log_path=%s" %
                                r.tmp("no_such_dir/x/vmaf.json"), "-f", "null", "-"])
    if rc2 == 0 or "no_such_dir/x/vmaf.json" not in err2 or "No such file or directory" not in err2:
        _fail("log in a missing folder: exit %d\n%s" % (rc2, err2[-1500:]))
    return "/dev/full: exit %d, named with the reason; a missing folder refused at init" % rc


def _full_fs(r, name, free_kib):
    """A tmpfs of 64 KiB with about free_kib KiB free, or Skip."""
    mnt = r.tmp(name)
    os.makedirs(mnt, exist_ok=True)
    subprocess.run(["umount", mnt], stderr=subprocess.DEVNULL)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt],
                       stderr=subprocess.PIPE, text=True)
    if p.returncode:
        raise Skip("cannot mount a small tmpfs to fill (%s)" % p.stderr.strip())
    with open(os.path.join(mnt, "fill"), "wb") as f:
        f.write(b"\0" * ((64 - free_kib) * 1024))
    return mnt


def case_full_disk(r, c, hw=False):
    """JSON log and NDJSON stream on a full file system: non-zero exit, the path and
    "No space left on device"; no temporary file left; NDJSON keeps whole lines."""
    dis, ref = c.get("dist.mp4"), c.get("ref.mp4")
    mnt = _full_fs(r, "fullfs", 8)
    try:
        log = os.path.join(mnt, "vmaf.json")
        rc, err = _run(r, ["-i", dis, "-i", ref, "-an", "-lavfi",
                           "[0:v][1:v]vmaf_cuda=backend=cpu:log_fmt=json:log_path=%s" % log, "-f", "null", "-"])
        if rc == 0 or ('"%s": No space left on device' % log) not in err:
            _fail("JSON log on a full disk: exit %d\n%s" % (rc, err[-1500:]))
        if sorted(os.listdir(mnt)) != ["fill"]:
            _fail("JSON log on a full disk left %s" % sorted(os.listdir(mnt)))
        nd = os.path.join(mnt, "vmaf.ndjson")
        rc, err = _run(r, ["-i", dis, "-i", ref, "-an", "-lavfi",
                           "[0:v][1:v]vmaf_cuda=backend=cpu:log_fmt=ndjson:log_path=%s" % nd, "-f", "null", "-"])
        if rc == 0 or "'%s' failed: No space left on device" % nd not in err:
            _fail("NDJSON on a full disk: exit %d\n%s" % (rc, err[-1500:]))
        with open(nd) as f:
            text = f.read()
        if not text or not text.endswith("\n"):
            _fail("NDJSON on a full disk ends in half a line: %r" % text[-80:])
        lines = [json.loads(l) for l in text.splitlines()]
        if len(lines) >= 30:
            _fail("NDJSON on a full disk: %d lines, the disk was not full" % len(lines))
    finally:
        subprocess.run(["umount", mnt])
    return "JSON: exit %d, no file left; NDJSON: %d whole lines, exit non-zero" % (rc, len(lines))


def case_special_paths(r, c, hw=False):
    """A link stays a link (to a file, to /proc/self/fd/1), "-", "pipe:1" and /dev/stdout
    are standard output, written through the descriptor (a file it appends to keeps what
    it held); nothing named "-" or "pipe:1" appears."""
    dis, ref = c.get("dist.mp4"), c.get("ref.mp4")
    folder = r.tmp("special")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    target = os.path.join(folder, "target.json")
    link = os.path.join(folder, "link.json")
    os.symlink("target.json", link)
    fd1 = os.path.join(folder, "stdout_link")
    os.symlink("/proc/self/fd/1", fd1)
    base = ["-i", dis, "-i", ref, "-an", "-frames:v", "5", "-lavfi"]
    done = []
    for path, kind in ((link, "link"), (fd1, "stdout"), ("-", "stdout"), ("pipe:1", "stdout"),
                       ("/dev/stdout", "stdout")):
        out = os.path.join(folder, "stdout.txt")
        with open(out, "w") as so:  # stdout appends to what the file holds (`>>`)
            so.write("KEEP\n")
        with open(out, "a") as so:
            rc, err = _run(r, base + ["[0:v][1:v]vmaf_cuda=backend=cpu:log_fmt=json:log_path='%s'"
                                      % path.replace(":", "\\:"),
                                      "-f", "null", "-"], cwd=folder, stdout=so)
        if rc:
            _fail("log_path=%s: exit %d\n%s" % (path, rc, err[-1500:]))
        got = target if kind == "link" else out
        if kind == "stdout":  # written through the descriptor: the older text is kept
            with open(out) as f:
                text = f.read()
            if not text.startswith("KEEP\n"):
                _fail("log_path=%s: the text stdout appended to was cut" % path)
            got = os.path.join(folder, "log.json")
            with open(got, "w") as f:
                f.write(text[5:])
        if len(_frames(got)) != 5:
            _fail("log_path=%s: %s does not hold the 5-frame log" % (path, got))
        if kind == "stdout":
            os.remove(got)
        for p in (link, fd1):
            if not os.path.islink(p):
                _fail("log_path=%s: %s was replaced by a file" % (path, p))
        extra = set(os.listdir(folder)) - {"target.json", "link.json", "stdout_link", "stdout.txt"}
        if extra:
            _fail("log_path=%s: left %s" % (path, sorted(extra)))
        done.append(path if not path.startswith(folder) else os.path.basename(path))
    return "written through %s" % ", ".join(done)


def case_stale_log(r, c, hw=False):
    """No frame pair: no log, and an older file at log_path is removed, saying so."""
    dis, ref = c.get("dist.mp4"), c.get("ref.mp4")
    log = r.tmp("stale.json")
    with open(log, "w") as f:
        f.write("{}")
    rc, err = _run(r, ["-i", dis, "-i", ref, "-an", "-lavfi",
                       "[0:v]trim=start_frame=500[d];[d][1:v]vmaf_cuda=backend=cpu:log_fmt=json:log_path=%s" % log,
                       "-f", "null", "-"])
    if rc == 0 or os.path.exists(log) or "removed the older file at '%s'" % log not in err:
        _fail("no pairs: exit %d, old log %s\n%s" % (rc, "left" if os.path.exists(log) else "gone", err[-1500:]))
    return "exit %d, the older log removed and said" % rc


def case_refused_options(r, c, hw=False):
    """Options given twice and n_threads above 64: errors before any frame."""
    dis, ref = c.get("dist.mp4"), c.get("ref.mp4")
    done = []
    for opts, want in (("log_path=a.json:log_path=b.json", "option 'log_path' is given twice"),
                       ("model=version=vmaf_v0.6.1:model=version=vmaf_v0.6.1neg", "option 'model' is given twice"),
                       ("n_threads=100000", "n_threads")):
        rc, err = _run(r, ["-i", dis, "-i", ref, "-an", "-lavfi", "[0:v][1:v]vmaf_cuda=backend=cpu:" + opts,
                           "-f", "null", "-"], cwd=r.tmp(""))
        if rc == 0 or want not in err:
            _fail("%s: exit %d\n%s" % (opts, rc, err[-1500:]))
        if "frame=" in err.replace("frame= ", "frame="):
            _fail("%s: frames were processed before the error" % opts)
        done.append(opts.split("=")[0])
    return "refused: %s" % ", ".join(done)


CPU_CASES = [case_frames_exact, case_ndjson_frames, case_ladder_frames, case_ladder_empty, case_log_lost,
             case_full_disk, case_special_paths, case_stale_log, case_refused_options]
GPU_CASES = [case_frames_exact, case_ndjson_frames, case_ladder_frames]

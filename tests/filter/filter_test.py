#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause-Patent
"""End-to-end tests of the vmaf_cuda FFmpeg filter, through a built ffmpeg binary.

    filter_test.py --ffmpeg PATH --shared DIR [--gpu] [--only NAME ...] [--skip NAME ...]
                   [--workdir DIR] [--clip-ffmpeg PATH]

DIR is the shared folder (media/ and golden/). Without --gpu: the CPU suite (software
frames, backend=cpu): the BBB case of golden/ must come out bit-exact in every frame's
metadata (lavfi.vmaf.*) and in the JSON log (precision=max); several models at once;
the error cases exit non-zero with their message. With --gpu: NVDEC frames straight
into the filter (8-bit H.264 and 10-bit HEVC, P010), software frames on backend=cuda,
and the errors only a GPU can provoke; without a CUDA device it prints
"SKIPPED: no CUDA device found" and exits 77 (meson's skip code).

The libvmaf-parity and pairing cases (parity_cases.py: trims, -copyts offsets, VFR drops,
30/60 fps, MKV vs MP4 time bases, formats, -frames:v N, warnings) make their clips with
the system ffmpeg (--clip-ffmpeg, default `ffmpeg` on PATH, with libx264); without it
they SKIP. Most also run on NVDEC frames in the --gpu half.

"Bit-exact": parsing our printed value gives the same double as parsing the golden one.
Standard library only. Prints one line per test and "N passed, N failed" at the end.
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

import live_cases
import outputs_cases
import metrics_cases
import parity_cases
import resize_cases
import sync_cases

SKIP_CODE = 77

BBB_DIS = "media/bbb_dis_854x480_120f.mp4"
BBB_REF = "media/bbb_ref_854x480_120f.mp4"
BBB_GOLDEN = "golden/bbb_854x480_120f_8bit.csv"
BBB_NEG_GOLDEN = "golden/models/bbb_854x480_120f_8bit.vmaf_v0.6.1neg.csv"
HEVC_DIS = "media/bbb_dis_854x480_120f_hevc10.mp4"
HEVC_REF = "media/bbb_ref_854x480_120f_hevc10.mp4"
HEVC_GOLDEN = "golden/bbb_854x480_120f_10bit_hevc.csv"
NB_FRAMES = 120

# features the vmaf_v0.6.1 model reads: they must be reported for every frame
REQUIRED = ["integer_adm2", "integer_vif_scale0", "integer_vif_scale1",
            "integer_vif_scale2", "integer_vif_scale3", "integer_motion2"]
REQUIRED_NEG = ["integer_adm2_egl_1", "integer_vif_scale0_egl_1", "integer_vif_scale1_egl_1",
                "integer_vif_scale2_egl_1", "integer_vif_scale3_egl_1", "integer_motion2"]


def run_tests(r, tests, prefix, workdir, keep):
    """Runs each test function t(r): PASS with what it returns (what it checked), SKIP
    when it raises parity_cases.Skip (with the reason), FAIL on TestFailure, an error of
    its own (named), or when it returns nothing (a test that says nothing checked
    nothing). Removes `workdir` afterwards unless `keep` or a test failed. Returns the
    exit status (0, 1)."""
    passed = failed = skipped = 0
    for t in tests:
        name = prefix + t.__name__[2:]
        skipped_now = False
        try:
            info = t(r)
        except parity_cases.Skip as e:
            info, skipped_now = None, True
            print("  (%s)" % e)
        except TestFailure as e:
            failed += 1
            print("FAIL %s: %s" % (name, e), flush=True)
            continue
        except (OSError, ValueError, KeyError, TypeError, IndexError, json.JSONDecodeError,
                subprocess.SubprocessError) as e:
            failed += 1
            print("FAIL %s: %s: %s" % (name, type(e).__name__, e), flush=True)
            continue
        if info is None and skipped_now:
            skipped += 1
            print("SKIP %s" % name, flush=True)
        elif info is None:
            failed += 1
            print("FAIL %s: the test returned nothing (what did it check?)" % name, flush=True)
        else:
            passed += 1
            print("PASS %s: %s" % (name, info), flush=True)
    if not keep and not failed:
        shutil.rmtree(workdir, ignore_errors=True)
    elif failed:
        print("outputs kept in %s" % workdir)
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


class TestFailure(Exception):
    pass


def canon(name):
    """One spelling per feature: libvmaf's full names and aliases map to the alias."""
    if name.startswith("lavfi.vmaf."):
        name = name[len("lavfi.vmaf."):]
    for prefix, out in (("VMAF_integer_feature_", "integer_"), ("VMAF_feature_", "")):
        if name.startswith(prefix) and name.endswith("_score"):
            return out + name[len(prefix):-len("_score")]
    return name


def read_golden(path):
    """Rows of a golden CSV as {canonical name: float}, and the pooled comment."""
    rows, pooled, header = [], {}, None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            if line.startswith("#"):
                for item in line.split():
                    if "=" in item:
                        k, v = item.split("=", 1)
                        pooled[k] = v
                continue
            cells = line.split(",")
            if header is None:
                header = [canon(c) for c in cells]
                continue
            rows.append({h: float(c) for h, c in zip(header[1:], cells[1:])})
    return rows, pooled


def read_metadata(path):
    """The file of metadata=print: a list of (pts, {key: value string}) per frame."""
    frames = []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("frame:"):
                fields = dict(p.split(":", 1) for p in line.split() if ":" in p)
                frames.append((fields.get("pts"), {}))
            elif "=" in line and frames:
                k, v = line.split("=", 1)
                frames[-1][1][k] = v
    return frames


class Runner:
    def __init__(self, ffmpeg, shared, workdir, verbose):
        self.ffmpeg = ffmpeg
        self.shared = shared
        self.workdir = workdir
        self.verbose = verbose

    def path(self, rel):
        return os.path.join(self.shared, rel)

    def tmp(self, name):
        return os.path.join(self.workdir, name)

    def ffmpeg_run(self, args, expect_ok=True, stdout=None):
        cmd = [self.ffmpeg, "-hide_banner", "-nostdin", "-y"] + args
        if self.verbose:
            print("  $ " + " ".join(cmd), flush=True)
        p = subprocess.run(cmd, stdout=stdout if stdout else subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=stdout is None)
        err = p.stderr if isinstance(p.stderr, str) else p.stderr.decode(errors="replace")
        if expect_ok and p.returncode != 0:
            raise TestFailure("ffmpeg exited with %d:\n$ %s\n%s" % (p.returncode, " ".join(cmd),
                                                                   tail(err)))
        return p.returncode, err, p.stdout

    def inputs(self, dis, ref, hw=False):
        hwargs = ["-hwaccel", "cuda", "-hwaccel_output_format", "cuda"] if hw else []
        return hwargs + ["-i", self.path(dis)] + hwargs + ["-i", self.path(ref)]


def bbb_runner(a, prefix):
    """The setup the live and network scripts share: checks the ffmpeg binary and the BBB
    clips and golden file in a.shared, makes the work folder (a.workdir or a temporary one
    named by prefix). Returns a Runner, or an exit status (1) after saying what is missing."""
    if not os.access(a.ffmpeg, os.X_OK):
        print("ffmpeg binary not found: %s" % a.ffmpeg)
        return 1
    for rel in (BBB_DIS, BBB_REF, BBB_GOLDEN):
        if not os.path.exists(os.path.join(a.shared, rel)):
            print("missing %s in %s (the project's shared/ folder)" % (rel, a.shared))
            return 1
    workdir = a.workdir or tempfile.mkdtemp(prefix=prefix)
    os.makedirs(workdir, exist_ok=True)
    return Runner(os.path.abspath(a.ffmpeg), os.path.abspath(a.shared), workdir, a.verbose)


def tail(text, n=25):
    return "\n".join(text.strip().splitlines()[-n:])


def check_equal(where, ours, golden_value):
    try:
        value = float(ours)
    except ValueError:
        raise TestFailure("%s: '%s' is not a number" % (where, ours))
    if value != golden_value and not (value != value and golden_value != golden_value):
        raise TestFailure("%s: got %s (%r), golden %r" % (where, ours, value, golden_value))


def compare_frames(label, frames, golden, required, score_key):
    """frames: list of {canonical name: value string} per frame; golden: rows."""
    if len(frames) != len(golden):
        raise TestFailure("%s: %d frames, golden has %d" % (label, len(frames), len(golden)))
    compared = set()
    for i, (ours, gold) in enumerate(zip(frames, golden)):
        missing = [r for r in required if r not in ours]
        if missing:
            raise TestFailure("%s frame %d: missing %s (has %s)"
                              % (label, i, ", ".join(missing), ", ".join(sorted(ours))))
        if score_key not in ours:
            raise TestFailure("%s frame %d: no model score '%s'" % (label, i, score_key))
        check_equal("%s frame %d vmaf" % (label, i), ours[score_key], gold["vmaf"])
        for name, value in gold.items():
            if name != "vmaf" and name in ours:
                check_equal("%s frame %d %s" % (label, i, name), ours[name], value)
                compared.add(name)
    return compared


def metadata_features(meta_frames):
    """{canonical feature: value} per frame from metadata; model scores under 'score*'."""
    out = []
    for _, kv in meta_frames:
        d = {}
        for k, v in kv.items():
            if k.startswith("lavfi.vmaf."):
                d[canon(k)] = v
        out.append(d)
    return out


def json_features(path):
    with open(path) as f:
        doc = json.load(f, parse_float=str, parse_int=str)
    frames = doc.get("frames")
    if not isinstance(frames, list):
        raise TestFailure("%s: no 'frames' list" % path)
    out = []
    for i, fr in enumerate(frames):
        num = int(fr.get("frameNum", i))
        if num != i:
            raise TestFailure("%s: frame %d has frameNum %d" % (path, i, num))
        out.append({canon(k): v for k, v in fr.get("metrics", {}).items()})
    return out


def output_frame_count(stderr):
    """The frame count of ffmpeg's last progress line ("frame=  120 fps=...")."""
    counts = [l.split("frame=", 1)[1].split()[0] for l in stderr.replace("\r", "\n").splitlines()
              if l.startswith("frame=")]
    return int(counts[-1]) if counts else None


def vmaf_score_line(stderr):
    lines = [l for l in stderr.splitlines() if "VMAF score: " in l]
    if not lines:
        raise TestFailure("no 'VMAF score:' line in the log:\n" + tail(stderr))
    return lines[-1].split("VMAF score: ", 1)[1].strip()


# ------------------------------------------------------------------ test cases

def bitexact_case(r, name, dis, ref, golden_rel, filter_prefix="", hw=False, options="",
                  expect_in_log=None):
    """Runs dis/ref through vmaf_cuda; metadata, JSON log and 'VMAF score' vs golden."""
    meta, log = r.tmp(name + ".meta"), r.tmp(name + ".json")
    graph = (filter_prefix or "[0:v][1:v]") + (
        "vmaf_cuda=log_fmt=json:log_path=%s:precision=max%s,metadata=print:file=%s"
        % (log, options, meta))
    _, err, _ = r.ffmpeg_run(r.inputs(dis, ref, hw) + ["-an", "-lavfi", graph, "-f", "null", "-"])
    if expect_in_log and expect_in_log not in err:
        raise TestFailure("expected '%s' in the log:\n%s" % (expect_in_log, tail(err)))
    golden, pooled = read_golden(r.path(golden_rel))
    meta_frames = read_metadata(meta)
    if output_frame_count(err) != len(golden):
        raise TestFailure("%s output frames, expected %d" % (output_frame_count(err), len(golden)))
    pts = [p for p, _ in meta_frames]
    if len(set(pts)) != len(pts):
        raise TestFailure("duplicate output pts")
    compared = compare_frames("metadata", metadata_features(meta_frames), golden, REQUIRED, "score")
    compare_frames("json log", json_features(log), golden, REQUIRED, "vmaf")
    printed = vmaf_score_line(err)
    expected = "%f" % float(pooled["mean"])
    if printed != expected:
        raise TestFailure("VMAF score: printed %s, golden mean %s" % (printed, expected))
    return "%d frames, %d features + vmaf exact; VMAF score: %s" % (
        len(golden), len(compared), printed)


def t_cpu_bbb(r):
    return bitexact_case(r, "cpu_bbb", BBB_DIS, BBB_REF, BBB_GOLDEN, options=":backend=cpu",
                         expect_in_log="cpu backend")


def t_cpu_hevc10(r):
    return bitexact_case(r, "cpu_hevc10", HEVC_DIS, HEVC_REF, HEVC_GOLDEN, options=":backend=cpu")


def t_cpu_hevc10_p010(r):
    # P010 keeps the 10 bits in the high bits of each word (shift 6)
    return bitexact_case(r, "cpu_hevc10_p010", HEVC_DIS, HEVC_REF, HEVC_GOLDEN,
                         filter_prefix="[0:v]format=p010le[d];[1:v]format=p010le[r];[d][r]",
                         options=":backend=cpu")


def t_cpu_nv12_gray(r):
    # the chroma layouts of software frames: interleaved UV (nv12, chroma_step 2), whose
    # luma is converted exactly, so the luma features stay golden; and 4:0:0 (gray: no
    # chroma), whose conversion changes luma (range), so only that it is scored
    nv12 = bitexact_case(r, "cpu_nv12", BBB_DIS, BBB_REF, BBB_GOLDEN,
                         filter_prefix="[0:v]format=nv12[d];[1:v]format=nv12[r];[d][r]",
                         options=":backend=cpu", expect_in_log="8-bit, 4:2:0;")
    graph = "[0:v]format=gray[d];[1:v]format=gray[r];[d][r]vmaf_cuda=backend=cpu"
    _, err, _ = r.ffmpeg_run(r.inputs(BBB_DIS, BBB_REF) + ["-an", "-lavfi", graph, "-f", "null", "-"])
    if "8-bit, 4:0:0;" not in err:
        raise TestFailure("gray input: no '8-bit, 4:0:0;' in the banner:\n" + tail(err))
    return "nv12: %s; gray: VMAF score %s" % (nv12, vmaf_score_line(err))


def t_cpu_bootstrap_metadata(r, backend="cpu", hw=False):
    """A bootstrap collection beside a plain model: lavfi.vmaf.score is the first model's,
    lavfi.vmaf.score.<model> the two models' scores, the collection's members, bagging,
    stddev and interval ride as lavfi.vmaf.<name>; all equal to libvmaf's own log."""
    name = "bootstrap_" + backend + ("_hw" if hw else "")
    meta = r.tmp(name + ".meta")
    graph = ("[0:v][1:v]vmaf_cuda=backend=%s:model=version=vmaf_v0.6.1|version=vmaf_b_v0.6.3,"
             "metadata=print:file=%s" % (backend, meta))
    r.ffmpeg_run(r.inputs(BBB_DIS, BBB_REF, hw) + ["-an", "-frames:v", "20", "-lavfi", graph,
                                                    "-f", "null", "-"])
    frames = metadata_features(read_metadata(meta))
    with open(r.path("golden/libvmaf/bbb_854x480_120f_8bit.vmaf_b_v0.6.3.json")) as f:
        gold = json.load(f)["frames"]
    if len(frames) < 19:
        raise TestFailure("%d frames with metadata" % len(frames))
    for i, fr in enumerate(frames[:19]):  # the 20th is the (cut) stream's last
        g = gold[i]["metrics"]
        want = {"score.vmaf_b_v0.6.3": g["vmaf_b_v0.6.3"],
                "vmaf_b_v0.6.3_bagging": g["vmaf_b_v0.6.3_bagging"],
                "vmaf_b_v0.6.3_ci_p95_lo": g["vmaf_b_v0.6.3_ci_p95_lo"],
                "vmaf_b_v0.6.3_ci_p95_hi": g["vmaf_b_v0.6.3_ci_p95_hi"],
                "vmaf_b_v0.6.3_0001": g["vmaf_b_v0.6.3_0001"]}
        for k, v in want.items():
            if k not in fr or float(fr[k]) != float(v):
                raise TestFailure("frame %d: lavfi.vmaf.%s = %s, libvmaf %r" % (i, k, fr.get(k), v))
        if fr.get("score") != fr.get("score.vmaf") or "score.vmaf_b_v0.6.3_ci_p95_hi" in fr:
            raise TestFailure("frame %d: model score keys %s" % (i, sorted(k for k in fr if k.startswith("score"))))
    return "19 frames: model scores and the collection's outputs equal libvmaf's log"


def t_gpu_bootstrap_metadata(r):
    return t_cpu_bootstrap_metadata(r, "cuda", True)


def t_cpu_two_models(r, backend="cpu", hw=False):
    name = "two_models_" + backend + ("_hw" if hw else "")
    meta, log = r.tmp(name + ".meta"), r.tmp(name + ".json")
    graph = ("[0:v][1:v]vmaf_cuda=backend=%s:model=version=vmaf_v0.6.1|version=vmaf_v0.6.1neg:"
             "log_fmt=json:log_path=%s:precision=max,metadata=print:file=%s" % (backend, log, meta))
    _, err, _ = r.ffmpeg_run(r.inputs(BBB_DIS, BBB_REF, hw) + ["-an", "-lavfi", graph, "-f", "null", "-"])
    golden, pooled = read_golden(r.path(BBB_GOLDEN))
    golden_neg, _ = read_golden(r.path(BBB_NEG_GOLDEN))
    frames = metadata_features(read_metadata(meta))
    if not frames:
        raise TestFailure("no frames")
    other = sorted(k for k in frames[0] if k.startswith("score.") and k != "score.vmaf")
    if "score.vmaf" not in frames[0] or len(other) != 1:
        raise TestFailure("expected lavfi.vmaf.score.vmaf and one other score key, got %s"
                          % sorted(k for k in frames[0] if k.startswith("score")))
    neg_key = other[0]
    for i, fr in enumerate(frames):
        if fr.get("score") != fr.get("score.vmaf"):
            raise TestFailure("frame %d: lavfi.vmaf.score %s != lavfi.vmaf.score.vmaf %s"
                              % (i, fr.get("score"), fr.get("score.vmaf")))
    compare_frames("metadata (v0.6.1)", frames, golden, REQUIRED, "score.vmaf")
    compare_frames("metadata (neg)", frames, golden_neg, REQUIRED_NEG, neg_key)
    log_frames = json_features(log)
    neg_log_key = neg_key[len("score."):]
    compare_frames("json log (v0.6.1)", log_frames, golden, REQUIRED, "vmaf")
    compare_frames("json log (neg)", log_frames, golden_neg, REQUIRED_NEG, neg_log_key)
    _, pooled_neg = read_golden(r.path(BBB_NEG_GOLDEN))
    printed = [l.split("VMAF score: ", 1)[1].strip() for l in err.splitlines() if "VMAF score: " in l]
    expected = ["%f" % float(pooled["mean"]), "%f" % float(pooled_neg["mean"])]
    if printed != expected:
        raise TestFailure("VMAF score lines %s, golden means of the two models %s"
                          % (printed, expected))
    return "vmaf and %s exact in metadata and log; VMAF score: %s" % (neg_key, ", ".join(printed))


def raw_hash(r, args):
    _, _, out = r.ffmpeg_run(args + ["-an", "-c:v", "rawvideo", "-f", "rawvideo", "-"],
                             stdout=subprocess.PIPE)
    return hashlib.sha256(out).hexdigest(), len(out)


def t_cpu_passthrough(r):
    plain = raw_hash(r, ["-i", r.path(BBB_DIS)])
    filtered = raw_hash(r, r.inputs(BBB_DIS, BBB_REF) +
                        ["-lavfi", "[0:v][1:v]vmaf_cuda=backend=cpu"])
    if plain != filtered:
        raise TestFailure("output pixels differ from the main input: %s vs %s" % (plain, filtered))
    if plain[1] != NB_FRAMES * 854 * 480 * 3 // 2:
        raise TestFailure("unexpected output size %d" % plain[1])
    return "%d output frames identical to the main input" % NB_FRAMES


def t_cpu_log_formats(r):
    done = []
    for fmt in ("xml", "csv", "sub", "json"):
        log = r.tmp("fmt." + fmt)
        if os.path.exists(log):
            os.unlink(log)
        graph = "[0:v]trim=end_frame=5[d];[1:v]trim=end_frame=5[r];[d][r]" \
            "vmaf_cuda=backend=cpu:log_fmt=%s:log_path=%s" % (fmt, log)
        r.ffmpeg_run(r.inputs(BBB_DIS, BBB_REF) + ["-an", "-lavfi", graph, "-f", "null", "-"])
        if not os.path.exists(log) or os.path.getsize(log) == 0:
            raise TestFailure("log_fmt=%s wrote no file" % fmt)
        done.append("%s %d B" % (fmt, os.path.getsize(log)))
    return ", ".join(done)


def t_cpu_subsample(r):
    meta = r.tmp("subsample.meta")
    graph = "[0:v][1:v]vmaf_cuda=backend=cpu:n_subsample=4,metadata=print:file=%s" % meta
    _, err, _ = r.ffmpeg_run(r.inputs(BBB_DIS, BBB_REF) +
                             ["-an", "-lavfi", graph, "-f", "null", "-"])
    out = output_frame_count(err)
    if out != NB_FRAMES:
        raise TestFailure("%s output frames, expected %d" % (out, NB_FRAMES))
    # metadata=print prints only frames that carry metadata: the scored ones
    frames = read_metadata(meta)
    scored = [int(p) // 512 for p, kv in frames if "lavfi.vmaf.score" in kv]
    if scored != list(range(0, NB_FRAMES, 4)):
        raise TestFailure("scored frames %s, expected every 4th" % scored[:10])
    return "%d frames out, %d scored" % (out, len(scored))


def error_case(r, graph, expected, hw=False, dis=BBB_DIS, ref=BBB_REF):
    rc, err, _ = r.ffmpeg_run(r.inputs(dis, ref, hw) + ["-an", "-lavfi", graph, "-f", "null", "-"],
                              expect_ok=False)
    if rc == 0:
        raise TestFailure("ffmpeg succeeded; expected an error with '%s'" % expected)
    if expected not in err:
        raise TestFailure("exit code %d but no '%s' in:\n%s" % (rc, expected, tail(err)))
    line = next(l for l in err.splitlines() if expected in l)
    return "exit %d: %s" % (rc, line.strip())


def t_err_size(r):
    return error_case(r, "[0:v]scale=640:360[d];[d][1:v]vmaf_cuda=backend=cpu", "input sizes differ")


def t_err_option(r):
    return error_case(r, "[0:v][1:v]vmaf_cuda=backend=cpu:no_such_option=1", "Option not found")


def t_err_model(r):
    return error_case(r, "[0:v][1:v]vmaf_cuda=backend=cpu:model=version=no_such_model",
                      "cannot open the VMAF session")


def t_err_model_file(r):
    return error_case(r, "[0:v][1:v]vmaf_cuda=backend=cpu:model=path=%s"
                      % r.tmp("missing_model.json"), "cannot open the VMAF session")


def t_err_log_fmt(r):
    return error_case(r, "[0:v][1:v]vmaf_cuda=backend=cpu:log_fmt=yaml", "log_fmt 'yaml'")


def t_err_log_path(r):
    return error_case(r, "[0:v][1:v]vmaf_cuda=backend=cpu:log_path=%s"
                      % r.tmp("no_such_dir/log.xml"), "cannot write the log \"%s\": No such "
                      "file or directory" % r.tmp("no_such_dir/log.xml"))


def t_err_tiny(r):
    return error_case(r, "[0:v]scale=16:16[d];[1:v]scale=16:16[f];[d][f]vmaf_cuda=backend=cpu",
                      "too small")


def t_err_no_device(r):
    if has_cuda_device():
        raise parity_cases.Skip("a device exists: backend=cuda is valid here")
    return error_case(r, "[0:v][1:v]vmaf_cuda=backend=cuda", "cannot open the VMAF session")


# GPU suite

def t_gpu_bbb_nvdec(r):
    return bitexact_case(r, "gpu_bbb_nvdec", BBB_DIS, BBB_REF, BBB_GOLDEN, hw=True,
                         expect_in_log="cuda backend, CUDA frames")


def t_gpu_hevc10_nvdec(r):
    return bitexact_case(r, "gpu_hevc10_nvdec", HEVC_DIS, HEVC_REF, HEVC_GOLDEN, hw=True,
                         expect_in_log="cuda backend, CUDA frames")


def t_gpu_bbb_upload(r):
    return bitexact_case(r, "gpu_bbb_upload", BBB_DIS, BBB_REF, BBB_GOLDEN,
                         options=":backend=cuda", expect_in_log="cuda backend, software frames")


def t_gpu_hevc10_upload_p010(r):
    return bitexact_case(r, "gpu_hevc10_upload_p010", HEVC_DIS, HEVC_REF, HEVC_GOLDEN,
                         filter_prefix="[0:v]format=p010le[d];[1:v]format=p010le[r];[d][r]",
                         options=":backend=cuda")


def t_gpu_err_two_contexts(r):
    # each hwupload_cuda instance creates its own CUDA context: a device pointer of one
    # context is not valid in the other
    return error_case(r, "[0:v]hwupload_cuda[d];[1:v]hwupload_cuda[r];[d][r]vmaf_cuda",
                      "different CUDA contexts")


def t_gpu_two_models(r):
    return t_cpu_two_models(r, backend="auto", hw=True)


def t_gpu_err_mixed(r):
    # CUDA and software frames meet in the format negotiation (one list for both inputs,
    # as libvmaf's): FFmpeg cannot convert one into the other there
    return error_case(r, "[1:v]hwdownload,format=nv12[r];[0:v][r]vmaf_cuda",
                      "Impossible to convert between the formats", hw=True)


def t_gpu_err_cpu_backend(r):
    return error_case(r, "[0:v][1:v]vmaf_cuda=backend=cpu", "backend=cpu cannot read CUDA frames",
                      hw=True)


def t_gpu_err_depth(r):
    return error_case(r, "[0:v][1:v]vmaf_cuda", "scale_cuda=format=", hw=True,
                      dis=BBB_DIS, ref=HEVC_REF)


def t_gpu_cuda_device(r):
    # CUDA frames are scored on their own device: naming it works, naming another fails
    ok = bitexact_case(r, "gpu_bbb_nvdec_dev0", BBB_DIS, BBB_REF, BBB_GOLDEN, hw=True,
                       options=":cuda_device=0", expect_in_log="CUDA kernels: sm_")
    other = error_case(r, "[0:v][1:v]vmaf_cuda=cuda_device=1",
                       "cuda_device=1 names another device than the CUDA frames' (device 0 (",
                       hw=True)
    return "cuda_device=0: %s; cuda_device=1: %s" % (ok, other)


def t_gpu_err_no_such_device(r):
    return error_case(r, "[0:v][1:v]vmaf_cuda=backend=cuda:cuda_device=63",
                      "cuda_device=63: no such CUDA device (this machine has ")


def t_gpu_nv12_vs_yuv420p(r):
    # CUDA frames of two layouts with one luma (nv12 from NVDEC, yuv420p from scale_cuda)
    return bitexact_case(r, "gpu_nv12_vs_yuv420p", BBB_DIS, BBB_REF, BBB_GOLDEN, hw=True,
                         filter_prefix="[1:v]scale_cuda=format=yuv420p[r];[0:v][r]")


def t_gpu_subsample_nvdec(r):
    meta = r.tmp("gpu_subsample.meta")
    graph = "[0:v][1:v]vmaf_cuda=n_subsample=4,metadata=print:file=%s" % meta
    _, err, _ = r.ffmpeg_run(r.inputs(BBB_DIS, BBB_REF, hw=True) +
                             ["-an", "-lavfi", graph, "-f", "null", "-"])
    golden, _ = read_golden(r.path(BBB_GOLDEN))
    frames = [(int(p) // 512, kv) for p, kv in read_metadata(meta) if "lavfi.vmaf.score" in kv]
    if [k for k, _ in frames] != list(range(0, NB_FRAMES, 4)) or output_frame_count(err) != NB_FRAMES:
        raise TestFailure("scored frames %s, %s out" % ([k for k, _ in frames][:10],
                                                         output_frame_count(err)))
    for k, kv in frames:
        check_equal("frame %d vmaf" % k, kv["lavfi.vmaf.score"], golden[k]["vmaf"])
    return "%d of %d NVDEC frames scored, exact" % (len(frames), NB_FRAMES)


parity_cases.TestFailure = TestFailure
outputs_cases.TestFailure = TestFailure
parity_cases.BBB = (BBB_DIS, BBB_REF)


def parity(case, hw=False):
    """A test of parity_cases.py (clips made with the system ffmpeg; SKIP without it)."""
    def t(r):
        if not hasattr(r, "clips"):
            r.clips = parity_cases.Clips(r, r.clip_ffmpeg)
        return case(r, r.clips, hw=hw)
    t.__name__ = "t_%s%s" % ("gpu_" if hw else "", case.__name__[len("case_"):])
    return t


PARITY_CPU = [parity_cases.case_aligned, parity_cases.case_main_shorter,
              parity_cases.case_ref_shorter, parity_cases.case_copyts_offset,
              parity_cases.case_vfr_drop, parity_cases.case_rates, parity_cases.case_timebases,
              parity_cases.case_formats, parity_cases.case_frames_limit,
              parity_cases.case_no_frames, parity_cases.case_log_file, parity_cases.case_vflip,
              parity_cases.case_model_default_opts, parity_cases.case_log_key_order,
              parity_cases.case_start_warnings, parity_cases.case_threads,
              parity_cases.case_ref_no_frames, parity_cases.case_subframe_offset,
              parity_cases.case_ts_reset] + outputs_cases.CPU_CASES + live_cases.CPU_CASES + \
             resize_cases.CPU_CASES + metrics_cases.CPU_CASES + sync_cases.CPU_CASES
# NVDEC frames: the pairing does not depend on the frames' memory, the limits do
PARITY_GPU = [parity_cases.case_aligned, parity_cases.case_main_shorter,
              parity_cases.case_rates, parity_cases.case_timebases, parity_cases.case_ts_reset,
              parity_cases.case_frames_limit, parity_cases.case_no_frames,
              parity_cases.case_log_key_order, parity_cases.case_start_warnings] + outputs_cases.GPU_CASES + \
             live_cases.GPU_CASES + resize_cases.GPU_CASES + metrics_cases.GPU_CASES + \
             sync_cases.GPU_CASES

CPU_TESTS = [t_cpu_bbb, t_cpu_hevc10, t_cpu_hevc10_p010, t_cpu_nv12_gray, t_cpu_two_models,
             t_cpu_bootstrap_metadata,
             t_cpu_passthrough,
             t_cpu_log_formats, t_cpu_subsample, t_err_size,
             t_err_option, t_err_model, t_err_model_file, t_err_log_fmt, t_err_log_path,
             t_err_tiny, t_err_no_device] + [parity(c) for c in PARITY_CPU]
GPU_TESTS = [t_gpu_bbb_nvdec, t_gpu_hevc10_nvdec, t_gpu_bbb_upload, t_gpu_hevc10_upload_p010,
             t_gpu_two_models, t_gpu_bootstrap_metadata, t_gpu_err_two_contexts, t_gpu_err_mixed, t_gpu_err_cpu_backend,
             t_gpu_err_depth, t_gpu_nv12_vs_yuv420p, t_gpu_subsample_nvdec, t_gpu_cuda_device,
             t_gpu_err_no_such_device] + [parity(c, hw=True) for c in PARITY_GPU]


def has_cuda_device():
    if not os.path.exists("/dev/nvidia0") and not os.path.exists("/dev/nvidiactl"):
        return False
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            p = subprocess.run([smi, "-L"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               timeout=60)
            return p.returncode == 0 and b"GPU" in p.stdout
        except (OSError, subprocess.SubprocessError):
            return False
    return os.path.exists("/dev/nvidia0")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ffmpeg", required=True, help="the built ffmpeg binary")
    ap.add_argument("--shared", required=True, help="folder with media/ and golden/")
    ap.add_argument("--gpu", action="store_true", help="run the GPU suite")
    ap.add_argument("--only", action="append", default=[], help="run tests whose name contains this")
    ap.add_argument("--skip", action="append", default=[], help="leave out tests whose name contains this")
    ap.add_argument("--workdir", help="keep outputs here (default: a temporary folder)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print the ffmpeg commands")
    ap.add_argument("--clip-ffmpeg", default="ffmpeg",
                    help="the ffmpeg (with libx264) that makes the pairing test clips "
                         "(default: ffmpeg on PATH)")
    a = ap.parse_args()

    if not os.access(a.ffmpeg, os.X_OK):
        print("ffmpeg binary not found: %s" % a.ffmpeg)
        return 1
    if a.gpu and not has_cuda_device():
        print("SKIPPED: no CUDA device found")
        return SKIP_CODE
    if not os.path.isfile(os.path.join(a.shared, "golden", "cases.tsv")):
        print("shared folder \"%s\" not found (no golden/cases.tsv there): the filter suite "
              "scores its clips against the libvmaf v3.2.0 values in it. Put the project's "
              "shared/ folder beside the clone, or name its golden/ folder with meson configure "
              "BUILDDIR -Dgolden_dir=PATH" % a.shared)
        return 1
    for rel in (BBB_DIS, BBB_REF, BBB_GOLDEN):
        if not os.path.exists(os.path.join(a.shared, rel)):
            print("missing %s in %s" % (rel, a.shared))
            return 1

    workdir = a.workdir or tempfile.mkdtemp(prefix="vmaf_cuda_filter_")
    os.makedirs(workdir, exist_ok=True)
    r = Runner(os.path.abspath(a.ffmpeg), os.path.abspath(a.shared), workdir, a.verbose)
    r.clip_ffmpeg = a.clip_ffmpeg
    tests = GPU_TESTS if a.gpu else CPU_TESTS
    if a.only:
        tests = [t for t in tests if any(o in t.__name__ for o in a.only)]
    tests = [t for t in tests if not any(s in t.__name__ for s in a.skip)]
    return run_tests(r, tests, "", workdir, keep=bool(a.workdir))


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause-Patent
"""Writes the seed corpus of tests/fuzz/corpus/ (small files, committed): trimmed copies
of models/*.json (a few support vectors, collections of three entries) and variants of
them, tiny Y4M and raw YUV files, option strings, writer tables. Run from anywhere:
    python3 tests/fuzz/make_seeds.py
Inputs the fuzzers find go to a temporary folder (tools/fuzz.sh), not here."""
import glob
import json
import os
import random
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def put(harness, name, data):
    d = os.path.join(HERE, "corpus", harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def trim_model(md, n_sv):
    svm = md["model"]
    head, sv = svm.split("SV\n", 1)
    lines = sv.strip("\n").split("\n")[:n_sv]
    head = "\n".join("total_sv %d" % n_sv if l.startswith("total_sv") else l
                     for l in head.split("\n"))
    md["model"] = head + "SV\n" + "\n".join(lines) + "\n"
    return md


def compact(doc):
    return json.dumps(doc, separators=(",", ":"))


def models():
    for path in sorted(glob.glob(os.path.join(ROOT, "models", "*.json"))):
        stem = os.path.basename(path)[:-5]
        doc = json.load(open(path))
        if "model_dict" in doc:
            doc = {"model_dict": trim_model(doc["model_dict"], 4)}
        else:  # a bootstrap collection: "0" and two members
            doc = {k: {"model_dict": trim_model(doc[k]["model_dict"], 3)} for k in ("0", "1", "2")}
        put("model", stem + ".json", compact(doc))
    base = json.load(open(os.path.join(ROOT, "models", "vmaf_v0.6.1.json")))
    md = trim_model(base["model_dict"], 4)
    v = json.loads(json.dumps(md))
    v["score_transform"]["knots"] = [[0.0, 0.0], [50.0, 40.0], [100.0, 100.0]]
    v["score_transform"]["enabled"] = True
    put("model", "knots.json", compact({"model_dict": v}))
    v = json.loads(json.dumps(md))
    v["norm_type"] = "none"
    del v["slopes"], v["intercepts"]
    put("model", "norm_none.json", compact({"model_dict": v}))
    v = json.loads(json.dumps(md))
    v["feature_opts_dicts"] = [{"adm_enhn_gain_limit": 1.0}, {"motion_force_zero": True}, {},
                               {"vif_enhn_gain_limit": 1.2}]
    put("model", "opts.json", compact({"model_dict": v}))


def y4m(header, frame_bytes, frames=2, fmt=(0, 0, 0, 0)):
    body = b"".join(b"FRAME\n" + bytes((i * 7 + k) & 0xFF for i in range(frame_bytes))
                    for k in range(frames))
    return bytes(fmt) + header.encode() + b"\n" + body


def videos():
    put("video_reader", "420.y4m", y4m("YUV4MPEG2 W4 H2 F25:1 Ip A1:1 C420jpeg", 4 * 2 + 2 * 2))
    put("video_reader", "odd_422.y4m", y4m("YUV4MPEG2 W3 H3 F30000:1001 C422", 9 + 2 * 2 * 3))
    put("video_reader", "444p10.y4m", y4m("YUV4MPEG2 W2 H2 C444p10 XYSCSS=444P10", 2 * 4 * 3))
    put("video_reader", "mono16.y4m", y4m("YUV4MPEG2 W3 H1 Cmono16", 2 * 3))
    put("video_reader", "truncated.y4m", y4m("YUV4MPEG2 W4 H4 C420", 4 * 4 + 2 * 4)[:40])
    # raw: width 4, height 2, 4:2:0, 8 bits (fmt bytes), two frames of 12 bytes
    put("video_reader", "raw_420.yuv", bytes([4, 2, 0, 0]) + bytes(range(24)))
    # raw: 3x3 4:4:4 at 10 bits, one frame
    put("video_reader", "raw_444p10.yuv", bytes([3, 3, 2, 2]) + bytes(3 * 3 * 3 * 2))


def options():
    seeds = {
        "default": (b"\x0f\x0f\x00", "", ""),
        "two_models_psnr": (b"\x10\x08\x00", "version=vmaf_v0.6.1|version=vmaf_v0.6.1neg:name=neg",
                            "name=psnr:enable_chroma=true:enable_apsnr=true"),
        "b_v063": (b"\x05\x05\x01", "version=vmaf_b_v0.6.3", ""),
        "float_ssim": (b"\x1f\x1f\x10", "version=vmaf_float_v0.6.1:enable_transform",
                       "name=float_ssim:enable_lcs=true:scale=1"),
        "overload_ciede": (b"\x00\x00\x02", "version=vmaf_4k_v0.6.1:adm.adm_enhn_gain_limit=1.1:disable_clip",
                           "name=ciede"),
        "no_prediction": (b"\x03\x04\x20", "", "name=motion:motion_force_zero=true|name=vif:vif_enhn_gain_limit=1.5"),
        "escapes": (b"\x07\x09\x44", "version=vmaf_v0.6.1:name=a\\:b\\|c", "name=adm:adm_csf_mode=1"),
        "ms_ssim_small": (b"\x1f\x1f\x00", "", "name=float_ms_ssim"),
        "cambi_small": (b"\x01\x01\x00", "version=vmaf_v1.0.16_3d0h", "name=cambi:cambi_high_res_speedup=1080"),
        "float_features": (b"\x02\x03\x02", "version=vmaf_v0.6.1",
                           "name=float_adm|name=float_vif|name=float_motion"),
    }
    for name, (head, models, features) in seeds.items():
        put("options", name, head + models.encode() + b"\n" + features.encode())


def writers():
    rnd = random.Random(1)
    for i in range(8):
        kind = i % 2  # even: format_log, odd: live
        body = bytes(rnd.randrange(256) for _ in range(60 + 20 * i))
        head = bytes([kind, i % 4, 1 if i < 4 else 7])  # format or window flags, precision
        put("writers", "seed%d" % i, head + body)
    # a JSON log at precision max with special values
    vals = b"".join(b"\xa0" + struct.pack("<d", v) for v in (float("nan"), float("inf"), 5e-324, 1e308))
    put("writers", "json_max", bytes([0, 1, 1, 0, 10, 5, 5, 2, 1, 0, 0]) + bytes([64]) + vals * 3)


if __name__ == "__main__":
    models()
    videos()
    options()
    writers()

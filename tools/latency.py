#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause-Patent
"""How long after its input a frame's scores appear, with real-time (-re) input.

    latency.py --ffmpeg PATH --dis D.mp4 --ref R.mp4 [--gpu] [--frames N]

Both inputs are read at their frame rate (-re); vmaf_cuda writes its NDJSON log to a
named pipe, read here as lines arrive. Frame k's input is read at the earliest at
t0 + pts_time(k) - pts_time(0), t0 the start of ffmpeg; its latency is the arrival of its line minus
that, so it includes ffmpeg's start-up (probing, decoder and CUDA initialisation) as a
constant. Prints min, median, p95 and max in ms and frames.
--gpu decodes with NVDEC into CUDA frames (backend=cuda); else software decode, CPU backend.
Standard library only.
"""
import argparse, json, os, subprocess, sys, tempfile, threading, time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ffmpeg", required=True)
    ap.add_argument("--dis", required=True)
    ap.add_argument("--ref", required=True)
    ap.add_argument("--gpu", action="store_true")
    ap.add_argument("--frames", type=int, default=240)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="vmaf_cuda_latency_")
    fifo = os.path.join(tmp, "scores.ndjson")
    os.mkfifo(fifo)
    dec = ["-hwaccel", "cuda", "-hwaccel_output_format", "cuda"] if a.gpu else []
    backend = "cuda" if a.gpu else "cpu"
    # -re without its initial burst (FFmpeg 7+: half a second read ahead by default)
    re = ["-re", "-readrate_initial_burst", "0"]
    cmd = [a.ffmpeg, "-hide_banner", "-nostdin", "-nostats"] + re + dec + ["-i", a.dis] + re + dec + \
        ["-i", a.ref, "-frames:v", str(a.frames), "-lavfi",
         "[0:v][1:v]vmaf_cuda=backend=%s:log_fmt=ndjson:log_path=%s" % (backend, fifo), "-f", "null", "-"]
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    arrivals = []
    err = []
    t = threading.Thread(target=lambda: err.append(p.stderr.read()))
    t.start()
    with open(fifo) as f:
        for line in f:
            now = time.monotonic()
            d = json.loads(line)
            if "frameNum" in d and d.get("pts_time") is not None:
                arrivals.append((d["frameNum"], float(d["pts_time"]), now))
    p.wait()
    t.join()
    if p.returncode != 0:
        sys.stderr.write(err[0][-3000:])
        return 1
    if len(arrivals) < 10:
        print("too few frames: %d" % len(arrivals))
        return 1
    fps = (len(arrivals) - 1) / (arrivals[-1][1] - arrivals[0][1]) if arrivals[-1][1] > arrivals[0][1] else 25.0
    # pts_time counted from the first frame's (streams may start at a nonzero pts)
    p0 = arrivals[0][1]
    lat = sorted(now - (t0 + pts - p0) for _, pts, now in arrivals[:-1])  # the last waits for the flush
    med, p95 = lat[len(lat) // 2], lat[int(0.95 * (len(lat) - 1))]
    print("%s: %d frames at %.2f fps: scores after the input: min %.0f ms, median %.0f ms "
          "(%.2f frames), p95 %.0f ms, max %.0f ms" % (
              "NVDEC, cuda backend" if a.gpu else "software, cpu backend", len(arrivals), fps,
              lat[0] * 1000, med * 1000, med * fps, p95 * 1000, lat[-1] * 1000))
    return 0


if __name__ == "__main__":
    sys.exit(main())

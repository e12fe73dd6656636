# SPDX-License-Identifier: BSD-2-Clause-Patent
"""Progress of a local vmaf-cuda-batch run: titles done / running / failed / pending, the
frames scored per second (every rendition's frames: a ladder of 3 renditions at 100 frame
pairs/s scores 300 frames/s) and an ETA.

On a terminal one status line is redrawn every second (log lines print above it); otherwise
(a file, a pipe, a Slurm log) a line is printed at each update: every `interval` seconds
(VMAF_CUDA_BATCH_PROGRESS_INTERVAL, default 10) while something changed, and when a title
ends. The frames of a running title come from ffmpeg's -progress output (frame=N: frame
pairs of the ladder); the ETA is the work left (the titles not finished, each estimated at
the mean frames of the titles finished in this run, less what the running ones have done)
over the rate so far; before a title has finished it is unknown ("ETA ?")."""

import os
import sys
import threading
import time


def hms(seconds):
    s = int(round(seconds))
    return "%d:%02d:%02d" % (s // 3600, s % 3600 // 60, s % 60)


DEFAULT_INTERVAL = 10.0
MIN_INTERVAL = 0.1


def env_interval(warn=None):
    """VMAF_CUDA_BATCH_PROGRESS_INTERVAL in seconds: default 10; a value that is not a
    number above 0 is ignored with a warning (the default is used), one below 0.1 s is
    raised to 0.1 s (a shorter one would only busy the run)."""
    warn = warn or (lambda m: print("vmaf-cuda-batch: warning: " + m, file=sys.stderr, flush=True))
    env = os.environ.get("VMAF_CUDA_BATCH_PROGRESS_INTERVAL")
    if env is None or env.strip() == "":
        return DEFAULT_INTERVAL
    try:
        v = float(env)
    except ValueError:
        v = None
    if v is None or v != v or v <= 0 or v == float("inf"):
        warn("VMAF_CUDA_BATCH_PROGRESS_INTERVAL=%s is not a number of seconds above 0: using %g" % (
            env, DEFAULT_INTERVAL))
        return DEFAULT_INTERVAL
    if v < MIN_INTERVAL:
        warn("VMAF_CUDA_BATCH_PROGRESS_INTERVAL=%s is below %g s: using %g" % (env, MIN_INTERVAL, MIN_INTERVAL))
        return MIN_INTERVAL
    return v


class Progress:
    def __init__(self, total, stream=None, interval=None, clock=time.monotonic):
        self.total, self.clock = total, clock
        self.stream = stream or sys.stdout
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.interval = interval if interval is not None else 1.0 if self.tty else env_interval()
        self.lock = threading.Lock()
        self.start_t = clock()
        self.done = self.failed = self.skipped = 0
        self.running = {}        # index -> [renditions, frame pairs so far]
        self.scored = 0          # frames of finished titles scored in this run (x renditions)
        self.finished_work = []  # frames x renditions of each title finished in this run
        self.shown = self.shown_key = None
        self.stop_ev = threading.Event()
        self.thread = None

    # ---- events (from the worker threads)
    def started(self, index, renditions):
        with self.lock:
            self.running[index] = [renditions, 0]

    def frames(self, index, n):
        with self.lock:
            if index in self.running:
                self.running[index][1] = max(self.running[index][1], n)

    def finished(self, index, status, frames=0, skipped=False):
        """frames: every rendition's frames together (0 when skipped)."""
        with self.lock:
            self.running.pop(index, None)
            if skipped:
                self.skipped += 1
            elif status == "failed":
                self.failed += 1
            else:
                self.done += 1
            if not skipped and frames:
                self.scored += frames
                self.finished_work.append(frames)
        self.update(force=True)

    # ---- the line
    def line(self):
        with self.lock:
            now = self.clock()
            live = sum(r * n for r, n in self.running.values())
            work = self.scored + live
            el = max(1e-9, now - self.start_t)
            fps = work / el
            pending = self.total - self.done - self.failed - self.skipped - len(self.running)
            eta = "?"
            if self.finished_work and fps > 0:
                mean = sum(self.finished_work) / len(self.finished_work)
                left = pending * mean + sum(max(0.0, mean - r * n) for r, n in self.running.values())
                eta = hms(left / fps)
            done = self.done + self.skipped
            return ("progress: %d/%d titles done%s, %d running, %d failed, %d pending; %d frames in %s, "
                    "%.1f frames/s; ETA %s" % (
                        done, self.total, " (%d skipped)" % self.skipped if self.skipped else "",
                        len(self.running), self.failed, pending, work, hms(el), fps, eta))

    def update(self, force=False):
        text = self.line()
        with self.lock:
            key = text.split(" in ")[0]  # the counts and the frames, not the clock
            if self.tty:
                self.stream.write("\r" + text + "\033[K")
                self.stream.flush()
            elif force or key != self.shown_key:
                self.stream.write("vmaf-cuda-batch: " + text + "\n")
                self.stream.flush()
            self.shown, self.shown_key = text, key

    def clear(self):
        """Before another line is printed on the terminal: the status line goes."""
        if self.tty:
            with self.lock:
                self.stream.write("\r\033[K")
                self.stream.flush()

    def redraw(self):
        if self.tty and self.shown is not None:
            with self.lock:
                self.stream.write("\r" + self.shown + "\033[K")
                self.stream.flush()

    # ---- the ticker
    def start(self):
        def tick():
            while not self.stop_ev.wait(self.interval):
                self.update()
        self.thread = threading.Thread(target=tick, daemon=True)
        self.thread.start()

    def stop(self):
        self.stop_ev.set()
        if self.thread:
            self.thread.join()
        if self.tty:
            with self.lock:
                self.stream.write("\n")
                self.stream.flush()

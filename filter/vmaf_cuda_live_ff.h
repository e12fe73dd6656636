/* SPDX-License-Identifier: BSD-2-Clause-Patent */
/**
 * @file
 * The FFmpeg side of vmaf_cuda's live QA, whose windows, NDJSON stream, SEI payload and
 * score lines the library computes (vmaf_cuda.h, vmaf_cuda_live_*()): option checks with
 * messages naming the filter's options, the live state from the output link, and moving
 * a frame's results onto the AVFrame (the library's metadata: lavfi.vmaf.score...,
 * lavfi.vmaf.FEATURE, lavfi.vmaf.window.*; SEI user data unregistered side data).
 *
 * Copied into FFmpeg's libavfilter/ with vf_vmaf_cuda.c by patches/build-ffmpeg.sh.
 */
#ifndef VMAF_CUDA_LIVE_FF_H
#define VMAF_CUDA_LIVE_FF_H

#include <vmaf_cuda.h>

#include "libavutil/frame.h"

#include "avfilter.h"

/** The filter options live QA reads. */
typedef struct VmafCudaLiveOptions {
    const char *window;     /**< window= (NULL: none) */
    int window_log;         /**< window_log= */
    int sei;                /**< sei= */
    int ndjson;             /**< log_fmt=ndjson */
    const char *log_path;   /**< log_path= */
    int precision;          /**< precision= (-1: max) */
    int pool;               /**< pool=, a VmafCudaPool */
} VmafCudaLiveOptions;

/** At init: checks window=, window_log= and log_fmt=ndjson's log_path; logs what is wrong. */
int ff_vmaf_cuda_live_check(AVFilterContext *ctx, const VmafCudaLiveOptions *o);

/** At config_output, once the session is open: *out = the live state (every scored
 *  frame's metadata: its scores, lavfi.vmaf.score..., and the live options' output). */
int ff_vmaf_cuda_live_open(AVFilterContext *ctx, const VmafCudaLiveOptions *o,
                           VmafCudaSession *vs, AVFilterLink *outlink, VmafCudaLive **out);

/** For each scored frame going out: its metadata (scores, window values), NDJSON
 *  line(s) and SEI side data. Returns 0; 1 when the NDJSON output failed just now (logged once as an error:
 *  the frames go on, and the run must end with an error status); an AVERROR when out
 *  of memory. */
int ff_vmaf_cuda_live_attach(AVFilterContext *ctx, VmafCudaLive *l, AVFrame *frame,
                             const VmafCudaFrameScores *fs);

/** Marks `frame` with an event to tell (lavfi.vmaf.event, .event.input, .event.message,
 *  the message without its trailing newline); ff_vmaf_cuda_live_event() writes it into the
 *  NDJSON stream after the frame's lines. AVERROR(ENOMEM) on failure. */
int ff_vmaf_cuda_live_mark_event(AVFrame *frame, const char *event, const char *input,
                                 const char *message);

/** A frame going out with lavfi.vmaf.event (the live rules' notice at it, see
 *  ff_vmaf_cuda_pairing_event()): its event line in the NDJSON stream. Returns 0, or 1
 *  when the stream failed just now (logged as an error). */
int ff_vmaf_cuda_live_event(AVFilterContext *ctx, VmafCudaLive *l, const AVFrame *frame);

/** At the end: the library's score lines (vmaf_cuda_summary(): "VMAF score: X" per model,
 *  then "NAME: B, ci.p95: [LO, HI], stddev: S" per bootstrap collection, pooled with
 *  `pool`), each logged at AV_LOG_INFO with `prefix` (e.g. "rendition 2: "). Returns 0,
 *  or a VmafCudaStatus (< 0; nothing logged: the message is vmaf_cuda_error_message(vs),
 *  VMAF_CUDA_ENOMEM when the text could not be allocated). */
int ff_vmaf_cuda_live_summary(AVFilterContext *ctx, VmafCudaSession *vs, int pool,
                              const char *prefix);

#endif /* VMAF_CUDA_LIVE_FF_H */

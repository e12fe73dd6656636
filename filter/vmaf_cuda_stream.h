/* SPDX-License-Identifier: BSD-2-Clause-Patent */
/**
 * @file
 * One scored output of vmaf_cuda (a rendition's, or the two-input filter's): its
 * session, the main frames waiting for their scores and their lavfi.vmaf.* metadata, the
 * CUDA frames kept while the library reads them, what went downstream (-frames:v), the
 * flush, and at the end the log and the "VMAF score:" lines. Used by the pipeline
 * (vmaf_cuda_pipeline.c); it knows nothing of the filter's context.
 *
 * Copied into FFmpeg's libavfilter/ with vf_vmaf_cuda.c by patches/build-ffmpeg.sh.
 */
#ifndef VMAF_CUDA_STREAM_H
#define VMAF_CUDA_STREAM_H

#include <stdint.h>

#include <vmaf_cuda.h>

#include "libavutil/fifo.h"
#include "libavutil/frame.h"

#include "avfilter.h"

#include "vmaf_cuda_align_ff.h"
#include "vmaf_cuda_live_ff.h"

/** Metadata of every output frame the library scores (or n_subsample skips): its frame
 *  number in the session, the log's frameNum. fftools (patches/ffmpeg-*-integration.patch)
 *  reads it on the frames its consumers take, to report where an output was closed. */
#define VMAF_CUDA_FRAME_KEY "lavfi.vmaf.frame"

/** What shapes every output's results (the filter's options, one set for all). */
typedef struct VmafCudaOutputOptions {
    enum VmafCudaLogFormat log_format;
    int ndjson;                  /**< log_fmt=ndjson: log_path is the streaming log */
    int precision;               /**< digits in the log (-1: max) */
    enum VmafCudaPool pool;      /**< pool= of the score lines */
    int keep_history;            /**< the sessions keep every frame (settings.keep_history) */
    int hw_frames;               /**< the frames are CUDA frames (set at configuration) */
} VmafCudaOutputOptions;

/** One scored output: its session, the main frames waiting for their scores (output
 *  order = queue order), and what went downstream (for -frames:v). */
typedef struct VmafCudaStream {
    const VmafCudaOutputOptions *opt;
    VmafCudaSession *session;    /**< a ladder rendition's session (the ladder owns it) */
    unsigned nb_models;          /**< models of the session; their scores are the last names */
    unsigned out;                /**< its output pad */
    char prefix[32];             /**< starts its messages: "" or "rendition 2: " */
    char *log_path;              /**< its log (NULL: none) */
    VmafCudaLive *live;          /**< windows, NDJSON, SEI; NULL when none is asked for */
    VmafCudaSyncAuto *sync_auto; /**< sync=auto's collapse watch (NULL: none) */
    AVFifo *pending;             /**< PendingFrame, oldest first */
    AVFifo *kept;                /**< KeptFrames, oldest first (CUDA frames) */
    AVFifo *out_index;           /**< library index (-1: none) of each frame sent downstream
                                      that may still wait in the output link */
    int64_t nb_sent;             /**< frame pairs sent to the library */
    int64_t nb_scored;           /**< frames whose scores came back */
    int64_t nb_out_indexed;      /**< frames with a library index sent downstream */
    int64_t t_first_send;        /**< av_gettime_relative() of the first send */
    int64_t t_flush;
    int flushed;
    /** Frames (library indices 0..taken-1) the consumer of its output took before it
     *  closed the output (ffmpeg's -frames:v), as fftools reports it (the filter's
     *  "output_closed" command); -1: not reported (the output was not closed early, or a
     *  consumer that does not report). */
    int64_t taken;
    int output_error;            /**< an AVERROR when output it owes was lost (NDJSON) */
    int results_done;            /**< its log and score lines were written (or failed) */
    int results_ret;             /**< and what that returned */
} VmafCudaStream;

/** A library status as an AVERROR. */
int ff_vmaf_cuda_status_to_averror(int status);
/** Logs a failed library call of `st` (its prefix, its session's message); returns an
 *  AVERROR. */
int ff_vmaf_cuda_stream_error(AVFilterContext *ctx, const VmafCudaStream *st,
                              const char *call, int status);
/** Logs "PREFIX WHAT: no log file 'PATH' written, no VMAF score" at `level` (PATH: NULL
 *  when none was asked for); with `remove`, removes an older regular file there, saying
 *  so, so that it is not taken for this run's log. */
void ff_vmaf_cuda_no_log(AVFilterContext *ctx, int level, const char *prefix, const char *what,
                         const char *path, int remove);

/** An output link as its main input (size, time base, aspect ratio, frame rate, the
 *  CUDA frames context). */
int ff_vmaf_cuda_config_outlink(AVFilterLink *outlink, AVFilterLink *mainlink);
int ff_vmaf_cuda_stream_init(VmafCudaStream *st, const VmafCudaOutputOptions *opt);
/** Frees the frames and queues of `st` (its live state and log_path are the caller's). */
void ff_vmaf_cuda_stream_uninit(VmafCudaStream *st);
/** Queues a main frame (and the reference frame kept alive with it, or NULL) for output;
 *  index -1: not sent; scored: the library returns its scores. Frees them on error. */
int ff_vmaf_cuda_stream_queue(VmafCudaStream *st, AVFrame *dist, AVFrame *ref,
                              int64_t index, int scored);
/** Takes the final scores from the session, sends the frames up to them downstream
 *  (`all`: every queued frame, after the flush). */
int ff_vmaf_cuda_stream_drain(AVFilterContext *ctx, VmafCudaStream *st, int all);
/** Flushes the session (once). */
int ff_vmaf_cuda_stream_flush(AVFilterContext *ctx, VmafCudaStream *st);
/** Forgets the frames the next filter has taken from the output link. */
void ff_vmaf_cuda_stream_update_out_index(AVFilterContext *ctx, VmafCudaStream *st);
/** At the end, once: flush, collect the remaining scores, write the log and the
 *  "VMAF score:" lines (covering the frames that were output). Returns 0, or an
 *  AVERROR when output was lost (the log or the NDJSON stream could not be written, no
 *  scored frame was output). */
int ff_vmaf_cuda_stream_results(AVFilterContext *ctx, VmafCudaStream *st);
/** fftools' "output_closed" report: the consumer behind the sink named `sink` took the
 *  frames up to library index `last` (-1: none) and closed its output. Records it in
 *  st->taken when `st`'s output reaches that sink through filters of one output each;
 *  returns 1 then, else 0. */
int ff_vmaf_cuda_stream_output_closed(AVFilterContext *ctx, VmafCudaStream *st,
                                      const char *sink, int64_t last);

#endif /* VMAF_CUDA_STREAM_H */

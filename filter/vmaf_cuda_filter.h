/* SPDX-License-Identifier: BSD-2-Clause-Patent */
/**
 * @file
 * What vf_vmaf_cuda.c (the filter, its options, the two-input case) and
 * vmaf_cuda_ladder.c (renditions=N > 1: N distorted renditions against one reference)
 * share: the filter's context, one scored output (VmafCudaStream: a session, the frames
 * waiting for their scores, what went out, the log and the "VMAF score:" lines;
 * vmaf_cuda_stream.c) and the helpers both use.
 *
 * Copied into FFmpeg's libavfilter/ with vf_vmaf_cuda.c by patches/build-ffmpeg.sh.
 */
#ifndef VMAF_CUDA_FILTER_H
#define VMAF_CUDA_FILTER_H

#include <stdint.h>

#include <vmaf_cuda.h>

#include "libavutil/buffer.h"
#include "libavutil/fifo.h"
#include "libavutil/frame.h"
#include "libavutil/pixfmt.h"

#include "avfilter.h"
#include "framesync.h"

#include "vmaf_cuda_live_ff.h"
#include "vmaf_cuda_pairing.h"
#include "vmaf_cuda_picture.h"

/** Metadata of every output frame the library scores (or n_subsample skips): its frame
 *  number in the session, the log's frameNum. fftools (patches/ffmpeg-*-integration.patch)
 *  reads it on the frames its consumers take, to report where an output was closed. */
#define VMAF_CUDA_FRAME_KEY "lavfi.vmaf.frame"

/** Most renditions of a ladder (vmaf_cuda_ladder_open() takes 1..64). */
#define VMAF_CUDA_MAX_RENDITIONS 64

/** One scored output: its session, the main frames waiting for their scores (output
 *  order = queue order), and what went downstream (for -frames:v). */
typedef struct VmafCudaStream {
    VmafCudaSession *session;    /**< the filter's own, or a ladder rendition's */
    unsigned out;                /**< its output pad */
    char prefix[32];             /**< starts its messages: "" or "rendition 2: " */
    char *log_path;              /**< its log (NULL: none) */
    VmafCudaLive *live;          /**< windows, NDJSON, SEI; NULL when none is asked for */
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
     *  "output_closed" command, patches/ffmpeg-*-integration.patch); -1: not reported (the
     *  output was not closed early, or a consumer that does not report). */
    int64_t taken;
    int output_error;            /**< an AVERROR when output it owes was lost (NDJSON) */
    int results_done;            /**< its log and score lines were written (or failed) */
    int results_ret;             /**< and what that returned */
} VmafCudaStream;

struct VmafCudaLadderState;

typedef struct VmafCudaContext {
    const AVClass *class;
    FFFrameSync fs;              /**< the two-input filter's; a ladder reads its options */

    /* options */
    char *model;
    char *feature;
    char *log_path;
    char *log_fmt;
    char *pool;
    int n_threads;
    int n_subsample;
    int prefetch;
    int precision;
    int backend;
    int cuda_device;
    char *window;                /**< live QA (vmaf_cuda_live.h): window=, window_log=, sei= */
    int window_log;
    int sei;
    int renditions;              /**< 1: main + reference; N > 1: a ladder (vmaf_cuda_ladder.c) */

    /* state */
    VmafCudaStream st;           /**< the two-input filter's output */
    AVBufferRef *hw_device;      /**< keeps FFmpeg's CUDA context alive until the session is closed */
    int hw_frames;               /**< inputs are CUDA frames */
    unsigned bpc, shift;         /**< bits per sample; main's sample shift (P010: 6) */
    VmafCudaLayout layout[2];    /**< main's, the reference's (CUDA layouts may differ) */
    int with_chroma;             /**< the pictures carry chroma (not with 4:0:0, nor when two
                                      CUDA layouts differ in subsampling) */
    char chroma_note[320];       /**< why chroma is not passed ("" when it is, or 4:0:0) */
    enum VmafCudaLogFormat log_format;
    enum VmafCudaPool pool_method;
    unsigned nb_models;          /**< models of the session; their scores are the last names */
    VmafCudaPlaneCopy copy[2];   /**< positive-pitch copies of flipped software planes */
    VmafCudaPairing pairing;
    int sdr_models;              /**< every model is built in (all are SDR models) */
    int eof_done;
    int ndjson;                  /**< log_fmt=ndjson: log_path is the streaming log */
    int keep_history;            /**< the session keeps every frame (settings.keep_history) */
    struct VmafCudaLadderState *ladder; /**< renditions > 1 */
} VmafCudaContext;

/* ---- vf_vmaf_cuda.c, for vmaf_cuda_ladder.c ---- */

int vmaf_cuda_ff_status_to_averror(int status);
/** Logs a failed library call of `st` (its prefix, its session's message); returns an
 *  AVERROR. */
int vmaf_cuda_ff_stream_error(AVFilterContext *ctx, const VmafCudaStream *st,
                              const char *call, int status);
/** "854x480 yuv420p" or "854x480 cuda(p010le)". */
void vmaf_cuda_ff_describe_link(AVFilterLink *link, char *buf, size_t size);
/** The format whose layout the frames of `link` have (sw_format for CUDA frames). */
enum AVPixelFormat vmaf_cuda_ff_layout_format(AVFilterLink *link);
/** The settings of the filter's options; width, height, bpc, chroma from the arguments.
 *  CUDA frames (`hwlink`: a link of them, else NULL): the CUDA context and stream of
 *  the link's frames, and s->hw_device referenced. */
int vmaf_cuda_ff_settings(AVFilterContext *ctx, AVFilterLink *hwlink, int width, int height,
                          unsigned bpc, enum VmafCudaChroma chroma, VmafCudaSettings *st);
/** The banner line ("vmaf_cuda 1.x: cpu backend, software frames, ..."). */
void vmaf_cuda_ff_banner(AVFilterContext *ctx, VmafCudaSession *vs, const VmafCudaSettings *st,
                         const char *extra);
/** Checks at init that `path` can be written (leaving no file behind). */
int vmaf_cuda_ff_check_log_path(AVFilterContext *ctx, const char *path);
/** No log is written to `path` (NULL: none asked for): removes an older regular file
 *  there, saying so, so that it is not taken for this run's log. */
void vmaf_cuda_ff_no_log(AVFilterContext *ctx, const char *prefix, const char *path);

/* ---- vmaf_cuda_stream.c: one scored output ---- */

/** An output link as its main input (size, time base, aspect ratio, frame rate, the
 *  CUDA frames context). */
int vmaf_cuda_ff_config_outlink(AVFilterLink *outlink, AVFilterLink *mainlink);
int vmaf_cuda_ff_stream_init(VmafCudaStream *st);
/** Frees the frames and queues of `st`, once its session is closed (st->session NULL;
 *  its live state and log_path are the caller's). */
void vmaf_cuda_ff_stream_uninit(VmafCudaStream *st);
/** Queues a main frame (and the reference frame kept alive with it, or NULL) for output;
 *  index -1: not sent; scored: the library returns its scores. Frees them on error. */
int vmaf_cuda_ff_stream_queue(VmafCudaStream *st, AVFrame *dist, AVFrame *ref,
                              int64_t index, int scored);
/** Takes the final scores from the session, sends the frames up to them downstream
 *  (`all`: every queued frame, after the flush). */
int vmaf_cuda_ff_stream_drain(AVFilterContext *ctx, VmafCudaStream *st, int all);
/** Flushes the session (once). */
int vmaf_cuda_ff_stream_flush(AVFilterContext *ctx, VmafCudaStream *st);
/** Forgets the frames the next filter has taken from the output link. */
void vmaf_cuda_ff_stream_update_out_index(AVFilterContext *ctx, VmafCudaStream *st);
/** At the end (fftools' "finish" command, else uninit), once: flush, collect the
 *  remaining scores, write the log and the "VMAF score:" lines (covering the frames
 *  that were output). Returns 0, or an AVERROR when output was lost (the log or the
 *  NDJSON stream could not be written, no scored frame was output). */
int vmaf_cuda_ff_stream_results(AVFilterContext *ctx, VmafCudaStream *st);
/** fftools' "output_closed" report: the consumer behind the sink named `sink` took the
 *  frames up to library index `last` (-1: none) and closed its output. Records it in
 *  st->taken when `st`'s output reaches that sink through filters of one output each;
 *  returns 1 then, else 0. */
int vmaf_cuda_ff_stream_output_closed(AVFilterContext *ctx, VmafCudaStream *st,
                                      const char *sink, int64_t last);

/* ---- vmaf_cuda_ladder.c: renditions=N > 1 ---- */

/** At init: the option checks, the pads (main0..mainN-1, reference; out0..outN-1). */
int vmaf_cuda_ladder_ff_init(AVFilterContext *ctx);
int vmaf_cuda_ladder_ff_activate(AVFilterContext *ctx);
/** fftools' "output_closed" report (see vmaf_cuda_ff_stream_output_closed()): the
 *  rendition whose output it is ends there. */
int vmaf_cuda_ladder_ff_output_closed(AVFilterContext *ctx, const char *sink, int64_t last);
/** Every rendition's log and score lines, in rendition order, once; the first error
 *  (a rendition with nothing scored, lost output). */
int vmaf_cuda_ladder_ff_results(AVFilterContext *ctx);
void vmaf_cuda_ladder_ff_uninit(AVFilterContext *ctx);

#endif /* VMAF_CUDA_FILTER_H */

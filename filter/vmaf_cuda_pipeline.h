/* SPDX-License-Identifier: BSD-2-Clause-Patent */
/**
 * @file
 * vmaf_cuda's one pipeline: N renditions (main0..mainN-1) against one reference, each
 * rendition a pairing, a send to the library's ladder and a scored output; the
 * two-input filter is a ladder of one. It is fed by FFmpeg's framesync for one rendition
 * (vf_vmaf_cuda.c) or by the ladder's copy of framesync's rules (vmaf_cuda_sync.c) for
 * several; everything after the pairing is the same code:
 *
 *  - an event of rendition k (a main frame with the reference frame it is paired with,
 *    or none) is recorded: an unscored main frame goes to the output queue at once, a
 *    pair waits in ev_dist for its send;
 *  - a send carries one reference frame with the main frames of every rendition paired
 *    with it (vmaf_cuda_ladder_send()), once no other rendition can still pair one with
 *    it (a ladder of one sends at once), and drains the scores that came back;
 *  - a rendition whose pairing ends is flushed and its queue goes out; one with nothing
 *    scored is an error for it (reported at the end, so the others' frames all go out);
 *  - at the end (fftools' "finish", else uninit) each rendition writes its log and score
 *    lines, in rendition order.
 *
 * Setup (the links' checks, the session, the outputs) is in vmaf_cuda_setup.c.
 * The arrows go one way: vf_vmaf_cuda.c -> this pipeline (+ setup) -> the scored output
 * (vmaf_cuda_stream.c), the ladder's pairing (vmaf_cuda_sync.c) -> the pairing watch,
 * the pictures, live QA (vmaf_cuda_pairing.c, vmaf_cuda_picture.c, vmaf_cuda_live_ff.c).
 *
 * Copied into FFmpeg's libavfilter/ with vf_vmaf_cuda.c by patches/build-ffmpeg.sh.
 */
#ifndef VMAF_CUDA_PIPELINE_H
#define VMAF_CUDA_PIPELINE_H

#include <stdint.h>

#include <vmaf_cuda.h>

#include "libavutil/buffer.h"
#include "libavutil/fifo.h"
#include "libavutil/frame.h"

#include "avfilter.h"
#include "framesync.h"

#include "vmaf_cuda_align_ff.h"
#include "vmaf_cuda_pairing.h"
#include "vmaf_cuda_picture.h"
#include "vmaf_cuda_stream.h"
#include "vmaf_cuda_sync.h"

/** The filter's options the pipeline reads (the strings are the filter's). */
typedef struct VmafCudaPipelineOptions {
    const char *model, *feature, *log_path, *window;
    int window_log, sei;
    int metrics_port;            /**< dashboards: the port (0: none) and address */
    const char *metrics_address;
    int n_threads, n_subsample, prefetch, backend, cuda_device;
    const FFFrameSync *sync;     /**< framesync's options: shortest, repeatlast, ... */
} VmafCudaPipelineOptions;

/** One rendition: main k against the reference, and output k. */
typedef struct VmafCudaRendition {
    VmafCudaStream st;
    VmafCudaPairWatch pairing;
    VmafCudaLayout layout;       /**< main k's */
    VmafCudaPlaneCopy copy;
    AVFrame *ev_dist;            /**< the main frame of its waiting event (NULL: none) */
    int64_t ev_ref;              /**< that event's reference frame (send numbering) */
    int stepped;                 /**< had its event in this activate call (ladders) */
    int ended;                   /**< its pairing ended (its output has its EOF) */
    int done;                    /**< ended, or its output was closed downstream */
} VmafCudaRendition;

typedef struct VmafCudaPipeline {
    unsigned n;
    VmafCudaPipelineOptions opt;
    VmafCudaOutputOptions out;
    VmafCudaRendition *r;
    VmafCudaSync sync;           /**< the ladder's pairing (n > 1) */
    VmafCudaLadder *lad;
    VmafCudaLayout ref_layout;
    VmafCudaPlaneCopy ref_copy;
    AVFifo *ref_kept;            /**< reference frames the library may still read (CUDA) */
    int64_t nb_sends;
    AVBufferRef *hw_device;      /**< keeps FFmpeg's CUDA context alive until the ladder is closed */
    unsigned bpc;
    int with_chroma;             /**< the pictures carry chroma (not with 4:0:0, nor when two
                                      CUDA layouts differ in subsampling) */
    char chroma_note[320];       /**< why chroma is not passed ("" when it is, or 4:0:0) */
    int failed;                  /**< AVERROR of a rendition that scored nothing, for the end */
    int finished;
    int results_done;
    double input_timeout;        /**< live rules (input_timeout=, seconds; 0: off) */
    unsigned seg_w, seg_h;       /**< the picture size of the library's current segment */
    char seg_event[256];         /**< a new segment to tell with the next send ("": none) */
    struct VmafCudaParked *adopted; /**< what the old graph's instance parked (fftools
                                         re-created the graph), until the configuration */
    AVBufferRef *hw_device_prev; /**< the CUDA context of the parked ladder's sessions */
    VmafCudaMetricsServer *metrics; /**< the metrics_port server (NULL: none) */
    VmafCudaSyncAuto sync_auto;  /**< sync=auto (the two-input filter; align NULL: off) */
    int segments;                /**< segments started after the first */
    int reopen;                  /**< the next send starts a segment (a re-created graph) */
    int recreations;             /**< graphs re-created by FFmpeg before this one */
    int recreated_pairs;         /**< this graph had a pair */
    int64_t recreated_dropped, recreated_unscored; /**< main frames lost to re-creations */
} VmafCudaPipeline;

typedef struct VmafCudaParked VmafCudaParked;

/* ---- vmaf_cuda_setup.c ---- */

/** At init, with p->opt and p->out set: the renditions, their log paths (%d for a
 *  ladder) checked now. */
int ff_vmaf_cuda_pipeline_init(AVFilterContext *ctx, VmafCudaPipeline *p, unsigned n);
void ff_vmaf_cuda_pipeline_uninit(VmafCudaPipeline *p);
/** The reference pad's config_props (the last input): every main compared with the
 *  reference, every mismatch reported before any frame. */
int ff_vmaf_cuda_pipeline_config_inputs(AVFilterContext *ctx, VmafCudaPipeline *p);
/** Output k's config_props: its link, its pairing watch (framesync `fs`: FFmpeg's for a
 *  ladder of one, else configured here), the ladder's session at the first, live QA. */
int ff_vmaf_cuda_pipeline_config_output(AVFilterContext *ctx, VmafCudaPipeline *p, unsigned k,
                                        AVFilterLink *outlink, const FFFrameSync *fs);

/** The library's settings from the filter's options for the reference's frames, at
 *  `width` x `height`. */
int ff_vmaf_cuda_pipeline_settings(AVFilterContext *ctx, VmafCudaPipeline *p, unsigned width,
                                   unsigned height, VmafCudaSettings *st);

/* ---- vmaf_cuda_segment.c: the picture size changes mid-stream ---- */

/** Before send `seq` (reference frame `ref`, times in `tb`): every main frame paired with
 *  it must have its size and (software frames) each input its pixel format, else an
 *  error naming the frame; a new size starts the library's next segment. */
int ff_vmaf_cuda_segment_check(AVFilterContext *ctx, VmafCudaPipeline *p, int64_t seq,
                               const AVFrame *ref, AVRational tb);
/** fftools' "reconfigure KEY": the graph is re-created; the segment ends, its frames go
 *  out, and the state is parked under KEY and the instance's name. */
int ff_vmaf_cuda_segment_park(AVFilterContext *ctx, VmafCudaPipeline *p, const char *key);
/** fftools' "adopt KEY" (before the configuration): takes what was parked, if anything. */
void ff_vmaf_cuda_segment_adopt(AVFilterContext *ctx, VmafCudaPipeline *p, const char *key);
/** At the configuration, with p->adopted: goes on with the parked ladder at settings `st`. */
int ff_vmaf_cuda_segment_resume(AVFilterContext *ctx, VmafCudaPipeline *p,
                                const VmafCudaSettings *st);
/** Whether `path` is the log of a parked stream (its NDJSON file is open in this process,
 *  and the new graph's instance goes on writing it). */
int ff_vmaf_cuda_segment_parked_path(const char *path);
/** At the end: after re-created graphs that lost frames, an error saying how many. */
int ff_vmaf_cuda_segment_results(AVFilterContext *ctx, VmafCudaPipeline *p);
/** At the end, with p->adopted still set (the configuration failed): writes it here. */
void ff_vmaf_cuda_segment_unadopted(VmafCudaPipeline *p);

/** Dashboards: serves the renditions' live metrics on `address`:`port` (port 0: nothing;
 *  the library's vmaf_cuda_metrics_serve()), once every rendition's live state is open;
 *  an error naming the address when it cannot listen. */
int ff_vmaf_cuda_metrics_start(AVFilterContext *ctx, VmafCudaPipeline *p, const char *address,
                               int port);
/** Stops the server (before the live states it reads are closed or moved). */
void ff_vmaf_cuda_metrics_stop(VmafCudaPipeline *p);

/* ---- vmaf_cuda_pipeline.c ---- */

/** A framesync event of rendition k (`fs` its framesync): `dist` (taken) with `ref`
 *  (not taken; NULL: none, the main frame goes out unscored), which is reference frame
 *  `seq` (send numbering). */
int ff_vmaf_cuda_pipeline_event(AVFilterContext *ctx, VmafCudaPipeline *p, unsigned k,
                                const FFFrameSync *fs, AVFrame *dist, AVFrame *ref, int64_t seq);
/** Sends reference frame `seq` (`ref`) with the waiting events paired with it. */
int ff_vmaf_cuda_pipeline_send(AVFilterContext *ctx, VmafCudaPipeline *p, int64_t seq,
                               AVFrame *ref);
/** Rendition k's pairing ended (`eof_pts`: its output's EOF, AV_NOPTS_VALUE: none set
 *  here): flush, its queued frames go out. */
int ff_vmaf_cuda_pipeline_end(AVFilterContext *ctx, VmafCudaPipeline *p, unsigned k);
/** The ladder's activate (n > 1). */
int ff_vmaf_cuda_pipeline_activate_ladder(AVFilterContext *ctx, VmafCudaPipeline *p);
/** fftools' "output_closed" (see ff_vmaf_cuda_stream_output_closed()). */
int ff_vmaf_cuda_pipeline_output_closed(AVFilterContext *ctx, VmafCudaPipeline *p,
                                        const char *sink, int64_t last);
/** Sends every event still waiting for its send (a ladder's, before a park). */
int ff_vmaf_cuda_pipeline_send_waiting(AVFilterContext *ctx, VmafCudaPipeline *p);
/** Frees every reference frame kept for the library (after a flush). */
void ff_vmaf_cuda_pipeline_release_refs(VmafCudaPipeline *p);
/** The end for the user, once: every rendition's pairing warnings, log and score lines in
 *  rendition order; the first error (lost output, a rendition with nothing scored). */
int ff_vmaf_cuda_pipeline_results(AVFilterContext *ctx, VmafCudaPipeline *p);

#endif /* VMAF_CUDA_PIPELINE_H */

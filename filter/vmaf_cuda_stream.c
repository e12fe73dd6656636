/* SPDX-License-Identifier: BSD-2-Clause-Patent */
/**
 * @file
 * One scored output of vmaf_cuda: see vmaf_cuda_stream.h.
 */

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <vmaf_cuda.h>

#include "libavutil/dict.h"
#include "libavutil/fifo.h"
#include "libavutil/frame.h"
#include "libavutil/mem.h"
#include "libavutil/time.h"

#include "avfilter.h"
#include "filters.h"

#include "vmaf_cuda_stream.h"

/** A main frame waiting for its scores (output order = queue order). */
typedef struct PendingFrame {
    AVFrame *dist;   /**< the main frame, passed through when its scores are known */
    AVFrame *ref;    /**< reference kept alive while the library reads it (CUDA frames) */
    int64_t index;   /**< library frame index, or -1: not sent (passed through as is) */
    int scored;      /**< the library returns its scores (not skipped by n_subsample) */
} PendingFrame;

/** CUDA frames that went out before the library finished reading them (n_subsample). */
typedef struct KeptFrames {
    AVFrame *dist, *ref;
    int64_t index;
} KeptFrames;

int ff_vmaf_cuda_status_to_averror(int status)
{
    switch (status) {
    case VMAF_CUDA_OK:      return 0;
    case VMAF_CUDA_EINVAL:
    case VMAF_CUDA_EMODEL:  return AVERROR(EINVAL);
    case VMAF_CUDA_ENOMEM:  return AVERROR(ENOMEM);
    case VMAF_CUDA_ENODEV:  return AVERROR(ENODEV);
    case VMAF_CUDA_EIO:     return AVERROR(EIO);
    default:                return AVERROR_EXTERNAL;
    }
}

int ff_vmaf_cuda_stream_error(AVFilterContext *ctx, const VmafCudaStream *st,
                              const char *call, int status)
{
    const char *msg = st->session ? vmaf_cuda_error_message(st->session) : "";
    av_log(ctx, AV_LOG_ERROR, "%s%s failed: %s%s%s\n", st->prefix, call,
           vmaf_cuda_strerror(status), msg && *msg ? ": " : "", msg ? msg : "");
    return ff_vmaf_cuda_status_to_averror(status);
}

void ff_vmaf_cuda_no_log(AVFilterContext *ctx, int level, const char *prefix, const char *what,
                         const char *path, int remove)
{
    char err[1024];
    int rc;

    av_log(ctx, level, "%s%s: no log%s%s%s written, no VMAF score\n", prefix, what,
           path ? " file '" : "", path ? path : "", path ? "'" : "");
    rc = path && remove ? vmaf_cuda_remove_stale_log(path, err, sizeof(err)) : 0;

    if (rc == 1)
        av_log(ctx, AV_LOG_WARNING, "%sremoved the older file at '%s', so that it is not "
               "taken for this run's log\n", prefix, path);
    else if (rc == 2)
        av_log(ctx, AV_LOG_WARNING, "%s'%s' is a link to an older file, left as it is: it "
               "does not hold this run's log\n", prefix, path);
    else if (rc < 0)
        av_log(ctx, AV_LOG_ERROR, "%s%s\n", prefix, err);
}

int ff_vmaf_cuda_config_outlink(AVFilterLink *outlink, AVFilterLink *mainlink)
{
    FilterLink *il = ff_filter_link(mainlink), *ol = ff_filter_link(outlink);

    outlink->w = mainlink->w;
    outlink->h = mainlink->h;
    outlink->time_base = mainlink->time_base;
    outlink->sample_aspect_ratio = mainlink->sample_aspect_ratio;
    ol->frame_rate = il->frame_rate;
    if (il->hw_frames_ctx) {
        av_buffer_unref(&ol->hw_frames_ctx);
        ol->hw_frames_ctx = av_buffer_ref(il->hw_frames_ctx);
        if (!ol->hw_frames_ctx)
            return AVERROR(ENOMEM);
    }
    return 0;
}

static void free_pending(PendingFrame *p)
{
    av_frame_free(&p->dist);
    av_frame_free(&p->ref);
}

/** Frees the CUDA frames kept for frames the library no longer reads (every one: `all`). */
static void release_kept(VmafCudaStream *st, int all)
{
    int64_t released = st->session ? vmaf_cuda_pictures_released(st->session) : INT64_MAX;
    KeptFrames k;

    while (av_fifo_peek(st->kept, &k, 1, 0) >= 0 && (all || k.index < released)) {
        av_fifo_drain2(st->kept, 1);
        av_frame_free(&k.dist);
        av_frame_free(&k.ref);
    }
}

int ff_vmaf_cuda_stream_init(VmafCudaStream *st, const VmafCudaOutputOptions *opt)
{
    st->opt = opt;
    st->taken = -1;
    st->pending = av_fifo_alloc2(8, sizeof(PendingFrame), AV_FIFO_FLAG_AUTO_GROW);
    st->kept = av_fifo_alloc2(8, sizeof(KeptFrames), AV_FIFO_FLAG_AUTO_GROW);
    st->out_index = av_fifo_alloc2(8, sizeof(int64_t), AV_FIFO_FLAG_AUTO_GROW);
    if (!st->pending || !st->kept || !st->out_index)
        return AVERROR(ENOMEM);
    return 0;
}

void ff_vmaf_cuda_stream_uninit(VmafCudaStream *st)
{
    PendingFrame p;

    while (st->pending && av_fifo_read(st->pending, &p, 1) >= 0)
        free_pending(&p);
    av_fifo_freep2(&st->pending);
    if (st->kept)
        release_kept(st, 1);
    av_fifo_freep2(&st->kept);
    av_fifo_freep2(&st->out_index);
}

/** Forgets the frames sent downstream that the next filter has taken from the output
 *  link: what is left in out_index is still queued there (not output, if it stays). */
void ff_vmaf_cuda_stream_update_out_index(AVFilterContext *ctx, VmafCudaStream *st)
{
    AVFilterLink *outlink = st->out < ctx->nb_outputs ? ctx->outputs[st->out] : NULL;
    size_t queued = outlink ? ff_inlink_queued_frames(outlink) : 0;

    if (st->out_index && av_fifo_can_read(st->out_index) > queued)
        av_fifo_drain2(st->out_index, av_fifo_can_read(st->out_index) - queued);
}

/** Sends the oldest queued frame downstream. */
static int emit_head(AVFilterContext *ctx, VmafCudaStream *st, const VmafCudaFrameScores *scores)
{
    PendingFrame p;
    AVFrame *out;
    int ret;

    if (av_fifo_read(st->pending, &p, 1) < 0)
        return AVERROR_BUG;
    out = p.dist;
    p.dist = NULL;
    if (st->opt->hw_frames && p.index >= 0 && st->session &&
        p.index >= (int64_t)vmaf_cuda_pictures_released(st->session)) {
        /* a CUDA frame going out before the library has read it (one that n_subsample
         * skips): keep references until it has */
        KeptFrames k = { .dist = av_frame_clone(out), .ref = p.ref, .index = p.index };
        p.ref = NULL;
        if (!k.dist || (ret = av_fifo_write(st->kept, &k, 1)) < 0) {
            av_frame_free(&k.dist);
            av_frame_free(&k.ref);
            av_frame_free(&out);
            return AVERROR(ENOMEM);
        }
    }
    free_pending(&p);
    if (p.index >= 0) {
        /* the frame's number in the session (the log's frameNum): fftools reports the
         * last one its consumer took when it closes the output (-frames:v) */
        char num[24];
        snprintf(num, sizeof(num), "%"PRId64, p.index);
        av_dict_set(&out->metadata, VMAF_CUDA_FRAME_KEY, num, 0);
    }
    if (scores && st->sync_auto && st->nb_models && scores->count >= st->nb_models &&
        (ret = ff_vmaf_cuda_sync_auto_score(ctx, st->sync_auto, out, ctx->outputs[st->out]->time_base,
                                            scores->values[scores->count - st->nb_models])) < 0) {
        av_frame_free(&out);
        return ret;
    }
    if (scores && st->live) {  /* the scores, windows, SEI: the library's (live_ff.h) */
        ret = ff_vmaf_cuda_live_attach(ctx, st->live, out, scores);
        if (ret < 0) {
            av_frame_free(&out);
            return ret;
        }
        if (ret > 0 && !st->output_error)
            st->output_error = AVERROR(EIO); /* the NDJSON stream lost lines: said there */
    }
    /* what the live rules told at this frame, after its own lines (a file cut back to
     * the frames output keeps it with them) */
    if (st->live && (ret = ff_vmaf_cuda_live_event(ctx, st->live, out)) > 0 && !st->output_error)
        st->output_error = AVERROR(EIO);
    if ((ret = av_fifo_write(st->out_index, &p.index, 1)) < 0) {
        av_frame_free(&out);
        return ret;
    }
    if (p.index >= 0)
        st->nb_out_indexed++;
    return ff_filter_frame(ctx->outputs[st->out], out);
}

/**
 * Takes every frame whose scores are final from the library and sends the queued
 * frames up to it downstream. Frames that get no scores (not sent, or skipped by
 * n_subsample) go out as soon as they are at the head of the queue. After the
 * flush, `all` empties the queue.
 */
int ff_vmaf_cuda_stream_drain(AVFilterContext *ctx, VmafCudaStream *st, int all)
{
    VmafCudaFrameScores fs;
    PendingFrame head;
    int rc = VMAF_CUDA_EAGAIN, ret;

    while (st->session && (rc = vmaf_cuda_receive(st->session, &fs)) == VMAF_CUDA_OK) {
        st->nb_scored++;
        while (av_fifo_peek(st->pending, &head, 1, 0) >= 0 && head.index < (int64_t)fs.index) {
            if ((ret = emit_head(ctx, st, NULL)) < 0)
                return ret;
        }
        if (av_fifo_peek(st->pending, &head, 1, 0) >= 0 && head.index == (int64_t)fs.index) {
            if ((ret = emit_head(ctx, st, &fs)) < 0)
                return ret;
        }
    }
    if (st->session && rc != VMAF_CUDA_EAGAIN && rc != VMAF_CUDA_EOF)
        return ff_vmaf_cuda_stream_error(ctx, st, "vmaf_cuda_receive", rc);

    while (av_fifo_peek(st->pending, &head, 1, 0) >= 0 &&
           (head.index < 0 || !head.scored || all)) {
        if ((ret = emit_head(ctx, st, NULL)) < 0)
            return ret;
    }
    release_kept(st, 0);
    return 0;
}

int ff_vmaf_cuda_stream_queue(VmafCudaStream *st, AVFrame *dist, AVFrame *ref, int64_t index,
                              int scored)
{
    PendingFrame p = { .dist = dist, .ref = ref, .index = index, .scored = scored };
    int ret = av_fifo_write(st->pending, &p, 1);
    if (ret < 0)
        free_pending(&p);
    return ret;
}

int ff_vmaf_cuda_stream_flush(AVFilterContext *ctx, VmafCudaStream *st)
{
    int rc;

    if (st->session && !st->flushed) {
        st->flushed = 1;
        st->t_flush = av_gettime_relative();
        if ((rc = vmaf_cuda_flush(st->session)) < 0)
            return ff_vmaf_cuda_stream_error(ctx, st, "vmaf_cuda_flush", rc);
    }
    return 0;
}

/** Frames with a library index that went downstream and were taken from the link. */
static int64_t frames_output(AVFilterContext *ctx, VmafCudaStream *st)
{
    int64_t n = st->nb_out_indexed, idx;

    ff_vmaf_cuda_stream_update_out_index(ctx, st);
    for (size_t i = 0; st->out_index && av_fifo_peek(st->out_index, &idx, 1, i) >= 0; i++)
        n -= idx >= 0;
    return n;
}

/** Whether the frames of output `out` reach the filter named `sink` through filters
 *  with one output each (format, scale, hwdownload, ... that fftools or the user put
 *  between this filter and ffmpeg's buffersink). */
static int output_reaches(AVFilterContext *ctx, unsigned out, const char *sink)
{
    AVFilterLink *link = out < ctx->nb_outputs ? ctx->outputs[out] : NULL;

    for (int depth = 0; link && depth < 1024; depth++) {
        AVFilterContext *dst = link->dst;
        if (!dst)
            return 0;
        if (dst->name && !strcmp(dst->name, sink))
            return 1;
        if (dst->nb_outputs != 1)
            return 0;
        link = dst->outputs[0];
    }
    return 0;
}

int ff_vmaf_cuda_stream_output_closed(AVFilterContext *ctx, VmafCudaStream *st,
                                      const char *sink, int64_t last)
{
    if (!output_reaches(ctx, st->out, sink))
        return 0;
    st->taken = last + 1;
    av_log(ctx, AV_LOG_VERBOSE, "%sthe output was closed after frame %"PRId64" of the "
           "session\n", st->prefix, last);
    return 1;
}

/** The log file, then one "VMAF score:" line per model (as FFmpeg's libvmaf filter).
 *  Returns an AVERROR when output was lost. */
static int write_results(AVFilterContext *ctx, VmafCudaStream *st)
{
    const VmafCudaOutputOptions *o = st->opt;
    const char *pre = st->prefix;
    int64_t output = st->taken >= 0 ? FFMIN(st->taken, st->nb_sent) : frames_output(ctx, st);
    int ret = st->output_error;
    int rc;

    if (output < st->nb_sent) {
        /* the output was closed early (-frames:v N): log and pool what went out */
        av_log(ctx, AV_LOG_VERBOSE, "%s%"PRId64" of the %"PRId64" frames sent were output: "
               "the log and the score cover those\n", pre, output, st->nb_sent);
        rc = vmaf_cuda_truncate(st->session, (unsigned)output);
        if (rc == VMAF_CUDA_ESTATE && !o->keep_history) {
            /* no history (no whole-stream log, no percentile pool): the session cannot
             * drop the frames that were not output */
            av_log(ctx, AV_LOG_WARNING, "%sthe VMAF score covers all %"PRId64" frames scored, "
                   "%"PRId64" more than were output (without a whole-stream log the session "
                   "keeps no per-frame history to drop them from)\n", pre, st->nb_sent,
                   st->nb_sent - output);
            output = st->nb_sent;
        } else if (rc < 0) {
            return ff_vmaf_cuda_stream_error(ctx, st, "vmaf_cuda_truncate", rc);
        }
        /* the NDJSON lines of the frames not output: cut from a file; a stream keeps them */
        if ((rc = st->live ? vmaf_cuda_live_truncate(st->live, (uint64_t)output) : 0))
            av_log(ctx, rc > 0 ? AV_LOG_WARNING : AV_LOG_ERROR, "%s%s\n", pre,
                   vmaf_cuda_live_error(st->live));
        if (rc < 0 && !ret)
            ret = AVERROR(EIO);
    }
    if (!output) {
        ff_vmaf_cuda_no_log(ctx, AV_LOG_ERROR, pre, "no scored frame was output", st->log_path,
                            !o->ndjson);
        return AVERROR(ENODATA);
    }
    /* the NDJSON pooled line's frames: those scored among the frames output (n_subsample) */
    if (st->live && vmaf_cuda_live_finish(st->live, st->session,
                                          vmaf_cuda_frames_scored(st->session, output)) < 0) {
        av_log(ctx, AV_LOG_ERROR, "%s%s\n", pre, vmaf_cuda_live_error(st->live));
        ret = ret ? ret : AVERROR(EIO);
    }
    if (st->log_path && !o->ndjson) {
        double secs = (st->t_flush - st->t_first_send) / 1e6;
        double fps = secs > 0 ? st->nb_sent / secs : NAN;
        rc = vmaf_cuda_write_log(st->session, st->log_path, o->log_format, o->precision, fps);
        if (rc < 0) {
            int err = ff_vmaf_cuda_stream_error(ctx, st, "vmaf_cuda_write_log", rc);
            ret = ret ? ret : err;
        }
    }
    /* "VMAF score: X" per model and the bootstrap lines: the library's text */
    if (st->nb_models && (rc = ff_vmaf_cuda_live_summary(ctx, st->session, o->pool, pre)) < 0) {
        int err = ff_vmaf_cuda_stream_error(ctx, st, "vmaf_cuda_summary", rc);
        ret = ret ? ret : err;
    }
    return ret;
}

int ff_vmaf_cuda_stream_results(AVFilterContext *ctx, VmafCudaStream *st)
{
    int rc;

    if (st->results_done)
        return st->results_ret;
    if (!st->session || !st->nb_sent)
        return 0;
    st->results_done = 1;
    if (!st->flushed) {
        st->flushed = 1;
        st->t_flush = av_gettime_relative();
        if ((rc = vmaf_cuda_flush(st->session)) < 0)
            return st->results_ret = ff_vmaf_cuda_stream_error(ctx, st, "vmaf_cuda_flush", rc);
    }
    /* collect the remaining scores (the output is closed: nothing is sent on) */
    for (;;) {
        VmafCudaFrameScores fs;
        rc = vmaf_cuda_receive(st->session, &fs);
        if (rc != VMAF_CUDA_OK)
            break;
        st->nb_scored++;
    }
    if (rc != VMAF_CUDA_EOF && rc != VMAF_CUDA_EAGAIN)
        return st->results_ret = ff_vmaf_cuda_stream_error(ctx, st, "vmaf_cuda_receive", rc);
    return st->results_ret = write_results(ctx, st);
}

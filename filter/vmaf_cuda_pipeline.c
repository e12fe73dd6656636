/* SPDX-License-Identifier: BSD-2-Clause-Patent */
/**
 * @file
 * vmaf_cuda's pipeline after the pairing: events, sends, ends, results; and the
 * ladder's activate. See vmaf_cuda_pipeline.h.
 *
 * Copied into FFmpeg's libavfilter/ with vf_vmaf_cuda.c by patches/build-ffmpeg.sh.
 */

#include <inttypes.h>
#include <string.h>

#include <vmaf_cuda.h>

#include "libavutil/avstring.h"
#include "libavutil/log.h"
#include "libavutil/mathematics.h"
#include "libavutil/time.h"

#include "filters.h"

#include "vmaf_cuda_pipeline.h"

/** Bit k set: rendition k is done (its output gets nothing more). */
static uint64_t done_mask(const VmafCudaPipeline *p)
{
    uint64_t m = 0;

    for (unsigned k = 0; k < p->n; k++)
        m |= (uint64_t)!!p->r[k].done << k;
    return m;
}

static void trim_reference(VmafCudaPipeline *p)
{
    if (p->n > 1)
        ff_vmaf_cuda_sync_trim(&p->sync, done_mask(p));
}

/** Frees the reference frames the library no longer reads (all: `all`). */
static void release_kept_refs(VmafCudaPipeline *p, int all)
{
    int64_t released = p->lad ? vmaf_cuda_ladder_pictures_released(p->lad) : INT64_MAX;
    int64_t first = p->nb_sends - (int64_t)av_fifo_can_read(p->ref_kept);
    AVFrame *frame;

    while ((all || first < released) && av_fifo_read(p->ref_kept, &frame, 1) >= 0) {
        av_frame_free(&frame);
        first++;
    }
}

int ff_vmaf_cuda_pipeline_event(AVFilterContext *ctx, VmafCudaPipeline *p, unsigned k,
                                const FFFrameSync *fs, AVFrame *dist, AVFrame *ref, int64_t seq)
{
    VmafCudaRendition *r = &p->r[k];
    int paired = ref && !r->st.flushed;
    int ret;

    if ((ret = ff_vmaf_cuda_sync_auto_mark(&p->sync_auto, dist, fs, &r->pairing, r->st.session,
                                           r->st.nb_sent)) < 0) {
        av_frame_free(&dist);
        return ret;
    }
    if ((ret = ff_vmaf_cuda_pairing_event(&r->pairing, ctx, fs, dist, paired ? ref : NULL,
                                          r->st.nb_sent, r->st.session)) < 0) {
        av_frame_free(&dist);
        return ret;
    }
    paired = ret; /* (the live rules may leave a paired frame unscored) */
    if (!paired) {
        const AVDictionaryEntry *why = av_dict_get(dist->metadata, "lavfi.vmaf.unscored", NULL, 0);
        if (p->recreations && !p->recreated_pairs)
            p->recreated_unscored++; /* (its reference frame was dropped with the old graph) */
        if (r->st.live) /* (counted for metrics_port) */
            vmaf_cuda_live_unscored(r->st.live, why ? why->value : r->pairing.ref_over ||
                                    r->st.flushed ? "reference_ended" : "no_reference");
        if ((ret = ff_vmaf_cuda_stream_queue(&r->st, dist, NULL, -1, 0)) < 0)
            return ret;
        /* past the reference's end (eof_action=pass, live rules): no frame will follow the
         * ones sent, so flush now rather than hold the rest of the main stream until its end */
        if (r->pairing.ref_over && r->st.nb_sent && !r->st.flushed) {
            if ((ret = ff_vmaf_cuda_stream_flush(ctx, &r->st)) < 0)
                return ret;
            return ff_vmaf_cuda_stream_drain(ctx, &r->st, 1);
        }
        return ff_vmaf_cuda_stream_drain(ctx, &r->st, 0);
    }
    r->ev_dist = dist;
    r->ev_ref = seq;
    return 0;
}

int ff_vmaf_cuda_pipeline_send(AVFilterContext *ctx, VmafCudaPipeline *p, int64_t seq,
                               AVFrame *ref)
{
    const VmafCudaPicture *dists[VMAF_CUDA_MAX_RENDITIONS] = { 0 };
    VmafCudaPicture pics[VMAF_CUDA_MAX_RENDITIONS], pic_ref;
    int ret, rc;

    /* a new picture size: the library's next segment (vmaf_cuda_segment.c) */
    if ((ret = ff_vmaf_cuda_segment_check(ctx, p, seq, ref, ctx->outputs[0]->time_base)) < 0) {
        for (unsigned k = 0; k < p->n; k++)
            if (p->r[k].ev_ref == seq)
                av_frame_free(&p->r[k].ev_dist);
        return ret;
    }
    for (unsigned k = 0; k < p->n; k++) {
        VmafCudaRendition *r = &p->r[k];
        if (!r->ev_dist || r->ev_ref != seq)
            continue;
        /* told with the segment's first frames (NDJSON event line, metadata); a notice
         * of the live rules on the same frame keeps its place */
        if (p->seg_event[0] && !av_dict_get(r->ev_dist->metadata, "lavfi.vmaf.event", NULL, 0) &&
            (ret = ff_vmaf_cuda_live_mark_event(r->ev_dist, "resized", "both", p->seg_event)) < 0)
            return ret;
        if ((ret = ff_vmaf_cuda_picture_fill(ctx, r->ev_dist, &r->layout, p->out.hw_frames,
                                          p->with_chroma, &r->copy, &pics[k])) < 0)
            return ret;
        dists[k] = &pics[k];
        if (!r->st.nb_sent)
            r->st.t_first_send = av_gettime_relative();
    }
    if ((ret = ff_vmaf_cuda_picture_fill(ctx, ref, &p->ref_layout, p->out.hw_frames,
                                      p->with_chroma, &p->ref_copy, &pic_ref)) < 0)
        return ret;
    if (p->out.hw_frames) {
        /* the library reads device frames until it releases them */
        AVFrame *keep = av_frame_clone(ref);
        if (!keep || (ret = av_fifo_write(p->ref_kept, &keep, 1)) < 0) {
            av_frame_free(&keep);
            return AVERROR(ENOMEM);
        }
    }
    if (p->n > 1 && av_log_get_level() >= AV_LOG_DEBUG) {
        char list[4 * VMAF_CUDA_MAX_RENDITIONS] = "";
        for (unsigned k = 0; k < p->n; k++)
            if (dists[k])
                av_strlcatf(list, sizeof(list), "%s%u", *list ? " " : "", k);
        av_log(ctx, AV_LOG_DEBUG, "ladder send %"PRId64": reference frame %"PRId64", "
               "renditions %s\n", p->nb_sends, seq, list);
    }
    p->seg_event[0] = 0;
    rc = vmaf_cuda_ladder_send(p->lad, &pic_ref, dists);
    if (rc < 0) {
        for (unsigned k = 0; k < p->n; k++)
            if (dists[k])
                av_frame_free(&p->r[k].ev_dist);
        av_log(ctx, AV_LOG_ERROR, "vmaf_cuda_ladder_send failed: %s: %s\n",
               vmaf_cuda_strerror(rc), vmaf_cuda_ladder_error_message(p->lad));
        if (rc == VMAF_CUDA_EINVAL && p->chroma_note[0])
            av_log(ctx, AV_LOG_ERROR, "%s\n", p->chroma_note);
        return ff_vmaf_cuda_status_to_averror(rc);
    }
    p->nb_sends++;
    for (unsigned k = 0; k < p->n; k++) {
        VmafCudaRendition *r = &p->r[k];
        if (!dists[k])
            continue;
        ret = ff_vmaf_cuda_stream_queue(&r->st, r->ev_dist, NULL, r->st.nb_sent,
                                        vmaf_cuda_frame_scored(r->st.session, r->st.nb_sent));
        r->st.nb_sent++;
        r->ev_dist = NULL;
        if (ret < 0)
            return ret;
    }
    for (unsigned k = 0; k < p->n; k++)
        if (!p->r[k].done && (ret = ff_vmaf_cuda_stream_drain(ctx, &p->r[k].st, 0)) < 0)
            return ret;
    release_kept_refs(p, 0);
    trim_reference(p);
    return 0;
}

/** Live rules: what is still to tell at the end of rendition k's pairing (after the
 *  frames' NDJSON lines), with shortest=1 the reference's end when it ended the pairing
 *  while the main had frames left. Framesync knew the main's next frame before it took
 *  the reference's end (not what happens to be queued), so identical runs say the same. */
static void tell_end(AVFilterContext *ctx, VmafCudaPipeline *p, unsigned k)
{
    VmafCudaRendition *r = &p->r[k];
    const FFFrameSync *fs = p->n > 1 ? &p->sync.r[k].fs : p->opt.sync;
    const FFFrameSyncIn *in = fs->in;

    if (p->input_timeout > 0 &&
        ff_vmaf_cuda_pairing_live_end(&r->pairing, ctx, ff_vmaf_cuda_sync_ended(&in[1]) &&
                                      in[0].have_next && in[0].frame_next, r->st.live) &&
        !r->st.output_error)
        r->st.output_error = AVERROR(EIO); /* the NDJSON stream failed: said there */
}

int ff_vmaf_cuda_pipeline_end(AVFilterContext *ctx, VmafCudaPipeline *p, unsigned k)
{
    VmafCudaRendition *r = &p->r[k];
    int ret;

    r->ended = r->done = 1;
    if (!r->st.nb_sent) {
        /* (a scored rendition's warnings come at the end, in rendition order, each
         * before its score line; here they explain the error) */
        ff_vmaf_cuda_pairing_report(&r->pairing, ctx);
        ff_vmaf_cuda_no_log(ctx, AV_LOG_ERROR, r->st.prefix, "no frame pair was scored (no "
                            "main frame met a reference frame)", r->st.log_path, 1);
        /* the exit status says so at the end ("finish"), once the other renditions'
         * frames are all out: an error returned now would stop the graph before they are */
        p->failed = AVERROR(ENODATA);
    } else if ((ret = ff_vmaf_cuda_stream_flush(ctx, &r->st)) < 0) {
        return ret;
    }
    if ((ret = ff_vmaf_cuda_stream_drain(ctx, &r->st, 1)) < 0)
        return ret;
    tell_end(ctx, p, k);
    if (p->n > 1) {
        /* (the two-input filter's framesync sets its output's EOF itself) */
        ff_vmaf_cuda_sync_free(&p->sync, k);
        ff_outlink_set_status(ctx->outputs[k], AVERROR_EOF, p->sync.r[k].eof_pts);
        ff_inlink_set_status(ctx->inputs[k], AVERROR_EOF);
        trim_reference(p);
    }
    return 0;
}

/** Rendition k's output was closed downstream: it gets nothing more; what it sent is
 *  logged at the end, as far as it went out. */
static int close_rendition(AVFilterContext *ctx, VmafCudaPipeline *p, unsigned k, int status)
{
    VmafCudaRendition *r = &p->r[k];

    r->done = 1;
    ff_inlink_set_status(ctx->inputs[k], status);
    av_frame_free(&r->ev_dist);
    if (p->n > 1)
        ff_vmaf_cuda_sync_free(&p->sync, k);
    trim_reference(p);
    return r->st.nb_sent ? ff_vmaf_cuda_stream_flush(ctx, &r->st) : 0;
}

/** Advances rendition k to its next event (one per activate call, as framesync has one
 *  per call: an output then gets no more frames at once than the two-input filter's, and
 *  ffmpeg's -frames:v counts them as there), or until it waits for a frame, or ends. */
static int step(AVFilterContext *ctx, VmafCudaPipeline *p, unsigned k, int *moved)
{
    VmafCudaRendition *r = &p->r[k];
    VmafCudaSyncRendition *sr = &p->sync.r[k];
    AVFrame *dist;
    int ret;

    sr->need_main = sr->need_ref = 0;
    if (r->done || r->ev_dist || r->stepped)
        return 0;
    if ((ret = ff_vmaf_cuda_sync_advance(&p->sync, k, ctx->inputs[k], moved)) <= 0)
        return ret;
    *moved = r->stepped = 1;
    if (sr->fs.eof)
        return ff_vmaf_cuda_pipeline_end(ctx, p, k);
    if (!(dist = ff_vmaf_cuda_sync_take_main(&p->sync, k)))
        return sr->fs.in[0].frame ? AVERROR(ENOMEM) : AVERROR_BUG;
    dist->pts = av_rescale_q(sr->fs.pts, sr->fs.time_base, ctx->outputs[k]->time_base);
    return ff_vmaf_cuda_pipeline_event(ctx, p, k, &sr->fs, dist, sr->fs.in[1].frame,
                                       sr->ref_seq[0]);
}

/** Sends the lowest waiting reference frame once no other rendition can still pair a
 *  main frame with it: 1 when sent. */
static int send_batch(AVFilterContext *ctx, VmafCudaPipeline *p)
{
    int64_t seq = INT64_MAX;
    AVFrame *ref = NULL;
    int ret;

    for (unsigned k = 0; k < p->n; k++)
        if (p->r[k].ev_dist)
            seq = FFMIN(seq, p->r[k].ev_ref);
    if (seq == INT64_MAX)
        return 0;
    for (unsigned k = 0; k < p->n; k++) {
        const VmafCudaRendition *r = &p->r[k];
        if (!r->ev_dist &&
            ff_vmaf_cuda_sync_next_pairable(&p->sync, k, r->done || r->st.flushed) <= seq)
            return 0; /* rendition k may still pair a frame with it: wait for it */
        if (r->ev_dist && r->ev_ref == seq && !ref)
            ref = p->sync.r[k].fs.in[1].frame;
    }
    if ((ret = ff_vmaf_cuda_pipeline_send(ctx, p, seq, ref)) < 0)
        return ret;
    return 1;
}

int ff_vmaf_cuda_pipeline_activate_ladder(AVFilterContext *ctx, VmafCudaPipeline *p)
{
    AVFilterLink *reflink = ctx->inputs[p->n];
    int ret, moved, live = 0, want_ref = 0, busy = 0;

    for (unsigned k = 0; k < p->n; k++) {
        VmafCudaRendition *r = &p->r[k];
        int status;
        if (r->done)
            continue;
        if ((status = ff_outlink_get_status(ctx->outputs[k]))) {
            if ((ret = close_rendition(ctx, p, k, status)) < 0)
                return ret;
            continue;
        }
        if ((ret = ff_vmaf_cuda_pairing_observe_links(&r->pairing, ctx, ctx->inputs[k], reflink)) < 0)
            return ret;
        ff_vmaf_cuda_stream_update_out_index(ctx, &r->st);
    }

    for (unsigned k = 0; k < p->n; k++)
        p->r[k].stepped = 0;
    do {
        moved = 0;
        for (unsigned k = 0; k < p->n; k++)
            if ((ret = step(ctx, p, k, &moved)) < 0)
                return ret;
        busy |= moved;
        if ((ret = send_batch(ctx, p)) < 0)
            return ret;
        if (ret > 0) {
            busy = 1;
            break; /* one send per call; the next call goes on */
        }
        if (!moved) {
            for (unsigned k = 0; k < p->n; k++)
                want_ref |= !p->r[k].done && p->sync.r[k].need_ref;
            if (want_ref && (ret = ff_vmaf_cuda_sync_pull_reference(&p->sync, reflink)) < 0)
                return ret;
            moved = want_ref && ret > 0;
            want_ref = 0;
        }
    } while (moved);
    trim_reference(p); /* (reference frames passed over before the first pair) */

    /* ask for what the framesyncs wait for, and (prefetch) a few frames ahead, so that
     * every decoder keeps decoding */
    for (unsigned k = 0; k < p->n; k++) {
        AVFilterLink *in = ctx->inputs[k];
        if (p->r[k].done)
            continue;
        live = 1;
        want_ref |= p->sync.r[k].need_ref;
        if (!ff_outlink_get_status(in) &&
            (p->sync.r[k].need_main || ff_inlink_queued_frames(in) < (size_t)p->opt.prefetch))
            ff_inlink_request_frame(in);
    }
    if (live && !p->sync.ref_eof && !ff_outlink_get_status(reflink) &&
        (want_ref || ff_inlink_queued_frames(reflink) < (size_t)p->opt.prefetch))
        ff_inlink_request_frame(reflink);
    if (!live && !p->finished) {
        p->finished = 1;
        ff_inlink_set_status(reflink, AVERROR_EOF);
        trim_reference(p);
    }
    if (live && busy)
        ff_filter_set_ready(ctx, 100);
    return 0;
}

int ff_vmaf_cuda_pipeline_output_closed(AVFilterContext *ctx, VmafCudaPipeline *p,
                                        const char *sink, int64_t last)
{
    for (unsigned k = 0; k < p->n; k++) {
        if (!ff_vmaf_cuda_stream_output_closed(ctx, &p->r[k].st, sink, last))
            continue;
        /* its consumer wants nothing more: a ladder's rendition ends here, and its output
         * says so (its buffersink would otherwise keep asking for frames; the two-input
         * filter's only output ends the graph) */
        if (p->n == 1 || p->r[k].done)
            return 0;
        ff_outlink_set_status(ctx->outputs[k], AVERROR_EOF, AV_NOPTS_VALUE);
        return close_rendition(ctx, p, k, AVERROR_EOF);
    }
    return 0;
}

int ff_vmaf_cuda_pipeline_send_waiting(AVFilterContext *ctx, VmafCudaPipeline *p)
{
    for (;;) {
        int64_t seq = INT64_MAX;
        AVFrame *ref = NULL;
        int ret;
        for (unsigned k = 0; k < p->n; k++)
            if (p->r[k].ev_dist && p->r[k].ev_ref < seq) {
                seq = p->r[k].ev_ref;
                ref = p->n > 1 ? p->sync.r[k].fs.in[1].frame : NULL;
            }
        if (seq == INT64_MAX)
            return 0;
        if (!ref)
            return AVERROR_BUG; /* (the two-input filter sends at its event) */
        if ((ret = ff_vmaf_cuda_pipeline_send(ctx, p, seq, ref)) < 0)
            return ret;
    }
}

void ff_vmaf_cuda_pipeline_release_refs(VmafCudaPipeline *p)
{
    release_kept_refs(p, 1);
}

int ff_vmaf_cuda_pipeline_results(AVFilterContext *ctx, VmafCudaPipeline *p)
{
    int ret = 0, err;

    if (p->adopted)
        ff_vmaf_cuda_segment_unadopted(p);
    if (!p->r || p->results_done)
        return 0;
    p->results_done = 1;
    for (unsigned k = 0; k < p->n; k++) {
        VmafCudaRendition *r = &p->r[k];
        if (r->st.session && r->st.nb_sent) {
            /* (after FFmpeg re-created the graph, the pairing saw what it dropped: the
             * loss is told below instead) */
            if (!p->recreations)
                ff_vmaf_cuda_pairing_report(&r->pairing, ctx);
            if ((err = ff_vmaf_cuda_stream_results(ctx, &r->st)) < 0 && !ret)
                ret = err;
        } else if (r->st.session && !r->ended) {
            /* (a graph that was only configured, never fed, e.g. one ffmpeg rebuilds when
             * the input's hardware frames appear, has no session and says nothing) */
            ff_vmaf_cuda_no_log(ctx, AV_LOG_WARNING, r->st.prefix, "no frame pair was scored",
                                r->st.log_path, 1);
        }
    }
    release_kept_refs(p, 1);
    if ((err = ff_vmaf_cuda_segment_results(ctx, p)) < 0 && !ret)
        ret = err;
    return ret ? ret : p->failed;
}

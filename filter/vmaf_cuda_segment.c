/* SPDX-License-Identifier: BSD-2-Clause-Patent */
/**
 * @file
 * Segments: the picture size changes mid-stream (a feed switching between SD and HD, an
 * encoder reconfigured) and scoring goes on, in one log (the library's segments,
 * vmaf_cuda_ladder_reopen()). Frames of a new size reach the filter two ways:
 *
 *  - in the graph (fftools keeps a graph of vmaf_cuda and filters that follow a size
 *    change: the integration patch; -reinit_filter 0; a filter before this one that
 *    changes size per frame): a send whose reference frame has a new size, with every
 *    main frame paired with it at that size, starts a new segment; a main frame whose
 *    size is not its reference frame's is an error naming the frame, its time and both
 *    sizes, before anything of it is scored;
 *  - fftools re-creates the filter graph (its default when a decoder's output changes,
 *    and always for CUDA frames, whose frames context changes): the integration patch
 *    sends "reconfigure KEY" to the old graph before it frees it, and "adopt KEY" to the
 *    new graph before it configures it. The old instance ends its segment, sends its
 *    frames out (fftools then reads them) and parks its ladder, live state and counters
 *    under KEY and its instance name; the new instance takes them at "adopt" and goes on
 *    from its first pair, in a new segment: frames numbered on, one log, one NDJSON
 *    stream, one score line at the end. FFmpeg drops what was still queued inside the old
 *    graph: the main frames among them, and those that then go out unscored for want of
 *    their reference frames, are counted, and a run that lost any ends with an error.
 *
 * Copied into FFmpeg's libavfilter/ with vf_vmaf_cuda.c by patches/build-ffmpeg.sh.
 */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <vmaf_cuda.h>

#include "libavutil/buffer.h"
#include "libavutil/log.h"
#include "libavutil/mem.h"
#include "libavutil/pixdesc.h"
#include "libavutil/thread.h"
#include "libavutil/timestamp.h"

#include "filters.h"

#include "vmaf_cuda_pipeline.h"

/** What one rendition's stream carries from a graph to the next. */
typedef struct ParkedRendition {
    VmafCudaLive *live;
    char *log_path;              /**< its log (an NDJSON file the live state holds open) */
    int64_t nb_sent, nb_scored, nb_out_indexed, t_first_send;
    int output_error;
} ParkedRendition;

struct VmafCudaParked {
    struct VmafCudaParked *next;
    char key[320];               /**< fftools' key of the graph, then the instance's name */
    unsigned n;
    VmafCudaLadder *lad;
    AVBufferRef *hw_device;      /**< the CUDA context the ladder's sessions were opened in */
    int64_t nb_sends;
    unsigned seg_w, seg_h;
    int segments, recreations;
    int64_t dropped, unscored;   /**< main frames lost to the re-creations so far */
    ParkedRendition r[VMAF_CUDA_MAX_RENDITIONS];
};

static AVMutex parked_lock = AV_MUTEX_INITIALIZER;
static VmafCudaParked *parked_list;

static void parked_free(VmafCudaParked *e)
{
    for (unsigned k = 0; e && k < e->n; k++) {
        vmaf_cuda_live_close(e->r[k].live);
        av_free(e->r[k].log_path);
    }
    if (e)
        vmaf_cuda_ladder_close(e->lad);
    if (e)
        av_buffer_unref(&e->hw_device);
    av_free(e);
}

/** "the reference", "main", "main2": the input of frame `k` (p->n: the reference). */
static const char *input_name(const VmafCudaPipeline *p, unsigned k, char *buf, size_t size)
{
    if (k == p->n)
        return "reference";
    if (p->n == 1)
        return "main";
    snprintf(buf, size, "main%u", k);
    return buf;
}

/** Told with the first frames of a segment: a warning, and (pipeline_send) the event on
 *  those frames, so the NDJSON stream and the metadata say it too. */
static void tell_segment(AVFilterContext *ctx, VmafCudaPipeline *p, unsigned w, unsigned h,
                         int64_t frame)
{
    snprintf(p->seg_event, sizeof(p->seg_event), "the picture size changed from %ux%u to "
             "%ux%u at frame %"PRId64": scoring goes on at the new size (a new segment of "
             "the log)", p->seg_w, p->seg_h, w, h, frame);
    av_log(ctx, AV_LOG_WARNING, "%s\n", p->seg_event);
}

/** Main frame `d` of rendition k and its reference frame `ref` differ in size. */
static void size_error(AVFilterContext *ctx, const VmafCudaPipeline *p, unsigned k,
                       const AVFrame *d, const AVFrame *ref, AVRational tb)
{
    const VmafCudaRendition *r = &p->r[k];
    const int main_same = d->width == (int)p->seg_w && d->height == (int)p->seg_h;
    const int ref_same = ref->width == (int)p->seg_w && ref->height == (int)p->seg_h;
    char buf[16], fix[200];
    const char *name = input_name(p, k, buf, sizeof(buf));

    if (!r->st.nb_sent && !p->segments) {
        /* the first pair: the inputs' sizes differ from the start */
        if (p->n > 1)
            av_log(ctx, AV_LOG_ERROR, "rendition %u (main%u) is %dx%d, the reference is %dx%d: "
                   "each rendition must have the reference's size, and the filter does not "
                   "scale; scale it in the graph first: scale_cuda=%d:%d for CUDA frames "
                   "(NVDEC), scale=%d:%d for software frames\n", k, k, d->width, d->height,
                   ref->width, ref->height, ref->width, ref->height, ref->width, ref->height);
        else
            av_log(ctx, AV_LOG_ERROR, "input sizes differ: main is %dx%d %s, reference is "
                   "%dx%d %s\n", d->width, d->height, av_get_pix_fmt_name(ctx->inputs[0]->format),
                   ref->width, ref->height, av_get_pix_fmt_name(ctx->inputs[p->n]->format));
        return;
    }
    if (main_same) /* the reference changed: scale it back to the main's size */
        snprintf(fix, sizeof(fix), "scale the reference to the %s's size in the graph, e.g. "
                 "[1:v]scale=%d:%d (scale_cuda=%d:%d for CUDA frames)", name, d->width,
                 d->height, d->width, d->height);
    else
        snprintf(fix, sizeof(fix), "scale %s to the reference's size in the graph, e.g. "
                 "scale=%d:%d (scale_cuda=%d:%d for CUDA frames)", name, ref->width,
                 ref->height, ref->width, ref->height);
    av_log(ctx, AV_LOG_ERROR, "%sat frame %"PRId64" (pts_time %s) %s%s: %s is %dx%d, the "
           "reference is %dx%d (the stream so far was %ux%u). Scoring needs both inputs at "
           "one size: %s; when both change together, scoring goes on at the new size\n",
           r->st.prefix, r->st.nb_sent, av_ts2timestr(d->pts, &tb),
           main_same || ref_same ? "the " : "", main_same ? "reference changed size alone" :
           ref_same ? "main changed size alone" : "the inputs changed to different sizes",
           name, d->width, d->height, ref->width, ref->height, p->seg_w, p->seg_h, fix);
}

int ff_vmaf_cuda_segment_check(AVFilterContext *ctx, VmafCudaPipeline *p, int64_t seq,
                               const AVFrame *ref, AVRational tb)
{
    char name[16], err[512];
    VmafCudaSettings st;
    int64_t frame = -1;
    int ret, rc;

    for (unsigned k = 0; k < p->n; k++) {
        const VmafCudaRendition *r = &p->r[k];
        const AVFrame *d = r->ev_dist;
        if (!d || r->ev_ref != seq)
            continue;
        if (frame < 0)
            frame = r->st.nb_sent;
        if (!p->out.hw_frames && (d->format != ctx->inputs[k]->format ||
                                  ref->format != ctx->inputs[p->n]->format)) {
            const int bad = d->format != ctx->inputs[k]->format ? (int)k : (int)p->n;
            const AVFrame *f = bad == (int)k ? d : ref;
            av_log(ctx, AV_LOG_ERROR, "%sat frame %"PRId64" (pts_time %s) the %s's pixel "
                   "format changed from %s to %s: convert it to one format in the graph "
                   "first (format=%s)\n", r->st.prefix, r->st.nb_sent,
                   av_ts2timestr(d->pts, &tb), input_name(p, bad, name, sizeof(name)),
                   av_get_pix_fmt_name(ctx->inputs[bad]->format),
                   av_get_pix_fmt_name(f->format), av_get_pix_fmt_name(ctx->inputs[bad]->format));
            return AVERROR(EINVAL);
        }
        if (d->width != ref->width || d->height != ref->height) {
            size_error(ctx, p, k, d, ref, tb);
            return AVERROR(EINVAL);
        }
    }
    p->recreated_pairs = 1; /* (a pair in this graph: its unscored frames are its own) */
    if (!p->reopen && ref->width == (int)p->seg_w && ref->height == (int)p->seg_h)
        return 0;
    /* a new size, or the first pair after FFmpeg re-created the graph: the library's
     * next segment */
    if ((ret = ff_vmaf_cuda_pipeline_settings(ctx, p, ref->width, ref->height, &st)) < 0)
        return ret;
    if ((rc = vmaf_cuda_ladder_reopen(p->lad, &st, err, sizeof(err))) < 0) {
        av_log(ctx, AV_LOG_ERROR, "at frame %"PRId64" (pts_time %s) the picture size changed "
               "from %ux%u to %dx%d, and scoring cannot go on at it: %s: %s\n", frame,
               av_ts2timestr(ref->pts, &tb), p->seg_w, p->seg_h, ref->width, ref->height,
               vmaf_cuda_strerror(rc), err);
        return ff_vmaf_cuda_status_to_averror(rc);
    }
    av_buffer_unref(&p->hw_device_prev); /* (the sessions so far closed their backends) */
    p->segments++;
    p->reopen = 0;
    for (unsigned k = 0; k < p->n; k++) /* (a rendition that ended stays ended) */
        if (p->r[k].st.flushed && (rc = vmaf_cuda_flush(p->r[k].st.session)) < 0)
            return ff_vmaf_cuda_stream_error(ctx, &p->r[k].st, "vmaf_cuda_flush", rc);
    if (ref->width != (int)p->seg_w || ref->height != (int)p->seg_h)
        tell_segment(ctx, p, ref->width, ref->height, frame);
    else
        av_log(ctx, AV_LOG_VERBOSE, "FFmpeg re-created the filter graph: scoring goes on at "
               "frame %"PRId64" (a new segment of the log, %ux%u)\n", frame, p->seg_w, p->seg_h);
    p->seg_w = ref->width;
    p->seg_h = ref->height;
    /* the earlier segment's frames are final now: out they go */
    for (unsigned k = 0; k < p->n; k++)
        if (!p->r[k].done && (ret = ff_vmaf_cuda_stream_drain(ctx, &p->r[k].st, 0)) < 0)
            return ret;
    return 0;
}

/** Main frames still queued for rendition k: FFmpeg drops them with the old graph. */
static int64_t queued_main(AVFilterContext *ctx, const VmafCudaPipeline *p, unsigned k)
{
    const FFFrameSync *fs = p->n > 1 ? &p->sync.r[k].fs : p->opt.sync;
    int64_t n = (int64_t)ff_inlink_queued_frames(ctx->inputs[k]);

    if (fs && fs->nb_in > 0 && fs->in[0].have_next && fs->in[0].frame_next)
        n++;
    return n;
}

int ff_vmaf_cuda_segment_park(AVFilterContext *ctx, VmafCudaPipeline *p, const char *key)
{
    VmafCudaParked *e;
    int64_t sent = 0, lost = 0;
    char name[16];
    int ret;

    for (unsigned k = 0; k < p->n; k++)
        sent += p->r[k].st.nb_sent;
    if (!p->lad || !sent || p->results_done)
        return 0; /* nothing scored yet (a graph fftools re-creates before it is fed) */
    if (!(e = av_mallocz(sizeof(*e))))
        return AVERROR(ENOMEM);
    e->n = p->n; /* (what is moved into it is freed with it) */
    ff_vmaf_cuda_metrics_stop(p); /* (the new graph's instance serves them) */
    /* the frames paired and waiting for their send (a ladder), then the segment's end */
    if ((ret = ff_vmaf_cuda_pipeline_send_waiting(ctx, p)) < 0) {
        av_free(e);
        return ret;
    }
    if ((ret = vmaf_cuda_ladder_flush(p->lad)) < 0) {
        av_log(ctx, AV_LOG_ERROR, "vmaf_cuda_ladder_flush failed: %s: %s\n",
               vmaf_cuda_strerror(ret), vmaf_cuda_ladder_error_message(p->lad));
        av_free(e);
        return ff_vmaf_cuda_status_to_averror(ret);
    }
    for (unsigned k = 0; k < p->n; k++) {
        VmafCudaRendition *r = &p->r[k];
        int64_t q;
        if (!r->done && (ret = ff_vmaf_cuda_stream_drain(ctx, &r->st, 1)) < 0) {
            av_free(e);
            return ret;
        }
        if (!r->done && (q = queued_main(ctx, p, k)) > 0) {
            av_log(ctx, AV_LOG_WARNING, "%sFFmpeg re-creates the filter graph: the %"PRId64" "
                   "%s frame%s still queued in it %s dropped (neither scored nor output)\n",
                   r->st.prefix, q, input_name(p, k, name, sizeof(name)), q > 1 ? "s" : "",
                   q > 1 ? "are" : "is");
            lost += q;
        }
        e->r[k] = (ParkedRendition){ .live = r->st.live, .nb_sent = r->st.nb_sent,
                                     .nb_scored = r->st.nb_scored,
                                     .nb_out_indexed = r->st.nb_out_indexed,
                                     .t_first_send = r->st.t_first_send,
                                     .output_error = r->st.output_error };
        if (r->st.log_path && !(e->r[k].log_path = av_strdup(r->st.log_path))) {
            parked_free(e); /* (nothing moved yet for this rendition) */
            return AVERROR(ENOMEM);
        }
        r->st.live = NULL;
        r->st.session = NULL;
    }
    ff_vmaf_cuda_pipeline_release_refs(p);
    snprintf(e->key, sizeof(e->key), "%s/%s", key, ctx->name ? ctx->name : "");
    e->lad = p->lad;
    e->hw_device = p->hw_device;
    e->nb_sends = p->nb_sends;
    e->seg_w = p->seg_w;
    e->seg_h = p->seg_h;
    e->segments = p->segments;
    e->recreations = p->recreations;
    e->dropped = p->recreated_dropped + lost;
    e->unscored = p->recreated_unscored;
    p->lad = NULL;
    p->hw_device = NULL;
    p->results_done = 1; /* the new graph's instance writes them */
    av_log(ctx, AV_LOG_VERBOSE, "FFmpeg re-creates the filter graph: the %"PRId64" frames "
           "so far go on in its new instance%s\n", p->r[0].st.nb_sent,
           lost ? " (see above for the frames FFmpeg drops)" : "");
    ff_mutex_lock(&parked_lock);
    for (VmafCudaParked **pp = &parked_list; *pp; pp = &(*pp)->next)
        if (!strcmp((*pp)->key, e->key)) { /* (a stale one: never adopted) */
            VmafCudaParked *old = *pp;
            *pp = old->next;
            parked_free(old);
            break;
        }
    e->next = parked_list;
    parked_list = e;
    ff_mutex_unlock(&parked_lock);
    return 0;
}

void ff_vmaf_cuda_segment_adopt(AVFilterContext *ctx, VmafCudaPipeline *p, const char *key)
{
    char full[320];

    snprintf(full, sizeof(full), "%s/%s", key, ctx->name ? ctx->name : "");
    ff_mutex_lock(&parked_lock);
    for (VmafCudaParked **pp = &parked_list; *pp; pp = &(*pp)->next)
        if (!strcmp((*pp)->key, full)) {
            VmafCudaParked *e = *pp;
            *pp = e->next;
            if (e->n == p->n && !p->adopted && !p->lad) {
                p->adopted = e;
                e = NULL;
            }
            parked_free(e);
            break;
        }
    ff_mutex_unlock(&parked_lock);
}

/** The parked state into the pipeline (its ladder, lives and counters). */
static void take(VmafCudaPipeline *p, VmafCudaParked *e)
{
    p->lad = e->lad;
    e->lad = NULL;
    /* the CUDA context the ladder's sessions so far were opened in lives as long as they */
    av_buffer_unref(&p->hw_device_prev);
    p->hw_device_prev = e->hw_device;
    e->hw_device = NULL;
    p->nb_sends = e->nb_sends;
    p->seg_w = e->seg_w;
    p->seg_h = e->seg_h;
    p->segments = e->segments;
    p->recreations = e->recreations + 1;
    p->recreated_dropped = e->dropped;
    p->recreated_unscored = e->unscored;
    for (unsigned k = 0; k < p->n; k++) {
        VmafCudaStream *st = &p->r[k].st;
        const ParkedRendition *r = &e->r[k];
        vmaf_cuda_live_close(st->live);
        st->live = r->live;
        e->r[k].live = NULL;
        st->nb_sent = r->nb_sent;
        st->nb_scored = r->nb_scored;
        st->nb_out_indexed = r->nb_out_indexed;
        st->t_first_send = r->t_first_send;
        st->output_error = r->output_error;
        st->session = vmaf_cuda_ladder_session(p->lad, k);
        st->nb_models = vmaf_cuda_model_count(st->session);
    }
}


int ff_vmaf_cuda_segment_resume(AVFilterContext *ctx, VmafCudaPipeline *p,
                                const VmafCudaSettings *st)
{
    VmafCudaParked *e = p->adopted;

    p->adopted = NULL;
    take(p, e);
    parked_free(e);
    /* the first pair goes on in a new segment (the sessions were flushed at the park),
     * at its size: one input may change now and the other a few frames later */
    p->reopen = 1;
    av_log(ctx, AV_LOG_VERBOSE, "FFmpeg re-created the filter graph: the stream goes on "
           "after frame %"PRId64" (links: %ux%u)\n", p->r[0].st.nb_sent, st->width, st->height);
    return 0;
}

int ff_vmaf_cuda_segment_parked_path(const char *path)
{
    int found = 0;

    ff_mutex_lock(&parked_lock);
    for (VmafCudaParked *e = parked_list; e && !found; e = e->next)
        for (unsigned k = 0; k < e->n && !found; k++)
            found = e->r[k].log_path && !strcmp(e->r[k].log_path, path);
    ff_mutex_unlock(&parked_lock);
    return found;
}

int ff_vmaf_cuda_segment_results(AVFilterContext *ctx, VmafCudaPipeline *p)
{
    const int64_t lost = p->recreated_dropped + p->recreated_unscored;

    if (!p->recreations)
        return 0;
    if (!lost) {
        av_log(ctx, AV_LOG_INFO, "FFmpeg re-created the filter graph %d time%s; no frame was "
               "lost\n", p->recreations, p->recreations > 1 ? "s" : "");
        return 0;
    }
    av_log(ctx, AV_LOG_ERROR, "FFmpeg re-created the filter graph %d time%s (once for each "
           "input whose frames changed size or format, as the graph holds a filter that does "
           "not follow such a change as it comes, or converts a pixel format): %"PRId64" main "
           "frame%s it held %s dropped and %"PRId64" passed through unscored without their "
           "reference frames (dropped with them); the log and the score cover the frames "
           "scored. A graph of vmaf_cuda with only setpts, settb, trim, format, split, fps, "
           "null, copy, showinfo, metadata and scale to a fixed size, on inputs of one pixel "
           "format, keeps every frame (docs/filter.md, Resolution changes)\n",
           p->recreations, p->recreations > 1 ? "s" : "", p->recreated_dropped,
           p->recreated_dropped == 1 ? "" : "s", p->recreated_dropped == 1 ? "was" : "were",
           p->recreated_unscored);
    return AVERROR(EIO);
}

void ff_vmaf_cuda_segment_unadopted(VmafCudaPipeline *p)
{
    /* the new graph failed before its configuration took the parked state: this
     * instance writes the frames so far (the sessions were flushed at the park) */
    if (p->adopted && !p->lad)
        take(p, p->adopted);
    parked_free(p->adopted);
    p->adopted = NULL;
}

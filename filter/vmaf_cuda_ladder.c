/* SPDX-License-Identifier: BSD-2-Clause-Patent */
/**
 * @file
 * vmaf_cuda=renditions=N (N > 1): an encoder ladder, N distorted renditions scored
 * against one reference through the library's ladder (vmaf_cuda_ladder_*() in
 * include/vmaf_cuda.h), each rendition exactly as a two-input vmaf_cuda would score it.
 *
 * Pads: inputs main0..mainN-1 (the renditions, libvmaf's order: distorted first), then
 * reference; outputs out0..outN-1, output k passing rendition k's frames with its
 * metadata (lavfi.vmaf.*, window, SEI), as the two-input filter's output does.
 *
 * Pairing. FFmpeg's framesync serves one output (ff_framesync_init() asserts it), and over
 * N+1 inputs it would not pair a rendition as a two-input framesync does (a rendition's
 * end would not hand the sync over to the reference). So each rendition has a framesync
 * of its own over two inputs, its main and the reference: an FFFrameSync whose state
 * this file advances with framesync's rules (framesync.c: ff_framesync_configure() with
 * ff_framesync_init_dualinput()'s modes, framesync_advance(), the injection of frames and
 * of a status, ff_framesync_get_frame()), so that shortest, repeatlast, eof_action and
 * ts_sync_mode mean what they mean for the two-input filter, the time base and the pts
 * rounding included. Each rendition takes its main frames from its own link; the
 * reference frames are taken from their link once, into a queue from which each
 * rendition's framesync takes its own reference (a new AVFrame reference) in turn.
 *
 * Sending. An event of rendition k (a main frame with the reference frame it is paired
 * with) waits until every other rendition either has its next event or cannot pair
 * anything with that reference frame any more; then one vmaf_cuda_ladder_send() carries
 * the reference frame with the main frames of every rendition paired with it, and NULL
 * for the others (so a rendition at a lower rate, or one that started late, ended or
 * repeats its last frame, is in the sends it belongs to). A rendition has one waiting
 * event at most, so each gets its frames in its own order. Frames no reference frame
 * pairs with (before the first, after the end with eof_action=pass) go out unscored.
 *
 * Ends. A rendition whose framesync ends is flushed, its queued frames go out and its
 * output gets its EOF; the others go on (with shortest=1, the reference's end ends all
 * of them). An output closed downstream ends its rendition there. The logs (log_path with
 * %d: the rendition's index) and the "rendition k: VMAF score: X" lines are written at
 * the end, in rendition order. CUDA frames stay referenced until the library no longer
 * reads them (vmaf_cuda_ladder_pictures_released() for the reference,
 * vmaf_cuda_pictures_released() of the rendition's session for its frames).
 *
 * Copied into FFmpeg's libavfilter/ with vf_vmaf_cuda.c by patches/build-ffmpeg.sh.
 */

#include "config.h"

#include <inttypes.h>
#include <string.h>

#include <vmaf_cuda.h>

#include "libavutil/avstring.h"
#include "libavutil/bprint.h"
#include "libavutil/hwcontext.h"
#include "libavutil/log.h"
#include "libavutil/mathematics.h"
#include "libavutil/mem.h"
#include "libavutil/pixdesc.h"
#include "libavutil/time.h"
#if CONFIG_CUDA
#include "libavutil/hwcontext_cuda_internal.h"
#endif

#include "avfilter.h"
#include "filters.h"
#include "framesync.h"

#include "vmaf_cuda_filter.h"

/** framesync.c's input states (FFFrameSyncIn.state). */
enum { SYNC_BOF, SYNC_RUN, SYNC_EOF };

/** A reference frame the library may still read (CUDA frames), by send number. */
typedef struct KeptRef {
    AVFrame *frame;
    int64_t send;
} KeptRef;

typedef struct Rendition {
    VmafCudaStream st;
    FFFrameSync fs;              /**< in[0]: its main, in[1]: the reference */
    FFFrameSyncIn in[2];
    int64_t ref_seq[2];          /**< queue number of in[1].frame, in[1].frame_next (-1: none) */
    int64_t ref_cursor;          /**< queue number of the next reference frame it takes */
    int64_t eof_pts;             /**< the pts of its output's EOF (framesync's) */
    VmafCudaPairing pairing;
    VmafCudaLayout layout;
    VmafCudaPlaneCopy copy;
    AVFrame *ev_dist;            /**< the main frame of its waiting event (NULL: none) */
    int64_t ev_ref;              /**< queue number of that event's reference frame */
    int need_main, need_ref;     /**< its framesync waits for a main / reference frame */
    int stepped;                 /**< had its event in this activate call */
    int ended;                   /**< its framesync ended (its output has its EOF) */
    int done;                    /**< ended, or its output was closed downstream */
} Rendition;

struct VmafCudaLadderState {
    unsigned n;
    Rendition *r;
    VmafCudaLadder *lad;
    AVFifo *refq;                /**< AVFrame *: reference frames, queue numbers refq_base.. */
    int64_t refq_base;
    int ref_eof;                 /**< the reference link's status was taken */
    int ref_status;
    int64_t ref_status_pts;
    AVFifo *ref_kept;            /**< KeptRef, oldest first */
    int64_t nb_sends;
    VmafCudaLayout ref_layout;
    VmafCudaPlaneCopy ref_copy;
    int failed;                  /**< AVERROR of a rendition that scored nothing, for the end */
    int finished;
    int results_done;
};

/* ---------------------------------------------------------------- framesync's rules */

static void lsync_eof(Rendition *r, int64_t pts)
{
    r->fs.eof = 1;
    r->fs.frame_ready = 0;
    r->eof_pts = pts;
}

static void lsync_level_update(Rendition *r, int64_t eof_pts)
{
    FFFrameSync *fs = &r->fs;
    unsigned level = 0;

    for (unsigned i = 0; i < 2; i++)
        if (fs->in[i].state != SYNC_EOF)
            level = FFMAX(level, fs->in[i].sync);
    if (fs->opt_ts_sync_mode > TS_DEFAULT)
        for (unsigned i = 0; i < 2; i++)
            fs->in[i].ts_mode = fs->in[i].sync < level ? fs->opt_ts_sync_mode : TS_DEFAULT;
    if (level)
        fs->sync_level = level;
    else
        lsync_eof(r, eof_pts);
}

/** ff_framesync_init_dualinput() + ff_framesync_configure() of the two-input filter,
 *  with the options of `opt`. */
static void lsync_configure(Rendition *r, AVFilterContext *ctx, AVFilterLink *mainlink,
                            AVFilterLink *reflink, const FFFrameSync *opt)
{
    FFFrameSync *fs = &r->fs;
    int repeatlast = opt->opt_repeatlast, eof_action = opt->opt_eof_action;
    int shortest = opt->opt_shortest;
    AVRational tb = { 0, 0 };

    memset(fs, 0, sizeof(*fs));
    memset(r->in, 0, sizeof(r->in));
    fs->parent = ctx;
    fs->in = r->in;
    fs->nb_in = 2;
    r->in[0].time_base = mainlink->time_base;
    r->in[0].sync = 2;
    r->in[0].before = EXT_STOP;
    r->in[0].after = EXT_INFINITY;
    r->in[1].time_base = reflink->time_base;
    r->in[1].sync = 1;
    r->in[1].before = EXT_NULL;
    r->in[1].after = EXT_INFINITY;
    if (!repeatlast || eof_action == EOF_ACTION_PASS) {
        repeatlast = 0;
        eof_action = EOF_ACTION_PASS;
    }
    if (shortest || eof_action == EOF_ACTION_ENDALL) {
        shortest = 1;
        eof_action = EOF_ACTION_ENDALL;
    }
    if (!repeatlast) {
        r->in[1].after = EXT_NULL;
        r->in[1].sync = 0;
    }
    if (shortest)
        r->in[0].after = r->in[1].after = EXT_STOP;
    fs->opt_repeatlast = repeatlast;
    fs->opt_shortest = shortest;
    fs->opt_eof_action = eof_action;
    fs->opt_ts_sync_mode = opt->opt_ts_sync_mode;
    for (unsigned i = 0; i < 2; i++)
        if (r->in[i].sync)
            tb = tb.num ? av_gcd_q(tb, r->in[i].time_base, AV_TIME_BASE / 2, AV_TIME_BASE_Q)
                        : r->in[i].time_base;
    fs->time_base = tb;
    for (unsigned i = 0; i < 2; i++)
        r->in[i].pts = r->in[i].pts_next = AV_NOPTS_VALUE;
    r->ref_seq[0] = r->ref_seq[1] = -1;
    fs->sync_level = UINT_MAX;
    lsync_level_update(r, AV_NOPTS_VALUE);
}

static void lsync_inject_frame(Rendition *r, unsigned i, AVFrame *frame)
{
    FFFrameSyncIn *in = &r->fs.in[i];

    frame->pts = av_rescale_q_rnd(frame->pts, in->time_base, r->fs.time_base,
                                  AV_ROUND_NEAR_INF | AV_ROUND_PASS_MINMAX);
    in->frame_next = frame;
    in->pts_next = frame->pts;
    in->have_next = 1;
}

static void lsync_inject_status(Rendition *r, unsigned i, int status, int64_t eof_pts)
{
    FFFrameSyncIn *in = &r->fs.in[i];

    in->sync = 0;
    lsync_level_update(r, status == AVERROR_EOF ? eof_pts : AV_NOPTS_VALUE);
    in->frame_next = NULL;
    in->pts_next = in->state != SYNC_RUN || in->after == EXT_INFINITY ? INT64_MAX : in->pts + 1;
    in->have_next = 1;
}

static void lsync_free(Rendition *r)
{
    for (unsigned i = 0; i < 2; i++) {
        av_frame_free(&r->in[i].frame);
        av_frame_free(&r->in[i].frame_next);
    }
}

/* ---------------------------------------------------------------- inputs */

/** The queued reference frame of queue number seq (a new reference to it). */
static AVFrame *refq_clone(struct VmafCudaLadderState *l, int64_t seq)
{
    AVFrame *frame;

    if (av_fifo_peek(l->refq, &frame, 1, (size_t)(seq - l->refq_base)) < 0)
        return NULL;
    return av_frame_clone(frame);
}

/** framesync's consume_from_fifos() for rendition k: 1 when both inputs have their next
 *  frame (or status), 0 when one waits (need_main / need_ref say which). *moved: a frame
 *  or status was taken. */
static int lsync_consume(AVFilterContext *ctx, unsigned k, int *moved)
{
    VmafCudaContext *s = ctx->priv;
    struct VmafCudaLadderState *l = s->ladder;
    Rendition *r = &l->r[k];
    AVFilterLink *mainlink = ctx->inputs[k];
    int64_t pts;
    int ret, status, miss = 0;

    if (!r->in[0].have_next && r->in[0].state != SYNC_EOF) {
        AVFrame *frame = NULL;
        if ((ret = ff_inlink_consume_frame(mainlink, &frame)) < 0)
            return ret;
        if (ret) {
            lsync_inject_frame(r, 0, frame);
            *moved = 1;
        } else if (ff_inlink_acknowledge_status(mainlink, &status, &pts) > 0) {
            lsync_inject_status(r, 0, status, pts);
            *moved = 1;
        } else {
            r->need_main = miss = 1;
        }
    }
    if (!r->in[1].have_next && r->in[1].state != SYNC_EOF) {
        if (r->ref_cursor < l->refq_base + (int64_t)av_fifo_can_read(l->refq)) {
            AVFrame *frame = refq_clone(l, r->ref_cursor);
            if (!frame)
                return AVERROR(ENOMEM);
            lsync_inject_frame(r, 1, frame);
            r->ref_seq[1] = r->ref_cursor++;
            *moved = 1;
        } else if (l->ref_eof) {
            lsync_inject_status(r, 1, l->ref_status, l->ref_status_pts);
            r->ref_seq[1] = -1;
            *moved = 1;
        } else {
            r->need_ref = miss = 1;
        }
    }
    return !miss;
}

/** framesync_advance() for rendition k: 1 when an event is ready or the sync ended,
 *  0 when it waits for a frame. */
static int lsync_advance(AVFilterContext *ctx, unsigned k, int *moved)
{
    VmafCudaContext *s = ctx->priv;
    Rendition *r = &s->ladder->r[k];
    FFFrameSync *fs = &r->fs;
    int64_t pts;
    int ret;

    while (!(fs->frame_ready || fs->eof)) {
        if ((ret = lsync_consume(ctx, k, moved)) <= 0)
            return ret;
        pts = INT64_MAX;
        for (unsigned i = 0; i < 2; i++)
            if (fs->in[i].have_next && fs->in[i].pts_next < pts)
                pts = fs->in[i].pts_next;
        if (pts == INT64_MAX) {
            lsync_eof(r, AV_NOPTS_VALUE);
            break;
        }
        for (unsigned i = 0; i < 2; i++) {
            FFFrameSyncIn *in = &fs->in[i];
            if (in->pts_next == pts ||
                (in->ts_mode == TS_NEAREST && in->have_next && in->pts_next != INT64_MAX &&
                 in->pts != AV_NOPTS_VALUE && in->pts_next - pts < pts - in->pts) ||
                (in->before == EXT_INFINITY && in->state == SYNC_BOF)) {
                av_frame_free(&in->frame);
                in->frame = in->frame_next;
                in->pts = in->pts_next;
                in->frame_next = NULL;
                in->pts_next = AV_NOPTS_VALUE;
                in->have_next = 0;
                in->state = in->frame ? SYNC_RUN : SYNC_EOF;
                if (i == 1) {
                    r->ref_seq[0] = r->ref_seq[1];
                    r->ref_seq[1] = -1;
                }
                if (in->sync == fs->sync_level && in->frame)
                    fs->frame_ready = 1;
                if (in->state == SYNC_EOF && in->after == EXT_STOP)
                    lsync_eof(r, AV_NOPTS_VALUE);
            }
        }
        if (fs->frame_ready)
            for (unsigned i = 0; i < 2; i++)
                if (fs->in[i].state == SYNC_BOF && fs->in[i].before == EXT_STOP)
                    fs->frame_ready = 0;
        fs->pts = pts;
    }
    return 1;
}

/** ff_framesync_get_frame(fs, 0, &frame, 1): the main frame of the event, taken or
 *  referenced again when framesync may need it once more. */
static AVFrame *lsync_take_main(Rendition *r)
{
    FFFrameSync *fs = &r->fs;
    AVFrame *frame = fs->in[0].frame;
    int64_t pts_next = fs->in[0].have_next ? fs->in[0].pts_next : INT64_MAX;

    if (!frame)
        return NULL;
    if (fs->in[1].sync && (!fs->in[1].have_next || fs->in[1].pts_next < pts_next)) {
        frame = av_frame_clone(frame);
    } else {
        fs->in[0].frame = NULL;
    }
    fs->frame_ready = 0;
    return frame;
}

/** Takes the next reference frame (or the reference's status) from its link into the
 *  queue: 1 when something was taken. */
static int pull_reference(AVFilterContext *ctx)
{
    VmafCudaContext *s = ctx->priv;
    struct VmafCudaLadderState *l = s->ladder;
    AVFilterLink *reflink = ctx->inputs[l->n];
    AVFrame *frame = NULL;
    int ret;

    if (l->ref_eof)
        return 0;
    if ((ret = ff_inlink_consume_frame(reflink, &frame)) < 0)
        return ret;
    if (ret) {
        if ((ret = av_fifo_write(l->refq, &frame, 1)) < 0) {
            av_frame_free(&frame);
            return ret;
        }
        return 1;
    }
    if (ff_inlink_acknowledge_status(reflink, &l->ref_status, &l->ref_status_pts) > 0) {
        l->ref_eof = 1;
        return 1;
    }
    return 0;
}

/** Frees the queued reference frames no rendition will take any more. */
static void trim_reference_queue(struct VmafCudaLadderState *l)
{
    int64_t keep = INT64_MAX;
    AVFrame *frame;

    for (unsigned k = 0; k < l->n; k++)
        if (!l->r[k].done)
            keep = FFMIN(keep, l->r[k].ref_cursor);
    while (l->refq_base < keep && av_fifo_read(l->refq, &frame, 1) >= 0) {
        av_frame_free(&frame);
        l->refq_base++;
    }
}

static void release_kept_refs(struct VmafCudaLadderState *l, int all)
{
    int64_t released = l->lad ? vmaf_cuda_ladder_pictures_released(l->lad) : INT64_MAX;
    KeptRef kr;

    while (av_fifo_peek(l->ref_kept, &kr, 1, 0) >= 0 && (all || kr.send < released)) {
        av_fifo_drain2(l->ref_kept, 1);
        av_frame_free(&kr.frame);
    }
}

/* ---------------------------------------------------------------- events and sends */

/** Rendition k has ended (its framesync's end): flush it, send its queued frames, set
 *  its output's EOF and close its main input. */
static int end_rendition(AVFilterContext *ctx, unsigned k)
{
    VmafCudaContext *s = ctx->priv;
    struct VmafCudaLadderState *l = s->ladder;
    Rendition *r = &l->r[k];
    int ret = 0;

    r->ended = r->done = 1;
    if (!r->st.nb_sent) {
        /* (a scored rendition's warnings come at the end, in rendition order, each
         * before its score line; here they explain the error) */
        vmaf_cuda_pairing_report(&r->pairing, ctx);
        av_log(ctx, AV_LOG_ERROR, "%sno frame pair was scored (no main frame met a "
               "reference frame): no log%s written, no VMAF score\n", r->st.prefix,
               r->st.log_path ? " file" : "");
        vmaf_cuda_ff_no_log(ctx, r->st.prefix, r->st.log_path);
        /* the exit status says so at the end ("finish"), once the other renditions'
         * frames are all out: an error returned now would stop the graph before they are */
        l->failed = AVERROR(EINVAL);
    } else if ((ret = vmaf_cuda_ff_stream_flush(ctx, &r->st)) < 0) {
        return ret;
    }
    if ((ret = vmaf_cuda_ff_stream_drain(ctx, &r->st, 1)) < 0)
        return ret;
    lsync_free(r);
    ff_outlink_set_status(ctx->outputs[k], AVERROR_EOF, r->eof_pts);
    ff_inlink_set_status(ctx->inputs[k], AVERROR_EOF);
    trim_reference_queue(l);
    return 0;
}

/** A framesync event of rendition k: an unscored main frame goes to the queue at once;
 *  a pair waits in ev_dist for its send. */
static int rendition_event(AVFilterContext *ctx, unsigned k)
{
    VmafCudaContext *s = ctx->priv;
    struct VmafCudaLadderState *l = s->ladder;
    Rendition *r = &l->r[k];
    AVFilterLink *mainlink = ctx->inputs[k], *reflink = ctx->inputs[l->n];
    AVFrame *dist = lsync_take_main(r), *ref = r->fs.in[1].frame;
    int ret;

    if (!dist)
        return r->fs.in[0].frame ? AVERROR(ENOMEM) : AVERROR_BUG;
    dist->pts = av_rescale_q(r->fs.pts, r->fs.time_base, ctx->outputs[k]->time_base);
    if (!ref || r->st.flushed) {
        if ((ret = vmaf_cuda_pairing_event(&r->pairing, ctx, &r->fs, dist, NULL, -1,
                                           s->sdr_models)) < 0) {
            av_frame_free(&dist);
            return ret;
        }
        if ((ret = vmaf_cuda_ff_stream_queue(&r->st, dist, NULL, -1, 0)) < 0)
            return ret;
        /* the reference has ended (eof_action=pass): no frame will follow the ones sent,
         * so flush now rather than hold the rest of the main stream until its end */
        if (!ref && r->st.nb_sent && !r->st.flushed && r->fs.in[1].state == SYNC_EOF) {
            if ((ret = vmaf_cuda_ff_stream_flush(ctx, &r->st)) < 0)
                return ret;
            return vmaf_cuda_ff_stream_drain(ctx, &r->st, 1);
        }
        return vmaf_cuda_ff_stream_drain(ctx, &r->st, 0);
    }
    if (dist->width != mainlink->w || dist->height != mainlink->h ||
        ref->width != reflink->w || ref->height != reflink->h) {
        av_log(ctx, AV_LOG_ERROR, "%sframe size changed (main%u %dx%d, reference %dx%d); the "
               "filter was configured for %dx%d\n", r->st.prefix, k, dist->width,
               dist->height, ref->width, ref->height, reflink->w, reflink->h);
        av_frame_free(&dist);
        return AVERROR(EINVAL);
    }
    if ((ret = vmaf_cuda_pairing_event(&r->pairing, ctx, &r->fs, dist, ref, r->st.nb_sent,
                                       s->sdr_models)) < 0) {
        av_frame_free(&dist);
        return ret;
    }
    r->ev_dist = dist;
    r->ev_ref = r->ref_seq[0];
    return 0;
}

/** Advances rendition k to its next event (one per activate call, as framesync has one
 *  per call: an output then gets no more frames at once than the two-input filter's, and
 *  ffmpeg's -frames:v counts them as there), or until it waits for a frame, or ends.
 *  *moved: something changed. */
static int step_rendition(AVFilterContext *ctx, unsigned k, int *moved)
{
    VmafCudaContext *s = ctx->priv;
    Rendition *r = &s->ladder->r[k];
    int ret;

    r->need_main = r->need_ref = 0;
    if (r->done || r->ev_dist || r->stepped)
        return 0;
    if ((ret = lsync_advance(ctx, k, moved)) <= 0)
        return ret;
    *moved = r->stepped = 1;
    if (r->fs.eof)
        return end_rendition(ctx, k);
    return rendition_event(ctx, k);
}

/** The lowest queue number of a reference frame rendition k may still pair a main frame
 *  with (INT64_MAX: none; it pairs nothing any more). */
static int64_t next_pairable(const Rendition *r)
{
    if (r->done || r->st.flushed || r->in[1].state == SYNC_EOF)
        return INT64_MAX;
    if (r->in[1].frame)
        return r->ref_seq[0];
    if (r->in[1].have_next)
        return r->in[1].frame_next ? r->ref_seq[1] : INT64_MAX;
    return r->ref_cursor;
}

/** Sends the lowest waiting reference frame with every rendition's main frame paired
 *  with it, once no other rendition can still pair one with it: 1 when sent. */
static int send_batch(AVFilterContext *ctx)
{
    VmafCudaContext *s = ctx->priv;
    struct VmafCudaLadderState *l = s->ladder;
    const VmafCudaPicture *dists[VMAF_CUDA_MAX_RENDITIONS] = { 0 };
    VmafCudaPicture pics[VMAF_CUDA_MAX_RENDITIONS], pic_ref;
    int64_t seq = INT64_MAX;
    AVFrame *ref = NULL;
    int ret, rc;

    for (unsigned k = 0; k < l->n; k++)
        if (l->r[k].ev_dist)
            seq = FFMIN(seq, l->r[k].ev_ref);
    if (seq == INT64_MAX)
        return 0;
    for (unsigned k = 0; k < l->n; k++)
        if (!l->r[k].ev_dist && next_pairable(&l->r[k]) <= seq)
            return 0; /* rendition k may still pair a frame with it: wait for it */

    for (unsigned k = 0; k < l->n; k++) {
        Rendition *r = &l->r[k];
        if (!r->ev_dist || r->ev_ref != seq)
            continue;
        if (!ref)
            ref = r->fs.in[1].frame;
        if ((ret = vmaf_cuda_picture_fill(ctx, r->ev_dist, &r->layout, s->hw_frames,
                                          s->with_chroma, &r->copy, &pics[k])) < 0)
            return ret;
        dists[k] = &pics[k];
        if (!r->st.nb_sent)
            r->st.t_first_send = av_gettime_relative();
    }
    if ((ret = vmaf_cuda_picture_fill(ctx, ref, &l->ref_layout, s->hw_frames, s->with_chroma,
                                      &l->ref_copy, &pic_ref)) < 0)
        return ret;
    if (s->hw_frames) {
        /* the library reads device frames until it releases them */
        KeptRef kr = { .frame = av_frame_clone(ref), .send = l->nb_sends };
        if (!kr.frame || (ret = av_fifo_write(l->ref_kept, &kr, 1)) < 0) {
            av_frame_free(&kr.frame);
            return AVERROR(ENOMEM);
        }
    }
    if (av_log_get_level() >= AV_LOG_DEBUG) {
        char list[4 * VMAF_CUDA_MAX_RENDITIONS] = "";
        for (unsigned k = 0; k < l->n; k++)
            if (dists[k])
                av_strlcatf(list, sizeof(list), "%s%u", *list ? " " : "", k);
        av_log(ctx, AV_LOG_DEBUG, "ladder send %"PRId64": reference frame %"PRId64", "
               "renditions %s\n", l->nb_sends, seq, list);
    }
    rc = vmaf_cuda_ladder_send(l->lad, &pic_ref, dists);
    if (rc < 0) {
        av_log(ctx, AV_LOG_ERROR, "vmaf_cuda_ladder_send failed: %s: %s\n",
               vmaf_cuda_strerror(rc), vmaf_cuda_ladder_error_message(l->lad));
        return vmaf_cuda_ff_status_to_averror(rc);
    }
    l->nb_sends++;
    for (unsigned k = 0; k < l->n; k++) {
        Rendition *r = &l->r[k];
        int scored;
        if (!dists[k])
            continue;
        scored = s->n_subsample <= 1 || r->st.nb_sent % s->n_subsample == 0;
        ret = vmaf_cuda_ff_stream_queue(&r->st, r->ev_dist, NULL, r->st.nb_sent++, scored);
        r->ev_dist = NULL;
        if (ret < 0)
            return ret;
    }
    for (unsigned k = 0; k < l->n; k++)
        if (!l->r[k].done && (ret = vmaf_cuda_ff_stream_drain(ctx, &l->r[k].st, 0)) < 0)
            return ret;
    release_kept_refs(l, 0);
    trim_reference_queue(l);
    return 1;
}

/** Rendition k's output was closed downstream (its EOF): it gets nothing more; what it
 *  sent is logged at the end, as far as it went out. */
static int close_rendition(AVFilterContext *ctx, unsigned k, int status)
{
    VmafCudaContext *s = ctx->priv;
    struct VmafCudaLadderState *l = s->ladder;
    Rendition *r = &l->r[k];

    r->done = 1;
    ff_inlink_set_status(ctx->inputs[k], status);
    av_frame_free(&r->ev_dist);
    lsync_free(r);
    trim_reference_queue(l);
    return r->st.nb_sent ? vmaf_cuda_ff_stream_flush(ctx, &r->st) : 0;
}

int vmaf_cuda_ladder_ff_activate(AVFilterContext *ctx)
{
    VmafCudaContext *s = ctx->priv;
    struct VmafCudaLadderState *l = s->ladder;
    AVFilterLink *reflink = ctx->inputs[l->n];
    int ret, moved, live = 0, want_ref = 0, busy = 0;

    for (unsigned k = 0; k < l->n; k++) {
        Rendition *r = &l->r[k];
        int status;
        if (r->done)
            continue;
        if ((status = ff_outlink_get_status(ctx->outputs[k]))) {
            if ((ret = close_rendition(ctx, k, status)) < 0)
                return ret;
            continue;
        }
        if ((ret = vmaf_cuda_pairing_observe_links(&r->pairing, ctx->inputs[k], reflink)) < 0)
            return ret;
        vmaf_cuda_ff_stream_update_out_index(ctx, &r->st);
    }

    for (unsigned k = 0; k < l->n; k++)
        l->r[k].stepped = 0;
    do {
        moved = 0;
        for (unsigned k = 0; k < l->n; k++)
            if ((ret = step_rendition(ctx, k, &moved)) < 0)
                return ret;
        busy |= moved;
        if ((ret = send_batch(ctx)) < 0)
            return ret;
        if (ret > 0) {
            busy = 1;
            break; /* one send per call; the next call goes on */
        }
        if (!moved) {
            for (unsigned k = 0; k < l->n; k++)
                want_ref |= !l->r[k].done && l->r[k].need_ref;
            if (want_ref && (ret = pull_reference(ctx)) < 0)
                return ret;
            moved = want_ref && ret > 0;
            want_ref = 0;
        }
    } while (moved);
    trim_reference_queue(l); /* (reference frames passed over before the first pair) */

    /* ask for what the framesyncs wait for, and (prefetch) a few frames ahead, so that
     * every decoder keeps decoding */
    for (unsigned k = 0; k < l->n; k++) {
        Rendition *r = &l->r[k];
        AVFilterLink *in = ctx->inputs[k];
        if (r->done)
            continue;
        live = 1;
        want_ref |= r->need_ref;
        if (!ff_outlink_get_status(in) &&
            (r->need_main || ff_inlink_queued_frames(in) < (size_t)s->prefetch))
            ff_inlink_request_frame(in);
    }
    if (live && !l->ref_eof && !ff_outlink_get_status(reflink) &&
        (want_ref || ff_inlink_queued_frames(reflink) < (size_t)s->prefetch))
        ff_inlink_request_frame(reflink);
    if (!live && !l->finished) {
        l->finished = 1;
        ff_inlink_set_status(reflink, AVERROR_EOF);
        trim_reference_queue(l);
    }
    if (live && busy)
        ff_filter_set_ready(ctx, 100);
    return 0;
}

int vmaf_cuda_ladder_ff_output_closed(AVFilterContext *ctx, const char *sink, int64_t last)
{
    VmafCudaContext *s = ctx->priv;
    struct VmafCudaLadderState *l = s->ladder;

    for (unsigned k = 0; l && k < l->n; k++) {
        Rendition *r = &l->r[k];
        if (!vmaf_cuda_ff_stream_output_closed(ctx, &r->st, sink, last))
            continue;
        /* its consumer wants nothing more: the rendition ends here, and its output
         * says so (its buffersink would otherwise keep asking for frames) */
        if (r->done)
            return 0;
        ff_outlink_set_status(ctx->outputs[k], AVERROR_EOF, AV_NOPTS_VALUE);
        return close_rendition(ctx, k, AVERROR_EOF);
    }
    return 0;
}

int vmaf_cuda_ladder_ff_results(AVFilterContext *ctx)
{
    VmafCudaContext *s = ctx->priv;
    struct VmafCudaLadderState *l = s->ladder;
    int ret = 0, err;

    if (!l || l->results_done)
        return 0;
    l->results_done = 1;
    for (unsigned k = 0; l->r && k < l->n; k++) {
        Rendition *r = &l->r[k];
        if (r->st.session && r->st.nb_sent) {
            vmaf_cuda_pairing_report(&r->pairing, ctx);
            if ((err = vmaf_cuda_ff_stream_results(ctx, &r->st)) < 0 && !ret)
                ret = err;
        } else if (r->st.session && !r->ended) {
            av_log(ctx, AV_LOG_WARNING, "%sno frame pair was scored: no log%s written, no "
                   "VMAF score\n", r->st.prefix, r->st.log_path ? " file" : "");
            vmaf_cuda_ff_no_log(ctx, r->st.prefix, r->st.log_path);
        }
    }
    return ret ? ret : l->failed;
}

/* ---------------------------------------------------------------- configuration */

/* Every input is configured here (the reference is the last): each rendition is
 * compared with the reference, and every mismatch is reported before any frame. */
static int config_input_ref(AVFilterLink *reflink)
{
    AVFilterContext *ctx = reflink->dst;
    VmafCudaContext *s = ctx->priv;
    struct VmafCudaLadderState *l = s->ladder;
    enum AVPixelFormat ref_fmt = vmaf_cuda_ff_layout_format(reflink);
    const int hw = reflink->format == AV_PIX_FMT_CUDA;
    char ref_str[96];
    int err = 0;

    vmaf_cuda_ff_describe_link(reflink, ref_str, sizeof(ref_str));
    if (hw && !ff_filter_link(reflink)->hw_frames_ctx) {
        av_log(ctx, AV_LOG_ERROR, "CUDA input without a hardware frames context\n");
        return AVERROR(EINVAL);
    }
    if (vmaf_cuda_layout(av_pix_fmt_desc_get(ref_fmt), &l->ref_layout) < 0) {
        av_log(ctx, AV_LOG_ERROR, "unsupported reference format: %s\n", ref_str);
        return AVERROR(EINVAL);
    }
    for (unsigned k = 0; k < l->n; k++) {
        AVFilterLink *m = ctx->inputs[k];
        enum AVPixelFormat fmt = vmaf_cuda_ff_layout_format(m);
        const VmafCudaLayout *rl = &l->ref_layout;
        VmafCudaLayout *ml = &l->r[k].layout;
        char str[96];

        vmaf_cuda_ff_describe_link(m, str, sizeof(str));
        if ((m->format == AV_PIX_FMT_CUDA) != hw) {
            av_log(ctx, AV_LOG_ERROR, "rendition %u (main%u) is %s but the reference is %s: "
                   "every input must be CUDA frames or every input software frames (use "
                   "hwupload_cuda or hwdownload)\n", k, k, str, ref_str);
            return AVERROR(EINVAL);
        }
        if (hw && !ff_filter_link(m)->hw_frames_ctx) {
            av_log(ctx, AV_LOG_ERROR, "CUDA input without a hardware frames context\n");
            return AVERROR(EINVAL);
        }
        if (m->w != reflink->w || m->h != reflink->h) {
            av_log(ctx, AV_LOG_ERROR, "rendition %u (main%u) is %dx%d, the reference is "
                   "%dx%d: each rendition must have the reference's size, and the filter "
                   "does not scale; scale it in the graph first: scale_cuda=%d:%d for CUDA "
                   "frames (NVDEC), scale=%d:%d for software frames\n", k, k, m->w, m->h,
                   reflink->w, reflink->h, reflink->w, reflink->h, reflink->w, reflink->h);
            err = AVERROR(EINVAL);
        }
        if (vmaf_cuda_layout(av_pix_fmt_desc_get(fmt), ml) < 0) {
            av_log(ctx, AV_LOG_ERROR, "rendition %u (main%u): unsupported format %s\n", k, k,
                   str);
            return AVERROR(EINVAL);
        }
        if (ml->bpc != rl->bpc || ml->chroma != rl->chroma || (!hw && fmt != ref_fmt)) {
            av_log(ctx, AV_LOG_ERROR, "rendition %u (main%u) is %s (%u-bit, %s), the "
                   "reference is %s (%u-bit, %s): each rendition must have the reference's "
                   "pixel format (bit depth, chroma subsampling, range); convert it first, e.g. "
                   "scale_cuda=format=%s for CUDA frames, format=%s for software frames\n",
                   k, k, str, ml->bpc, vmaf_cuda_chroma_name(ml->chroma), ref_str, rl->bpc,
                   vmaf_cuda_chroma_name(rl->chroma), av_get_pix_fmt_name(ref_fmt),
                   av_get_pix_fmt_name(ref_fmt));
            err = AVERROR(EINVAL);
        }
#if CONFIG_CUDA
        if (!err && hw) {
            AVHWFramesContext *mf = (AVHWFramesContext *)ff_filter_link(m)->hw_frames_ctx->data;
            AVHWFramesContext *rf = (AVHWFramesContext *)ff_filter_link(reflink)->hw_frames_ctx->data;
            AVCUDADeviceContext *md = mf->device_ctx->hwctx, *rd = rf->device_ctx->hwctx;
            if (md->cuda_ctx != rd->cuda_ctx) {
                av_log(ctx, AV_LOG_ERROR, "rendition %u (main%u) and the reference are in "
                       "different CUDA contexts (two devices, or two hwupload_cuda "
                       "instances): decode every input with -hwaccel cuda on one device, or "
                       "give software frames (backend=cuda uploads them)\n", k, k);
                err = AVERROR(EINVAL);
            }
        }
#endif
    }
    if (err)
        return err;
    s->hw_frames = hw;
    s->bpc = l->ref_layout.bpc;
    s->shift = l->ref_layout.shift;
    s->with_chroma = l->ref_layout.chroma != VMAF_CUDA_CHROMA_400;
    s->chroma_note[0] = 0;
    return 0;
}

static int open_ladder(AVFilterContext *ctx)
{
    VmafCudaContext *s = ctx->priv;
    struct VmafCudaLadderState *l = s->ladder;
    AVFilterLink *reflink = ctx->inputs[l->n];
    VmafCudaSettings st;
    char err[512] = "", extra[48];
    int ret;

    if ((ret = vmaf_cuda_ff_settings(ctx, s->hw_frames ? reflink : NULL, reflink->w,
                                     reflink->h, s->bpc, l->ref_layout.chroma, &st)) < 0)
        return ret;
    ret = vmaf_cuda_ladder_open(&l->lad, &st, l->n, err, sizeof(err));
    if (ret < 0) {
        av_log(ctx, AV_LOG_ERROR, "cannot open the VMAF session: %s%s%s\n",
               vmaf_cuda_strerror(ret), *err ? ": " : "", err);
        l->lad = NULL;
        return vmaf_cuda_ff_status_to_averror(ret);
    }
    for (unsigned k = 0; k < l->n; k++)
        l->r[k].st.session = vmaf_cuda_ladder_session(l->lad, k);
    s->nb_models = vmaf_cuda_model_count(l->r[0].st.session);
    snprintf(extra, sizeof(extra), ", %u renditions", l->n);
    vmaf_cuda_ff_banner(ctx, l->r[0].st.session, &st, extra);
    return 0;
}

static int config_output(AVFilterLink *outlink)
{
    AVFilterContext *ctx = outlink->src;
    VmafCudaContext *s = ctx->priv;
    struct VmafCudaLadderState *l = s->ladder;
    unsigned k = FF_OUTLINK_IDX(outlink);
    Rendition *r = &l->r[k];
    AVFilterLink *mainlink = ctx->inputs[k], *reflink = ctx->inputs[l->n];
    FilterLink *il = ff_filter_link(mainlink);
    VmafCudaLiveOptions live = {
        .window = s->window, .window_log = s->window_log, .sei = s->sei, .ndjson = s->ndjson,
        .log_path = r->st.log_path, .precision = s->precision, .pool = s->pool_method,
    };
    int ret;

    if ((ret = vmaf_cuda_ff_config_outlink(outlink, mainlink)) < 0)
        return ret;
    lsync_free(r);
    lsync_configure(r, ctx, mainlink, reflink, &s->fs);
    vmaf_cuda_pairing_uninit(&r->pairing);
    if ((ret = vmaf_cuda_pairing_init(&r->pairing, r->fs.time_base, il->frame_rate,
                                      ff_filter_link(reflink)->frame_rate)) < 0)
        return ret;
    if (!l->lad && (ret = open_ladder(ctx)) < 0)
        return ret;
    if (!r->st.live &&
        (ret = vmaf_cuda_live_ff_open(ctx, &live, r->st.session, outlink, &r->st.live)) < 0)
        return ret;
    return 0;
}

/** `path` with each %d replaced by k and %% by %; NULL when it has no %d. */
static char *rendition_path(const char *path, unsigned k)
{
    AVBPrint bp;
    char *out = NULL;
    int has_d = 0;

    av_bprint_init(&bp, 0, AV_BPRINT_SIZE_UNLIMITED);
    for (const char *p = path; *p; p++) {
        if (p[0] == '%' && p[1] == 'd') {
            av_bprintf(&bp, "%u", k);
            has_d = 1;
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            av_bprint_chars(&bp, '%', 1);
            p++;
        } else {
            av_bprint_chars(&bp, *p, 1);
        }
    }
    if (has_d && av_bprint_is_complete(&bp))
        av_bprint_finalize(&bp, &out);
    else
        av_bprint_finalize(&bp, NULL);
    return out;
}

int vmaf_cuda_ladder_ff_init(AVFilterContext *ctx)
{
    VmafCudaContext *s = ctx->priv;
    struct VmafCudaLadderState *l;
    unsigned n = (unsigned)s->renditions;
    int ret;

    char *probe = s->log_path ? rendition_path(s->log_path, 0) : NULL;
    int has_d = probe != NULL;

    av_free(probe);
    if (s->log_path && !has_d) {
        av_log(ctx, AV_LOG_ERROR, "log_path '%s' has no %%d: with renditions=%u each "
               "rendition writes its own log, named by log_path with %%d replaced by the "
               "rendition's index from 0 (e.g. log_path=vmaf_%%d.json)\n", s->log_path, n);
        return AVERROR(EINVAL);
    }
    l = s->ladder = av_mallocz(sizeof(*l));
    if (!l)
        return AVERROR(ENOMEM);
    l->r = av_calloc(n, sizeof(*l->r));
    l->refq = av_fifo_alloc2(8, sizeof(AVFrame *), AV_FIFO_FLAG_AUTO_GROW);
    l->ref_kept = av_fifo_alloc2(8, sizeof(KeptRef), AV_FIFO_FLAG_AUTO_GROW);
    if (!l->r || !l->refq || !l->ref_kept)
        return AVERROR(ENOMEM);
    l->n = n;
    for (unsigned k = 0; k < n; k++) {
        Rendition *r = &l->r[k];
        r->st.out = k;
        snprintf(r->st.prefix, sizeof(r->st.prefix), "rendition %u: ", k);
        snprintf(r->pairing.prefix, sizeof(r->pairing.prefix), "rendition %u: ", k);
        r->ref_seq[0] = r->ref_seq[1] = -1;
        if ((ret = vmaf_cuda_ff_stream_init(&r->st)) < 0)
            return ret;
        if (s->log_path) {
            if (!(r->st.log_path = rendition_path(s->log_path, k)))
                return AVERROR(ENOMEM);
            if ((ret = vmaf_cuda_ff_check_log_path(ctx, r->st.log_path)) < 0)
                return ret;
        }
    }
    for (unsigned k = 0; k <= n; k++) {
        AVFilterPad pad = { .type = AVMEDIA_TYPE_VIDEO };
        if (k < n) {
            pad.name = av_asprintf("main%u", k);
            if (!pad.name)
                return AVERROR(ENOMEM);
            ret = ff_append_inpad_free_name(ctx, &pad);
        } else {
            pad.name = "reference";
            pad.config_props = config_input_ref;
            ret = ff_append_inpad(ctx, &pad);
        }
        if (ret < 0)
            return ret;
    }
    for (unsigned k = 0; k < n; k++) {
        AVFilterPad pad = { .type = AVMEDIA_TYPE_VIDEO, .config_props = config_output };
        if (!(pad.name = av_asprintf("out%u", k)))
            return AVERROR(ENOMEM);
        if ((ret = ff_append_outpad_free_name(ctx, &pad)) < 0)
            return ret;
    }
    return 0;
}

void vmaf_cuda_ladder_ff_uninit(AVFilterContext *ctx)
{
    VmafCudaContext *s = ctx->priv;
    struct VmafCudaLadderState *l = s->ladder;
    AVFrame *frame;

    if (!l)
        return;
    for (unsigned k = 0; l->r && k < l->n; k++) {
        vmaf_cuda_live_close(l->r[k].st.live);
        l->r[k].st.live = NULL;
        l->r[k].st.session = NULL;
    }
    vmaf_cuda_ladder_close(l->lad);
    l->lad = NULL;
    for (unsigned k = 0; l->r && k < l->n; k++) {
        Rendition *r = &l->r[k];
        av_frame_free(&r->ev_dist);
        lsync_free(r);
        vmaf_cuda_ff_stream_uninit(&r->st);
        vmaf_cuda_pairing_uninit(&r->pairing);
        av_freep(&r->copy.buf);
        av_freep(&r->st.log_path);
    }
    while (l->refq && av_fifo_read(l->refq, &frame, 1) >= 0)
        av_frame_free(&frame);
    av_fifo_freep2(&l->refq);
    if (l->ref_kept)
        release_kept_refs(l, 1);
    av_fifo_freep2(&l->ref_kept);
    av_freep(&l->ref_copy.buf);
    av_freep(&l->r);
    av_freep(&s->ladder);
}

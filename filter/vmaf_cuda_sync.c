/* SPDX-License-Identifier: BSD-2-Clause-Patent */
/**
 * @file
 * A ladder's pairing, framesync's rules for each rendition: see vmaf_cuda_sync.h.
 */

#include <stdint.h>
#include <string.h>

#include "libavutil/common.h"
#include "libavutil/mathematics.h"
#include "libavutil/mem.h"

#include "filters.h"
#include "vmaf_cuda_sync.h"

static void set_eof(VmafCudaSyncRendition *r, int64_t pts)
{
    r->fs.eof = 1;
    r->fs.frame_ready = 0;
    r->eof_pts = pts;
}

static void level_update(VmafCudaSyncRendition *r, int64_t eof_pts)
{
    FFFrameSync *fs = &r->fs;
    unsigned level = 0;

    for (unsigned i = 0; i < 2; i++)
        if (fs->in[i].state != VMAF_CUDA_SYNC_EOF)
            level = FFMAX(level, fs->in[i].sync);
    if (fs->opt_ts_sync_mode > TS_DEFAULT)
        for (unsigned i = 0; i < 2; i++)
            fs->in[i].ts_mode = fs->in[i].sync < level ? fs->opt_ts_sync_mode : TS_DEFAULT;
    if (level)
        fs->sync_level = level;
    else
        set_eof(r, eof_pts);
}

int ff_vmaf_cuda_sync_init(VmafCudaSync *s, unsigned n)
{
    s->n = n;
    s->r = av_calloc(n, sizeof(*s->r));
    s->refq = av_fifo_alloc2(8, sizeof(AVFrame *), AV_FIFO_FLAG_AUTO_GROW);
    if (!s->r || !s->refq)
        return AVERROR(ENOMEM);
    for (unsigned k = 0; k < n; k++)
        s->r[k].ref_seq[0] = s->r[k].ref_seq[1] = -1;
    return 0;
}

void ff_vmaf_cuda_sync_free(VmafCudaSync *s, unsigned k)
{
    for (unsigned i = 0; i < 2; i++) {
        av_frame_free(&s->r[k].in[i].frame);
        av_frame_free(&s->r[k].in[i].frame_next);
    }
}

void ff_vmaf_cuda_sync_uninit(VmafCudaSync *s)
{
    AVFrame *frame;

    for (unsigned k = 0; s->r && k < s->n; k++)
        ff_vmaf_cuda_sync_free(s, k);
    while (s->refq && av_fifo_read(s->refq, &frame, 1) >= 0)
        av_frame_free(&frame);
    av_fifo_freep2(&s->refq);
    av_freep(&s->r);
}

void ff_vmaf_cuda_sync_configure(VmafCudaSync *s, unsigned k, AVFilterContext *ctx,
                                 AVFilterLink *mainlink, AVFilterLink *reflink,
                                 const FFFrameSync *opt)
{
    VmafCudaSyncRendition *r = &s->r[k];
    FFFrameSync *fs = &r->fs;
    int repeatlast = opt->opt_repeatlast, eof_action = opt->opt_eof_action;
    int shortest = opt->opt_shortest;
    AVRational tb = { 0, 0 };

    ff_vmaf_cuda_sync_free(s, k);
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
    level_update(r, AV_NOPTS_VALUE);
}

static void inject_frame(VmafCudaSyncRendition *r, unsigned i, AVFrame *frame)
{
    FFFrameSyncIn *in = &r->fs.in[i];

    frame->pts = av_rescale_q_rnd(frame->pts, in->time_base, r->fs.time_base,
                                  AV_ROUND_NEAR_INF | AV_ROUND_PASS_MINMAX);
    in->frame_next = frame;
    in->pts_next = frame->pts;
    in->have_next = 1;
}

static void inject_status(VmafCudaSyncRendition *r, unsigned i, int status, int64_t eof_pts)
{
    FFFrameSyncIn *in = &r->fs.in[i];

    in->sync = 0;
    level_update(r, status == AVERROR_EOF ? eof_pts : AV_NOPTS_VALUE);
    in->frame_next = NULL;
    in->pts_next = in->state != VMAF_CUDA_SYNC_RUN || in->after == EXT_INFINITY ? INT64_MAX : in->pts + 1;
    in->have_next = 1;
}

/** The queued reference frame of queue number seq (a new reference to it). */
static AVFrame *refq_clone(VmafCudaSync *s, int64_t seq)
{
    AVFrame *frame;

    if (av_fifo_peek(s->refq, &frame, 1, (size_t)(seq - s->refq_base)) < 0)
        return NULL;
    return av_frame_clone(frame);
}

/** framesync's consume_from_fifos() for rendition k: 1 when both inputs have their next
 *  frame (or status), 0 when one waits (need_main / need_ref say which). */
static int consume(VmafCudaSync *s, unsigned k, AVFilterLink *mainlink, int *moved)
{
    VmafCudaSyncRendition *r = &s->r[k];
    int64_t pts;
    int ret, status, miss = 0;

    if (!r->in[0].have_next && r->in[0].state != VMAF_CUDA_SYNC_EOF) {
        AVFrame *frame = NULL;
        if ((ret = ff_inlink_consume_frame(mainlink, &frame)) < 0)
            return ret;
        if (ret) {
            inject_frame(r, 0, frame);
            *moved = 1;
        } else if (ff_inlink_acknowledge_status(mainlink, &status, &pts) > 0) {
            inject_status(r, 0, status, pts);
            *moved = 1;
        } else {
            r->need_main = miss = 1;
        }
    }
    if (!r->in[1].have_next && r->in[1].state != VMAF_CUDA_SYNC_EOF) {
        if (r->ref_cursor < s->refq_base + (int64_t)av_fifo_can_read(s->refq)) {
            AVFrame *frame = refq_clone(s, r->ref_cursor);
            if (!frame)
                return AVERROR(ENOMEM);
            inject_frame(r, 1, frame);
            r->ref_seq[1] = r->ref_cursor++;
            *moved = 1;
        } else if (s->ref_eof) {
            inject_status(r, 1, s->ref_status, s->ref_status_pts);
            r->ref_seq[1] = -1;
            *moved = 1;
        } else {
            r->need_ref = miss = 1;
        }
    }
    return !miss;
}

int ff_vmaf_cuda_sync_advance(VmafCudaSync *s, unsigned k, AVFilterLink *mainlink, int *moved)
{
    VmafCudaSyncRendition *r = &s->r[k];
    FFFrameSync *fs = &r->fs;
    int64_t pts;
    int ret;

    r->need_main = r->need_ref = 0;
    while (!(fs->frame_ready || fs->eof)) {
        if ((ret = consume(s, k, mainlink, moved)) <= 0)
            return ret;
        pts = INT64_MAX;
        for (unsigned i = 0; i < 2; i++)
            if (fs->in[i].have_next && fs->in[i].pts_next < pts)
                pts = fs->in[i].pts_next;
        if (pts == INT64_MAX) {
            set_eof(r, AV_NOPTS_VALUE);
            break;
        }
        for (unsigned i = 0; i < 2; i++) {
            FFFrameSyncIn *in = &fs->in[i];
            if (in->pts_next == pts ||
                (in->ts_mode == TS_NEAREST && in->have_next && in->pts_next != INT64_MAX &&
                 in->pts != AV_NOPTS_VALUE && in->pts_next - pts < pts - in->pts) ||
                (in->before == EXT_INFINITY && in->state == VMAF_CUDA_SYNC_BOF)) {
                av_frame_free(&in->frame);
                in->frame = in->frame_next;
                in->pts = in->pts_next;
                in->frame_next = NULL;
                in->pts_next = AV_NOPTS_VALUE;
                in->have_next = 0;
                in->state = in->frame ? VMAF_CUDA_SYNC_RUN : VMAF_CUDA_SYNC_EOF;
                if (i == 1) {
                    r->ref_seq[0] = r->ref_seq[1];
                    r->ref_seq[1] = -1;
                }
                if (in->sync == fs->sync_level && in->frame)
                    fs->frame_ready = 1;
                if (in->state == VMAF_CUDA_SYNC_EOF && in->after == EXT_STOP)
                    set_eof(r, AV_NOPTS_VALUE);
            }
        }
        if (fs->frame_ready)
            for (unsigned i = 0; i < 2; i++)
                if (fs->in[i].state == VMAF_CUDA_SYNC_BOF && fs->in[i].before == EXT_STOP)
                    fs->frame_ready = 0;
        fs->pts = pts;
    }
    return 1;
}

AVFrame *ff_vmaf_cuda_sync_take_main(VmafCudaSync *s, unsigned k)
{
    FFFrameSync *fs = &s->r[k].fs;
    AVFrame *frame = fs->in[0].frame;
    int64_t pts_next = fs->in[0].have_next ? fs->in[0].pts_next : INT64_MAX;

    if (!frame)
        return NULL;
    if (fs->in[1].sync && (!fs->in[1].have_next || fs->in[1].pts_next < pts_next))
        frame = av_frame_clone(frame);
    else
        fs->in[0].frame = NULL;
    fs->frame_ready = 0;
    return frame;
}

int64_t ff_vmaf_cuda_sync_next_pairable(const VmafCudaSync *s, unsigned k, int over)
{
    const VmafCudaSyncRendition *r = &s->r[k];

    if (over || r->in[1].state == VMAF_CUDA_SYNC_EOF)
        return INT64_MAX;
    if (r->in[1].frame)
        return r->ref_seq[0];
    if (r->in[1].have_next)
        return r->in[1].frame_next ? r->ref_seq[1] : INT64_MAX;
    return r->ref_cursor;
}

int ff_vmaf_cuda_sync_pull_reference(VmafCudaSync *s, AVFilterLink *reflink)
{
    AVFrame *frame = NULL;
    int ret;

    if (s->ref_eof)
        return 0;
    if ((ret = ff_inlink_consume_frame(reflink, &frame)) < 0)
        return ret;
    if (ret) {
        if ((ret = av_fifo_write(s->refq, &frame, 1)) < 0) {
            av_frame_free(&frame);
            return ret;
        }
        return 1;
    }
    if (ff_inlink_acknowledge_status(reflink, &s->ref_status, &s->ref_status_pts) > 0) {
        s->ref_eof = 1;
        return 1;
    }
    return 0;
}

void ff_vmaf_cuda_sync_trim(VmafCudaSync *s, uint64_t done)
{
    int64_t keep = INT64_MAX;
    AVFrame *frame;

    for (unsigned k = 0; k < s->n; k++)
        if (!(done >> k & 1))
            keep = FFMIN(keep, s->r[k].ref_cursor);
    while (s->refq_base < keep && av_fifo_read(s->refq, &frame, 1) >= 0) {
        av_frame_free(&frame);
        s->refq_base++;
    }
}

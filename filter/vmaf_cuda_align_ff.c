/* SPDX-License-Identifier: BSD-2-Clause-Patent */

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "libavutil/avstring.h"
#include "libavutil/mathematics.h"
#include "libavutil/mem.h"

#include "filters.h"
#include "vmaf_cuda_align_ff.h"
#include "vmaf_cuda_live_ff.h"

int ff_vmaf_cuda_sync_auto_init(AVFilterContext *ctx, VmafCudaSyncAuto *a, double window,
                                AVRational tb, const char *prefix)
{
    VmafCudaAlignSettings s = {
        .window = FFMAX(1, llrint(window * tb.den / tb.num)),
        .tb_num = tb.num, .tb_den = tb.den, .prefix = prefix,
    };

    ff_vmaf_cuda_sync_auto_uninit(a);
    memset(a, 0, sizeof(*a));
    a->tb = tb;
    a->holding = 1;
    a->window = s.window;
    for (int i = 0; i < 2; i++)
        a->first_pts[i] = a->last_pts[i] = AV_NOPTS_VALUE;
    for (int i = 0; i < 1024; i++)
        a->ring_index[i] = -1;
    if (vmaf_cuda_align_open(&a->align, &s) < 0) {
        av_log(ctx, AV_LOG_ERROR, "sync=auto: cannot open the alignment search\n");
        return AVERROR(ENOMEM);
    }
    return 0;
}

void ff_vmaf_cuda_sync_auto_uninit(VmafCudaSyncAuto *a)
{
    vmaf_cuda_align_close(a->align);
    a->align = NULL;
    av_freep(&a->copy.buf);
    a->copy.size = 0;
}

/** Gives the search the frames of input i not looked at yet. */
static int sign_link(AVFilterContext *ctx, VmafCudaSyncAuto *a, int i, AVFilterLink *link,
                     const VmafCudaLayout *layout, int hw_frames, VmafCudaSession *session,
                     unsigned width, unsigned height)
{
    int64_t consumed = ff_filter_link(link)->frame_count_out;
    size_t queued = ff_inlink_queued_frames(link);
    VmafCudaSignature sig;
    VmafCudaPicture pic;
    int64_t pts;
    int ret;

    for (size_t k = (size_t)FFMAX(a->signed_upto[i] - consumed, 0); k < queued; k++) {
        AVFrame *f = ff_inlink_peek_frame(link, k);
        const int64_t num = consumed + (int64_t)k;
        a->signed_upto[i] = num + 1;
        if (f->pts == AV_NOPTS_VALUE)
            continue;
        pts = av_rescale_q_rnd(f->pts, link->time_base, a->tb, AV_ROUND_NEAR_INF | AV_ROUND_PASS_MINMAX);
        if (i == 0) {
            a->ring_index[num % 1024] = num;
            a->ring_pts[num % 1024] = pts;
            /* a re-check starts `guard` main frames after the collapse's (frames not read
             * yet, whatever was in flight: the same frames on every run) */
            if (a->recheck_wait == 2 && num >= a->recheck_at) {
                if (num > a->recheck_at)
                    av_log(ctx, AV_LOG_VERBOSE, "sync: the re-check starts %"PRId64" frames "
                           "later than planned\n", num - a->recheck_at);
                vmaf_cuda_align_recheck_from(a->align, pts);
                a->recheck_wait = 0;
            }
        }
        /* (a frame of another size than the session's, after a resolution change, is
         * left out: the signature reads the session's size) */
        if (!vmaf_cuda_align_wants(a->align) || !session || f->width != (int)width ||
            f->height != (int)height)
            continue;
        if ((ret = ff_vmaf_cuda_picture_fill(ctx, f, layout, hw_frames, 0, &a->copy, &pic)) < 0)
            return ret;
        if ((ret = vmaf_cuda_picture_signature(session, &pic, &sig)) < 0) {
            av_log(ctx, AV_LOG_ERROR, "sync=auto: the signature of a frame failed: %s\n",
                   vmaf_cuda_error_message(session));
            return AVERROR_EXTERNAL;
        }
        if (vmaf_cuda_align_add(a->align, i, pts, &sig) < 0)
            return AVERROR(ENOMEM);
        if (a->first_pts[i] == AV_NOPTS_VALUE)
            a->first_pts[i] = pts;
        a->last_pts[i] = pts;
    }
    if (!a->ended[i] && ff_outlink_get_status(link) && a->signed_upto[i] == consumed + (int64_t)queued) {
        a->ended[i] = 1;
        vmaf_cuda_align_input_ended(a->align, i);
    }
    return 0;
}

int ff_vmaf_cuda_sync_auto_collect(AVFilterContext *ctx, VmafCudaSyncAuto *a,
                                   AVFilterLink *mainlink, AVFilterLink *reflink,
                                   const VmafCudaLayout *layout, int hw_frames,
                                   VmafCudaSession *session, unsigned width,
                                   unsigned height, VmafCudaPairWatch *w)
{
    VmafCudaAlignResult r;
    int64_t limit;
    int ret, force;

    if (!a->align)
        return 0;
    if (a->recheck_wait == 1) {
        /* the collapse's main frame among those looked at: the re-check starts `guard`
         * frames after it */
        a->recheck_at = a->signed_upto[0];
        for (int j = 0; j < 1024; j++)
            if (a->ring_index[j] >= 0 && a->ring_pts[j] == a->collapse_pts) {
                a->recheck_at = a->ring_index[j] + a->guard;
                break;
            }
        a->recheck_wait = 2;
    }
    if ((ret = sign_link(ctx, a, 0, mainlink, layout, hw_frames, session, width, height)) < 0 ||
        (ret = sign_link(ctx, a, 1, reflink, layout, hw_frames, session, width, height)) < 0)
        return ret;
    /* (timestamps that stall: decide rather than hold frames without end) */
    force = (a->holding || a->recheck_hold) && (ff_inlink_queued_frames(mainlink) > 8192 ||
                                               ff_inlink_queued_frames(reflink) > 8192);
    limit = vmaf_cuda_align_ref_limit(a->align);
    if ((ret = vmaf_cuda_align_poll(a->align, force, &r)) < 0)
        return AVERROR(EINVAL);
    if (ret == 1) {
        const int first = a->holding;
        /* (a re-check is told as its collapse was: a warning) */
        av_log(ctx, r.found && !r.recheck ? AV_LOG_INFO : AV_LOG_WARNING, "%s\n", r.message);
        a->holding = a->recheck_hold = 0;
        if (first && r.found)
            vmaf_cuda_pairing_set_aligned(w->watch);
        if (first) {
            /* every reference frame gets it; the first of them marks where it starts
             * (ff_vmaf_cuda_sync_auto_mark()) */
            a->shift = w->ref_shift = r.offset;
        } else if (r.changed) {
            /* the reference's frames after the re-check's (held until now) */
            a->shift = w->ref_shift_next = r.offset;
            w->shift_from = r.ref_limit;
        }
        if (first || r.changed) {
            a->change = 1;
            a->change_seconds = first && !r.found ? NAN : r.seconds; /* (none found: null) */
        }
        av_strlcpy(a->pending, r.message, sizeof(a->pending));
        return 0;
    }
    /* a re-check: the reference's frames from its limit on wait for its decision */
    a->recheck_hold = 0;
    if (limit != INT64_MIN && limit != INT64_MAX) {
        int64_t consumed = ff_filter_link(reflink)->frame_count_out;
        size_t queued = ff_inlink_queued_frames(reflink);
        for (size_t k = (size_t)FFMAX(w->observed[1] - consumed, 0); k < queued; k++) {
            AVFrame *f = ff_inlink_peek_frame(reflink, k);
            if (f->pts != AV_NOPTS_VALUE &&
                av_rescale_q_rnd(f->pts, reflink->time_base, a->tb, AV_ROUND_NEAR_INF |
                                 AV_ROUND_PASS_MINMAX) >= limit) {
                a->recheck_hold = 1;
                break;
            }
        }
    }
    return a->holding || a->recheck_hold;
}

int ff_vmaf_cuda_sync_auto_wants_frames(const VmafCudaSyncAuto *a, int input)
{
    /* the first search holds 2 windows of each input: one read ahead of the other is not
     * asked for more (its frames would wait on the link for nothing); a re-check holds the
     * reference (it has its frames) until the main's are there */
    if (!a->holding)
        return input == 0 && !a->ended[0];
    return !a->ended[input] && (a->first_pts[input] == AV_NOPTS_VALUE ||
                                a->last_pts[input] - a->first_pts[input] < 2 * a->window);
}

int ff_vmaf_cuda_sync_auto_mark(VmafCudaSyncAuto *a, AVFrame *out, const FFFrameSync *fs,
                                VmafCudaPairWatch *w, VmafCudaSession *session,
                                int64_t index)
{
    int ret;

    if (!a->align)
        return 0;
    if (a->change && (!a->decided || (fs->in[1].frame &&
                                      av_dict_get(fs->in[1].frame->metadata, "lavfi.vmaf.sync.new", NULL, 0)))) {
        a->change = 0;
        w->shift_tagging = 0;
        a->decided = 1;
        if (isnan(a->change_seconds))
            a->offset_text[0] = 0; /* (no offset found: no lavfi.vmaf.sync.offset) */
        else
            snprintf(a->offset_text, sizeof(a->offset_text), "%.6f", a->change_seconds);
        if (session && vmaf_cuda_set_sync_offset(session, (uint64_t)index, a->change_seconds) < 0)
            return AVERROR(EINVAL);
    }
    if (a->decided && a->offset_text[0] &&
        (ret = av_dict_set(&out->metadata, "lavfi.vmaf.sync.offset", a->offset_text, 0)) < 0)
        return ret;
    if (a->pending[0] && !av_dict_get(out->metadata, "lavfi.vmaf.event", NULL, 0)) {
        if ((ret = ff_vmaf_cuda_live_mark_event(out, "sync", "both", a->pending)) < 0)
            return ret;
        a->pending[0] = 0;
    }
    return 0;
}

int ff_vmaf_cuda_sync_auto_score(AVFilterContext *ctx, VmafCudaSyncAuto *a, AVFrame *out,
                                 AVRational tb, double score)
{
    VmafCudaAlignResult r;
    int ret;

    if (!a->align || out->pts == AV_NOPTS_VALUE)
        return 0;
    ret = vmaf_cuda_align_score(a->align, av_rescale_q(out->pts, tb, a->tb), score, &r);
    if (ret <= 0)
        return ret < 0 ? AVERROR(EINVAL) : 0;
    av_log(ctx, AV_LOG_WARNING, "%s\n", r.message);
    a->collapse_pts = av_rescale_q(out->pts, tb, a->tb);
    a->recheck_wait = 1;
    if (!av_dict_get(out->metadata, "lavfi.vmaf.event", NULL, 0))
        return ff_vmaf_cuda_live_mark_event(out, "sync", "both", r.message);
    return 0;
}

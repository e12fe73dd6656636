/* SPDX-License-Identifier: BSD-2-Clause-Patent */
/**
 * @file
 * The filter's side of the pairing watch: see vmaf_cuda_pairing.h.
 */

#include <math.h>
#include <string.h>

#include "libavutil/mathematics.h"
#include "libavutil/mem.h"
#include "libavutil/pixdesc.h"

#include "filters.h"
#include "vmaf_cuda_live_ff.h"
#include "vmaf_cuda_pairing.h"
#include "vmaf_cuda_sync.h"

int ff_vmaf_cuda_pairing_init(VmafCudaPairWatch *p, const FFFrameSync *fs, AVRational main_rate,
                              AVRational ref_rate, const char *prefix, double live_timeout)
{
    const AVRational tb = fs->time_base;
    VmafCudaPairingSettings s = {
        .tb_num = tb.num, .tb_den = tb.den, .prefix = prefix,
        .nearest = fs->opt_ts_sync_mode == TS_NEAREST,
        .main_rate_num = main_rate.num, .main_rate_den = main_rate.den,
        .ref_rate_num = ref_rate.num, .ref_rate_den = ref_rate.den,
    };
    p->tb = tb;
    p->prefix = prefix;
    p->observed[0] = p->observed[1] = 0;
    p->reported = 0;
    p->live = live_timeout > 0;
    p->ref_shift = p->ref_shift_next = 0;
    p->shift_from = INT64_MAX;
    p->shift_tagging = 0;
    if (vmaf_cuda_pairing_open(&p->watch, &s) < 0)
        return AVERROR(ENOMEM);
    /* the timeout in ticks, at least one */
    return p->live && vmaf_cuda_pairing_set_live(p->watch, FFMAX(1, (int64_t)llrint(
               fmin(live_timeout * tb.den / tb.num, (double)INT64_MAX / 2)))) < 0
           ? AVERROR(EINVAL) : 0;
}

void ff_vmaf_cuda_pairing_uninit(VmafCudaPairWatch *p)
{
    vmaf_cuda_pairing_close(p->watch);
    p->watch = NULL;
}

/** A frame's duration in the pairing time base: its own, else one frame of the link's
 *  rate, else 0 (unknown). */
static int64_t frame_duration(const VmafCudaPairWatch *p, AVFilterLink *link, const AVFrame *f)
{
    AVRational fr = ff_filter_link(link)->frame_rate;

    if (f->duration > 0)
        return av_rescale_q(f->duration, link->time_base, p->tb);
    if (fr.num > 0 && fr.den > 0)
        return av_rescale_q(1, av_inv_q(fr), p->tb);
    return 0;
}

#define FS_ROUND (AV_ROUND_NEAR_INF | AV_ROUND_PASS_MINMAX)

int ff_vmaf_cuda_pairing_observe_links(VmafCudaPairWatch *p, AVFilterContext *ctx,
                                       AVFilterLink *mainlink, AVFilterLink *reflink)
{
    AVFilterLink *links[2] = { mainlink, reflink };

    if (!p->watch)
        return 0;
    for (int i = 0; i < 2; i++) {
        AVFilterLink *link = links[i];
        int64_t consumed = ff_filter_link(link)->frame_count_out;
        size_t queued = ff_inlink_queued_frames(link);

        /* from the first frame not seen yet (earlier activate calls saw the ones before) */
        for (size_t k = FFMAX(p->observed[i] - consumed, 0); k < queued; k++) {
            AVFrame *f = ff_inlink_peek_frame(link, k);
            /* the rounding framesync applies (framesync_inject_frame) */
            int64_t pts = av_rescale_q_rnd(f->pts, link->time_base, p->tb, FS_ROUND);
            int64_t dur = frame_duration(p, link, f), offset = 0;
            char line[512];
            int ret;

            /* its input's continuous timeline: after a reset, moved on before framesync */
            if ((ret = vmaf_cuda_pairing_timeline(p->watch, i, pts, dur, &offset, line,
                                                  sizeof(line))) < 0)
                return AVERROR(ENOMEM);
            if (ret)
                av_log(ctx, AV_LOG_WARNING, "%s", line);
            /* sync=auto: the reference's frames at the time of the main's frames of the
             * same pictures (after the timeline: its discontinuities are the feed's) */
            if (i == 1 && p->shift_from != INT64_MAX && pts >= p->shift_from) {
                p->ref_shift = p->ref_shift_next; /* (a re-check's, from this frame on) */
                p->shift_from = INT64_MAX;
                p->shift_tagging = 1;
            }
            /* (which frames came with it: the first pair with one of them starts the new
             * offset in the log, whatever order framesync met them in) */
            if (i == 1 && p->shift_tagging &&
                av_dict_set(&f->metadata, "lavfi.vmaf.sync.new", "1", 0) < 0)
                return AVERROR(ENOMEM);
            if (i == 1 && p->ref_shift)
                offset += p->ref_shift;
            if (offset && f->pts != AV_NOPTS_VALUE) {
                f->pts += av_rescale_q(offset, p->tb, link->time_base);
                pts = av_rescale_q_rnd(f->pts, link->time_base, p->tb, FS_ROUND);
            }
            if (vmaf_cuda_pairing_frame(p->watch, i, pts, dur) < 0)
                return AVERROR(ENOMEM);
            p->observed[i] = consumed + (int64_t)k + 1;
        }
    }
    return 0;
}

/** At the first pair: what makes equal pictures score as different ones, or makes the
 *  scores meaningless. */
static void start_checks(AVFilterContext *ctx, const char *prefix, const AVFrame *dist,
                         const AVFrame *ref, VmafCudaSession *vs)
{
    const AVFrame *frames[2] = { dist, ref };
    static const char *const names[2] = { "main", "reference" };
    int sdr_models = 1; /* every model is built in, so SDR */

    for (unsigned i = 0; vs && i < vmaf_cuda_model_count(vs); i++)
        sdr_models &= !!vmaf_cuda_model_builtin(vs, i);
    for (int i = 0; i < 2; i++) {
        const AVFrame *f = frames[i];
        if (f->flags & AV_FRAME_FLAG_INTERLACED)
            av_log(ctx, AV_LOG_WARNING, "%sthe %s input is interlaced: VMAF scores each frame "
                   "as one progressive picture; deinterlace both inputs first (e.g. bwdif)\n",
                   prefix, names[i]);
        if (sdr_models && (f->color_trc == AVCOL_TRC_SMPTE2084 ||
                           f->color_trc == AVCOL_TRC_ARIB_STD_B67))
            av_log(ctx, AV_LOG_WARNING, "%sthe %s input has the %s transfer of HDR video (%s), "
                   "but the built-in VMAF models score SDR video: the scores are not "
                   "meaningful for it\n", prefix, names[i],
                   f->color_trc == AVCOL_TRC_SMPTE2084 ? "PQ" : "HLG",
                   av_color_transfer_name(f->color_trc));
    }
    if (dist->color_range != AVCOL_RANGE_UNSPECIFIED &&
        ref->color_range != AVCOL_RANGE_UNSPECIFIED && dist->color_range != ref->color_range)
        av_log(ctx, AV_LOG_WARNING, "%scolour ranges differ: main is %s range, reference is "
               "%s range, so equal pictures have different samples; convert one to the other's "
               "range first (e.g. scale=in_range=%s:out_range=%s on the main)\n", prefix,
               av_color_range_name(dist->color_range), av_color_range_name(ref->color_range),
               av_color_range_name(dist->color_range), av_color_range_name(ref->color_range));
}

int ff_vmaf_cuda_pairing_event(VmafCudaPairWatch *p, AVFilterContext *ctx, const FFFrameSync *fs,
                               AVFrame *dist, const AVFrame *ref, int64_t index,
                               VmafCudaSession *vs)
{
    VmafCudaPairingEvent e = {
        .pts = fs->pts, .main_pts = fs->in[0].pts, .has_ref = !!ref, .ref_pts = fs->in[1].pts,
        .ref_ended = ff_vmaf_cuda_sync_ended(&fs->in[1]),
        .has_next_ref = fs->in[1].have_next && fs->in[1].frame_next,
        .next_ref_pts = fs->in[1].pts_next, .index = index,
    };
    VmafCudaPairingNotice n;
    const char *reason = NULL;
    char line[256];
    const int debug = av_log_get_level() >= AV_LOG_DEBUG;
    int ret, scored;

    if (!p->watch)
        return !!ref;
    if ((scored = vmaf_cuda_pairing_live_check(p->watch, &e, &n, &reason)) < 0)
        return AVERROR(ENOMEM);
    p->ref_over = reason && !strcmp(reason, "reference_ended");
    if (!scored) {
        e.has_ref = 0;
        e.index = -1;
        if ((ret = av_dict_set(&dist->metadata, "lavfi.vmaf.unscored", reason, 0)) < 0)
            return ret;
    }
    if (n.event[0]) {
        av_log(ctx, AV_LOG_WARNING, "%s", n.message);
        if ((ret = ff_vmaf_cuda_live_mark_event(dist, n.event, n.input, n.message)) < 0)
            return ret;
    }
    if ((ret = vmaf_cuda_pairing_event(p->watch, &e, debug ? line : NULL, sizeof(line))) < 0)
        return AVERROR(ENOMEM);
    if (debug)
        av_log(ctx, AV_LOG_DEBUG, "%s\n", line);
    if (ret == 1)
        start_checks(ctx, p->prefix, dist, ref, vs);
    return scored;
}

int ff_vmaf_cuda_pairing_live_end(VmafCudaPairWatch *p, AVFilterContext *ctx,
                                  int reference_ended, VmafCudaLive *live)
{
    VmafCudaPairingNotice n;
    int failed = 0;

    while (p->watch && p->live &&
           vmaf_cuda_pairing_live_end(p->watch, reference_ended, &n) >= 0 && n.event[0]) {
        av_log(ctx, AV_LOG_WARNING, "%s", n.message);
        failed |= live && vmaf_cuda_live_event(live, n.event, n.input, 0, 0, n.message) < 0;
    }
    return failed;
}

void ff_vmaf_cuda_pairing_report(VmafCudaPairWatch *p, AVFilterContext *ctx)
{
    char *text, *line, *end;
    int len;

    if (p->reported || !p->watch)
        return;
    p->reported = 1;
    if ((len = vmaf_cuda_pairing_report(p->watch, NULL, 0)) <= 0 || !(text = av_malloc(len + 1)))
        return;
    vmaf_cuda_pairing_report(p->watch, text, len + 1);
    /* one av_log per warning, so that each carries the filter's name */
    for (line = text; *line && (end = strchr(line, '\n')); line = end + 1)
        av_log(ctx, AV_LOG_WARNING, "%.*s\n", (int)(end - line), line);
    av_free(text);
}

/* SPDX-License-Identifier: BSD-2-Clause-Patent */
/**
 * @file
 * vmaf_cuda's pairing watch: see vmaf_cuda_pairing.h.
 */

#include <inttypes.h>
#include <stdlib.h>

#include "libavutil/mathematics.h"
#include "libavutil/pixdesc.h"
#include "libavutil/timestamp.h"

#include "filters.h"
#include "vmaf_cuda_pairing.h"

/** A frame seen on an input, waiting for the event that uses or passes over it. */
typedef struct FrameSeen {
    int64_t pts, dur;
} FrameSeen;

/** "s" when n is not 1, for counts in messages. */
static const char *plural(int64_t n)
{
    return n == 1 ? "" : "s";
}

int ff_vmaf_cuda_pairing_init(VmafCudaPairing *p, AVRational tb, AVRational main_rate,
                           AVRational ref_rate)
{
    p->tb = tb;
    p->rate[0] = main_rate;
    p->rate[1] = ref_rate;
    for (int i = 0; i < 2; i++)
        p->first_pts[i] = AV_NOPTS_VALUE;
    p->last_main_pts = p->last_ref_pts = AV_NOPTS_VALUE;
    for (int i = 0; i < 2; i++) {
        p->queue[i] = av_fifo_alloc2(8, sizeof(FrameSeen), AV_FIFO_FLAG_AUTO_GROW);
        if (!p->queue[i])
            return AVERROR(ENOMEM);
    }
    return 0;
}

void ff_vmaf_cuda_pairing_uninit(VmafCudaPairing *p)
{
    for (int i = 0; i < 2; i++)
        av_fifo_freep2(&p->queue[i]);
}

/** A frame's duration in the pairing time base: its own, else one frame of the link's
 *  rate, else 0 (unknown). */
static int64_t frame_duration(const VmafCudaPairing *p, AVFilterLink *link, const AVFrame *f)
{
    AVRational fr = ff_filter_link(link)->frame_rate;

    if (f->duration > 0)
        return av_rescale_q(f->duration, link->time_base, p->tb);
    if (fr.num > 0 && fr.den > 0)
        return av_rescale_q(1, av_inv_q(fr), p->tb);
    return 0;
}

int ff_vmaf_cuda_pairing_observe(VmafCudaPairing *p, AVFilterContext *ctx)
{
    if (!ctx->inputs[0] || !ctx->inputs[1])
        return 0;
    return ff_vmaf_cuda_pairing_observe_links(p, ctx->inputs[0], ctx->inputs[1]);
}

int ff_vmaf_cuda_pairing_observe_links(VmafCudaPairing *p, AVFilterLink *mainlink,
                                    AVFilterLink *reflink)
{
    AVFilterLink *links[2] = { mainlink, reflink };

    if (!p->queue[1])
        return 0;
    for (int i = 0; i < 2; i++) {
        AVFilterLink *link = links[i];
        int64_t consumed = ff_filter_link(link)->frame_count_out;
        size_t queued = ff_inlink_queued_frames(link);

        for (size_t k = 0; k < queued; k++) {
            const AVFrame *f;
            FrameSeen r;
            int ret;

            if (consumed + (int64_t)k < p->observed[i])
                continue;
            f = ff_inlink_peek_frame(link, k);
            /* the rounding framesync applies (framesync_inject_frame) */
            r.pts = av_rescale_q_rnd(f->pts, link->time_base, p->tb,
                                     AV_ROUND_NEAR_INF | AV_ROUND_PASS_MINMAX);
            r.dur = frame_duration(p, link, f);
            if (!p->observed[i]) {
                p->first_pts[i] = r.pts;
                p->first_dur[i] = r.dur;
            }
            p->observed[i] = consumed + (int64_t)k + 1;
            if ((ret = av_fifo_write(p->queue[i], &r, 1)) < 0)
                return ret;
        }
    }
    return 0;
}

static const char *ts_str(char *buf, int64_t pts, AVRational tb)
{
    return av_ts_make_time_string2(buf, pts, tb);
}

/** At the first pair: what makes equal pictures score as different ones, or makes the
 *  scores meaningless. */
static void start_checks(AVFilterContext *ctx, const char *prefix, const AVFrame *dist,
                         const AVFrame *ref, int sdr_models)
{
    const AVFrame *frames[2] = { dist, ref };
    static const char *const names[2] = { "main", "reference" };

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

int ff_vmaf_cuda_pairing_event(VmafCudaPairing *p, AVFilterContext *ctx, const FFFrameSync *fs,
                            const AVFrame *dist, const AVFrame *ref, int64_t index, int sdr_models)
{
    const int64_t main_pts = fs->in[0].pts, ref_pts = fs->in[1].pts, pts = fs->pts;
    char b1[AV_TS_MAX_STRING_SIZE], b2[AV_TS_MAX_STRING_SIZE];
    int new_ref = 0, main_repeated;
    FrameSeen r;

    if (!p->queue[1])
        return 0;
    /* the main frame of this event, and its duration */
    while (av_fifo_peek(p->queue[0], &r, 1, 0) >= 0 && r.pts <= main_pts) {
        av_fifo_drain2(p->queue[0], 1);
        if (r.pts == main_pts)
            p->last_main_dur = r.dur;
    }
    if (!ref) {
        if (!p->nb_pairs)
            p->main_before++;
        else
            p->main_after++;
        av_log(ctx, AV_LOG_DEBUG, "%sunscored: main %s s (no reference frame)\n",
               p->prefix, ts_str(b1, pts, p->tb));
        return 0;
    }

    /* reference frames passed over since the previous pair were never paired */
    while (av_fifo_peek(p->queue[1], &r, 1, 0) >= 0 && r.pts < ref_pts) {
        av_fifo_drain2(p->queue[1], 1);
        if (p->nb_pairs)
            p->ref_gaps++;
        else
            p->ref_leading++;
    }
    if (av_fifo_peek(p->queue[1], &r, 1, 0) >= 0 && r.pts == ref_pts) {
        av_fifo_drain2(p->queue[1], 1);
        p->last_ref_dur = r.dur;
        new_ref = 1;
    } else if (ref_pts != p->last_ref_pts) {
        new_ref = 1; /* a frame not seen by observe (should not happen) */
        p->last_ref_dur = 0;
    }

    /* framesync repeats a main frame only after the main input ended; within the
     * frame's duration that is a higher reference frame rate, past it a repeat */
    main_repeated = p->nb_pairs && main_pts == p->last_main_pts;
    if (main_repeated) {
        if (!p->last_main_dur || pts >= main_pts + p->last_main_dur)
            p->main_repeated++;
    } else {
        /* the reference has ended (framesync holds its EOF as a next "frame" of NULL) */
        int ref_ended = fs->in[1].have_next && !fs->in[1].frame_next;
        if (!new_ref && ref_ended &&
            (!p->last_ref_dur || pts >= ref_pts + p->last_ref_dur))
            p->ref_repeated++;
        /* ts_sync_mode=nearest's rule (framesync_advance) */
        if (fs->in[1].have_next && fs->in[1].frame_next && ref_pts != AV_NOPTS_VALUE &&
            fs->in[1].pts_next - pts < pts - ref_pts)
            p->nearer++;
    }
    av_log(ctx, AV_LOG_DEBUG, "%spair %"PRId64": main %s s, reference %s s\n", p->prefix,
           index, ts_str(b1, main_pts, p->tb), ts_str(b2, ref_pts, p->tb));

    if (!p->started) {
        p->started = 1;
        start_checks(ctx, p->prefix, dist, ref, sdr_models);
    }
    p->last_main_pts = main_pts;
    p->last_ref_pts = ref_pts;
    p->nb_pairs++;
    return 0;
}

static double fps_of(AVRational r)
{
    return r.den ? av_q2d(r) : 0;
}

void ff_vmaf_cuda_pairing_report(VmafCudaPairing *p, AVFilterContext *ctx)
{
    const char *pre = p->prefix;
    const AVRational fr0 = p->rate[0], fr1 = p->rate[1];
    const int rates_differ = fr0.num > 0 && fr0.den > 0 && fr1.num > 0 && fr1.den > 0 &&
                             av_cmp_q(fr0, fr1);
    char b1[AV_TS_MAX_STRING_SIZE], b2[AV_TS_MAX_STRING_SIZE], b3[AV_TS_MAX_STRING_SIZE];
    int64_t half, offset, dur;

    if (p->reported || !p->queue[1])
        return;
    p->reported = 1;

    if (p->main_repeated)
        av_log(ctx, AV_LOG_WARNING, "%sthe main input ended first: its last frame was "
               "paired with %"PRId64" more reference frame%s; add shortest=1 to stop at the end "
               "of the shorter input\n", pre, p->main_repeated, plural(p->main_repeated));
    if (p->ref_repeated)
        av_log(ctx, AV_LOG_WARNING, "%sthe reference ended first: its last frame was "
               "repeated for %"PRId64" more main frame%s (eof_action=repeat); add shortest=1 to "
               "stop at the end of the shorter input\n", pre, p->ref_repeated, plural(p->ref_repeated));
    if (p->main_after)
        av_log(ctx, AV_LOG_WARNING, "%s%"PRId64" main frame%s after the end of the "
               "reference passed through unscored (eof_action=pass or repeatlast=0): in neither "
               "the log nor the score; shortest=1 ends the output with the reference\n", pre,
               p->main_after, plural(p->main_after));

    offset = p->first_pts[0] != AV_NOPTS_VALUE && p->first_pts[1] != AV_NOPTS_VALUE ?
             llabs(p->first_pts[0] - p->first_pts[1]) : 0;
    dur = p->first_dur[0] ? p->first_dur[0] : p->first_dur[1];
    half = dur / 2;
    if (!p->observed[1]) {
        if (p->main_before)
            av_log(ctx, AV_LOG_WARNING, "%sthe reference delivered no frame: the %"PRId64" main "
                   "frame%s passed through unscored\n", pre, p->main_before,
                   plural(p->main_before));
    } else if ((half && offset > half) || p->main_before || p->ref_leading) {
        av_log(ctx, AV_LOG_WARNING, "%sthe inputs start at different times: main at %s s, "
               "reference at %s s (%"PRId64" main frame%s passed through unscored and "
               "%"PRId64" reference frame%s never paired before the first pair); if both start "
               "with the same picture, add setpts=PTS-STARTPTS to both inputs\n", pre,
               ts_str(b1, p->first_pts[0], p->tb), ts_str(b2, p->first_pts[1], p->tb),
               p->main_before, plural(p->main_before), p->ref_leading, plural(p->ref_leading));
    }
    /* a reference at a higher frame rate leaves frames unpaired by design: the rate
     * warning below says so, with the count */
    if (p->ref_gaps && !rates_differ)
        av_log(ctx, AV_LOG_WARNING, "%s%"PRId64" reference frame%s never paired with a "
               "main frame (gaps in the main's timestamps: dropped frames or a variable frame "
               "rate); the scores leave them out\n", pre, p->ref_gaps, plural(p->ref_gaps));
    /* Different frame rates explain pairs with a nearer next reference frame: one
     * warning then (30 vs 25 fps), the time-base one only for equal rates. An offset of
     * a part of a frame between the inputs' timestamps (-copyts keeps each input's own
     * start) explains them too; timestamps rounded to two time bases differ by far less
     * than a tenth of a frame. */
    if (p->nearer && !rates_differ) {
        if (dur > 0 && offset % dur > dur / 10 && dur - offset % dur > dur / 10)
            av_log(ctx, AV_LOG_WARNING, "%s%"PRId64" of %"PRId64" pairs took an earlier "
                   "reference frame although the next one was nearer in time: the inputs' "
                   "timestamps are %s s apart, not a whole number of frames (main starts at %s "
                   "s, reference at %s s, e.g. -copyts keeping each input's own start); add "
                   "setpts=PTS-STARTPTS to both inputs if they start with the same picture, or "
                   "ts_sync_mode=nearest to pair each main frame with the nearest reference "
                   "frame\n", pre, p->nearer, p->nb_pairs, ts_str(b3, offset, p->tb),
                   ts_str(b1, p->first_pts[0], p->tb), ts_str(b2, p->first_pts[1], p->tb));
        else
            av_log(ctx, AV_LOG_WARNING, "%s%"PRId64" of %"PRId64" pairs took an earlier "
                   "reference frame although the next one was nearer in time (timestamps rounded to "
                   "different time bases, e.g. MKV and MP4); ts_sync_mode=nearest pairs each main "
                   "frame with the nearest reference frame\n", pre, p->nearer, p->nb_pairs);
    }
    if (rates_differ) {
        char nearer[160] = "";
        char gaps[96] = "";
        if (p->nearer)
            snprintf(nearer, sizeof(nearer), " (%"PRId64" of %"PRId64" pairs had a nearer next "
                     "one; ts_sync_mode=nearest takes the nearest)", p->nearer, p->nb_pairs);
        if (p->ref_gaps)
            snprintf(gaps, sizeof(gaps), "; %"PRId64" reference frame%s between pairs were "
                     "never paired", p->ref_gaps, plural(p->ref_gaps));
        av_log(ctx, AV_LOG_WARNING, "%sframe rates differ: main %d/%d (%.3f fps), "
               "reference %d/%d (%.3f fps); each main frame is paired with the last reference "
               "frame at or before its timestamp%s%s\n", pre, fr0.num, fr0.den, fps_of(fr0),
               fr1.num, fr1.den, fps_of(fr1), nearer, gaps);
    }
}

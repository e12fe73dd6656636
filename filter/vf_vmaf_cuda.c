/* SPDX-License-Identifier: BSD-2-Clause-Patent */
/**
 * @file
 * vmaf_cuda: VMAF of a distorted stream (`main`) against a reference stream
 * (`reference`), computed by libvmaf_cuda (include/vmaf_cuda.h), bit-exact with
 * libvmaf v3.2.0; or of N renditions against one reference (renditions=N, an encoder
 * ladder: inputs main0..mainN-1 and reference, outputs out0..outN-1).
 *
 * Inputs are CUDA frames (e.g. NVDEC output, read in place on the GPU) or software
 * frames (uploaded by the library on its CUDA backend, or read by its CPU backend) with
 * their planes as they lie (vmaf_cuda_picture.c). Each output is its main stream,
 * unchanged, with per-frame metadata (lavfi.vmaf.*: docs/filter.md) printed with "%.17g".
 * The options keep the names and behaviour of FFmpeg's libvmaf filter (and framesync's
 * options): one pixel format for both inputs, framesync's pairing, the log and one
 * "VMAF score: %f" line per model covering exactly the frames output (-frames:v N).
 * This file is the entry: options, pads, formats, and which pairing feeds the one
 * pipeline (vmaf_cuda_pipeline.h): framesync for two inputs, the ladder's copy of its
 * rules for renditions=N. patches/build-ffmpeg.sh copies filter/ into libavfilter/;
 * compat.h absorbs version differences.
 */

#include "config.h"
#include "config_components.h"

#include <stdlib.h>
#include <string.h>

#include <vmaf_cuda.h>

#include "libavutil/avstring.h"
#include "libavutil/opt.h"
#include "libavutil/pixdesc.h"

#include "avfilter.h"
#include "filters.h"
#include "formats.h"
#include "framesync.h"
#include "video.h"

#include "vf_vmaf_cuda_compat.h"
#include "vmaf_cuda_pipeline.h"

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
    char *window;                /**< live QA (vmaf_cuda_live_ff.h): window=, window_log=, sei= */
    int window_log;
    int sei;
    char *input_timeout;         /**< live rules: a duration (vmaf_cuda_pairing_set_live()) */
    int metrics_port;            /**< dashboards (vmaf_cuda_metrics.c) */
    char *metrics_address;
    int renditions;              /**< 1: main + reference; N > 1: a ladder */
    int sync;                    /**< 0: by the timestamps; 1: auto (vmaf_cuda_align_ff.h) */
    char *sync_window;           /**< sync=auto's search range each way, a duration */
    double sync_window_s;

    VmafCudaPipeline p;
    int eof_done;                /**< the two-input filter's pairing ended */
} VmafCudaContext;

#define OFFSET(x) offsetof(VmafCudaContext, x)
#define FLAGS (AV_OPT_FLAG_FILTERING_PARAM | AV_OPT_FLAG_VIDEO_PARAM)

static const AVOption vmaf_cuda_options[] = {
    { "model", "models, '|'-separated lists of key=value (version=, path=, name=, enable_transform=, disable_clip=)",
      OFFSET(model), AV_OPT_TYPE_STRING, { .str = "version=vmaf_v0.6.1" }, 0, 0, FLAGS },
    { "feature", "extra features, '|'-separated (name=psnr|name=float_ssim:enable_lcs=true|name=cambi; also ciede, float_ms_ssim, speed_chroma, adm, vif, motion, float_*)",
      OFFSET(feature), AV_OPT_TYPE_STRING, { .str = NULL }, 0, 0, FLAGS },
    { "log_path", "file to write the libvmaf-format log to (renditions > 1: with %d, the "
      "rendition's index from 0, e.g. vmaf_%d.json)",
      OFFSET(log_path), AV_OPT_TYPE_STRING, { .str = NULL }, 0, 0, FLAGS },
    { "log_fmt", "log format: xml, json, csv, sub, or ndjson (a line per frame as it is scored)",
      OFFSET(log_fmt), AV_OPT_TYPE_STRING, { .str = "xml" }, 0, 0, FLAGS },
    { "pool", "pooling of the printed score: mean, harmonic_mean, min, max, perc1, perc5, perc10",
      OFFSET(pool), AV_OPT_TYPE_STRING, { .str = NULL }, 0, 0, FLAGS },
    { "n_threads", "host threads: the CPU backend's workers (0: one); on CUDA those of the host tails (SpEED; CAMBI pooling; 0: auto)",
      OFFSET(n_threads), AV_OPT_TYPE_INT, { .i64 = 0 }, 0, 64, FLAGS },
    { "n_subsample", "score every n-th frame",
      OFFSET(n_subsample), AV_OPT_TYPE_INT, { .i64 = 1 }, 1, INT_MAX, FLAGS },
    { "prefetch", "frames each input is asked for ahead of the pairing (keeps both decoders busy)",
      OFFSET(prefetch), AV_OPT_TYPE_INT, { .i64 = 4 }, 0, 64, FLAGS },
    { "precision", "digits after the decimal point in the log file (1..17), or max: exact doubles",
      OFFSET(precision), AV_OPT_TYPE_INT, { .i64 = 6 }, -1, 17, FLAGS, .unit = "precision" },
        { "max", "print each value so that parsing it gives the same double",
          0, AV_OPT_TYPE_CONST, { .i64 = -1 }, 0, 0, FLAGS, .unit = "precision" },
    { "backend", "where the features are computed",
      OFFSET(backend), AV_OPT_TYPE_INT, { .i64 = VMAF_CUDA_BACKEND_AUTO },
      VMAF_CUDA_BACKEND_AUTO, VMAF_CUDA_BACKEND_CPU, FLAGS, .unit = "backend" },
        { "auto", "CUDA when a device is usable, else CPU", 0, AV_OPT_TYPE_CONST,
          { .i64 = VMAF_CUDA_BACKEND_AUTO }, 0, 0, FLAGS, .unit = "backend" },
        { "cuda", "CUDA (fails without a device)", 0, AV_OPT_TYPE_CONST,
          { .i64 = VMAF_CUDA_BACKEND_CUDA }, 0, 0, FLAGS, .unit = "backend" },
        { "cpu", "CPU reference", 0, AV_OPT_TYPE_CONST,
          { .i64 = VMAF_CUDA_BACKEND_CPU }, 0, 0, FLAGS, .unit = "backend" },
    { "cuda_device", "CUDA device ordinal for software frames (-1: device 0); CUDA frames are "
      "scored on their own device, and naming another one is an error",
      OFFSET(cuda_device), AV_OPT_TYPE_INT, { .i64 = -1 }, -1, INT_MAX, FLAGS },
    { "window", "rolling window of the lavfi.vmaf.window.* metadata: N frames, or a duration (2s, 500ms)",
      OFFSET(window), AV_OPT_TYPE_STRING, { .str = NULL }, 0, 0, FLAGS },
    { "window_log", "with log_fmt=ndjson: a window line every N scored frames (0: none)",
      OFFSET(window_log), AV_OPT_TYPE_INT, { .i64 = 0 }, 0, INT_MAX, FLAGS },
    { "sei", "attach each frame's scores as SEI user data unregistered side data",
      OFFSET(sei), AV_OPT_TYPE_BOOL, { .i64 = 0 }, 0, 1, FLAGS },
    { "input_timeout", "live rules: no main frame scored against a stand-in for a missing "
      "reference frame (the reference's end is not repeated, gaps go unscored, the main's end "
      "ends the output); gaps longer than this duration (5s, 500ms) told as they start and end",
      OFFSET(input_timeout), AV_OPT_TYPE_STRING, { .str = NULL }, 0, 0, FLAGS },
    { "metrics_port", "dashboards: serve the live metrics (the last frame's and the window's "
      "scores, frames scored and unscored, events, uptime) in the Prometheus text format at "
      "http://metrics_address:PORT/metrics (0: none)",
      OFFSET(metrics_port), AV_OPT_TYPE_INT, { .i64 = 0 }, 0, 65535, FLAGS },
    { "metrics_address", "the address metrics_port listens on",
      OFFSET(metrics_address), AV_OPT_TYPE_STRING, { .str = "127.0.0.1" }, 0, 0, FLAGS },
    { "sync", "pairing: by the timestamps (framesync), or auto: first find the offset between "
      "the inputs from signatures of their pictures (within sync_window), then pair with it, "
      "and re-check it when the scores collapse",
      OFFSET(sync), AV_OPT_TYPE_INT, { .i64 = 0 }, 0, 1, FLAGS, .unit = "sync" },
        { "timestamps", "framesync's pairing", 0, AV_OPT_TYPE_CONST, { .i64 = 0 }, 0, 0, FLAGS, .unit = "sync" },
        { "auto", "find the offset, then pair with it", 0, AV_OPT_TYPE_CONST, { .i64 = 1 }, 0, 0,
          FLAGS, .unit = "sync" },
    { "sync_window", "sync=auto: offsets searched, each way (a duration: 2s, 500ms); twice it "
      "of each input is held before the first frame is scored",
      OFFSET(sync_window), AV_OPT_TYPE_STRING, { .str = "2s" }, 0, 0, FLAGS },
    { "renditions", "encoder ladder: N distorted renditions against one reference; inputs "
      "main0..mainN-1 then reference (1: main, reference), outputs out0..outN-1 (1: default), "
      "every other option for each; each rendition must have the reference's size, so scale "
      "it first: scale_cuda=W:H per rendition for CUDA frames (NVDEC), scale=W:H for software "
      "frames",
      OFFSET(renditions), AV_OPT_TYPE_INT, { .i64 = 1 }, 1, VMAF_CUDA_MAX_RENDITIONS, FLAGS },
    { NULL }
};

FRAMESYNC_DEFINE_CLASS(vmaf_cuda, VmafCudaContext, fs);

static int on_event(FFFrameSync *fs);

/** Every software format whose planes the library reads (vmaf_cuda_picture.h), plus
 *  CUDA frames. */
static AVFilterFormats *supported_formats(void)
{
    AVFilterFormats *list = NULL;
    const AVPixFmtDescriptor *desc = NULL;
    VmafCudaLayout layout;

    while ((desc = av_pix_fmt_desc_next(desc))) {
        if (ff_vmaf_cuda_layout(desc, &layout) < 0)
            continue;
        if (ff_add_format(&list, av_pix_fmt_desc_get_id(desc)) < 0)
            return NULL;
    }
#if CONFIG_CUDA
    if (ff_add_format(&list, AV_PIX_FMT_CUDA) < 0)
        return NULL;
#endif
    return list;
}

/* One list shared by every input and output, as FFmpeg's libvmaf filter does: the
 * negotiation then gives all inputs one pixel format, and FFmpeg converts an input
 * whose format differs (yuv420p against yuv444p, 8-bit against 10-bit), so they are
 * scored as libvmaf scores them. CUDA frames cannot be converted by negotiation: CUDA
 * inputs meet here as "cuda", and config_input_ref (vmaf_cuda_setup.c) compares their
 * layouts. */
static int query_formats(const AVFilterContext *ctx, AVFilterFormatsConfig **cfg_in,
                         AVFilterFormatsConfig **cfg_out)
{
    const VmafCudaContext *s = ctx->priv;
    AVFilterFormats *list;
    int ret;

    /* a ladder: main k and out k share lists of their own (formats, and colour ranges
     * and spaces, which FFmpeg would else merge across every input, converting a
     * full-range rendition to main0's range), the reference has its own, so no input is
     * converted to another's format and config_input_ref reports a rendition whose
     * format is not the reference's */
    for (unsigned i = 0; s->renditions > 1 && i < ctx->nb_inputs; i++) {
        AVFilterFormatsConfig *cfg[2] = { cfg_in[i], i < ctx->nb_outputs ? cfg_out[i] : NULL };
        for (int j = 0; j < 3; j++) {
            list = j == 0 ? supported_formats() : j == 1 ? ff_all_color_ranges()
                                                         : ff_all_color_spaces();
            if (!list)
                return AVERROR(ENOMEM);
            for (int c = 0; c < 2 && cfg[c]; c++)
                if ((ret = ff_formats_ref(list, j == 0 ? &cfg[c]->formats : j == 1 ?
                                          &cfg[c]->color_ranges : &cfg[c]->color_spaces)) < 0)
                    return ret;
        }
    }
    if (s->renditions > 1)
        return 0;
    if (!(list = supported_formats()))
        return AVERROR(ENOMEM);
    for (unsigned i = 0; i < ctx->nb_inputs; i++)
        if ((ret = ff_formats_ref(list, &cfg_in[i]->formats)) < 0)
            return ret;
    for (unsigned i = 0; i < ctx->nb_outputs; i++)
        if ((ret = ff_formats_ref(list, &cfg_out[i]->formats)) < 0)
            return ret;
    return 0;
}

static int config_input_ref(AVFilterLink *inlink)
{
    VmafCudaContext *s = inlink->dst->priv;
    return ff_vmaf_cuda_pipeline_config_inputs(inlink->dst, &s->p);
}

static int config_output(AVFilterLink *outlink)
{
    AVFilterContext *ctx = outlink->src;
    VmafCudaContext *s = ctx->priv;
    int ret;

    if (s->renditions > 1)
        return ff_vmaf_cuda_pipeline_config_output(ctx, &s->p, FF_OUTLINK_IDX(outlink),
                                                   outlink, NULL);
    if ((ret = ff_framesync_init_dualinput(&s->fs, ctx)) < 0)
        return ret;
    if (s->p.input_timeout > 0)
        s->fs.in[0].after = EXT_STOP; /* live rules: the main's end is the output's end */
    if ((ret = ff_framesync_configure(&s->fs)) < 0)
        return ret;
    if ((ret = ff_vmaf_cuda_pipeline_config_output(ctx, &s->p, 0, outlink, &s->fs)) < 0)
        return ret;
    if (s->sync && !s->p.sync_auto.align) { /* (not again when ffmpeg reconfigures) */
        if ((ret = ff_vmaf_cuda_sync_auto_init(ctx, &s->p.sync_auto, s->sync_window_s,
                                               s->fs.time_base, s->p.r[0].st.prefix)) < 0)
            return ret;
        s->p.r[0].st.sync_auto = &s->p.sync_auto;
        {   /* what the first search holds: said, as it can be much */
            AVFilterLink *in = ctx->inputs[1];
            AVRational fr = ff_filter_link(in)->frame_rate;
            if (fr.num > 0 && fr.den > 0) {
                double frames = 2 * s->sync_window_s * av_q2d(fr);
                double mib = frames * in->w * in->h * (s->p.bpc > 8 ? 2 : 1) * 1.5 / 1048576;
                av_log(ctx, 2 * mib > 4096 ? AV_LOG_WARNING : AV_LOG_VERBOSE,
                       "sync=auto holds up to %.0f frames of each input (about %.0f MiB each) "
                       "until it finds the offset\n", frames, mib);
            }
        }
        /* main frames read ahead of the scores at most: the link's prefetch, framesync's
         * and the event's, the session's pipeline, a margin */
        s->p.sync_auto.guard = (unsigned)s->prefetch + 8 +
                               vmaf_cuda_frames_in_pipeline(s->p.r[0].st.session);
    }
    return 0;
}

/** The pads: main, reference and default (renditions=1), or main0..mainN-1, reference
 *  and out0..outN-1. */
static int append_pads(AVFilterContext *ctx, unsigned n)
{
    int ret;

    for (unsigned k = 0; k <= n; k++) {
        const int fixed = k == n || n == 1; /* a name of its own, or main%u (freed by FFmpeg) */
        AVFilterPad pad = { .type = AVMEDIA_TYPE_VIDEO,
                            .config_props = k == n ? config_input_ref : NULL };
        if (!(pad.name = k == n ? "reference" : n == 1 ? "main" : av_asprintf("main%u", k)))
            return AVERROR(ENOMEM);
        if ((ret = fixed ? ff_append_inpad(ctx, &pad) : ff_append_inpad_free_name(ctx, &pad)) < 0)
            return ret;
    }
    for (unsigned k = 0; k < n; k++) {
        AVFilterPad pad = { .type = AVMEDIA_TYPE_VIDEO, .config_props = config_output };
        if (!(pad.name = n == 1 ? "default" : av_asprintf("out%u", k)))
            return AVERROR(ENOMEM);
        if ((ret = n == 1 ? ff_append_outpad(ctx, &pad) : ff_append_outpad_free_name(ctx, &pad)) < 0)
            return ret;
    }
    return 0;
}

static av_cold int init(AVFilterContext *ctx)
{
    VmafCudaContext *s = ctx->priv;
    VmafCudaPipeline *p = &s->p;
    const char *fmt = s->log_fmt ? s->log_fmt : "xml";
    const char *pool = s->pool ? s->pool : "mean";
    VmafCudaLiveOptions live;
    int pool_method, ret;

    if (!strcmp(fmt, "xml"))       p->out.log_format = VMAF_CUDA_LOG_XML;
    else if (!strcmp(fmt, "json")) p->out.log_format = VMAF_CUDA_LOG_JSON;
    else if (!strcmp(fmt, "csv"))  p->out.log_format = VMAF_CUDA_LOG_CSV;
    else if (!strcmp(fmt, "sub"))  p->out.log_format = VMAF_CUDA_LOG_SUB;
    else if (!strcmp(fmt, "ndjson")) p->out.ndjson = 1;
    else {
        av_log(ctx, AV_LOG_ERROR, "log_fmt '%s' is not one of xml, json, csv, sub, ndjson\n", fmt);
        return AVERROR(EINVAL);
    }
    if ((pool_method = vmaf_cuda_pool_from_name(pool)) < 0) {
        av_log(ctx, AV_LOG_ERROR, "pool '%s' is not one of " VMAF_CUDA_POOL_NAMES "\n", pool);
        return AVERROR(EINVAL);
    }
    if (s->precision == 0) {
        av_log(ctx, AV_LOG_ERROR, "precision must be 1..17 or max\n");
        return AVERROR(EINVAL);
    }
    if (s->sync) {
        uint64_t frames;
        if (s->renditions > 1) {
            av_log(ctx, AV_LOG_ERROR, "sync=auto pairs two inputs; a ladder (renditions=%d) "
                   "shares one reference's timeline: align its renditions first (one "
                   "vmaf_cuda sync=auto run per rendition tells each offset)\n", s->renditions);
            return AVERROR(EINVAL);
        }
        if (!s->sync_window || vmaf_cuda_parse_window(s->sync_window, &frames, &s->sync_window_s) < 0 ||
            frames || !(s->sync_window_s >= 0.1 && s->sync_window_s <= 300)) {
            av_log(ctx, AV_LOG_ERROR, "sync_window '%s' is not a duration from 100ms to 300s "
                   "(e.g. 2s, 500ms)\n", s->sync_window ? s->sync_window : "");
            return AVERROR(EINVAL);
        }
    }
    if (s->input_timeout) {
        uint64_t frames;
        if (vmaf_cuda_parse_window(s->input_timeout, &frames, &p->input_timeout) < 0 || frames) {
            av_log(ctx, AV_LOG_ERROR, "input_timeout '%s' is not a duration above 0 (e.g. 5s, "
                   "500ms)\n", s->input_timeout);
            return AVERROR(EINVAL);
        }
    }
    p->out.pool = pool_method;
    p->out.precision = s->precision;
    live = (VmafCudaLiveOptions){ .window = s->window, .window_log = s->window_log,
                                  .sei = s->sei, .ndjson = p->out.ndjson,
                                  .log_path = s->log_path, .precision = s->precision,
                                  .pool = pool_method };
    if ((ret = ff_vmaf_cuda_live_check(ctx, &live)) < 0)
        return ret;
    /* per-frame history only for what needs the whole stream (settings.keep_history) */
    p->out.keep_history = (s->log_path && !p->out.ndjson) || vmaf_cuda_pool_percentile(pool_method);
    p->opt = (VmafCudaPipelineOptions){
        .model = s->model, .feature = s->feature, .log_path = s->log_path, .window = s->window,
        .window_log = s->window_log, .sei = s->sei, .n_threads = s->n_threads,
        .n_subsample = s->n_subsample, .prefetch = s->prefetch, .backend = s->backend,
        .cuda_device = s->cuda_device, .sync = &s->fs, .metrics_port = s->metrics_port,
        .metrics_address = s->metrics_address ? s->metrics_address : "127.0.0.1",
    };
    if ((ret = ff_vmaf_cuda_pipeline_init(ctx, p, (unsigned)s->renditions)) < 0)
        return ret;
    s->fs.on_event = on_event;
    return append_pads(ctx, (unsigned)s->renditions);
}

/** A framesync event of the two-input filter: rendition 0's event, sent at once. */
static int on_event(FFFrameSync *fs)
{
    AVFilterContext *ctx = fs->parent;
    VmafCudaContext *s = ctx->priv;
    AVFrame *dist = NULL, *ref = NULL;
    int ret;

    /* framesync handles one event per activate() call. A filter that sends a frame out
     * per event is run again when downstream asks for the next one; this one often sends
     * none (a frame's scores come with the next frame's motion, or later from the CPU
     * backend's workers), so it runs itself again while events may be queued: otherwise
     * frames wait on its inputs with nothing to wake it, and once every input has ended
     * ffmpeg 7.1 aborts (tests/filter/liveness.c) */
    ff_filter_set_ready(ctx, 100);
    if ((ret = ff_framesync_dualinput_get(fs, &dist, &ref)) < 0)
        return ret;
    if (!dist)
        return 0;
    if ((ret = ff_vmaf_cuda_pipeline_event(ctx, &s->p, 0, fs, dist, ref, s->p.nb_sends)) < 0 ||
        !s->p.r[0].ev_dist)
        return ret;
    return ff_vmaf_cuda_pipeline_send(ctx, &s->p, s->p.nb_sends, ref);
}

static int activate(AVFilterContext *ctx)
{
    VmafCudaContext *s = ctx->priv;
    VmafCudaRendition *r = &s->p.r[0];
    int ret;

    if (s->renditions > 1)
        return ff_vmaf_cuda_pipeline_activate_ladder(ctx, &s->p);
    if (s->p.sync_auto.align) {
        /* sync=auto: the search looks at the frames first; until it decides, they wait
         * on the links, and both inputs are asked for more */
        if ((ret = ff_vmaf_cuda_sync_auto_collect(ctx, &s->p.sync_auto, ctx->inputs[0],
                                                  ctx->inputs[1], &r->layout, s->p.out.hw_frames,
                                                  r->st.session, s->p.seg_w, s->p.seg_h,
                                                  &r->pairing)) < 0)
            return ret;
        if (ret > 0) {
            for (int i = 0; i < 2; i++)
                if (!ff_outlink_get_status(ctx->inputs[i]) &&
                    ff_vmaf_cuda_sync_auto_wants_frames(&s->p.sync_auto, i))
                    ff_inlink_request_frame(ctx->inputs[i]);
            return 0;
        }
    }
    if ((ret = ff_vmaf_cuda_pairing_observe_links(&r->pairing, ctx, ctx->inputs[0], ctx->inputs[1])) < 0)
        return ret;
    ff_vmaf_cuda_stream_update_out_index(ctx, &r->st);
    if ((ret = ff_framesync_activate(&s->fs)) < 0)
        return ret;
    /* framesync asks only the input it needs next, and ffmpeg feeds (and so decodes)
     * only inputs that were asked: the two decoders would take turns. Asking both for
     * a few frames ahead keeps them decoding at once (at 4K HEVC, +15 % end to end). */
    for (int i = 0; i < 2 && !s->fs.eof; i++) {
        AVFilterLink *in = ctx->inputs[i];
        if (!ff_outlink_get_status(in) && ff_inlink_queued_frames(in) < (size_t)s->prefetch)
            ff_inlink_request_frame(in);
    }
    if (s->fs.eof && !s->eof_done) {
        /* framesync has just marked the output's end; the frames still queued (at
         * least the last one, whose motion score needs the flush) go out now, ahead
         * of that status in the output link's queue. */
        s->eof_done = 1;
        return ff_vmaf_cuda_pipeline_end(ctx, &s->p, 0);
    }
    return 0;
}

/**
 * Commands from fftools (patches/ffmpeg-*-integration.patch), which ffmpeg's own filter
 * thread sends; a program of its own may send them too:
 *   output_closed "SINK LAST": the consumer behind the filter named SINK took frames up
 *       to lavfi.vmaf.frame LAST (-1: none) and closed its output (-frames:v);
 *   finish: ffmpeg is done with the graph (every output delivered): write the logs and
 *       score lines now, and return an error when output was lost, for the exit status;
 *   reconfigure KEY: ffmpeg is about to re-create the graph (an input changed size or
 *       frames context): end the segment, send its frames out, park the stream under
 *       KEY (vmaf_cuda_segment.c);
 *   adopt KEY: sent to the new graph before its configuration: take the parked stream.
 * Without them the logs are written at uninit.
 */
static int process_command(AVFilterContext *ctx, const char *cmd, const char *arg,
                           char *res, int res_len, int flags)
{
    VmafCudaContext *s = ctx->priv;

    if (!strcmp(cmd, "output_closed")) {
        const char *space = arg ? strrchr(arg, ' ') : NULL;
        char sink[256];
        char *end;
        long long last;
        if (!space || space - arg >= (ptrdiff_t)sizeof(sink))
            return AVERROR(EINVAL);
        last = strtoll(space + 1, &end, 10);
        if (*end || last < -1)
            return AVERROR(EINVAL);
        memcpy(sink, arg, space - arg);
        sink[space - arg] = 0;
        return ff_vmaf_cuda_pipeline_output_closed(ctx, &s->p, sink, last);
    }
    if (!strcmp(cmd, "finish"))
        return ff_vmaf_cuda_pipeline_results(ctx, &s->p);
    if (!strcmp(cmd, "reconfigure") && arg)
        return ff_vmaf_cuda_segment_park(ctx, &s->p, arg);
    if (!strcmp(cmd, "adopt") && arg) {
        ff_vmaf_cuda_segment_adopt(ctx, &s->p, arg);
        return 0;
    }
    return AVERROR(ENOSYS);
}

static av_cold void uninit(AVFilterContext *ctx)
{
    VmafCudaContext *s = ctx->priv;

    ff_vmaf_cuda_pipeline_results(ctx, &s->p);
    ff_framesync_uninit(&s->fs);
    ff_vmaf_cuda_pipeline_uninit(&s->p);
}

const VmafCudaFilterDef ff_vf_vmaf_cuda = {
    .VMAF_CUDA_PUBLIC(name)        = "vmaf_cuda",
    .VMAF_CUDA_PUBLIC(description) = NULL_IF_CONFIG_SMALL("Calculate the VMAF between two video streams "
                                                          "(libvmaf_cuda; CUDA or software frames), "
                                                          "or of N renditions against one reference "
                                                          "(renditions=N)."),
    .VMAF_CUDA_PUBLIC(priv_class)  = &vmaf_cuda_class,
    .VMAF_CUDA_PUBLIC(flags)       = AVFILTER_FLAG_DYNAMIC_INPUTS | AVFILTER_FLAG_DYNAMIC_OUTPUTS,
    .preinit        = vmaf_cuda_framesync_preinit,
    .init           = init,
    .uninit         = uninit,
    .activate       = activate,
    .process_command = process_command,
    .priv_size      = sizeof(VmafCudaContext),
    FILTER_QUERY_FUNC2(query_formats),
    .flags_internal = FF_FILTER_FLAG_HWFRAME_AWARE,
};

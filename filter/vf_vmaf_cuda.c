/* SPDX-License-Identifier: BSD-2-Clause-Patent */
/**
 * @file
 * vmaf_cuda: VMAF of a distorted stream (`main`) against a reference stream
 * (`reference`), computed by libvmaf_cuda (include/vmaf_cuda.h), bit-exact with
 * libvmaf v3.2.0.
 *
 * Inputs are CUDA frames (e.g. NVDEC output, read in place on the GPU) or software
 * frames (uploaded by the library on its CUDA backend, or read by its CPU backend);
 * each frame's luma and chroma planes are passed as they lie (vmaf_cuda_picture.c).
 * The output is the main stream, unchanged, with per-frame metadata:
 *   lavfi.vmaf.score                 score of the first model
 *   lavfi.vmaf.score.<model>         score of every model, when there are several
 *   lavfi.vmaf.<feature>             every feature the library returns
 *   lavfi.vmaf.window.*              with window=: the trailing window's pooled values
 * each printed with "%.17g", so parsing it gives the exact double. Live QA (window=,
 * log_fmt=ndjson, sei=1) is in vmaf_cuda_live*.[ch]; this file calls vmaf_cuda_live_ff_*
 * at init, config_output and for each scored frame going out.
 *
 * A frame's scores need the next frame (motion looks one frame ahead), so output
 * frames wait in a queue until the library returns their scores (frames that
 * n_subsample skips go out at once); at the end of the stream the library is flushed
 * and the queue drained.
 *
 * The options keep the names of FFmpeg's libvmaf filter (model, feature, log_path,
 * log_fmt, pool, n_threads, n_subsample, and framesync's shortest, repeatlast,
 * eof_action, ts_sync_mode), and so does the behaviour: one pixel format negotiated
 * for both inputs, framesync's pairing, the log and one "VMAF score: %f" line per model
 * at the end, covering exactly the frames that were output (-frames:v N). Where the
 * pairing looks unintended, vmaf_cuda_pairing.c warns (libvmaf is silent).
 *
 * renditions=N (N > 1) scores N distorted renditions against one reference (an encoder
 * ladder): inputs main0..mainN-1 and reference, outputs out0..outN-1, each rendition
 * paired and scored as a two-input vmaf_cuda would; vmaf_cuda_ladder.c. What both share
 * is declared in vmaf_cuda_filter.h: the context, and one scored output (VmafCudaStream:
 * the frames waiting for their scores, their metadata, the log and the score lines),
 * implemented in vmaf_cuda_stream.c.
 *
 * This file lives in the vmaf_cuda repository (filter/) and is copied into FFmpeg's
 * libavfilter/ by patches/build-ffmpeg.sh; compat.h absorbs version differences.
 */

#include "config.h"
#include "config_components.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <vmaf_cuda.h>

#include "libavutil/avstring.h"
#include "libavutil/dict.h"
#include "libavutil/fifo.h"
#include "libavutil/frame.h"
#include "libavutil/hwcontext.h"
#include "libavutil/mem.h"
#include "libavutil/opt.h"
#include "libavutil/pixdesc.h"
#include "libavutil/time.h"
#if CONFIG_CUDA
#include "libavutil/hwcontext_cuda_internal.h"
#endif

#include "avfilter.h"
#include "filters.h"
#include "formats.h"
#include "framesync.h"
#include "video.h"

#include "vf_vmaf_cuda_compat.h"
#include "vmaf_cuda_filter.h"

/** CUDA's handle of the legacy default stream (CU_STREAM_LEGACY, cudaStreamLegacy). */
#define VMAF_CUDA_STREAM_LEGACY ((void *)(uintptr_t)0x1)

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
static int finish(AVFilterContext *ctx);

int vmaf_cuda_ff_status_to_averror(int status)
{
    switch (status) {
    case VMAF_CUDA_OK:      return 0;
    case VMAF_CUDA_EINVAL:  return AVERROR(EINVAL);
    case VMAF_CUDA_ENOMEM:  return AVERROR(ENOMEM);
    case VMAF_CUDA_ENODEV:  return AVERROR(ENODEV);
    case VMAF_CUDA_EIO:     return AVERROR(EIO);
    case VMAF_CUDA_EMODEL:  return AVERROR(EINVAL);
    default:                return AVERROR_EXTERNAL;
    }
}

int vmaf_cuda_ff_stream_error(AVFilterContext *ctx, const VmafCudaStream *st,
                              const char *call, int status)
{
    const char *msg = st->session ? vmaf_cuda_error_message(st->session) : "";
    av_log(ctx, AV_LOG_ERROR, "%s%s failed: %s%s%s\n", st->prefix, call,
           vmaf_cuda_strerror(status), msg && *msg ? ": " : "", msg ? msg : "");
    return vmaf_cuda_ff_status_to_averror(status);
}

/** Logs a failed library call with the session's message and returns an AVERROR. */
static int session_error(AVFilterContext *ctx, const char *call, int status)
{
    VmafCudaContext *s = ctx->priv;
    return vmaf_cuda_ff_stream_error(ctx, &s->st, call, status);
}

/** Every software format whose planes the library reads (vmaf_cuda_picture.h), plus
 *  CUDA frames. */
static AVFilterFormats *supported_formats(void)
{
    AVFilterFormats *list = NULL;
    const AVPixFmtDescriptor *desc = NULL;
    VmafCudaLayout layout;

    while ((desc = av_pix_fmt_desc_next(desc))) {
        if (vmaf_cuda_layout(desc, &layout) < 0)
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
 * inputs meet here as "cuda", and config_input_ref (a ladder: vmaf_cuda_ladder.c)
 * compares their layouts. */
static int query_formats(const AVFilterContext *ctx, AVFilterFormatsConfig **cfg_in,
                         AVFilterFormatsConfig **cfg_out)
{
    const VmafCudaContext *s = ctx->priv;
    AVFilterFormats *list;
    int ret;

    if (s->renditions > 1) {
        /* a ladder: main k and out k share a list of their own, the reference has its
         * own, so no input is converted to another's format and config_input_ref
         * reports a rendition whose format is not the reference's */
        for (unsigned i = 0; i < ctx->nb_inputs; i++) {
            if (!(list = supported_formats()))
                return AVERROR(ENOMEM);
            if ((ret = ff_formats_ref(list, &cfg_in[i]->formats)) < 0)
                return ret;
            if (i < ctx->nb_outputs && (ret = ff_formats_ref(list, &cfg_out[i]->formats)) < 0)
                return ret;
            /* colour ranges and spaces likewise (FFmpeg would else merge them across
             * every input, converting a full-range rendition to main0's range) */
            if (!(list = ff_all_color_ranges()))
                return AVERROR(ENOMEM);
            if ((ret = ff_formats_ref(list, &cfg_in[i]->color_ranges)) < 0)
                return ret;
            if (i < ctx->nb_outputs && (ret = ff_formats_ref(list, &cfg_out[i]->color_ranges)) < 0)
                return ret;
            if (!(list = ff_all_color_spaces()))
                return AVERROR(ENOMEM);
            if ((ret = ff_formats_ref(list, &cfg_in[i]->color_spaces)) < 0)
                return ret;
            if (i < ctx->nb_outputs && (ret = ff_formats_ref(list, &cfg_out[i]->color_spaces)) < 0)
                return ret;
        }
        return 0;
    }
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

/** The options vmaf_cuda_live_ff.c reads. */
static void live_options(const VmafCudaContext *s, VmafCudaLiveOptions *o)
{
    *o = (VmafCudaLiveOptions){ .window = s->window, .window_log = s->window_log, .sei = s->sei,
                                .ndjson = s->ndjson, .log_path = s->log_path,
                                .precision = s->precision, .pool = s->pool_method };
}

int vmaf_cuda_ff_check_log_path(AVFilterContext *ctx, const char *path)
{
    VmafCudaContext *s = ctx->priv;
    char err[1024];

    /* the log is written at the end (NDJSON: at the first scored frame): find out now
     * when it cannot be, leaving no file behind */
    if (path && !(s->ndjson && vmaf_cuda_live_path_is_stream(path)) &&
        vmaf_cuda_check_log_path(path, err, sizeof(err)) < 0) {
        av_log(ctx, AV_LOG_ERROR, "%s\n", err);
        return AVERROR(EIO);
    }
    return 0;
}

void vmaf_cuda_ff_no_log(AVFilterContext *ctx, const char *prefix, const char *path)
{
    char err[1024];
    int rc = path ? vmaf_cuda_remove_stale_log(path, err, sizeof(err)) : 0;

    if (rc > 0)
        av_log(ctx, AV_LOG_WARNING, "%sremoved the older file at '%s', so that it is not "
               "taken for this run's log\n", prefix, path);
    else if (rc < 0)
        av_log(ctx, AV_LOG_ERROR, "%s%s\n", prefix, err);
}

static int config_input_ref(AVFilterLink *inlink);
static int config_output(AVFilterLink *outlink);

/** The pads of the two-input filter (renditions=1). */
static int append_pads(AVFilterContext *ctx)
{
    AVFilterPad main_pad = { .name = "main", .type = AVMEDIA_TYPE_VIDEO };
    AVFilterPad ref_pad = { .name = "reference", .type = AVMEDIA_TYPE_VIDEO,
                            .config_props = config_input_ref };
    AVFilterPad out_pad = { .name = "default", .type = AVMEDIA_TYPE_VIDEO,
                            .config_props = config_output };
    int ret;

    if ((ret = ff_append_inpad(ctx, &main_pad)) < 0 ||
        (ret = ff_append_inpad(ctx, &ref_pad)) < 0 ||
        (ret = ff_append_outpad(ctx, &out_pad)) < 0)
        return ret;
    return 0;
}

static av_cold int init(AVFilterContext *ctx)
{
    VmafCudaContext *s = ctx->priv;
    const char *fmt = s->log_fmt ? s->log_fmt : "xml";
    const char *pool = s->pool ? s->pool : "mean";
    VmafCudaLiveOptions live;
    int pool_method, ret;

    if (!strcmp(fmt, "xml"))       s->log_format = VMAF_CUDA_LOG_XML;
    else if (!strcmp(fmt, "json")) s->log_format = VMAF_CUDA_LOG_JSON;
    else if (!strcmp(fmt, "csv"))  s->log_format = VMAF_CUDA_LOG_CSV;
    else if (!strcmp(fmt, "sub"))  s->log_format = VMAF_CUDA_LOG_SUB;
    else if (!strcmp(fmt, "ndjson")) s->ndjson = 1;
    else {
        av_log(ctx, AV_LOG_ERROR, "log_fmt '%s' is not one of xml, json, csv, sub, ndjson\n", fmt);
        return AVERROR(EINVAL);
    }

    if ((pool_method = vmaf_live_parse_pool(pool)) < 0) {
        av_log(ctx, AV_LOG_ERROR, "pool '%s' is not one of " VMAF_LIVE_POOL_NAMES "\n", pool);
        return AVERROR(EINVAL);
    }
    s->pool_method = pool_method;
    live_options(s, &live);
    if ((ret = vmaf_cuda_live_ff_check(ctx, &live)) < 0)
        return ret;
    /* per-frame history only for what needs the whole stream (settings.keep_history) */
    s->keep_history = (s->log_path && !s->ndjson) || vmaf_live_pool_percentile(s->pool_method);

    if (s->precision == 0) {
        av_log(ctx, AV_LOG_ERROR, "precision must be 1..17 or max\n");
        return AVERROR(EINVAL);
    }
    s->sdr_models = !s->model || !strstr(s->model, "path=");
    if (s->renditions > 1)
        return vmaf_cuda_ladder_ff_init(ctx);

    if ((ret = vmaf_cuda_ff_check_log_path(ctx, s->log_path)) < 0)
        return ret;
    if ((ret = append_pads(ctx)) < 0)
        return ret;
    s->fs.on_event = on_event;
    s->st.log_path = s->log_path;
    return vmaf_cuda_ff_stream_init(&s->st);
}

void vmaf_cuda_ff_describe_link(AVFilterLink *link, char *buf, size_t size)
{
    FilterLink *l = ff_filter_link(link);
    const char *name = av_get_pix_fmt_name(link->format);

    if (link->format == AV_PIX_FMT_CUDA && l->hw_frames_ctx) {
        AVHWFramesContext *fc = (AVHWFramesContext *)l->hw_frames_ctx->data;
        snprintf(buf, size, "%dx%d %s(%s)", link->w, link->h, name,
                 av_get_pix_fmt_name(fc->sw_format));
    } else {
        snprintf(buf, size, "%dx%d %s", link->w, link->h, name ? name : "?");
    }
}

enum AVPixelFormat vmaf_cuda_ff_layout_format(AVFilterLink *link)
{
    FilterLink *l = ff_filter_link(link);

    if (link->format == AV_PIX_FMT_CUDA) {
        if (!l->hw_frames_ctx)
            return AV_PIX_FMT_NONE;
        return ((AVHWFramesContext *)l->hw_frames_ctx->data)->sw_format;
    }
    return link->format;
}

/* Both inputs are configured here (main first): every mismatch is reported before any
 * frame is processed. */
static int config_input_ref(AVFilterLink *inlink)
{
    AVFilterContext *ctx = inlink->dst;
    VmafCudaContext *s = ctx->priv;
    AVFilterLink *mainlink = ctx->inputs[0], *reflink = ctx->inputs[1];
    enum AVPixelFormat main_fmt = vmaf_cuda_ff_layout_format(mainlink),
                       ref_fmt = vmaf_cuda_ff_layout_format(reflink);
    const AVPixFmtDescriptor *main_desc = av_pix_fmt_desc_get(main_fmt);
    const AVPixFmtDescriptor *ref_desc = av_pix_fmt_desc_get(ref_fmt);
    VmafCudaLayout ml, rl;
    unsigned main_bpc, ref_bpc;
    char main_str[96], ref_str[96];
    int err = 0;

    vmaf_cuda_ff_describe_link(mainlink, main_str, sizeof(main_str));
    vmaf_cuda_ff_describe_link(reflink, ref_str, sizeof(ref_str));

    if ((mainlink->format == AV_PIX_FMT_CUDA) != (reflink->format == AV_PIX_FMT_CUDA)) {
        av_log(ctx, AV_LOG_ERROR, "main is %s but reference is %s: both inputs must be CUDA "
               "frames or both software frames (use hwupload_cuda or hwdownload)\n",
               main_str, ref_str);
        return AVERROR(EINVAL);
    }
    if (mainlink->format == AV_PIX_FMT_CUDA &&
        (!ff_filter_link(mainlink)->hw_frames_ctx || !ff_filter_link(reflink)->hw_frames_ctx)) {
        av_log(ctx, AV_LOG_ERROR, "CUDA input without a hardware frames context\n");
        return AVERROR(EINVAL);
    }
    if (mainlink->w != reflink->w || mainlink->h != reflink->h) {
        av_log(ctx, AV_LOG_ERROR, "input sizes differ: main is %s, reference is %s\n",
               main_str, ref_str);
        err = AVERROR(EINVAL);
    }
    if (vmaf_cuda_layout(main_desc, &ml) < 0) {
        av_log(ctx, AV_LOG_ERROR, "unsupported main format: %s\n", main_str);
        return AVERROR(EINVAL);
    }
    if (vmaf_cuda_layout(ref_desc, &rl) < 0) {
        av_log(ctx, AV_LOG_ERROR, "unsupported reference format: %s\n", ref_str);
        return AVERROR(EINVAL);
    }
    main_bpc = ml.bpc;
    ref_bpc = rl.bpc;
    /* Software inputs share one negotiated format. CUDA frames of two layouts are read
     * as they are when their luma has one bit depth (nv12 and yuv420p, p010 and
     * yuv420p10: each picture has its own shift); else one must be converted on the GPU. */
    if (main_bpc != ref_bpc) {
        if (mainlink->format == AV_PIX_FMT_CUDA)
            av_log(ctx, AV_LOG_ERROR, "input bit depths differ: main is %u-bit (%s), reference "
                   "is %u-bit (%s); convert one on the GPU, e.g. [ref]scale_cuda=format=%s[ref2] "
                   "or [main]scale_cuda=format=%s[main2]\n", main_bpc, main_str, ref_bpc,
                   ref_str, av_get_pix_fmt_name(main_fmt), av_get_pix_fmt_name(ref_fmt));
        else
            av_log(ctx, AV_LOG_ERROR, "input bit depths differ: main is %u-bit (%s), "
                   "reference is %u-bit (%s)\n", main_bpc, main_str, ref_bpc, ref_str);
        err = AVERROR(EINVAL);
    } else if (main_fmt != ref_fmt && mainlink->format != AV_PIX_FMT_CUDA) {
        av_log(ctx, AV_LOG_ERROR, "input formats differ: main is %s, reference is %s\n",
               main_str, ref_str);
        err = AVERROR(EINVAL);
    }
#if CONFIG_CUDA
    if (!err && mainlink->format == AV_PIX_FMT_CUDA) {
        AVHWFramesContext *mf = (AVHWFramesContext *)ff_filter_link(mainlink)->hw_frames_ctx->data;
        AVHWFramesContext *rf = (AVHWFramesContext *)ff_filter_link(reflink)->hw_frames_ctx->data;
        AVCUDADeviceContext *md = mf->device_ctx->hwctx, *rd = rf->device_ctx->hwctx;
        if (md->cuda_ctx != rd->cuda_ctx) {
            av_log(ctx, AV_LOG_ERROR, "main and reference frames are in different CUDA "
                   "contexts (two devices, or two hwupload_cuda instances): decode both with "
                   "-hwaccel cuda on one device, or give software frames (backend=cuda "
                   "uploads them)\n");
            err = AVERROR(EINVAL);
        }
    }
#endif
    if (err)
        return err;

    s->bpc = main_bpc;
    s->shift = ml.shift;
    s->layout[0] = ml;
    s->layout[1] = rl;
    s->hw_frames = mainlink->format == AV_PIX_FMT_CUDA;
    s->with_chroma = ml.chroma != VMAF_CUDA_CHROMA_400 && ml.chroma == rl.chroma;
    s->chroma_note[0] = 0;
    if (ml.chroma != rl.chroma) {
        /* CUDA frames of one luma depth and two subsamplings: scored on luma alone */
        snprintf(s->chroma_note, sizeof(s->chroma_note), "the chroma planes of main (%s, "
                 "%s) and reference (%s, %s) differ in size, so no chroma is passed; for "
                 "features that read chroma convert one on the GPU, e.g. "
                 "[ref]scale_cuda=format=%s[ref2]", main_str, vmaf_cuda_chroma_name(ml.chroma),
                 ref_str, vmaf_cuda_chroma_name(rl.chroma), av_get_pix_fmt_name(main_fmt));
        av_log(ctx, AV_LOG_VERBOSE, "%s\n", s->chroma_note);
    }
    return 0;
}

int vmaf_cuda_ff_settings(AVFilterContext *ctx, AVFilterLink *hwlink, int width, int height,
                          unsigned bpc, enum VmafCudaChroma chroma, VmafCudaSettings *st)
{
    VmafCudaContext *s = ctx->priv;

    vmaf_cuda_default_settings(st);
    st->width = width;
    st->height = height;
    st->bpc = bpc;
    st->chroma = chroma;
    st->backend = s->backend;
    st->models = s->model;
    st->features = s->feature;
    st->n_subsample = s->n_subsample;
    st->n_threads = s->n_threads;
    st->cuda_device = s->cuda_device;
    st->keep_history = s->keep_history;

    if (hwlink) {
#if CONFIG_CUDA
        AVHWFramesContext *fc = (AVHWFramesContext *)ff_filter_link(hwlink)->hw_frames_ctx->data;
        AVCUDADeviceContext *dev = fc->device_ctx->hwctx;
        if (s->backend == VMAF_CUDA_BACKEND_CPU) {
            av_log(ctx, AV_LOG_ERROR, "backend=cpu cannot read CUDA frames: use backend=cuda "
                   "(or auto), or hwdownload the frames\n");
            return AVERROR(EINVAL);
        }
        st->backend = VMAF_CUDA_BACKEND_CUDA;
        st->cuda_context = dev->cuda_ctx;
        av_buffer_unref(&s->hw_device);
        s->hw_device = av_buffer_ref(fc->device_ref);
        if (!s->hw_device)
            return AVERROR(ENOMEM);
        /* FFmpeg writes CUDA frames (NVDEC output copies, hwupload_cuda, scale_cuda) on
         * the device's stream, where NULL means CUDA's legacy default stream. The library
         * reads NULL as "use a stream of your own", which would not be ordered after
         * those writes: name the legacy stream explicitly instead. */
        st->cuda_stream = dev->stream ? (void *)dev->stream : VMAF_CUDA_STREAM_LEGACY;
#else
        return AVERROR(ENOSYS);
#endif
    }
    return 0;
}

void vmaf_cuda_ff_banner(AVFilterContext *ctx, VmafCudaSession *vs, const VmafCudaSettings *st,
                         const char *extra)
{
    VmafCudaContext *s = ctx->priv;

    av_log(ctx, AV_LOG_VERBOSE, "per-frame history: %s\n", s->keep_history ?
           "kept (a whole-stream log or a percentile pool needs it)" :
           "not kept (memory stays flat over the stream)");
    if (*vmaf_cuda_open_warning(vs))
        av_log(ctx, AV_LOG_WARNING, "%s\n", vmaf_cuda_open_warning(vs));
    av_log(ctx, AV_LOG_INFO, "vmaf_cuda %s: %s backend, %s frames, %ux%u, %u-bit%s, %s%s; "
           "CUDA kernels: %s\n",
           vmaf_cuda_version(), vmaf_cuda_backend_name(vs),
           s->hw_frames ? "CUDA" : "software", st->width, st->height, st->bpc,
           s->shift ? " (high bits)" : "",
           s->chroma_note[0] ? "luma only" : vmaf_cuda_chroma_name(st->chroma), extra,
           *vmaf_cuda_cuda_archs() ? vmaf_cuda_cuda_archs() : "none (built without CUDA)");
}

static int open_session(AVFilterContext *ctx)
{
    VmafCudaContext *s = ctx->priv;
    AVFilterLink *mainlink = ctx->inputs[0];
    VmafCudaSettings st;
    char err[512] = "";
    int ret;

    if ((ret = vmaf_cuda_ff_settings(ctx, s->hw_frames ? mainlink : NULL, mainlink->w,
                                     mainlink->h, s->bpc, s->layout[0].chroma, &st)) < 0)
        return ret;
    ret = vmaf_cuda_open(&s->st.session, &st, err, sizeof(err));
    if (ret < 0) {
        av_log(ctx, AV_LOG_ERROR, "cannot open the VMAF session: %s%s%s\n",
               vmaf_cuda_strerror(ret), *err ? ": " : "", err);
        s->st.session = NULL;
        return vmaf_cuda_ff_status_to_averror(ret);
    }
    s->nb_models = vmaf_cuda_model_count(s->st.session);
    vmaf_cuda_ff_banner(ctx, s->st.session, &st, "");
    return 0;
}

static int config_output(AVFilterLink *outlink)
{
    AVFilterContext *ctx = outlink->src;
    VmafCudaContext *s = ctx->priv;
    AVFilterLink *mainlink = ctx->inputs[0];
    FilterLink *il = ff_filter_link(mainlink);
    VmafCudaLiveOptions live;
    int ret;

    if ((ret = ff_framesync_init_dualinput(&s->fs, ctx)) < 0)
        return ret;
    if ((ret = vmaf_cuda_ff_config_outlink(outlink, mainlink)) < 0)
        return ret;
    if ((ret = ff_framesync_configure(&s->fs)) < 0)
        return ret;
    vmaf_cuda_pairing_uninit(&s->pairing);
    if ((ret = vmaf_cuda_pairing_init(&s->pairing, s->fs.time_base, il->frame_rate,
                                      ff_filter_link(ctx->inputs[1])->frame_rate)) < 0)
        return ret;
    if (!s->st.session && (ret = open_session(ctx)) < 0)
        return ret;
    live_options(s, &live);
    if (!s->st.live &&
        (ret = vmaf_cuda_live_ff_open(ctx, &live, s->st.session, outlink, &s->st.live)) < 0)
        return ret;
    return 0;
}

/** The planes of `frame` (which: 0 main, 1 reference) as the library reads them. */
static int fill_picture(AVFilterContext *ctx, const AVFrame *frame, int which,
                        VmafCudaPicture *pic)
{
    VmafCudaContext *s = ctx->priv;

    return vmaf_cuda_picture_fill(ctx, frame, &s->layout[which], s->hw_frames,
                                  s->with_chroma, &s->copy[which], pic);
}

static int on_event(FFFrameSync *fs)
{
    AVFilterContext *ctx = fs->parent;
    VmafCudaContext *s = ctx->priv;
    VmafCudaStream *st = &s->st;
    AVFrame *dist = NULL, *ref = NULL, *ref_keep = NULL;
    VmafCudaPicture pic_ref, pic_dist;
    int ret, rc, scored;

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
    if (ctx->is_disabled || !ref || st->flushed) {
        if (!ctx->is_disabled &&
            (ret = vmaf_cuda_pairing_event(&s->pairing, ctx, fs, dist, NULL, -1,
                                           s->sdr_models)) < 0) {
            av_frame_free(&dist);
            return ret;
        }
        if ((ret = vmaf_cuda_ff_stream_queue(st, dist, NULL, -1, 0)) < 0)
            return ret;
        /* the reference has ended (eof_action=pass): no frame will follow the ones sent,
         * so flush now rather than hold the rest of the main stream until its end */
        if (!ref && st->nb_sent && !st->flushed && ff_outlink_get_status(ctx->inputs[1]))
            return finish(ctx);
        return vmaf_cuda_ff_stream_drain(ctx, st, 0);
    }
    if (dist->width != ctx->inputs[0]->w || dist->height != ctx->inputs[0]->h ||
        ref->width != dist->width || ref->height != dist->height) {
        av_log(ctx, AV_LOG_ERROR, "frame size changed (main %dx%d, reference %dx%d); "
               "the filter was configured for %dx%d\n", dist->width, dist->height,
               ref->width, ref->height, ctx->inputs[0]->w, ctx->inputs[0]->h);
        av_frame_free(&dist);
        return AVERROR(EINVAL);
    }
    if ((ret = vmaf_cuda_pairing_event(&s->pairing, ctx, fs, dist, ref, st->nb_sent,
                                       s->sdr_models)) < 0 ||
        (ret = fill_picture(ctx, dist, 0, &pic_dist)) < 0 ||
        (ret = fill_picture(ctx, ref, 1, &pic_ref)) < 0) {
        av_frame_free(&dist);
        return ret;
    }
    if (s->hw_frames) {
        /* the library reads device frames until their scores come back */
        ref_keep = av_frame_clone(ref);
        if (!ref_keep) {
            av_frame_free(&dist);
            return AVERROR(ENOMEM);
        }
    }
    if (!st->nb_sent)
        st->t_first_send = av_gettime_relative();
    rc = vmaf_cuda_send(st->session, &pic_ref, &pic_dist);
    if (rc < 0) {
        av_frame_free(&dist);
        av_frame_free(&ref_keep);
        ret = session_error(ctx, "vmaf_cuda_send", rc);
        if (rc == VMAF_CUDA_EINVAL && s->chroma_note[0])
            av_log(ctx, AV_LOG_ERROR, "%s\n", s->chroma_note);
        return ret;
    }
    scored = s->n_subsample <= 1 || st->nb_sent % s->n_subsample == 0;
    if ((ret = vmaf_cuda_ff_stream_queue(st, dist, ref_keep, st->nb_sent++, scored)) < 0)
        return ret;
    return vmaf_cuda_ff_stream_drain(ctx, st, 0);
}

/** End of stream: flush the library, attach the last scores, empty the queue. */
static int finish(AVFilterContext *ctx)
{
    VmafCudaContext *s = ctx->priv;
    int ret;

    if ((ret = vmaf_cuda_ff_stream_flush(ctx, &s->st)) < 0)
        return ret;
    return vmaf_cuda_ff_stream_drain(ctx, &s->st, 1);
}

static int activate(AVFilterContext *ctx)
{
    VmafCudaContext *s = ctx->priv;
    int ret;

    if (s->ladder)
        return vmaf_cuda_ladder_ff_activate(ctx);
    if ((ret = vmaf_cuda_pairing_observe(&s->pairing, ctx)) < 0)
        return ret;
    vmaf_cuda_ff_stream_update_out_index(ctx, &s->st);
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
        vmaf_cuda_pairing_report(&s->pairing, ctx);
        if (!s->st.nb_sent) {
            av_log(ctx, AV_LOG_ERROR, "no frame pair was scored (no main frame met a "
                   "reference frame): no log%s written, no VMAF score\n",
                   s->log_path ? " file" : "");
            vmaf_cuda_ff_no_log(ctx, "", s->log_path);
            vmaf_cuda_ff_stream_drain(ctx, &s->st, 1);
            return AVERROR(EINVAL);
        }
        return finish(ctx);
    }
    return 0;
}

/** The end of the stream for the user: the pairing warnings, the log, the score lines;
 *  an AVERROR when output was lost. Run once, by fftools' "finish" command (the exit
 *  status then tells), else at uninit. */
static int results(AVFilterContext *ctx)
{
    VmafCudaContext *s = ctx->priv;

    if (s->ladder)
        return vmaf_cuda_ladder_ff_results(ctx);
    if (s->st.session && s->st.nb_sent) {
        vmaf_cuda_pairing_report(&s->pairing, ctx);
        return vmaf_cuda_ff_stream_results(ctx, &s->st);
    }
    /* (a graph that was only configured, never fed, e.g. one ffmpeg rebuilds when the
     * input's hardware frames appear, has no session and says nothing; at the end of
     * the stream activate has already said it) */
    if (s->st.session && !s->st.nb_sent && !s->eof_done && !s->st.results_done) {
        s->st.results_done = 1;
        av_log(ctx, AV_LOG_WARNING, "no frame pair was scored: no log%s written, no "
               "VMAF score\n", s->log_path ? " file" : "");
        vmaf_cuda_ff_no_log(ctx, "", s->log_path);
    }
    return 0;
}

/**
 * Commands from fftools (patches/ffmpeg-*-integration.patch), which ffmpeg's own filter
 * thread sends; a program of its own may send them too:
 *   output_closed "SINK LAST": the consumer behind the filter named SINK took frames up
 *       to lavfi.vmaf.frame LAST (-1: none) and closed its output (-frames:v);
 *   finish: ffmpeg is done with the graph (every output delivered): write the logs and
 *       score lines now, and return an error when output was lost, for the exit status.
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
        if (s->ladder)
            return vmaf_cuda_ladder_ff_output_closed(ctx, sink, last);
        vmaf_cuda_ff_stream_output_closed(ctx, &s->st, sink, last);
        return 0;
    }
    if (!strcmp(cmd, "finish"))
        return results(ctx);
    return AVERROR(ENOSYS);
}

static av_cold void uninit(AVFilterContext *ctx)
{
    VmafCudaContext *s = ctx->priv;

    results(ctx);
    if (s->ladder || s->renditions > 1)
        vmaf_cuda_ladder_ff_uninit(ctx);

    ff_framesync_uninit(&s->fs);
    vmaf_cuda_live_close(s->st.live);
    s->st.live = NULL;
    vmaf_cuda_close(s->st.session);
    s->st.session = NULL;
    vmaf_cuda_ff_stream_uninit(&s->st);
    vmaf_cuda_pairing_uninit(&s->pairing);
    for (int i = 0; i < 2; i++)
        av_freep(&s->copy[i].buf);
    av_buffer_unref(&s->hw_device);
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

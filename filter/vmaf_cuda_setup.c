/* SPDX-License-Identifier: BSD-2-Clause-Patent */
/**
 * @file
 * The pipeline's setup (vmaf_cuda_pipeline.h): the renditions and their log paths at
 * init, the links' checks (every main against the reference, each mismatch reported
 * before any frame), the library's ladder with its banner, the outputs with their
 * pairing watch and live QA; and the teardown.
 *
 * Copied into FFmpeg's libavfilter/ with vf_vmaf_cuda.c by patches/build-ffmpeg.sh.
 */

#include "config.h"

#include <stdio.h>
#include <string.h>

#include <vmaf_cuda.h>

#include "libavutil/hwcontext.h"
#include "libavutil/mem.h"
#include "libavutil/pixdesc.h"
#if CONFIG_CUDA
#include "libavutil/hwcontext_cuda_internal.h"
#endif

#include "filters.h"

#include "vmaf_cuda_pipeline.h"

/** CUDA's handle of the legacy default stream (CU_STREAM_LEGACY, cudaStreamLegacy). */
#define VMAF_CUDA_STREAM_LEGACY ((void *)(uintptr_t)0x1)

int ff_vmaf_cuda_pipeline_init(AVFilterContext *ctx, VmafCudaPipeline *p, unsigned n)
{
    const char *path = p->opt.log_path;
    char err[1024];
    int ret;

    if (path && n > 1 && vmaf_cuda_rendition_path(path, 0, err, sizeof(err)) < 0) {
        av_log(ctx, AV_LOG_ERROR, "log_path '%s' has no %%d: with renditions=%u each "
               "rendition writes its own log, named by log_path with %%d replaced by the "
               "rendition's index from 0 (e.g. log_path=vmaf_%%d.json)\n", path, n);
        return AVERROR(EINVAL);
    }
    p->n = n;
    p->r = av_calloc(n, sizeof(*p->r));
    p->ref_kept = av_fifo_alloc2(8, sizeof(AVFrame *), AV_FIFO_FLAG_AUTO_GROW);
    if (!p->r || !p->ref_kept)
        return AVERROR(ENOMEM);
    if (n > 1 && (ret = ff_vmaf_cuda_sync_init(&p->sync, n)) < 0)
        return ret;
    for (unsigned k = 0; k < n; k++) {
        VmafCudaRendition *r = &p->r[k];
        r->st.out = k;
        if (n > 1)
            snprintf(r->st.prefix, sizeof(r->st.prefix), "rendition %u: ", k);
        if ((ret = ff_vmaf_cuda_stream_init(&r->st, &p->out)) < 0)
            return ret;
        if (!path)
            continue;
        if (n > 1) {
            size_t size = strlen(path) + 16;
            if (!(r->st.log_path = av_malloc(size)))
                return AVERROR(ENOMEM);
            vmaf_cuda_rendition_path(path, k, r->st.log_path, size);
        } else if (!(r->st.log_path = av_strdup(path))) {
            return AVERROR(ENOMEM);
        }
        /* the log is written at the end (NDJSON: at the first scored frame): find out
         * now when it cannot be, leaving no file behind */
        if (!(p->out.ndjson && vmaf_cuda_live_path_is_stream(r->st.log_path)) &&
            !ff_vmaf_cuda_segment_parked_path(r->st.log_path) && /* (a re-created graph's) */
            vmaf_cuda_check_log_path(r->st.log_path, err, sizeof(err)) < 0) {
            av_log(ctx, AV_LOG_ERROR, "%s\n", err);
            return AVERROR(EIO);
        }
    }
    return 0;
}

void ff_vmaf_cuda_pipeline_uninit(VmafCudaPipeline *p)
{
    AVFrame *frame;

    ff_vmaf_cuda_metrics_stop(p); /* (it reads the live states) */
    if (p->r)
        ff_vmaf_cuda_segment_unadopted(p); /* (results took it; else it is freed here) */
    for (unsigned k = 0; p->r && k < p->n; k++) {
        vmaf_cuda_live_close(p->r[k].st.live);
        p->r[k].st.live = NULL;
        p->r[k].st.session = NULL; /* the ladder's */
    }
    vmaf_cuda_ladder_close(p->lad);
    p->lad = NULL;
    av_buffer_unref(&p->hw_device_prev);
    for (unsigned k = 0; p->r && k < p->n; k++) {
        VmafCudaRendition *r = &p->r[k];
        av_frame_free(&r->ev_dist);
        ff_vmaf_cuda_stream_uninit(&r->st);
        ff_vmaf_cuda_pairing_uninit(&r->pairing);
        av_freep(&r->copy.buf);
        av_freep(&r->st.log_path);
    }
    if (p->n > 1)
        ff_vmaf_cuda_sync_uninit(&p->sync);
    while (p->ref_kept && av_fifo_read(p->ref_kept, &frame, 1) >= 0)
        av_frame_free(&frame);
    av_fifo_freep2(&p->ref_kept);
    av_freep(&p->ref_copy.buf);
    av_freep(&p->r);
    ff_vmaf_cuda_sync_auto_uninit(&p->sync_auto);
    av_buffer_unref(&p->hw_device);
}

int ff_vmaf_cuda_metrics_start(AVFilterContext *ctx, VmafCudaPipeline *p, const char *address,
                               int port)
{
    const VmafCudaLive *lives[VMAF_CUDA_MAX_RENDITIONS];
    char err[512];
    int rc;

    if (port <= 0 || p->metrics)
        return 0;
    for (unsigned k = 0; k < p->n; k++)
        lives[k] = p->r[k].st.live;
    if ((rc = vmaf_cuda_metrics_serve(&p->metrics, lives, p->n, address, port, err,
                                      sizeof(err))) < 0) {
        av_log(ctx, AV_LOG_ERROR, "metrics_port: %s\n", err);
        return ff_vmaf_cuda_status_to_averror(rc);
    }
    av_log(ctx, AV_LOG_INFO, "metrics_port: Prometheus metrics at http://%s%s%s:%d/metrics\n",
           strchr(address, ':') && *address != '[' ? "[" : "", address,
           strchr(address, ':') && *address != '[' ? "]" : "", port);
    return 0;
}

void ff_vmaf_cuda_metrics_stop(VmafCudaPipeline *p)
{
    vmaf_cuda_metrics_close(p->metrics);
    p->metrics = NULL;
}

/** "854x480 yuv420p" or "854x480 cuda(p010le)". */
static void describe_link(AVFilterLink *link, char *buf, size_t size)
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

/** The format whose layout the frames of `link` have (sw_format for CUDA frames). */
static enum AVPixelFormat layout_format(AVFilterLink *link)
{
    FilterLink *l = ff_filter_link(link);

    if (link->format == AV_PIX_FMT_CUDA)
        return l->hw_frames_ctx ? ((AVHWFramesContext *)l->hw_frames_ctx->data)->sw_format
                                : AV_PIX_FMT_NONE;
    return link->format;
}

#if CONFIG_CUDA
static void *cuda_context(AVFilterLink *link)
{
    AVHWFramesContext *fc = (AVHWFramesContext *)ff_filter_link(link)->hw_frames_ctx->data;
    return ((AVCUDADeviceContext *)fc->device_ctx->hwctx)->cuda_ctx;
}
#endif

/** Main k against the reference: 0, or an AVERROR (a hard one at once, `*err` for one
 *  that lets the checks go on). The two-input filter keeps FFmpeg's libvmaf's rules and
 *  words (one negotiated format; CUDA frames of two layouts with one luma depth); a
 *  ladder's rendition must have the reference's pixel format. */
static int check_main(AVFilterContext *ctx, VmafCudaPipeline *p, unsigned k, int *err)
{
    AVFilterLink *m = ctx->inputs[k], *ref = ctx->inputs[p->n];
    const int hw = ref->format == AV_PIX_FMT_CUDA, ladder = p->n > 1;
    enum AVPixelFormat fmt = layout_format(m), ref_fmt = layout_format(ref);
    const VmafCudaLayout *rl = &p->ref_layout;
    VmafCudaLayout *ml = &p->r[k].layout;
    char str[96], ref_str[96], who[48];

    describe_link(m, str, sizeof(str));
    describe_link(ref, ref_str, sizeof(ref_str));
    snprintf(who, sizeof(who), "rendition %u (main%u)", k, k);
    if ((m->format == AV_PIX_FMT_CUDA) != hw) {
        if (ladder)
            av_log(ctx, AV_LOG_ERROR, "%s is %s but the reference is %s: every input must be "
                   "CUDA frames or every input software frames (use hwupload_cuda or "
                   "hwdownload)\n", who, str, ref_str);
        else
            av_log(ctx, AV_LOG_ERROR, "main is %s but reference is %s: both inputs must be "
                   "CUDA frames or both software frames (use hwupload_cuda or hwdownload)\n",
                   str, ref_str);
        return AVERROR(EINVAL);
    }
    if (hw && !ff_filter_link(m)->hw_frames_ctx) {
        av_log(ctx, AV_LOG_ERROR, "CUDA input without a hardware frames context\n");
        return AVERROR(EINVAL);
    }
    if (m->w != ref->w || m->h != ref->h) {
        /* the links' sizes are those of the newest frames when the graph was configured
         * (fftools re-creates it when one input changes, and the other may follow): the
         * frames paired are compared (ff_vmaf_cuda_segment_check()), so the error names
         * the frame */
        av_log(ctx, AV_LOG_VERBOSE, "%s is %s, the reference is %s: the frames paired must "
               "have one size\n", ladder ? who : "main", str, ref_str);
    }
    if (ff_vmaf_cuda_layout(av_pix_fmt_desc_get(fmt), ml) < 0) {
        if (ladder)
            av_log(ctx, AV_LOG_ERROR, "%s: unsupported format %s\n", who, str);
        else
            av_log(ctx, AV_LOG_ERROR, "unsupported main format: %s\n", str);
        return AVERROR(EINVAL);
    }
    if (ladder && (ml->bpc != rl->bpc || ml->chroma != rl->chroma || (!hw && fmt != ref_fmt))) {
        av_log(ctx, AV_LOG_ERROR, "%s is %s (%u-bit, %s), the reference is %s (%u-bit, %s): "
               "each rendition must have the reference's pixel format (bit depth, chroma "
               "subsampling, range); convert it first, e.g. scale_cuda=format=%s for CUDA "
               "frames, format=%s for software frames\n", who, str, ml->bpc,
               ff_vmaf_cuda_chroma_name(ml->chroma), ref_str, rl->bpc,
               ff_vmaf_cuda_chroma_name(rl->chroma), av_get_pix_fmt_name(ref_fmt),
               av_get_pix_fmt_name(ref_fmt));
        *err = AVERROR(EINVAL);
    } else if (!ladder && ml->bpc != rl->bpc) {
        /* software inputs share one negotiated format; CUDA frames of two layouts are
         * read as they are when their luma has one bit depth (nv12 and yuv420p, p010 and
         * yuv420p10: each picture has its own shift), else one is converted on the GPU */
        if (hw)
            av_log(ctx, AV_LOG_ERROR, "input bit depths differ: main is %u-bit (%s), reference "
                   "is %u-bit (%s); convert one on the GPU, e.g. [ref]scale_cuda=format=%s[ref2] "
                   "or [main]scale_cuda=format=%s[main2]\n", ml->bpc, str, rl->bpc, ref_str,
                   av_get_pix_fmt_name(fmt), av_get_pix_fmt_name(ref_fmt));
        else
            av_log(ctx, AV_LOG_ERROR, "input bit depths differ: main is %u-bit (%s), "
                   "reference is %u-bit (%s)\n", ml->bpc, str, rl->bpc, ref_str);
        *err = AVERROR(EINVAL);
    } else if (!ladder && !hw && fmt != ref_fmt) {
        av_log(ctx, AV_LOG_ERROR, "input formats differ: main is %s, reference is %s\n",
               str, ref_str);
        *err = AVERROR(EINVAL);
    }
#if CONFIG_CUDA
    if (!*err && hw && cuda_context(m) != cuda_context(ref)) {
        if (ladder)
            av_log(ctx, AV_LOG_ERROR, "%s and the reference are in different CUDA contexts "
                   "(two devices, or two hwupload_cuda instances): decode every input with "
                   "-hwaccel cuda on one device, or give software frames (backend=cuda "
                   "uploads them)\n", who);
        else
            av_log(ctx, AV_LOG_ERROR, "main and reference frames are in different CUDA "
                   "contexts (two devices, or two hwupload_cuda instances): decode both with "
                   "-hwaccel cuda on one device, or give software frames (backend=cuda "
                   "uploads them)\n");
        *err = AVERROR(EINVAL);
    }
#endif
    if (!ladder && !*err && ml->chroma != rl->chroma) {
        /* CUDA frames of one luma depth and two subsamplings: scored on luma alone */
        snprintf(p->chroma_note, sizeof(p->chroma_note), "the chroma planes of main (%s, "
                 "%s) and reference (%s, %s) differ in size, so no chroma is passed; for "
                 "features that read chroma convert one on the GPU, e.g. "
                 "[ref]scale_cuda=format=%s[ref2]", str, ff_vmaf_cuda_chroma_name(ml->chroma),
                 ref_str, ff_vmaf_cuda_chroma_name(rl->chroma), av_get_pix_fmt_name(fmt));
        av_log(ctx, AV_LOG_VERBOSE, "%s\n", p->chroma_note);
    }
    return 0;
}

int ff_vmaf_cuda_pipeline_config_inputs(AVFilterContext *ctx, VmafCudaPipeline *p)
{
    AVFilterLink *ref = ctx->inputs[p->n];
    const int hw = ref->format == AV_PIX_FMT_CUDA;
    char ref_str[96];
    int err = 0, ret;

    describe_link(ref, ref_str, sizeof(ref_str));
    p->chroma_note[0] = 0;
    if (hw && !ff_filter_link(ref)->hw_frames_ctx) {
        av_log(ctx, AV_LOG_ERROR, "CUDA input without a hardware frames context\n");
        return AVERROR(EINVAL);
    }
    if (ff_vmaf_cuda_layout(av_pix_fmt_desc_get(layout_format(ref)), &p->ref_layout) < 0) {
        av_log(ctx, AV_LOG_ERROR, "unsupported reference format: %s\n", ref_str);
        return AVERROR(EINVAL);
    }
    for (unsigned k = 0; k < p->n; k++)
        if ((ret = check_main(ctx, p, k, &err)) < 0)
            return ret;
    if (err)
        return err;
    p->out.hw_frames = hw;
    p->bpc = p->ref_layout.bpc;
    p->with_chroma = p->ref_layout.chroma != VMAF_CUDA_CHROMA_400 && !p->chroma_note[0];
    return 0;
}

int ff_vmaf_cuda_pipeline_settings(AVFilterContext *ctx, VmafCudaPipeline *p, unsigned width,
                                   unsigned height, VmafCudaSettings *st)
{
    AVFilterLink *ref = ctx->inputs[p->n];

    vmaf_cuda_default_settings(st);
    st->width = width;
    st->height = height;
    st->bpc = p->bpc;
    st->chroma = p->ref_layout.chroma;
    st->backend = p->opt.backend;
    st->models = p->opt.model;
    st->features = p->opt.feature;
    st->n_subsample = p->opt.n_subsample;
    st->n_threads = p->opt.n_threads;
    st->cuda_device = p->opt.cuda_device;
    st->keep_history = p->out.keep_history;
    if (!p->out.hw_frames)
        return 0;
#if CONFIG_CUDA
    {
        AVHWFramesContext *fc = (AVHWFramesContext *)ff_filter_link(ref)->hw_frames_ctx->data;
        AVCUDADeviceContext *dev = fc->device_ctx->hwctx;
        if (p->opt.backend == VMAF_CUDA_BACKEND_CPU) {
            av_log(ctx, AV_LOG_ERROR, "backend=cpu cannot read CUDA frames: use backend=cuda "
                   "(or auto), or hwdownload the frames\n");
            return AVERROR(EINVAL);
        }
        st->backend = VMAF_CUDA_BACKEND_CUDA;
        st->cuda_context = dev->cuda_ctx;
        av_buffer_unref(&p->hw_device);
        if (!(p->hw_device = av_buffer_ref(fc->device_ref)))
            return AVERROR(ENOMEM);
        /* FFmpeg writes CUDA frames (NVDEC output copies, hwupload_cuda, scale_cuda) on
         * the device's stream, where NULL means CUDA's legacy default stream. The library
         * reads NULL as "use a stream of your own", which would not be ordered after
         * those writes: name the legacy stream explicitly instead. */
        st->cuda_stream = dev->stream ? (void *)dev->stream : VMAF_CUDA_STREAM_LEGACY;
        return 0;
    }
#else
    return AVERROR(ENOSYS);
#endif
}

/** The library's ladder (one rendition: the two-input filter) and the banner. */
static int open_ladder(AVFilterContext *ctx, VmafCudaPipeline *p)
{
    VmafCudaSettings st;
    VmafCudaSession *vs;
    char err[512] = "", extra[48] = "";
    const unsigned shift = p->n > 1 ? p->ref_layout.shift : p->r[0].layout.shift;
    int ret;

    if ((ret = ff_vmaf_cuda_pipeline_settings(ctx, p, ctx->inputs[p->n]->w,
                                              ctx->inputs[p->n]->h, &st)) < 0)
        return ret;
    if (p->adopted) /* fftools re-created the graph: the stream goes on */
        return ff_vmaf_cuda_segment_resume(ctx, p, &st);
    p->seg_w = st.width;
    p->seg_h = st.height;
    ret = vmaf_cuda_ladder_open(&p->lad, &st, p->n, err, sizeof(err));
    if (ret < 0) {
        av_log(ctx, AV_LOG_ERROR, "cannot open the VMAF session: %s%s%s\n",
               vmaf_cuda_strerror(ret), *err ? ": " : "", err);
        p->lad = NULL;
        return ff_vmaf_cuda_status_to_averror(ret);
    }
    for (unsigned k = 0; k < p->n; k++) {
        p->r[k].st.session = vmaf_cuda_ladder_session(p->lad, k);
        p->r[k].st.nb_models = vmaf_cuda_model_count(p->r[k].st.session);
    }
    vs = p->r[0].st.session;
    if (p->n > 1)
        snprintf(extra, sizeof(extra), ", %u renditions", p->n);
    av_log(ctx, AV_LOG_VERBOSE, "per-frame history: %s\n", p->out.keep_history ?
           "kept (a whole-stream log or a percentile pool needs it)" :
           "not kept (memory stays flat over the stream)");
    if (*vmaf_cuda_open_warning(vs))
        av_log(ctx, AV_LOG_WARNING, "%s\n", vmaf_cuda_open_warning(vs));
    av_log(ctx, AV_LOG_INFO, "vmaf_cuda %s: %s backend, %s frames, %ux%u, %u-bit%s, %s%s; "
           "CUDA kernels: %s\n", vmaf_cuda_version(), vmaf_cuda_backend_name(vs),
           p->out.hw_frames ? "CUDA" : "software", st.width, st.height, st.bpc,
           shift ? " (high bits)" : "",
           p->chroma_note[0] ? "luma only" : ff_vmaf_cuda_chroma_name(st.chroma), extra,
           *vmaf_cuda_cuda_archs() ? vmaf_cuda_cuda_archs() : "none (built without CUDA)");
    return 0;
}

int ff_vmaf_cuda_pipeline_config_output(AVFilterContext *ctx, VmafCudaPipeline *p, unsigned k,
                                        AVFilterLink *outlink, const FFFrameSync *fs)
{
    VmafCudaRendition *r = &p->r[k];
    AVFilterLink *mainlink = ctx->inputs[k], *reflink = ctx->inputs[p->n];
    VmafCudaLiveOptions live = {
        .window = p->opt.window, .window_log = p->opt.window_log, .sei = p->opt.sei,
        .ndjson = p->out.ndjson, .log_path = r->st.log_path, .precision = p->out.precision,
        .pool = p->out.pool,
    };
    int ret;

    if ((ret = ff_vmaf_cuda_config_outlink(outlink, mainlink)) < 0)
        return ret;
    if (!fs) {
        ff_vmaf_cuda_sync_configure(&p->sync, k, ctx, mainlink, reflink, p->opt.sync);
        fs = &p->sync.r[k].fs;
        if (p->input_timeout > 0)
            p->sync.r[k].in[0].after = EXT_STOP; /* live rules: as the two-input filter */
    }
    ff_vmaf_cuda_pairing_uninit(&r->pairing);
    if ((ret = ff_vmaf_cuda_pairing_init(&r->pairing, fs, ff_filter_link(mainlink)->frame_rate,
                                         ff_filter_link(reflink)->frame_rate, r->st.prefix,
                                         p->input_timeout)) < 0)
        return ret;
    if (!p->lad && (ret = open_ladder(ctx, p)) < 0)
        return ret;
    if (!r->st.live &&
        (ret = ff_vmaf_cuda_live_open(ctx, &live, r->st.session, outlink, &r->st.live)) < 0)
        return ret;
    for (unsigned j = 0; j < p->n; j++) /* (every rendition's live state, then the server) */
        if (!p->r[j].st.live)
            return 0;
    return ff_vmaf_cuda_metrics_start(ctx, p, p->opt.metrics_address, p->opt.metrics_port);
}

/* SPDX-License-Identifier: BSD-2-Clause-Patent */
/**
 * @file
 * The FFmpeg side of vmaf_cuda's live QA (vmaf_cuda_live_ff.h).
 */

#include <string.h>

#include "libavutil/dict.h"
#include "libavutil/error.h"
#include "libavutil/log.h"
#include "libavutil/macros.h"

#include "filters.h"

#include "vmaf_cuda_live_ff.h"

int vmaf_cuda_live_ff_check(AVFilterContext *ctx, const VmafCudaLiveOptions *o)
{
    size_t frames;
    double seconds;

    if (o->window && vmaf_live_parse_window(o->window, &frames, &seconds) < 0) {
        av_log(ctx, AV_LOG_ERROR, "window '%s' is neither a number of frames (window=50) nor "
               "a duration (window=2s, window=500ms)\n", o->window);
        return AVERROR(EINVAL);
    }
    if (o->window_log && (!o->window || !o->ndjson || !o->log_path)) {
        av_log(ctx, AV_LOG_ERROR, "window_log=%d writes window lines into the NDJSON log: it "
               "needs window=, log_fmt=ndjson and log_path\n", o->window_log);
        return AVERROR(EINVAL);
    }
    if (o->ndjson && !o->log_path) {
        av_log(ctx, AV_LOG_ERROR, "log_fmt=ndjson needs log_path (a file, a named pipe, or "
               "pipe:1 / - for stdout)\n");
        return AVERROR(EINVAL);
    }
    return 0;
}

int vmaf_cuda_live_ff_open(AVFilterContext *ctx, const VmafCudaLiveOptions *o,
                           VmafCudaSession *vs, AVFilterLink *outlink, VmafCudaLive **out)
{
    FilterLink *ol = ff_filter_link(outlink);
    const char *names[64];
    unsigned nb_models = vmaf_cuda_model_count(vs);
    VmafCudaLiveConfig cfg = {
        .window = o->window, .window_log = (unsigned)o->window_log, .sei = o->sei,
        .ndjson_path = o->ndjson ? o->log_path : NULL, .precision = o->precision,
        .pool = o->pool, .tb_num = outlink->time_base.num, .tb_den = outlink->time_base.den,
        .fr_num = ol->frame_rate.num, .fr_den = ol->frame_rate.den, .model_names = names,
        .nb_models = FFMIN(nb_models, FF_ARRAY_ELEMS(names)),
    };
    char err[512] = "";

    *out = NULL;
    if (!o->window && !o->ndjson && !o->sei)
        return 0;
    for (unsigned i = 0; i < cfg.nb_models; i++)
        names[i] = vmaf_cuda_model_name(vs, i);
    if (vmaf_cuda_live_open(out, &cfg, err, sizeof(err)) < 0) {
        av_log(ctx, AV_LOG_ERROR, "%s\n", err);
        return AVERROR(EINVAL);
    }
    return 0;
}

int vmaf_cuda_live_ff_attach(AVFilterContext *ctx, VmafCudaLive *l, AVFrame *frame,
                             const VmafCudaFrameScores *fs)
{
    VmafCudaLiveFrame lf;
    int ret = vmaf_cuda_live_frame(l, fs, frame->pts, frame->pts != AV_NOPTS_VALUE, &lf);

    if (ret == VMAF_LIVE_EOUTPUT) {
        /* the stream goes on without its log (e.g. the reader of a pipe went away, a
         * full disk), and the run ends with an error status */
        av_log(ctx, AV_LOG_ERROR, "%s\n", vmaf_cuda_live_error(l));
    } else if (ret < 0) {
        av_log(ctx, AV_LOG_ERROR, "%s\n", vmaf_cuda_live_error(l));
        return AVERROR(ENOMEM);
    }
    for (size_t i = 0; i < lf.nb_meta; i++)
        av_dict_set(&frame->metadata, lf.meta_keys[i], lf.meta_values[i], 0);
    if (lf.sei) {
        AVFrameSideData *sd = av_frame_new_side_data(frame, AV_FRAME_DATA_SEI_UNREGISTERED,
                                                     lf.sei_size);
        if (!sd)
            return AVERROR(ENOMEM);
        memcpy(sd->data, lf.sei, lf.sei_size);
    }
    return ret == VMAF_LIVE_EOUTPUT;
}

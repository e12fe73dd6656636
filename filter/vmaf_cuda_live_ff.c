/* SPDX-License-Identifier: BSD-2-Clause-Patent */
/**
 * @file
 * The FFmpeg side of vmaf_cuda's live QA (vmaf_cuda_live_ff.h): a thin adapter to the
 * library's vmaf_cuda_live_*().
 */

#include <string.h>

#include "libavutil/avstring.h"
#include "libavutil/dict.h"
#include "libavutil/error.h"
#include "libavutil/log.h"
#include "libavutil/mem.h"

#include "filters.h"

#include "vmaf_cuda_live_ff.h"

int ff_vmaf_cuda_live_check(AVFilterContext *ctx, const VmafCudaLiveOptions *o)
{
    if (o->window && vmaf_cuda_parse_window(o->window, NULL, NULL) < 0) {
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

int ff_vmaf_cuda_live_open(AVFilterContext *ctx, const VmafCudaLiveOptions *o,
                           VmafCudaSession *vs, AVFilterLink *outlink, VmafCudaLive **out)
{
    FilterLink *ol = ff_filter_link(outlink);
    VmafCudaLiveSettings s;
    char err[512] = "";

    *out = NULL;
    vmaf_cuda_live_default_settings(&s);
    s.window = o->window;
    s.window_log = (unsigned)o->window_log;
    s.sei = o->sei;
    s.ndjson_path = o->ndjson ? o->log_path : NULL;
    s.precision = o->precision;
    s.pool = (enum VmafCudaPool)o->pool;
    s.tb_num = outlink->time_base.num;
    s.tb_den = outlink->time_base.den;
    s.fr_num = ol->frame_rate.num;
    s.fr_den = ol->frame_rate.den;
    s.key_prefix = "lavfi.vmaf.";
    s.score_meta = 1;
    if (vmaf_cuda_live_open(out, vs, &s, err, sizeof(err)) < 0) {
        av_log(ctx, AV_LOG_ERROR, "%s\n", err);
        return AVERROR(EINVAL);
    }
    return 0;
}

int ff_vmaf_cuda_live_attach(AVFilterContext *ctx, VmafCudaLive *l, AVFrame *frame,
                             const VmafCudaFrameScores *fs)
{
    VmafCudaLiveFrame lf;
    int ret = vmaf_cuda_live_frame(l, fs, frame->pts, frame->pts != AV_NOPTS_VALUE, &lf);

    if (ret < 0)
        av_log(ctx, AV_LOG_ERROR, "%s\n", vmaf_cuda_live_error(l));
    /* EIO: the stream goes on without its log (e.g. the reader of a pipe went away, a
     * full disk), and the run ends with an error status */
    if (ret < 0 && ret != VMAF_CUDA_EIO)
        return ret == VMAF_CUDA_ENOMEM ? AVERROR(ENOMEM) : AVERROR_EXTERNAL;
    for (size_t i = 0; i < lf.nb_meta; i++)
        av_dict_set(&frame->metadata, lf.meta_keys[i], lf.meta_values[i], 0);
    if (lf.sei) {
        AVFrameSideData *sd = av_frame_new_side_data(frame, AV_FRAME_DATA_SEI_UNREGISTERED,
                                                     lf.sei_size);
        if (!sd)
            return AVERROR(ENOMEM);
        memcpy(sd->data, lf.sei, lf.sei_size);
    }
    return ret == VMAF_CUDA_EIO;
}

int ff_vmaf_cuda_live_mark_event(AVFrame *frame, const char *event, const char *input,
                                 const char *message)
{
    char *text = av_strndup(message, strcspn(message, "\n"));
    int ret;

    if (!text)
        return AVERROR(ENOMEM);
    if ((ret = av_dict_set(&frame->metadata, "lavfi.vmaf.event", event, 0)) < 0 ||
        (ret = av_dict_set(&frame->metadata, "lavfi.vmaf.event.input", input, 0)) < 0)
        av_free(text);
    else
        ret = av_dict_set(&frame->metadata, "lavfi.vmaf.event.message", text,
                          AV_DICT_DONT_STRDUP_VAL);
    return ret;
}

int ff_vmaf_cuda_live_event(AVFilterContext *ctx, VmafCudaLive *l, const AVFrame *frame)
{
    const AVDictionaryEntry *ev = av_dict_get(frame->metadata, "lavfi.vmaf.event", NULL, 0);
    const AVDictionaryEntry *in = av_dict_get(frame->metadata, "lavfi.vmaf.event.input", NULL, 0);
    const AVDictionaryEntry *msg = av_dict_get(frame->metadata, "lavfi.vmaf.event.message", NULL, 0);
    int ret;

    if (!ev || !msg)
        return 0;
    ret = vmaf_cuda_live_event(l, ev->value, in ? in->value : NULL, frame->pts,
                               frame->pts != AV_NOPTS_VALUE, msg->value);
    if (ret < 0)
        av_log(ctx, AV_LOG_ERROR, "%s\n", vmaf_cuda_live_error(l));
    return ret < 0;
}

int ff_vmaf_cuda_live_summary(AVFilterContext *ctx, VmafCudaSession *vs, int pool,
                              const char *prefix)
{
    int len = vmaf_cuda_summary(vs, pool, prefix, NULL, 0);
    char *text, *line, *end;

    if (len < 0)
        return len;
    if (!(text = av_malloc(len + 1)))
        return VMAF_CUDA_ENOMEM;
    vmaf_cuda_summary(vs, pool, prefix, text, len + 1);
    /* one av_log per line, so that each carries the filter's name */
    for (line = text; *line; line = end + 1) {
        if (!(end = strchr(line, '\n')))
            break;
        av_log(ctx, AV_LOG_INFO, "%.*s\n", (int)(end - line), line);
    }
    av_free(text);
    return 0;
}

/* SPDX-License-Identifier: BSD-2-Clause-Patent */
/**
 * @file
 * vmaf_cuda's pictures: see vmaf_cuda_picture.h.
 */

#include <string.h>

#include "libavutil/common.h"
#include "libavutil/error.h"
#include "libavutil/imgutils.h"
#include "libavutil/log.h"
#include "libavutil/mem.h"

#include "vmaf_cuda_picture.h"

int ff_vmaf_cuda_layout(const AVPixFmtDescriptor *desc, VmafCudaLayout *l)
{
    const uint64_t excluded = AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_BE |
                              AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL |
                              AV_PIX_FMT_FLAG_BITSTREAM | AV_PIX_FMT_FLAG_FLOAT |
                              AV_PIX_FMT_FLAG_BAYER | AV_PIX_FMT_FLAG_XYZ;
    const AVComponentDescriptor *cb, *cr;
    unsigned depth, bytes;

    if (!desc || (desc->flags & excluded) || desc->nb_components < 1)
        return -1;
    if (desc->comp[0].plane != 0 || desc->comp[0].offset != 0)
        return -1;
    depth = desc->comp[0].depth;
    if (depth < 8 || depth > 16)
        return -1;
    bytes = depth > 8 ? 2 : 1;
    if (desc->comp[0].step != (int)bytes || desc->comp[0].shift + depth > 8 * bytes ||
        desc->comp[0].shift > 8)
        return -1;
    memset(l, 0, sizeof(*l));
    l->bpc = depth;
    l->shift = desc->comp[0].shift;
    if (desc->nb_components < 3) {
        /* gray (and gray with alpha): luma only */
        l->chroma = VMAF_CUDA_CHROMA_400;
        return 0;
    }

    cb = &desc->comp[1];
    cr = &desc->comp[2];
    if (cb->depth != (int)depth || cr->depth != (int)depth ||
        cb->shift != desc->comp[0].shift || cr->shift != desc->comp[0].shift ||
        cb->step != cr->step || cb->plane == 0 || cr->plane == 0)
        return -1;
    if (cb->step == (int)bytes && cb->plane != cr->plane && !cb->offset && !cr->offset) {
        l->chroma_step = 1;      /* planar */
    } else if (cb->step == 2 * (int)bytes && cb->plane == cr->plane &&
               ((cb->offset == 0 && cr->offset == (int)bytes) ||
                (cr->offset == 0 && cb->offset == (int)bytes))) {
        l->chroma_step = 2;      /* one interleaved UV (or VU) plane */
    } else {
        return -1;
    }
    l->chroma_plane[0] = cb->plane;
    l->chroma_plane[1] = cr->plane;
    l->chroma_offset[0] = cb->offset;
    l->chroma_offset[1] = cr->offset;
    l->log2_chroma_w = desc->log2_chroma_w;
    l->log2_chroma_h = desc->log2_chroma_h;
    if (l->log2_chroma_w == 1 && l->log2_chroma_h == 1)
        l->chroma = VMAF_CUDA_CHROMA_420;
    else if (l->log2_chroma_w == 1 && l->log2_chroma_h == 0)
        l->chroma = VMAF_CUDA_CHROMA_422;
    else if (l->log2_chroma_w == 0 && l->log2_chroma_h == 0)
        l->chroma = VMAF_CUDA_CHROMA_444;
    else
        return -1;               /* 4:1:1, 4:1:0, 4:4:0: chroma planes of other sizes */
    return 0;
}

const char *ff_vmaf_cuda_chroma_name(enum VmafCudaChroma chroma)
{
    switch (chroma) {
    case VMAF_CUDA_CHROMA_420: return "4:2:0";
    case VMAF_CUDA_CHROMA_422: return "4:2:2";
    case VMAF_CUDA_CHROMA_444: return "4:4:4";
    default:                   return "4:0:0";
    }
}

int ff_vmaf_cuda_picture_fill(void *log_ctx, const AVFrame *frame, const VmafCudaLayout *l,
                           int device, int with_chroma, VmafCudaPlaneCopy *copy,
                           VmafCudaPicture *pic)
{
    const size_t bytes = l->bpc > 8 ? 2 : 1;
    const size_t luma_row = (size_t)frame->width * bytes;
    const int cw = AV_CEIL_RSHIFT(frame->width, l->log2_chroma_w);
    const int ch = AV_CEIL_RSHIFT(frame->height, l->log2_chroma_h);
    /* bytes of one row of a chroma plane (of the UV plane when interleaved) */
    const size_t chroma_row = (size_t)cw * l->chroma_step * bytes;
    const int pb = l->chroma_plane[0], pr = l->chroma_plane[1];
    int copy_luma, copy_chroma;
    size_t need;
    uint8_t *dst;

    memset(pic, 0, sizeof(*pic));
    with_chroma = with_chroma && l->chroma != VMAF_CUDA_CHROMA_400;
    if (!frame->data[0] || (with_chroma && (!frame->data[pb] || !frame->data[pr]))) {
        av_log(log_ctx, AV_LOG_ERROR, "frame without its %s plane\n",
               frame->data[0] ? "chroma" : "luma");
        return AVERROR(EINVAL);
    }
    pic->luma = frame->data[0];
    pic->pitch = frame->linesize[0];
    pic->shift = l->shift;
    pic->memory = device ? VMAF_CUDA_MEMORY_DEVICE : VMAF_CUDA_MEMORY_HOST;
    if (with_chroma) {
        pic->chroma[0] = frame->data[pb] + l->chroma_offset[0];
        pic->chroma[1] = frame->data[pr] + l->chroma_offset[1];
        pic->chroma_pitch = frame->linesize[pb];
        pic->chroma_step = l->chroma_step;
    }

    copy_luma = frame->linesize[0] < 0;
    copy_chroma = with_chroma &&
                  (frame->linesize[pb] < 0 || frame->linesize[pr] != frame->linesize[pb]);
    if (!copy_luma && !copy_chroma)
        return 0;
    if (device) {
        av_log(log_ctx, AV_LOG_ERROR, "CUDA frame with a %s: flip software frames, or flip on "
               "the GPU with a filter that writes a new frame\n", copy_luma || frame->linesize[pb] < 0
               ? "negative linesize (a flipped picture)" : "Cb and Cr planes of different linesizes");
        return AVERROR(EINVAL);
    }

    /* a flipped picture (vflip): rows go up in memory; copy it top to bottom, and Cb and
     * Cr to one pitch */
    need = (copy_luma ? luma_row * frame->height : 0) +
           (copy_chroma ? (pb == pr ? 1 : 2) * chroma_row * ch : 0);
    av_fast_malloc(&copy->buf, &copy->size, need);
    if (!copy->buf)
        return AVERROR(ENOMEM);
    dst = copy->buf;
    if (copy_luma) {
        av_image_copy_plane(dst, (int)luma_row, frame->data[0], frame->linesize[0],
                            (int)luma_row, frame->height);
        pic->luma = dst;
        pic->pitch = luma_row;
        dst += luma_row * frame->height;
    }
    if (copy_chroma) {
        av_image_copy_plane(dst, (int)chroma_row, frame->data[pb], frame->linesize[pb],
                            (int)chroma_row, ch);
        pic->chroma[0] = dst + l->chroma_offset[0];
        pic->chroma[1] = dst + l->chroma_offset[1];
        if (pr != pb) {
            dst += chroma_row * ch;
            av_image_copy_plane(dst, (int)chroma_row, frame->data[pr], frame->linesize[pr],
                                (int)chroma_row, ch);
            pic->chroma[1] = dst + l->chroma_offset[1];
        }
        pic->chroma_pitch = chroma_row;
    }
    return 0;
}

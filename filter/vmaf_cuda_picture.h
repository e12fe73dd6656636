/* SPDX-License-Identifier: BSD-2-Clause-Patent */
/**
 * @file
 * vmaf_cuda's pictures: where the luma and chroma samples of an AVFrame are, as
 * VmafCudaPicture (include/vmaf_cuda.h) reads them, from the pixel format's descriptor.
 *
 * - luma: plane 0, one sample every 1 (8-bit) or 2 bytes (9..16-bit, little-endian);
 *   value = stored >> shift (P010/P012 and the MSB formats keep it in the high bits);
 * - chroma, with the luma's depth and shift: planar (yuv420p, yuv444p16 ...: Cb and Cr
 *   in planes of their own, chroma_step 1) or one interleaved UV plane (nv12, nv21,
 *   nv16, nv24, p010, p016, p210, p410 ...: chroma_step 2, Cb and Cr one sample apart,
 *   in either order), subsampled as 4:2:0, 4:2:2 or 4:4:4 (ceil-sized planes);
 * - gray formats (one component) are 4:0:0: no chroma.
 *
 * Other layouts (RGB, packed YUV, big-endian, 4:1:1, 4:1:0, 4:4:0) are not read: the
 * format negotiation converts them, as FFmpeg's libvmaf filter has them converted.
 *
 * Copied into FFmpeg's libavfilter/ with vf_vmaf_cuda.c by patches/build-ffmpeg.sh.
 */
#ifndef VMAF_CUDA_PICTURE_H
#define VMAF_CUDA_PICTURE_H

#include <stdint.h>

#include <vmaf_cuda.h>

#include "libavutil/frame.h"
#include "libavutil/pixdesc.h"

/** The sample layout of a pixel format. */
typedef struct VmafCudaLayout {
    unsigned bpc;               /**< bits per sample, 8..16 (luma and chroma) */
    unsigned shift;             /**< value = stored >> shift (luma and chroma) */
    enum VmafCudaChroma chroma; /**< subsampling; VMAF_CUDA_CHROMA_400: no chroma */
    int log2_chroma_w, log2_chroma_h;
    int chroma_plane[2];        /**< AVFrame.data index of Cb, Cr (one index when interleaved) */
    int chroma_offset[2];       /**< bytes from the start of that plane's row to the first sample */
    unsigned chroma_step;       /**< samples from one chroma sample of a row to the next: 1 or 2 */
} VmafCudaLayout;

/** Fills `l` for the format of `desc`; returns 0, or -1 when the library cannot read it. */
int ff_vmaf_cuda_layout(const AVPixFmtDescriptor *desc, VmafCudaLayout *l);

/** "4:2:0", "4:2:2", "4:4:4" or "4:0:0". */
const char *ff_vmaf_cuda_chroma_name(enum VmafCudaChroma chroma);

/** A buffer for the planes of a software frame that must be copied (see below). */
typedef struct VmafCudaPlaneCopy {
    uint8_t *buf;
    unsigned size;
} VmafCudaPlaneCopy;

/**
 * Points `pic` at the planes of `frame` (a CUDA frame when `device`; its layout `l`):
 * luma, and chroma when `with_chroma` (and the layout has chroma), else no chroma.
 * Software planes with a negative linesize (vflip) are copied top to bottom into
 * `copy`, and so are planar Cb and Cr whose linesizes differ (the API has one chroma
 * pitch); CUDA frames with either are refused. Returns 0 or an AVERROR (logged on
 * `log_ctx`).
 */
int ff_vmaf_cuda_picture_fill(void *log_ctx, const AVFrame *frame, const VmafCudaLayout *l,
                           int device, int with_chroma, VmafCudaPlaneCopy *copy,
                           VmafCudaPicture *pic);

#endif /* VMAF_CUDA_PICTURE_H */

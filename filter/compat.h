/* SPDX-License-Identifier: BSD-2-Clause-Patent */
/**
 * \file compat.h
 * What differs between the FFmpeg versions vf_vmaf_cuda.c is built into.
 *
 * build-ffmpeg.sh copies this file into FFmpeg's tree as
 * libavfilter/vf_vmaf_cuda_compat.h, next to vf_vmaf_cuda.c.
 *
 * - libavfilter 11 and later (FFmpeg 8.x, 9.x): a filter is defined as an FFFilter whose
 *   public part (name, description, priv_class, flags) is the member `p`; the callbacks
 *   (init, activate, formats, ...) are members of FFFilter itself.
 * - libavfilter 10 (FFmpeg 7.1): a filter is an AVFilter that holds every member.
 *
 * Usage:
 *     const VmafCudaFilterDef ff_vf_vmaf_cuda = {
 *         .VMAF_CUDA_PUBLIC(name) = "vmaf_cuda",
 *         .init = init, ...
 *     };
 */
#ifndef VMAF_CUDA_FFMPEG_COMPAT_H
#define VMAF_CUDA_FFMPEG_COMPAT_H

#include "libavfilter/version_major.h"
#include "libavutil/pixdesc.h"

#if LIBAVFILTER_VERSION_MAJOR >= 11
typedef FFFilter VmafCudaFilterDef;
#define VMAF_CUDA_PUBLIC(member) p.member
#else
typedef AVFilter VmafCudaFilterDef;
#define VMAF_CUDA_PUBLIC(member) member
#endif

/* Pixel-format flags that do not exist in every supported version. */
#ifndef AV_PIX_FMT_FLAG_XYZ
#define AV_PIX_FMT_FLAG_XYZ 0
#endif

#endif /* VMAF_CUDA_FFMPEG_COMPAT_H */

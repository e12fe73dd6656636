// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file yuv.h
/// A read-only view of a whole picture (Y, Cb, Cr), the input of the companion features
/// that read chroma (psnr, ciede) and of those that read luma only (float_ssim,
/// float_ms_ssim read `y`).
///
/// Each plane is a LumaView (plane.h): data, pitch in bytes, width, height, bpc. The
/// caller's chroma planes have the sizes of the files and of NVDEC surfaces:
/// ceil(w/2) x ceil(h/2) (4:2:0), ceil(w/2) x h (4:2:2), w x h (4:4:4).
///
/// libvmaf v3.2.0 (`libvmaf/src/picture.c`, `vmaf_picture_alloc`) sizes its chroma
/// planes rounding DOWN: (w >> ss_hor) x (h >> ss_ver); its YUV reader keeps the top-left
/// part of a ceil-sized plane. The features follow libvmaf: they read only that
/// top-left part (see yuv_libvmaf_chroma_width/height), so for odd sizes the last
/// chroma column / row of the caller's planes is not used.

#include "plane.h"

namespace vmaf_cuda::ref {

/// One picture: luma and, unless `chroma == 400`, two chroma planes.
/// `chroma`: 420, 422, 444 or 400 (luma only; cb/cr ignored). All planes have the same
/// bpc (8..16). Chroma planes must be at least libvmaf's size (below).
struct YuvView {
    LumaView y, cb, cr;
    unsigned chroma = 420;

    const LumaView& plane(unsigned p) const { return p == 0 ? y : p == 1 ? cb : cr; }
};

/// libvmaf's chroma plane width for luma width `w`: w >> 1 for 4:2:0 and 4:2:2, w for
/// 4:4:4, 0 for 4:0:0 (`vmaf_picture_alloc`).
inline unsigned yuv_libvmaf_chroma_width(unsigned w, unsigned chroma) {
    return chroma == 400 ? 0 : chroma == 444 ? w : w >> 1;
}
/// libvmaf's chroma plane height for luma height `h`: h >> 1 for 4:2:0, h for 4:2:2 and
/// 4:4:4, 0 for 4:0:0.
inline unsigned yuv_libvmaf_chroma_height(unsigned h, unsigned chroma) {
    return chroma == 400 ? 0 : chroma == 420 ? h >> 1 : h;
}

/// The caller's (ceil) chroma plane size for luma size w x h, as files and NVDEC hold it.
inline unsigned yuv_chroma_width(unsigned w, unsigned chroma) {
    return chroma == 400 ? 0 : chroma == 444 ? w : (w + 1) / 2;
}
inline unsigned yuv_chroma_height(unsigned h, unsigned chroma) {
    return chroma == 400 ? 0 : chroma == 420 ? (h + 1) / 2 : h;
}

} // namespace vmaf_cuda::ref

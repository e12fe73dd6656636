// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file ssim.h
/// SSIM (`float_ssim` feature): float_ssim and, with `enable_lcs`, float_ssim_l / _c / _s
/// (mean luminance, contrast and structure terms). Luma only.
///
/// Arithmetic followed: libvmaf v3.2.0 `libvmaf/src/feature/float_ssim.c` (`init`,
/// `extract`, `convert_to_db`) and `libvmaf/src/feature/ssim.c` (`compute_ssim`), with
/// the iqa pieces of iqa.h. No SIMD path.
///
/// Steps (for the GPU port):
/// 1. iqa_picture_to_float() of ref and dis (8-bit scale floats).
/// 2. Size rule: scale = float_ssim_scale(); libvmaf's auto rule is
///    max(1, _round((float)min(w, h) / 256.0f)): 1 for min(w, h) < 384, 2 for 384..639
///    (854x480 -> 2), 3 for 640..895, 1920x1080 -> 4, 3840x2160 -> 8. When scale > 1 both images are
///    decimated IN PLACE by iqa_decimate() with a scale x scale box kernel of
///    1.0f / (scale * scale) (float division), size w / scale + (w & 1) by
///    h / scale + (h & 1).
/// 3. iqa_ssim_maps(): five 11x11 Gaussian convolutions (valid region, (w-10) x (h-10))
///    and the per-pixel l, c, s doubles.
/// 4. iqa_ssim_sum(): FOUR double accumulators, each adding its per-pixel term in
///    row-major order of the valid region, starting at 0.0 (ssim term = (l * c) * s).
///    These sequential double sums are the order-dependent step.
/// 5. iqa_ssim_finish(): (float)(sum / (double)(w' * h')); the outputs are those floats
///    widened to double. With `enable_db`: float_ssim = MIN(-10 * log10(1 - ssim), max_db)
///    (l, c, s unchanged), max_db = clip_db ? ceil(10 * log10(peak * peak / (0.5 / (w * h))))
///    : +inf with peak = 2^bpc - 1, w x h the input size (unsigned products).
///
/// Valid input: bpc 8, 10, 12, 16; any size (images below 11x11 after decimation give
/// libvmaf's degenerate values: 0 / non-positive count, as libvmaf computes them).

#include "iqa.h"
#include "plane.h"

namespace vmaf_cuda::ref {

/// libvmaf's options of `float_ssim` (names and defaults as libvmaf's).
struct FloatSsimOptions {
    bool enable_lcs = false; ///< also float_ssim_l, float_ssim_c, float_ssim_s
    bool enable_db = false;  ///< float_ssim in dB
    bool clip_db = false;    ///< clip the dB value (see ssim.h step 5)
    int scale = 0;           ///< 0 = auto (libvmaf's rule), 1 = none, 2..10 explicit
};

/// The decimation factor libvmaf uses for a w x h input and option `scale` (0..10).
/// \throws std::invalid_argument for scale outside 0..10.
int float_ssim_scale(unsigned width, unsigned height, int scale_option);

/// The frame's outputs (float results widened to double, as libvmaf reports them).
/// Unitless; ssim, c, s in [-1, 1] (1 for identical pictures), l in (0, 1]; ssim in dB
/// with enable_db.
struct FloatSsimScores {
    double ssim, l, c, s;
};

/// All steps for one frame pair (luma planes of the same size and bpc).
/// \throws std::invalid_argument for mismatched planes or unsupported bpc.
FloatSsimScores float_ssim(const LumaView& ref, const LumaView& dis,
                           const FloatSsimOptions& opt);

/// Steps 1-2 alone: the float images SSIM is computed on, row-major with width `w`.
struct FloatSsimInput {
    std::vector<float> ref, dis;
    int w = 0, h = 0;
};
FloatSsimInput float_ssim_prepare(const LumaView& ref, const LumaView& dis,
                                  const FloatSsimOptions& opt);

/// Step 5's dB conversion (libvmaf's `convert_to_db` with its `init`'s max_db).
double float_ssim_to_db(double score, unsigned width, unsigned height, unsigned bpc,
                        bool clip_db);

} // namespace vmaf_cuda::ref

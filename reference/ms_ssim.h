// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file ms_ssim.h
/// MS-SSIM (`float_ms_ssim` feature): float_ms_ssim and, with `enable_lcs`,
/// float_ms_ssim_l_scale0..4, _c_scale0..4, _s_scale0..4. Luma only.
///
/// Arithmetic followed: libvmaf v3.2.0 `libvmaf/src/feature/float_ms_ssim.c` (`init`,
/// `extract`, `convert_to_db`) and `libvmaf/src/feature/ms_ssim.c` (`compute_ms_ssim`
/// with its defaults: Wang's MS-SSIM, Gaussian window, 5 scales, `g_lpf`, `g_alphas`,
/// `g_betas`, `g_gammas`), with the iqa pieces of iqa.h. No SIMD path.
///
/// Steps (for the GPU port):
/// 1. iqa_picture_to_float() of ref and dis; scale 0 is that image (w x h).
/// 2. Size rule: the five sizes w, w/2, w/4, w/8, w/16 (integer halving, rounding down)
///    and the same for h must all be >= 11, i.e. w >= 176 and h >= 176
///    (float_ms_ssim_min_size()); otherwise libvmaf prints "scale below 1x1!" and the
///    frame fails. Check before the first frame (float_ms_ssim_check_size()).
/// 3. Scales 1..4: iqa_decimate() by 2 of the previous scale with the 9x9 2-D low-pass
///    kernel `g_lpf` (not separable: 81 float products summed in a double, v outer, u
///    inner), sizes w' = w / 2 + (w & 1), h' likewise (out of place).
/// 4. Each scale k: the float means l_k, c_k, s_k of iqa_ssim() (iqa.h: per-pixel maps,
///    four row-major double sums per scale, (float)(sum / count)); ssim_k is not used.
/// 5. Product in double, scale 0 first, starting at 1.0:
///      msssim *= pow(l_k, alpha_k) * pow(c_k, beta_k) * pow(s_k, gamma_k)
///    (C pow of the floats widened to double; the float exponents below widened too).
///    float_ms_ssim = msssim; the per-scale outputs are l_k, c_k, s_k widened to double.
///    With `enable_db`: float_ms_ssim = MIN(-10 * log10(1 - msssim), max_db), max_db as
///    float_ssim's (ssim.h). libvmaf fails the frame if msssim == +inf (never for valid
///    input: every factor is finite).

#include "iqa.h"
#include "plane.h"

namespace vmaf_cuda::ref {

/// libvmaf's options of `float_ms_ssim` (names and defaults as libvmaf's).
struct FloatMsSsimOptions {
    bool enable_lcs = false; ///< also the 15 per-scale l / c / s outputs
    bool enable_db = false;  ///< float_ms_ssim in dB
    bool clip_db = false;    ///< clip the dB value
};

inline constexpr int kMsSsimScales = 5;

/// Exponents of the five scales (`g_alphas`, `g_betas`, `g_gammas`).
const float* ms_ssim_alphas();
const float* ms_ssim_betas();
const float* ms_ssim_gammas();

/// The 9x9 low-pass kernel (`g_lpf`, 9/7 biorthogonal wavelet), row-major.
IqaKernel2d ms_ssim_lowpass();

/// Smallest width and smallest height libvmaf's float_ms_ssim accepts: 176.
unsigned float_ms_ssim_min_size();

/// \throws std::invalid_argument naming float_ms_ssim, the size and the minimum when
/// width or height is below float_ms_ssim_min_size() (libvmaf: "scale below 1x1!").
void float_ms_ssim_check_size(unsigned width, unsigned height);

/// The frame's outputs (as libvmaf reports them).
struct FloatMsSsimScores {
    double ms_ssim;
    double l[kMsSsimScales], c[kMsSsimScales], s[kMsSsimScales];
};

/// The five scales' float images (step 1 and 3): img[k] has size w[k] x h[k].
struct MsSsimPyramid {
    std::vector<float> ref[kMsSsimScales], dis[kMsSsimScales];
    int w[kMsSsimScales], h[kMsSsimScales];
};
/// \throws std::invalid_argument for mismatched planes, unsupported bpc (8, 10, 12, 16)
/// or a size below the minimum.
void float_ms_ssim_pyramid(const LumaView& ref, const LumaView& dis, MsSsimPyramid& out);

/// Step 5 from the per-scale means.
double float_ms_ssim_combine(const IqaSsimMeans (&means)[kMsSsimScales]);

/// All steps for one frame pair. Throws as float_ms_ssim_pyramid().
FloatMsSsimScores float_ms_ssim(const LumaView& ref, const LumaView& dis,
                                const FloatMsSsimOptions& opt);

} // namespace vmaf_cuda::ref

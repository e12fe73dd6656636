// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file float_vif.h
/// Float VIF (libvmaf v3.2.0 extractor `float_vif`), four scales, luma only:
/// `VMAF_feature_vif_scale0_score` .. `scale3` (log names `vif_scale0` .. `vif_scale3`,
/// with option suffixes such as `vif_scale0_egl_1` for the NEG models).
///
/// Arithmetic followed: libvmaf v3.2.0 `libvmaf/src/feature/float_vif.c` (`extract`),
/// `vif.c` (`compute_vif`, with VIF_OPT_HANDLE_BORDERS and VIF_OPT_FAST_LOG2 as
/// `vif_options.h` defines them), `vif_tools.c` (`vif_get_filter`,
/// `get_1d_gaussian_kernel`, `vif_filter1d_s`, `vif_filter1d_sq_s`, `vif_filter1d_xy_s`,
/// `vif_dec2_s`, `vif_statistic_s`, `log2f_approx`, `vif_scale_frame_nearest_s`): the
/// scalar C paths (libvmaf's AVX2 convolutions are not what the golden values used).
///
/// Pipeline (all float unless said otherwise; no FMA):
///   p = picture_copy(-128) of ref and dis (float_picture.h); optional nearest prescale.
///   Scale s = 0..3 uses the Gaussian filter f_s (width 17, 9, 5, 3 at kernelscale 1;
///   taps from get_1d_gaussian_kernel in float/double as libvmaf, normalised in float).
///   For s > 0 the plane of scale s is the plane of scale s-1 filtered with f_s, keeping
///   even rows and columns (sizes halve, rounding down).
///   Filtering (vif_filter1d_*): vertical pass then horizontal pass, each a k-ascending
///   float sum from 0.0f; squares and products (x*x, x*y) are formed per sample before
///   the vertical pass; borders mirror without repeating the edge (once).
///   Per pixel of scale s: mu1, mu2, xx, yy, xy filtered; then vif_statistic_s:
///     sigma1_sq = max(xx - mu1*mu1, 0), sigma2_sq = max(yy - mu2*mu2, 0),
///     sigma12 = xy - mu1*mu2, g = sigma12 / (sigma1_sq + 1e-10f),
///     sv_sq = sigma2_sq - g * sigma12, with libvmaf's special cases, g = min(g, egl);
///     num_val = log2f_approx((float)(1.0 + (double)(g*g*sigma1_sq) / ((double)sv_sq + nsq)))
///     den_val = log2f_approx((float)(1.0 + (double)sigma1_sq / nsq))
///     (nsq = vif_sigma_nsq, a double; both logs are libvmaf's polynomial log2, IEEE
///     float ops only); if sigma1_sq < nsq: num_val = 1 - sigma2_sq * (nsq^2 / 255^2),
///     den_val = 1.
///
/// ORDER-DEPENDENT REDUCTIONS (a GPU port must keep libvmaf's order, or do them on the
/// host): the per-scale num and den are float sums, formed per row left to right
/// (x = 0..w-1, from 0.0f) and then over rows top to bottom (from 0.0f). The
/// accumulator here keeps the per-row sums (FloatVifAccum); float_vif_finish() adds the
/// rows in libvmaf's order. Everything before (filters, statistic) is per pixel with a
/// fixed operation order, so a GPU computing num_val/den_val per pixel with IEEE float
/// and double ops (--fmad=false) gets the same values; the row sums must then be formed
/// sequentially in x (e.g. one thread per row), or on the host.
///
/// Valid input: bpc 8, 10, 12 or 16; every scale plane at least half a filter wide plus
/// one (libvmaf's mirror must stay inside it): at kernelscale 1 width, height >= 16.

#include <array>
#include <string>
#include <vector>

#include "plane.h"

namespace vmaf_cuda::ref {

/// Options of libvmaf's float_vif that change its numbers (libvmaf names; aliases in
/// brackets are what option-suffixed feature names show).
struct FloatVifOptions {
    double enhn_gain_limit = 100.0; ///< vif_enhn_gain_limit [egl], 1..100 (NEG models: 1)
    double kernelscale = 1.0;       ///< vif_kernelscale [ks], one of libvmaf's 21 values
    double prescale = 1.0;          ///< vif_prescale [ps], 0.1..4
    /// vif_prescale_method [pm]: only "nearest" (libvmaf's default) is implemented.
    std::string prescale_method = "nearest";
    double scale1_min_val = 0.0;    ///< vif_scale1_min_val [s1miv], 0..1
    double scale2_min_val = 0.0;    ///< vif_scale2_min_val [s2miv]
    double scale3_min_val = 0.0;    ///< vif_scale3_min_val [s3miv]
    double sigma_nsq = 2.0;         ///< vif_sigma_nsq [snsq], 0..5
    bool skip_scale0 = false;       ///< vif_skip_scale0 [ssclz]: scale 0 reported as 0
};

/// Throws std::invalid_argument for options libvmaf rejects or this code does not do.
void float_vif_check(const FloatVifOptions& opt);

/// libvmaf's vif_get_filter_size(scale, (float)kernelscale): odd, >= 3.
int float_vif_filter_width(unsigned scale, double kernelscale);

/// libvmaf's vif_get_filter(out, scale, (float)kernelscale): float_vif_filter_width()
/// taps summing to about 1.
std::vector<float> float_vif_filter(unsigned scale, double kernelscale);

/// libvmaf's log2f_approx (VIF_OPT_FAST_LOG2): exponent + degree-8 polynomial of the
/// mantissa (Horner, float). -inf for 0, NaN for negative x.
float vif_log2f_approx(float x);

/// Order-dependent part of float VIF for one frame: the per-row float sums of num_val
/// and den_val of every scale (row_num[s][y], y < height of scale s). A skipped
/// scale 0 has no rows.
struct FloatVifAccum {
    std::array<std::vector<float>, 4> row_num, row_den;
};

/// The feature values of one frame, as libvmaf hands them to the feature collector,
/// plus its debug values.
struct FloatVifScores {
    double scale[4] = {}; ///< vif_scale0..3 (scale 0: num/den in double; 1..3 clipped below)
    double num[4] = {};   ///< vif_num_scaleN: the float num widened (0 for a skipped scale)
    double den[4] = {};   ///< vif_den_scaleN
    double vif = 0;       ///< `vif`: sum num / sum den over the computed scales (1 if den 0)
};

/// Working memory for one frame size and option set (sizes of every scale, filters).
class FloatVifScratch {
public:
    /// \param width, height luma size in samples. \throws std::invalid_argument when a
    /// scale is too small for its filter, or for bad options.
    FloatVifScratch(unsigned width, unsigned height, const FloatVifOptions& opt);
    unsigned width() const { return w_; }
    unsigned height() const { return h_; }
    unsigned scaled_w[4] = {}, scaled_h[4] = {}; ///< plane size of each scale
    std::vector<float> filter[4];                ///< taps of each scale
    // Internal planes (row stride = scaled_w[0]).
    std::vector<float> ref, dis, ref_s, dis_s, mu1, mu2, xx, yy, xy, tmp_row;
private:
    unsigned w_, h_;
};

/// Per-pixel stage of float VIF for one frame pair (everything but the row additions).
/// \param ref, dis luma planes, same size as `scratch`, same bpc (8, 10, 12 or 16).
/// \param out per-row sums, overwritten.
void float_vif_accumulate(const LumaView& ref, const LumaView& dis, const FloatVifOptions& opt,
                          FloatVifScratch& scratch, FloatVifAccum& out);

/// Float tail in libvmaf's order: per scale num = sum of row_num (float, top to bottom,
/// from 0.0f), den likewise; scale0 = (double)num0 / (double)den0 (0.0 if skipped);
/// scale k = max((double)num_k / (double)den_k, scale_k_min_val) for k = 1..3.
FloatVifScores float_vif_finish(const FloatVifAccum& acc, const FloatVifOptions& opt);

/// Log names of vif_scale0..3 for `opt` ("vif_scale0" at defaults, "vif_scale0_egl_1"
/// with vif_enhn_gain_limit 1, ...).
std::array<std::string, 4> float_vif_feature_names(const FloatVifOptions& opt);

} // namespace vmaf_cuda::ref

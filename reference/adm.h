// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file adm.h
/// ADM (libvmaf v3.2.0 `integer_adm`, libvmaf/src/feature/integer_adm.c, scalar C path):
/// features VMAF_integer_feature_adm2_score (integer_adm2), integer_adm_scale0..3,
/// VMAF_integer_feature_aim_score and VMAF_integer_feature_adm3_score, on luma only.
///
/// Two stages, so that the CUDA backend can reuse the host tail:
///  1. `adm_accumulate`: the integer stage (4-level db2 DWT of reference and distorted,
///     decoupling, CSF weighting, contrast masking) reduced to 36 integer accumulators
///     (`AdmAccum`). kernels/adm.cu produces the same struct bit for bit.
///  2. `adm_finish`: the floating-point tail (cube roots with powf, divisions) in
///     libvmaf's order and types, giving the feature values as double.
///
/// Per-pixel arithmetic lives in reference/adm_math.h (shared with the kernel).

#include "plane.h"

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace vmaf_cuda::ref {

/// ADM options, with libvmaf v3.2.0's defaults (option names in comments).
///
/// Where each option acts (what a GPU port must honour):
///   - [factors]: changes the integer stage only through `AdmFactors` (the CSF weights
///     i_rfactor0 / i_rfactor, computed on the host by adm_factors()) and the finish step
///     (the float weights `rfactor` of the denominator). A kernel that takes its weights
///     from ref::adm_factors() (kernels/adm.cu does) needs no change.
///   - [integer]: changes the integer stage's arithmetic or control flow.
///   - [finish]: only adm_finish() reads it; both backends share it, so the CUDA backend
///     gets it for free.
struct AdmOptions {
    /// adm_enhn_gain_limit (egl): >= 1.0; 1.0 disables enhancement gain (NEG models).
    /// [integer] (the decoupling clamp; the kernel takes it from AdmFactors).
    double enhn_gain_limit = 100.0;
    /// adm_norm_view_dist (nvd): viewing distance / display height; 0.75 .. 24. [factors]
    double norm_view_dist = 3.0;
    /// adm_ref_display_height (rdh), pixels; 1 .. 4320. [factors]
    /// libvmaf refuses norm_view_dist * ref_display_height < 3 * 1080.
    int ref_display_height = 1080;
    /// adm_csf_mode (csf): 0 = Watson 97, 1 = Barten (HDR-VDP-2 simplification, at
    /// 100 cd/m2, scaled by csf_scale / csf_diag_scale), 2 = Barten/Watson blend
    /// (tabulated; the v1.0.16 models), 3 = the same blend with libvmaf's "MAE"
    /// coefficients. Modes 2 and 3 exist only for the (ref_display_height,
    /// norm_view_dist) pairs (1080|720|480, 3|5) and (2160, 1.5|3|5); others are refused
    /// (libvmaf computes with -EINVAL as the weight there). [factors]
    int csf_mode = 0;
    /// adm_csf_scale (scf), adm_csf_diag_scale (scfd): 0 .. 50; multiply the h/v and the
    /// diagonal Barten weights; read by csf_mode 1 only. [factors]
    double csf_scale = 1.0;
    double csf_diag_scale = 1.0;
    /// adm_noise_weight (nw): 0 .. 1500; noise floor weight added to each band's
    /// cube-root sum (num and den; not aim). [finish]
    double noise_weight = 0.03125;
    /// adm_min_val (min): 0 .. 1; lower clip of adm3 only. [finish]
    double min_val = 0.0;
    /// adm_dlm_weight (dlmw): 0 .. 1; adm3 = max(adm2 * w + (1 - aim) * (1 - w), min_val).
    /// [finish]
    double dlm_weight = 0.5;
    /// adm_skip_aim: AIM accumulators stay 0 (aim = 0). [integer] (kernel: do_aim)
    bool skip_aim = false;
    /// adm_skip_scale0 (ssz): scale 0 gets num 0 and den 1e-10f (scale0 = 0).
    /// [integer] (kernel: do_cm)
    bool skip_scale0 = false;
};

/// Integer result of the ADM integer stage for one frame pair. Trivially copyable;
/// all sums wrap modulo 2^64 (unsigned for `den`, two's complement for `num`, `aim`), so
/// any summation order gives the same bits.
///
/// Index [s][b]: scale s = 0..3 (0 finest), band b = 0 (h: high-pass vertical), 1 (v:
/// high-pass horizontal), 2 (d: diagonal). Geometry (`AdmScaleParams`): band plane of
/// scale s is bw x bh; the evaluated region is rows [top, bottom) x cols [left, right).
///
/// Every field is a sum over the rows i of the region of a per-row SHIFTED partial sum:
///     field = sum_i shift_row( R_i ),  R_i = sum_{j in [left,right)} term(i, j)
/// where R_i is itself a wrapping 64-bit sum and
///   - den:  shift_row(R) = (R + den_row_add) >> den_row_shift   (uint64, logical)
///   - num, aim: shift_row(R) = int64(R + cm_row_add) >> cm_row_shift (arithmetic)
/// A GPU must form each full row sum R_i first, shift it, then add rows (any order).
///
/// Terms (see adm_math.h for exact integer formulas):
///   - den[s][b]: cube of |reference band b| (scale 0: exact |x|^3; scales 1..3:
///     den123_cube with den_sq_shift/add and den_cub_shift/add).
///   - num[s][b] (detail loss, DLM): cm_cube(x, thr) with x = CSF-scaled restored value
///     r of band b and thr = masking threshold of the additive impairment a (sum over the
///     3 bands of the 3x3 masking-filter neighbourhood of csf(a), centre replaced by the
///     centre term).
///   - aim[s][b] (additive impairment, AIM): the same with r and a swapped.
/// Value ranges: den terms are < 2^46 at scale 0 and bounded per row by 2^62 at
/// scales 1..3; num/aim terms are int64 and may wrap for adversarial extremes (libvmaf
/// wraps the same way). Fields of a skipped stage (skip_aim, skip_scale0) are 0.
struct AdmAccum {
    std::uint64_t den[4][3];
    std::int64_t num[4][3];
    std::int64_t aim[4][3];
};
static_assert(std::is_trivially_copyable_v<AdmAccum> && std::is_standard_layout_v<AdmAccum>);

/// Feature values for one frame, as libvmaf hands them to the feature collector.
struct AdmScores {
    double adm2 = 0;     ///< VMAF_integer_feature_adm2_score / integer_adm2
    double scale[4] = {}; ///< integer_adm_scale0..3
    double aim = 0;      ///< VMAF_integer_feature_aim_score (0 if the denominator is 0)
    double adm3 = 0;     ///< VMAF_integer_feature_adm3_score
};

/// Geometry and fixed shifts of one scale, derived from the full-resolution size.
/// All shift/add pairs are the rounding shifts of libvmaf (add = 2^(shift-1) or 0).
struct AdmScaleParams {
    int in_w, in_h;   ///< DWT input size (scale 0: the picture)
    int bw, bh;       ///< band size: ceil(in / 2)
    int left, top, right, bottom; ///< evaluated region (about 10% border skipped)
    // denominator (reference bands)
    int den_sq_shift;            ///< scales 1..3: 31, 30, 31 (unused at scale 0)
    std::uint64_t den_sq_add;    ///< 2^den_sq_shift (libvmaf's constant, not half)
    int den_cub_shift;           ///< scales 1..3: ceil(log2(right-left))
    std::uint64_t den_cub_add;
    int den_row_shift;           ///< scale 0: max(0, ceil(log2(area) - 20)); else ceil(log2(bottom-top))
    std::uint64_t den_row_add;
    // contrast masking (num and aim)
    int cm_sub_shift[3];         ///< threshold shift per band: scale 0 {10, 10, 12}, else 0
    int cm_sq_shift[3];          ///< scale 0 {29, 29, 30}, else 30
    std::int64_t cm_sq_add[3];
    int cm_cub_shift[3];         ///< scale 0 ceil(log2(bw) - 4|4|3), else ceil(log2(bw))
    std::int64_t cm_cub_add[3];
    int cm_row_shift;            ///< ceil(log2(bh))
    std::int64_t cm_row_add;
};

/// Integer weights derived from the options (host-computed, as libvmaf does).
struct AdmFactors {
    float rfactor[4][3];          ///< CSF weight (adm_csf_factor), bands h, v, d
    std::int32_t i_rfactor0[3];   ///< scale 0, Q21 (h, v) and Q23 (d); {36453, 36453, 49417} at defaults
    std::uint32_t i_rfactor[4][3]; ///< scales 1..3, Q32 (index 0 unused)
    float cos1_sq;                ///< float(cos(1 deg)^2), decoupling angle test
    double enhn_gain_limit;
};

/// Smallest supported width/height. libvmaf needs every DWT input to be >= 3 samples
/// (4 levels: 17); below 33 libvmaf's index builder reads one sample out of bounds,
/// where this implementation mirrors (see adm_math.h dwt_mirror).
inline constexpr unsigned kAdmMinSize = 17;

/// Geometry of scale `scale` (0..3) for a w x h picture (w, h >= kAdmMinSize).
AdmScaleParams adm_scale_params(unsigned w, unsigned h, unsigned scale);

/// CSF weight of DWT scale `scale` (0..3), band orientation h/v (`diagonal` false) or d,
/// as libvmaf's adm_csf / adm_cm / adm_csf_den_* compute it for opt.csf_mode:
/// 0: 1 / dwt_quant_step (Watson); 1: barten_csf(scale, nvd, rdh, 100 cd/m2,
/// csf_scale or csf_diag_scale); 2: barten_watson_blend_csf; 3:
/// barten_watson_blend_csf_mae (libvmaf/src/feature/barten_csf_tools.h).
/// Throws std::invalid_argument for a mode outside 0..3, a scale outside 0..3, or a
/// (norm_view_dist, ref_display_height) pair modes 2/3 have no table for.
float adm_csf_factor(const AdmOptions& opt, int scale, bool diagonal);

/// True when adm_csf_factor() accepts opt's csf_mode with its viewing geometry.
bool adm_csf_mode_supported(const AdmOptions& opt);

/// Factors for `opt`: rfactor from adm_csf_factor(); i_rfactor0 = uint16(rfactor * 2^21)
/// (h, v) and uint16(rfactor * 2^23) (d), except libvmaf's constants {36453, 36453, 49417}
/// for csf_mode 0 at norm_view_dist * ref_display_height == 3240; i_rfactor =
/// uint32(rfactor * 2^32), the conversions wrapping as libvmaf's do on x86-64 (uint16 via
/// int32: csf_mode 1's scale-0 weights exceed 2^16 for most geometries and wrap). Throws std::invalid_argument for options libvmaf rejects
/// (norm_view_dist * ref_display_height < 3240, enhn_gain_limit < 1) or that
/// adm_csf_factor() refuses.
AdmFactors adm_factors(const AdmOptions& opt);

/// Temporary planes of the CPU reference, sized once for w x h (no per-frame
/// allocation). Contents are internal. Throws std::invalid_argument if w or h is below
/// kAdmMinSize.
class AdmScratch {
public:
    AdmScratch(unsigned w, unsigned h);
    unsigned width() const { return w_; }
    unsigned height() const { return h_; }

    // Internal working planes (row stride = band width of the current scale).
    struct Bands {
        std::vector<std::int32_t> a, h, v, d;
    };
    Bands ref_bands, dis_bands;
    std::vector<std::int32_t> ref_lo_next, dis_lo_next; ///< band_a feeding the next scale
    std::vector<std::int32_t> tmp_lo, tmp_hi;           ///< vertical pass, one input row
    std::vector<std::int32_t> rst[3], add[3];            ///< decoupled r and a
    std::vector<std::int32_t> csf[3], flt[3];            ///< CSF values and masking filter

private:
    unsigned w_, h_;
};

/// Integer stage of libvmaf integer_adm on one frame pair.
/// `ref`, `dis`: luma planes of the same size and bpc (8..16) as `scratch`
/// (width()/height()); samples in [0, 2^bpc). Writes all fields of `out`.
/// Throws std::invalid_argument on size/bpc mismatch or unsupported options.
void adm_accumulate(const LumaView& ref, const LumaView& dis, const AdmOptions& opt,
                    AdmScratch& scratch, AdmAccum& out);

/// Floating-point tail (libvmaf's adm_csf_den_scale / adm_cm returns and
/// integer_compute_adm / extract): per scale, float cube roots (powf) of the scaled
/// accumulators plus the noise floor powf(area * noise_weight, 1/3) (num and den only),
/// summed over bands in float; adm2 = sum num / sum den in double with libvmaf's
/// 1e-10 * area / 1080p floor; scale_k = num_k / den_k; aim = sum aim / sum den;
/// adm3 = max(adm2 * dlm_weight + (1 - aim) * (1 - dlm_weight), min_val).
/// `w`, `h`: full-resolution picture size.
AdmScores adm_finish(const AdmAccum& acc, const AdmOptions& opt, unsigned w, unsigned h);

} // namespace vmaf_cuda::ref

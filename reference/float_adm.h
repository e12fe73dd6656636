// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file float_adm.h
/// Float ADM (libvmaf v3.2.0 extractor `float_adm`), luma only:
/// `VMAF_feature_adm2_score` (log name `adm2`), `..._aim_score` (`aim`),
/// `..._adm3_score` (`adm3`), `..._adm_scale0_score` .. `scale3` (`adm_scale0..3`),
/// with option suffixes such as `adm2_egl_1` for the NEG models.
///
/// Arithmetic followed: libvmaf v3.2.0 `libvmaf/src/feature/float_adm.c` (`extract`),
/// `adm.c` (`compute_adm`), `adm_tools.c` (`dwt2_src_indices_filt_s`, `adm_dwt2_s`,
/// `adm_dwt2_lo_s`, `adm_decouple_s` with ADM_OPT_AVOID_ATAN and ADM_OPT_RECIP_DIVISION,
/// `adm_csf_s`, `adm_csf_den_scale_s`, `adm_cm_s` with the ADM_CM_THRESH_S_* macros of
/// `adm_tools.h`, `get_noise_constant`), `dwt_quant_step` (Watson CSF) and
/// `adm_native_csf` (`adm_csf_tools.h`), `picture_copy.c` (float_picture.h).
///
/// Per scale s = 0..3 (all float unless said; no FMA):
///  - DWT (db2, 4 taps, float coefficients): vertical then horizontal, each a 4-term
///    float sum from 0; source rows/cols 2i-1 .. 2i+2 with index -1 -> 1 and n+k -> n-1-k
///    (top/left mirror without repeat, bottom/right with repeat); bands are
///    ceil(w/2) x ceil(h/2); band a feeds the next scale.
///  - decouple: k = clamp(t * rcp(o + 1e-30f), 0, 1), r = k * o (per band); if the
///    (h, v) angle test passes (ot >= 0 and ot^2 >= (float)cos^2(1 deg) * |o|^2 * |t|^2)
///    r is pushed towards t by the gain limit (double product, clipped at t); a = t - r.
///    rcp(x) = xi + xi * (1 - x * xi) with xi = the x86 `rcpss` approximation
///    (libvmaf's rcp_s, SSE2 builds; Intel's values): see float_adm_rcpss().
///  - CSF: c = rfactor_b * band; f = (float)(0.0333333351 * |c|) (a double constant).
///  - den[s][b]: sum over the region of |rfactor_b * ref_b|^p (p = adm_p_norm, cube via
///    v*v*v when p == 3, else powf).
///  - num[s][b] (DLM, from r) and aim[s][b] (AIM, from a): x = max(|rfactor_b * src| - thr, 0),
///    summed as x^p; thr = sum over the three bands (h, v, d order) of the 3x3 sum of the
///    other signal's f (centre replaced by (float)(sum + 0.0666666701 * |c|)), rows
///    i-1, i, i+1 each left to right, mirror 1,0,1 at the top/left and n-2,n-1,n-1 at the
///    bottom/right. (DLM: thr from a's CSF; AIM: thr from r's CSF.)
///  Region: left = (int)(bw * 0.1 - 0.5), top likewise, right = bw - left, bottom = bh - top.
///
/// ORDER-DEPENDENT REDUCTIONS (a GPU port must keep libvmaf's order, or do them on the
/// host): every den/num/aim sum is a float sum, per row left to right over [left, right)
/// (from 0.0f), then over rows top to bottom (from 0.0f), one sum per scale and band.
/// The accumulator here (FloatAdmAccum) keeps the per-row sums; float_adm_finish() adds
/// rows in order and does the rest (powf, noise floor, double totals). Each per-pixel
/// term (DWT, decouple, CSF, threshold sum) has a fixed operation order and is exact to
/// reproduce in any thread order with IEEE float ops (--fmad=false); a GPU needs the
/// integer rcpss emulation (float_adm_rcpss(), not its own rcp) for the decoupling,
/// and must form row sums
/// sequentially in x (one thread per row) or leave them to the host.
///
/// Valid input: bpc 8, 10, 12 or 16; width, height >= 17 (the scale-3 bands at least
/// 2x2, so that the 3x3 masking neighbourhood stays inside them; below that libvmaf reads
/// past the band and its output is not reproducible).

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "plane.h"

namespace vmaf_cuda::ref {

/// Options of libvmaf's float_adm that change its numbers (libvmaf names; aliases in
/// brackets are what option-suffixed feature names show).
struct FloatAdmOptions {
    double enhn_gain_limit = 100.0; ///< adm_enhn_gain_limit [egl], 1..100 (NEG: 1)
    double norm_view_dist = 3.0;    ///< adm_norm_view_dist [nvd], 0.75..24
    int ref_display_height = 1080;  ///< adm_ref_display_height [rdf], 1..4320
    /// adm_csf_mode [csf]: 0 Watson 97 (default), 2 libvmaf's native ADM CSF. Mode 1
    /// (Barten; uses csf_scale / csf_diag_scale) is not implemented.
    int csf_mode = 0;
    double csf_scale = 1.0;         ///< adm_csf_scale [scf] (Barten only)
    double csf_diag_scale = 1.0;    ///< adm_csf_diag_scale [scfd] (Barten only)
    double noise_weight = 0.03125;  ///< adm_noise_weight [nw], 0..1500
    int bypass_cm = 0;              ///< adm_bypass_cm [bcm], 0/1: no masking threshold
    bool adm3_apply_hm = false;     ///< adm_adm3_apply_hm [aah]: adm3 = harmonic mean
    double p_norm = 3.0;            ///< adm_p_norm [apn], 1..20
    double dlm_weight = 0.5;        ///< adm_dlm_weight [dlmw], 0..1
    double min_val = 0.0;           ///< adm_min_val [min], lower clip of adm3
    double f1[4] = {-1, -1, -1, -1}; ///< adm_f1s0..3 [f1sN]: >= 0 replaces factor 1 (h, v)
    double f2[4] = {-1, -1, -1, -1}; ///< adm_f2s0..3 [f2sN]: >= 0 replaces factor 2 (d)
    int skip_aim_scale = -1;        ///< adm_skip_aim_scale [sasc]: scale left out of aim
    bool skip_scale0 = false;       ///< adm_skip_scale0 [ssz]: scale 0 num 0, den 1e-10
};

/// Throws std::invalid_argument for options libvmaf rejects or this code does not do.
void float_adm_check(const FloatAdmOptions& opt);

/// The CSF weights of scale s (libvmaf's factor1 for bands h and v, factor2 for d),
/// including the adm_f1sN / adm_f2sN overrides.
std::array<float, 3> float_adm_rfactor(const FloatAdmOptions& opt, unsigned scale);

/// The x86 `rcpss` approximate reciprocal as Intel CPUs compute it (the golden values
/// were made on one; AMD CPUs give other values, so the instruction itself is never
/// used): for normal x = +-1.m * 2^e, +-r * 2^-e where r = 1 / 1.yyyyyyyyyyy1 (y the top
/// 11 bits of m, then a 1) rounded to nearest with 12 fraction bits of the result's
/// mantissa. +-0 and denormals give +-inf, +-inf gives +-0, a result below the normal
/// range gives +-0, NaN stays NaN (quiet). Integer arithmetic only (exact on any host or
/// GPU). Reproduces libvmaf's golden values on every case; the formula is the one the
/// Bochs emulator documents for RCPSS.
float float_adm_rcpss(float x);

/// libvmaf's rcp_s: one Newton step on rcpss, xi + xi * (1 - x * xi), float.
float float_adm_rcp(float x);

/// Region and per-row sums of one scale (index [b]: 0 h, 1 v, 2 d).
struct FloatAdmScaleAccum {
    int left = 0, top = 0, right = 0, bottom = 0; ///< evaluated region of the band plane
    std::array<std::vector<float>, 3> den_row;    ///< row y - top: sum of |csf(ref)|^p
    std::array<std::vector<float>, 3> num_row;    ///< DLM: sum of max(|csf(r)| - thr(a), 0)^p
    std::array<std::vector<float>, 3> aim_row;    ///< AIM: sum of max(|csf(a)| - thr(r), 0)^p
};

/// Order-dependent part of float ADM for one frame (a skipped scale 0 has empty rows).
struct FloatAdmAccum {
    std::array<FloatAdmScaleAccum, 4> scale;
};

/// The feature values of one frame, as libvmaf hands them to the feature collector,
/// plus its debug values.
struct FloatAdmScores {
    double adm2 = 0;      ///< num / den (1 when den is below libvmaf's floor)
    double aim = 0;       ///< min(aim_num / aim_den, 1) (0 where libvmaf leaves it unset)
    double adm3 = 0;      ///< max(adm2 * w + (1 - aim) * (1 - w), min_val) (or harmonic mean)
    double scale[4] = {}; ///< adm_scaleN: (double)num_s / (double)den_s
    double num[4] = {};   ///< adm_num_scaleN (float widened)
    double den[4] = {};   ///< adm_den_scaleN
    double num_total = 0, den_total = 0; ///< adm_num, adm_den (after the floor)
};

/// Working memory for one frame size.
class FloatAdmScratch {
public:
    /// \throws std::invalid_argument below 17x17.
    FloatAdmScratch(unsigned width, unsigned height);
    unsigned width() const { return w_; }
    unsigned height() const { return h_; }
    // Internal planes (band stride = ceil(width / 2)).
    struct Bands {
        std::vector<float> a, h, v, d;
    };
    std::vector<float> ref, dis;     ///< picture_copy of the inputs (stride width)
    Bands ref_b, dis_b;              ///< DWT of the current scale
    std::vector<float> ref_a, dis_a; ///< band a of the previous scale (next DWT input)
    std::vector<float> tmp_lo, tmp_hi;
    std::array<std::vector<float>, 3> r, a, csf_r, csf_a, flt_r, flt_a;
private:
    unsigned w_, h_;
};

/// Per-pixel stage of float ADM for one frame pair (everything but the row additions).
/// \param ref, dis luma planes, same size as `scratch`, same bpc (8, 10, 12 or 16).
/// \param out per-row sums and regions, overwritten.
void float_adm_accumulate(const LumaView& ref, const LumaView& dis, const FloatAdmOptions& opt,
                          FloatAdmScratch& scratch, FloatAdmAccum& out);

/// Float/double tail in libvmaf's order, per scale: rows added top to bottom (float);
/// den_s = sum over b of (powf(den_b, 1/p) + powf(area * nw, 1/p)) in float, num_s
/// likewise, aim_s without the noise term; totals in double; libvmaf's
/// 1e-10 * w*h / 1920*1080 floor; adm2, aim, adm3, scale_s. `width`, `height`: the
/// full-resolution picture size.
FloatAdmScores float_adm_finish(const FloatAdmAccum& acc, const FloatAdmOptions& opt,
                                unsigned width, unsigned height);

/// Log names for `opt`.
struct FloatAdmNames {
    std::string adm2, aim, adm3, scale[4];
};
FloatAdmNames float_adm_feature_names(const FloatAdmOptions& opt);

} // namespace vmaf_cuda::ref

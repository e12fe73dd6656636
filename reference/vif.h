// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file vif.h
/// VIF (visual information fidelity), integer variant, four scales, luma only.
///
/// Arithmetic followed: libvmaf v3.2.0 `libvmaf/src/feature/integer_vif.c`
/// (`vif_statistic_8`, `vif_statistic_16`, `subsample_rd_8`, `subsample_rd_16`,
/// `decimate_and_pad`, `pad_top_and_bottom`, `log_generate`, `write_scores`) with the
/// filter tables and `log2_32` / `log2_64` of `integer_vif.h`. Scalar C path only.
///
/// The work is split in two so that the CUDA backend can share the float tail:
/// - vif_accumulate(): every per-pixel step; produces integer sums (VifAccum) whose
///   value does not depend on summation order.
/// - vif_finish(): the few float/double operations that turn the sums into the four
///   `VMAF_integer_feature_vif_scaleN_score` values.
///
/// How the sums are formed (per scale s = 0..3, for every pixel of the scale-s plane):
///   mu1, mu2      : separable low-pass (filter s) of ref / dis;
///   xx, yy, xy    : low-pass of ref*ref, dis*dis, ref*dis;
///   sigma1_sq = xx - mu1^2, sigma2_sq = max(yy - mu2^2, 0), sigma12 = xy - mu1*mu2
///   (all int32, fixed point with 16 fractional bits on the 16-bit sample scale).
///   If sigma1_sq >= 2^17 ("log pixel"):
///       den_log += log2q(2^17 + sigma1_sq) - 17 * 2048
///       if sigma12 > 0 and sigma2_sq > 0:
///           g      = (double)sigma12 / ((double)sigma1_sq + 65536 * 1.0e-10)   [IEEE double]
///           sv_sq  = max(trunc_int32((double)sigma2_sq - g * (double)sigma12), 0)
///           g      = min(g, enhn_gain_limit)
///           numer1 = (uint32)sv_sq + 2^17
///           num_log += log2q(trunc_int64(g * g * (double)sigma1_sq) + numer1) - log2q(numer1)
///       (g * g first, then * sigma1_sq; each product rounded separately, no FMA.)
///   Else ("non-log pixel"):
///       num_non_log += sigma2_sq;  den_non_log += 1
///   log2q(v) is libvmaf's table logarithm: log2(v) in Q11 (2048 = 1.0), from the
///   top 16 bits of v (see vif_log2_table()).
///
/// Scale planes: scale s+1 is scale s filtered with filter s+1 and decimated by two
/// (even rows and columns; sizes halve rounding down). Borders mirror without
/// repeating the edge sample (x[-k] = x[k], x[n-1+k] = x[n-1-k], applied again if
/// still outside).
///
/// Valid input: width and height >= 16 (so that the scale-3 plane is at least 2x2;
/// below that libvmaf reads stale buffer rows and its output is not reproducible),
/// bpc 8..16, ref and dis of the same size and bpc.

#include <cstdint>
#include <vector>

#include "plane.h"

namespace vmaf_cuda::ref {

/// Options of libvmaf's integer VIF that change its numbers.
struct VifOptions {
    /// `vif_enhn_gain_limit` (alias `egl`), in [1.0, 100.0]. 100.0 is libvmaf's
    /// default; the NEG models use 1.0 (feature names then end in `_egl_1`).
    double enhn_gain_limit = 100.0;
};

/// Integer sums of one scale (field order fixed; the CUDA kernel writes the same struct).
/// Plain data (trivial, standard layout): `VifScaleAccum{}` is all zero.
struct VifScaleAccum {
    /// Sum over log pixels with sigma12 > 0 and sigma2_sq > 0 of
    /// log2q(numerator) - log2q(numer1), Q11. Each term is >= 0 and < 2^16 (the ratio is
    /// at most 1 + 100^2 * 2^31 / 2^17), so the sum fits any frame below 2^47 pixels.
    std::int64_t num_log;
    /// Sum over log pixels of log2q(2^17 + sigma1_sq) - 17*2048, Q11; each term in
    /// [2048, 15 * 2048] (sigma1_sq < 2^31).
    std::int64_t den_log;
    /// Sum over non-log pixels of max(sigma2_sq, 0); each term < 2^31, so the sum
    /// fits int64 for any frame below 2^32 pixels.
    std::int64_t num_non_log;
    /// Number of non-log pixels.
    std::int64_t den_non_log;
};

/// Integer result of vif_accumulate(): scale 0 (full size) .. scale 3 (1/8 size).
/// Trivially copyable; 128 bytes; all-zero is the additive identity.
struct VifAccum {
    VifScaleAccum scale[4];
};

/// The four `VMAF_integer_feature_vif_scaleN_score` values, as libvmaf hands them to its
/// feature collector (a float quotient widened to double).
struct VifScores {
    double scale[4];
};

/// libvmaf's log2 table: entry i (32767 <= i <= 65535) is
/// (uint16_t)round(log2f((float)i) * 2048); entries below 32767 are 0 and unused.
/// 65536 entries; built once on first call (thread-safe). Lookups only ever use
/// indices 32768..65535. The CUDA backend copies this table to the device.
const std::uint16_t* vif_log2_table();

/// Filter taps of scale s (0..3): widths 17, 9, 5, 3; each sums to 65536 (Q16).
/// Returns the taps (vif_filter_width(s) of them).
const std::uint16_t* vif_filter_taps(unsigned scale);
unsigned vif_filter_width(unsigned scale);

/// All working memory of the reference VIF for one frame size and bit depth.
/// Construct once; reuse for every frame of that size.
class VifScratch {
public:
    /// \param width, height luma size in samples (>= 16 each for libvmaf-exact output).
    /// \param bpc bits per sample, 8..16.
    VifScratch(unsigned width, unsigned height, unsigned bpc);

    unsigned width() const { return w_; }
    unsigned height() const { return h_; }
    unsigned bpc() const { return bpc_; }

    // Internal state used by vif_accumulate() (public for simplicity of the reference).
    /// Scale 1..3 planes of ref and dis (index s-1), row-major without padding,
    /// values on the 16-bit sample scale.
    std::vector<std::uint16_t> plane_ref[3], plane_dis[3];
    /// One row of vertical-pass results (one entry per column).
    std::vector<std::uint32_t> v_mu1, v_mu2, v_xx, v_yy, v_xy;

private:
    unsigned w_, h_, bpc_;
};

/// Integer stage of VIF for one frame pair.
/// \param ref, dis luma planes; same width, height and bpc as `scratch`.
/// \param opt gain limit (only the num_log sums depend on it).
/// \param scratch working memory (contents overwritten).
/// \param out receives the sums of all four scales (overwritten, not added to).
/// \throws std::invalid_argument if the planes do not match `scratch` or bpc is not 8..16.
void vif_accumulate(const LumaView& ref, const LumaView& dis, const VifOptions& opt,
                    VifScratch& scratch, VifAccum& out);

/// Float tail of libvmaf's VIF for one frame, in libvmaf's types and order:
///   num = (float)(num_log / 2048.0 + (den_non_log - (num_non_log / 16384.0) / 65025.0))
///   den = (float)(den_log / 2048.0 + den_non_log)
///   score = (double)(num / den)          (float division)
/// (int64 sums converted to double first). `opt` is accepted for symmetry; the gain
/// limit acts only in vif_accumulate().
VifScores vif_finish(const VifAccum& acc, const VifOptions& opt);

} // namespace vmaf_cuda::ref

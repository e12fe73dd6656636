// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file cambi.h
/// CAMBI (contrast-aware multiscale banding index), no-reference banding score of the
/// distorted luma; with `full_ref` also of the reference and their difference.
///
/// Arithmetic followed: libvmaf v3.2.0 `libvmaf/src/feature/cambi.c` (`init`,
/// `cambi_preprocessing`, `decimate_generic_*_and_convert_to_10b`,
/// `anti_dithering_filter`, `get_spatial_mask_for_index`, `decimate`, `filter_mode`,
/// `calculate_c_values`, `c_value_pixel`, `quick_select`, `spatial_pooling`,
/// `weight_scores_per_scale`, `extract`), its histogram helpers and reciprocal table in
/// `cambi.h`, and `luminance_tools.c` (BT.1886 / PQ EOTF, limited-range normalisation).
/// Scalar C path only. `heatmaps_path` (a debugging dump) is not implemented.
///
/// Stages of one pass (one picture; the distorted picture, and with `full_ref` the
/// reference at the "source" size), as a GPU port splits them:
///
/// 1. Preprocess (integer, per pixel, any order): resample the input luma to the pass
///    size by nearest neighbour (a float coordinate walk, see cambi_preprocess(); the
///    identity when sizes match), convert to 10 bits (`<< (10 - bpc)`, or
///    `(v + 2^(bpc-11)) >> (bpc - 10)` above 10 bits, which can give 1024), and if
///    `enc_bitdepth < 10` apply the 2x2 anti-dithering mean (`>> 2`; `>> 1` on the last
///    row and column; the last pixel unchanged), each output from the unfiltered plane.
/// 2. Spatial mask (integer, per pixel): zero-derivative flag
///    z(x,y) = (x == w-1 || p(x,y) == p(x+1,y)) && (y == h-1 || p(x,y) == p(x,y+1));
///    mask = (sum of z over the 7x7 window centred at the pixel, clipped to the plane)
///    > mask_index (cambi_mask_index()). Computed once per pass at the pass size.
/// 3. Per scale s = 0..4 (integer up to one float multiply per pixel):
///    - scale > 0, or scale 0 with the effective high-res speed-up: decimate image and
///      mask by 2 (sample (2x, 2y); sizes (n + 1) >> 1);
///    - mode filter of the image (cambi_filter_mode(), rows 0 and h-1 untouched);
///      the next scale decimates the filtered image;
///    - c-values (cambi_c_values()): with pad = window_size / 2, the window counts
///        p(v) = number of masked pixels of 10-bit value v in [x-pad, x+pad] x
///               [y-pad, y+pad] (clipped to the plane),
///      counting only values of the plan's band [v_band_base, v_band_base + v_band_size)
///      (integer histograms: exact in any summation order). A masked pixel of value v0
///      in the band, with V = v0 + num_diffs and p0 = p(v0), takes for every step
///      d = 0..num_diffs-1 with V <= tvi_for_diff[d] and V + d + 1 > vlt_luma
///        p   = max(p(v0 + d + 1), p(v0 - d - 1))          (0 below the band)
///        c_d = (float)(diff_weight[d] * p0 * p) * recip[p0 + p]
///      (the int product rounded to float, then one float multiply; recip is libvmaf's
///      float table, cambi_reciprocal_table()), and c = the largest c_d, or 0. Unmasked
///      and out-of-band pixels have c = 0.
/// 4. Pooling per scale (order-dependent double sum: host only, see below):
///    k = clip((int)(topk * n), 1, n); libvmaf's quick-select moves the k largest
///    c-values to the front; their sum in double, in the order the quick-select leaves
///    them, divided by k (cambi_spatial_pooling()).
/// 5. cambi_finish(): sum over scales of score[s] * {16, 8, 4, 2, 1}[s] in scale order,
///    divided by window_size^2; min(., cambi_max_val); with full_ref also the source
///    score and max(0, dist - source), each clipped the same way.
///
/// Exactness notes for a GPU port. Stages 1-3 are integer except the single rounded
/// int->float conversion and float multiply per pixel of stage 3, which IEEE float
/// reproduces (`__int2float_rn`, `__fmul_rn`; no FMA is possible there). Stage 4 is the
/// only order-dependent float reduction. Every nonzero c-value is >= 0.5 and < 2^14, so
/// it is an integer multiple of 2^-24: summed as int64 units of 2^-24 the top-k sum is
/// exact in any order. libvmaf's double sum (in quick-select order) equals it whenever
/// every partial sum is representable: all top-k values are multiples of u, the float ulp
/// of the smallest nonzero one, so it suffices that the sum is below 2^53 * u (2^29 when
/// that value is in [0.5, 1); about 2^41, never reached, when it is >= 2048).
/// cambi_topk_exact() computes the pooled score that way (k-th largest by value, e.g. a
/// radix select on the float bits, no reordering) and says whether it is guaranteed to
/// equal libvmaf's; when it is not, that scale's c-values must go to the host for
/// cambi_spatial_pooling(). All 1470 scale poolings of the golden cases are in the
/// guaranteed case; strongly banded 10-bit frames near 4K are not, at scale 0 (bbb 10-bit
/// upscaled: the order-free sum differs there in the last digits; see cambi_test).
///
/// Valid input: width or height >= 216 at the pass size (libvmaf's CAMBI_MIN_WIDTH_HEIGHT),
/// bpc 8..16 with samples below 2^bpc (else std::invalid_argument, as libvmaf's -EINVAL).
/// Refused as well, before the first frame: a scaled window above 65 (libvmaf fails in
/// init) and a cambi_vis_lum_threshold above every contrast threshold (libvmaf crashes).
///
/// Where libvmaf's numbers are not reproducible, this reference computes the definition:
/// - where a scale's plane is narrower or shorter than half the window, libvmaf reads
///   rows or columns of its buffers beyond the plane (stale data of earlier scales or
///   frames); here the window is clipped to the plane (the two agreed on the thin frames
///   tried, e.g. 2000x64 with window_size 127);
/// - 10-bit input with full_ref and a source width whose 32-sample-aligned row is wider
///   than the input's: libvmaf copies the distorted plane with memcpy of the input's
///   stride into its wider buffer (cambi.c, decimate_generic_uint16_and_convert_to_10b),
///   so its distorted score reads misaligned rows and uninitialised memory; here the
///   distorted plane is converted like at every other bit depth.
///
/// Checked beyond the golden logs against libvmaf v3.2.0's scalar build: every option
/// (enc size, enc_bitdepth, window_size, topk, cambi_topk, tvi_threshold, mlc 0..5, pq,
/// cambi_eotf, vlt, cmxv, full_ref with smaller and larger source sizes, hrs 1080/1440/
/// 2160) at 8..16 bits, odd sizes, 1080p, 1440p and 4K: identical doubles.

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "plane.h"

namespace vmaf_cuda::ref {

/// Number of CAMBI scales.
inline constexpr unsigned kCambiScales = 5;

/// libvmaf's CAMBI options (names as libvmaf's; aliases in brackets). A value equal to
/// the default adds nothing to the output name; see cambi_feature_name().
struct CambiOptions {
    unsigned enc_width = 0;      ///< [encw] 0 (= input width) or 180..7680
    unsigned enc_height = 0;     ///< [ench] 0 (= input height) or 150..7680
    unsigned enc_bitdepth = 0;   ///< [encbd] 0 (= input bpc) or 6..16; < 10: anti-dithering
    unsigned src_width = 0;      ///< [srcw] 0 (= input width) or 320..7680; full_ref only
    unsigned src_height = 0;     ///< [srch] 0 (= input height) or 200..4320; full_ref only
    unsigned window_size = 65;   ///< [ws] 15..127, at 4K; scaled to the pass size
    double topk = 0.6;           ///< 0.0001..1; used when not 0.6, else cambi_topk
    double cambi_topk = 0.6;     ///< [ctpk] 0.0001..1
    double tvi_threshold = 0.019;     ///< [tvit] 0.0001..1
    double cambi_vis_lum_threshold = 0.0;  ///< [vlt] 0..300, cd/m^2
    unsigned max_log_contrast = 2;    ///< [mlc] 0..5; 2^mlc contrast steps
    double cambi_max_val = 1000.0;    ///< [cmxv] 0..1000; every output is min(., this)
    int cambi_high_res_speedup = 0;   ///< [hrs] 0, 1080, 1440 or 2160 (else no speed-up)
    std::string eotf = "bt1886";      ///< "bt1886" or "pq"
    std::string cambi_eotf = "bt1886";///< [ceot]; when not "bt1886" it wins over eotf
    bool full_ref = false;            ///< also score the reference (no name suffix)
};

/// Sets one option from its libvmaf name and the text a user (`--feature cambi=...`, the
/// FFmpeg filter) or a model's feature_opts_dicts gave, as libvmaf v3.2.0 does: a numeric
/// text is first normalised like libvmaf's option dictionary (strtof, then printed with
/// %g, so 6 significant digits: "0x20" -> "32", "0.0191234567" -> "0.0191235"), then
/// parsed as the option's type (int: atoi, double: atof, bool: "true" / "false", string
/// as is) and range-checked (ranges as in CambiOptions; an explicit enc_width=0 is out of
/// range). Aliases (vlt, hrs, cmxv, ...) only name outputs: libvmaf ignores them as
/// input, as it ignores unknown names; both return false and change nothing.
/// `heatmaps_path` is accepted and ignored (returns true).
/// \throws std::invalid_argument for a value libvmaf refuses, naming the option.
bool cambi_set_option(CambiOptions& opt, const std::string& name, const std::string& value);

/// Output name of the main score as libvmaf logs it: "cambi", followed for every option
/// that differs from its default (sorted by option name) by "_<alias or name>_<value>"
/// (int: %d, double: %g, string as is), e.g. "cambi_hrs_1080_cmxv_17_vlt_0.06".
std::string cambi_feature_name(const CambiOptions& opt);

/// All output names in libvmaf's order: the main score, then with full_ref
/// "cambi_source" and "cambi_full_reference" (never suffixed).
std::vector<std::string> cambi_output_names(const CambiOptions& opt);

/// Geometry of one pass.
struct CambiPassGeometry {
    unsigned width = 0, height = 0; ///< pass size (enc or src size)
    unsigned window_size = 0;       ///< adjusted window (odd), <= 65
    std::uint16_t mask_index = 0;   ///< spatial-mask threshold, cambi_mask_index()
};

/// Everything libvmaf's init() derives from the options and the input size.
struct CambiPlan {
    unsigned in_width = 0, in_height = 0, in_bpc = 8;
    unsigned enc_bitdepth = 8;
    bool high_res_speedup = false; ///< effective (the option, and pass size large enough)
    bool full_ref = false;
    CambiPassGeometry dist; ///< the distorted picture at the encode size
    CambiPassGeometry src;  ///< the reference at the source size (used with full_ref)
    double topk = 0.6;      ///< effective topk
    double max_val = 1000.0;
    unsigned num_diffs = 4; ///< 2^max_log_contrast, 1..32
    /// Per contrast step d (0..num_diffs-1): largest 10-bit luma at which a step of d+1
    /// codes is visible, plus num_diffs (libvmaf's tvi_for_diff).
    std::array<std::uint16_t, 32> tvi_for_diff{};
    std::array<int, 32> diff_weight{}; ///< libvmaf's g_contrast_weights
    std::uint16_t vlt_luma = 0;        ///< smallest visible 10-bit luma, 0 if the foot (64)
    /// 10-bit values that can matter: [v_band_base, v_band_base + v_band_size); the
    /// histogram has v_band_size rows.
    std::uint16_t v_band_base = 0, v_band_size = 0;
};

/// Validates the options and size like libvmaf's option parser and init().
/// \param width, height, bpc the input luma (bpc 8..16).
/// \throws std::invalid_argument naming the option or the size limit.
CambiPlan cambi_plan(const CambiOptions& opt, unsigned width, unsigned height, unsigned bpc);

/// libvmaf's get_mask_index for a w x h pass: (49 + 3 * (ceil_log2((w>>6)*(h>>6)) - 11)
/// - 1) >> 1, with ceil_log2(0) = 0.
std::uint16_t cambi_mask_index(unsigned width, unsigned height);

/// libvmaf's reciprocal table (4226 floats): [0] = 0, [i] = the float nearest to the
/// 9-significant-digit decimal of 1/i (this is what cambi.h lists; 42 entries differ
/// from 1.0f / i by one ulp). Built once (thread-safe).
const float* cambi_reciprocal_table();
inline constexpr unsigned kCambiReciprocalSize = 4226;

/// Stage 1. Writes the 10-bit pass plane, out_w x out_h, row pitch out_w samples.
/// \param in the input luma (bpc 8..16).
/// \param enc_bitdepth < 10 applies the anti-dithering filter.
/// \throws std::invalid_argument if a sample is >= 2^bpc (bpc < 16).
void cambi_preprocess(const LumaView& in, unsigned out_w, unsigned out_h, unsigned enc_bitdepth,
                      std::uint16_t* out);

/// Stage 2. mask[y*w + x] = 1 or 0 for the w x h 10-bit plane `img` (pitch w).
void cambi_spatial_mask(const std::uint16_t* img, unsigned w, unsigned h,
                        std::uint16_t mask_index, std::uint16_t* mask);

/// Stage 3a. out[y*out_w + x] = in[2y*in_w + 2x] for out_w x out_h; `out` may be `in`.
void cambi_decimate(const std::uint16_t* in, unsigned in_w, unsigned out_w, unsigned out_h,
                    std::uint16_t* out);

/// Stage 3b. In-place mode filter of a w x h plane (pitch w): H = horizontal mode3 of
/// each row (first and last column copied), then rows 1..h-2 become the vertical mode3
/// of H. mode3(a,b,c): a value held by two of them, else the smallest. `scratch` is
/// resized to w*h.
void cambi_filter_mode(std::uint16_t* img, unsigned w, unsigned h,
                       std::vector<std::uint16_t>& scratch);

/// Stage 3c. c-values of one scale: c[y*w + x] (0 where mask is 0) for the w x h
/// filtered plane `img` and mask (pitch w), window `window_size` (odd, <= 65).
/// `hist` (scratch) is resized to plan.v_band_size * w counters.
void cambi_c_values(const std::uint16_t* img, const std::uint16_t* mask, unsigned w, unsigned h,
                    unsigned window_size, const CambiPlan& plan, float* c,
                    std::vector<std::uint16_t>& hist);

/// Stage 4 (host). libvmaf's spatial_pooling: quick-select of the k largest c-values
/// (k = clip((int)(topk * n), 1, n)) to the front of `c` (reordered in place), then their
/// sum in double in that order, divided by k.
double cambi_spatial_pooling(std::span<float> c, double topk);

/// Order-free pooling for a GPU port: the same k and top-k multiset (by value: all values
/// above the k-th largest, then copies of it), summed exactly in units of 2^-24.
struct CambiTopkExact {
    double score = 0;          ///< exact_sum / k, in double
    bool equals_libvmaf = false; ///< the exact sum is below 2^53 ulps of the smallest
                                 ///< nonzero top-k value (see the file comment)
};
CambiTopkExact cambi_topk_exact(std::span<const float> c, double topk);

/// libvmaf's k of spatial_pooling for n c-values: clip((int)(topk * n), 1, n).
int cambi_topk_count(double topk, std::size_t n);

/// The tail of cambi_topk_exact() from its two reductions, for a port that computes them
/// elsewhere (kernels/cambi.cuh): `sum_units` = the top-k sum in units of 2^-24 (each value
/// truncated to whole units, as cambi_topk_exact does), `k` = cambi_topk_count(),
/// `min_pos` = the smallest nonzero value of the top k (the k-th largest when it is not 0,
/// else the smallest nonzero c-value; 0 when every c-value is 0).
CambiTopkExact cambi_topk_from_sum(std::uint64_t sum_units, int k, float min_pos);

/// Per-scale pooled scores of one pass: what stages 1-4 produce.
struct CambiPassScores {
    double scale[kCambiScales];
};

/// Stage 5, libvmaf's weight_scores_per_scale: (sum_s scale[s] * {16,8,4,2,1}[s]) /
/// window_size^2 (unclipped).
double cambi_weighted_score(const CambiPassScores& s, unsigned window_size);

/// Scores of one frame as libvmaf appends them (already clipped to cambi_max_val).
struct CambiScores {
    double cambi = 0;           ///< cambi_feature_name(): min(dist, max_val)
    double source = 0;          ///< cambi_source (full_ref only)
    double full_reference = 0;  ///< cambi_full_reference: min(max(0, dist - src), max_val)
};

/// Stage 5. `src` is read only with plan.full_ref.
CambiScores cambi_finish(const CambiPlan& plan, const CambiPassScores& dist,
                         const CambiPassScores& src);

/// Working memory for whole passes (sized on first use).
struct CambiScratch {
    std::vector<std::uint16_t> image, mask, mode, hist;
    std::vector<float> c;
};

/// Stages 1-4 of one pass on the host.
/// \param source false: the distorted picture at plan.dist; true: the reference at plan.src.
CambiPassScores cambi_pass(const LumaView& in, const CambiPlan& plan, bool source,
                           CambiScratch& scratch);

/// One frame: the distorted pass, the reference pass with full_ref (`ref` may be null
/// otherwise), then cambi_finish().
CambiScores cambi_frame(const LumaView& dis, const LumaView* ref, const CambiPlan& plan,
                        CambiScratch& scratch);

} // namespace vmaf_cuda::ref

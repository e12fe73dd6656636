// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file speed.h
/// SpEED (spatial efficient entropic differencing): `speed_chroma` (outputs
/// speed_chroma_u, speed_chroma_v, speed_chroma_uv; the v1.0.16 models use
/// speed_chroma_uv) and `speed_temporal` (speed_temporal, luma frame differences).
///
/// Arithmetic followed: libvmaf v3.2.0 `libvmaf/src/feature/speed.c` (scalar paths:
/// `filter_and_downscale`, `est_params`, `compute_covariance_matrix` with
/// `compute_cov_kernel_scalar`, `compute_eigenvalues` (Householder tridiagonalisation +
/// implicit QR, adapted from GSL), `solve_linear_system` (Householder QR + back
/// substitution), `update_entropy`, `get_speed_score`, `speed_init_dimensions`,
/// `extract_chroma`, the temporal `extract`), `vif_tools.c` (`vif_filter1d_s` scalar
/// fallback, `vif_dec16_s`, `vif_get_filter`, `speed_get_antialias_filter`,
/// `vif_get_filter_size`, the four `vif_scale_frame_*` methods),
/// `picture_copy.c` (`picture_copy`, offset -128) and `feature_name.c` (output names).
/// Everything is single-precision float unless said otherwise; every place where
/// libvmaf's C promotes to double (a double literal, a call of `sqrt`, `log2`, `exp`)
/// is reproduced with an explicit cast. Build with -ffp-contract=off.
///
/// Pipeline for one plane P (width w, height h: the *plane size*, see
/// speed_chroma_plane_size()), per frame, ref and dis alike:
///  1. load:      f(x, y) = (float)P(x, y) / s - 128   (s = 1, 4, 16, 256 for bpc 8,
///                10, 12, 16; 8-bit: (float)P + (-128)).                   per pixel
///  2. prescale:  only when |prescale - 1| >= 1e-3: resample to scaled_w x scaled_h
///                (nearest, bilinear, bicubic or lanczos4, libvmaf's formulas,
///                source coordinates (x + 0.5) * (src / dst) - 0.5).      per pixel
///  3. antialias: separable Gaussian, width vif_get_filter_size(1, ks) (9 at ks 1),
///                sigma sqrt(4) * width / 5; vertical then horizontal, float
///                accumulation in tap order, mirror without repeating the edge
///                (-k -> k, n-1+k -> n-1-k, once).                          per pixel
///  4. decimate:  keep (16 i, 16 j): operating_w x operating_h = scaled >> 4. per pixel
///  5. residual:  r = d - G(d), G the 3-tap Gaussian of scale 4 (sigma 3/5 at ks 1),
///                same filter code.                                          per pixel
///  6. est_params on the truncated operating plane (multiple of 5 = block size B):
///     a. means m[a] (a = 0..24) of the (tw - 4) x (th - 4) submatrix starting at
///        (row a / 5, column a % 5): float sum, row-major, then / (float)count. REDUCTION
///     b. covariance K[a][b] = (sum ((double)x_a - m_a) * ((double)x_b - m_b)) / count,
///        double sum row-major, stored as float; a >= b computed, mirrored. REDUCTION
///     c. eigenvalues of K (25x25, serial float code).                    SERIAL
///     d. if all eigenvalues >= 1e-6: QR of K (serial); per block b (5x5 pixels Y_b):
///        X_b = R^-1 (Q^T Y_b) (float, libvmaf's loop orders);              per block
///        else (or a |R_ii| < 1e-6) X = 0 and the plane is "singular".
///     e. per block: S_b = sum_k (X_b[k] * Y_b[k]) / 25 (float, k = 0..24 in order);
///        E_b = 0, then for each eigenvalue L_k (k = 0..24, negative -> 0):
///        E_b = (float)((double)E_b + (log2((double)(L_k * S_b + snn)) + log2(2 pi e))).
///                                                                        per block
///  7. score: base = (float)(25 * (log2((double)((1 + nnf) * snn)) + log2(2 pi e)));
///     per block: 0 if E_ref < base and E_dis < base, else
///     |(float)(E_ref * log2(1 + V_ref)) - (float)(E_dis * log2(1 + V_dis'))|, V' per
///     speed_weight_var_mode (mode 5: 0.75 V_ref + 0.25 V_dis in double);
///     score = (float sum over blocks in raster order) / (float)num_blocks. REDUCTION
///  8. speed_chroma: u, v = score of U and V; uv = (float)((u + v) / 2.0), or the other
///     channel's score when exactly one channel was singular; each clipped to max_val
///     (double). A channel whose ref xor dis plane is singular scores 0.
///     speed_temporal: frame 0 scores 0; frame i >= 1 runs steps 3-7 (weight mode 0)
///     on prev - cur (float planes after step 1; dis: prev_dis - cur_dis, or
///     prev_dis - cur_ref with use_ref_diff), not clipped.
///
/// Order-dependent float reductions (a GPU port must keep libvmaf's order, or compute
/// these on the host): 6a (float, row-major over the submatrix, 25 of them), 6b (double,
/// row-major, 325 of them), 6c/6d's QR (serial by nature), 6d/6e per block (each block
/// independent, inner loops sequential), 7 (float, blocks in raster order). Steps 1-5
/// are per pixel and order-free (each output a fixed sequence of float operations).
/// GPU-port notes: steps 1-5 map to per-pixel kernels (--fmad=false; filter taps,
/// bilinear/bicubic/lanczos column and row weights built on the host, since they need
/// exp/sin/floor only per column or row); 6a/6b can run one thread per mean / per (a, b)
/// pair summing sequentially in row-major order (no tree reduction: it would round
/// differently); 6c and the QR are tiny serial 25x25 float code: host (speed_plane_model);
/// 6e needs glibc's log2 (CUDA's log2 is not glibc's), so speed_block_stats belongs on
/// the host too, or its log2 arguments must come back. The operating plane is 1/256 of
/// the scaled plane (4K 4:2:0 chroma: 120x67), so copying it to the host is cheap.
///
/// Verified: tests/golden/speed_test.cpp (every v1.0.16 golden log, bit-exact); and, out
/// of tree, against a scalar build of libvmaf v3.2.0 (f85a8536) on 1080p and 1279x719
/// clips, 4:2:0/4:2:2/4:4:4, 8/10/12/16 bits: every prescale method (down and up),
/// kernelscales 0.5 .. 3.71, weight modes 0..6, flat (singular) channels, speed_temporal
/// with and without use_ref_diff. (Most golden logs have operating planes too small for a
/// regular K and score 0; the non-zero golden values are bbb and src01 at prescale 1.)
///
/// Sizes: the operating size must be at least 5 x 5 (libvmaf: "SpEED: image too small,
/// operating width or height is 0", then it crashes); see speed_chroma_min_frame_size().

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "plane.h"

namespace vmaf_cuda::ref {

/// libvmaf's `speed_prescale_method` values (vif_tools.c's nearest, bilinear with the
/// precomputed column table, bicubic with a = -0.75, lanczos4 with a = 4; borders mirror).
enum class SpeedScaleMethod { nearest, bilinear, bicubic, lanczos4 };

/// Options of libvmaf's speed_chroma / speed_temporal (names, aliases, defaults, ranges
/// as libvmaf's option tables). The v1.0.16 models use nnf 0.1, snn 0.19, wvm 5, mxv 45
/// and, for some, ps 0.5 or 0.6 with psm bilinear.
struct SpeedOptions {
    double kernelscale = 1.0;   ///< speed_kernelscale (ks), one of libvmaf's 21 valid values
    double prescale = 1.0;      ///< speed_prescale (ps), [0.1, 4.0]
    SpeedScaleMethod prescale_method = SpeedScaleMethod::nearest; ///< speed_prescale_method (psm)
    double sigma_nn = 0.29;     ///< speed_sigma_nn (snn), [0.1, 2.0]
    double nn_floor = 0.0;      ///< speed_nn_floor (nnf), [0.0, 1.0]
    double max_val = 1000.0;    ///< speed_max_val (mxv), [0.0, 1000.0]; clips chroma outputs
    int weight_var_mode = 0;    ///< speed_weight_var_mode (wvm), 0..6; speed_chroma only
    bool use_ref_diff = false;  ///< speed_use_ref_diff (urd); speed_temporal only
};

/// Throws std::invalid_argument naming the option when `o` is outside libvmaf's ranges,
/// or the kernelscale is not one libvmaf accepts (within 1e-3, compared in float).
void speed_validate(const SpeedOptions& o);

/// libvmaf's SpeedDimensions for a plane of `width` x `height` (speed_init_dimensions).
struct SpeedGeometry {
    unsigned original_w = 0, original_h = 0; ///< the plane size
    unsigned scaled_w = 0, scaled_h = 0;     ///< (int)(original * prescale + 0.5)
    unsigned alloc_w = 0, alloc_h = 0;       ///< max(original, scaled)
    unsigned operating_w = 0, operating_h = 0; ///< scaled >> 4
    unsigned truncated_w = 0, truncated_h = 0; ///< operating rounded down to a multiple of 5
    unsigned blocks_x = 0, blocks_y = 0;     ///< truncated / 5
    unsigned num_blocks = 0;                 ///< blocks_x * blocks_y
    unsigned sub_w = 0, sub_h = 0;           ///< truncated - 4 (covariance submatrix)
    bool rescale = false;                    ///< |prescale - 1| >= 1e-3 (step 2 runs)
    /// libvmaf accepts the size (truncated width and height both > 0).
    bool valid() const { return truncated_w > 0 && truncated_h > 0; }
};
SpeedGeometry speed_geometry(unsigned width, unsigned height, const SpeedOptions& o);

/// Width and height in samples.
struct SpeedSize {
    unsigned width = 0, height = 0;
};

/// The plane size speed_chroma works on for a luma frame size (libvmaf's init_chroma and
/// picture.c): 420: (w / 2, h / 2), 422: (w / 2, h), 444: (w, h), halves rounding
/// *down*: libvmaf's pictures hold floor-sized chroma, so the last column / row of an
/// odd-sized (ceil-sized) chroma plane in a file never reaches SpEED. Views may be
/// either size. \throws std::invalid_argument for another `chroma` (libvmaf refuses
/// speed_chroma on 4:0:0 too).
SpeedSize speed_chroma_plane_size(unsigned luma_w, unsigned luma_h, unsigned chroma);

/// The size rule. libvmaf refuses (and then crashes) unless
///   ((int)(plane_w * prescale + 0.5) >> 4) >= 5 and the same for the height,
/// i.e. the scaled plane is at least 80 x 80. Returns the smallest luma frame width and
/// height (independently) that speed_chroma accepts for this chroma subsampling
/// (420, 422, 444) and options; a frame is accepted iff width >= .width and
/// height >= .height. E.g. 4:2:0 at ps 1: 160 x 160; ps 0.5: 318 x 318; ps 0.6: 266 x 266.
/// \throws std::invalid_argument for invalid options (speed_validate) or `chroma`.
SpeedSize speed_chroma_min_frame_size(unsigned chroma, const SpeedOptions& o);
/// The same for speed_temporal (luma planes): 80 x 80 at ps 1.
SpeedSize speed_temporal_min_frame_size(const SpeedOptions& o);
/// speed_chroma accepts this luma frame size.
bool speed_chroma_accepts(unsigned luma_w, unsigned luma_h, unsigned chroma,
                          const SpeedOptions& o);

/// Output names as libvmaf logs them: the alias, then `_<alias>_<value>` for every
/// option that differs from its default, sorted by option name (values with %g, ints
/// with %d, strings as is, bools as `_<alias>`). E.g. {"speed_chroma_u_mxv_45_nnf_0.1_
/// snn_0.19_wvm_5", ...v, ...uv}; all defaults: {"speed_chroma_u", "speed_chroma_v",
/// "speed_chroma_uv"} (libvmaf's collector then holds the full names
/// "Speed_chroma_feature_speed_chroma_u_score" etc., which its logs print as aliases).
std::vector<std::string> speed_chroma_output_names(const SpeedOptions& o);
/// "speed_temporal..." likewise (options ks, ps, psm, snn, nnf, mxv, urd).
std::string speed_temporal_output_name(const SpeedOptions& o);

/// Per-block results of est_params for one plane (libvmaf's SpeedResultBuffers).
struct SpeedBlockStats {
    std::vector<float> entropies; ///< E_b, num_blocks, raster order
    std::vector<float> variances; ///< S_b, num_blocks
    bool singular = false;        ///< K not invertible (est_params returned -EINVAL)
};

/// Working memory for one plane size and options. Construct once, reuse per frame.
class SpeedScratch {
public:
    /// \param plane_w, plane_h the plane size (speed_chroma_plane_size(), or the luma size).
    /// \throws std::invalid_argument if the options are invalid, the size is too small
    /// (the message names the plane and scaled sizes and the 80x80 minimum), or prescale
    /// is within 1e-3 of 1 yet changes the size (libvmaf would then read unset samples).
    SpeedScratch(unsigned plane_w, unsigned plane_h, const SpeedOptions& o);
    const SpeedGeometry& geometry() const { return g_; }
    const SpeedOptions& options() const { return o_; }
    std::size_t stride() const { return stride_; } ///< floats per row of the planes

    // Internal buffers (public for the reference's simplicity).
    std::vector<float> ref, dis;       ///< alloc_w x alloc_h planes (stride())
    std::vector<float> tmp, blur;      ///< same size
    std::vector<float> row;            ///< one row of the vertical pass
    std::vector<float> taps_aa, taps_lm; ///< antialias / local-mean filters
    std::vector<int> bx1, bx2;         ///< bilinear column table
    std::vector<float> bdx;
    SpeedBlockStats ref_stats, dis_stats;

private:
    SpeedGeometry g_;
    SpeedOptions o_;
    std::size_t stride_;
};

// ---- Per-pixel stages (planes: float, `stride` floats per row) --------------------

/// Step 1 (picture_copy with offset -128): `w` x `h` samples of `src` into `dst`.
/// \throws std::invalid_argument unless src.bpc is 8, 10, 12 or 16 (libvmaf converts only
/// those; it reads other depths' words as bytes) or src is smaller than w x h.
void speed_load_plane(const LumaView& src, unsigned w, unsigned h, float* dst,
                      std::size_t stride);

/// Gaussian taps: libvmaf's vif_get_filter(scale 4) (`local_mean`) or
/// speed_get_antialias_filter(4) (antialias), for kernelscale `ks`.
std::vector<float> speed_filter_taps(bool antialias, double ks);

/// Separable filter (vif_filter1d_s scalar fallback): `dst` = vertical then horizontal
/// pass of `src`, w x h. `row` needs w floats. dst must not alias src.
void speed_filter(const std::vector<float>& taps, const float* src, float* dst, float* row,
                  unsigned w, unsigned h, std::size_t stride);

/// Step 2: resample `src` (original_w x original_h) to `dst` (scaled_w x scaled_h) with the
/// scratch's method and column table (the caller checks geometry().rescale).
void speed_rescale(const float* src, float* dst, const SpeedScratch& s);

/// Step 4 (vif_dec16_s): dst(i, j) = src(16 i, 16 j) for i < h / 16, j < w / 16.
void speed_decimate16(const float* src, float* dst, unsigned w, unsigned h,
                      std::size_t stride);

/// Steps 2-5 in place on `plane` (which holds step 1's output): afterwards its top-left
/// operating_w x operating_h is the residual. Uses the scratch's tmp/blur/row buffers.
void speed_filter_and_downscale(float* plane, SpeedScratch& s);

// ---- Reductions and the per-plane solve --------------------------------------------

/// Step 6a-6b: the 25x25 covariance matrix (row-major) of the residual plane.
void speed_covariance(const float* residual, std::size_t stride, const SpeedGeometry& g,
                      float* cov625);

/// Step 6c: eigenvalues (25, in the order libvmaf's QR leaves them) of `cov625`.
void speed_eigenvalues(const float* cov625, float* eig25);

/// Step 6a-6d, the plane-level part (serial; on the host in a GPU port): K, its
/// eigenvalues and, when K is regular, the factors of libvmaf's QR solve.
struct SpeedPlaneModel {
    float cov[625];  ///< K, 25x25 row-major
    float eig[25];   ///< eigenvalues in libvmaf's order (entropy sums run over them in it)
    float qt[625];   ///< Q^T (the accumulated Householder product) of K = Q R; 0 if singular
    float r[625];    ///< R (upper triangular in exact arithmetic; used as libvmaf stores it)
    bool singular;   ///< an eigenvalue < 1e-6 or a |R_ii| < 1e-6: X = 0 for every block
};
void speed_plane_model(const float* residual, std::size_t stride, const SpeedGeometry& g,
                       SpeedPlaneModel& m);

/// Step 6d-6e for one block (independent of every other block: one GPU thread each).
/// \param y the block's 25 residual samples, row-major within the block.
/// \param sigma_nn speed_sigma_nn as float.
/// Computes x = R^-1 (Q^T y) (0 when singular), S = sum_k (x_k y_k) / 25 and
/// E = sum over eigenvalues as in step 6e, in libvmaf's operation order.
void speed_block_stats(const SpeedPlaneModel& m, const float* y, float sigma_nn,
                       float* entropy, float* variance);

/// Step 6 whole: est_params of one residual plane into `out` (sized num_blocks).
/// \param sigma_nn speed_sigma_nn (used as float).
void speed_est_params(const float* residual, std::size_t stride, const SpeedGeometry& g,
                      double sigma_nn, SpeedBlockStats& out);

/// Step 7: get_speed_score (float). \param weight_var_mode 0..6.
float speed_score(const SpeedGeometry& g, const SpeedBlockStats& ref,
                  const SpeedBlockStats& dis, double sigma_nn, double nn_floor,
                  int weight_var_mode);

/// One plane pair through steps 3-7 (libvmaf's speed_extract_score). `ref` and `dis`
/// are the scratch's planes holding step 1's output (or temporal differences); they are
/// overwritten. \returns the score (0 when exactly one of ref/dis is singular);
/// `*err` = ref or dis singular.
float speed_extract_score(float* ref, float* dis, SpeedScratch& s, int weight_var_mode,
                          bool* err);

// ---- speed_chroma -------------------------------------------------------------------

/// One frame's speed_chroma outputs, in speed_chroma_output_names() order, as libvmaf
/// hands them to its collector.
struct SpeedChromaScores {
    double u = 0, v = 0, uv = 0;
};

/// Per-channel result before the finish.
struct SpeedChannel {
    float score = 0;
    bool err = false; ///< ref or dis plane singular
};

/// Steps 1-7 for one chroma channel. Views: the U (or V) planes of ref and dis, at least
/// the scratch's plane size (a larger plane's extra columns/rows are ignored).
SpeedChannel speed_chroma_channel(const LumaView& ref, const LumaView& dis, SpeedScratch& s);

/// Step 8 for speed_chroma (host-side finish).
SpeedChromaScores speed_chroma_finish(const SpeedChannel& u, const SpeedChannel& v,
                                      double max_val);

/// All of speed_chroma for one frame pair. `s` built for speed_chroma_plane_size().
SpeedChromaScores speed_chroma(const LumaView& ref_u, const LumaView& ref_v,
                               const LumaView& dis_u, const LumaView& dis_v, SpeedScratch& s);

// ---- speed_temporal -----------------------------------------------------------------

/// speed_temporal state over a stream (libvmaf keeps the previous frame's float planes).
/// prescale > 1 is refused (libvmaf's temporal buffers are then too small).
class SpeedTemporal {
public:
    SpeedTemporal(unsigned luma_w, unsigned luma_h, const SpeedOptions& o);
    /// Frame `index` (0, 1, 2, ... in order): its score (0 for frame 0; not clipped).
    double push(const LumaView& ref_y, const LumaView& dis_y);

private:
    SpeedScratch s_;
    std::vector<float> prev_ref_, prev_dis_, cur_ref_, cur_dis_;
    unsigned index_ = 0;
};

} // namespace vmaf_cuda::ref

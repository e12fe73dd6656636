// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file float_motion.h
/// Float motion (libvmaf v3.2.0 extractor `float_motion`), luma of the reference only:
/// `VMAF_feature_motion_score` (log name `motion`, libvmaf's debug output, on by
/// default), `VMAF_feature_motion2_score` (`motion2`, what the float models read) and
/// `VMAF_feature_motion3_score` (`motion3`).
///
/// Arithmetic followed: libvmaf v3.2.0 `libvmaf/src/feature/float_motion.c` (`extract`,
/// `flush`), `motion.c` (`vmaf_image_sad_c`, `compute_motion`), the filters of
/// `motion_tools.h`, `common/convolution.c` (`convolution_f32_c_s`, `convolution_y_c_s`,
/// `convolution_x_c_s`, `convolution_edge_s`: the scalar C path, no AVX2),
/// `motion_blend_tools.h` (`motion_blend`) and `picture_copy.c` (float_picture.h).
///
/// Per frame, all in float (IEEE single, no FMA):
///   p(x, y) = picture_copy of the reference luma (8-bit scale, -128 offset)
///   t(x, y) = sum_{k=0..K-1} f[k] * p(x, m(y - K/2 + k))   (vertical first; k ascending,
///             accumulator starts at 0.0f)
///   b(x, y) = sum_{k=0..K-1} f[k] * t(m(x - K/2 + k), y)   (then horizontal)
///   m(): single mirror without repeating the edge: -i -> i, n-1+i -> n-1-i.
///   f = FILTER_5_s {0.054488685, 0.244201342, 0.402619947, 0.244201342, 0.054488685}
///   (motion_filter_size 5, the default, and every value but 1 and 3),
///   FILTER_3_s (size 3), FILTER_5_NO_OP_s {0,0,1,0,0} (size 1).
/// Per frame i >= 1, between the blurred frames i-1 and i:
///   row(y) = sum_{x=0..w-1} |b_{i-1}(x, y) - b_i(x, y)|   (float, x ascending, from 0.0f)
///   total  = sum_{y=0..h-1} row(y)                         (float, y ascending, from 0.0f)
///   sad_i  = (double)(float)(total / (float)(w * h))       (float division)
///
/// ORDER-DEPENDENT REDUCTIONS (a GPU port must keep libvmaf's order, or do them on the
/// host): both sums above are float sums. Each row sum must be formed left to right
/// (x = 0, 1, ..., w-1) starting from 0.0f, and the row sums added top to bottom. A GPU
/// may compute |b_{i-1} - b_i| per pixel in parallel (exact), and one thread per row may
/// form row(y) sequentially; the h row sums then go to the host, which adds them in
/// order with float_motion_finish(). The convolutions are per-pixel and exact to
/// reproduce in any thread order (each output is a fixed-order K-term float sum).
/// Everything here reads the reference only: one blur and one SAD per reference frame,
/// shared by every rendition scored against it.
///
/// Then (double, libvmaf's flush logic, with w = motion_fps_weight, M = motion_max_val,
/// blend(x) = x * bf + (1 - bf) * min(bo, x)):
///   motion[0] = 0, motion[i] = min(sad_i * w, M)
///   motion2[0] = 0; motion2[i] = min(m_i * w, M) for 0 < i < n-1, with
///     m_i = sad_i < sad_{i+1} ? sad_i : sad_{i+1} (libvmaf's `score2 < score ? ..`);
///     the last frame uses m = sad_last
///   motion3[0] = min(blend(sad_1 * w), M) when a frame 1 exists, else 0;
///   motion3[i] = min(blend(m_i * w), M)
/// With motion_force_zero every value is 0.
///
/// Valid input: width, height >= 3 (the mirror must stay inside the plane; 2 for the
/// 3-tap filter), bpc 8, 10, 12 or 16 (see float_picture.h).

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "plane.h"

namespace vmaf_cuda::ref {

/// Options of libvmaf's float_motion that change its numbers (libvmaf names; aliases
/// in brackets are what option-suffixed feature names show).
struct FloatMotionOptions {
    bool force_zero = false;   ///< motion_force_zero [force_0]: every score 0
    double fps_weight = 1.0;   ///< motion_fps_weight [mfw], 0..5
    double blend_factor = 1.0; ///< motion_blend_factor [mbf], 0..1
    double blend_offset = 40.0; ///< motion_blend_offset [mbo], 0..1000
    int filter_size = 5;       ///< motion_filter_size [mfs], 0..9 (1: no-op, 3: 3-tap, else 5-tap)
    double max_val = 10000.0;  ///< motion_max_val [mmxv], 0..10000
    // motion_add_scale1 [mdc] and motion_add_uv [mau] (off by default) are not
    // implemented: float_motion_check() rejects them.
    bool add_scale1 = false;
    bool add_uv = false;
};

/// Throws std::invalid_argument for options outside libvmaf's ranges or not implemented.
void float_motion_check(const FloatMotionOptions& opt);

/// The blur filter libvmaf picks for motion_filter_size (5, 3 or 5 taps).
std::span<const float> float_motion_filter(int filter_size);

/// Working memory for one frame size: the float copy and the vertical-pass plane.
class FloatMotionScratch {
public:
    FloatMotionScratch(unsigned width, unsigned height);
    unsigned width() const { return w_; }
    unsigned height() const { return h_; }
    std::vector<float> picture, tmp; ///< internal, w * h floats each (stride w)
private:
    unsigned w_, h_;
};

/// Blurred reference of one frame (libvmaf's s->blur[index % 3]).
/// \param ref reference luma, same size as `scratch`.
/// \param out resized to w * h floats, row-major (stride w).
void float_motion_blur(const LumaView& ref, const FloatMotionOptions& opt,
                       FloatMotionScratch& scratch, std::vector<float>& out);

/// The row sums of |prev - cur| (float, left to right from 0.0f): row_sums[y], y < h.
/// \param prev, cur blurred frames (float_motion_blur), w * h floats each.
void float_motion_row_sums(std::span<const float> prev, std::span<const float> cur,
                           unsigned width, unsigned height, std::span<float> row_sums);

/// The SAD score of libvmaf's vmaf_image_sad_c from the row sums: rows added top to bottom
/// in float from 0.0f, divided in float by (float)(w * h) (int product), widened.
double float_motion_finish(std::span<const float> row_sums, unsigned width, unsigned height);

/// Per-frame outputs of float_motion over a whole stream.
struct FloatMotionScores {
    std::vector<double> motion;  ///< VMAF_feature_motion_score (debug output)
    std::vector<double> motion2; ///< VMAF_feature_motion2_score
    std::vector<double> motion3; ///< VMAF_feature_motion3_score
};

/// libvmaf's extract/flush bookkeeping: from the sad scores of frames 0..n-1 (sad[0] is
/// ignored; frame 0 has none) gives the three outputs of every frame (see the file
/// comment). motion2/motion3 of frame i need sad[i+1]: one frame of lookahead.
FloatMotionScores float_motion_pool(std::span<const double> sad, const FloatMotionOptions& opt);

/// Log names of motion, motion2, motion3 for `opt` (e.g. "motion2" at defaults,
/// "motion2_mmxv_18" ... as libvmaf's feature_name.c forms them).
std::vector<std::string> float_motion_feature_names(const FloatMotionOptions& opt);

} // namespace vmaf_cuda::ref

// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file motion.h
/// Integer motion features of libvmaf v3.2.0 at default options, luma of the reference
/// only: `VMAF_integer_feature_motion_sad_score`, `..._motion2_score`, `..._motion3_score`.
///
/// Arithmetic followed: libvmaf v3.2.0 `libvmaf/src/feature/integer_motion.c`
/// (`motion_score_pipeline_8`, `motion_score_pipeline_16`, `extract`, `flush`), the
/// 5-tap filter of `integer_motion.h` and `motion_blend()` of `motion_blend_tools.h`.
/// Default options: motion_blend_factor 1.0, motion_blend_offset 40.0,
/// motion_fps_weight 1.0, motion_max_val 10000.0, no five-frame window, no moving
/// average, motion_force_zero off.
///
/// Per frame i >= 1 the integer stage is the SAD of a blurred frame difference:
///   d(x, y)  = prev(x, y) - cur(x, y)                              (int32)
///   v(x, y)  = (sum_k f[k] * d(x, y - 2 + k) + 2^(bpc-1)) >> bpc    (vertical, arithmetic shift)
///   b(x, y)  = (sum_k f[k] * v(x - 2 + k, y) + 2^15) >> 16          (horizontal)
///   row_sad(y) = sum_x |b(x, y)|   (uint32 per row, as libvmaf)
///   sad        = sum_y row_sad(y)  (uint64)
/// f = {3571, 16004, 26386, 16004, 3571} (Q16); borders mirror without repeating the
/// edge (index -k -> k, n-1+k -> n-1-k). |b| <= 65535, so a row sum cannot wrap for
/// width <= 65537; larger widths are accepted and wrap exactly like libvmaf.
///
/// Valid input: width, height >= 3 (the mirror must stay inside the plane), bpc 8..16.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "plane.h"

namespace vmaf_cuda::ref {

/// Working memory of motion_sad() for one frame size (one int32 row).
class MotionScratch {
public:
    MotionScratch(unsigned width, unsigned height, unsigned bpc);
    unsigned width() const { return w_; }
    unsigned height() const { return h_; }
    unsigned bpc() const { return bpc_; }
    std::vector<std::int32_t> row; ///< vertical-pass results of one row (internal)
private:
    unsigned w_, h_, bpc_;
};

/// Blurred SAD between two consecutive reference lumas (previous, current).
/// \param prev_ref, cur_ref same width/height/bpc as `scratch`.
/// \returns the integer SAD (sum of |blurred difference| on the 16-bit scale).
/// \throws std::invalid_argument on a size/bpc mismatch or bpc outside 8..16.
std::uint64_t motion_sad(const LumaView& prev_ref, const LumaView& cur_ref,
                         MotionScratch& scratch);

/// `VMAF_integer_feature_motion_sad_score` of a frame >= 1:
/// min((double)sad / 256.0 / (double)(w * h) * 1.0, 10000.0), where w * h is the
/// unsigned (32-bit) product, as libvmaf computes it. Frame 0 has score 0, which
/// motion_sad_finish(0, w, h) also returns.
double motion_sad_finish(std::uint64_t sad, unsigned width, unsigned height);

/// libvmaf's motion_blend() at default options, then the clip to motion_max_val:
/// min(x * 1.0 + (1 - 1.0) * min(40.0, x), 10000.0).
double motion_blend_clip(double x);

/// `VMAF_integer_feature_motion2_score` of frame i.
/// \param sad_i the sad score of frame i (motion_sad_finish of it; 0 for frame 0).
/// \param sad_next the sad score of frame i+1, or nullopt when frame i is the last.
/// \returns 0 for i == 0; sad_i when frame i is the last; else min(sad_i, sad_next)
///          (libvmaf's `lo < hi ? lo : hi`).
double motion2_score(std::size_t i, double sad_i, std::optional<double> sad_next);

/// `VMAF_integer_feature_motion3_score` of frame i.
/// \param motion2_i the motion2 score of frame i.
/// \param sad_next the sad score of frame i+1, or nullopt when frame i is the last.
/// \returns for i == 0: motion_blend_clip(sad_next) when a frame 1 exists, else 0
///          (libvmaf's "stamp value": the blended sad of frame 1, not of motion2);
///          for i >= 1: motion_blend_clip(motion2_i).
double motion3_score(std::size_t i, double motion2_i, std::optional<double> sad_next);

/// libvmaf's flush() over a whole stream: given the sad scores of frames 0..n-1
/// (sad[0] == 0), fills motion2 and motion3 (resized to n).
void motion_pool(std::span<const double> sad, std::vector<double>& motion2,
                 std::vector<double>& motion3);

} // namespace vmaf_cuda::ref

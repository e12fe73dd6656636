// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file motion.h
/// Integer motion features of libvmaf v3.2.0, luma of the reference only:
/// `VMAF_integer_feature_motion_sad_score`, `..._motion2_score`, `..._motion3_score`.
///
/// Arithmetic followed: libvmaf v3.2.0 `libvmaf/src/feature/integer_motion.c`
/// (`motion_score_pipeline_8`, `motion_score_pipeline_16`, `extract`, `flush`), the
/// 5-tap filter of `integer_motion.h` and `motion_blend()` of `motion_blend_tools.h`.
/// Options: MotionOptions (defaults: motion_blend_factor 1.0, motion_blend_offset 40.0,
/// motion_fps_weight 1.0, motion_max_val 10000.0, no five-frame window, no moving
/// average, motion_force_zero off). The functions without a MotionOptions argument are
/// the defaults.
///
/// Per frame i >= motion_first_index() the integer stage is the SAD of a blurred
/// difference of two reference lumas, prev = frame i - motion_sad_distance() (1, or 2
/// with the five-frame window) and cur = frame i:
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

/// Options of libvmaf's integer motion extractor (option names and aliases in comments).
///
/// Where each option acts (what a GPU port must honour):
///   - [finish]: only the host-side functions of this header read it (both backends
///     share them: the CUDA backend gets it for free).
///   - [frames]: changes which frame pairs the integer stage compares, not its
///     arithmetic: the kernel (kernels/motion.cu) is unchanged, the backend must keep
///     motion_sad_distance() previous reference lumas and feed the right pair.
struct MotionOptions {
    /// motion_force_zero (force_0): every score is 0; no SAD is needed. [finish]
    bool force_zero = false;
    /// motion_blend_factor (mbf), 0 .. 1, and motion_blend_offset (mbo), 0 .. 1000:
    /// motion3 = blend(x) = x * mbf + (1 - mbf) * min(mbo, x). [finish]
    double blend_factor = 1.0;
    double blend_offset = 40.0;
    /// motion_fps_weight (mfw), 0 .. 5: multiplies the sad score. [finish]
    double fps_weight = 1.0;
    /// motion_max_val (mmxv), 0 .. 10000: upper clip of the sad score and of motion3
    /// (before the moving average). [finish]
    double max_val = 10000.0;
    /// motion_five_frame_window (mffw): the SAD of frame i compares frame i - 2 with
    /// frame i (frames 0, 1 have none), and motion2(i) = min(sad(i-1), sad(i+1)).
    /// [frames] for the SAD, [finish] for motion2/motion3.
    bool five_frame_window = false;
    /// motion_moving_average (mma): motion3(i) = (blend(i) + blend(i-1)) / 2. [finish]
    bool moving_average = false;
};

/// First frame that has a SAD (libvmaf's min_idx): 1, or 2 with the five-frame window.
/// Frames before it have sad score 0 and motion2 0.
unsigned motion_first_index(const MotionOptions& opt);

/// How many frames back the SAD's previous picture is: the SAD of frame i >=
/// motion_first_index() compares reference i - motion_sad_distance() with reference i
/// (1, or 2 with the five-frame window). A backend keeps that many previous reference
/// lumas.
unsigned motion_sad_distance(const MotionOptions& opt);

/// Frames of lookahead frame i's motion2 and motion3 need (libvmaf's flush()): the
/// sad scores of frames up to i + motion_lookahead(opt, i) must be known (or the stream
/// must have ended there) before frame i's motion2/motion3 (and so its VMAF) are final.
///   i <  first (= motion_first_index): first - i  (motion3 of these frames is the
///        "stamp value", the blended sad of frame `first`);
///   i >= first: 1 (motion2 reads sad(i + 1)).
/// Defaults: 1 for every frame. Five-frame window: 2 for frame 0, 1 for the others.
/// The moving average adds none (it reads frame i - 1). Never more than
/// motion_max_lookahead(opt).
unsigned motion_lookahead(const MotionOptions& opt, std::size_t i);

/// max over i of motion_lookahead(opt, i): 1, or 2 with the five-frame window.
unsigned motion_max_lookahead(const MotionOptions& opt);

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

/// Blurred SAD between two reference lumas (previous, current): consecutive frames,
/// or two frames apart with the five-frame window (motion_sad_distance).
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

/// `VMAF_integer_feature_motion_sad_score` of a frame i >= motion_first_index(opt):
/// min((double)sad / 256.0 / (double)(w * h) * fps_weight, max_val) (w * h the unsigned
/// product); 0 when opt.force_zero. Frames before motion_first_index(opt) have 0.
double motion_sad_finish(std::uint64_t sad, unsigned width, unsigned height,
                         const MotionOptions& opt);

/// libvmaf's motion_blend() at default options, then the clip to motion_max_val:
/// min(x * 1.0 + (1 - 1.0) * min(40.0, x), 10000.0).
double motion_blend_clip(double x);

/// The same with options: min(x * mbf + (1 - mbf) * min(mbo, x), max_val).
double motion_blend_clip(double x, const MotionOptions& opt);

/// motion2 and motion3 of one frame.
struct MotionScores {
    double motion2 = 0; ///< VMAF_integer_feature_motion2_score
    double motion3 = 0; ///< VMAF_integer_feature_motion3_score
};

/// motion2 and motion3 of frame i, as libvmaf's flush() computes them.
/// \param sad the sad scores of frames 0 .. n-1 (motion_sad_finish; 0 before
///        motion_first_index), i < n. Either n > i + motion_lookahead(opt, i), or n is
///        the length of the stream (frames past the end of `sad` are taken as absent).
/// With first = motion_first_index(opt), stride = motion_sad_distance(opt):
///   stamp  = n > first ? motion_blend_clip(sad[first], opt) : 0;
///   motion2(i) = 0 for i < first; else sad[i] if i + 1 == n; else
///                min(sad[i - stride + 1], sad[i + 1]) when i - stride + 1 >= first,
///                else sad[i + 1] (libvmaf's `lo < hi ? lo : hi`);
///   p(i)   = stamp for i < first, else motion_blend_clip(motion2(i), opt);
///   motion3(i) = p(i), or with the moving average: stamp for i < first, else
///                (p(i) + p(i - 1)) / 2.
MotionScores motion_scores(std::size_t i, std::span<const double> sad, const MotionOptions& opt);

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

/// The same with options (motion_scores() for every frame).
void motion_pool(std::span<const double> sad, std::vector<double>& motion2,
                 std::vector<double>& motion3, const MotionOptions& opt);

} // namespace vmaf_cuda::ref

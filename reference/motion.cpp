// SPDX-License-Identifier: BSD-2-Clause-Patent
// Reference integer motion; see motion.h for the contract and the libvmaf code followed.

#include "motion.h"

#include <stdexcept>

namespace vmaf_cuda::ref {

namespace {

// 5-tap Gaussian, Q16 (sums to 65536); fact from libvmaf's integer_motion.h.
constexpr std::int32_t kTaps[5] = {3571, 16004, 26386, 16004, 3571};

// Single mirror without repeating the edge (libvmaf's mirror()): valid for n >= 3.
int mirror(int x, int n) {
    if (x < 0) return -x;
    if (x >= n) return 2 * n - x - 2;
    return x;
}

} // namespace

unsigned motion_first_index(const MotionOptions& opt) { return opt.five_frame_window ? 2u : 1u; }

unsigned motion_sad_distance(const MotionOptions& opt) { return opt.five_frame_window ? 2u : 1u; }

unsigned motion_lookahead(const MotionOptions& opt, std::size_t i) {
    const std::size_t first = motion_first_index(opt);
    return i < first ? static_cast<unsigned>(first - i) : 1u;
}

unsigned motion_max_lookahead(const MotionOptions& opt) { return motion_first_index(opt); }

MotionScratch::MotionScratch(unsigned width, unsigned height, unsigned bpc)
    : row(width, 0), w_(width), h_(height), bpc_(bpc) {}

std::uint64_t motion_sad(const LumaView& prev_ref, const LumaView& cur_ref,
                         MotionScratch& scratch) {
    const unsigned w = scratch.width(), h = scratch.height(), bpc = scratch.bpc();
    if (bpc < 8 || bpc > 16 || prev_ref.bpc != bpc || cur_ref.bpc != bpc ||
        prev_ref.width != w || cur_ref.width != w || prev_ref.height != h ||
        cur_ref.height != h)
        throw std::invalid_argument("motion_sad: planes do not match the scratch size/bpc");

    // The 8-bit pipeline of libvmaf sums in int32 and shifts by 8; the 16-bit one sums
    // in int64 and shifts by bpc. With bpc = 8 both give the same values (the int32
    // sum cannot overflow), so one loop with an int64 sum serves all depths.
    const std::int64_t v_round = std::int64_t{1} << (bpc - 1);
    std::uint64_t sad = 0;
    for (unsigned i = 0; i < h; ++i) {
        for (unsigned j = 0; j < w; ++j) {
            std::int64_t acc = 0;
            for (int k = 0; k < 5; ++k) {
                const unsigned r = static_cast<unsigned>(
                    mirror(static_cast<int>(i) - 2 + k, static_cast<int>(h)));
                const int d = prev_ref.at(j, r) - cur_ref.at(j, r);
                acc += std::int64_t{kTaps[k]} * d;
            }
            scratch.row[j] = static_cast<std::int32_t>((acc + v_round) >> bpc);
        }
        std::uint32_t row_sad = 0; // uint32 per row, as libvmaf
        for (unsigned j = 0; j < w; ++j) {
            std::int64_t acc = 0;
            for (int k = 0; k < 5; ++k) {
                const unsigned c = static_cast<unsigned>(
                    mirror(static_cast<int>(j) - 2 + k, static_cast<int>(w)));
                acc += std::int64_t{kTaps[k]} * scratch.row[c];
            }
            const std::int32_t b = static_cast<std::int32_t>((acc + 32768) >> 16);
            row_sad += static_cast<std::uint32_t>(b < 0 ? -b : b);
        }
        sad += row_sad;
    }
    return sad;
}

double motion_sad_finish(std::uint64_t sad, unsigned width, unsigned height,
                         const MotionOptions& opt) {
    if (opt.force_zero) return 0.0;
    const unsigned area = width * height; // unsigned product, as libvmaf
    const double score = static_cast<double>(sad) / 256. / area * opt.fps_weight;
    return score < opt.max_val ? score : opt.max_val;
}

double motion_sad_finish(std::uint64_t sad, unsigned width, unsigned height) {
    return motion_sad_finish(sad, width, height, MotionOptions{});
}

double motion_blend_clip(double x, const MotionOptions& opt) {
    // motion_blend(): x * f + (1 - f) * MIN(offset, x); then MIN(., max_val)
    const double m = opt.blend_offset < x ? opt.blend_offset : x;
    const double blended = x * opt.blend_factor + (1 - opt.blend_factor) * m;
    return blended < opt.max_val ? blended : opt.max_val;
}

double motion_blend_clip(double x) { return motion_blend_clip(x, MotionOptions{}); }

namespace {

/// libvmaf flush()'s motion2 of frame i >= first over n known sad scores.
double motion2_at(std::size_t i, std::span<const double> sad, const MotionOptions& opt) {
    const std::size_t first = motion_first_index(opt);
    const std::size_t stride = motion_sad_distance(opt);
    if (i < first) return 0.0;
    if (i + 1 >= sad.size()) return sad[i]; // no frame i + 1
    const double hi = sad[i + 1];
    // lo_idx = i - (stride - 1) >= first (i >= first, so it is never negative here)
    if (i + 1 >= first + stride) {
        const double lo = sad[i + 1 - stride];
        return lo < hi ? lo : hi;
    }
    return hi;
}

} // namespace

MotionScores motion_scores(std::size_t i, std::span<const double> sad, const MotionOptions& opt) {
    if (i >= sad.size()) throw std::invalid_argument("motion_scores: frame index past the sad scores");
    const std::size_t first = motion_first_index(opt);
    const double stamp = sad.size() > first ? motion_blend_clip(sad[first], opt) : 0.0;
    MotionScores out;
    if (i < first) {
        out.motion2 = 0.0;
        out.motion3 = stamp;
        return out;
    }
    out.motion2 = motion2_at(i, sad, opt);
    const double processed = motion_blend_clip(out.motion2, opt);
    if (!opt.moving_average) {
        out.motion3 = processed;
    } else {
        const double prev =
            i == first ? stamp : motion_blend_clip(motion2_at(i - 1, sad, opt), opt);
        out.motion3 = (processed + prev) / 2.0;
    }
    return out;
}

double motion2_score(std::size_t i, double sad_i, std::optional<double> sad_next) {
    if (i == 0) return 0.0;
    if (!sad_next) return sad_i;
    return sad_i < *sad_next ? sad_i : *sad_next;
}

double motion3_score(std::size_t i, double motion2_i, std::optional<double> sad_next) {
    if (i == 0) return sad_next ? motion_blend_clip(*sad_next) : 0.0;
    return motion_blend_clip(motion2_i);
}

void motion_pool(std::span<const double> sad, std::vector<double>& motion2,
                 std::vector<double>& motion3) {
    const std::size_t n = sad.size();
    motion2.assign(n, 0.0);
    motion3.assign(n, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
        const std::optional<double> next =
            i + 1 < n ? std::optional<double>(sad[i + 1]) : std::nullopt;
        motion2[i] = motion2_score(i, sad[i], next);
        motion3[i] = motion3_score(i, motion2[i], next);
    }
}

void motion_pool(std::span<const double> sad, std::vector<double>& motion2,
                 std::vector<double>& motion3, const MotionOptions& opt) {
    const std::size_t n = sad.size();
    motion2.assign(n, 0.0);
    motion3.assign(n, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
        const MotionScores m = motion_scores(i, sad, opt);
        motion2[i] = m.motion2;
        motion3[i] = m.motion3;
    }
}

} // namespace vmaf_cuda::ref

// SPDX-License-Identifier: BSD-2-Clause-Patent
// Reference float motion; see float_motion.h for the contract and the libvmaf code followed.

#include "float_motion.h"

#include <cmath>
#include <stdexcept>

#include "float_picture.h"

namespace vmaf_cuda::ref {

namespace {

// Facts from libvmaf's motion_tools.h: float arrays initialised from double literals.
constexpr float F(double v) { return static_cast<float>(v); }
constexpr float kFilter5[5] = {F(0.054488685), F(0.244201342), F(0.402619947),
                               F(0.244201342), F(0.054488685)};
constexpr float kFilter3[3] = {F(0.166378498), F(0.667243004), F(0.166378498)};
constexpr float kFilter5NoOp[5] = {0.0f, 0.0f, 1.0f, 0.0f, 0.0f};

// libvmaf's convolution_edge_s mirror (one reflection, edge not repeated).
int mirror(int x, int n) {
    if (x < 0) return -x;
    if (x >= n) return n - (x - n + 2);
    return x;
}

// convolution_f32_c_s: vertical pass into tmp, then horizontal pass into dst. The
// interior/edge split of libvmaf computes the same k-ascending sum everywhere.
void convolve(std::span<const float> f, const float* src, float* tmp, float* dst, int w, int h) {
    const int fw = static_cast<int>(f.size());
    const int r = fw / 2;
    for (int i = 0; i < h; ++i)
        for (int j = 0; j < w; ++j) {
            float acc = 0;
            for (int k = 0; k < fw; ++k)
                acc += f[k] * src[static_cast<std::size_t>(mirror(i - r + k, h)) * w + j];
            tmp[static_cast<std::size_t>(i) * w + j] = acc;
        }
    for (int i = 0; i < h; ++i)
        for (int j = 0; j < w; ++j) {
            float acc = 0;
            for (int k = 0; k < fw; ++k)
                acc += f[k] * tmp[static_cast<std::size_t>(i) * w + mirror(j - r + k, w)];
            dst[static_cast<std::size_t>(i) * w + j] = acc;
        }
}

double min_d(double x, double y) { return x < y ? x : y; } // libvmaf's MIN

double blend(double x, const FloatMotionOptions& o) {
    return x * o.blend_factor + (1 - o.blend_factor) * min_d(o.blend_offset, x);
}

} // namespace

void float_motion_check(const FloatMotionOptions& o) {
    const auto in = [](double v, double lo, double hi) { return v >= lo && v <= hi; };
    if (!in(o.fps_weight, 0.0, 5.0) || !in(o.blend_factor, 0.0, 1.0) ||
        !in(o.blend_offset, 0.0, 1000.0) || o.filter_size < 0 || o.filter_size > 9 ||
        !in(o.max_val, 0.0, 10000.0))
        throw std::invalid_argument("float_motion: option outside libvmaf's range");
    if (o.add_scale1 || o.add_uv)
        throw std::invalid_argument(
            "float_motion: motion_add_scale1 and motion_add_uv are not implemented");
}

std::span<const float> float_motion_filter(int filter_size) {
    if (filter_size == 1) return kFilter5NoOp;
    if (filter_size == 3) return kFilter3;
    return kFilter5;
}

FloatMotionScratch::FloatMotionScratch(unsigned width, unsigned height)
    : picture(std::size_t{width} * height), tmp(std::size_t{width} * height), w_(width),
      h_(height) {}

void float_motion_blur(const LumaView& ref, const FloatMotionOptions& opt,
                       FloatMotionScratch& s, std::vector<float>& out) {
    const std::span<const float> f = float_motion_filter(opt.filter_size);
    const unsigned minimum = f.size() == 3 ? 2u : 3u;
    if (ref.width != s.width() || ref.height != s.height())
        throw std::invalid_argument("float_motion_blur: plane does not match the scratch size");
    if (ref.width < minimum || ref.height < minimum)
        throw std::invalid_argument("float_motion_blur: frame below " + std::to_string(minimum) +
                                    "x" + std::to_string(minimum));
    float_picture_copy(ref, s.picture.data(), ref.width);
    out.resize(std::size_t{ref.width} * ref.height);
    convolve(f, s.picture.data(), s.tmp.data(), out.data(), static_cast<int>(ref.width),
             static_cast<int>(ref.height));
}

void float_motion_row_sums(std::span<const float> prev, std::span<const float> cur,
                           unsigned width, unsigned height, std::span<float> row_sums) {
    const std::size_t n = std::size_t{width} * height;
    if (prev.size() < n || cur.size() < n || row_sums.size() < height)
        throw std::invalid_argument("float_motion_row_sums: spans too small");
    for (unsigned i = 0; i < height; ++i) {
        float accum_line = 0.0f;
        const float* a = prev.data() + std::size_t{i} * width;
        const float* b = cur.data() + std::size_t{i} * width;
        for (unsigned j = 0; j < width; ++j)
            // libvmaf: float += fabs(float - float), i.e. a double sum rounded to float
            // (the same as a float sum: double rounding is innocuous for one addition).
            accum_line = static_cast<float>(accum_line + std::fabs(static_cast<double>(a[j] - b[j])));
        row_sums[i] = accum_line;
    }
}

double float_motion_finish(std::span<const float> row_sums, unsigned width, unsigned height) {
    float accum = 0.0f;
    for (unsigned i = 0; i < height; ++i) accum += row_sums[i];
    const int area = static_cast<int>(width) * static_cast<int>(height);
    return static_cast<double>(static_cast<float>(accum / static_cast<float>(area)));
}

FloatMotionScores float_motion_pool(std::span<const double> sad, const FloatMotionOptions& o) {
    const std::size_t n = sad.size();
    FloatMotionScores out;
    out.motion.assign(n, 0.0);
    out.motion2.assign(n, 0.0);
    out.motion3.assign(n, 0.0);
    if (o.force_zero || n == 0) return out;
    const double w = o.fps_weight, m = o.max_val;
    for (std::size_t i = 1; i < n; ++i) out.motion[i] = min_d(sad[i] * w, m);
    if (n >= 2) out.motion3[0] = min_d(blend(sad[1] * w, o), m);
    for (std::size_t i = 1; i < n; ++i) {
        double s2 = sad[i];
        if (i + 1 < n) s2 = s2 < sad[i + 1] ? s2 : sad[i + 1];
        out.motion2[i] = min_d(s2 * w, m);
        out.motion3[i] = min_d(blend(s2 * w, o), m);
    }
    return out;
}

std::vector<std::string> float_motion_feature_names(const FloatMotionOptions& o) {
    std::vector<FeatureParam> p;
    if (o.force_zero) p.push_back({"motion_force_zero", "force_0", ""});
    if (o.fps_weight != 1.0) p.push_back({"motion_fps_weight", "mfw", format_g(o.fps_weight)});
    if (o.blend_factor != 1.0)
        p.push_back({"motion_blend_factor", "mbf", format_g(o.blend_factor)});
    if (o.blend_offset != 40.0)
        p.push_back({"motion_blend_offset", "mbo", format_g(o.blend_offset)});
    if (o.add_scale1) p.push_back({"motion_add_scale1", "mdc", ""});
    if (o.filter_size != 5)
        p.push_back({"motion_filter_size", "mfs", std::to_string(o.filter_size)});
    if (o.add_uv) p.push_back({"motion_add_uv", "mau", ""});
    if (o.max_val != 10000.0) p.push_back({"motion_max_val", "mmxv", format_g(o.max_val)});
    return {float_feature_name("motion", p), float_feature_name("motion2", p),
            float_feature_name("motion3", p)};
}

} // namespace vmaf_cuda::ref

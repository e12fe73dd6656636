// SPDX-License-Identifier: BSD-2-Clause-Patent
// Reference float VIF; see float_vif.h for the contract and the libvmaf code followed.

#include "float_vif.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "float_picture.h"

namespace vmaf_cuda::ref {

namespace {

// libvmaf's valid_kernelscales (vif_tools.h), as float expressions.
const float kKernelscales[21] = {1.0f,         1.0f / 2.0f,  3.0f / 2.0f,  2.0f,
                                 2.0f / 3.0f,  24.0f / 10.0f, 360.0f / 97.0f, 4.0f / 3.0f,
                                 3.5f / 3.0f,  3.75f / 3.0f, 4.25f / 3.0f, 5.0f / 3.0f,
                                 3.0f,         1.0f / 2.25f, 1.4746f,      1.54f,
                                 1.6f,         1.06667f,     0.711111f,    0.740740f,
                                 1.111111f};

bool kernelscale_valid(float ks) {
    for (float v : kKernelscales)
        if (std::fabs(ks - v) < 1e-3) return true; // fabsf(float) < double, as libvmaf
    return false;
}

int round_up_to_odd(float f) {
    const int c = static_cast<int>(std::ceil(f));
    return c % 2 == 0 ? c + 1 : c;
}

// get_gaussian_pdf / get_1d_gaussian_kernel with libvmaf's float/double mix.
float gaussian_pdf(float x, float mean, float stdev) {
    const float num = static_cast<float>(
        std::exp(-0.5 * (x - mean) / stdev * (x - mean) / stdev));
    const float den = static_cast<float>(1 / (stdev * std::sqrt(2 * 3.14159265358979323846)));
    return num / den;
}

// Mirror of vif_filter1d_*: once, edge not repeated.
int mirror(int x, int n) { return x < 0 ? -x : (x >= n ? 2 * n - x - 2 : x); }

enum class Kind { plain, square, product };

// vif_filter1d_s / _sq_s / _xy_s over a w x h plane (row stride `stride` floats).
void filter1d(Kind kind, const std::vector<float>& f, const float* a, const float* b, float* dst,
              float* tmp, int w, int h, std::size_t stride) {
    const int fw = static_cast<int>(f.size());
    for (int i = 0; i < h; ++i) {
        for (int j = 0; j < w; ++j) {
            float acc = 0;
            for (int k = 0; k < fw; ++k) {
                const std::size_t at = static_cast<std::size_t>(mirror(i - fw / 2 + k, h)) * stride + j;
                const float c = f[k];
                if (kind == Kind::plain) acc += c * a[at];
                else if (kind == Kind::square) acc += c * (a[at] * a[at]);
                else acc += c * (a[at] * b[at]);
            }
            tmp[j] = acc;
        }
        for (int j = 0; j < w; ++j) {
            float acc = 0;
            for (int k = 0; k < fw; ++k) acc += f[k] * tmp[mirror(j - fw / 2 + k, w)];
            dst[static_cast<std::size_t>(i) * stride + j] = acc;
        }
    }
}

float max_f(float x, float y) { return x > y ? x : y; } // libvmaf's MAX
float min_f(float x, float y) { return x < y ? x : y; } // libvmaf's MIN

// vif_statistic_s, one row: the row sums of num_val and den_val.
void statistic_row(const float* mu1, const float* mu2, const float* xx, const float* yy,
                   const float* xy, int w, double gain_limit, double sigma_nsq, float& row_num,
                   float& row_den) {
    const float sigma_max_inv =
        static_cast<float>(::powf(static_cast<float>(sigma_nsq), 2.0f) / (255.0 * 255.0));
    const float eps = 1.0e-10f;
    const float limit = static_cast<float>(gain_limit);
    float acc_num = 0, acc_den = 0;
    for (int j = 0; j < w; ++j) {
        const float m1 = mu1[j], m2 = mu2[j];
        const float mu1_sq = m1 * m1, mu2_sq = m2 * m2, mu1_mu2 = m1 * m2;
        float sigma1_sq = xx[j] - mu1_sq;
        float sigma2_sq = yy[j] - mu2_sq;
        const float sigma12 = xy[j] - mu1_mu2;
        sigma1_sq = max_f(sigma1_sq, 0.0f);
        sigma2_sq = max_f(sigma2_sq, 0.0f);
        float g = sigma12 / (sigma1_sq + eps);
        float sv_sq = sigma2_sq - g * sigma12;
        if (sigma1_sq < eps) {
            g = 0.0f;
            sv_sq = sigma2_sq;
            sigma1_sq = 0.0f;
        }
        if (sigma2_sq < eps) {
            g = 0.0f;
            sv_sq = 0.0f;
        }
        if (g < 0.0f) {
            sv_sq = sigma2_sq;
            g = 0.0f;
        }
        sv_sq = max_f(sv_sq, eps);
        g = min_f(g, limit);
        const float gain = g * g * sigma1_sq;
        float num_val = vif_log2f_approx(static_cast<float>(
            1.0f + static_cast<double>(gain) / (static_cast<double>(sv_sq) + sigma_nsq)));
        float den_val = vif_log2f_approx(
            static_cast<float>(1.0f + static_cast<double>(sigma1_sq) / sigma_nsq));
        if (sigma12 < 0.0f) num_val = 0.0f;
        if (static_cast<double>(sigma1_sq) < sigma_nsq) {
            num_val = 1.0f - sigma2_sq * sigma_max_inv;
            den_val = 1.0f;
        }
        acc_num += num_val;
        acc_den += den_val;
    }
    row_num = acc_num;
    row_den = acc_den;
}

} // namespace

float vif_log2f_approx(float x) {
    // libvmaf's log2_poly_s: a float array initialised from double literals.
    static const float poly[9] = {
        static_cast<float>(-0.012671635276421), static_cast<float>(0.064841182402670),
        static_cast<float>(-0.157048836463065), static_cast<float>(0.257167726303123),
        static_cast<float>(-0.353800560300520), static_cast<float>(0.480131410397451),
        static_cast<float>(-0.721314327952201), static_cast<float>(1.442694803896991), 0.0f};
    if (x == 0) return -INFINITY;
    if (x < 0) return NAN;
    std::uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    const std::uint32_t exponent = (u & 0x7F800000u) >> 23;
    const std::uint32_t remain_bits = (u & 0x007FFFFFu) | 0x3F800000u;
    float remain;
    std::memcpy(&remain, &remain_bits, sizeof remain);
    const float log_base = static_cast<float>(static_cast<std::int32_t>(exponent) - 127);
    const float t = remain - 1.0f;
    float var = 0;
    for (float c : poly) var = var * t + c;
    return log_base + var;
}

void float_vif_check(const FloatVifOptions& o) {
    const auto in = [](double v, double lo, double hi) { return v >= lo && v <= hi; };
    if (!in(o.enhn_gain_limit, 1.0, 100.0) || !in(o.kernelscale, 0.1, 4.0) ||
        !in(o.prescale, 0.1, 4.0) || !in(o.scale1_min_val, 0.0, 1.0) ||
        !in(o.scale2_min_val, 0.0, 1.0) || !in(o.scale3_min_val, 0.0, 1.0) ||
        !in(o.sigma_nsq, 0.0, 5.0))
        throw std::invalid_argument("float_vif: option outside libvmaf's range");
    if (!kernelscale_valid(static_cast<float>(o.kernelscale)))
        throw std::invalid_argument("float_vif: invalid vif_kernelscale");
    if (o.prescale_method != "nearest")
        throw std::invalid_argument("float_vif: only vif_prescale_method=nearest is implemented");
}

int float_vif_filter_width(unsigned scale, double kernelscale) {
    const float ks = static_cast<float>(kernelscale);
    const int n = (1 << (4 - static_cast<int>(scale))) + 1;
    const int r = round_up_to_odd(static_cast<float>(n) * ks);
    return r > 3 ? r : 3;
}

std::vector<float> float_vif_filter(unsigned scale, double kernelscale) {
    const int size = float_vif_filter_width(scale, kernelscale);
    const float stdev = static_cast<float>(size) / 5.0f;
    std::vector<float> out(static_cast<std::size_t>(size));
    float sum = 0;
    const int k = (size - 1) / 2;
    for (int i = 0; i < size; ++i) {
        out[i] = gaussian_pdf(static_cast<float>(i - k), 0, stdev);
        sum += out[i];
    }
    for (float& v : out) v /= sum;
    return out;
}

FloatVifScratch::FloatVifScratch(unsigned width, unsigned height, const FloatVifOptions& opt)
    : w_(width), h_(height) {
    float_vif_check(opt);
    scaled_w[0] = static_cast<unsigned>(static_cast<int>(width * opt.prescale + 0.5));
    scaled_h[0] = static_cast<unsigned>(static_cast<int>(height * opt.prescale + 0.5));
    for (unsigned s = 0; s < 4; ++s) {
        filter[s] = float_vif_filter(s, opt.kernelscale);
        if (s > 0) {
            scaled_w[s] = scaled_w[s - 1] / 2;
            scaled_h[s] = scaled_h[s - 1] / 2;
        }
        // The mirror of a filter of width fw stays inside n samples when n > fw / 2; the
        // decimation filter of scale s runs on the plane of scale s-1 (larger).
        const unsigned need = static_cast<unsigned>(filter[s].size() / 2 + 1);
        if (scaled_w[s] < need || scaled_h[s] < need)
            throw std::invalid_argument(
                "float_vif: frame " + std::to_string(width) + "x" + std::to_string(height) +
                " too small (scale " + std::to_string(s) + " is " + std::to_string(scaled_w[s]) +
                "x" + std::to_string(scaled_h[s]) + ", its filter needs " + std::to_string(need) + ")");
    }
    const std::size_t n = std::size_t{scaled_w[0]} * scaled_h[0];
    for (auto* v : {&ref_s, &dis_s, &mu1, &mu2, &xx, &yy, &xy}) v->assign(n, 0.0f);
    ref.assign(std::size_t{width} * height, 0.0f);
    dis.assign(std::size_t{width} * height, 0.0f);
    tmp_row.assign(scaled_w[0], 0.0f);
}

void float_vif_accumulate(const LumaView& ref, const LumaView& dis, const FloatVifOptions& opt,
                          FloatVifScratch& s, FloatVifAccum& out) {
    if (ref.width != s.width() || ref.height != s.height() || dis.width != ref.width ||
        dis.height != ref.height || dis.bpc != ref.bpc)
        throw std::invalid_argument("float_vif_accumulate: planes do not match the scratch");
    float_picture_copy(ref, s.ref.data(), ref.width);
    float_picture_copy(dis, s.dis.data(), dis.width);

    // vif_scale_frame_nearest_s into the scale-0 planes (a copy at the same size).
    const std::size_t stride = s.scaled_w[0];
    const int dw = static_cast<int>(s.scaled_w[0]), dh = static_cast<int>(s.scaled_h[0]);
    const int sw = static_cast<int>(ref.width), sh = static_cast<int>(ref.height);
    if (sw == dw && sh == dh) {
        s.ref_s = s.ref;
        s.dis_s = s.dis;
    } else {
        const float ratio_x = static_cast<float>(sw) / dw;
        const float ratio_y = static_cast<float>(sh) / dh;
        for (int y = 0; y < dh; ++y)
            for (int x = 0; x < dw; ++x) {
                const int ry = static_cast<int>(y * ratio_y);
                const int rx = static_cast<int>(x * ratio_x);
                s.ref_s[y * stride + x] = s.ref[static_cast<std::size_t>(ry) * sw + rx];
                s.dis_s[y * stride + x] = s.dis[static_cast<std::size_t>(ry) * sw + rx];
            }
    }

    for (unsigned scale = 0; scale < 4; ++scale) {
        out.row_num[scale].clear();
        out.row_den[scale].clear();
    }
    const unsigned start = opt.skip_scale0 ? 1 : 0;
    // Scale s planes live in ref_s / dis_s (overwritten in place as the scales shrink:
    // the decimation reads mu1 / mu2, not the plane itself).
    for (unsigned scale = start; scale < 4; ++scale) {
        const std::vector<float>& f = s.filter[scale];
        if (scale > 0) {
            const int pw = static_cast<int>(s.scaled_w[scale - 1]);
            const int ph = static_cast<int>(s.scaled_h[scale - 1]);
            filter1d(Kind::plain, f, s.ref_s.data(), nullptr, s.mu1.data(), s.tmp_row.data(), pw,
                     ph, stride);
            filter1d(Kind::plain, f, s.dis_s.data(), nullptr, s.mu2.data(), s.tmp_row.data(), pw,
                     ph, stride);
            for (unsigned i = 0; i < s.scaled_h[scale]; ++i)
                for (unsigned j = 0; j < s.scaled_w[scale]; ++j) {
                    s.ref_s[i * stride + j] = s.mu1[(2 * i) * stride + 2 * j];
                    s.dis_s[i * stride + j] = s.mu2[(2 * i) * stride + 2 * j];
                }
        }
        const int w = static_cast<int>(s.scaled_w[scale]);
        const int h = static_cast<int>(s.scaled_h[scale]);
        const float* r = s.ref_s.data();
        const float* d = s.dis_s.data();
        filter1d(Kind::plain, f, r, nullptr, s.mu1.data(), s.tmp_row.data(), w, h, stride);
        filter1d(Kind::plain, f, d, nullptr, s.mu2.data(), s.tmp_row.data(), w, h, stride);
        filter1d(Kind::square, f, r, nullptr, s.xx.data(), s.tmp_row.data(), w, h, stride);
        filter1d(Kind::square, f, d, nullptr, s.yy.data(), s.tmp_row.data(), w, h, stride);
        filter1d(Kind::product, f, r, d, s.xy.data(), s.tmp_row.data(), w, h, stride);
        out.row_num[scale].resize(h);
        out.row_den[scale].resize(h);
        for (int i = 0; i < h; ++i) {
            const std::size_t o = static_cast<std::size_t>(i) * stride;
            statistic_row(s.mu1.data() + o, s.mu2.data() + o, s.xx.data() + o, s.yy.data() + o,
                          s.xy.data() + o, w, opt.enhn_gain_limit, opt.sigma_nsq,
                          out.row_num[scale][i], out.row_den[scale][i]);
        }
    }
}

FloatVifScores float_vif_finish(const FloatVifAccum& acc, const FloatVifOptions& opt) {
    FloatVifScores out;
    const unsigned start = opt.skip_scale0 ? 1 : 0;
    double score_num = 0.0, score_den = 0.0;
    for (unsigned s = start; s < 4; ++s) {
        float num = 0.0f, den = 0.0f;
        for (std::size_t i = 0; i < acc.row_num[s].size(); ++i) {
            num += acc.row_num[s][i];
            den += acc.row_den[s][i];
        }
        out.num[s] = num;
        out.den[s] = den;
    }
    for (unsigned s = start; s < 4; ++s) {
        score_num += out.num[s];
        score_den += out.den[s];
    }
    out.vif = score_den == 0.0 ? 1.0 : score_num / score_den;
    out.scale[0] = opt.skip_scale0 ? 0.0 : out.num[0] / out.den[0];
    const double min_val[4] = {0.0, opt.scale1_min_val, opt.scale2_min_val, opt.scale3_min_val};
    for (unsigned s = 1; s < 4; ++s) {
        const double v = out.num[s] / out.den[s];
        out.scale[s] = v > min_val[s] ? v : min_val[s];
    }
    return out;
}

std::array<std::string, 4> float_vif_feature_names(const FloatVifOptions& o) {
    std::vector<FeatureParam> p;
    if (o.enhn_gain_limit != 100.0)
        p.push_back({"vif_enhn_gain_limit", "egl", format_g(o.enhn_gain_limit)});
    if (o.kernelscale != 1.0) p.push_back({"vif_kernelscale", "ks", format_g(o.kernelscale)});
    if (o.prescale != 1.0) p.push_back({"vif_prescale", "ps", format_g(o.prescale)});
    if (o.scale1_min_val != 0.0)
        p.push_back({"vif_scale1_min_val", "s1miv", format_g(o.scale1_min_val)});
    if (o.scale2_min_val != 0.0)
        p.push_back({"vif_scale2_min_val", "s2miv", format_g(o.scale2_min_val)});
    if (o.scale3_min_val != 0.0)
        p.push_back({"vif_scale3_min_val", "s3miv", format_g(o.scale3_min_val)});
    if (o.prescale_method != "nearest")
        p.push_back({"vif_prescale_method", "pm", o.prescale_method});
    if (o.sigma_nsq != 2.0) p.push_back({"vif_sigma_nsq", "snsq", format_g(o.sigma_nsq)});
    if (o.skip_scale0) p.push_back({"vif_skip_scale0", "ssclz", ""});
    return {float_feature_name("vif_scale0", p), float_feature_name("vif_scale1", p),
            float_feature_name("vif_scale2", p), float_feature_name("vif_scale3", p)};
}

} // namespace vmaf_cuda::ref

// SPDX-License-Identifier: BSD-2-Clause-Patent
// Reference float ADM; see float_adm.h for the contract and the libvmaf code followed.

#include "float_adm.h"

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "float_picture.h"

namespace vmaf_cuda::ref {

namespace {

constexpr double kPi = 3.14159265358979323846;

// libvmaf's float tables are initialised from double literals: round through double.
constexpr float F(double v) { return static_cast<float>(v); }

// db2 analysis filters (dwt2_db2_coeffs_lo_s / _hi_s).
constexpr float kLo[4] = {F(0.482962913144690), F(0.836516303737469), F(0.224143868041857),
                          F(-0.129409522550921)};
constexpr float kHi[4] = {F(-0.129409522550921), F(-0.224143868041857), F(0.836516303737469),
                          F(-0.482962913144690)};

// FLOAT_ONE_BY_30 / FLOAT_ONE_BY_15: double constants in libvmaf's expressions.
constexpr double kOneBy30 = 0.0333333351;
constexpr double kOneBy15 = 0.0666666701;

// Watson et al. 1997 model for Y (dwt_7_9_YCbCr_threshold[0]) and the basis function
// amplitudes (dwt_7_9_basis_function_amplitudes), as float.
constexpr float kA = F(0.495), kK = F(0.466), kF0 = F(0.401);
constexpr float kG[4] = {F(1.501), F(1.0), F(0.534), F(1.0)};
constexpr float kAmp[6][4] = {{F(0.62171), F(0.67234), F(0.72709), F(0.67234)},
                              {F(0.34537), F(0.41317), F(0.49428), F(0.41317)},
                              {F(0.18004), F(0.22727), F(0.28688), F(0.22727)},
                              {F(0.091401), F(0.11792), F(0.15214), F(0.11792)},
                              {F(0.045943), F(0.059758), F(0.077727), F(0.059758)},
                              {F(0.023013), F(0.030018), F(0.039156), F(0.030018)}};


float dwt_quant_step(int lambda, int theta, double nvd, int rdh) {
    const float r = static_cast<float>(nvd * rdh * kPi / 180.0);
    const float temp =
        static_cast<float>(std::log10(std::pow(2.0, lambda + 1) * kF0 * kG[theta] / r));
    const float kt = kK * temp * temp;
    return static_cast<float>(2.0 * kA * std::pow(10.0, kt) / kAmp[lambda][theta]);
}

float native_csf(int lambda, double nvd, int rdh, int theta) {
    const float r = static_cast<float>(nvd * rdh * kPi / 180.0);
    float sf = static_cast<float>(r / std::pow(2, lambda + 1));
    if (theta == 45) sf = static_cast<float>(sf / 0.7);
    return static_cast<float>((0.31 + 0.69 * sf) * std::exp(-0.29 * sf));
}

// dwt2_src_indices_filt_s: -1 -> 1 at the start, n + k -> n - 1 - k at the end.
int dwt_index(int x, int n) { return x < 0 ? -x : (x >= n ? 2 * n - x - 1 : x); }

// adm_dwt2_s (all four bands) or adm_dwt2_lo_s (band a only). src: w x h, row stride
// `sstride`; bands (w+1)/2 x (h+1)/2 with stride `bstride`.
void dwt2(const float* src, std::size_t sstride, int w, int h, FloatAdmScratch::Bands& dst,
          std::size_t bstride, bool lo_only, std::vector<float>& tmplo, std::vector<float>& tmphi) {
    for (int i = 0; i < (h + 1) / 2; ++i) {
        const float* r0 = src + sstride * dwt_index(2 * i - 1, h);
        const float* r1 = src + sstride * dwt_index(2 * i, h);
        const float* r2 = src + sstride * dwt_index(2 * i + 1, h);
        const float* r3 = src + sstride * dwt_index(2 * i + 2, h);
        for (int j = 0; j < w; ++j) {
            const float s0 = r0[j], s1 = r1[j], s2 = r2[j], s3 = r3[j];
            float acc = 0;
            acc += kLo[0] * s0;
            acc += kLo[1] * s1;
            acc += kLo[2] * s2;
            acc += kLo[3] * s3;
            tmplo[j] = acc;
            if (lo_only) continue;
            acc = 0;
            acc += kHi[0] * s0;
            acc += kHi[1] * s1;
            acc += kHi[2] * s2;
            acc += kHi[3] * s3;
            tmphi[j] = acc;
        }
        for (int j = 0; j < (w + 1) / 2; ++j) {
            const int j0 = dwt_index(2 * j - 1, w), j1 = dwt_index(2 * j, w),
                      j2 = dwt_index(2 * j + 1, w), j3 = dwt_index(2 * j + 2, w);
            const std::size_t o = bstride * i + j;
            const auto lo = [&](const std::vector<float>& t) {
                float acc = 0;
                acc += kLo[0] * t[j0];
                acc += kLo[1] * t[j1];
                acc += kLo[2] * t[j2];
                acc += kLo[3] * t[j3];
                return acc;
            };
            const auto hi = [&](const std::vector<float>& t) {
                float acc = 0;
                acc += kHi[0] * t[j0];
                acc += kHi[1] * t[j1];
                acc += kHi[2] * t[j2];
                acc += kHi[3] * t[j3];
                return acc;
            };
            dst.a[o] = lo(tmplo);
            if (lo_only) continue;
            dst.v[o] = hi(tmplo);
            dst.h[o] = lo(tmphi);
            dst.d[o] = hi(tmphi);
        }
    }
}

// adm_decouple_s at one sample (ADM_OPT_AVOID_ATAN, ADM_OPT_RECIP_DIVISION).
void decouple(const FloatAdmScratch::Bands& ref, const FloatAdmScratch::Bands& dis, std::size_t n,
              double egl, std::array<std::vector<float>, 3>& r, std::array<std::vector<float>, 3>& a) {
    const float cos_1deg_sq =
        static_cast<float>(std::cos(1.0 * kPi / 180.0) * std::cos(1.0 * kPi / 180.0));
    const float eps = F(1e-30);
    for (std::size_t k = 0; k < n; ++k) {
        const float oh = ref.h[k], ov = ref.v[k], od = ref.d[k];
        const float th = dis.h[k], tv = dis.v[k], td = dis.d[k];
        float kh = th * float_adm_rcp(oh + eps);
        float kv = tv * float_adm_rcp(ov + eps);
        float kd = td * float_adm_rcp(od + eps);
        kh = kh < 0.0f ? 0.0f : (kh > 1.0f ? 1.0f : kh);
        kv = kv < 0.0f ? 0.0f : (kv > 1.0f ? 1.0f : kv);
        kd = kd < 0.0f ? 0.0f : (kd > 1.0f ? 1.0f : kd);
        float rst[3] = {kh * oh, kv * ov, kd * od};
        const float t[3] = {th, tv, td};
        const float ot_dp = oh * th + ov * tv;
        const float o_mag_sq = oh * oh + ov * ov;
        const float t_mag_sq = th * th + tv * tv;
        const bool angle_flag =
            (ot_dp >= 0.0f) && (ot_dp * ot_dp >= cos_1deg_sq * o_mag_sq * t_mag_sq);
        for (int b = 0; b < 3; ++b) {
            if (angle_flag && rst[b] > 0.0) {
                const double g = rst[b] * egl; // MIN(rst * egl, t): double
                rst[b] = static_cast<float>(g < t[b] ? g : t[b]);
            }
            if (angle_flag && rst[b] < 0.0) {
                const double g = rst[b] * egl; // MAX(rst * egl, t)
                rst[b] = static_cast<float>(g > t[b] ? g : t[b]);
            }
            r[b][k] = rst[b];
            a[b][k] = t[b] - rst[b];
        }
    }
}

// adm_csf_s over a whole band plane: c = rfactor * x, f = (float)(1/30 * |c|).
void csf(const std::array<std::vector<float>, 3>& src, const std::array<float, 3>& rf, std::size_t n,
         std::array<std::vector<float>, 3>& c, std::array<std::vector<float>, 3>& f) {
    for (int b = 0; b < 3; ++b)
        for (std::size_t k = 0; k < n; ++k) {
            const float v = rf[b] * src[b][k];
            c[b][k] = v;
            f[b][k] = static_cast<float>(kOneBy30 * std::fabs(v));
        }
}

float pow_p(float x, double p) { return p == 3.0 ? x * x * x : ::powf(x, static_cast<float>(p)); }

// adm_cm_s per-row sums: x = max(|rfactor * src| - thr, 0)^p over the region, with thr
// from (c, f) of the other signal (ADM_CM_THRESH_S_* macros).
void cm_rows(const std::array<std::vector<float>, 3>& src, const std::array<float, 3>& rf,
             const std::array<std::vector<float>, 3>& c, const std::array<std::vector<float>, 3>& f,
             int w, int h, std::size_t stride, const FloatAdmScaleAccum& reg, int bypass_cm,
             double p, std::array<std::vector<float>, 3>& rows) {
    for (int b = 0; b < 3; ++b) rows[b].assign(static_cast<std::size_t>(reg.bottom - reg.top), 0.0f);
    for (int i = reg.top; i < reg.bottom; ++i) {
        const int iu = i == 0 ? 1 : i - 1, id = i == h - 1 ? h - 1 : i + 1;
        float acc[3] = {0, 0, 0};
        for (int j = reg.left; j < reg.right; ++j) {
            const int jl = j == 0 ? 1 : j - 1, jr = j == w - 1 ? w - 1 : j + 1;
            float thr = 0.0f;
            if (bypass_cm == 0) {
                for (int t = 0; t < 3; ++t) {
                    const float* fu = f[t].data() + stride * iu;
                    const float* fm = f[t].data() + stride * i;
                    const float* fd = f[t].data() + stride * id;
                    float sum = 0;
                    sum += fu[jl];
                    sum += fu[j];
                    sum += fu[jr];
                    sum += fm[jl];
                    sum = static_cast<float>(sum + kOneBy15 * std::fabs(c[t][stride * i + j]));
                    sum += fm[jr];
                    sum += fd[jl];
                    sum += fd[j];
                    sum += fd[jr];
                    thr += sum;
                }
            }
            for (int b = 0; b < 3; ++b) {
                float x = src[b][stride * i + j] * rf[b];
                x = std::fabs(x) - thr;
                x = x < 0.0f ? 0.0f : x;
                acc[b] += pow_p(x, p);
            }
        }
        for (int b = 0; b < 3; ++b) rows[b][i - reg.top] = acc[b];
    }
}

// adm_csf_den_scale_s per-row sums: |rfactor * ref|^p over the region.
void den_rows(const FloatAdmScratch::Bands& ref, const std::array<float, 3>& rf, std::size_t stride,
              const FloatAdmScaleAccum& reg, double p, std::array<std::vector<float>, 3>& rows) {
    const std::vector<float>* band[3] = {&ref.h, &ref.v, &ref.d};
    for (int b = 0; b < 3; ++b) {
        rows[b].assign(static_cast<std::size_t>(reg.bottom - reg.top), 0.0f);
        for (int i = reg.top; i < reg.bottom; ++i) {
            float acc = 0;
            for (int j = reg.left; j < reg.right; ++j)
                acc += pow_p(std::fabs(rf[b] * (*band[b])[stride * i + j]), p);
            rows[b][i - reg.top] = acc;
        }
    }
}

float row_total(const std::vector<float>& rows) {
    float acc = 0;
    for (float v : rows) acc += v;
    return acc;
}

} // namespace

float float_adm_rcpss(float x) {
    std::uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    const std::uint32_t sign = u & 0x80000000u, e = (u >> 23) & 0xFFu, m = u & 0x7FFFFFu;
    std::uint32_t out;
    if (e == 255) {
        out = m ? (u | 0x400000u) : sign; // NaN stays (quiet), +-inf -> +-0
    } else if (e == 0) {
        out = sign | 0x7F800000u; // +-0 and denormals -> +-inf
    } else if (e >= 253) {
        out = sign; // the reciprocal is below the normal range: +-0
    } else {
        // 1 / 1.yyyyyyyyyyy1 (y: the top 11 mantissa bits), rounded to nearest with 12
        // fraction bits: k / 4096 with k = round(2^25 / (4097 + 2y)) in (4096, 8192).
        // No ties: the divisor is odd.
        const std::uint32_t d = 4097u + 2u * (m >> 12);
        const std::uint32_t k = ((1u << 26) + d) / (2u * d);
        out = sign | ((253u - e) << 23) | ((k - 4096u) << 11);
    }
    float r;
    std::memcpy(&r, &out, sizeof r);
    return r;
}

float float_adm_rcp(float x) {
    const float xi = float_adm_rcpss(x);
    return xi + xi * (1.0f - x * xi);
}

void float_adm_check(const FloatAdmOptions& o) {
    const auto in = [](double v, double lo, double hi) { return v >= lo && v <= hi; };
    bool ok = in(o.enhn_gain_limit, 1.0, 100.0) && in(o.norm_view_dist, 0.75, 24.0) &&
              o.ref_display_height >= 1 && o.ref_display_height <= 4320 && o.csf_mode >= 0 &&
              o.csf_mode <= 9 && in(o.csf_scale, 0.0, 50.0) && in(o.csf_diag_scale, 0.0, 50.0) &&
              in(o.noise_weight, 0.0, 1500.0) && (o.bypass_cm == 0 || o.bypass_cm == 1) &&
              in(o.p_norm, 1.0, 20.0) && in(o.dlm_weight, 0.0, 1.0) && in(o.min_val, 0.0, 1.0) &&
              (o.skip_aim_scale == -1 || (o.skip_aim_scale >= 0 && o.skip_aim_scale <= 3));
    for (int s = 0; s < 4; ++s) ok = ok && in(o.f1[s], -1.0, 10.0) && in(o.f2[s], -1.0, 10.0);
    if (!ok) throw std::invalid_argument("float_adm: option outside libvmaf's range");
    if (o.csf_mode == 1)
        throw std::invalid_argument("float_adm: adm_csf_mode 1 (Barten) is not implemented");
}

std::array<float, 3> float_adm_rfactor(const FloatAdmOptions& o, unsigned scale) {
    const int s = static_cast<int>(scale);
    float f1, f2;
    if (o.csf_mode == 2) {
        f1 = native_csf(s, o.norm_view_dist, o.ref_display_height, 0);
        f2 = native_csf(s, o.norm_view_dist, o.ref_display_height, 45);
    } else {
        f1 = 1.0f / dwt_quant_step(s, 1, o.norm_view_dist, o.ref_display_height);
        f2 = 1.0f / dwt_quant_step(s, 2, o.norm_view_dist, o.ref_display_height);
    }
    if (o.f1[s] >= 0) f1 = static_cast<float>(o.f1[s]);
    if (o.f2[s] >= 0) f2 = static_cast<float>(o.f2[s]);
    return {f1, f1, f2};
}

FloatAdmScratch::FloatAdmScratch(unsigned width, unsigned height) : w_(width), h_(height) {
    if (width < 17 || height < 17)
        throw std::invalid_argument("float_adm: frame " + std::to_string(width) + "x" +
                                    std::to_string(height) + " below 17x17");
    const std::size_t bw = (width + 1) / 2, bh = (height + 1) / 2, n = bw * bh;
    ref.assign(std::size_t{width} * height, 0.0f);
    dis.assign(std::size_t{width} * height, 0.0f);
    for (Bands* b : {&ref_b, &dis_b})
        for (auto* v : {&b->a, &b->h, &b->v, &b->d}) v->assign(n, 0.0f);
    ref_a.assign(n, 0.0f);
    dis_a.assign(n, 0.0f);
    tmp_lo.assign(width, 0.0f);
    tmp_hi.assign(width, 0.0f);
    for (int k = 0; k < 3; ++k)
        for (auto* v : {&r[k], &a[k], &csf_r[k], &csf_a[k], &flt_r[k], &flt_a[k]}) v->assign(n, 0.0f);
}

void float_adm_accumulate(const LumaView& ref, const LumaView& dis, const FloatAdmOptions& opt,
                          FloatAdmScratch& s, FloatAdmAccum& out) {
    if (ref.width != s.width() || ref.height != s.height() || dis.width != ref.width ||
        dis.height != ref.height || dis.bpc != ref.bpc)
        throw std::invalid_argument("float_adm_accumulate: planes do not match the scratch");
    float_adm_check(opt);
    float_picture_copy(ref, s.ref.data(), ref.width);
    float_picture_copy(dis, s.dis.data(), dis.width);
    const std::size_t bstride = (s.width() + 1) / 2;
    int w = static_cast<int>(ref.width), h = static_cast<int>(ref.height);
    const float* src_r = s.ref.data();
    const float* src_d = s.dis.data();
    std::size_t sstride = ref.width;
    for (unsigned scale = 0; scale < 4; ++scale) {
        FloatAdmScaleAccum& acc = out.scale[scale];
        const bool skip = scale == 0 && opt.skip_scale0;
        dwt2(src_r, sstride, w, h, s.ref_b, bstride, skip, s.tmp_lo, s.tmp_hi);
        dwt2(src_d, sstride, w, h, s.dis_b, bstride, skip, s.tmp_lo, s.tmp_hi);
        w = (w + 1) / 2;
        h = (h + 1) / 2;
        acc.left = static_cast<int>(w * 0.1 - 0.5);
        acc.top = static_cast<int>(h * 0.1 - 0.5);
        acc.right = w - acc.left;
        acc.bottom = h - acc.top;
        for (int b = 0; b < 3; ++b) {
            acc.den_row[b].clear();
            acc.num_row[b].clear();
            acc.aim_row[b].clear();
        }
        if (!skip) {
            const std::size_t n = bstride * static_cast<std::size_t>(h);
            const std::array<float, 3> rf = float_adm_rfactor(opt, scale);
            decouple(s.ref_b, s.dis_b, n, opt.enhn_gain_limit, s.r, s.a);
            den_rows(s.ref_b, rf, bstride, acc, opt.p_norm, acc.den_row);
            csf(s.a, rf, n, s.csf_a, s.flt_a);
            csf(s.r, rf, n, s.csf_r, s.flt_r);
            cm_rows(s.r, rf, s.csf_a, s.flt_a, w, h, bstride, acc, opt.bypass_cm, opt.p_norm,
                    acc.num_row);
            cm_rows(s.a, rf, s.csf_r, s.flt_r, w, h, bstride, acc, opt.bypass_cm, opt.p_norm,
                    acc.aim_row);
        }
        // Band a is the next scale's input (libvmaf reads it in place; a copy is the same).
        s.ref_a.assign(s.ref_b.a.begin(), s.ref_b.a.end());
        s.dis_a.assign(s.dis_b.a.begin(), s.dis_b.a.end());
        src_r = s.ref_a.data();
        src_d = s.dis_a.data();
        sstride = bstride;
    }
}

FloatAdmScores float_adm_finish(const FloatAdmAccum& acc, const FloatAdmOptions& opt,
                                unsigned width, unsigned height) {
    FloatAdmScores out;
    const double numden_limit =
        1e-10 * (static_cast<int>(width) * static_cast<int>(height)) / (1920.0 * 1080.0);
    const float inv_p = static_cast<float>(1.0f / opt.p_norm);
    double num = 0, den = 0, aim_num = 0, aim_den = 0;
    for (int scale = 0; scale < 4; ++scale) {
        const FloatAdmScaleAccum& a = acc.scale[scale];
        float num_scale = 0.0f, den_scale = 0.0f, aim_scale = 0.0f;
        if (scale == 0 && opt.skip_scale0) {
            den_scale = F(1e-10);
        } else {
            const int area = (a.right - a.left) * (a.bottom - a.top);
            const float noise = ::powf(static_cast<float>(area * opt.noise_weight), inv_p);
            const float no_noise = ::powf(static_cast<float>(area * 0.0), inv_p);
            float d[3], n[3], m[3];
            for (int b = 0; b < 3; ++b) {
                d[b] = ::powf(row_total(a.den_row[b]), inv_p) + noise;
                n[b] = ::powf(row_total(a.num_row[b]), inv_p) + noise;
                m[b] = ::powf(row_total(a.aim_row[b]), inv_p) + no_noise;
            }
            den_scale = d[0] + d[1] + d[2];
            num_scale = n[0] + n[1] + n[2];
            aim_scale = m[0] + m[1] + m[2];
        }
        num += num_scale;
        den += den_scale;
        if (opt.skip_aim_scale != scale) {
            aim_den += den_scale;
            aim_num += aim_scale;
        }
        out.num[scale] = num_scale;
        out.den[scale] = den_scale;
    }
    num = num < numden_limit ? 0 : num;
    den = den < numden_limit ? 0 : den;
    if (den == 0.0) {
        out.adm2 = 1.0f;
        out.aim = 0.0; // libvmaf leaves it unset here
    } else {
        const double q = aim_num / aim_den;
        out.aim = q < 1.0f ? q : 1.0f;
        out.adm2 = num / den;
    }
    out.num_total = num;
    out.den_total = den;
    const double score = out.adm2, aim = out.aim;
    double adm3 = opt.adm3_apply_hm ? 2 * score * aim / (score + aim)
                                    : score * opt.dlm_weight + (1 - aim) * (1 - opt.dlm_weight);
    out.adm3 = adm3 > opt.min_val ? adm3 : opt.min_val;
    for (int k = 0; k < 4; ++k) out.scale[k] = out.num[k] / out.den[k];
    return out;
}

FloatAdmNames float_adm_feature_names(const FloatAdmOptions& o) {
    std::vector<FeatureParam> p;
    const auto dbl = [&](double v, double def, const char* name, const char* alias) {
        if (v != def) p.push_back({name, alias, format_g(v)});
    };
    dbl(o.enhn_gain_limit, 100.0, "adm_enhn_gain_limit", "egl");
    dbl(o.norm_view_dist, 3.0, "adm_norm_view_dist", "nvd");
    dbl(o.noise_weight, 0.03125, "adm_noise_weight", "nw");
    dbl(o.csf_scale, 1.0, "adm_csf_scale", "scf");
    dbl(o.csf_diag_scale, 1.0, "adm_csf_diag_scale", "scfd");
    if (o.ref_display_height != 1080)
        p.push_back({"adm_ref_display_height", "rdf", std::to_string(o.ref_display_height)});
    if (o.csf_mode != 0) p.push_back({"adm_csf_mode", "csf", std::to_string(o.csf_mode)});
    if (o.bypass_cm != 0) p.push_back({"adm_bypass_cm", "bcm", std::to_string(o.bypass_cm)});
    if (o.adm3_apply_hm) p.push_back({"adm_adm3_apply_hm", "aah", ""});
    dbl(o.p_norm, 3.0, "adm_p_norm", "apn");
    dbl(o.dlm_weight, 0.5, "adm_dlm_weight", "dlmw");
    dbl(o.min_val, 0.0, "adm_min_val", "min");
    static const char* f1n[4] = {"adm_f1s0", "adm_f1s1", "adm_f1s2", "adm_f1s3"};
    static const char* f2n[4] = {"adm_f2s0", "adm_f2s1", "adm_f2s2", "adm_f2s3"};
    for (int s = 0; s < 4; ++s) {
        dbl(o.f1[s], -1.0, f1n[s], f1n[s] + 4);
        dbl(o.f2[s], -1.0, f2n[s], f2n[s] + 4);
    }
    if (o.skip_aim_scale != -1)
        p.push_back({"adm_skip_aim_scale", "sasc", std::to_string(o.skip_aim_scale)});
    if (o.skip_scale0) p.push_back({"adm_skip_scale0", "ssz", ""});
    FloatAdmNames n;
    n.adm2 = float_feature_name("adm2", p);
    n.aim = float_feature_name("aim", p);
    n.adm3 = float_feature_name("adm3", p);
    for (int s = 0; s < 4; ++s)
        n.scale[s] = float_feature_name("adm_scale" + std::to_string(s), p);
    return n;
}

} // namespace vmaf_cuda::ref

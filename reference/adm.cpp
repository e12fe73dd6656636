// SPDX-License-Identifier: BSD-2-Clause-Patent
// CPU reference of libvmaf v3.2.0 integer ADM (libvmaf/src/feature/integer_adm.c,
// scalar C functions adm_dwt2_8/16, adm_dwt2_s123_combined, adm_decouple(_s123),
// adm_csf(_den_scale|_den_s123), i4_adm_csf, adm_cm, i4_adm_cm, integer_compute_adm).
// Written as plain loops over whole planes; the integer formulas are in adm_math.h.

#include "adm.h"

#include "adm_math.h"

#include <math.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace vmaf_cuda::ref {

namespace {

using namespace adm_math;

constexpr double kPi = 3.14159265358979323846;

/// libvmaf's (uint16_t) of a double as gcc compiles it for x86-64: truncation to int32
/// (cvttsd2si; INT32_MIN when out of range or NaN), then the low 16 bits. The CSF
/// weights of adm_csf_mode 1 exceed 2^16 at scale 0 for most geometries and wrap so.
std::uint16_t x86_u16(double x) {
    const std::int32_t i =
        (x > -2147483649.0 && x < 2147483648.0) ? static_cast<std::int32_t>(x) : INT32_MIN;
    return static_cast<std::uint16_t>(static_cast<std::uint32_t>(i));
}

/// libvmaf's (uint32_t) of a double on x86-64: truncation to int64 (cvttsd2si; INT64_MIN
/// when out of range or NaN), then the low 32 bits.
std::uint32_t x86_u32(double x) {
    const std::int64_t i = (x >= -9223372036854775808.0 && x < 9223372036854775808.0)
                               ? static_cast<std::int64_t>(x)
                               : INT64_MIN;
    return static_cast<std::uint32_t>(static_cast<std::uint64_t>(i));
}

/// uint32 of pow(2, shift - 1) as libvmaf computes it; shift 0 gives 2^(2^32-1) = inf,
/// which x86-64 converts to 0.
std::uint64_t half_of(int shift) { return shift > 0 ? (std::uint64_t{1} << (shift - 1)) : 0; }

struct Region {
    int left, top, right, bottom;
};

/// Region where libvmaf decouples and applies the CSF: the evaluated region grown by
/// one sample on the top/left and two on the bottom/right (filter taps), clipped.
Region decouple_region(int bw, int bh) {
    int left = static_cast<int>(bw * 0.1 - 0.5 - 1);
    int top = static_cast<int>(bh * 0.1 - 0.5 - 1);
    int right = bw - left + 2;
    int bottom = bh - top + 2;
    if (left < 0) left = 0;
    if (right > bw) right = bw;
    if (top < 0) top = 0;
    if (bottom > bh) bottom = bh;
    return {left, top, right, bottom};
}

/// Scale 0 DWT of a raw luma plane into int16-valued bands (a, v, h, d).
void dwt_scale0(const LumaView& in, AdmScratch::Bands& out, AdmScratch& s, int bw, int bh) {
    const int w = static_cast<int>(in.width), h = static_cast<int>(in.height);
    const int bpc = static_cast<int>(in.bpc);
    std::int32_t* lo = s.tmp_lo.data();
    std::int32_t* hi = s.tmp_hi.data();
    for (int i = 0; i < bh; ++i) {
        const unsigned r0 = static_cast<unsigned>(dwt_mirror(2 * i - 1, h));
        const unsigned r1 = static_cast<unsigned>(dwt_mirror(2 * i, h));
        const unsigned r2 = static_cast<unsigned>(dwt_mirror(2 * i + 1, h));
        const unsigned r3 = static_cast<unsigned>(dwt_mirror(2 * i + 2, h));
        for (int j = 0; j < w; ++j) {
            const unsigned x = static_cast<unsigned>(j);
            const int s0 = in.at(x, r0), s1 = in.at(x, r1), s2 = in.at(x, r2), s3 = in.at(x, r3);
            lo[j] = dwt0_vert_lo(s0, s1, s2, s3, bpc);
            hi[j] = dwt0_vert_hi(s0, s1, s2, s3, bpc);
        }
        for (int j = 0; j < bw; ++j) {
            const int c0 = dwt_mirror(2 * j - 1, w), c1 = dwt_mirror(2 * j, w);
            const int c2 = dwt_mirror(2 * j + 1, w), c3 = dwt_mirror(2 * j + 2, w);
            const std::size_t o = static_cast<std::size_t>(i) * bw + j;
            out.a[o] = dwt0_horz_lo(lo[c0], lo[c1], lo[c2], lo[c3]);
            out.v[o] = dwt0_horz_hi(lo[c0], lo[c1], lo[c2], lo[c3]);
            out.h[o] = dwt0_horz_lo(hi[c0], hi[c1], hi[c2], hi[c3]);
            out.d[o] = dwt0_horz_hi(hi[c0], hi[c1], hi[c2], hi[c3]);
        }
    }
}

/// Scale 1..3 DWT of an int32 plane (w x h, stride w) into int32 bands.
void dwt_scale123(const std::int32_t* in, int w, int h, int scale, AdmScratch::Bands& out,
                  AdmScratch& s, int bw, int bh) {
    std::int32_t* lo = s.tmp_lo.data();
    std::int32_t* hi = s.tmp_hi.data();
    for (int i = 0; i < bh; ++i) {
        const std::int32_t* p0 = in + static_cast<std::size_t>(dwt_mirror(2 * i - 1, h)) * w;
        const std::int32_t* p1 = in + static_cast<std::size_t>(dwt_mirror(2 * i, h)) * w;
        const std::int32_t* p2 = in + static_cast<std::size_t>(dwt_mirror(2 * i + 1, h)) * w;
        const std::int32_t* p3 = in + static_cast<std::size_t>(dwt_mirror(2 * i + 2, h)) * w;
        for (int j = 0; j < w; ++j) {
            lo[j] = dwt123_vert(dwt_lo(p0[j], p1[j], p2[j], p3[j]), scale);
            hi[j] = dwt123_vert(dwt_hi(p0[j], p1[j], p2[j], p3[j]), scale);
        }
        for (int j = 0; j < bw; ++j) {
            const int c0 = dwt_mirror(2 * j - 1, w), c1 = dwt_mirror(2 * j, w);
            const int c2 = dwt_mirror(2 * j + 1, w), c3 = dwt_mirror(2 * j + 2, w);
            const std::size_t o = static_cast<std::size_t>(i) * bw + j;
            out.a[o] = dwt123_horz(dwt_lo(lo[c0], lo[c1], lo[c2], lo[c3]), scale);
            out.v[o] = dwt123_horz(dwt_hi(lo[c0], lo[c1], lo[c2], lo[c3]), scale);
            out.h[o] = dwt123_horz(dwt_lo(hi[c0], hi[c1], hi[c2], hi[c3]), scale);
            out.d[o] = dwt123_horz(dwt_hi(hi[c0], hi[c1], hi[c2], hi[c3]), scale);
        }
    }
}

/// Decoupling over the decouple region: rst = restored, add = additive impairment.
void decouple_scale(int scale, const AdmScaleParams& p, const AdmFactors& f, AdmScratch& s) {
    const Region d = decouple_region(p.bw, p.bh);
    const AdmScratch::Bands& o = s.ref_bands;
    const AdmScratch::Bands& t = s.dis_bands;
    for (int i = d.top; i < d.bottom; ++i) {
        for (int j = d.left; j < d.right; ++j) {
            const std::size_t k = static_cast<std::size_t>(i) * p.bw + j;
            const bool flag = angle_flag(o.h[k], o.v[k], t.h[k], t.v[k], f.cos1_sq);
            const std::int32_t ob[3] = {o.h[k], o.v[k], o.d[k]};
            const std::int32_t tb[3] = {t.h[k], t.v[k], t.d[k]};
            for (int b = 0; b < 3; ++b) {
                if (scale == 0)
                    decouple0(ob[b], tb[b], flag, f.enhn_gain_limit, s.rst[b][k], s.add[b][k]);
                else
                    decouple123(ob[b], tb[b], flag, f.enhn_gain_limit, s.rst[b][k], s.add[b][k]);
            }
        }
    }
}

/// Denominator: per-row sums of reference band cubes over the evaluated region.
void accumulate_den(int scale, const AdmScaleParams& p, const AdmScratch& s,
                    std::uint64_t out[3]) {
    const std::vector<std::int32_t>* band[3] = {&s.ref_bands.h, &s.ref_bands.v, &s.ref_bands.d};
    for (int b = 0; b < 3; ++b) {
        std::uint64_t total = 0;
        for (int i = p.top; i < p.bottom; ++i) {
            std::uint64_t row = 0;
            for (int j = p.left; j < p.right; ++j) {
                const std::int32_t x = (*band[b])[static_cast<std::size_t>(i) * p.bw + j];
                row += scale == 0 ? den0_cube(x)
                                  : den123_cube(x, p.den_sq_shift, p.den_sq_add,
                                                p.den_cub_shift, p.den_cub_add);
            }
            total += row_shift_unsigned(row, p.den_row_add, p.den_row_shift);
        }
        out[b] = total;
    }
}

/// One contrast-masking pass: `mask` (3 bands) is CSF-weighted over the decouple region
/// and thresholds `xsrc` (3 bands); per-row sums of cm_cube over the evaluated region.
void accumulate_cm(int scale, const AdmScaleParams& p, const AdmFactors& f,
                   std::vector<std::int32_t> (&mask)[3], std::vector<std::int32_t> (&xsrc)[3],
                   AdmScratch& s, std::int64_t out[3]) {
    static constexpr int kCsf0Shift[3] = {15, 15, 17};
    static constexpr std::int32_t kCsf0Add[3] = {16384, 16384, 65535};
    const Region d = decouple_region(p.bw, p.bh);
    for (int b = 0; b < 3; ++b) {
        for (int i = d.top; i < d.bottom; ++i) {
            for (int j = d.left; j < d.right; ++j) {
                const std::size_t k = static_cast<std::size_t>(i) * p.bw + j;
                if (scale == 0) {
                    const std::int32_t c = csf0(mask[b][k], f.i_rfactor0[b], kCsf0Shift[b], kCsf0Add[b]);
                    s.csf[b][k] = c;
                    s.flt[b][k] = csf0_flt(c);
                } else {
                    const std::int32_t c = csf123(mask[b][k], f.i_rfactor[scale][b]);
                    s.csf[b][k] = c;
                    s.flt[b][k] = csf123_flt(c);
                }
            }
        }
    }
    std::int64_t total[3] = {0, 0, 0};
    for (int i = p.top; i < p.bottom; ++i) {
        std::int64_t row[3] = {0, 0, 0};
        for (int j = p.left; j < p.right; ++j) {
            const std::size_t k = static_cast<std::size_t>(i) * p.bw + j;
            std::int32_t thr = 0;
            for (int b = 0; b < 3; ++b) {
                for (int di = -1; di <= 1; ++di) {
                    const std::size_t rr = static_cast<std::size_t>(cm_mirror(i + di, p.bh)) * p.bw;
                    for (int dj = -1; dj <= 1; ++dj) {
                        if (di == 0 && dj == 0)
                            thr = add_i32(thr, scale == 0 ? cm0_center(s.csf[b][k])
                                                          : cm123_center(s.csf[b][k]));
                        else
                            thr = add_i32(thr, s.flt[b][rr + cm_mirror(j + dj, p.bw)]);
                    }
                }
            }
            for (int b = 0; b < 3; ++b) {
                const std::int32_t x = scale == 0 ? cm0_x(xsrc[b][k], f.i_rfactor0[b])
                                                  : cm123_x(xsrc[b][k], f.i_rfactor[scale][b]);
                row[b] = add_i64(row[b], cm_cube(x, thr, p.cm_sub_shift[b], p.cm_sq_shift[b],
                                                 p.cm_sq_add[b], p.cm_cub_shift[b],
                                                 p.cm_cub_add[b]));
            }
        }
        for (int b = 0; b < 3; ++b)
            total[b] = add_i64(total[b], row_shift_signed(row[b], p.cm_row_add, p.cm_row_shift));
    }
    for (int b = 0; b < 3; ++b) out[b] = total[b];
}

} // namespace

AdmScaleParams adm_scale_params(unsigned w, unsigned h, unsigned scale) {
    AdmScaleParams p{};
    int iw = static_cast<int>(w), ih = static_cast<int>(h);
    for (unsigned s = 0; s < scale; ++s) {
        iw = (iw + 1) / 2;
        ih = (ih + 1) / 2;
    }
    p.in_w = iw;
    p.in_h = ih;
    p.bw = (iw + 1) / 2;
    p.bh = (ih + 1) / 2;
    p.left = static_cast<int>(p.bw * 0.1 - 0.5);
    p.top = static_cast<int>(p.bh * 0.1 - 0.5);
    p.right = p.bw - p.left;
    p.bottom = p.bh - p.top;
    const int rw = p.right - p.left, rh = p.bottom - p.top;
    if (scale == 0) {
        p.den_sq_shift = 0;
        p.den_sq_add = 0;
        p.den_cub_shift = 0;
        p.den_cub_add = 0;
        int sh = static_cast<int>(std::ceil(std::log2(static_cast<double>(rh * rw)) - 20));
        p.den_row_shift = sh > 0 ? sh : 0;
        p.den_row_add = half_of(p.den_row_shift);
        static constexpr int kSub[3] = {10, 10, 12}, kSq[3] = {29, 29, 30}, kCub[3] = {4, 4, 3};
        for (int b = 0; b < 3; ++b) {
            p.cm_sub_shift[b] = kSub[b];
            p.cm_sq_shift[b] = kSq[b];
            p.cm_sq_add[b] = std::int64_t{1} << (kSq[b] - 1);
            // (uint32)ceil(log2(bw) - c): non-negative for bw >= 9 (ceil of (-1, 0] is 0)
            const double c = std::ceil(std::log2(static_cast<double>(p.bw)) - kCub[b]);
            p.cm_cub_shift[b] = c > 0 ? static_cast<int>(c) : 0;
            p.cm_cub_add[b] = static_cast<std::int64_t>(half_of(p.cm_cub_shift[b]));
        }
    } else {
        static constexpr int kSq[3] = {31, 30, 31};
        p.den_sq_shift = kSq[scale - 1];
        p.den_sq_add = std::uint64_t{1} << p.den_sq_shift;
        p.den_cub_shift = static_cast<int>(std::ceil(std::log2(static_cast<double>(rw))));
        p.den_cub_add = half_of(p.den_cub_shift);
        p.den_row_shift = static_cast<int>(std::ceil(std::log2(static_cast<double>(rh))));
        p.den_row_add = half_of(p.den_row_shift);
        const int cub = static_cast<int>(std::ceil(std::log2(static_cast<double>(p.bw))));
        for (int b = 0; b < 3; ++b) {
            p.cm_sub_shift[b] = 0;
            p.cm_sq_shift[b] = 30;
            p.cm_sq_add[b] = std::int64_t{1} << 29;
            p.cm_cub_shift[b] = cub;
            p.cm_cub_add[b] = static_cast<std::int64_t>(half_of(cub));
        }
    }
    p.cm_row_shift = static_cast<int>(std::ceil(std::log2(static_cast<double>(p.bh))));
    p.cm_row_add = static_cast<std::int64_t>(half_of(p.cm_row_shift));
    return p;
}

AdmFactors adm_factors(const AdmOptions& opt) {
    if (opt.csf_mode < 0 || opt.csf_mode > 3)
        throw std::invalid_argument("adm: adm_csf_mode must be 0..3");
    if (opt.norm_view_dist * opt.ref_display_height < 3.0 * 1080)
        throw std::invalid_argument(
            "adm: adm_norm_view_dist * adm_ref_display_height must be >= 3240 (libvmaf)");
    if (!(opt.enhn_gain_limit >= 1.0))
        throw std::invalid_argument("adm: adm_enhn_gain_limit must be >= 1");
    AdmFactors f{};
    for (int s = 0; s < 4; ++s) {
        const float hv = adm_csf_factor(opt, s, false);
        const float dd = adm_csf_factor(opt, s, true);
        f.rfactor[s][0] = hv;
        f.rfactor[s][1] = hv;
        f.rfactor[s][2] = dd;
        if (s > 0)
            for (int b = 0; b < 3; ++b)
                f.i_rfactor[s][b] = x86_u32(f.rfactor[s][b] * pow(2, 32));
    }
    // libvmaf's hard-coded scale-0 weights: Watson at 3240 pixels of viewing distance only.
    if (std::fabs(opt.norm_view_dist * opt.ref_display_height - 3.0 * 1080) < 1.0e-8 &&
        opt.csf_mode == 0) {
        f.i_rfactor0[0] = 36453;
        f.i_rfactor0[1] = 36453;
        f.i_rfactor0[2] = 49417;
    } else {
        f.i_rfactor0[0] = x86_u16(f.rfactor[0][0] * pow(2, 21));
        f.i_rfactor0[1] = x86_u16(f.rfactor[0][1] * pow(2, 21));
        f.i_rfactor0[2] = x86_u16(f.rfactor[0][2] * pow(2, 23));
    }
    const double c = cos(1.0 * kPi / 180.0);
    f.cos1_sq = static_cast<float>(c * c);
    f.enhn_gain_limit = opt.enhn_gain_limit;
    return f;
}

AdmScratch::AdmScratch(unsigned w, unsigned h) : w_(w), h_(h) {
    if (w < kAdmMinSize || h < kAdmMinSize)
        throw std::invalid_argument("adm: width and height must be >= " +
                                    std::to_string(kAdmMinSize));
    const std::size_t bands = static_cast<std::size_t>((w + 1) / 2) * ((h + 1) / 2);
    for (Bands* b : {&ref_bands, &dis_bands}) {
        b->a.assign(bands, 0);
        b->h.assign(bands, 0);
        b->v.assign(bands, 0);
        b->d.assign(bands, 0);
    }
    ref_lo_next.assign(bands, 0);
    dis_lo_next.assign(bands, 0);
    tmp_lo.assign(w, 0);
    tmp_hi.assign(w, 0);
    for (int b = 0; b < 3; ++b) {
        rst[b].assign(bands, 0);
        add[b].assign(bands, 0);
        csf[b].assign(bands, 0);
        flt[b].assign(bands, 0);
    }
}

void adm_accumulate(const LumaView& ref, const LumaView& dis, const AdmOptions& opt,
                    AdmScratch& s, AdmAccum& out) {
    if (ref.width != s.width() || ref.height != s.height() || dis.width != s.width() ||
        dis.height != s.height())
        throw std::invalid_argument("adm: picture size differs from the scratch size");
    if (ref.bpc < 8 || ref.bpc > 16 || dis.bpc != ref.bpc)
        throw std::invalid_argument("adm: bpc must be 8..16 and equal for both pictures");
    const AdmFactors f = adm_factors(opt);
    out = AdmAccum{};

    for (int scale = 0; scale < 4; ++scale) {
        const AdmScaleParams p = adm_scale_params(s.width(), s.height(), scale);
        if (scale == 0) {
            dwt_scale0(ref, s.ref_bands, s, p.bw, p.bh);
            dwt_scale0(dis, s.dis_bands, s, p.bw, p.bh);
        } else {
            dwt_scale123(s.ref_lo_next.data(), p.in_w, p.in_h, scale, s.ref_bands, s, p.bw, p.bh);
            dwt_scale123(s.dis_lo_next.data(), p.in_w, p.in_h, scale, s.dis_bands, s, p.bw, p.bh);
        }
        if (!(scale == 0 && opt.skip_scale0)) {
            decouple_scale(scale, p, f, s);
            accumulate_den(scale, p, s, out.den[scale]);
            // detail loss: restored values thresholded by the additive impairment
            accumulate_cm(scale, p, f, s.add, s.rst, s, out.num[scale]);
            // additive impairment thresholded by the restored values
            if (!opt.skip_aim) accumulate_cm(scale, p, f, s.rst, s.add, s, out.aim[scale]);
        }
        const std::size_t n = static_cast<std::size_t>(p.bw) * p.bh;
        std::copy(s.ref_bands.a.begin(), s.ref_bands.a.begin() + n, s.ref_lo_next.begin());
        std::copy(s.dis_bands.a.begin(), s.dis_bands.a.begin() + n, s.dis_lo_next.begin());
    }
}

namespace {

constexpr float kThird = 1.0f / 3.0f;

/// Scale 0 num/aim tail (adm_cm return value).
float cm_scale0(const std::int64_t acc[3], const AdmScaleParams& p, double noise_weight) {
    const unsigned row = static_cast<unsigned>(p.cm_row_shift);
    const unsigned exps[3] = {52u - static_cast<unsigned>(p.cm_cub_shift[0]) - row,
                              52u - static_cast<unsigned>(p.cm_cub_shift[1]) - row,
                              57u - static_cast<unsigned>(p.cm_cub_shift[2]) - row};
    const int area = (p.bottom - p.top) * (p.right - p.left);
    float band[3];
    for (int b = 0; b < 3; ++b) {
        const float fa = static_cast<float>(static_cast<double>(acc[b]) / pow(2, exps[b]));
        band[b] = powf(fa, kThird) + powf(static_cast<float>(area * noise_weight), kThird);
    }
    return band[0] + band[1] + band[2];
}

/// Scales 1..3 num/aim tail (i4_adm_cm return value): int64 -> float, float division.
float cm_scale123(const std::int64_t acc[3], const AdmScaleParams& p, int scale,
                  double noise_weight) {
    static constexpr unsigned kBase[3] = {45u, 39u, 36u};
    const unsigned e = kBase[scale - 1] - static_cast<unsigned>(p.cm_cub_shift[0]) -
                       static_cast<unsigned>(p.cm_row_shift);
    const float final_shift = static_cast<float>(pow(2, e));
    const int area = (p.bottom - p.top) * (p.right - p.left);
    float band[3];
    for (int b = 0; b < 3; ++b) {
        const float fa = static_cast<float>(acc[b]) / final_shift;
        band[b] = powf(fa, kThird) + powf(static_cast<float>(area * noise_weight), kThird);
    }
    return band[0] + band[1] + band[2];
}

/// Denominator tail (adm_csf_den_scale / adm_csf_den_s123 return value).
float den_scale(const std::uint64_t acc[3], const AdmScaleParams& p, int scale,
                const AdmFactors& f, double noise_weight) {
    double shift_csf;
    if (scale == 0) {
        shift_csf = pow(2, 18 - p.den_row_shift);
    } else {
        static constexpr unsigned kConv[3] = {32u, 27u, 23u};
        const unsigned e = kConv[scale - 1] - static_cast<unsigned>(p.den_row_shift) -
                           static_cast<unsigned>(p.den_cub_shift);
        shift_csf = pow(2, e);
    }
    const int area = (p.bottom - p.top) * (p.right - p.left);
    const float noise = powf(static_cast<float>(area * noise_weight), kThird);
    float band[3];
    for (int b = 0; b < 3; ++b) {
        const double csf = static_cast<double>(static_cast<double>(acc[b]) / shift_csf) *
                           pow(static_cast<double>(f.rfactor[scale][b]), 3);
        band[b] = powf(static_cast<float>(csf), kThird) + noise;
    }
    return band[0] + band[1] + band[2];
}

} // namespace

AdmScores adm_finish(const AdmAccum& acc, const AdmOptions& opt, unsigned w, unsigned h) {
    const AdmFactors f = adm_factors(opt);
    double num = 0, den = 0, aim_num = 0;
    double scores[8];
    for (int scale = 0; scale < 4; ++scale) {
        const AdmScaleParams p = adm_scale_params(w, h, static_cast<unsigned>(scale));
        float num_s = 0.0f, den_s = 0.0f, aim_s = 0.0f;
        if (scale == 0 && opt.skip_scale0) {
            den_s = 1e-10f;
        } else {
            den_s = den_scale(acc.den[scale], p, scale, f, opt.noise_weight);
            if (scale == 0) {
                num_s = cm_scale0(acc.num[0], p, opt.noise_weight);
                if (!opt.skip_aim) aim_s = cm_scale0(acc.aim[0], p, 0.0);
            } else {
                num_s = cm_scale123(acc.num[scale], p, scale, opt.noise_weight);
                if (!opt.skip_aim) aim_s = cm_scale123(acc.aim[scale], p, scale, 0.0);
            }
        }
        num += num_s;
        den += den_s;
        aim_num += aim_s;
        scores[2 * scale] = num_s;
        scores[2 * scale + 1] = den_s;
    }
    const int wi = static_cast<int>(w), hi = static_cast<int>(h);
    const double limit = 1e-10 * (wi * hi) / (1920.0 * 1080.0);
    num = num < limit ? 0 : num;
    den = den < limit ? 0 : den;

    AdmScores out;
    double aim = 0.0; // libvmaf leaves it unset when den == 0
    double score;
    if (den == 0.0) {
        score = 1.0f;
    } else {
        aim = aim_num / den;
        score = num / den;
    }
    out.adm2 = score;
    out.aim = aim;
    const double adm3 = score * opt.dlm_weight + (1 - aim) * (1 - opt.dlm_weight);
    out.adm3 = adm3 > opt.min_val ? adm3 : opt.min_val;
    for (int k = 0; k < 4; ++k) out.scale[k] = scores[2 * k] / scores[2 * k + 1];
    return out;
}

} // namespace vmaf_cuda::ref

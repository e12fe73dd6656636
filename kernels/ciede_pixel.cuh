// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file ciede_pixel.cuh
/// The per-pixel CIEDE2000 of libvmaf v3.2.0 (libvmaf/src/feature/ciede.c:
/// `get_lab_color`, `rgb_to_xyz_map`, `xyz_to_lab_map`, `ciede2000` and its helpers), as
/// a `__host__ __device__` function: reference/ciede.cpp's ciede_de00() expression for
/// expression (same float/double types, same order, no contraction), with glibc's libm
/// calls replaced by glibc_math.cuh's bit-identical versions. Compiles as plain C++ too,
/// so the host tests compare it with ref::ciede_de00() on the CPU.
///
/// libvmaf's `pow(x, 2)` / `powf(x, 2)` are x * x (GCC compiles them so: exact, and
/// reference/ciede.cpp's object calls pow/powf only for the other exponents);
/// `pow(25, 7)` and `powf(25., 7)` are compile-time constants (6103515625 and its float
/// rounding); sqrt is IEEE (correctly rounded on host and device).

#include "glibc_math.cuh"

namespace vmaf_cuda::cuda {

namespace ciede_detail {

constexpr double kPi = 3.14159265358979323846; // M_PI

VMAF_GM_HD double sqrt_rn(double x) {
#ifdef __CUDA_ARCH__
    return __dsqrt_rn(x);
#else
    return std::sqrt(x);
#endif
}
VMAF_GM_HD float fabsf_(float x) { return glibc::detail::asf32(glibc::detail::asu32(x) & 0x7fffffffu); }
VMAF_GM_HD double d(float x) { return static_cast<double>(x); }

VMAF_GM_HD float get_h_prime(const float x, const float y) {
    if ((x == 0.0) && (y == 0.0)) return 0.0f;
    float hue_angle = static_cast<float>(glibc::atan2(d(x), d(y)));
    if (hue_angle < 0.0) hue_angle = static_cast<float>(hue_angle + 2. * kPi);
    return hue_angle;
}

VMAF_GM_HD float get_delta_h_prime(const float c1, const float c2, const float h_prime_1,
                                   const float h_prime_2) {
    if ((c1 == 0.0) || (c2 == 0.0)) return 0.0f;
    if (fabsf_(h_prime_1 - h_prime_2) <= kPi) return h_prime_2 - h_prime_1;
    if (h_prime_2 <= h_prime_1) return static_cast<float>((h_prime_2 - h_prime_1) + 2. * kPi);
    return static_cast<float>((h_prime_2 - h_prime_1) - 2. * kPi);
}

VMAF_GM_HD float get_upcase_h_bar_prime(const float h_prime_1, const float h_prime_2) {
    return static_cast<float>(glibc::detail::fabs(d(h_prime_1 - h_prime_2)) > kPi
                                  ? ((h_prime_1 + h_prime_2) + 2.0 * kPi) / 2.0
                                  : (h_prime_1 + h_prime_2) / 2.0);
}

VMAF_GM_HD float get_upcase_t(const float upcase_h_bar_prime) {
    const double h = upcase_h_bar_prime;
    return static_cast<float>(1.0 - 0.17 * glibc::cos(h - kPi / 6.0) + 0.24 * glibc::cos(2.0 * h) +
                              0.32 * glibc::cos(3.0 * h + kPi / 30.0) -
                              0.20 * glibc::cos(4.0 * h - 7.0 * kPi / 20.0));
}

VMAF_GM_HD float radians_to_degrees(const float radians) {
    return static_cast<float>(radians * (180.0 / kPi));
}
VMAF_GM_HD float degrees_to_radians(const float degrees) {
    return static_cast<float>(degrees * (kPi / 180.0));
}

VMAF_GM_HD float get_r_sub_t(const float c_bar_prime, const float upcase_h_bar_prime) {
    const float degrees =
        static_cast<float>((radians_to_degrees(upcase_h_bar_prime) - 275.0) * (1.0 / 25.0));
    constexpr float k25_7f = static_cast<float>(6103515625.0); // powf(25., 7), folded
    const float ratio = glibc::powf(c_bar_prime, 7) / (glibc::powf(c_bar_prime, 7) + k25_7f);
    const float e = -(degrees * degrees); // powf(degrees, 2)
    return static_cast<float>(
        -2.0 * sqrt_rn(d(ratio)) *
        glibc::sin(d(degrees_to_radians(static_cast<float>(60.0 * glibc::exp(d(e)))))));
}

struct LabColor {
    float l, a, b;
};

VMAF_GM_HD double sq(double x) { return x * x; } // pow(x, 2)

VMAF_GM_HD float ciede2000(const LabColor color_1, const LabColor color_2) {
    constexpr double k25_7 = 6103515625.0; // pow(25, 7)
    const float ksub_l = 0.65f, ksub_c = 1.0f, ksub_h = 4.0f;
    const float delta_l_prime = color_2.l - color_1.l;
    const float l_bar = (color_1.l + color_2.l) / 2;
    const float c1 = static_cast<float>(sqrt_rn(sq(d(color_1.a)) + sq(d(color_1.b))));
    const float c2 = static_cast<float>(sqrt_rn(sq(d(color_2.a)) + sq(d(color_2.b))));
    const float c_bar = (c1 + c2) / 2;
    const float a_prime_1 = static_cast<float>(
        color_1.a + (color_1.a / 2) *
                        (1 - sqrt_rn(glibc::pow(d(c_bar), 7) / (glibc::pow(d(c_bar), 7) + k25_7))));
    const float a_prime_2 = static_cast<float>(
        color_2.a + (color_2.a / 2) *
                        (1 - sqrt_rn(glibc::pow(d(c_bar), 7) / (glibc::pow(d(c_bar), 7) + k25_7))));
    const float c_prime_1 = static_cast<float>(sqrt_rn(sq(d(a_prime_1)) + sq(d(color_1.b))));
    const float c_prime_2 = static_cast<float>(sqrt_rn(sq(d(a_prime_2)) + sq(d(color_2.b))));
    const float c_bar_prime = (c_prime_1 + c_prime_2) / 2;
    const float delta_c_prime = c_prime_2 - c_prime_1;
    const float s_sub_l = static_cast<float>(
        1. + ((0.015 * sq(d(l_bar - 50))) / sqrt_rn(20 + sq(d(l_bar - 50)))));
    const float s_sub_c = static_cast<float>(1. + 0.045 * c_bar_prime);
    const float h_prime_1 = get_h_prime(color_1.b, a_prime_1);
    const float h_prime_2 = get_h_prime(color_2.b, a_prime_2);
    const float delta_h_prime = get_delta_h_prime(c1, c2, h_prime_1, h_prime_2);
    const float delta_upcase_h_prime = static_cast<float>(
        2.0 * sqrt_rn(d(c_prime_1 * c_prime_2)) * glibc::sin(delta_h_prime / 2.0));
    const float upcase_h_bar_prime = get_upcase_h_bar_prime(h_prime_1, h_prime_2);
    const float upcase_t = get_upcase_t(upcase_h_bar_prime);
    const float s_sub_upcase_h = static_cast<float>(1.0 + 0.015 * c_bar_prime * upcase_t);
    const float r_sub_t = get_r_sub_t(c_bar_prime, upcase_h_bar_prime);
    const float lightness = delta_l_prime / (ksub_l * s_sub_l);
    const float chroma = delta_c_prime / (ksub_c * s_sub_c);
    const float hue = delta_upcase_h_prime / (ksub_h * s_sub_upcase_h);
    return static_cast<float>(sqrt_rn(sq(d(lightness)) + sq(d(chroma)) + sq(d(hue)) +
                                      r_sub_t * chroma * hue));
}

VMAF_GM_HD double rgb_to_xyz_map(double c) {
    if (c > 10. / 255.) {
        const double A = 0.055;
        const double D = 1.0 / 1.055;
        return glibc::pow((c + A) * D, 2.4);
    }
    const double D = 1.0 / 12.92;
    return (c * D);
}

VMAF_GM_HD float xyz_to_lab_map(double c) {
    const double KAPPA = 24389.0 / 27.0;
    const double EPSILON = 216.0 / 24389.0;
    if (c > EPSILON) return static_cast<float>(glibc::pow(c, 1.0 / 3.0));
    return static_cast<float>((KAPPA * c + 16.0) * (1.0 / 116.0));
}

VMAF_GM_HD LabColor get_lab_color(double y, double u, double v, unsigned bpc) {
    const double scale = 1 << (bpc - 8);
    y = (y - 16. * scale) * (1. / (219. * scale));
    u = (u - 128. * scale) * (1. / (224. * scale));
    v = (v - 128. * scale) * (1. / (224. * scale));
    double r = y + 1.28033 * v; // BT.709
    double g = y - 0.21482 * u - 0.38059 * v;
    double b = y + 2.12798 * u;
    r = rgb_to_xyz_map(r);
    g = rgb_to_xyz_map(g);
    b = rgb_to_xyz_map(b);
    double x = r * 0.4124564390896921 + g * 0.357576077643909 + b * 0.18043748326639894;
    y = r * 0.21267285140562248 + g * 0.715152155287818 + b * 0.07217499330655958;
    double z = r * 0.019333895582329317 + g * 0.119192025881303 + b * 0.9503040785363677;
    x = xyz_to_lab_map(x * (1.0 / 0.95047));
    y = xyz_to_lab_map(y);
    z = xyz_to_lab_map(z * (1.0 / 1.08883));
    return {static_cast<float>((116.0 * y) - 16.0), static_cast<float>(500.0 * (x - y)),
            static_cast<float>(200.0 * (y - z))};
}

} // namespace ciede_detail

/// libvmaf's 4:2:0 chroma layout for ciede (reference/ciede.h, `scale_chroma_planes`):
/// U then V, each cw x ch = (w >> 1) x (h >> 1) samples with a row stride of
/// S = align32(cw) (padding zero), zeros after V. Luma (x, y) reads linear sample
/// (y / 2) * S + x / 2 of plane c (0 = U, 1 = V); for odd sizes that reaches the padding,
/// the next row, the V plane or past its end.
struct Chroma420Layout {
    unsigned cw = 0, ch = 0, stride = 1; ///< stride 1 when cw == 0 (every read is 0)
    unsigned long long plane = 0;        ///< S * ch

    VMAF_GM_HD static Chroma420Layout of(unsigned w, unsigned h) {
        Chroma420Layout l;
        l.cw = w >> 1;
        l.ch = h >> 1;
        l.stride = l.cw ? (l.cw + 31u) & ~31u : 1u;
        l.plane = static_cast<unsigned long long>(l.stride) * l.ch;
        return l;
    }
    /// Where luma (x, y) reads plane c: false for a zero (padding or past V), else the
    /// plane (0 = U, 1 = V) and the sample (col, row) of the caller's plane it is.
    VMAF_GM_HD bool locate(unsigned c, unsigned x, unsigned y, unsigned& pp, unsigned& col,
                           unsigned& row) const {
        const unsigned long long lin =
            c * plane + static_cast<unsigned long long>(y / 2) * stride + x / 2;
        if (lin >= 2 * plane) return false;
        pp = lin >= plane ? 1u : 0u;
        const unsigned long long rem = lin - pp * plane;
        row = unsigned(rem / stride);
        col = unsigned(rem % stride);
        return col < cw;
    }
};

/// dE00 of one pixel pair, bit-identical to ref::ciede_de00() (reference/ciede.h) run
/// against glibc 2.36's x86_64 FMA libm: `bpc` 8..16, samples (Y, Cb, Cr) as floats
/// holding integers in [0, 2^bpc). Result >= 0 (about 0..120), float.
VMAF_GM_HD float ciede_de00(unsigned bpc, float r_y, float r_u, float r_v, float d_y, float d_u,
                            float d_v) {
    const ciede_detail::LabColor c1 = ciede_detail::get_lab_color(r_y, r_u, r_v, bpc);
    const ciede_detail::LabColor c2 = ciede_detail::get_lab_color(d_y, d_u, d_v, bpc);
    return ciede_detail::ciede2000(c1, c2);
}

} // namespace vmaf_cuda::cuda

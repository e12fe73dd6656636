// SPDX-License-Identifier: BSD-2-Clause-Patent
// Reference CIEDE2000; see ciede.h for the contract and the libvmaf functions followed.
//
// Every expression keeps libvmaf's C types: C calls the double versions of sqrt, pow,
// atan2, fabs, sin, cos, exp for float arguments, so float arguments are cast to double
// explicitly here (C++'s <cmath> would pick the float overloads).

#include "ciede.h"

#include <math.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace vmaf_cuda::ref {

namespace {

constexpr double kPi = 3.14159265358979323846; // M_PI

double d(float x) { return static_cast<double>(x); }

float get_h_prime(const float x, const float y) {
    if ((x == 0.0) && (y == 0.0)) return 0.0f;
    float hue_angle = static_cast<float>(::atan2(d(x), d(y)));
    if (hue_angle < 0.0) hue_angle = static_cast<float>(hue_angle + 2. * kPi);
    return hue_angle;
}

float get_delta_h_prime(const float c1, const float c2, const float h_prime_1,
                        const float h_prime_2) {
    if ((c1 == 0.0) || (c2 == 0.0)) return 0.0f;
    if (::fabsf(h_prime_1 - h_prime_2) <= kPi) return h_prime_2 - h_prime_1;
    if (h_prime_2 <= h_prime_1)
        return static_cast<float>((h_prime_2 - h_prime_1) + 2. * kPi);
    else
        return static_cast<float>((h_prime_2 - h_prime_1) - 2. * kPi);
}

float get_upcase_h_bar_prime(const float h_prime_1, const float h_prime_2) {
    return static_cast<float>(::fabs(d(h_prime_1 - h_prime_2)) > kPi
                                  ? ((h_prime_1 + h_prime_2) + 2.0 * kPi) / 2.0
                                  : (h_prime_1 + h_prime_2) / 2.0);
}

float get_upcase_t(const float upcase_h_bar_prime) {
    const double h = upcase_h_bar_prime;
    return static_cast<float>(1.0 - 0.17 * ::cos(h - kPi / 6.0) + 0.24 * ::cos(2.0 * h) +
                              0.32 * ::cos(3.0 * h + kPi / 30.0) -
                              0.20 * ::cos(4.0 * h - 7.0 * kPi / 20.0));
}

float radians_to_degrees(const float radians) {
    return static_cast<float>(radians * (180.0 / kPi));
}

float degrees_to_radians(const float degrees) {
    return static_cast<float>(degrees * (kPi / 180.0));
}

float get_r_sub_t(const float c_bar_prime, const float upcase_h_bar_prime) {
    const float degrees =
        static_cast<float>((radians_to_degrees(upcase_h_bar_prime) - 275.0) * (1.0 / 25.0));
    const float ratio = ::powf(c_bar_prime, 7) / (::powf(c_bar_prime, 7) + ::powf(25., 7));
    const float e = -(::powf(degrees, 2));
    return static_cast<float>(-2.0 * ::sqrt(d(ratio)) *
                              ::sin(d(degrees_to_radians(static_cast<float>(60.0 * ::exp(d(e)))))));
}

struct LabColor {
    float l, a, b;
};

float ciede2000(const LabColor color_1, const LabColor color_2) {
    const float ksub_l = 0.65f, ksub_c = 1.0f, ksub_h = 4.0f;
    const float delta_l_prime = color_2.l - color_1.l;
    const float l_bar = (color_1.l + color_2.l) / 2;
    const float c1 = static_cast<float>(::sqrt(::pow(d(color_1.a), 2) + ::pow(d(color_1.b), 2)));
    const float c2 = static_cast<float>(::sqrt(::pow(d(color_2.a), 2) + ::pow(d(color_2.b), 2)));
    const float c_bar = (c1 + c2) / 2;
    const float a_prime_1 = static_cast<float>(
        color_1.a + (color_1.a / 2) *
                        (1 - ::sqrt(::pow(d(c_bar), 7) / (::pow(d(c_bar), 7) + ::pow(25, 7)))));
    const float a_prime_2 = static_cast<float>(
        color_2.a + (color_2.a / 2) *
                        (1 - ::sqrt(::pow(d(c_bar), 7) / (::pow(d(c_bar), 7) + ::pow(25, 7)))));
    const float c_prime_1 =
        static_cast<float>(::sqrt(::pow(d(a_prime_1), 2) + ::pow(d(color_1.b), 2)));
    const float c_prime_2 =
        static_cast<float>(::sqrt(::pow(d(a_prime_2), 2) + ::pow(d(color_2.b), 2)));
    const float c_bar_prime = (c_prime_1 + c_prime_2) / 2;
    const float delta_c_prime = c_prime_2 - c_prime_1;
    const float s_sub_l = static_cast<float>(
        1. + ((0.015 * ::pow(d(l_bar - 50), 2)) / ::sqrt(20 + ::pow(d(l_bar - 50), 2))));
    const float s_sub_c = static_cast<float>(1. + 0.045 * c_bar_prime);
    const float h_prime_1 = get_h_prime(color_1.b, a_prime_1);
    const float h_prime_2 = get_h_prime(color_2.b, a_prime_2);
    const float delta_h_prime = get_delta_h_prime(c1, c2, h_prime_1, h_prime_2);
    const float delta_upcase_h_prime = static_cast<float>(
        2.0 * ::sqrt(d(c_prime_1 * c_prime_2)) * ::sin(delta_h_prime / 2.0));
    const float upcase_h_bar_prime = get_upcase_h_bar_prime(h_prime_1, h_prime_2);
    const float upcase_t = get_upcase_t(upcase_h_bar_prime);
    const float s_sub_upcase_h = static_cast<float>(1.0 + 0.015 * c_bar_prime * upcase_t);
    const float r_sub_t = get_r_sub_t(c_bar_prime, upcase_h_bar_prime);
    const float lightness = delta_l_prime / (ksub_l * s_sub_l);
    const float chroma = delta_c_prime / (ksub_c * s_sub_c);
    const float hue = delta_upcase_h_prime / (ksub_h * s_sub_upcase_h);
    return static_cast<float>(::sqrt(::pow(d(lightness), 2) + ::pow(d(chroma), 2) +
                                     ::pow(d(hue), 2) + r_sub_t * chroma * hue));
}

double rgb_to_xyz_map(double c) {
    if (c > 10. / 255.) {
        const double A = 0.055;
        const double D = 1.0 / 1.055;
        return ::pow((c + A) * D, 2.4);
    } else {
        const double D = 1.0 / 12.92;
        return (c * D);
    }
}

float xyz_to_lab_map(double c) {
    const double KAPPA = 24389.0 / 27.0;
    const double EPSILON = 216.0 / 24389.0;
    if (c > EPSILON)
        return static_cast<float>(::pow(c, 1.0 / 3.0));
    else
        return static_cast<float>((KAPPA * c + 16.0) * (1.0 / 116.0));
}

LabColor get_lab_color(double y, double u, double v, unsigned bpc) {
    const double scale = 1 << (bpc - 8);

    y = (y - 16. * scale) * (1. / (219. * scale));
    u = (u - 128. * scale) * (1. / (224. * scale));
    v = (v - 128. * scale) * (1. / (224. * scale));

    // BT.709
    double r = y + 1.28033 * v;
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

int sample(const LumaView& v, unsigned x, unsigned y) { return v.at(x, y); }

// libvmaf's 4:2:0 chroma of one picture, in its memory layout: U then V, each
// (w >> 1) x (h >> 1) with a stride of ALIGN32(w >> 1) samples, padding 0, followed by
// zeros for the reads past the end that odd sizes make.
struct LibvmafChroma {
    std::vector<std::uint16_t> mem;
    std::size_t stride = 0, plane = 0;

    LibvmafChroma(const YuvView& pic) {
        const unsigned cw = pic.y.width >> 1, ch = pic.y.height >> 1;
        stride = (std::size_t(cw) + 31) & ~std::size_t(31);
        plane = stride * ch;
        // Past the end: at most one row (y / 2 == h >> 1) plus one sample.
        mem.assign(2 * plane + stride + 1, 0);
        for (unsigned p = 0; p < 2; p++) {
            const LumaView& src = p == 0 ? pic.cb : pic.cr;
            for (unsigned r = 0; r < ch; r++)
                for (unsigned c = 0; c < cw; c++)
                    mem[p * plane + r * stride + c] = std::uint16_t(sample(src, c, r));
        }
    }
    // libvmaf's `in_buf[j / 2]` on row `i / 2` of plane p (0 = U, 1 = V).
    int at(unsigned p, unsigned x, unsigned y) const {
        return mem[p * plane + std::size_t(y / 2) * stride + x / 2];
    }
};

} // namespace

void ciede_check_format(unsigned width, unsigned height, unsigned bpc, unsigned chroma) {
    if (bpc != 8 && bpc != 10 && bpc != 12 && bpc != 16)
        throw std::invalid_argument("ciede: bpc " + std::to_string(bpc) +
                                    " not supported (libvmaf: 8, 10, 12 or 16)");
    if (chroma == 400)
        throw std::invalid_argument("ciede: needs chroma planes (libvmaf refuses 4:0:0)");
    if (chroma == 422)
        throw std::invalid_argument(
            "ciede: 4:2:2 not supported (libvmaf v3.2.0 indexes 4:2:2 chroma outside the "
            "picture; its values are not reproducible)");
    if (chroma != 420 && chroma != 444)
        throw std::invalid_argument("ciede: chroma " + std::to_string(chroma) +
                                    " is not 420 or 444");
    if (width == 0 || height == 0) throw std::invalid_argument("ciede: empty picture");
}

float ciede_de00(unsigned bpc, float r_y, float r_u, float r_v, float d_y, float d_u,
                 float d_v) {
    const LabColor color_1 = get_lab_color(r_y, r_u, r_v, bpc);
    const LabColor color_2 = get_lab_color(d_y, d_u, d_v, bpc);
    return ciede2000(color_1, color_2);
}

void ciede_map(const YuvView& ref, const YuvView& dis, std::vector<float>& de00) {
    const unsigned w = ref.y.width, h = ref.y.height, bpc = ref.y.bpc;
    ciede_check_format(w, h, bpc, ref.chroma);
    if (dis.y.width != w || dis.y.height != h || dis.chroma != ref.chroma || dis.y.bpc != bpc)
        throw std::invalid_argument("ciede: ref and dis pictures differ in size or format");
    const unsigned cw = yuv_libvmaf_chroma_width(w, ref.chroma);
    const unsigned ch = yuv_libvmaf_chroma_height(h, ref.chroma);
    for (const YuvView* pic : {&ref, &dis})
        for (const LumaView* pl : {&pic->cb, &pic->cr})
            if (pl->width < cw || pl->height < ch || pl->bpc != bpc)
                throw std::invalid_argument("ciede: chroma plane smaller than libvmaf's");

    de00.resize(std::size_t(w) * h);
    if (ref.chroma == 444) {
        for (unsigned i = 0; i < h; i++)
            for (unsigned j = 0; j < w; j++)
                de00[std::size_t(i) * w + j] =
                    ciede_de00(bpc, float(sample(ref.y, j, i)), float(sample(ref.cb, j, i)),
                               float(sample(ref.cr, j, i)), float(sample(dis.y, j, i)),
                               float(sample(dis.cb, j, i)), float(sample(dis.cr, j, i)));
        return;
    }
    const LibvmafChroma rc(ref), dc(dis);
    for (unsigned i = 0; i < h; i++)
        for (unsigned j = 0; j < w; j++)
            de00[std::size_t(i) * w + j] =
                ciede_de00(bpc, float(sample(ref.y, j, i)), float(rc.at(0, j, i)),
                           float(rc.at(1, j, i)), float(sample(dis.y, j, i)),
                           float(dc.at(0, j, i)), float(dc.at(1, j, i)));
}

double ciede_sum(const float* de00, std::size_t n) {
    double de00_sum = 0.;
    for (std::size_t i = 0; i < n; i++) de00_sum += de00[i];
    return de00_sum;
}

double ciede_sum(const std::vector<float>& de00) { return ciede_sum(de00.data(), de00.size()); }

double ciede_finish(double de00_sum, unsigned width, unsigned height) {
    return 45. - 20. * ::log10(de00_sum / double(width * height));
}

double ciede_score(const YuvView& ref, const YuvView& dis) {
    std::vector<float> de00;
    ciede_map(ref, dis, de00);
    return ciede_finish(ciede_sum(de00), ref.y.width, ref.y.height);
}

} // namespace vmaf_cuda::ref

// SPDX-License-Identifier: BSD-2-Clause-Patent
// Reference of libvmaf's iqa pieces; see iqa.h for the contract and the functions followed.

#include "iqa.h"

#include <math.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace vmaf_cuda::ref {

namespace {

// g_gaussian_window_h (= _v) of libvmaf's iqa/ssim_tools.h.
constexpr float kGaussian[kIqaGaussianLen] = {0.001028f, 0.007599f, 0.036001f, 0.109361f,
                                              0.213006f, 0.266012f, 0.213006f, 0.109361f,
                                              0.036001f, 0.007599f, 0.001028f};

// KBND_SYMMETRIC: one reflection with the edge repeated.
float symmetric(const float* img, int w, int h, int x, int y) {
    if (x < 0)
        x = -1 - x;
    else if (x >= w)
        x = (w - (x - w)) - 1;
    if (y < 0)
        y = -1 - y;
    else if (y >= h)
        y = (h - (y - h)) - 1;
    return img[y * w + x];
}

} // namespace

void iqa_picture_to_float(const LumaView& plane, std::vector<float>& out) {
    float scaler;
    switch (plane.bpc) {
    case 8: scaler = 1.0f; break;
    case 10: scaler = 4.0f; break;
    case 12: scaler = 16.0f; break;
    case 16: scaler = 256.0f; break;
    default:
        throw std::invalid_argument("float conversion: bpc " + std::to_string(plane.bpc) +
                                    " not supported (libvmaf: 8, 10, 12 or 16)");
    }
    out.resize(std::size_t(plane.width) * plane.height);
    for (unsigned i = 0; i < plane.height; i++) {
        float* o = out.data() + std::size_t(i) * plane.width;
        if (plane.bpc == 8) {
            const std::uint8_t* r = plane.row8(i);
            for (unsigned j = 0; j < plane.width; j++) o[j] = static_cast<float>(r[j]) + 0;
        } else {
            const std::uint16_t* r = plane.row16(i);
            for (unsigned j = 0; j < plane.width; j++)
                o[j] = static_cast<float>(r[j]) / scaler + 0;
        }
    }
}

const float* iqa_gaussian_taps() { return kGaussian; }

void iqa_convolve(const float* img, int w, int h, const float* taps, int klen, float* dst,
                  int* rw, int* rh) {
    const int uc = klen / 2, vc = klen / 2;
    const int k_even = (klen & 1) ? 0 : 1;
    const int dst_w = w - klen + 1;
    const int dst_h = h - klen + 1;
    if (dst_w > 0 && dst_h > 0) {
        std::vector<float> cache(std::size_t(w) * std::size_t(h), 0.0f);
        // Horizontal pass over every row (libvmaf: y from -vc to dst_h + vc - 1).
        for (int y = -vc; y < dst_h + vc; ++y) {
            for (int x = 0; x < dst_w; ++x) {
                double sum = 0.0;
                int k = 0;
                const int off = (y + vc) * w + (x + uc);
                for (int u = -uc; u <= uc - k_even; ++u, ++k) sum += img[off + u] * taps[k];
                cache[std::size_t(off)] = static_cast<float>(sum * 1.0f);
            }
        }
        // Vertical pass.
        for (int x = 0; x < dst_w; ++x) {
            for (int y = 0; y < dst_h; ++y) {
                double sum = 0.0;
                int k = 0;
                const int off = (y + vc) * w + (x + uc);
                for (int v = -vc; v <= vc - k_even; ++v, ++k)
                    sum += cache[std::size_t(off + v * w)] * taps[k];
                dst[y * dst_w + x] = static_cast<float>(sum * 1.0f);
            }
        }
    }
    if (rw) *rw = dst_w;
    if (rh) *rh = dst_h;
}

void iqa_decimate(const float* img, int w, int h, int factor, const IqaKernel2d& kernel,
                  float* dst, int* rw, int* rh) {
    const int sw = w / factor + (w & 1);
    const int sh = h / factor + (h & 1);
    const int uc = kernel.len / 2, vc = kernel.len / 2;
    const int k_even = (kernel.len & 1) ? 0 : 1;
    for (int y = 0; y < sh; ++y) {
        for (int x = 0; x < sw; ++x) {
            const int cx = x * factor, cy = y * factor;
            double sum = 0.0;
            int k = 0;
            for (int v = -vc; v <= vc - k_even; ++v)
                for (int u = -uc; u <= uc - k_even; ++u, ++k)
                    sum += symmetric(img, w, h, cx + u, cy + v) * kernel.k[k];
            dst[y * sw + x] = static_cast<float>(sum * 1.0f);
        }
    }
    if (rw) *rw = sw;
    if (rh) *rh = sh;
}

int iqa_round(float a) {
    const int sign_a = a > 0.0f ? 1 : -1;
    return a - (int)a >= 0.5 ? (int)a + sign_a : (int)a;
}

void iqa_ssim_maps(const float* ref, const float* cmp, int w, int h, IqaSsimMaps& out) {
    const float K1 = 0.01f, K2 = 0.03f;
    const int L = 255;
    const float C1 = (K1 * L) * (K1 * L);
    const float C2 = (K2 * L) * (K2 * L);
    const float C3 = C2 / 2.0f;

    const std::size_t n = std::size_t(w) * std::size_t(h);
    std::vector<float> ref_mu(n), cmp_mu(n), ref_sq(n), cmp_sq(n), both(n);
    const float* g = kGaussian;
    iqa_convolve(ref, w, h, g, kIqaGaussianLen, ref_mu.data(), nullptr, nullptr);
    iqa_convolve(cmp, w, h, g, kIqaGaussianLen, cmp_mu.data(), nullptr, nullptr);
    for (std::size_t i = 0; i < n; i++) {
        ref_sq[i] = ref[i] * ref[i];
        cmp_sq[i] = cmp[i] * cmp[i];
        both[i] = ref[i] * cmp[i];
    }
    int vw = 0, vh = 0;
    iqa_convolve(ref_sq.data(), w, h, g, kIqaGaussianLen, ref_sq.data(), nullptr, nullptr);
    iqa_convolve(cmp_sq.data(), w, h, g, kIqaGaussianLen, cmp_sq.data(), nullptr, nullptr);
    iqa_convolve(both.data(), w, h, g, kIqaGaussianLen, both.data(), &vw, &vh);

    out.w = vw;
    out.h = vh;
    out.l.clear();
    out.c.clear();
    out.s.clear();
    if (vw <= 0 || vh <= 0) return;
    const std::size_t m = std::size_t(vw) * std::size_t(vh);
    out.l.resize(m);
    out.c.resize(m);
    out.s.resize(m);
    for (std::size_t i = 0; i < m; i++) {
        const float mu1 = ref_mu[i], mu2 = cmp_mu[i];
        float s11 = ref_sq[i] - mu1 * mu1;
        float s22 = cmp_sq[i] - mu2 * mu2;
        s11 = static_cast<float>((0.0) > (s11) ? (0.0) : (s11)); // libvmaf's MAX(0.0, x)
        s22 = static_cast<float>((0.0) > (s22) ? (0.0) : (s22));
        const float s12 = both[i] - mu1 * mu2;

        const float srsc = static_cast<float>(::sqrt(static_cast<double>(s11 * s22)));
        out.l[i] = (2.0 * mu1 * mu2 + C1) / (mu1 * mu1 + mu2 * mu2 + C1);
        out.c[i] = (2.0 * srsc + C2) / (s11 + s22 + C2);
        const float clamped = (s12 < 0.0f && srsc <= 0.0f) ? 0.0f : s12;
        out.s[i] = (clamped + C3) / (srsc + C3);
    }
}

IqaSsimSums iqa_ssim_sum(const IqaSsimMaps& maps) {
    IqaSsimSums s;
    s.w = maps.w;
    s.h = maps.h;
    for (std::size_t i = 0; i < maps.l.size(); i++) {
        const double l = maps.l[i], c = maps.c[i], st = maps.s[i];
        s.ssim += l * c * st;
        s.l += l;
        s.c += c;
        s.s += st;
    }
    return s;
}

IqaSsimMeans iqa_ssim_finish(const IqaSsimSums& sums) {
    const double n = static_cast<double>(sums.w * sums.h);
    return {static_cast<float>(sums.ssim / n), static_cast<float>(sums.l / n),
            static_cast<float>(sums.c / n), static_cast<float>(sums.s / n)};
}

IqaSsimMeans iqa_ssim(const float* ref, const float* cmp, int w, int h) {
    IqaSsimMaps maps;
    iqa_ssim_maps(ref, cmp, w, h, maps);
    return iqa_ssim_finish(iqa_ssim_sum(maps));
}

} // namespace vmaf_cuda::ref

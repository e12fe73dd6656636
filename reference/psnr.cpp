// SPDX-License-Identifier: BSD-2-Clause-Patent
// Reference PSNR; see psnr.h for the contract and the libvmaf functions followed.

#include "psnr.h"

#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace vmaf_cuda::ref {

namespace {

// libvmaf's MIN / MAX macros (the argument order matters for NaN).
double min_of(double a, double b) { return a < b ? a : b; }
double max_of(double a, double b) { return a > b ? a : b; }

bool valid_chroma(unsigned c) { return c == 400 || c == 420 || c == 422 || c == 444; }

unsigned plane_w(unsigned p, unsigned w, unsigned chroma) {
    return p == 0 ? w : yuv_libvmaf_chroma_width(w, chroma);
}
unsigned plane_h(unsigned p, unsigned h, unsigned chroma) {
    return p == 0 ? h : yuv_libvmaf_chroma_height(h, chroma);
}

// Sum of squared differences of one plane (libvmaf `psnr` / `psnr_hbd` inner loops).
std::uint64_t plane_sse(const LumaView& ref, const LumaView& dis, unsigned w, unsigned h) {
    std::uint64_t sse = 0;
    if (ref.bpc == 8) {
        for (unsigned i = 0; i < h; i++) {
            const std::uint8_t* r = ref.row8(i);
            const std::uint8_t* d = dis.row8(i);
            std::uint32_t inner = 0; // libvmaf: uint32 per row (wraps mod 2^32)
            for (unsigned j = 0; j < w; j++) {
                const int e = static_cast<std::int16_t>(int(r[j]) - int(d[j]));
                inner += static_cast<std::uint32_t>(e * e);
            }
            sse += inner;
        }
    } else {
        for (unsigned i = 0; i < h; i++) {
            const std::uint16_t* r = ref.row16(i);
            const std::uint16_t* d = dis.row16(i);
            for (unsigned j = 0; j < w; j++) {
                const std::uint32_t e = static_cast<std::uint32_t>(std::abs(int(r[j]) - int(d[j])));
                sse += e * e; // uint32 product (< 2^32 for 16-bit samples)
            }
        }
    }
    return sse;
}

} // namespace

PsnrSetup psnr_setup(const PsnrOptions& opt, unsigned bpc, unsigned width, unsigned height,
                     unsigned chroma) {
    if (bpc != 8 && bpc != 10 && bpc != 12 && bpc != 16)
        throw std::invalid_argument("psnr: bpc " + std::to_string(bpc) +
                                    " not supported (libvmaf: 8, 10, 12 or 16)");
    if (!valid_chroma(chroma))
        throw std::invalid_argument("psnr: chroma " + std::to_string(chroma) +
                                    " is not 400, 420, 422 or 444");
    if (width == 0 || height == 0) throw std::invalid_argument("psnr: empty picture");
    if (!(opt.min_sse >= 0.0)) throw std::invalid_argument("psnr: min_sse must be >= 0");

    PsnrSetup s{};
    s.opt = opt;
    s.bpc = bpc;
    if (chroma == 400) s.opt.enable_chroma = false;
    s.planes = s.opt.enable_chroma ? 3 : 1;
    s.width = width;
    s.height = height;
    s.chroma = chroma;
    // `255 * 1 << (bpc - 8)` in libvmaf: (255 * 1) << (bpc - 8).
    s.peak = opt.reduced_hbd_peak ? (255u << (bpc - 8)) : ((1u << bpc) - 1u);
    const bool ss_hor = chroma != 444;
    const bool ss_ver = chroma == 420;
    for (unsigned i = 0; i < 3; i++) {
        if (opt.min_sse != 0.0) {
            const unsigned pw = (i && ss_hor) ? width / 2 : width;
            const unsigned ph = (i && ss_ver) ? height / 2 : height;
            const double mse = opt.min_sse / double(pw * ph);
            s.psnr_max[i] = std::ceil(10. * std::log10(double(s.peak * s.peak) / mse));
        } else {
            s.psnr_max[i] = double(int(6 * bpc) + 12);
        }
    }
    return s;
}

void psnr_accumulate(const YuvView& ref, const YuvView& dis, const PsnrSetup& setup,
                     PsnrAccum& out) {
    out = PsnrAccum{};
    const unsigned w = setup.width, h = setup.height;
    for (const YuvView* pic : {&ref, &dis})
        if (pic->y.width != w || pic->y.height != h || pic->chroma != setup.chroma)
            throw std::invalid_argument("psnr: picture size or chroma format differs from the "
                                        "setup's " + std::to_string(w) + "x" +
                                        std::to_string(h) + " " + std::to_string(setup.chroma));
    for (unsigned p = 0; p < setup.planes; p++) {
        const LumaView& r = ref.plane(p);
        const LumaView& d = dis.plane(p);
        const unsigned pw = plane_w(p, w, setup.chroma), ph = plane_h(p, h, setup.chroma);
        if (r.bpc != setup.bpc || d.bpc != setup.bpc)
            throw std::invalid_argument("psnr: plane bpc differs from the setup's");
        if (r.width < pw || r.height < ph || d.width < pw || d.height < ph)
            throw std::invalid_argument("psnr: plane " + std::to_string(p) +
                                        " smaller than libvmaf's plane size");
        out.sse[p] = plane_sse(r, d, pw, ph); // 0 for an empty plane (1-pixel-wide 4:2:0)
        out.n_pixels[p] = std::uint64_t(ph * pw); // unsigned product, as libvmaf
    }
}

PsnrScores psnr_finish(const PsnrSetup& setup, const PsnrAccum& acc) {
    PsnrScores s{};
    const double peak_sq = setup.bpc == 8 ? double(255 * 255) : double(setup.peak * setup.peak);
    for (unsigned p = 0; p < setup.planes; p++) {
        const unsigned n = unsigned(acc.n_pixels[p]);
        const double mse = double(acc.sse[p]) / double(n);
        s.mse[p] = mse;
        s.psnr[p] = min_of(10. * std::log10(peak_sq / max_of(mse, 1e-16)), setup.psnr_max[p]);
    }
    return s;
}

void psnr_totals_add(PsnrTotals& totals, const PsnrAccum& frame) {
    for (unsigned p = 0; p < 3; p++) {
        totals.sse[p] += frame.sse[p];
        totals.n_pixels[p] += frame.n_pixels[p];
    }
}

PsnrAggregate psnr_aggregate(const PsnrSetup& setup, const PsnrTotals& t) {
    PsnrAggregate a{};
    const std::uint32_t peak_sq = setup.peak * setup.peak;
    for (unsigned i = 0; i < 3; i++) {
        const double apsnr = 10 * (std::log10(double(peak_sq)) + std::log10(double(t.n_pixels[i])) -
                                   std::log10(double(t.sse[i])));
        const std::uint64_t prod = std::uint64_t(peak_sq) * t.n_pixels[i] * 2u;
        const double max_apsnr = std::ceil(10 * std::log10(double(prod)));
        a.apsnr[i] = min_of(apsnr, max_apsnr);
    }
    return a;
}

} // namespace vmaf_cuda::ref

// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file psnr.h
/// PSNR (`psnr` feature): psnr_y, psnr_cb, psnr_cr; mse_y/cb/cr (`enable_mse`); and the
/// whole-stream apsnr_y/cb/cr (`enable_apsnr`, libvmaf's `aggregate_metrics`).
///
/// Arithmetic followed: libvmaf v3.2.0 `libvmaf/src/feature/integer_psnr.c` (`init`,
/// `psnr`, `psnr_hbd`, `flush`). Scalar C only (there is no SIMD path).
///
/// Split for the GPU port:
/// - psnr_setup(): what libvmaf's `init` computes (peak, the per-plane psnr ceiling);
/// - psnr_accumulate(): integer SSE per plane (uint64, order-free; see PsnrAccum);
/// - psnr_finish(): the per-frame doubles from the SSE (host);
/// - psnr_totals_add() / psnr_aggregate(): the stream totals and apsnr at the end.
///
/// Planes: libvmaf's sizes (yuv.h): chroma (w >> ss_hor) x (h >> ss_ver), the top-left
/// part of the caller's planes. Valid bpc: 8, 10, 12, 16 (libvmaf returns -EINVAL for
/// other depths); chroma 400 (luma only: chroma outputs off), 420, 422, 444.

#include <cstdint>

#include "yuv.h"

namespace vmaf_cuda::ref {

/// libvmaf's options of `psnr` (names as libvmaf's; defaults as libvmaf's).
struct PsnrOptions {
    bool enable_chroma = true;     ///< psnr_cb / psnr_cr (forced off for 4:0:0)
    bool enable_mse = false;       ///< also mse_y / mse_cb / mse_cr
    bool enable_apsnr = false;     ///< apsnr_y / apsnr_cb / apsnr_cr at the end
    bool reduced_hbd_peak = false; ///< peak 255 << (bpc - 8) instead of 2^bpc - 1
    double min_sse = 0.0;          ///< >= 0; when > 0 it sets the psnr ceiling (below)
};

/// What libvmaf's `init` derives from the options and the format.
struct PsnrSetup {
    PsnrOptions opt;     ///< enable_chroma already cleared for 4:0:0
    unsigned bpc = 8;    ///< 8, 10, 12 or 16
    std::uint32_t peak;  ///< reduced_hbd_peak ? 255 << (bpc-8) : 2^bpc - 1
    double psnr_max[3];  ///< per plane: min_sse == 0: 6*bpc + 12; else
                         ///< ceil(10*log10(peak*peak / (min_sse / (pw*ph)))), pw x ph the
                         ///< plane size with libvmaf's w/2, h/2 (floor) for chroma
    unsigned planes;     ///< 3 with chroma, else 1
    unsigned width, height, chroma; ///< the format it was set up for (checked per frame)
};

/// \throws std::invalid_argument for bpc not in {8, 10, 12, 16}, chroma not in
/// {400, 420, 422, 444}, a zero size or min_sse < 0.
PsnrSetup psnr_setup(const PsnrOptions& opt, unsigned bpc, unsigned width, unsigned height,
                     unsigned chroma);

/// Integer result of one frame pair. Plain data; all-zero is the additive identity.
/// sse[p] = sum over the plane of (ref - dis)^2. libvmaf sums 8-bit pictures per row
/// in a uint32 (wrapping; it cannot wrap below 66052 columns) and adds rows into the
/// uint64; deeper pictures add each uint32 square (< 2^32) into the uint64. Both are
/// integer sums, so any order (atomics, trees) gives the same value. Planes not computed
/// (no chroma) stay 0.
struct PsnrAccum {
    std::uint64_t sse[3];
    std::uint64_t n_pixels[3]; ///< libvmaf's plane w * h (as unsigned), 0 if not computed
};

/// The SSE of every computed plane of one frame pair; `out` is overwritten.
/// \throws std::invalid_argument if the pictures do not have the size, chroma format and
/// bpc of `setup`, or a plane is smaller than libvmaf's plane size.
void psnr_accumulate(const YuvView& ref, const YuvView& dis, const PsnrSetup& setup,
                     PsnrAccum& out);

/// Per-frame outputs, in libvmaf's types and order. Entries p >= setup.planes are unset.
///   mse  = (double)sse / (double)(pw * ph)           (pw * ph as unsigned)
///   psnr = MIN(10 * log10(P / MAX(mse, 1e-16)), psnr_max[p])
/// with P = 65025 at 8 bpc (libvmaf's 8-bit path uses 255 whatever reduced_hbd_peak says)
/// and P = peak * peak (uint32) above. MIN/MAX are libvmaf's macros (a < b ? a : b).
struct PsnrScores {
    double psnr[3]; ///< dB, at most psnr_max[p]
    double mse[3];  ///< mean squared difference, in squared bpc-bit sample units
};
PsnrScores psnr_finish(const PsnrSetup& setup, const PsnrAccum& acc);

/// Stream totals for apsnr: uint64 sums of every frame's sse and n_pixels.
struct PsnrTotals {
    std::uint64_t sse[3];
    std::uint64_t n_pixels[3];
};
void psnr_totals_add(PsnrTotals& totals, const PsnrAccum& frame);

/// libvmaf's `flush` (only meaningful with enable_apsnr), for all three planes (libvmaf
/// computes all three even without chroma):
///   apsnr = 10 * (log10(peak*peak) + log10(n_pixels) - log10(sse))
///   max   = ceil(10 * log10((double)(uint64)(peak*peak * n_pixels * 2)))
///   value = MIN(apsnr, max)
/// (sse = 0 gives +inf, clipped to max; n_pixels = 0 gives NaN / -inf, as libvmaf.)
struct PsnrAggregate {
    double apsnr[3]; ///< dB over the whole stream (one SSE / one pixel count per plane)
};
PsnrAggregate psnr_aggregate(const PsnrSetup& setup, const PsnrTotals& totals);

} // namespace vmaf_cuda::ref

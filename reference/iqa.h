// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file iqa.h
/// The pieces of libvmaf's `iqa` library (Tom Distler's IQA, as modified by Netflix) that
/// float_ssim and float_ms_ssim share: float conversion, the 11x11 Gaussian window as a
/// separable convolution, decimation, and the per-pixel SSIM terms with their sums.
///
/// Arithmetic followed: libvmaf v3.2.0 `libvmaf/src/feature/picture_copy.c`
/// (`picture_copy`, `picture_copy_hbd`), `iqa/convolve.c` (`_iqa_convolve` with
/// IQA_CONVOLVE_1D, which iqa_options.h defines; `_iqa_filter_pixel`, `KBND_SYMMETRIC`),
/// `iqa/decimate.c` (`_iqa_decimate`), `iqa/ssim_tools.c` (`_iqa_ssim`, default
/// arguments: the only path float_ssim and float_ms_ssim use), `iqa/ssim_tools.h`
/// (window taps), `iqa/math_utils.c` (`_round`).
///
/// Images here are float planes, row-major, stride = width (as libvmaf copies them).
/// Float arithmetic is IEEE single precision without contraction; where libvmaf adds in a
/// double, so does this code, in the same order.

#include <vector>

#include "plane.h"

namespace vmaf_cuda::ref {

/// libvmaf's `picture_copy` of a luma plane to floats, values on the 8-bit scale:
/// 8 bpc: (float)v; 10: (float)v / 4.0f; 12: (float)v / 16.0f; 16: (float)v / 256.0f
/// (exact: powers of two). `out` gets width * height floats.
/// \throws std::invalid_argument for bpc other than 8, 10, 12, 16 (libvmaf's
/// picture_copy would read such samples as bytes).
void iqa_picture_to_float(const LumaView& plane, std::vector<float>& out);

/// Length of the Gaussian window (11) and its 1-D taps (`g_gaussian_window_h`, equal to
/// `_v`; float constants from ssim_tools.h; sigma 1.5, normalised).
inline constexpr int kIqaGaussianLen = 11;
const float* iqa_gaussian_taps();

/// `_iqa_convolve` with the 1-D separable path and a normalised kernel (scale 1.0f):
/// only positions where the kernel fits ("valid" region), so the result is
/// (w - klen + 1) x (h - klen + 1), stored row-major with that width in `dst`.
/// Horizontal pass, for every input row and every output column x:
///   sum (double, from 0.0) += (float)(img[x + u] * taps[u])   for u = 0..klen-1 in order,
///   cache = (float)sum;
/// then the vertical pass the same way down the cached column. `dst` may equal `img`
/// (libvmaf convolves the squared planes in place). Odd klen (even lengths follow
/// libvmaf's `kw_even` offsets too). An image smaller than the kernel gives a
/// non-positive size and writes nothing (as libvmaf).
/// \param rw, rh receive the result size (may be null).
void iqa_convolve(const float* img, int w, int h, const float* taps, int klen, float* dst,
                  int* rw, int* rh);

/// A 2-D kernel for iqa_decimate(): klen x klen float weights, row-major.
struct IqaKernel2d {
    const float* k;
    int len;
};

/// `_iqa_decimate` by `factor`: dst size sw x sh with sw = w / factor + (w & 1),
/// sh = h / factor + (h & 1) (libvmaf's formula), dst(x, y) = `_iqa_filter_pixel` at
/// (x * factor, y * factor) with kscale 1.0f:
///   sum (double, from 0.0) += (float)(img(X, Y) * k[v][u]), v outer, u inner, over
///   u, v in [-len/2, len/2 - (1 - len % 2)], out-of-image samples mirrored WITH the
///   edge repeated (`KBND_SYMMETRIC`: -1 -> 0, w -> w - 1);  dst = (float)sum.
/// `dst` may equal `img`: then, as libvmaf's in-place call, later outputs read earlier
/// outputs where they overlap (this code reads through `img` exactly as libvmaf does).
void iqa_decimate(const float* img, int w, int h, int factor, const IqaKernel2d& kernel,
                  float* dst, int* rw, int* rh);

/// `_round` of math_utils.c: a - (int)a >= 0.5 ? (int)a + sign : (int)a.
int iqa_round(float a);

/// Per-pixel SSIM terms of `_iqa_ssim` (default arguments: K1 = 0.01f, K2 = 0.03f, L = 255,
/// alpha = beta = gamma = 1, 11x11 Gaussian window) over the valid region,
/// w' x h' = (w - 10) x (h - 10), row-major:
///   mu1, mu2 = conv(ref), conv(cmp); s11, s22, s12 = conv(ref*ref), conv(cmp*cmp),
///   conv(ref*cmp) (float products, then iqa_convolve);
///   s11 = (float)MAX(0.0, s11 - mu1*mu1); s22 likewise; s12 -= mu1*mu2   (float)
///   C1 = (0.01f*255)^2, C2 = (0.03f*255)^2, C3 = C2 / 2.0f   (float)
///   srsc = (float)sqrt((double)(s11 * s22))
///   l = (2.0 * mu1 * mu2 + C1) / (double)(mu1*mu1 + mu2*mu2 + C1)     (double / float)
///   c = (2.0 * srsc + C2) / (double)(s11 + s22 + C2)
///   s = (double)(((s12 < 0 && srsc <= 0) ? 0 : s12) + C3) / (srsc + C3))   (float division)
struct IqaSsimMaps {
    int w = 0, h = 0;            ///< valid-region size (may be <= 0 for tiny images)
    std::vector<double> l, c, s; ///< w * h each (empty when the size is not positive)
};
void iqa_ssim_maps(const float* ref, const float* cmp, int w, int h, IqaSsimMaps& out);

/// The sums of `_iqa_ssim`: four independent double accumulators starting at 0.0, each
/// adding its term pixel by pixel in row-major order (y outer, x inner) of the valid
/// region: ssim += (l * c) * s; l_sum += l; c_sum += c; s_sum += s. Order-dependent: a GPU
/// port must add in this order (or bring the terms to the host).
struct IqaSsimSums {
    double ssim = 0, l = 0, c = 0, s = 0;
    int w = 0, h = 0;
};
IqaSsimSums iqa_ssim_sum(const IqaSsimMaps& maps);

/// `_iqa_ssim`'s results: (float)(sum / (double)(w * h)) each (int product of the valid
/// size; 0 / 0 = NaN and negative sizes as libvmaf).
struct IqaSsimMeans {
    float ssim, l, c, s;
};
IqaSsimMeans iqa_ssim_finish(const IqaSsimSums& sums);

/// iqa_ssim_finish(iqa_ssim_sum(iqa_ssim_maps(...))).
IqaSsimMeans iqa_ssim(const float* ref, const float* cmp, int w, int h);

} // namespace vmaf_cuda::ref

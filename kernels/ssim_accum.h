// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file ssim_accum.h
/// The per-frame accumulators of the float_ssim and float_ms_ssim kernels (ssim.cuh,
/// ms_ssim.cuh) and their host finish. Plain C++ (no CUDA): the engine's host side and
/// host tools include it.
///
/// The problem. libvmaf v3.2.0 (`iqa/ssim_tools.c` `_iqa_ssim`, see reference/iqa.h)
/// averages the per-pixel terms of the valid region with FOUR sequential double sums
/// (row-major, from 0.0), then takes `(float)(sum / (double)(w * h))`. That sum depends
/// on the order of the additions; a parallel device reduction cannot reproduce it.
///
/// The approach. The device sums every term exactly, in order-free fixed point: a term
/// x (a double) becomes q = round-to-nearest(x * 2^40) (an integer, |x| < 2^22), and the
/// sums of q and of |q| are exact integer sums (64-bit atomics on two 32-bit halves). The
/// host then knows the exact sum X = sum(x_i) to within n * 2^-41, the sums of |x_i| (per
/// band of rows) to within the same, and bounds of recursive summation (Higham, Accuracy
/// and Stability of Numerical Algorithms, 2nd ed., section 4.2): with u = 2^-53,
///     |seq - X| <= gamma_{n-1} * sum|x_i|,  gamma_k = k u / (1 - k u),
///     |seq - X| <= u * sum_i (n - i) |x_i| / (1 - (n - 1) u)   (i = 0..n-1, row-major),
/// the second since each addition errs by at most u |partial sum| and
/// sum_k |P_k| <= sum_i (n - i) |x_i| for the exact prefix sums P_k; the smaller encloses the sequential double sum `seq` of libvmaf in an interval [lo, hi] of
/// doubles. Since `(float)(s / n)` is monotone in s, when the reference's own finish
/// (ref::iqa_ssim_finish) gives the same float at lo and at hi, that float is the result,
/// exactly. Otherwise (the interval straddles a float rounding boundary; or a term was
/// NaN, infinite or |x| >= 2^22) the sum is *undecided*: the host fetches that scale's
/// per-pixel terms (the kernel's copy_terms()) and runs ref::iqa_ssim_sum() on them.
/// How often: see the float_ssim / float_ms_ssim notes in ssim.cuh / ms_ssim.cuh.

#include <cstdint>
#include <functional>

#include "iqa.h"
#include "ms_ssim.h"
#include "ssim.h"

namespace vmaf_cuda::cuda {

/// Fixed-point format of the terms: q = round-to-nearest(x * 2^kIqaFixedBits).
inline constexpr int kIqaFixedBits = 40;
/// Terms with |x| >= this (or NaN, inf) are not summed and counted in `bad`.
inline constexpr double kIqaTermLimit = 4194304.0; // 2^22

/// Index of the four sums of `_iqa_ssim` in IqaScaleAccum.
enum IqaSumIndex : int { kIqaSsim = 0, kIqaL = 1, kIqaC = 2, kIqaS = 3 };

/// Bands of rows for the |x| sums (see IqaScaleAccum).
inline constexpr int kIqaBands = 32;

/// First row of band b of a valid region of h rows: b * h / kIqaBands (bands of equal
/// height up to one row; empty bands when h < kIqaBands).
inline int iqa_band_row(int b, int h) { return int((long long)(b) * h / kIqaBands); }

/// The exact fixed-point sums of one scale (POD, 8-byte words; written by the device).
/// For sum k (ssim = (l * c) * s, l, c, s; IqaSumIndex) over the n terms of the valid
/// region, with q_i = round(x_i * 2^40) as int64:
///   lo[k] = sum of (q_i mod 2^32)   (uint64, each summand in [0, 2^32))
///   hi[k] = sum of (q_i >> 32)       (int64 in two's complement; arithmetic shift)
/// so that sum q_i = hi * 2^32 + lo exactly (nothing wraps for n < 2^30 terms); and the
/// same for |q_i| per band of rows: alo[b][k], ahi[b][k] over the rows
/// [iqa_band_row(b, h), iqa_band_row(b + 1, h)). The bands give the host a weighted bound
/// of the sequential sum's error, sum over i of (n - i) |x_i| (ssim_accum.cpp), about half
/// of gamma_{n-1} sum |x_i|.
/// `bad`: terms not summed (NaN, inf, |x| >= 2^22; libvmaf's terms stay far below).
/// `w`, `h`: the valid-region size (may be <= 0: then no terms, as libvmaf).
struct IqaScaleAccum {
    std::uint64_t lo[4], hi[4];
    std::uint64_t bad;
    std::uint64_t alo[kIqaBands][4], ahi[kIqaBands][4];
    std::int32_t w, h;
};

/// float_ssim's accumulator: one scale. `seq` is the frame's number (0, 1, ... in
/// enqueue order of its kernel object) and names the slot of its term maps
/// (slot = seq % slots; see SsimKernel::copy_terms).
struct SsimAccum {
    IqaScaleAccum scale;
    std::uint64_t seq;
};

/// float_ms_ssim's accumulator: five scales, and `seq` as SsimAccum's.
struct MsSsimAccum {
    IqaScaleAccum scale[ref::kMsSsimScales];
    std::uint64_t seq;
};

/// The sequential double sum of libvmaf enclosed: lo <= seq <= hi (doubles). Returns
/// false when no interval can be given (a `bad` term). `k` is an IqaSumIndex.
bool iqa_seq_interval(const IqaScaleAccum& a, int k, double& lo, double& hi);

/// The float means of one scale decided from its accumulator: for every sum k with bit k
/// of `needed` set, `out` gets libvmaf's exact (float)(seq / n) when the interval decides
/// it; returns the mask of the needed sums it could NOT decide (0: all exact). Sums not
/// needed get the value at the interval's lower end (or NaN for a bad term).
/// `force_undecided` (test hook): report every needed sum undecided.
unsigned iqa_means_from_accum(const IqaScaleAccum& a, unsigned needed, ref::IqaSsimMeans& out,
                              bool force_undecided = false);

/// Host emulation of the device accumulation, term by term from the reference's maps
/// (for tests and for measuring how often the fallback runs; same arithmetic as the
/// device).
IqaScaleAccum iqa_accum_from_maps(const ref::IqaSsimMaps& maps);

/// What float_ssim_finish needs besides the accumulator: the options and the INPUT
/// picture's size and bpc (for enable_db's clip). `force_fallback`: test hook (every
/// needed sum treated as undecided).
struct SsimFinishParams {
    ref::FloatSsimOptions opt;
    unsigned width = 0, height = 0, bpc = 8;
    bool force_fallback = false;
};

/// The sequential double sum (libvmaf's `_iqa_ssim` loop: row-major from 0.0) of sum
/// `sum` (an IqaSumIndex; kIqaSsim: of the products l * c * s) of scale `scale`'s terms,
/// for the sums the accumulator cannot decide: from the term maps on the host
/// (iqa_sum_of_maps) or on the device (OrderedSum, ordered_sum.cuh).
using IqaSumSource = std::function<double(int scale, int sum)>;

/// Sum `sum` of the maps, sequentially (ref::iqa_ssim_sum's arithmetic).
/// \throws std::invalid_argument when a map the sum reads is not w * h long.
double iqa_sum_of_maps(const ref::IqaSsimMaps& maps, int sum);

/// Host finish of float_ssim. Without `terms`: returns true and sets `out` to exactly
/// ref::float_ssim()'s outputs when the accumulator decides them (ssim; with enable_lcs
/// also l, c, s; without enable_lcs l, c, s are NaN: they are no outputs); returns
/// false when it cannot: then the caller copies the frame's terms
/// (SsimKernel::copy_terms(acc, terms)) and calls again with `terms`, which always
/// succeeds (ref::iqa_ssim_sum over the terms, the reference's sequential sums).
/// \throws std::invalid_argument when `terms` does not have the accumulator's size.
bool float_ssim_finish(const SsimAccum& acc, const SsimFinishParams& p, ref::FloatSsimScores& out,
                       const ref::IqaSsimMaps* terms = nullptr);
/// The same with the undecided sums from `sums` (scale 0); always succeeds.
void float_ssim_finish(const SsimAccum& acc, const SsimFinishParams& p, ref::FloatSsimScores& out,
                       const IqaSumSource& sums);

/// As SsimFinishParams, for float_ms_ssim.
struct MsSsimFinishParams {
    ref::FloatMsSsimOptions opt;
    unsigned width = 0, height = 0, bpc = 8;
    bool force_fallback = false;
};

/// Bit of (scale k, sum j) in the masks of float_ms_ssim_finish and
/// MsSsimKernel::copy_terms: 4 * k + j (j an IqaSumIndex; float_ms_ssim never needs kIqaSsim).
inline constexpr unsigned iqa_need_bit(int scale, int sum) { return 1u << (4 * scale + sum); }

/// Host finish of float_ms_ssim: exactly ref::float_ms_ssim()'s outputs (ms_ssim and,
/// with enable_lcs, l/c/s per scale; without it the per-scale values are NaN), through
/// ref::float_ms_ssim_combine. Returns the mask (iqa_need_bit) of the sums it cannot
/// decide; 0 when `out` is final. Then the caller copies those sums' term maps
/// (MsSsimKernel::copy_terms(acc, mask, terms)) and calls again with `terms` (an array of
/// kMsSsimScales maps in which at least the maps of the masked sums are filled): those
/// sums are then the sequential double sums of their maps, in row-major order from 0.0
/// (libvmaf's `_iqa_ssim` loop), and the result is 0.
/// \throws std::invalid_argument when a needed map does not have its scale's size.
unsigned float_ms_ssim_finish(const MsSsimAccum& acc, const MsSsimFinishParams& p,
                              ref::FloatMsSsimScores& out,
                              const ref::IqaSsimMaps* terms = nullptr);
/// The same with the undecided sums from `sums` (called once per undecided sum, which is
/// never kIqaSsim); always succeeds.
void float_ms_ssim_finish(const MsSsimAccum& acc, const MsSsimFinishParams& p,
                          ref::FloatMsSsimScores& out, const IqaSumSource& sums);

} // namespace vmaf_cuda::cuda

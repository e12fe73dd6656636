// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file ordered_sum_math.cuh
/// The arithmetic of a sequential double sum `s = 0; for i: s += x[i]` (IEEE binary64,
/// round to nearest even) of values of either sign, in a form whose steps are
/// independent: what libvmaf v3.2.0's `_iqa_ssim` (iqa/ssim_tools.c) does with its four
/// per-pixel sums, so that the device can give its exact double without the terms going
/// to the host. Host and device, C++17, no CUDA headers. The same idea as CAMBI's
/// non-negative sum (cambi_pool_math.cuh), for signed values.
///
/// Phases. While the partial sum stays in one binade B = [2^(e-1), 2^e) (or its
/// negative), s is a multiple of u = 2^(e-53) and, whenever the exact s + x also lies in
/// B, RN(s + x) = s + (q + t) u with x = q u + r (q = floor(x / u), 0 <= r < u): t = 0
/// for r < u/2, 1 for r > u/2, and on a tie the t that makes s / u + q + t even (ties to
/// even on the mantissa, whose parity is that of s / u). So each value acts on the
/// parity of s / u as a map parity -> (increment, parity), and runs of values compose
/// (OrderedSumMap). A phase ends at the first value whose exact sum may leave B: the
/// increments are tracked with marks that err to the safe side (lo: one lower after a
/// negative value, hi: one higher after a positive one), and the phase ends where a mark
/// reaches its bound. That value is added as a plain double addition; the next phase
/// starts after it, in the binade of the new sum. The first phase (and any phase at
/// s == 0) counts in units of g, the smallest ulp of the nonzero values: there every
/// partial sum is a multiple of g and exact while |s| < 2^53 g.

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define VMAF_CUDA_OS_HD __host__ __device__ __forceinline__
#else
#define VMAF_CUDA_OS_HD inline
#endif

namespace vmaf_cuda::cuda {

/// Increments saturate here (phase bounds are below 2^54 units; two saturated terms add
/// without overflow).
inline constexpr long long kOrderedSumSat = 1LL << 61;

VMAF_CUDA_OS_HD long long ordered_sum_clamp(long long v) {
    return v > kOrderedSumSat ? kOrderedSumSat : v < -kOrderedSumSat ? -kOrderedSumSat : v;
}

/// The action of a run of values on a phase's state, for each parity b of s / u at its
/// start: the increment d[b] of s / u, the new parity p[b], and the marks: lo[b] the
/// smallest and hi[b] the largest running increment after each value of the run (each
/// one lower after a negative value, one higher after a positive one). The empty run has
/// lo = +sat, hi = -sat.
struct OrderedSumMap {
    long long d[2];
    long long lo[2];
    long long hi[2];
    unsigned char p[2];
};

VMAF_CUDA_OS_HD OrderedSumMap ordered_sum_identity() {
    return {{0, 0}, {kOrderedSumSat, kOrderedSumSat}, {-kOrderedSumSat, -kOrderedSumSat}, {0, 1}};
}

/// The map of adding x (finite) in a phase of unit u (a power of two). x / u and the
/// floor are exact; so is r = x - q u (when |x / u| >= 2^53, x is a multiple of u).
VMAF_CUDA_OS_HD OrderedSumMap ordered_sum_map_of(double x, double u) {
    const long long neg = x < 0.0 ? 1 : 0, pos = x > 0.0 ? 1 : 0;
    const double qd = std::floor(x / u);
    if (!(qd < double(kOrderedSumSat)) || !(qd > -double(kOrderedSumSat))) {
        const long long s = qd > 0 ? kOrderedSumSat : -kOrderedSumSat;
        return {{s, s}, {s - neg, s - neg}, {s + pos, s + pos}, {0, 1}};
    }
    const long long q = (long long)qd;
    const double r = x - qd * u;
    const double half = 0.5 * u;
    OrderedSumMap m;
    if (r == half) {
        // ties to even: from parity b, (b + q + t) must be even
        m.d[0] = q + (q & 1);
        m.d[1] = q + ((q + 1) & 1);
        m.p[0] = m.p[1] = 0;
    } else {
        const long long d = r > half ? q + 1 : q;
        m.d[0] = m.d[1] = d;
        m.p[0] = (unsigned char)(d & 1);
        m.p[1] = (unsigned char)((d & 1) ^ 1);
    }
    for (int b = 0; b < 2; ++b) {
        m.lo[b] = m.d[b] - neg;
        m.hi[b] = m.d[b] + pos;
    }
    return m;
}

/// f, then g (f's values come first).
VMAF_CUDA_OS_HD OrderedSumMap ordered_sum_then(const OrderedSumMap& f, const OrderedSumMap& g) {
    OrderedSumMap h;
    for (int b = 0; b < 2; ++b) {
        const int fb = f.p[b];
        h.d[b] = ordered_sum_clamp(f.d[b] + g.d[fb]);
        const long long lo = ordered_sum_clamp(f.d[b] + g.lo[fb]);
        const long long hi = ordered_sum_clamp(f.d[b] + g.hi[fb]);
        h.lo[b] = f.lo[b] < lo ? f.lo[b] : lo;
        h.hi[b] = f.hi[b] > hi ? f.hi[b] : hi;
        h.p[b] = g.p[fb];
    }
    return h;
}

/// One phase: partial sums s_start + D u, parity that of s_start / u; it ends at the
/// first value after which running D + lo <= lo_end or running D + hi >= hi_end.
struct OrderedSumPhase {
    double s_start;
    double u;
    long long lo_end, hi_end;
    int parity;
};

/// Whether a run with map m, entered with increment d and parity b, reaches the end.
VMAF_CUDA_OS_HD bool ordered_sum_ends(const OrderedSumMap& m, long long d, int b,
                                      const OrderedSumPhase& ph) {
    return d + m.lo[b] <= ph.lo_end || d + m.hi[b] >= ph.hi_end;
}

/// The exact phase (host): s = 0 in units of g (a power of two, the smallest ulp of the
/// nonzero values), while |s| < 2^53 g.
inline OrderedSumPhase ordered_sum_phase0(double g) {
    return {0.0, g, -(1LL << 53), 1LL << 53, 0};
}

/// The phase of the binade holding s (host); s == 0: the exact phase of unit g.
inline OrderedSumPhase ordered_sum_phase_at(double s, double g) {
    if (s == 0.0) return ordered_sum_phase0(g);
    int e = 0;
    std::frexp(std::fabs(s), &e); // |s| in [2^(e-1), 2^e)
    const double u = std::ldexp(1.0, e - 53);
    const double lo_b = std::ldexp(1.0, e - 1), hi_b = std::ldexp(1.0, e);
    const long long m = (long long)(std::fabs(s) / u); // the mantissa, < 2^53
    OrderedSumPhase ph;
    ph.s_start = s;
    ph.u = u;
    ph.parity = int(m & 1);
    if (s > 0) {
        ph.lo_end = (long long)((lo_b - s) / u) - 1; // the exact sum went below 2^(e-1)
        ph.hi_end = (long long)((hi_b - s) / u);     // it reached 2^e
    } else {
        ph.lo_end = (long long)((-hi_b - s) / u);     // it reached -2^e
        ph.hi_end = (long long)((-lo_b - s) / u) + 1; // it went above -2^(e-1)
    }
    return ph;
}

/// The smallest ulp of a finite nonzero double (a power of two; 2^-1074 for subnormals).
inline double ordered_sum_ulp(double x) {
    int e = 0;
    std::frexp(std::fabs(x), &e);
    return std::ldexp(1.0, e - 53 < -1074 ? -1074 : e - 53);
}

} // namespace vmaf_cuda::cuda

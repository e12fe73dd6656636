// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
// Shared by tests/api/ordered_sum_test.cpp (CPU) and the device check: the sequential
// double sum (the oracle: `s = 0; s += x[i]`, as libvmaf's `_iqa_ssim`), the arrays both
// sum, and emulated_ordered_sum(): the phases and maps of kernels/ordered_sum_math.cuh run
// sequentially on the host (chunk maps find a phase's end first, as device blocks do).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "ordered_sum_math.cuh"

namespace vmaf_cuda_test {

inline double sequential_sum(const std::vector<double>& x) {
    double s = 0.0;
    for (const double v : x) s += v;
    return s;
}

/// Kinds of ordered_sum_case().
inline constexpr int kOrderedSumKinds = 10;

/// An array of n doubles of kind 0..kOrderedSumKinds-1:
/// 0 SSIM-like terms in (0.5, 1) with full mantissas; 1 signed terms in (-1, 1);
/// 2 mostly positive with a few large negative ones (sums that fall back through
///   binades); 3 values around 1 and tiny ones (1e-12..1e-300, subnormals); 4 +-1 runs
///   (sums crossing zero, exact cancellation); 5 multiples of 2^-30 near 1 (ties to even
///   once the sum passes 2^23); 6 zeros and signed zeros; 7 large values (1e6..1e9) with
///   small ones; 8 a product l * c * s of three SSIM-like terms (float_ssim's sum);
///   9 +-2^e, then steps of +-2^-52..2^-54 of it: the sum keeps landing on and crossing
///   the binade boundary at |2^e|, with ties on both sides.
inline std::vector<double> ordered_sum_case(int kind, std::size_t n, std::mt19937_64& rng) {
    std::uniform_real_distribution<double> u01(0.0, 1.0);
    std::vector<double> x(n);
    const int e9 = int(rng() % 41) - 20;
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t r = rng();
        double v = 0.0;
        switch (kind) {
        case 0: v = 0.5 + 0.5 * u01(rng); break;
        case 1: v = 2.0 * u01(rng) - 1.0; break;
        case 2: v = (r % 97 == 0) ? -40.0 * u01(rng) : u01(rng); break;
        case 3: v = (r % 3 == 0) ? std::ldexp(u01(rng), -int(40 + r % 1000)) : 1.0 + u01(rng); break;
        case 4: v = ((i / 7) % 2 ? -1.0 : 1.0) * (1.0 + double(r % 3) * 0x1p-40); break;
        case 5: v = 1.0 + double(r % (1u << 20)) * 0x1p-30; break;
        case 6: v = (r % 3 == 0) ? -0.0 : (r % 3 == 1) ? 0.0 : std::ldexp(1.0, int(r % 40) - 20); break;
        case 7: v = (r % 5 == 0) ? 1e6 + 1e9 * u01(rng) : u01(rng) - 0.3; break;
        case 9:
            // a random walk around 2^e9 in steps of 1, 1/2 and 1/4 of its ulp
            v = i == 0 ? std::ldexp(e9 % 2 ? -1.0 : 1.0, e9)
                       : std::ldexp(r % 2 ? -1.0 : 1.0, e9 - 52 - int((r >> 8) % 3));
            break;
        default: {
            const double l = 0.9 + 0.1 * u01(rng), c = 0.5 + 0.5 * u01(rng), s = 2.0 * u01(rng) - 0.8;
            v = l * c * s;
            break;
        }
        }
        x[i] = v;
    }
    return x;
}

/// The smallest ulp among the nonzero values (0: all are zero).
inline double ordered_sum_granularity(const std::vector<double>& x) {
    double g = 0.0;
    for (const double v : x)
        if (v != 0.0) {
            const double q = vmaf_cuda::cuda::ordered_sum_ulp(v);
            if (g == 0.0 || q < g) g = q;
        }
    return g;
}

/// The device's phases and maps, sequentially. `phases` counts the phases run.
inline double emulated_ordered_sum(const std::vector<double>& x, int chunk, unsigned* phases = nullptr) {
    using namespace vmaf_cuda::cuda;
    const int n = int(x.size());
    const double g = ordered_sum_granularity(x);
    if (phases) *phases = 0;
    if (g == 0.0) return 0.0;
    OrderedSumPhase ph = ordered_sum_phase0(g);
    int start = 0;
    for (;;) {
        if (phases) ++*phases;
        long long d = 0;
        int par = ph.parity, at = start;
        bool ended = false;
        double s_next = 0.0;
        while (at < n && !ended) {
            const int end = std::min(n, at + chunk);
            OrderedSumMap mp = ordered_sum_identity();
            for (int i = at; i < end; ++i) mp = ordered_sum_then(mp, ordered_sum_map_of(x[std::size_t(i)], ph.u));
            if (!ordered_sum_ends(mp, d, par, ph)) {
                d += mp.d[par];
                par = mp.p[par];
                at = end;
                continue;
            }
            for (int i = at; i < end; ++i) {
                const OrderedSumMap v = ordered_sum_map_of(x[std::size_t(i)], ph.u);
                if (ordered_sum_ends(v, d, par, ph)) {
                    s_next = (ph.s_start + double(d) * ph.u) + x[std::size_t(i)];
                    start = i + 1;
                    ended = true;
                    break;
                }
                d += v.d[par];
                par = v.p[par];
            }
        }
        if (!ended) return ph.s_start + double(d) * ph.u;
        if (start == n) return s_next;
        ph = ordered_sum_phase_at(s_next, g);
    }
}

} // namespace vmaf_cuda_test

// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file cambi_pool_math.cuh
/// The arithmetic of CAMBI's spatial pooling (libvmaf v3.2.0 feature/cambi.c,
/// quick_select() and spatial_pooling()) in a form whose steps are independent, shared by
/// the device pooling (cambi_pool.cu) and its host emulation in the tests. C++17, host
/// and device, no CUDA headers needed.
///
/// **Quick-select rounds.** One round of libvmaf's quick-select on [left, right] with pivot
/// p = arr[k] (descending Hoare partition: i scans while arr[i] > p, j while arr[j] < p,
/// swap when i <= j) is fixed by the values at the round's start:
/// - let L[m] be the m-th position (from the left, 0-based) whose value is not > p, and
///   R[m] the m-th position from the right whose value is not < p;
/// - the round swaps arr[L[m]] with arr[R[m]] for every m < M, where M is the number of m
///   with L[m] <= R[m] (a prefix of m; M >= 1 since arr[k] == p). Until the scans meet they
///   read only positions that no swap has touched yet.
/// - Position-local form (what a parallel pass evaluates): for a position x with cntL(x)
///   = #{y in [left, x] : arr[y] <= p} and cntR(x) = #{y in [x, right] : arr[y] >= p}, x is
///   L[cntL(x) - 1] of a swap iff arr[x] <= p and cntR(x) >= cntL(x), and R[cntR(x) - 1] of
///   a swap iff arr[x] >= p and cntL(x) >= cntR(x).
/// - The round's end (i, j) follows from L[M-1], R[M-1] and the next candidates L[M] (the
///   first position not <= p that fails its condition) and R[M]: cambi_qs_round_end().
///
/// **Ordered double sum.** libvmaf sums the first k values in array order into a double
/// s (s += c[i]). Every c-value is >= 0, so s never decreases. While s stays inside one
/// binade [2^a, 2^(a+1)) with ulp u = 2^(a-52), s is a multiple of u and
/// s + x rounds to s + (q + t) * u, with x = q * u + r (0 <= r < u): t = 0 for r < u / 2,
/// 1 for r > u / 2, and on a tie (r == u / 2) ties-to-even: t makes the new multiple even,
/// so it depends on the parity of s / u alone. Each value therefore acts on the state
/// (parity) as a map parity -> (increment, new parity) (CambiSumMap); maps compose
/// associatively, so a scan gives every partial sum of a binade in parallel. The first
/// value whose partial sum leaves the binade is added as a plain double addition, and the
/// next binade starts after it (cambi_sum_phase_at()). Before any rounding can happen, the
/// first phase uses the granularity g = ulp(smallest nonzero top-k value) as its unit:
/// every partial sum is an exact multiple of g below 2^53 g (cambi_sum_phase0()).

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define VMAF_CUDA_HD __host__ __device__ __forceinline__
#else
#define VMAF_CUDA_HD inline
#endif

namespace vmaf_cuda::cuda {

/// End of one quick-select round: the scans' final i and j.
struct CambiQsEnd {
    int i, j;
};

/// \param l_last, r_last L[M-1] and R[M-1] (the last swapped pair).
/// \param l_next L[M] (first position with value <= p after L[M-1] that is not swapped),
///        or a value > r_last when there is none.
/// \param r_next R[M], or a value < l_last when there is none.
/// After the last swap the scans continue only while l_last + 1 <= r_last - 1; then i
/// stops at L[M] or at R[M-1] (which now holds a value <= p), j at R[M] or at L[M-1].
VMAF_CUDA_HD CambiQsEnd cambi_qs_round_end(int l_last, int r_last, int l_next, int r_next) {
    if (r_last - l_last <= 1) return {l_last + 1, r_last - 1};
    return {l_next < r_last ? l_next : r_last, r_next > l_last ? r_next : l_last};
}

/// libvmaf's update of the quick-select range after a round ending at (i, j).
VMAF_CUDA_HD void cambi_qs_next_range(CambiQsEnd e, int k, int& left, int& right) {
    if (e.j < k) left = e.i;
    if (k < e.i) right = e.j;
}

/// Saturation of the sum increments: any value at or above it is past every phase's end
/// (phase ends are below 2^54 units), so the first such partial sum ends the phase; two
/// saturated terms still add without overflow.
inline constexpr long long kCambiSumSat = 1LL << 61;

/// The action of one value (or of a run of values) on a phase's state: from parity b of
/// s / u, the increment d[b] of s / u and the new parity p[b].
struct CambiSumMap {
    long long d[2];
    unsigned char p[2];
};

VMAF_CUDA_HD CambiSumMap cambi_sum_identity() { return {{0, 0}, {0, 1}}; }

/// Map of adding the value x (a float, >= 0) in a phase of unit u (a power of two).
/// x / u, floor and x - q * u are exact (u is a power of two, x has 24 significant bits).
VMAF_CUDA_HD CambiSumMap cambi_sum_map_of(float xf, double u) {
    const double x = double(xf);
    const double qd = x / u;
    if (!(qd < double(kCambiSumSat))) return {{kCambiSumSat, kCambiSumSat}, {0, 1}};
    const long long q = (long long)qd; // floor (qd >= 0)
    const double r = x - double(q) * u;
    const double half = 0.5 * u;
    if (r == half) {
        // Ties to even: from parity b the result parity (b + q + t) must be 0.
        const long long t0 = q & 1, t1 = (q + 1) & 1;
        return {{q + t0, q + t1}, {0, 0}};
    }
    const long long d = r > half ? q + 1 : q;
    const unsigned char odd = (unsigned char)(d & 1);
    return {{d, d}, {odd, (unsigned char)(odd ^ 1)}};
}

/// f, then g (the values of f come first in the array).
VMAF_CUDA_HD CambiSumMap cambi_sum_then(const CambiSumMap& f, const CambiSumMap& g) {
    CambiSumMap h;
    for (int b = 0; b < 2; ++b) {
        const long long s = f.d[b] + g.d[f.p[b]];
        h.d[b] = s < kCambiSumSat ? s : kCambiSumSat;
        h.p[b] = g.p[f.p[b]];
    }
    return h;
}

/// One phase of the ordered sum: partial sums are s_start + D * u for the running
/// increment D while D < d_end; parity is that of s_start / u.
struct CambiSumPhase {
    double s_start;
    double u;
    long long d_end;
    int parity;
};

/// The first phase (host): s = 0 in units of g = ulp(min_pos) (min_pos: the smallest
/// nonzero value summed, > 0), up to 2^53 g; every top-k value is a multiple of g.
inline CambiSumPhase cambi_sum_phase0(float min_pos) {
    int e = 0;
    std::frexp(min_pos, &e);
    const int ulp_exp = e - 24 < -149 ? -149 : e - 24;
    return {0.0, std::ldexp(1.0, ulp_exp), 1LL << 53, 0};
}

/// The phase of the binade holding s (> 0): u = ulp(s), up to the next power of two.
inline CambiSumPhase cambi_sum_phase_at(double s) {
    int e = 0;
    std::frexp(s, &e); // s in [2^(e-1), 2^e)
    const double u = std::ldexp(1.0, e - 53);
    const double m = s / u; // the integer mantissa, < 2^53
    return {s, u, (long long)((std::ldexp(1.0, e) - s) / u), int(std::fmod(m, 2.0))};
}

} // namespace vmaf_cuda::cuda

// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file cambi_pool_math.cuh
/// The arithmetic of CAMBI's quick-select (libvmaf v3.2.0 feature/cambi.c,
/// quick_select()) in a form whose steps are independent, shared by the device pooling
/// (cambi_pool.cu) and its host emulation in the tests. C++17, host and device, no CUDA
/// headers needed.
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
/// The ordered double sum that follows (libvmaf's `sum += c[i]` over the first k) is
/// OrderedSum's (ordered_sum_math.cuh).

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

} // namespace vmaf_cuda::cuda

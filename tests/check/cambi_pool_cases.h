// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
// Shared by tests/golden/cambi_test.cpp (CPU) and tests/check/cambi_pool.cpp (GPU):
// - literal_pooling(): libvmaf v3.2.0's quick_select and spatial pooling (cambi.c) as
//   its sequential loop runs them, the oracle;
// - pool_case_array(): the arrays both tests pool (c-value-like floats: zeros, ties with
//   the pivot, full mantissas, sorted and reversed runs, and sums large enough that
//   libvmaf's double sum rounds, with ties to even);
// - emulated_pooling(): the device pooling's arithmetic (kernels/cambi_pool_math.cuh:
//   rounds from the position-local swap rule; the ordered sum by OrderedSum's binade
//   phases and maps, ordered_sum_cases.h) run sequentially on the host, so that the
//   math is checked without a GPU.

#include <algorithm>
#include <climits>
#include <cstdint>
#include <functional>
#include <random>
#include <utility>
#include <vector>

#include "cambi_pool_math.cuh"
#include "ordered_sum_cases.h"

namespace vmaf_cuda_test {

/// libvmaf's k (clip of int(topk * n) to [1, n]).
inline int pool_topk_count(double topk, std::size_t n_elements) {
    const int n = static_cast<int>(n_elements);
    const int k = static_cast<int>(topk * n);
    return k < 1 ? 1 : (k > n ? n : k);
}

/// libvmaf v3.2.0 quick_select() + spatial_pooling(), literally (reorders arr).
inline double literal_pooling(std::vector<float>& arr, double topk) {
    const int n = int(arr.size());
    const int k = pool_topk_count(topk, arr.size());
    if (n != k) {
        int left = 0, right = n - 1;
        while (left < right) {
            const float pivot = arr[std::size_t(k)];
            int i = left, j = right;
            do {
                while (arr[std::size_t(i)] > pivot) i++;
                while (arr[std::size_t(j)] < pivot) j--;
                if (i <= j) {
                    std::swap(arr[std::size_t(i)], arr[std::size_t(j)]);
                    i++;
                    j--;
                }
            } while (i <= j);
            if (j < k) left = i;
            if (k < i) right = j;
        }
    }
    double sum = 0;
    for (int i = 0; i < k; i++) sum += arr[std::size_t(i)];
    return sum / k;
}

/// Kinds of pool_case_array().
inline constexpr int kPoolKinds = 9;

/// An array of `n` floats of kind 0..kPoolKinds-1:
/// 0 heavy ties (0..3); 1 zeros and values >= 0.5 with full mantissas; 2 all distinct;
/// 3 zeros and ratios; 4 ties, sorted ascending; 5 the same descending;
/// 6 strong banding: values of 9000+ and values just above 0.5 (the top-k double sum
///   rounds); 7 values near 5000 and random floats in [0.5, 2) (sums in 2^29..2^32, where
///   the small ones' low bits give ties to even); 8 like 7 with half zeros and equal runs.
inline std::vector<float> pool_case_array(int kind, std::size_t n, std::mt19937& rng) {
    std::vector<float> a(n);
    std::uniform_real_distribution<float> small(0.5f, 2.0f);
    for (float& f : a) {
        const std::uint32_t r = rng();
        switch (kind) {
        case 0: f = float(r % 4); break;
        case 1: f = (r % 3) ? 0.0f : 0.5f + float(r >> 8) / 1e4f; break;
        case 2: f = float(r) / 7.3e5f; break;
        case 3: f = (r % 10 < 4) ? 0.0f : float(1 + r % 2000) / float(1 + (r >> 20)); break;
        case 6:
            f = (r % 2) ? float(9000 + (r >> 4) % 100000 / 7.0)
                        : std::nextafter(0.5f + float(r >> 1) / 8.6e9f, 1.0f);
            break;
        case 7: f = (r % 3) ? small(rng) : float(4000 + (r >> 8) % 2000) + 0.25f * float(r % 4); break;
        case 8:
            f = (r % 2) ? 0.0f : (r % 5 == 0) ? 6000.0f : (r % 3) ? small(rng) : float(5000 + r % 7);
            break;
        default: f = float(r % 50); break;
        }
    }
    if (kind == 4) std::sort(a.begin(), a.end());
    if (kind == 5) std::sort(a.begin(), a.end(), std::greater<float>());
    return a;
}

/// The device pooling's rounds and ordered sum, sequentially (reorders arr like libvmaf).
/// `chunk`: the block size whose composed maps find a phase's end first (as the device's
/// blocks do), then the value inside the chunk.
inline double emulated_pooling(std::vector<float>& arr, double topk, int chunk = 37) {
    using namespace vmaf_cuda::cuda;
    const int n = int(arr.size());
    const int k = pool_topk_count(topk, arr.size());
    if (n != k) {
        int left = 0, right = n - 1;
        std::vector<int> lpos, rpos, cntl(static_cast<std::size_t>(n)), cntr(static_cast<std::size_t>(n));
        while (left < right) {
            const float p = arr[std::size_t(k)];
            int c = 0;
            for (int x = left; x <= right; ++x) cntl[std::size_t(x)] = c += !(arr[std::size_t(x)] > p);
            c = 0;
            for (int x = right; x >= left; --x) cntr[std::size_t(x)] = c += !(arr[std::size_t(x)] < p);
            lpos.assign(std::size_t(n / 2 + 2), -1);
            rpos.assign(std::size_t(n / 2 + 2), -1);
            int l_next = INT_MAX, r_next = -1, m_count = 0;
            for (int x = left; x <= right; ++x) {
                const float v = arr[std::size_t(x)];
                const int cl = cntl[std::size_t(x)], cr = cntr[std::size_t(x)];
                if (!(v > p)) {
                    if (cr >= cl) lpos[std::size_t(cl - 1)] = x, m_count = std::max(m_count, cl);
                    else l_next = std::min(l_next, x);
                }
                if (!(v < p)) {
                    if (cl >= cr) rpos[std::size_t(cr - 1)] = x;
                    else r_next = std::max(r_next, x);
                }
            }
            for (int m = 0; m < m_count; ++m)
                std::swap(arr[std::size_t(lpos[std::size_t(m)])], arr[std::size_t(rpos[std::size_t(m)])]);
            const CambiQsEnd e = cambi_qs_round_end(lpos[std::size_t(m_count - 1)],
                                                    rpos[std::size_t(m_count - 1)], l_next, r_next);
            cambi_qs_next_range(e, k, left, right);
        }
    }
    // libvmaf's `sum += c[i]` over the first k: OrderedSum's phases (ordered_sum_cases.h)
    const std::vector<double> first(arr.begin(), arr.begin() + k);
    return emulated_ordered_sum(first, chunk) / k;
}

} // namespace vmaf_cuda_test

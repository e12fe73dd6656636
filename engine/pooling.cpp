// SPDX-License-Identifier: BSD-2-Clause-Patent
// Pooling; operation order of libvmaf v3.2.0 vmaf_feature_score_pooled().

#include "pooling.h"

#include "error.h"
#include "vmaf_cuda.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace vmaf_cuda::engine {

unsigned pool_percentile(int method) {
    switch (method) {
    case VMAF_CUDA_POOL_PERC1: return 1;
    case VMAF_CUDA_POOL_PERC5: return 5;
    case VMAF_CUDA_POOL_PERC10: return 10;
    default: return 0;
    }
}

double percentile(std::span<const double> values, unsigned p) {
    if (values.empty()) throw Error(VMAF_CUDA_EINVAL, "no frame scored: nothing to pool");
    if (p < 1 || p > 100)
        throw Error(VMAF_CUDA_EINVAL, "percentile " + std::to_string(p) + " is not 1..100");
    const std::size_t n = values.size();
    std::size_t rank = (std::size_t(p) * n + 99) / 100;  // ceil(p * n / 100), exact
    if (rank < 1) rank = 1;
    std::vector<double> v(values.begin(), values.end());
    // NaN last: a strict weak order on numbers and NaN
    const auto less = [](double a, double b) { return std::isnan(b) ? !std::isnan(a) : a < b; };
    std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(rank - 1), v.end(), less);
    return v[rank - 1];
}

double pool(std::span<const double> values, int method) {
    if (values.empty()) throw Error(VMAF_CUDA_EINVAL, "no frame scored: nothing to pool");
    if (const unsigned p = pool_percentile(method)) return percentile(values, p);
    // libvmaf accumulates all four in one pass; each is independent of the others.
    const unsigned count = unsigned(values.size());
    double min = values[0], max = values[0], sum = 0., inv_sum = 0.;
    for (const double s : values) {
        sum += s;
        inv_sum += 1. / (s + 1.);
        if (s < min) min = s;
        if (s > max) max = s;
    }
    switch (method) {
    case VMAF_CUDA_POOL_MEAN: return sum / count;
    case VMAF_CUDA_POOL_HARMONIC_MEAN: return count / inv_sum - 1.0;
    case VMAF_CUDA_POOL_MIN: return min;
    case VMAF_CUDA_POOL_MAX: return max;
    default: throw Error(VMAF_CUDA_EINVAL, "unknown pooling method " + std::to_string(method));
    }
}

} // namespace vmaf_cuda::engine

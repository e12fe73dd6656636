// SPDX-License-Identifier: BSD-2-Clause-Patent
// Pooling; operation order of libvmaf v3.2.0 vmaf_feature_score_pooled().

#include "pooling.h"

#include "error.h"
#include "vmaf_cuda.h"

namespace vmaf_cuda::engine {

double pool(std::span<const double> values, int method) {
    if (values.empty()) throw Error(VMAF_CUDA_EINVAL, "no frame scored: nothing to pool");
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

// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file pooling.h
/// Pooling of per-frame scores over the scored frames, as libvmaf v3.2.0
/// src/libvmaf.c vmaf_feature_score_pooled() computes it, plus low percentiles.

#include <span>

namespace vmaf_cuda::engine {

/// Pools `values` (one per scored frame, in frame order) with `method`, a VmafCudaPool:
/// - MEAN: sum in frame order (double), divided by the count;
/// - HARMONIC_MEAN: count / (sum in frame order of 1 / (v + 1)) - 1;
/// - MIN / MAX: the first value, replaced by each later value that is smaller / larger
///   (so a NaN first value stays, later NaNs are skipped, as in libvmaf);
/// - PERC1 / PERC5 / PERC10: percentile() with p = 1, 5, 10.
/// Throws Error(VMAF_CUDA_EINVAL) for an empty span or an unknown method.
double pool(std::span<const double> values, int method);

/// Nearest-rank percentile: the value at 1-based rank max(1, ceil(p * n / 100)) of the
/// values sorted ascending, NaN after every number (the rank is computed in integers,
/// so p = 5, n = 20 is rank 1 exactly). p in 1..100; throws Error(EINVAL) when empty.
double percentile(std::span<const double> values, unsigned p);

/// The percentile of a VmafCudaPool method (1, 5, 10), or 0 for the other methods.
unsigned pool_percentile(int method);

} // namespace vmaf_cuda::engine

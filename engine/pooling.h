// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file pooling.h
/// Pooling of per-frame scores over the scored frames, as libvmaf v3.2.0
/// src/libvmaf.c vmaf_feature_score_pooled() computes it.

#include <span>

namespace vmaf_cuda::engine {

/// Pools `values` (one per scored frame, in frame order) with `method`, a VmafCudaPool:
/// - MEAN: sum in frame order (double), divided by the count;
/// - HARMONIC_MEAN: count / (sum in frame order of 1 / (v + 1)) - 1;
/// - MIN / MAX: the first value, replaced by each later value that is smaller / larger
///   (so a NaN first value stays, later NaNs are skipped, as in libvmaf).
/// Throws Error(VMAF_CUDA_EINVAL) for an empty span or an unknown method.
double pool(std::span<const double> values, int method);

} // namespace vmaf_cuda::engine

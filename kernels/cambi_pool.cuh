// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file cambi_pool.cuh
/// CAMBI's spatial pooling of one scale on the device, exactly as libvmaf v3.2.0 does it
/// on the host (feature/cambi.c: quick_select() reorders the c-values, spatial_pooling()
/// sums the first k in the order left, in a double, and divides by k).
///
/// The CUDA engine uses it for the scales whose order-free top-k sum (cambi.cuh, stage 4)
/// cannot guarantee libvmaf's double (strongly banded frames near 4K), so that the
/// c-values never go to the host. The arithmetic is that of cambi_pool_math.cuh:
/// - quick-select rounds: while the range is longer than kCambiPoolSmall values, one round
///   is four launches over the range (counts per block of 2048 values, their prefix sums,
///   the position-local swap rule writing the swapped pairs' positions, the swaps); the
///   host reads back the round's end (a few bytes) and sets the next range. The rest runs
///   in one block in shared memory, rounds in a loop;
/// - the ordered sum: OrderedSum (ordered_sum.cuh), libvmaf's double sum in array order
///   by binade phases, on the device.
/// Each call is synchronous on its stream (it waits for the small readbacks).
///
/// Declarations only; host C++ (C++17 or later) can include it without nvcc.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "cuda_common.cuh"
#include "ordered_sum.cuh"

namespace vmaf_cuda::cuda {

/// Ranges of at most this many values finish their quick-select in one block.
inline constexpr unsigned kCambiPoolSmall = 4096;

/// What one pooling did (for tests and benchmarks).
struct CambiPoolStats {
    unsigned grid_rounds = 0;  ///< quick-select rounds run as grid launches
    unsigned small_ranges = 0; ///< 1 when the last rounds ran in one block
    unsigned sum_phases = 0;   ///< binade phases of the ordered sum
};

/// Device scratch for pooling arrays of up to max_n values; one call at a time per object
/// (objects on different streams may run concurrently).
class CambiDevicePool {
public:
    /// Allocates the scratch (two int32 position lists of max_n / 2 + 2, block counts, a
    /// pinned readback struct, an OrderedSum of max_n).
    /// \throws CudaError.
    explicit CambiDevicePool(std::size_t max_n);

    /// libvmaf's spatial_pooling() of the n floats at `c` (device memory, values >= 0, no
    /// NaN): reorders them in place exactly as libvmaf's quick_select(c, n, k) does, and
    /// returns the double sum of c[0..k) in array order, divided by k.
    /// \param k 1..n (libvmaf: clip(int(topk * n), 1, n)).
    /// Waits for `stream` (work enqueued before it on `stream` is complete on return).
    /// \throws std::invalid_argument when n exceeds max_n or k is out of range;
    ///         CudaError on a CUDA failure.
    double pool(float* c, unsigned n, unsigned k, cudaStream_t stream,
                CambiPoolStats* stats = nullptr);

    std::size_t max_n() const { return max_n_; }
    /// Device memory held, in bytes.
    std::size_t device_bytes() const;

private:
    std::size_t max_n_;
    DeviceBuffer pos_;    // int32: L positions, then R positions (max_n / 2 + 2 each)
    DeviceBuffer blocks_; // per 2048-value block: counts and prefixes
    DeviceBuffer state_;  // the round state
    PinnedBuffer host_state_; // pinned copy of state_
    OrderedSum sum_;
};

} // namespace vmaf_cuda::cuda

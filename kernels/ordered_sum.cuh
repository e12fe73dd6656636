// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file ordered_sum.cuh
/// The sequential double sum `s = 0.0; for i: s += x[i]` of a device array, computed on
/// the device to the same double (arithmetic: ordered_sum_math.cuh): libvmaf v3.2.0's
/// `_iqa_ssim` sums (iqa/ssim_tools.c: l, c, s and the product l * c * s, row-major) for
/// the float_ssim / float_ms_ssim frames whose fixed-point interval cannot decide the
/// mean (ssim_accum.h), without the term maps going to the host.
///
/// Per call: one pass for the granularity (the smallest ulp of the nonzero values) and
/// finiteness, read back; then per phase three launches (block maps of 2048 values, one
/// block finding the block where the phase ends, one block finding the value and adding
/// it as a plain double addition) and a readback of a few bytes. Phases: about one per
/// binade the sum passes through (24 for 8 million SSIM terms near 1), more where it
/// hovers around a power of two. Synchronous on its stream.
///
/// The CUDA engine's float_ssim and float_ms_ssim finishes use it (DeviceSums) for their
/// undecided sums. Declarations only (and DeviceSums, inline); host C++ can include it
/// without nvcc.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "cuda_common.cuh"

namespace vmaf_cuda::cuda {

/// What one sum did (for tests and benchmarks).
struct OrderedSumStats {
    unsigned phases = 0;
};

/// Device scratch for sums of up to max_n values; one call at a time per object.
class OrderedSum {
public:
    /// \throws std::invalid_argument for max_n outside 1..2^31 - 1; CudaError.
    explicit OrderedSum(std::size_t max_n);

    /// The sequential double sum of the n values x_i = a[i] (b null), or x_i =
    /// (a[i] * b[i]) * c[i] (b and c given; each product rounded as libvmaf's expression
    /// `l * c * s`), in index order from +0.0. a, b, c: device memory.
    /// \returns false (and leaves `out`) when some x_i is not finite or a partial sum
    ///          overflows: the caller then sums on the host (where the sequential sum gives
    ///          libvmaf's NaN or infinity).
    /// Waits for `stream`. \throws std::invalid_argument for n > max_n; CudaError.
    bool sum(const double* a, const double* b, const double* c, std::size_t n,
             cudaStream_t stream, double& out, OrderedSumStats* stats = nullptr);
    /// The same of n floats (each converted to double exactly), e.g. CAMBI's c-values.
    bool sum(const float* x, std::size_t n, cudaStream_t stream, double& out,
             OrderedSumStats* stats = nullptr);

    std::size_t max_n() const { return max_n_; }
    std::size_t device_bytes() const { return blocks_.bytes() + state_.bytes(); }

private:
    struct Input {
        const double* a;
        const double* b;
        const double* c;
        const float* f;
    };
    bool run(const Input& in, std::size_t n, cudaStream_t stream, double& out, OrderedSumStats* stats);
    std::size_t max_n_;
    DeviceBuffer blocks_; // per 2048-value block: its composed map
    DeviceBuffer state_;  // the phase state
    PinnedBuffer host_state_;
};

/// An OrderedSum on a stream of its own (non-blocking), both made on first use: for a
/// host finish that sums maps whose producing work has completed (their frame's
/// accumulator is on the host), without waiting for later frames on the lane's stream.
class DeviceSums {
public:
    explicit DeviceSums(std::size_t max_n) : max_n_(max_n) {}
    ~DeviceSums() {
        if (stream_) cudaStreamDestroy(stream_);
    }
    DeviceSums(const DeviceSums&) = delete;
    DeviceSums& operator=(const DeviceSums&) = delete;
    /// OrderedSum::sum on the own stream.
    bool sum(const double* a, const double* b, const double* c, std::size_t n, double& out) {
        if (!os_) {
            VMAF_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
            os_ = std::make_unique<OrderedSum>(max_n_);
        }
        return os_->sum(a, b, c, n, stream_, out);
    }

private:
    std::size_t max_n_;
    cudaStream_t stream_ = nullptr;
    std::unique_ptr<OrderedSum> os_;
};

} // namespace vmaf_cuda::cuda

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
/// finiteness, read back; then per phase three launches (block maps of 2048 values over
/// a range of at most twice the values summed so far, one block finding the block where
/// the phase ends, one block finding the value and adding it as a plain double addition)
/// and a readback of a few bytes; a phase that does not end in its range goes on in the
/// next. Phases: about one per
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
#include <mutex>
#include <vector>

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
    /// Values a phase maps at least (default 32768; the most is twice the values summed
    /// before it). Tests set 1 to make phases go on across many ranges.
    /// \throws std::invalid_argument for 0.
    void set_min_range(std::size_t v);
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
    long long min_range_ = 32768;
    DeviceBuffer blocks_; // per 2048-value block: its composed map
    DeviceBuffer state_;  // the phase state
    PinnedBuffer host_state_;
};

/// OrderedSums on streams of their own (non-blocking, greatest priority:
/// make_latency_stream), for host finishes that sum maps
/// whose producing work has completed (their frame's accumulator is on the host), without
/// waiting for later frames on the lane's stream. Thread-safe: concurrent calls each use
/// an OrderedSum and stream of their own, made on first need and kept for later calls
/// (as many as calls ever ran at once: the CUDA engine's host-tail workers).
class DeviceSums {
public:
    explicit DeviceSums(std::size_t max_n) : max_n_(max_n) {}
    DeviceSums(const DeviceSums&) = delete;
    DeviceSums& operator=(const DeviceSums&) = delete;
    /// OrderedSum::sum on a stream of this object's.
    bool sum(const double* a, const double* b, const double* c, std::size_t n, double& out) {
        std::unique_ptr<Unit> u = take();
        const bool ok = u->os.sum(a, b, c, n, u->stream, out);
        give(std::move(u));
        return ok;
    }

private:
    struct Unit {
        explicit Unit(std::size_t max_n) : os(max_n) {
            stream = make_latency_stream();
        }
        ~Unit() {
            if (stream) cudaStreamDestroy(stream);
        }
        Unit(const Unit&) = delete;
        Unit& operator=(const Unit&) = delete;
        OrderedSum os;
        cudaStream_t stream = nullptr;
    };
    std::unique_ptr<Unit> take() {
        {
            std::lock_guard<std::mutex> g(mu_);
            if (!free_.empty()) {
                std::unique_ptr<Unit> u = std::move(free_.back());
                free_.pop_back();
                return u;
            }
        }
        return std::make_unique<Unit>(max_n_);
    }
    /// Back to the free list (a sum that throws drops its unit instead).
    void give(std::unique_ptr<Unit> u) {
        std::lock_guard<std::mutex> g(mu_);
        free_.push_back(std::move(u));
    }
    std::size_t max_n_;
    std::mutex mu_;
    std::vector<std::unique_ptr<Unit>> free_;
};

} // namespace vmaf_cuda::cuda

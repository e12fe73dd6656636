// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file adm.cuh
/// CUDA integer stage of ADM (libvmaf v3.2.0 integer_adm, scalar C path): produces the
/// same `ref::AdmAccum` bytes as `ref::adm_accumulate` (reference/adm.h) for any input;
/// the host tail `ref::adm_finish` turns it into feature values.
/// Declarations only (includable from g++); kernels live in adm.cu.

#include "adm.h"
#include "cuda_common.cuh"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace vmaf_cuda::cuda {

class AdmKernel {
public:
    /// Allocates all device scratch for a w x h luma plane of `bpc` bits (8..16) once.
    /// Throws std::invalid_argument for w or h < ref::kAdmMinSize, bpc outside 8..16 or
    /// options ref::adm_factors rejects; CudaError when a CUDA call fails.
    AdmKernel(unsigned w, unsigned h, unsigned bpc, const ref::AdmOptions& opt);

    /// Enqueues the whole ADM integer stage on `stream`: no host synchronisation, no
    /// allocation, 5 kernel launches. Writes every field of the one ref::AdmAccum at
    /// device address `d_out`. `ref`/`dis`: device luma planes of the constructor's size
    /// and bpc, any pitch (even for bpc > 8). Calls on one AdmKernel must be ordered (same
    /// stream, or the previous call complete): the scratch is shared between calls.
    /// Throws std::invalid_argument on a size/bpc mismatch, CudaError on a launch error.
    void enqueue(const DeviceLuma& ref, const DeviceLuma& dis, ref::AdmAccum* d_out,
                 cudaStream_t stream);

    unsigned width() const { return w_; }
    unsigned height() const { return h_; }
    unsigned bpc() const { return bpc_; }

private:
    unsigned w_, h_, bpc_;
    ref::AdmOptions opt_;
    ref::AdmFactors factors_;
    ref::AdmScaleParams params_[4];
    DeviceBuffer lo_a_;   ///< band_a (ref, dis) of scales 0 and 2, int32
    DeviceBuffer lo_b_;   ///< band_a (ref, dis) of scale 1, int32
    DeviceBuffer rows_;   ///< per-row partial sums, 9 x bh per scale, uint64, kept zeroed
    std::size_t row_offset_[4] = {};
    int tile_h_[4] = {};  ///< band rows per block for each scale (from the SM count)
};

} // namespace vmaf_cuda::cuda

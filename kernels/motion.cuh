// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file motion.cuh
/// CUDA integer stage of libvmaf v3.2.0's integer motion (integer_motion.c,
/// motion_score_pipeline_8/16): the SAD of the blurred difference of two consecutive
/// reference lumas, exactly the uint64 that ref::motion_sad() returns.
/// ref::motion_sad_finish() and the motion2/motion3 functions of reference/motion.h
/// turn it into scores. Declarations only: includable from host C++ without nvcc.
///
/// One kernel per frame: shared-memory tiles of the difference prev - cur with a
/// 2-sample mirrored halo, vertical 5-tap pass (one thread per column), horizontal
/// 5-tap pass (4 pixels per thread), |.| summed per thread, block reduction, one 64-bit
/// atomic per block. libvmaf sums |.| per row in uint32 before adding rows; a row sum is
/// at most 65535 * width, so for the widths accepted here (<= 65537) no row sum wraps
/// and the plain 64-bit total is the same number.

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda_common.cuh"

namespace vmaf_cuda::cuda {

class MotionKernel {
public:
    /// \param w 3..65537, \param h >= 3 (the mirror must stay inside the plane),
    /// \param bpc 8..16.
    /// \throws CudaError (cudaErrorInvalidValue) on invalid arguments, or on a CUDA failure.
    MotionKernel(unsigned w, unsigned h, unsigned bpc);

    /// Enqueue on `stream`: zero `*d_out` (device memory; not when `out_zeroed`, the
    /// caller's promise that it is zero when the stream gets here) and add the blurred SAD between
    /// `prev_ref` and `cur_ref` (both of this object's size and bpc). No host
    /// synchronisation, no allocation; the object holds no per-frame state, so enqueues
    /// on several streams may overlap.
    /// \throws CudaError on a launch failure or a size/bpc mismatch.
    void enqueue(const DeviceLuma& prev_ref, const DeviceLuma& cur_ref, std::uint64_t* d_out,
                 cudaStream_t stream, bool out_zeroed = false);

    unsigned width() const { return w_; }
    unsigned height() const { return h_; }
    unsigned bpc() const { return bpc_; }

private:
    unsigned w_, h_, bpc_;
    int max_blocks_;
};

} // namespace vmaf_cuda::cuda

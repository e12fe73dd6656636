// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file psnr.cuh
/// CUDA integer stage of libvmaf v3.2.0's `psnr` (libvmaf/src/feature/integer_psnr.c,
/// `psnr` / `psnr_hbd` inner loops): per-plane sums of squared differences, exactly the
/// ref::PsnrAccum that ref::psnr_accumulate() (reference/psnr.h) produces; the host
/// turns it into psnr_y/cb/cr (and mse_*) with ref::psnr_finish(), and adds it to the
/// stream totals with ref::psnr_totals_add() for apsnr. Declarations only: includable
/// from host C++ without nvcc.
///
/// One kernel per frame (plus a memset of the accumulator): blockIdx.y is the plane, the
/// blocks of a plane stride over its rows, threads over columns; each thread adds its
/// squares (< 2^32) into a uint64, block reduction, one 64-bit atomic per block and
/// plane. Integer sums: any order gives libvmaf's value.
///
/// libvmaf's 8-bit path sums each row in a uint32 (wrapping) before adding rows into the
/// uint64: a row sum is at most 65025 * width, below 2^32 for width <= 66051, so for the
/// widths accepted here (<= 66051) no row sum wraps and the plain 64-bit total is the
/// same number. Deeper pictures add each square (< 2^32) into the uint64, as here.

#include <cuda_runtime.h>

#include <cstddef>

#include "cuda_common.cuh"
#include "psnr.h"

namespace vmaf_cuda::cuda {

class PsnrKernel {
public:
    /// \param width 1..66051, \param height >= 1 (width * height < 2^32), \param bpc
    /// 8, 10, 12 or 16, \param chroma 400, 420, 422 or 444, \param opt libvmaf's options.
    /// Calls ref::psnr_setup() (its std::invalid_argument for bad bpc/chroma/min_sse is
    /// rethrown as CudaError(cudaErrorInvalidValue)).
    /// \throws CudaError (cudaErrorInvalidValue) on invalid arguments.
    PsnrKernel(unsigned width, unsigned height, unsigned bpc, unsigned chroma,
               const ref::PsnrOptions& opt = {});

    /// Bytes of one frame's accumulator: sizeof(ref::PsnrAccum) (48).
    std::size_t accum_bytes() const { return sizeof(ref::PsnrAccum); }

    /// Enqueue on `stream`: overwrite the ref::PsnrAccum at `d_accum` (device memory,
    /// 8-byte aligned) with this frame pair's SSE and pixel count per computed plane
    /// (planes not computed: 0). `ref[p]`, `dis[p]` for p < setup().planes: Y, Cb, Cr, as
    /// DevicePlane (planar or one component of NV12/P010/P016 chroma, read in place); each
    /// at least libvmaf's plane size (luma w x h; chroma yuv_libvmaf_chroma_width/height,
    /// the top-left part of the caller's ceil-sized planes is read), bpc of the
    /// construction, step 1 or 2, pitch >= a row and < 2^31 bytes. Entries p >=
    /// setup().planes are not read. No host synchronisation, no allocation; no per-frame
    /// state in the object (enqueues on several streams may overlap).
    /// \throws CudaError on a plane that does not fit, or a launch failure.
    void enqueue(const DevicePlane ref[3], const DevicePlane dis[3], void* d_accum,
                 cudaStream_t stream) const;

    /// What ref::psnr_setup() gave: psnr_finish(setup(), accum) is the frame's scores.
    const ref::PsnrSetup& setup() const { return setup_; }

private:
    ref::PsnrSetup setup_;
    unsigned pw_[3], ph_[3];
    int blocks_per_plane_;
};

/// Host finish: the frame's psnr/mse from the host copy of the accumulator
/// (ref::psnr_finish, the reference's own code).
inline ref::PsnrScores psnr_finish(const PsnrKernel& k, const void* host_accum) {
    return ref::psnr_finish(k.setup(), *static_cast<const ref::PsnrAccum*>(host_accum));
}

} // namespace vmaf_cuda::cuda

// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file ciede.cuh
/// CUDA stage 1 of libvmaf v3.2.0's `ciede` (libvmaf/src/feature/ciede.c): the per-pixel
/// dE00 map, exactly the floats of ref::ciede_map() (reference/ciede.h). Declarations
/// only: includable from host C++ without nvcc.
///
/// Accumulator: the dE00 map itself, w * h floats, row-major (luma size), in device
/// memory: accum_bytes() = 4 * w * h (1080p: 8.3 MB, 4K: 33.2 MB per frame copied to the
/// host). libvmaf sums the floats into one double in row-major order (order-dependent
/// rounding), which no parallel reduction reproduces; so the host finishes with the
/// reference's own ref::ciede_sum() and ref::ciede_finish() (ciede_finish_host below).
///
/// One thread per pixel: the chroma sample libvmaf pairs with luma (x, y) (4:4:4: the
/// same position; 4:2:0: libvmaf's upsampling, including its reads past its chroma planes
/// for odd sizes, reproduced from the layout described in reference/ciede.h: linear
/// sample (y/2) * S + x/2 of U | V with row stride S = align32(w >> 1), zeros past V),
/// then cuda::ciede_de00() (ciede_pixel.cuh: glibc-identical libm, IEEE ops only).
/// Bit-exact with the reference when the reference runs on glibc 2.36's x86_64 FMA libm
/// (any x86_64 CPU with FMA + AVX2; see glibc_math.cuh).

#include <cuda_runtime.h>

#include <cstddef>

#include "cuda_common.cuh"

namespace vmaf_cuda::cuda {

class CiedeKernel {
public:
    /// \param width, height >= 1 (width * height < 2^31), \param bpc 8, 10, 12 or 16,
    /// \param chroma 420 or 444 (ref::ciede_check_format: libvmaf refuses 4:0:0; its 4:2:2
    /// is not reproducible).
    /// \throws CudaError (cudaErrorInvalidValue) on invalid arguments (the message says why).
    CiedeKernel(unsigned width, unsigned height, unsigned bpc, unsigned chroma);

    /// Bytes of one frame's accumulator: 4 * width * height (the float dE00 map).
    std::size_t accum_bytes() const { return std::size_t(w_) * h_ * sizeof(float); }

    /// Enqueue on `stream`: write the dE00 map of this frame pair (w * h floats, row-major)
    /// at `d_accum` (device memory, 4-byte aligned). `ref[p]`, `dis[p]`: Y, Cb, Cr as
    /// DevicePlane (planar or NV12/P010/P016 interleaved chroma read in place, any shift);
    /// luma w x h, chroma at least libvmaf's size ((w >> 1) x (h >> 1) for 4:2:0, w x h
    /// for 4:4:4; a larger (ceil-sized) plane is fine: only its top-left part is read),
    /// bpc of the construction, step 1 or 2, pitch >= a row and < 2^31 bytes. No host
    /// synchronisation, no allocation, no per-frame state.
    /// \throws CudaError on a plane that does not fit, or a launch failure.
    void enqueue(const DevicePlane ref[3], const DevicePlane dis[3], void* d_accum,
                 cudaStream_t stream) const;

    unsigned width() const { return w_; }
    unsigned height() const { return h_; }
    unsigned bpc() const { return bpc_; }
    unsigned chroma() const { return chroma_; }

private:
    unsigned w_, h_, bpc_, chroma_;
};

/// Host finish: the frame's `ciede2000` from the host copy of the map (accum_bytes()
/// bytes): ref::ciede_finish(ref::ciede_sum(map, w * h), w, h), the reference's code
/// (a sequential double sum, about 10 ms at 4K on one core). +inf for identical pictures.
double ciede_finish_host(const CiedeKernel& k, const void* host_accum);

} // namespace vmaf_cuda::cuda

// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file luma.cuh
/// Luma plane preparation on the device: high-bit layouts (P010/P012/P016, whose
/// values sit in the high bits of 16-bit words) shifted down into a plane of values.

#include "cuda_common.cuh"

namespace vmaf_cuda::cuda {

/// dst(x, y) = src(x, y) >> shift for every sample of a width x height plane of 16-bit
/// words (src.bpc > 8) or bytes (src.bpc == 8). dst has `dst_pitch` bytes per row and
/// room for the plane. Enqueued on `stream`; throws CudaError on a launch failure.
void shift_luma(const DeviceLuma& src, unsigned shift, void* dst, std::size_t dst_pitch,
                cudaStream_t stream);

/// Sums of the samples (each >> shift) of `src` over a grid x grid split of the plane
/// (cell (cx, cy): columns cx * W / grid .. (cx + 1) * W / grid - 1, rows likewise;
/// row-major), exact in 64 bits, written to `sums` (device memory, grid * grid values).
/// The alignment's signatures (vmaf_cuda_align.h). Enqueued on `stream`.
void cell_sums(const DeviceLuma& src, unsigned shift, unsigned grid, unsigned long long* sums,
               cudaStream_t stream);

/// Whether the current device can load this build's kernels: cudaSuccess when the
/// fatbinary holds machine code for its arch (or a compatible one) or PTX its driver can
/// JIT; else the loader's error (cudaErrorNoKernelImageForDevice,
/// cudaErrorUnsupportedPtxVersion, ...). Every kernels/*.cu is built with the same
/// -gencode list, so one kernel answers for all. Leaves no pending error behind.
cudaError_t kernel_image_status();

} // namespace vmaf_cuda::cuda

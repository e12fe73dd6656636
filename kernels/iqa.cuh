// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file iqa.cuh
/// Launchers of the per-pixel iqa stages shared by the float_ssim and float_ms_ssim
/// kernels (ssim.cuh, ms_ssim.cuh); each reproduces one function of reference/iqa.h
/// exactly, per pixel, in the reference's operation order (IEEE single/double with
/// explicit round-to-nearest intrinsics: no contraction, no device libm). Internal to
/// kernels/: declarations only, includable from host C++.
/// Images are float planes, row-major, stride = width, in device memory. Every launcher
/// enqueues on `stream` without synchronising and launches nothing for empty outputs.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "cuda_common.cuh"
#include "ssim_accum.h"

namespace vmaf_cuda::cuda::iqa {

/// A 2-D decimation kernel of up to 10x10 taps (float_ssim's box of scale <= 10, the 9x9
/// ms_ssim low-pass), passed by value. `len` x `len` taps, row-major.
struct Taps2d {
    float k[100];
    int len;
};

/// ref::iqa_picture_to_float of two planes of w x h (bpc 8, 10, 12, 16; the value of a
/// sample is load(p, x, y)) into `ref_out`, `dis_out` (w * h floats each).
void launch_to_float(const DevicePlane& ref, const DevicePlane& dis, float* ref_out,
                     float* dis_out, cudaStream_t stream);

/// ref::iqa_decimate by `factor` of the float conversion of two planes (w x h), read in
/// place: outputs sw x sh = (w / factor + (w & 1)) x (h / factor + (h & 1)). The caller
/// checks that every mirrored index stays in the plane (decimate_reads_in_range).
void launch_decimate_planes(const DevicePlane& ref, const DevicePlane& dis, int factor,
                            const Taps2d& taps, float* ref_out, float* dis_out,
                            cudaStream_t stream);

/// ref::iqa_decimate by `factor` of two float images of w x h (out of place).
void launch_decimate(const float* ref, const float* dis, int w, int h, int factor,
                     const Taps2d& taps, float* ref_out, float* dis_out, cudaStream_t stream);

/// True when ref::iqa_decimate of a w x h image reads only samples inside it (its single
/// mirror with the edge repeated does not go further than one image width) and, done in
/// place as float_ssim does, never reads a sample an earlier output overwrote; then the
/// out-of-place device decimation equals libvmaf's in-place one.
bool decimate_in_place_safe(int w, int h, int factor, int len);

/// Checks two planes given to a kernel made for w x h at `bpc`: same size and bpc,
/// non-null data and output, step 1 or 2, shift below 16, a pitch that holds a row.
/// \throws CudaError (cudaErrorInvalidValue) naming `who` and the problem.
void require_planes(const DevicePlane& ref, const DevicePlane& dis, const void* out, unsigned w,
                    unsigned h, unsigned bpc, const char* who);

/// Zeroes the accumulator blob `d_accum` (`bytes`, a multiple of 8), then writes the
/// valid sizes of `scales` IqaScaleAccum at its start (w[i], h[i]) and `seq` in the 8 bytes
/// at `seq_offset`.
void launch_accum_init(void* d_accum, std::size_t bytes, int scales, const int* w, const int* h,
                       std::size_t seq_offset, std::uint64_t seq, cudaStream_t stream);

/// Device buffers of one scale's SSIM stage.
struct ScaleBuffers {
    double* l;    ///< (w - 10) * (h - 10) terms each (the slot's term maps)
    double* c;
    double* s;
};

/// ref::iqa_ssim_maps of two float images w x h (valid region (w - 10) x (h - 10)),
/// writing the l, c, s maps, and the fixed-point sums of ssim_accum.h added into `acc`
/// (zeroed before, by launch_accum_init), in one launch: both convolution passes and the
/// terms per tile of at most 32 x 48 outputs inside one band of rows (no scratch plane).
/// Nothing is launched when the valid region is empty.
void launch_ssim_scale(const float* ref, const float* dis, int w, int h, const ScaleBuffers& buf,
                       IqaScaleAccum* acc, cudaStream_t stream);

/// The sequential double sum of `n` doubles at `map` in index order from 0.0 (libvmaf's
/// `_iqa_ssim` loop for one term), by ONE device thread, written to `*out` (device).
/// For measuring the alternative to the host fallback ([.bench] in tests/check/ssim.cpp):
/// exact, but one dependent double addition per term.
void launch_sequential_sum(const double* map, std::size_t n, double* out, cudaStream_t stream);

} // namespace vmaf_cuda::cuda::iqa

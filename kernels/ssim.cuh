// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file ssim.cuh
/// CUDA stage of `float_ssim` (libvmaf v3.2.0 float_ssim.c / ssim.c / iqa, reproduced by
/// reference/ssim.h): per frame it writes an SsimAccum (ssim_accum.h) from which
/// cuda::float_ssim_finish() on the host gives exactly ref::float_ssim()'s outputs.
///
/// Work per frame (three launches on the caller's stream, no host synchronisation):
///   1. accumulator init (zero, valid size, frame number);
///   2. float conversion of both luma planes (ref::iqa_picture_to_float), fused with
///      float_ssim's box decimation when scale > 1 (ref::float_ssim_prepare; the device
///      decimates out of place, which equals libvmaf's in-place decimation for every
///      size the constructor accepts, see iqa::decimate_in_place_safe);
///   3. the five 11-tap Gaussian convolutions (horizontal then vertical pass, per tile in
///      shared memory), per-pixel l, c, s (written to the slot's term maps), and the exact
///      fixed-point sums of ssim, l, c, s and of their absolute values.
///
/// Term maps and slots: the l, c, s maps (doubles, valid region (w' - 10) x (h' - 10) of
/// the decimated size w' x h') of frame `seq` are kept in slot seq % slots until the
/// enqueue of frame seq + slots; copy_terms() reads them back when the host finish
/// cannot decide a mean from the accumulator (ssim_accum.h). How often (host emulation of
/// the accumulation, tests/check/ssim_fallback_rate.cpp, enable_lcs: four sums a frame):
/// golden clips (294 frames up to 854x480) 0 frames, 0.23 undecided sums expected from
/// the interval widths; bbb upscaled to 1080p (40 frames) and 4K (12 frames) 0, expected
/// about 0.1% of the frames (float_ssim decimates to about 480x270 at both sizes).

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cuda_common.cuh"
#include "ssim.h"
#include "ssim_accum.h"

namespace vmaf_cuda::cuda {

/// float_ssim device stage for one frame size, bit depth and option set.
class SsimKernel {
public:
    /// Allocates every device buffer once: the float images and
    /// `slots` sets of term maps (device_bytes() tells the total).
    /// \param w, h luma size in samples, >= 1.
    /// \param bpc 8, 10, 12 or 16 (libvmaf's picture_copy).
    /// \param opt libvmaf's options (scale 0..10; the dB options only matter to the finish).
    /// \param slots term-map slots, >= 1: at least the frames in flight + 1 keeps every
    ///        frame's terms available when its accumulator is read.
    /// \throws CudaError (cudaErrorInvalidValue) for an invalid argument, or a size whose
    ///         decimation libvmaf computes reading outside the image or its own outputs
    ///         (explicit scales on tiny pictures only); CudaError for CUDA failures.
    SsimKernel(unsigned w, unsigned h, unsigned bpc, const ref::FloatSsimOptions& opt,
               unsigned slots = 4);

    /// Bytes of the accumulator (sizeof(SsimAccum)).
    std::size_t accum_bytes() const { return sizeof(SsimAccum); }

    /// Enqueues one frame on `stream`; writes the SsimAccum at `d_accum` (device memory,
    /// 8-byte aligned, accum_bytes()). `ref`, `dis`: this object's size and bpc (any step,
    /// shift, pitch), valid until the stream reaches this work. Two enqueues of one object
    /// must be ordered (one stream): they share the float images.
    /// \throws CudaError on a launch failure or mismatched planes.
    void enqueue(const DevicePlane& ref, const DevicePlane& dis, void* d_accum,
                 cudaStream_t stream);

    /// Copies the term maps of the frame of `acc` (a host copy of its accumulator) into
    /// `out` (w, h of the valid region; l, c, s): synchronous, after that frame's work
    /// completed (its accumulator reached the host). Then
    /// float_ssim_finish(acc, params, scores, &out) gives the outputs.
    /// \throws CudaError (cudaErrorInvalidValue) when that frame's slot was reused (the
    ///         frame seq + slots was enqueued) or the frame is unknown.
    void copy_terms(const SsimAccum& acc, ref::IqaSsimMaps& out) const;
    /// Device address of term map `which` (0 l, 1 c, 2 s) of the frame of `acc`
    /// (term_count() doubles, row-major), valid while its slot is not reused (the same
    /// checks and throws as copy_terms()).
    const double* term_map_of(const SsimAccum& acc, int which) const;
    /// Terms per map (the valid region's w * h).
    std::size_t term_count() const;

    /// Test hook: the float images SSIM was computed on in the latest enqueue (after the
    /// decimation), image_width() x image_height(); synchronous.
    void copy_images(std::vector<float>& ref, std::vector<float>& dis) const;

    /// What float_ssim_finish() needs besides the accumulator.
    SsimFinishParams finish_params() const { return {opt_, w_, h_, bpc_, false}; }

    int scale() const { return scale_; }
    int image_width() const { return sw_; }
    int image_height() const { return sh_; }
    unsigned slots() const { return slots_; }
    std::size_t device_bytes() const { return images_.bytes() + terms_.bytes(); }

private:
    unsigned w_, h_, bpc_;
    ref::FloatSsimOptions opt_;
    int scale_;
    int sw_, sh_;   // image size after decimation
    int vw_, vh_;   // valid region
    unsigned slots_;
    std::atomic<std::uint64_t> seq_{0}; // frames enqueued
    DeviceBuffer images_;   // ref, dis: sw x sh floats each
    DeviceBuffer terms_;    // slots x {l, c, s} x vw x vh doubles
    double* term_map(unsigned slot, int which) const;
};

} // namespace vmaf_cuda::cuda

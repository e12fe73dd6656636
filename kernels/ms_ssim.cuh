// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file ms_ssim.cuh
/// CUDA stage of `float_ms_ssim` (libvmaf v3.2.0 float_ms_ssim.c / ms_ssim.c / iqa,
/// reproduced by reference/ms_ssim.h): per frame it writes an MsSsimAccum (ssim_accum.h)
/// from which cuda::float_ms_ssim_finish() on the host gives exactly
/// ref::float_ms_ssim()'s outputs.
///
/// Work per frame (15 launches on the caller's stream, no host synchronisation):
///   accumulator init; float conversion of both luma planes (scale 0); scales 1..4: the
///   9x9 low-pass decimation by 2 of the previous scale (ref::iqa_decimate with
///   ref::ms_ssim_lowpass(), out of place as libvmaf); per scale the two SSIM passes of
///   iqa.cuh (Gaussian convolutions, l, c, s term maps, exact fixed-point sums).
///
/// Term maps and slots as SsimKernel's (ssim.cuh): frame seq's l, c, s maps of all five
/// scales stay in slot seq % slots until the enqueue of frame seq + slots. Scale 0 has
/// (w - 10) x (h - 10) terms, so the interval of ssim_accum.h is wider than float_ssim's.
/// How often a frame needs terms (host emulation of the accumulation,
/// tests/check/ssim_fallback_rate.cpp, enable_lcs: 15 sums a frame; without it 11):
/// golden clips (294 frames up to 854x480) 2 frames (0.81 undecided sums expected from
/// the interval widths); bbb upscaled to 1080p 2 of 40 frames (0.60 expected, ~1.5% of
/// frames), to 4K 0 of 12 (0.69 expected, ~6% of frames). Scale 0 dominates. The
/// fallback then copies only the undecided sums' maps (16 MB per map at 1080p, 66 MB at 4K).
/// Device memory: the term maps take 3 x 8 bytes x ~1.33 x (w - 10)(h - 10) per slot
/// (65 MB at 1080p, 262 MB at 4K), plus the images.

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cuda_common.cuh"
#include "ms_ssim.h"
#include "ssim_accum.h"

namespace vmaf_cuda::cuda {

/// float_ms_ssim device stage for one frame size, bit depth and option set.
class MsSsimKernel {
public:
    /// Allocates every device buffer once (five scales of float images and `slots` sets
    /// of term maps; device_bytes() tells the total).
    /// \param w, h luma size, >= ref::float_ms_ssim_min_size() (176) and <= 32768.
    /// \param bpc 8, 10, 12 or 16.
    /// \param slots term-map slots, >= 1 (see SsimKernel).
    /// \throws CudaError (cudaErrorInvalidValue) for an invalid argument (the message of
    ///         ref::float_ms_ssim_check_size for small frames); CudaError for CUDA failures.
    MsSsimKernel(unsigned w, unsigned h, unsigned bpc, const ref::FloatMsSsimOptions& opt,
                 unsigned slots = 4);

    /// Bytes of the accumulator (sizeof(MsSsimAccum)).
    std::size_t accum_bytes() const { return sizeof(MsSsimAccum); }

    /// As SsimKernel::enqueue, writing an MsSsimAccum.
    void enqueue(const DevicePlane& ref, const DevicePlane& dis, void* d_accum,
                 cudaStream_t stream);

    /// Copies the l, c, s term maps of `scale` (0..4) of the frame of `acc` (a host copy
    /// of its accumulator) into `out`: synchronous, after that frame's work completed.
    /// copy_terms(acc, mask, terms) copies what float_ms_ssim_finish's mask (iqa_need_bit)
    /// asks for: for each set bit (k, j) the map j (l, c or s; kIqaSsim: all three) of scale
    /// k into terms[k], setting terms[k].w, h; maps not asked for are left as they are.
    /// \throws CudaError (cudaErrorInvalidValue) when that frame's slot was reused (frame
    ///         seq + slots was enqueued), the frame is unknown, or scale is outside 0..4.
    void copy_terms(const MsSsimAccum& acc, int scale, ref::IqaSsimMaps& out) const;
    void copy_terms(const MsSsimAccum& acc, unsigned mask,
                    ref::IqaSsimMaps (&out)[ref::kMsSsimScales]) const;

    /// Device address of map `which` (0 l, 1 c, 2 s) of `scale` of the frame of `acc`
    /// (term_count(scale) doubles, row-major), valid while its slot is not reused (the
    /// same checks and throws as copy_terms()).
    const double* term_map_of(const MsSsimAccum& acc, int scale, int which) const;
    /// Terms per map of `scale` (its valid region's w * h).
    std::size_t term_count(int scale) const { return std::size_t(vw_[scale]) * vh_[scale]; }

    /// Device address of map `which` (0 l, 1 c, 2 s) of `scale` in `slot` (for tests and
    /// benchmarks; valid while this object lives).
    const double* term_map_device(unsigned slot, int scale, int which) const {
        return term_map(slot, scale, which);
    }

    /// Test hook: the float images of `scale` (0..4) of the latest enqueue; synchronous.
    void copy_images(int scale, std::vector<float>& ref, std::vector<float>& dis) const;

    /// What float_ms_ssim_finish() needs besides the accumulator.
    MsSsimFinishParams finish_params() const { return {opt_, w_, h_, bpc_, false}; }

    int scale_width(int k) const { return sw_[k]; }
    int scale_height(int k) const { return sh_[k]; }
    unsigned slots() const { return slots_; }
    std::size_t device_bytes() const { return images_.bytes() + terms_.bytes(); }

private:
    void copy_map(const MsSsimAccum& acc, int scale, int which, std::vector<double>& out) const;
    unsigned w_, h_, bpc_;
    ref::FloatMsSsimOptions opt_;
    unsigned slots_;
    std::atomic<std::uint64_t> seq_{0};
    int sw_[ref::kMsSsimScales], sh_[ref::kMsSsimScales]; // image sizes
    int vw_[ref::kMsSsimScales], vh_[ref::kMsSsimScales]; // valid regions
    std::size_t img_off_[ref::kMsSsimScales];  // float offset of scale k's ref image
    std::size_t term_off_[ref::kMsSsimScales]; // double offset of scale k's maps in a slot
    std::size_t slot_doubles_;                 // doubles per slot
    DeviceBuffer images_; // per scale: ref then dis
    DeviceBuffer terms_;  // slots x per scale {l, c, s}
    double* term_map(unsigned slot, int scale, int which) const;
};

} // namespace vmaf_cuda::cuda

// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file cambi.cuh
/// CUDA port of CAMBI (reference/cambi.h; libvmaf v3.2.0 `feature/cambi.c`, scalar C).
///
/// What runs where, and why:
/// - Device, per pass (the distorted picture at the encode size; with `full_ref` also the
///   reference at the source size), all integer or one rounded float op per pixel, hence
///   identical in any order (reference/cambi.h, stages 1-3):
///   1. preprocess: nearest-neighbour resample through host-built coordinate tables (the
///      reference's float coordinate walk is sequential, so the host runs it once at
///      construction), conversion to 10 bits, the 2x2 anti-dithering mean when
///      enc_bitdepth < 10; sample validation (a sample >= 2^bpc sets a flag);
///   2. spatial mask (zero-derivative flags, clipped 7x7 sums > mask_index);
///   3. per scale: decimation (of the filtered image; the mask is read at stride 2^t),
///      mode filter, then the c-values of all five scales in one launch with libvmaf's
///      window histograms (a block per strip of up to 64 columns and a segment of at
///      most 128 rows of one scale, four threads per column; uint16 counts per band
///      value and column in shared memory: the first row's windows built by column
///      differences, then slid down the rows as libvmaf's update_row does, each row
///      step's changed window columns listed once per block; blocks whose windows hold
///      no key write zeros), written to a device c-value buffer (row-major, as the
///      reference's array);
///   4. the order-free top-k of every scale (reference cambi_topk_exact): the k-th
///      largest c-value by a three-level radix select on the float bits (11 + 12 + 8
///      bits; zeros are never counted: the k-th is 0 when fewer than k are nonzero),
///      then the exact int64 sum of the top k in units of 2^-24, and the smallest nonzero
///      top-k value (for the exactness bound).
/// - Host (cambi_kernel_finish()): per scale, ref::cambi_topk_from_sum() turns the sum
///   into the pooled score and says whether it equals libvmaf's quick-select sum. When it
///   does not (strongly banded frames near 4K at scale 0; never in the golden cases),
///   libvmaf's double sum depends on the order its quick-select leaves the values in:
///   that scale is pooled by CambiDevicePool (cambi_pool.cuh: libvmaf's rounds and its
///   ordered double sum, reproduced on the device; the engine's path), or on a host copy
///   (copy_cvalues(), ref::cambi_spatial_pooling()). Then ref::cambi_finish() (scale
///   weights, clipping): the reference's own tail.
///
/// C-value slots: the c-values of the last `cvalue_slots` enqueues are kept on the device
/// (frame i uses slot i % cvalue_slots, named in its accumulator), so that the host can
/// still fetch a frame's c-values when it reads that frame's accumulator later through a
/// ring. A frame's c-values stay valid until `cvalue_slots` further enqueues; give at least
/// the number of frames that can be in flight between enqueue() and the finish (the depth
/// of the accumulator ring), plus one. Memory per slot: sum over scales of w_s*h_s floats
/// per pass (about 4/3 * 4 bytes per pass pixel; 44 MB at 4K; twice with full_ref).
///
/// Files: this header (the API, host C++20), cambi_device.cuh (accumulator layout and the
/// launchers, C++17), cambi.cu (kernels), cambi_host.cpp (planning, enqueue, finish).
/// Declarations only: includable from host C++ compiled without nvcc.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "cambi.h"
#include "cambi_device.cuh"
#include "cambi_pool.cuh"
#include "cuda_common.cuh"

namespace vmaf_cuda::cuda {

/// CambiAccum and CambiScaleAccum (the accumulator layout) are in cambi_device.cuh:
/// per pass (distorted; source with full_ref) and scale the exact top-k sum in units of
/// 2^-24, k, n, the k-th largest and the smallest nonzero top-k value (float bits), the
/// device's bound flag; per pass a flag for samples >= 2^bpc; the frame's c-value slot,
/// full_ref and its enqueue number.

/// CAMBI for one input size, bit depth and option set.
class CambiKernel {
public:
    /// Plans as ref::cambi_plan() and allocates every device buffer (planes per pass,
    /// coordinate tables, constants with the reciprocal table's fix-up bits,
    /// `cvalue_slots` c-value buffers, top-k scratch); uploads the tables synchronously.
    /// \param w, h input luma size (the enc/src sizes of `opt` are planned from it).
    /// \param bpc 8..16.
    /// \param cvalue_slots >= 1; see the file comment.
    /// \param max_tw most columns per c-value block: 8, 16, 32 or 64 (the default; fewer
    ///        where the band's histograms do not fit the device's shared memory). Tests
    ///        lower it to run the narrow strips of small-memory GPUs.
    /// \throws std::invalid_argument for options or a size ref::cambi_plan() refuses;
    ///         CudaError on a CUDA failure.
    CambiKernel(unsigned w, unsigned h, unsigned bpc, const ref::CambiOptions& opt,
                unsigned cvalue_slots = 4, int max_tw = 64);

    /// Size of the accumulator: sizeof(CambiAccum).
    std::size_t accum_bytes() const { return sizeof(CambiAccum); }

    /// Enqueue one frame on `stream`: writes *d_accum (device memory, accum_bytes()),
    /// and this frame's c-values into slot (enqueue count % cvalue_slots). No host
    /// synchronisation, no allocation, no pixels to the host. `dis` (and with full_ref
    /// `ref`, else ignored, may be null) must have the constructor's size and bpc (any
    /// step and shift) and stay valid until the stream reaches this work. Enqueues of one
    /// object must be on one stream (they share the planes).
    /// \throws CudaError on a launch failure or a plane that does not match.
    void enqueue(const DevicePlane& dis, const DevicePlane* ref, void* d_accum,
                 cudaStream_t stream);

    /// Copies the c-values of one scale of a frame (w_s * h_s floats, row-major, exactly
    /// the reference's cambi_c_values() array) to `out` (resized); synchronous (waits for
    /// the work enqueued on `stream`). `acc` is the host copy of that frame's accumulator.
    /// \param pass 0: distorted, 1: source (full_ref only).
    /// Not to be called concurrently with enqueue() (same thread as the enqueues, or
    /// serialised with them).
    /// \throws CudaError (cudaErrorInvalidValue) when the slot was reused since (more than
    ///         cvalue_slots - 1 enqueues later) or pass/scale is out of range.
    void copy_cvalues(const CambiAccum& acc, unsigned pass, unsigned scale,
                      std::vector<float>& out, cudaStream_t stream) const;
    /// Device address of the c-values of `acc`'s frame, pass and scale
    /// (scale_width() x scale_height() floats, row-major), valid while the frame's slot is
    /// not reused (the same checks as copy_cvalues(); throws CudaError when it was).
    /// CambiDevicePool::pool() may reorder them in place.
    float* cvalues_device(const CambiAccum& acc, unsigned pass, unsigned scale) const;
    /// The largest scale_width * scale_height over passes and scales.
    std::size_t max_scale_values() const;

    /// The plan (pass sizes, windows, band) derived from the options.
    const ref::CambiPlan& plan() const { return plan_; }
    /// Size of scale `scale` of pass `pass`.
    unsigned scale_width(unsigned pass, unsigned scale) const { return sw_[pass][scale]; }
    unsigned scale_height(unsigned pass, unsigned scale) const { return sh_[pass][scale]; }
    unsigned cvalue_slots() const { return slots_; }
    /// Frames enqueued so far.
    std::uint64_t enqueued() const { return seq_; }
    /// Device memory held, in bytes.
    std::size_t device_bytes() const;

private:
    struct Pass {
        unsigned w = 0, h = 0, window = 0;
        std::uint16_t mask_index = 0;
        DeviceBuffer xmap, ymap;   // uint32 source column per output column, row per row
        DeviceBuffer pre;          // uint16 w*h, preprocessed 10-bit plane
        DeviceBuffer mask;         // uint8 w*h: the zero-derivative mask
        DeviceBuffer filt;         // uint16 per scale, the mode-filtered planes
        DeviceBuffer key;          // uint16 per scale (at filt_off): band index or 0xffff
        std::size_t filt_off[ref::kCambiScales] = {};
        std::size_t cv_off[ref::kCambiScales] = {}; // float offsets in a slot
        std::size_t cv_floats = 0;                  // floats of one slot
        bool identity = true;                       // no resampling
    };
    // Buffers of pass p for the frame of slot `slot`.
    cambi_detail::PassLaunch launch_of(unsigned p, unsigned slot) const;
    float* cv_base(unsigned p, unsigned slot) const;

    ref::CambiPlan plan_;
    unsigned in_w_, in_h_, bpc_;
    unsigned slots_;
    unsigned npass_;
    int tw_ = 64;          // columns per c-value block (kCvalueSub threads each)
    int cv_blocks_ = 0;    // target number of c-value blocks per scale
    int topk_blocks_ = 0;  // blocks per scale of the top-k passes
    unsigned sw_[2][ref::kCambiScales] = {}, sh_[2][ref::kCambiScales] = {};
    Pass pass_[2];
    DeviceBuffer params_;  // per-plan constants (cambi_detail::kCambiConsts ints)
    DeviceBuffer cvalues_; // slots * (pass 0 floats + pass 1 floats)
    DeviceBuffer topk_;    // top-k scratch: states and histograms for 2 x 5 scales
    cambi_detail::PlanConsts consts_{};
    std::uint64_t seq_ = 0;
};

/// The pooled score of (pass, scale) of the frame being finished, for the scales whose
/// order-free sum cannot give libvmaf's value: libvmaf's quick-select pooling of that
/// scale's c-values (ref::cambi_spatial_pooling() on a host copy, or CambiDevicePool on
/// the slot's own c-values).
using CambiScalePool = std::function<double(unsigned pass, unsigned scale)>;

/// Host finish: per scale the fast-path score (ref::cambi_topk_from_sum()) when it equals
/// libvmaf's, else `pool(pass, scale)`; then ref::cambi_finish(). Exactly
/// ref::cambi_frame()'s scores.
/// \param force_slow_path test hook: pool every scale as if the bound failed.
/// \param slow_scales if not null, counts the scales pooled by `pool`.
/// \throws std::invalid_argument when the device flagged a sample >= 2^bpc (as
///         ref::cambi_preprocess() throws), or when the accumulator's full_ref does not
///         match the plan.
ref::CambiScores cambi_kernel_finish(const ref::CambiPlan& plan, const CambiAccum& acc,
                                     const CambiScalePool& pool, bool force_slow_path = false,
                                     unsigned* slow_scales = nullptr);

/// The same on a kernel object's frame, with `stream`: with `device_pool` null the slow
/// scales are pooled on the host from copy_cvalues() (the slot is left as it is);
/// otherwise on the device by `device_pool` (max_n() >= max_scale_values()), which
/// reorders that scale's c-values in the slot as libvmaf's quick-select does, so a frame
/// is to be finished that way once.
ref::CambiScores cambi_kernel_finish(const CambiKernel& k, const CambiAccum& acc,
                                     cudaStream_t stream, bool force_slow_path = false,
                                     unsigned* slow_scales = nullptr,
                                     CambiDevicePool* device_pool = nullptr);

} // namespace vmaf_cuda::cuda

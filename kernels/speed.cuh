// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file speed.cuh
/// CUDA per-pixel stage of SpEED, `speed_chroma` (SpeedChromaKernel) and
/// `speed_temporal` (SpeedTemporalKernel) (libvmaf v3.2.0 `feature/speed.c`,
/// `vif_tools.c`; arithmetic and stage list in reference/speed.h). Declarations only:
/// includable from host C++ compiled without nvcc.
///
/// What runs where, per frame:
///  - device (three launches on the caller's stream, the four planes U ref, U dis, V ref,
///    V dis in each; speed_temporal: the two frame differences): steps 1-5 of
///    reference/speed.h, i.e. load (8..16 bit, planar or NV12/P010 interleaved through
///    DevicePlane, floor-sized chroma), prescale (tables of source indices and weights
///    built on the host with the reference's formulas, which need floor/ceil/sin per
///    column or row), the antialias filter evaluated only where
///    the 16x decimation keeps it (vertical pass at rows 16 i for every column, then the
///    horizontal pass at columns 16 j), and the local-mean residual. Each output is the
///    same fixed sequence of IEEE float operations as the reference (explicit
///    round-to-nearest intrinsics, no FMA, no device libm), so the residual planes are
///    bit-identical to those of ref::speed_filter_and_downscale().
///  - host (speed_chroma_from_accum() / speed_temporal_from_accum(), from the
///    accumulator's host copy): steps 6-8 by the reference's own functions
///    (ref::speed_est_params, ref::speed_score, ref::speed_chroma_finish). They are
///    order-dependent reductions (25 float means, 325 double covariance sums in
///    row-major order, the float block sum), serial 25x25 float eigen/QR code, and
///    glibc's log2 per block and eigenvalue (CUDA's log2 is not glibc's); the data they
///    need is small (1/256 of the scaled plane).
///    Host cost (one thread, release build, measured on a shared 2-core x86 build
///    machine, so +-40% with its load; v1.0.16 options, 4:2:0): 1080p ps 1 about 5 ms
///    per frame, 1080p ps 0.6 2 ms, 4K ps 1 14-22 ms, 4K ps 0.5 3-5 ms, 4K 4:4:4 ps 1
///    77-97 ms; speed_temporal (luma, ps 1): 1080p 11 ms, 4K 46 ms. Most of it is the
///    325 covariance sums (325 x sub_w x sub_h double multiply-adds per plane) and the
///    25 log2 per block. Frames are independent, so the engine can run tails on several
///    threads. (The covariance could move to the device exactly, one thread per
///    (plane, a, b) summing in libvmaf's row-major order, but the reference has no
///    entry point that takes a given K, so it stays on the host for now.)
///
/// Accumulator (device, written whole by every enqueue): four float planes of
/// operating_w x operating_h (geometry(): (scaled >> 4) each way), row-major, no padding,
/// in the order U ref, U dis, V ref, V dis; speed_chroma_residual() indexes it. Sizes
/// (4:2:0, prescale 1): 1080p 60x33 -> 31,680 bytes; 4K 120x67 -> 128,640 bytes. At 4:4:4
/// 4K it is 240x135 -> 518,400 bytes (over 256 KiB); at prescale 0.5 a quarter of that.

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "cuda_common.cuh"
#include "speed.h"

namespace vmaf_cuda::cuda {

/// Which residual plane of the accumulator: channel 0 = U, 1 = V; `dis` false = ref.
/// \returns a pointer to operating_w x operating_h floats (row pitch operating_w).
inline const float* speed_chroma_residual(const void* accum, const ref::SpeedGeometry& g,
                                          unsigned channel, bool dis) {
    const std::size_t plane = std::size_t(g.operating_w) * g.operating_h;
    return static_cast<const float*>(accum) + plane * (2 * channel + (dis ? 1 : 0));
}

/// Bytes of the accumulator for this geometry: 4 * operating_w * operating_h * 4.
inline std::size_t speed_chroma_accum_bytes(const ref::SpeedGeometry& g) {
    return 4 * std::size_t(g.operating_w) * g.operating_h * sizeof(float);
}

/// Host tail: scores of one frame from the accumulator's host copy, exactly what
/// ref::speed_chroma() returns for the same planes (steps 6-8 through the reference's
/// code: speed_est_params per plane, speed_score with weight_var_mode, the singular
/// rules of speed_extract_score, speed_chroma_finish with max_val).
/// \param accum speed_chroma_accum_bytes(g) bytes in the layout above.
/// \param g, o the kernel's geometry() and options().
ref::SpeedChromaScores speed_chroma_from_accum(const void* accum, const ref::SpeedGeometry& g,
                                               const ref::SpeedOptions& o);

namespace detail {

/// Steps 2-5 (plus step 1 on the fly) for one plane geometry, shared by the chroma and
/// temporal kernels: `planes` output residual planes of operating_w x operating_h floats.
/// Output plane p is computed from input plane p, or (difference mode, speed_temporal)
/// from the float difference load(in[2 p]) - load(in[2 p + 1]) of two input planes.
class SpeedStage {
public:
    /// Prescale mode of the device code (none when libvmaf does not rescale, or when it
    /// rescales to the same size: a plain copy there).
    enum class Scale : int { none, nearest, bilinear, bicubic, lanczos4 };

    /// \param g a valid geometry (ref::speed_geometry), \param bpc 8, 10, 12 or 16.
    /// Builds taps and tables, allocates the intermediate buffers, uploads the tables
    /// (synchronously). 	hrows CudaError.
    SpeedStage(const ref::SpeedGeometry& g, const ref::SpeedOptions& o, unsigned bpc,
               unsigned planes, const char* who);
    /// Checks the input planes (bpc, size >= the plane size, step 1 or 2, shift, pitch,
    /// non-null; `names[k]` in messages), then three launches writing
    /// planes x operating_w x operating_h floats at `d_out`. 	hrows CudaError.
    void launch(const DevicePlane* const* in, const char* const* names, bool diff, void* d_out,
                cudaStream_t stream) const;
    std::size_t device_bytes() const { return vbuf_.bytes() + dbuf_.bytes() + tables_.bytes(); }

private:
    ref::SpeedGeometry g_;
    unsigned bpc_, planes_;
    const char* who_;
    Scale mode_ = Scale::none;
    std::vector<float> aa_, lm_; // antialias and local-mean taps
    DeviceBuffer tables_;        // column then row tables: indices, then weights
    const int* col_idx_ = nullptr;
    const float* col_w_ = nullptr;
    const int* row_idx_ = nullptr;
    const float* row_w_ = nullptr;
    DeviceBuffer vbuf_;          // vertical antialias at rows 16 i: planes x operating_h x scaled_w
    DeviceBuffer dbuf_;          // decimated planes: planes x operating_h x operating_w
};

} // namespace detail

/// Device stage of speed_chroma for one luma frame size, chroma subsampling and options.
class SpeedChromaKernel {
public:
    /// Validates and builds everything once: taps (ref::speed_filter_taps), prescale
    /// tables, the vertical-pass buffer (4 x operating_h x scaled_w floats) and the
    /// decimated planes (4 x operating_w x operating_h floats); uploads the tables
    /// synchronously.
    /// \param luma_w, luma_h the luma frame size; the chroma planes used are
    ///        ref::speed_chroma_plane_size() (halves rounding down, as libvmaf).
    /// \param bpc 8, 10, 12 or 16 (the depths libvmaf's SpEED converts).
    /// \param chroma 420, 422 or 444.
    /// \param o SpEED options (ref::speed_validate's ranges).
    /// \throws CudaError (cudaErrorInvalidValue) with the reference's message for invalid
    ///         options, chroma, bpc or a frame smaller than speed_chroma_min_frame_size();
    ///         CudaError on a CUDA failure.
    SpeedChromaKernel(unsigned luma_w, unsigned luma_h, unsigned bpc, unsigned chroma,
                      const ref::SpeedOptions& o);

    /// Bytes of this frame's accumulator (speed_chroma_accum_bytes(geometry())).
    std::size_t accum_bytes() const { return speed_chroma_accum_bytes(g_); }

    /// Enqueues steps 1-5 for the four planes on `stream` and writes the whole
    /// accumulator at `d_accum` (device memory, accum_bytes()). No host synchronisation,
    /// no allocation; pixels stay on the device. Each plane: bpc as at construction,
    /// at least the chroma plane size (a ceil-sized plane's last column/row is not read),
    /// step 1 or 2, shift < bpc storage bits; planes must stay valid until the stream
    /// reaches the work. Two enqueues of one object must not overlap in time (they share
    /// the intermediate buffers): one object per stream.
    /// \throws CudaError (cudaErrorInvalidValue) naming the problem, or on a launch failure.
    void enqueue(const DevicePlane& ref_u, const DevicePlane& ref_v, const DevicePlane& dis_u,
                 const DevicePlane& dis_v, void* d_accum, cudaStream_t stream);

    const ref::SpeedGeometry& geometry() const { return g_; }
    const ref::SpeedOptions& options() const { return o_; }
    unsigned bpc() const { return bpc_; }
    /// Device memory held by this object, in bytes.
    std::size_t device_bytes() const { return stage_.device_bytes(); }

private:
    static ref::SpeedGeometry checked_geometry(unsigned luma_w, unsigned luma_h, unsigned bpc,
                                               unsigned chroma, const ref::SpeedOptions& o);
    ref::SpeedGeometry g_;
    ref::SpeedOptions o_;
    unsigned bpc_;
    detail::SpeedStage stage_;
};

// ---- speed_temporal ------------------------------------------------------------------

/// Accumulator of speed_temporal: two float planes of operating_w x operating_h (of the
/// luma geometry), row-major, no padding: the residual of prev_ref - cur_ref, then of
/// prev_dis - cur_dis (or prev_dis - cur_ref with use_ref_diff). 1080p at prescale 1:
/// 120x67 -> 64,320 bytes; 4K: 240x135 -> 259,200 bytes.
inline std::size_t speed_temporal_accum_bytes(const ref::SpeedGeometry& g) {
    return 2 * std::size_t(g.operating_w) * g.operating_h * sizeof(float);
}

/// Host tail of speed_temporal for a frame i >= 1: exactly what ref::SpeedTemporal::push
/// returns for it (speed_est_params on both residual planes, 0 when exactly one is
/// singular, else speed_score with weight mode 0; not clipped). Frame 0 scores 0 and
/// needs no enqueue.
double speed_temporal_from_accum(const void* accum, const ref::SpeedGeometry& g,
                                 const ref::SpeedOptions& o);

/// Device stage of speed_temporal (libvmaf's `speed_temporal` on luma) for one luma size.
class SpeedTemporalKernel {
public:
    /// \param luma_w, luma_h luma size, at least speed_temporal_min_frame_size(o).
    /// \param bpc 8, 10, 12 or 16. \param o SpEED options; prescale > 1 is refused
    /// (as ref::SpeedTemporal: libvmaf's temporal buffers are too small for it).
    /// \throws CudaError (cudaErrorInvalidValue) naming the problem; CudaError.
    SpeedTemporalKernel(unsigned luma_w, unsigned luma_h, unsigned bpc, const ref::SpeedOptions& o);

    std::size_t accum_bytes() const { return speed_temporal_accum_bytes(g_); }

    /// Frame i >= 1: enqueues the residuals of the frame differences (previous frame's
    /// luma minus this frame's, in float after step 1, as libvmaf) into `d_accum`.
    /// Same rules as SpeedChromaKernel::enqueue (planes: the luma size). `cur_dis` is
    /// not read with use_ref_diff (pass cur_ref or cur_dis).
    void enqueue(const DevicePlane& prev_ref, const DevicePlane& cur_ref,
                 const DevicePlane& prev_dis, const DevicePlane& cur_dis, void* d_accum,
                 cudaStream_t stream);

    const ref::SpeedGeometry& geometry() const { return g_; }
    const ref::SpeedOptions& options() const { return o_; }
    std::size_t device_bytes() const { return stage_.device_bytes(); }

private:
    static ref::SpeedGeometry checked_geometry(unsigned luma_w, unsigned luma_h, unsigned bpc,
                                               const ref::SpeedOptions& o);
    ref::SpeedGeometry g_;
    ref::SpeedOptions o_;
    detail::SpeedStage stage_;
};

} // namespace vmaf_cuda::cuda

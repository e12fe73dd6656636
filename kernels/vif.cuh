// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file vif.cuh
/// CUDA integer stage of VIF: produces exactly the ref::VifAccum that
/// ref::vif_accumulate() produces (libvmaf v3.2.0 integer_vif.c, scalar C arithmetic),
/// so ref::vif_finish() turns either into the same scores.
///
/// Work per frame (four launches plus one memset, all on the caller's stream; a ladder
/// enqueue likewise, with one reference and several distorted planes per launch):
///   scale s = 0..3: one kernel reads the scale-s plane (scale 0: the caller's luma;
///   later scales: device planes owned by this object) in shared-memory tiles, runs the
///   separable filter of scale s for mu1, mu2, ref^2, dis^2, ref*dis, adds every pixel's
///   integer terms into per-thread sums (the per-pixel gain term uses IEEE double
///   division/multiplication only, no FMA), reduces them per block and adds them to the
///   output with 64-bit atomics (integer sums: order-independent). The same kernel
///   filters with the taps of scale s+1 at even rows/columns and writes the decimated
///   scale-(s+1) planes.
/// Declarations only: includable from host C++ compiled without nvcc.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "cuda_common.cuh"
#include "vif.h"

namespace vmaf_cuda::cuda {

/// VIF integer stage for one frame size and bit depth.
class VifKernel {
public:
    /// Allocates every device buffer (scale 1..3 planes, log2 table) once and uploads
    /// the log2 table (synchronously).
    /// \param w, h luma size, >= 1 (libvmaf-exact for w, h >= 16; see ref/vif.h).
    /// \param bpc 8..16.
    /// \param opt gain limit in [1, 100].
    /// \param renditions the most distorted planes one ladder enqueue takes (1..64); the
    ///        scale 1..3 planes are allocated once per rendition.
    /// \throws CudaError on a CUDA failure or an invalid argument (cudaErrorInvalidValue).
    VifKernel(unsigned w, unsigned h, unsigned bpc, const ref::VifOptions& opt,
              unsigned renditions = 1);

    /// Enqueue the whole integer stage on `stream`: zero `*d_out` (device memory; not
    /// when `out_zeroed`, the caller's promise that it is zero when the stream reaches
    /// this work), then add the sums of all four scales into it. No host synchronisation, no allocation.
    /// `ref`, `dis` must stay valid until the stream reaches this work; they must have
    /// this object's size and bpc. Two enqueues of one object must not overlap in time
    /// (they share the scale planes): use one object per stream.
    /// \throws CudaError on a launch failure or a size/bpc mismatch.
    void enqueue(const DeviceLuma& ref, const DeviceLuma& dis, ref::VifAccum* d_out,
                 cudaStream_t stream, bool out_zeroed = false);

    /// Encoder ladders: one reference against dis[0..n) (1 <= n <= renditions), writing
    /// d_out[r] (n consecutive accumulators, device memory) for rendition r, each equal
    /// to what enqueue(ref, *dis[r], ...) writes. Per scale one launch: each tile computes
    /// the reference's side once (mu1, ref^2, sigma1_sq, the denominator sums and the
    /// reference's next-scale plane), then each rendition's mu2, dis^2, ref*dis and
    /// numerator sums; n == 1 runs the pair kernel. Same ordering rules and `out_zeroed`
    /// as the pair enqueue. \throws CudaError on a launch failure, a size/bpc mismatch, a null plane
    /// or n outside 1..renditions.
    void enqueue(const DeviceLuma& ref, const DeviceLuma* const* dis, unsigned n,
                 ref::VifAccum* d_out, cudaStream_t stream, bool out_zeroed = false);

    unsigned width() const { return w_; }
    unsigned height() const { return h_; }
    unsigned bpc() const { return bpc_; }
    /// Device memory held by this object, in bytes.
    std::size_t device_bytes() const { return planes_.bytes() + log2_.bytes(); }
    /// A ladder launch splits each tile's renditions into groups of this many (each group
    /// a work unit of its own that recomputes the reference's side), at every scale; 0
    /// (the default): chosen per scale from the tile and resident-block counts. For tests:
    /// every split gives the same sums.
    void set_ladder_group_size(unsigned size) { group_size_ = size; }
    /// Chooses the scale kernels as if a block could have at most `bytes` of shared memory
    /// (capped at the device's opt-in limit; the constructor passes
    /// VMAF_CUDA_VIF_SMEM_LIMIT where that environment variable is set, and refuses a value
    /// that is not a positive number of bytes). Scales 0 and 1 take about 68 KiB
    /// a block in tiles of 8 rows; below that (Turing: 64 KiB) they run in tiles of 6 rows
    /// (about 51 KiB), with the same sums. For tests: the small tiles on any GPU.
    /// \throws CudaError (cudaErrorInvalidValue) when even those, or the ladder kernels
    /// (renditions > 1: about 60 KiB), do not fit, naming the sizes; the kernels chosen
    /// before stay.
    void set_smem_limit(std::size_t bytes);
    /// Whether scale s runs in the small tiles of set_smem_limit().
    bool small_tiles(int s) const { return s >= 0 && s < 4 && low_smem_[s]; }

private:
    unsigned w_, h_, bpc_, renditions_;
    double gain_limit_;
    unsigned sw_[4], sh_[4];  // plane size per scale
    DeviceBuffer planes_;     // scale 1..3 planes, uint16, tightly packed: per scale the
                              // reference's, then one per rendition
    DeviceBuffer log2_;       // ref::vif_log2_table() as vif_log2.cuh's 1024 Log2Block (8 KiB)
    std::size_t plane_bytes_[3] = {}; // one scale 1..3 plane, rounded up to 256 bytes
    std::uint16_t* plane_ref_[3];
    std::uint16_t* plane_dis_[3]; // rendition 0's; rendition r's is plane_bytes_[s] * r further
    int max_blocks_[4];       // resident blocks (SM count x occupancy) per scale kernel
    bool low_smem_[4] = {};   // scale s in tiles of 6 rows (set_smem_limit())
    int max_ladder_blocks_[4] = {}; // the same for the ladder kernels (renditions > 1)
    unsigned group_size_ = 0;       // set_ladder_group_size()
};

} // namespace vmaf_cuda::cuda

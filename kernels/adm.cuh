// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file adm.cuh
/// CUDA integer stage of ADM (libvmaf v3.2.0 integer_adm, scalar C path): produces the
/// same `ref::AdmAccum` bytes as `ref::adm_accumulate` (reference/adm.h) for any input;
/// the host tail `ref::adm_finish` turns it into feature values. One pair per enqueue, or
/// one reference against up to 64 distorted renditions (encoder ladders), the
/// reference's share of the work done once.
/// Declarations only (includable from g++); kernels live in adm.cu.

#include "adm.h"
#include "cuda_common.cuh"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace vmaf_cuda::cuda {

class AdmKernel {
public:
    /// Most distorted renditions one ladder enqueue may take.
    static constexpr unsigned kMaxRenditions = 64;

    /// Allocates all device scratch once, for a w x h luma plane of `bpc` bits (8..16)
    /// and up to `renditions` (1..kMaxRenditions) distorted planes per enqueue: band_a of
    /// scales 0 and 1 for the reference and each rendition (int32: about 1.25 bytes per
    /// picture sample, times 1 + renditions) and per-row sums (uint64: per band row of
    /// the 4 scales, 24 bytes of den sums plus 48 bytes of num/aim sums per rendition).
    /// Throws std::invalid_argument for w or h < ref::kAdmMinSize, bpc outside 8..16,
    /// renditions outside 1..kMaxRenditions or options ref::adm_factors rejects;
    /// CudaError when a CUDA call fails.
    AdmKernel(unsigned w, unsigned h, unsigned bpc, const ref::AdmOptions& opt,
              unsigned renditions = 1);

    /// Enqueues the whole ADM integer stage of one pair on `stream`: no host
    /// synchronisation, no allocation, 5 kernel launches. Writes every field of the one
    /// ref::AdmAccum at device address `d_out`: the bytes ref::adm_accumulate gives
    /// (libvmaf v3.2.0 integer_adm.c arithmetic). `ref`/`dis`: device luma planes of the
    /// constructor's size and bpc, any pitch below 2^31 bytes (even for bpc > 8). Calls
    /// on one AdmKernel must be ordered (same stream, or the previous call complete): the
    /// scratch is shared between calls. Throws std::invalid_argument on a size/bpc
    /// mismatch or a pitch of 2^31 bytes or more, CudaError on a launch error.
    void enqueue(const DeviceLuma& ref, const DeviceLuma& dis, ref::AdmAccum* d_out,
                 cudaStream_t stream);

    /// Encoder ladder: enqueues the ADM integer stage of `ref` against each of the `n`
    /// distorted planes dis[0..n-1] (1 <= n <= renditions()) on `stream`, the reference's
    /// side (its DWT, band_a, den terms, decoupling reciprocals) computed once per tile.
    /// Writes n consecutive ref::AdmAccum at device address `d_out`: d_out[r] gets exactly
    /// the bytes enqueue(ref, *dis[r], d_out + r, stream) writes (the den fields, which
    /// depend on the reference only, are the same in all n). `dis`: host array of n
    /// pointers to device planes of the constructor's size and bpc, each with its own
    /// pitch (below 2^31 bytes); the array is read during the call only. 5 kernel launches
    /// whatever n (n == 1 runs the single-pair kernels); no host synchronisation, no
    /// allocation; the same ordering rule as the single-pair enqueue.
    /// Throws std::invalid_argument when n is 0 or above renditions(), `dis` or one of its
    /// pointers is null, or a plane's size/bpc/pitch is refused as above; CudaError on a
    /// launch error.
    void enqueue(const DeviceLuma& ref, const DeviceLuma* const* dis, unsigned n,
                 ref::AdmAccum* d_out, cudaStream_t stream);

    unsigned width() const { return w_; }
    unsigned height() const { return h_; }
    unsigned bpc() const { return bpc_; }
    /// Most distorted planes one enqueue takes (the constructor's `renditions`).
    unsigned renditions() const { return renditions_; }
    /// Device memory held by this object, in bytes.
    std::size_t device_bytes() const {
        return lo_a_.bytes() + lo_b_.bytes() + den_rows_.bytes() + cm_rows_.bytes();
    }

private:
    void launch_all(const DeviceLuma& ref, const DeviceLuma* const* dis, unsigned n,
                    ref::AdmAccum* d_out, cudaStream_t stream);

    unsigned w_, h_, bpc_, renditions_;
    ref::AdmOptions opt_;
    ref::AdmFactors factors_;
    ref::AdmScaleParams params_[4];
    int sms_ = 1;
    DeviceBuffer lo_a_;     ///< band_a of scales 0 and 2, int32: slot 0 ref, 1 + r rendition r
    DeviceBuffer lo_b_;     ///< band_a of scale 1, same slots
    DeviceBuffer den_rows_; ///< per-row den sums, 3 x bh per scale, uint64, kept zeroed
    DeviceBuffer cm_rows_;  ///< per rendition per-row num/aim sums, 6 x bh per scale, kept zeroed
    std::size_t den_offset_[4] = {};
    std::size_t cm_offset_[4] = {};
    std::size_t cm_stride_ = 0; ///< cm_rows_ elements per rendition
    int tile_h_[4] = {};  ///< band rows per block for each scale (from the SM count)
};

} // namespace vmaf_cuda::cuda

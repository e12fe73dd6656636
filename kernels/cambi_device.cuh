// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file cambi_device.cuh
/// Device side of CAMBI: the accumulator layout and the launchers of kernels/cambi.cu.
/// C++17 and free of reference/ headers on purpose: nvcc compiles cambi.cu without C++20
/// (reference/cambi.h needs std::span), so the planning and the host finish live in
/// cambi_host.cpp, which fills these plain parameter blocks. Public API: cambi.cuh.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "cuda_common.cuh"

namespace vmaf_cuda::cuda {

/// Scales of CAMBI (== ref::kCambiScales, checked in cambi_host.cpp).
inline constexpr unsigned kCambiDeviceScales = 5;

/// Device results of one scale of one pass.
struct CambiScaleAccum {
    std::uint64_t sum_units;    ///< exact sum of the top k c-values, in units of 2^-24
    std::uint32_t k;            ///< ref::cambi_topk_count(topk, n)
    std::uint32_t n;            ///< c-values of this scale (w_s * h_s)
    std::uint32_t kth_bits;     ///< float bits of the k-th largest c-value (0: it is 0)
    std::uint32_t min_pos_bits; ///< float bits of the smallest nonzero top-k value (0: none)
    std::uint32_t bound_ok;     ///< 1: the device's bound says sum == libvmaf's double sum
    std::uint32_t reserved;
};

/// The accumulator of one frame: POD, CambiKernel::accum_bytes() bytes, device memory,
/// written by one CambiKernel::enqueue().
struct CambiAccum {
    CambiScaleAccum pass[2][kCambiDeviceScales]; ///< [0]: distorted, [1]: source (full_ref)
    std::uint32_t invalid_sample[2]; ///< nonzero: a sample of that input is >= 2^bpc
    std::uint32_t slot;              ///< c-value slot holding this frame's c-values
    std::uint32_t full_ref;          ///< 1 when pass[1] was computed
    std::uint64_t sequence;          ///< 0-based enqueue number of this frame
};

namespace cambi_detail {

/// Words of the reciprocal fix-up bits: bit i of `up` (`down`) says libvmaf's table entry
/// i (reference/cambi.h cambi_reciprocal_table(), 4226 entries) is one ulp above (below)
/// the correctly rounded 1/i.
inline constexpr int kCambiRecipWords = (4226 + 31) / 32;
/// Ints of PlanConsts::consts.
inline constexpr int kCambiConsts = 64 + 2 * kCambiRecipWords;

/// Per-plan constants of the c-value stage and the preprocessing.
struct PlanConsts {
    unsigned in_w, in_h, bpc;
    int anti;                 ///< enc_bitdepth < 10
    int hrs;                  ///< effective high-res speed-up (scale 0 decimates)
    int nd, vlt, base, band;  ///< num_diffs, vlt_luma, v_band_base, v_band_size
    const int* consts;        ///< device: kCambiConsts ints (tvi_for_diff[32], diff_weight[32],
                              ///< then the reciprocal table's up and down bits)
    int tw;                   ///< columns per c-value block
    int cv_blocks;            ///< target c-value blocks per scale
};

/// Buffers and geometry of one pass.
struct PassLaunch {
    unsigned w, h;            ///< pass size
    unsigned sw[kCambiDeviceScales], sh[kCambiDeviceScales]; ///< scale sizes
    int pad;                  ///< window_size / 2
    unsigned mask_index;
    int identity;             ///< pass size == input size (no resampling)
    const std::uint32_t* xmap; ///< source column per output column (w)
    const std::uint32_t* ymap; ///< source row per output row (h)
    std::uint16_t* pre;       ///< w*h
    std::uint8_t* mask;       ///< w*h
    std::uint16_t* filt;      ///< per scale at filt_off[s]
    std::size_t filt_off[kCambiDeviceScales];
    std::uint16_t* key;       ///< per scale at filt_off[s]
    float* cv;                ///< this frame's slot, this pass; scale s at cv_off[s]
    std::size_t cv_off[kCambiDeviceScales];
};

/// The segments of the top-k (pass p, scale s at p * 5 + s).
struct TopkLaunch {
    const float* c[2 * kCambiDeviceScales];
    unsigned n[2 * kCambiDeviceScales];
    unsigned k[2 * kCambiDeviceScales];
    int nseg;
    void* scratch;            ///< topk_scratch_bytes()
    int blocks;               ///< the streaming passes give each segment at least blocks / 4
                              ///< blocks, more in proportion to its size
};

/// Bytes of the top-k scratch (states and histograms of 10 segments).
std::size_t topk_scratch_bytes();

/// Bytes of the c-value kernel's static shared memory (its lists and constants).
/// \throws CudaError.
std::size_t cvalue_static_smem();

/// Sets the c-value kernel's dynamic shared-memory limit to `smem_limit` bytes (a
/// function attribute, shared by every object: always the device's limit less the static
/// part, never lowered), and returns how many blocks of `threads` threads and `smem`
/// bytes fit on one SM.
/// \throws CudaError.
int cvalue_setup(std::size_t smem_limit, std::size_t smem, int threads);

/// Threads per column of a c-value block (they share the column's window columns and
/// its contrast steps).
inline constexpr int kCvalueSub = 4;
/// Most columns per c-value block, and most window columns of a block (tw + 2 * pad,
/// pad <= 32 as the window is at most 65).
inline constexpr int kCvalueMaxTw = 64;
inline constexpr int kCvalueMaxHalo = kCvalueMaxTw + 64;
/// Threads per c-value block for `tw` columns (tw >= 8).
inline int cvalue_threads(int tw) { return tw * kCvalueSub; }
/// Dynamic shared memory of a c-value block: uint16 counts per band value and column,
/// two per 32-bit word.
inline std::size_t cvalue_smem(int band, int tw) {
    return std::size_t((band + 1) / 2) * std::size_t(tw) * 4;
}

/// Enqueues stages 1-3 of one pass (input `in`), writing the c-values to pass.cv.
/// `invalid` (device) is or-ed with 1 on a sample > 2^bpc - 1 (9..15-bit input).
/// \throws CudaError on a launch failure.
void launch_pass(const PassLaunch& pass, const PlanConsts& pc, const DevicePlane& in,
                 std::uint32_t* invalid, cudaStream_t stream);

/// Enqueues the init of the top-k scratch (before the passes write c-values: any order
/// on one stream works; done first).
void launch_topk_init(const TopkLaunch& t, cudaStream_t stream);

/// Enqueues the radix select, the sums and the accumulator fields of every segment, and
/// writes slot, full_ref (npass > 1) and sequence.
void launch_topk(const TopkLaunch& t, CambiAccum* acc, std::uint32_t slot,
                 std::uint64_t sequence, int npass, cudaStream_t stream);

} // namespace cambi_detail
} // namespace vmaf_cuda::cuda

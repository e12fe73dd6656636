// SPDX-License-Identifier: BSD-2-Clause-Patent
// CUDA integer motion SAD; contract in motion.cuh, arithmetic in reference/motion.h.

#include "motion.cuh"

#include <string>

namespace vmaf_cuda::cuda {

namespace {

constexpr int kThreads = 256; // also the columns of a shared tile (halo included)
constexpr int kCols = 256;
constexpr int kRows = 16;          // output rows per tile
constexpr int kTileW = kCols - 4;  // output columns per tile (252, a multiple of 4)
constexpr int kRawRows = kRows + 4;
static_assert(kThreads == kCols, "vertical pass maps one thread to one column");

// 5-tap filter, Q16 (same facts as reference/motion.cpp).
constexpr int kF0 = 3571, kF1 = 16004, kF2 = 26386;

struct MotionParams {
    const unsigned char* prev;
    const unsigned char* cur;
    int pitch_prev, pitch_cur; // bytes
    int w, h;
    int tiles_x, tiles;
    unsigned bpc;
    unsigned long long* out;
};

// Sample at row y of a column whose row-0 address is `col`.
template <typename T>
__device__ __forceinline__ int sample(const unsigned char* col, int pitch, int y) {
    return *reinterpret_cast<const T*>(col + static_cast<long long>(y) * pitch);
}

// WIDE: 16-bit input, where the vertical sum can reach 2^32 in magnitude (int64);
// otherwise the sum fits int32 (libvmaf's 8-bit path uses int32, its 16-bit path int64:
// both give the same value whenever the int32 sum cannot overflow).
template <typename T, bool WIDE>
__global__ void __launch_bounds__(kThreads) motion_sad_kernel(MotionParams p) {
    __shared__ __align__(16) int v[kRows][kCols]; // vertical pass (16-bit scale)
    unsigned long long sad = 0;
    const std::int64_t v_round = std::int64_t{1} << (p.bpc - 1);

    for (int tile = blockIdx.x; tile < p.tiles; tile += gridDim.x) {
        const int x0 = (tile % p.tiles_x) * kTileW;
        const int y0 = (tile / p.tiles_x) * kRows;
        // Thread c owns tile column c: the column of prev - cur with its halo goes straight
        // into registers (all loads in flight at once), then the vertical pass.
        {
            const int c = threadIdx.x;
            const int gx = reflect(x0 - 2 + c, p.w);
            const unsigned char* col_prev = p.prev + gx * static_cast<int>(sizeof(T));
            const unsigned char* col_cur = p.cur + gx * static_cast<int>(sizeof(T));
            int col[kRawRows];
#pragma unroll
            for (int i = 0; i < kRawRows; ++i) {
                const int gy = reflect(y0 - 2 + i, p.h);
                col[i] = sample<T>(col_prev, p.pitch_prev, gy) - sample<T>(col_cur, p.pitch_cur, gy);
            }
#pragma unroll
            for (int o = 0; o < kRows; ++o) {
                if constexpr (WIDE) {
                    const std::int64_t acc = std::int64_t{kF2} * col[o + 2] +
                                             std::int64_t{kF0} * (col[o] + col[o + 4]) +
                                             std::int64_t{kF1} * (col[o + 1] + col[o + 3]);
                    v[o][c] = static_cast<int>((acc + v_round) >> p.bpc);
                } else {
                    const int acc = kF2 * col[o + 2] + kF0 * (col[o] + col[o + 4]) +
                                    kF1 * (col[o + 1] + col[o + 3]);
                    v[o][c] = (acc + static_cast<int>(v_round)) >> p.bpc;
                }
            }
        }
        __syncthreads();
        constexpr int kGroups = kTileW / 4;
        for (int i = threadIdx.x; i < kGroups * kRows; i += kThreads) {
            const int row = i / kGroups, g = i % kGroups;
            const int gy = y0 + row, gx = x0 + 4 * g;
            if (gy >= p.h || gx >= p.w) continue;
            const int4 a = *reinterpret_cast<const int4*>(&v[row][4 * g]);
            const int4 b = *reinterpret_cast<const int4*>(&v[row][4 * g + 4]);
            const int s[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
            for (int o = 0; o < 4; ++o) {
                // |s| <= 65535: pair sums fit int32, products need 64 bits.
                const std::int64_t acc = std::int64_t{kF2} * s[o + 2] +
                                         std::int64_t{kF0} * (s[o] + s[o + 4]) +
                                         std::int64_t{kF1} * (s[o + 1] + s[o + 3]);
                const int val = static_cast<int>((acc + 32768) >> 16);
                if (gx + o < p.w) sad += static_cast<unsigned>(val < 0 ? -val : val);
            }
        }
        __syncthreads();
    }

    __shared__ unsigned long long red[kThreads / 32];
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) sad += __shfl_down_sync(0xffffffffu, sad, off);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (lane == 0) red[warp] = sad;
    __syncthreads();
    if (warp == 0) {
        unsigned long long x = lane < kThreads / 32 ? red[lane] : 0;
#pragma unroll
        for (int off = 4; off > 0; off >>= 1) x += __shfl_down_sync(0xffffffffu, x, off);
        if (lane == 0 && x != 0) atomicAdd(p.out, x);
    }
}

using KernelFn = void (*)(MotionParams);

KernelFn kernel_for(unsigned bpc) {
    if (bpc == 8) return motion_sad_kernel<std::uint8_t, false>;
    if (bpc < 16) return motion_sad_kernel<std::uint16_t, false>;
    return motion_sad_kernel<std::uint16_t, true>;
}

[[noreturn]] void invalid(const std::string& what) {
    throw CudaError(cudaErrorInvalidValue, "MotionKernel: " + what);
}

} // namespace

MotionKernel::MotionKernel(unsigned w, unsigned h, unsigned bpc) : w_(w), h_(h), bpc_(bpc) {
    if (w < 3 || h < 3 || w > 65537 || h > (1u << 30) / w) invalid("bad frame size");
    if (bpc < 8 || bpc > 16) invalid("bpc must be 8..16");
    int per_sm = 0;
    VMAF_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, reinterpret_cast<const void*>(kernel_for(bpc)), kThreads, 0));
    max_blocks_ = (per_sm > 0 ? per_sm : 1) * sm_count();
}

void MotionKernel::enqueue(const DeviceLuma& prev_ref, const DeviceLuma& cur_ref,
                           std::uint64_t* d_out, cudaStream_t stream, bool out_zeroed) {
    require_plane_pair(prev_ref, cur_ref, d_out, w_, h_, bpc_, "MotionKernel");
    if (!out_zeroed) VMAF_CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(std::uint64_t), stream));
    MotionParams p{};
    p.prev = static_cast<const unsigned char*>(prev_ref.data);
    p.cur = static_cast<const unsigned char*>(cur_ref.data);
    p.pitch_prev = static_cast<int>(prev_ref.pitch);
    p.pitch_cur = static_cast<int>(cur_ref.pitch);
    p.w = static_cast<int>(w_);
    p.h = static_cast<int>(h_);
    p.tiles_x = (p.w + kTileW - 1) / kTileW;
    p.tiles = p.tiles_x * ((p.h + kRows - 1) / kRows);
    p.bpc = bpc_;
    p.out = reinterpret_cast<unsigned long long*>(d_out);
    const int grid = p.tiles < max_blocks_ ? p.tiles : max_blocks_;
    kernel_for(bpc_)<<<grid, kThreads, 0, stream>>>(p);
    VMAF_CUDA_CHECK_LAUNCH();
}

} // namespace vmaf_cuda::cuda

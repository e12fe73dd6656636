// SPDX-License-Identifier: BSD-2-Clause-Patent
// CUDA integer stage of VIF; contract in vif.cuh, arithmetic in reference/vif.h.
//
// One kernel per scale s; a block of 256 threads works on tiles of rows_of(s) rows x
// tile_w(s) columns (grid capped at the resident-block count; blocks loop over tiles):
//   1. thread c loads tile column c plus a halo of R = filter half-width above and
//      below (columns also carry R of halo on each side), borders mirrored, straight
//      into registers;
//   2. vertical pass in that thread: mu1, mu2 (rounded to the 16-bit scale) and the
//      ref^2, dis^2, ref*dis sums (rounded to uint32, stored as exact doubles) into
//      shared memory; for s < 3 also the vertical scale-(s+1) filter at even rows;
//   3. horizontal pass, one thread per 4 consecutive output pixels (vector loads from
//      shared memory; square sums as exact FP64 fused multiply-adds, which keeps them
//      off the integer multiply pipe), then the per-pixel VIF terms into per-thread
//      int64 sums; for s < 3 also the horizontal scale-(s+1) filter at even columns,
//      written to the decimated plane of scale s+1;
//   4. block reduction of the four sums, four 64-bit atomics into the output.
// Every value is the same integer libvmaf computes (the FP64 sums hold integers below
// 2^49, exactly); the only rounding floating point is the per-pixel gain term, in IEEE
// double with explicit round-to-nearest intrinsics (no FMA contraction).

#include "vif.cuh"

#include <cstdint>
#include <string>

namespace vmaf_cuda::cuda {

namespace {

constexpr int kThreads = 256; // threads per block; also the columns of a shared tile
constexpr int kCols = 256;    // tile columns including the halo
static_assert(kThreads == kCols, "vertical pass maps one thread to one column");

__host__ __device__ constexpr int half_of(int s) { return s == 0 ? 8 : s == 1 ? 4 : s == 2 ? 2 : 1; }
// Output rows per tile (even: tiles start on even rows, as decimation needs). Fewer rows
// at the small scales give those small planes more blocks.
__host__ __device__ constexpr int rows_of(int s) { return s <= 1 ? 8 : s == 2 ? 4 : 2; }
// Output columns per tile: the tile minus its halo, rounded down to a multiple of 4.
__host__ __device__ constexpr int tile_w(int s) { return (kCols - 2 * half_of(s)) & ~3; }

// Taps per scale (Q16), same facts as reference/vif.cpp; unused entries are zero.
__constant__ std::uint32_t c_taps[4][17] = {
    {489, 935, 1640, 2640, 3896, 5274, 6547, 7455, 7784, 7455, 6547, 5274, 3896, 2640, 1640, 935,
     489},
    {1244, 3663, 7925, 12590, 14692, 12590, 7925, 3663, 1244},
    {3571, 16004, 26386, 16004, 3571},
    {10904, 43728, 10904},
};

// The same taps as doubles, for the horizontal square sums (see horizontal_sq()).
__constant__ double c_taps_d[4][17] = {
    {489, 935, 1640, 2640, 3896, 5274, 6547, 7455, 7784, 7455, 6547, 5274, 3896, 2640, 1640, 935,
     489},
    {1244, 3663, 7925, 12590, 14692, 12590, 7925, 3663, 1244},
    {3571, 16004, 26386, 16004, 3571},
    {10904, 43728, 10904},
};

// How the vertical ref^2/dis^2/ref*dis sums are formed (all give libvmaf's numbers):
enum SqMode : int {
    kSq32 = 0,     // 8-bit scale 0: every sum < 2^32, symmetric taps folded, uint32
    kSqFold64 = 1, // 9..15-bit scale 0: pairs of squares < 2^31 folded, uint64 sums
    kSqWide = 2,   // 16-bit scale 0 and scales 1..3: uint64 multiply-add per tap
};

struct ScaleParams {
    const unsigned char* ref;
    const unsigned char* dis;
    int pitch_ref; // bytes
    int pitch_dis;
    int w, h;              // size of this scale's plane
    int tiles_x, tiles;
    std::uint16_t* next_ref; // scale s+1 planes, (w/2) x (h/2), pitch w/2 samples
    std::uint16_t* next_dis;
    std::uint32_t mu_round;
    unsigned mu_shift;
    std::uint64_t sq_round;
    unsigned sq_shift;
    double gain_limit;
    const std::uint16_t* lut; // log2 table entries 32768..65535
    ref::VifScaleAccum* out;
};

struct Sums {
    long long num_log, den_log, num_non_log, den_non_log;
};

// acc + a * b with a 32x32 -> 64-bit product: one IMAD.WIDE.U32.
__device__ __forceinline__ std::uint64_t mad_wide(std::uint32_t a, std::uint32_t b,
                                                  std::uint64_t acc) {
    std::uint64_t r;
    asm("mad.wide.u32 %0, %1, %2, %3;" : "=l"(r) : "r"(a), "r"(b), "l"(acc));
    return r;
}

// Exact uint32 -> double without a conversion instruction: 2^52 + v has v as its low
// mantissa bits.
__device__ __forceinline__ double u32_to_double(std::uint32_t v) {
    return __dsub_rn(__hiloint2double(0x43300000, static_cast<int>(v)), 4503599627370496.0);
}

// Sample at row y of a column whose row-0 address is `col` (64-bit base plus a 32-bit
// row offset: one wide multiply-add per sample).
template <typename T>
__device__ __forceinline__ std::uint32_t sample(const unsigned char* col, int pitch, int y) {
    return *reinterpret_cast<const T*>(col + static_cast<long long>(y) * pitch);
}

__device__ __forceinline__ std::int32_t log2q_32(const std::uint16_t* __restrict__ lut,
                                                 std::uint32_t v) {
    const int k = 16 - __clz(static_cast<int>(v));
    return static_cast<std::int32_t>(__ldg(lut + ((v >> k) - 32768u))) + 2048 * k;
}
__device__ __forceinline__ std::int32_t log2q_64(const std::uint16_t* __restrict__ lut,
                                                 std::uint64_t v) {
    const int k = 48 - __clzll(static_cast<long long>(v));
    return static_cast<std::int32_t>(__ldg(lut + (static_cast<std::uint32_t>(v >> k) - 32768u))) +
           2048 * k;
}

// Per-pixel VIF terms; the same steps as add_pixel() of reference/vif.cpp, written
// without branches (every path computed on safe stand-in values, the unused results
// discarded by selects) so that the four pixels of a thread interleave.
// xx, yy, xy: horizontal sums already rounded to uint32 (>> 16). valid: pixel inside.
__device__ __forceinline__ void add_pixel(std::uint32_t mu1, std::uint32_t mu2, std::uint32_t xx,
                                          std::uint32_t yy, std::uint32_t xy, bool valid,
                                          double gain_limit, const std::uint16_t* __restrict__ lut,
                                          Sums& s) {
    constexpr std::int32_t kSigmaNsq = 65536 << 1;
    const std::uint32_t mu1_sq =
        static_cast<std::uint32_t>((static_cast<std::uint64_t>(mu1) * mu1 + 2147483648ull) >> 32);
    const std::uint32_t mu2_sq =
        static_cast<std::uint32_t>((static_cast<std::uint64_t>(mu2) * mu2 + 2147483648ull) >> 32);
    const std::uint32_t mu1_mu2 =
        static_cast<std::uint32_t>((static_cast<std::uint64_t>(mu1) * mu2 + 2147483648ull) >> 32);
    const std::int32_t sigma1_sq = static_cast<std::int32_t>(xx - mu1_sq);
    std::int32_t sigma2_sq = static_cast<std::int32_t>(yy - mu2_sq);
    const std::int32_t sigma12 = static_cast<std::int32_t>(xy - mu1_mu2);
    if (sigma2_sq < 0) sigma2_sq = 0;

    const bool log_px = valid && sigma1_sq >= kSigmaNsq;
    const bool non_log_px = valid && sigma1_sq < kSigmaNsq;
    s.num_non_log += non_log_px ? sigma2_sq : 0;
    s.den_non_log += non_log_px ? 1 : 0;

    // Denominator term (log pixels): log2q(2^17 + sigma1_sq) - 17 * 2048.
    const std::uint32_t dv = log_px ? static_cast<std::uint32_t>(sigma1_sq) + 131072u : 131072u;
    const std::int32_t den_term = log2q_32(lut, dv) - 2048 * 17;
    s.den_log += log_px ? den_term : 0;

    // Numerator term (log pixels with sigma12 > 0 and sigma2_sq > 0).
    const bool num_px = log_px && sigma12 > 0 && sigma2_sq > 0;
    const std::int32_t s1 = num_px ? sigma1_sq : kSigmaNsq;
    const std::int32_t s2 = num_px ? sigma2_sq : 1;
    const std::int32_t s12 = num_px ? sigma12 : 1;
    const double eps = 65536 * 1.0e-10;
    double g = __ddiv_rn(static_cast<double>(s12), __dadd_rn(static_cast<double>(s1), eps));
    const double sv = __dsub_rn(static_cast<double>(s2), __dmul_rn(g, static_cast<double>(s12)));
    const std::int32_t sv_sq = sv > 0.0 ? static_cast<std::int32_t>(sv) : 0;
    g = g < gain_limit ? g : gain_limit;
    const std::uint32_t numer1 = static_cast<std::uint32_t>(sv_sq) + 131072u;
    const double gain_term = __dmul_rn(__dmul_rn(g, g), static_cast<double>(s1));
    const std::int64_t numerator = static_cast<std::int64_t>(gain_term) + numer1;
    const std::int32_t num_term =
        log2q_64(lut, static_cast<std::uint64_t>(numerator)) - log2q_64(lut, numer1);
    s.num_log += num_px ? num_term : 0;
}

// Vertical filtered square sums of one column for kRows outputs. a, b: the column's
// samples (kRows + 2R of them); out: column c of a [kRows][kCols] array.
template <int S, int SQ, int N, int KR = rows_of(S)>
__device__ __forceinline__ void vertical_square(const std::uint32_t (&a)[N],
                                                const std::uint32_t (&b)[N], double* out,
                                                int c, std::uint64_t sq_round, unsigned sq_shift) {
    constexpr int R = half_of(S);
    std::uint32_t p[N];
#pragma unroll
    for (int i = 0; i < N; ++i) p[i] = a[i] * b[i]; // < 2^32: samples are < 2^16
#pragma unroll
    for (int o = 0; o < KR; ++o) {
        if constexpr (SQ == kSq32) {
            std::uint32_t acc = c_taps[S][R] * p[o + R];
#pragma unroll
            for (int k = 0; k < R; ++k) acc += c_taps[S][k] * (p[o + k] + p[o + 2 * R - k]);
            out[o * kCols + c] = u32_to_double(acc); // 8-bit: shift 0
        } else if constexpr (SQ == kSqFold64) {
            std::uint64_t acc = mad_wide(c_taps[S][R], p[o + R], 0);
#pragma unroll
            for (int k = 0; k < R; ++k) acc = mad_wide(c_taps[S][k], p[o + k] + p[o + 2 * R - k], acc);
            out[o * kCols + c] = u32_to_double(static_cast<std::uint32_t>((acc + sq_round) >> sq_shift));
        } else {
            std::uint64_t acc = 0;
#pragma unroll
            for (int k = 0; k <= 2 * R; ++k) acc = mad_wide(c_taps[S][k], p[o + k], acc);
            out[o * kCols + c] = u32_to_double(static_cast<std::uint32_t>((acc + sq_round) >> sq_shift));
        }
    }
}

// Horizontal pass helpers: w holds the 4 + 2R vertical results starting at the first
// output's leftmost tap.
template <int S, int NW>
__device__ __forceinline__ void horizontal_mu(const std::uint32_t (&w)[NW], std::uint32_t (&m)[4]) {
    constexpr int R = half_of(S);
#pragma unroll
    for (int o = 0; o < 4; ++o) {
        std::uint32_t acc = c_taps[S][R] * w[o + R];
#pragma unroll
        for (int k = 0; k < R; ++k) acc += c_taps[S][k] * (w[o + k] + w[o + 2 * R - k]);
        m[o] = acc;
    }
}
// Square sums in double: every term and partial sum is an integer below 2^49, so the
// fused multiply-adds are exact and give the same integer as libvmaf's uint64 sum (this
// keeps the 64-bit integer multiplies off the busy integer multiply pipe). The result,
// (sum + 2^15) >> 16, is below 2^32: t = sum * 2^-16 + 0.5 is exact, and adding 2^52
// rounding down leaves floor(t) in the low mantissa word.
template <int S, int NW>
__device__ __forceinline__ void horizontal_sq(const double (&w)[NW], std::uint32_t (&m)[4]) {
    constexpr int R = half_of(S);
#pragma unroll
    for (int o = 0; o < 4; ++o) {
        double acc = __dmul_rn(c_taps_d[S][0], w[o]);
#pragma unroll
        for (int k = 1; k <= 2 * R; ++k) acc = __fma_rn(c_taps_d[S][k], w[o + k], acc);
        const double t = __fma_rn(acc, 1.0 / 65536.0, 0.5);
        m[o] = static_cast<std::uint32_t>(__double2loint(__dadd_rd(t, 4503599627370496.0)));
    }
}
template <int NV>
__device__ __forceinline__ void load_row_d(const double* row, double (&w)[2 * NV]) {
    const double2* p = reinterpret_cast<const double2*>(row);
#pragma unroll
    for (int q = 0; q < NV; ++q) {
        const double2 v = p[q];
        w[2 * q] = v.x;
        w[2 * q + 1] = v.y;
    }
}
template <int NV>
__device__ __forceinline__ void load_row(const std::uint32_t* row, std::uint32_t (&w)[4 * NV]) {
    const uint4* p = reinterpret_cast<const uint4*>(row);
#pragma unroll
    for (int q = 0; q < NV; ++q) {
        const uint4 v = p[q];
        w[4 * q] = v.x;
        w[4 * q + 1] = v.y;
        w[4 * q + 2] = v.z;
        w[4 * q + 3] = v.w;
    }
}

__device__ __forceinline__ void block_add(Sums s, ref::VifScaleAccum* out) {
    __shared__ long long red[4][kThreads / 32];
    long long v[4] = {s.num_log, s.den_log, s.num_non_log, s.den_non_log};
#pragma unroll
    for (int f = 0; f < 4; ++f)
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) v[f] += __shfl_down_sync(0xffffffffu, v[f], off);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (lane == 0)
#pragma unroll
        for (int f = 0; f < 4; ++f) red[f][warp] = v[f];
    __syncthreads();
    if (warp == 0) {
#pragma unroll
        for (int f = 0; f < 4; ++f) {
            long long x = lane < kThreads / 32 ? red[f][lane] : 0;
#pragma unroll
            for (int off = 4; off > 0; off >>= 1) x += __shfl_down_sync(0xffffffffu, x, off);
            v[f] = x;
        }
        if (lane == 0) {
            std::int64_t* dst[4] = {&out->num_log, &out->den_log, &out->num_non_log,
                                    &out->den_non_log};
#pragma unroll
            for (int f = 0; f < 4; ++f)
                if (v[f] != 0)
                    atomicAdd(reinterpret_cast<unsigned long long*>(dst[f]),
                              static_cast<unsigned long long>(v[f]));
        }
    }
}

template <int S>
constexpr std::size_t smem_bytes() {
    const int dec_rows = S < 3 ? rows_of(S) / 2 : 0;
    return sizeof(double) * kCols * 3 * rows_of(S) +
           sizeof(std::uint32_t) * kCols * (2 * rows_of(S) + dec_rows);
}

template <int S, typename T, int SQ>
__global__ void __launch_bounds__(kThreads, 2) vif_scale_kernel(ScaleParams p) {
    constexpr int R = half_of(S);
    constexpr int TW = tile_w(S);
    constexpr int kRows = rows_of(S);
    constexpr int RAW_ROWS = kRows + 2 * R;
    constexpr bool kDecimate = S < 3;
    extern __shared__ uint4 smem_v4[];
    double* v_xx = reinterpret_cast<double*>(smem_v4); // [kRows][kCols] each
    double* v_yy = v_xx + kRows * kCols;
    double* v_xy = v_yy + kRows * kCols;
    std::uint32_t* v_mu1 = reinterpret_cast<std::uint32_t*>(v_xy + kRows * kCols);
    std::uint32_t* v_mu2 = v_mu1 + kRows * kCols;
    std::uint32_t* v_dec = v_mu2 + kRows * kCols; // [kRows/2][kCols], (ref | dis << 16)

    Sums sums{0, 0, 0, 0};
    for (int tile = blockIdx.x; tile < p.tiles; tile += gridDim.x) {
        const int x0 = (tile % p.tiles_x) * TW;
        const int y0 = (tile / p.tiles_x) * kRows;

        // 1+2. Thread c owns tile column c: it loads the column with its halo (mirrored at
        // the plane borders) straight into registers, all loads in flight at once, then
        // runs the vertical passes.
        {
            const int c = threadIdx.x;
            const int gx = reflect(x0 - R + c, p.w);
            const unsigned char* col_ref = p.ref + gx * static_cast<int>(sizeof(T));
            const unsigned char* col_dis = p.dis + gx * static_cast<int>(sizeof(T));
            std::uint32_t x[RAW_ROWS], y[RAW_ROWS];
#pragma unroll
            for (int i = 0; i < RAW_ROWS; ++i) {
                const int gy = reflect(y0 - R + i, p.h);
                x[i] = sample<T>(col_ref, p.pitch_ref, gy);
                y[i] = sample<T>(col_dis, p.pitch_dis, gy);
            }
            // Opaque to the optimiser: without this, nvcc exploits the 8-bit value range
            // and interleaves the passes into > 200 registers (spills at 128).
#pragma unroll
            for (int i = 0; i < RAW_ROWS; ++i) {
                asm volatile("" : "+r"(x[i]));
                asm volatile("" : "+r"(y[i]));
            }
#pragma unroll
            for (int o = 0; o < kRows; ++o) {
                std::uint32_t m1 = c_taps[S][R] * x[o + R];
                std::uint32_t m2 = c_taps[S][R] * y[o + R];
#pragma unroll
                for (int k = 0; k < R; ++k) {
                    m1 += c_taps[S][k] * (x[o + k] + x[o + 2 * R - k]);
                    m2 += c_taps[S][k] * (y[o + k] + y[o + 2 * R - k]);
                }
                v_mu1[o * kCols + c] = (m1 + p.mu_round) >> p.mu_shift;
                v_mu2[o * kCols + c] = (m2 + p.mu_round) >> p.mu_shift;
            }
            vertical_square<S, SQ>(x, x, v_xx, c, p.sq_round, p.sq_shift);
            vertical_square<S, SQ>(y, y, v_yy, c, p.sq_round, p.sq_shift);
            vertical_square<S, SQ>(x, y, v_xy, c, p.sq_round, p.sq_shift);
            if constexpr (kDecimate) {
                constexpr int R2 = half_of(S + 1);
#pragma unroll
                for (int o2 = 0; o2 < kRows / 2; ++o2) {
                    constexpr int S2 = S + 1;
                    const int ctr = 2 * o2 + R; // raw row of the (even) output row
                    std::uint32_t a = c_taps[S2][R2] * x[ctr];
                    std::uint32_t b = c_taps[S2][R2] * y[ctr];
#pragma unroll
                    for (int k = 0; k < R2; ++k) {
                        a += c_taps[S2][k] * (x[ctr - R2 + k] + x[ctr + R2 - k]);
                        b += c_taps[S2][k] * (y[ctr - R2 + k] + y[ctr + R2 - k]);
                    }
                    v_dec[o2 * kCols + c] =
                        ((a + p.mu_round) >> p.mu_shift) | (((b + p.mu_round) >> p.mu_shift) << 16);
                }
            }
        }
        __syncthreads();

        // 3a. Horizontal pass and per-pixel terms, 4 consecutive pixels per thread.
        constexpr int kGroups = TW / 4;
        constexpr int NV = (4 + 2 * R + 3) / 4; // uint4 loads per row segment
        for (int i = threadIdx.x; i < kGroups * kRows; i += kThreads) {
            const int row = i / kGroups, g = i % kGroups;
            const int gy = y0 + row, gx = x0 + 4 * g;
            if (gy >= p.h || gx >= p.w) continue;
            const int off = row * kCols + 4 * g;
            std::uint32_t w[4 * NV];
            std::uint32_t mu1[4], mu2[4], xx[4], yy[4], xy[4];
            load_row<NV>(v_mu1 + off, w);
            horizontal_mu<S>(w, mu1);
            load_row<NV>(v_mu2 + off, w);
            horizontal_mu<S>(w, mu2);
            constexpr int NVD = (4 + 2 * R + 1) / 2; // double2 loads per row segment
            double wd[2 * NVD];
            load_row_d<NVD>(v_xx + off, wd);
            horizontal_sq<S>(wd, xx);
            load_row_d<NVD>(v_yy + off, wd);
            horizontal_sq<S>(wd, yy);
            load_row_d<NVD>(v_xy + off, wd);
            horizontal_sq<S>(wd, xy);
#pragma unroll
            for (int o = 0; o < 4; ++o)
                add_pixel(mu1[o], mu2[o], xx[o], yy[o], xy[o], gx + o < p.w, p.gain_limit, p.lut,
                          sums);
        }

        // 3b. Decimated plane of scale s+1: even rows and columns of the tile.
        if constexpr (kDecimate) {
            constexpr int S2 = S + 1;
            constexpr int R2 = half_of(S2);
            constexpr int kHalfW = TW / 2;
            const int w2 = p.w / 2, h2 = p.h / 2;
            for (int i = threadIdx.x; i < kHalfW * (kRows / 2); i += kThreads) {
                const int r2 = i / kHalfW, c2 = i % kHalfW;
                const int oy = y0 / 2 + r2, ox = x0 / 2 + c2;
                if (oy >= h2 || ox >= w2) continue;
                const std::uint32_t* d = v_dec + r2 * kCols + 2 * c2 + R - R2;
                std::uint32_t a = 0, b = 0;
#pragma unroll
                for (int k = 0; k <= 2 * R2; ++k) {
                    const std::uint32_t v = d[k];
                    a += c_taps[S2][k] * (v & 0xffffu);
                    b += c_taps[S2][k] * (v >> 16);
                }
                const std::size_t at = static_cast<std::size_t>(oy) * w2 + ox;
                p.next_ref[at] = static_cast<std::uint16_t>((a + 32768u) >> 16);
                p.next_dis[at] = static_cast<std::uint16_t>((b + 32768u) >> 16);
            }
        }
        __syncthreads();
    }
    block_add(sums, p.out);
}

using KernelFn = void (*)(ScaleParams);

// The kernel instantiation for scale s at bit depth bpc.
KernelFn kernel_for(int s, unsigned bpc) {
    switch (s) {
    case 0:
        if (bpc == 8) return vif_scale_kernel<0, std::uint8_t, kSq32>;
        if (bpc < 16) return vif_scale_kernel<0, std::uint16_t, kSqFold64>;
        return vif_scale_kernel<0, std::uint16_t, kSqWide>;
    case 1: return vif_scale_kernel<1, std::uint16_t, kSqWide>;
    case 2: return vif_scale_kernel<2, std::uint16_t, kSqWide>;
    default: return vif_scale_kernel<3, std::uint16_t, kSqWide>;
    }
}

std::size_t smem_for(int s) {
    switch (s) {
    case 0: return smem_bytes<0>();
    case 1: return smem_bytes<1>();
    case 2: return smem_bytes<2>();
    default: return smem_bytes<3>();
    }
}

[[noreturn]] void invalid(const std::string& what) {
    throw CudaError(cudaErrorInvalidValue, "VifKernel: " + what);
}

} // namespace

VifKernel::VifKernel(unsigned w, unsigned h, unsigned bpc, const ref::VifOptions& opt)
    : w_(w), h_(h), bpc_(bpc), gain_limit_(opt.enhn_gain_limit) {
    if (w == 0 || h == 0 || w > (1u << 30) / h) invalid("bad frame size");
    if (bpc < 8 || bpc > 16) invalid("bpc must be 8..16");
    if (!(opt.enhn_gain_limit >= 1.0 && opt.enhn_gain_limit <= 100.0))
        invalid("vif_enhn_gain_limit must be in [1, 100]");
    sw_[0] = w;
    sh_[0] = h;
    for (int s = 1; s < 4; ++s) {
        sw_[s] = sw_[s - 1] / 2;
        sh_[s] = sh_[s - 1] / 2;
    }
    // Scale 1..3 planes, each starting on a 256-byte boundary.
    std::size_t offs[3][2], total = 0;
    for (int s = 1; s < 4; ++s)
        for (int k = 0; k < 2; ++k) {
            offs[s - 1][k] = total;
            total += (std::size_t{sw_[s]} * sh_[s] * 2 + 255) & ~std::size_t{255};
        }
    planes_ = DeviceBuffer(total ? total : 256);
    for (int s = 0; s < 3; ++s) {
        plane_ref_[s] = reinterpret_cast<std::uint16_t*>(planes_.get<unsigned char>() + offs[s][0]);
        plane_dis_[s] = reinterpret_cast<std::uint16_t*>(planes_.get<unsigned char>() + offs[s][1]);
    }
    log2_ = DeviceBuffer(32768 * sizeof(std::uint16_t));
    VMAF_CUDA_CHECK(cudaMemcpy(log2_.get(), ref::vif_log2_table() + 32768,
                               32768 * sizeof(std::uint16_t), cudaMemcpyHostToDevice));
    const int sms = sm_count();
    for (int s = 0; s < 4; ++s) {
        const KernelFn fn = kernel_for(s, bpc);
        const std::size_t smem = smem_for(s);
        VMAF_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(fn),
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(smem)));
        int per_sm = 0;
        VMAF_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm, reinterpret_cast<const void*>(fn), kThreads, smem));
        max_blocks_[s] = (per_sm > 0 ? per_sm : 1) * sms;
    }
}

void VifKernel::enqueue(const DeviceLuma& ref, const DeviceLuma& dis, ref::VifAccum* d_out,
                        cudaStream_t stream) {
    require_plane_pair(ref, dis, d_out, w_, h_, bpc_, "VifKernel");
    VMAF_CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(ref::VifAccum), stream));
    for (int s = 0; s < 4; ++s) {
        if (sw_[s] == 0 || sh_[s] == 0) break;
        ScaleParams p{};
        if (s == 0) {
            p.ref = static_cast<const unsigned char*>(ref.data);
            p.dis = static_cast<const unsigned char*>(dis.data);
            p.pitch_ref = static_cast<int>(ref.pitch);
            p.pitch_dis = static_cast<int>(dis.pitch);
            p.mu_round = 1u << (bpc_ - 1);
            p.mu_shift = bpc_;
            p.sq_shift = 2 * (bpc_ - 8);
            p.sq_round = p.sq_shift ? (std::uint64_t{1} << (p.sq_shift - 1)) : 0;
        } else {
            p.ref = reinterpret_cast<const unsigned char*>(plane_ref_[s - 1]);
            p.dis = reinterpret_cast<const unsigned char*>(plane_dis_[s - 1]);
            p.pitch_ref = p.pitch_dis = static_cast<int>(sw_[s] * sizeof(std::uint16_t));
            p.mu_round = 32768u;
            p.mu_shift = 16;
            p.sq_round = 32768u;
            p.sq_shift = 16;
        }
        p.w = static_cast<int>(sw_[s]);
        p.h = static_cast<int>(sh_[s]);
        const int tw = tile_w(s);
        p.tiles_x = (p.w + tw - 1) / tw;
        p.tiles = p.tiles_x * ((p.h + rows_of(s) - 1) / rows_of(s));
        p.next_ref = s < 3 ? plane_ref_[s] : nullptr;
        p.next_dis = s < 3 ? plane_dis_[s] : nullptr;
        p.gain_limit = gain_limit_;
        p.lut = log2_.get<std::uint16_t>();
        p.out = &d_out->scale[s];
        const int grid = p.tiles < max_blocks_[s] ? p.tiles : max_blocks_[s];
        kernel_for(s, bpc_)<<<grid, kThreads, smem_for(s), stream>>>(p);
        VMAF_CUDA_CHECK_LAUNCH();
    }
}

} // namespace vmaf_cuda::cuda

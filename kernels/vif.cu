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
#include "vif_log2.cuh"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
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
// GPUs whose blocks get less shared memory than rows_of(s) rows need (Turing: 64 KiB a
// block, against 68 KiB for scales 0 and 1) run those scales' pair kernel in tiles of
// this many rows (51 KiB): the same sums, more halo rows loaded per output row.
constexpr int kLowSmemRows = 6;
__host__ __device__ constexpr int rows_for(int s, bool low_smem) {
    return low_smem && s <= 1 ? kLowSmemRows : rows_of(s);
}
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
    std::uint64_t sq_round; // scale 0, 9..16-bit: rounding and shift of the vertical square sums
    unsigned sq_shift;
    double gain_limit;
    const Log2Block* lut; // log2 table (vif_log2.cuh)
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

// Rows y_first .. y_first + N - 1 of two columns (row-0 addresses a and b) into
// registers, all loads in flight at once. Tiles whose rows all lie inside the plane (every
// tile but the first and last rows of tiles) step a pointer per row; the others mirror
// each row index (reflect()).
template <typename T, int N>
__device__ __forceinline__ void load_column(const unsigned char* a, int pitch_a,
                                            const unsigned char* b, int pitch_b, int y_first,
                                            int h, std::uint32_t (&x)[N], std::uint32_t (&y)[N]) {
    if (y_first >= 0 && y_first + N <= h) { // uniform across the block
        a += static_cast<long long>(y_first) * pitch_a;
        b += static_cast<long long>(y_first) * pitch_b;
#pragma unroll
        for (int i = 0; i < N; ++i) {
            x[i] = *reinterpret_cast<const T*>(a);
            y[i] = *reinterpret_cast<const T*>(b);
            a += pitch_a;
            b += pitch_b;
        }
    } else {
#pragma unroll
        for (int i = 0; i < N; ++i) {
            const int gy = reflect(y_first + i, h);
            x[i] = sample<T>(a, pitch_a, gy);
            y[i] = sample<T>(b, pitch_b, gy);
        }
    }
}

__device__ __forceinline__ std::int32_t log2q_32(const Log2Block* __restrict__ lut,
                                                 std::uint32_t v) {
    const int k = 16 - __clz(static_cast<int>(v));
    return log2_mantissa(lut, v >> k) + 2048 * k;
}
__device__ __forceinline__ std::int32_t log2q_64(const Log2Block* __restrict__ lut,
                                                 std::uint64_t v) {
    const int k = 48 - __clzll(static_cast<long long>(v));
    return log2_mantissa(lut, static_cast<std::uint32_t>(v >> k)) + 2048 * k;
}

// Per-pixel VIF terms: the same steps as add_pixel() of reference/vif.cpp, written
// without branches (every path computed on safe stand-in values, the unused results
// discarded by selects) so that the four pixels of a thread interleave. Split in the
// reference's half (sigma1_sq and the denominator sums, which depend on the reference
// alone: a ladder computes them once for all renditions) and the distorted half (the
// numerator sums). xx, yy, xy: horizontal sums already rounded to uint32 (>> 16).
// valid: pixel inside the plane.
constexpr std::int32_t kSigmaNsq = 65536 << 1;

__device__ __forceinline__ std::uint32_t mul_round32(std::uint32_t a, std::uint32_t b) {
    return static_cast<std::uint32_t>((static_cast<std::uint64_t>(a) * b + 2147483648ull) >> 32);
}

/// Reference half: returns sigma1_sq; adds the denominator terms.
__device__ __forceinline__ std::int32_t ref_pixel(std::uint32_t mu1, std::uint32_t xx, bool valid,
                                                  const Log2Block* __restrict__ lut,
                                                  long long& den_log, long long& den_non_log) {
    const std::int32_t sigma1_sq = static_cast<std::int32_t>(xx - mul_round32(mu1, mu1));
    const bool log_px = valid && sigma1_sq >= kSigmaNsq;
    den_non_log += (valid && sigma1_sq < kSigmaNsq) ? 1 : 0;
    // Denominator term (log pixels): log2q(2^17 + sigma1_sq) - 17 * 2048.
    const std::uint32_t dv = log_px ? static_cast<std::uint32_t>(sigma1_sq) + 131072u : 131072u;
    const std::int32_t den_term = log2q_32(lut, dv) - 2048 * 17;
    den_log += log_px ? den_term : 0;
    return sigma1_sq;
}

/// Distorted half: adds the numerator terms of the pixel whose reference half gave
/// mu1 and sigma1_sq.
__device__ __forceinline__ void dis_pixel(std::uint32_t mu1, std::int32_t sigma1_sq,
                                          std::uint32_t mu2, std::uint32_t yy, std::uint32_t xy,
                                          bool valid, double gain_limit,
                                          const Log2Block* __restrict__ lut,
                                          long long& num_log, long long& num_non_log) {
    std::int32_t sigma2_sq = static_cast<std::int32_t>(yy - mul_round32(mu2, mu2));
    const std::int32_t sigma12 = static_cast<std::int32_t>(xy - mul_round32(mu1, mu2));
    if (sigma2_sq < 0) sigma2_sq = 0;
    const bool log_px = valid && sigma1_sq >= kSigmaNsq;
    num_non_log += (valid && sigma1_sq < kSigmaNsq) ? sigma2_sq : 0;

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
        log2q_64(lut, static_cast<std::uint64_t>(numerator)) - log2q_32(lut, numer1);
    num_log += num_px ? num_term : 0;
}

__device__ __forceinline__ void add_pixel(std::uint32_t mu1, std::uint32_t mu2, std::uint32_t xx,
                                          std::uint32_t yy, std::uint32_t xy, bool valid,
                                          double gain_limit, const Log2Block* __restrict__ lut,
                                          Sums& s) {
    const std::int32_t sigma1_sq = ref_pixel(mu1, xx, valid, lut, s.den_log, s.den_non_log);
    dis_pixel(mu1, sigma1_sq, mu2, yy, xy, valid, gain_limit, lut, s.num_log, s.num_non_log);
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
    for (int i = 0; i < N; ++i) {
        p[i] = a[i] * b[i]; // < 2^32: samples are < 2^16
        // Each product once: without this nvcc recomputes them per tap (three multiplies
        // per symmetric tap pair instead of one multiply-add).
        asm volatile("" : "+r"(p[i]));
    }
#pragma unroll
    for (int o = 0; o < KR; ++o) {
        if constexpr (SQ == kSq32) {
            std::uint32_t acc = c_taps[S][R] * p[o + R];
#pragma unroll
            for (int k = 0; k < R; ++k) acc += c_taps[S][k] * (p[o + k] + p[o + 2 * R - k]);
            out[o * kCols + c] = u32_to_double(acc); // 8-bit: shift 0
        } else if constexpr (S == 0 && SQ == kSqFold64) {
            std::uint64_t acc = mad_wide(c_taps[S][R], p[o + R], 0);
#pragma unroll
            for (int k = 0; k < R; ++k) acc = mad_wide(c_taps[S][k], p[o + k] + p[o + 2 * R - k], acc);
            out[o * kCols + c] = u32_to_double(static_cast<std::uint32_t>((acc + sq_round) >> sq_shift));
        } else if constexpr (S == 0) {
            std::uint64_t acc = 0;
#pragma unroll
            for (int k = 0; k <= 2 * R; ++k) acc = mad_wide(c_taps[S][k], p[o + k], acc);
            out[o * kCols + c] = u32_to_double(static_cast<std::uint32_t>((acc + sq_round) >> sq_shift));
        } else {
            // Scales 1..3 (16-bit scale): the products as exact doubles, folded and summed with FP64
            // adds and multiply-adds (every partial sum is an integer below 2^49: exact), which
            // keeps the 64-bit integer multiply-adds off the integer pipe (at scale 0 that
            // costs more registers than it saves). Then (acc + 2^15) >> 16: acc * 2^-16 + 0.5
            // is exact,
            // and adding 2^52 rounding down leaves its floor, below 2^32, as an exact double.
            const double pr = u32_to_double(p[o + R]);
            double acc = __dmul_rn(c_taps_d[S][R], pr);
#pragma unroll
            for (int k = 0; k < R; ++k)
                acc = __fma_rn(c_taps_d[S][k],
                               __dadd_rn(u32_to_double(p[o + k]), u32_to_double(p[o + 2 * R - k])), acc);
            const double t = __fma_rn(acc, 1.0 / 65536.0, 0.5);
            out[o * kCols + c] = __dsub_rn(__dadd_rd(t, 4503599627370496.0), 4503599627370496.0);
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
// adds and fused multiply-adds are exact and give the same integer as libvmaf's uint64
// sum (this keeps the 64-bit integer multiplies off the busy integer multiply pipe).
// Symmetric taps are folded: the pair sums are independent adds, so each output's chain
// of dependent multiply-adds is R + 1 long instead of 2R + 1 (+1.5 % pairs/s on an H100,
// no spills at scale 0; docs/PERFORMANCE.md, 2026-12-06). The result, (sum + 2^15) >> 16,
// is below 2^32: t = sum * 2^-16 + 0.5 is exact, and adding 2^52 rounding down leaves
// floor(t) in the low mantissa word.
template <int S, int NW>
__device__ __forceinline__ void horizontal_sq(const double (&w)[NW], std::uint32_t (&m)[4]) {
    constexpr int R = half_of(S);
#pragma unroll
    for (int o = 0; o < 4; ++o) {
        double acc = __dmul_rn(c_taps_d[S][R], w[o + R]);
#pragma unroll
        for (int k = 0; k < R; ++k)
            acc = __fma_rn(c_taps_d[S][k], __dadd_rn(w[o + k], w[o + 2 * R - k]), acc);
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

template <int S, int KR = rows_of(S)>
constexpr std::size_t smem_bytes() {
    const int dec_rows = S < 3 ? KR / 2 : 0;
    return sizeof(double) * kCols * 3 * KR + sizeof(std::uint32_t) * kCols * (2 * KR + dec_rows);
}

// Vertical mu filter of one column for kRows outputs into column c of a [kRows][kCols]
// array, rounded to the 16-bit scale.
template <int S, int N, int KR = rows_of(S)>
__device__ __forceinline__ void vertical_mu(const std::uint32_t (&x)[N], std::uint32_t* out, int c,
                                            std::uint32_t round, unsigned shift) {
    constexpr int R = half_of(S);
#pragma unroll
    for (int o = 0; o < KR; ++o) {
        std::uint32_t m = c_taps[S][R] * x[o + R];
#pragma unroll
        for (int k = 0; k < R; ++k) m += c_taps[S][k] * (x[o + k] + x[o + 2 * R - k]);
        out[o * kCols + c] = (m + round) >> shift;
    }
}

// Vertical filter of scale S+1 at even output row 2 * o2 of a column (decimation).
template <int S, int N>
__device__ __forceinline__ std::uint32_t vertical_dec(const std::uint32_t (&x)[N], int o2,
                                                      std::uint32_t round, unsigned shift) {
    constexpr int R = half_of(S);
    constexpr int S2 = S + 1;
    constexpr int R2 = half_of(S2);
    const int ctr = 2 * o2 + R; // raw row of the (even) output row
    std::uint32_t a = c_taps[S2][R2] * x[ctr];
#pragma unroll
    for (int k = 0; k < R2; ++k) a += c_taps[S2][k] * (x[ctr - R2 + k] + x[ctr + R2 - k]);
    return (a + round) >> shift;
}

// Horizontal filter of scale S+1 at even column 2 * c2 of a decimation row `d` (the tile's
// vertical results, column 0 = tile column 0); `field` selects the low or high 16 bits.
template <int S>
__device__ __forceinline__ std::uint32_t horizontal_dec(const std::uint32_t* d, int c2, int field) {
    constexpr int R = half_of(S);
    constexpr int S2 = S + 1;
    constexpr int R2 = half_of(S2);
    const std::uint32_t* q = d + 2 * c2 + R - R2;
    std::uint32_t a = 0;
#pragma unroll
    for (int k = 0; k <= 2 * R2; ++k) a += c_taps[S2][k] * ((q[k] >> field) & 0xffffu);
    return (a + 32768u) >> 16;
}

// Two resident blocks per SM (128 registers): three at scale 0 (80 registers, spills)
// ran 19 % slower on an H100 (docs/PERFORMANCE.md, 2026-12-05).
// KR: output rows per tile (rows_for()).
template <int S, typename T, int SQ, int KR = rows_of(S)>
__global__ void __launch_bounds__(kThreads, 2) vif_scale_kernel(ScaleParams p) {
    constexpr int R = half_of(S);
    constexpr int TW = tile_w(S);
    constexpr int kRows = KR;
    static_assert(kRows % 2 == 0, "tiles start on even rows (decimation)");
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
            load_column<T, RAW_ROWS>(col_ref, p.pitch_ref, col_dis, p.pitch_dis, y0 - R, p.h, x, y);
            // Opaque to the optimiser: without this, nvcc exploits the 8-bit value range
            // and interleaves the passes into > 200 registers (spills at 128).
#pragma unroll
            for (int i = 0; i < RAW_ROWS; ++i) {
                asm volatile("" : "+r"(x[i]));
                asm volatile("" : "+r"(y[i]));
            }
            vertical_mu<S, RAW_ROWS, kRows>(x, v_mu1, c, p.mu_round, p.mu_shift);
            vertical_mu<S, RAW_ROWS, kRows>(y, v_mu2, c, p.mu_round, p.mu_shift);
            vertical_square<S, SQ, RAW_ROWS, kRows>(x, x, v_xx, c, p.sq_round, p.sq_shift);
            vertical_square<S, SQ, RAW_ROWS, kRows>(y, y, v_yy, c, p.sq_round, p.sq_shift);
            vertical_square<S, SQ, RAW_ROWS, kRows>(x, y, v_xy, c, p.sq_round, p.sq_shift);
            if constexpr (kDecimate) {
#pragma unroll
                for (int o2 = 0; o2 < kRows / 2; ++o2)
                    v_dec[o2 * kCols + c] = vertical_dec<S>(x, o2, p.mu_round, p.mu_shift) |
                                            (vertical_dec<S>(y, o2, p.mu_round, p.mu_shift) << 16);
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
            constexpr int kHalfW = TW / 2;
            const int w2 = p.w / 2, h2 = p.h / 2;
            for (int i = threadIdx.x; i < kHalfW * (kRows / 2); i += kThreads) {
                const int r2 = i / kHalfW, c2 = i % kHalfW;
                const int oy = y0 / 2 + r2, ox = x0 / 2 + c2;
                if (oy >= h2 || ox >= w2) continue;
                const std::uint32_t* d = v_dec + r2 * kCols;
                const std::size_t at = static_cast<std::size_t>(oy) * w2 + ox;
                p.next_ref[at] = static_cast<std::uint16_t>(horizontal_dec<S>(d, c2, 0));
                p.next_dis[at] = static_cast<std::uint16_t>(horizontal_dec<S>(d, c2, 16));
            }
        }
        __syncthreads();
    }
    block_add(sums, p.out);
}

// ---------------------------------------------------------------------------------------
// Ladder kernel: one reference against `renditions` distorted planes. Per tile, the
// reference's side is computed once: its vertical and horizontal mu1 and ref^2 filters,
// sigma1_sq per pixel (kept in shared memory), the denominator sums (the same for every
// rendition) and its decimated plane; then, per rendition, the distorted plane's mu2,
// dis^2 and ref*dis filters and the numerator sums. Every term is the one the pair
// kernel computes, so each rendition's sums equal a pair kernel's.

constexpr int kMaxRenditions = 64;

struct LadderParams {
    ScaleParams base;     // the reference (ref, pitch_ref, next_ref), sizes, shifts, lut
    int renditions;
    const unsigned char* dis[kMaxRenditions];
    int pitch_dis[kMaxRenditions];
    std::uint16_t* next_dis;    // rendition r's scale s+1 plane at next_dis + r * next_stride
    std::size_t next_stride;    // samples
    ref::VifAccum* out;         // rendition r's sums in out[r].scale[scale]
    int scale;
    // Work units: tile t's renditions in `groups` groups of `group_size` (the last may be
    // smaller); unit u is tile u / groups, group u % groups. Each group computes the
    // reference's side of its tile again; group 0 alone adds the denominator and writes
    // the reference's next-scale plane.
    int groups;
    int group_size;
};

template <typename T, int N>
__device__ __forceinline__ void load_one_column(const unsigned char* a, int pitch, int y_first,
                                                int h, std::uint32_t (&x)[N]) {
    if (y_first >= 0 && y_first + N <= h) { // uniform across the block
        a += static_cast<long long>(y_first) * pitch;
#pragma unroll
        for (int i = 0; i < N; ++i) {
            x[i] = *reinterpret_cast<const T*>(a);
            a += pitch;
        }
    } else {
#pragma unroll
        for (int i = 0; i < N; ++i) x[i] = sample<T>(a, pitch, reflect(y_first + i, h));
    }
}

// Sum over the block of each thread's v, for thread 0 (the others get partial sums).
__device__ __forceinline__ long long block_sum(long long v, long long* scratch) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    __syncthreads();
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    if (threadIdx.x == 0)
        for (int k = 1; k < kThreads / 32; ++k) v += scratch[k];
    return v;
}

// Dynamic shared memory of the ladder kernel at scale S: two double and one uint32
// [kRows][kCols] arrays, the decimation rows, and per pixel mu1 and sigma1_sq.
template <int S>
constexpr std::size_t ladder_smem_bytes() {
    const int dec_rows = S < 3 ? rows_of(S) / 2 : 0;
    return sizeof(double) * kCols * 2 * rows_of(S) +
           sizeof(std::uint32_t) * (kCols * (rows_of(S) + dec_rows) + 2 * rows_of(S) * tile_w(S));
}
template <int S, typename T, int SQ>
__global__ void __launch_bounds__(kThreads, 2) vif_ladder_kernel(const LadderParams lp) {
    constexpr int R = half_of(S);
    constexpr int TW = tile_w(S);
    constexpr int kRows = rows_of(S);
    constexpr int RAW_ROWS = kRows + 2 * R;
    constexpr bool kDecimate = S < 3;
    const ScaleParams& p = lp.base;
    extern __shared__ uint4 smem_v4[];
    double* v_sa = reinterpret_cast<double*>(smem_v4); // [kRows][kCols]: ref^2, then dis^2
    double* v_sb = v_sa + kRows * kCols;                // [kRows][kCols]: ref*dis
    std::uint32_t* v_mu = reinterpret_cast<std::uint32_t*>(v_sb + kRows * kCols); // mu1, then mu2
    constexpr int kDecRows = kDecimate ? kRows / 2 : 0;  // (scale 3 decimates nothing)
    std::uint32_t* v_dec = v_mu + kRows * kCols;         // [kDecRows][kCols]
    std::uint32_t* r_mu1 = v_dec + kDecRows * kCols;     // [kRows][TW]: per pixel mu1
    std::int32_t* r_s1 = reinterpret_cast<std::int32_t*>(r_mu1 + kRows * TW); // sigma1_sq
    static_assert(sizeof(double) * 2 * kRows * kCols +
                          sizeof(std::uint32_t) * (kCols * (kRows + kDecRows) + 2 * kRows * TW) ==
                      ladder_smem_bytes<S>(),
                  "the ladder kernel's shared-memory layout and ladder_smem_bytes() differ");
    __shared__ long long s_num[kMaxRenditions][2];
    __shared__ long long s_red[kThreads / 32];

    for (int i = threadIdx.x; i < 2 * lp.renditions; i += kThreads) s_num[i >> 1][i & 1] = 0;
    long long den_log = 0, den_non_log = 0;
    constexpr int kGroups = TW / 4;
    constexpr int NV = (4 + 2 * R + 3) / 4;
    constexpr int NVD = (4 + 2 * R + 1) / 2;
    constexpr int kHalfW = TW / 2;
    const int w2 = p.w / 2, h2 = p.h / 2;
    const int c = threadIdx.x;

    const int units = p.tiles * lp.groups;
    for (int unit = blockIdx.x; unit < units; unit += gridDim.x) {
        const int tile = unit / lp.groups, group = unit % lp.groups;
        const int r_begin = group * lp.group_size;
        const int r_end = min(lp.renditions, r_begin + lp.group_size);
        const int x0 = (tile % p.tiles_x) * TW;
        const int y0 = (tile / p.tiles_x) * kRows;
        const int gx = reflect(x0 - R + c, p.w);
        const int col = gx * static_cast<int>(sizeof(T));

        // The reference: vertical filters, then per pixel mu1, sigma1_sq and the
        // denominator terms, and its decimated plane.
        {
            std::uint32_t x[RAW_ROWS];
            load_one_column<T, RAW_ROWS>(p.ref + col, p.pitch_ref, y0 - R, p.h, x);
#pragma unroll
            for (int i = 0; i < RAW_ROWS; ++i) asm volatile("" : "+r"(x[i]));
            vertical_mu<S>(x, v_mu, c, p.mu_round, p.mu_shift);
            vertical_square<S, SQ>(x, x, v_sa, c, p.sq_round, p.sq_shift);
            if constexpr (kDecimate) {
#pragma unroll
                for (int o2 = 0; o2 < kRows / 2; ++o2)
                    v_dec[o2 * kCols + c] = vertical_dec<S>(x, o2, p.mu_round, p.mu_shift);
            }
        }
        __syncthreads();
        for (int i = threadIdx.x; i < kGroups * kRows; i += kThreads) {
            const int row = i / kGroups, g = i % kGroups;
            const int gy = y0 + row, gx4 = x0 + 4 * g;
            if (gy >= p.h || gx4 >= p.w) continue;
            const int off = row * kCols + 4 * g;
            std::uint32_t w[4 * NV], mu1[4], xx[4];
            load_row<NV>(v_mu + off, w);
            horizontal_mu<S>(w, mu1);
            double wd[2 * NVD];
            load_row_d<NVD>(v_sa + off, wd);
            horizontal_sq<S>(wd, xx);
            int s1[4];
            long long dl = 0, dn = 0;
#pragma unroll
            for (int o = 0; o < 4; ++o)
                s1[o] = ref_pixel(mu1[o], xx[o], gx4 + o < p.w, p.lut, dl, dn);
            if (group == 0) { // (the same values in every group of the tile)
                den_log += dl;
                den_non_log += dn;
            }
            *reinterpret_cast<uint4*>(r_mu1 + row * TW + 4 * g) = make_uint4(mu1[0], mu1[1], mu1[2], mu1[3]);
            *reinterpret_cast<int4*>(r_s1 + row * TW + 4 * g) = make_int4(s1[0], s1[1], s1[2], s1[3]);
        }
        if constexpr (kDecimate) if (group == 0) {
            for (int i = threadIdx.x; i < kHalfW * (kRows / 2); i += kThreads) {
                const int r2 = i / kHalfW, c2 = i % kHalfW;
                const int oy = y0 / 2 + r2, ox = x0 / 2 + c2;
                if (oy >= h2 || ox >= w2) continue;
                p.next_ref[static_cast<std::size_t>(oy) * w2 + ox] =
                    static_cast<std::uint16_t>(horizontal_dec<S>(v_dec + r2 * kCols, c2, 0));
            }
        }
        __syncthreads();

        // Each rendition against the reference's terms.
        for (int r = r_begin; r < r_end; ++r) {
            {
                std::uint32_t x[RAW_ROWS], y[RAW_ROWS];
                load_column<T, RAW_ROWS>(p.ref + col, p.pitch_ref, lp.dis[r] + col, lp.pitch_dis[r],
                                         y0 - R, p.h, x, y);
#pragma unroll
                for (int i = 0; i < RAW_ROWS; ++i) {
                    asm volatile("" : "+r"(x[i]));
                    asm volatile("" : "+r"(y[i]));
                }
                vertical_mu<S>(y, v_mu, c, p.mu_round, p.mu_shift);
                vertical_square<S, SQ>(y, y, v_sa, c, p.sq_round, p.sq_shift);
                vertical_square<S, SQ>(x, y, v_sb, c, p.sq_round, p.sq_shift);
                if constexpr (kDecimate) {
#pragma unroll
                    for (int o2 = 0; o2 < kRows / 2; ++o2)
                        v_dec[o2 * kCols + c] = vertical_dec<S>(y, o2, p.mu_round, p.mu_shift);
                }
            }
            __syncthreads();
            long long num_log = 0, num_non_log = 0;
            for (int i = threadIdx.x; i < kGroups * kRows; i += kThreads) {
                const int row = i / kGroups, g = i % kGroups;
                const int gy = y0 + row, gx4 = x0 + 4 * g;
                if (gy >= p.h || gx4 >= p.w) continue;
                const int off = row * kCols + 4 * g;
                std::uint32_t w[4 * NV], mu2[4], yy[4], xy[4];
                load_row<NV>(v_mu + off, w);
                horizontal_mu<S>(w, mu2);
                double wd[2 * NVD];
                load_row_d<NVD>(v_sa + off, wd);
                horizontal_sq<S>(wd, yy);
                load_row_d<NVD>(v_sb + off, wd);
                horizontal_sq<S>(wd, xy);
                const uint4 m1 = *reinterpret_cast<const uint4*>(r_mu1 + row * TW + 4 * g);
                const int4 s1 = *reinterpret_cast<const int4*>(r_s1 + row * TW + 4 * g);
                const std::uint32_t mu1[4] = {m1.x, m1.y, m1.z, m1.w};
                const std::int32_t sig1[4] = {s1.x, s1.y, s1.z, s1.w};
#pragma unroll
                for (int o = 0; o < 4; ++o)
                    dis_pixel(mu1[o], sig1[o], mu2[o], yy[o], xy[o], gx4 + o < p.w, p.gain_limit,
                              p.lut, num_log, num_non_log);
            }
            if constexpr (kDecimate) {
                std::uint16_t* next = lp.next_dis + r * lp.next_stride;
                for (int i = threadIdx.x; i < kHalfW * (kRows / 2); i += kThreads) {
                    const int r2 = i / kHalfW, c2 = i % kHalfW;
                    const int oy = y0 / 2 + r2, ox = x0 / 2 + c2;
                    if (oy >= h2 || ox >= w2) continue;
                    next[static_cast<std::size_t>(oy) * w2 + ox] =
                        static_cast<std::uint16_t>(horizontal_dec<S>(v_dec + r2 * kCols, c2, 0));
                }
            }
#pragma unroll
            for (int off = 16; off > 0; off >>= 1) {
                num_log += __shfl_down_sync(0xffffffffu, num_log, off);
                num_non_log += __shfl_down_sync(0xffffffffu, num_non_log, off);
            }
            if ((threadIdx.x & 31) == 0) {
                if (num_log) atomicAdd(reinterpret_cast<unsigned long long*>(&s_num[r][0]),
                                       static_cast<unsigned long long>(num_log));
                if (num_non_log) atomicAdd(reinterpret_cast<unsigned long long*>(&s_num[r][1]),
                                           static_cast<unsigned long long>(num_non_log));
            }
            __syncthreads(); // v_mu, v_sa, v_sb and v_dec are rewritten by the next rendition
        }
    }
    // The block's sums: the denominator's once (the same for every rendition), then one
    // set of 64-bit atomics per rendition (integer sums: order-independent).
    __shared__ long long s_den[2];
    const long long dl = block_sum(den_log, s_red);
    if (threadIdx.x == 0) s_den[0] = dl;
    const long long dn = block_sum(den_non_log, s_red);
    if (threadIdx.x == 0) s_den[1] = dn;
    __syncthreads();
    for (int r = threadIdx.x; r < lp.renditions; r += kThreads) {
        ref::VifScaleAccum* o = &lp.out[r].scale[lp.scale];
        const long long v[4] = {s_num[r][0], s_den[0], s_num[r][1], s_den[1]};
        std::int64_t* dst[4] = {&o->num_log, &o->den_log, &o->num_non_log, &o->den_non_log};
#pragma unroll
        for (int f = 0; f < 4; ++f)
            if (v[f] != 0)
                atomicAdd(reinterpret_cast<unsigned long long*>(dst[f]),
                          static_cast<unsigned long long>(v[f]));
    }
}

using KernelFn = void (*)(ScaleParams);
using LadderFn = void (*)(LadderParams);

// The kernel instantiation for scale s at bit depth bpc (low_smem: rows_for()).
KernelFn kernel_for(int s, unsigned bpc, bool low_smem) {
    constexpr int L = kLowSmemRows;
    switch (s) {
    case 0:
        if (bpc == 8)
            return low_smem ? vif_scale_kernel<0, std::uint8_t, kSq32, L> : vif_scale_kernel<0, std::uint8_t, kSq32>;
        if (bpc < 16)
            return low_smem ? vif_scale_kernel<0, std::uint16_t, kSqFold64, L>
                            : vif_scale_kernel<0, std::uint16_t, kSqFold64>;
        return low_smem ? vif_scale_kernel<0, std::uint16_t, kSqWide, L> : vif_scale_kernel<0, std::uint16_t, kSqWide>;
    case 1:
        return low_smem ? vif_scale_kernel<1, std::uint16_t, kSqWide, L> : vif_scale_kernel<1, std::uint16_t, kSqWide>;
    case 2: return vif_scale_kernel<2, std::uint16_t, kSqWide>;
    default: return vif_scale_kernel<3, std::uint16_t, kSqWide>;
    }
}

LadderFn ladder_kernel_for(int s, unsigned bpc) {
    switch (s) {
    case 0:
        if (bpc == 8) return vif_ladder_kernel<0, std::uint8_t, kSq32>;
        if (bpc < 16) return vif_ladder_kernel<0, std::uint16_t, kSqFold64>;
        return vif_ladder_kernel<0, std::uint16_t, kSqWide>;
    case 1: return vif_ladder_kernel<1, std::uint16_t, kSqWide>;
    case 2: return vif_ladder_kernel<2, std::uint16_t, kSqWide>;
    default: return vif_ladder_kernel<3, std::uint16_t, kSqWide>;
    }
}

std::size_t smem_for(int s, bool low_smem) {
    switch (s) {
    case 0: return low_smem ? smem_bytes<0, kLowSmemRows>() : smem_bytes<0>();
    case 1: return low_smem ? smem_bytes<1, kLowSmemRows>() : smem_bytes<1>();
    case 2: return smem_bytes<2>();
    default: return smem_bytes<3>();
    }
}

std::size_t ladder_smem_for(int s) {
    switch (s) {
    case 0: return ladder_smem_bytes<0>();
    case 1: return ladder_smem_bytes<1>();
    case 2: return ladder_smem_bytes<2>();
    default: return ladder_smem_bytes<3>();
    }
}

// How a ladder launch at scale s splits each tile's n renditions into groups (work units
// of their own, the reference's side recomputed in each): the split with the fewest
// waves of units over `blocks` resident blocks, a unit costing the reference's side
// (about 0.45 of a pair's instructions) plus about 0.83 per rendition (static counts,
// docs/PERFORMANCE.md). Scale 0 keeps one group: its tiles fill the GPU many times over
// and its reference side is the largest. Returns the group size.
int ladder_group_size(int s, int tiles, int blocks, int n) {
    if (s == 0 || n <= 1 || blocks <= 0) return n > 1 ? n : 1;
    int best = n;
    double best_cost = 0;
    for (int size = n; size >= 1; --size) {
        const int groups = (n + size - 1) / size;
        const long long units = static_cast<long long>(tiles) * groups;
        const long long waves = (units + blocks - 1) / blocks;
        const double cost = static_cast<double>(waves) * (0.45 + 0.83 * size);
        if (size == n || cost < best_cost * 0.97) { // a split must gain more than noise
            best = size;
            best_cost = cost;
        }
    }
    return best;
}

// Blocks of a launch of `units` work units (tiles, or a ladder's tile groups) where
// `resident` blocks fit on the GPU at once: at most `waves` times that (1: a persistent
// grid, each block looping over units; larger: closer to one block per unit, so that
// other streams' kernels take the SMs that finished blocks free). The default is
// VMAF_CUDA_VIF_GRID_WAVES (compile time, 1); the environment variable of that name
// (1..100000, read once) overrides it, for timing the choice (docs/PERFORMANCE.md).
#ifndef VMAF_CUDA_VIF_GRID_WAVES
#define VMAF_CUDA_VIF_GRID_WAVES 1
#endif
long long grid_waves() {
    static const long long waves = [] {
        long long w = VMAF_CUDA_VIF_GRID_WAVES;
        if (const char* e = std::getenv("VMAF_CUDA_VIF_GRID_WAVES"); e && *e) {
            char* end = nullptr;
            const long long v = std::strtoll(e, &end, 10);
            if (end && !*end && v >= 1 && v <= 100000) w = v;
        }
        return w;
    }();
    return waves;
}
int grid_for(int units, int resident) {
    const long long cap = static_cast<long long>(resident) * grid_waves();
    return units < cap ? units : static_cast<int>(cap);
}

[[noreturn]] void invalid(const std::string& what) {
    throw CudaError(cudaErrorInvalidValue, "VifKernel: " + what);
}

// Resident blocks of `fn` (SM count x occupancy) with `smem` bytes of dynamic shared memory.
template <typename Fn>
int resident_blocks(Fn fn, std::size_t smem, int sms) {
    VMAF_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(fn),
                                         cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(smem)));
    int per_sm = 0;
    VMAF_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, reinterpret_cast<const void*>(fn), kThreads, smem));
    return (per_sm > 0 ? per_sm : 1) * sms;
}

} // namespace

VifKernel::VifKernel(unsigned w, unsigned h, unsigned bpc, const ref::VifOptions& opt,
                     unsigned renditions)
    : w_(w), h_(h), bpc_(bpc), renditions_(renditions), gain_limit_(opt.enhn_gain_limit) {
    if (w == 0 || h == 0 || w > (1u << 30) / h) invalid("bad frame size");
    if (bpc < 8 || bpc > 16) invalid("bpc must be 8..16");
    if (!(opt.enhn_gain_limit >= 1.0 && opt.enhn_gain_limit <= 100.0))
        invalid("vif_enhn_gain_limit must be in [1, 100]");
    if (renditions < 1 || renditions > static_cast<unsigned>(kMaxRenditions))
        invalid("renditions must be 1..64");
    sw_[0] = w;
    sh_[0] = h;
    for (int s = 1; s < 4; ++s) {
        sw_[s] = sw_[s - 1] / 2;
        sh_[s] = sh_[s - 1] / 2;
    }
    // Scale 1..3 planes, each starting on a 256-byte boundary: the reference's, then one
    // per rendition.
    std::size_t total = 0;
    for (int s = 1; s < 4; ++s) {
        plane_bytes_[s - 1] = (std::size_t{sw_[s]} * sh_[s] * 2 + 255) & ~std::size_t{255};
        total += plane_bytes_[s - 1] * (1 + renditions);
    }
    planes_ = DeviceBuffer(total ? total : 256);
    std::size_t at = 0;
    for (int s = 0; s < 3; ++s) {
        plane_ref_[s] = reinterpret_cast<std::uint16_t*>(planes_.get<unsigned char>() + at);
        plane_dis_[s] = reinterpret_cast<std::uint16_t*>(planes_.get<unsigned char>() + at +
                                                         plane_bytes_[s]);
        at += plane_bytes_[s] * (1 + renditions);
    }
    Log2Block blocks[kLog2Blocks];
    if (!build_log2_blocks(ref::vif_log2_table(), blocks))
        invalid("the log2 table is not a run of steps of 0 or 1 (vif_log2.cuh)");
    log2_ = DeviceBuffer(sizeof blocks);
    copy_to_device(log2_.get(), blocks, sizeof blocks);
    // The GPU's own limit (set_smem_limit() caps at it), or the environment's if lower.
    std::size_t limit = SIZE_MAX;
    if (const char* e = std::getenv("VMAF_CUDA_VIF_SMEM_LIMIT"); e && *e) {
        char* end = nullptr;
        const long long v = std::strtoll(e, &end, 10);
        if (!end || *end || v <= 0)
            invalid(std::string("VMAF_CUDA_VIF_SMEM_LIMIT=") + e +
                    " is not a positive number of bytes");
        limit = static_cast<std::size_t>(v);
    }
    set_smem_limit(limit);
}

void VifKernel::set_smem_limit(std::size_t bytes) {
    bytes = std::min(bytes, smem_per_block_optin()); // never more than the GPU allows
    const int sms = sm_count();
    // Shared memory a block of `fn` needs: dynamic plus the kernel's static arrays.
    auto need = [](auto fn, std::size_t dynamic) {
        cudaFuncAttributes a{};
        VMAF_CUDA_CHECK(cudaFuncGetAttributes(&a, reinterpret_cast<const void*>(fn)));
        return dynamic + a.sharedSizeBytes;
    };
    // Decided for every scale first, kept only when all fit (a refusal changes nothing).
    bool low[4];
    int blocks[4], ladder_blocks[4] = {};
    for (int s = 0; s < 4; ++s) {
        const std::size_t full = need(kernel_for(s, bpc_, false), smem_for(s, false));
        low[s] = full > bytes;
        if (low[s]) {
            const std::size_t small = s <= 1 ? need(kernel_for(s, bpc_, true), smem_for(s, true)) : full;
            if (small > bytes)
                invalid("VIF scale " + std::to_string(s) + " needs " + std::to_string(small) +
                        " bytes of shared memory per block; this GPU allows " + std::to_string(bytes));
        }
        blocks[s] = resident_blocks(kernel_for(s, bpc_, low[s]), smem_for(s, low[s]), sms);
        if (renditions_ > 1) {
            const std::size_t ladder = need(ladder_kernel_for(s, bpc_), ladder_smem_for(s));
            if (ladder > bytes)
                invalid("the VIF ladder kernel (scale " + std::to_string(s) + ") needs " +
                        std::to_string(ladder) + " bytes of shared memory per block; this GPU allows " +
                        std::to_string(bytes));
            ladder_blocks[s] = resident_blocks(ladder_kernel_for(s, bpc_), ladder_smem_for(s), sms);
        }
    }
    for (int s = 0; s < 4; ++s) {
        low_smem_[s] = low[s];
        max_blocks_[s] = blocks[s];
        max_ladder_blocks_[s] = ladder_blocks[s];
    }
}

namespace {

// The parameters of scale s common to both kernels (everything but the inputs and outputs).
// rows: output rows per tile (rows_for(); the ladder kernel's are rows_of()).
ScaleParams scale_params(int s, int rows, unsigned bpc, const unsigned* sw, const unsigned* sh,
                         double gain_limit, const Log2Block* lut) {
    ScaleParams p{};
    if (s == 0) {
        p.mu_round = 1u << (bpc - 1);
        p.mu_shift = bpc;
        p.sq_shift = 2 * (bpc - 8);
        p.sq_round = p.sq_shift ? (std::uint64_t{1} << (p.sq_shift - 1)) : 0;
    } else {
        p.mu_round = 32768u;
        p.mu_shift = 16;
        p.sq_round = 32768u; // (scales 1..3 round in FP64: vertical_square)
        p.sq_shift = 16;
    }
    p.w = static_cast<int>(sw[s]);
    p.h = static_cast<int>(sh[s]);
    const int tw = tile_w(s);
    p.tiles_x = (p.w + tw - 1) / tw;
    p.tiles = p.tiles_x * ((p.h + rows - 1) / rows);
    p.gain_limit = gain_limit;
    p.lut = lut;
    return p;
}

} // namespace

void VifKernel::enqueue(const DeviceLuma& ref, const DeviceLuma& dis, ref::VifAccum* d_out,
                        cudaStream_t stream, bool out_zeroed) {
    require_plane_pair(ref, dis, d_out, w_, h_, bpc_, "VifKernel");
    if (!out_zeroed) VMAF_CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(ref::VifAccum), stream));
    for (int s = 0; s < 4; ++s) {
        if (sw_[s] == 0 || sh_[s] == 0) break;
        ScaleParams p = scale_params(s, rows_for(s, low_smem_[s]), bpc_, sw_, sh_, gain_limit_,
                                     log2_.get<Log2Block>());
        if (s == 0) {
            p.ref = static_cast<const unsigned char*>(ref.data);
            p.dis = static_cast<const unsigned char*>(dis.data);
            p.pitch_ref = static_cast<int>(ref.pitch);
            p.pitch_dis = static_cast<int>(dis.pitch);
        } else {
            p.ref = reinterpret_cast<const unsigned char*>(plane_ref_[s - 1]);
            p.dis = reinterpret_cast<const unsigned char*>(plane_dis_[s - 1]);
            p.pitch_ref = p.pitch_dis = static_cast<int>(sw_[s] * sizeof(std::uint16_t));
        }
        p.next_ref = s < 3 ? plane_ref_[s] : nullptr;
        p.next_dis = s < 3 ? plane_dis_[s] : nullptr;
        p.out = &d_out->scale[s];
        const int grid = grid_for(p.tiles, max_blocks_[s]);
        kernel_for(s, bpc_, low_smem_[s])<<<grid, kThreads, smem_for(s, low_smem_[s]), stream>>>(p);
        VMAF_CUDA_CHECK_LAUNCH();
    }
}

void VifKernel::enqueue(const DeviceLuma& ref, const DeviceLuma* const* dis, unsigned n,
                        ref::VifAccum* d_out, cudaStream_t stream, bool out_zeroed) {
    if (!dis || n < 1 || n > renditions_) invalid("ladder enqueue: n must be 1..renditions");
    for (unsigned r = 0; r < n; ++r) {
        if (!dis[r]) invalid("ladder enqueue: null distorted plane");
        require_plane_pair(ref, *dis[r], d_out + r, w_, h_, bpc_, "VifKernel");
    }
    if (n == 1) { // the pair kernel is the faster one for a single rendition
        enqueue(ref, *dis[0], d_out, stream, out_zeroed);
        return;
    }
    if (!out_zeroed) VMAF_CUDA_CHECK(cudaMemsetAsync(d_out, 0, n * sizeof(ref::VifAccum), stream));
    for (int s = 0; s < 4; ++s) {
        if (sw_[s] == 0 || sh_[s] == 0) break;
        LadderParams lp{};
        lp.base = scale_params(s, rows_of(s), bpc_, sw_, sh_, gain_limit_, log2_.get<Log2Block>());
        ScaleParams& p = lp.base;
        lp.renditions = static_cast<int>(n);
        lp.scale = s;
        lp.out = d_out;
        if (s == 0) {
            p.ref = static_cast<const unsigned char*>(ref.data);
            p.pitch_ref = static_cast<int>(ref.pitch);
            for (unsigned r = 0; r < n; ++r) {
                lp.dis[r] = static_cast<const unsigned char*>(dis[r]->data);
                lp.pitch_dis[r] = static_cast<int>(dis[r]->pitch);
            }
        } else {
            p.ref = reinterpret_cast<const unsigned char*>(plane_ref_[s - 1]);
            p.pitch_ref = static_cast<int>(sw_[s] * sizeof(std::uint16_t));
            for (unsigned r = 0; r < n; ++r) {
                lp.dis[r] = reinterpret_cast<const unsigned char*>(plane_dis_[s - 1]) +
                            r * plane_bytes_[s - 1];
                lp.pitch_dis[r] = p.pitch_ref;
            }
        }
        p.next_ref = s < 3 ? plane_ref_[s] : nullptr;
        lp.next_dis = s < 3 ? plane_dis_[s] : nullptr;
        lp.next_stride = s < 3 ? plane_bytes_[s] / sizeof(std::uint16_t) : 0;
        lp.group_size = group_size_ ? static_cast<int>(group_size_ < n ? group_size_ : n)
                                    : ladder_group_size(s, p.tiles, max_ladder_blocks_[s], static_cast<int>(n));
        lp.groups = (static_cast<int>(n) + lp.group_size - 1) / lp.group_size;
        const int units = p.tiles * lp.groups;
        const int grid = grid_for(units, max_ladder_blocks_[s]);
        ladder_kernel_for(s, bpc_)<<<grid, kThreads, ladder_smem_for(s), stream>>>(lp);
        VMAF_CUDA_CHECK_LAUNCH();
    }
}

} // namespace vmaf_cuda::cuda

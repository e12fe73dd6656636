// SPDX-License-Identifier: BSD-2-Clause-Patent
// Per-pixel iqa stages of float_ssim / float_ms_ssim on the device; contract in iqa.cuh,
// arithmetic in reference/iqa.h (libvmaf v3.2.0 iqa/convolve.c, decimate.c,
// ssim_tools.c). Every output pixel is computed by one thread with the reference's
// operations in the reference's order (float products added into a double in tap order,
// then rounded to float), written with __f*_rn / __d*_rn intrinsics so that nothing is
// contracted or reassociated.

#include "iqa.cuh"

#include <algorithm>
#include <string>
#include <vector>

#include "iqa.h"

namespace vmaf_cuda::cuda::iqa {

namespace {

constexpr int kGauss = ref::kIqaGaussianLen; // 11
constexpr int kThreads = 256;

struct Gauss {
    float g[kGauss];
};

// KBND_SYMMETRIC of iqa/convolve.c: one reflection with the edge repeated.
__host__ __device__ inline int sym(int x, int n) {
    if (x < 0) return -1 - x;
    if (x >= n) return (n - (x - n)) - 1;
    return x;
}

// ref::iqa_picture_to_float of one sample value.
__device__ inline float to_float(unsigned v, unsigned bpc) {
    const float f = __uint2float_rn(v);
    if (bpc == 8) return __fadd_rn(f, 0.0f);
    const float scaler = bpc == 10 ? 4.0f : bpc == 12 ? 16.0f : 256.0f;
    return __fadd_rn(__fdiv_rn(f, scaler), 0.0f);
}

__global__ void to_float_kernel(DevicePlane a, DevicePlane b, float* oa, float* ob) {
    const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned y = blockIdx.y;
    if (x >= a.width) return;
    const std::size_t i = std::size_t(y) * a.width + x;
    oa[i] = to_float(load(a, x, y), a.bpc);
    ob[i] = to_float(load(b, x, y), b.bpc);
}

// Sources of the decimation: a plane read in place (converted per sample) or a float image.
struct PlaneSrc {
    DevicePlane p;
    __device__ float operator()(int x, int y) const { return to_float(load(p, x, y), p.bpc); }
};
struct FloatSrc {
    const float* img;
    int w;
    __device__ float operator()(int x, int y) const { return img[std::size_t(y) * w + x]; }
};

// ref::iqa_decimate, one output pixel per thread, for two images at once.
template <class Src>
__global__ void decimate_kernel(Src a, Src b, int w, int h, int factor, Taps2d taps, float* oa,
                                float* ob, int sw, int sh) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y;
    if (x >= sw) return;
    const int uc = taps.len / 2, vc = taps.len / 2;
    const int k_even = (taps.len & 1) ? 0 : 1;
    const int cx = x * factor, cy = y * factor;
    double sa = 0.0, sb = 0.0;
    int k = 0;
    for (int v = -vc; v <= vc - k_even; ++v) {
        const int Y = sym(cy + v, h);
        for (int u = -uc; u <= uc - k_even; ++u, ++k) {
            const int X = sym(cx + u, w);
            sa = dadd_float_rn(sa, __fmul_rn(a(X, Y), taps.k[k]));
            sb = dadd_float_rn(sb, __fmul_rn(b(X, Y), taps.k[k]));
        }
    }
    const std::size_t o = std::size_t(y) * sw + x;
    oa[o] = __double2float_rn(sa); // (float)(sum * 1.0f): the product by 1.0 is exact
    ob[o] = __double2float_rn(sb);
}

// The same for a float image, decimation by F with a LEN x LEN kernel (float_ms_ssim's
// 9x9 low-pass by 2): a block of 32 x 8 outputs first loads the mirrored input region it
// reads into shared memory (both images), then each thread sums its taps in the
// reference's order from there; the arithmetic is decimate_kernel's, the loads are not
// repeated per tap. Coordinates that no valid output reads (beyond the last output of a
// partial block) are clamped only to stay inside the image.
constexpr int kTileX = 32, kTileY = 8;
template <int LEN, int F>
__global__ void __launch_bounds__(kTileX * kTileY)
decimate_tiled_kernel(const float* a, const float* b, int w, int h, Taps2d taps, float* oa,
                      float* ob, int sw, int sh) {
    constexpr int C = LEN / 2;
    constexpr int IW = (kTileX - 1) * F + LEN, IH = (kTileY - 1) * F + LEN;
    __shared__ float ta[IH][IW], tb[IH][IW];
    const int ox0 = int(blockIdx.x) * kTileX, oy0 = int(blockIdx.y) * kTileY;
    const int ix0 = ox0 * F - C, iy0 = oy0 * F - C;
    for (int i = int(threadIdx.y * kTileX + threadIdx.x); i < IW * IH; i += kTileX * kTileY) {
        const int ty = i / IW, tx = i - ty * IW;
        const int Y = min(max(sym(iy0 + ty, h), 0), h - 1);
        const int X = min(max(sym(ix0 + tx, w), 0), w - 1);
        const std::size_t at = std::size_t(Y) * w + X;
        ta[ty][tx] = a[at];
        tb[ty][tx] = b[at];
    }
    __syncthreads();
    const int x = ox0 + int(threadIdx.x), y = oy0 + int(threadIdx.y);
    if (x >= sw || y >= sh) return;
    const int r0 = int(threadIdx.y) * F, c0 = int(threadIdx.x) * F;
    double sa = 0.0, sb = 0.0;
#pragma unroll
    for (int v = 0; v < LEN; ++v)
#pragma unroll
        for (int u = 0; u < LEN; ++u) {
            const float t = taps.k[v * LEN + u];
            sa = dadd_float_rn(sa, __fmul_rn(ta[r0 + v][c0 + u], t));
            sb = dadd_float_rn(sb, __fmul_rn(tb[r0 + v][c0 + u], t));
        }
    const std::size_t o = std::size_t(y) * sw + x;
    oa[o] = __double2float_rn(sa);
    ob[o] = __double2float_rn(sb);
}

struct SsimConsts {
    float c1, c2, c3;
};

// Per-thread words: lo 0..3, hi 4..7, |q| lo 8..11, |q| hi 12..15, bad 16. In
// IqaScaleAccum (as uint64 words): lo 0..3, hi 4..7, bad 8, then per band b the |q|
// words alo[b] at 9 + 8b .. 12 + 8b and ahi[b] at 13 + 8b .. 16 + 8b.
constexpr int kWords = 17;
static_assert(sizeof(IqaScaleAccum) == 8 * (9 + 8 * kIqaBands) + 8, "IqaScaleAccum layout");
static_assert(offsetof(IqaScaleAccum, bad) == 8 * 8 && offsetof(IqaScaleAccum, alo) == 8 * 9 &&
                  offsetof(IqaScaleAccum, ahi) == 8 * (9 + 4 * kIqaBands),
              "IqaScaleAccum layout");

// iqa_band_row of ssim_accum.h (host-only header), for the device.
__device__ inline int band_row(int b, int h) { return int((long long)(b) * h / kIqaBands); }

__device__ inline unsigned accum_word(int k, int band) {
    if (k < 8) return unsigned(k);
    if (k == 16) return 8u;
    if (k < 12) return unsigned(9 + 4 * band + (k - 8));
    return unsigned(9 + 4 * kIqaBands + 4 * band + (k - 12));
}

// One term into the fixed-point sums (ssim_accum.h; the host's add_term is the same).
__device__ inline void add_term(unsigned long long (&a)[kWords], int k, double x) {
    if (!(x < kIqaTermLimit && x > -kIqaTermLimit)) {
        a[16] += 1;
        return;
    }
    const long long q = __double2ll_rn(__dmul_rn(x, 0x1p40)); // exact scaling, then nearest
    const long long qa = q < 0 ? -q : q;
    a[k] += static_cast<unsigned long long>(q) & 0xffffffffull;
    a[4 + k] += static_cast<unsigned long long>(q >> 32);
    a[8 + k] += static_cast<unsigned long long>(qa) & 0xffffffffull;
    a[12 + k] += static_cast<unsigned long long>(qa >> 32);
}

static_assert(kIqaFixedBits == 40, "add_term scales by 2^40");

// The five convolutions of _iqa_ssim (iqa_convolve, 1-D path, horizontal then vertical),
// the per-pixel terms (ref::iqa_ssim_maps), the term maps and the fixed-point sums, in one
// kernel. A block computes kSsimTileX columns x `ty` rows of the valid region, all inside
// one band of rows (ssim_accum.h; blockIdx.z is the band, blockIdx.y the tile in it):
//  1. horizontal: for each of the tile's ty + 10 input rows and valid column x,
//     sum (double) += (float)(img[x + u] * g[u]) for u = 0..10 over ref, dis, ref*ref,
//     dis*dis, ref*dis (float products first, as libvmaf squares the planes before
//     convolving them), rounded to float, into shared memory;
//  2. vertical: the same sum over the column's 11 rows of each of the five, then the
//     terms, maps and fixed-point sums as the reference computes them.
// The operations and their order are those of the two-pass reference; only where the
// horizontal sums are kept changed (shared memory, recomputed for the 10 rows a tile
// shares with the next, instead of a global scratch plane). Integer sums: block
// reduction, one 64-bit atomic per word and block (any order gives the same result).
constexpr int kSsimTileX = 32, kSsimTileMaxY = 48;

std::size_t ssim_fused_smem(int ty) {
    return std::size_t(5) * std::size_t(ty + kGauss - 1) * kSsimTileX * sizeof(float);
}

__global__ void __launch_bounds__(kThreads)
ssim_fused_kernel(const float* ref, const float* dis, int w, int vw, int vh, int ty, Gauss g,
                  SsimConsts cst, double* lmap, double* cmap, double* smap,
                  unsigned long long* acc) {
    extern __shared__ float s_h[]; // [5][ty + 10][kSsimTileX]
    const int band = int(blockIdx.z);
    const int b0 = band_row(band, vh), b1 = band_row(band + 1, vh);
    const int y0 = b0 + int(blockIdx.y) * ty;
    if (y0 >= b1) return; // (the whole block: before any barrier)
    const int rows = min(ty, b1 - y0), hrows = rows + kGauss - 1;
    const int x0 = int(blockIdx.x) * kSsimTileX;
    const int plane = (ty + kGauss - 1) * kSsimTileX;
    const int tx = int(threadIdx.x) % kSsimTileX, t0 = int(threadIdx.x) / kSsimTileX;
    constexpr int kRowsPerPass = kThreads / kSsimTileX;
    const int x = x0 + tx;
    if (x < vw) {
        for (int r = t0; r < hrows; r += kRowsPerPass) {
            const float* rr = ref + std::size_t(y0 + r) * w + x;
            const float* dr = dis + std::size_t(y0 + r) * w + x;
            double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0, s4 = 0.0;
#pragma unroll
            for (int u = 0; u < kGauss; ++u) {
                const float a = rr[u], b = dr[u], t = g.g[u];
                s0 = dadd_float_rn(s0, __fmul_rn(a, t));
                s1 = dadd_float_rn(s1, __fmul_rn(b, t));
                s2 = dadd_nonneg_float_rn(s2, __fmul_rn(__fmul_rn(a, a), t));
                s3 = dadd_nonneg_float_rn(s3, __fmul_rn(__fmul_rn(b, b), t));
                s4 = dadd_float_rn(s4, __fmul_rn(__fmul_rn(a, b), t));
            }
            const int o = r * kSsimTileX + tx;
            s_h[o] = __double2float_rn(s0);
            s_h[plane + o] = __double2float_rn(s1);
            s_h[2 * plane + o] = __double2float_rn(s2);
            s_h[3 * plane + o] = __double2float_rn(s3);
            s_h[4 * plane + o] = __double2float_rn(s4);
        }
    }
    __syncthreads();
    unsigned long long a[kWords]; // registers: every index below is a constant after unrolling
#pragma unroll
    for (int i = 0; i < kWords; ++i) a[i] = 0;
    if (x < vw) {
        for (int r = t0; r < rows; r += kRowsPerPass) {
            const float* col = s_h + r * kSsimTileX + tx;
            double v0 = 0.0, v1 = 0.0, v2 = 0.0, v3 = 0.0, v4 = 0.0;
#pragma unroll
            for (int v = 0; v < kGauss; ++v) {
                const float t = g.g[v];
                const int o = v * kSsimTileX;
                v0 = dadd_float_rn(v0, __fmul_rn(col[o], t));
                v1 = dadd_float_rn(v1, __fmul_rn(col[plane + o], t));
                v2 = dadd_nonneg_float_rn(v2, __fmul_rn(col[2 * plane + o], t));
                v3 = dadd_nonneg_float_rn(v3, __fmul_rn(col[3 * plane + o], t));
                v4 = dadd_float_rn(v4, __fmul_rn(col[4 * plane + o], t));
            }
            const float mu1 = __double2float_rn(v0), mu2 = __double2float_rn(v1);
            const float ref_sq = __double2float_rn(v2), cmp_sq = __double2float_rn(v3);
            const float both = __double2float_rn(v4);
            float s11 = __fsub_rn(ref_sq, __fmul_rn(mu1, mu1));
            float s22 = __fsub_rn(cmp_sq, __fmul_rn(mu2, mu2));
            s11 = (0.0 > double(s11)) ? 0.0f : s11; // libvmaf's MAX(0.0, x), cast to float
            s22 = (0.0 > double(s22)) ? 0.0f : s22;
            const float s12 = __fsub_rn(both, __fmul_rn(mu1, mu2));
            const float srsc = __double2float_rn(__dsqrt_rn(double(__fmul_rn(s11, s22))));
            const double l = __ddiv_rn(
                __dadd_rn(__dmul_rn(__dmul_rn(2.0, double(mu1)), double(mu2)), double(cst.c1)),
                double(__fadd_rn(__fadd_rn(__fmul_rn(mu1, mu1), __fmul_rn(mu2, mu2)), cst.c1)));
            const double c = __ddiv_rn(__dadd_rn(__dmul_rn(2.0, double(srsc)), double(cst.c2)),
                                       double(__fadd_rn(__fadd_rn(s11, s22), cst.c2)));
            const float clamped = (s12 < 0.0f && srsc <= 0.0f) ? 0.0f : s12;
            const double s = double(__fdiv_rn(__fadd_rn(clamped, cst.c3), __fadd_rn(srsc, cst.c3)));
            const std::size_t i = std::size_t(y0 + r) * vw + x;
            lmap[i] = l;
            cmap[i] = c;
            smap[i] = s;
            add_term(a, kIqaSsim, __dmul_rn(__dmul_rn(l, c), s));
            add_term(a, kIqaL, l);
            add_term(a, kIqaC, c);
            add_term(a, kIqaS, s);
        }
    }
    // Block reduction: warps by shuffles, then warp 0 over the warps' partials.
    __shared__ unsigned long long part[kThreads / 32][kWords];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int k = 0; k < kWords; ++k) {
        unsigned long long v = a[k];
        for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
        if (lane == 0) part[warp][k] = v;
    }
    __syncthreads();
    if (warp == 0 && lane < kWords) {
        unsigned long long v = 0;
        for (int w8 = 0; w8 < int(blockDim.x >> 5); ++w8) v += part[w8][lane];
        if (v) atomicAdd(acc + accum_word(lane, band), v);
    }
}

struct AccumHeader {
    int scales;
    int w[ref::kMsSsimScales], h[ref::kMsSsimScales];
    unsigned long long seq;
    unsigned seq_word;
};

__global__ void accum_init_kernel(unsigned long long* blob, unsigned words, AccumHeader hd) {
    for (unsigned i = threadIdx.x; i < words; i += blockDim.x) blob[i] = 0;
    __syncthreads();
    if (threadIdx.x == 0) {
        IqaScaleAccum* s = reinterpret_cast<IqaScaleAccum*>(blob);
        for (int i = 0; i < hd.scales; ++i) {
            s[i].w = hd.w[i];
            s[i].h = hd.h[i];
        }
        blob[hd.seq_word] = hd.seq;
    }
}

__global__ void sequential_sum_kernel(const double* map, std::size_t n, double* out) {
    double s = 0.0;
    for (std::size_t i = 0; i < n; ++i) s = __dadd_rn(s, map[i]);
    *out = s;
}

unsigned blocks_for(int n) { return unsigned((n + kThreads - 1) / kThreads); }

Gauss gauss_taps() {
    Gauss g;
    for (int i = 0; i < kGauss; ++i) g.g[i] = ref::iqa_gaussian_taps()[i];
    return g;
}

} // namespace

void require_planes(const DevicePlane& a, const DevicePlane& b, const void* out, unsigned w,
                    unsigned h, unsigned bpc, const char* who) {
    auto fail = [&](const char* what) {
        throw CudaError(cudaErrorInvalidValue, std::string(who) + ": " + what);
    };
    for (const DevicePlane* p : {&a, &b}) {
        if (p->width != w || p->height != h || p->bpc != bpc)
            fail("planes do not match the size/bpc given at construction");
        if (!p->data) fail("null plane");
        if (p->step != 1 && p->step != 2) fail("step other than 1 or 2");
        if (p->shift > 15) fail("shift above 15");
        const std::size_t bps = bpc > 8 ? 2 : 1;
        if (p->pitch < (std::size_t(w - 1) * p->step + 1) * bps) fail("pitch smaller than a row");
    }
    if (!out) fail("null accumulator");
}

void launch_to_float(const DevicePlane& ref, const DevicePlane& dis, float* ref_out, float* dis_out,
                     cudaStream_t stream) {
    if (ref.width == 0 || ref.height == 0) return;
    to_float_kernel<<<dim3(blocks_for(int(ref.width)), ref.height), kThreads, 0, stream>>>(
        ref, dis, ref_out, dis_out);
    VMAF_CUDA_CHECK_LAUNCH();
}

void launch_decimate_planes(const DevicePlane& ref, const DevicePlane& dis, int factor,
                            const Taps2d& taps, float* ref_out, float* dis_out, cudaStream_t stream) {
    const int w = int(ref.width), h = int(ref.height);
    const int sw = w / factor + (w & 1), sh = h / factor + (h & 1);
    if (sw <= 0 || sh <= 0) return;
    decimate_kernel<PlaneSrc><<<dim3(blocks_for(sw), unsigned(sh)), kThreads, 0, stream>>>(
        PlaneSrc{ref}, PlaneSrc{dis}, w, h, factor, taps, ref_out, dis_out, sw, sh);
    VMAF_CUDA_CHECK_LAUNCH();
}

void launch_decimate(const float* ref, const float* dis, int w, int h, int factor,
                     const Taps2d& taps, float* ref_out, float* dis_out, cudaStream_t stream) {
    const int sw = w / factor + (w & 1), sh = h / factor + (h & 1);
    if (sw <= 0 || sh <= 0) return;
    if (factor == 2 && taps.len == 9) {
        const dim3 grid(unsigned((sw + kTileX - 1) / kTileX), unsigned((sh + kTileY - 1) / kTileY));
        decimate_tiled_kernel<9, 2><<<grid, dim3(kTileX, kTileY), 0, stream>>>(
            ref, dis, w, h, taps, ref_out, dis_out, sw, sh);
        VMAF_CUDA_CHECK_LAUNCH();
        return;
    }
    decimate_kernel<FloatSrc><<<dim3(blocks_for(sw), unsigned(sh)), kThreads, 0, stream>>>(
        FloatSrc{ref, w}, FloatSrc{dis, w}, w, h, factor, taps, ref_out, dis_out, sw, sh);
    VMAF_CUDA_CHECK_LAUNCH();
}

bool decimate_in_place_safe(int w, int h, int factor, int len) {
    if (w <= 0 || h <= 0 || factor <= 0 || len <= 0) return false;
    const int sw = w / factor + (w & 1), sh = h / factor + (h & 1);
    const int c = len / 2, k_even = (len & 1) ? 0 : 1;
    // Smallest mirrored index an output reads, per output row / column; -1: out of range.
    auto first = [&](int n, int count, std::vector<int>& out) {
        out.assign(std::size_t(count), 0);
        for (int i = 0; i < count; ++i) {
            int m = n;
            for (int t = -c; t <= c - k_even; ++t) {
                const int s = sym(i * factor + t, n);
                if (s < 0 || s >= n) return false;
                m = std::min(m, s);
            }
            out[std::size_t(i)] = m;
        }
        return true;
    };
    std::vector<int> row, col;
    if (!first(h, sh, row) || !first(w, sw, col)) return false;
    if (sw > w || sh > h) return false;
    for (int y = 0; y < sh; ++y)
        for (int x = 0; x < sw; ++x)
            if (static_cast<long long>(row[std::size_t(y)]) * w + col[std::size_t(x)] <
                static_cast<long long>(y) * sw + x)
                return false;
    return true;
}

void launch_accum_init(void* d_accum, std::size_t bytes, int scales, const int* w, const int* h,
                       std::size_t seq_offset, std::uint64_t seq, cudaStream_t stream) {
    AccumHeader hd{};
    hd.scales = scales;
    for (int i = 0; i < scales; ++i) {
        hd.w[i] = w[i];
        hd.h[i] = h[i];
    }
    hd.seq = seq;
    hd.seq_word = unsigned(seq_offset / 8);
    accum_init_kernel<<<1, kThreads, 0, stream>>>(static_cast<unsigned long long*>(d_accum),
                                                  unsigned(bytes / 8), hd);
    VMAF_CUDA_CHECK_LAUNCH();
}

void launch_sequential_sum(const double* map, std::size_t n, double* out, cudaStream_t stream) {
    sequential_sum_kernel<<<1, 1, 0, stream>>>(map, n, out);
    VMAF_CUDA_CHECK_LAUNCH();
}

void launch_ssim_scale(const float* ref, const float* dis, int w, int h, const ScaleBuffers& buf,
                       IqaScaleAccum* acc, cudaStream_t stream) {
    const int vw = w - kGauss + 1, vh = h - kGauss + 1;
    if (vw <= 0 || vh <= 0) return;
    // _iqa_ssim's constants, computed as libvmaf does (float).
    const float K1 = 0.01f, K2 = 0.03f;
    const int L = 255;
    SsimConsts cst;
    cst.c1 = (K1 * L) * (K1 * L);
    cst.c2 = (K2 * L) * (K2 * L);
    cst.c3 = cst.c2 / 2.0f;
    const Gauss g = gauss_taps();
    // Tiles of equal height in the tallest band, at most kSsimTileMaxY rows (the bands
    // differ by at most one row; a shorter band leaves its last tile shorter or empty).
    const int band_max = (vh + kIqaBands - 1) / kIqaBands;
    const int tiles = (band_max + kSsimTileMaxY - 1) / kSsimTileMaxY;
    const int ty = (band_max + tiles - 1) / tiles;
    const dim3 grid(unsigned((vw + kSsimTileX - 1) / kSsimTileX), unsigned(tiles), unsigned(kIqaBands));
    ssim_fused_kernel<<<grid, kThreads, ssim_fused_smem(ty), stream>>>(
        ref, dis, w, vw, vh, ty, g, cst, buf.l, buf.c, buf.s,
        reinterpret_cast<unsigned long long*>(acc));
    VMAF_CUDA_CHECK_LAUNCH();
}

} // namespace vmaf_cuda::cuda::iqa

// SPDX-License-Identifier: BSD-2-Clause-Patent
// CUDA port of CAMBI, device side; contract and the host/device split in cambi.cuh,
// launchers in cambi_device.cuh (this file is C++17: see there), arithmetic in
// reference/cambi.h (libvmaf v3.2.0 feature/cambi.c, scalar C).
//
// Launches per frame (all on the caller's stream): a memset of the accumulator, one
// init of the top-k scratch; per pass: [sample check when resampling], preprocess,
// the zero-derivative mask (one tiled kernel), per scale a mode filter (which also writes the
// scale's band-index "key" plane: band index of a masked in-band pixel, else 0xffff),
// then one c-value launch for the five scales; then for both passes and all scales
// together: three histogram + resolve rounds of the radix select, the sum of the values
// above the k-th, finalize: 18 launches and a memset per frame (26 with full_ref; one
// more per pass for 9..15-bit input that is resampled).

#include "cambi_device.cuh"
#include "cuda_common.cuh"

#include <algorithm>

namespace vmaf_cuda::cuda::cambi_detail {

namespace {

constexpr int kMaxSeg = 2 * kCambiDeviceScales; // top-k segments: 2 passes x 5 scales
constexpr int kBins0 = 2048, kBins1 = 4096, kBins2 = 256; // radix digits: 11, 12, 8 bits
constexpr int kBinsAll = kBins0 + kBins1 + kBins2;
constexpr std::uint16_t kNoKey = 0xffff;

// ---------------------------------------------------------------- stage 1

struct PreParams {
    DevicePlane in;
    const std::uint32_t* xmap; // source column of each output column
    const std::uint32_t* ymap; // source row of each output row
    std::uint16_t* out;        // w x h, pitch w
    int w, h;
    int shift_up, shift_down, round; // to 10 bits (reference To10)
    unsigned maxv;                   // largest valid sample; checked when check != 0
    int check;                       // identity mapping: this kernel sees every sample
    int anti;                        // enc_bitdepth < 10: 2x2 anti-dithering mean
    std::uint32_t* invalid;          // set nonzero on a sample > maxv
};

__device__ __forceinline__ unsigned to10(const PreParams& p, unsigned v) {
    return p.shift_up ? (v << p.shift_up) : ((v + p.round) >> p.shift_down);
}

__device__ __forceinline__ unsigned pre_sample(const PreParams& p, int x, int y) {
    return to10(p, load(p.in, p.xmap[x], p.ymap[y]));
}

__global__ void preprocess_kernel(PreParams p) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= p.w || y >= p.h) return;
    if (p.check && load(p.in, x, y) > p.maxv) atomicOr(p.invalid, 1u);
    unsigned v = pre_sample(p, x, y);
    if (p.anti) {
        // reference anti_dithering (each output from the unfiltered plane)
        const bool lx = x == p.w - 1, ly = y == p.h - 1;
        if (!lx && !ly)
            v = (v + pre_sample(p, x + 1, y) + pre_sample(p, x, y + 1) + pre_sample(p, x + 1, y + 1)) >> 2;
        else if (!ly)
            v = (v + pre_sample(p, x, y + 1)) >> 1;
        else if (!lx)
            v = (v + pre_sample(p, x + 1, y)) >> 1;
    }
    p.out[static_cast<std::size_t>(y) * p.w + x] = static_cast<std::uint16_t>(v);
}

// Every sample of the input (the resampling may skip some; the reference checks all).
__global__ void check_kernel(DevicePlane in, unsigned maxv, std::uint32_t* invalid) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= static_cast<int>(in.width) || y >= static_cast<int>(in.height)) return;
    if (load(in, x, y) > maxv) atomicOr(invalid, 1u);
}

// ---------------------------------------------------------------- stage 2

// mask(x, y) = (sum of z over columns [x-3, x+3] and rows [y-3, y+3], both clipped to
// the plane) > mask_index (reference get_spatial_mask_for_index, 7x7 box). One block per
// kMaskTile x kMaskTile outputs: the preprocessed samples of the tile and its halo (3 on
// each side, one more right and below for the derivatives) go to shared memory, then z,
// the vertical 7-sums and the horizontal 7-sums are made there. Integer sums: the order
// does not matter.
constexpr int kMaskTile = 32, kMaskHalo = 3;
constexpr int kMaskZ = kMaskTile + 2 * kMaskHalo; // z rows and columns a tile needs (38)
constexpr int kMaskP = kMaskZ + 1;                // samples (39)

__global__ void __launch_bounds__(256) mask_tiled_kernel(const std::uint16_t* img, int w, int h,
                                                         unsigned mask_index, std::uint8_t* mask) {
    __shared__ std::uint16_t s_p[kMaskP][kMaskP + 1];
    __shared__ std::uint8_t s_z[kMaskZ][kMaskZ + 2];
    __shared__ std::uint8_t s_v[kMaskTile][kMaskZ + 2];
    const int x0 = blockIdx.x * kMaskTile - kMaskHalo, y0 = blockIdx.y * kMaskTile - kMaskHalo;
    const int tid = threadIdx.y * blockDim.x + threadIdx.x, nt = blockDim.x * blockDim.y;
    for (int i = tid; i < kMaskP * kMaskP; i += nt) {
        const int r = i / kMaskP, c = i % kMaskP, x = x0 + c, y = y0 + r;
        s_p[r][c] = (x >= 0 && x < w && y >= 0 && y < h)
                        ? img[static_cast<std::size_t>(y) * w + x] : std::uint16_t(0);
    }
    __syncthreads();
    // z outside the plane is 0 (the clipped sums leave it out); at the last column the
    // horizontal derivative, at the last row the vertical one counts as zero.
    for (int i = tid; i < kMaskZ * kMaskZ; i += nt) {
        const int r = i / kMaskZ, c = i % kMaskZ, x = x0 + c, y = y0 + r;
        unsigned z = 0;
        if (x >= 0 && x < w && y >= 0 && y < h) {
            const unsigned v = s_p[r][c];
            z = (x == w - 1 || v == s_p[r][c + 1]) && (y == h - 1 || v == s_p[r + 1][c]);
        }
        s_z[r][c] = static_cast<std::uint8_t>(z);
    }
    __syncthreads();
    for (int i = tid; i < kMaskTile * kMaskZ; i += nt) {
        const int r = i / kMaskZ, c = i % kMaskZ;
        unsigned s = 0;
#pragma unroll
        for (int k = 0; k < 2 * kMaskHalo + 1; ++k) s += s_z[r + k][c];
        s_v[r][c] = static_cast<std::uint8_t>(s);
    }
    __syncthreads();
    for (int i = tid; i < kMaskTile * kMaskTile; i += nt) {
        const int r = i / kMaskTile, c = i % kMaskTile;
        const int x = x0 + kMaskHalo + c, y = y0 + kMaskHalo + r;
        if (x >= w || y >= h) continue;
        unsigned s = 0;
#pragma unroll
        for (int k = 0; k < 2 * kMaskHalo + 1; ++k) s += s_v[r][c + k];
        mask[static_cast<std::size_t>(y) * w + x] = s > mask_index;
    }
}

// ---------------------------------------------------------------- stage 3

struct ModeParams {
    const std::uint16_t* src; // previous plane (preprocessed or filtered previous scale)
    int src_pitch;            // samples
    int st;                   // 1, or 2 when this scale decimates
    int w, h;                 // this scale
    std::uint16_t* out;       // w x h, pitch w
    std::uint16_t* key;       // w x h, pitch w
    const std::uint8_t* mask0; // pass-size mask
    int mask_pitch;
    int t;                    // mask of this scale = mask0 at (x << t, y << t)
    int base, band;           // v_band_base, v_band_size
};

__device__ __forceinline__ unsigned mode3(unsigned a, unsigned b, unsigned c) {
    if (a == b || a == c) return a;
    if (b == c) return b;
    return min(a, min(b, c));
}

__device__ __forceinline__ unsigned dec(const ModeParams& p, int x, int y) {
    return p.src[static_cast<std::size_t>(y * p.st) * p.src_pitch + static_cast<std::size_t>(x) * p.st];
}

__device__ __forceinline__ unsigned hmode(const ModeParams& p, int x, int y) {
    if (x == 0 || x == p.w - 1) return dec(p, x, y);
    return mode3(dec(p, x - 1, y), dec(p, x, y), dec(p, x + 1, y));
}

// reference cambi_filter_mode on the decimated plane: rows 0 and h-1 untouched, others
// the vertical mode3 of the horizontal mode3 rows; plus the key plane.
__global__ void mode_kernel(ModeParams p) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= p.w || y >= p.h) return;
    unsigned v;
    if (y == 0 || y == p.h - 1)
        v = dec(p, x, y);
    else
        v = mode3(hmode(p, x, y - 1), hmode(p, x, y), hmode(p, x, y + 1));
    const std::size_t at = static_cast<std::size_t>(y) * p.w + x;
    p.out[at] = static_cast<std::uint16_t>(v);
    const bool m = p.mask0[static_cast<std::size_t>(y << p.t) * p.mask_pitch +
                           (static_cast<std::size_t>(x) << p.t)] != 0;
    const int compact = static_cast<int>(v) - p.base;
    p.key[at] = (m && compact >= 0 && compact < p.band) ? static_cast<std::uint16_t>(compact) : kNoKey;
}

struct CvScale {
    const std::uint16_t* key; // w x h band indices or kNoKey
    float* c;                 // w x h c-values
    int w, h, seg;            // seg: rows per block
    int strips;               // blocks across
    int first;                // first block of this scale in the grid
};

struct CvParams {
    CvScale sc[kCambiDeviceScales]; // all scales in one launch (independent given the keys)
    int pad;
    int tw;                   // columns per block (blockDim.x = tw * kCvalueSub)
    int nd, vlt, base, band;
    const int* consts;        // PlanConsts::consts: tvi_for_diff, diff_weight, reciprocal fix-ups
};

// libvmaf's reciprocal table entry i (1 <= i < kCambiReciprocalSize): the correctly
// rounded 1/i, one ulp up or down where the table's bit says so (built by CambiKernel).
__device__ __forceinline__ float cambi_recip(int i, const std::uint32_t* up, const std::uint32_t* down) {
    unsigned b = __float_as_uint(__frcp_rn(__int2float_rn(i)));
    const unsigned bit = 1u << (i & 31);
    if (up[i >> 5] & bit) ++b;
    else if (down[i >> 5] & bit) --b;
    return __uint_as_float(b);
}

// A strip of p.tw columns x = s0 + c, rows [y0, y1) of one scale (the blocks of scale s
// are [sc[s].first, sc[s + 1].first)), kCvalueSub threads per column. hist(v, c) = masked
// pixels of band index v in the clipped window around (x, y) (window columns
// X = s0 - pad + u, u in [c, c + 2 pad]), kept as the reference's update_row keeps it.
//
// A block whose windows hold no key writes zeros. The window of row y0 (rows
// [max(y0 - pad, 0), y0 + pad]) is built per column of window
// columns: column 0 counts its 2 pad + 1 window columns, column c >= 1 the difference to
// column c - 1 (window column c + 2 pad in, c - 1 out), biased by 65 so that the packed
// counts never go below zero; then a warp scan along the columns of each word.
// Each row step (to row y: row y - pad - 1 out, y + pad in) is listed once for the block:
// per window column the words and increments of the outgoing and incoming keys, and a
// bit where they differ (one ballot per 32 columns; keys loaded two steps ahead). Each
// thread of a column then applies the changed window columns of its quarter of the
// window (shared-memory atomics; counts <= 65 * 65, two per 32-bit word, never below
// zero, so the packed halves never carry; both keys in one word: one atomic). The
// reference's c_value_pixel is spread over the column's threads (contrast steps d = sub,
// sub + kCvalueSub, ...), their maxima combined in the next step (max is exact in any
// order).
__global__ void __launch_bounds__(kCvalueMaxTw * kCvalueSub, 4) cvalue_kernel(CvParams p) {
    extern __shared__ std::uint32_t hist[]; // ((band + 1) / 2) words x p.tw
    __shared__ int s_tvi[32], s_wt[32];
    __shared__ std::uint32_t s_up[kCambiRecipWords], s_down[kCambiRecipWords];
    __shared__ uint4 s_ent[kCvalueMaxHalo];                // word, increment (out); word, increment (in)
    __shared__ std::uint32_t s_bits[kCvalueMaxHalo / 32];  // changed window columns
    __shared__ float s_part[kCvalueSub * kCvalueMaxTw];    // per-thread c-value maxima
    const int tw = p.tw;
    const int c = threadIdx.x % tw, sub = threadIdx.x / tw;
    for (int i = threadIdx.x; i < 64 + 2 * kCambiRecipWords; i += blockDim.x) {
        const int v = p.consts[i];
        if (i < 32) s_tvi[i] = v;
        else if (i < 64) s_wt[i - 32] = v;
        else if (i < 64 + kCambiRecipWords) s_up[i - 64] = static_cast<std::uint32_t>(v);
        else s_down[i - 64 - kCambiRecipWords] = static_cast<std::uint32_t>(v);
    }
    int si = 0;
    for (int i = 1; i < static_cast<int>(kCambiDeviceScales); ++i)
        if (static_cast<int>(blockIdx.x) >= p.sc[i].first) si = i;
    const CvScale sc = p.sc[si];
    const int local = static_cast<int>(blockIdx.x) - sc.first;
    const int s0 = (local % sc.strips) * tw;
    const int x = s0 + c;
    const bool active = x < sc.w;
    const int pad = p.pad;
    const int halo = tw + 2 * pad; // <= kCvalueMaxHalo
    const int y0 = (local / sc.strips) * sc.seg; // < h by the grid
    const int y1 = min(y0 + sc.seg, sc.h);
    const int rlo = max(y0 - pad, 0);          // rows of row y0's window
    const int rhi = min(y0 + pad, sc.h - 1);
    const int words = (p.band + 1) >> 1;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int wbase = static_cast<int>(threadIdx.x) - lane;
    const int nwarps = static_cast<int>(blockDim.x) >> 5;
    constexpr std::uint32_t kBias = 65u | (65u << 16); // >= the rows of a window

    auto key_at = [&](int r, int X) -> unsigned {
        return sc.key[static_cast<std::size_t>(r) * sc.w + X];
    };
    auto count = [&](int v) { return (hist[(v >> 1) * tw + c] >> ((v & 1) << 4)) & 0xffffu; };

    // ---- a block whose rows' windows hold no key (masked out or out of the band): zeros
    {
        const int rend = min(y1 - 1 + pad, sc.h - 1);
        const int nfoot = (rend - rlo + 1) * halo;
        bool any = false;
        for (int i = threadIdx.x; i < nfoot && !any; i += blockDim.x) {
            const int X = s0 - pad + i % halo;
            any = X >= 0 && X < sc.w && key_at(rlo + i / halo, X) != kNoKey;
        }
        if (!__syncthreads_or(any)) {
            if (active)
                for (int y = y0 + sub; y < y1; y += kCvalueSub)
                    sc.c[static_cast<std::size_t>(y) * sc.w + x] = 0.0f;
            return;
        }
    }

    // ---- row y0's windows
    for (int i = threadIdx.x; i < words * tw; i += blockDim.x) hist[i] = (i % tw) ? kBias : 0u;
    __syncthreads();
    const int ninit = (rhi - rlo + 1) * halo;
    for (int i0 = 0; i0 < ninit; i0 += static_cast<int>(blockDim.x)) { // whole warps
        const int i = i0 + static_cast<int>(threadIdx.x);
        unsigned k = kNoKey;
        int u = 0;
        if (i < ninit) {
            u = i % halo;
            const int X = s0 - pad + u;
            if (X >= 0 && X < sc.w) k = key_at(rlo + i / halo, X);
        }
        const unsigned at = (k >> 1) * static_cast<unsigned>(tw), inc = (k & 1) ? 0x10000u : 1u;
        // column 0: the lanes with the same key add together (flat areas: one word)
        const bool c0 = k != kNoKey && u <= 2 * pad;
        const unsigned peers = __match_any_sync(0xffffffffu, c0 ? k : 0xffffffffu);
        if (c0 && lane == __ffs(peers) - 1) atomicAdd(&hist[at], inc * __popc(peers));
        if (k == kNoKey) continue;
        if (u > 2 * pad) atomicAdd(&hist[at + (u - 2 * pad)], inc); // enters column u - 2 pad
        if (u + 1 < tw) atomicAdd(&hist[at + (u + 1)], 0u - inc);   // leaves column u + 1
    }
    __syncthreads();
    {
        // Per word: inclusive scan of the columns' differences (column 0 absolute), each
        // lane taking cpl consecutive columns.
        const int cpl = (tw + 31) >> 5;
        for (int w = warp; w < words; w += nwarps) {
            std::uint32_t* row = hist + w * tw;
            int lo[2] = {0, 0}, hi[2] = {0, 0};
            int slo = 0, shi = 0;
            for (int j = 0; j < cpl; ++j) {
                const int cc = lane * cpl + j;
                if (cc < tw) {
                    const std::uint32_t v = row[cc];
                    const int b = cc ? 65 : 0;
                    slo += static_cast<int>(v & 0xffffu) - b;
                    shi += static_cast<int>(v >> 16) - b;
                }
                lo[j] = slo;
                hi[j] = shi;
            }
            int plo = slo, phi = shi; // inclusive scan over the lanes
#pragma unroll
            for (int o = 1; o < 32; o <<= 1) {
                const int tlo = __shfl_up_sync(0xffffffffu, plo, o);
                const int thi = __shfl_up_sync(0xffffffffu, phi, o);
                if (lane >= o) plo += tlo, phi += thi;
            }
            plo -= slo; // exclusive
            phi -= shi;
            for (int j = 0; j < cpl; ++j) {
                const int cc = lane * cpl + j;
                if (cc < tw)
                    row[cc] = static_cast<std::uint32_t>(plo + lo[j]) |
                              (static_cast<std::uint32_t>(phi + hi[j]) << 16);
            }
        }
    }

    // ---- row steps
    // This thread's quarter of the window columns u in [c, c + 2 pad].
    const int qlen = (2 * pad + kCvalueSub) / kCvalueSub;
    const int ulo = c + sub * qlen, uhi = min(ulo + qlen, c + 2 * pad + 1);
    // The keys leaving (low half) and entering (high half) window column
    // wbase + j * blockDim.x + lane at step yy, kNoKey where there is none.
    constexpr int kChunks = 3; // tw + 2 pad <= 3 * blockDim.x as tw >= 8
    auto load_step = [&](int yy, unsigned (&ab)[kChunks]) {
        const int ro = yy - pad - 1, ri = yy + pad;
#pragma unroll
        for (int j = 0; j < kChunks; ++j) {
            const int u = wbase + j * static_cast<int>(blockDim.x) + lane;
            if (wbase + j * static_cast<int>(blockDim.x) >= halo) break; // warp-uniform
            const int X = s0 - pad + u;
            unsigned a = kNoKey, b = kNoKey;
            if (u < halo && X >= 0 && X < sc.w && yy < y1) {
                if (ro >= rlo) a = key_at(ro, X);
                if (ri < sc.h) b = key_at(ri, X);
            }
            ab[j] = a | (b << 16);
        }
    };
    // Writes the list of a step from its keys (whole warps: ballots).
    auto list_step = [&](const unsigned (&ab)[kChunks]) {
#pragma unroll
        for (int j = 0; j < kChunks; ++j) {
            const int base = wbase + j * static_cast<int>(blockDim.x);
            if (base >= halo) break; // warp-uniform
            const int u = base + lane;
            const unsigned ka = ab[j] & 0xffffu, kb = ab[j] >> 16;
            const unsigned bits = __ballot_sync(0xffffffffu, ka != kb);
            if (lane == 0) s_bits[base >> 5] = bits;
            if (u < halo && ka != kb) {
                uint4 e{0u, 0u, 0u, 0u};
                if (ka != kNoKey) {
                    e.x = (ka >> 1) * static_cast<unsigned>(tw);
                    e.y = (ka & 1) ? 0xffff0000u : 0xffffffffu; // -0x10000 or -1
                }
                if (kb != kNoKey) {
                    const unsigned w = (kb >> 1) * static_cast<unsigned>(tw);
                    const unsigned inc = (kb & 1) ? 0x10000u : 1u;
                    if (e.y && e.x == w) e.y += inc; // one word: one atomic
                    else e.z = w, e.w = inc;
                }
                s_ent[u] = e;
            }
        }
    };
    // Applies the listed changes to this thread's quarter of its column's window.
    auto apply_step = [&]() {
        if (!active || ulo >= uhi) return;
        for (int wd = ulo >> 5; wd <= (uhi - 1) >> 5; ++wd) {
            const int b0 = max(ulo - wd * 32, 0), b1 = min(uhi - wd * 32, 32);
            unsigned m = s_bits[wd] >> b0;
            if (b1 - b0 < 32) m &= (1u << (b1 - b0)) - 1u;
            while (m) {
                const int u = wd * 32 + b0 + __ffs(m) - 1;
                m &= m - 1u;
                const uint4 e = s_ent[u];
                if (e.y) atomicAdd(&hist[e.x + c], e.y);
                if (e.w) atomicAdd(&hist[e.z + c], e.w);
            }
        }
    };
    auto store_row = [&](int yy) { // the maxima of row yy's contrast steps
        if (sub != 0 || !active) return;
        float best = s_part[c];
        for (int j = 1; j < kCvalueSub; ++j) best = fmaxf(best, s_part[j * tw + c]);
        sc.c[static_cast<std::size_t>(yy) * sc.w + x] = best;
    };
    auto key_row = [&](int yy) -> unsigned { // the key of (x, yy) when its c-value is due
        return (active && yy < y1) ? key_at(yy, x) : kNoKey;
    };

    unsigned ab1[kChunks], ab2[kChunks];
    load_step(y0 + 1, ab1); // two steps ahead
    load_step(y0 + 2, ab2);
    unsigned key1 = key_row(y0), key2 = key_row(y0 + 1);
    __syncthreads(); // the scans are done
    for (int y = y0; y < y1; ++y) {
        if (y > y0) {
            store_row(y - 1);
            apply_step();
            __syncthreads(); // hist holds row y's windows; s_part and the list are free
        }
        const unsigned key = key1;
        key1 = key2;
        key2 = key_row(y + 2);
        if (active) {
            float best = 0.0f;
            const int k = static_cast<int>(key);
            if (key != kNoKey) {
                // reference c_value_pixel, contrast steps d = sub, sub + kCvalueSub, ...
                const int value = (k + p.base + p.nd) & 0xffff;
                const int p0 = static_cast<int>(count(k)); // >= 1: the pixel itself
                for (int d = sub; d < p.nd; d += kCvalueSub) {
                    if (!(value <= s_tvi[d] && value + (d + 1) > p.vlt)) continue;
                    const int i1 = k + d + 1, i2 = k - d - 1;
                    const int p1 = i1 < p.band ? static_cast<int>(count(i1)) : 0;
                    const int p2 = i2 >= 0 ? static_cast<int>(count(i2)) : 0;
                    const int pm = p1 > p2 ? p1 : p2;
                    const float val = __fmul_rn(__int2float_rn(s_wt[d] * p0 * pm),
                                                cambi_recip(pm + p0, s_up, s_down));
                    if (val > best) best = val;
                }
            }
            s_part[sub * tw + c] = best;
        }
        if (y + 1 < y1) {
            list_step(ab1);
#pragma unroll
            for (int j = 0; j < kChunks; ++j) ab1[j] = ab2[j];
            load_step(y + 3, ab2);
        }
        __syncthreads(); // the next step's list and this row's maxima are written
    }
    store_row(y1 - 1);
}

// ---------------------------------------------------------------- stage 4 (top-k)

struct TopkState {
    unsigned long long sum_gt; // units of the values above the k-th
    unsigned cnt_gt;           // how many
    unsigned need;             // rank still to find among values with the current prefix
    unsigned prefix;
    unsigned kth;              // bits of the k-th largest
    unsigned min_nz;           // smallest nonzero bits (0xffffffff: none)
    unsigned done;             // kth is known
};

struct TopkSeg {
    const float* c;
    unsigned n, k;
};

struct TopkParams {
    TopkSeg seg[kMaxSeg];
    int first[kMaxSeg + 1]; // blocks first[s] .. first[s + 1] - 1 of the 1-D grid read segment s
    int nseg;
    TopkState* st;    // [nseg]
    unsigned* hist;   // [nseg][kBinsAll]
    int level;
};

// Whole units of 2^-24 of a non-negative float (truncated, as the reference's cast).
__device__ __forceinline__ unsigned long long units_of(unsigned b) {
    const int e = static_cast<int>(b >> 23);
    if (e == 0) return 0;
    const unsigned long long m = (b & 0x7fffffu) | 0x800000u;
    if (e >= 126) return m << (e - 126);
    return 126 - e >= 32 ? 0 : m >> (126 - e);
}

__global__ void topk_init_kernel(TopkParams p) {
    const int n = p.nseg * kBinsAll;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p.hist[i] = 0;
    if (blockIdx.x == 0 && threadIdx.x < p.nseg) {
        TopkState& s = p.st[threadIdx.x];
        s.sum_gt = 0;
        s.cnt_gt = 0;
        s.need = p.seg[threadIdx.x].k;
        s.prefix = 0;
        s.kth = 0;
        s.min_nz = 0xffffffffu;
        s.done = 0;
    }
}

// This block's segment, its block index within it and the segment's block count.
struct SegBlock {
    int s, b, nb;
};
__device__ __forceinline__ SegBlock seg_block(const TopkParams& p) {
    int s = 0;
    while (s + 1 < p.nseg && static_cast<int>(blockIdx.x) >= p.first[s + 1]) ++s;
    return {s, static_cast<int>(blockIdx.x) - p.first[s], p.first[s + 1] - p.first[s]};
}

__device__ __forceinline__ int bins_of(int level) {
    return level == 0 ? kBins0 : level == 1 ? kBins1 : kBins2;
}
__device__ __forceinline__ int hist_off(int level) {
    return level == 0 ? 0 : level == 1 ? kBins0 : kBins0 + kBins1;
}

// Histogram of one radix digit of the nonzero c-values that share the current prefix.
__global__ void topk_hist_kernel(TopkParams p) {
    __shared__ unsigned sh[kBins1];
    __shared__ unsigned smin;
    const SegBlock sb = seg_block(p);
    const int s = sb.s;
    TopkState* st = p.st + s;
    const int level = p.level;
    if (level > 0 && st->done) return;
    const int nb = bins_of(level);
    for (int j = threadIdx.x; j < nb; j += blockDim.x) sh[j] = 0;
    if (threadIdx.x == 0) smin = 0xffffffffu;
    __syncthreads();
    const unsigned prefix = st->prefix;
    const unsigned* c = reinterpret_cast<const unsigned*>(p.seg[s].c);
    const unsigned n = p.seg[s].n;
    unsigned lmin = 0xffffffffu;
    for (unsigned i = unsigned(sb.b) * blockDim.x + threadIdx.x; i < n; i += unsigned(sb.nb) * blockDim.x) {
        const unsigned b = c[i];
        unsigned bin = 0xffffffffu; // not counted
        if (b != 0) {
            if (level == 0) {
                bin = b >> 20;
                lmin = min(lmin, b);
            } else if (level == 1) {
                if ((b >> 20) == prefix) bin = (b >> 8) & 0xfffu;
            } else {
                if ((b >> 8) == prefix) bin = b & 0xffu;
            }
        }
        // Warp-aggregated: flat content gives runs of equal c-values.
        const unsigned peers = __match_any_sync(__activemask(), bin);
        if (bin != 0xffffffffu && (threadIdx.x & 31) == static_cast<unsigned>(__ffs(peers) - 1))
            atomicAdd(&sh[bin], static_cast<unsigned>(__popc(peers)));
    }
    if (level == 0) {
        for (int o = 16; o > 0; o >>= 1) lmin = min(lmin, __shfl_xor_sync(0xffffffffu, lmin, o));
        if ((threadIdx.x & 31) == 0 && lmin != 0xffffffffu) atomicMin(&smin, lmin);
    }
    __syncthreads();
    unsigned* g = p.hist + static_cast<std::size_t>(s) * kBinsAll + hist_off(level);
    for (int j = threadIdx.x; j < nb; j += blockDim.x)
        if (sh[j]) atomicAdd(g + j, sh[j]);
    if (level == 0 && threadIdx.x == 0 && smin != 0xffffffffu) atomicMin(&st->min_nz, smin);
}

constexpr int kResolveThreads = 1024;

// One block per segment: finds the bin holding rank `need` counted from the top.
__global__ void topk_resolve_kernel(TopkParams p) {
    __shared__ unsigned scan[kResolveThreads];
    const int s = blockIdx.x;
    TopkState* st = p.st + s;
    const int level = p.level;
    if (st->done) return;
    const unsigned need = st->need, prefix = st->prefix;
    const int nb = bins_of(level);
    const int per = (nb + kResolveThreads - 1) / kResolveThreads;
    const unsigned* g = p.hist + static_cast<std::size_t>(s) * kBinsAll + hist_off(level);
    const int t = threadIdx.x;
    unsigned local = 0;
    for (int j = 0; j < per; ++j) {
        const int r = t * per + j;
        if (r < nb) local += g[nb - 1 - r];
    }
    scan[t] = local;
    __syncthreads();
    for (int o = 1; o < kResolveThreads; o <<= 1) {
        const unsigned add = t >= o ? scan[t - o] : 0;
        __syncthreads();
        scan[t] += add;
        __syncthreads();
    }
    const unsigned incl = scan[t], excl = incl - local, total = scan[kResolveThreads - 1];
    if (level == 0 && total < need) { // fewer than k nonzero values: the k-th is 0
        if (t == 0) {
            st->kth = 0;
            st->done = 1;
        }
        return;
    }
    if (!(excl < need && need <= incl)) return;
    unsigned cum = excl;
    for (int j = 0; j < per; ++j) {
        const int r = t * per + j;
        if (r >= nb) break;
        const unsigned bin = static_cast<unsigned>(nb - 1 - r);
        const unsigned cnt = g[bin];
        if (cum + cnt >= need) {
            st->need = need - cum;
            if (level == 0) {
                st->prefix = bin;
            } else if (level == 1) {
                st->prefix = (prefix << 12) | bin;
            } else {
                st->kth = (prefix << 8) | bin;
                st->done = 1;
            }
            return;
        }
        cum += cnt;
    }
}

// Sum (in units) and count of the values above the k-th.
__global__ void topk_sum_kernel(TopkParams p) {
    __shared__ unsigned long long ws[32];
    __shared__ unsigned wc[32];
    const SegBlock sb = seg_block(p);
    const int s = sb.s;
    TopkState* st = p.st + s;
    const unsigned kth = st->kth;
    const unsigned* c = reinterpret_cast<const unsigned*>(p.seg[s].c);
    const unsigned n = p.seg[s].n;
    unsigned long long sum = 0;
    unsigned cnt = 0;
    for (unsigned i = unsigned(sb.b) * blockDim.x + threadIdx.x; i < n; i += unsigned(sb.nb) * blockDim.x) {
        const unsigned b = c[i];
        if (b > kth) {
            sum += units_of(b);
            ++cnt;
        }
    }
    for (int o = 16; o > 0; o >>= 1) {
        sum += __shfl_xor_sync(0xffffffffu, sum, o);
        cnt += __shfl_xor_sync(0xffffffffu, cnt, o);
    }
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    if (lane == 0) {
        ws[wid] = sum;
        wc[wid] = cnt;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int i = 1; i < static_cast<int>(blockDim.x >> 5); ++i) {
            sum += ws[i];
            cnt += wc[i];
        }
        if (cnt) {
            atomicAdd(&st->sum_gt, sum);
            atomicAdd(&st->cnt_gt, cnt);
        }
    }
}

struct FinalParams {
    CambiAccum* acc;
    int npass;
    std::uint32_t slot;
    std::uint64_t sequence;
};

// The accumulator fields of every segment (the bound as ref::cambi_topk_from_sum()).
__global__ void topk_finalize_kernel(TopkParams p, FinalParams f) {
    const int s = threadIdx.x;
    if (s == 0) {
        f.acc->slot = f.slot;
        f.acc->full_ref = f.npass > 1;
        f.acc->sequence = f.sequence;
    }
    if (s >= p.nseg) return;
    const TopkState& st = p.st[s];
    CambiScaleAccum& a = f.acc->pass[s / kCambiDeviceScales][s % kCambiDeviceScales];
    const unsigned k = p.seg[s].k;
    const unsigned long long sum = st.sum_gt + units_of(st.kth) * (k - st.cnt_gt);
    const unsigned min_pos = st.kth ? st.kth : (st.min_nz == 0xffffffffu ? 0u : st.min_nz);
    const bool units_ok = min_pos == 0 || min_pos >= 0x3f000000u; // 0.5f
    const int e = min_pos ? static_cast<int>(min_pos >> 23) - 126 : 0; // frexp exponent
    const int bits = 53 + e;
    a.sum_units = sum;
    a.k = k;
    a.n = p.seg[s].n;
    a.kth_bits = st.kth;
    a.min_pos_bits = min_pos;
    a.bound_ok = units_ok && (bits >= 64 || sum < (1ull << bits));
    a.reserved = 0;
}

dim3 grid2d(unsigned w, unsigned h, dim3 b) { return dim3((w + b.x - 1) / b.x, (h + b.y - 1) / b.y); }

} // namespace

std::size_t topk_scratch_bytes() {
    return kMaxSeg * sizeof(TopkState) + std::size_t(kMaxSeg) * kBinsAll * sizeof(unsigned);
}

std::size_t cvalue_static_smem() {
    cudaFuncAttributes a{};
    VMAF_CUDA_CHECK(cudaFuncGetAttributes(&a, reinterpret_cast<const void*>(cvalue_kernel)));
    return a.sharedSizeBytes;
}

int cvalue_setup(std::size_t smem_limit, std::size_t smem, int threads) {
    VMAF_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(cvalue_kernel),
                                         cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(smem_limit)));
    int per_sm = 0;
    VMAF_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, reinterpret_cast<const void*>(cvalue_kernel), threads, smem));
    return per_sm;
}

void launch_pass(const PassLaunch& P, const PlanConsts& pc, const DevicePlane& in,
                 std::uint32_t* invalid, cudaStream_t stream) {
    const dim3 b2(32, 8);
    const unsigned bpc = pc.bpc;
    const unsigned maxv = bpc == 16 ? 0xffffu : (1u << bpc) - 1;
    // Only 9..15-bit input can hold a too-large sample (the reference checks those); a
    // shifted one (P010) cannot when 16 - shift <= bpc.
    const bool need_check = bpc != 8 && bpc != 16 && 16 - int(in.shift) > int(bpc);
    PreParams pp{};
    pp.in = in;
    pp.xmap = P.xmap;
    pp.ymap = P.ymap;
    pp.out = P.pre;
    pp.w = int(P.w);
    pp.h = int(P.h);
    if (bpc >= 10) {
        pp.shift_down = int(bpc) - 10;
        pp.round = pp.shift_down ? 1 << (pp.shift_down - 1) : 0;
    } else {
        pp.shift_up = 10 - int(bpc);
    }
    pp.maxv = maxv;
    pp.check = need_check && P.identity;
    pp.anti = pc.anti;
    pp.invalid = invalid;
    if (need_check && !P.identity) {
        check_kernel<<<grid2d(pc.in_w, pc.in_h, b2), b2, 0, stream>>>(in, maxv, invalid);
        VMAF_CUDA_CHECK_LAUNCH();
    }
    preprocess_kernel<<<grid2d(P.w, P.h, b2), b2, 0, stream>>>(pp);
    VMAF_CUDA_CHECK_LAUNCH();
    const dim3 mg((P.w + kMaskTile - 1) / kMaskTile, (P.h + kMaskTile - 1) / kMaskTile);
    mask_tiled_kernel<<<mg, b2, 0, stream>>>(P.pre, pp.w, pp.h, P.mask_index, P.mask);
    VMAF_CUDA_CHECK_LAUNCH();

    CvParams cp{};
    cp.pad = P.pad;
    cp.tw = pc.tw;
    cp.nd = pc.nd;
    cp.vlt = pc.vlt;
    cp.base = pc.base;
    cp.band = pc.band;
    cp.consts = pc.consts;
    int blocks = 0;
    for (unsigned s = 0; s < kCambiDeviceScales; ++s) {
        const int w = int(P.sw[s]), h = int(P.sh[s]);
        ModeParams mp{};
        if (s == 0) {
            mp.src = P.pre;
            mp.src_pitch = int(P.w);
            mp.st = pc.hrs ? 2 : 1;
        } else {
            mp.src = P.filt + P.filt_off[s - 1];
            mp.src_pitch = int(P.sw[s - 1]);
            mp.st = 2;
        }
        mp.w = w;
        mp.h = h;
        mp.out = P.filt + P.filt_off[s];
        mp.key = P.key + P.filt_off[s];
        mp.mask0 = P.mask;
        mp.mask_pitch = int(P.w);
        mp.t = int(s) + (pc.hrs ? 1 : 0);
        mp.base = pc.base;
        mp.band = pc.band;
        mode_kernel<<<grid2d(w, h, b2), b2, 0, stream>>>(mp);
        VMAF_CUDA_CHECK_LAUNCH();

        CvScale& c = cp.sc[s];
        c.key = mp.key;
        c.c = P.cv + P.cv_off[s];
        c.w = w;
        c.h = h;
        c.strips = (w + pc.tw - 1) / pc.tw;
        int nseg = std::max(1, std::min(h, (pc.cv_blocks + c.strips - 1) / c.strips));
        int seg = (h + nseg - 1) / nseg;
        // At most 128 rows a block (the five scales' blocks balance across the SMs), at
        // least 2 * pad (a block first builds its window: 2 * pad + 1 rows).
        seg = std::min(seg, 128);
        seg = std::max(seg, std::min(h, std::max(16, 2 * P.pad)));
        nseg = (h + seg - 1) / seg;
        c.seg = seg;
        c.first = blocks;
        blocks += c.strips * nseg;
    }
    // One launch for the five scales (largest first in the grid): the small scales alone
    // would leave most of the GPU idle.
    cvalue_kernel<<<blocks, cvalue_threads(pc.tw), cvalue_smem(pc.band, pc.tw), stream>>>(cp);
    VMAF_CUDA_CHECK_LAUNCH();
}

namespace {
TopkParams topk_params(const TopkLaunch& t) {
    TopkParams tp{};
    tp.nseg = t.nseg;
    tp.st = static_cast<TopkState*>(t.scratch);
    tp.hist = reinterpret_cast<unsigned*>(static_cast<unsigned char*>(t.scratch) +
                                          kMaxSeg * sizeof(TopkState));
    // Blocks per segment in proportion to its size (about 16 values a thread), at least
    // t.blocks / 4: the segments differ 256-fold in size (scale 0 to 4).
    int blocks = 0;
    for (int i = 0; i < t.nseg; ++i) {
        tp.seg[i] = TopkSeg{t.c[i], t.n[i], t.k[i]};
        tp.first[i] = blocks;
        const long long want = (static_cast<long long>(t.n[i]) + 256 * 16 - 1) / (256 * 16);
        blocks += static_cast<int>(std::clamp<long long>(want, std::max(1, t.blocks / 4), 8192));
    }
    tp.first[t.nseg] = blocks;
    return tp;
}
} // namespace

void launch_topk_init(const TopkLaunch& t, cudaStream_t stream) {
    topk_init_kernel<<<32, 256, 0, stream>>>(topk_params(t));
    VMAF_CUDA_CHECK_LAUNCH();
}

void launch_topk(const TopkLaunch& t, CambiAccum* acc, std::uint32_t slot, std::uint64_t sequence,
                 int npass, cudaStream_t stream) {
    TopkParams tp = topk_params(t);
    const dim3 hgrid(static_cast<unsigned>(tp.first[tp.nseg]));
    for (int level = 0; level < 3; ++level) {
        tp.level = level;
        topk_hist_kernel<<<hgrid, 256, 0, stream>>>(tp);
        VMAF_CUDA_CHECK_LAUNCH();
        topk_resolve_kernel<<<tp.nseg, kResolveThreads, 0, stream>>>(tp);
        VMAF_CUDA_CHECK_LAUNCH();
    }
    topk_sum_kernel<<<hgrid, 256, 0, stream>>>(tp);
    VMAF_CUDA_CHECK_LAUNCH();
    const FinalParams fp{acc, npass, slot, sequence};
    topk_finalize_kernel<<<1, 32, 0, stream>>>(tp, fp);
    VMAF_CUDA_CHECK_LAUNCH();
}

} // namespace vmaf_cuda::cuda::cambi_detail

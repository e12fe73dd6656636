// SPDX-License-Identifier: BSD-2-Clause-Patent
// CUDA integer stage of ADM (libvmaf v3.2.0 integer_adm), bit-exact with
// reference/adm.cpp; per-sample arithmetic shared through reference/adm_math.h.
//
// Launch structure (per enqueue, all on the caller's stream, 5 launches):
//   1. scale 0 kernel <uint8|uint16>  pictures  -> band_a in lo_a_
//   2. scale 1 kernel <int32>         lo_a_     -> lo_b_
//   3. scale 2 kernel <int32>         lo_b_     -> lo_a_
//   4. scale 3 kernel <int32>         lo_a_     -> (band_a not needed)
//   5. adm_finalize_kernel: one block per (scale, quantity[, rendition]); each shifts its
//      per-row sums as libvmaf does, adds rows, writes AdmAccum fields, re-zeroes rows.
// lo_a_ / lo_b_ hold one band_a plane per picture: slot 0 the reference, slot 1 + r the
// distorted rendition r.
//
// Scale kernels: one block = a 32 x TH tile of band samples, 256 threads (8 warps); TH in
// {16, 8, 4, 2} is the tallest giving >= 1 block per SM for that scale (host-chosen).
//   a. Vertical DWT pass of the tile's band rows plus a one-row halo, for the input
//      columns its band columns (plus a one-column halo) read: threads walk down columns,
//      so that consecutive band rows share two of their four input rows.
//   b. Per halo'd band sample: horizontal pass, decoupling, CSF and masking-filter values.
//   c. Per tile sample: 3x3 masking threshold, den/num/aim terms; one warp per band row,
//      the row's terms summed over the warp by a transposed butterfly (each step a lane
//      sends half of its values, so q values take about q shuffles instead of 5 q), then
//      one 64-bit atomicAdd per (row, quantity) into the row sums (integer sums: any order).
// The per-row shift is applied only in step 5, on complete row sums, as libvmaf does.
//
// Two kernels share these steps:
//   - adm_pair_kernel: one reference, one distorted picture; a. and b. run on both planes
//     at once.
//   - adm_ladder_kernel: one reference, n distorted renditions. Each block does the
//     reference's part of its tile once (vertical and horizontal pass, band_a, den terms,
//     the reciprocal of the decoupling), then loops over its renditions (blockIdx.z
//     splits them between gridDim.z blocks of the same tile when the tile grid alone is
//     too small to fill the GPU). The den sums depend on the reference only: one set of
//     den row sums, copied into every rendition's AdmAccum by the finalize step.
// Build with --fmad=false (the decoupling angle test is IEEE double, see adm_math.h).

#include "adm.cuh"

#include "adm_math.h"

#include <stdexcept>
#include <string>

namespace vmaf_cuda::cuda {

namespace {

namespace am = ::vmaf_cuda::ref::adm_math;

constexpr int kTileW = 32;                    // band columns per block (= warp size)
constexpr int kBlockRows = 8;                 // blockDim = (32, 8)
constexpr int kThreads = kTileW * kBlockRows; // 256
constexpr int kHaloW = kTileW + 2;            // band columns with halo
constexpr int kVertW = 2 * kHaloW + 2;        // DWT input columns feeding kHaloW band columns
constexpr int kColSegs = kThreads / kVertW;   // vertical pass: row segments per column (3)
constexpr int kDenQ = 3;                      // den h, v, d
constexpr int kCmQ = 6;                       // num h, v, d | aim h, v, d
constexpr int kTileHeights[4] = {16, 8, 4, 2}; // band rows per block, chosen per launch
constexpr int kMaxRenditions = static_cast<int>(AdmKernel::kMaxRenditions);

/// Launch-invariant values of one scale.
struct ScaleCommon {
    ref::AdmScaleParams p;
    int scale;
    int bpc;
    int do_cm;  // 0: only band_a (adm_skip_scale0 at scale 0)
    int do_aim; // 0: adm_skip_aim
    std::int32_t i_rf0[3];
    std::uint32_t i_rf[3];
    float cos1_sq;
    double egl;
};

/// Arguments of one scale launch for up to kMaxR distorted pictures.
template <int kMaxR>
struct ScaleArgs {
    ScaleCommon c;
    const void* ref_in;
    std::uint32_t ref_pitch; // bytes (< 2^31, checked by enqueue)
    const void* dis_in[kMaxR];
    std::uint32_t dis_pitch[kMaxR];
    std::int32_t* ref_lo_out; // band_a for the next scale (stride bw), or null
    std::int32_t* dis_lo_out; // rendition r at dis_lo_out + r * lo_stride
    std::size_t lo_stride;
    unsigned long long* den_rows; // kDenQ x bh
    unsigned long long* cm_rows;  // rendition r: kCmQ x bh at cm_rows + r * cm_stride
    std::size_t cm_stride;
    int n; // distorted pictures
};

struct FinalArgs {
    unsigned long long* den_rows;
    unsigned long long* cm_rows;
    std::size_t cm_stride;
    std::size_t den_offset[4];
    std::size_t cm_offset[4];
    int bh[4], top[4], bottom[4];
    int den_row_shift[4];
    unsigned long long den_row_add[4];
    int cm_row_shift[4];
    long long cm_row_add[4];
    ref::AdmAccum* out;
    int n;
};

/// Shared memory of adm_pair_kernel (both planes at once).
template <int kTileH>
struct PairSmem {
    static constexpr int kHaloH = kTileH + 2;
    std::int32_t vert[4][kHaloH][kVertW];      // ref lo, ref hi, dis lo, dis hi
    std::int32_t fsum[2][kHaloH][kHaloW];      // masking-filter sums: dlm, aim
    std::int32_t center[2][kTileH][kTileW];    // centre terms: dlm, aim
    std::int32_t x[2][3][kTileH][kTileW];      // masked values: dlm (r), aim (a)
    std::int32_t refb[3][kTileH][kTileW];      // reference h, v, d
};

/// Shared memory of adm_ladder_kernel (one plane at a time; the reference's bands kept).
template <int kTileH, bool kScale0>
struct LadderSmem {
    static constexpr int kHaloH = kTileH + 2;
    std::int32_t vert[2][kHaloH][kVertW];      // lo, hi of the plane being transformed
    std::int32_t ref[3][kHaloH][kHaloW];       // reference h, v, d
    std::int32_t rdl[3][kHaloH][kHaloW];       // reference reciprocal (ref_recip)
    std::uint8_t rsh[kScale0 ? 1 : 3][kHaloH][kHaloW]; // its extra shift (scales 1..3)
    std::int32_t fsum[2][kHaloH][kHaloW];
    std::int32_t center[2][kTileH][kTileW];
    std::int32_t x[2][3][kTileH][kTileW];
};
static_assert(sizeof(PairSmem<16>) <= 48 * 1024 && sizeof(LadderSmem<16, false>) <= 48 * 1024,
              "static shared memory above 48 KiB");

/// Sample of a plane at byte address `col` (column already applied) of row `r` >= 0.
template <typename T>
__device__ __forceinline__ std::int32_t load_at(const char* col, std::uint32_t pitch, int r) {
    return static_cast<std::int32_t>(*reinterpret_cast<const T*>(
        col + static_cast<std::uint64_t>(static_cast<std::uint32_t>(r)) * pitch));
}

/// am::dwt_mirror for i in [0, n + 1]: the end of a DWT dimension (repeats the edge).
__device__ __forceinline__ int dwt_mirror_end(int i, int n) { return i < n ? i : 2 * n - i - 1; }

// ---------------------------------------------------------------- a. vertical pass

/// Vertical DWT taps of rows 2k-1..2k+2 (x0..x3): low and high pass.
template <bool kScale0>
__device__ __forceinline__ void vert_taps(std::int32_t x0, std::int32_t x1, std::int32_t x2,
                                          std::int32_t x3, const ScaleCommon& c,
                                          std::int32_t& lo, std::int32_t& hi) {
    if constexpr (kScale0) {
        lo = am::dwt0_vert_lo(x0, x1, x2, x3, c.bpc);
        hi = am::dwt0_vert_hi(x0, x1, x2, x3, c.bpc);
    } else {
        lo = am::dwt123_vert(am::dwt_lo(x0, x1, x2, x3), c.scale);
        hi = am::dwt123_vert(am::dwt_hi(x0, x1, x2, x3), c.scale);
    }
}

/// Vertical pass of kPlanes planes for the halo rows of a tile: out[2 pl] (low) and
/// out[2 pl + 1] (high), [halo row][input column]. Thread (segment, column) walks down
/// its column over its segment of rows (valid band rows only), loading two new input rows
/// per band row. Columns outside the DWT's virtual range [-1, 2 bw] are left unset (never
/// read), as are band rows outside [0, bh).
template <typename T, bool kScale0, int kTileH, int kPlanes>
__device__ __forceinline__ void vertical_pass(const void* const (&in)[kPlanes],
                                              const std::uint32_t (&pitch)[kPlanes],
                                              std::int32_t (*out)[kTileH + 2][kVertW],
                                              const ScaleCommon& c, int tid, int row_base,
                                              int vcol_base) {
    constexpr int kHaloH = kTileH + 2;
    constexpr int kSegRows = (kHaloH + kColSegs - 1) / kColSegs;
    if (tid >= kColSegs * kVertW) return;
    const ref::AdmScaleParams& p = c.p;
    const int seg = tid / kVertW;
    const int v = tid - seg * kVertW;
    const int vc = vcol_base + v;
    if (vc < -1 || vc > 2 * p.bw) return;
    const int ka = max(seg * kSegRows, -row_base);
    const int kb = min(min(seg * kSegRows + kSegRows, kHaloH), p.bh - row_base);
    if (ka >= kb) return;
    const std::size_t col_bytes = static_cast<std::size_t>(am::dwt_mirror(vc, p.in_w)) * sizeof(T);
    const char* col[kPlanes];
    std::int32_t w0[kPlanes], w1[kPlanes]; // input rows 2 gb - 1, 2 gb
    const int gb0 = row_base + ka;
    const int r0 = am::dwt_mirror(2 * gb0 - 1, p.in_h), r1 = am::dwt_mirror(2 * gb0, p.in_h);
#pragma unroll
    for (int pl = 0; pl < kPlanes; ++pl) {
        col[pl] = static_cast<const char*>(in[pl]) + col_bytes;
        w0[pl] = load_at<T>(col[pl], pitch[pl], r0);
        w1[pl] = load_at<T>(col[pl], pitch[pl], r1);
    }
    // Loads are unconditional (rows past the segment's last valid band row are clamped
    // into the plane and their values unused), so that the unrolled steps' loads can all
    // be in flight at once.
#pragma unroll
    for (int i = 0; i < kSegRows; ++i) {
        const int k = ka + i;
        const int gb = row_base + k;
        const int r2 = max(dwt_mirror_end(2 * gb + 1, p.in_h), 0);
        const int r3 = max(dwt_mirror_end(2 * gb + 2, p.in_h), 0);
#pragma unroll
        for (int pl = 0; pl < kPlanes; ++pl) {
            const std::int32_t x2 = load_at<T>(col[pl], pitch[pl], r2);
            const std::int32_t x3 = load_at<T>(col[pl], pitch[pl], r3);
            if (k < kb)
                vert_taps<kScale0>(w0[pl], w1[pl], x2, x3, c, out[2 * pl][k][v], out[2 * pl + 1][k][v]);
            w0[pl] = x2;
            w1[pl] = x3;
        }
    }
}

// ---------------------------------------------------------------- b. per band sample

/// Horizontal pass at band column m of one plane's vertical lo/hi rows: bands a, v, h, d.
template <bool kScale0>
__device__ __forceinline__ void horz_bands(const std::int32_t* lo, const std::int32_t* hi,
                                           int scale, std::int32_t (&out)[4]) {
    if constexpr (kScale0) {
        out[0] = am::dwt0_horz_lo(lo[0], lo[1], lo[2], lo[3]);
        out[1] = am::dwt0_horz_hi(lo[0], lo[1], lo[2], lo[3]);
        out[2] = am::dwt0_horz_lo(hi[0], hi[1], hi[2], hi[3]);
        out[3] = am::dwt0_horz_hi(hi[0], hi[1], hi[2], hi[3]);
    } else {
        out[0] = am::dwt123_horz(am::dwt_lo(lo[0], lo[1], lo[2], lo[3]), scale);
        out[1] = am::dwt123_horz(am::dwt_hi(lo[0], lo[1], lo[2], lo[3]), scale);
        out[2] = am::dwt123_horz(am::dwt_lo(hi[0], hi[1], hi[2], hi[3]), scale);
        out[3] = am::dwt123_horz(am::dwt_hi(hi[0], hi[1], hi[2], hi[3]), scale);
    }
}

/// Reference-only part of the decoupling of band sample o (adm_math decouple0 /
/// decouple123): `dl` = libvmaf's reciprocal div_lookup of o (scale 0), or of o's 15
/// leading bits (get_best15_from32) with o's sign folded in (scales 1..3; |dl| <= 2^30, so
/// (dl * sign) * t == (dl * t) * sign in int64 exactly); `sh` = the extra shift (0..17).
/// Unused (0) when o == 0.
template <bool kScale0>
__device__ __forceinline__ void ref_recip(std::int32_t o, std::int32_t& dl, int& sh) {
    dl = 0;
    sh = 0;
    if (o == 0) return;
    if constexpr (kScale0) {
        dl = am::div_lookup(o);
    } else {
        const std::uint32_t ao = static_cast<std::uint32_t>(am::abs_i32(o));
        std::uint32_t m = ao;
        if (ao >= 32768u) {
            sh = 17 - __clz(static_cast<int>(ao));
            m = static_cast<std::uint16_t>((ao + (1u << (sh - 1))) >> sh);
        }
        const std::int32_t d = am::div_lookup(static_cast<std::int32_t>(m));
        dl = o < 0 ? -d : d;
    }
}

/// am::decouple0 / am::decouple123 with the reference-only part precomputed (ref_recip).
template <bool kScale0>
__device__ __forceinline__ void decouple_pre(std::int32_t o, std::int32_t t, std::int32_t dl,
                                             int sh, bool flag, double egl, std::int32_t& r,
                                             std::int32_t& a) {
    if constexpr (kScale0) {
        std::int32_t k = 32768;
        if (o != 0) {
            const std::int64_t q = (std::int64_t{dl} * t + 16384) >> 15;
            k = static_cast<std::int32_t>(q < 0 ? 0 : (q > 32768 ? 32768 : q));
        }
        std::int32_t rst = am::to_i16((k * o + 16384) >> 15);
        rst = am::to_i16(am::apply_gain_limit(rst, k, o, t, flag, egl));
        r = rst;
        a = am::to_i16(std::int64_t{t} - rst);
    } else {
        std::int64_t k = 32768;
        if (o != 0) {
            const std::int64_t round =
                static_cast<std::int32_t>(static_cast<std::uint32_t>(1u << (14 + sh)));
            const std::int64_t q = (std::int64_t{dl} * t + round) >> (15 + sh);
            k = q < 0 ? 0 : (q > 32768 ? 32768 : q);
        }
        std::int32_t rst = static_cast<std::int32_t>((k * o + 16384) >> 15);
        rst = am::apply_gain_limit(rst, k, o, t, flag, egl);
        r = rst;
        a = am::to_i32(std::int64_t{t} - rst);
    }
}

/// Decoupling, CSF and masking-filter values of the band sample at halo position (k, m):
/// o3/t3 reference/distorted bands (h, v, d), dl/sh from ref_recip. Writes fsum (every
/// halo'd sample) and, for tile samples (`interior`), the centre terms and masked values.
template <bool kScale0, int kTileH>
__device__ __forceinline__ void decouple_mask(const ScaleCommon& c, const std::int32_t (&o3)[3],
                                              const std::int32_t (&t3)[3],
                                              const std::int32_t (&dl)[3], const int (&sh)[3],
                                              int k, int m, bool interior,
                                              std::int32_t (*s_fsum)[kTileH + 2][kHaloW],
                                              std::int32_t (*s_center)[kTileH][kTileW],
                                              std::int32_t (*s_x)[3][kTileH][kTileW]) {
    const bool flag = am::angle_flag(o3[0], o3[1], t3[0], t3[1], c.cos1_sq);
    std::int32_t rst[3], add[3];
#pragma unroll
    for (int b = 0; b < 3; ++b)
        decouple_pre<kScale0>(o3[b], t3[b], dl[b], sh[b], flag, c.egl, rst[b], add[b]);
    // pass 0 (DLM): mask = csf(add), x from rst; pass 1 (AIM): mask = csf(rst), x from add
    std::int32_t fsum[2] = {0, 0}, center[2] = {0, 0};
#pragma unroll
    for (int pass = 0; pass < 2; ++pass) {
        if (pass == 1 && !c.do_aim) break;
        const std::int32_t* msrc = pass == 0 ? add : rst;
#pragma unroll
        for (int b = 0; b < 3; ++b) {
            std::int32_t cs, f, ct;
            if constexpr (kScale0) {
                const int shift = b == 2 ? 17 : 15;
                const std::int32_t ad = b == 2 ? 65535 : 16384;
                cs = am::csf0(msrc[b], c.i_rf0[b], shift, ad);
                f = am::csf0_flt(cs);
                ct = am::cm0_center(cs);
            } else {
                cs = am::csf123(msrc[b], c.i_rf[b]);
                f = am::csf123_flt(cs);
                ct = am::cm123_center(cs);
            }
            fsum[pass] = am::add_i32(fsum[pass], f);
            center[pass] = am::add_i32(center[pass], ct);
        }
    }
    s_fsum[0][k][m] = fsum[0];
    s_fsum[1][k][m] = fsum[1];
    if (!interior) return;
    const int ti = k - 1, tj = m - 1;
    s_center[0][ti][tj] = center[0];
    s_center[1][ti][tj] = center[1];
#pragma unroll
    for (int b = 0; b < 3; ++b) {
        if constexpr (kScale0) {
            s_x[0][b][ti][tj] = am::cm0_x(rst[b], c.i_rf0[b]);
            s_x[1][b][ti][tj] = am::cm0_x(add[b], c.i_rf0[b]);
        } else {
            s_x[0][b][ti][tj] = am::cm123_x(rst[b], c.i_rf[b]);
            s_x[1][b][ti][tj] = am::cm123_x(add[b], c.i_rf[b]);
        }
    }
}

// ---------------------------------------------------------------- c. per tile row

/// Lane slot of the transposed butterfly (warp_sum_transposed): after the reduction of
/// kCnt values, lane `lane` holds the warp total of value `base` when `valid` >= 1; of
/// the lanes holding the same total, the `leader` (lowest) writes it.
template <int kCnt, int kOff>
__device__ __forceinline__ void warp_sum_slot(unsigned lane, int& base, int& valid, bool& leader) {
    if constexpr (kOff > 0) {
        if constexpr (kCnt > 1) {
            constexpr int kHalf = (kCnt + 1) / 2;
            if (lane & kOff) {
                base += kHalf;
                valid = valid > kHalf ? valid - kHalf : 0;
            } else {
                valid = valid < kHalf ? valid : kHalf;
            }
            warp_sum_slot<kHalf, kOff / 2>(lane, base, valid, leader);
        } else {
            if (lane & kOff) leader = false;
            warp_sum_slot<1, kOff / 2>(lane, base, valid, leader);
        }
    }
}

/// Sums v[0..kCnt) over the warp: at each step of lane distance kOff, a lane keeps the
/// first (lower lanes) or second (upper lanes) half of its values and receives the
/// partner's copy of that half; a single value left is summed by a plain butterfly.
/// On return v[0] holds the total given by warp_sum_slot. Wrapping 64-bit sums.
template <int kCnt, int kOff, int N>
__device__ __forceinline__ void warp_sum_transposed(unsigned long long (&v)[N], unsigned lane) {
    if constexpr (kOff > 0) {
        if constexpr (kCnt > 1) {
            constexpr int kHalf = (kCnt + 1) / 2;
            const bool upper = (lane & kOff) != 0;
#pragma unroll
            for (int i = 0; i < kHalf; ++i) {
                const unsigned long long first = v[i];
                const unsigned long long second = i + kHalf < kCnt ? v[i + kHalf] : 0ull;
                const unsigned long long send = upper ? first : second;
                v[i] = (upper ? second : first) + __shfl_xor_sync(0xffffffffu, send, kOff);
            }
            warp_sum_transposed<kHalf, kOff / 2>(v, lane);
        } else {
            v[0] += __shfl_xor_sync(0xffffffffu, v[0], kOff);
            warp_sum_transposed<1, kOff / 2>(v, lane);
        }
    }
}

/// Den term of one reference band sample.
template <bool kScale0>
__device__ __forceinline__ unsigned long long den_term(std::int32_t x, const ref::AdmScaleParams& p) {
    if constexpr (kScale0)
        return am::den0_cube(x);
    else
        return am::den123_cube(x, p.den_sq_shift, p.den_sq_add, p.den_cub_shift, p.den_cub_add);
}

/// Row-sum destinations of reduced value `idx` (kDen values of den, then num, then aim).
template <int kDen>
__device__ __forceinline__ unsigned long long* row_sum_at(int idx, unsigned long long* den_rows,
                                                          unsigned long long* cm_rows, int bh, int gb) {
    return idx < kDen ? den_rows + static_cast<std::size_t>(idx) * bh + gb
                      : cm_rows + static_cast<std::size_t>(idx - kDen) * bh + gb;
}

/// Sums q[0..kCnt) over the warp (one band row of the tile) and adds each non-zero
/// total to its row sum.
template <int kCnt, int kDen>
__device__ __forceinline__ void add_row_sums(unsigned long long (&q)[kCnt], unsigned lane,
                                             unsigned long long* den_rows,
                                             unsigned long long* cm_rows, int bh, int gb) {
    int base = 0, valid = kCnt;
    bool leader = true;
    warp_sum_slot<kCnt, 16>(lane, base, valid, leader);
    warp_sum_transposed<kCnt, 16>(q, lane);
    if (leader && valid > 0 && q[0] != 0)
        atomicAdd(row_sum_at<kDen>(base, den_rows, cm_rows, bh, gb), q[0]);
}

/// Masking terms of the tile sample (ti, lane) for the DLM pass (q[kDen..kDen+3)) and, if
/// kAim, the AIM pass (q[kDen+3..kDen+6)); with kDen == 3, q[0..3) = den terms of refb.
template <bool kScale0, int kTileH, int kDen, bool kAim, int kCnt>
__device__ __forceinline__ void masking_row(const ScaleCommon& c,
                                            const std::int32_t (*s_fsum)[kTileH + 2][kHaloW],
                                            const std::int32_t (*s_center)[kTileH][kTileW],
                                            const std::int32_t (*s_x)[3][kTileH][kTileW],
                                            const std::int32_t (*s_refb)[kTileH][kTileW], int ti,
                                            unsigned lane, int gb, int gc, int row_base,
                                            int col_base, unsigned long long* den_rows,
                                            unsigned long long* cm_rows) {
    static_assert(kCnt == kDen + (kAim ? 6 : 3));
    const ref::AdmScaleParams& p = c.p;
    unsigned long long q[kCnt];
#pragma unroll
    for (int i = 0; i < kCnt; ++i) q[i] = 0;
    if (gc >= p.left && gc < p.right) {
        if constexpr (kDen == kDenQ) {
#pragma unroll
            for (int b = 0; b < 3; ++b) q[b] = den_term<kScale0>(s_refb[b][ti][lane], p);
        }
        int nk[3], nm[3];
#pragma unroll
        for (int d = -1; d <= 1; ++d) {
            nk[d + 1] = am::cm_mirror(gb + d, p.bh) - row_base;
            nm[d + 1] = am::cm_mirror(gc + d, p.bw) - col_base;
        }
#pragma unroll
        for (int pass = 0; pass < (kAim ? 2 : 1); ++pass) {
            std::int32_t thr = s_center[pass][ti][lane];
#pragma unroll
            for (int di = 0; di < 3; ++di)
#pragma unroll
                for (int dj = 0; dj < 3; ++dj)
                    if (di != 1 || dj != 1) thr = am::add_i32(thr, s_fsum[pass][nk[di]][nm[dj]]);
#pragma unroll
            for (int b = 0; b < 3; ++b) {
                const std::int64_t t = am::cm_cube(s_x[pass][b][ti][lane], thr, p.cm_sub_shift[b],
                                                   p.cm_sq_shift[b], p.cm_sq_add[b],
                                                   p.cm_cub_shift[b], p.cm_cub_add[b]);
                q[kDen + 3 * pass + b] = static_cast<unsigned long long>(t);
            }
        }
    }
    add_row_sums<kCnt, kDen>(q, lane, den_rows, cm_rows, p.bh, gb);
}

/// Step c for the tile: one warp per band row of the evaluated region.
template <bool kScale0, int kTileH, int kDen>
__device__ __forceinline__ void masking_pass(const ScaleCommon& c,
                                             const std::int32_t (*s_fsum)[kTileH + 2][kHaloW],
                                             const std::int32_t (*s_center)[kTileH][kTileW],
                                             const std::int32_t (*s_x)[3][kTileH][kTileW],
                                             const std::int32_t (*s_refb)[kTileH][kTileW],
                                             int by0, int bx0, unsigned long long* den_rows,
                                             unsigned long long* cm_rows) {
    const ref::AdmScaleParams& p = c.p;
    const unsigned lane = threadIdx.x;
    const int gc = bx0 + static_cast<int>(lane);
    for (int ti = threadIdx.y; ti < kTileH; ti += kBlockRows) {
        const int gb = by0 + ti;
        if (gb < p.top || gb >= p.bottom) continue; // warp-uniform
        if (c.do_aim)
            masking_row<kScale0, kTileH, kDen, true, kDen + 6>(c, s_fsum, s_center, s_x, s_refb, ti,
                                                               lane, gb, gc, by0 - 1, bx0 - 1,
                                                               den_rows, cm_rows);
        else
            masking_row<kScale0, kTileH, kDen, false, kDen + 3>(c, s_fsum, s_center, s_x, s_refb, ti,
                                                                lane, gb, gc, by0 - 1, bx0 - 1,
                                                                den_rows, cm_rows);
    }
}

// ---------------------------------------------------------------- kernels

template <typename T, bool kScale0, int kTileH>
__global__ void __launch_bounds__(kThreads) adm_pair_kernel(const ScaleArgs<1> a) {
    constexpr int kHaloH = kTileH + 2;
    __shared__ PairSmem<kTileH> sm;

    const ScaleCommon& c = a.c;
    const ref::AdmScaleParams& p = c.p;
    const int tid = threadIdx.y * kTileW + threadIdx.x;
    const int bx0 = blockIdx.x * kTileW;
    const int by0 = blockIdx.y * kTileH;
    const int row_base = by0 - 1; // band row of halo row 0
    const int col_base = bx0 - 1; // band column of halo column 0

    // a. Vertical pass of both planes.
    {
        const void* const in[2] = {a.ref_in, a.dis_in[0]};
        const std::uint32_t pitch[2] = {a.ref_pitch, a.dis_pitch[0]};
        vertical_pass<T, kScale0, kTileH, 2>(in, pitch, sm.vert, c, tid, row_base, 2 * bx0 - 3);
    }
    __syncthreads();

    // b. Horizontal pass, decoupling and CSF for every halo'd band sample.
    for (int idx = tid; idx < kHaloH * kHaloW; idx += kThreads) {
        const int k = idx / kHaloW, m = idx - k * kHaloW;
        const int gb = row_base + k, gc = col_base + m;
        if (gb < 0 || gb >= p.bh || gc < 0 || gc >= p.bw) continue;
        std::int32_t ob[4], tb[4]; // a, v, h, d
        horz_bands<kScale0>(&sm.vert[0][k][2 * m], &sm.vert[1][k][2 * m], c.scale, ob);
        horz_bands<kScale0>(&sm.vert[2][k][2 * m], &sm.vert[3][k][2 * m], c.scale, tb);
        const bool interior = k >= 1 && k <= kTileH && m >= 1 && m <= kTileW;
        if (interior && a.ref_lo_out) {
            const std::size_t o = static_cast<std::size_t>(gb) * p.bw + gc;
            a.ref_lo_out[o] = ob[0];
            a.dis_lo_out[o] = tb[0];
        }
        if (!c.do_cm) continue;
        const std::int32_t o3[3] = {ob[2], ob[1], ob[3]}; // band order h, v, d
        const std::int32_t t3[3] = {tb[2], tb[1], tb[3]};
        std::int32_t dl[3];
        int sh[3];
#pragma unroll
        for (int b = 0; b < 3; ++b) ref_recip<kScale0>(o3[b], dl[b], sh[b]);
        decouple_mask<kScale0, kTileH>(c, o3, t3, dl, sh, k, m, interior, sm.fsum, sm.center, sm.x);
        if (interior) {
#pragma unroll
            for (int b = 0; b < 3; ++b) sm.refb[b][k - 1][m - 1] = o3[b];
        }
    }
    if (!c.do_cm) return; // uniform across the block
    __syncthreads();

    // c. Masking threshold, den/num/aim terms, per-row sums.
    masking_pass<kScale0, kTileH, kDenQ>(c, sm.fsum, sm.center, sm.x, sm.refb, by0, bx0, a.den_rows,
                                         a.cm_rows);
}

template <typename T, bool kScale0, int kTileH>
__global__ void __launch_bounds__(kThreads) adm_ladder_kernel(const ScaleArgs<kMaxRenditions> a) {
    constexpr int kHaloH = kTileH + 2;
    __shared__ LadderSmem<kTileH, kScale0> sm;

    const ScaleCommon& c = a.c;
    const ref::AdmScaleParams& p = c.p;
    const int tid = threadIdx.y * kTileW + threadIdx.x;
    const int bx0 = blockIdx.x * kTileW;
    const int by0 = blockIdx.y * kTileH;
    const int row_base = by0 - 1;
    const int col_base = bx0 - 1;
    const bool first_group = blockIdx.z == 0; // writes the reference's band_a and den sums

    // a. Vertical pass of the reference.
    {
        const void* const in[1] = {a.ref_in};
        const std::uint32_t pitch[1] = {a.ref_pitch};
        vertical_pass<T, kScale0, kTileH, 1>(in, pitch, sm.vert, c, tid, row_base, 2 * bx0 - 3);
    }
    __syncthreads();

    // b. Reference bands: band_a, and for the masking stage its h, v, d and reciprocals.
    for (int idx = tid; idx < kHaloH * kHaloW; idx += kThreads) {
        const int k = idx / kHaloW, m = idx - k * kHaloW;
        const int gb = row_base + k, gc = col_base + m;
        if (gb < 0 || gb >= p.bh || gc < 0 || gc >= p.bw) continue;
        std::int32_t ob[4];
        horz_bands<kScale0>(&sm.vert[0][k][2 * m], &sm.vert[1][k][2 * m], c.scale, ob);
        const bool interior = k >= 1 && k <= kTileH && m >= 1 && m <= kTileW;
        if (interior && a.ref_lo_out && first_group)
            a.ref_lo_out[static_cast<std::size_t>(gb) * p.bw + gc] = ob[0];
        if (!c.do_cm) continue;
        const std::int32_t o3[3] = {ob[2], ob[1], ob[3]};
#pragma unroll
        for (int b = 0; b < 3; ++b) {
            std::int32_t dl;
            int sh;
            ref_recip<kScale0>(o3[b], dl, sh);
            sm.ref[b][k][m] = o3[b];
            sm.rdl[b][k][m] = dl;
            if constexpr (!kScale0) sm.rsh[b][k][m] = static_cast<std::uint8_t>(sh);
        }
    }
    __syncthreads();

    // c (reference). Den terms and row sums, once per tile (sm.ref is not written again).
    if (c.do_cm && first_group) {
        const unsigned lane = threadIdx.x;
        const int gc = bx0 + static_cast<int>(lane);
        for (int ti = threadIdx.y; ti < kTileH; ti += kBlockRows) {
            const int gb = by0 + ti;
            if (gb < p.top || gb >= p.bottom) continue; // warp-uniform
            unsigned long long q[kDenQ] = {0, 0, 0};
            if (gc >= p.left && gc < p.right) {
#pragma unroll
                for (int b = 0; b < 3; ++b) q[b] = den_term<kScale0>(sm.ref[b][ti + 1][lane + 1], p);
            }
            add_row_sums<kDenQ, kDenQ>(q, lane, a.den_rows, nullptr, p.bh, gb);
        }
    }

    // Renditions of this block's group. Per iteration: the vertical pass writes sm.vert
    // only (its previous readers finished before the barrier that ended b. of the last
    // rendition); b. writes fsum/center/x after the barrier that follows the vertical pass,
    // so the last rendition's step c has finished reading them.
    for (int r = static_cast<int>(blockIdx.z); r < a.n; r += static_cast<int>(gridDim.z)) {
        {
            const void* const in[1] = {a.dis_in[r]};
            const std::uint32_t pitch[1] = {a.dis_pitch[r]};
            vertical_pass<T, kScale0, kTileH, 1>(in, pitch, sm.vert, c, tid, row_base, 2 * bx0 - 3);
        }
        __syncthreads();

        std::int32_t* dis_lo =
            a.dis_lo_out ? a.dis_lo_out + static_cast<std::size_t>(r) * a.lo_stride : nullptr;
        for (int idx = tid; idx < kHaloH * kHaloW; idx += kThreads) {
            const int k = idx / kHaloW, m = idx - k * kHaloW;
            const int gb = row_base + k, gc = col_base + m;
            if (gb < 0 || gb >= p.bh || gc < 0 || gc >= p.bw) continue;
            std::int32_t tb[4];
            horz_bands<kScale0>(&sm.vert[0][k][2 * m], &sm.vert[1][k][2 * m], c.scale, tb);
            const bool interior = k >= 1 && k <= kTileH && m >= 1 && m <= kTileW;
            if (interior && dis_lo) dis_lo[static_cast<std::size_t>(gb) * p.bw + gc] = tb[0];
            if (!c.do_cm) continue;
            const std::int32_t o3[3] = {sm.ref[0][k][m], sm.ref[1][k][m], sm.ref[2][k][m]};
            const std::int32_t t3[3] = {tb[2], tb[1], tb[3]};
            const std::int32_t dl[3] = {sm.rdl[0][k][m], sm.rdl[1][k][m], sm.rdl[2][k][m]};
            int sh[3] = {0, 0, 0};
            if constexpr (!kScale0) {
#pragma unroll
                for (int b = 0; b < 3; ++b) sh[b] = sm.rsh[b][k][m];
            }
            decouple_mask<kScale0, kTileH>(c, o3, t3, dl, sh, k, m, interior, sm.fsum, sm.center, sm.x);
        }
        __syncthreads();

        if (c.do_cm)
            masking_pass<kScale0, kTileH, 0>(c, sm.fsum, sm.center, sm.x, nullptr, by0, bx0, nullptr,
                                             a.cm_rows + static_cast<std::size_t>(r) * a.cm_stride);
    }
}

/// One block per (scale, quantity): den h, v, d (written into every rendition's
/// AdmAccum), then per rendition num h, v, d and aim h, v, d.
__global__ void __launch_bounds__(256) adm_finalize_kernel(const FinalArgs a) {
    __shared__ unsigned long long s_part[256 / 32];
    const int per_scale = kDenQ + kCmQ * a.n;
    const int scale = static_cast<int>(blockIdx.x) / per_scale;
    const int j = static_cast<int>(blockIdx.x) - scale * per_scale;
    const bool den = j < kDenQ;
    const int r = den ? 0 : (j - kDenQ) / kCmQ;
    const int qi = den ? j : (j - kDenQ) - r * kCmQ;
    const int bh = a.bh[scale];
    unsigned long long* rows =
        den ? a.den_rows + a.den_offset[scale] + static_cast<std::size_t>(qi) * bh
            : a.cm_rows + static_cast<std::size_t>(r) * a.cm_stride + a.cm_offset[scale] +
                  static_cast<std::size_t>(qi) * bh;
    constexpr int kBatch = 4; // row sums in flight per thread
    const int top = a.top[scale], bottom = a.bottom[scale];
    unsigned long long sum = 0;
    for (int i0 = threadIdx.x; i0 < bh; i0 += kBatch * blockDim.x) {
        unsigned long long v[kBatch];
#pragma unroll
        for (int j = 0; j < kBatch; ++j) {
            const int i = i0 + j * static_cast<int>(blockDim.x);
            v[j] = i < bh ? rows[i] : 0;
        }
#pragma unroll
        for (int j = 0; j < kBatch; ++j) {
            const int i = i0 + j * static_cast<int>(blockDim.x);
            if (i >= bh) break;
            rows[i] = 0;
            if (i < top || i >= bottom) continue;
            if (den)
                sum += am::row_shift_unsigned(v[j], a.den_row_add[scale], a.den_row_shift[scale]);
            else
                sum += static_cast<unsigned long long>(am::row_shift_signed(
                    static_cast<long long>(v[j]), a.cm_row_add[scale], a.cm_row_shift[scale]));
        }
    }
    for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
    if ((threadIdx.x & 31) == 0) s_part[threadIdx.x >> 5] = sum;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long total = 0;
        for (unsigned w = 0; w < blockDim.x / 32; ++w) total += s_part[w];
        if (den) {
            for (int i = 0; i < a.n; ++i) a.out[i].den[scale][qi] = total;
        } else if (qi < 3) {
            a.out[r].num[scale][qi] = static_cast<std::int64_t>(total);
        } else {
            a.out[r].aim[scale][qi - 3] = static_cast<std::int64_t>(total);
        }
    }
}

dim3 tile_grid(const ref::AdmScaleParams& p, int tile_h) {
    return dim3(static_cast<unsigned>((p.bw + kTileW - 1) / kTileW),
                static_cast<unsigned>((p.bh + tile_h - 1) / tile_h));
}

/// Tallest tile that still gives at least one block per SM (small scales and small
/// pictures get short tiles: more blocks in flight, shorter per-block critical path;
/// tall tiles compute less halo).
int pick_tile_h(const ref::AdmScaleParams& p, int sms) {
    for (int th : kTileHeights) {
        const dim3 g = tile_grid(p, th);
        if (static_cast<long long>(g.x) * g.y >= sms) return th;
    }
    return kTileHeights[3];
}

template <typename T, bool kScale0>
void launch_pair(const ScaleArgs<1>& a, int tile_h, cudaStream_t stream) {
    const dim3 block(kTileW, kBlockRows);
    const dim3 grid = tile_grid(a.c.p, tile_h);
    switch (tile_h) {
    case 16: adm_pair_kernel<T, kScale0, 16><<<grid, block, 0, stream>>>(a); break;
    case 8: adm_pair_kernel<T, kScale0, 8><<<grid, block, 0, stream>>>(a); break;
    case 4: adm_pair_kernel<T, kScale0, 4><<<grid, block, 0, stream>>>(a); break;
    default: adm_pair_kernel<T, kScale0, 2><<<grid, block, 0, stream>>>(a); break;
    }
}

/// Ladder launch: the tile grid times `groups` blocks along z, each taking every
/// groups-th rendition (more blocks in flight where the tile grid is small, each
/// recomputing the reference's vertical and horizontal pass of its tile).
template <typename T, bool kScale0>
void launch_ladder(const ScaleArgs<kMaxRenditions>& a, int tile_h, int sms, cudaStream_t stream) {
    const dim3 block(kTileW, kBlockRows);
    dim3 grid = tile_grid(a.c.p, tile_h);
    const long long tiles = static_cast<long long>(grid.x) * grid.y;
    const long long fill = 4LL * sms; // resident blocks of 256 threads per GPU, about
    long long groups = tiles >= fill ? 1 : fill / tiles;
    if (groups > a.n) groups = a.n;
    if (groups < 1) groups = 1;
    grid.z = static_cast<unsigned>(groups);
    switch (tile_h) {
    case 16: adm_ladder_kernel<T, kScale0, 16><<<grid, block, 0, stream>>>(a); break;
    case 8: adm_ladder_kernel<T, kScale0, 8><<<grid, block, 0, stream>>>(a); break;
    case 4: adm_ladder_kernel<T, kScale0, 4><<<grid, block, 0, stream>>>(a); break;
    default: adm_ladder_kernel<T, kScale0, 2><<<grid, block, 0, stream>>>(a); break;
    }
}

void check_plane(const DeviceLuma& pl, unsigned w, unsigned h, unsigned bpc, const char* who) {
    if (pl.width != w || pl.height != h || pl.bpc != bpc)
        throw std::invalid_argument(std::string(who) + ": plane size or bpc mismatch");
    if (pl.pitch > 0x7fffffff) // the kernels form row offsets as uint32 x row
        throw std::invalid_argument(std::string(who) + ": pitch above 2^31 - 1 bytes");
}

} // namespace

AdmKernel::AdmKernel(unsigned w, unsigned h, unsigned bpc, const ref::AdmOptions& opt,
                     unsigned renditions)
    : w_(w), h_(h), bpc_(bpc), renditions_(renditions), opt_(opt),
      factors_(ref::adm_factors(opt)) {
    if (w < ref::kAdmMinSize || h < ref::kAdmMinSize)
        throw std::invalid_argument("AdmKernel: width and height must be >= 17");
    if (bpc < 8 || bpc > 16) throw std::invalid_argument("AdmKernel: bpc must be 8..16");
    if (renditions < 1 || renditions > kMaxRenditions)
        throw std::invalid_argument("AdmKernel: renditions must be 1..64");
    sms_ = sm_count();
    std::size_t den_rows = 0, cm_rows = 0;
    for (unsigned s = 0; s < 4; ++s) {
        params_[s] = ref::adm_scale_params(w, h, s);
        tile_h_[s] = pick_tile_h(params_[s], sms_);
        den_offset_[s] = den_rows;
        cm_offset_[s] = cm_rows;
        den_rows += static_cast<std::size_t>(kDenQ) * params_[s].bh;
        cm_rows += static_cast<std::size_t>(kCmQ) * params_[s].bh;
    }
    cm_stride_ = cm_rows;
    const std::size_t n0 = static_cast<std::size_t>(params_[0].bw) * params_[0].bh;
    const std::size_t n1 = static_cast<std::size_t>(params_[1].bw) * params_[1].bh;
    lo_a_ = DeviceBuffer((1 + renditions) * n0 * sizeof(std::int32_t));
    lo_b_ = DeviceBuffer((1 + renditions) * n1 * sizeof(std::int32_t));
    den_rows_ = DeviceBuffer(den_rows * sizeof(unsigned long long));
    cm_rows_ = DeviceBuffer(renditions * cm_rows * sizeof(unsigned long long));
    VMAF_CUDA_CHECK(cudaMemset(den_rows_.get(), 0, den_rows_.bytes()));
    VMAF_CUDA_CHECK(cudaMemset(cm_rows_.get(), 0, cm_rows_.bytes()));
    VMAF_CUDA_CHECK(cudaDeviceSynchronize());
}

void AdmKernel::enqueue(const DeviceLuma& ref, const DeviceLuma& dis, ref::AdmAccum* d_out,
                        cudaStream_t stream) {
    check_plane(ref, w_, h_, bpc_, "AdmKernel::enqueue");
    check_plane(dis, w_, h_, bpc_, "AdmKernel::enqueue");
    const DeviceLuma* one[1] = {&dis};
    launch_all(ref, one, 1, d_out, stream);
}

void AdmKernel::enqueue(const DeviceLuma& ref, const DeviceLuma* const* dis, unsigned n,
                        ref::AdmAccum* d_out, cudaStream_t stream) {
    if (n < 1 || n > renditions_)
        throw std::invalid_argument("AdmKernel::enqueue: n must be 1..renditions (" +
                                    std::to_string(renditions_) + ")");
    if (!dis) throw std::invalid_argument("AdmKernel::enqueue: null rendition list");
    check_plane(ref, w_, h_, bpc_, "AdmKernel::enqueue");
    for (unsigned r = 0; r < n; ++r) {
        if (!dis[r]) throw std::invalid_argument("AdmKernel::enqueue: null rendition plane");
        check_plane(*dis[r], w_, h_, bpc_, "AdmKernel::enqueue");
    }
    launch_all(ref, dis, n, d_out, stream);
}

void AdmKernel::launch_all(const DeviceLuma& ref, const DeviceLuma* const* dis, unsigned n,
                           ref::AdmAccum* d_out, cudaStream_t stream) {
    auto* den_rows = den_rows_.get<unsigned long long>();
    auto* cm_rows = cm_rows_.get<unsigned long long>();
    std::int32_t* lo_a = lo_a_.get<std::int32_t>();
    std::int32_t* lo_b = lo_b_.get<std::int32_t>();
    const std::size_t n0 = static_cast<std::size_t>(params_[0].bw) * params_[0].bh;
    const std::size_t n1 = static_cast<std::size_t>(params_[1].bw) * params_[1].bh;
    const bool pair = n == 1;
    for (int s = 0; s < 4; ++s) {
        const ref::AdmScaleParams& p = params_[s];
        ScaleCommon c{};
        c.p = p;
        c.scale = s;
        c.bpc = static_cast<int>(bpc_);
        c.do_cm = (s == 0 && opt_.skip_scale0) ? 0 : 1;
        c.do_aim = opt_.skip_aim ? 0 : 1;
        for (int b = 0; b < 3; ++b) {
            c.i_rf0[b] = factors_.i_rfactor0[b];
            c.i_rf[b] = factors_.i_rfactor[s][b];
        }
        c.cos1_sq = factors_.cos1_sq;
        c.egl = factors_.enhn_gain_limit;
        // band_a ping-pong: scale 0 -> lo_a, 1 -> lo_b, 2 -> lo_a, 3 -> none
        std::int32_t* in_buf = (s == 1 || s == 3) ? lo_a : lo_b;
        std::int32_t* out_buf = (s == 1) ? lo_b : lo_a;
        const std::size_t out_n = (s == 1) ? n1 : n0; // slot size of the buffer written
        const std::size_t in_n = (s == 2) ? n1 : n0;  // slot size of the buffer read
        auto fill = [&](auto& a) {
            a.c = c;
            if (s < 3) {
                a.ref_lo_out = out_buf;
                a.dis_lo_out = out_buf + out_n;
                a.lo_stride = out_n;
            }
            a.den_rows = den_rows + den_offset_[s];
            a.cm_rows = cm_rows + cm_offset_[s];
            a.cm_stride = cm_stride_;
            a.n = static_cast<int>(n);
            if (s == 0) {
                a.ref_in = ref.data;
                a.ref_pitch = static_cast<std::uint32_t>(ref.pitch);
                for (unsigned r = 0; r < n; ++r) {
                    a.dis_in[r] = dis[r]->data;
                    a.dis_pitch[r] = static_cast<std::uint32_t>(dis[r]->pitch);
                }
            } else {
                const auto pitch = static_cast<std::uint32_t>(p.in_w * sizeof(std::int32_t));
                a.ref_in = in_buf;
                a.ref_pitch = pitch;
                for (unsigned r = 0; r < n; ++r) {
                    a.dis_in[r] = in_buf + (1 + r) * in_n;
                    a.dis_pitch[r] = pitch;
                }
            }
        };
        if (pair) {
            ScaleArgs<1> a{};
            fill(a);
            if (s > 0)
                launch_pair<std::int32_t, false>(a, tile_h_[s], stream);
            else if (bpc_ == 8)
                launch_pair<std::uint8_t, true>(a, tile_h_[s], stream);
            else
                launch_pair<std::uint16_t, true>(a, tile_h_[s], stream);
        } else {
            ScaleArgs<kMaxRenditions> a{};
            fill(a);
            if (s > 0)
                launch_ladder<std::int32_t, false>(a, tile_h_[s], sms_, stream);
            else if (bpc_ == 8)
                launch_ladder<std::uint8_t, true>(a, tile_h_[s], sms_, stream);
            else
                launch_ladder<std::uint16_t, true>(a, tile_h_[s], sms_, stream);
        }
        VMAF_CUDA_CHECK_LAUNCH();
    }

    FinalArgs f{};
    f.den_rows = den_rows;
    f.cm_rows = cm_rows;
    f.cm_stride = cm_stride_;
    f.out = d_out;
    f.n = static_cast<int>(n);
    for (int s = 0; s < 4; ++s) {
        f.den_offset[s] = den_offset_[s];
        f.cm_offset[s] = cm_offset_[s];
        f.bh[s] = params_[s].bh;
        f.top[s] = params_[s].top;
        f.bottom[s] = params_[s].bottom;
        f.den_row_shift[s] = params_[s].den_row_shift;
        f.den_row_add[s] = params_[s].den_row_add;
        f.cm_row_shift[s] = params_[s].cm_row_shift;
        f.cm_row_add[s] = params_[s].cm_row_add;
    }
    const unsigned blocks = 4u * (kDenQ + kCmQ * n);
    adm_finalize_kernel<<<blocks, 256, 0, stream>>>(f);
    VMAF_CUDA_CHECK_LAUNCH();
}

} // namespace vmaf_cuda::cuda

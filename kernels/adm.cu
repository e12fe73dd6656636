// SPDX-License-Identifier: BSD-2-Clause-Patent
// CUDA integer stage of ADM (libvmaf v3.2.0 integer_adm), bit-exact with
// reference/adm.cpp; per-sample arithmetic shared through reference/adm_math.h.
//
// Launch structure (per frame pair, all on the caller's stream, 5 launches):
//   1. adm_scale_kernel<uint8|uint16, scale 0>   picture      -> band_a in lo_a_
//   2. adm_scale_kernel<int32>       scale 1     lo_a_        -> lo_b_
//   3. adm_scale_kernel<int32>       scale 2     lo_b_        -> lo_a_
//   4. adm_scale_kernel<int32>       scale 3     lo_a_        -> (band_a not needed)
//   5. adm_finalize_kernel: 36 blocks (scale x {den,num,aim} x band); each shifts its
//      per-row sums as libvmaf does, adds rows, writes one AdmAccum field, re-zeroes rows.
// adm_scale_kernel: one block = a 32 x TH tile of band samples, 256 threads; TH in
// {16, 8, 4, 2} is the tallest giving >= 1 block per SM for that scale (host-chosen).
// In shared memory it builds the vertical DWT pass of reference and distorted for the tile plus a
// one-sample halo, then per halo'd band sample the horizontal pass, decoupling, CSF and
// masking-filter values, then per tile sample the 3x3 masking threshold and the den/num/
// aim terms. One warp = one band row segment: warp-reduced, then one 64-bit atomicAdd
// per (row, quantity) into rows_ (integer sums: order-independent). The per-row shift
// is applied only in step 5, on complete row sums, as libvmaf does.
// Build with --fmad=false (the decoupling angle test is IEEE double, see adm_math.h).

#include "adm.cuh"

#include "adm_math.h"

#include <stdexcept>

namespace vmaf_cuda::cuda {

namespace {

namespace am = ::vmaf_cuda::ref::adm_math;

constexpr int kTileW = 32;             // band columns per block (= warp size)
constexpr int kBlockRows = 8;          // blockDim = (32, 8)
constexpr int kHaloW = kTileW + 2;     // band columns with halo
constexpr int kVertW = 2 * kHaloW + 2; // DWT input columns feeding kHaloW band columns
constexpr int kQuantities = 9;         // den h,v,d | num h,v,d | aim h,v,d
constexpr int kTileHeights[4] = {16, 8, 4, 2}; // band rows per block, chosen per launch

struct ScaleArgs {
    const void* ref_in;
    const void* dis_in;
    std::size_t ref_pitch; // bytes
    std::size_t dis_pitch;
    std::int32_t* ref_lo_out; // band_a for the next scale (stride bw), or null
    std::int32_t* dis_lo_out;
    unsigned long long* rows; // kQuantities x bh
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

struct FinalArgs {
    unsigned long long* rows;
    std::size_t row_offset[4];
    int bh[4], top[4], bottom[4];
    int den_row_shift[4];
    unsigned long long den_row_add[4];
    int cm_row_shift[4];
    long long cm_row_add[4];
    ref::AdmAccum* out;
};

template <typename T>
__device__ __forceinline__ std::int32_t load(const void* base, std::size_t pitch, int r, int c) {
    return static_cast<std::int32_t>(
        reinterpret_cast<const T*>(static_cast<const char*>(base) + pitch * r)[c]);
}

__device__ __forceinline__ unsigned long long warp_sum(unsigned long long v) {
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
}

template <typename T, bool kScale0, int kTileH>
__global__ void __launch_bounds__(kTileW * kBlockRows)
    adm_scale_kernel(const ScaleArgs a) {
    constexpr int kHaloH = kTileH + 2; // band rows with halo
    __shared__ std::int32_t s_vert[4][kHaloH][kVertW];        // ref lo, ref hi, dis lo, dis hi
    __shared__ std::int32_t s_fsum[2][kHaloH][kHaloW];        // masking-filter sums: dlm, aim
    __shared__ std::int32_t s_center[2][kTileH][kTileW];      // centre terms: dlm, aim
    __shared__ std::int32_t s_x[2][3][kTileH][kTileW];        // masked values: dlm (r), aim (a)
    __shared__ std::int32_t s_refb[3][kTileH][kTileW];        // reference h, v, d

    const ref::AdmScaleParams& p = a.p;
    const int tid = threadIdx.y * kTileW + threadIdx.x;
    const int nthreads = kTileW * kBlockRows;
    const int bx0 = blockIdx.x * kTileW;
    const int by0 = blockIdx.y * kTileH;
    const int row_base = by0 - 1;      // band row of halo row 0
    const int col_base = bx0 - 1;      // band column of halo column 0
    const int vcol_base = 2 * bx0 - 3; // DWT virtual input column of s_vert column 0

    // 1. Vertical DWT pass for halo rows, for the input columns their band columns use.
    for (int idx = tid; idx < kHaloH * kVertW; idx += nthreads) {
        const int k = idx / kVertW, v = idx - k * kVertW;
        const int gb = row_base + k, vc = vcol_base + v;
        if (gb < 0 || gb >= p.bh || vc < -1 || vc > 2 * p.bw) continue;
        const int c = am::dwt_mirror(vc, p.in_w);
        const int r0 = am::dwt_mirror(2 * gb - 1, p.in_h), r1 = am::dwt_mirror(2 * gb, p.in_h);
        const int r2 = am::dwt_mirror(2 * gb + 1, p.in_h), r3 = am::dwt_mirror(2 * gb + 2, p.in_h);
        const std::int32_t x0 = load<T>(a.ref_in, a.ref_pitch, r0, c);
        const std::int32_t x1 = load<T>(a.ref_in, a.ref_pitch, r1, c);
        const std::int32_t x2 = load<T>(a.ref_in, a.ref_pitch, r2, c);
        const std::int32_t x3 = load<T>(a.ref_in, a.ref_pitch, r3, c);
        const std::int32_t y0 = load<T>(a.dis_in, a.dis_pitch, r0, c);
        const std::int32_t y1 = load<T>(a.dis_in, a.dis_pitch, r1, c);
        const std::int32_t y2 = load<T>(a.dis_in, a.dis_pitch, r2, c);
        const std::int32_t y3 = load<T>(a.dis_in, a.dis_pitch, r3, c);
        if constexpr (kScale0) {
            s_vert[0][k][v] = am::dwt0_vert_lo(x0, x1, x2, x3, a.bpc);
            s_vert[1][k][v] = am::dwt0_vert_hi(x0, x1, x2, x3, a.bpc);
            s_vert[2][k][v] = am::dwt0_vert_lo(y0, y1, y2, y3, a.bpc);
            s_vert[3][k][v] = am::dwt0_vert_hi(y0, y1, y2, y3, a.bpc);
        } else {
            s_vert[0][k][v] = am::dwt123_vert(am::dwt_lo(x0, x1, x2, x3), a.scale);
            s_vert[1][k][v] = am::dwt123_vert(am::dwt_hi(x0, x1, x2, x3), a.scale);
            s_vert[2][k][v] = am::dwt123_vert(am::dwt_lo(y0, y1, y2, y3), a.scale);
            s_vert[3][k][v] = am::dwt123_vert(am::dwt_hi(y0, y1, y2, y3), a.scale);
        }
    }
    __syncthreads();

    // 2. Horizontal pass, decoupling and CSF for every halo'd band sample.
    for (int idx = tid; idx < kHaloH * kHaloW; idx += nthreads) {
        const int k = idx / kHaloW, m = idx - k * kHaloW;
        const int gb = row_base + k, gc = col_base + m;
        if (gb < 0 || gb >= p.bh || gc < 0 || gc >= p.bw) continue;
        std::int32_t bands[2][4]; // [ref, dis][a, v, h, d]
        for (int pl = 0; pl < 2; ++pl) {
            const std::int32_t* lo = &s_vert[2 * pl][k][2 * m];
            const std::int32_t* hi = &s_vert[2 * pl + 1][k][2 * m];
            if constexpr (kScale0) {
                bands[pl][0] = am::dwt0_horz_lo(lo[0], lo[1], lo[2], lo[3]);
                bands[pl][1] = am::dwt0_horz_hi(lo[0], lo[1], lo[2], lo[3]);
                bands[pl][2] = am::dwt0_horz_lo(hi[0], hi[1], hi[2], hi[3]);
                bands[pl][3] = am::dwt0_horz_hi(hi[0], hi[1], hi[2], hi[3]);
            } else {
                bands[pl][0] = am::dwt123_horz(am::dwt_lo(lo[0], lo[1], lo[2], lo[3]), a.scale);
                bands[pl][1] = am::dwt123_horz(am::dwt_hi(lo[0], lo[1], lo[2], lo[3]), a.scale);
                bands[pl][2] = am::dwt123_horz(am::dwt_lo(hi[0], hi[1], hi[2], hi[3]), a.scale);
                bands[pl][3] = am::dwt123_horz(am::dwt_hi(hi[0], hi[1], hi[2], hi[3]), a.scale);
            }
        }
        const bool interior = k >= 1 && k <= kTileH && m >= 1 && m <= kTileW;
        if (interior && a.ref_lo_out) {
            const std::size_t o = static_cast<std::size_t>(gb) * p.bw + gc;
            a.ref_lo_out[o] = bands[0][0];
            a.dis_lo_out[o] = bands[1][0];
        }
        if (!a.do_cm) continue;

        // band order h, v, d
        const std::int32_t o3[3] = {bands[0][2], bands[0][1], bands[0][3]};
        const std::int32_t t3[3] = {bands[1][2], bands[1][1], bands[1][3]};
        const bool flag = am::angle_flag(o3[0], o3[1], t3[0], t3[1], a.cos1_sq);
        std::int32_t rst[3], add[3];
        for (int b = 0; b < 3; ++b) {
            if constexpr (kScale0)
                am::decouple0(o3[b], t3[b], flag, a.egl, rst[b], add[b]);
            else
                am::decouple123(o3[b], t3[b], flag, a.egl, rst[b], add[b]);
        }
        // pass 0 (DLM): mask = csf(add), x from rst; pass 1 (AIM): mask = csf(rst), x from add
        std::int32_t fsum[2] = {0, 0}, center[2] = {0, 0};
        for (int pass = 0; pass < 2; ++pass) {
            if (pass == 1 && !a.do_aim) break;
            const std::int32_t* msrc = pass == 0 ? add : rst;
            for (int b = 0; b < 3; ++b) {
                std::int32_t c, f, ct;
                if constexpr (kScale0) {
                    const int sh = b == 2 ? 17 : 15;
                    const std::int32_t ad = b == 2 ? 65535 : 16384;
                    c = am::csf0(msrc[b], a.i_rf0[b], sh, ad);
                    f = am::csf0_flt(c);
                    ct = am::cm0_center(c);
                } else {
                    c = am::csf123(msrc[b], a.i_rf[b]);
                    f = am::csf123_flt(c);
                    ct = am::cm123_center(c);
                }
                fsum[pass] = am::add_i32(fsum[pass], f);
                center[pass] = am::add_i32(center[pass], ct);
            }
        }
        s_fsum[0][k][m] = fsum[0];
        s_fsum[1][k][m] = fsum[1];
        if (interior) {
            const int ti = k - 1, tj = m - 1;
            s_center[0][ti][tj] = center[0];
            s_center[1][ti][tj] = center[1];
            for (int b = 0; b < 3; ++b) {
                if constexpr (kScale0) {
                    s_x[0][b][ti][tj] = am::cm0_x(rst[b], a.i_rf0[b]);
                    s_x[1][b][ti][tj] = am::cm0_x(add[b], a.i_rf0[b]);
                } else {
                    s_x[0][b][ti][tj] = am::cm123_x(rst[b], a.i_rf[b]);
                    s_x[1][b][ti][tj] = am::cm123_x(add[b], a.i_rf[b]);
                }
                s_refb[b][ti][tj] = o3[b];
            }
        }
    }
    if (!a.do_cm) return; // uniform across the block
    __syncthreads();

    // 3. Masking threshold and den/num/aim terms for tile samples; per-row warp sums.
    const int tx = threadIdx.x;
    for (int ti = threadIdx.y; ti < kTileH; ti += kBlockRows) {
        const int gb = by0 + ti, gc = bx0 + tx;
        const bool row_in = gb >= p.top && gb < p.bottom; // warp-uniform
        const bool in = row_in && gc >= p.left && gc < p.right;
        unsigned long long q[kQuantities] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
        if (in) {
            int nk[3], nm[3];
            for (int d = -1; d <= 1; ++d) {
                nk[d + 1] = am::cm_mirror(gb + d, p.bh) - row_base;
                nm[d + 1] = am::cm_mirror(gc + d, p.bw) - col_base;
            }
            for (int b = 0; b < 3; ++b) {
                const std::int32_t x = s_refb[b][ti][tx];
                q[b] = kScale0 ? am::den0_cube(x)
                               : am::den123_cube(x, p.den_sq_shift, p.den_sq_add,
                                                 p.den_cub_shift, p.den_cub_add);
            }
            for (int pass = 0; pass < 2; ++pass) {
                if (pass == 1 && !a.do_aim) break;
                std::int32_t thr = s_center[pass][ti][tx];
                for (int di = 0; di < 3; ++di)
                    for (int dj = 0; dj < 3; ++dj)
                        if (di != 1 || dj != 1)
                            thr = am::add_i32(thr, s_fsum[pass][nk[di]][nm[dj]]);
                for (int b = 0; b < 3; ++b) {
                    const std::int64_t t =
                        am::cm_cube(s_x[pass][b][ti][tx], thr, p.cm_sub_shift[b],
                                    p.cm_sq_shift[b], p.cm_sq_add[b], p.cm_cub_shift[b],
                                    p.cm_cub_add[b]);
                    q[3 + 3 * pass + b] = static_cast<unsigned long long>(t);
                }
            }
        }
        if (!row_in) continue; // whole warp skips together
        for (int i = 0; i < kQuantities; ++i) {
            const unsigned long long s = warp_sum(q[i]);
            if (tx == 0 && s != 0) atomicAdd(&a.rows[static_cast<std::size_t>(i) * p.bh + gb], s);
        }
    }
}

__global__ void __launch_bounds__(256) adm_finalize_kernel(const FinalArgs a) {
    __shared__ unsigned long long s_part[256 / 32];
    const int scale = blockIdx.x / kQuantities;
    const int qi = blockIdx.x - scale * kQuantities;
    const int bh = a.bh[scale];
    unsigned long long* rows = a.rows + a.row_offset[scale] + static_cast<std::size_t>(qi) * bh;
    unsigned long long sum = 0;
    for (int i = threadIdx.x; i < bh; i += blockDim.x) {
        const unsigned long long r = rows[i];
        rows[i] = 0;
        if (i < a.top[scale] || i >= a.bottom[scale]) continue;
        if (qi < 3)
            sum += am::row_shift_unsigned(r, a.den_row_add[scale], a.den_row_shift[scale]);
        else
            sum += static_cast<unsigned long long>(am::row_shift_signed(
                static_cast<long long>(r), a.cm_row_add[scale], a.cm_row_shift[scale]));
    }
    sum = warp_sum(sum);
    if ((threadIdx.x & 31) == 0) s_part[threadIdx.x >> 5] = sum;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long total = 0;
        for (unsigned w = 0; w < blockDim.x / 32; ++w) total += s_part[w];
        if (qi < 3)
            a.out->den[scale][qi] = total;
        else if (qi < 6)
            a.out->num[scale][qi - 3] = static_cast<std::int64_t>(total);
        else
            a.out->aim[scale][qi - 6] = static_cast<std::int64_t>(total);
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
void launch_scale(const ScaleArgs& a, int tile_h, cudaStream_t stream) {
    const dim3 block(kTileW, kBlockRows);
    const dim3 grid = tile_grid(a.p, tile_h);
    switch (tile_h) {
    case 16: adm_scale_kernel<T, kScale0, 16><<<grid, block, 0, stream>>>(a); break;
    case 8: adm_scale_kernel<T, kScale0, 8><<<grid, block, 0, stream>>>(a); break;
    case 4: adm_scale_kernel<T, kScale0, 4><<<grid, block, 0, stream>>>(a); break;
    default: adm_scale_kernel<T, kScale0, 2><<<grid, block, 0, stream>>>(a); break;
    }
}

} // namespace

AdmKernel::AdmKernel(unsigned w, unsigned h, unsigned bpc, const ref::AdmOptions& opt)
    : w_(w), h_(h), bpc_(bpc), opt_(opt), factors_(ref::adm_factors(opt)) {
    if (w < ref::kAdmMinSize || h < ref::kAdmMinSize)
        throw std::invalid_argument("AdmKernel: width and height must be >= 17");
    if (bpc < 8 || bpc > 16) throw std::invalid_argument("AdmKernel: bpc must be 8..16");
    std::size_t rows = 0;
    const int sms = sm_count();
    for (unsigned s = 0; s < 4; ++s) {
        params_[s] = ref::adm_scale_params(w, h, s);
        tile_h_[s] = pick_tile_h(params_[s], sms);
        row_offset_[s] = rows;
        rows += static_cast<std::size_t>(kQuantities) * params_[s].bh;
    }
    const std::size_t n0 = static_cast<std::size_t>(params_[0].bw) * params_[0].bh;
    const std::size_t n1 = static_cast<std::size_t>(params_[1].bw) * params_[1].bh;
    lo_a_ = DeviceBuffer(2 * n0 * sizeof(std::int32_t));
    lo_b_ = DeviceBuffer(2 * n1 * sizeof(std::int32_t));
    rows_ = DeviceBuffer(rows * sizeof(unsigned long long));
    VMAF_CUDA_CHECK(cudaMemset(rows_.get(), 0, rows_.bytes()));
    VMAF_CUDA_CHECK(cudaDeviceSynchronize());
}

void AdmKernel::enqueue(const DeviceLuma& ref, const DeviceLuma& dis, ref::AdmAccum* d_out,
                        cudaStream_t stream) {
    if (ref.width != w_ || ref.height != h_ || dis.width != w_ || dis.height != h_ ||
        ref.bpc != bpc_ || dis.bpc != bpc_)
        throw std::invalid_argument("AdmKernel::enqueue: plane size or bpc mismatch");
    auto* rows = rows_.get<unsigned long long>();
    std::int32_t* lo_a = lo_a_.get<std::int32_t>();
    std::int32_t* lo_b = lo_b_.get<std::int32_t>();
    const std::size_t n0 = static_cast<std::size_t>(params_[0].bw) * params_[0].bh;
    const std::size_t n1 = static_cast<std::size_t>(params_[1].bw) * params_[1].bh;
    for (int s = 0; s < 4; ++s) {
        const ref::AdmScaleParams& p = params_[s];
        ScaleArgs a{};
        a.p = p;
        a.scale = s;
        a.bpc = static_cast<int>(bpc_);
        a.rows = rows + row_offset_[s];
        a.do_cm = (s == 0 && opt_.skip_scale0) ? 0 : 1;
        a.do_aim = opt_.skip_aim ? 0 : 1;
        for (int b = 0; b < 3; ++b) {
            a.i_rf0[b] = factors_.i_rfactor0[b];
            a.i_rf[b] = factors_.i_rfactor[s][b];
        }
        a.cos1_sq = factors_.cos1_sq;
        a.egl = factors_.enhn_gain_limit;
        // band_a ping-pong: scale 0 -> lo_a, 1 -> lo_b, 2 -> lo_a, 3 -> none
        std::int32_t* in_buf = (s == 1 || s == 3) ? lo_a : lo_b;
        std::int32_t* out_buf = (s == 1) ? lo_b : lo_a;
        const std::size_t out_n = (s == 1) ? n1 : n0;
        const std::size_t in_n = (s == 2) ? n1 : n0;
        if (s < 3) {
            a.ref_lo_out = out_buf;
            a.dis_lo_out = out_buf + out_n;
        }
        if (s == 0) {
            a.ref_in = ref.data;
            a.dis_in = dis.data;
            a.ref_pitch = ref.pitch;
            a.dis_pitch = dis.pitch;
            if (bpc_ == 8)
                launch_scale<std::uint8_t, true>(a, tile_h_[s], stream);
            else
                launch_scale<std::uint16_t, true>(a, tile_h_[s], stream);
        } else {
            a.ref_in = in_buf;
            a.dis_in = in_buf + in_n;
            a.ref_pitch = a.dis_pitch = static_cast<std::size_t>(p.in_w) * sizeof(std::int32_t);
            launch_scale<std::int32_t, false>(a, tile_h_[s], stream);
        }
        VMAF_CUDA_CHECK_LAUNCH();
    }

    FinalArgs f{};
    f.rows = rows;
    f.out = d_out;
    for (int s = 0; s < 4; ++s) {
        f.row_offset[s] = row_offset_[s];
        f.bh[s] = params_[s].bh;
        f.top[s] = params_[s].top;
        f.bottom[s] = params_[s].bottom;
        f.den_row_shift[s] = params_[s].den_row_shift;
        f.den_row_add[s] = params_[s].den_row_add;
        f.cm_row_shift[s] = params_[s].cm_row_shift;
        f.cm_row_add[s] = params_[s].cm_row_add;
    }
    adm_finalize_kernel<<<4 * kQuantities, 256, 0, stream>>>(f);
    VMAF_CUDA_CHECK_LAUNCH();
}

} // namespace vmaf_cuda::cuda

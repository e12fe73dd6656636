// SPDX-License-Identifier: BSD-2-Clause-Patent
// CUDA per-pixel stage of SpEED (speed_chroma, speed_temporal); contract in speed.cuh, arithmetic in
// reference/speed.h (steps 1-5), followed operation by operation:
//   K1 vertical_aa:  V[p][i][x] = sum_fi aa[fi] * S_p(x, mirror(16 i - fw/2 + fi))
//                    for every column x of the scaled plane, where S_p(x, y) is the
//                    step-2 output (the step-1 output when there is no rescale),
//                    computed on the fly from the input plane (speed_temporal: the
//                    float difference of two input planes) and the host tables;
//   K2 horizontal_aa: D[p][i][j] = sum_fj aa[fj] * V[p][i][mirror(16 j - fw/2 + fj)]
//                    (the antialias output at the samples vif_dec16_s keeps);
//   K3 residual:     R[p][i][j] = D[p][i][j] - sum_fj lm[fj] * (sum_fi lm[fi] *
//                    D[p][mirror(i - h + fi)][mirror(j - h + fj)]).
// Every sum starts at 0.0f and adds its terms in tap order, as the reference's loops;
// every operation is an explicit round-to-nearest float intrinsic (no contraction).
// Mirrors are the reference's single mirror (-k -> k, n-1+k -> n-1-k); the planes are
// at least 80 (scaled) and 5 (operating) samples wide and high, wider than every half
// filter width (antialias at most 32, local mean at most 4), so one mirror suffices.

#include "speed.cuh"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace vmaf_cuda::cuda {

namespace {

constexpr int kMaxAA = 65; // vif_get_filter_size(1, 360/97): the widest antialias filter
constexpr int kMaxLM = 9;  // vif_get_filter_size(4, 360/97)
constexpr int kInputs = 4; // chroma: U ref, U dis, V ref, V dis; temporal: two pairs

using Scale = detail::SpeedStage::Scale;

struct Params {
    DevicePlane in[kInputs];
    float inv_scaler; // 1 / (1, 4, 16, 256) for bpc 8, 10, 12, 16 (exact)
    int src_w, src_h; // the plane size (original)
    int sw, sh;       // scaled plane
    int ow, oh;       // operating plane
    int fw_aa, fw_lm;
    float aa[kMaxAA];
    float lm[kMaxLM];
    const int* col_idx; // sw x taps
    const float* col_w;
    const int* row_idx; // sh x taps
    const float* row_w;
    float* v;     // planes x oh x sw
    float* d;     // planes x oh x ow
    float* out;   // planes x oh x ow (the accumulator)
};

// The per-output functions below are __host__ __device__ so that a host build of this
// file can run them against the reference without a GPU (a development check); on the
// device every operation is an explicit round-to-nearest intrinsic, on the host the
// same IEEE float operation (the host build uses -ffp-contract=off).
#ifdef __CUDA_ARCH__
#define SPEED_HD __device__ __forceinline__
__device__ __forceinline__ float fadd(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ float fsub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ float fmul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ float fdiv(float a, float b) { return __fdiv_rn(a, b); }
template <class T> __device__ __forceinline__ T ld(const T* p) { return __ldg(p); }
__device__ __forceinline__ unsigned sample(const DevicePlane& p, int x, int y) {
    return load(p, static_cast<unsigned>(x), static_cast<unsigned>(y));
}
#else
#define SPEED_HD inline
inline float fadd(float a, float b) { return a + b; }
inline float fsub(float a, float b) { return a - b; }
inline float fmul(float a, float b) { return a * b; }
inline float fdiv(float a, float b) { return a / b; }
template <class T> inline T ld(const T* p) { return *p; }
inline unsigned sample(const DevicePlane& p, int x, int y) { // load() of cuda_common.cuh
    const unsigned char* row = static_cast<const unsigned char*>(p.data) + std::size_t(y) * p.pitch;
    if (p.bpc == 8) return row[std::size_t(x) * p.step] >> p.shift;
    return reinterpret_cast<const unsigned short*>(row)[std::size_t(x) * p.step] >> p.shift;
}
#endif

SPEED_HD int mirror1(int i, int n) { return i < 0 ? -i : (i >= n ? 2 * n - i - 2 : i); }

// Step 1 (picture_copy, offset -128) of sample (x, y): (float)v / scaler + -128. The
// scaler is 2^k (1, 4, 16, 256) and v < 2^16 an integer, so v / 2^k is exact and equals
// v * 2^-k: `inv` is 1 / scaler (exact), a multiplication instead of a division.
SPEED_HD float load_f(const DevicePlane& p, float inv, int x, int y) {
    return fadd(fmul(static_cast<float>(sample(p, x, y)), inv), -128.0f);
}

// Step-1 value of output plane p at (x, y): the loaded sample, or (difference mode,
// speed_temporal) prev - cur of the two loaded samples.
template <bool D>
SPEED_HD float src_at(const Params& q, int p, int x, int y) {
    if constexpr (D)
        return fsub(load_f(q.in[2 * p], q.inv_scaler, x, y),
                    load_f(q.in[2 * p + 1], q.inv_scaler, x, y));
    else return load_f(q.in[p], q.inv_scaler, x, y);
}

// Sample (x, y) of the scaled plane: libvmaf's vif_scale_frame_* formulas with the
// indices and weights from the host tables (see axis_table()).
template <Scale M, bool D>
SPEED_HD float scaled_at(const Params& q, int p, int x, int y) {
    if constexpr (M == Scale::none) {
        return src_at<D>(q, p, x, y);
    } else if constexpr (M == Scale::nearest) {
        return src_at<D>(q, p, ld(q.col_idx + x), ld(q.row_idx + y));
    } else if constexpr (M == Scale::bilinear) {
        // (1 - dy) * (1 - dx) * r1[x1] + (1 - dy) * dx * r1[x2] + dy * (1 - dx) * r2[x1]
        //   + dy * dx * r2[x2], left to right; w[0] = 1 - d, w[1] = d.
        const int x1 = ld(q.col_idx + 2 * x), x2 = ld(q.col_idx + 2 * x + 1);
        const int y1 = ld(q.row_idx + 2 * y), y2 = ld(q.row_idx + 2 * y + 1);
        const float wx0 = ld(q.col_w + 2 * x), wx1 = ld(q.col_w + 2 * x + 1);
        const float wy0 = ld(q.row_w + 2 * y), wy1 = ld(q.row_w + 2 * y + 1);
        float v = fmul(fmul(wy0, wx0), src_at<D>(q, p, x1, y1));
        v = fadd(v, fmul(fmul(wy0, wx1), src_at<D>(q, p, x2, y1)));
        v = fadd(v, fmul(fmul(wy1, wx0), src_at<D>(q, p, x1, y2)));
        v = fadd(v, fmul(fmul(wy1, wx1), src_at<D>(q, p, x2, y2)));
        return v;
    } else if constexpr (M == Scale::bicubic) {
        // v += src * (wx[i] * wy[j]), j outer, i inner, from 0.
        float v = 0.0f;
        for (int j = 0; j < 4; ++j) {
            const int yi = ld(q.row_idx + 4 * y + j);
            const float wy = ld(q.row_w + 4 * y + j);
            for (int i = 0; i < 4; ++i) {
                const float w = fmul(ld(q.col_w + 4 * x + i), wy);
                v = fadd(v, fmul(src_at<D>(q, p, ld(q.col_idx + 4 * x + i), yi), w));
            }
        }
        return v;
    } else {
        // lanczos4: weight = wx * wy; weight_sum += weight; value += src * weight;
        // value / weight_sum.
        float value = 0.0f, weight_sum = 0.0f;
        for (int j = 0; j < 9; ++j) {
            const int yi = ld(q.row_idx + 9 * y + j);
            const float wy = ld(q.row_w + 9 * y + j);
            for (int i = 0; i < 9; ++i) {
                const float w = fmul(ld(q.col_w + 9 * x + i), wy);
                weight_sum = fadd(weight_sum, w);
                value = fadd(value, fmul(src_at<D>(q, p, ld(q.col_idx + 9 * x + i), yi), w));
            }
        }
        return fdiv(value, weight_sum);
    }
}

// K1 output (plane p, decimated row i, column x of the scaled plane).
template <Scale M, bool D>
SPEED_HD float vertical_at(const Params& q, int p, int i, int x) {
    const int top = 16 * i - q.fw_aa / 2;
    float acc = 0.0f;
    for (int fi = 0; fi < q.fw_aa; ++fi)
        acc = fadd(acc, fmul(q.aa[fi], scaled_at<M, D>(q, p, x, mirror1(top + fi, q.sh))));
    return acc;
}

// K2 output (plane p, operating row i, column j).
SPEED_HD float horizontal_at(const Params& q, int p, int i, int j) {
    const float* row = q.v + (static_cast<std::size_t>(p) * q.oh + i) * q.sw;
    const int left = 16 * j - q.fw_aa / 2;
    float acc = 0.0f;
    for (int fj = 0; fj < q.fw_aa; ++fj) acc = fadd(acc, fmul(q.aa[fj], row[mirror1(left + fj, q.sw)]));
    return acc;
}

// K3 output (plane p, operating row i, column j).
SPEED_HD float residual_at(const Params& q, int p, int i, int j) {
    const float* d = q.d + static_cast<std::size_t>(p) * q.oh * q.ow;
    const int h = q.fw_lm / 2;
    float acc = 0.0f;
    for (int fj = 0; fj < q.fw_lm; ++fj) {
        const int jj = mirror1(j - h + fj, q.ow);
        float col = 0.0f; // the reference's row[jj] of the vertical pass at row i
        for (int fi = 0; fi < q.fw_lm; ++fi)
            col = fadd(col, fmul(q.lm[fi], d[mirror1(i - h + fi, q.oh) * q.ow + jj]));
        acc = fadd(acc, fmul(q.lm[fj], col));
    }
    return fsub(d[i * q.ow + j], acc);
}

// K1: grid (ceil(sw / 128), oh, planes).
template <Scale M, bool D>
__global__ void __launch_bounds__(128) vertical_aa(const Params q) {
    const int x = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (x >= q.sw) return;
    const int i = static_cast<int>(blockIdx.y), p = static_cast<int>(blockIdx.z);
    q.v[(static_cast<std::size_t>(p) * q.oh + i) * q.sw + x] = vertical_at<M, D>(q, p, i, x);
}

// K2: grid (ceil(ow / 64), oh, planes).
__global__ void __launch_bounds__(64) horizontal_aa(const Params q) {
    const int j = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (j >= q.ow) return;
    const int i = static_cast<int>(blockIdx.y), p = static_cast<int>(blockIdx.z);
    q.d[(static_cast<std::size_t>(p) * q.oh + i) * q.ow + j] = horizontal_at(q, p, i, j);
}

// K3: grid (ceil(ow / 64), oh, planes).
__global__ void __launch_bounds__(64) residual(const Params q) {
    const int j = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (j >= q.ow) return;
    const int i = static_cast<int>(blockIdx.y), p = static_cast<int>(blockIdx.z);
    q.out[(static_cast<std::size_t>(p) * q.oh + i) * q.ow + j] = residual_at(q, p, i, j);
}

[[noreturn]] void invalid(const char* who, const std::string& what) {
    throw CudaError(cudaErrorInvalidValue, std::string(who) + ": " + what);
}

// ---- host tables: the reference's (vif_tools.c's) per-column / per-row formulas ------

float mirror_f(float i, float left, float right) {
    return i < left ? -i : i > right ? 2 * right - i : i;
}

float bicubic_kernel(float t) {
    const float a = -0.75f;
    if (t < 0) t = -t;
    if (t < 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
    if (t < 2) return (((t - 5) * t + 8) * t - 4) * a;
    return 0;
}

float lanczos4_kernel(float x, float a) {
    if (static_cast<double>(x) == 0.0) return 1.0f;
    if (x > -a && x < a) {
        const double xd = x, ad = a;
        return static_cast<float>(ad * std::sin(M_PI * xd) * std::sin(M_PI * xd / ad) /
                                  (M_PI * M_PI * xd * xd));
    }
    return 0.0f;
}

// Source indices and weights of one axis: n outputs from src source samples, `taps` of
// each per output (nearest 1; bilinear 2: {floor, ceil} mirrored, weights {1 - d, d};
// bicubic 4 and lanczos4 9: offsets -1..2 / -4..4 mirrored, kernel weights).
// `columns`: bilinear columns follow bilinear_columns() (x), rows the row loop (y); the
// formulas are the same apart from the names.
void axis_table(Scale m, int src, int n, int taps, int* idx, float* w) {
    const float ratio = static_cast<float>(src) / static_cast<float>(n);
    const float last = static_cast<float>(src - 1);
    for (int o = 0; o < n; ++o) {
        int* ix = idx + static_cast<std::size_t>(o) * taps;
        float* wx = w + static_cast<std::size_t>(o) * taps;
        if (m == Scale::nearest) {
            ix[0] = static_cast<int>(static_cast<float>(o) * ratio);
            wx[0] = 1.0f;
            continue;
        }
        const float xx = static_cast<float>((o + 0.5) * static_cast<double>(ratio) - 0.5);
        if (m == Scale::bilinear) {
            const int x1 = static_cast<int>(
                mirror_f(static_cast<float>(std::floor(static_cast<double>(xx))), 0, last));
            const int x2 = static_cast<int>(
                mirror_f(static_cast<float>(std::ceil(static_cast<double>(xx))), 0, last));
            const float d = xx - static_cast<float>(x1);
            ix[0] = x1;
            ix[1] = x2;
            wx[0] = 1 - d;
            wx[1] = d;
            continue;
        }
        const int x0 = static_cast<int>(std::floor(static_cast<double>(xx)));
        const float d = xx - static_cast<float>(x0);
        const int a = m == Scale::bicubic ? 1 : 4; // first offset -a
        for (int t = 0; t < taps; ++t) {
            const int i = t - a;
            wx[t] = m == Scale::bicubic ? bicubic_kernel(static_cast<float>(i) - d)
                                        : lanczos4_kernel(static_cast<float>(i) - d, 4.0f);
            ix[t] = static_cast<int>(mirror_f(static_cast<float>(x0 + i), 0, last));
        }
    }
}

// The prescale tables of a geometry (mode none: empty).
struct HostTables {
    Scale mode = Scale::none;
    unsigned taps = 0; // per output sample and axis
    std::vector<int> ci, ri;   // column / row source indices, scaled_w / scaled_h x taps
    std::vector<float> cw, rw; // their weights
};

HostTables build_tables(const ref::SpeedGeometry& g, const ref::SpeedOptions& o) {
    HostTables t;
    const bool same = g.scaled_w == g.original_w && g.scaled_h == g.original_h;
    if (!g.rescale || same) return t; // libvmaf copies the plane when the size is unchanged
    switch (o.prescale_method) {
    case ref::SpeedScaleMethod::nearest: t.mode = Scale::nearest; t.taps = 1; break;
    case ref::SpeedScaleMethod::bilinear: t.mode = Scale::bilinear; t.taps = 2; break;
    case ref::SpeedScaleMethod::bicubic: t.mode = Scale::bicubic; t.taps = 4; break;
    case ref::SpeedScaleMethod::lanczos4: t.mode = Scale::lanczos4; t.taps = 9; break;
    }
    const std::size_t nc = std::size_t(g.scaled_w) * t.taps, nr = std::size_t(g.scaled_h) * t.taps;
    t.ci.resize(nc);
    t.cw.resize(nc);
    t.ri.resize(nr);
    t.rw.resize(nr);
    axis_table(t.mode, int(g.original_w), int(g.scaled_w), int(t.taps), t.ci.data(), t.cw.data());
    axis_table(t.mode, int(g.original_h), int(g.scaled_h), int(t.taps), t.ri.data(), t.rw.data());
    return t;
}

// Params without planes, tables and buffers.
Params base_params(const ref::SpeedGeometry& g, unsigned bpc, const std::vector<float>& aa,
                   const std::vector<float>& lm) {
    Params q{};
    q.inv_scaler = bpc == 8 ? 1.0f : bpc == 10 ? 0.25f : bpc == 12 ? 0.0625f : 0.00390625f;
    q.src_w = int(g.original_w);
    q.src_h = int(g.original_h);
    q.sw = int(g.scaled_w);
    q.sh = int(g.scaled_h);
    q.ow = int(g.operating_w);
    q.oh = int(g.operating_h);
    q.fw_aa = int(aa.size());
    q.fw_lm = int(lm.size());
    std::copy(aa.begin(), aa.end(), q.aa);
    std::copy(lm.begin(), lm.end(), q.lm);
    return q;
}

} // namespace

namespace detail {

SpeedStage::SpeedStage(const ref::SpeedGeometry& g, const ref::SpeedOptions& o, unsigned bpc,
                       unsigned planes, const char* who)
    : g_(g), bpc_(bpc), planes_(planes), who_(who) {
    aa_ = ref::speed_filter_taps(true, o.kernelscale);
    lm_ = ref::speed_filter_taps(false, o.kernelscale);
    if (aa_.size() > std::size_t(kMaxAA) || lm_.size() > std::size_t(kMaxLM) ||
        aa_.size() / 2 >= g_.scaled_w || aa_.size() / 2 >= g_.scaled_h ||
        lm_.size() / 2 >= g_.operating_w || lm_.size() / 2 >= g_.operating_h ||
        planes_ == 0 || planes_ > unsigned(kInputs))
        invalid(who_, "filter wider than the device code supports");
    const HostTables t = build_tables(g_, o);
    mode_ = t.mode;
    if (mode_ != Scale::none) {
        const std::size_t nc = t.ci.size(), nr = t.ri.size();
        tables_ = DeviceBuffer((nc + nr) * (sizeof(int) + sizeof(float)));
        auto* base = tables_.get<unsigned char>();
        int* d_ci = reinterpret_cast<int*>(base);
        float* d_cw = reinterpret_cast<float*>(d_ci + nc);
        int* d_ri = reinterpret_cast<int*>(d_cw + nc);
        float* d_rw = reinterpret_cast<float*>(d_ri + nr);
        copy_to_device(d_ci, t.ci.data(), nc * sizeof(int));
        copy_to_device(d_cw, t.cw.data(), nc * sizeof(float));
        copy_to_device(d_ri, t.ri.data(), nr * sizeof(int));
        copy_to_device(d_rw, t.rw.data(), nr * sizeof(float));
        col_idx_ = d_ci;
        col_w_ = d_cw;
        row_idx_ = d_ri;
        row_w_ = d_rw;
    }
    vbuf_ = DeviceBuffer(planes_ * std::size_t(g_.operating_h) * g_.scaled_w * sizeof(float));
    dbuf_ = DeviceBuffer(planes_ * std::size_t(g_.operating_h) * g_.operating_w * sizeof(float));
}

void SpeedStage::launch(const DevicePlane* const* in, const char* const* names, bool diff,
                        void* d_out, cudaStream_t stream) const {
    if (!d_out) invalid(who_, "null accumulator");
    Params q = base_params(g_, bpc_, aa_, lm_);
    const unsigned nin = diff ? 2 * planes_ : planes_;
    for (unsigned p = 0; p < nin; ++p) {
        const DevicePlane& v = *in[p];
        // Messages are built only on failure (no host allocation per frame).
        auto fail = [&](const std::string& what) {
            invalid(who_, std::string(names[p]) + " plane: " + what);
        };
        const unsigned bytes = bpc_ > 8 ? 2 : 1;
        if (!v.data) fail("null data");
        if (v.bpc != bpc_) fail("bpc " + std::to_string(v.bpc) + ", built for " + std::to_string(bpc_));
        if (v.width < g_.original_w || v.height < g_.original_h)
            fail(std::to_string(v.width) + "x" + std::to_string(v.height) +
                 ", smaller than the plane size " + std::to_string(g_.original_w) + "x" +
                 std::to_string(g_.original_h));
        if (v.step != 1 && v.step != 2) fail("step " + std::to_string(v.step) + " (1 or 2)");
        if (v.shift >= 8 * bytes) fail("shift " + std::to_string(v.shift));
        if (v.pitch < std::size_t(g_.original_w - 1) * v.step * bytes + bytes)
            fail("pitch smaller than a row");
        q.in[p] = v;
    }
    q.col_idx = col_idx_;
    q.col_w = col_w_;
    q.row_idx = row_idx_;
    q.row_w = row_w_;
    q.v = vbuf_.get<float>();
    q.d = dbuf_.get<float>();
    q.out = static_cast<float*>(d_out);

    const dim3 g1((g_.scaled_w + 127) / 128, g_.operating_h, planes_);
    auto k1 = [&](auto m) {
        constexpr Scale M = decltype(m)::value;
        if (diff) vertical_aa<M, true><<<g1, 128, 0, stream>>>(q);
        else vertical_aa<M, false><<<g1, 128, 0, stream>>>(q);
    };
    switch (mode_) {
    case Scale::none: k1(std::integral_constant<Scale, Scale::none>{}); break;
    case Scale::nearest: k1(std::integral_constant<Scale, Scale::nearest>{}); break;
    case Scale::bilinear: k1(std::integral_constant<Scale, Scale::bilinear>{}); break;
    case Scale::bicubic: k1(std::integral_constant<Scale, Scale::bicubic>{}); break;
    case Scale::lanczos4: k1(std::integral_constant<Scale, Scale::lanczos4>{}); break;
    }
    VMAF_CUDA_CHECK_LAUNCH();
    const dim3 g2((g_.operating_w + 63) / 64, g_.operating_h, planes_);
    horizontal_aa<<<g2, 64, 0, stream>>>(q);
    VMAF_CUDA_CHECK_LAUNCH();
    residual<<<g2, 64, 0, stream>>>(q);
    VMAF_CUDA_CHECK_LAUNCH();
}

} // namespace detail

namespace {

void check_bpc(const char* who, unsigned bpc) {
    if (bpc != 8 && bpc != 10 && bpc != 12 && bpc != 16)
        invalid(who, "bpc " + std::to_string(bpc) +
                         " (libvmaf v3.2.0's SpEED converts 8, 10, 12 and 16 bits only)");
}

void check_geometry(const char* who, const ref::SpeedGeometry& g, const std::string& what) {
    if (!g.valid())
        invalid(who, "image too small, operating width or height is 0 (" + what + ", scaled " +
                         std::to_string(g.scaled_w) + "x" + std::to_string(g.scaled_h) +
                         "; the scaled plane must be at least 80x80)");
    if (!g.rescale && (g.scaled_w != g.original_w || g.scaled_h != g.original_h))
        invalid(who, "speed_prescale within 1e-3 of 1 but changing the size (libvmaf then reads "
                     "unset samples)");
}

// speed_extract_score's rules on two residual planes (stride operating_w).
ref::SpeedChannel channel_score(const float* r, const float* d, const ref::SpeedGeometry& g,
                                const ref::SpeedOptions& o, int mode) {
    ref::SpeedBlockStats rs, ds;
    ref::speed_est_params(r, g.operating_w, g, o.sigma_nn, rs);
    ref::speed_est_params(d, g.operating_w, g, o.sigma_nn, ds);
    ref::SpeedChannel c;
    c.err = rs.singular || ds.singular;
    c.score = rs.singular != ds.singular ? 0.0f : ref::speed_score(g, rs, ds, o.sigma_nn, o.nn_floor, mode);
    return c;
}

constexpr const char* kChroma = "SpeedChromaKernel";
constexpr const char* kTemporal = "SpeedTemporalKernel";

} // namespace

ref::SpeedGeometry SpeedChromaKernel::checked_geometry(unsigned luma_w, unsigned luma_h,
                                                       unsigned bpc, unsigned chroma,
                                                       const ref::SpeedOptions& o) {
    ref::SpeedSize ps;
    try {
        ref::speed_validate(o);
        ps = ref::speed_chroma_plane_size(luma_w, luma_h, chroma);
    } catch (const std::invalid_argument& e) {
        invalid(kChroma, e.what());
    }
    check_bpc(kChroma, bpc);
    const ref::SpeedGeometry g = ref::speed_geometry(ps.width, ps.height, o);
    check_geometry(kChroma, g, "frame " + std::to_string(luma_w) + "x" + std::to_string(luma_h) +
                                   ", chroma plane " + std::to_string(ps.width) + "x" +
                                   std::to_string(ps.height));
    return g;
}

SpeedChromaKernel::SpeedChromaKernel(unsigned luma_w, unsigned luma_h, unsigned bpc,
                                     unsigned chroma, const ref::SpeedOptions& o)
    : g_(checked_geometry(luma_w, luma_h, bpc, chroma, o)), o_(o), bpc_(bpc),
      stage_(g_, o, bpc, 4, kChroma) {}

void SpeedChromaKernel::enqueue(const DevicePlane& ref_u, const DevicePlane& ref_v,
                                const DevicePlane& dis_u, const DevicePlane& dis_v,
                                void* d_accum, cudaStream_t stream) {
    const DevicePlane* in[4] = {&ref_u, &dis_u, &ref_v, &dis_v};
    static const char* const names[4] = {"ref U", "dis U", "ref V", "dis V"};
    stage_.launch(in, names, false, d_accum, stream);
}

ref::SpeedChromaScores speed_chroma_from_accum(const void* accum, const ref::SpeedGeometry& g,
                                               const ref::SpeedOptions& o) {
    // speed_extract_score per channel on the residual planes, then speed_chroma_finish:
    // the reference's code, so both backends share one tail.
    ref::SpeedChannel ch[2];
    for (unsigned c = 0; c < 2; ++c)
        ch[c] = channel_score(speed_chroma_residual(accum, g, c, false),
                              speed_chroma_residual(accum, g, c, true), g, o, o.weight_var_mode);
    return ref::speed_chroma_finish(ch[0], ch[1], o.max_val);
}

ref::SpeedGeometry SpeedTemporalKernel::checked_geometry(unsigned luma_w, unsigned luma_h,
                                                         unsigned bpc, const ref::SpeedOptions& o) {
    try {
        ref::speed_validate(o);
    } catch (const std::invalid_argument& e) {
        invalid(kTemporal, e.what());
    }
    check_bpc(kTemporal, bpc);
    const ref::SpeedGeometry g = ref::speed_geometry(luma_w, luma_h, o);
    check_geometry(kTemporal, g, "frame " + std::to_string(luma_w) + "x" + std::to_string(luma_h));
    if (g.alloc_w != luma_w || g.alloc_h != luma_h)
        invalid(kTemporal, "speed_prescale > 1 is not supported (libvmaf's temporal frame buffers "
                           "are too small for it)");
    return g;
}

SpeedTemporalKernel::SpeedTemporalKernel(unsigned luma_w, unsigned luma_h, unsigned bpc,
                                         const ref::SpeedOptions& o)
    : g_(checked_geometry(luma_w, luma_h, bpc, o)), o_(o), stage_(g_, o, bpc, 2, kTemporal) {}

void SpeedTemporalKernel::enqueue(const DevicePlane& prev_ref, const DevicePlane& cur_ref,
                                  const DevicePlane& prev_dis, const DevicePlane& cur_dis,
                                  void* d_accum, cudaStream_t stream) {
    // Output 0: prev_ref - cur_ref; output 1: prev_dis - (use_ref_diff ? cur_ref : cur_dis).
    const DevicePlane* in[4] = {&prev_ref, &cur_ref, &prev_dis, o_.use_ref_diff ? &cur_ref : &cur_dis};
    static const char* const names[4] = {"previous ref", "current ref", "previous dis", "current dis"};
    stage_.launch(in, names, true, d_accum, stream);
}

double speed_temporal_from_accum(const void* accum, const ref::SpeedGeometry& g,
                                 const ref::SpeedOptions& o) {
    const float* r = static_cast<const float*>(accum);
    const float* d = r + std::size_t(g.operating_w) * g.operating_h;
    return channel_score(r, d, g, o, 0).score;
}

} // namespace vmaf_cuda::cuda

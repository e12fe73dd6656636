// SPDX-License-Identifier: BSD-2-Clause-Patent
// Reference SpEED (speed_chroma, speed_temporal); see speed.h for the contract and the
// libvmaf v3.2.0 functions followed. Every promotion to double of libvmaf's C is written
// out: std::sqrt / std::log2 / std::exp are always called on doubles here (C++'s float
// overloads would round differently).

#include "speed.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace vmaf_cuda::ref {

namespace {

constexpr unsigned kBlock = 5;                 // DEFAULT_BLOCK_SIZE
constexpr unsigned kElems = kBlock * kBlock;   // elements_in_block
constexpr unsigned kScales = 4;                // NUM_SCALES
constexpr double kEigEps = 1e-6;               // EIGENVALUE_EPS
constexpr int kEigMaxIters = 500;              // EIGENVALUE_MAX_ITERS

// libvmaf's valid_kernelscales (vif_tools.h), as floats.
constexpr float kValidKernelscales[] = {
    1.0f,         1.0f / 2.0f,  3.0f / 2.0f,  2.0f,         2.0f / 3.0f,  24.0f / 10.0f,
    360.0f / 97.0f, 4.0f / 3.0f, 3.5f / 3.0f, 3.75f / 3.0f, 4.25f / 3.0f, 5.0f / 3.0f,
    3.0f,         1.0f / 2.25f, 1.4746f,      1.54f,        1.6f,         1.06667f,
    0.711111f,    0.740740f,    1.111111f};

bool almost_one(double x) { return std::fabs(x - 1.0) < 1.0e-3; } // ALMOST_EQUAL

double log2d(double x) { return std::log2(x); }
float sqrt_f(float x) { return static_cast<float>(std::sqrt(static_cast<double>(x))); }

// ---- filters (vif_tools.c) ----------------------------------------------------------

int round_up_to_odd(float f) {
    const int c = static_cast<int>(std::ceil(static_cast<double>(f)));
    return c % 2 == 0 ? c + 1 : c;
}

int filter_size(int scale, float ks) { // vif_get_filter_size
    const int n = (1 << (4 - scale)) + 1;
    return std::max(round_up_to_odd(static_cast<float>(n) * ks), 3);
}

float gaussian_pdf(float x, float mean, float stdev) {
    const double xm = static_cast<double>(x - mean);
    const double sd = static_cast<double>(stdev);
    const float num = static_cast<float>(std::exp(-0.5 * xm / sd * xm / sd));
    const float den = static_cast<float>(1 / (sd * std::sqrt(2 * M_PI)));
    return num / den;
}

std::vector<float> gaussian_kernel(int size, float stdev) {
    std::vector<float> out(static_cast<std::size_t>(size));
    float sum = 0;
    const int k = (size - 1) / 2;
    for (int i = 0; i < size; i++) {
        out[i] = gaussian_pdf(static_cast<float>(i - k), 0, stdev);
        sum += out[i];
    }
    for (int i = 0; i < size; i++) out[i] /= sum;
    return out;
}

// ---- est_params helpers (speed.c), float matrices row-major n x n ------------------

int sign_of(float x) { return x >= 0 ? 1 : -1; }
float pythagoras(float x, float y) { return sqrt_f(x * x + y * y); }

float householder(float* A, int col, int start_row, int size) {
    if (size - start_row == 1) return 0.0f;
    float norm = 0;
    for (int i = start_row + 1; i < size; i++) norm += A[i * size + col] * A[i * size + col];
    const float xnorm = sqrt_f(norm);
    if (xnorm == 0.0f) return 0.0f;
    const float alpha = A[start_row * size + col];
    const float beta = static_cast<float>(-sign_of(alpha)) * pythagoras(alpha, xnorm);
    const float tau = (beta - alpha) / beta;
    const float s = alpha - beta;
    if (s != 0.0f) {
        for (int i = start_row; i < size; i++) A[i * size + col] /= s;
        A[start_row * size + col] = beta;
    }
    return tau;
}

void tridiagonalize(float* A, int size, float* d, float* sd) {
    float v[kElems], x[kElems];
    for (int i = 0; i < size - 2; i++) {
        const float tau = householder(A, i, i + 1, size);
        for (int j = i + 1; j < size; j++) v[j] = A[j * size + i];
        if (tau != 0.0f) {
            A[(i + 1) * size + i] = v[i + 1];
            v[i + 1] = 1.0f;
            const int st = i + 1;
            for (int r = st; r < size; r++) {
                x[r] = 0.0f;
                for (int c = st; c < size; c++) x[r] += tau * A[r * size + c] * v[c];
            }
            float xv = 0;
            for (int r = st; r < size; r++) xv += x[r] * v[r];
            const float alpha =
                static_cast<float>(-0.5 * static_cast<double>(tau) * static_cast<double>(xv));
            for (int r = st; r < size; r++) x[r] += alpha * v[r];
            for (int r = st; r < size; r++)
                for (int c = st; c < size; c++) A[r * size + c] -= x[r] * v[c] + v[r] * x[c];
        }
    }
    for (int i = 0; i < size; i++) d[i] = A[i * size + i];
    for (int i = 0; i < size - 1; i++) sd[i] = A[(i + 1) * size + i];
}

void chop_small(float* d, float* sd, int size) {
    for (int i = 0; i < size - 1; i++)
        if (static_cast<double>(std::fabs(sd[i])) <
            kEigEps * static_cast<double>(std::fabs(d[i]) + std::fabs(d[i + 1])))
            sd[i] = 0.0f;
}

float trailing_eigenvalue(const float* d, const float* sd, int n) {
    const float ta = d[n - 2], tb = d[n - 1], tab = sd[n - 2];
    const float dt = static_cast<float>(static_cast<double>(ta - tb) / 2.0);
    if (dt > 0) return tb - tab * (tab / (dt + pythagoras(dt, tab)));
    if (dt == 0) return tb - std::fabs(tab);
    return tb + tab * (tab / (-dt + pythagoras(dt, tab)));
}

void create_givens(float a, float b, float* c, float* s) {
    if (b == 0) {
        *c = 1;
        *s = 0;
    } else if (std::fabs(b) > std::fabs(a)) {
        const float t = -a / b;
        const float s1 = static_cast<float>(1.0 / std::sqrt(static_cast<double>(1 + t * t)));
        *s = s1;
        *c = s1 * t;
    } else {
        const float t = -b / a;
        const float c1 = static_cast<float>(1.0 / std::sqrt(static_cast<double>(1 + t * t)));
        *c = c1;
        *s = c1 * t;
    }
}

void qr_step(float* d, float* sd, int n) {
    float mu = trailing_eigenvalue(d, sd, n);
    if (kEigEps * static_cast<double>(std::fabs(mu)) >
        static_cast<double>(std::fabs(d[0]) + std::fabs(sd[0])))
        mu = 0;
    float x = d[0] - mu;
    float z = sd[0];
    float ak = 0, bk = 0, zk = 0;
    float ap = d[0], bp = sd[0], aq = d[1];
    if (n == 2) {
        float c, s;
        create_givens(x, z, &c, &s);
        const float ap1 = c * (c * ap - s * bp) + s * (s * aq - c * bp);
        const float bp1 = c * (s * ap + c * bp) - s * (s * bp + c * aq);
        const float aq1 = s * (s * ap + c * bp) + c * (s * bp + c * aq);
        d[0] = ap1;
        sd[0] = bp1;
        d[1] = aq1;
        return;
    }
    float bq = sd[1];
    for (int k = 0; k < n - 1; k++) {
        float c, s;
        create_givens(x, z, &c, &s);
        const float bk1 = c * bk - s * zk;
        const float ap1 = c * (c * ap - s * bp) + s * (s * aq - c * bp);
        const float bp1 = c * (s * ap + c * bp) - s * (s * bp + c * aq);
        const float zp1 = -s * bq;
        const float aq1 = s * (s * ap + c * bp) + c * (s * bp + c * aq);
        const float bq1 = c * bq;
        ak = ap1;
        bk = bp1;
        zk = zp1;
        ap = aq1;
        bp = bq1;
        if (k < n - 2) aq = d[k + 2];
        if (k < n - 3) bq = sd[k + 2];
        d[k] = ak;
        if (k > 0) sd[k - 1] = bk1;
        if (k < n - 2) sd[k + 1] = bp;
        x = bk;
        z = zk;
    }
    d[n - 1] = ap;
    sd[n - 2] = bk;
}

// Square-matrix helpers of libvmaf's QR solve (n x n, row-major).
void mat_mul(float* dst, const float* x, const float* y, int n, int m) {
    // dst (n x m) = x (n x n) * y (n x m), accumulation over k ascending from 0.
    for (int i = 0; i < n * m; i++) dst[i] = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < n; k++)
            for (int j = 0; j < m; j++) dst[i * m + j] += x[i * n + k] * y[k * m + j];
}

void mat_transpose(float* m, int n) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++) std::swap(m[i * n + j], m[j * n + i]);
}

float vec_norm(const float* x, int n) {
    float sum = 0;
    for (int i = 0; i < n; i++) sum += x[i] * x[i];
    return sqrt_f(sum);
}

// matrix_qr_decomposition: Q (returned transposed back as libvmaf does) and R.
void qr_decompose(const float* A, float* Q, float* R, int n) {
    std::vector<float> z(A, A + n * n), q(n * n), t(n * n);
    std::vector<float> vec(n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) Q[i * n + j] = i == j ? 1.0f : 0.0f;
    for (int k = 0; k < n - 1; k++) {
        for (int i = 0; i < n; i++) // matrix_minor(z, k)
            for (int j = 0; j < n; j++)
                if (i < k || j < k) z[i * n + j] = i == j ? 1.0f : 0.0f;
        for (int i = 0; i < n; i++) vec[i] = z[i * n + k];
        const float norm = vec_norm(vec.data(), n);
        const int sign = sign_of(A[k * n + k]); // of the original matrix, as libvmaf
        vec[k] += static_cast<float>(sign) * norm;
        const float nv = vec_norm(vec.data(), n);
        for (int i = 0; i < n; i++) vec[i] = vec[i] / nv;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) q[i * n + j] = -2 * vec[i] * vec[j];
        for (int i = 0; i < n; i++) q[i * n + i] += 1;
        mat_mul(t.data(), q.data(), z.data(), n, n);
        z = t;
        mat_mul(t.data(), q.data(), Q, n, n);
        std::copy(t.begin(), t.end(), Q);
    }
    mat_mul(R, Q, A, n, n);
    mat_transpose(Q, n);
}

// ---- scaling (vif_tools.c) ----------------------------------------------------------

float mirror_f(float i, float left, float right) {
    return i < left ? -i : i > right ? 2 * right - i : i;
}

void bilinear_columns(int src_w, int dst_w, int* x1a, int* x2a, float* dxa) {
    const float ratio_x = static_cast<float>(src_w) / static_cast<float>(dst_w);
    for (int x = 0; x < dst_w; x++) {
        const float xx = static_cast<float>((x + 0.5) * static_cast<double>(ratio_x) - 0.5);
        x1a[x] = static_cast<int>(mirror_f(static_cast<float>(std::floor(static_cast<double>(xx))),
                                           0, static_cast<float>(src_w - 1)));
        x2a[x] = static_cast<int>(mirror_f(static_cast<float>(std::ceil(static_cast<double>(xx))),
                                           0, static_cast<float>(src_w - 1)));
        dxa[x] = xx - static_cast<float>(x1a[x]);
    }
}

float bicubic_kernel(float t) {
    const float a = -0.75f;
    if (t < 0) t = -t;
    if (t < 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
    if (t < 2) return (((t - 5) * t + 8) * t - 4) * a;
    return 0;
}

float bicubic_at(const float* src, int width, int height, std::size_t stride, float x, float y) {
    const int x0 = static_cast<int>(std::floor(static_cast<double>(x)));
    const int y0 = static_cast<int>(std::floor(static_cast<double>(y)));
    const float dx = x - static_cast<float>(x0), dy = y - static_cast<float>(y0);
    float wx[4], wy[4];
    for (int i = -1; i <= 2; i++) {
        wx[i + 1] = bicubic_kernel(static_cast<float>(i) - dx);
        wy[i + 1] = bicubic_kernel(static_cast<float>(i) - dy);
    }
    float v = 0.0f;
    for (int j = -1; j <= 2; j++)
        for (int i = -1; i <= 2; i++) {
            const int xi = static_cast<int>(
                mirror_f(static_cast<float>(x0 + i), 0, static_cast<float>(width - 1)));
            const int yi = static_cast<int>(
                mirror_f(static_cast<float>(y0 + j), 0, static_cast<float>(height - 1)));
            v += src[static_cast<std::size_t>(yi) * stride + xi] * (wx[i + 1] * wy[j + 1]);
        }
    return v;
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

float lanczos4_at(const float* src, int width, int height, std::size_t stride, float x, float y) {
    const int a = 4;
    const int x0 = static_cast<int>(std::floor(static_cast<double>(x)));
    const int y0 = static_cast<int>(std::floor(static_cast<double>(y)));
    const float dx = x - static_cast<float>(x0), dy = y - static_cast<float>(y0);
    float value = 0.0f, weight_sum = 0.0f;
    float wx[9], wy[9];
    for (int i = -a; i <= a; i++) {
        wx[i + a] = lanczos4_kernel(static_cast<float>(i) - dx, static_cast<float>(a));
        wy[i + a] = lanczos4_kernel(static_cast<float>(i) - dy, static_cast<float>(a));
    }
    for (int iy = -a; iy <= a; iy++)
        for (int ix = -a; ix <= a; ix++) {
            const float weight = wx[ix + a] * wy[iy + a];
            weight_sum += weight;
            const int xi = static_cast<int>(
                mirror_f(static_cast<float>(x0 + ix), 0, static_cast<float>(width - 1)));
            const int yi = static_cast<int>(
                mirror_f(static_cast<float>(y0 + iy), 0, static_cast<float>(height - 1)));
            value += src[static_cast<std::size_t>(yi) * stride + xi] * weight;
        }
    return value / weight_sum;
}

void rescale(const float* src, float* dst, const SpeedGeometry& g, std::size_t stride,
             SpeedScaleMethod m, const SpeedScratch& s) {
    const int src_w = static_cast<int>(g.original_w), src_h = static_cast<int>(g.original_h);
    const int dst_w = static_cast<int>(g.scaled_w), dst_h = static_cast<int>(g.scaled_h);
    if (src_w == dst_w && src_h == dst_h) {
        std::memcpy(dst, src, stride * static_cast<std::size_t>(dst_h) * sizeof(float));
        return;
    }
    const float ratio_y = static_cast<float>(src_h) / static_cast<float>(dst_h);
    if (m == SpeedScaleMethod::nearest) {
        const float ratio_x = static_cast<float>(src_w) / static_cast<float>(dst_w);
        for (int y = 0; y < dst_h; y++)
            for (int x = 0; x < dst_w; x++) {
                const int ry = static_cast<int>(static_cast<float>(y) * ratio_y);
                const int rx = static_cast<int>(static_cast<float>(x) * ratio_x);
                dst[y * stride + x] = src[ry * stride + rx];
            }
        return;
    }
    if (m == SpeedScaleMethod::bicubic || m == SpeedScaleMethod::lanczos4) {
        const float ratio_x = static_cast<float>(src_w) / static_cast<float>(dst_w);
        for (int y = 0; y < dst_h; y++) {
            const float yy = static_cast<float>((y + 0.5) * static_cast<double>(ratio_y) - 0.5);
            for (int x = 0; x < dst_w; x++) {
                const float xx =
                    static_cast<float>((x + 0.5) * static_cast<double>(ratio_x) - 0.5);
                dst[y * stride + x] = m == SpeedScaleMethod::bicubic
                                          ? bicubic_at(src, src_w, src_h, stride, xx, yy)
                                          : lanczos4_at(src, src_w, src_h, stride, xx, yy);
            }
        }
        return;
    }
    for (int y = 0; y < dst_h; y++) { // bilinear
        const float yy = static_cast<float>((y + 0.5) * static_cast<double>(ratio_y) - 0.5);
        const int y1 = static_cast<int>(mirror_f(static_cast<float>(std::floor(static_cast<double>(yy))),
                                                 0, static_cast<float>(src_h - 1)));
        const int y2 = static_cast<int>(mirror_f(static_cast<float>(std::ceil(static_cast<double>(yy))),
                                                 0, static_cast<float>(src_h - 1)));
        const float dy = yy - static_cast<float>(y1);
        const float* r1 = src + static_cast<std::size_t>(y1) * stride;
        const float* r2 = src + static_cast<std::size_t>(y2) * stride;
        float* drow = dst + static_cast<std::size_t>(y) * stride;
        for (int x = 0; x < dst_w; x++) {
            const int x1 = s.bx1[x], x2 = s.bx2[x];
            const float dx = s.bdx[x];
            drow[x] = (1 - dy) * (1 - dx) * r1[x1] + (1 - dy) * dx * r1[x2] +
                      dy * (1 - dx) * r2[x1] + dy * dx * r2[x2];
        }
    }
}

// ---- names (feature_name.c) ---------------------------------------------------------

std::string fmt_g(double v) {
    char b[64];
    std::snprintf(b, sizeof b, "%g", v);
    return b;
}

const char* method_name(SpeedScaleMethod m) {
    switch (m) {
    case SpeedScaleMethod::nearest: return "nearest";
    case SpeedScaleMethod::bilinear: return "bilinear";
    case SpeedScaleMethod::bicubic: return "bicubic";
    case SpeedScaleMethod::lanczos4: return "lanczos4";
    }
    return "nearest";
}

// Suffix of the non-default options, in the alphabetical order of their option names:
// kernelscale, max_val, nn_floor, prescale, prescale_method, sigma_nn, then
// use_ref_diff (temporal) or weight_var_mode (chroma).
std::string option_suffix(const SpeedOptions& o, bool chroma) {
    const SpeedOptions d{};
    std::string s;
    if (o.kernelscale != d.kernelscale) s += "_ks_" + fmt_g(o.kernelscale);
    if (o.max_val != d.max_val) s += "_mxv_" + fmt_g(o.max_val);
    if (o.nn_floor != d.nn_floor) s += "_nnf_" + fmt_g(o.nn_floor);
    if (o.prescale != d.prescale) s += "_ps_" + fmt_g(o.prescale);
    if (o.prescale_method != d.prescale_method)
        s += std::string("_psm_") + method_name(o.prescale_method);
    if (o.sigma_nn != d.sigma_nn) s += "_snn_" + fmt_g(o.sigma_nn);
    if (chroma) {
        if (o.weight_var_mode != d.weight_var_mode)
            s += "_wvm_" + std::to_string(o.weight_var_mode);
    } else if (o.use_ref_diff != d.use_ref_diff) {
        s += "_urd";
    }
    return s;
}

unsigned scaled_dim(unsigned n, double prescale) {
    return static_cast<unsigned>(static_cast<int>(static_cast<double>(n) * prescale + 0.5));
}

unsigned min_plane_dim(double prescale) {
    unsigned n = 1;
    while ((scaled_dim(n, prescale) >> kScales) / kBlock == 0) ++n;
    return n;
}

} // namespace

// ---- options, geometry, sizes, names ------------------------------------------------

void speed_validate(const SpeedOptions& o) {
    auto range = [](double v, double lo, double hi, const char* name) {
        if (!(v >= lo && v <= hi))
            throw std::invalid_argument(std::string("SpEED: ") + name + " " + fmt_g(v) +
                                        " outside [" + fmt_g(lo) + ", " + fmt_g(hi) + "]");
    };
    range(o.kernelscale, 0.1, 4.0, "speed_kernelscale");
    range(o.prescale, 0.1, 4.0, "speed_prescale");
    range(o.sigma_nn, 0.1, 2.0, "speed_sigma_nn");
    range(o.nn_floor, 0.0, 1.0, "speed_nn_floor");
    range(o.max_val, 0.0, 1000.0, "speed_max_val");
    if (o.weight_var_mode < 0 || o.weight_var_mode > 6)
        throw std::invalid_argument("SpEED: speed_weight_var_mode " +
                                    std::to_string(o.weight_var_mode) + " outside 0..6");
    const float ks = static_cast<float>(o.kernelscale);
    bool ok = false;
    for (float v : kValidKernelscales) ok = ok || std::fabs(ks - v) < 1e-3f;
    if (!ok)
        throw std::invalid_argument("SpEED: invalid speed_kernelscale " + fmt_g(o.kernelscale));
}

SpeedGeometry speed_geometry(unsigned width, unsigned height, const SpeedOptions& o) {
    SpeedGeometry g;
    g.original_w = width;
    g.original_h = height;
    g.scaled_w = scaled_dim(width, o.prescale);
    g.scaled_h = scaled_dim(height, o.prescale);
    g.alloc_w = std::max(g.original_w, g.scaled_w);
    g.alloc_h = std::max(g.original_h, g.scaled_h);
    g.operating_w = g.scaled_w >> kScales;
    g.operating_h = g.scaled_h >> kScales;
    g.truncated_w = g.operating_w / kBlock * kBlock;
    g.truncated_h = g.operating_h / kBlock * kBlock;
    g.blocks_x = g.truncated_w / kBlock;
    g.blocks_y = g.truncated_h / kBlock;
    g.num_blocks = g.blocks_x * g.blocks_y;
    g.sub_w = g.truncated_w >= kBlock ? g.truncated_w - kBlock + 1 : 0;
    g.sub_h = g.truncated_h >= kBlock ? g.truncated_h - kBlock + 1 : 0;
    g.rescale = !almost_one(o.prescale);
    return g;
}

SpeedSize speed_chroma_plane_size(unsigned luma_w, unsigned luma_h, unsigned chroma) {
    switch (chroma) {
    case 420: return {luma_w / 2, luma_h / 2};
    case 422: return {luma_w / 2, luma_h};
    case 444: return {luma_w, luma_h};
    default:
        throw std::invalid_argument("speed_chroma: chroma subsampling " + std::to_string(chroma) +
                                    " (expected 420, 422 or 444)");
    }
}

SpeedSize speed_chroma_min_frame_size(unsigned chroma, const SpeedOptions& o) {
    speed_validate(o); // prescale in [0.1, 4]: the search below ends (n <= 800)
    const unsigned p = min_plane_dim(o.prescale);
    (void)speed_chroma_plane_size(1, 1, chroma); // validates `chroma`
    // The plane is w / 2 (rounding down) where subsampled: the smallest luma size is 2p.
    const unsigned sx = chroma == 444 ? 1 : 2, sy = chroma == 420 ? 2 : 1;
    return {p * sx, p * sy};
}

SpeedSize speed_temporal_min_frame_size(const SpeedOptions& o) {
    speed_validate(o);
    const unsigned p = min_plane_dim(o.prescale);
    return {p, p};
}

bool speed_chroma_accepts(unsigned luma_w, unsigned luma_h, unsigned chroma,
                          const SpeedOptions& o) {
    const SpeedSize p = speed_chroma_plane_size(luma_w, luma_h, chroma);
    return speed_geometry(p.width, p.height, o).valid();
}

std::vector<std::string> speed_chroma_output_names(const SpeedOptions& o) {
    const std::string suf = option_suffix(o, true);
    return {"speed_chroma_u" + suf, "speed_chroma_v" + suf, "speed_chroma_uv" + suf};
}

std::string speed_temporal_output_name(const SpeedOptions& o) {
    return "speed_temporal" + option_suffix(o, false);
}

// ---- scratch ------------------------------------------------------------------------

SpeedScratch::SpeedScratch(unsigned plane_w, unsigned plane_h, const SpeedOptions& o)
    : g_(speed_geometry(plane_w, plane_h, o)), o_(o) {
    speed_validate(o);
    if (!g_.valid())
        throw std::invalid_argument(
            "SpEED: image too small, operating width or height is 0 (plane " +
            std::to_string(plane_w) + "x" + std::to_string(plane_h) + ", scaled " +
            std::to_string(g_.scaled_w) + "x" + std::to_string(g_.scaled_h) +
            "; the scaled plane must be at least 80x80)");
    if (!g_.rescale && (g_.scaled_w != plane_w || g_.scaled_h != plane_h))
        throw std::invalid_argument("SpEED: speed_prescale within 1e-3 of 1 but changing the "
                                    "size (libvmaf then reads unset samples)");
    stride_ = g_.alloc_w;
    const std::size_t n = stride_ * g_.alloc_h;
    ref.assign(n, 0.0f);
    dis.assign(n, 0.0f);
    tmp.assign(n, 0.0f);
    blur.assign(n, 0.0f);
    row.assign(g_.alloc_w, 0.0f);
    taps_aa = speed_filter_taps(true, o.kernelscale);
    taps_lm = speed_filter_taps(false, o.kernelscale);
    if (g_.rescale && o.prescale_method == SpeedScaleMethod::bilinear) {
        bx1.assign(g_.scaled_w, 0);
        bx2.assign(g_.scaled_w, 0);
        bdx.assign(g_.scaled_w, 0.0f);
        bilinear_columns(static_cast<int>(g_.original_w), static_cast<int>(g_.scaled_w),
                         bx1.data(), bx2.data(), bdx.data());
    }
    for (SpeedBlockStats* st : {&ref_stats, &dis_stats}) {
        st->entropies.assign(g_.num_blocks, 0.0f);
        st->variances.assign(g_.num_blocks, 0.0f);
    }
}

// ---- per-pixel stages ---------------------------------------------------------------

void speed_load_plane(const LumaView& src, unsigned w, unsigned h, float* dst,
                      std::size_t stride) {
    if (src.width < w || src.height < h)
        throw std::invalid_argument("SpEED: plane smaller than the operating plane size");
    float scaler;
    switch (src.bpc) {
    case 8: scaler = 1.0f; break;
    case 10: scaler = 4.0f; break;
    case 12: scaler = 16.0f; break;
    case 16: scaler = 256.0f; break;
    default:
        throw std::invalid_argument("SpEED: bpc " + std::to_string(src.bpc) +
                                    " (libvmaf v3.2.0 converts 8, 10, 12 and 16 bits only)");
    }
    for (unsigned y = 0; y < h; ++y) {
        float* d = dst + static_cast<std::size_t>(y) * stride;
        if (src.bpc == 8) {
            const std::uint8_t* r = src.row8(y);
            for (unsigned x = 0; x < w; ++x) d[x] = static_cast<float>(r[x]) + -128.0f;
        } else {
            const std::uint16_t* r = src.row16(y);
            for (unsigned x = 0; x < w; ++x) d[x] = static_cast<float>(r[x]) / scaler + -128.0f;
        }
    }
}

std::vector<float> speed_filter_taps(bool antialias, double ks) {
    const float k = static_cast<float>(ks);
    if (antialias) {
        const int size = filter_size(1, k);
        // sqrt(scale) * window_size / 5.0f, in double, passed as float
        const float stdev =
            static_cast<float>(std::sqrt(static_cast<double>(kScales)) * size / 5.0f);
        return gaussian_kernel(size, stdev);
    }
    const int size = filter_size(static_cast<int>(kScales), k);
    return gaussian_kernel(size, static_cast<float>(size) / 5.0f);
}

void speed_filter(const std::vector<float>& taps, const float* src, float* dst, float* row,
                  unsigned w_, unsigned h_, std::size_t stride) {
    const int w = static_cast<int>(w_), h = static_cast<int>(h_);
    const int fw = static_cast<int>(taps.size());
    for (int i = 0; i < h; ++i) {
        for (int j = 0; j < w; ++j) {
            float acc = 0;
            for (int fi = 0; fi < fw; ++fi) {
                int ii = i - fw / 2 + fi;
                ii = ii < 0 ? -ii : (ii >= h ? 2 * h - ii - 2 : ii);
                acc += taps[fi] * src[static_cast<std::size_t>(ii) * stride + j];
            }
            row[j] = acc;
        }
        for (int j = 0; j < w; ++j) {
            float acc = 0;
            for (int fj = 0; fj < fw; ++fj) {
                int jj = j - fw / 2 + fj;
                jj = jj < 0 ? -jj : (jj >= w ? 2 * w - jj - 2 : jj);
                acc += taps[fj] * row[jj];
            }
            dst[static_cast<std::size_t>(i) * stride + j] = acc;
        }
    }
}

void speed_rescale(const float* src, float* dst, const SpeedScratch& s) {
    rescale(src, dst, s.geometry(), s.stride(), s.options().prescale_method, s);
}

void speed_decimate16(const float* src, float* dst, unsigned w, unsigned h,
                      std::size_t stride) {
    for (unsigned i = 0; i < h / 16; ++i) // vif_dec16_s
        for (unsigned j = 0; j < w / 16; ++j) dst[i * stride + j] = src[(i * 16) * stride + j * 16];
}

void speed_filter_and_downscale(float* plane, SpeedScratch& s) {
    const SpeedGeometry& g = s.geometry();
    const std::size_t stride = s.stride();
    if (g.rescale) {
        std::memcpy(s.tmp.data(), plane, stride * g.alloc_h * sizeof(float));
        speed_rescale(s.tmp.data(), plane, s);
    }
    speed_filter(s.taps_aa, plane, s.blur.data(), s.row.data(), g.scaled_w, g.scaled_h, stride);
    speed_decimate16(s.blur.data(), plane, g.scaled_w, g.scaled_h, stride);
    const unsigned ow = g.scaled_w >> kScales, oh = g.scaled_h >> kScales;
    speed_filter(s.taps_lm, plane, s.blur.data(), s.row.data(), ow, oh, stride);
    for (unsigned i = 0; i < oh; ++i)
        for (unsigned j = 0; j < ow; ++j) plane[i * stride + j] -= s.blur[i * stride + j];
}

// ---- est_params -------------------------------------------------------------------

void speed_covariance(const float* data, std::size_t stride, const SpeedGeometry& g,
                      float* cov) {
    float means[kElems];
    const std::size_t count = std::size_t{g.sub_w} * g.sub_h;
    for (unsigned r0 = 0; r0 < kBlock; ++r0)
        for (unsigned c0 = 0; c0 < kBlock; ++c0) {
            float sum = 0;
            for (unsigned i = 0; i < g.sub_h; ++i)
                for (unsigned j = 0; j < g.sub_w; ++j) sum += data[(r0 + i) * stride + (c0 + j)];
            means[r0 * kBlock + c0] = sum / static_cast<float>(count);
        }
    for (unsigned a = 0; a < kElems; ++a)
        for (unsigned b = 0; b <= a; ++b) {
            const double mx = means[a], my = means[b];
            const float* dx = data + (a / kBlock) * stride + (a % kBlock);
            const float* dy = data + (b / kBlock) * stride + (b % kBlock);
            double sum = 0;
            for (unsigned i = 0; i < g.sub_h; ++i)
                for (unsigned j = 0; j < g.sub_w; ++j) {
                    const double vx = dx[i * stride + j], vy = dy[i * stride + j];
                    sum += (vx - mx) * (vy - my);
                }
            const float c = static_cast<float>(sum / static_cast<double>(count));
            cov[a * kElems + b] = c;
            cov[b * kElems + a] = c;
        }
}

void speed_eigenvalues(const float* cov, float* eig) {
    float A[kElems * kElems], d[kElems], sd[kElems];
    std::memcpy(A, cov, sizeof A);
    const int size = static_cast<int>(kElems);
    tridiagonalize(A, size, d, sd);
    chop_small(d, sd, size);
    int b = size - 1, iter = 0;
    while (b > 0 && iter < kEigMaxIters) {
        if (sd[b - 1] == 0.0f) {
            b--;
            continue;
        }
        int a = b - 1;
        while (a > 0) {
            if (sd[a - 1] == 0.0f) break;
            a--;
        }
        const int n = b - a + 1;
        qr_step(d + a, sd + a, n);
        chop_small(d + a, sd + a, n);
        iter++;
    }
    for (int i = 0; i < size; i++) eig[i] = d[i];
}

void speed_plane_model(const float* data, std::size_t stride, const SpeedGeometry& g,
                       SpeedPlaneModel& m) {
    speed_covariance(data, stride, g, m.cov);
    speed_eigenvalues(m.cov, m.eig);
    bool regular = true;
    for (unsigned i = 0; i < kElems; ++i)
        if (static_cast<double>(m.eig[i]) < kEigEps) regular = false;
    m.singular = !regular;
    std::fill(std::begin(m.qt), std::end(m.qt), 0.0f);
    std::fill(std::begin(m.r), std::end(m.r), 0.0f);
    if (!regular) return;
    const int n = static_cast<int>(kElems);
    qr_decompose(m.cov, m.qt, m.r, n); // Q as libvmaf returns it (transposed) ...
    mat_transpose(m.qt, n);            // ... and transposed back by solve_linear_system
    // solve_triangular_system fails (-EINVAL) on the first |R_ii| < 1e-6 from the bottom;
    // libvmaf then zeroes the whole solution, so any such diagonal entry decides.
    for (int i = 0; i < n; ++i)
        if (static_cast<double>(std::fabs(m.r[i * n + i])) < kEigEps) m.singular = true;
}

void speed_block_stats(const SpeedPlaneModel& m, const float* y, float sigma_nn,
                       float* entropy, float* variance) {
    constexpr int n = static_cast<int>(kElems);
    float x[kElems] = {};
    if (!m.singular) {
        float t[kElems];
        for (int i = 0; i < n; ++i) { // (Q^T Y)_i, matrix_mul's order: k ascending from 0
            t[i] = 0;
            for (int k = 0; k < n; ++k) t[i] += m.qt[i * n + k] * y[k];
        }
        for (int i = n - 1; i >= 0; i--) { // back substitution
            float v = t[i];
            for (int k = i + 1; k < n; k++) v -= x[k] * m.r[i * n + k];
            x[i] = v / m.r[i * n + i];
        }
    }
    const float denom = static_cast<float>(kElems);
    float sum = (x[0] * y[0]) / denom;
    for (int k = 1; k < n; ++k) sum += (x[k] * y[k]) / denom;
    float e = 0;
    const double log_2pie = std::log2(2 * M_PI * M_E);
    for (int k = 0; k < n; ++k) {
        const float L = m.eig[k] < 0 ? 0 : m.eig[k];
        e = static_cast<float>(static_cast<double>(e) +
                               (log2d(static_cast<double>(L * sum + sigma_nn)) + log_2pie));
    }
    *entropy = e;
    *variance = sum;
}

void speed_est_params(const float* data, std::size_t stride, const SpeedGeometry& g,
                      double sigma_nn, SpeedBlockStats& out) {
    SpeedPlaneModel m;
    speed_plane_model(data, stride, g, m);
    out.singular = m.singular;
    out.entropies.assign(g.num_blocks, 0.0f);
    out.variances.assign(g.num_blocks, 0.0f);
    float y[kElems];
    for (unsigned by = 0; by < g.blocks_y; ++by)
        for (unsigned bx = 0; bx < g.blocks_x; ++bx) {
            for (unsigned k = 0; k < kElems; ++k) // block pixel k, row-major in the block
                y[k] = data[(by * kBlock + k / kBlock) * stride + bx * kBlock + k % kBlock];
            const unsigned b = by * g.blocks_x + bx;
            speed_block_stats(m, y, static_cast<float>(sigma_nn), &out.entropies[b],
                              &out.variances[b]);
        }
}

float speed_score(const SpeedGeometry& g, const SpeedBlockStats& r, const SpeedBlockStats& d,
                  double sigma_nn_d, double nn_floor_d, int mode) {
    const float sigma_nn = static_cast<float>(sigma_nn_d);
    const float nn_floor = static_cast<float>(nn_floor_d);
    const float base = static_cast<float>(
        static_cast<double>(kElems) *
        (log2d(static_cast<double>((1 + nn_floor) * sigma_nn)) + std::log2(2 * M_PI * M_E)));
    float score = 0;
    for (unsigned i = 0; i < g.num_blocks; ++i) {
        const float er = r.entropies[i], ed = d.entropies[i];
        const float vr = r.variances[i], vd = d.variances[i];
        if (er < base && ed < base) continue; // score += 0 (exact)
        const double lr = log2d(static_cast<double>(1 + vr));
        const double ld = log2d(static_cast<double>(1 + vd));
        // (V_ref + V_dis) is a float sum, then / 2.0 in double
        const double avg = log2d(1 + static_cast<double>(vr + vd) / 2.0);
        float sr, sd;
        switch (mode) {
        case 0: sr = static_cast<float>(er * lr); sd = static_cast<float>(ed * ld); break;
        case 1: sr = static_cast<float>(er * lr); sd = static_cast<float>(ed * lr); break;
        case 2: sr = static_cast<float>(er * ld); sd = static_cast<float>(ed * ld); break;
        case 3: sr = static_cast<float>(er * avg); sd = static_cast<float>(ed * avg); break;
        case 4: sr = static_cast<float>(er * lr); sd = static_cast<float>(ed * avg); break;
        case 5:
            sr = static_cast<float>(er * lr);
            sd = static_cast<float>(
                ed * log2d(1 + (0.75 * static_cast<double>(vr) + 0.25 * static_cast<double>(vd))));
            break;
        case 6:
            sr = static_cast<float>(er * lr);
            sd = static_cast<float>(
                ed * log2d(1 + (0.25 * static_cast<double>(vr) + 0.75 * static_cast<double>(vd))));
            break;
        default: throw std::invalid_argument("SpEED: speed_weight_var_mode outside 0..6");
        }
        score += std::fabs(sr - sd);
    }
    return score / static_cast<float>(g.num_blocks);
}

float speed_extract_score(float* ref, float* dis, SpeedScratch& s, int mode, bool* err) {
    const SpeedGeometry& g = s.geometry();
    const SpeedOptions& o = s.options();
    speed_filter_and_downscale(ref, s);
    speed_est_params(ref, s.stride(), g, o.sigma_nn, s.ref_stats);
    speed_filter_and_downscale(dis, s);
    speed_est_params(dis, s.stride(), g, o.sigma_nn, s.dis_stats);
    const bool er = s.ref_stats.singular, ed = s.dis_stats.singular;
    if (err) *err = er || ed;
    if (er != ed) return 0.0f;
    return speed_score(g, s.ref_stats, s.dis_stats, o.sigma_nn, o.nn_floor, mode);
}

// ---- speed_chroma / speed_temporal --------------------------------------------------

SpeedChannel speed_chroma_channel(const LumaView& ref, const LumaView& dis, SpeedScratch& s) {
    const SpeedGeometry& g = s.geometry();
    speed_load_plane(ref, g.original_w, g.original_h, s.ref.data(), s.stride());
    speed_load_plane(dis, g.original_w, g.original_h, s.dis.data(), s.stride());
    SpeedChannel c;
    c.score = speed_extract_score(s.ref.data(), s.dis.data(), s, s.options().weight_var_mode,
                                  &c.err);
    return c;
}

SpeedChromaScores speed_chroma_finish(const SpeedChannel& u, const SpeedChannel& v,
                                      double max_val) {
    float uv;
    if (u.err && !v.err) uv = v.score;
    else if (v.err && !u.err) uv = u.score;
    else uv = static_cast<float>(static_cast<double>(u.score + v.score) / 2.0);
    auto clip = [max_val](float x) { return static_cast<double>(x) < max_val ? x : max_val; };
    return {clip(u.score), clip(v.score), clip(uv)};
}

SpeedChromaScores speed_chroma(const LumaView& ref_u, const LumaView& ref_v,
                               const LumaView& dis_u, const LumaView& dis_v, SpeedScratch& s) {
    const SpeedChannel u = speed_chroma_channel(ref_u, dis_u, s);
    const SpeedChannel v = speed_chroma_channel(ref_v, dis_v, s);
    return speed_chroma_finish(u, v, s.options().max_val);
}

SpeedTemporal::SpeedTemporal(unsigned luma_w, unsigned luma_h, const SpeedOptions& o)
    : s_(luma_w, luma_h, o) {
    if (s_.geometry().alloc_h != luma_h || s_.geometry().alloc_w != luma_w)
        throw std::invalid_argument("speed_temporal: speed_prescale > 1 is not supported "
                                    "(libvmaf's temporal frame buffers are too small for it)");
    const std::size_t n = s_.stride() * luma_h;
    prev_ref_.assign(n, 0.0f);
    prev_dis_.assign(n, 0.0f);
    cur_ref_.assign(n, 0.0f);
    cur_dis_.assign(n, 0.0f);
}

double SpeedTemporal::push(const LumaView& ref_y, const LumaView& dis_y) {
    const SpeedGeometry& g = s_.geometry();
    const std::size_t stride = s_.stride();
    speed_load_plane(ref_y, g.original_w, g.original_h, cur_ref_.data(), stride);
    speed_load_plane(dis_y, g.original_w, g.original_h, cur_dis_.data(), stride);
    const unsigned index = index_++;
    double score = 0.0;
    if (index > 0) {
        const bool urd = s_.options().use_ref_diff;
        for (unsigned y = 0; y < g.original_h; ++y)
            for (unsigned x = 0; x < g.original_w; ++x) {
                const std::size_t i = y * stride + x;
                s_.ref[i] = prev_ref_[i] - cur_ref_[i];
                s_.dis[i] = prev_dis_[i] - (urd ? cur_ref_[i] : cur_dis_[i]);
            }
        score = speed_extract_score(s_.ref.data(), s_.dis.data(), s_, 0, nullptr);
    }
    prev_ref_.swap(cur_ref_);
    prev_dis_.swap(cur_dis_);
    return score;
}

} // namespace vmaf_cuda::ref

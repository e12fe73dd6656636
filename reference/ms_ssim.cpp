// SPDX-License-Identifier: BSD-2-Clause-Patent
// Reference float_ms_ssim; see ms_ssim.h for the contract and the libvmaf functions followed.

#include "ms_ssim.h"

#include <math.h>

#include <stdexcept>
#include <string>

#include "ssim.h"

namespace vmaf_cuda::ref {

namespace {

// g_lpf of libvmaf's ms_ssim.c (9/7 biorthogonal wavelet low-pass, float constants).
constexpr int kLpfLen = 9;
constexpr float kLpf[kLpfLen * kLpfLen] = {
    0.000714f,  -0.000450f, -0.002090f, 0.007132f,  0.016114f,  0.007132f,  -0.002090f,
    -0.000450f, 0.000714f,  -0.000450f, 0.000283f,  0.001316f,  -0.004490f, -0.010146f,
    -0.004490f, 0.001316f,  0.000283f,  -0.000450f, -0.002090f, 0.001316f,  0.006115f,
    -0.020867f, -0.047149f, -0.020867f, 0.006115f,  0.001316f,  -0.002090f, 0.007132f,
    -0.004490f, -0.020867f, 0.071207f,  0.160885f,  0.071207f,  -0.020867f, -0.004490f,
    0.007132f,  0.016114f,  -0.010146f, -0.047149f, 0.160885f,  0.363505f,  0.160885f,
    -0.047149f, -0.010146f, 0.016114f,  0.007132f,  -0.004490f, -0.020867f, 0.071207f,
    0.160885f,  0.071207f,  -0.020867f, -0.004490f, 0.007132f,  -0.002090f, 0.001316f,
    0.006115f,  -0.020867f, -0.047149f, -0.020867f, 0.006115f,  0.001316f,  -0.002090f,
    -0.000450f, 0.000283f,  0.001316f,  -0.004490f, -0.010146f, -0.004490f, 0.001316f,
    0.000283f,  -0.000450f, 0.000714f,  -0.000450f, -0.002090f, 0.007132f,  0.016114f,
    0.007132f,  -0.002090f, -0.000450f, 0.000714f,
};

constexpr float kAlphas[kMsSsimScales] = {0.0000f, 0.0000f, 0.0000f, 0.0000f, 0.1333f};
constexpr float kBetas[kMsSsimScales] = {0.0448f, 0.2856f, 0.3001f, 0.2363f, 0.1333f};
constexpr float kGammas[kMsSsimScales] = {0.0448f, 0.2856f, 0.3001f, 0.2363f, 0.1333f};

// libvmaf's check in compute_ms_ssim: every scale (halving rounding down) >= 11.
bool size_ok(unsigned w, unsigned h) {
    for (int i = 0; i < kMsSsimScales; i++) {
        if (w < unsigned(kIqaGaussianLen) || h < unsigned(kIqaGaussianLen)) return false;
        w /= 2;
        h /= 2;
    }
    return true;
}

} // namespace

const float* ms_ssim_alphas() { return kAlphas; }
const float* ms_ssim_betas() { return kBetas; }
const float* ms_ssim_gammas() { return kGammas; }
IqaKernel2d ms_ssim_lowpass() { return {kLpf, kLpfLen}; }

unsigned float_ms_ssim_min_size() {
    unsigned n = 1;
    while (!size_ok(n, n)) n++;
    return n; // 176
}

void float_ms_ssim_check_size(unsigned width, unsigned height) {
    if (size_ok(width, height)) return;
    const std::string m = std::to_string(float_ms_ssim_min_size());
    throw std::invalid_argument("float_ms_ssim: frame size " + std::to_string(width) + "x" +
                                std::to_string(height) + " is below its smallest size " + m +
                                "x" + m + " (libvmaf: \"scale below 1x1!\")");
}

void float_ms_ssim_pyramid(const LumaView& ref, const LumaView& dis, MsSsimPyramid& out) {
    if (ref.width != dis.width || ref.height != dis.height || ref.bpc != dis.bpc)
        throw std::invalid_argument("float_ms_ssim: ref and dis planes differ in size or bpc");
    float_ms_ssim_check_size(ref.width, ref.height);
    iqa_picture_to_float(ref, out.ref[0]);
    iqa_picture_to_float(dis, out.dis[0]);
    out.w[0] = int(ref.width);
    out.h[0] = int(ref.height);
    const IqaKernel2d lpf = ms_ssim_lowpass();
    for (int k = 1; k < kMsSsimScales; k++) {
        const int pw = out.w[k - 1], ph = out.h[k - 1];
        const int w = pw / 2 + (pw & 1), h = ph / 2 + (ph & 1);
        out.ref[k].resize(std::size_t(w) * h);
        out.dis[k].resize(std::size_t(w) * h);
        iqa_decimate(out.ref[k - 1].data(), pw, ph, 2, lpf, out.ref[k].data(), nullptr, nullptr);
        iqa_decimate(out.dis[k - 1].data(), pw, ph, 2, lpf, out.dis[k].data(), &out.w[k],
                     &out.h[k]);
    }
}

double float_ms_ssim_combine(const IqaSsimMeans (&means)[kMsSsimScales]) {
    double msssim = 1.0;
    for (int k = 0; k < kMsSsimScales; k++)
        msssim *= ::pow(double(means[k].l), double(kAlphas[k])) *
                  ::pow(double(means[k].c), double(kBetas[k])) *
                  ::pow(double(means[k].s), double(kGammas[k]));
    return msssim;
}

FloatMsSsimScores float_ms_ssim(const LumaView& ref, const LumaView& dis,
                                const FloatMsSsimOptions& opt) {
    MsSsimPyramid pyr;
    float_ms_ssim_pyramid(ref, dis, pyr);
    IqaSsimMeans means[kMsSsimScales];
    FloatMsSsimScores s{};
    for (int k = 0; k < kMsSsimScales; k++) {
        means[k] = iqa_ssim(pyr.ref[k].data(), pyr.dis[k].data(), pyr.w[k], pyr.h[k]);
        s.l[k] = means[k].l;
        s.c[k] = means[k].c;
        s.s[k] = means[k].s;
    }
    s.ms_ssim = float_ms_ssim_combine(means);
    if (opt.enable_db)
        s.ms_ssim = float_ssim_to_db(s.ms_ssim, ref.width, ref.height, ref.bpc, opt.clip_db);
    return s;
}

} // namespace vmaf_cuda::ref

// SPDX-License-Identifier: BSD-2-Clause-Patent
// ADM contrast sensitivity weights (adm_csf_mode 0..3) of libvmaf v3.2.0: Watson 97
// (integer_adm.c dwt_quant_step), Barten (barten_csf_tools.h barten_csf,
// barten_rod_cone_sens, barten_mtf) and the tabulated Barten/Watson blends
// (barten_watson_blend_csf, barten_watson_blend_csf_mae).
//
// Every expression keeps libvmaf's C types: float variables, and C's double <math.h>
// functions (pow, exp, log10) on float arguments promoted to double. The calls below
// cast to double explicitly so that C++'s float overloads (powf, expf) are never picked.

#include "adm.h"

#include <math.h>

#include <stdexcept>
#include <string>

namespace vmaf_cuda::ref {

namespace {

constexpr double kPi = 3.14159265358979323846;

// ---------------------------------------------------------------- Watson 97 (mode 0)

// Watson et al. 1997 model for Y (7-9 biorthogonal basis), as tabulated in libvmaf.
constexpr float kWatsonA = 0.495f;
constexpr float kWatsonK = 0.466f;
constexpr float kWatsonF0 = 0.401f;
constexpr float kWatsonG[4] = {1.501f, 1.0f, 0.534f, 1.0f};
constexpr float kBasisAmplitude[6][4] = {
    {0.62171f, 0.67234f, 0.72709f, 0.67234f},
    {0.34537f, 0.41317f, 0.49428f, 0.41317f},
    {0.18004f, 0.22727f, 0.28688f, 0.22727f},
    {0.091401f, 0.11792f, 0.15214f, 0.11792f},
    {0.045943f, 0.059758f, 0.077727f, 0.059758f},
    {0.023013f, 0.030018f, 0.039156f, 0.030018f}};

/// 1 / quantisation step of DWT level `lambda`, orientation `theta` (1: h/v, 2: d).
/// Float/double mix follows libvmaf's dwt_quant_step exactly.
float watson_rfactor(int lambda, int theta, double nvd, int rdh) {
    const float r = static_cast<float>(nvd * rdh * kPi / 180.0);
    const float temp = static_cast<float>(
        log10(pow(2.0, lambda + 1) * kWatsonF0 * kWatsonG[theta] / r));
    const float kt2 = kWatsonK * temp * temp; // float arithmetic
    const float q = static_cast<float>(2.0 * kWatsonA * pow(10.0, kt2) /
                                       kBasisAmplitude[lambda][theta]);
    return 1.0f / q;
}

// ---------------------------------------------------------------- Barten (mode 1)

constexpr float kBartenAnchors[6] = {0.002, 0.02, 0.2, 2.0, 20.0, 150.0};
constexpr float kBartenParams[6][5] = {{0.0160737, 0.991265, 3.74038, 0.50722, 4.46044},
                                       {0.383873, 0.800889, 3.54104, 0.682505, 4.94958},
                                       {0.929301, 0.476505, 4.37453, 0.750315, 5.28678},
                                       {1.29776, 0.405782, 4.40602, 0.935314, 5.61425},
                                       {1.49222, 0.334278, 3.79542, 1.07327, 6.4635},
                                       {1.46213, 0.394533, 2.7755, 1.16577, 7.45665}};
constexpr float kBartenSa[4] = {30.162, 4.0627, 1.6596, 0.2712};
constexpr float kMtfA[4] = {0.424838596301290, 0.572435103936480, 0.000167576239164937,
                            0.00255872352306433};
constexpr float kMtfB[4] = {0.028, 0.37, 37.0, 360.0};
/// libvmaf's DEFAULT_ADM_CSF_LUM (cd/m2); no option sets it.
constexpr double kCsfLum = 100.0;

float linear_interpolate(float lp, float lv, float rp, float rv, float sp) {
    return lv + ((rv - lv) / (rp - lp)) * (sp - lp);
}

float barten_rod_cone_sens(float lum) {
    const float drop = kBartenSa[1], slope = kBartenSa[2], low = kBartenSa[3];
    const float q = drop / lum; // float division
    return static_cast<float>(
        kBartenSa[0] *
        pow(pow(static_cast<double>(q), static_cast<double>(slope)) + 1, -static_cast<double>(low)));
}

float barten_mtf(float sf) {
    float mtf = 0.0f;
    for (int i = 0; i <= 3; i++) {
        const float e = -kMtfB[i] * sf; // float product
        mtf = static_cast<float>(mtf + kMtfA[i] * exp(static_cast<double>(e)));
    }
    return mtf;
}

float barten_csf(int lambda, double nvd, int rdh, double lum, double csf_scale) {
    const float r = static_cast<float>(nvd * rdh * kPi / 180.0);
    const float sf = static_cast<float>(r / pow(2, lambda + 1));
    const double lo = kBartenAnchors[0], hi = kBartenAnchors[5];
    const double clamped = lum > hi ? hi : (lum < lo ? lo : lum);
    int left = 0, right = 0;
    for (int i = 0; i < 5; ++i) {
        if (clamped >= kBartenAnchors[i] && clamped <= kBartenAnchors[i + 1]) {
            left = i;
            right = i + 1;
            break;
        }
    }
    const float lp = static_cast<float>(log10(static_cast<double>(kBartenAnchors[left])));
    const float rp = static_cast<float>(log10(static_cast<double>(kBartenAnchors[right])));
    const float sp = static_cast<float>(log10(clamped));
    float p[4];
    for (int k = 0; k < 4; ++k)
        p[k] = linear_interpolate(lp, kBartenParams[left][k + 1], rp, kBartenParams[right][k + 1], sp);
    const float ps = p[0] * sf; // float product
    const float a = static_cast<float>(1.0f + pow(static_cast<double>(ps), static_cast<double>(p[1])));
    const float s7 = sf / 7; // float division
    const float b = static_cast<float>(
        1.0f / pow(1 - exp(-pow(static_cast<double>(s7), 2)), static_cast<double>(p[2])));
    const float ab = a * b; // float product
    const float csf = static_cast<float>(p[3] / pow(static_cast<double>(ab), 0.5));
    const float m = csf * barten_mtf(sf);                         // float
    const float rc = m * barten_rod_cone_sens(static_cast<float>(lum)); // float
    return static_cast<float>(rc * csf_scale);
}

// ---------------------------------------------------------------- blends (modes 2, 3)

/// One tabulated blend: [theta][scale], theta 0 = h/v, 1 = d.
struct BlendTable {
    int rdh;
    double nvd;
    float f[2][4];
};

// barten_watson_blend_csf (legacy coefficients, mode 2). 2160 at 1.5H has the 1080 3H
// table (same pixels per degree).
constexpr BlendTable kBlend[] = {
    {1080, 3.0, {{0.01183, 0.025026, 0.04295, 0.058621}, {0.004302, 0.011778, 0.023918, 0.035901}}},
    {1080, 5.0, {{0.004212, 0.014809, 0.029642, 0.047464}, {0.000984, 0.005852, 0.0146, 0.027574}}},
    {2160, 1.5, {{0.01183, 0.025026, 0.04295, 0.058621}, {0.004302, 0.011778, 0.023918, 0.035901}}},
    {2160, 3.0, {{0.00226, 0.01183, 0.025026, 0.04295}, {0.000479, 0.004302, 0.011778, 0.023918}}},
    {2160, 5.0, {{0.000092, 0.004212, 0.014809, 0.029642}, {0.000050, 0.000984, 0.005852, 0.0146}}},
    {720, 3.0, {{0.018715, 0.035637, 0.052798, 0.061509}, {0.007999, 0.018396, 0.031851, 0.037718}}},
    {720, 5.0, {{0.010144, 0.022561, 0.040309, 0.05672}, {0.003463, 0.010282, 0.021839, 0.034641}}},
    {480, 3.0, {{0.027961, 0.045875, 0.060275, 0.056234}, {0.013572, 0.026277, 0.036959, 0.034511}}},
    {480, 5.0, {{0.016781, 0.032822, 0.05032, 0.061594}, {0.00691, 0.016545, 0.029917, 0.037777}}},
};

// barten_watson_blend_csf_mae (coefficients "with the CSF bug fix", mode 3).
constexpr BlendTable kBlendMae[] = {
    {1080, 3.0, {{0.011249, 0.022606, 0.035930, 0.045673}, {0.004097, 0.010921, 0.021430, 0.031313}}},
    {1080, 5.0, {{0.004052, 0.013939, 0.026298, 0.038833}, {0.000927, 0.005544, 0.013415, 0.024515}}},
    {2160, 1.5, {{0.011249, 0.022606, 0.035930, 0.045673}, {0.004097, 0.010921, 0.021430, 0.031313}}},
    {2160, 3.0, {{0.002166, 0.011249, 0.022606, 0.035930}, {0.000447, 0.004097, 0.010921, 0.021430}}},
    {2160, 5.0, {{0.000077, 0.004052, 0.013939, 0.026298}, {0.000045, 0.000927, 0.005544, 0.013415}}},
    {720, 3.0, {{0.017329, 0.030870, 0.042134, 0.047410}, {0.007509, 0.016707, 0.028072, 0.032722}}},
    {720, 5.0, {{0.009689, 0.020577, 0.034162, 0.044523}, {0.003302, 0.009579, 0.019661, 0.030318}}},
    {480, 3.0, {{0.024969, 0.037825, 0.046676, 0.043974}, {0.012511, 0.023424, 0.032139, 0.030166}}},
    {480, 5.0, {{0.015665, 0.028766, 0.040612, 0.047483}, {0.006514, 0.015107, 0.026476, 0.032776}}},
};

template <std::size_t N>
const BlendTable* find_blend(const BlendTable (&tables)[N], double nvd, int rdh) {
    for (const BlendTable& t : tables)
        if (t.rdh == rdh && t.nvd == nvd) return &t; // exact compare, as libvmaf
    return nullptr;
}

} // namespace

bool adm_csf_mode_supported(const AdmOptions& opt) {
    if (opt.csf_mode == 0 || opt.csf_mode == 1) return true;
    if (opt.csf_mode == 2) return find_blend(kBlend, opt.norm_view_dist, opt.ref_display_height);
    if (opt.csf_mode == 3) return find_blend(kBlendMae, opt.norm_view_dist, opt.ref_display_height);
    return false;
}

float adm_csf_factor(const AdmOptions& opt, int scale, bool diagonal) {
    if (scale < 0 || scale > 3) throw std::invalid_argument("adm: scale must be 0..3");
    switch (opt.csf_mode) {
    case 0:
        return watson_rfactor(scale, diagonal ? 2 : 1, opt.norm_view_dist, opt.ref_display_height);
    case 1:
        return barten_csf(scale, opt.norm_view_dist, opt.ref_display_height, kCsfLum,
                          diagonal ? opt.csf_diag_scale : opt.csf_scale);
    case 2:
    case 3: {
        const BlendTable* t = opt.csf_mode == 2
                                  ? find_blend(kBlend, opt.norm_view_dist, opt.ref_display_height)
                                  : find_blend(kBlendMae, opt.norm_view_dist, opt.ref_display_height);
        if (!t)
            throw std::invalid_argument(
                "adm: adm_csf_mode " + std::to_string(opt.csf_mode) +
                " is tabulated only for adm_ref_display_height 1080 or 720 or 480 with "
                "adm_norm_view_dist 3 or 5, and 2160 with 1.5, 3 or 5 (libvmaf returns -EINVAL "
                "as the weight otherwise)");
        return t->f[diagonal ? 1 : 0][scale];
    }
    default:
        throw std::invalid_argument("adm: adm_csf_mode must be 0..3");
    }
}

} // namespace vmaf_cuda::ref

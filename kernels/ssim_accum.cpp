// SPDX-License-Identifier: BSD-2-Clause-Patent
// Host finish of the float_ssim / float_ms_ssim accumulators; contract in ssim_accum.h.

#include "ssim_accum.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace vmaf_cuda::cuda {

namespace {

using i128 = __int128;

std::uint64_t term_count(const IqaScaleAccum& a) {
    return (a.w > 0 && a.h > 0) ? std::uint64_t(a.w) * std::uint64_t(a.h) : 0;
}

i128 fixed_sum(std::uint64_t lo, std::uint64_t hi) {
    return i128(static_cast<std::int64_t>(hi)) * (i128(1) << 32) + i128(lo);
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

float field(const ref::IqaSsimMeans& m, int k) {
    return k == kIqaSsim ? m.ssim : k == kIqaL ? m.l : k == kIqaC ? m.c : m.s;
}
double& field(ref::IqaSsimSums& s, int k) {
    return k == kIqaSsim ? s.ssim : k == kIqaL ? s.l : k == kIqaC ? s.c : s.s;
}
float& field(ref::IqaSsimMeans& m, int k) {
    return k == kIqaSsim ? m.ssim : k == kIqaL ? m.l : k == kIqaC ? m.c : m.s;
}

// Adds term x of band b to sum k as the device does (iqa.cu, add_term).
void add_term(IqaScaleAccum& a, int b, int k, double x) {
    if (!(x < kIqaTermLimit && x > -kIqaTermLimit)) {
        a.bad++;
        return;
    }
    const long long q = std::llrint(std::ldexp(x, kIqaFixedBits)); // nearest, ties to even
    const long long qa = q < 0 ? -q : q;
    a.lo[k] += std::uint64_t(q) & 0xffffffffull;
    a.hi[k] += std::uint64_t(q >> 32);
    a.alo[b][k] += std::uint64_t(qa) & 0xffffffffull;
    a.ahi[b][k] += std::uint64_t(qa >> 32);
}

void check_terms(const ref::IqaSsimMaps& t, const IqaScaleAccum& a, const char* who) {
    const std::size_t n = term_count(a);
    if (t.w != a.w || t.h != a.h || t.l.size() != n || t.c.size() != n || t.s.size() != n)
        throw std::invalid_argument(std::string(who) + ": terms of " + std::to_string(t.w) + "x" +
                                    std::to_string(t.h) + " given for an accumulator of " +
                                    std::to_string(a.w) + "x" + std::to_string(a.h));
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

} // namespace

bool iqa_seq_interval(const IqaScaleAccum& a, int k, double& lo, double& hi) {
    if (a.bad) return false;
    const std::uint64_t n = term_count(a);
    if (n == 0) { // no terms: libvmaf's sums stay 0.0
        lo = hi = 0.0;
        return true;
    }
    const double e = std::ldexp(double(fixed_sum(a.lo[k], a.hi[k])), -kIqaFixedBits);
    const double nd = double(n);
    // Upper bounds of sum |x_i| and of sum (n - i) |x_i| from the bands: every term of
    // band b has an index i >= its first index, so weight n - first; each fixed-point
    // |q| is off by <= 2^-41. Computed in double with a margin for their rounding.
    double abs_up = 0, weighted_up = 0;
    for (int b = 0; b < kIqaBands; b++) {
        const int r0 = iqa_band_row(b, a.h), r1 = iqa_band_row(b + 1, a.h);
        const double cnt = double(r1 - r0) * double(a.w);
        const double ab = std::ldexp(double(fixed_sum(a.alo[b][k], a.ahi[b][k])), -kIqaFixedBits) *
                              (1 + 0x1p-52) + cnt * 0x1p-41;
        abs_up += ab;
        weighted_up += (nd - double(r0) * double(a.w)) * ab;
    }
    abs_up *= 1 + 0x1p-40;
    weighted_up *= 1 + 0x1p-40;
    const double e_fix = nd * 0x1p-41; // fixed-point error of the sum
    const double g1 = (nd - 1) * 0x1p-53;
    const double denom = 1 - g1;
    const double seq_err = std::min(g1 * abs_up, 0x1p-53 * weighted_up) / denom;
    // |seq - e| <= fixed-point error + recursive-summation bound + conversion of e to
    // double; the factor and the tiny term cover the rounding in computing r itself.
    double r = e_fix + seq_err + std::fabs(e) * 0x1p-52;
    r = r * (1 + 0x1p-30) + 0x1p-1070;
    lo = std::nextafter(e - r, -INFINITY);
    hi = std::nextafter(e + r, INFINITY);
    return true;
}

unsigned iqa_means_from_accum(const IqaScaleAccum& a, unsigned needed, ref::IqaSsimMeans& out,
                              bool force_undecided) {
    ref::IqaSsimSums slo, shi;
    slo.w = shi.w = a.w;
    slo.h = shi.h = a.h;
    bool ok[4];
    for (int k = 0; k < 4; k++) {
        double lo = kNaN, hi = kNaN;
        ok[k] = iqa_seq_interval(a, k, lo, hi);
        field(slo, k) = lo;
        field(shi, k) = hi;
    }
    // The reference's own finish at both ends of the intervals.
    const ref::IqaSsimMeans mlo = ref::iqa_ssim_finish(slo);
    const ref::IqaSsimMeans mhi = ref::iqa_ssim_finish(shi);
    unsigned undecided = 0;
    for (int k = 0; k < 4; k++) {
        field(out, k) = field(mlo, k);
        if (!(needed >> k & 1)) continue;
        if (force_undecided || !ok[k] || !same_bits(field(mlo, k), field(mhi, k)))
            undecided |= 1u << k;
    }
    return undecided;
}

IqaScaleAccum iqa_accum_from_maps(const ref::IqaSsimMaps& maps) {
    IqaScaleAccum a{};
    a.w = maps.w;
    a.h = maps.h;
    if (maps.l.empty()) return a;
    for (int b = 0; b < kIqaBands; b++)
        for (int y = iqa_band_row(b, a.h); y < iqa_band_row(b + 1, a.h); y++)
            for (int x = 0; x < a.w; x++) {
                const std::size_t i = std::size_t(y) * std::size_t(a.w) + std::size_t(x);
                const double l = maps.l[i], c = maps.c[i], s = maps.s[i];
                add_term(a, b, kIqaSsim, l * c * s);
                add_term(a, b, kIqaL, l);
                add_term(a, b, kIqaC, c);
                add_term(a, b, kIqaS, s);
            }
    return a;
}

double iqa_sum_of_maps(const ref::IqaSsimMaps& maps, int sum) {
    const std::size_t n = std::size_t(maps.w) * maps.h;
    const std::vector<double>* m[4] = {nullptr, &maps.l, &maps.c, &maps.s};
    const auto need = [&](const std::vector<double>& v) {
        if (v.size() != n)
            throw std::invalid_argument("iqa_sum_of_maps: a term map of " + std::to_string(v.size()) +
                                        " values for " + std::to_string(maps.w) + "x" +
                                        std::to_string(maps.h) + " terms");
    };
    double s = 0.0;
    if (sum == kIqaSsim) {
        need(maps.l), need(maps.c), need(maps.s);
        for (std::size_t i = 0; i < n; i++) s += maps.l[i] * maps.c[i] * maps.s[i];
        return s;
    }
    need(*m[sum]);
    for (const double x : *m[sum]) s += x;
    return s;
}

namespace {

/// Means of scale accumulator `a`: the decided ones from it, the undecided of `needed`
/// from `sums(scale, j)` (libvmaf's (float)(sum / (w * h))).
ref::IqaSsimMeans means_of(const IqaScaleAccum& a, unsigned needed, bool force, int scale,
                           const IqaSumSource* sums, unsigned& undecided) {
    ref::IqaSsimMeans m{};
    undecided = iqa_means_from_accum(a, needed, m, force);
    if (!undecided || !sums) return m;
    ref::IqaSsimSums s;
    s.w = a.w;
    s.h = a.h;
    double* fields[4] = {&s.ssim, &s.l, &s.c, &s.s};
    for (int j = 0; j < 4; j++)
        if (undecided >> j & 1) *fields[j] = (*sums)(scale, j);
    const ref::IqaSsimMeans f = ref::iqa_ssim_finish(s);
    const float ff[4] = {f.ssim, f.l, f.c, f.s};
    float* mm[4] = {&m.ssim, &m.l, &m.c, &m.s};
    for (int j = 0; j < 4; j++)
        if (undecided >> j & 1) *mm[j] = ff[j];
    return m;
}

void put_ssim(const ref::IqaSsimMeans& m, const SsimFinishParams& p, ref::FloatSsimScores& out) {
    out.ssim = m.ssim;
    out.l = p.opt.enable_lcs ? double(m.l) : kNaN;
    out.c = p.opt.enable_lcs ? double(m.c) : kNaN;
    out.s = p.opt.enable_lcs ? double(m.s) : kNaN;
    if (p.opt.enable_db)
        out.ssim = ref::float_ssim_to_db(out.ssim, p.width, p.height, p.bpc, p.opt.clip_db);
}

unsigned ssim_needed(const SsimFinishParams& p) {
    return (1u << kIqaSsim) | (p.opt.enable_lcs ? (1u << kIqaL) | (1u << kIqaC) | (1u << kIqaS) : 0u);
}

/// float_ms_ssim: pow(x, 0.0) is 1 for every x, so l of scales 0..3 (alpha 0) only
/// matters as an output.
unsigned ms_ssim_needed(const MsSsimFinishParams& p, int k) {
    return (1u << kIqaC) | (1u << kIqaS) |
           ((p.opt.enable_lcs || ref::ms_ssim_alphas()[k] != 0.0f) ? 1u << kIqaL : 0u);
}

void put_ms_ssim(const ref::IqaSsimMeans (&means)[ref::kMsSsimScales], const MsSsimFinishParams& p,
                 ref::FloatMsSsimScores& out) {
    out.ms_ssim = ref::float_ms_ssim_combine(means);
    for (int k = 0; k < ref::kMsSsimScales; k++) {
        out.l[k] = p.opt.enable_lcs ? double(means[k].l) : kNaN;
        out.c[k] = p.opt.enable_lcs ? double(means[k].c) : kNaN;
        out.s[k] = p.opt.enable_lcs ? double(means[k].s) : kNaN;
    }
    if (p.opt.enable_db)
        out.ms_ssim = ref::float_ssim_to_db(out.ms_ssim, p.width, p.height, p.bpc, p.opt.clip_db);
}

} // namespace

bool float_ssim_finish(const SsimAccum& acc, const SsimFinishParams& p, ref::FloatSsimScores& out,
                       const ref::IqaSsimMaps* terms) {
    unsigned undecided = 0;
    ref::IqaSsimMeans m = means_of(acc.scale, ssim_needed(p), p.force_fallback, 0, nullptr, undecided);
    if (undecided) {
        if (!terms) return false;
        check_terms(*terms, acc.scale, "float_ssim_finish");
        m = ref::iqa_ssim_finish(ref::iqa_ssim_sum(*terms));
    }
    put_ssim(m, p, out);
    return true;
}

void float_ssim_finish(const SsimAccum& acc, const SsimFinishParams& p, ref::FloatSsimScores& out,
                       const IqaSumSource& sums) {
    unsigned undecided = 0;
    put_ssim(means_of(acc.scale, ssim_needed(p), p.force_fallback, 0, &sums, undecided), p, out);
}

unsigned float_ms_ssim_finish(const MsSsimAccum& acc, const MsSsimFinishParams& p,
                              ref::FloatMsSsimScores& out, const ref::IqaSsimMaps* terms) {
    if (terms) {
        const IqaSumSource from_maps = [&](int k, int j) {
            const IqaScaleAccum& a = acc.scale[k];
            if (terms[k].w != a.w || terms[k].h != a.h)
                throw std::invalid_argument("float_ms_ssim_finish: scale " + std::to_string(k) +
                                            ": a needed term map is missing or of another size");
            return iqa_sum_of_maps(terms[k], j);
        };
        float_ms_ssim_finish(acc, p, out, from_maps);
        return 0;
    }
    ref::IqaSsimMeans means[ref::kMsSsimScales];
    unsigned need_terms = 0;
    for (int k = 0; k < ref::kMsSsimScales; k++) {
        unsigned und = 0;
        means[k] = means_of(acc.scale[k], ms_ssim_needed(p, k), p.force_fallback, k, nullptr, und);
        need_terms |= und << (4 * k);
    }
    if (need_terms) return need_terms;
    put_ms_ssim(means, p, out);
    return 0;
}

void float_ms_ssim_finish(const MsSsimAccum& acc, const MsSsimFinishParams& p,
                          ref::FloatMsSsimScores& out, const IqaSumSource& sums) {
    ref::IqaSsimMeans means[ref::kMsSsimScales];
    for (int k = 0; k < ref::kMsSsimScales; k++) {
        unsigned und = 0;
        means[k] = means_of(acc.scale[k], ms_ssim_needed(p, k), p.force_fallback, k, &sums, und);
    }
    put_ms_ssim(means, p, out);
}

} // namespace vmaf_cuda::cuda

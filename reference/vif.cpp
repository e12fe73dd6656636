// SPDX-License-Identifier: BSD-2-Clause-Patent
// Reference integer VIF; see vif.h for the contract and the libvmaf functions followed.

#include "vif.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <stdexcept>

namespace vmaf_cuda::ref {

namespace {

// Gaussian low-pass taps per scale, Q16 (each row sums to 65536). Facts from libvmaf's
// integer_vif.h table.
constexpr std::uint16_t kTaps0[17] = {489,  935,  1640, 2640, 3896, 5274, 6547, 7455, 7784,
                                      7455, 6547, 5274, 3896, 2640, 1640, 935,  489};
constexpr std::uint16_t kTaps1[9] = {1244, 3663, 7925, 12590, 14692, 12590, 7925, 3663, 1244};
constexpr std::uint16_t kTaps2[5] = {3571, 16004, 26386, 16004, 3571};
constexpr std::uint16_t kTaps3[3] = {10904, 43728, 10904};
constexpr const std::uint16_t* kTaps[4] = {kTaps0, kTaps1, kTaps2, kTaps3};
constexpr unsigned kWidths[4] = {17, 9, 5, 3};

// Noise variance threshold: 2.0 in Q16.
constexpr std::int32_t kSigmaNsq = 65536 << 1;

// Mirror index x into [0, n) without repeating the edge, repeatedly if needed.
// This equals what libvmaf's row/column padding copies produce for n >= 2.
unsigned reflect(int x, int n) {
    if (n <= 1) return 0;
    while (x < 0 || x >= n) x = x < 0 ? -x : 2 * (n - 1) - x;
    return static_cast<unsigned>(x);
}

// Table logarithms (Q11) of libvmaf's log2_32 / log2_64: normalise v to 16 significant
// bits, look up, add 2048 per bit shifted out. Callers guarantee v >= 2^17.
std::int32_t log2q_32(const std::uint16_t* table, std::uint32_t v) {
    const int k = 16 - std::countl_zero(v);
    return table[v >> k] + 2048 * k;
}
std::int32_t log2q_64(const std::uint16_t* table, std::uint64_t v) {
    const int k = 48 - std::countl_zero(v);
    return table[v >> k] + 2048 * k;
}

// Rounding shifts of the vertical pass: at scale 0 they bring bpc-bit samples to the
// 16-bit scale (mu: >> bpc; squares: >> 2*(bpc-8)); later scales already hold 16-bit
// values (>> 16 for both).
struct VerticalShifts {
    std::uint32_t mu_round;
    unsigned mu_shift;
    std::uint64_t sq_round;
    unsigned sq_shift;
};

VerticalShifts vertical_shifts(unsigned scale, unsigned bpc) {
    if (scale != 0) return {32768u, 16u, 32768u, 16u};
    const unsigned sq_shift = 2 * (bpc - 8);
    return {1u << (bpc - 1), bpc, sq_shift == 0 ? 0u : (std::uint64_t{1} << (sq_shift - 1)),
            sq_shift};
}

// Read access to the plane of one scale: scale 0 is the caller's LumaView, later
// scales are the scratch planes (uint16, tightly packed).
struct Source {
    const std::uint8_t* data;
    std::ptrdiff_t pitch; // bytes
    bool eight_bit;
    std::uint32_t at(unsigned x, unsigned y) const {
        const std::uint8_t* row = data + pitch * static_cast<std::ptrdiff_t>(y);
        return eight_bit ? row[x] : reinterpret_cast<const std::uint16_t*>(row)[x];
    }
};

Source source_of(const LumaView& v) {
    return {static_cast<const std::uint8_t*>(v.data), v.pitch, v.bpc == 8};
}
Source source_of(const std::vector<std::uint16_t>& plane, unsigned w) {
    return {reinterpret_cast<const std::uint8_t*>(plane.data()),
            static_cast<std::ptrdiff_t>(w) * 2, false};
}

// Per-pixel contribution once the five filtered quantities are known (horizontal-pass
// sums: mu in Q32 of the 16-bit scale, squares in Q32 after the vertical rounding).
void add_pixel(std::uint32_t mu1, std::uint32_t mu2, std::uint64_t xx_sum, std::uint64_t yy_sum,
               std::uint64_t xy_sum, double gain_limit, const std::uint16_t* table,
               VifScaleAccum& acc) {
    const auto q32 = [](std::uint64_t p) {
        return static_cast<std::uint32_t>((p + 2147483648ull) >> 32);
    };
    const std::uint32_t mu1_sq = q32(std::uint64_t{mu1} * mu1);
    const std::uint32_t mu2_sq = q32(std::uint64_t{mu2} * mu2);
    const std::uint32_t mu1_mu2 = q32(std::uint64_t{mu1} * mu2);
    const auto q16 = [](std::uint64_t p) { return static_cast<std::uint32_t>((p + 32768) >> 16); };
    // Differences are taken in uint32 and reinterpreted as int32 (two's complement).
    const std::int32_t sigma1_sq = static_cast<std::int32_t>(q16(xx_sum) - mu1_sq);
    std::int32_t sigma2_sq = static_cast<std::int32_t>(q16(yy_sum) - mu2_sq);
    const std::int32_t sigma12 = static_cast<std::int32_t>(q16(xy_sum) - mu1_mu2);
    if (sigma2_sq < 0) sigma2_sq = 0;

    if (sigma1_sq < kSigmaNsq) {
        acc.num_non_log += sigma2_sq;
        acc.den_non_log += 1;
        return;
    }
    // 2^17 + sigma1_sq may exceed INT32_MAX; libvmaf passes it on as uint32.
    acc.den_log += log2q_32(table, static_cast<std::uint32_t>(sigma1_sq) +
                                       static_cast<std::uint32_t>(kSigmaNsq)) -
                   2048 * 17;
    if (!(sigma12 > 0 && sigma2_sq > 0)) return;

    const double eps = 65536 * 1.0e-10;
    double g = static_cast<double>(sigma12) / (static_cast<double>(sigma1_sq) + eps);
    // libvmaf truncates this double to int32 and clamps at 0. The value is below
    // sigma2_sq (g * sigma12 > 0), so only the negative side can leave int32 range;
    // every negative value ends as 0, which is what the test below gives without UB.
    const double sv = static_cast<double>(sigma2_sq) - g * static_cast<double>(sigma12);
    const std::int32_t sv_sq = sv > 0.0 ? static_cast<std::int32_t>(sv) : 0;
    g = g < gain_limit ? g : gain_limit;
    const std::uint32_t numer1 =
        static_cast<std::uint32_t>(sv_sq) + static_cast<std::uint32_t>(kSigmaNsq);
    const double gain_term = g * g * static_cast<double>(sigma1_sq);
    const std::int64_t numerator = static_cast<std::int64_t>(gain_term) + numer1;
    acc.num_log += log2q_64(table, static_cast<std::uint64_t>(numerator)) -
                   log2q_64(table, numer1);
}

// Statistic of one scale: vertical then horizontal pass, row by row (libvmaf's
// vif_statistic_8 / vif_statistic_16; the 8-bit variant gives the same numbers as the
// 16-bit one with bpc = 8, since none of its uint32 sums can overflow).
void accumulate_scale(const Source& ref, const Source& dis, unsigned w, unsigned h,
                      unsigned scale, unsigned bpc, double gain_limit, VifScratch& s,
                      VifScaleAccum& acc) {
    acc = VifScaleAccum{};
    const std::uint16_t* taps = kTaps[scale];
    const int fw = static_cast<int>(kWidths[scale]);
    const int half = fw / 2;
    const VerticalShifts vs = vertical_shifts(scale, bpc);
    const std::uint16_t* table = vif_log2_table();

    std::array<unsigned, 17> rows{};
    for (unsigned i = 0; i < h; ++i) {
        for (int k = 0; k < fw; ++k)
            rows[k] = reflect(static_cast<int>(i) - half + k, static_cast<int>(h));
        for (unsigned j = 0; j < w; ++j) {
            std::uint32_t m1 = 0, m2 = 0;
            std::uint64_t xx = 0, yy = 0, xy = 0;
            for (int k = 0; k < fw; ++k) {
                const std::uint32_t r = ref.at(j, rows[k]);
                const std::uint32_t d = dis.at(j, rows[k]);
                const std::uint32_t fr = taps[k] * r; // < 2^32
                const std::uint32_t fd = taps[k] * d;
                m1 += fr;
                m2 += fd;
                xx += std::uint64_t{fr} * r;
                yy += std::uint64_t{fd} * d;
                xy += std::uint64_t{fr} * d;
            }
            s.v_mu1[j] = static_cast<std::uint16_t>((m1 + vs.mu_round) >> vs.mu_shift);
            s.v_mu2[j] = static_cast<std::uint16_t>((m2 + vs.mu_round) >> vs.mu_shift);
            s.v_xx[j] = static_cast<std::uint32_t>((xx + vs.sq_round) >> vs.sq_shift);
            s.v_yy[j] = static_cast<std::uint32_t>((yy + vs.sq_round) >> vs.sq_shift);
            s.v_xy[j] = static_cast<std::uint32_t>((xy + vs.sq_round) >> vs.sq_shift);
        }
        for (unsigned j = 0; j < w; ++j) {
            std::uint32_t m1 = 0, m2 = 0;
            std::uint64_t xx = 0, yy = 0, xy = 0;
            for (int k = 0; k < fw; ++k) {
                const unsigned c = reflect(static_cast<int>(j) - half + k, static_cast<int>(w));
                const std::uint32_t f = taps[k];
                m1 += f * s.v_mu1[c];
                m2 += f * s.v_mu2[c];
                xx += std::uint64_t{f} * s.v_xx[c];
                yy += std::uint64_t{f} * s.v_yy[c];
                xy += std::uint64_t{f} * s.v_xy[c];
            }
            add_pixel(m1, m2, xx, yy, xy, gain_limit, table, acc);
        }
    }
}

// Scale s -> s+1 (libvmaf's subsample_rd_8 / subsample_rd_16 + decimate_and_pad):
// low-pass with the taps of scale s+1, keep even rows and columns. Only the kept rows
// and columns are computed; they are the same numbers as filtering everything first.
void downsample(const Source& ref, const Source& dis, unsigned w, unsigned h, unsigned scale,
                unsigned bpc, VifScratch& s, std::vector<std::uint16_t>& out_ref,
                std::vector<std::uint16_t>& out_dis) {
    const std::uint16_t* taps = kTaps[scale + 1];
    const int fw = static_cast<int>(kWidths[scale + 1]);
    const int half = fw / 2;
    const VerticalShifts vs = vertical_shifts(scale, bpc);
    const unsigned w2 = w / 2, h2 = h / 2;
    for (unsigned i2 = 0; i2 < h2; ++i2) {
        const int i = static_cast<int>(2 * i2);
        for (unsigned j = 0; j < w; ++j) {
            std::uint32_t a = 0, b = 0;
            for (int k = 0; k < fw; ++k) {
                const unsigned r = reflect(i - half + k, static_cast<int>(h));
                a += taps[k] * ref.at(j, r);
                b += taps[k] * dis.at(j, r);
            }
            s.v_mu1[j] = static_cast<std::uint16_t>((a + vs.mu_round) >> vs.mu_shift);
            s.v_mu2[j] = static_cast<std::uint16_t>((b + vs.mu_round) >> vs.mu_shift);
        }
        for (unsigned j2 = 0; j2 < w2; ++j2) {
            std::uint32_t a = 0, b = 0;
            for (int k = 0; k < fw; ++k) {
                const unsigned c =
                    reflect(static_cast<int>(2 * j2) - half + k, static_cast<int>(w));
                a += taps[k] * s.v_mu1[c];
                b += taps[k] * s.v_mu2[c];
            }
            out_ref[std::size_t{i2} * w2 + j2] = static_cast<std::uint16_t>((a + 32768) >> 16);
            out_dis[std::size_t{i2} * w2 + j2] = static_cast<std::uint16_t>((b + 32768) >> 16);
        }
    }
}

} // namespace

const std::uint16_t* vif_log2_table() {
    static const std::vector<std::uint16_t> table = [] {
        std::vector<std::uint16_t> t(65536, 0);
        // libvmaf: float log2f of the float index, times 2048 in float, rounded half away
        // from zero.
        for (unsigned i = 32767; i < 65536; ++i)
            t[i] = static_cast<std::uint16_t>(
                std::round(static_cast<double>(::log2f(static_cast<float>(i)) * 2048.0f)));
        return t;
    }();
    return table.data();
}

const std::uint16_t* vif_filter_taps(unsigned scale) { return kTaps[scale & 3]; }
unsigned vif_filter_width(unsigned scale) { return kWidths[scale & 3]; }

VifScratch::VifScratch(unsigned width, unsigned height, unsigned bpc)
    : w_(width), h_(height), bpc_(bpc) {
    unsigned w = width, h = height;
    for (int s = 0; s < 3; ++s) {
        w /= 2;
        h /= 2;
        plane_ref[s].assign(std::size_t{w} * h, 0);
        plane_dis[s].assign(std::size_t{w} * h, 0);
    }
    for (auto* v : {&v_mu1, &v_mu2, &v_xx, &v_yy, &v_xy}) v->assign(width, 0);
}

void vif_accumulate(const LumaView& ref, const LumaView& dis, const VifOptions& opt,
                    VifScratch& scratch, VifAccum& out) {
    if (ref.bpc < 8 || ref.bpc > 16 || ref.bpc != dis.bpc || ref.bpc != scratch.bpc() ||
        ref.width != scratch.width() || ref.height != scratch.height() ||
        dis.width != ref.width || dis.height != ref.height)
        throw std::invalid_argument("vif_accumulate: planes do not match the scratch size/bpc");
    unsigned w = ref.width, h = ref.height;
    const unsigned bpc = ref.bpc;
    Source src_ref = source_of(ref), src_dis = source_of(dis);
    for (unsigned scale = 0; scale < 4; ++scale) {
        if (scale > 0) {
            auto& pr = scratch.plane_ref[scale - 1];
            auto& pd = scratch.plane_dis[scale - 1];
            downsample(src_ref, src_dis, w, h, scale - 1, bpc, scratch, pr, pd);
            w /= 2;
            h /= 2;
            src_ref = source_of(pr, w);
            src_dis = source_of(pd, w);
        }
        accumulate_scale(src_ref, src_dis, w, h, scale, bpc, opt.enhn_gain_limit, scratch,
                         out.scale[scale]);
    }
}

VifScores vif_finish(const VifAccum& acc, const VifOptions& opt) {
    (void)opt;
    VifScores out{};
    for (int s = 0; s < 4; ++s) {
        const VifScaleAccum& a = acc.scale[s];
        const double num_d =
            static_cast<double>(a.num_log) / 2048.0 +
            (static_cast<double>(a.den_non_log) -
             (static_cast<double>(a.num_non_log) / 16384.0) / 65025.0);
        const double den_d =
            static_cast<double>(a.den_log) / 2048.0 + static_cast<double>(a.den_non_log);
        const float num = static_cast<float>(num_d);
        const float den = static_cast<float>(den_d);
        out.scale[s] = static_cast<double>(num / den);
    }
    return out;
}

} // namespace vmaf_cuda::ref

// SPDX-License-Identifier: BSD-2-Clause-Patent
// Host tool (no GPU): how often the float_ssim / float_ms_ssim accumulators of
// kernels/ssim_accum.h leave a mean undecided (so the engine copies the term maps), on the
// golden clips. It emulates the device accumulation term by term from the reference's
// maps (cuda::iqa_accum_from_maps, the device's arithmetic), and checks on every sum that
// the interval encloses the reference's sequential sum and that every decided mean is
// the reference's float; and runs the whole host finish (cuda::float_ssim_finish,
// cuda::float_ms_ssim_finish with enable_lcs: from the accumulator, from the terms (maps,
// or a sum source as the device's ordered sums) where
// undecided, and forced through the terms) against ref::float_ssim / ref::float_ms_ssim.
//
//   ssim_fallback_rate SHARED_DIR [DECODED_DIR]
// SHARED_DIR holds golden/cases.tsv and media/; .mp4 cases are read as
// DECODED_DIR/<name>.yuv (tests/meson.build decodes them) and skipped when absent.
// Exit status 1 when an interval missed the sequential sum or a decided mean differs.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "iqa.h"
#include "ms_ssim.h"
#include "ssim.h"
#include "ssim_accum.h"

namespace ref = vmaf_cuda::ref;
namespace vcu = vmaf_cuda::cuda;

namespace {

struct Counts {
    long sums = 0, undecided = 0, frames = 0, frames_fallback = 0, errors = 0;
    double expected = 0; // sum over sums of P(undecided) = interval width / float spacing
};

// Spacing of floats at |v| (the distance between rounding boundaries of (float)v).
double float_spacing(double v) {
    const float f = float(std::fabs(v));
    return double(std::nextafter(f, INFINITY)) - double(f);
}

// Checks one scale: intervals vs the sequential sums, decided means vs the reference.
// Returns the undecided mask of the needed sums.
unsigned check_scale(const ref::IqaSsimMaps& maps, unsigned needed, Counts& c, const char* what) {
    const vcu::IqaScaleAccum a = vcu::iqa_accum_from_maps(maps);
    const ref::IqaSsimSums seq = ref::iqa_ssim_sum(maps);
    const ref::IqaSsimMeans want = ref::iqa_ssim_finish(seq);
    ref::IqaSsimMeans got{};
    const unsigned und = vcu::iqa_means_from_accum(a, needed, got);
    const double sv[4] = {seq.ssim, seq.l, seq.c, seq.s};
    const float wv[4] = {want.ssim, want.l, want.c, want.s};
    const float gv[4] = {got.ssim, got.l, got.c, got.s};
    for (int k = 0; k < 4; k++) {
        if (!(needed >> k & 1)) continue;
        c.sums++;
        double lo, hi;
        const bool have = vcu::iqa_seq_interval(a, k, lo, hi);
        if (have) {
            const double n = double(maps.w) * double(maps.h);
            c.expected += std::min(1.0, (hi - lo) / n / float_spacing(sv[k] / n));
        }
        if (!have || !(lo <= sv[k] && sv[k] <= hi)) {
            std::printf("ERROR %s sum %d: sequential %.17g outside [%.17g, %.17g]\n", what, k, sv[k], lo, hi);
            c.errors++;
        }
        if (und >> k & 1) {
            c.undecided++;
            continue;
        }
        if (gv[k] != wv[k]) {
            std::printf("ERROR %s sum %d: decided %.9g, reference %.9g\n", what, k, gv[k], wv[k]);
            c.errors++;
        }
    }
    return und;
}

ref::LumaView luma(const std::vector<std::uint8_t>& frame, unsigned w, unsigned h, unsigned bpc) {
    const unsigned bps = bpc > 8 ? 2 : 1;
    return ref::LumaView{frame.data(), std::ptrdiff_t(w * bps), w, h, bpc};
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s SHARED_DIR [DECODED_DIR]\n", argv[0]);
        return 2;
    }
    const std::string shared = argv[1];
    const std::string decoded = argc > 2 ? argv[2] : ".";
    std::ifstream tsv(shared + "/golden/cases.tsv");
    if (!tsv) {
        std::fprintf(stderr, "cannot read %s/golden/cases.tsv\n", shared.c_str());
        return 2;
    }
    std::string line;
    std::getline(tsv, line); // header
    Counts ss, ms;
    while (std::getline(tsv, line)) {
        std::istringstream is(line);
        std::string name, rp, dp;
        unsigned w, h, bpc, chroma, frames;
        is >> name >> rp >> dp >> w >> h >> bpc >> chroma >> frames;
        auto path = [&](const std::string& p) {
            if (p.size() > 4 && p.substr(p.size() - 4) == ".mp4") {
                const std::string stem = p.substr(p.find('/') + 1, p.size() - 4 - p.find('/') - 1);
                return decoded + "/" + stem + ".yuv";
            }
            return shared + "/" + p;
        };
        std::ifstream fr(path(rp), std::ios::binary), fd(path(dp), std::ios::binary);
        if (!fr || !fd) {
            // a case without its clips checks nothing: the run is a skip, not a pass
            std::printf("SKIPPED: %s: no %s\n", name.c_str(), path(fr ? dp : rp).c_str());
            return 77;
        }
        const unsigned bps = bpc > 8 ? 2 : 1;
        const std::size_t ysz = std::size_t(w) * h * bps;
        const std::size_t csz = chroma == 420 ? 2 * (std::size_t((w + 1) / 2) * ((h + 1) / 2) * bps)
                                : chroma == 422 ? 2 * (std::size_t((w + 1) / 2) * h * bps)
                                                : 2 * ysz;
        std::vector<std::uint8_t> yr(ysz), yd(ysz), skip(csz);
        const long ss_und0 = ss.undecided, ms_und0 = ms.undecided;
        const double ss_exp0 = ss.expected, ms_exp0 = ms.expected;
        for (unsigned f = 0; f < frames; f++) {
            fr.read(reinterpret_cast<char*>(yr.data()), ysz);
            fr.read(reinterpret_cast<char*>(skip.data()), csz);
            fd.read(reinterpret_cast<char*>(yd.data()), ysz);
            fd.read(reinterpret_cast<char*>(skip.data()), csz);
            if (!fr || !fd) break;
            const ref::LumaView r = luma(yr, w, h, bpc), d = luma(yd, w, h, bpc);
            // float_ssim with enable_lcs (all four sums needed).
            const ref::FloatSsimInput in = ref::float_ssim_prepare(r, d, ref::FloatSsimOptions{});
            ref::IqaSsimMaps maps;
            ref::iqa_ssim_maps(in.ref.data(), in.dis.data(), in.w, in.h, maps);
            ss.frames++;
            if (check_scale(maps, 0xf, ss, (name + " float_ssim").c_str())) ss.frames_fallback++;
            {
                const ref::FloatSsimOptions o{true, false, false, 0};
                const ref::FloatSsimScores want = ref::float_ssim(r, d, o);
                vcu::SsimAccum acc{vcu::iqa_accum_from_maps(maps), 0};
                vcu::SsimFinishParams p{o, w, h, bpc, false};
                for (int forced = 0; forced < 2; forced++) {
                    p.force_fallback = forced != 0;
                    ref::FloatSsimScores got{};
                    if (!vcu::float_ssim_finish(acc, p, got)) vcu::float_ssim_finish(acc, p, got, &maps);
                    if (got.ssim != want.ssim || got.l != want.l || got.c != want.c || got.s != want.s) {
                        std::printf("ERROR %s float_ssim finish (forced %d) differs\n", name.c_str(), forced);
                        ss.errors++;
                    }
                    // The undecided sums from a source (as the device's ordered sums give them).
                    ref::FloatSsimScores viasrc{};
                    vcu::float_ssim_finish(acc, p, viasrc, [&](int, int j) { return vcu::iqa_sum_of_maps(maps, j); });
                    if (forced) {
                        ref::FloatSsimScores zero{};
                        vcu::float_ssim_finish(acc, p, zero, [](int, int) { return 0.0; });
                        if (zero.ssim != 0.0 || zero.l != 0.0 || zero.c != 0.0 || zero.s != 0.0) {
                            std::printf("ERROR %s float_ssim: an undecided mean not taken from the sum "
                                        "source\n", name.c_str());
                            ss.errors++;
                        }
                    }
                    if (viasrc.ssim != want.ssim || viasrc.l != want.l || viasrc.c != want.c || viasrc.s != want.s) {
                        std::printf("ERROR %s float_ssim finish from a sum source (forced %d) differs\n",
                                    name.c_str(), forced);
                        ss.errors++;
                    }
                }
            }
            // float_ms_ssim with enable_lcs (l, c, s of every scale).
            if (w >= ref::float_ms_ssim_min_size() && h >= ref::float_ms_ssim_min_size()) {
                ref::MsSsimPyramid pyr;
                ref::float_ms_ssim_pyramid(r, d, pyr);
                unsigned any = 0;
                ref::IqaSsimMaps all[ref::kMsSsimScales];
                vcu::MsSsimAccum acc{};
                for (int k = 0; k < ref::kMsSsimScales; k++) {
                    ref::iqa_ssim_maps(pyr.ref[k].data(), pyr.dis[k].data(), pyr.w[k], pyr.h[k], all[k]);
                    any |= check_scale(all[k], 0xe, ms, (name + " float_ms_ssim").c_str());
                    acc.scale[k] = vcu::iqa_accum_from_maps(all[k]);
                }
                const ref::FloatMsSsimOptions o{true, false, false};
                const ref::FloatMsSsimScores want = ref::float_ms_ssim(r, d, o);
                vcu::MsSsimFinishParams p{o, w, h, bpc, false};
                for (int forced = 0; forced < 2; forced++) {
                    p.force_fallback = forced != 0;
                    ref::FloatMsSsimScores got{};
                    const unsigned need = vcu::float_ms_ssim_finish(acc, p, got);
                    if (need) {
                        // Only the maps asked for, as MsSsimKernel::copy_terms gives them.
                        ref::IqaSsimMaps part[ref::kMsSsimScales];
                        for (int k = 0; k < ref::kMsSsimScales; k++) {
                            part[k].w = all[k].w;
                            part[k].h = all[k].h;
                            if (need & vcu::iqa_need_bit(k, vcu::kIqaL)) part[k].l = all[k].l;
                            if (need & vcu::iqa_need_bit(k, vcu::kIqaC)) part[k].c = all[k].c;
                            if (need & vcu::iqa_need_bit(k, vcu::kIqaS)) part[k].s = all[k].s;
                        }
                        vcu::float_ms_ssim_finish(acc, p, got, part);
                    }
                    bool same = got.ms_ssim == want.ms_ssim;
                    for (int k = 0; k < ref::kMsSsimScales; k++)
                        same = same && got.l[k] == want.l[k] && got.c[k] == want.c[k] && got.s[k] == want.s[k];
                    if (!same) {
                        std::printf("ERROR %s float_ms_ssim finish (forced %d, mask %#x) differs\n",
                                    name.c_str(), forced, need);
                        ms.errors++;
                    }
                    // The undecided sums from a source: asked for exactly the masked sums.
                    ref::FloatMsSsimScores viasrc{};
                    unsigned asked = 0;
                    vcu::float_ms_ssim_finish(acc, p, viasrc, [&](int k, int j) {
                        asked |= vcu::iqa_need_bit(k, j);
                        return vcu::iqa_sum_of_maps(all[k], j);
                    });
                    same = asked == need && viasrc.ms_ssim == want.ms_ssim;
                    for (int k = 0; k < ref::kMsSsimScales; k++)
                        same = same && viasrc.l[k] == want.l[k] && viasrc.c[k] == want.c[k] &&
                               viasrc.s[k] == want.s[k];
                    if (!same) {
                        std::printf("ERROR %s float_ms_ssim finish from a sum source (forced %d, mask "
                                    "%#x, asked %#x) differs\n", name.c_str(), forced, need, asked);
                        ms.errors++;
                    }
                    if (forced) {
                        // Every output of an undecided sum is the source's: a source of zeros
                        // makes each of them 0.
                        ref::FloatMsSsimScores zero{};
                        vcu::float_ms_ssim_finish(acc, p, zero, [](int, int) { return 0.0; });
                        bool zeros = true;
                        for (int k = 0; k < ref::kMsSsimScales; k++)
                            zeros = zeros && zero.l[k] == 0.0 && zero.c[k] == 0.0 && zero.s[k] == 0.0;
                        if (!zeros) {
                            std::printf("ERROR %s float_ms_ssim: an undecided mean not taken from the "
                                        "sum source\n", name.c_str());
                            ms.errors++;
                        }
                    }
                }
                ms.frames++;
                if (any) ms.frames_fallback++;
            }
        }
        std::printf("%-32s %ux%u %2u-bit %3u frames: undecided sums float_ssim %ld (expected %.3f), "
                    "float_ms_ssim %ld (expected %.3f)\n",
                    name.c_str(), w, h, bpc, frames, ss.undecided - ss_und0, ss.expected - ss_exp0,
                    ms.undecided - ms_und0, ms.expected - ms_exp0);
        std::fflush(stdout);
    }
    std::printf("float_ssim (enable_lcs): %ld frames, %ld sums, %ld undecided (expected %.2f), %ld frames "
                "with a fallback\n", ss.frames, ss.sums, ss.undecided, ss.expected, ss.frames_fallback);
    std::printf("float_ms_ssim (enable_lcs): %ld frames, %ld sums, %ld undecided (expected %.2f), %ld "
                "frames with a fallback\n", ms.frames, ms.sums, ms.undecided, ms.expected, ms.frames_fallback);
    std::printf("errors: %ld\n", ss.errors + ms.errors);
    return ss.errors + ms.errors ? 1 : 0;
}

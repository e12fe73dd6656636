// SPDX-License-Identifier: BSD-2-Clause-Patent
// Prototype for a follow-up (host only, not used by the product): libvmaf's sequential
// double sum (`_iqa_ssim`'s four sums, ref::iqa_ssim_sum) reproduced EXACTLY from chunk
// data that a GPU can compute in parallel, plus one sequential walk over chunks (one
// device thread per sum) -- which would remove the host fallback and the term-map slots
// of kernels/ssim_accum.h. Within a chunk whose
// partial sums stay inside one binade [2^e, 2^(e+1)) (ulp U = 2^(e-52)), each addition
// fl(s + x) equals s + RN_U(x) (x rounded to a multiple of U), so the chunk adds
// sum RN_U(x_i), an exact integer multiple of U. e is predicted from the exact prefix sum
// (fixed point); chunks that straddle a binade, hold a tie (x mod U == U/2) or a
// non-positive partial sum are added term by term. Proof of the fast path: with every
// partial sum c = s + sum_{i<=k} RN_U(x_i) in [2^e + U, 2^(e+1) - U] and no tie,
// |t - c| < U/2 for the exact t = s_{k-1} + x_k, and the doubles near t are the multiples
// of U, so fl(t) = c.
//   ssim_chunked_sum SHARED_DIR DECODED_DIR [CHUNK]
// checks it against the plain sequential sum on scale 0 of float_ms_ssim (all four sums,
// up to 10 frames per golden case) and counts the chunks added term by term.
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

namespace ref = vmaf_cuda::ref;

struct Stats {
    long sums = 0, mismatches = 0, chunks = 0, slow_chunks = 0;
};

double seq_sum(const std::vector<double>& x) {
    double s = 0;
    for (double v : x) s += v;
    return s;
}

// The walk; chunk data computed "in parallel" (here: per chunk, independent of s).
double chunked_sum(const std::vector<double>& x, std::size_t C, Stats& st) {
    const std::size_t n = x.size();
    const std::size_t nc = (n + C - 1) / C;
    // Phase 1 (parallel): exact prefix at chunk starts (long double here stands for the
    // fixed-point sums; only used to PREDICT e, which the walk verifies).
    std::vector<long double> pre(nc + 1, 0);
    for (std::size_t j = 0; j < nc; j++) {
        long double cs = 0;
        for (std::size_t i = j * C; i < std::min(n, (j + 1) * C); i++) cs += x[i];
        pre[j + 1] = pre[j] + cs;
    }
    // Phase 2 (parallel): per chunk, predicted e from the prefix, RN_U sum, min/max
    // partials in units of U, tie flag.
    struct Chunk {
        int e;
        long long sum, mn, mx;
        bool ok;
    };
    std::vector<Chunk> ch(nc);
    for (std::size_t j = 0; j < nc; j++) {
        Chunk c{0, 0, 0, 0, false};
        const long double p = pre[j];
        if (p > 0) {
            int e;
            std::frexp(double(p), &e);
            e -= 1; // p in [2^e, 2^(e+1))
            const double U = std::ldexp(1.0, e - 52);
            c.e = e;
            c.ok = true;
            long long acc = 0;
            for (std::size_t i = j * C; i < std::min(n, (j + 1) * C); i++) {
                const double q = x[i] / U; // exact (power of two) unless it over/underflows
                const double r = std::nearbyint(q);
                if (std::fabs(q - std::trunc(q)) == 0.5 || std::fabs(r) > 0x1p53) {
                    c.ok = false;
                    break;
                }
                acc += (long long)r;
                c.mn = std::min(c.mn, acc);
                c.mx = std::max(c.mx, acc);
            }
            c.sum = acc;
        }
        ch[j] = c;
    }
    // Phase 3 (one thread): the walk.
    double s = 0;
    for (std::size_t j = 0; j < nc; j++) {
        st.chunks++;
        const Chunk& c = ch[j];
        bool fast = false;
        if (c.ok && s > 0) {
            int e;
            std::frexp(s, &e);
            e -= 1;
            if (e == c.e) {
                // In units of U: s / U is an integer in [2^52, 2^53); integer comparisons.
                const long long su = (long long)std::ldexp(s, 52 - e);
                const long long lo = (1ll << 52) + 1, hi = (1ll << 53) - 1;
                if (su + c.mn >= lo && su + c.mx <= hi) fast = true;
            }
        }
        if (fast) {
            s += double(c.sum) * std::ldexp(1.0, c.e - 52);
        } else {
            st.slow_chunks++;
            for (std::size_t i = j * C; i < std::min(n, (j + 1) * C); i++) s += x[i];
        }
    }
    return s;
}

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s SHARED_DIR DECODED_DIR [CHUNK]\n", argv[0]);
        return 2;
    }
    const std::string shared = argv[1], decoded = argv[2];
    const std::size_t C = argc > 3 ? std::stoul(argv[3]) : 1024;
    std::ifstream tsv(shared + "/golden/cases.tsv");
    std::string line;
    std::getline(tsv, line);
    Stats st;
    while (std::getline(tsv, line)) {
        std::istringstream is(line);
        std::string name, rp, dp;
        unsigned w, h, bpc, chroma, frames;
        is >> name >> rp >> dp >> w >> h >> bpc >> chroma >> frames;
        auto path = [&](const std::string& p) {
            if (p.size() > 4 && p.substr(p.size() - 4) == ".mp4")
                return decoded + "/" + p.substr(p.find('/') + 1, p.size() - 4 - p.find('/') - 1) + ".yuv";
            return shared + "/" + p;
        };
        std::ifstream fr(path(rp), std::ios::binary), fd(path(dp), std::ios::binary);
        if (!fr || !fd) continue;
        const unsigned bps = bpc > 8 ? 2 : 1;
        const std::size_t ysz = std::size_t(w) * h * bps, csz = 2 * std::size_t((w + 1) / 2) * ((h + 1) / 2) * bps;
        std::vector<std::uint8_t> yr(ysz), yd(ysz), skip(csz);
        frames = std::min(frames, 10u);
        for (unsigned f = 0; f < frames; f++) {
            fr.read((char*)yr.data(), ysz);
            fr.read((char*)skip.data(), csz);
            fd.read((char*)yd.data(), ysz);
            fd.read((char*)skip.data(), csz);
            const ref::LumaView r{yr.data(), std::ptrdiff_t(w * bps), w, h, bpc}, d{yd.data(), std::ptrdiff_t(w * bps), w, h, bpc};
            ref::MsSsimPyramid pyr;
            ref::float_ms_ssim_pyramid(r, d, pyr);
            ref::IqaSsimMaps m;
            ref::iqa_ssim_maps(pyr.ref[0].data(), pyr.dis[0].data(), pyr.w[0], pyr.h[0], m);
            std::vector<double> ssim(m.l.size());
            for (std::size_t i = 0; i < ssim.size(); i++) ssim[i] = m.l[i] * m.c[i] * m.s[i];
            for (const std::vector<double>* v : {&ssim, &m.l, &m.c, &m.s}) {
                st.sums++;
                if (chunked_sum(*v, C, st) != seq_sum(*v)) st.mismatches++;
            }
        }
        std::printf("%s: sums %ld mismatches %ld chunks %ld slow %ld\n", name.c_str(), st.sums, st.mismatches,
                    st.chunks, st.slow_chunks);
        std::fflush(stdout);
    }
    return st.mismatches ? 1 : 0;
}

// SPDX-License-Identifier: BSD-2-Clause-Patent
// Suite `golden`: kernels/glibc_math.cuh (host build) against this machine's glibc libm,
// bit for bit, and the per-pixel dE00 of kernels/ciede_pixel.cuh against
// ref::ciede_de00() on every pixel pair of the golden cases that ciede accepts.
//
// - Random inputs: for each function, several ranges (those ciede's arguments fall in,
//   then wider ones and special values), VMAF_GLIBC_TEST_N inputs per range (default
//   4,000,000). A mismatch prints the function, the argument(s) and both results in hex.
// - Golden clips: the first VMAF_GLIBC_TEST_FRAMES frames of each case (default 4;
//   "all" for every frame), each pixel's six samples paired as libvmaf pairs them.
// glibc_math.cuh reproduces glibc 2.36's x86_64 FMA build (the one libm picks on a CPU
// with FMA and AVX2); on another CPU the test says so and checks nothing.

#include "catch.hpp"

#include <math.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "ciede.h"
#include "ciede_pixel.cuh"
#include "glibc_math.cuh"
#include "golden_util.h"

namespace {

namespace g = vmaf_cuda::glibc;
namespace ref = vmaf_cuda::ref;
using namespace vmaf_cuda_test;

constexpr double kInf = __builtin_huge_val();
const double kNan = __builtin_nan("");

bool fma_libm() { return __builtin_cpu_supports("fma") && __builtin_cpu_supports("avx2"); }

long per_range() {
    if (const char* s = std::getenv("VMAF_GLIBC_TEST_N")) return std::atol(s);
    return 4000000;
}

bool same(double a, double b) { return std::memcmp(&a, &b, 8) == 0 || (a != a && b != b); }
bool samef(float a, float b) { return std::memcmp(&a, &b, 4) == 0 || (a != a && b != b); }

std::string hexd(double v) {
    char b[48];
    std::snprintf(b, sizeof b, "%a", v);
    return b;
}

// Runs n inputs from gen() through ours and glibc's; reports the count and the first 3.
template <class Gen, class Ours, class Theirs>
void check_range(const std::string& name, long n, Gen&& gen, Ours&& ours, Theirs&& theirs) {
    long bad = 0;
    std::string first;
    for (long i = 0; i < n; ++i) {
        const auto args = gen();
        const auto a = std::apply(ours, args);
        const auto b = std::apply(theirs, args);
        bool ok;
        if constexpr (sizeof(a) == 4) ok = samef(a, b);
        else ok = same(a, b);
        if (!ok && bad++ < 3) {
            std::string s = name + "(";
            std::apply([&](auto... x) { ((s += hexd(double(x)) + " "), ...); }, args);
            first += s + "): ours " + hexd(double(a)) + ", glibc " + hexd(double(b)) + "\n";
        }
    }
    INFO(name << ": " << bad << " of " << n << " differ\n" << first);
    CHECK(bad == 0);
}

} // namespace

/// glibc's libm picks its FMA/AVX2 builds on CPUs that have them; glibc_math.cuh
/// reproduces those. On another CPU (its sse2 build) nothing here can be compared.
extern "C" const char* vmaf_cuda_test_skip_reason(void) {
    return fma_libm() ? nullptr
                      : "this CPU lacks FMA or AVX2: glibc's libm uses its sse2 build, which "
                        "glibc_math.cuh does not reproduce";
}


TEST_CASE("glibc_math: exp, pow, powf, sin, cos, atan2 equal glibc on random inputs", "[golden][glibc_math]") {
    if (!fma_libm()) {
        FAIL("unreachable: vmaf_cuda_test_skip_reason() skips the executable on this CPU");
    }
    const long n = per_range();
    std::mt19937_64 rng(0x61bcull);
    std::uniform_real_distribution<double> u01(0.0, 1.0);
    auto uni = [&](double lo, double hi) { return lo + (hi - lo) * u01(rng); };
    // log-uniform magnitude with random sign
    auto wide = [&](double lo_exp, double hi_exp) {
        const double m = std::exp2(uni(lo_exp, hi_exp));
        return (rng() & 1) ? -m : m;
    };
    auto d1 = [](double (*f)(double)) { return [f](double x) { return f(x); }; };

    SECTION("exp") {
        auto ours = [](double x) { return g::exp(x); };
        auto theirs = [](double x) { return ::exp(x); };
        check_range("exp ciede [-125, 0]", n, [&] { return std::tuple{uni(-125, 0)}; }, ours, theirs);
        check_range("exp [-746, 710]", n, [&] { return std::tuple{uni(-746, 710)}; }, ours, theirs);
        check_range("exp |x| 2^-60..2^10", n, [&] { return std::tuple{wide(-60, 10)}; }, ours, theirs);
        for (double x : {0.0, -0.0, 1.0, -1.0, 709.78, 709.79, -745.13, -745.14, -708.4, -708.39,
                         kInf, -kInf, kNan, 0x1p-1074, 1e-300})
            check_range("exp special", 1, [&] { return std::tuple{x}; }, ours, theirs);
        (void)d1;
    }
    SECTION("pow") {
        auto ours = [](double x, double y) { return g::pow(x, y); };
        auto theirs = [](double x, double y) { return ::pow(x, y); };
        check_range("pow ciede (x, 2.4)", n, [&] { return std::tuple{uni(0.04, 1.95), 2.4}; }, ours, theirs);
        check_range("pow ciede (x, 1/3)", n, [&] { return std::tuple{uni(0.0088, 1.95), 1.0 / 3.0}; }, ours, theirs);
        check_range("pow ciede (x, 7)", n, [&] { return std::tuple{uni(0, 250), 7.0}; }, ours, theirs);
        check_range("pow (float x, 7)", n, [&] { return std::tuple{double(float(uni(0, 250))), 7.0}; }, ours, theirs);
        check_range("pow wide", n, [&] { return std::tuple{std::fabs(wide(-40, 40)), uni(-60, 60)}; }, ours, theirs);
        check_range("pow huge/tiny results", n / 4,
                    [&] { return std::tuple{std::fabs(wide(-8, 8)), wide(4, 12)}; }, ours, theirs);
        check_range("pow negative x, integer y", n / 4,
                    [&] { return std::tuple{-uni(0, 4), double(int(uni(-60, 60)))}; }, ours, theirs);
        for (double x : {0.0, -0.0, 1.0, -1.0, kInf, -kInf, kNan, 0x1p-1074, -2.0})
            for (double y : {0.0, -0.0, 1.0, -1.0, 2.0, 0.5, 3.0, -3.0, kInf, -kInf, kNan, 1e300})
                check_range("pow special", 1, [&] { return std::tuple{x, y}; }, ours, theirs);
    }
    SECTION("powf") {
        auto ours = [](float x, float y) { return g::powf(x, y); };
        auto theirs = [](float x, float y) { return ::powf(x, y); };
        check_range("powf ciede (x, 7)", n, [&] { return std::tuple{float(uni(0, 250)), 7.0f}; }, ours, theirs);
        check_range("powf wide", n,
                    [&] { return std::tuple{float(std::fabs(wide(-30, 30))), float(uni(-40, 40))}; }, ours, theirs);
        check_range("powf negative x, integer y", n / 4,
                    [&] { return std::tuple{float(-uni(0, 10)), float(int(uni(-40, 40)))}; }, ours, theirs);
        check_range("powf subnormal x", n / 4,
                    [&] { return std::tuple{float(uni(0, 1) * 0x1p-126), float(uni(-1, 1))}; }, ours, theirs);
        for (float x : {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN, 25.0f})
            for (float y : {0.0f, 1.0f, -1.0f, 2.0f, 7.0f, 0.5f, INFINITY, -INFINITY, NAN})
                check_range("powf special", 1, [&] { return std::tuple{x, y}; }, ours, theirs);
    }
    SECTION("sin and cos") {
        auto s_ours = [](double x) { return g::sin(x); };
        auto s_theirs = [](double x) { return ::sin(x); };
        auto c_ours = [](double x) { return g::cos(x); };
        auto c_theirs = [](double x) { return ::cos(x); };
        check_range("sin ciede [0, 1.05]", n, [&] { return std::tuple{uni(0, 1.05)}; }, s_ours, s_theirs);
        check_range("sin ciede [-pi/2, pi/2]", n, [&] { return std::tuple{uni(-1.5708, 1.5708)}; }, s_ours, s_theirs);
        check_range("cos ciede [-1, 35]", n, [&] { return std::tuple{uni(-1, 35)}; }, c_ours, c_theirs);
        check_range("sin [-1e6, 1e6]", n, [&] { return std::tuple{uni(-1e6, 1e6)}; }, s_ours, s_theirs);
        check_range("cos [-1e6, 1e6]", n, [&] { return std::tuple{uni(-1e6, 1e6)}; }, c_ours, c_theirs);
        check_range("sin |x| 2^-40..2^26", n, [&] { return std::tuple{wide(-40, 26)}; }, s_ours, s_theirs);
        check_range("cos |x| 2^-40..2^26", n, [&] { return std::tuple{wide(-40, 26)}; }, c_ours, c_theirs);
        for (double x : {0.0, -0.0, 0.855469, 2.426265, 1.5707963267948966, 3.141592653589793,
                         kInf, -kInf, kNan, 105414335.0}) {
            check_range("sin special", 1, [&] { return std::tuple{x}; }, s_ours, s_theirs);
            check_range("cos special", 1, [&] { return std::tuple{x}; }, c_ours, c_theirs);
        }
    }
    SECTION("atan2") {
        auto ours = [](double y, double x) { return g::atan2(y, x); };
        auto theirs = [](double y, double x) { return ::atan2(y, x); };
        check_range("atan2 ciede [-250, 250]^2", n, [&] { return std::tuple{uni(-250, 250), uni(-250, 250)}; },
                    ours, theirs);
        check_range("atan2 floats [-250, 250]^2", n,
                    [&] { return std::tuple{double(float(uni(-250, 250))), double(float(uni(-250, 250)))}; },
                    ours, theirs);
        check_range("atan2 small ratio", n, [&] {
            const double x = uni(-250, 250);
            return std::tuple{x * uni(-0.07, 0.07), x};
        }, ours, theirs);
        check_range("atan2 large ratio", n, [&] {
            const double y = uni(-250, 250);
            return std::tuple{y, y * uni(-0.07, 0.07)};
        }, ours, theirs);
        check_range("atan2 wide", n, [&] { return std::tuple{wide(-1074, 1023), wide(-1074, 1023)}; }, ours, theirs);
        for (double y : {0.0, -0.0, 1.0, -1.0, kInf, -kInf, kNan})
            for (double x : {0.0, -0.0, 1.0, -1.0, kInf, -kInf, kNan})
                check_range("atan2 special", 1, [&] { return std::tuple{y, x}; }, ours, theirs);
    }
}

TEST_CASE("glibc_math: host dE00 equals ref::ciede_de00 on random pixel pairs", "[golden][glibc_math][ciede]") {
    if (!fma_libm()) {
        FAIL("unreachable: vmaf_cuda_test_skip_reason() skips the executable on this CPU");
    }
    const long n = per_range() / 4;
    std::mt19937_64 rng(0xde00ull);
    for (unsigned bpc : {8u, 10u, 12u, 16u}) {
        std::uniform_int_distribution<unsigned> any(0, (1u << bpc) - 1);
        std::uniform_int_distribution<int> near(-3, 3);
        long bad = 0;
        std::string first;
        for (long i = 0; i < n; ++i) {
            float v[6];
            for (float& x : v) x = float(any(rng));
            if (i & 1) // a near neighbour
                for (int k = 3; k < 6; ++k) {
                    const int t = int(v[k - 3]) + near(rng);
                    v[k] = float(t < 0 ? 0 : t > int((1u << bpc) - 1) ? int((1u << bpc) - 1) : t);
                }
            const float a = vmaf_cuda::cuda::ciede_de00(bpc, v[0], v[1], v[2], v[3], v[4], v[5]);
            const float b = ref::ciede_de00(bpc, v[0], v[1], v[2], v[3], v[4], v[5]);
            if (std::memcmp(&a, &b, 4) && bad++ < 3) {
                char s[256];
                std::snprintf(s, sizeof s, "bpc %u (%g %g %g | %g %g %g): ours %a ref %a\n", bpc, v[0],
                              v[1], v[2], v[3], v[4], v[5], double(a), double(b));
                first += s;
            }
        }
        INFO(bpc << "-bit: " << bad << " of " << n << " differ\n" << first);
        CHECK(bad == 0);
    }
}

namespace {

// The kernel's map computed on the host: the same pairing (cuda::Chroma420Layout, the code
// the kernel runs) and the same per-pixel function. Returns the number of differing
// floats; reports the first 3.
std::size_t host_map_vs_reference(const ref::YuvView& rv, const ref::YuvView& dv, const std::string& what) {
    std::vector<float> want;
    ref::ciede_map(rv, dv, want);
    const unsigned w = rv.y.width, h = rv.y.height, bpc = rv.y.bpc;
    const auto layout = vmaf_cuda::cuda::Chroma420Layout::of(w, h);
    auto chroma = [&](const ref::YuvView& v, unsigned k, unsigned x, unsigned y) -> int {
        if (v.chroma == 444) return (k ? v.cr : v.cb).at(x, y);
        unsigned pp, col, row;
        if (!layout.locate(k, x, y, pp, col, row)) return 0;
        return (pp ? v.cr : v.cb).at(col, row);
    };
    std::size_t bad = 0;
    for (unsigned y = 0; y < h; ++y)
        for (unsigned x = 0; x < w; ++x) {
            const float got = vmaf_cuda::cuda::ciede_de00(
                bpc, float(rv.y.at(x, y)), float(chroma(rv, 0, x, y)), float(chroma(rv, 1, x, y)),
                float(dv.y.at(x, y)), float(chroma(dv, 0, x, y)), float(chroma(dv, 1, x, y)));
            const float ref_v = want[std::size_t(y) * w + x];
            if (std::memcmp(&got, &ref_v, 4) && bad++ < 3)
                FAIL_CHECK(what << " pixel (" << x << ", " << y << "): ours " << hexd(got) << " ref "
                                << hexd(ref_v));
        }
    return bad;
}

} // namespace

TEST_CASE("glibc_math: host dE00 map equals ref::ciede_map on the golden clips", "[golden][glibc_math][ciede]") {
    if (!fma_libm()) {
        FAIL("unreachable: vmaf_cuda_test_skip_reason() skips the executable on this CPU");
    }
    const char* fs = std::getenv("VMAF_GLIBC_TEST_FRAMES");
    const std::size_t max_frames = fs && std::string(fs) == "all" ? ~std::size_t(0) : fs ? std::stoul(fs) : 4;
    std::size_t pixels = 0;
    for (const GoldenCase& c : golden_cases()) {
        if (c.chroma != 420 && c.chroma != 444) continue;
        const auto rf = read_yuv_frames(c, c.ref), df = read_yuv_frames(c, c.dist);
        const std::size_t frames = std::min({rf.size(), df.size(), max_frames});
        for (std::size_t f = 0; f < frames; ++f) {
            ref::YuvView rv, dv;
            for (auto [v, fr] : {std::pair{&rv, &rf[f]}, std::pair{&dv, &df[f]}}) {
                v->chroma = c.chroma;
                ref::LumaView* planes[3] = {&v->y, &v->cb, &v->cr};
                for (unsigned p = 0; p < 3; p++)
                    *planes[p] = ref::LumaView{fr->plane(p), std::ptrdiff_t(fr->pitch(p)),
                                               p ? fr->cw : fr->w, p ? fr->ch : fr->h, c.bpc};
            }
            CHECK(host_map_vs_reference(rv, dv, c.name + " frame " + std::to_string(f)) == 0);
            pixels += std::size_t(c.width) * c.height;
        }
    }
    std::printf("glibc_math: %zu golden pixel pairs compared\n", pixels);
    CHECK(pixels > 0);
}

TEST_CASE("glibc_math: host dE00 map equals ref::ciede_map at odd and tiny 4:2:0 sizes", "[golden][glibc_math][ciede]") {
    if (!fma_libm()) {
        FAIL("unreachable: vmaf_cuda_test_skip_reason() skips the executable on this CPU");
    }
    // Sizes where libvmaf's upsampling reads its padding ((w>>1) % 32 != 0), the next row
    // or the V plane ((w>>1) % 32 == 0, odd w), V for U and past V (odd h), nothing (w or
    // h == 1). Random samples, planar, tight pitch.
    const unsigned sizes[][2] = {{1, 1}, {1, 5}, {5, 1}, {2, 2}, {3, 3}, {17, 17}, {33, 35},
                                 {63, 65}, {64, 64}, {65, 33}, {65, 2}, {65, 3}, {129, 67}};
    std::mt19937_64 rng(0x420ull);
    for (const auto& s : sizes)
        for (unsigned bpc : {8u, 10u, 16u}) {
            const unsigned w = s[0], h = s[1], cw = (w + 1) / 2, ch = (h + 1) / 2;
            std::uniform_int_distribution<unsigned> any(0, (1u << bpc) - 1);
            std::vector<std::uint16_t> planes[2][3];
            ref::YuvView views[2];
            for (int k = 0; k < 2; ++k) {
                views[k].chroma = 420;
                ref::LumaView* pv[3] = {&views[k].y, &views[k].cb, &views[k].cr};
                for (int p = 0; p < 3; ++p) {
                    const unsigned pw = p ? cw : w, ph = p ? ch : h;
                    planes[k][p].resize(std::size_t(pw) * ph);
                    for (auto& v : planes[k][p]) v = std::uint16_t(any(rng));
                    if (bpc == 8) { // 8-bit storage
                        auto* b = reinterpret_cast<std::uint8_t*>(planes[k][p].data());
                        for (std::size_t i = 0; i < planes[k][p].size(); ++i) b[i] = std::uint8_t(planes[k][p][i]);
                    }
                    *pv[p] = ref::LumaView{planes[k][p].data(), std::ptrdiff_t(pw * (bpc > 8 ? 2 : 1)), pw, ph, bpc};
                }
            }
            CHECK(host_map_vs_reference(views[0], views[1],
                                        std::to_string(w) + "x" + std::to_string(h) + " " +
                                            std::to_string(bpc) + "-bit") == 0);
        }
}

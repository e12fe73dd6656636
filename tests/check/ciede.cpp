// SPDX-License-Identifier: BSD-2-Clause-Patent
// checkasm-style test: cuda::CiedeKernel against ref::ciede_map() (libvmaf v3.2.0
// ciede.c) on random pictures: noise, smooth+noise with a distorted copy, zero/max
// fills, identical pictures; 4:2:0 and 4:4:4; planar and semi-planar (NV12/P010/P016)
// chroma, LSB- and MSB-aligned; 8/10/12/16 bit; odd and tiny sizes (including those
// where libvmaf's 4:2:0 upsampling reads its padding, the next row or the V plane);
// padded pitches with garbage; guard bytes around the map. Exact comparison of every
// float of the map (first mismatch: position, both values, the six input samples) and
// of the final score (ref::ciede_sum + ref::ciede_finish on the host copy).
// VMAF_CHECK_SEED changes the base seed. Note: the reference runs on this machine's
// glibc libm; the kernel reproduces glibc 2.36's x86_64 FMA build (glibc_math.cuh).
// "[.bench]" (hidden; `check_test "[.bench]"`): kernel time per frame, 1080p and 4K.

#include "catch.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gnu/libc-version.h>
#include <math.h>

#include "check_util.h"
#include "ciede.cuh"
#include "ciede.h"
#include "ciede_pixel.cuh"
#include "glibc_math.cuh"
#include "glibc_math_device.h"
#include "yuv_check_util.h"

namespace {

using namespace vmaf_cuda_test;
namespace vref = vmaf_cuda::ref;
namespace vcu = vmaf_cuda::cuda;

enum class Pair { noise, smooth_distorted, max_vs_zero, zero_vs_max, identical };

const char* pair_name(Pair p) {
    switch (p) {
    case Pair::noise: return "noise/noise";
    case Pair::smooth_distorted: return "smooth+noise/distorted";
    case Pair::max_vs_zero: return "max/zero";
    case Pair::zero_vs_max: return "zero/max";
    default: return "identical";
    }
}

struct Combo {
    unsigned w, h, bpc, chroma;
    Pair pair;
    Layout layout;
    bool msb;
};

std::string describe_combo(const Combo& c) {
    return std::to_string(c.w) + "x" + std::to_string(c.h) + " " + std::to_string(c.bpc) + "-bit " +
           std::to_string(c.chroma) + " " + pair_name(c.pair) + " " + layout_name(c.layout) +
           (c.msb ? " msb" : "");
}

// The map into a device buffer with guard bytes on both sides; host copy in `got`.
std::string run_map(const vcu::CiedeKernel& k, const DevicePicture& r, const DevicePicture& d,
                    cudaStream_t stream, std::vector<float>& got) {
    constexpr std::size_t kGuard = 256;
    constexpr unsigned char kGuardByte = 0xa5;
    const std::size_t n = k.accum_bytes();
    vcu::DeviceBuffer out(2 * kGuard + n);
    VMAF_CUDA_CHECK(cudaMemsetAsync(out.get(), kGuardByte, out.bytes(), stream));
    k.enqueue(r.plane.data(), d.plane.data(), out.get<unsigned char>() + kGuard, stream);
    VMAF_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<unsigned char> host(out.bytes());
    VMAF_CUDA_CHECK(cudaMemcpy(host.data(), out.get(), host.size(), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < kGuard; ++i)
        if (host[i] != kGuardByte || host[kGuard + n + i] != kGuardByte)
            return "guard bytes around the map were overwritten";
    got.resize(n / sizeof(float));
    std::memcpy(got.data(), host.data() + kGuard, n);
    return {};
}

// The six samples ciede reads for pixel (x, y) of a host picture pair, as libvmaf pairs
// them (4:2:0: the libvmaf layout, zeros where it reads past; see reference/ciede.h).
std::string samples(const HostPicture& p, unsigned x, unsigned y) {
    unsigned u = 0, v = 0;
    if (p.chroma == 444) {
        u = p.cb.get(x, y);
        v = p.cr.get(x, y);
    } else {
        const auto layout = vcu::Chroma420Layout::of(p.w, p.h);
        auto at = [&](unsigned c) -> unsigned {
            unsigned pp, col, row;
            return layout.locate(c, x, y, pp, col, row) ? (pp ? p.cr : p.cb).get(col, row) : 0;
        };
        u = at(0);
        v = at(1);
    }
    char b[64];
    std::snprintf(b, sizeof b, "(%u, %u, %u)", p.y.get(x, y), u, v);
    return b;
}

std::string fmt(float v) {
    char b[64];
    std::snprintf(b, sizeof b, "%.9g (%a)", double(v), double(v));
    return b;
}

std::string run_combo(const Combo& c, std::uint64_t seed, cudaStream_t stream) {
    std::mt19937_64 rng(seed);
    const Fill rf = c.pair == Pair::noise              ? Fill::noise
                    : c.pair == Pair::max_vs_zero      ? Fill::max
                    : c.pair == Pair::zero_vs_max      ? Fill::zero
                                                       : Fill::smooth_noise;
    const HostPicture ref = random_picture(c.w, c.h, c.bpc, c.chroma, rf, rng);
    const HostPicture dis =
        c.pair == Pair::identical          ? ref
        : c.pair == Pair::smooth_distorted ? distort_picture(ref, rng)
        : random_picture(c.w, c.h, c.bpc, c.chroma,
                         c.pair == Pair::noise ? Fill::noise : c.pair == Pair::max_vs_zero ? Fill::zero : Fill::max,
                         rng);
    std::vector<float> want;
    vref::ciede_map(ref.view(), dis.view(), want);

    const unsigned pad = std::uniform_int_distribution<unsigned>(0, 64)(rng);
    const DevicePicture d_ref(ref, c.layout, c.msb, pad), d_dis(dis, c.layout, c.msb, pad);
    const vcu::CiedeKernel k(c.w, c.h, c.bpc, c.chroma);
    if (k.accum_bytes() != want.size() * sizeof(float)) return "accum_bytes() != 4 * w * h";
    std::vector<float> got;
    std::string err = run_map(k, d_ref, d_dis, stream, got);
    if (!err.empty()) return err + " [" + d_ref.what + "]";
    std::size_t mismatches = 0, first = 0;
    for (std::size_t i = 0; i < want.size(); ++i)
        if (std::memcmp(&got[i], &want[i], sizeof(float)) && mismatches++ == 0) first = i;
    if (mismatches) {
        const unsigned x = unsigned(first % c.w), y = unsigned(first / c.w);
        return std::to_string(mismatches) + " of " + std::to_string(want.size()) +
               " dE00 differ; first at (" + std::to_string(x) + ", " + std::to_string(y) +
               "): gpu=" + fmt(got[first]) + " ref=" + fmt(want[first]) + ", ref YUV " +
               samples(ref, x, y) + ", dis YUV " + samples(dis, x, y) + " [" + d_ref.what + "]";
    }
    const double sg = vcu::ciede_finish_host(k, got.data());
    const double sw = vref::ciede_score(ref.view(), dis.view());
    if (std::memcmp(&sg, &sw, sizeof(double))) {
        char b[128];
        std::snprintf(b, sizeof b, "score differs: gpu=%.17g ref=%.17g", sg, sw);
        return b;
    }
    return {};
}

std::vector<Combo> combos() {
    std::vector<Combo> v;
    // 4:2:0 odd sizes hit every read past libvmaf's chroma planes: (w>>1) % 32 != 0
    // (padding), == 0 (next row / V plane / past V), odd heights (U -> V, V -> past).
    const unsigned sizes[][2] = {{1, 1}, {2, 2}, {1, 5}, {5, 1}, {3, 3}, {17, 17}, {18, 22},
                                 {33, 35}, {63, 65}, {64, 64}, {65, 33}, {65, 2}, {129, 67},
                                 {321, 241}};
    const Pair pairs[] = {Pair::noise, Pair::smooth_distorted, Pair::max_vs_zero, Pair::zero_vs_max,
                          Pair::identical};
    unsigned i = 0;
    for (const auto& s : sizes)
        for (unsigned bpc : {8u, 10u, 12u, 16u})
            for (unsigned chroma : {420u, 444u})
                for (Pair p : pairs) {
                    ++i;
                    v.push_back({s[0], s[1], bpc, chroma, p, (i & 1) ? Layout::semi : Layout::planar,
                                 bpc > 8 && (i & 2)});
                }
    for (unsigned bpc : {8u, 10u})
        for (Layout l : {Layout::planar, Layout::semi})
            v.push_back({1920, 1080, bpc, 420, Pair::smooth_distorted, l, bpc == 10});
    v.push_back({1921, 1081, 12, 420, Pair::noise, Layout::semi, true});
    v.push_back({1280, 720, 16, 444, Pair::noise, Layout::planar, false});
    v.push_back({3840, 2160, 10, 420, Pair::smooth_distorted, Layout::semi, true});
    return v;
}

} // namespace

// Run first: where the map test fails, this says whether the device libm, the host libm
// (another glibc or a CPU without FMA: the reference's values change) or the pixel code
// is the cause.
TEST_CASE("ciede: glibc_math on the device equals its host build and this machine's libm", "[ciede][gpu]") {
    if (!vmaf_cuda_test::require_gpu_or_skip()) return;
    const bool fma = __builtin_cpu_supports("fma") && __builtin_cpu_supports("avx2");
    std::printf("ciede: reference libm is glibc %s, CPU FMA+AVX2: %s (glibc_math.cuh reproduces "
                "glibc 2.36's FMA build)\n", gnu_get_libc_version(), fma ? "yes" : "NO");
    constexpr std::size_t n = 1 << 20;
    std::mt19937_64 rng(check_seed());
    std::uniform_real_distribution<double> u01(0, 1);
    struct Range {
        const char* name;
        vmaf_cuda_test::GlibcFn fn;
        double xlo, xhi, ylo, yhi; // y range; ylo == yhi: that constant
    };
    using F = vmaf_cuda_test::GlibcFn;
    const Range ranges[] = {
        {"exp [-125, 0]", F::exp, -125, 0, 0, 0},     {"exp [-746, 710]", F::exp, -746, 710, 0, 0},
        {"pow (x, 2.4)", F::pow, 0.04, 1.95, 2.4, 2.4}, {"pow (x, 1/3)", F::pow, 0.0088, 1.95, 1 / 3., 1 / 3.},
        {"pow (x, 7)", F::pow, 0, 250, 7, 7},          {"pow wide", F::pow, 1e-3, 1e3, -60, 60},
        {"powf (x, 7)", F::powf, 0, 250, 7, 7},        {"powf wide", F::powf, 1e-3, 1e3, -20, 20},
        {"sin [-pi/2, pi/2]", F::sin, -1.5708, 1.5708, 0, 0}, {"sin [-1e6, 1e6]", F::sin, -1e6, 1e6, 0, 0},
        {"cos [-1, 35]", F::cos, -1, 35, 0, 0},        {"cos [-1e6, 1e6]", F::cos, -1e6, 1e6, 0, 0},
        {"atan2 [-250, 250]^2", F::atan2, -250, 250, -250, 250},
    };
    std::vector<double> x(n), y(n), dev(n);
    for (const Range& r : ranges) {
        for (std::size_t i = 0; i < n; ++i) {
            x[i] = r.xlo + (r.xhi - r.xlo) * u01(rng);
            y[i] = r.ylo == r.yhi ? r.ylo : r.ylo + (r.yhi - r.ylo) * u01(rng);
            if (r.fn == F::powf) {
                x[i] = double(float(x[i]));
                y[i] = double(float(y[i]));
            }
        }
        vmaf_cuda_test::glibc_math_on_device(r.fn, x.data(), y.data(), dev.data(), n);
        std::size_t vs_host = 0, vs_libm = 0;
        std::string first;
        for (std::size_t i = 0; i < n; ++i) {
            namespace g = vmaf_cuda::glibc;
            double host = 0, libm = 0;
            switch (r.fn) {
            case F::exp: host = g::exp(x[i]); libm = ::exp(x[i]); break;
            case F::pow: host = g::pow(x[i], y[i]); libm = ::pow(x[i], y[i]); break;
            case F::powf:
                host = g::powf(float(x[i]), float(y[i]));
                libm = ::powf(float(x[i]), float(y[i]));
                break;
            case F::sin: host = g::sin(x[i]); libm = ::sin(x[i]); break;
            case F::cos: host = g::cos(x[i]); libm = ::cos(x[i]); break;
            case F::atan2: host = g::atan2(x[i], y[i]); libm = ::atan2(x[i], y[i]); break;
            }
            const bool dh = std::memcmp(&dev[i], &host, 8) != 0, dl = std::memcmp(&dev[i], &libm, 8) != 0;
            vs_host += dh;
            vs_libm += dl;
            if ((dh || dl) && first.empty()) {
                char b[200];
                std::snprintf(b, sizeof b, " first: (%a, %a) device %a host %a libm %a", x[i], y[i], dev[i],
                              host, libm);
                first = b;
            }
        }
        std::printf("  %-22s device vs host build: %zu, device vs libm: %zu of %zu differ%s\n", r.name,
                    vs_host, vs_libm, n, first.c_str());
        CHECK(vs_host == 0);
        CHECK(vs_libm == 0);
    }
    // The per-pixel function: device vs ref::ciede_de00 (host libm).
    for (unsigned bpc : {8u, 10u, 12u, 16u}) {
        std::uniform_int_distribution<unsigned> any(0, (1u << bpc) - 1);
        std::vector<float> v(6 * n), got(n);
        for (std::size_t i = 0; i < n; ++i) {
            for (int k = 0; k < 3; ++k) v[6 * i + k] = float(any(rng));
            for (int k = 3; k < 6; ++k) {
                const int t = int(v[6 * i + k - 3]) + int(rng() % 7) - 3;
                v[6 * i + k] = (i & 1) ? float(any(rng)) : float(t < 0 ? 0 : t > int((1u << bpc) - 1) ? int((1u << bpc) - 1) : t);
            }
        }
        vmaf_cuda_test::ciede_de00_on_device(bpc, v.data(), got.data(), n);
        std::size_t bad = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const float* s = &v[6 * i];
            const float want = vref::ciede_de00(bpc, s[0], s[1], s[2], s[3], s[4], s[5]);
            if (std::memcmp(&got[i], &want, 4) && bad++ == 0)
                FAIL_CHECK(bpc << "-bit (" << s[0] << " " << s[1] << " " << s[2] << " | " << s[3] << " "
                                << s[4] << " " << s[5] << "): device " << fmt(got[i]) << " ref " << fmt(want));
        }
        std::printf("  dE00 %2u-bit device vs ref::ciede_de00: %zu of %zu differ\n", bpc, bad, n);
        CHECK(bad == 0);
    }
}

TEST_CASE("ciede: kernel dE00 map and score equal the reference on random pictures", "[ciede][gpu]") {
    if (!vmaf_cuda_test::require_gpu_or_skip()) return;
    Stream stream;
    run_combos(
        combos(), 5000, [&](const Combo& c, std::uint64_t seed) { return run_combo(c, seed, stream.s); },
        describe_combo);
}

TEST_CASE("ciede: a dense grid of 8-bit colours against near neighbours", "[ciede][gpu]") {
    if (!vmaf_cuda_test::require_gpu_or_skip()) return;
    // A 256 x 256 4:4:4 picture: Y = x (every value), U = 4y mod 256, V = 64 (y / 64) +
    // x / 4; dis differs by 1 in Y and by -1..1 in U and V: small differences everywhere
    // (hue angles near 0 and pi, tiny chroma), where rounding differences would show.
    Stream stream;
    HostPicture ref, dis;
    std::mt19937_64 rng(check_seed());
    ref = random_picture(256, 256, 8, 444, Fill::zero, rng);
    dis = ref;
    for (unsigned y = 0; y < 256; ++y)
        for (unsigned x = 0; x < 256; ++x) {
            const unsigned u = (y * 4) & 255, v = ((y / 64) * 64 + x / 4) & 255;
            ref.y.set(x, y, x);
            ref.cb.set(x, y, u);
            ref.cr.set(x, y, v);
            dis.y.set(x, y, x < 255 ? x + 1 : x - 1);
            dis.cb.set(x, y, unsigned(int(u) + int(x % 3) - 1) & 255);
            dis.cr.set(x, y, unsigned(int(v) - int(x % 3) + 1) & 255);
        }
    std::vector<float> want, got;
    vref::ciede_map(ref.view(), dis.view(), want);
    const DevicePicture d_ref(ref, Layout::planar, false, 0), d_dis(dis, Layout::planar, false, 0);
    const vcu::CiedeKernel k(256, 256, 8, 444);
    REQUIRE(run_map(k, d_ref, d_dis, stream.s, got).empty());
    std::size_t bad = 0;
    for (std::size_t i = 0; i < want.size(); ++i)
        if (std::memcmp(&got[i], &want[i], 4)) {
            if (bad++ < 4)
                FAIL_CHECK("pixel " << i % 256 << "," << i / 256 << ": gpu=" << fmt(got[i])
                                    << " ref=" << fmt(want[i]));
        }
    CHECK(bad == 0);
}

TEST_CASE("ciede: invalid construction and planes are refused", "[ciede][gpu]") {
    if (!vmaf_cuda_test::require_gpu_or_skip()) return;
    CHECK_THROWS_AS(vcu::CiedeKernel(64, 64, 8, 422), vcu::CudaError);
    CHECK_THROWS_AS(vcu::CiedeKernel(64, 64, 8, 400), vcu::CudaError);
    CHECK_THROWS_AS(vcu::CiedeKernel(64, 64, 9, 420), vcu::CudaError);
    CHECK_THROWS_AS(vcu::CiedeKernel(0, 64, 8, 420), vcu::CudaError);
    std::mt19937_64 rng(check_seed());
    const HostPicture pic = random_picture(64, 64, 10, 420, Fill::noise, rng);
    const DevicePicture d(pic, Layout::semi, true, 0);
    vcu::DeviceBuffer out(64 * 64 * 4);
    const vcu::CiedeKernel k8(64, 64, 8, 420);
    CHECK_THROWS_AS(k8.enqueue(d.plane.data(), d.plane.data(), out.get(), nullptr), vcu::CudaError);
    const vcu::CiedeKernel k444(64, 64, 10, 444); // 4:4:4 needs full-size chroma
    CHECK_THROWS_AS(k444.enqueue(d.plane.data(), d.plane.data(), out.get(), nullptr), vcu::CudaError);
}

TEST_CASE("ciede: kernel time per frame", "[.bench][ciede]") {
    if (!vmaf_cuda_test::require_gpu_or_skip()) return;
    Stream stream;
    const unsigned sizes[][3] = {{1920, 1080, 8}, {1920, 1080, 10}, {3840, 2160, 8}, {3840, 2160, 10}};
    for (const auto& s : sizes)
        for (Layout l : {Layout::planar, Layout::semi}) {
            std::mt19937_64 rng(check_seed());
            const HostPicture ref = random_picture(s[0], s[1], s[2], 420, Fill::smooth_noise, rng);
            const HostPicture dis = distort_picture(ref, rng);
            const DevicePicture d_ref(ref, l, s[2] > 8, 0), d_dis(dis, l, s[2] > 8, 0);
            const vcu::CiedeKernel k(s[0], s[1], s[2], 420);
            vcu::DeviceBuffer out(k.accum_bytes());
            const double us = time_us(
                [&](cudaStream_t st) { k.enqueue(d_ref.plane.data(), d_dis.plane.data(), out.get(), st); },
                stream.s, 5, 50);
            // The host finish on the map's host copy (ref::ciede_sum + ciede_finish).
            std::vector<float> map(k.accum_bytes() / sizeof(float));
            VMAF_CUDA_CHECK(cudaMemcpy(map.data(), out.get(), k.accum_bytes(), cudaMemcpyDeviceToHost));
            const auto t0 = std::chrono::steady_clock::now();
            volatile double score = vcu::ciede_finish_host(k, map.data());
            (void)score;
            const double host_ms =
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            std::printf("ciede %ux%u %u-bit 4:2:0 %s: %.1f us/frame on the GPU; map D2H %.1f MB; host "
                        "finish %.2f ms\n", s[0], s[1], s[2], layout_name(l), us, k.accum_bytes() / 1e6, host_ms);
        }
    SUCCEED();
}

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

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "check_util.h"
#include "ciede.cuh"
#include "ciede.h"
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
        const unsigned cw = p.w >> 1, ch = p.h >> 1, s = cw ? (cw + 31) & ~31u : 1;
        const unsigned long long plane = 1ull * s * ch;
        auto at = [&](unsigned c) -> unsigned {
            const unsigned long long lin = c * plane + 1ull * (y / 2) * s + x / 2;
            if (lin >= 2 * plane) return 0;
            const unsigned pp = lin >= plane;
            const unsigned long long rem = lin - pp * plane;
            if (rem % s >= cw) return 0;
            return (pp ? p.cr : p.cb).get(unsigned(rem % s), unsigned(rem / s));
        };
        u = at(0);
        v = at(1);
    }
    return "(" + std::to_string(p.y.get(x, y)) + ", " + std::to_string(u) + ", " + std::to_string(v) + ")";
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
            std::printf("ciede %ux%u %u-bit 4:2:0 %s: %.1f us/frame (map D2H %.1f MB)\n", s[0], s[1], s[2],
                        layout_name(l), us, k.accum_bytes() / 1e6);
        }
    SUCCEED();
}

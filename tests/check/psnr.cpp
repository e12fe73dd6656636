// SPDX-License-Identifier: BSD-2-Clause-Patent
// checkasm-style test: cuda::PsnrKernel against ref::psnr_accumulate() (libvmaf v3.2.0
// integer_psnr.c) on random pictures: every fill (zero, max, noise, smooth+noise, and
// identical pictures), odd and tiny sizes up to 4K, 8/10/12/16 bit, 4:0:0/4:2:0/4:2:2/
// 4:4:4, planar and semi-planar (NV12/P010/P016) chroma, LSB- and MSB-aligned samples,
// padded pitches with garbage, guard bytes around the accumulator. Exact comparison of
// every field of ref::PsnrAccum and of the psnr_finish() doubles; on failure prints the
// seed, the case and the first differing field. VMAF_CHECK_SEED changes the base seed.
// "[.bench]" (hidden; `check_test "[.bench]"`): kernel time per frame, 1080p and 4K.

#include "catch.hpp"

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "check_util.h"
#include "psnr.cuh"
#include "psnr.h"
#include "yuv_check_util.h"

namespace {

using namespace vmaf_cuda_test;
namespace vref = vmaf_cuda::ref;
namespace vcu = vmaf_cuda::cuda;

enum class Pair { zero, max_vs_zero, noise, smooth_distorted, identical };

const char* pair_name(Pair p) {
    switch (p) {
    case Pair::zero: return "zero/zero";
    case Pair::max_vs_zero: return "max/zero";
    case Pair::noise: return "noise/noise";
    case Pair::smooth_distorted: return "smooth+noise/distorted";
    default: return "identical";
    }
}

struct Combo {
    unsigned w, h, bpc, chroma;
    Pair pair;
    Layout layout;
    bool msb;
    vref::PsnrOptions opt{};
};

std::string describe_combo(const Combo& c) {
    std::string s = std::to_string(c.w) + "x" + std::to_string(c.h) + " " + std::to_string(c.bpc) +
                    "-bit " + std::to_string(c.chroma) + " " + pair_name(c.pair) + " " +
                    layout_name(c.layout) + (c.msb ? " msb" : "");
    if (!c.opt.enable_chroma) s += " enable_chroma=false";
    if (c.opt.reduced_hbd_peak) s += " reduced_hbd_peak";
    if (c.opt.min_sse != 0) s += " min_sse=" + std::to_string(c.opt.min_sse);
    return s;
}

std::string compare(const vref::PsnrAccum& got, const vref::PsnrAccum& want) {
    static const char* names[] = {"Y", "Cb", "Cr"};
    for (unsigned p = 0; p < 3; p++) {
        if (got.sse[p] != want.sse[p])
            return std::string("sse[") + names[p] + "]: gpu=" + std::to_string(got.sse[p]) +
                   " ref=" + std::to_string(want.sse[p]);
        if (got.n_pixels[p] != want.n_pixels[p])
            return std::string("n_pixels[") + names[p] + "]: gpu=" + std::to_string(got.n_pixels[p]) +
                   " ref=" + std::to_string(want.n_pixels[p]);
    }
    return {};
}

std::string run_combo(const Combo& c, std::uint64_t seed, cudaStream_t stream) {
    std::mt19937_64 rng(seed);
    const Fill rf = c.pair == Pair::zero ? Fill::zero
                    : c.pair == Pair::max_vs_zero ? Fill::max
                    : c.pair == Pair::noise ? Fill::noise
                                            : Fill::smooth_noise;
    const HostPicture ref = random_picture(c.w, c.h, c.bpc, c.chroma, rf, rng);
    const HostPicture dis = c.pair == Pair::identical          ? ref
                            : c.pair == Pair::smooth_distorted ? distort_picture(ref, rng)
                            : random_picture(c.w, c.h, c.bpc, c.chroma,
                                             c.pair == Pair::noise ? Fill::noise : Fill::zero, rng);
    const vref::PsnrSetup setup = vref::psnr_setup(c.opt, c.bpc, c.w, c.h, c.chroma);
    vref::PsnrAccum want{};
    vref::psnr_accumulate(ref.view(), dis.view(), setup, want);

    const unsigned pad = std::uniform_int_distribution<unsigned>(0, 64)(rng);
    const DevicePicture d_ref(ref, c.layout, c.msb, pad), d_dis(dis, c.layout, c.msb, pad);
    const vcu::PsnrKernel k(c.w, c.h, c.bpc, c.chroma, c.opt);
    if (k.accum_bytes() != sizeof(vref::PsnrAccum)) return "accum_bytes() != sizeof(PsnrAccum)";
    vref::PsnrAccum got{};
    for (int rep = 0; rep < 2; ++rep) { // twice on one object: nothing left from the last frame
        std::string err = run_guarded(
            [&](vref::PsnrAccum* d_out, cudaStream_t st) {
                k.enqueue(d_ref.plane.data(), d_dis.plane.data(), d_out, st);
            },
            stream, got);
        if (err.empty()) err = compare(got, want);
        if (!err.empty()) return (rep ? "(second enqueue) " : "") + err + " [" + d_ref.what + "]";
    }
    const vref::PsnrScores sg = vcu::psnr_finish(k, &got), sw = vref::psnr_finish(setup, want);
    for (unsigned p = 0; p < setup.planes; p++)
        if (std::memcmp(&sg.psnr[p], &sw.psnr[p], sizeof(double)) ||
            std::memcmp(&sg.mse[p], &sw.mse[p], sizeof(double)))
            return "psnr_finish differs at plane " + std::to_string(p);
    return {};
}

std::vector<Combo> combos() {
    std::vector<Combo> v;
    const unsigned sizes[][2] = {{1, 1}, {2, 3}, {3, 2}, {5, 7}, {17, 17}, {18, 22}, {33, 35},
                                 {64, 64}, {321, 241}, {1279, 719}};
    const Pair pairs[] = {Pair::zero, Pair::max_vs_zero, Pair::noise, Pair::smooth_distorted,
                          Pair::identical};
    unsigned i = 0;
    for (const auto& s : sizes)
        for (unsigned bpc : {8u, 10u, 12u, 16u})
            for (unsigned chroma : {400u, 420u, 422u, 444u})
                for (Pair p : pairs) {
                    ++i;
                    v.push_back({s[0], s[1], bpc, chroma, p, (i & 1) ? Layout::semi : Layout::planar,
                                 bpc > 8 && (i & 2)});
                }
    // Big frames: every layout at 1080p, the largest differences at 4K.
    for (unsigned bpc : {8u, 10u, 16u})
        for (Layout l : {Layout::planar, Layout::semi}) {
            v.push_back({1920, 1080, bpc, 420, Pair::smooth_distorted, l, bpc == 10});
            v.push_back({3840, 2160, bpc, 420, Pair::max_vs_zero, l, bpc == 10});
        }
    v.push_back({3840, 2160, 16, 444, Pair::noise, Layout::planar, false});
    v.push_back({3841, 2161, 12, 422, Pair::noise, Layout::semi, true});
    // Options: the kernel reads one plane without chroma; the rest is the host's finish.
    Combo o{321, 241, 10, 420, Pair::noise, Layout::semi, true};
    o.opt.enable_chroma = false;
    v.push_back(o);
    o.opt = {};
    o.opt.reduced_hbd_peak = true;
    o.opt.min_sse = 0.5;
    v.push_back(o);
    return v;
}

} // namespace

TEST_CASE("psnr: kernel SSE equals the reference on random pictures", "[psnr][gpu]") {
    if (!vmaf_cuda_test::require_gpu_or_skip()) return;
    Stream stream;
    run_combos(
        combos(), 4000, [&](const Combo& c, std::uint64_t seed) { return run_combo(c, seed, stream.s); },
        describe_combo);
}

TEST_CASE("psnr: invalid construction and planes are refused", "[psnr][gpu]") {
    if (!vmaf_cuda_test::require_gpu_or_skip()) return;
    CHECK_THROWS_AS(vcu::PsnrKernel(64, 64, 9, 420), vcu::CudaError);
    CHECK_THROWS_AS(vcu::PsnrKernel(64, 64, 8, 411), vcu::CudaError);
    CHECK_THROWS_AS(vcu::PsnrKernel(0, 64, 8, 420), vcu::CudaError);
    CHECK_THROWS_AS(vcu::PsnrKernel(70000, 4, 8, 420), vcu::CudaError);
    std::mt19937_64 rng(check_seed());
    const HostPicture pic = random_picture(64, 64, 10, 420, Fill::noise, rng);
    const DevicePicture d(pic, Layout::planar, false, 0);
    const vcu::PsnrKernel k(64, 64, 8, 420); // 8-bit kernel, 10-bit planes
    vcu::DeviceBuffer out(sizeof(vref::PsnrAccum));
    CHECK_THROWS_AS(k.enqueue(d.plane.data(), d.plane.data(), out.get(), nullptr), vcu::CudaError);
    const vcu::PsnrKernel k2(65, 64, 10, 420); // wider than the planes
    CHECK_THROWS_AS(k2.enqueue(d.plane.data(), d.plane.data(), out.get(), nullptr), vcu::CudaError);
}

TEST_CASE("psnr: kernel time per frame", "[.bench][psnr]") {
    if (!vmaf_cuda_test::require_gpu_or_skip()) return;
    Stream stream;
    const unsigned sizes[][3] = {{1920, 1080, 8}, {1920, 1080, 10}, {3840, 2160, 8}, {3840, 2160, 10}};
    for (const auto& s : sizes)
        for (Layout l : {Layout::planar, Layout::semi}) {
            std::mt19937_64 rng(check_seed());
            const HostPicture ref = random_picture(s[0], s[1], s[2], 420, Fill::smooth_noise, rng);
            const HostPicture dis = distort_picture(ref, rng);
            const DevicePicture d_ref(ref, l, s[2] > 8, 0), d_dis(dis, l, s[2] > 8, 0);
            const vcu::PsnrKernel k(s[0], s[1], s[2], 420);
            vcu::DeviceBuffer out(k.accum_bytes());
            const double us = time_us(
                [&](cudaStream_t st) { k.enqueue(d_ref.plane.data(), d_dis.plane.data(), out.get(), st); },
                stream.s, 20, 500);
            std::printf("psnr %ux%u %u-bit 4:2:0 %s: %.1f us/frame\n", s[0], s[1], s[2], layout_name(l), us);
        }
    SUCCEED();
}

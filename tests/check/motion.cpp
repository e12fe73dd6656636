// SPDX-License-Identifier: BSD-2-Clause-Patent
// checkasm-style test: cuda::MotionKernel against ref::motion_sad() on random planes.
// Exact comparison of the uint64 SAD; on failure prints the seed, the case and both
// values. Set VMAF_CHECK_SEED to change the base seed.
// "[.bench]" test (hidden; run with `motion_check "[.bench]"`): kernel time per frame.

#include "catch.hpp"

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "check_util.h"
#include "motion.cuh"
#include "motion.h"

namespace {

using namespace vmaf_cuda_test;
namespace vref = vmaf_cuda::ref;
namespace vcu = vmaf_cuda::cuda;

struct Combo {
    unsigned w, h, bpc;
    Fill fill;
};


std::string run_kernel(vcu::MotionKernel& k, const DevicePlane& prev, const DevicePlane& cur,
                       cudaStream_t stream, std::uint64_t& got) {
    return run_guarded(
        [&](std::uint64_t* d_out, cudaStream_t st) { k.enqueue(prev.view, cur.view, d_out, st); },
        stream, got);
}

std::string compare(std::uint64_t got, std::uint64_t want) {
    if (got == want) return {};
    return "sad: gpu=" + std::to_string(got) + " ref=" + std::to_string(want);
}

// prev/cur pairs per fill: zero -> (zero, zero); max -> (max, zero), the largest
// difference everywhere; noise -> two independent noise planes; smooth+noise -> the
// plane and a noisy copy.
std::string run_combo(const Combo& c, std::uint64_t seed, cudaStream_t stream) {
    std::mt19937_64 rng(seed);
    const HostPlane prev = random_plane(c.w, c.h, c.bpc, c.fill, rng);
    const Fill cur_fill = c.fill == Fill::max ? Fill::zero : c.fill;
    const HostPlane cur = c.fill == Fill::smooth_noise ? distort(prev, rng)
                                                       : random_plane(c.w, c.h, c.bpc, cur_fill, rng);
    vref::MotionScratch scratch(c.w, c.h, c.bpc);
    const std::uint64_t want = vref::motion_sad(to_view(prev), to_view(cur), scratch);
    const DevicePlane d_prev(prev), d_cur(cur);
    vcu::MotionKernel k(c.w, c.h, c.bpc);
    std::uint64_t got = 0;
    std::string err = run_kernel(k, d_prev, d_cur, stream, got);
    if (err.empty()) err = compare(got, want);
    if (!err.empty()) return err;
    // Swapped order on the same object (blur of the negated difference).
    const std::uint64_t want2 = vref::motion_sad(to_view(cur), to_view(prev), scratch);
    err = run_kernel(k, d_cur, d_prev, stream, got);
    if (err.empty()) err = compare(got, want2);
    return err.empty() ? err : "(second enqueue, swapped) " + err;
}

std::vector<Combo> combos() {
    std::vector<Combo> v;
    const unsigned sizes[][2] = {{18, 22}, {33, 35}, {321, 241}, {1279, 719}, {1920, 1080}};
    for (const auto& s : sizes)
        for (unsigned bpc : {8u, 10u, 12u, 16u})
            for (Fill f : kAllFills) v.push_back({s[0], s[1], bpc, f});
    v.push_back({3840, 2160, 8, Fill::smooth_noise});
    v.push_back({3840, 2160, 16, Fill::max});
    v.push_back({3840, 2160, 16, Fill::noise});
    return v;
}

} // namespace

TEST_CASE("motion: kernel SAD equals the reference on random planes", "[motion][gpu]") {
    if (!vmaf_cuda_test::require_gpu_or_skip()) return;
    Stream stream;
    run_combos(
        combos(), 1000, [&](const Combo& c, std::uint64_t seed) { return run_combo(c, seed, stream.s); },
        [](const Combo& c) { return describe(c.w, c.h, c.bpc, c.fill); });
}

TEST_CASE("motion: kernel time per frame", "[.bench][motion]") {
    if (!vmaf_cuda_test::require_gpu_or_skip()) return;
    Stream stream;
    const unsigned sizes[][3] = {{1920, 1080, 8}, {1920, 1080, 10}, {3840, 2160, 8}, {3840, 2160, 10}};
    for (const auto& s : sizes) {
        std::mt19937_64 rng(check_seed());
        const HostPlane prev = random_plane(s[0], s[1], s[2], Fill::smooth_noise, rng);
        const HostPlane cur = distort(prev, rng);
        const DevicePlane d_prev(prev), d_cur(cur);
        vcu::MotionKernel k(s[0], s[1], s[2]);
        vcu::DeviceBuffer out(sizeof(std::uint64_t));
        auto* d_out = out.get<std::uint64_t>();
        const double us = time_us(
            [&](cudaStream_t st) { k.enqueue(d_prev.view, d_cur.view, d_out, st); }, stream.s, 20, 500);
        std::printf("motion %ux%u %u-bit: %.1f us/frame\n", s[0], s[1], s[2], us);
    }
    SUCCEED();
}

// SPDX-License-Identifier: BSD-2-Clause-Patent
// checkasm-style test: cuda::VifKernel against ref::vif_accumulate() on random planes.
// Exact comparison of every integer sum; on failure prints the seed, the case and the
// first mismatching field. Set VMAF_CHECK_SEED to change the base seed.
// "[.bench]" test (hidden; run with `vif_check "[.bench]"`): kernel time per frame.

#include "catch.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "check_util.h"
#include "vif.cuh"
#include "vif.h"

namespace {

using namespace vmaf_cuda_test;
namespace vref = vmaf_cuda::ref;
namespace vcu = vmaf_cuda::cuda;

// Unsets an environment variable for a scope and restores its value on any exit.
class EnvGuard {
public:
    explicit EnvGuard(const char* name) : name_(name) {
        const char* v = std::getenv(name);
        had_ = v != nullptr;
        if (v) value_ = v;
        unsetenv(name);
    }
    ~EnvGuard() {
        if (had_) setenv(name_, value_.c_str(), 1);
        else unsetenv(name_);
    }
    EnvGuard(const EnvGuard&) = delete;
    EnvGuard& operator=(const EnvGuard&) = delete;

private:
    const char* name_;
    bool had_ = false;
    std::string value_;
};

struct Combo {
    unsigned w, h, bpc;
    Fill fill;
    double egl;
};

// Owns a CUDA stream for the duration of a test.

std::string first_mismatch(const vref::VifAccum& gpu, const vref::VifAccum& want) {
    static const char* names[4] = {"num_log", "den_log", "num_non_log", "den_non_log"};
    for (int s = 0; s < 4; ++s) {
        const std::int64_t g[4] = {gpu.scale[s].num_log, gpu.scale[s].den_log,
                                   gpu.scale[s].num_non_log, gpu.scale[s].den_non_log};
        const std::int64_t r[4] = {want.scale[s].num_log, want.scale[s].den_log,
                                   want.scale[s].num_non_log, want.scale[s].den_non_log};
        for (int f = 0; f < 4; ++f)
            if (g[f] != r[f])
                return "scale " + std::to_string(s) + " " + names[f] + ": gpu=" + std::to_string(g[f]) +
                       " ref=" + std::to_string(r[f]);
    }
    return {};
}

// Runs the kernel once into a guarded device buffer; returns an error text (empty when
// fine) and the result.
std::string run_kernel(vcu::VifKernel& k, const DevicePlane& a, const DevicePlane& b,
                       cudaStream_t stream, vref::VifAccum& got) {
    return run_guarded(
        [&](vref::VifAccum* d_out, cudaStream_t st) { k.enqueue(a.view, b.view, d_out, st); },
        stream, got);
}

// smem_limit: VifKernel::set_smem_limit() (0: the device's own limit).
std::string run_combo(const Combo& c, std::uint64_t seed, cudaStream_t stream, bool reuse,
                      std::size_t smem_limit = 0) {
    std::mt19937_64 rng(seed);
    // dis: same flat fill for zero/max; an independent noise plane for noise (sums of
    // either sign, extreme variances); a noisy copy of ref for smooth+noise.
    const HostPlane ref = random_plane(c.w, c.h, c.bpc, c.fill, rng);
    const HostPlane dis = c.fill == Fill::smooth_noise ? distort(ref, rng)
                                                       : random_plane(c.w, c.h, c.bpc, c.fill, rng);

    const vref::VifOptions opt{c.egl};
    vref::VifScratch scratch(c.w, c.h, c.bpc);
    vref::VifAccum want{};
    vref::vif_accumulate(to_view(ref), to_view(dis), opt, scratch, want);

    const DevicePlane d_ref(ref), d_dis(dis);
    vcu::VifKernel k(c.w, c.h, c.bpc, opt);
    if (smem_limit) {
        k.set_smem_limit(smem_limit);
        if (!k.small_tiles(0) || (c.w >= 2 && c.h >= 2 && !k.small_tiles(1)))
            return "set_smem_limit(" + std::to_string(smem_limit) + ") left scales 0/1 in 8-row tiles";
    }
    vref::VifAccum got{};
    std::string err = run_kernel(k, d_ref, d_dis, stream, got);
    if (err.empty()) err = first_mismatch(got, want);
    if (!err.empty() || !reuse) return err;

    // Same object again with the roles swapped: no state may leak between frames.
    vref::vif_accumulate(to_view(dis), to_view(ref), opt, scratch, want);
    err = run_kernel(k, d_dis, d_ref, stream, got);
    if (err.empty()) err = first_mismatch(got, want);
    return err.empty() ? err : "(second enqueue, ref/dis swapped) " + err;
}

std::vector<Combo> combos() {
    std::vector<Combo> v;
    const unsigned depths[] = {8, 10, 12, 16};
    // Small and odd sizes: everything.
    const unsigned small[][2] = {{18, 22}, {33, 35}, {321, 241}};
    for (const auto& s : small)
        for (unsigned bpc : depths)
            for (Fill f : kAllFills)
                for (double egl : {100.0, 1.0}) v.push_back({s[0], s[1], bpc, f, egl});
    // Larger sizes: fewer combinations (the CPU reference takes ~0.2 s per 1080p frame).
    int i = 0;
    for (unsigned bpc : depths)
        for (Fill f : kAllFills) v.push_back({1279, 719, bpc, f, (i++ & 1) ? 1.0 : 100.0});
    v.push_back({1920, 1080, 8, Fill::smooth_noise, 100.0});
    v.push_back({1920, 1080, 10, Fill::noise, 1.0});
    v.push_back({1920, 1080, 12, Fill::smooth_noise, 1.0});
    v.push_back({1920, 1080, 16, Fill::noise, 100.0});
    v.push_back({3840, 2160, 8, Fill::smooth_noise, 100.0});
    v.push_back({3840, 2160, 16, Fill::noise, 1.0});
    return v;
}

} // namespace

TEST_CASE("vif: kernel sums equal the reference on random planes", "[vif][gpu]") {
    if (!vmaf_cuda_test::require_gpu_or_skip()) return;
    Stream stream;
    run_combos(
        combos(), 0, [&](const Combo& c, std::uint64_t seed) { return run_combo(c, seed, stream.s, c.w * c.h <= 321 * 241); },
        [](const Combo& c) { return describe(c.w, c.h, c.bpc, c.fill) + " egl=" + std::to_string(c.egl); });
}

TEST_CASE("vif: the 6-row tiles of GPUs with 64 KiB of shared memory a block (Turing) equal the reference",
          "[vif][gpu]") {
    if (!vmaf_cuda_test::require_gpu_or_skip()) return;
    Stream stream;
    std::vector<Combo> v;
    for (const auto& c : combos())
        if (c.w * c.h <= 1920u * 1080u) v.push_back(c);
    run_combos(
        v, 7, [&](const Combo& c, std::uint64_t seed) { return run_combo(c, seed, stream.s, c.w * c.h <= 321 * 241, 65536); },
        [](const Combo& c) { return describe(c.w, c.h, c.bpc, c.fill) + " egl=" + std::to_string(c.egl) + " smem 64 KiB"; });
    // Below what even those tiles need: a clear error, naming the sizes.
    const vref::VifOptions opt{100.0};
    const EnvGuard env("VMAF_CUDA_VIF_SMEM_LIMIT"); // unset here, restored on any exit
    vcu::VifKernel k(64, 64, 8, opt);
    const bool own = k.small_tiles(0); // the GPU's own choice (Turing: the small tiles)
    try {
        k.set_smem_limit(16384);
        FAIL("set_smem_limit(16384) accepted");
    } catch (const vcu::CudaError& e) {
        const std::string what = e.what();
        INFO(what);
        CHECK(what.find("bytes of shared memory per block; this GPU allows 16384") != std::string::npos);
    }
    // A refusal keeps the kernels chosen before (on GPUs with room for the 8-row tiles it
    // used to leave scale 0 switched to the small ones); a limit above the GPU's is the
    // GPU's own, and those kernels run and give the reference's sums.
    CHECK(k.small_tiles(0) == own);
    k.set_smem_limit(65536);
    CHECK(k.small_tiles(0));
    k.set_smem_limit(std::size_t{1} << 30);
    CHECK(k.small_tiles(0) == own);
    std::mt19937_64 rng(check_seed() + 77);
    const HostPlane ref = random_plane(64, 64, 8, Fill::noise, rng), dis = distort(ref, rng);
    vref::VifScratch scratch(64, 64, 8);
    vref::VifAccum want{}, got{};
    vref::vif_accumulate(to_view(ref), to_view(dis), opt, scratch, want);
    const DevicePlane d_ref(ref), d_dis(dis);
    std::string err = run_kernel(k, d_ref, d_dis, stream.s, got);
    if (err.empty()) err = first_mismatch(got, want);
    INFO("seed " << check_seed() + 77 << ": " << err);
    CHECK(err.empty());
    // The environment's limit: a value that is not a byte count is refused, naming it.
    setenv("VMAF_CUDA_VIF_SMEM_LIMIT", "64k", 1);
    CHECK_THROWS_WITH(vcu::VifKernel(64, 64, 8, opt),
                      Catch::Contains("VMAF_CUDA_VIF_SMEM_LIMIT=64k is not a positive number of bytes"));
    setenv("VMAF_CUDA_VIF_SMEM_LIMIT", "65536", 1);
    CHECK(vcu::VifKernel(64, 64, 8, opt).small_tiles(0));
}

namespace {

// Ladders: one reference against K renditions in one enqueue.
struct LadderCombo {
    unsigned w, h, bpc, renditions, capacity;
    double egl;
    unsigned group_size = 0; // VifKernel::set_ladder_group_size (0: the kernel's choice)
};

// K distorted planes of one reference, each of its own kind (a noisy copy at several
// strengths, independent noise, a flat plane) and its own pitch; every rendition's sums
// against ref::vif_accumulate, the outputs in a guarded buffer.
std::string run_ladder(const LadderCombo& c, std::uint64_t seed, cudaStream_t stream) {
    std::mt19937_64 rng(seed);
    const HostPlane ref = random_plane(c.w, c.h, c.bpc, Fill::smooth_noise, rng);
    std::vector<HostPlane> dis;
    for (unsigned r = 0; r < c.renditions; ++r) {
        switch (r % 4) {
        case 0: dis.push_back(distort(ref, rng, 0.01 + 0.02 * r)); break;
        case 1: dis.push_back(random_plane(c.w, c.h, c.bpc, Fill::noise, rng)); break;
        case 2: dis.push_back(distort(ref, rng, 0.2)); break;
        default: dis.push_back(random_plane(c.w, c.h, c.bpc, r & 4 ? Fill::max : Fill::zero, rng));
        }
    }
    const vref::VifOptions opt{c.egl};
    vcu::VifKernel k(c.w, c.h, c.bpc, opt, c.capacity);
    k.set_ladder_group_size(c.group_size);
    const DevicePlane d_ref(ref);
    std::vector<std::unique_ptr<DevicePlane>> d_dis;
    std::vector<const vcu::DeviceLuma*> views;
    for (const HostPlane& d : dis) {
        d_dis.push_back(std::make_unique<DevicePlane>(d));
        views.push_back(&d_dis.back()->view);
    }
    vref::VifScratch scratch(c.w, c.h, c.bpc);
    // Twice: the second time with the renditions in reverse order (no state may leak).
    for (int pass = 0; pass < 2; ++pass) {
        if (pass) std::reverse(views.begin(), views.end());
        constexpr std::size_t kGuard = 256;
        const std::size_t bytes = c.renditions * sizeof(vref::VifAccum);
        vcu::DeviceBuffer out(2 * kGuard + bytes);
        VMAF_CUDA_CHECK(cudaMemsetAsync(out.get(), 0xa5, out.bytes(), stream));
        k.enqueue(d_ref.view, views.data(), c.renditions,
                  reinterpret_cast<vref::VifAccum*>(out.get<unsigned char>() + kGuard), stream);
        VMAF_CUDA_CHECK(cudaStreamSynchronize(stream));
        std::vector<unsigned char> host(out.bytes());
        VMAF_CUDA_CHECK(cudaMemcpy(host.data(), out.get(), host.size(), cudaMemcpyDeviceToHost));
        for (std::size_t i = 0; i < kGuard; ++i)
            if (host[i] != 0xa5 || host[kGuard + bytes + i] != 0xa5)
                return "guard bytes around the outputs were overwritten";
        for (unsigned r = 0; r < c.renditions; ++r) {
            const unsigned which = pass ? c.renditions - 1 - r : r;
            vref::VifAccum want{}, got{};
            vref::vif_accumulate(to_view(ref), to_view(dis[which]), opt, scratch, want);
            std::memcpy(&got, host.data() + kGuard + r * sizeof got, sizeof got);
            const std::string err = first_mismatch(got, want);
            if (!err.empty())
                return "pass " + std::to_string(pass) + " rendition " + std::to_string(r) + ": " + err;
        }
    }
    return {};
}

std::vector<LadderCombo> ladder_combos() {
    std::vector<LadderCombo> v;
    const unsigned depths[] = {8, 10, 12, 16};
    const unsigned small[][2] = {{18, 22}, {33, 35}, {321, 241}};
    for (const auto& s : small)
        for (unsigned bpc : depths)
            for (unsigned k : {2u, 3u, 6u}) v.push_back({s[0], s[1], bpc, k, 6, k == 3 ? 1.0 : 100.0});
    // fewer renditions than the capacity; the edges of the 9..15-bit path
    v.push_back({321, 241, 8, 2, 8, 100.0});
    v.push_back({77, 49, 9, 3, 4, 100.0});
    v.push_back({77, 49, 15, 3, 4, 1.0});
    for (unsigned bpc : depths) v.push_back({1279, 719, bpc, 3, 3, bpc == 12 ? 1.0 : 100.0});
    v.push_back({1920, 1080, 8, 2, 6, 100.0});
    v.push_back({1920, 1080, 10, 3, 3, 1.0});
    v.push_back({3840, 2160, 8, 2, 2, 100.0});
    // every split of five renditions into groups (the last one smaller), at every scale
    for (unsigned g = 1; g <= 6; ++g) v.push_back({321, 241, g % 2 ? 8u : 10u, 5, 6, 100.0, g});
    v.push_back({1920, 1080, 8, 6, 6, 100.0}); // the kernel's own split at 1080p
    return v;
}

} // namespace

TEST_CASE("vif: ladder enqueue equals one enqueue per rendition", "[vif][gpu]") {
    if (!vmaf_cuda_test::require_gpu_or_skip()) return;
    Stream stream;
    run_combos(
        ladder_combos(), 1000, [&](const LadderCombo& c, std::uint64_t seed) { return run_ladder(c, seed, stream.s); },
        [](const LadderCombo& c) {
            return std::to_string(c.w) + "x" + std::to_string(c.h) + " " + std::to_string(c.bpc) +
                   "-bit K=" + std::to_string(c.renditions) + " of " + std::to_string(c.capacity) +
                   " egl=" + std::to_string(c.egl) + " groups of " +
                   (c.group_size ? std::to_string(c.group_size) : std::string("auto"));
        });
}

TEST_CASE("vif: ladder refuses bad rendition counts", "[vif][gpu]") {
    if (!vmaf_cuda_test::require_gpu_or_skip()) return;
    std::mt19937_64 rng(check_seed());
    const HostPlane ref = random_plane(64, 48, 8, Fill::noise, rng);
    const DevicePlane d_ref(ref);
    vcu::VifKernel k(64, 48, 8, vref::VifOptions{}, 2);
    vcu::DeviceBuffer out(4 * sizeof(vref::VifAccum));
    const vcu::DeviceLuma* views[3] = {&d_ref.view, &d_ref.view, &d_ref.view};
    auto* d_out = out.get<vref::VifAccum>();
    CHECK_THROWS_WITH(k.enqueue(d_ref.view, views, 3, d_out, nullptr), Catch::Contains("renditions"));
    CHECK_THROWS_WITH(k.enqueue(d_ref.view, views, 0, d_out, nullptr), Catch::Contains("renditions"));
    CHECK_THROWS_WITH(vcu::VifKernel(64, 48, 8, vref::VifOptions{}, 65), Catch::Contains("renditions"));
}

TEST_CASE("vif: kernel time per frame", "[.bench][vif]") {
    if (!vmaf_cuda_test::require_gpu_or_skip()) return;
    Stream stream;
    const unsigned sizes[][3] = {{1920, 1080, 8}, {1920, 1080, 10}, {3840, 2160, 8}, {3840, 2160, 10}};
    for (const auto& s : sizes) {
        std::mt19937_64 rng(check_seed());
        const HostPlane ref = random_plane(s[0], s[1], s[2], Fill::smooth_noise, rng);
        const HostPlane dis = distort(ref, rng);
        const DevicePlane d_ref(ref), d_dis(dis);
        vcu::VifKernel k(s[0], s[1], s[2], vref::VifOptions{});
        vcu::DeviceBuffer out(sizeof(vref::VifAccum));
        auto* d_out = out.get<vref::VifAccum>();
        const double us = time_us(
            [&](cudaStream_t st) { k.enqueue(d_ref.view, d_dis.view, d_out, st); }, stream.s, 20, 200);
        std::printf("vif %ux%u %u-bit: %.1f us/frame\n", s[0], s[1], s[2], us);
        // A ladder of six renditions against the same reference, in one enqueue.
        std::vector<HostPlane> dis6;
        std::vector<std::unique_ptr<DevicePlane>> d6;
        std::vector<const vcu::DeviceLuma*> v6;
        for (int r = 0; r < 6; ++r) {
            dis6.push_back(distort(ref, rng, 0.01 * (r + 1)));
            d6.push_back(std::make_unique<DevicePlane>(dis6.back()));
            v6.push_back(&d6.back()->view);
        }
        vcu::VifKernel k6(s[0], s[1], s[2], vref::VifOptions{}, 6);
        vcu::DeviceBuffer out6(6 * sizeof(vref::VifAccum));
        const double us6 = time_us(
            [&](cudaStream_t st) { k6.enqueue(d_ref.view, v6.data(), 6, out6.get<vref::VifAccum>(), st); },
            stream.s, 5, 50);
        std::printf("vif %ux%u %u-bit ladder of 6: %.1f us/reference frame (%.1f per rendition)\n", s[0],
                    s[1], s[2], us6, us6 / 6);
    }
    SUCCEED();
}

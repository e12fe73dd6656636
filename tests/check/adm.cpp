// SPDX-License-Identifier: BSD-2-Clause-Patent
// Check: kernels/adm.cu (AdmKernel) against reference/adm.cpp (adm_accumulate), field by
// field on the integer accumulators, for random planes over sizes, bit depths, fill
// modes, pitches and enhancement-gain limits; the ladder enqueue (one reference, K
// renditions) against adm_accumulate per rendition. Seed: env VMAF_CHECK_SEED (decimal
// or 0x hex, see check_util.h), printed with every failure.
// "[.bench]" (hidden; `check_test "[.bench][adm]"`): time per pair and per ladder of 6,
// 1080p and 4K.

#include "catch.hpp"

#include "adm.cuh"
#include "adm.h"
#include "check_util.h"

#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <sstream>
#include <string>
#include <vector>

namespace {

using vmaf_cuda::ref::AdmAccum;
namespace vt = vmaf_cuda_test;

/// Input pairs: the four shared fills plus `extreme` (random 0/max samples, the widest
/// integer ranges in the DWT and masking stages).
enum class PairFill { zero, max, noise, smooth, extreme };

const char* pair_fill_name(PairFill f) {
    switch (f) {
    case PairFill::zero: return "zero";
    case PairFill::max: return "max";
    case PairFill::noise: return "noise";
    case PairFill::smooth: return "smooth+noise";
    case PairFill::extreme: return "extreme";
    }
    return "?";
}

/// Reference and distorted planes with independent random row padding (even bytes for
/// 16-bit samples). zero/max: identical constant planes; noise: independent noise;
/// smooth: smooth pattern plus noise, distorted = reference plus small noise.
void make_pair(unsigned w, unsigned h, unsigned bpc, PairFill f, std::mt19937_64& rng,
               vt::HostPlane& r, vt::HostPlane& d) {
    const unsigned pad_r = static_cast<unsigned>(rng() % 33) * 2;
    const unsigned pad_d = static_cast<unsigned>(rng() % 33) * 2;
    switch (f) {
    case PairFill::zero:
    case PairFill::max: {
        const vt::Fill vf = f == PairFill::zero ? vt::Fill::zero : vt::Fill::max;
        r = vt::make_plane(w, h, bpc, vf, rng, pad_r);
        d = vt::make_plane(w, h, bpc, vf, rng, pad_d);
        return;
    }
    case PairFill::noise:
        r = vt::make_plane(w, h, bpc, vt::Fill::noise, rng, pad_r);
        d = vt::make_plane(w, h, bpc, vt::Fill::noise, rng, pad_d);
        return;
    case PairFill::smooth: {
        r = vt::make_plane(w, h, bpc, vt::Fill::smooth_noise, rng, pad_r);
        const vt::HostPlane dist = vt::distort(r, rng);
        d = vt::make_plane(w, h, bpc, vt::Fill::zero, rng, pad_d);
        for (unsigned y = 0; y < h; ++y)
            for (unsigned x = 0; x < w; ++x) d.set(x, y, dist.get(x, y));
        return;
    }
    case PairFill::extreme: {
        const unsigned maxv = (1u << bpc) - 1;
        r = vt::make_plane(w, h, bpc, vt::Fill::zero, rng, pad_r);
        d = vt::make_plane(w, h, bpc, vt::Fill::zero, rng, pad_d);
        for (unsigned y = 0; y < h; ++y)
            for (unsigned x = 0; x < w; ++x) {
                const unsigned a = (rng() & 1) ? maxv : 0;
                r.set(x, y, a);
                d.set(x, y, (rng() & 3) ? a : maxv - a);
            }
        return;
    }
    }
}

/// First differing field of two accumulators, or "" when identical.
std::string first_mismatch(const AdmAccum& want, const AdmAccum& got) {
    static const char* band[3] = {"h", "v", "d"};
    std::ostringstream os;
    for (int s = 0; s < 4; ++s) {
        for (int b = 0; b < 3; ++b) {
            if (want.den[s][b] != got.den[s][b]) {
                os << "den[" << s << "][" << band[b] << "]: reference " << want.den[s][b]
                   << ", kernel " << got.den[s][b];
                return os.str();
            }
            if (want.num[s][b] != got.num[s][b]) {
                os << "num[" << s << "][" << band[b] << "]: reference " << want.num[s][b]
                   << ", kernel " << got.num[s][b];
                return os.str();
            }
            if (want.aim[s][b] != got.aim[s][b]) {
                os << "aim[" << s << "][" << band[b] << "]: reference " << want.aim[s][b]
                   << ", kernel " << got.aim[s][b];
                return os.str();
            }
        }
    }
    if (std::memcmp(&want, &got, sizeof(AdmAccum)) != 0) return "bytes differ (padding?)";
    return "";
}

struct Combo {
    unsigned bpc;
    PairFill fill;
    double egl;
};

std::vector<Combo> combos_for(unsigned w, unsigned h) {
    std::vector<Combo> out;
    if (static_cast<unsigned long long>(w) * h > 4'000'000ULL) { // 4K: a few combos only
        out.push_back({8, PairFill::smooth, 100.0});
        out.push_back({10, PairFill::noise, 1.0});
        out.push_back({16, PairFill::smooth, 100.0});
        out.push_back({16, PairFill::max, 1.0});
        return out;
    }
    const bool small = static_cast<unsigned long long>(w) * h < 200'000ULL;
    for (unsigned bpc : {8u, 10u, 12u, 16u})
        for (PairFill f : {PairFill::zero, PairFill::max, PairFill::noise, PairFill::smooth,
                           PairFill::extreme}) {
            if (f == PairFill::extreme && !small) continue;
            for (double egl : {100.0, 1.0}) out.push_back({bpc, f, egl});
        }
    return out;
}

} // namespace

TEST_CASE("adm: AdmKernel accumulators equal adm_accumulate", "[adm][gpu]") {
    if (!vmaf_cuda_test::require_gpu_or_skip()) return;

    const std::uint64_t seed = vt::check_seed();
    std::mt19937_64 rng(seed);
    const unsigned sizes[][2] = {{18, 22}, {33, 35}, {321, 241}, {1279, 719}, {1920, 1080}, {3840, 2160}};

    cudaStream_t stream = nullptr;
    VMAF_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    vmaf_cuda::cuda::DeviceBuffer d_out(2 * sizeof(AdmAccum));
    AdmAccum* d_acc = d_out.get<AdmAccum>();

    int failures = 0;
    long checked = 0;
    for (const auto& sz : sizes) {
        const unsigned w = sz[0], h = sz[1];
        for (const Combo& c : combos_for(w, h)) {
            vt::HostPlane r, d;
            make_pair(w, h, c.bpc, c.fill, rng, r, d);

            std::ostringstream ctx;
            ctx << "seed=0x" << std::hex << seed << std::dec << " size=" << w << "x" << h
                << " bpc=" << c.bpc << " fill=" << pair_fill_name(c.fill) << " egl=" << c.egl
                << " pitch=" << r.pitch << "/" << d.pitch;

            vmaf_cuda::ref::AdmOptions opt;
            opt.enhn_gain_limit = c.egl;
            vmaf_cuda::ref::AdmScratch scratch(w, h);
            AdmAccum want{};
            vmaf_cuda::ref::adm_accumulate(vt::to_view(r), vt::to_view(d), opt, scratch, want);

            const vt::DevicePlane dr(r), dd(d);
            vmaf_cuda::cuda::AdmKernel kernel(w, h, c.bpc, opt);
            // Poison the outputs, run twice (the second run checks the scratch reset).
            VMAF_CUDA_CHECK(cudaMemsetAsync(d_acc, 0x5A, 2 * sizeof(AdmAccum), stream));
            kernel.enqueue(dr.view, dd.view, d_acc, stream);
            kernel.enqueue(dr.view, dd.view, d_acc + 1, stream);
            AdmAccum got[2];
            VMAF_CUDA_CHECK(cudaMemcpyAsync(got, d_acc, sizeof(got), cudaMemcpyDeviceToHost, stream));
            VMAF_CUDA_CHECK(cudaStreamSynchronize(stream));

            for (int run = 0; run < 2; ++run) {
                const std::string diff = first_mismatch(want, got[run]);
                ++checked;
                if (!diff.empty()) {
                    ++failures;
                    UNSCOPED_INFO(ctx.str() << " run=" << run << ": first mismatch " << diff);
                    CHECK(diff.empty());
                }
            }
            if (failures >= 8) break;
        }
        if (failures >= 8) break;
    }
    VMAF_CUDA_CHECK(cudaStreamDestroy(stream));
    INFO("seed=0x" << std::hex << seed << std::dec << ", " << checked << " kernel runs compared");
    CHECK(failures == 0);
}

TEST_CASE("adm: AdmKernel honours skip_aim and skip_scale0", "[adm][gpu]") {
    if (!vmaf_cuda_test::require_gpu_or_skip()) return;
    const std::uint64_t seed = vt::check_seed() ^ 0x9e3779b97f4a7c15ULL;
    std::mt19937_64 rng(seed);
    const unsigned w = 177, h = 95, bpc = 10;
    vt::HostPlane r, d;
    make_pair(w, h, bpc, PairFill::smooth, rng, r, d);
    const vt::DevicePlane dr(r), dd(d);
    vmaf_cuda::cuda::DeviceBuffer d_out(sizeof(AdmAccum));
    for (int mode = 0; mode < 3; ++mode) {
        vmaf_cuda::ref::AdmOptions opt;
        opt.skip_aim = mode != 1;
        opt.skip_scale0 = mode != 0;
        vmaf_cuda::ref::AdmScratch scratch(w, h);
        AdmAccum want{};
        vmaf_cuda::ref::adm_accumulate(vt::to_view(r), vt::to_view(d), opt, scratch, want);
        vmaf_cuda::cuda::AdmKernel kernel(w, h, bpc, opt);
        kernel.enqueue(dr.view, dd.view, d_out.get<AdmAccum>(), nullptr);
        AdmAccum got{};
        VMAF_CUDA_CHECK(cudaMemcpy(&got, d_out.get(), sizeof(got), cudaMemcpyDeviceToHost));
        INFO("seed=0x" << std::hex << seed << std::dec << " skip_aim=" << opt.skip_aim
                       << " skip_scale0=" << opt.skip_scale0);
        CHECK(first_mismatch(want, got) == "");
    }
}

TEST_CASE("adm: AdmKernel honours the CSF options (csf_mode, viewing geometry)", "[adm][gpu]") {
    if (!vmaf_cuda_test::require_gpu_or_skip()) return;
    const std::uint64_t seed = vt::check_seed() ^ 0x6a09e667f3bcc909ULL;
    std::mt19937_64 rng(seed);
    // The v1.0.16 models' geometries (csf_mode 2), the MAE blend, Barten (whose scale-0
    // weights wrap through uint16 as in libvmaf) and Watson away from 3240.
    struct Csf {
        int mode;
        double nvd;
        int rdh;
        double scale, diag_scale;
    };
    const Csf csfs[] = {{2, 3.0, 1080, 1, 1}, {2, 1.5, 2160, 1, 1}, {2, 3.0, 2160, 1, 1},
                        {2, 5.0, 1080, 1, 1}, {3, 3.0, 1080, 1, 1}, {1, 3.0, 1080, 1, 1},
                        {1, 5.0, 2160, 0.7, 2.5}, {0, 5.0, 1080, 1, 1}};
    for (const auto& [w, h, bpc] : {std::array<unsigned, 3>{177, 95, 10}, {64, 48, 8}}) {
        vt::HostPlane r, d;
        make_pair(w, h, bpc, PairFill::smooth, rng, r, d);
        const vt::DevicePlane dr(r), dd(d);
        vmaf_cuda::cuda::DeviceBuffer d_out(sizeof(AdmAccum));
        for (const Csf& c : csfs) {
            vmaf_cuda::ref::AdmOptions opt;
            opt.csf_mode = c.mode;
            opt.norm_view_dist = c.nvd;
            opt.ref_display_height = c.rdh;
            opt.csf_scale = c.scale;
            opt.csf_diag_scale = c.diag_scale;
            opt.enhn_gain_limit = 1.0;
            vmaf_cuda::ref::AdmScratch scratch(w, h);
            AdmAccum want{};
            vmaf_cuda::ref::adm_accumulate(vt::to_view(r), vt::to_view(d), opt, scratch, want);
            vmaf_cuda::cuda::AdmKernel kernel(w, h, bpc, opt);
            kernel.enqueue(dr.view, dd.view, d_out.get<AdmAccum>(), nullptr);
            AdmAccum got{};
            VMAF_CUDA_CHECK(cudaMemcpy(&got, d_out.get(), sizeof(got), cudaMemcpyDeviceToHost));
            INFO("seed=0x" << std::hex << seed << std::dec << " " << w << "x" << h << " bpc=" << bpc
                           << " csf_mode=" << c.mode << " nvd=" << c.nvd << " rdh=" << c.rdh);
            CHECK(first_mismatch(want, got) == "");
        }
    }
}

namespace {

// Ladders: one reference against K distorted renditions in one enqueue.
struct LadderCombo {
    unsigned w, h, bpc;
    PairFill fill;
    double egl;
    bool skip_aim, skip_scale0;
    unsigned k, capacity; // renditions per enqueue, renditions of the AdmKernel
};

std::string describe_ladder(const LadderCombo& c) {
    std::ostringstream os;
    os << c.w << "x" << c.h << " " << c.bpc << "-bit fill=" << pair_fill_name(c.fill) << " egl=" << c.egl
       << " skip_aim=" << c.skip_aim << " skip_scale0=" << c.skip_scale0 << " K=" << c.k << " of "
       << c.capacity;
    return os.str();
}

/// Distorted plane `r` of a ladder over `ref` (made with fill `f`), of a kind that
/// cycles with r: the pair fill's own distorted plane (make_pair), a noisy copy of ref
/// at a strength growing with r, independent noise, a flat plane. Own random pitch.
vt::HostPlane ladder_rendition(const vt::HostPlane& ref, PairFill f, unsigned r, std::mt19937_64& rng) {
    const unsigned w = ref.width, h = ref.height, bpc = ref.bpc;
    const unsigned pad = static_cast<unsigned>(rng() % 33) * 2;
    vt::HostPlane d = vt::make_plane(w, h, bpc, vt::Fill::zero, rng, pad);
    vt::HostPlane src;
    switch (r % 4) {
    case 0: {
        // make_pair's distorted plane of this fill against this reference's kind
        switch (f) {
        case PairFill::zero:
        case PairFill::max: src = ref; break;
        case PairFill::noise: src = vt::make_plane(w, h, bpc, vt::Fill::noise, rng); break;
        case PairFill::smooth: src = vt::distort(ref, rng); break;
        case PairFill::extreme: {
            src = ref;
            const unsigned maxv = (1u << bpc) - 1;
            for (unsigned y = 0; y < h; ++y)
                for (unsigned x = 0; x < w; ++x)
                    if (!(rng() & 3)) src.set(x, y, maxv - ref.get(x, y));
            break;
        }
        }
        break;
    }
    case 1: src = vt::distort(ref, rng, 0.01 + 0.02 * r); break;
    case 2: src = vt::make_plane(w, h, bpc, vt::Fill::noise, rng); break;
    default: src = vt::make_plane(w, h, bpc, (r & 4) ? vt::Fill::max : vt::Fill::zero, rng); break;
    }
    for (unsigned y = 0; y < h; ++y)
        for (unsigned x = 0; x < w; ++x) d.set(x, y, src.get(x, y));
    return d;
}

/// Runs one ladder enqueue of `ref` against `views[0..n)` into a device buffer with
/// guard bytes on both sides; copies the n results to `got`. Returns an error text, empty
/// when the guards are intact.
std::string run_ladder_guarded(vmaf_cuda::cuda::AdmKernel& k, const vmaf_cuda::cuda::DeviceLuma& ref,
                               const std::vector<const vmaf_cuda::cuda::DeviceLuma*>& views, unsigned n,
                               cudaStream_t stream, std::vector<AdmAccum>& got) {
    constexpr std::size_t kGuard = 256;
    constexpr unsigned char kGuardByte = 0xa5;
    const std::size_t bytes = n * sizeof(AdmAccum);
    vmaf_cuda::cuda::DeviceBuffer out(2 * kGuard + bytes);
    VMAF_CUDA_CHECK(cudaMemsetAsync(out.get(), kGuardByte, out.bytes(), stream));
    k.enqueue(ref, views.data(), n, reinterpret_cast<AdmAccum*>(out.get<unsigned char>() + kGuard),
              stream);
    VMAF_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<unsigned char> host(out.bytes());
    VMAF_CUDA_CHECK(cudaMemcpy(host.data(), out.get(), host.size(), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < kGuard; ++i)
        if (host[i] != kGuardByte || host[kGuard + bytes + i] != kGuardByte)
            return "guard bytes around the outputs were overwritten";
    got.resize(n);
    std::memcpy(got.data(), host.data() + kGuard, bytes);
    return {};
}

/// K renditions of one reference in one enqueue, every d_out[r] against
/// ref::adm_accumulate(ref, dis[r]); then the same object again with the renditions
/// reversed and one fewer (n < renditions), with a single-pair enqueue, and (small
/// sizes) with another reference: no state may leak between enqueues.
std::string run_ladder(const LadderCombo& c, std::uint64_t seed, cudaStream_t stream) {
    namespace vref = vmaf_cuda::ref;
    namespace vcu = vmaf_cuda::cuda;
    std::mt19937_64 rng(seed);
    vt::HostPlane ref, first;
    make_pair(c.w, c.h, c.bpc, c.fill, rng, ref, first);
    std::vector<vt::HostPlane> dis;
    for (unsigned r = 0; r < c.k; ++r) dis.push_back(ladder_rendition(ref, c.fill, r, rng));

    vref::AdmOptions opt;
    opt.enhn_gain_limit = c.egl;
    opt.skip_aim = c.skip_aim;
    opt.skip_scale0 = c.skip_scale0;
    vref::AdmScratch scratch(c.w, c.h);
    std::vector<AdmAccum> want(c.k);
    for (unsigned r = 0; r < c.k; ++r)
        vref::adm_accumulate(vt::to_view(ref), vt::to_view(dis[r]), opt, scratch, want[r]);

    vcu::AdmKernel k(c.w, c.h, c.bpc, opt, c.capacity);
    const vt::DevicePlane d_ref(ref);
    std::vector<std::unique_ptr<vt::DevicePlane>> d_dis;
    std::vector<const vcu::DeviceLuma*> views;
    for (const vt::HostPlane& d : dis) {
        d_dis.push_back(std::make_unique<vt::DevicePlane>(d));
        views.push_back(&d_dis.back()->view);
    }
    auto compare = [&](const std::vector<AdmAccum>& got, const std::vector<unsigned>& which,
                       const std::vector<AdmAccum>& wants, const char* pass) -> std::string {
        for (std::size_t r = 0; r < which.size(); ++r) {
            const std::string diff = first_mismatch(wants[which[r]], got[r]);
            if (!diff.empty())
                return std::string(pass) + ", rendition " + std::to_string(r) + " (plane " +
                       std::to_string(which[r]) + "): first mismatch " + diff;
        }
        return {};
    };

    // 1. All K renditions in order.
    std::vector<AdmAccum> got;
    std::string err = run_ladder_guarded(k, d_ref.view, views, c.k, stream, got);
    std::vector<unsigned> order(c.k);
    for (unsigned r = 0; r < c.k; ++r) order[r] = r;
    if (err.empty()) err = compare(got, order, want, "first enqueue");
    if (!err.empty()) return err;

    // 2. Reversed, one fewer when K > 1.
    const unsigned n2 = c.k > 1 ? c.k - 1 : 1;
    std::vector<const vcu::DeviceLuma*> rev;
    std::vector<unsigned> rev_order;
    for (unsigned r = 0; r < n2; ++r) {
        rev.push_back(views[c.k - 1 - r]);
        rev_order.push_back(c.k - 1 - r);
    }
    err = run_ladder_guarded(k, d_ref.view, rev, n2, stream, got);
    if (err.empty()) err = compare(got, rev_order, want, "second enqueue (reversed, n = K - 1)");
    if (!err.empty()) return err;

    // 3. The single-pair enqueue of the same object, last rendition.
    AdmAccum one{};
    err = vt::run_guarded(
        [&](AdmAccum* d_out, cudaStream_t st) { k.enqueue(d_ref.view, *views[c.k - 1], d_out, st); },
        stream, one);
    if (err.empty()) err = compare({one}, {c.k - 1}, want, "single-pair enqueue");
    if (!err.empty()) return err;

    // 4. Small sizes: another reference (the first plane of make_pair) against the same
    //    renditions.
    if (static_cast<unsigned long long>(c.w) * c.h > 321ULL * 241) return {};
    std::vector<AdmAccum> want2(c.k);
    for (unsigned r = 0; r < c.k; ++r)
        vref::adm_accumulate(vt::to_view(first), vt::to_view(dis[r]), opt, scratch, want2[r]);
    const vt::DevicePlane d_first(first);
    err = run_ladder_guarded(k, d_first.view, views, c.k, stream, got);
    if (err.empty()) err = compare(got, order, want2, "third enqueue (another reference)");
    return err;
}

std::vector<LadderCombo> ladder_combos() {
    std::vector<LadderCombo> v;
    const unsigned ks[4] = {1, 2, 3, 6};
    const unsigned small[][2] = {{18, 22}, {17, 17}, {33, 35}, {64, 48}, {177, 95}, {321, 241}};
    int i = 0;
    for (const auto& s : small)
        for (unsigned bpc : {8u, 10u, 12u, 16u})
            for (PairFill f : {PairFill::zero, PairFill::max, PairFill::noise, PairFill::smooth,
                               PairFill::extreme}) {
                const unsigned k = ks[i % 4];
                const unsigned cap = (i % 3 == 0) ? k + 1 : k; // sometimes n < renditions
                const bool skip_aim = i % 7 == 3, skip0 = i % 5 == 2;
                v.push_back({s[0], s[1], bpc, f, (i % 2) ? 1.0 : 100.0, skip_aim, skip0, k, cap});
                ++i;
            }
    // the four option pairs at one size, K = 3
    for (int m = 0; m < 4; ++m)
        v.push_back({177, 95, 10, PairFill::smooth, 100.0, (m & 1) != 0, (m & 2) != 0, 3, 3});
    // the most renditions
    v.push_back({64, 48, 8, PairFill::smooth, 100.0, false, false, 64, 64});
    v.push_back({1279, 719, 10, PairFill::noise, 1.0, false, false, 3, 4});
    v.push_back({1920, 1080, 8, PairFill::smooth, 100.0, false, false, 6, 6});
    v.push_back({1920, 1080, 12, PairFill::extreme, 1.0, true, false, 2, 3});
    v.push_back({3840, 2160, 10, PairFill::smooth, 100.0, false, false, 6, 6});
    return v;
}

} // namespace

TEST_CASE("adm: ladder enqueue equals one enqueue per rendition", "[adm][gpu]") {
    if (!vmaf_cuda_test::require_gpu_or_skip()) return;
    vt::Stream stream;
    vt::run_combos(
        ladder_combos(), 2000,
        [&](const LadderCombo& c, std::uint64_t seed) { return run_ladder(c, seed, stream.s); },
        describe_ladder);
}

TEST_CASE("adm: ladder refuses bad rendition counts and planes", "[adm][gpu]") {
    if (!vmaf_cuda_test::require_gpu_or_skip()) return;
    namespace vcu = vmaf_cuda::cuda;
    std::mt19937_64 rng(vt::check_seed());
    const vt::HostPlane ref = vt::make_plane(64, 48, 8, vt::Fill::noise, rng);
    const vt::HostPlane other = vt::make_plane(64, 50, 8, vt::Fill::noise, rng);
    const vt::DevicePlane d_ref(ref), d_other(other);
    const vmaf_cuda::ref::AdmOptions opt;
    vcu::AdmKernel k(64, 48, 8, opt, 2);
    CHECK(k.renditions() == 2);
    vcu::DeviceBuffer out(4 * sizeof(AdmAccum));
    auto* d_out = out.get<AdmAccum>();
    const vcu::DeviceLuma* views[3] = {&d_ref.view, &d_ref.view, &d_ref.view};
    CHECK_THROWS_AS(k.enqueue(d_ref.view, views, 3, d_out, nullptr), std::invalid_argument);
    CHECK_THROWS_AS(k.enqueue(d_ref.view, views, 0, d_out, nullptr), std::invalid_argument);
    CHECK_THROWS_AS(k.enqueue(d_ref.view, nullptr, 1, d_out, nullptr), std::invalid_argument);
    const vcu::DeviceLuma* mixed[2] = {&d_ref.view, &d_other.view};
    CHECK_THROWS_AS(k.enqueue(d_ref.view, mixed, 2, d_out, nullptr), std::invalid_argument);
    const vcu::DeviceLuma* with_null[2] = {&d_ref.view, nullptr};
    CHECK_THROWS_AS(k.enqueue(d_ref.view, with_null, 2, d_out, nullptr), std::invalid_argument);
    vcu::DeviceLuma deep = d_ref.view;
    deep.bpc = 10;
    const vcu::DeviceLuma* wrong_bpc[1] = {&deep};
    CHECK_THROWS_AS(k.enqueue(d_ref.view, wrong_bpc, 1, d_out, nullptr), std::invalid_argument);
    CHECK_THROWS_AS(k.enqueue(deep, views, 1, d_out, nullptr), std::invalid_argument);
    CHECK_THROWS_AS(vcu::AdmKernel(64, 48, 8, opt, 0), std::invalid_argument);
    CHECK_THROWS_AS(vcu::AdmKernel(64, 48, 8, opt, vcu::AdmKernel::kMaxRenditions + 1),
                    std::invalid_argument);
    // Nothing was launched by the refused calls: a valid enqueue still works.
    k.enqueue(d_ref.view, views, 2, d_out, nullptr);
    VMAF_CUDA_CHECK(cudaDeviceSynchronize());
}

TEST_CASE("adm: kernel time per frame", "[.bench][adm]") {
    if (!vmaf_cuda_test::require_gpu_or_skip()) return;
    namespace vcu = vmaf_cuda::cuda;
    vt::Stream stream;
    const unsigned sizes[][3] = {{1920, 1080, 8}, {1920, 1080, 10}, {3840, 2160, 8}, {3840, 2160, 10}};
    for (const auto& s : sizes) {
        std::mt19937_64 rng(vt::check_seed());
        const vt::HostPlane ref = vt::make_plane(s[0], s[1], s[2], vt::Fill::smooth_noise, rng);
        std::vector<vt::HostPlane> dis;
        std::vector<std::unique_ptr<vt::DevicePlane>> d_dis;
        std::vector<const vcu::DeviceLuma*> views;
        for (int r = 0; r < 6; ++r) {
            dis.push_back(vt::distort(ref, rng, 0.01 * (r + 1)));
            d_dis.push_back(std::make_unique<vt::DevicePlane>(dis.back()));
            views.push_back(&d_dis.back()->view);
        }
        const vt::DevicePlane d_ref(ref);
        const vmaf_cuda::ref::AdmOptions opt;
        vcu::AdmKernel k1(s[0], s[1], s[2], opt);
        vcu::DeviceBuffer out(6 * sizeof(AdmAccum));
        auto* d_out = out.get<AdmAccum>();
        const double us1 = vt::time_us(
            [&](cudaStream_t st) { k1.enqueue(d_ref.view, *views[0], d_out, st); }, stream.s, 20, 200);
        const double us6_pairs = vt::time_us(
            [&](cudaStream_t st) {
                for (int r = 0; r < 6; ++r) k1.enqueue(d_ref.view, *views[r], d_out + r, st);
            },
            stream.s, 5, 50);
        vcu::AdmKernel k6(s[0], s[1], s[2], opt, 6);
        const double us6 = vt::time_us(
            [&](cudaStream_t st) { k6.enqueue(d_ref.view, views.data(), 6, d_out, st); }, stream.s, 5,
            50);
        std::printf("adm %ux%u %u-bit: %.1f us/pair; 6 renditions: %.1f us as 6 pairs, %.1f us as one "
                    "ladder enqueue (%.1f per rendition)\n",
                    s[0], s[1], s[2], us1, us6_pairs, us6, us6 / 6);
    }
    SUCCEED();
}

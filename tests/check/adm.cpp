// SPDX-License-Identifier: BSD-2-Clause-Patent
// Check: kernels/adm.cu (AdmKernel) against reference/adm.cpp (adm_accumulate), field by
// field on the integer accumulators, for random planes over sizes, bit depths, fill
// modes, pitches and enhancement-gain limits. Seed: env VMAF_CHECK_SEED (decimal or
// 0x hex, see check_util.h), printed with every failure.

#include "catch.hpp"

#include "adm.cuh"
#include "adm.h"
#include "check_util.h"

#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <random>
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

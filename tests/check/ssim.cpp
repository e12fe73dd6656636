// SPDX-License-Identifier: BSD-2-Clause-Patent
// checkasm-style tests of cuda::SsimKernel / cuda::MsSsimKernel (kernels/ssim.cuh,
// ms_ssim.cuh) against the CPU reference (reference/ssim.h, ms_ssim.h, iqa.h):
//   - the device's float images (conversion, float_ssim's box decimation, ms_ssim's
//     low-pass pyramid) equal the reference's, float for float;
//   - the device's l, c, s term maps equal ref::iqa_ssim_maps (so the five Gaussian
//     convolutions and the per-pixel terms are the reference's), double for double;
//   - every word of the accumulator equals the host emulation cuda::iqa_accum_from_maps
//     of the reference's maps (exact integer sums);
//   - the host finish (decided from the accumulator, or from the copied terms when it
//     is not) gives exactly ref::float_ssim / ref::float_ms_ssim; and with the test hook
//     force_fallback, the host path from copy_terms gives them too;
//   - a second enqueue with ref/dis swapped on the same object (no state leaks), guard
//     bytes around the accumulator, planes with padded pitch and P010-style planes
//     (16-bit storage, value << shift with garbage low bits, interleaved with another
//     component: step 2).
// On failure: the base seed (VMAF_CHECK_SEED), the combination and its seed, and the first
// mismatch (stage, scale, x, y, both values). "[.bench]": time per frame at 1080p and 4K.
// Also: the conversion-free double add of the convolutions on random floats of every class.

#include "catch.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <ios>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "check_util.h"
#include "glibc_math_device.h"
#include "iqa.cuh"
#include "iqa.h"
#include "ms_ssim.cuh"
#include "ms_ssim.h"
#include "ssim.cuh"
#include "ssim.h"
#include "ssim_accum.h"

namespace {

using namespace vmaf_cuda_test;
namespace vref = vmaf_cuda::ref;
namespace vcu = vmaf_cuda::cuda;

// How dis relates to ref.
enum class Dis { independent, distorted, identical };
const char* dis_name(Dis d) {
    return d == Dis::independent ? "dis=independent" : d == Dis::distorted ? "dis=ref+noise" : "dis=ref";
}

struct Combo {
    unsigned w, h, bpc;
    Fill fill;
    Dis dis;
    int scale;      // float_ssim's option (0 = auto); unused by ms_ssim
    bool lcs, db, clip;
    bool p010;      // interleaved (step 2); above 8 bits 16-bit storage with shift 16 - bpc
};

std::string describe_combo(const Combo& c) {
    char b[160];
    std::snprintf(b, sizeof b, " %s scale=%d lcs=%d db=%d clip=%d%s", dis_name(c.dis), c.scale, c.lcs,
                  c.db, c.clip, c.p010 ? (c.bpc > 8 ? " P010-style (step 2, shift)" : " NV12-style (step 2)") : "");
    return describe(c.w, c.h, c.bpc, c.fill) + b;
}

bool same_bits(double a, double b) {
    return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
}
bool same_bits(float a, float b) {
    return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
}

std::string num(double v) {
    char b[64];
    std::snprintf(b, sizeof b, "%.17g", v);
    return b;
}

// First differing element of two row-major maps of width w, or "".
template <class T>
std::string first_diff(const char* what, const std::vector<T>& got, const std::vector<T>& want, int w) {
    if (got.size() != want.size())
        return std::string(what) + ": size " + std::to_string(got.size()) + " vs reference " +
               std::to_string(want.size());
    for (std::size_t i = 0; i < got.size(); ++i)
        if (!same_bits(got[i], want[i]))
            return std::string(what) + " at x=" + std::to_string(i % std::size_t(w)) + " y=" +
                   std::to_string(i / std::size_t(w)) + ": gpu=" + num(got[i]) + " ref=" + num(want[i]);
    return {};
}

std::string diff_maps(const std::string& where, const vref::IqaSsimMaps& got, const vref::IqaSsimMaps& want) {
    if (got.w != want.w || got.h != want.h)
        return where + " terms: size " + std::to_string(got.w) + "x" + std::to_string(got.h) +
               " vs reference " + std::to_string(want.w) + "x" + std::to_string(want.h);
    std::string e = first_diff((where + " l").c_str(), got.l, want.l, want.w);
    if (e.empty()) e = first_diff((where + " c").c_str(), got.c, want.c, want.w);
    if (e.empty()) e = first_diff((where + " s").c_str(), got.s, want.s, want.w);
    return e;
}

std::string diff_accum(const std::string& where, const vcu::IqaScaleAccum& got, const vcu::IqaScaleAccum& want) {
    static const char* names[4] = {"ssim", "l", "c", "s"};
    for (int k = 0; k < 4; ++k) {
        if (got.lo[k] != want.lo[k] || got.hi[k] != want.hi[k])
            return where + " accumulator " + names[k] + " (lo, hi): gpu=" + hex(got.lo[k]) + ", " +
                   hex(got.hi[k]) + " host emulation=" + hex(want.lo[k]) + ", " + hex(want.hi[k]);
        for (int b = 0; b < vcu::kIqaBands; ++b)
            if (got.alo[b][k] != want.alo[b][k] || got.ahi[b][k] != want.ahi[b][k])
                return where + " accumulator |" + names[k] + "| band " + std::to_string(b) +
                       " (lo, hi): gpu=" + hex(got.alo[b][k]) + ", " + hex(got.ahi[b][k]) +
                       " host emulation=" + hex(want.alo[b][k]) + ", " + hex(want.ahi[b][k]);
    }
    if (got.bad != want.bad) return where + " accumulator bad: gpu=" + std::to_string(got.bad) +
                                   " host=" + std::to_string(want.bad);
    if (got.w != want.w || got.h != want.h)
        return where + " accumulator size " + std::to_string(got.w) + "x" + std::to_string(got.h) +
               " vs " + std::to_string(want.w) + "x" + std::to_string(want.h);
    return {};
}

std::string diff_value(const std::string& what, double got, double want) {
    if (same_bits(got, want)) return {};
    return what + ": gpu=" + num(got) + " ref=" + num(want);
}

// A plane on the device: planar (as the host plane, same pitch) or P010-style.
struct DevPlane {
    vcu::DeviceBuffer buf;
    vcu::DevicePlane view;
    DevPlane(const HostPlane& h, bool p010, std::mt19937_64& rng) {
        view.width = h.width;
        view.height = h.height;
        view.bpc = h.bpc;
        if (!p010) {
            buf = vcu::DeviceBuffer(h.bytes.size());
            upload(buf.get(), h.bytes.data(), h.bytes.size());
            view.data = buf.get();
            view.pitch = h.pitch;
            return;
        }
        // Interleaved (NV12 / P010-style chroma): this component at even positions,
        // garbage at odd ones, 0..31 samples of row padding; above 8 bits 16-bit storage
        // of value << (16 - bpc) with garbage in the low bits.
        const bool wide = h.bpc > 8;
        const unsigned shift = wide ? 16 - h.bpc : 0;
        const std::size_t bps = wide ? 2 : 1;
        const std::size_t pitch = (std::size_t(h.width) * 2 + (rng() % 32)) * bps;
        std::vector<std::uint8_t> host(pitch * h.height);
        for (auto& v : host) v = std::uint8_t(rng());
        for (unsigned y = 0; y < h.height; ++y)
            for (unsigned x = 0; x < h.width; ++x) {
                if (!wide) {
                    host[y * pitch + 2 * x] = std::uint8_t(h.get(x, y));
                    continue;
                }
                const unsigned low = shift ? unsigned(rng()) & ((1u << shift) - 1) : 0u;
                const std::uint16_t v = std::uint16_t((h.get(x, y) << shift) | low);
                std::memcpy(&host[y * pitch + 4 * std::size_t(x)], &v, 2);
            }
        buf = vcu::DeviceBuffer(host.size());
        upload(buf.get(), host.data(), host.size());
        view.data = buf.get();
        view.pitch = pitch;
        view.step = 2;
        view.shift = shift;
    }
};

void make_pair(const Combo& c, std::mt19937_64& rng, HostPlane& ref, HostPlane& dis) {
    ref = random_plane(c.w, c.h, c.bpc, c.fill, rng);
    if (c.dis == Dis::identical) dis = ref;
    else if (c.dis == Dis::distorted) dis = distort(ref, rng);
    else dis = random_plane(c.w, c.h, c.bpc, c.fill, rng);
}

// ---------------------------------------------------------------- float_ssim

std::string check_ssim_frame(vcu::SsimKernel& k, const HostPlane& ref, const HostPlane& dis,
                             const Combo& c, std::mt19937_64& rng, cudaStream_t stream,
                             const std::string& where) {
    const vref::FloatSsimOptions opt{c.lcs, c.db, c.clip, c.scale};
    const vref::LumaView rv = to_view(ref), dv = to_view(dis);
    const vref::FloatSsimInput in = vref::float_ssim_prepare(rv, dv, opt);
    vref::IqaSsimMaps maps;
    vref::iqa_ssim_maps(in.ref.data(), in.dis.data(), in.w, in.h, maps);
    const vref::FloatSsimScores want = vref::float_ssim(rv, dv, opt);

    const DevPlane dr(ref, c.p010, rng), dd(dis, c.p010, rng);
    vcu::SsimAccum acc{};
    std::string e = run_guarded(
        [&](vcu::SsimAccum* d, cudaStream_t st) { k.enqueue(dr.view, dd.view, d, st); }, stream, acc);
    if (!e.empty()) return where + e;
    std::vector<float> gr, gd;
    k.copy_images(gr, gd);
    if (k.image_width() != in.w || k.image_height() != in.h)
        return where + "image size " + std::to_string(k.image_width()) + "x" +
               std::to_string(k.image_height()) + " vs reference " + std::to_string(in.w) + "x" +
               std::to_string(in.h);
    if (!(e = first_diff("ref image (conversion/decimation)", gr, in.ref, in.w)).empty()) return where + e;
    if (!(e = first_diff("dis image (conversion/decimation)", gd, in.dis, in.w)).empty()) return where + e;
    vref::IqaSsimMaps terms;
    k.copy_terms(acc, terms);
    if (!(e = diff_maps("scale 0", terms, maps)).empty()) return where + e;
    if (!(e = diff_accum("scale 0", acc.scale, vcu::iqa_accum_from_maps(maps))).empty()) return where + e;

    // Host finish: decided or through the terms; then forced through the terms.
    vcu::SsimFinishParams p = k.finish_params();
    for (int forced = 0; forced < 2; ++forced) {
        p.force_fallback = forced != 0;
        vref::FloatSsimScores got{};
        const bool decided = vcu::float_ssim_finish(acc, p, got);
        if (forced && decided) return where + "force_fallback did not ask for the terms";
        if (!decided && !vcu::float_ssim_finish(acc, p, got, &terms))
            return where + "finish with terms failed";
        const std::string how = forced ? " (forced host fallback)" : decided ? " (decided)" : " (fallback)";
        if (!(e = diff_value("float_ssim" + how, got.ssim, want.ssim)).empty()) return where + e;
        if (c.lcs) {
            if (!(e = diff_value("float_ssim_l" + how, got.l, want.l)).empty()) return where + e;
            if (!(e = diff_value("float_ssim_c" + how, got.c, want.c)).empty()) return where + e;
            if (!(e = diff_value("float_ssim_s" + how, got.s, want.s)).empty()) return where + e;
        }
    }
    return {};
}

std::string run_ssim_combo(const Combo& c, std::uint64_t seed, cudaStream_t stream) {
    std::mt19937_64 rng(seed);
    HostPlane ref, dis;
    make_pair(c, rng, ref, dis);
    const vref::FloatSsimOptions opt{c.lcs, c.db, c.clip, c.scale};
    vcu::SsimKernel k(c.w, c.h, c.bpc, opt, 2);
    std::string e = check_ssim_frame(k, ref, dis, c, rng, stream, "");
    if (!e.empty() || c.w * c.h > 1000000u) return e;
    return check_ssim_frame(k, dis, ref, c, rng, stream, "(second enqueue, ref/dis swapped) ");
}

std::vector<Combo> ssim_combos() {
    std::vector<Combo> v;
    const unsigned depths[] = {8, 10, 12, 16};
    const Dis dises[] = {Dis::independent, Dis::distorted, Dis::identical};
    // Tiny (degenerate valid region), the smallest valid, odd; auto scale 1.
    const unsigned small[][2] = {{1, 1}, {10, 13}, {11, 11}, {12, 17}, {18, 22}, {33, 35}, {176, 144}};
    int i = 0;
    for (const auto& s : small)
        for (unsigned bpc : depths)
            for (Fill f : kAllFills) {
                const Dis d = dises[i % 3];
                v.push_back({s[0], s[1], bpc, f, d, 0, (i & 1) != 0, (i % 5) == 0, (i % 10) == 0, (i % 7) == 3});
                ++i;
            }
    // Explicit scales on small odd sizes (every factor, both kernel parities).
    for (int sc = 1; sc <= 10; ++sc)
        for (unsigned bpc : {8u, 10u})
            v.push_back({123 + 2u * unsigned(sc), 97 + unsigned(sc), bpc, Fill::smooth_noise, Dis::distorted,
                         sc, true, false, false, sc == 3});
    // Auto-scale boundaries and larger sizes: 383 (1), 384 (2), 639 (2), 640 (3), odd sizes.
    const unsigned mid[][2] = {{383, 400}, {384, 384}, {639, 700}, {640, 641}, {853, 481}, {1279, 719}};
    for (const auto& s : mid)
        for (unsigned bpc : depths) {
            v.push_back({s[0], s[1], bpc, kAllFills[i % 4], dises[i % 3], 0, true, (i % 3) == 0, (i % 6) == 0,
                         bpc != 8 && (i % 2) == 0});
            ++i;
        }
    v.push_back({1920, 1080, 8, Fill::smooth_noise, Dis::distorted, 0, true, false, false, false});
    v.push_back({1920, 1080, 10, Fill::noise, Dis::independent, 0, true, true, true, true});
    v.push_back({1920, 1080, 16, Fill::smooth_noise, Dis::identical, 0, true, false, false, false});
    v.push_back({3840, 2160, 8, Fill::smooth_noise, Dis::distorted, 0, true, false, false, false});
    v.push_back({3840, 2160, 12, Fill::smooth_noise, Dis::distorted, 0, false, false, false, true});
    return v;
}

// ---------------------------------------------------------------- float_ms_ssim

std::string check_ms_frame(vcu::MsSsimKernel& k, const HostPlane& ref, const HostPlane& dis,
                           const Combo& c, std::mt19937_64& rng, cudaStream_t stream,
                           const std::string& where) {
    const vref::FloatMsSsimOptions opt{c.lcs, c.db, c.clip};
    const vref::LumaView rv = to_view(ref), dv = to_view(dis);
    vref::MsSsimPyramid pyr;
    vref::float_ms_ssim_pyramid(rv, dv, pyr);
    const vref::FloatMsSsimScores want = vref::float_ms_ssim(rv, dv, opt);

    const DevPlane dr(ref, c.p010, rng), dd(dis, c.p010, rng);
    vcu::MsSsimAccum acc{};
    std::string e = run_guarded(
        [&](vcu::MsSsimAccum* d, cudaStream_t st) { k.enqueue(dr.view, dd.view, d, st); }, stream, acc);
    if (!e.empty()) return where + e;
    vref::IqaSsimMaps terms[vref::kMsSsimScales];
    for (int s = 0; s < vref::kMsSsimScales; ++s) {
        const std::string sc = "scale " + std::to_string(s);
        std::vector<float> gr, gd;
        k.copy_images(s, gr, gd);
        if (!(e = first_diff((sc + " ref image").c_str(), gr, pyr.ref[s], pyr.w[s])).empty()) return where + e;
        if (!(e = first_diff((sc + " dis image").c_str(), gd, pyr.dis[s], pyr.w[s])).empty()) return where + e;
        vref::IqaSsimMaps maps;
        vref::iqa_ssim_maps(pyr.ref[s].data(), pyr.dis[s].data(), pyr.w[s], pyr.h[s], maps);
        k.copy_terms(acc, s, terms[s]);
        if (!(e = diff_maps(sc, terms[s], maps)).empty()) return where + e;
        if (!(e = diff_accum(sc, acc.scale[s], vcu::iqa_accum_from_maps(maps))).empty()) return where + e;
    }
    vcu::MsSsimFinishParams p = k.finish_params();
    for (int forced = 0; forced < 2; ++forced) {
        p.force_fallback = forced != 0;
        vref::FloatMsSsimScores got{};
        const unsigned need = vcu::float_ms_ssim_finish(acc, p, got);
        unsigned all_needed = 0; // c, s of every scale; l of scale 4, and of all with lcs
        for (int s = 0; s < vref::kMsSsimScales; ++s)
            all_needed |= vcu::iqa_need_bit(s, vcu::kIqaC) | vcu::iqa_need_bit(s, vcu::kIqaS) |
                          ((c.lcs || s == 4) ? vcu::iqa_need_bit(s, vcu::kIqaL) : 0u);
        if (forced && need != all_needed)
            return where + "force_fallback asked for the terms of mask " + hex(need) + ", not " +
                   hex(all_needed);
        if (need & ~all_needed) return where + "finish asked for terms it does not need: " + hex(need);
        vref::IqaSsimMaps fetched[vref::kMsSsimScales];
        if (need) {
            k.copy_terms(acc, need, fetched);
            if (vcu::float_ms_ssim_finish(acc, p, got, fetched) != 0) return where + "finish with terms failed";
        }
        const std::string how = forced ? " (forced host fallback)" : need ? " (fallback)" : " (decided)";
        if (!(e = diff_value("float_ms_ssim" + how, got.ms_ssim, want.ms_ssim)).empty()) return where + e;
        if (c.lcs)
            for (int s = 0; s < vref::kMsSsimScales; ++s) {
                const std::string sk = "_scale" + std::to_string(s) + how;
                if (!(e = diff_value("float_ms_ssim_l" + sk, got.l[s], want.l[s])).empty()) return where + e;
                if (!(e = diff_value("float_ms_ssim_c" + sk, got.c[s], want.c[s])).empty()) return where + e;
                if (!(e = diff_value("float_ms_ssim_s" + sk, got.s[s], want.s[s])).empty()) return where + e;
            }
    }
    return {};
}

std::string run_ms_combo(const Combo& c, std::uint64_t seed, cudaStream_t stream) {
    std::mt19937_64 rng(seed);
    HostPlane ref, dis;
    make_pair(c, rng, ref, dis);
    vcu::MsSsimKernel k(c.w, c.h, c.bpc, vref::FloatMsSsimOptions{c.lcs, c.db, c.clip}, 2);
    std::string e = check_ms_frame(k, ref, dis, c, rng, stream, "");
    if (!e.empty() || c.w * c.h > 400000u) return e;
    return check_ms_frame(k, dis, ref, c, rng, stream, "(second enqueue, ref/dis swapped) ");
}

std::vector<Combo> ms_combos() {
    std::vector<Combo> v;
    const unsigned depths[] = {8, 10, 12, 16};
    const Dis dises[] = {Dis::independent, Dis::distorted, Dis::identical};
    // The minimum (176), odd sizes just above it and odd at every scale.
    const unsigned small[][2] = {{176, 176}, {177, 191}, {211, 185}, {321, 241}};
    int i = 0;
    for (const auto& s : small)
        for (unsigned bpc : depths)
            for (Fill f : kAllFills) {
                v.push_back({s[0], s[1], bpc, f, dises[i % 3], 0, (i & 1) == 0, (i % 5) == 0, (i % 10) == 0,
                             bpc != 8 && (i % 3) == 1});
                ++i;
            }
    v.push_back({853, 481, 8, Fill::smooth_noise, Dis::distorted, 0, true, false, false, false});
    v.push_back({1279, 719, 10, Fill::noise, Dis::independent, 0, true, true, false, true});
    v.push_back({1920, 1080, 8, Fill::smooth_noise, Dis::distorted, 0, true, false, false, false});
    v.push_back({1920, 1080, 16, Fill::smooth_noise, Dis::identical, 0, true, false, false, true});
    v.push_back({3840, 2160, 10, Fill::smooth_noise, Dis::distorted, 0, true, false, false, false});
    return v;
}

} // namespace

TEST_CASE("float_ssim: device images, terms, sums and outputs equal the reference", "[ssim][gpu]") {
    if (!require_gpu_or_skip()) return;
    Stream stream;
    run_combos(ssim_combos(), 9000,
               [&](const Combo& c, std::uint64_t seed) { return run_ssim_combo(c, seed, stream.s); },
               describe_combo);
}

TEST_CASE("float_ssim: sizes libvmaf cannot decimate reproducibly are refused", "[ssim][gpu]") {
    if (!require_gpu_or_skip()) return;
    // 3x3 at scale 10: libvmaf's 10x10 box reads 5 samples beyond a 3-sample row.
    CHECK_FALSE(vcu::iqa::decimate_in_place_safe(3, 3, 10, 10));
    CHECK_THROWS_AS(vcu::SsimKernel(3, 3, 8, vref::FloatSsimOptions{false, false, false, 10}),
                    vcu::CudaError);
    CHECK_THROWS_AS(vcu::SsimKernel(64, 64, 9, vref::FloatSsimOptions{}), vcu::CudaError);
    CHECK_THROWS_AS(vcu::SsimKernel(64, 64, 8, vref::FloatSsimOptions{false, false, false, 11}),
                    vcu::CudaError);
    CHECK(vcu::iqa::decimate_in_place_safe(1920, 1080, 4, 4));
    CHECK(vcu::iqa::decimate_in_place_safe(3840, 2160, 8, 8));
}

TEST_CASE("float_ms_ssim: device pyramid, terms, sums and outputs equal the reference", "[ms_ssim][gpu]") {
    if (!require_gpu_or_skip()) return;
    Stream stream;
    run_combos(ms_combos(), 9500,
               [&](const Combo& c, std::uint64_t seed) { return run_ms_combo(c, seed, stream.s); },
               describe_combo);
}

TEST_CASE("float_ms_ssim: below 176x176 refused as libvmaf", "[ms_ssim][gpu]") {
    if (!require_gpu_or_skip()) return;
    CHECK(vref::float_ms_ssim_min_size() == 176u);
    CHECK_THROWS_AS(vcu::MsSsimKernel(175, 176, 8, vref::FloatMsSsimOptions{}), vcu::CudaError);
    CHECK_THROWS_AS(vcu::MsSsimKernel(176, 175, 8, vref::FloatMsSsimOptions{}), vcu::CudaError);
    CHECK_NOTHROW(vcu::MsSsimKernel(176, 176, 8, vref::FloatMsSsimOptions{}));
}

TEST_CASE("float_ssim / float_ms_ssim: term slots are a ring", "[ssim][ms_ssim][gpu]") {
    if (!require_gpu_or_skip()) return;
    Stream stream;
    std::mt19937_64 rng(check_seed());
    const HostPlane ref = random_plane(200, 180, 8, Fill::smooth_noise, rng);
    const HostPlane dis = distort(ref, rng);
    const DevPlane dr(ref, false, rng), dd(dis, false, rng);
    vcu::SsimKernel k(200, 180, 8, vref::FloatSsimOptions{}, 2);
    vcu::DeviceBuffer out(3 * sizeof(vcu::SsimAccum));
    for (int f = 0; f < 3; ++f)
        k.enqueue(dr.view, dd.view, out.get<vcu::SsimAccum>() + f, stream.s);
    VMAF_CUDA_CHECK(cudaStreamSynchronize(stream.s));
    vcu::SsimAccum acc[3];
    VMAF_CUDA_CHECK(cudaMemcpy(acc, out.get(), sizeof acc, cudaMemcpyDeviceToHost));
    for (int f = 0; f < 3; ++f) CHECK(acc[f].seq == std::uint64_t(f));
    vref::IqaSsimMaps t;
    CHECK_THROWS_AS(k.copy_terms(acc[0], t), vcu::CudaError); // slot 0 reused by frame 2
    CHECK_NOTHROW(k.copy_terms(acc[1], t));
    CHECK_NOTHROW(k.copy_terms(acc[2], t));
}

TEST_CASE("float_ssim / float_ms_ssim: kernel time per frame", "[.bench][ssim][ms_ssim]") {
    if (!require_gpu_or_skip()) return;
    Stream stream;
    const unsigned sizes[][3] = {{1920, 1080, 8}, {1920, 1080, 10}, {3840, 2160, 8}, {3840, 2160, 10}};
    for (const auto& s : sizes) {
        std::mt19937_64 rng(check_seed());
        const HostPlane ref = random_plane(s[0], s[1], s[2], Fill::smooth_noise, rng);
        const HostPlane dis = distort(ref, rng);
        const DevPlane dr(ref, false, rng), dd(dis, false, rng);
        vcu::SsimKernel ks(s[0], s[1], s[2], vref::FloatSsimOptions{true, false, false, 0}, 4);
        vcu::MsSsimKernel km(s[0], s[1], s[2], vref::FloatMsSsimOptions{true, false, false}, 4);
        vcu::DeviceBuffer out(sizeof(vcu::MsSsimAccum));
        const double us_s = time_us([&](cudaStream_t st) { ks.enqueue(dr.view, dd.view, out.get(), st); },
                                    stream.s, 10, 100);
        const double us_m = time_us([&](cudaStream_t st) { km.enqueue(dr.view, dd.view, out.get(), st); },
                                    stream.s, 10, 100);
        // Host side: the finish from an accumulator (decided path), per frame.
        vcu::MsSsimAccum acc{};
        VMAF_CUDA_CHECK(cudaStreamSynchronize(stream.s));
        VMAF_CUDA_CHECK(cudaMemcpy(&acc, out.get(), sizeof acc, cudaMemcpyDeviceToHost));
        vref::FloatMsSsimScores sc{};
        unsigned need = 0;
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < 1000; ++i) need |= vcu::float_ms_ssim_finish(acc, km.finish_params(), sc);
        const double fin_us =
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / 1000;
        // The fallback's cost: copying all five scales' terms and the sequential sums.
        const auto t1 = std::chrono::steady_clock::now();
        vcu::MsSsimFinishParams p = km.finish_params();
        p.force_fallback = true;
        vref::IqaSsimMaps terms[vref::kMsSsimScales];
        const unsigned forced_need = vcu::float_ms_ssim_finish(acc, p, sc);
        km.copy_terms(acc, forced_need, terms);
        vcu::float_ms_ssim_finish(acc, p, sc, terms);
        const double fb_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count();
        // The alternative to the host fallback: scale 0's sequential sum of one map by one
        // device thread (what an exact on-device sum costs per sum).
        vcu::DeviceBuffer one(sizeof(double));
        const std::size_t n0 = std::size_t(km.scale_width(0) - 10) * std::size_t(km.scale_height(0) - 10);
        const double seq_us = time_us(
            [&](cudaStream_t st) {
                vcu::iqa::launch_sequential_sum(km.term_map_device(0, 0, 1), n0, one.get<double>(), st);
            },
            stream.s, 1, 5);
        std::printf("%ux%u %u-bit: one-thread sequential sum of scale 0's c map (%zu terms): %.1f us\n",
                    s[0], s[1], s[2], n0, seq_us);
        std::printf("%ux%u %u-bit: float_ssim %.1f us/frame (scale %d), float_ms_ssim %.1f us/frame; "
                    "host finish %.2f us (undecided mask %#x); forced ms_ssim fallback (every needed map) %.1f ms; "
                    "device memory %.1f + %.1f MiB (4 slots)\n",
                    s[0], s[1], s[2], us_s, ks.scale(), us_m, fin_us, need, fb_ms,
                    ks.device_bytes() / 1048576.0, km.device_bytes() / 1048576.0);
    }
    SUCCEED();
}

// The convolutions' s + (double)(float product) without the conversion instruction
// (cuda_common.cuh dadd_float_rn / dadd_nonneg_float_rn): the same double as
// __dadd_rn(s, double(f)) for random finite floats of every exponent (subnormals and both
// zeros included), against sums of every size, of either sign, and sums that cancel f.
TEST_CASE("float_ssim / float_ms_ssim: dadd_float_rn equals the converting double add", "[ssim][ms_ssim][gpu]") {
    const std::uint64_t seed = check_seed();
    std::mt19937_64 rng(seed);
    constexpr std::size_t kN = 1 << 20;
    std::vector<double> s(kN), fast(kN), plain(kN);
    std::vector<float> f(kN);
    const float special[] = {0.0f, -0.0f, 1.4e-45f, -1.4e-45f, 1.1754942e-38f, 1.17549435e-38f,
                             -1.17549435e-38f, 3.4028235e38f, -3.4028235e38f, 1.0f, 0.5f, 255.0f};
    for (bool nonneg : {false, true}) {
        for (std::size_t i = 0; i < kN; ++i) {
            std::uint32_t b;
            const std::size_t ns = std::size(special);
            if (i < 6 * ns) { // each special float against each kind of sum below
                std::memcpy(&b, &special[i % ns], 4);
            } else {
                do b = static_cast<std::uint32_t>(rng()); while (((b >> 23) & 0xffu) == 0xffu);
                if ((rng() & 7) == 0) b &= 0x807fffffu; // a subnormal (or zero) of either sign
            }
            if (nonneg) b &= 0x7fffffffu;
            std::memcpy(&f[i], &b, 4);
            switch (i < 6 * ns ? int(i / ns) : int(rng() % 6)) {
            case 0: s[i] = 0.0; break;
            case 1: s[i] = -double(f[i]) * (1.0 + std::ldexp(double(rng() % 64), -40)); break; // cancels
            case 2: { std::uint64_t d; do d = rng(); while (((d >> 52) & 0x7ffu) == 0x7ffu); std::memcpy(&s[i], &d, 8); break; }
            case 3: s[i] = std::ldexp(double(rng() % 1000000) - 500000.0, int(rng() % 200) - 100); break;
            case 4: s[i] = std::ldexp(double(rng() % 4096) - 2048.0, -1074); break; // double subnormal
            default: s[i] = (rng() & 1) ? -0.0 : 0.0; break;
            }
            if (!std::isfinite(s[i])) s[i] = 1.0;
        }
        dadd_float_on_device(nonneg, s.data(), f.data(), fast.data(), plain.data(), kN);
        std::size_t bad = 0, first = kN;
        for (std::size_t i = 0; i < kN; ++i)
            if (std::memcmp(&fast[i], &plain[i], 8) != 0 && bad++ == 0) first = i;
        INFO(std::hexfloat << "seed " << seed << (nonneg ? " (nonneg)" : " (signed)") << ": " << bad << " of " << kN
             << " differ; first s=" << (first < kN ? s[first] : 0.0) << " f=" << (first < kN ? f[first] : 0.0f)
             << " fast=" << (first < kN ? fast[first] : 0.0) << " plain=" << (first < kN ? plain[first] : 0.0));
        CHECK(bad == 0);
    }
}

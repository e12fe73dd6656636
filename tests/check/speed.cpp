// SPDX-License-Identifier: BSD-2-Clause-Patent
// checkasm-style test: cuda::SpeedChromaKernel against the SpEED reference
// (reference/speed.h) on random chroma planes.
//  - residuals: every float of the accumulator (U ref, U dis, V ref, V dis, operating
//    plane each) equals the reference's steps 1-5 (speed_load_plane +
//    speed_filter_and_downscale) exactly (float ==);
//  - scores: speed_chroma_from_accum() on the accumulator equals ref::speed_chroma() on
//    the host planes exactly (u, v, uv as doubles).
// Cases: 4:2:0 / 4:2:2 / 4:4:4; planar, or NV12-style interleaved chroma read in place
// (step 2; P010 shift 6, P012 shift 4); from the smallest frame speed_chroma_accepts to
// 4K, odd sizes (ceil-sized chroma planes of which the last column/row is ignored),
// 8/10/12/16 bit, padded pitch with garbage, the v1.0.16 models' options and the
// defaults, every prescale method, kernelscales 0.5 .. 3.71, weight_var_mode 0..6,
// flat (singular) planes. On failure: base seed (VMAF_CHECK_SEED), combination index
// and seed, the case, and the first mismatch with both values.
// The same for SpeedTemporalKernel against ref::SpeedTemporal (three-frame sequences,
// use_ref_diff, P010-style luma with shift 6): both difference residuals exactly, then
// speed_temporal_from_accum() against SpeedTemporal::push().
// "[.bench]" test (hidden; `check_test "[.bench][speed]"`): device time per frame and
// the host tail's time at 1080p and 4K, speed_chroma and speed_temporal.

#include "catch.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "check_util.h"
#include "speed.cuh"
#include "speed.h"

namespace {

using namespace vmaf_cuda_test;
namespace vref = vmaf_cuda::ref;
namespace vcu = vmaf_cuda::cuda;

// ---- option sets ----------------------------------------------------------------------

struct OptSet {
    const char* name;
    vref::SpeedOptions o;
};

vref::SpeedOptions v1016(double ps, vref::SpeedScaleMethod m) {
    vref::SpeedOptions o;
    o.nn_floor = 0.1;
    o.sigma_nn = 0.19;
    o.weight_var_mode = 5;
    o.max_val = 45.0;
    o.prescale = ps;
    o.prescale_method = m;
    return o;
}

std::vector<OptSet> opt_sets() {
    using M = vref::SpeedScaleMethod;
    std::vector<OptSet> v;
    v.push_back({"defaults", vref::SpeedOptions{}});
    v.push_back({"v1.0.16 3d0h (ps 1)", v1016(1.0, M::nearest)});
    v.push_back({"v1.0.16 *_2160 (ps 0.5 bilinear)", v1016(0.5, M::bilinear)});
    v.push_back({"v1.0.16 5d0h (ps 0.6 bilinear)", v1016(0.6, M::bilinear)});
    vref::SpeedOptions o = v1016(0.6, M::nearest);
    v.push_back({"ps 0.6 nearest", o});
    o = v1016(0.6, M::bicubic);
    o.weight_var_mode = 3;
    v.push_back({"ps 0.6 bicubic wvm 3", o});
    o = v1016(0.75, M::lanczos4);
    o.weight_var_mode = 0;
    v.push_back({"ps 0.75 lanczos4 wvm 0", o});
    o = v1016(1.5, M::bilinear);
    o.weight_var_mode = 4;
    v.push_back({"ps 1.5 bilinear wvm 4", o});
    o = v1016(1.3, M::bicubic);
    v.push_back({"ps 1.3 bicubic", o});
    o = vref::SpeedOptions{};
    o.kernelscale = 0.5;
    o.weight_var_mode = 1;
    v.push_back({"ks 0.5 wvm 1", o});
    o = vref::SpeedOptions{};
    o.kernelscale = 360.0 / 97.0;
    o.weight_var_mode = 2;
    v.push_back({"ks 360/97 wvm 2", o});
    o = vref::SpeedOptions{};
    o.kernelscale = 1.5;
    o.nn_floor = 1.0;
    o.sigma_nn = 2.0;
    o.weight_var_mode = 6;
    o.max_val = 1.0;
    v.push_back({"ks 1.5 nnf 1 snn 2 wvm 6 mxv 1", o});
    o = vref::SpeedOptions{};
    o.prescale = 1.002; // rescales (|ps - 1| >= 1e-3); small planes keep their size
    v.push_back({"ps 1.002 nearest", o});
    return v;
}

// ---- cases ----------------------------------------------------------------------------

enum class Dis { distort, independent, same, flat };

struct Combo {
    unsigned w, h, chroma, bpc;
    Fill fill;
    Dis dis;
    bool interleaved;
    int opt;
};

const char* dis_name(Dis d) {
    switch (d) {
    case Dis::distort: return "dis=ref+noise";
    case Dis::independent: return "dis=independent";
    case Dis::same: return "dis=same fill";
    default: return "dis=flat";
    }
}

unsigned shift_of(unsigned bpc, bool interleaved) {
    if (!interleaved) return 0;
    return bpc == 10 ? 6 : bpc == 12 ? 4 : 0; // P010, P012; NV12 and P016: 0
}

std::string describe_combo(const Combo& c) {
    static const std::vector<OptSet> sets = opt_sets();
    return describe(c.w, c.h, c.bpc, c.fill) + " " + std::to_string(c.chroma) + " " +
           (c.interleaved ? "interleaved(step 2, shift " + std::to_string(shift_of(c.bpc, true)) + ")"
                          : std::string("planar")) +
           " " + dis_name(c.dis) + " opts=[" + sets[c.opt].name + "]";
}

// Host chroma planes as files hold them: ceil-sized for odd luma sizes.
unsigned chroma_dim(unsigned luma, bool sub) { return sub ? (luma + 1) / 2 : luma; }

struct HostFrame {
    HostPlane u, v; // values (planar), for the reference
};

HostFrame make_frame(const Combo& c, std::mt19937_64& rng, const HostFrame* ref) {
    const unsigned cw = chroma_dim(c.w, c.chroma != 444), ch = chroma_dim(c.h, c.chroma == 420);
    HostFrame f;
    auto one = [&](const HostPlane* r) {
        if (!r) return random_plane(cw, ch, c.bpc, c.fill, rng);
        switch (c.dis) {
        case Dis::distort: return distort(*r, rng);
        case Dis::independent: return random_plane(cw, ch, c.bpc, Fill::noise, rng);
        case Dis::same: return random_plane(cw, ch, c.bpc, c.fill, rng);
        default: return random_plane(cw, ch, c.bpc, Fill::zero, rng);
        }
    };
    f.u = one(ref ? &ref->u : nullptr);
    f.v = one(ref ? &ref->v : nullptr);
    return f;
}

// Device copy of a frame's chroma: two planar planes, or one interleaved plane (U at
// even, V at odd samples, values << shift) with `pad` garbage bytes per row.
struct DeviceChroma {
    vcu::DeviceBuffer bu, bv;
    vcu::DevicePlane u, v;
    DeviceChroma(const HostFrame& f, bool interleaved, unsigned shift, unsigned pad) {
        const unsigned bps = f.u.bpc > 8 ? 2 : 1;
        if (!interleaved) {
            bu = upload(f.u.bytes);
            bv = upload(f.v.bytes);
            u = {bu.get(), f.u.pitch, f.u.width, f.u.height, f.u.bpc, 1, 0};
            v = {bv.get(), f.v.pitch, f.v.width, f.v.height, f.v.bpc, 1, 0};
            return;
        }
        const std::size_t pitch = std::size_t(f.u.width) * 2 * bps + (pad / bps) * bps;
        std::vector<std::uint8_t> bytes(pitch * f.u.height, 0x5a);
        for (unsigned y = 0; y < f.u.height; ++y)
            for (unsigned x = 0; x < f.u.width; ++x)
                for (unsigned c = 0; c < 2; ++c) {
                    const unsigned val = (c ? f.v : f.u).get(x, y) << shift;
                    std::uint8_t* at = &bytes[y * pitch + (2 * x + c) * bps];
                    if (bps == 1) *at = std::uint8_t(val);
                    else {
                        const std::uint16_t w16 = std::uint16_t(val);
                        std::memcpy(at, &w16, 2);
                    }
                }
        bu = upload(bytes);
        u = {bu.get(), pitch, f.u.width, f.u.height, f.u.bpc, 2, shift};
        v = u;
        v.data = bu.get<std::uint8_t>() + bps;
    }
    static vcu::DeviceBuffer upload(const std::vector<std::uint8_t>& b) {
        vcu::DeviceBuffer d(b.size());
        vmaf_cuda_test::upload(d.get(), b.data(), b.size());
        return d;
    }
};

// Runs one enqueue into a buffer with 256 guard bytes on each side and the accumulator
// itself poisoned (0xa5 bytes: every float must be written). Returns an error text.
std::string run_kernel(vcu::SpeedChromaKernel& k, const DeviceChroma& r, const DeviceChroma& d,
                       cudaStream_t stream, std::vector<float>& got) {
    constexpr std::size_t kGuard = 256;
    constexpr unsigned char kByte = 0xa5;
    const std::size_t n = k.accum_bytes();
    vcu::DeviceBuffer out(n + 2 * kGuard);
    VMAF_CUDA_CHECK(cudaMemsetAsync(out.get(), kByte, out.bytes(), stream));
    k.enqueue(r.u, r.v, d.u, d.v, out.get<unsigned char>() + kGuard, stream);
    VMAF_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<unsigned char> host(out.bytes());
    VMAF_CUDA_CHECK(cudaMemcpy(host.data(), out.get(), host.size(), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < kGuard; ++i)
        if (host[i] != kByte || host[kGuard + n + i] != kByte)
            return "guard bytes around the accumulator were overwritten";
    got.resize(n / sizeof(float));
    std::memcpy(got.data(), host.data() + kGuard, n);
    return {};
}

std::string fmt_f(double v) {
    char b[64];
    std::snprintf(b, sizeof b, "%.9g", v);
    return b;
}

// Reference residuals of the four planes, compared with the accumulator.
std::string compare_residuals(const std::vector<float>& got, const HostFrame& rf,
                              const HostFrame& df, vref::SpeedScratch& s) {
    const vref::SpeedGeometry& g = s.geometry();
    const HostPlane* planes[4] = {&rf.u, &df.u, &rf.v, &df.v};
    static const char* names[4] = {"U ref", "U dis", "V ref", "V dis"};
    for (unsigned p = 0; p < 4; ++p) {
        vref::speed_load_plane(to_view(*planes[p]), g.original_w, g.original_h, s.ref.data(),
                               s.stride());
        vref::speed_filter_and_downscale(s.ref.data(), s);
        const float* res = vcu::speed_chroma_residual(got.data(), g, p / 2, p % 2 == 1);
        for (unsigned i = 0; i < g.operating_h; ++i)
            for (unsigned j = 0; j < g.operating_w; ++j) {
                const float want = s.ref[i * s.stride() + j];
                const float have = res[i * g.operating_w + j];
                if (!(have == want))
                    return std::string("residual ") + names[p] + " (operating plane " +
                           std::to_string(g.operating_w) + "x" + std::to_string(g.operating_h) +
                           ") first mismatch at (x " + std::to_string(j) + ", y " +
                           std::to_string(i) + "): gpu=" + fmt_f(have) + " ref=" + fmt_f(want);
            }
    }
    return {};
}

std::string compare_scores(const vref::SpeedChromaScores& got, const vref::SpeedChromaScores& want) {
    auto one = [](const char* n, double a, double b) -> std::string {
        if (std::memcmp(&a, &b, sizeof a) == 0) return {};
        char buf[160];
        std::snprintf(buf, sizeof buf, "score %s: from_accum=%.17g speed_chroma=%.17g", n, a, b);
        return buf;
    };
    std::string e = one("u", got.u, want.u);
    if (e.empty()) e = one("v", got.v, want.v);
    if (e.empty()) e = one("uv", got.uv, want.uv);
    return e;
}

std::string run_combo(const Combo& c, std::uint64_t seed, cudaStream_t stream) {
    static const std::vector<OptSet> sets = opt_sets();
    const vref::SpeedOptions& o = sets[c.opt].o;
    std::mt19937_64 rng(seed);
    const HostFrame rf = make_frame(c, rng, nullptr);
    const HostFrame df = make_frame(c, rng, &rf);
    const unsigned shift = shift_of(c.bpc, c.interleaved);
    const unsigned pad = std::uniform_int_distribution<unsigned>(0, 64)(rng);
    const DeviceChroma dr(rf, c.interleaved, shift, pad), dd(df, c.interleaved, shift, pad);

    vcu::SpeedChromaKernel k(c.w, c.h, c.bpc, c.chroma, o);
    const vref::SpeedSize ps = vref::speed_chroma_plane_size(c.w, c.h, c.chroma);
    vref::SpeedScratch s(ps.width, ps.height, o);
    std::vector<float> got;
    std::string err = run_kernel(k, dr, dd, stream, got);
    if (err.empty()) err = compare_residuals(got, rf, df, s);
    if (err.empty()) {
        const vref::SpeedChromaScores want =
            vref::speed_chroma(to_view(rf.u), to_view(rf.v), to_view(df.u), to_view(df.v), s);
        err = compare_scores(vcu::speed_chroma_from_accum(got.data(), k.geometry(), k.options()), want);
    }
    if (!err.empty() || std::size_t(c.w) * c.h > 700 * 700) return err;
    // Same object again, ref and dis swapped: nothing may leak from the previous frame.
    err = run_kernel(k, dd, dr, stream, got);
    if (err.empty()) err = compare_residuals(got, df, rf, s);
    if (err.empty()) {
        const vref::SpeedChromaScores want =
            vref::speed_chroma(to_view(df.u), to_view(df.v), to_view(rf.u), to_view(rf.v), s);
        err = compare_scores(vcu::speed_chroma_from_accum(got.data(), k.geometry(), k.options()), want);
    }
    return err.empty() ? err : "(second enqueue, ref/dis swapped) " + err;
}

std::vector<Combo> combos() {
    const std::vector<OptSet> sets = opt_sets();
    const unsigned depths[] = {8, 10, 12, 16};
    const Fill fills[] = {Fill::noise, Fill::smooth_noise, Fill::smooth_noise, Fill::noise};
    auto dis_for = [](Fill f) {
        return f == Fill::smooth_noise ? Dis::distort : f == Fill::noise ? Dis::independent : Dis::same;
    };
    std::vector<Combo> v;
    unsigned n = 0;
    auto add = [&](unsigned w, unsigned h, unsigned chroma, int opt, bool interleaved) {
        if (!vref::speed_chroma_accepts(w, h, chroma, sets[opt].o)) return;
        const unsigned bpc = depths[n % 4];
        const Fill f = fills[(n / 4) % 4];
        ++n;
        v.push_back({w, h, chroma, bpc, f, dis_for(f), interleaved && chroma != 444, opt});
    };
    // Every option set, chroma layout, from the smallest accepted size (and odd sizes
    // just above it), planar and interleaved.
    for (int opt = 0; opt < int(sets.size()); ++opt)
        for (unsigned chroma : {420u, 422u, 444u}) {
            const vref::SpeedSize m = vref::speed_chroma_min_frame_size(chroma, sets[opt].o);
            add(m.width, m.height, chroma, opt, false);
            add(m.width, m.height, chroma, opt, true);
            add(m.width + 1, m.height + 3, chroma, opt, true);
            add(m.width + 17, m.height + 1, chroma, opt, false);
            if (opt != 6) add(321, 241, chroma, opt, (opt & 1) != 0); // lanczos: small only
        }
    // Flat planes: both singular; exactly one singular (score 0).
    for (unsigned chroma : {420u, 444u})
        for (int opt : {0, 1, 3}) {
            for (Fill f : {Fill::zero, Fill::max})
                v.push_back({352, 288, chroma, 8, f, Dis::same, chroma == 420, opt});
            v.push_back({352, 288, chroma, 10, Fill::smooth_noise, Dis::flat, chroma == 420, opt});
        }
    // Larger frames: fewer combinations (the CPU reference filters every pixel).
    for (int opt : {0, 1, 2, 3, 7, 10})
        for (unsigned chroma : {420u, 422u, 444u}) add(1279, 719, chroma, opt, chroma == 420);
    v.push_back({1920, 1080, 420, 8, Fill::smooth_noise, Dis::distort, true, 1});
    v.push_back({1920, 1080, 420, 10, Fill::smooth_noise, Dis::distort, true, 3});
    v.push_back({1920, 1080, 444, 16, Fill::noise, Dis::independent, false, 0});
    v.push_back({1920, 1080, 422, 12, Fill::smooth_noise, Dis::distort, false, 5});
    v.push_back({3840, 2160, 420, 10, Fill::smooth_noise, Dis::distort, true, 1});
    v.push_back({3840, 2160, 420, 8, Fill::smooth_noise, Dis::distort, true, 2});
    v.push_back({3840, 2160, 444, 12, Fill::smooth_noise, Dis::distort, false, 2});
    return v;
}

} // namespace

TEST_CASE("speed: chroma residuals and scores equal the reference", "[speed][gpu]") {
    if (!vmaf_cuda_test::require_gpu_or_skip()) return;
    Stream stream;
    run_combos(
        combos(), 0x5bee0000ull, [&](const Combo& c, std::uint64_t seed) { return run_combo(c, seed, stream.s); },
        describe_combo);
}

TEST_CASE("speed: sizes, depths and planes the kernel refuses", "[speed][gpu]") {
    if (!vmaf_cuda_test::require_gpu_or_skip()) return;
    const vref::SpeedOptions d{};
    for (unsigned chroma : {420u, 422u, 444u})
        for (const OptSet& os : opt_sets()) {
            const vref::SpeedSize m = vref::speed_chroma_min_frame_size(chroma, os.o);
            INFO("chroma " << chroma << " opts=[" << os.name << "] smallest " << m.width << "x" << m.height);
            CHECK_NOTHROW(vcu::SpeedChromaKernel(m.width, m.height, 8, chroma, os.o));
            CHECK_THROWS_AS(vcu::SpeedChromaKernel(m.width - 1, m.height, 8, chroma, os.o), vcu::CudaError);
            CHECK_THROWS_AS(vcu::SpeedChromaKernel(m.width, m.height - 1, 8, chroma, os.o), vcu::CudaError);
        }
    CHECK_THROWS_AS(vcu::SpeedChromaKernel(640, 480, 9, 420, d), vcu::CudaError);
    CHECK_THROWS_AS(vcu::SpeedChromaKernel(640, 480, 8, 400, d), vcu::CudaError);
    vref::SpeedOptions bad;
    bad.kernelscale = 1.2;
    CHECK_THROWS_AS(vcu::SpeedChromaKernel(640, 480, 8, 420, bad), vcu::CudaError);

    vcu::SpeedChromaKernel k(640, 480, 10, 420, d);
    vcu::DeviceBuffer plane(640 * 480 * 2), acc(k.accum_bytes());
    const vcu::DevicePlane ok{plane.get(), 640, 320, 240, 10, 1, 0};
    Stream stream;
    CHECK_NOTHROW(k.enqueue(ok, ok, ok, ok, acc.get(), stream.s));
    vcu::DevicePlane p = ok;
    p.bpc = 8;
    CHECK_THROWS_AS(k.enqueue(ok, p, ok, ok, acc.get(), stream.s), vcu::CudaError);
    p = ok;
    p.width = 319;
    CHECK_THROWS_AS(k.enqueue(ok, ok, p, ok, acc.get(), stream.s), vcu::CudaError);
    p = ok;
    p.step = 3;
    CHECK_THROWS_AS(k.enqueue(ok, ok, ok, p, acc.get(), stream.s), vcu::CudaError);
    p = ok;
    p.data = nullptr;
    CHECK_THROWS_AS(k.enqueue(p, ok, ok, ok, acc.get(), stream.s), vcu::CudaError);
    CHECK_THROWS_AS(k.enqueue(ok, ok, ok, ok, nullptr, stream.s), vcu::CudaError);
    VMAF_CUDA_CHECK(cudaStreamSynchronize(stream.s));
}

namespace {

// ---- speed_temporal ------------------------------------------------------------------

struct TCombo {
    unsigned w, h, bpc;
    Fill fill;
    unsigned shift; // P010-style luma: values << 6
    bool urd;
    int opt;
};

std::string describe_tcombo(const TCombo& c) {
    static const std::vector<OptSet> sets = opt_sets();
    return describe(c.w, c.h, c.bpc, c.fill) + " luma shift " + std::to_string(c.shift) +
           (c.urd ? " use_ref_diff" : "") + " opts=[" + sets[c.opt].name + "]";
}

// A device copy of a luma plane with values << shift (same pitch as the host plane).
struct DeviceLumaPlane {
    vcu::DeviceBuffer buf;
    vcu::DevicePlane view;
    DeviceLumaPlane(const HostPlane& h, unsigned shift) : buf(h.bytes.size()) {
        HostPlane s = h;
        for (unsigned y = 0; y < h.height; ++y)
            for (unsigned x = 0; x < h.width; ++x) s.set(x, y, h.get(x, y) << shift);
        upload(buf.get(), s.bytes.data(), s.bytes.size());
        view = {buf.get(), h.pitch, h.width, h.height, h.bpc, 1, shift};
    }
};

// Reference residual of prev - cur (steps 1-5), into s.ref's top-left operating plane.
void temporal_residual(const HostPlane& prev, const HostPlane& cur, vref::SpeedScratch& s) {
    const vref::SpeedGeometry& g = s.geometry();
    std::vector<float> a(s.ref.size()), b(s.ref.size());
    vref::speed_load_plane(to_view(prev), g.original_w, g.original_h, a.data(), s.stride());
    vref::speed_load_plane(to_view(cur), g.original_w, g.original_h, b.data(), s.stride());
    for (unsigned y = 0; y < g.original_h; ++y)
        for (unsigned x = 0; x < g.original_w; ++x) {
            const std::size_t i = y * s.stride() + x;
            s.ref[i] = a[i] - b[i];
        }
    vref::speed_filter_and_downscale(s.ref.data(), s);
}

std::string run_tcombo(const TCombo& c, std::uint64_t seed, cudaStream_t stream) {
    static const std::vector<OptSet> sets = opt_sets();
    vref::SpeedOptions o = sets[c.opt].o;
    o.use_ref_diff = c.urd;
    std::mt19937_64 rng(seed);
    constexpr int kFrames = 3;
    std::vector<HostPlane> rf, df;
    for (int f = 0; f < kFrames; ++f) {
        rf.push_back(random_plane(c.w, c.h, c.bpc, c.fill, rng));
        df.push_back(c.fill == Fill::smooth_noise ? distort(rf.back(), rng)
                                                  : random_plane(c.w, c.h, c.bpc, c.fill, rng));
    }
    std::vector<DeviceLumaPlane> dr, dd;
    for (int f = 0; f < kFrames; ++f) {
        dr.emplace_back(rf[f], c.shift);
        dd.emplace_back(df[f], c.shift);
    }
    vcu::SpeedTemporalKernel k(c.w, c.h, c.bpc, o);
    vref::SpeedTemporal want_state(c.w, c.h, o);
    vref::SpeedScratch s(c.w, c.h, o);
    const vref::SpeedGeometry& g = k.geometry();
    for (int f = 0; f < kFrames; ++f) {
        const double want = want_state.push(to_view(rf[f]), to_view(df[f]));
        if (f == 0) continue; // frame 0 scores 0 without an enqueue
        const std::string fr = "frame " + std::to_string(f) + ": ";
        // Guarded accumulator, poisoned inside.
        constexpr std::size_t kGuard = 256;
        const std::size_t n = k.accum_bytes();
        vcu::DeviceBuffer out(n + 2 * kGuard);
        VMAF_CUDA_CHECK(cudaMemsetAsync(out.get(), 0xa5, out.bytes(), stream));
        k.enqueue(dr[f - 1].view, dr[f].view, dd[f - 1].view, dd[f].view,
                  out.get<unsigned char>() + kGuard, stream);
        VMAF_CUDA_CHECK(cudaStreamSynchronize(stream));
        std::vector<unsigned char> host(out.bytes());
        VMAF_CUDA_CHECK(cudaMemcpy(host.data(), out.get(), host.size(), cudaMemcpyDeviceToHost));
        for (std::size_t i = 0; i < kGuard; ++i)
            if (host[i] != 0xa5 || host[kGuard + n + i] != 0xa5) return fr + "guard bytes overwritten";
        std::vector<float> got(n / sizeof(float));
        std::memcpy(got.data(), host.data() + kGuard, n);
        for (unsigned p = 0; p < 2; ++p) {
            temporal_residual(p == 0 ? rf[f - 1] : df[f - 1], p == 0 || c.urd ? rf[f] : df[f], s);
            const float* res = got.data() + std::size_t(p) * g.operating_w * g.operating_h;
            for (unsigned i = 0; i < g.operating_h; ++i)
                for (unsigned j = 0; j < g.operating_w; ++j) {
                    const float w = s.ref[i * s.stride() + j], h = res[i * g.operating_w + j];
                    if (!(h == w))
                        return fr + (p == 0 ? "ref" : "dis") + " difference residual (operating plane " +
                               std::to_string(g.operating_w) + "x" + std::to_string(g.operating_h) +
                               ") first mismatch at (x " + std::to_string(j) + ", y " +
                               std::to_string(i) + "): gpu=" + fmt_f(h) + " ref=" + fmt_f(w);
                }
        }
        const double have = vcu::speed_temporal_from_accum(got.data(), g, o);
        if (std::memcmp(&have, &want, sizeof have) != 0) {
            char b[160];
            std::snprintf(b, sizeof b, "score: from_accum=%.17g SpeedTemporal::push=%.17g", have, want);
            return fr + b;
        }
    }
    return {};
}

std::vector<TCombo> tcombos() {
    const std::vector<OptSet> sets = opt_sets();
    std::vector<TCombo> v;
    unsigned n = 0;
    const unsigned depths[] = {8, 10, 12, 16};
    for (int opt = 0; opt < int(sets.size()); ++opt) {
        const vref::SpeedOptions& o = sets[opt].o;
        if (o.prescale > 1.0 && std::fabs(o.prescale - 1.0) >= 1e-3) continue; // refused
        const vref::SpeedSize m = vref::speed_temporal_min_frame_size(o);
        const unsigned sizes[][2] = {{m.width, m.height}, {m.width + 3, m.height + 1}, {341, 261}};
        for (const auto& sz : sizes)
            for (bool urd : {false, true}) {
                const unsigned bpc = depths[n % 4];
                const Fill f = (n / 4) % 2 ? Fill::noise : Fill::smooth_noise;
                const unsigned shift = bpc == 10 && (n % 3 == 0) ? 6 : 0;
                ++n;
                v.push_back({sz[0], sz[1], bpc, f, shift, urd, opt});
            }
    }
    v.push_back({160, 120, 8, Fill::zero, 0, false, 0}); // flat: both singular
    v.push_back({1279, 719, 10, Fill::smooth_noise, 6, false, 1});
    v.push_back({1920, 1080, 8, Fill::smooth_noise, 0, true, 2});
    return v;
}

} // namespace

TEST_CASE("speed: temporal residuals and scores equal the reference", "[speed][gpu]") {
    if (!vmaf_cuda_test::require_gpu_or_skip()) return;
    Stream stream;
    run_combos(
        tcombos(), 0x5bee1000ull, [&](const TCombo& c, std::uint64_t seed) { return run_tcombo(c, seed, stream.s); },
        describe_tcombo);
}

TEST_CASE("speed: temporal sizes the kernel refuses", "[speed][gpu]") {
    if (!vmaf_cuda_test::require_gpu_or_skip()) return;
    const vref::SpeedOptions d{};
    const vref::SpeedSize m = vref::speed_temporal_min_frame_size(d);
    CHECK_NOTHROW(vcu::SpeedTemporalKernel(m.width, m.height, 8, d));
    CHECK_THROWS_AS(vcu::SpeedTemporalKernel(m.width - 1, m.height, 8, d), vcu::CudaError);
    vref::SpeedOptions up;
    up.prescale = 1.5;
    CHECK_THROWS_AS(vcu::SpeedTemporalKernel(640, 480, 8, up), vcu::CudaError);
    CHECK_THROWS_AS(vcu::SpeedTemporalKernel(640, 480, 11, d), vcu::CudaError);
}

TEST_CASE("speed: kernel and host tail time per frame", "[.bench][speed]") {
    if (!vmaf_cuda_test::require_gpu_or_skip()) return;
    Stream stream;
    using M = vref::SpeedScaleMethod;
    struct B {
        unsigned w, h, bpc;
        const char* opt_name;
        vref::SpeedOptions o;
    };
    const B benches[] = {
        {1920, 1080, 8, "3d0h ps 1", v1016(1.0, M::nearest)},
        {1920, 1080, 10, "5d0h ps 0.6 bilinear", v1016(0.6, M::bilinear)},
        {3840, 2160, 8, "3d0h ps 1", v1016(1.0, M::nearest)},
        {3840, 2160, 10, "3d0h_2160 ps 0.5 bilinear", v1016(0.5, M::bilinear)},
        {3840, 2160, 10, "1d5h_2160 ps 1", v1016(1.0, M::nearest)},
    };
    for (const B& b : benches) {
        const Combo c{b.w, b.h, 420, b.bpc, Fill::smooth_noise, Dis::distort, true, 0};
        std::mt19937_64 rng(check_seed());
        const HostFrame rf = make_frame(c, rng, nullptr);
        const HostFrame df = make_frame(c, rng, &rf);
        const unsigned shift = shift_of(b.bpc, true);
        const DeviceChroma dr(rf, true, shift, 0), dd(df, true, shift, 0);
        vcu::SpeedChromaKernel k(b.w, b.h, b.bpc, 420, b.o);
        vcu::DeviceBuffer acc(k.accum_bytes());
        const double us = time_us(
            [&](cudaStream_t st) { k.enqueue(dr.u, dr.v, dd.u, dd.v, acc.get(), st); }, stream.s, 20, 200);
        std::vector<unsigned char> host(k.accum_bytes());
        VMAF_CUDA_CHECK(cudaMemcpy(host.data(), acc.get(), host.size(), cudaMemcpyDeviceToHost));
        const auto t0 = std::chrono::steady_clock::now();
        constexpr int kHost = 20;
        double sink = 0;
        for (int i = 0; i < kHost; ++i)
            sink += vcu::speed_chroma_from_accum(host.data(), k.geometry(), k.options()).uv;
        const double host_us =
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / kHost;
        std::printf("speed_chroma %ux%u 4:2:0 %u-bit NV12/P010 [%s]: device %.1f us/frame, "
                    "host tail %.1f us/frame, accumulator %zu bytes (uv %.6g)\n",
                    b.w, b.h, b.bpc, b.opt_name, us, host_us, k.accum_bytes(), sink / kHost);
    }
    const unsigned tsizes[][2] = {{1920, 1080}, {3840, 2160}};
    for (const auto& ts : tsizes) {
        std::mt19937_64 rng(check_seed());
        const HostPlane a = random_plane(ts[0], ts[1], 8, Fill::smooth_noise, rng);
        const HostPlane b = distort(a, rng);
        const DeviceLumaPlane da(a, 0), db(b, 0);
        const vref::SpeedOptions o{};
        vcu::SpeedTemporalKernel k(ts[0], ts[1], 8, o);
        vcu::DeviceBuffer acc(k.accum_bytes());
        const double us = time_us(
            [&](cudaStream_t st) { k.enqueue(da.view, db.view, db.view, da.view, acc.get(), st); },
            stream.s, 20, 200);
        std::vector<unsigned char> host(k.accum_bytes());
        VMAF_CUDA_CHECK(cudaMemcpy(host.data(), acc.get(), host.size(), cudaMemcpyDeviceToHost));
        const auto t0 = std::chrono::steady_clock::now();
        double sink = 0;
        for (int i = 0; i < 10; ++i) sink += vcu::speed_temporal_from_accum(host.data(), k.geometry(), o);
        const double host_us =
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / 10;
        std::printf("speed_temporal %ux%u 8-bit [defaults]: device %.1f us/frame, host tail %.1f us/frame, "
                    "accumulator %zu bytes (score %.6g)\n",
                    ts[0], ts[1], us, host_us, k.accum_bytes(), sink / 10);
    }
    SUCCEED();
}

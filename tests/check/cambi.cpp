// SPDX-License-Identifier: BSD-2-Clause-Patent
// checkasm-style test: cuda::CambiKernel + cuda::cambi_kernel_finish() against the CPU
// reference (reference/cambi.h, bit-exact with libvmaf v3.2.0) on random, flat and
// banded planes. Exact comparisons, in this order, reporting the first mismatch:
//   1. every c-value of every scale and pass (copy_cvalues) against ref::cambi_c_values();
//   2. per scale: k, the fast-path score and bound against ref::cambi_topk_exact(), and
//      the device's bound flag against the host's;
//   3. the frame's scores (cambi, source, full_reference) with the normal finish and with
//      the slow path forced on every scale (test hook) against the reference.
// Each combination is run for two frames through one kernel object (the second another
// picture), and the first frame is finished again after the second was enqueued (its
// c-value slot must still hold it). Seed: VMAF_CHECK_SEED; each failure prints the seed,
// the combination and its own seed. Also: a 4K frame built so that the exactness bound
// fails at scales 0 and 1 (the natural slow path, where the order-free sum really
// differs), samples >= 2^bpc, c-value slot reuse.
// VMAF_CHECK_MAX_PIXELS=N leaves out the larger combinations (compute-sanitizer runs).
// "[.bench]" test (hidden; run with `check_test "[.bench]"`): kernel time per frame.

#include "catch.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "cambi.cuh"
#include "cambi.h"
#include "check_util.h"

namespace {

using namespace vmaf_cuda_test;
namespace vref = vmaf_cuda::ref;
namespace vcu = vmaf_cuda::cuda;

// ---------------------------------------------------------------- inputs

enum class Content { zero, max, noise, smooth_noise, banded, banded_dither, banded_blocks };

const char* content_name(Content c) {
    switch (c) {
    case Content::zero: return "zero";
    case Content::max: return "max";
    case Content::noise: return "noise";
    case Content::smooth_noise: return "smooth+noise";
    case Content::banded: return "banded";
    case Content::banded_dither: return "banded+dither";
    default: return "banded-blocks";
    }
}

/// A gradient in steps (the banding CAMBI measures): a ramp along a random direction
/// quantised to steps of 1..4 10-bit codes (scaled to bpc), optionally with +-1 code of
/// dither noise; `blocks`: a different ramp per 97x61 block (edges between bands).
HostPlane banded_plane(unsigned w, unsigned h, unsigned bpc, bool dither, bool blocks,
                       std::mt19937_64& rng) {
    HostPlane p = make_plane(w, h, bpc, Fill::zero, rng,
                             std::uniform_int_distribution<unsigned>(0, 64)(rng));
    const unsigned maxv = (1u << bpc) - 1;
    const double scale10 = std::ldexp(1.0, int(bpc) - 10); // one 10-bit code in bpc units
    std::uniform_real_distribution<double> u(0, 1);
    struct Ramp { double a, b, lo, span, step; };
    auto make_ramp = [&] {
        Ramp r;
        const double ang = u(rng) * 6.283185307179586;
        r.a = std::cos(ang);
        r.b = std::sin(ang);
        r.lo = 64 + u(rng) * 500;            // 10-bit codes
        r.span = 20 + u(rng) * 300;
        r.step = 1 + std::floor(u(rng) * 4); // codes per band
        return r;
    };
    std::vector<Ramp> ramps(blocks ? ((w + 96) / 97) * ((h + 60) / 61) : 1);
    for (auto& r : ramps) r = make_ramp();
    std::uniform_int_distribution<int> d3(-1, 1);
    for (unsigned y = 0; y < h; ++y)
        for (unsigned x = 0; x < w; ++x) {
            const Ramp& r = ramps[blocks ? (y / 61) * ((w + 96) / 97) + x / 97 : 0];
            const double t = (r.a * x + r.b * y) / double(w + h) + 0.5; // ~[0, 1]
            double code = r.lo + std::floor(t * r.span / r.step) * r.step;
            if (dither && u(rng) < 0.3) code += d3(rng);
            double v = std::floor(code * scale10);
            v = v < 0 ? 0 : v > maxv ? maxv : v;
            p.set(x, y, unsigned(v));
        }
    return p;
}

HostPlane make_content(unsigned w, unsigned h, unsigned bpc, Content c, std::mt19937_64& rng) {
    switch (c) {
    case Content::zero: return random_plane(w, h, bpc, Fill::zero, rng);
    case Content::max: return random_plane(w, h, bpc, Fill::max, rng);
    case Content::noise: return random_plane(w, h, bpc, Fill::noise, rng);
    case Content::smooth_noise: return random_plane(w, h, bpc, Fill::smooth_noise, rng);
    case Content::banded: return banded_plane(w, h, bpc, false, false, rng);
    case Content::banded_dither: return banded_plane(w, h, bpc, true, false, rng);
    default: return banded_plane(w, h, bpc, false, true, rng);
    }
}

/// How the plane lies in device memory.
enum class Layout { planar, p010, interleaved };

const char* layout_name(Layout l) {
    return l == Layout::planar ? "planar" : l == Layout::p010 ? "p010-shift" : "step2";
}

/// A device copy of `h` in `layout`: planar (the host pitch, garbage padding), P010-style
/// (sample << (16 - bpc), random low bits the shift must drop), or interleaved (step 2,
/// the other component garbage). bpc 16 has no room for a shift: p010 is planar there.
struct DeviceInput {
    vcu::DeviceBuffer buf;
    vcu::DevicePlane view;
};

DeviceInput upload(const HostPlane& h, Layout layout, std::mt19937_64& rng) {
    const unsigned bps = h.bpc > 8 ? 2 : 1;
    const unsigned step = layout == Layout::interleaved ? 2 : 1;
    const unsigned shift = layout == Layout::p010 && h.bpc < 16 ? 16 - h.bpc : 0;
    const unsigned store_bps = shift ? 2 : bps;
    if (shift && bps == 1) throw std::logic_error("p010 layout needs bpc > 8");
    const std::size_t pitch = std::size_t(h.width) * step * store_bps +
                              store_bps * std::uniform_int_distribution<unsigned>(0, 32)(rng);
    std::vector<std::uint8_t> bytes(pitch * h.height);
    std::uniform_int_distribution<unsigned> any(0, 255);
    for (auto& b : bytes) b = std::uint8_t(any(rng));
    for (unsigned y = 0; y < h.height; ++y)
        for (unsigned x = 0; x < h.width; ++x) {
            const std::size_t at = y * pitch + std::size_t(x) * step * store_bps;
            const unsigned v = h.get(x, y);
            if (store_bps == 1) {
                bytes[at] = std::uint8_t(v);
            } else {
                const unsigned low = shift ? any(rng) & ((1u << shift) - 1) : 0;
                const std::uint16_t s = std::uint16_t((v << shift) | low);
                std::memcpy(&bytes[at], &s, 2);
            }
        }
    DeviceInput d{vcu::DeviceBuffer(bytes.size()), {}};
    vmaf_cuda_test::upload(d.buf.get(), bytes.data(), bytes.size());
    d.view.data = d.buf.get();
    d.view.pitch = pitch;
    d.view.width = h.width;
    d.view.height = h.height;
    d.view.bpc = h.bpc;
    d.view.step = step;
    d.view.shift = shift;
    return d;
}

// ---------------------------------------------------------------- options

enum class Opts { defaults, model, mlc5, mlc0_topk, enc_resample, enc_bd8, ws127, pq, full_ref, full_ref_src };

const char* opts_name(Opts o) {
    switch (o) {
    case Opts::defaults: return "defaults";
    case Opts::model: return "v1.0.16 model (hrs 1080, vlt 0.06, cmxv 17)";
    case Opts::mlc5: return "max_log_contrast=5";
    case Opts::mlc0_topk: return "max_log_contrast=0 topk=0.05";
    case Opts::enc_resample: return "enc_width/enc_height (resampled)";
    case Opts::enc_bd8: return "enc_bitdepth=8 cambi_topk=1";
    case Opts::ws127: return "window_size=127 tvi_threshold=0.05";
    case Opts::pq: return "eotf=pq vlt=1";
    case Opts::full_ref: return "full_ref";
    default: return "full_ref src_width/src_height (resampled) + model";
    }
}

vref::CambiOptions make_opts(Opts o, unsigned w, unsigned h) {
    vref::CambiOptions c;
    switch (o) {
    case Opts::defaults: break;
    case Opts::model:
        c.cambi_high_res_speedup = 1080;
        c.cambi_vis_lum_threshold = 0.06;
        c.cambi_max_val = 17.0;
        break;
    case Opts::mlc5: c.max_log_contrast = 5; break;
    case Opts::mlc0_topk:
        c.max_log_contrast = 0;
        c.topk = 0.05;
        break;
    case Opts::enc_resample:
        c.enc_width = std::max(180u, w * 2 / 3);
        c.enc_height = std::max(150u, h * 3 / 5);
        break;
    case Opts::enc_bd8:
        c.enc_bitdepth = 8;
        c.cambi_topk = 1.0;
        break;
    case Opts::ws127:
        c.window_size = 127;
        c.tvi_threshold = 0.05;
        break;
    case Opts::pq:
        c.eotf = "pq";
        c.cambi_vis_lum_threshold = 1.0;
        break;
    case Opts::full_ref: c.full_ref = true; break;
    case Opts::full_ref_src:
        c.full_ref = true;
        c.src_width = std::max(320u, w * 3 / 4);
        c.src_height = std::max(200u, h * 3 / 4);
        c.cambi_high_res_speedup = 1080;
        c.cambi_vis_lum_threshold = 0.06;
        c.cambi_max_val = 17.0;
        break;
    }
    return c;
}

// ---------------------------------------------------------------- reference by stages

struct RefPass {
    std::vector<std::vector<float>> c; // per scale, before pooling
    vref::CambiPassScores scores{};
    unsigned w[vref::kCambiScales], h[vref::kCambiScales];
};

/// ref::cambi_pass() stage by stage (same calls, same order), keeping the c-values.
RefPass ref_pass(const vref::LumaView& in, const vref::CambiPlan& plan, bool source) {
    const vref::CambiPassGeometry& g = source ? plan.src : plan.dist;
    const std::size_t n = std::size_t(g.width) * g.height;
    std::vector<std::uint16_t> img(n), mask(n), mode, hist;
    vref::cambi_preprocess(in, g.width, g.height, plan.enc_bitdepth, img.data());
    vref::cambi_spatial_mask(img.data(), g.width, g.height, g.mask_index, mask.data());
    RefPass r;
    unsigned w = g.width, h = g.height;
    for (unsigned s = 0; s < vref::kCambiScales; ++s) {
        if (s > 0 || plan.high_res_speedup) {
            const unsigned nw = (w + 1) >> 1, nh = (h + 1) >> 1;
            vref::cambi_decimate(img.data(), w, nw, nh, img.data());
            vref::cambi_decimate(mask.data(), w, nw, nh, mask.data());
            w = nw, h = nh;
        }
        vref::cambi_filter_mode(img.data(), w, h, mode);
        std::vector<float> c(std::size_t(w) * h);
        vref::cambi_c_values(img.data(), mask.data(), w, h, g.window_size, plan, c.data(), hist);
        r.w[s] = w;
        r.h[s] = h;
        std::vector<float> pool = c;
        r.scores.scale[s] = vref::cambi_spatial_pooling(std::span<float>(pool), plan.topk);
        r.c.push_back(std::move(c));
    }
    return r;
}

std::string fmt(double v) {
    char b[64];
    std::snprintf(b, sizeof b, "%.17g", v);
    return b;
}

bool same(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

std::string compare_scores(const vref::CambiScores& got, const vref::CambiScores& want, bool full_ref,
                           const char* what) {
    if (!same(got.cambi, want.cambi))
        return std::string(what) + ": cambi gpu=" + fmt(got.cambi) + " ref=" + fmt(want.cambi);
    if (full_ref && !same(got.source, want.source))
        return std::string(what) + ": cambi_source gpu=" + fmt(got.source) + " ref=" + fmt(want.source);
    if (full_ref && !same(got.full_reference, want.full_reference))
        return std::string(what) + ": cambi_full_reference gpu=" + fmt(got.full_reference) +
               " ref=" + fmt(want.full_reference);
    return {};
}

/// Checks one frame's accumulator (already on the host) against the reference passes.
/// `device_slow`: also finish with every scale pooled by CambiDevicePool (last: it reorders
/// the slot's c-values, so not for a frame that is finished again later).
std::string check_frame(const vcu::CambiKernel& k, const vcu::CambiAccum& acc, const RefPass* want,
                        const vref::CambiScores& want_scores, cudaStream_t stream,
                        bool device_slow) {
    const vref::CambiPlan& plan = k.plan();
    const unsigned npass = plan.full_ref ? 2 : 1;
    std::vector<float> got;
    for (unsigned p = 0; p < npass; ++p) {
        const char* pn = p ? "source pass" : "distorted pass";
        if (acc.invalid_sample[p]) return std::string(pn) + ": device flagged an invalid sample";
        for (unsigned s = 0; s < vref::kCambiScales; ++s) {
            const unsigned w = want[p].w[s], h = want[p].h[s];
            if (k.scale_width(p, s) != w || k.scale_height(p, s) != h)
                return std::string(pn) + " scale " + std::to_string(s) + ": size " +
                       std::to_string(k.scale_width(p, s)) + "x" + std::to_string(k.scale_height(p, s)) +
                       ", reference " + std::to_string(w) + "x" + std::to_string(h);
            k.copy_cvalues(acc, p, s, got, stream);
            const std::vector<float>& c = want[p].c[s];
            for (std::size_t i = 0; i < c.size(); ++i)
                if (std::memcmp(&got[i], &c[i], sizeof(float)) != 0)
                    return std::string(pn) + " scale " + std::to_string(s) + " (" + std::to_string(w) +
                           "x" + std::to_string(h) + "): first c-value mismatch at x=" +
                           std::to_string(i % w) + " y=" + std::to_string(i / w) + ": gpu=" +
                           fmt(got[i]) + " ref=" + fmt(c[i]);
            const vcu::CambiScaleAccum& a = acc.pass[p][s];
            const int kk = vref::cambi_topk_count(plan.topk, c.size());
            if (a.n != c.size() || int(a.k) != kk)
                return std::string(pn) + " scale " + std::to_string(s) + ": n/k gpu=" +
                       std::to_string(a.n) + "/" + std::to_string(a.k) + " ref=" +
                       std::to_string(c.size()) + "/" + std::to_string(kk);
            const vref::CambiTopkExact ex = vref::cambi_topk_exact(c, plan.topk);
            float min_pos;
            std::memcpy(&min_pos, &a.min_pos_bits, sizeof min_pos);
            const vref::CambiTopkExact gx = vref::cambi_topk_from_sum(a.sum_units, int(a.k), min_pos);
            if (!same(gx.score, ex.score) || gx.equals_libvmaf != ex.equals_libvmaf)
                return std::string(pn) + " scale " + std::to_string(s) + ": fast path gpu=" +
                       fmt(gx.score) + (gx.equals_libvmaf ? " (exact)" : " (bound failed)") +
                       " ref cambi_topk_exact=" + fmt(ex.score) +
                       (ex.equals_libvmaf ? " (exact)" : " (bound failed)") + "; sum_units=" +
                       std::to_string(a.sum_units) + " kth_bits=" + hex(a.kth_bits) +
                       " min_pos_bits=" + hex(a.min_pos_bits);
            if ((a.bound_ok != 0) != gx.equals_libvmaf)
                return std::string(pn) + " scale " + std::to_string(s) +
                       ": device bound flag disagrees with ref::cambi_topk_from_sum";
            if (gx.equals_libvmaf && !same(gx.score, want[p].scores.scale[s]))
                return std::string(pn) + " scale " + std::to_string(s) +
                       ": fast path claims exactness but differs from the quick-select: " +
                       fmt(gx.score) + " vs " + fmt(want[p].scores.scale[s]);
        }
    }
    unsigned slow = 0;
    std::string e = compare_scores(vcu::cambi_kernel_finish(k, acc, stream, false, &slow), want_scores,
                                   plan.full_ref, "finish");
    if (!e.empty()) return e;
    e = compare_scores(vcu::cambi_kernel_finish(k, acc, stream, true, &slow), want_scores,
                       plan.full_ref, "finish with the slow path forced");
    if (!e.empty()) return e;
    if (slow != npass * vref::kCambiScales) return "forced slow path pooled only " + std::to_string(slow) + " scales";
    if (device_slow) {
        vcu::CambiDevicePool pool(k.max_scale_values());
        e = compare_scores(vcu::cambi_kernel_finish(k, acc, stream, true, &slow, &pool), want_scores,
                           plan.full_ref, "finish with every scale pooled on the device");
        if (!e.empty()) return e;
        if (slow != npass * vref::kCambiScales) return "device slow path pooled only " + std::to_string(slow) + " scales";
    }
    return {};
}

struct Combo {
    unsigned w, h, bpc;
    Content content;
    Opts opts;
    Layout layout;
    int max_tw = 64; // c-value strip width (narrower: the path of small-memory GPUs)
};

std::string describe_combo(const Combo& c) {
    return std::to_string(c.w) + "x" + std::to_string(c.h) + " " + std::to_string(c.bpc) + "-bit " +
           content_name(c.content) + ", " + opts_name(c.opts) + ", " + layout_name(c.layout) +
           (c.max_tw != 64 ? ", strips of at most " + std::to_string(c.max_tw) + " columns" : "");
}

struct Frame {
    HostPlane dis, ref;
    DeviceInput d_dis, d_ref;
    RefPass want[2];
    vref::CambiScores scores{};
};

Frame make_frame(const Combo& c, const vref::CambiPlan& plan, std::mt19937_64& rng, bool check_frame_fn) {
    Frame f;
    f.dis = make_content(c.w, c.h, c.bpc, c.content, rng);
    // The reference picture: for banded content a smooth version (less banding) or the
    // same picture; otherwise independent content of the same kind.
    f.ref = c.content == Content::banded || c.content == Content::banded_blocks
                ? make_content(c.w, c.h, c.bpc, Content::banded_dither, rng)
                : make_content(c.w, c.h, c.bpc, c.content, rng);
    f.d_dis = upload(f.dis, c.layout, rng);
    f.d_ref = upload(f.ref, c.layout, rng);
    const vref::LumaView vd = to_view(f.dis), vr = to_view(f.ref);
    f.want[0] = ref_pass(vd, plan, false);
    if (plan.full_ref) f.want[1] = ref_pass(vr, plan, true);
    f.scores = vref::cambi_finish(plan, f.want[0].scores, f.want[1].scores);
    if (check_frame_fn) {
        // The stage-wise reproduction is ref::cambi_frame() itself (small sizes only: cost).
        vref::CambiScratch scratch;
        const vref::CambiScores direct = vref::cambi_frame(vd, plan.full_ref ? &vr : nullptr, plan, scratch);
        const std::string e = compare_scores(direct, f.scores, plan.full_ref, "test's stage-wise reference");
        if (!e.empty()) throw std::logic_error(e);
    }
    return f;
}

std::string run_combo(const Combo& c, std::uint64_t seed, cudaStream_t stream) {
    std::mt19937_64 rng(seed);
    const vref::CambiOptions opt = make_opts(c.opts, c.w, c.h);
    const vref::CambiPlan plan = vref::cambi_plan(opt, c.w, c.h, c.bpc);
    const bool small = std::size_t(c.w) * c.h <= 400 * 400;
    vcu::CambiKernel k(c.w, c.h, c.bpc, opt, 4, c.max_tw);
    const Frame f0 = make_frame(c, plan, rng, small);
    vcu::CambiAccum a0{};
    std::string err = run_guarded(
        [&](vcu::CambiAccum* d, cudaStream_t st) { k.enqueue(f0.d_dis.view, &f0.d_ref.view, d, st); },
        stream, a0);
    const bool one_frame = std::size_t(c.w) * c.h > 1280 * 720; // at the large sizes (CPU time)
    if (err.empty()) err = check_frame(k, a0, f0.want, f0.scores, stream, one_frame);
    if (!err.empty()) return "frame 0: " + err;
    if (one_frame) return {};

    const Frame f1 = make_frame(c, plan, rng, false);
    vcu::CambiAccum a1{};
    err = run_guarded(
        [&](vcu::CambiAccum* d, cudaStream_t st) { k.enqueue(f1.d_dis.view, &f1.d_ref.view, d, st); },
        stream, a1);
    if (err.empty()) err = check_frame(k, a1, f1.want, f1.scores, stream, true);
    if (!err.empty()) return "frame 1 (same kernel object): " + err;
    // Frame 0 again, after frame 1: its c-value slot must be intact (host copy, then the
    // device pooling in place).
    err = compare_scores(vcu::cambi_kernel_finish(k, a0, stream, true), f0.scores, plan.full_ref,
                         "frame 0 finished (slow path) after frame 1 was enqueued");
    if (!err.empty()) return err;
    vcu::CambiDevicePool pool(k.max_scale_values());
    return compare_scores(vcu::cambi_kernel_finish(k, a0, stream, true, nullptr, &pool), f0.scores,
                          plan.full_ref, "frame 0 pooled on the device after frame 1 was enqueued");
}

std::vector<Combo> combos() {
    std::vector<Combo> v;
    const Content all_content[] = {Content::zero,   Content::max,           Content::noise,
                                   Content::smooth_noise, Content::banded, Content::banded_dither,
                                   Content::banded_blocks};
    const Opts all_opts[] = {Opts::defaults, Opts::model,  Opts::mlc5,     Opts::mlc0_topk,
                             Opts::enc_resample, Opts::enc_bd8, Opts::ws127, Opts::pq,
                             Opts::full_ref,     Opts::full_ref_src};
    const unsigned depths[] = {8, 10, 12, 16};
    // The smallest sizes CAMBI accepts (one side >= 216; the enc/src options need more).
    for (unsigned bpc : depths)
        for (Content ct : all_content) {
            v.push_back({216, 216, bpc, ct, Opts::defaults, Layout::planar});
            v.push_back({216, 17, bpc, ct, Opts::defaults, bpc > 8 ? Layout::p010 : Layout::planar});
            v.push_back({17, 216, bpc, ct, Opts::model, Layout::interleaved});
        }
    // Degenerate but accepted: one row or one column.
    for (Content ct : {Content::banded, Content::max, Content::banded_dither}) {
        v.push_back({216, 1, 10, ct, Opts::defaults, Layout::planar});
        v.push_back({1, 216, 8, ct, Opts::mlc5, Layout::interleaved});
    }
    // Odd sizes: every option set, rotating content, depth and layout.
    unsigned i = 0;
    const unsigned odd[][2] = {{333, 251}, {401, 217}, {641, 359}};
    for (const auto& s : odd)
        for (Opts o : all_opts)
            for (int rep = 0; rep < 2; ++rep, ++i) {
                const unsigned bpc = depths[i % 4];
                const Layout l = i % 3 == 0 ? Layout::planar : i % 3 == 1 ? Layout::interleaved
                                 : bpc > 8 ? Layout::p010 : Layout::planar;
                v.push_back({s[0], s[1], bpc, all_content[(i * 3) % 7], o, l});
            }
    // 720p: banded content, all depths, defaults and the model's options.
    for (unsigned bpc : depths)
        for (Opts o : {Opts::defaults, Opts::model})
            v.push_back({1279, 719, bpc, Content::banded_blocks, o, Layout::planar});
    // Narrow c-value strips (8, 16, 32 columns: one-warp blocks, window columns in two or
    // three chunks), as GPUs with less shared memory per block run them.
    for (int tw : {8, 16, 32}) {
        v.push_back({216, 216, 8, Content::banded, Opts::defaults, Layout::planar, tw});
        v.push_back({216, 17, 10, Content::banded_dither, Opts::model, Layout::p010, tw});
        v.push_back({17, 216, 12, Content::smooth_noise, Opts::mlc5, Layout::planar, tw});
        v.push_back({333, 251, 16, Content::banded_blocks, Opts::ws127, Layout::planar, tw});
        v.push_back({641, 359, 10, Content::banded, Opts::full_ref, Layout::interleaved, tw});
        v.push_back({401, 217, 8, Content::noise, Opts::enc_resample, Layout::planar, tw});
    }
    v.push_back({1279, 719, 10, Content::banded_blocks, Opts::model, Layout::planar, 16});
    // 1080p and 4K: fewer (the CPU reference takes seconds per 4K frame).
    v.push_back({1920, 1080, 8, Content::banded_dither, Opts::defaults, Layout::planar});
    v.push_back({1920, 1080, 10, Content::banded, Opts::model, Layout::p010});
    v.push_back({1920, 1080, 12, Content::smooth_noise, Opts::full_ref, Layout::planar});
    v.push_back({1920, 1080, 16, Content::banded_blocks, Opts::mlc5, Layout::planar});
    v.push_back({3840, 2160, 8, Content::banded, Opts::defaults, Layout::planar});
    v.push_back({3840, 2160, 10, Content::banded_blocks, Opts::model, Layout::p010});
    v.push_back({3840, 2160, 10, Content::banded_dither, Opts::full_ref_src, Layout::planar});
    return v;
}

} // namespace

TEST_CASE("cambi: device c-values, top-k and finish equal the reference", "[cambi][gpu]") {
    if (!require_gpu_or_skip()) return;
    Stream stream;
    // VMAF_CHECK_MAX_PIXELS=N keeps the combinations of at most N pixels (compute-sanitizer
    // runs); each keeps its index, hence its seed.
    std::size_t max_pixels = ~std::size_t(0);
    if (const char* e = std::getenv("VMAF_CHECK_MAX_PIXELS")) max_pixels = std::strtoull(e, nullptr, 10);
    run_combos(
        combos(), 0x0ca3b1,
        [&](const Combo& c, std::uint64_t seed) {
            if (std::size_t(c.w) * c.h > max_pixels) return std::string();
            return run_combo(c, seed, stream.s);
        },
        describe_combo);
}

TEST_CASE("cambi: a 4K frame whose pooling needs libvmaf's quick-select order", "[cambi][gpu]") {
    // 10-bit: the left 40% vertical stripes of 100/101, 32 wide (c-values ~1000), the
    // rest flat 120 with one 121 per 65x65 cell (c-values 4224/4225 of a code, full
    // mantissas): the top 60% sum far beyond 2^53 ulps of its smallest value, so at
    // scales 0 and 1 the order-free sum is not libvmaf's (it differs in the last digits)
    // and the host must pool the frame's own c-values (the natural slow path).
    if (!require_gpu_or_skip()) return;
    Stream stream;
    const unsigned w = 3840, h = 2160;
    std::mt19937_64 rng(check_seed());
    HostPlane p = make_plane(w, h, 10, Fill::zero, rng, 0);
    for (unsigned y = 0; y < h; ++y)
        for (unsigned x = 0; x < w; ++x)
            p.set(x, y, x < w * 2 / 5 ? 100 + ((x / 32) & 1) : (x % 65 == 0 && y % 65 == 0) ? 121 : 120);
    const vref::CambiOptions opt;
    const vref::CambiPlan plan = vref::cambi_plan(opt, w, h, 10);
    const RefPass want = ref_pass(to_view(p), plan, false);
    const vref::CambiScores want_scores = vref::cambi_finish(plan, want.scores, want.scores);
    vcu::CambiKernel k(w, h, 10, opt, 2);
    const DeviceInput d = upload(p, Layout::p010, rng);
    vcu::CambiAccum acc{};
    REQUIRE(run_guarded([&](vcu::CambiAccum* out, cudaStream_t st) { k.enqueue(d.view, nullptr, out, st); },
                        stream.s, acc)
                .empty());
    for (unsigned s = 0; s < 2; ++s) {
        INFO("scale " << s);
        CHECK(acc.pass[0][s].bound_ok == 0);
        float min_pos;
        std::memcpy(&min_pos, &acc.pass[0][s].min_pos_bits, sizeof min_pos);
        const vref::CambiTopkExact gx =
            vref::cambi_topk_from_sum(acc.pass[0][s].sum_units, int(acc.pass[0][s].k), min_pos);
        CHECK_FALSE(gx.equals_libvmaf);
        CHECK_FALSE(same(gx.score, want.scores.scale[s])); // the order matters here
    }
    unsigned slow = 0;
    const vref::CambiScores got = vcu::cambi_kernel_finish(k, acc, stream.s, false, &slow);
    CHECK(slow == 2);
    const std::string err = check_frame(k, acc, &want, want_scores, stream.s, false);
    INFO("VMAF_CHECK_SEED=" << hex(check_seed()) << ": " << err);
    CHECK(err.empty());
    CHECK(same(got.cambi, want_scores.cambi));
    // The engine's path: the two slow scales pooled on the device, in place.
    vcu::CambiDevicePool pool(k.max_scale_values());
    slow = 0;
    const vref::CambiScores dev = vcu::cambi_kernel_finish(k, acc, stream.s, false, &slow, &pool);
    CHECK(slow == 2);
    CHECK(same(dev.cambi, want_scores.cambi));
}

TEST_CASE("cambi: a sample >= 2^bpc is refused like the reference", "[cambi][gpu]") {
    if (!require_gpu_or_skip()) return;
    Stream stream;
    for (const bool resample : {false, true}) {
        INFO("resampled pass: " << resample << ", VMAF_CHECK_SEED=" << hex(check_seed()));
        std::mt19937_64 rng(check_seed());
        HostPlane p = random_plane(400, 300, 10, Fill::smooth_noise, rng);
        // Resampling to 2/3 skips columns: put the bad sample in one it skips, too.
        p.set(resample ? 1 : 200, 150, 1024);
        vref::CambiOptions opt;
        if (resample) opt.enc_width = 266, opt.enc_height = 200;
        const vref::CambiPlan plan = vref::cambi_plan(opt, 400, 300, 10);
        vref::CambiScratch scratch;
        const vref::LumaView v = to_view(p);
        CHECK_THROWS_AS(vref::cambi_frame(v, nullptr, plan, scratch), std::invalid_argument);
        vcu::CambiKernel k(400, 300, 10, opt, 2);
        const DeviceInput d = upload(p, Layout::planar, rng);
        vcu::CambiAccum acc{};
        const std::string err = run_guarded(
            [&](vcu::CambiAccum* out, cudaStream_t st) { k.enqueue(d.view, nullptr, out, st); },
            stream.s, acc);
        CHECK(err.empty());
        CHECK(acc.invalid_sample[0] != 0);
        CHECK_THROWS_AS(vcu::cambi_kernel_finish(k, acc, stream.s), std::invalid_argument);
    }
}

TEST_CASE("cambi: c-value slots are reused after cvalue_slots enqueues", "[cambi][gpu]") {
    if (!require_gpu_or_skip()) return;
    Stream stream;
    std::mt19937_64 rng(check_seed());
    const HostPlane p = banded_plane(320, 240, 8, false, false, rng);
    const DeviceInput d = upload(p, Layout::planar, rng);
    vcu::CambiKernel k(320, 240, 8, vref::CambiOptions{}, 2);
    vcu::DeviceBuffer out(3 * sizeof(vcu::CambiAccum));
    auto* d_acc = out.get<vcu::CambiAccum>();
    for (int i = 0; i < 3; ++i) k.enqueue(d.view, nullptr, d_acc + i, stream.s);
    VMAF_CUDA_CHECK(cudaStreamSynchronize(stream.s));
    vcu::CambiAccum acc[3];
    VMAF_CUDA_CHECK(cudaMemcpy(acc, d_acc, sizeof acc, cudaMemcpyDeviceToHost));
    CHECK(acc[0].sequence == 0);
    CHECK(acc[2].sequence == 2);
    CHECK(acc[2].slot == 0);
    std::vector<float> c;
    CHECK_THROWS_AS(k.copy_cvalues(acc[0], 0, 0, c, stream.s), vcu::CudaError);
    CHECK_NOTHROW(k.copy_cvalues(acc[1], 0, 0, c, stream.s));
    CHECK_NOTHROW(k.copy_cvalues(acc[2], 0, 4, c, stream.s));
    CHECK_THROWS_AS(k.copy_cvalues(acc[2], 1, 0, c, stream.s), vcu::CudaError); // no full_ref
}

TEST_CASE("cambi: kernel time per frame", "[.bench][cambi]") {
    if (!require_gpu_or_skip()) return;
    Stream stream;
    struct B { unsigned w, h, bpc; Opts o; };
    const B cases[] = {{1920, 1080, 8, Opts::defaults}, {1920, 1080, 10, Opts::defaults},
                       {1920, 1080, 10, Opts::model},   {3840, 2160, 8, Opts::defaults},
                       {3840, 2160, 10, Opts::defaults}, {3840, 2160, 10, Opts::model},
                       {3840, 2160, 10, Opts::full_ref}};
    for (const B& b : cases) {
        std::mt19937_64 rng(check_seed());
        const HostPlane p = banded_plane(b.w, b.h, b.bpc, true, true, rng);
        const DeviceInput d = upload(p, Layout::planar, rng);
        const vref::CambiOptions opt = make_opts(b.o, b.w, b.h);
        vcu::CambiKernel k(b.w, b.h, b.bpc, opt, 2);
        vcu::DeviceBuffer out(k.accum_bytes());
        const double us = time_us(
            [&](cudaStream_t st) { k.enqueue(d.view, &d.view, out.get(), st); }, stream.s, 5, 50);
        std::printf("cambi %ux%u %u-bit %s: %.1f us/frame (device memory %.1f MB)\n", b.w, b.h, b.bpc,
                    opts_name(b.o), us, k.device_bytes() / 1e6);
    }
    SUCCEED();
}

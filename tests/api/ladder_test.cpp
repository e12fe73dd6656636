// SPDX-License-Identifier: BSD-2-Clause-Patent
// Suites `api` (CPU backend) and `gpu` (VMAF_CUDA_TEST_BACKEND=cuda): a ladder's
// renditions score exactly as separate sessions fed the same pairs would, whatever the
// pairing pattern (late start, skipped reference frames, early end, repeated reference
// frames), with the reference work shared; and the ladder API's errors.

#include "vmaf_cuda.h"

#include "catch.hpp"
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

VmafCudaBackend test_backend() {
    const char* b = std::getenv("VMAF_CUDA_TEST_BACKEND");
    return b && std::string(b) == "cuda" ? VMAF_CUDA_BACKEND_CUDA : VMAF_CUDA_BACKEND_CPU;
}

/// Host planes of one 4:2:0 picture (values in the low bits).
struct Picture {
    unsigned w = 0, h = 0, bpc = 8;
    std::vector<std::uint8_t> y, u, v; // bytes: 1 or 2 per sample
    VmafCudaPicture view() const {
        const std::size_t bps = bpc > 8 ? 2 : 1;
        VmafCudaPicture p{};
        p.luma = y.data();
        p.pitch = ptrdiff_t(w * bps);
        p.memory = VMAF_CUDA_MEMORY_HOST;
        p.chroma[0] = u.data();
        p.chroma[1] = v.data();
        p.chroma_pitch = ptrdiff_t((w + 1) / 2 * bps);
        p.chroma_step = 1;
        return p;
    }
};

void put(std::vector<std::uint8_t>& plane, std::size_t i, unsigned bpc, unsigned value) {
    if (bpc == 8) plane[i] = std::uint8_t(value);
    else {
        const std::uint16_t s = std::uint16_t(value);
        std::memcpy(&plane[2 * i], &s, 2);
    }
}

/// A moving pattern (frame k) with Gaussian noise of `sigma` (0: the clean reference).
Picture make_picture(unsigned w, unsigned h, unsigned bpc, unsigned k, double sigma,
                     std::mt19937_64& rng) {
    Picture p;
    p.w = w;
    p.h = h;
    p.bpc = bpc;
    const std::size_t bps = bpc > 8 ? 2 : 1;
    const unsigned cw = (w + 1) / 2, ch = (h + 1) / 2;
    p.y.assign(std::size_t(w) * h * bps, 0);
    p.u.assign(std::size_t(cw) * ch * bps, 0);
    p.v.assign(std::size_t(cw) * ch * bps, 0);
    const double maxv = double((1u << bpc) - 1);
    std::normal_distribution<double> noise(0, sigma > 0 ? sigma * maxv : 1.0);
    auto sample = [&](double base) {
        const double n = sigma > 0 ? noise(rng) : 0.0;
        return unsigned(std::clamp(base + n, 0.0, maxv));
    };
    for (unsigned y = 0; y < h; ++y)
        for (unsigned x = 0; x < w; ++x) {
            const double base = maxv * (0.5 + 0.35 * std::sin(0.11 * (x + 4.0 * k)) *
                                                  std::cos(0.07 * (y + 1.5 * k)));
            put(p.y, std::size_t(y) * w + x, bpc, sample(base));
        }
    for (unsigned y = 0; y < ch; ++y)
        for (unsigned x = 0; x < cw; ++x) {
            put(p.u, std::size_t(y) * cw + x, bpc, sample(maxv * (0.45 + 0.1 * std::sin(0.2 * (x + k)))));
            put(p.v, std::size_t(y) * cw + x, bpc, sample(maxv * (0.55 - 0.1 * std::cos(0.15 * (y + k)))));
        }
    return p;
}

VmafCudaSettings settings(unsigned w, unsigned h, unsigned bpc, const char* models,
                          const char* features) {
    VmafCudaSettings s;
    vmaf_cuda_default_settings(&s);
    s.width = w;
    s.height = h;
    s.bpc = bpc;
    s.backend = test_backend();
    s.models = models;
    s.features = features;
    return s;
}

std::string slurp(const std::string& path) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

/// Everything a session gives: every received frame's index, names and values (as
/// bits), then the pooled means and the JSON log at full precision.
struct Outcome {
    std::vector<std::string> frames;
    std::string log;
};

void drain(VmafCudaSession* vs, Outcome& o) {
    VmafCudaFrameScores fs;
    while (vmaf_cuda_receive(vs, &fs) == VMAF_CUDA_OK) {
        std::string line = std::to_string(fs.index);
        for (unsigned i = 0; i < fs.count; ++i) {
            char buf[64];
            std::snprintf(buf, sizeof buf, " %s=%a", fs.names[i], fs.values[i]);
            line += buf;
        }
        o.frames.push_back(line);
    }
}

void finish(VmafCudaSession* vs, Outcome& o, const std::string& tag) {
    drain(vs, o);
    const std::string path = "ladder_test_" + tag + ".json";
    REQUIRE(vmaf_cuda_write_log(vs, path.c_str(), VMAF_CUDA_LOG_JSON, -1, NAN) == VMAF_CUDA_OK);
    o.log = slurp(path);
    std::remove(path.c_str());
}

/// pattern[k][f]: rendition k has a frame paired with reference frame f; ref_of[f]: the
/// reference picture sent at ladder frame f (repeats allowed).
struct Case {
    const char* name;
    unsigned w, h, bpc, frames, renditions;
    const char* models;
    const char* features;
    std::vector<std::vector<char>> pattern;
    std::vector<unsigned> ref_of;
    unsigned subsample = 1;
    unsigned threads = 0; ///< settings.n_threads (CPU backend: > 1 keeps VIF and ADM per rendition)
};

void run_case(const Case& c) {
    INFO("case " << c.name << " (" << c.w << "x" << c.h << ", " << c.bpc << "-bit, backend "
                 << (test_backend() == VMAF_CUDA_BACKEND_CUDA ? "cuda" : "cpu") << ")");
    std::mt19937_64 rng(0x1adde5u + c.w * 7 + c.bpc);
    std::vector<Picture> refs;
    const unsigned n_ref = *std::max_element(c.ref_of.begin(), c.ref_of.end()) + 1;
    for (unsigned f = 0; f < n_ref; ++f) refs.push_back(make_picture(c.w, c.h, c.bpc, f, 0, rng));
    // dist[k][f]: rendition k's picture paired with ladder frame f
    std::vector<std::vector<Picture>> dist(c.renditions);
    for (unsigned k = 0; k < c.renditions; ++k)
        for (unsigned f = 0; f < c.frames; ++f)
            dist[k].push_back(make_picture(c.w, c.h, c.bpc, c.ref_of[f], 0.01 + 0.03 * k, rng));

    VmafCudaSettings s = settings(c.w, c.h, c.bpc, c.models, c.features);
    s.n_subsample = c.subsample;
    s.n_threads = c.threads;
    char err[512];
    // The ladder.
    VmafCudaLadder* l = nullptr;
    const int orc = vmaf_cuda_ladder_open(&l, &s, c.renditions, err, sizeof err);
    INFO(err);
    REQUIRE(orc == VMAF_CUDA_OK);
    REQUIRE(vmaf_cuda_ladder_renditions(l) == c.renditions);
    std::vector<Outcome> got(c.renditions);
    unsigned released = 0;
    for (unsigned f = 0; f < c.frames; ++f) {
        const VmafCudaPicture rp = refs[c.ref_of[f]].view();
        std::vector<VmafCudaPicture> dv(c.renditions);
        std::vector<const VmafCudaPicture*> dp(c.renditions, nullptr);
        for (unsigned k = 0; k < c.renditions; ++k)
            if (c.pattern[k][f]) {
                dv[k] = dist[k][f].view();
                dp[k] = &dv[k];
            }
        const int rc = vmaf_cuda_ladder_send(l, &rp, dp.data());
        INFO(vmaf_cuda_ladder_error_message(l));
        REQUIRE(rc == VMAF_CUDA_OK);
        for (unsigned k = 0; k < c.renditions; ++k) {
            drain(vmaf_cuda_ladder_session(l, k), got[k]);
            // a rendition whose last frame was f ends now
            bool more = false;
            for (unsigned g = f + 1; g < c.frames; ++g) more = more || c.pattern[k][g];
            bool any = false;
            for (unsigned g = 0; g <= f; ++g) any = any || c.pattern[k][g];
            if (any && !more && c.pattern[k][f])
                REQUIRE(vmaf_cuda_flush(vmaf_cuda_ladder_session(l, k)) == VMAF_CUDA_OK);
        }
        const unsigned r = vmaf_cuda_ladder_pictures_released(l);
        CHECK(r >= released);
        CHECK(r <= f + 1);
        released = r;
    }
    REQUIRE(vmaf_cuda_ladder_flush(l) == VMAF_CUDA_OK);
    CHECK(vmaf_cuda_ladder_pictures_released(l) == c.frames);
    for (unsigned k = 0; k < c.renditions; ++k)
        finish(vmaf_cuda_ladder_session(l, k), got[k], std::string(c.name) + "_l" + std::to_string(k));

    // Separate sessions fed the same pairs.
    for (unsigned k = 0; k < c.renditions; ++k) {
        INFO("rendition " << k);
        VmafCudaSession* vs = nullptr;
        REQUIRE(vmaf_cuda_open(&vs, &s, err, sizeof err) == VMAF_CUDA_OK);
        Outcome want;
        for (unsigned f = 0; f < c.frames; ++f) {
            if (!c.pattern[k][f]) continue;
            const VmafCudaPicture rp = refs[c.ref_of[f]].view();
            const VmafCudaPicture dp = dist[k][f].view();
            REQUIRE(vmaf_cuda_send(vs, &rp, &dp) == VMAF_CUDA_OK);
            drain(vs, want);
        }
        REQUIRE(vmaf_cuda_flush(vs) == VMAF_CUDA_OK);
        finish(vs, want, std::string(c.name) + "_s" + std::to_string(k));
        vmaf_cuda_close(vs);
        REQUIRE(got[k].frames.size() == want.frames.size());
        CHECK(!want.frames.empty());
        for (std::size_t i = 0; i < want.frames.size(); ++i) {
            INFO("frame " << i);
            CHECK(got[k].frames[i] == want.frames[i]);
        }
        CHECK(got[k].log == want.log);
        CHECK(want.log.find("\"frames\"") != std::string::npos);
    }
    vmaf_cuda_ladder_close(l);
}

std::vector<char> all(unsigned n) { return std::vector<char>(n, 1); }

std::vector<unsigned> iota(unsigned n) {
    std::vector<unsigned> v(n);
    for (unsigned i = 0; i < n; ++i) v[i] = i;
    return v;
}

/// Segments: picture sizes (and bit depths) one after the other.
struct SegmentSpec {
    unsigned w, h, bpc, frames;
};

/// A ladder whose pictures change size between segments (vmaf_cuda_ladder_reopen())
/// against a fresh ladder per segment fed the same pairs: every frame's values the same
/// (numbered on), pooled values over the concatenation in frame order, one log.
/// Returns each rendition's pooled mean after a truncation into the first segment.
std::vector<double> run_segments(const std::vector<SegmentSpec>& segs, unsigned renditions,
                                 const char* models, const char* features, int keep_history) {
    using nlohmann::json;
    INFO("segments test, backend " << (test_backend() == VMAF_CUDA_BACKEND_CUDA ? "cuda" : "cpu")
                                   << ", keep_history " << keep_history << ", seed 0x5e6");
    std::mt19937_64 rng(0x5e6);
    char err[512] = "";
    VmafCudaLadder* l = nullptr;
    std::vector<Outcome> got(renditions), want(renditions);
    std::vector<std::vector<std::vector<double>>> want_values(renditions); // [k][frame][col]
    std::vector<std::string> names;
    unsigned first = 0;
    for (std::size_t g = 0; g < segs.size(); ++g) {
        const SegmentSpec& sp = segs[g];
        INFO("segment " << g << ": " << sp.w << "x" << sp.h << " " << sp.bpc << "-bit");
        VmafCudaSettings s = settings(sp.w, sp.h, sp.bpc, models, features);
        s.keep_history = keep_history;
        if (!l) REQUIRE(vmaf_cuda_ladder_open(&l, &s, renditions, err, sizeof err) == VMAF_CUDA_OK);
        else {
            const int rc = vmaf_cuda_ladder_reopen(l, &s, err, sizeof err);
            INFO(err);
            REQUIRE(rc == VMAF_CUDA_OK);
            // every picture sent before is released; the count goes on from the first frame
            CHECK(vmaf_cuda_ladder_pictures_released(l) == first);
        }
        VmafCudaLadder* fresh = nullptr;
        REQUIRE(vmaf_cuda_ladder_open(&fresh, &s, renditions, err, sizeof err) == VMAF_CUDA_OK);
        for (unsigned f = 0; f < sp.frames; ++f) {
            const Picture ref = make_picture(sp.w, sp.h, sp.bpc, f, 0, rng);
            std::vector<Picture> dist;
            std::vector<VmafCudaPicture> dv(renditions);
            std::vector<const VmafCudaPicture*> dp(renditions);
            for (unsigned k = 0; k < renditions; ++k)
                dist.push_back(make_picture(sp.w, sp.h, sp.bpc, f, 0.01 + 0.02 * k, rng));
            for (unsigned k = 0; k < renditions; ++k) {
                dv[k] = dist[k].view();
                dp[k] = &dv[k];
            }
            const VmafCudaPicture rp = ref.view();
            REQUIRE(vmaf_cuda_ladder_send(l, &rp, dp.data()) == VMAF_CUDA_OK);
            REQUIRE(vmaf_cuda_ladder_send(fresh, &rp, dp.data()) == VMAF_CUDA_OK);
            for (unsigned k = 0; k < renditions; ++k) drain(vmaf_cuda_ladder_session(l, k), got[k]);
        }
        REQUIRE(vmaf_cuda_ladder_flush(fresh) == VMAF_CUDA_OK);
        for (unsigned k = 0; k < renditions; ++k) {
            VmafCudaSession* vs = vmaf_cuda_ladder_session(fresh, k);
            VmafCudaFrameScores fs;
            while (vmaf_cuda_receive(vs, &fs) == VMAF_CUDA_OK) {
                // the fresh ladder's frame, numbered on after the earlier segments
                std::string line = std::to_string(first + fs.index);
                for (unsigned i = 0; i < fs.count; ++i) {
                    char buf[64];
                    std::snprintf(buf, sizeof buf, " %s=%a", fs.names[i], fs.values[i]);
                    line += buf;
                }
                want[k].frames.push_back(line);
                want_values[k].emplace_back(fs.values, fs.values + fs.count);
                if (names.empty())
                    for (unsigned i = 0; i < fs.count; ++i) names.push_back(fs.names[i]);
            }
        }
        vmaf_cuda_ladder_close(fresh);
        first += sp.frames;
    }
    REQUIRE(vmaf_cuda_ladder_flush(l) == VMAF_CUDA_OK);
    CHECK(vmaf_cuda_ladder_pictures_released(l) == first);
    std::vector<double> cut_means;
    // a cut back into the segment before the last (e.g. -frames:v N just after a change)
    const unsigned cut = first - segs.back().frames - 1;
    for (unsigned k = 0; k < renditions; ++k) {
        INFO("rendition " << k);
        VmafCudaSession* vs = vmaf_cuda_ladder_session(l, k);
        drain(vs, got[k]);
        REQUIRE(got[k].frames.size() == want[k].frames.size());
        REQUIRE(got[k].frames.size() == first);
        for (std::size_t i = 0; i < want[k].frames.size(); ++i) {
            INFO("frame " << i);
            CHECK(got[k].frames[i] == want[k].frames[i]);
        }
        CHECK(vmaf_cuda_frames_scored(vs, first) == first);
        CHECK(vmaf_cuda_pictures_released(vs) == first);
        // pooled over every segment: libvmaf's sums in frame order over the concatenation
        for (std::size_t c = 0; c < names.size(); ++c) {
            INFO("pooled " << names[c]);
            double sum = 0, inv = 0, mn = want_values[k][0][c], mx = mn;
            for (const auto& row : want_values[k]) {
                sum += row[c];
                inv += 1.0 / (row[c] + 1.0);
                mn = std::min(mn, row[c]);
                mx = std::max(mx, row[c]);
            }
            double v = 0;
            REQUIRE(vmaf_cuda_pooled(vs, names[c].c_str(), VMAF_CUDA_POOL_MEAN, &v) == VMAF_CUDA_OK);
            CHECK(v == sum / double(first));
            REQUIRE(vmaf_cuda_pooled(vs, names[c].c_str(), VMAF_CUDA_POOL_HARMONIC_MEAN, &v) == VMAF_CUDA_OK);
            CHECK(v == double(first) / inv - 1.0);
            REQUIRE(vmaf_cuda_pooled(vs, names[c].c_str(), VMAF_CUDA_POOL_MIN, &v) == VMAF_CUDA_OK);
            CHECK(v == mn);
            REQUIRE(vmaf_cuda_pooled(vs, names[c].c_str(), VMAF_CUDA_POOL_MAX, &v) == VMAF_CUDA_OK);
            CHECK(v == mx);
        }
        if (!keep_history) {
            CHECK(vmaf_cuda_write_log(vs, "ladder_test_seg.json", VMAF_CUDA_LOG_JSON, -1, NAN) ==
                  VMAF_CUDA_ESTATE);
            // within the last 64 frames; two segments back needs the history
            if (segs.size() > 2) { // (refused before anything changes)
                CHECK(vmaf_cuda_truncate(vs, segs[0].frames - 1) == VMAF_CUDA_ESTATE);
            }
            REQUIRE(vmaf_cuda_truncate(vs, cut) == VMAF_CUDA_OK);
            double m = 0;
            REQUIRE(vmaf_cuda_pooled(vs, "vmaf", VMAF_CUDA_POOL_MEAN, &m) == VMAF_CUDA_OK);
            cut_means.push_back(m);
            continue;
        }
        // one log: every frame numbered on, with the segments
        REQUIRE(vmaf_cuda_write_log(vs, "ladder_test_seg.json", VMAF_CUDA_LOG_JSON, -1, NAN) ==
                VMAF_CUDA_OK);
        const json log = json::parse(slurp("ladder_test_seg.json"));
        std::remove("ladder_test_seg.json");
        REQUIRE(log["frames"].size() == first);
        REQUIRE(log["segments"].size() == segs.size());
        unsigned at = 0;
        for (std::size_t g = 0; g < segs.size(); ++g) {
            CHECK(log["segments"][g]["first_frame"] == at);
            CHECK(log["segments"][g]["frames"] == segs[g].frames);
            CHECK(log["segments"][g]["width"] == segs[g].w);
            CHECK(log["segments"][g]["height"] == segs[g].h);
            CHECK(log["segments"][g]["bit_depth"] == segs[g].bpc);
            at += segs[g].frames;
        }
        for (unsigned i = 0; i < first; ++i) {
            CHECK(log["frames"][i]["frameNum"] == i);
            CHECK(log["frames"][i]["metrics"]["vmaf"].get<double>() ==
                  want_values[k][i][names.size() - 1]);
        }
        double mean = 0;
        REQUIRE(vmaf_cuda_pooled(vs, "vmaf", VMAF_CUDA_POOL_MEAN, &mean) == VMAF_CUDA_OK);
        CHECK(log["pooled_metrics"]["vmaf"]["mean"].get<double>() == mean);
        // psnr's apsnr: libvmaf's aggregate over every frame's squared error sums
        if (features && std::string(features).find("enable_apsnr") != std::string::npos) {
            CHECK(log["aggregate_metrics"].contains("apsnr_y"));
            CHECK(std::isfinite(log["aggregate_metrics"]["apsnr_y"].get<double>()));
        }
        // a cut into an earlier segment (-frames:v): as if the stream had ended there
        REQUIRE(vmaf_cuda_truncate(vs, cut) == VMAF_CUDA_OK);
        double m = 0;
        REQUIRE(vmaf_cuda_pooled(vs, "vmaf", VMAF_CUDA_POOL_MEAN, &m) == VMAF_CUDA_OK);
        cut_means.push_back(m);
        REQUIRE(vmaf_cuda_write_log(vs, "ladder_test_seg.json", VMAF_CUDA_LOG_JSON, -1, NAN) ==
                VMAF_CUDA_OK);
        const json cut_log = json::parse(slurp("ladder_test_seg.json"));
        std::remove("ladder_test_seg.json");
        CHECK(cut_log["frames"].size() == cut);
        CHECK(cut_log["segments"].size() == segs.size() - 1);
    }
    // settings that score other names cannot continue the stream
    VmafCudaSettings other = settings(64, 48, 8, "version=vmaf_v0.6.1neg", nullptr);
    other.keep_history = keep_history;
    CHECK(vmaf_cuda_ladder_reopen(l, &other, err, sizeof err) == VMAF_CUDA_EINVAL);
    CHECK(std::string(err).find("other features or models") != std::string::npos);
    vmaf_cuda_ladder_close(l);
    return cut_means;
}

} // namespace

TEST_CASE("ladder: segments, the picture size and bit depth change mid-stream",
          "[api][ladder][segments]") {
    const std::vector<SegmentSpec> segs = {{96, 64, 8, 6}, {80, 72, 10, 5}, {96, 64, 8, 4}};
    run_segments(segs, 2, nullptr, "name=psnr:enable_apsnr=true", 1);
    run_segments(segs, 1, "version=vmaf_v0.6.1", "name=motion:motion_five_frame_window=true", 1);
    // without history: the same pooled values, also after a cut back into the first segment
    const std::vector<double> with = run_segments(segs, 2, nullptr, nullptr, 1);
    const std::vector<double> without = run_segments(segs, 2, nullptr, nullptr, 0);
    REQUIRE(with.size() == 2);
    CHECK(with == without);
}

TEST_CASE("ladder: many segments without history (earlier ones let go), n_subsample",
          "[api][ladder][segments]") {
    // 60 size changes of 3 frames each: the pooled values over the concatenation, and
    // which frames are scored (each segment counts n_subsample from its first frame)
    VmafCudaLadder* l = nullptr;
    char err[256] = "";
    std::mt19937_64 rng(0x5e7);
    std::vector<double> vmaf;
    std::uint64_t want_scored = 0;
    unsigned sent = 0;
    for (unsigned g = 0; g < 60; ++g) {
        const unsigned w = g % 2 ? 64 : 72, h = g % 3 ? 48 : 56;
        VmafCudaSettings s = settings(w, h, 8, nullptr, nullptr);
        s.keep_history = 0;
        s.n_subsample = 2;
        if (!l) REQUIRE(vmaf_cuda_ladder_open(&l, &s, 1, err, sizeof err) == VMAF_CUDA_OK);
        else REQUIRE(vmaf_cuda_ladder_reopen(l, &s, err, sizeof err) == VMAF_CUDA_OK);
        for (unsigned f = 0; f < 3; ++f, ++sent) {
            const Picture ref = make_picture(w, h, 8, f, 0, rng), dist = make_picture(w, h, 8, f, 0.02, rng);
            const VmafCudaPicture rp = ref.view(), dp = dist.view();
            const VmafCudaPicture* d[1] = {&dp};
            REQUIRE(vmaf_cuda_ladder_send(l, &rp, d) == VMAF_CUDA_OK);
            CHECK(vmaf_cuda_frame_scored(vmaf_cuda_ladder_session(l, 0), sent) == (f % 2 == 0));
            want_scored += f % 2 == 0;
        }
        VmafCudaFrameScores fs;
        while (vmaf_cuda_receive(vmaf_cuda_ladder_session(l, 0), &fs) == VMAF_CUDA_OK)
            for (unsigned i = 0; i < fs.count; ++i)
                if (std::string(fs.names[i]) == "vmaf") vmaf.push_back(fs.values[i]);
    }
    VmafCudaSession* vs = vmaf_cuda_ladder_session(l, 0);
    REQUIRE(vmaf_cuda_ladder_flush(l) == VMAF_CUDA_OK);
    VmafCudaFrameScores fs;
    while (vmaf_cuda_receive(vs, &fs) == VMAF_CUDA_OK)
        for (unsigned i = 0; i < fs.count; ++i)
            if (std::string(fs.names[i]) == "vmaf") vmaf.push_back(fs.values[i]);
    CHECK(vmaf.size() == want_scored);
    CHECK(vmaf_cuda_frames_scored(vs, sent) == want_scored);
    // frames of segments long let go
    CHECK(vmaf_cuda_frame_scored(vs, 0) == 1);
    CHECK(vmaf_cuda_frame_scored(vs, 3) == 1);
    CHECK(vmaf_cuda_frame_scored(vs, 4) == 0);
    CHECK(vmaf_cuda_frame_scored(vs, 5) == 1);
    double sum = 0, mean = 0;
    for (double v : vmaf) sum += v;
    REQUIRE(vmaf_cuda_pooled(vs, "vmaf", VMAF_CUDA_POOL_MEAN, &mean) == VMAF_CUDA_OK);
    CHECK(mean == sum / double(vmaf.size()));
    vmaf_cuda_ladder_close(l);
}

TEST_CASE("ladder: aligned renditions score as separate sessions", "[api][ladder]") {
    const unsigned n = 9;
    run_case({"aligned", 96, 64, 8, n, 3, nullptr, nullptr, {all(n), all(n), all(n)}, iota(n)});
    run_case({"aligned10", 97, 65, 10, n, 2, "version=vmaf_v0.6.1|version=vmaf_v0.6.1neg",
              "name=motion:motion_five_frame_window=true|name=psnr", {all(n), all(n)}, iota(n)});
}

TEST_CASE("ladder: late start, skipped and repeated reference frames, early end",
          "[api][ladder]") {
    const unsigned n = 12;
    std::vector<char> late = all(n), every_other(n, 0), early = all(n), gap = all(n);
    late[0] = late[1] = late[2] = 0;
    for (unsigned f = 0; f < n; f += 2) every_other[f] = 1;
    for (unsigned f = 7; f < n; ++f) early[f] = 0;
    gap[5] = 0;
    // the reference's last frame repeated for the last three pairs (eof_action=repeat)
    std::vector<unsigned> refs = iota(n);
    refs[10] = refs[11] = 9;
    run_case({"patterns", 80, 72, 8, n, 5, nullptr,
              "name=motion:motion_five_frame_window=true:motion_moving_average=true",
              {all(n), late, every_other, early, gap}, refs});
    run_case({"subsample", 80, 72, 8, n, 2, nullptr, nullptr, {all(n), gap}, iota(n), 3});
    // A reference frame that no rendition has: the share closes for good (every rendition
    // computes everything itself from then on) and must not hold pictures back.
    std::vector<char> hole = all(n), hole_late = all(n);
    hole[4] = hole_late[4] = 0;
    hole_late[0] = 0;
    run_case({"closed", 80, 72, 8, n, 3, nullptr, nullptr, {hole, hole, hole_late}, iota(n)});
    // Worker threads: on the CPU backend each rendition then keeps its own VIF and ADM.
    run_case({"threads", 80, 72, 10, n, 3, nullptr, nullptr, {all(n), late, gap}, iota(n), 1, 3});
}

TEST_CASE("ladder: the v1.0.16 model (SpEED, chroma, five-frame motion window)",
          "[api][ladder]") {
    const unsigned n = 7;
    // SpEED and psnr read chroma; the model's motion has the five-frame window.
    run_case({"v1016", 480, 360, 8, n, 2, "version=vmaf_v1.0.16_3d0h", nullptr, {all(n), all(n)},
              iota(n)});
}

TEST_CASE("ladder: more than 64 feature instances", "[api][ladder]") {
    // Only the first 64 features can come from the share: here the 65th, speed_temporal
    // (it reads previous distorted pictures), must stay each rendition's own.
    for (int variants : {61, 62}) { // speed_temporal the 65th or the 66th feature
        std::string features;
        for (int i = 0; i < variants; ++i)
            features += "name=vif:vif_enhn_gain_limit=" + std::to_string(1.0 + 0.5 * i) + "|";
        features += "name=speed_temporal";
        const unsigned n = 4;
        run_case({"many", 160, 160, 8, n, 2, nullptr, features.c_str(), {all(n), all(n)}, iota(n)});
    }
}

TEST_CASE("ladder: errors", "[api][ladder]") {
    VmafCudaSettings s = settings(64, 48, 8, nullptr, nullptr);
    VmafCudaLadder* l = nullptr;
    char err[256];
    CHECK(vmaf_cuda_ladder_open(&l, &s, 0, err, sizeof err) == VMAF_CUDA_EINVAL);
    CHECK(std::string(err).find("renditions") != std::string::npos);
    CHECK(l == nullptr);
    CHECK(vmaf_cuda_ladder_open(&l, &s, 65, err, sizeof err) == VMAF_CUDA_EINVAL);
    s.models = "version=nope";
    CHECK(vmaf_cuda_ladder_open(&l, &s, 2, err, sizeof err) < 0);
    CHECK(std::string(err).find("nope") != std::string::npos);
    s.models = nullptr;
    REQUIRE(vmaf_cuda_ladder_open(&l, &s, 2, err, sizeof err) == VMAF_CUDA_OK);
    CHECK(vmaf_cuda_ladder_session(l, 2) == nullptr);
    VmafCudaSession* r0 = vmaf_cuda_ladder_session(l, 0);
    std::mt19937_64 rng(5);
    const Picture p = make_picture(64, 48, 8, 0, 0.02, rng);
    const VmafCudaPicture pv = p.view();
    CHECK(vmaf_cuda_send(r0, &pv, &pv) == VMAF_CUDA_ESTATE);
    CHECK(std::string(vmaf_cuda_error_message(r0)).find("vmaf_cuda_ladder_send") != std::string::npos);
    vmaf_cuda_close(r0); // a no-op on a ladder's session
    VmafCudaPicture bad = pv;
    bad.pitch = 10;
    const VmafCudaPicture* d[2] = {&pv, &bad};
    CHECK(vmaf_cuda_ladder_send(l, &pv, d) == VMAF_CUDA_EINVAL);
    CHECK(std::string(vmaf_cuda_ladder_error_message(l)).find("rendition 1") != std::string::npos);
    CHECK(std::string(vmaf_cuda_error_message(vmaf_cuda_ladder_session(l, 1))).find("pitch") !=
          std::string::npos);
    // A rendition out of step (it had no frame at the first two reference frames) with a
    // bad picture: nothing of the frame is sent, to any rendition.
    const VmafCudaPicture* d_skip[2] = {&pv, nullptr};
    REQUIRE(vmaf_cuda_ladder_send(l, &pv, d_skip) == VMAF_CUDA_OK);
    REQUIRE(vmaf_cuda_ladder_send(l, &pv, d_skip) == VMAF_CUDA_OK);
    CHECK(vmaf_cuda_ladder_send(l, &pv, d) == VMAF_CUDA_EINVAL);
    CHECK(std::string(vmaf_cuda_ladder_error_message(l)).find("rendition 1") != std::string::npos);
    // a device picture on the CPU backend: refused before anything is sent, naming it
    if (test_backend() == VMAF_CUDA_BACKEND_CPU) {
        VmafCudaPicture dev = pv;
        dev.memory = VMAF_CUDA_MEMORY_DEVICE;
        const VmafCudaPicture* dd[2] = {&pv, &dev};
        CHECK(vmaf_cuda_ladder_send(l, &pv, dd) == VMAF_CUDA_ENODEV);
        CHECK(std::string(vmaf_cuda_ladder_error_message(l)).find("rendition 1: device pictures") !=
              std::string::npos);
    }
    REQUIRE(vmaf_cuda_ladder_send(l, &pv, d_skip) == VMAF_CUDA_OK);
    REQUIRE(vmaf_cuda_flush(r0) == VMAF_CUDA_OK);
    {
        // three frames reached rendition 0, none of the refused ones
        VmafCudaFrameScores fs;
        unsigned n0 = 0;
        while (vmaf_cuda_receive(r0, &fs) == VMAF_CUDA_OK) ++n0;
        CHECK(n0 == 3);
    }
    const VmafCudaPicture* d2[2] = {&pv, nullptr};
    CHECK(vmaf_cuda_ladder_send(l, &pv, d2) == VMAF_CUDA_ESTATE);
    CHECK(std::string(vmaf_cuda_ladder_error_message(l)).find("rendition 0") != std::string::npos);
    const VmafCudaPicture* d3[2] = {nullptr, &pv};
    CHECK(vmaf_cuda_ladder_send(l, &pv, d3) == VMAF_CUDA_OK);
    CHECK(vmaf_cuda_ladder_send(l, nullptr, d3) == VMAF_CUDA_EINVAL);
    REQUIRE(vmaf_cuda_ladder_flush(l) == VMAF_CUDA_OK);
    vmaf_cuda_ladder_close(l);
    vmaf_cuda_ladder_close(nullptr);
    CHECK(vmaf_cuda_ladder_renditions(nullptr) == 0);
}

// SPDX-License-Identifier: BSD-2-Clause-Patent
// Automatic alignment (API 10, vmaf_cuda_align.h): signatures equal a direct computation
// of the cell means; the search finds start offsets of a frame to seconds in both
// directions on moving pictures (a panned random texture with cuts, the main with noise
// as an encoder adds), 0 on aligned inputs, nothing on still or repeating pictures; a
// collapse of the scores starts a re-check that finds a lost frame; the JSON log holds
// "sync_offset" and "sync_changes". The filter suite's sync cases run the same on
// encoded clips through ffmpeg (tests/filter/sync_cases.py).

#include "vmaf_cuda.h"
#include "vmaf_cuda_align.h"

#include "catch.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

struct Session {
    VmafCudaSession* s = nullptr;
    Session(unsigned w, unsigned h, unsigned bpc) {
        VmafCudaSettings st;
        vmaf_cuda_default_settings(&st);
        st.width = w;
        st.height = h;
        st.bpc = bpc;
        st.backend = VMAF_CUDA_BACKEND_CPU;
        char err[256];
        REQUIRE(vmaf_cuda_open(&s, &st, err, sizeof err) == VMAF_CUDA_OK);
    }
    ~Session() { vmaf_cuda_close(s); }
};

/// Pictures of a moving scene: a random texture (one per scene of 40 frames) panned by a
/// speed that changes every 9 frames; content(c) is picture number c (any integer).
struct Scene {
    static constexpr unsigned W = 128, H = 96, TW = 512, TH = 384;
    std::vector<std::vector<std::uint8_t>> textures;
    explicit Scene(unsigned seed) {
        std::mt19937 rng(seed);
        for (int t = 0; t < 8; ++t) {
            std::vector<std::uint8_t> tex(TW * TH);
            // smooth blobs: a coarse random grid, bilinear
            std::uniform_int_distribution<int> v(16, 235);
            std::vector<int> g(17 * 13);
            for (int& x : g) x = v(rng);
            for (unsigned y = 0; y < TH; ++y)
                for (unsigned x = 0; x < TW; ++x) {
                    const double gx = x / 32.0, gy = y / 32.0;
                    const unsigned ix = unsigned(gx), iy = unsigned(gy);
                    const double fx = gx - ix, fy = gy - iy;
                    auto at = [&](unsigned a, unsigned b) { return g[std::min(b, 12u) * 17 + std::min(a, 16u)]; };
                    tex[y * TW + x] = std::uint8_t(std::lround(
                        (1 - fy) * ((1 - fx) * at(ix, iy) + fx * at(ix + 1, iy)) +
                        fy * ((1 - fx) * at(ix, iy + 1) + fx * at(ix + 1, iy + 1))));
                }
            textures.push_back(std::move(tex));
        }
    }
    std::vector<std::uint8_t> picture(long c, int noise_seed) const {
        const long k = c + 1000; // (non-negative)
        const auto& tex = textures[std::size_t(k / 40) % textures.size()];
        long x = 0, y = 0;
        for (long i = 0; i < k % 40; ++i) { // speed changes every 9 frames
            const long phase = (k / 40 * 7 + i / 9) % 5;
            x += 3 + phase * 2;
            y += phase % 3;
        }
        std::vector<std::uint8_t> p(W * H);
        std::mt19937 rng(unsigned(noise_seed * 7919 + k));
        std::uniform_int_distribution<int> n(-3, 3);
        for (unsigned r = 0; r < H; ++r)
            for (unsigned q = 0; q < W; ++q) {
                int v = tex[std::size_t((r + y) % TH) * TW + std::size_t(q + x) % TW];
                if (noise_seed) v = std::clamp(v + n(rng), 0, 255);
                p[r * W + q] = std::uint8_t(v);
            }
        return p;
    }
};

VmafCudaSignature signature_of(VmafCudaSession* s, const std::vector<std::uint8_t>& p, unsigned w) {
    VmafCudaPicture pic{};
    pic.luma = p.data();
    pic.pitch = std::ptrdiff_t(w);
    pic.memory = VMAF_CUDA_MEMORY_HOST;
    VmafCudaSignature sig;
    REQUIRE(vmaf_cuda_picture_signature(s, &pic, &sig) == VMAF_CUDA_OK);
    return sig;
}

/// A search over main frames showing content(pts - shift) (+ noise) and reference frames
/// showing content(pts), `n` frames each at one tick a frame.
VmafCudaAlignResult search(const Scene& sc, VmafCudaSession* s, long shift, long n, long window,
                           long first_content = 0) {
    VmafCudaAlign* a = nullptr;
    VmafCudaAlignSettings as{window, 1, 24, ""};
    REQUIRE(vmaf_cuda_align_open(&a, &as) == VMAF_CUDA_OK);
    VmafCudaAlignResult r{};
    int decided = 0;
    for (long t = 0; t < n && !decided; ++t) {
        REQUIRE(vmaf_cuda_align_wants(a) == 1);
        const VmafCudaSignature m = signature_of(s, sc.picture(first_content + t - shift, 1), Scene::W);
        const VmafCudaSignature ref = signature_of(s, sc.picture(first_content + t, 0), Scene::W);
        REQUIRE(vmaf_cuda_align_add(a, 0, t, &m) == VMAF_CUDA_OK);
        REQUIRE(vmaf_cuda_align_add(a, 1, t, &ref) == VMAF_CUDA_OK);
        decided = vmaf_cuda_align_poll(a, 0, &r);
        REQUIRE(decided >= 0);
    }
    if (!decided) {
        REQUIRE(vmaf_cuda_align_input_ended(a, 0) == VMAF_CUDA_OK);
        REQUIRE(vmaf_cuda_align_input_ended(a, 1) == VMAF_CUDA_OK);
        REQUIRE(vmaf_cuda_align_poll(a, 0, &r) == 1);
    }
    CHECK(vmaf_cuda_align_wants(a) == 0);
    CHECK(vmaf_cuda_align_offset(a) == r.offset);
    vmaf_cuda_align_close(a);
    return r;
}

} // namespace

TEST_CASE("signature: cell means of the luma samples >> shift, as a fraction of the top value",
          "[align][unit]") {
    const unsigned seed = 20261207;
    INFO("seed " << seed);
    std::mt19937 rng(seed);
    for (const auto [w, h, bpc, shift] :
         {std::tuple{37u, 29u, 8u, 0u}, std::tuple{64u, 48u, 10u, 6u}, std::tuple{48u, 34u, 12u, 0u},
          std::tuple{33u, 32u, 16u, 0u}}) {
        Session s(w, h, bpc);
        const std::size_t bps = bpc > 8 ? 2 : 1, pitch = w * bps + 12;
        std::vector<std::uint8_t> plane(pitch * h);
        std::uniform_int_distribution<unsigned> v(0, (1u << bpc) - 1);
        for (unsigned y = 0; y < h; ++y)
            for (unsigned x = 0; x < w; ++x) {
                const unsigned sample = v(rng) << shift;
                if (bps == 2) reinterpret_cast<std::uint16_t*>(&plane[y * pitch])[x] = std::uint16_t(sample);
                else plane[y * pitch + x] = std::uint8_t(sample);
            }
        VmafCudaPicture pic{};
        pic.luma = plane.data();
        pic.pitch = std::ptrdiff_t(pitch);
        pic.shift = shift;
        pic.memory = VMAF_CUDA_MEMORY_HOST;
        VmafCudaSignature sig;
        REQUIRE(vmaf_cuda_picture_signature(s.s, &pic, &sig) == VMAF_CUDA_OK);
        for (unsigned c = 0; c < VMAF_CUDA_SIGNATURE_CELLS; ++c) {
            const unsigned cx = c % 16, cy = c / 16;
            double sum = 0;
            unsigned n = 0;
            for (unsigned y = cy * h / 16; y < (cy + 1) * h / 16; ++y)
                for (unsigned x = cx * w / 16; x < (cx + 1) * w / 16; ++x, ++n)
                    sum += bps == 2 ? reinterpret_cast<const std::uint16_t*>(&plane[y * pitch])[x] >> shift
                                    : plane[y * pitch + x];
            INFO(w << "x" << h << " " << bpc << "-bit, cell " << c);
            REQUIRE(n > 0);
            CHECK(sig.cell[c] == sum / n / double((1u << bpc) - 1));
        }
    }
    Session s(64, 48, 8);
    VmafCudaPicture pic{};
    VmafCudaSignature sig;
    CHECK(vmaf_cuda_picture_signature(s.s, &pic, &sig) == VMAF_CUDA_EINVAL); // no luma
    std::vector<std::uint8_t> p(64 * 48);
    pic.luma = p.data();
    pic.pitch = 64;
    pic.memory = VMAF_CUDA_MEMORY_DEVICE;
    CHECK(vmaf_cuda_picture_signature(s.s, &pic, &sig) == VMAF_CUDA_EINVAL); // CPU backend
    CHECK(std::string(vmaf_cuda_error_message(s.s)).find("device memory") != std::string::npos);
    CHECK(vmaf_cuda_picture_signature(nullptr, &pic, &sig) == VMAF_CUDA_EINVAL);
}

TEST_CASE("align: start offsets of a frame to seconds, both directions; 0 when aligned",
          "[align][unit]") {
    const Scene sc(7);
    Session s(Scene::W, Scene::H, 8);
    for (const long shift : {0L, 1L, -1L, 2L, -3L, 13L, -24L, 48L, -70L}) {
        // a window of 3 s (72 frames), frames for 2 windows and some
        const VmafCudaAlignResult r = search(sc, s.s, shift, 200, 72, 5);
        INFO("shift " << shift << ": " << r.message << " cost " << r.cost << " runner-up " << r.runner_up);
        CHECK(r.found == 1);
        CHECK(r.offset == shift);
        CHECK(r.seconds == Approx(shift / 24.0));
        CHECK(r.recheck == 0);
        CHECK(r.matched >= 72);
        if (shift == 0) CHECK(std::string(r.message) == "sync: the inputs are aligned (offset +0.000 s; 144 frames compared)");
        if (shift == 48) CHECK(std::string(r.message) == "sync: the main is behind the reference by 2.000 s (offset +2.000 s; 96 frames compared): pairing with it");
        if (shift == -70) CHECK(std::string(r.message).find("ahead of the reference by 2.917 s") != std::string::npos);
    }
    // just outside the window: the best match at its edge is not taken for the offset
    for (const long shift : {80L, -76L}) {
        const VmafCudaAlignResult far = search(sc, s.s, shift, 260, 72, 5);
        INFO("shift " << shift << ": " << far.message);
        CHECK(far.found == 0);
        CHECK(far.offset == 0);
        CHECK(std::string(far.message).find("give a larger sync_window") != std::string::npos);
    }
}

TEST_CASE("align: a reference with timestamps rounded to milliseconds (MKV) against exact ones",
          "[align][unit]") {
    // ticks of 1/24000 s: the main's frames at 1000 ticks each, the reference's at whole
    // milliseconds (24 ticks) as a Matroska file has them
    const Scene sc(9);
    Session s(Scene::W, Scene::H, 8);
    auto ref_pts = [](long c) { return std::lround(c * 1000.0 / 24.0) * 24; };
    for (const long shift : {3L, -3L, 17L}) {
        VmafCudaAlign* a = nullptr;
        VmafCudaAlignSettings as{48000, 1, 24000, ""}; // 2 s
        REQUIRE(vmaf_cuda_align_open(&a, &as) == VMAF_CUDA_OK);
        VmafCudaAlignResult r{};
        int got = 0;
        for (long t = 0; t < 200 && !got; ++t) {
            const VmafCudaSignature m = signature_of(s.s, sc.picture(t - shift, 1), Scene::W);
            const VmafCudaSignature f = signature_of(s.s, sc.picture(t, 0), Scene::W);
            REQUIRE(vmaf_cuda_align_add(a, 0, t * 1000, &m) == VMAF_CUDA_OK);
            REQUIRE(vmaf_cuda_align_add(a, 1, ref_pts(t), &f) == VMAF_CUDA_OK);
            got = vmaf_cuda_align_poll(a, 0, &r);
        }
        vmaf_cuda_align_close(a);
        INFO("shift " << shift << ": " << r.message << ", offset " << r.offset);
        REQUIRE(got == 1);
        CHECK(r.found == 1);
        // framesync's pairing with it: each main frame's reference frame (the last at or
        // before its time once shifted) is the one of the same picture
        for (long t = std::max(0L, shift) + 1; t < 150; ++t) {
            const long c = t - shift;
            CHECK(ref_pts(c) + r.offset <= t * 1000);
            CHECK(ref_pts(c + 1) + r.offset > t * 1000);
        }
    }
}

TEST_CASE("align: still or repeating pictures give no offset, and say why", "[align][unit]") {
    Session s(Scene::W, Scene::H, 8);
    const Scene sc(11);
    VmafCudaAlign* a = nullptr;
    VmafCudaAlignSettings as{48, 1, 24, "[x] "};
    REQUIRE(vmaf_cuda_align_open(&a, &as) == VMAF_CUDA_OK);
    const VmafCudaSignature still = signature_of(s.s, sc.picture(3, 0), Scene::W);
    VmafCudaAlignResult r{};
    int got = 0;
    for (long t = 0; t < 200 && !got; ++t) {
        REQUIRE(vmaf_cuda_align_add(a, 0, t, &still) == VMAF_CUDA_OK);
        REQUIRE(vmaf_cuda_align_add(a, 1, t, &still) == VMAF_CUDA_OK);
        got = vmaf_cuda_align_poll(a, 0, &r);
    }
    REQUIRE(got == 1);
    INFO(r.message);
    CHECK(r.found == 0);
    CHECK(r.offset == 0);
    CHECK(std::string(r.message).rfind("[x] sync: no offset within -2.000 s .. +2.000 s matches clearly better", 0) == 0);
    CHECK(std::string(r.message).find("the pictures are too still or repeat") != std::string::npos);
    CHECK(std::string(r.message).find("pairing by the timestamps as they are") != std::string::npos);
    vmaf_cuda_align_close(a);

    // content repeating every 10 frames, shifted by 3: 3, 13, 23, ... all match
    REQUIRE(vmaf_cuda_align_open(&a, &as) == VMAF_CUDA_OK);
    got = 0;
    for (long t = 0; t < 200 && !got; ++t) {
        const VmafCudaSignature m = signature_of(s.s, sc.picture((t + 7) % 10, 0), Scene::W);
        const VmafCudaSignature f = signature_of(s.s, sc.picture(t % 10, 0), Scene::W);
        REQUIRE(vmaf_cuda_align_add(a, 0, t, &m) == VMAF_CUDA_OK);
        REQUIRE(vmaf_cuda_align_add(a, 1, t, &f) == VMAF_CUDA_OK);
        got = vmaf_cuda_align_poll(a, 0, &r);
    }
    REQUIRE(got == 1);
    INFO(r.message);
    CHECK(r.found == 0);
    vmaf_cuda_align_close(a);

    // too few frames: an input that ended at once
    REQUIRE(vmaf_cuda_align_open(&a, &as) == VMAF_CUDA_OK);
    REQUIRE(vmaf_cuda_align_add(a, 1, 0, &still) == VMAF_CUDA_OK);
    REQUIRE(vmaf_cuda_align_input_ended(a, 0) == VMAF_CUDA_OK);
    CHECK(vmaf_cuda_align_poll(a, 0, &r) == 0); // the reference goes on
    REQUIRE(vmaf_cuda_align_poll(a, 1, &r) == 1);
    CHECK(r.found == 0);
    CHECK(std::string(r.message) == "[x] sync: too few frames to compare (main 0, reference 1); pairing by the timestamps as they are");
    vmaf_cuda_align_close(a);

    CHECK(vmaf_cuda_align_open(&a, nullptr) == VMAF_CUDA_EINVAL);
    VmafCudaAlignSettings bad{0, 1, 24, nullptr};
    CHECK(vmaf_cuda_align_open(&a, &bad) == VMAF_CUDA_EINVAL);
    CHECK(a == nullptr);
}

TEST_CASE("align: a collapse of the scores re-checks the offset and finds a lost frame",
          "[align][unit]") {
    const Scene sc(5);
    Session s(Scene::W, Scene::H, 8);
    VmafCudaAlign* a = nullptr;
    VmafCudaAlignSettings as{48, 1, 24, ""}; // 2 s
    REQUIRE(vmaf_cuda_align_open(&a, &as) == VMAF_CUDA_OK);
    VmafCudaAlignResult r{};
    long t = 0;
    // aligned at first; the reference loses a frame at 300: from there it shows c + 1
    auto ref_content = [](long pts) { return pts < 300 ? pts : pts + 1; };
    auto feed = [&](long pts) {
        const VmafCudaSignature m = signature_of(s.s, sc.picture(pts, 1), Scene::W);
        const VmafCudaSignature f = signature_of(s.s, sc.picture(ref_content(pts), 0), Scene::W);
        REQUIRE(vmaf_cuda_align_add(a, 0, pts, &m) == VMAF_CUDA_OK);
        REQUIRE(vmaf_cuda_align_add(a, 1, pts, &f) == VMAF_CUDA_OK);
    };
    for (; vmaf_cuda_align_wants(a); ++t) {
        feed(t);
        if (vmaf_cuda_align_poll(a, 0, &r) == 1) break;
    }
    REQUIRE(r.found == 1);
    REQUIRE(r.offset == 0);
    // scores of 90 until the loss, then 35: no collapse before it
    int collapsed = 0;
    long at = -1;
    for (++t; t < 400 && !collapsed; ++t) {
        collapsed = vmaf_cuda_align_score(a, t, t < 300 ? 90.0 + (t % 3) : 35.0, &r);
        REQUIRE(collapsed >= 0);
        if (collapsed) at = t;
    }
    REQUIRE(collapsed == 1);
    INFO(r.message);
    CHECK(at > 300);
    CHECK(at < 300 + 12);
    CHECK(r.recheck == 1);
    CHECK(std::string(r.message).find("sync: the scores collapsed (mean ") == 0);
    CHECK(std::string(r.message).find(" over the last 0.5 s after 91.00) at ") != std::string::npos);
    // it waits for where to start: frames given before are not compared
    CHECK(vmaf_cuda_align_wants(a) == 0);
    CHECK(vmaf_cuda_align_ref_limit(a) == INT64_MAX);
    feed(t++);
    CHECK(vmaf_cuda_align_poll(a, 1, &r) == 0);
    REQUIRE(vmaf_cuda_align_recheck_from(a, t + 4) == VMAF_CUDA_OK);
    CHECK(vmaf_cuda_align_wants(a) == 1);
    // one second each way: the reference's frames from t + 4 + 2 s get what it finds
    CHECK(vmaf_cuda_align_ref_limit(a) == t + 4 + 48);
    const long limit = t + 4 + 48;
    // the re-check collects from there on and finds offset +1 (the main lags by a frame)
    int done = 0;
    for (; !done && t < 800; ++t) {
        feed(t);
        done = vmaf_cuda_align_poll(a, 0, &r);
    }
    CHECK(r.ref_limit == limit);
    CHECK(t == limit + 1); // (decided when both reached it)
    REQUIRE(done == 1);
    INFO(r.message);
    CHECK(r.recheck == 1);
    CHECK(r.found == 1);
    CHECK(r.changed == 1);
    CHECK(r.previous == 0);
    CHECK(r.offset == 1);
    CHECK(std::string(r.message).find("sync: re-checked: the offset is now +0.042 s (was +0.000 s;") == 0);
    CHECK(vmaf_cuda_align_offset(a) == 1);
    // no second re-check within 4 windows of the first
    for (long k = 0; k < 60; ++k) CHECK(vmaf_cuda_align_score(a, t + k, k < 30 ? 90.0 : 10.0, &r) == 0);
    vmaf_cuda_align_close(a);
}

TEST_CASE("align: the JSON log says the offset paired with and where a re-check changed it",
          "[align][unit]") {
    Session s(64, 48, 8);
    std::vector<std::uint8_t> y(64 * 48, 100), c(32 * 24, 128);
    VmafCudaPicture p{};
    p.luma = y.data();
    p.pitch = 64;
    p.memory = VMAF_CUDA_MEMORY_HOST;
    p.chroma[0] = p.chroma[1] = c.data();
    p.chroma_pitch = 32;
    for (int i = 0; i < 4; ++i) REQUIRE(vmaf_cuda_send(s.s, &p, &p) == VMAF_CUDA_OK);
    REQUIRE(vmaf_cuda_set_sync_offset(s.s, 0, 0.5) == VMAF_CUDA_OK);
    REQUIRE(vmaf_cuda_set_sync_offset(s.s, 3, -1.0 / 24) == VMAF_CUDA_OK);
    CHECK(vmaf_cuda_set_sync_offset(s.s, 3, INFINITY) == VMAF_CUDA_EINVAL);
    REQUIRE(vmaf_cuda_flush(s.s) == VMAF_CUDA_OK);
    VmafCudaFrameScores fs;
    while (vmaf_cuda_receive(s.s, &fs) == VMAF_CUDA_OK) {
    }
    const auto path = std::filesystem::temp_directory_path() /
                      ("vmaf_cuda_align_test_" + std::to_string(getpid()) + ".json");
    REQUIRE(vmaf_cuda_write_log(s.s, path.c_str(), VMAF_CUDA_LOG_JSON, 6, 0) == VMAF_CUDA_OK);
    std::ifstream in(path);
    const nlohmann::json j = nlohmann::json::parse(in);
    std::filesystem::remove(path);
    CHECK(j.at("sync_offset").get<double>() == 0.5);
    REQUIRE(j.at("sync_changes").size() == 1);
    CHECK(j["sync_changes"][0]["frame"] == 3);
    CHECK(j["sync_changes"][0]["offset"].get<double>() == -0.041667);
    CHECK(j.at("frames").size() == 4);
}

TEST_CASE("align: a re-check an input's end leaves without frames decides, and ends collapse watching",
          "[align][unit]") {
    const Scene sc(3);
    Session s(Scene::W, Scene::H, 8);
    VmafCudaAlign* a = nullptr;
    VmafCudaAlignSettings as{24, 1, 24, ""};
    REQUIRE(vmaf_cuda_align_open(&a, &as) == VMAF_CUDA_OK);
    VmafCudaAlignResult r{};
    long t = 0;
    for (; t < 100; ++t) {
        const VmafCudaSignature m = signature_of(s.s, sc.picture(t, 1), Scene::W);
        const VmafCudaSignature f = signature_of(s.s, sc.picture(t, 0), Scene::W);
        vmaf_cuda_align_add(a, 0, t, &m);
        vmaf_cuda_align_add(a, 1, t, &f);
        if (vmaf_cuda_align_poll(a, 0, &r) == 1) break;
    }
    REQUIRE(r.found == 1);
    int collapsed = 0;
    for (++t; t < 400 && !collapsed; ++t) collapsed = vmaf_cuda_align_score(a, t, t < 200 ? 90.0 : 20.0, &r);
    REQUIRE(collapsed == 1);
    CHECK(vmaf_cuda_align_poll(a, 0, &r) == 0); // (waiting for its start)
    REQUIRE(vmaf_cuda_align_input_ended(a, 1) == VMAF_CUDA_OK);
    REQUIRE(vmaf_cuda_align_poll(a, 0, &r) == 1);
    INFO(r.message);
    CHECK(r.recheck == 1);
    CHECK(r.found == 0);
    CHECK(r.changed == 0);
    CHECK(std::string(r.message) == "sync: too few frames to compare (main 0, reference 0); keeping the offset +0.000 s");
    // after the end, low scores are the repeated frame's: no more re-checks
    for (long k = 0; k < 200; ++k) CHECK(vmaf_cuda_align_score(a, t + 100 + k, k < 120 ? 90.0 : 5.0, &r) == 0);
    vmaf_cuda_align_close(a);
}

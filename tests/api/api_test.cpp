// SPDX-License-Identifier: BSD-2-Clause-Patent
// Suite `api`: the C API's contract (lookahead, EAGAIN/EOF, errors with messages,
// pitch and high-bit layouts) on the CPU backend.

#include "vmaf_cuda.h"

#include "catch.hpp"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

struct Frames {
    unsigned w, h, bpc;
    std::vector<std::vector<std::uint16_t>> ref, dist; // values in low bits
};

Frames make_frames(unsigned w, unsigned h, unsigned bpc, unsigned n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    Frames f{w, h, bpc, {}, {}};
    const unsigned maxv = (1u << bpc) - 1;
    std::normal_distribution<double> noise(0, maxv / 30.0);
    for (unsigned k = 0; k < n; ++k) {
        std::vector<std::uint16_t> r(w * h), d(w * h);
        for (unsigned y = 0; y < h; ++y)
            for (unsigned x = 0; x < w; ++x) {
                const double base = maxv * (0.5 + 0.4 * std::sin(0.1 * (x + 3 * k)) * std::cos(0.08 * y));
                const double dv = std::clamp(base + noise(rng), 0.0, double(maxv));
                r[y * w + x] = std::uint16_t(base);
                d[y * w + x] = std::uint16_t(dv);
            }
        f.ref.push_back(r);
        f.dist.push_back(d);
    }
    return f;
}

/// Packs values into a plane with `pitch` bytes per row, samples stored << shift.
std::vector<std::uint8_t> pack(const std::vector<std::uint16_t>& v, unsigned w, unsigned h,
                               unsigned bpc, std::size_t pitch, unsigned shift) {
    std::vector<std::uint8_t> out(pitch * h, 0xEE);
    for (unsigned y = 0; y < h; ++y)
        for (unsigned x = 0; x < w; ++x) {
            if (bpc == 8) out[y * pitch + x] = std::uint8_t(v[y * w + x] << shift);
            else {
                const std::uint16_t s = std::uint16_t(v[y * w + x] << shift);
                std::memcpy(&out[y * pitch + 2 * x], &s, 2);
            }
        }
    return out;
}

VmafCudaSession* open_cpu(unsigned w, unsigned h, unsigned bpc, const char* models = nullptr) {
    VmafCudaSettings s;
    vmaf_cuda_default_settings(&s);
    s.width = w;
    s.height = h;
    s.bpc = bpc;
    s.backend = VMAF_CUDA_BACKEND_CPU;
    s.models = models;
    VmafCudaSession* vs = nullptr;
    char err[256];
    const int rc = vmaf_cuda_open(&vs, &s, err, sizeof err);
    INFO(err);
    REQUIRE(rc == VMAF_CUDA_OK);
    return vs;
}

/// All "vmaf" scores of a run with the given pitch padding and sample shift.
std::vector<double> scores(const Frames& f, std::size_t pad, unsigned shift, unsigned bpc_decl) {
    VmafCudaSession* vs = open_cpu(f.w, f.h, bpc_decl);
    const unsigned bps = bpc_decl > 8 ? 2 : 1;
    const std::size_t pitch = f.w * bps + pad * bps;
    std::vector<double> out;
    VmafCudaFrameScores fs;
    for (std::size_t k = 0; k < f.ref.size(); ++k) {
        const auto r = pack(f.ref[k], f.w, f.h, bpc_decl, pitch, shift);
        const auto d = pack(f.dist[k], f.w, f.h, bpc_decl, pitch, shift);
        VmafCudaPicture rp{r.data(), ptrdiff_t(pitch), shift, VMAF_CUDA_MEMORY_HOST};
        VmafCudaPicture dp{d.data(), ptrdiff_t(pitch), shift, VMAF_CUDA_MEMORY_HOST};
        REQUIRE(vmaf_cuda_send(vs, &rp, &dp) == VMAF_CUDA_OK);
        while (vmaf_cuda_receive(vs, &fs) == VMAF_CUDA_OK) out.push_back(fs.values[fs.count - 1]);
    }
    REQUIRE(vmaf_cuda_flush(vs) == VMAF_CUDA_OK);
    while (vmaf_cuda_receive(vs, &fs) == VMAF_CUDA_OK) out.push_back(fs.values[fs.count - 1]);
    vmaf_cuda_close(vs);
    return out;
}

} // namespace

TEST_CASE("frame N is returned once frame N+1 was sent; EOF after flush", "[api]") {
    const Frames f = make_frames(64, 48, 8, 3, 1);
    VmafCudaSession* vs = open_cpu(64, 48, 8);
    CHECK(std::string(vmaf_cuda_backend_name(vs)) == "cpu");
    CHECK(vmaf_cuda_model_count(vs) == 1);
    CHECK(std::string(vmaf_cuda_model_name(vs, 0)) == "vmaf");
    CHECK(vmaf_cuda_model_name(vs, 1) == nullptr);
    VmafCudaFrameScores fs;
    CHECK(vmaf_cuda_receive(vs, &fs) == VMAF_CUDA_EAGAIN);
    std::vector<std::vector<std::uint8_t>> keep;
    auto send = [&](unsigned k) {
        keep.push_back(pack(f.ref[k], 64, 48, 8, 64, 0));
        keep.push_back(pack(f.dist[k], 64, 48, 8, 64, 0));
        VmafCudaPicture rp{keep[keep.size() - 2].data(), 64, 0, VMAF_CUDA_MEMORY_HOST};
        VmafCudaPicture dp{keep.back().data(), 64, 0, VMAF_CUDA_MEMORY_HOST};
        REQUIRE(vmaf_cuda_send(vs, &rp, &dp) == VMAF_CUDA_OK);
    };
    send(0);
    CHECK(vmaf_cuda_receive(vs, &fs) == VMAF_CUDA_EAGAIN);
    send(1);
    REQUIRE(vmaf_cuda_receive(vs, &fs) == VMAF_CUDA_OK);
    CHECK(fs.index == 0);
    CHECK(fs.count >= 15);
    CHECK(std::string(fs.names[fs.count - 1]) == "vmaf");
    CHECK(vmaf_cuda_receive(vs, &fs) == VMAF_CUDA_EAGAIN);
    send(2);
    REQUIRE(vmaf_cuda_receive(vs, &fs) == VMAF_CUDA_OK);
    CHECK(fs.index == 1);
    REQUIRE(vmaf_cuda_flush(vs) == VMAF_CUDA_OK);
    REQUIRE(vmaf_cuda_receive(vs, &fs) == VMAF_CUDA_OK);
    CHECK(fs.index == 2);
    CHECK(vmaf_cuda_receive(vs, &fs) == VMAF_CUDA_EOF);
    VmafCudaPicture rp{keep[0].data(), 64, 0, VMAF_CUDA_MEMORY_HOST};
    CHECK(vmaf_cuda_send(vs, &rp, &rp) == VMAF_CUDA_ESTATE);
    CHECK(std::string(vmaf_cuda_error_message(vs)).find("flush") != std::string::npos);
    double mean = 0;
    CHECK(vmaf_cuda_pooled(vs, "vmaf", VMAF_CUDA_POOL_MEAN, &mean) == VMAF_CUDA_OK);
    CHECK(vmaf_cuda_pooled(vs, "nope", VMAF_CUDA_POOL_MEAN, &mean) == VMAF_CUDA_EINVAL);
    CHECK(std::string(vmaf_cuda_error_message(vs)).find("nope") != std::string::npos);
    vmaf_cuda_close(vs);
}

TEST_CASE("padded pitch and high-bit (P010-style) samples give the same scores", "[api]") {
    const std::uint64_t seed = 20261129;
    INFO("seed " << seed);
    const Frames f10 = make_frames(70, 41, 10, 3, seed);
    const auto packed = scores(f10, 0, 0, 10);
    REQUIRE(packed.size() == 3);
    CHECK(scores(f10, 37, 0, 10) == packed);  // pitch > width
    CHECK(scores(f10, 5, 6, 10) == packed);   // P010: 10 bits in the high bits of 16
    const Frames f8 = make_frames(70, 41, 8, 2, seed + 1);
    CHECK(scores(f8, 13, 0, 8) == scores(f8, 0, 0, 8));
}

TEST_CASE("open errors name the problem", "[api]") {
    VmafCudaSettings s;
    vmaf_cuda_default_settings(&s);
    s.width = 64;
    s.height = 48;
    s.backend = VMAF_CUDA_BACKEND_CPU;
    VmafCudaSession* vs = reinterpret_cast<VmafCudaSession*>(0x1);
    char err[256];
    auto open_err = [&](int expect) {
        const int rc = vmaf_cuda_open(&vs, &s, err, sizeof err);
        CHECK(vs == nullptr);
        CHECK(rc == expect);
        return std::string(err);
    };
    SECTION("zero size") { s.width = 0; CHECK(open_err(VMAF_CUDA_EINVAL).find("size") != std::string::npos); }
    SECTION("tiny size") { s.height = 4; CHECK(open_err(VMAF_CUDA_EINVAL).find("too small") != std::string::npos); }
    SECTION("16x16, below ADM's 17") {
        s.width = s.height = 16;
        s.n_threads = 2;
        CHECK(open_err(VMAF_CUDA_EINVAL).find("at least 17x17") != std::string::npos);
    }
    SECTION("huge size") { s.width = 40000; CHECK(open_err(VMAF_CUDA_EINVAL).find("too large") != std::string::npos); }
    SECTION("bit depth") { s.bpc = 7; CHECK(open_err(VMAF_CUDA_EINVAL).find("bit depth") != std::string::npos); }
    SECTION("unknown model version") {
        s.models = "version=vmaf_v7";
        const std::string e = open_err(VMAF_CUDA_EMODEL);
        CHECK(e.find("vmaf_v7") != std::string::npos);
        // the message lists the built-in models
        CHECK(e.find("built-in: vmaf_4k_v0.6.1, vmaf_4k_v0.6.1neg, vmaf_b_v0.6.3, "
                     "vmaf_float_4k_v0.6.1, vmaf_float_b_v0.6.3, vmaf_float_v0.6.1, "
                     "vmaf_float_v0.6.1neg, vmaf_v0.6.1, vmaf_v0.6.1neg") !=
              std::string::npos);
    }
    SECTION("unreadable model file") {
        s.models = "path=/nonexistent/model.json";
        CHECK(open_err(VMAF_CUDA_EMODEL).find("/nonexistent/model.json") != std::string::npos);
    }
    SECTION("model file whose values make scores meaningless") {
        // libvmaf v3.2.0 opens these and scores NaN or every frame at one value.
        std::ifstream in(std::string(VMAF_CUDA_MODEL_DIR) + "/vmaf_v0.6.1.json", std::ios::binary);
        std::ostringstream ss;
        ss << in.rdbuf();
        const std::string good = ss.str();
        const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                          ("vmaf_cuda_api_test_" + std::to_string(::getpid()));
        std::filesystem::create_directories(dir);
        const std::pair<const char*, const char*> edits[] = {
            {"gamma 0.04", "gamma nan"},
            {"gamma 0.04", "gamma -0.04"},
            {"\"score_clip\": [\n            0.0,\n            100.0\n        ]",
             "\"score_clip\": [100.0, 0.0]"},
        };
        for (const auto& [from, to] : edits) {
            std::string text = good;
            const std::size_t at = text.find(from, text.find("\"model_dict\""));
            REQUIRE(at != std::string::npos);
            text.replace(at, std::strlen(from), to);
            const std::string path = (dir / "bad.json").string();
            std::ofstream(path, std::ios::binary) << text;
            const std::string models = "path=" + path;
            s.models = models.c_str();
            const std::string e = open_err(VMAF_CUDA_EMODEL);
            INFO(e);
            CHECK(e.find(path) != std::string::npos);
            CHECK(e.find(std::string(to).find("score_clip") != std::string::npos ? "score_clip" : "gamma") !=
                  std::string::npos);
        }
        std::filesystem::remove_all(dir);
    }
    SECTION("bad model key") {
        s.models = "version=vmaf_v0.6.1:colour=blue";
        CHECK(open_err(VMAF_CUDA_EINVAL).find("colour") != std::string::npos);
    }
    SECTION("unknown feature") {
        s.features = "name=no_such_feature";
        CHECK(open_err(VMAF_CUDA_EINVAL).find("no_such_feature") != std::string::npos);
    }
    SECTION("feature below its smallest size") {
        s.features = "name=cambi"; // 64x48: width or height must be at least 216
        const std::string e = open_err(VMAF_CUDA_EINVAL);
        CHECK(e.find("cambi") != std::string::npos);
        CHECK(e.find("216") != std::string::npos);
    }
    SECTION("NULL arguments") {
        CHECK(vmaf_cuda_open(nullptr, &s, err, sizeof err) == VMAF_CUDA_EINVAL);
        CHECK(vmaf_cuda_open(&vs, nullptr, err, sizeof err) == VMAF_CUDA_EINVAL);
    }
}

TEST_CASE("send errors: bad pitch, bad shift, device picture on the CPU backend", "[api]") {
    VmafCudaSession* vs = open_cpu(64, 48, 10);
    std::vector<std::uint8_t> buf(128 * 48);
    VmafCudaPicture ok{buf.data(), 128, 0, VMAF_CUDA_MEMORY_HOST};
    VmafCudaPicture bad = ok;
    bad.pitch = 100;
    CHECK(vmaf_cuda_send(vs, &bad, &ok) == VMAF_CUDA_EINVAL);
    CHECK(std::string(vmaf_cuda_error_message(vs)).find("pitch") != std::string::npos);
    bad = ok;
    bad.shift = 7;
    CHECK(vmaf_cuda_send(vs, &ok, &bad) == VMAF_CUDA_EINVAL);
    CHECK(std::string(vmaf_cuda_error_message(vs)).find("shift") != std::string::npos);
    bad = ok;
    bad.memory = VMAF_CUDA_MEMORY_DEVICE;
    CHECK(vmaf_cuda_send(vs, &bad, &ok) == VMAF_CUDA_ENODEV);
    CHECK(vmaf_cuda_send(vs, nullptr, &ok) == VMAF_CUDA_EINVAL);
    CHECK(vmaf_cuda_send(vs, &ok, &ok) == VMAF_CUDA_OK);
    vmaf_cuda_close(vs);
    vmaf_cuda_close(nullptr);
}

TEST_CASE("the same input twice gives identical results", "[api]") {
    const Frames f = make_frames(96, 64, 8, 4, 7);
    CHECK(scores(f, 0, 0, 8) == scores(f, 0, 0, 8));
}

TEST_CASE("backend=cuda without a usable CUDA device fails with ENODEV, naming CUDA", "[api]") {
    VmafCudaSettings s;
    vmaf_cuda_default_settings(&s);
    s.width = 64;
    s.height = 48;
    s.backend = VMAF_CUDA_BACKEND_CUDA;
    VmafCudaSession* vs = nullptr;
    char err[256] = {};
    const int rc = vmaf_cuda_open(&vs, &s, err, sizeof err);
    INFO("rc " << rc << ": " << err);
    if (rc == VMAF_CUDA_OK) {
        // A device is present (the gpu suite covers this backend); the session must say so.
        CHECK(std::string(vmaf_cuda_backend_name(vs)) == "cuda");
        vmaf_cuda_close(vs);
        return;
    }
    CHECK(rc == VMAF_CUDA_ENODEV);
    CHECK(vs == nullptr);
    CHECK(std::string(err).find("CUDA") != std::string::npos);
    // auto falls back to the CPU backend instead; with no device at all that needs no
    // warning (the warning is for a device the build has no kernels for).
    s.backend = VMAF_CUDA_BACKEND_AUTO;
    REQUIRE(vmaf_cuda_open(&vs, &s, err, sizeof err) == VMAF_CUDA_OK);
    CHECK(std::string(vmaf_cuda_backend_name(vs)) == "cpu");
    CHECK(std::string(vmaf_cuda_open_warning(vs)).empty());
    vmaf_cuda_close(vs);
    // A named device changes nothing on the CPU backend.
    s.backend = VMAF_CUDA_BACKEND_CPU;
    s.cuda_device = 3;
    REQUIRE(vmaf_cuda_open(&vs, &s, err, sizeof err) == VMAF_CUDA_OK);
    CHECK(std::string(vmaf_cuda_backend_name(vs)) == "cpu");
    vmaf_cuda_close(vs);
}

TEST_CASE("defaults: cuda_device not named; archs built in are reported", "[api]") {
    VmafCudaSettings s;
    vmaf_cuda_default_settings(&s);
    CHECK(s.cuda_device == -1);
    const std::string archs = vmaf_cuda_cuda_archs();
#ifdef VMAF_CUDA_HAVE_CUDA
    INFO("archs: " << archs);
    CHECK(archs.rfind("sm_", 0) == 0);
#else
    CHECK(archs.empty());
#endif
    CHECK(std::string(vmaf_cuda_open_warning(nullptr)).empty());
}

TEST_CASE("more than 64 threads are refused at open, naming n_threads (API 5)", "[api]") {
    for (unsigned threads : {65u, 100000u}) {
        VmafCudaSettings s;
        vmaf_cuda_default_settings(&s);
        s.width = s.height = 17;
        s.backend = VMAF_CUDA_BACKEND_CPU;
        s.n_threads = threads;
        VmafCudaSession* vs = nullptr;
        char err[256];
        INFO("threads " << threads);
        CHECK(vmaf_cuda_open(&vs, &s, err, sizeof err) == VMAF_CUDA_EINVAL);
        CHECK(vs == nullptr);
        CHECK(std::string(err).find("n_threads " + std::to_string(threads)) != std::string::npos);
    }
}

TEST_CASE("smallest size with worker threads, up to the 64 a session uses, work", "[api]") {
    const Frames f = make_frames(17, 17, 8, 3, 99);
    for (unsigned threads : {0u, 2u, 64u}) {
        VmafCudaSettings s;
        vmaf_cuda_default_settings(&s);
        s.width = s.height = 17;
        s.backend = VMAF_CUDA_BACKEND_CPU;
        s.n_threads = threads;
        VmafCudaSession* vs = nullptr;
        char err[256];
        INFO("threads " << threads);
        REQUIRE(vmaf_cuda_open(&vs, &s, err, sizeof err) == VMAF_CUDA_OK);
        VmafCudaFrameScores fs;
        unsigned got = 0;
        for (unsigned k = 0; k < 3; ++k) {
            const auto r = pack(f.ref[k], 17, 17, 8, 17, 0);
            const auto d = pack(f.dist[k], 17, 17, 8, 17, 0);
            VmafCudaPicture rp{r.data(), 17, 0, VMAF_CUDA_MEMORY_HOST};
            VmafCudaPicture dp{d.data(), 17, 0, VMAF_CUDA_MEMORY_HOST};
            REQUIRE(vmaf_cuda_send(vs, &rp, &dp) == VMAF_CUDA_OK);
            while (vmaf_cuda_receive(vs, &fs) == VMAF_CUDA_OK) ++got;
        }
        REQUIRE(vmaf_cuda_flush(vs) == VMAF_CUDA_OK);
        while (vmaf_cuda_receive(vs, &fs) == VMAF_CUDA_OK) ++got;
        CHECK(got == 3);
        vmaf_cuda_close(vs);
    }
}

namespace {

/// Sends frames [0, n) of `f` to `vs`, collecting the returned scores by name.
void send_all(VmafCudaSession* vs, const Frames& f, unsigned n) {
    VmafCudaFrameScores fs;
    for (unsigned k = 0; k < n; ++k) {
        const auto r = pack(f.ref[k], f.w, f.h, 8, f.w, 0);
        const auto d = pack(f.dist[k], f.w, f.h, 8, f.w, 0);
        VmafCudaPicture rp{r.data(), ptrdiff_t(f.w), 0, VMAF_CUDA_MEMORY_HOST};
        VmafCudaPicture dp{d.data(), ptrdiff_t(f.w), 0, VMAF_CUDA_MEMORY_HOST};
        REQUIRE(vmaf_cuda_send(vs, &rp, &dp) == VMAF_CUDA_OK);
        CHECK(vmaf_cuda_pictures_released(vs) <= k + 1);
        while (vmaf_cuda_receive(vs, &fs) == VMAF_CUDA_OK) {}
    }
    REQUIRE(vmaf_cuda_flush(vs) == VMAF_CUDA_OK);
    CHECK(vmaf_cuda_pictures_released(vs) == n);
    while (vmaf_cuda_receive(vs, &fs) == VMAF_CUDA_OK) {}
}

std::string read_text(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return "";
    std::string out;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    std::fclose(f);
    return out;
}

} // namespace

TEST_CASE("scores come in libvmaf's feature collector order", "[api]") {
    // adm's seven, motion's sad, vif's four, then motion2, motion3, then the models
    VmafCudaSession* vs = open_cpu(64, 48, 8, "version=vmaf_v0.6.1|version=vmaf_v0.6.1neg");
    const Frames f = make_frames(64, 48, 8, 2, 3);
    const auto r = pack(f.ref[0], 64, 48, 8, 64, 0);
    VmafCudaPicture rp{r.data(), 64, 0, VMAF_CUDA_MEMORY_HOST};
    REQUIRE(vmaf_cuda_send(vs, &rp, &rp) == VMAF_CUDA_OK);
    REQUIRE(vmaf_cuda_flush(vs) == VMAF_CUDA_OK);
    VmafCudaFrameScores fs;
    REQUIRE(vmaf_cuda_receive(vs, &fs) == VMAF_CUDA_OK);
    const std::vector<std::string> expected = {
        "integer_adm2", "integer_aim", "integer_adm3", "integer_adm_scale0", "integer_adm_scale1",
        "integer_adm_scale2", "integer_adm_scale3", "VMAF_integer_feature_motion_sad_score",
        "integer_vif_scale0", "integer_vif_scale1", "integer_vif_scale2", "integer_vif_scale3",
        "integer_adm2_egl_1", "integer_aim_egl_1", "integer_adm3_egl_1",
        "integer_adm_scale0_egl_1", "integer_adm_scale1_egl_1", "integer_adm_scale2_egl_1",
        "integer_adm_scale3_egl_1", "integer_vif_scale0_egl_1", "integer_vif_scale1_egl_1",
        "integer_vif_scale2_egl_1", "integer_vif_scale3_egl_1", "integer_motion2",
        "integer_motion3", "vmaf", "vmaf_v0.6.1neg"};
    std::vector<std::string> got(fs.names, fs.names + fs.count);
    CHECK(got == expected);
    vmaf_cuda_close(vs);
}

TEST_CASE("truncate to N frames gives the log and pool of a stream of N frames", "[api]") {
    const Frames f = make_frames(64, 48, 8, 6, 11);
    const std::string dir = std::string(VMAF_CUDA_DECODED_DIR);
    const std::string a = dir + "/api_truncate_a.json", b = dir + "/api_truncate_b.json";
    for (unsigned subsample : {1u, 2u}) {
        INFO("n_subsample " << subsample);
        VmafCudaSettings s;
        vmaf_cuda_default_settings(&s);
        s.width = 64;
        s.height = 48;
        s.backend = VMAF_CUDA_BACKEND_CPU;
        s.n_subsample = subsample;
        VmafCudaSession *full = nullptr, *four = nullptr;
        REQUIRE(vmaf_cuda_open(&full, &s, nullptr, 0) == VMAF_CUDA_OK);
        REQUIRE(vmaf_cuda_open(&four, &s, nullptr, 0) == VMAF_CUDA_OK);
        send_all(full, f, 6);
        send_all(four, f, 5);
        CHECK(vmaf_cuda_truncate(full, 5) == VMAF_CUDA_OK);
        CHECK(vmaf_cuda_truncate(full, 9) == VMAF_CUDA_OK); // more than sent: nothing
        double m1 = 0, m2 = 1;
        REQUIRE(vmaf_cuda_pooled(full, "vmaf", VMAF_CUDA_POOL_MEAN, &m1) == VMAF_CUDA_OK);
        REQUIRE(vmaf_cuda_pooled(four, "vmaf", VMAF_CUDA_POOL_MEAN, &m2) == VMAF_CUDA_OK);
        CHECK(m1 == m2);
        REQUIRE(vmaf_cuda_write_log(full, a.c_str(), VMAF_CUDA_LOG_JSON, -1, NAN) == VMAF_CUDA_OK);
        REQUIRE(vmaf_cuda_write_log(four, b.c_str(), VMAF_CUDA_LOG_JSON, -1, NAN) == VMAF_CUDA_OK);
        CHECK(read_text(a) == read_text(b));
        CHECK(vmaf_cuda_truncate(full, 0) == VMAF_CUDA_OK);
        CHECK(vmaf_cuda_pooled(full, "vmaf", VMAF_CUDA_POOL_MEAN, &m1) == VMAF_CUDA_EINVAL);
        vmaf_cuda_close(full);
        vmaf_cuda_close(four);
    }
    VmafCudaSession* vs = open_cpu(64, 48, 8);
    CHECK(vmaf_cuda_truncate(vs, 1) == VMAF_CUDA_ESTATE);
    vmaf_cuda_close(vs);
}

TEST_CASE("the log replaces the file whole, through a temporary name", "[api]") {
    const Frames f = make_frames(64, 48, 8, 2, 5);
    const std::string path = std::string(VMAF_CUDA_DECODED_DIR) + "/api_log_rename.xml";
    {
        std::FILE* old = std::fopen(path.c_str(), "wb");
        REQUIRE(old);
        std::fputs("old", old);
        std::fclose(old);
    }
    VmafCudaSession* vs = open_cpu(64, 48, 8);
    send_all(vs, f, 2);
    REQUIRE(vmaf_cuda_write_log(vs, path.c_str(), VMAF_CUDA_LOG_XML, 6, NAN) == VMAF_CUDA_OK);
    const std::string text = read_text(path);
    CHECK(text.rfind("<VMAF", 0) == 0);
    CHECK(text.find("</VMAF>") != std::string::npos);
    const std::string bad = std::string(VMAF_CUDA_DECODED_DIR) + "/no_such_dir/log.xml";
    CHECK(vmaf_cuda_write_log(vs, bad.c_str(), VMAF_CUDA_LOG_XML, 6, NAN) == VMAF_CUDA_EIO);
    vmaf_cuda_close(vs);
}

TEST_CASE("worker threads beyond frames_in_flight give the same scores", "[api]") {
    const Frames f = make_frames(64, 48, 8, 12, 8);
    std::vector<double> means;
    for (unsigned threads : {0u, 8u}) {
        VmafCudaSettings s;
        vmaf_cuda_default_settings(&s);
        s.width = 64;
        s.height = 48;
        s.backend = VMAF_CUDA_BACKEND_CPU;
        s.n_threads = threads;
        s.frames_in_flight = 2;
        VmafCudaSession* vs = nullptr;
        REQUIRE(vmaf_cuda_open(&vs, &s, nullptr, 0) == VMAF_CUDA_OK);
        send_all(vs, f, 12);
        double m = 0;
        REQUIRE(vmaf_cuda_pooled(vs, "vmaf", VMAF_CUDA_POOL_MEAN, &m) == VMAF_CUDA_OK);
        means.push_back(m);
        vmaf_cuda_close(vs);
    }
    CHECK(means[0] == means[1]);
}

TEST_CASE("no_prediction: features only, no model", "[api]") {
    VmafCudaSettings s;
    vmaf_cuda_default_settings(&s);
    s.width = 64;
    s.height = 48;
    s.backend = VMAF_CUDA_BACKEND_CPU;
    s.no_prediction = 1;
    VmafCudaSession* vs = nullptr;
    char err[256];
    CHECK(vmaf_cuda_open(&vs, &s, err, sizeof err) == VMAF_CUDA_EINVAL);
    CHECK(std::string(err).find("no_prediction") != std::string::npos);
    s.features = "name=vif";
    REQUIRE(vmaf_cuda_open(&vs, &s, err, sizeof err) == VMAF_CUDA_OK);
    CHECK(vmaf_cuda_model_count(vs) == 0);
    const Frames f = make_frames(64, 48, 8, 2, 4);
    send_all(vs, f, 2);
    double m = 0;
    CHECK(vmaf_cuda_pooled(vs, "integer_vif_scale0", VMAF_CUDA_POOL_MEAN, &m) == VMAF_CUDA_OK);
    CHECK(vmaf_cuda_pooled(vs, "vmaf", VMAF_CUDA_POOL_MEAN, &m) == VMAF_CUDA_EINVAL);
    vmaf_cuda_close(vs);
}

TEST_CASE("float models: backend=cuda refuses them naming feature and model; auto and cpu "
          "score them on the CPU", "[api]") {
    const Frames f = make_frames(64, 48, 8, 3, 7);
    VmafCudaSettings s;
    vmaf_cuda_default_settings(&s);
    s.width = f.w;
    s.height = f.h;
    s.models = "version=vmaf_float_v0.6.1";
    s.backend = VMAF_CUDA_BACKEND_CUDA;
    VmafCudaSession* vs = nullptr;
    char err[512] = {};
    const int rc = vmaf_cuda_open(&vs, &s, err, sizeof err);
    INFO("rc " << rc << ": " << err);
    CHECK(vs == nullptr);
#ifdef VMAF_CUDA_HAVE_CUDA
    // With or without a device: the CUDA backend has no float extractors.
    CHECK(rc == VMAF_CUDA_EINVAL);
    const std::string msg = err;
    CHECK(msg.find("float_adm") != std::string::npos);
    CHECK(msg.find("CPU backend only") != std::string::npos);
    CHECK(msg.find("vmaf_float_v0.6.1") != std::string::npos);
#else
    CHECK(rc == VMAF_CUDA_ENODEV);
#endif

    // auto: the CPU backend (a warning naming the feature where a CUDA device was usable).
    VmafCudaSettings plain = s;
    plain.models = nullptr;
    VmafCudaSession* probe = nullptr;
    const bool device = vmaf_cuda_open(&probe, &plain, err, sizeof err) == VMAF_CUDA_OK;
    if (probe) vmaf_cuda_close(probe);
    s.backend = VMAF_CUDA_BACKEND_AUTO;
    REQUIRE(vmaf_cuda_open(&vs, &s, err, sizeof err) == VMAF_CUDA_OK);
    CHECK(std::string(vmaf_cuda_backend_name(vs)) == "cpu");
    const std::string warning = vmaf_cuda_open_warning(vs);
    INFO("warning: " << warning);
    if (device) {
        CHECK(warning.find("float_adm") != std::string::npos);
        CHECK(warning.find("CPU backend") != std::string::npos);
    } else {
        // No device (no warning), or one this build has no kernels for (that warning).
        CHECK(warning.find("float_adm") == std::string::npos);
    }
    std::vector<std::vector<double>> rows[2];
    auto run = [&](VmafCudaSession* session, std::vector<std::vector<double>>& out) {
        VmafCudaFrameScores fs;
        for (std::size_t k = 0; k < f.ref.size(); ++k) {
            const auto r = pack(f.ref[k], f.w, f.h, 8, f.w, 0);
            const auto d = pack(f.dist[k], f.w, f.h, 8, f.w, 0);
            VmafCudaPicture rp{r.data(), ptrdiff_t(f.w), 0, VMAF_CUDA_MEMORY_HOST};
            VmafCudaPicture dp{d.data(), ptrdiff_t(f.w), 0, VMAF_CUDA_MEMORY_HOST};
            REQUIRE(vmaf_cuda_send(session, &rp, &dp) == VMAF_CUDA_OK);
            while (vmaf_cuda_receive(session, &fs) == VMAF_CUDA_OK)
                out.emplace_back(fs.values, fs.values + fs.count);
        }
        REQUIRE(vmaf_cuda_flush(session) == VMAF_CUDA_OK);
        while (vmaf_cuda_receive(session, &fs) == VMAF_CUDA_OK)
            out.emplace_back(fs.values, fs.values + fs.count);
        vmaf_cuda_close(session);
    };
    run(vs, rows[0]);
    run(open_cpu(f.w, f.h, 8, "version=vmaf_float_v0.6.1"), rows[1]);
    REQUIRE(rows[0].size() == 3);
    CHECK(rows[0] == rows[1]);
    CHECK(std::isfinite(rows[0][0].back()));
}

namespace {

/// Runs frames `f` with `settings` (CPU backend); returns every frame's values and the
/// session (still open, flushed) for pooling.
struct Run {
    VmafCudaSession* vs = nullptr;
    std::vector<std::vector<double>> values;
    std::vector<unsigned> index;
    std::vector<unsigned> final_after; ///< frames sent when each frame's scores came out
};

Run run_frames(const Frames& f, VmafCudaSettings s) {
    Run r;
    char err[256];
    const int rc = vmaf_cuda_open(&r.vs, &s, err, sizeof err);
    INFO(err);
    REQUIRE(rc == VMAF_CUDA_OK);
    const std::size_t pitch = f.w * (f.bpc > 8 ? 2 : 1);
    VmafCudaFrameScores fs;
    auto drain = [&](unsigned sent) {
        while (vmaf_cuda_receive(r.vs, &fs) == VMAF_CUDA_OK) {
            r.values.emplace_back(fs.values, fs.values + fs.count);
            r.index.push_back(fs.index);
            r.final_after.push_back(sent);
        }
    };
    for (std::size_t k = 0; k < f.ref.size(); ++k) {
        const auto rp = pack(f.ref[k], f.w, f.h, f.bpc, pitch, 0);
        const auto dp = pack(f.dist[k], f.w, f.h, f.bpc, pitch, 0);
        VmafCudaPicture a{}, b{};
        a.luma = rp.data();
        a.pitch = ptrdiff_t(pitch);
        b.luma = dp.data();
        b.pitch = ptrdiff_t(pitch);
        REQUIRE(vmaf_cuda_send(r.vs, &a, &b) == VMAF_CUDA_OK);
        drain(unsigned(k + 1));
    }
    REQUIRE(vmaf_cuda_flush(r.vs) == VMAF_CUDA_OK);
    drain(~0u);
    return r;
}

VmafCudaSettings cpu_settings(unsigned w, unsigned h, unsigned bpc) {
    VmafCudaSettings s;
    vmaf_cuda_default_settings(&s);
    s.width = w;
    s.height = h;
    s.bpc = bpc;
    s.backend = VMAF_CUDA_BACKEND_CPU;
    s.frames_in_flight = 1;
    return s;
}

} // namespace

TEST_CASE("keep_history=0: the same scores, pooling from running sums, no log", "[api][history]") {
    const std::uint64_t seed = 20261201;
    INFO("seed " << seed);
    const Frames f = make_frames(64, 48, 10, 9, seed);
    VmafCudaSettings s = cpu_settings(64, 48, 10);
    const Run a = run_frames(f, s);
    s.keep_history = 0;
    const Run b = run_frames(f, s);
    REQUIRE(a.values.size() == 9);
    REQUIRE(b.values == a.values);
    for (int m : {VMAF_CUDA_POOL_MEAN, VMAF_CUDA_POOL_HARMONIC_MEAN, VMAF_CUDA_POOL_MIN, VMAF_CUDA_POOL_MAX}) {
        double x = 0, y = 0;
        REQUIRE(vmaf_cuda_pooled(a.vs, "vmaf", VmafCudaPool(m), &x) == VMAF_CUDA_OK);
        REQUIRE(vmaf_cuda_pooled(b.vs, "vmaf", VmafCudaPool(m), &y) == VMAF_CUDA_OK);
        CHECK(std::memcmp(&x, &y, sizeof x) == 0);
    }
    CHECK(vmaf_cuda_write_log(b.vs, "/dev/null", VMAF_CUDA_LOG_JSON, 6, 25.0) == VMAF_CUDA_ESTATE);
    CHECK(std::string(vmaf_cuda_error_message(b.vs)).find("keep_history") != std::string::npos);
    // Truncation (ffmpeg's -frames:v) within the recent frames kept without history:
    // the same pools as with the history.
    REQUIRE(vmaf_cuda_truncate(a.vs, 5) == VMAF_CUDA_OK);
    REQUIRE(vmaf_cuda_truncate(b.vs, 5) == VMAF_CUDA_OK);
    for (int m : {VMAF_CUDA_POOL_MEAN, VMAF_CUDA_POOL_HARMONIC_MEAN, VMAF_CUDA_POOL_MIN, VMAF_CUDA_POOL_MAX}) {
        double x = 0, y = 0;
        REQUIRE(vmaf_cuda_pooled(a.vs, "vmaf", VmafCudaPool(m), &x) == VMAF_CUDA_OK);
        REQUIRE(vmaf_cuda_pooled(b.vs, "vmaf", VmafCudaPool(m), &y) == VMAF_CUDA_OK);
        INFO("pool " << m << " after truncate: " << x << " vs " << y);
        CHECK(std::memcmp(&x, &y, sizeof x) == 0);
    }
    vmaf_cuda_close(a.vs);
    vmaf_cuda_close(b.vs);
}

TEST_CASE("keep_history=0: truncation deeper than the recent frames is refused", "[api][history]") {
    const Frames f = make_frames(32, 32, 8, 80, 99);
    VmafCudaSettings s = cpu_settings(32, 32, 8);
    s.keep_history = 0;
    const Run r = run_frames(f, s);
    REQUIRE(r.values.size() == 80);
    CHECK(vmaf_cuda_truncate(r.vs, 3) == VMAF_CUDA_ESTATE);
    CHECK(std::string(vmaf_cuda_error_message(r.vs)).find("keep_history") != std::string::npos);
    CHECK(vmaf_cuda_truncate(r.vs, 60) == VMAF_CUDA_OK);
    vmaf_cuda_close(r.vs);
}

TEST_CASE("lookahead: frames needed before a frame's scores are final", "[api][lookahead]") {
    const Frames f = make_frames(64, 48, 8, 6, 7);
    struct C { const char* models; const char* features; int no_pred; unsigned lookahead; };
    const C cases[] = {
        {nullptr, nullptr, 0, 1},                                          // vmaf_v0.6.1
        {nullptr, "name=adm|name=vif", 1, 0},                              // no temporal feature
        {nullptr, "name=motion:motion_five_frame_window=true", 1, 2},      // frame 0 needs frame 2
        {"version=vmaf_float_v0.6.1", nullptr, 0, 1},                      // float motion2
        {nullptr, "float_motion:motion_force_zero=true", 1, 0},            // all 0: no lookahead
    };
    for (const C& c : cases) {
        VmafCudaSettings s = cpu_settings(64, 48, 8);
        s.models = c.models;
        s.features = c.features;
        s.no_prediction = c.no_pred;
        const Run r = run_frames(f, s);
        INFO((c.features ? c.features : "default model"));
        CHECK(vmaf_cuda_lookahead(r.vs) == c.lookahead);
        REQUIRE(r.values.size() == 6);
        // With one frame in flight, frame i comes out as soon as frame i + lookahead(i)
        // was sent (lookahead(i) = c.lookahead, except motion's five-frame window, where
        // only frame 0 needs 2), and the last ones at flush.
        for (std::size_t i = 0; i < r.index.size(); ++i) {
            const unsigned need = c.lookahead == 2 ? (i == 0 ? 2 : 1) : c.lookahead;
            const unsigned expect = i + need + 1 <= 6 ? unsigned(i + need + 1) : ~0u;
            INFO("frame " << i);
            CHECK(r.final_after[i] == expect);
        }
        vmaf_cuda_close(r.vs);
    }
}

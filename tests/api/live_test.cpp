// SPDX-License-Identifier: BSD-2-Clause-Patent
// Suite `api`: live QA in the library (vmaf_cuda_live_*(), engine/pooling.h, engine/live.h):
// exact running sums, rolling windows against brute force, option parsing, the number
// format of the NDJSON log, NDJSON lines and the SEI payload, byte for byte as the filter's
// plain-C live QA wrote them (tests/api/live_expected/), the NDJSON stream's paths, the
// end-of-stream summary; and the percentile pooling of the engine and of
// vmaf_cuda_pooled().

#include "vmaf_cuda.h"

#include "pooling.h"
#include "writers.h"

#include "catch.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef VMAF_CUDA_LIVE_EXPECTED_DIR
#define VMAF_CUDA_LIVE_EXPECTED_DIR "tests/api/live_expected"
#endif

using vmaf_cuda::engine::ExactSum;
using vmaf_cuda::engine::Window;
using vmaf_cuda::engine::WindowStats;

namespace {

/// Python's math.fsum of `v` from scratch (additions only).
double fsum(const std::vector<double>& v) {
    ExactSum s;
    for (double x : v) s.add(x);
    return s.value();
}

bool same(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

/// Brute-force window statistics, as pooling.h defines them.
WindowStats brute(const std::vector<double>& w, unsigned perc) {
    WindowStats st{};
    st.count = w.size();
    std::vector<double> inv, nums;
    for (double x : w) {
        inv.push_back(1.0 / (x + 1.0));
        if (!std::isnan(x)) nums.push_back(x);
    }
    const double nan = std::numeric_limits<double>::quiet_NaN();
    st.min = nums.empty() ? nan : *std::min_element(nums.begin(), nums.end());
    st.max = nums.empty() ? nan : *std::max_element(nums.begin(), nums.end());
    st.mean = fsum(w) / double(w.size());
    st.harmonic_mean = double(w.size()) / fsum(inv) - 1.0;
    st.perc = nan;
    if (perc) {
        std::vector<double> s = w;
        std::sort(s.begin(), s.end(), [](double a, double b) {
            return std::isnan(b) ? !std::isnan(a) : a < b;
        });
        std::size_t rank = (std::size_t(perc) * s.size() + 99) / 100;
        st.perc = s[std::max<std::size_t>(rank, 1) - 1];
    }
    return st;
}

void check_stats(const WindowStats& got, const WindowStats& want, std::size_t frame) {
    INFO("frame " << frame << " count " << want.count);
    REQUIRE(got.count == want.count);
    CHECK(same(got.min, want.min));
    CHECK(same(got.max, want.max));
    CHECK(same(got.mean, want.mean));
    CHECK(same(got.harmonic_mean, want.harmonic_mean));
    CHECK(same(got.perc, want.perc));
}

/// A number as an NDJSON line writes it.
std::string fmt(double v, int precision) {
    vmaf_cuda::engine::JsonLine j(precision);
    j.number("v", v);
    const std::string t = j.text();  // {"v":...}
    return t.substr(5, t.size() - 6);
}

std::string temp_path(const std::string& stem) {
    std::string templ = std::filesystem::temp_directory_path().string() + "/" + stem + "XXXXXX";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back(0);
    const int fd = mkstemp(buf.data());
    REQUIRE(fd >= 0);
    close(fd);
    return buf.data();
}

std::string read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

/// A CPU session of 48x40 frames with `models`, for their names (and frames when sent).
VmafCudaSession* open_session(const char* models, int keep_history = 1) {
    VmafCudaSettings s;
    vmaf_cuda_default_settings(&s);
    s.width = 48;
    s.height = 40;
    s.backend = VMAF_CUDA_BACKEND_CPU;
    s.models = models;
    s.keep_history = keep_history;
    VmafCudaSession* vs = nullptr;
    char err[256];
    INFO(err);
    REQUIRE(vmaf_cuda_open(&vs, &s, err, sizeof err) == VMAF_CUDA_OK);
    return vs;
}

/// Sends n frames of a moving pattern with noise growing frame by frame; returns the
/// frame scores received, in order.
std::vector<std::vector<double>> score_frames(VmafCudaSession* vs, unsigned n,
                                              std::vector<std::string>* names = nullptr) {
    const unsigned w = 48, h = 40;
    std::mt19937 rng(5);
    std::vector<std::vector<double>> rows;
    VmafCudaFrameScores fs;
    auto take = [&] {
        while (vmaf_cuda_receive(vs, &fs) == VMAF_CUDA_OK) {
            rows.emplace_back(fs.values, fs.values + fs.count);
            if (names && names->empty()) names->assign(fs.names, fs.names + fs.count);
        }
    };
    for (unsigned k = 0; k < n; ++k) {
        std::vector<std::uint8_t> r(w * h), d(w * h);
        for (unsigned i = 0; i < w * h; ++i) {
            r[i] = std::uint8_t((i * 7 + k * 13) % 200 + 20);
            d[i] = std::uint8_t(std::clamp(int(r[i]) + int(rng() % (2 * k + 3)) - int(k + 1), 0, 255));
        }
        VmafCudaPicture rp{r.data(), ptrdiff_t(w), 0, VMAF_CUDA_MEMORY_HOST, {}, 0, 0};
        VmafCudaPicture dp{d.data(), ptrdiff_t(w), 0, VMAF_CUDA_MEMORY_HOST, {}, 0, 0};
        REQUIRE(vmaf_cuda_send(vs, &rp, &dp) == VMAF_CUDA_OK);
        take();
    }
    REQUIRE(vmaf_cuda_flush(vs) == VMAF_CUDA_OK);
    take();
    REQUIRE(rows.size() == n);
    return rows;
}

} // namespace

TEST_CASE("exact sum: math.fsum's results, exact under removals", "[api][live]") {
    CHECK(fsum(std::vector<double>(10, 0.1)) == 1.0);          // naive: 0.9999999999999999
    CHECK(fsum({1e100, 1.0, -1e100}) == 1.0);
    CHECK(fsum({1.0, 1e-16, 1e-16}) == 1.0000000000000002);    // naive: 1.0
    CHECK(fsum({1.0, std::ldexp(1.0, -53)}) == 1.0);           // a tie: to even
    CHECK(fsum({1.0, std::ldexp(1.0, -53), std::ldexp(1.0, -105)}) == 1.0000000000000002);
    CHECK(fsum({}) == 0.0);
    CHECK(std::isnan(fsum({1.0, std::nan("")})));
    CHECK(fsum({1.0, HUGE_VAL}) == HUGE_VAL);
    CHECK(std::isnan(fsum({HUGE_VAL, -HUGE_VAL})));

    // a sliding sum equals the fsum of the window's values, frame after frame
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(0, 100);
    std::vector<double> v;
    for (int i = 0; i < 3000; ++i) v.push_back(i % 97 == 0 ? u(rng) * 1e12 : u(rng));
    ExactSum s;
    const std::size_t n = 37;
    for (std::size_t i = 0; i < v.size(); ++i) {
        s.add(v[i]);
        if (i >= n) s.remove(v[i - n]);
        const std::size_t lo = i >= n ? i - n + 1 : 0;
        const std::vector<double> w(v.begin() + std::ptrdiff_t(lo), v.begin() + std::ptrdiff_t(i + 1));
        REQUIRE(s.value() == fsum(w));
    }
    CHECK(s.partials() < 40);  // the partials stay few
}

TEST_CASE("frame windows equal brute force over the trailing values", "[api][live]") {
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> u(20, 100);
    for (const std::size_t n : {std::size_t(1), std::size_t(2), std::size_t(7), std::size_t(100)}) {
        for (const unsigned perc : {0u, 1u, 5u, 10u}) {
            Window w(n, 0, perc);
            std::vector<double> all;
            for (std::size_t i = 0; i < 600; ++i) {
                // repeated values and plateaus: ties in the deques and the treap
                const double x = i % 13 == 0 ? 50.0 : std::round(u(rng) * 4) / 4;
                all.push_back(x);
                w.push(std::int64_t(i), x);
                const std::size_t lo = all.size() > n ? all.size() - n : 0;
                check_stats(w.stats(), brute({all.begin() + std::ptrdiff_t(lo), all.end()}, perc), i);
            }
        }
    }
}

TEST_CASE("duration windows keep the values of the trailing duration", "[api][live]") {
    // 1/90000 time base, 25 fps with jitter and a gap; 2 s = 180000 ticks
    Window w(0, 180000, 5);
    std::vector<std::pair<std::int64_t, double>> all;
    std::int64_t t = 1000;
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<double> u(0, 100);
    for (int i = 0; i < 400; ++i) {
        t += i == 200 ? 500000 : 3600 + (i % 3) * 10;
        const double x = u(rng);
        all.push_back({t, x});
        w.push(t, x);
        std::vector<double> win;
        for (const auto& [ti, xi] : all)
            if (ti > t - 180000) win.push_back(xi);
        check_stats(w.stats(), brute(win, 5), std::size_t(i));
    }
}

TEST_CASE("time keys at the int64 limits: no overflow, windows still right", "[api][live]") {
    // A duration window at keys near INT64_MIN (t - duration overflowed) and far apart.
    Window w(0, 180000, 0);
    w.push(INT64_MIN, 1);
    w.push(INT64_MIN + 100, 2);
    CHECK(w.stats().count == 2);
    w.push(INT64_MIN + 180000, 3);  // the first value is 180000 ticks old: out
    CHECK(w.stats().count == 2);
    w.push(INT64_MAX, 4);           // 2^64 - 1 ticks after the first: all others out
    CHECK(w.stats().count == 1);
    CHECK(w.stats().mean == 4);

    // Through the C API: frames without pts after a pts near INT64_MAX (last + period
    // overflowed) keep the last key; a window of 1e30 s is INT64_MAX ticks.
    VmafCudaSession* vs = open_session("version=vmaf_v0.6.1");
    for (const char* window : {"2s", "1e30s"}) {
        VmafCudaLiveSettings cfg;
        vmaf_cuda_live_default_settings(&cfg);
        cfg.window = window;
        cfg.tb_num = 1;
        cfg.tb_den = 90000;
        cfg.fr_num = 25;
        cfg.fr_den = 1;
        VmafCudaLive* l = nullptr;
        char err[256] = "";
        REQUIRE(vmaf_cuda_live_open(&l, vs, &cfg, err, sizeof err) == 0);
        const char* names[] = {"vmaf"};
        const std::int64_t pts[] = {INT64_MIN, INT64_MIN + 1, INT64_MAX - 1, 0, 0};
        const int has_pts[] = {1, 1, 1, 0, 0};
        for (unsigned i = 0; i < 5; ++i) {
            double v = 10.0 * (i + 1);
            VmafCudaFrameScores fs{i, 1, names, &v};
            VmafCudaLiveFrame out;
            REQUIRE(vmaf_cuda_live_frame(l, &fs, pts[i], has_pts[i], &out) == 0);
        }
        VmafCudaWindowStats ws;
        REQUIRE(vmaf_cuda_live_window(l, 0, &ws) == 0);
        INFO("window " << window);
        // the last three (INT64_MAX - 1, then two frames held at INT64_MAX): the first two
        // lie 2^64 - 2 ticks back, beyond both windows
        CHECK(ws.frames == 3u);
        CHECK(ws.max == 50);
        vmaf_cuda_live_close(l);
    }
    vmaf_cuda_close(vs);
}

TEST_CASE("windows: NaN is ignored by min and max, makes the means NaN", "[api][live]") {
    const double nan = std::nan("");
    Window w(3, 0, 10);
    WindowStats st;
    const std::vector<double> v = {nan, 40, nan, 30, 50, 60, nan, nan, nan};
    for (std::size_t i = 0; i < v.size(); ++i) {
        w.push(std::int64_t(i), v[i]);
        st = w.stats();
        const std::size_t lo = i >= 2 ? i - 2 : 0;
        check_stats(st, brute({v.begin() + std::ptrdiff_t(lo), v.begin() + std::ptrdiff_t(i + 1)}, 10), i);
    }
    CHECK(std::isnan(st.min));  // all three NaN
    Window e(4, 0, 0);
    st = e.stats();
    CHECK(st.count == 0);
    CHECK(std::isnan(st.mean));
    CHECK_THROWS(Window(0, 0, 0));
    CHECK_THROWS(Window(3, 0, 101));
}

TEST_CASE("windows: memory bounded by the window over a million frames", "[api][live]") {
    // the filter's memory over a long stream: rings, deques, treap nodes and partials
    // reach their size in the first window and stay there
    for (const bool frames : {true, false}) {
        Window w(frames ? 50 : 0, frames ? 0 : 2 * 25, 5);
        std::mt19937_64 rng(9);
        std::uniform_real_distribution<double> u(0, 100);
        Window::Capacity caps{};
        for (std::int64_t i = 0; i < 1000000; ++i) {
            const double x = i % 1000 < 500 ? u(rng) : 100.0 - double(i % 1000) / 10;  // noise, ramps
            w.push(i, x);
            if (i == 10000) caps = w.capacity();
        }
        const Window::Capacity c = w.capacity();
        CHECK(w.size() == 50);
        CHECK(c.values == caps.values);
        CHECK(c.min_deque == caps.min_deque);
        CHECK(c.max_deque == caps.max_deque);
        CHECK(c.nodes == caps.nodes);
        CHECK(c.sum_partials == caps.sum_partials);
        CHECK(c.values <= 128);
        CHECK(c.nodes <= 128);
        CHECK(c.sum_partials <= 64);
    }
}

TEST_CASE("window and pool parsing", "[api][live]") {
    std::uint64_t frames;
    double secs;
    CHECK(vmaf_cuda_parse_window("50", &frames, &secs) == 0);
    CHECK(frames == 50);
    CHECK(secs == 0);
    CHECK(vmaf_cuda_parse_window("2s", &frames, &secs) == 0);
    CHECK(frames == 0);
    CHECK(secs == 2.0);
    CHECK(vmaf_cuda_parse_window("0.5s", &frames, &secs) == 0);
    CHECK(secs == 0.5);
    CHECK(vmaf_cuda_parse_window("1500ms", &frames, &secs) == 0);
    CHECK(secs == 1.5);
    CHECK(vmaf_cuda_parse_window("100000000", &frames, nullptr) == 0);
    for (const char* bad : {"", "0", "-3", "2m", "s", "0s", "abc", "2 s", "1e400s", "100000001"})
        CHECK(vmaf_cuda_parse_window(bad, &frames, &secs) < 0);
    CHECK(vmaf_cuda_parse_window(nullptr, &frames, &secs) == VMAF_CUDA_EINVAL);
    CHECK(vmaf_cuda_pool_from_name("mean") == VMAF_CUDA_POOL_MEAN);
    CHECK(vmaf_cuda_pool_from_name("harmonic_mean") == VMAF_CUDA_POOL_HARMONIC_MEAN);
    CHECK(vmaf_cuda_pool_from_name("perc1") == VMAF_CUDA_POOL_PERC1);
    CHECK(vmaf_cuda_pool_from_name("perc5") == VMAF_CUDA_POOL_PERC5);
    CHECK(vmaf_cuda_pool_from_name("perc10") == VMAF_CUDA_POOL_PERC10);
    CHECK(vmaf_cuda_pool_from_name("perc50") == -1);
    CHECK(vmaf_cuda_pool_from_name("median") == -1);
    CHECK(vmaf_cuda_pool_from_name(nullptr) == -1);
    CHECK(std::string(vmaf_cuda_pool_name(VMAF_CUDA_POOL_PERC5)) == "perc5");
    CHECK(vmaf_cuda_pool_name(7) == nullptr);
    CHECK(vmaf_cuda_pool_percentile(VMAF_CUDA_POOL_PERC10) == 10);
    CHECK(vmaf_cuda_pool_percentile(VMAF_CUDA_POOL_MAX) == 0);
    // every name the message lists parses, in enum order
    std::string names = VMAF_CUDA_POOL_NAMES;
    std::size_t pos = 0;
    int count = 0;
    while (pos <= names.size()) {
        std::size_t end = names.find(", ", pos);
        if (end == std::string::npos) end = names.size();
        CHECK(vmaf_cuda_pool_from_name(names.substr(pos, end - pos).c_str()) == count);
        ++count;
        pos = end + 2;
    }
    CHECK(count == 7);
}

TEST_CASE("NDJSON numbers: the JSON log's format, null for non-finite", "[api][live]") {
    CHECK(fmt(0.5, 6) == "0.500000");
    CHECK(fmt(93.123456789, 6) == "93.123457");
    CHECK(fmt(-1.25, 2) == "-1.25");
    CHECK(fmt(1e-8, 6) == "0.0000000100000000");  // more than 6 leading zeros: %.16f
    CHECK(fmt(0.1, -1) == "0.10000000000000001");
    CHECK(std::strtod(fmt(1.0 / 3.0, -1).c_str(), nullptr) == 1.0 / 3.0);
    CHECK(fmt(std::nan(""), 6) == "null");
    CHECK(fmt(HUGE_VAL, -1) == "null");
    CHECK(fmt(-HUGE_VAL, 6) == "null");
    for (const double v : {0.5, 93.123456789, 1e-8, 1e20, -0.0})
        CHECK(fmt(v, 6) == vmaf_cuda::engine::format_value(v, 6));  // the JSON log's numbers
    // names are JSON strings as the JSON log writes them (nlohmann-json)
    CHECK(vmaf_cuda::engine::json_string("a\"b\\c\n\x01") == "\"a\\\"b\\\\c\\n\\u0001\"");
    CHECK(nlohmann::json::parse(vmaf_cuda::engine::json_string("a\"b\\c\n\x01")) == "a\"b\\c\n\x01");
}

TEST_CASE("live state: window metadata, NDJSON lines, SEI payload", "[api][live]") {
    const std::string path = temp_path("vmaf_cuda_live_test");
    VmafCudaSession* vs = open_session("version=vmaf_v0.6.1|version=vmaf_v0.6.1neg");
    REQUIRE(std::string(vmaf_cuda_model_name(vs, 1)) == "vmaf_v0.6.1neg");
    VmafCudaLiveSettings cfg;
    vmaf_cuda_live_default_settings(&cfg);
    cfg.window = "3";
    cfg.window_log = 2;
    cfg.sei = 1;
    cfg.ndjson_path = path.c_str();
    cfg.precision = -1;
    cfg.pool = VMAF_CUDA_POOL_PERC5;
    cfg.tb_num = 1;
    cfg.tb_den = 25;
    cfg.key_prefix = "lavfi.vmaf.";
    VmafCudaLive* l = nullptr;
    char err[256] = "";
    REQUIRE(vmaf_cuda_live_open(&l, vs, &cfg, err, sizeof err) == 0);
    CHECK(vmaf_cuda_live_active(l));

    static const std::uint8_t uuid[16] = VMAF_CUDA_LIVE_SEI_UUID;
    const char* names[] = {"integer_adm2", "vmaf", "vmaf_v0.6.1neg"};
    std::vector<std::vector<double>> rows = {{0.9, 80, 70}, {0.8, 60, 50}, {0.95, 90, 85},
                                             {0.7, std::nan(""), 40}};
    for (unsigned i = 0; i < rows.size(); ++i) {
        VmafCudaFrameScores fs{i, 3, names, rows[i].data()};
        VmafCudaLiveFrame out;
        REQUIRE(vmaf_cuda_live_frame(l, &fs, 2 * i, i != 1, &out) == 0);
        std::map<std::string, std::string> meta;
        for (std::size_t k = 0; k < out.nb_meta; ++k) meta[out.meta_keys[k]] = out.meta_values[k];
        CHECK(meta.size() == 3 * 5);  // frames, min, mean, harmonic_mean, perc5; x (first, 2 models)
        std::vector<double> w;
        for (unsigned k = i >= 2 ? i - 2 : 0; k <= i; ++k) w.push_back(rows[k][1]);
        const WindowStats want = brute(w, 5);
        CHECK(meta["lavfi.vmaf.window.frames"] == std::to_string(w.size()));
        CHECK(same(std::strtod(meta["lavfi.vmaf.window.mean"].c_str(), nullptr), want.mean));
        CHECK(same(std::strtod(meta["lavfi.vmaf.window.min"].c_str(), nullptr), want.min));
        CHECK(same(std::strtod(meta["lavfi.vmaf.window.perc5"].c_str(), nullptr), want.perc));
        CHECK(meta["lavfi.vmaf.window.vmaf.mean"] == meta["lavfi.vmaf.window.mean"]);
        CHECK(meta.count("lavfi.vmaf.window.vmaf_v0.6.1neg.harmonic_mean") == 1);
        // the same values as numbers
        VmafCudaWindowStats ws;
        REQUIRE(vmaf_cuda_live_window(l, 0, &ws) == 0);
        CHECK(ws.frames == w.size());
        CHECK(same(ws.mean, want.mean));
        CHECK(same(ws.harmonic_mean, want.harmonic_mean));
        CHECK(same(ws.min, want.min));
        CHECK(same(ws.max, want.max));
        CHECK(same(ws.perc, want.perc));
        CHECK(vmaf_cuda_live_window(l, 2, &ws) == VMAF_CUDA_EINVAL);
        // SEI: our UUID, then JSON
        REQUIRE(out.sei_size > 16);
        CHECK(std::memcmp(out.sei, uuid, 16) == 0);
        const auto sei = nlohmann::json::parse(std::string((const char*)out.sei + 16, out.sei_size - 16));
        CHECK(sei["frameNum"] == i);
        if (i == 3) CHECK(sei["scores"]["vmaf"].is_null());
        else CHECK(sei["scores"]["vmaf"].get<double>() == rows[i][1]);
        CHECK(sei["window"]["vmaf_v0.6.1neg"]["frames"] == w.size());
    }
    REQUIRE(vmaf_cuda_live_finish(l, nullptr, 4) == 0);
    vmaf_cuda_live_close(l);

    std::ifstream f(path);
    std::vector<nlohmann::json> lines;
    for (std::string s; std::getline(f, s);) lines.push_back(nlohmann::json::parse(s));
    std::remove(path.c_str());
    REQUIRE(lines.size() == 4 + 2 + 1);  // 4 frames, a window line after frames 2 and 4, pooled
    CHECK(lines[0]["type"] == "frame");
    CHECK(lines[0]["frameNum"] == 0);
    CHECK(lines[0]["metrics"]["integer_adm2"].get<double>() == 0.9);
    CHECK(lines[1]["pts_time"].is_null());        // frame 1 had no pts
    CHECK(lines[2]["type"] == "window");
    CHECK(lines[2]["window"]["vmaf"]["frames"] == 2);
    CHECK(lines[2]["window"]["vmaf"]["mean"].get<double>() == 70.0);
    CHECK(lines[3]["pts_time"].get<double>() == 0.16);
    CHECK(lines[5]["metrics"]["vmaf"].is_null());  // NaN is null
    CHECK(lines[6]["type"] == "pooled");
    CHECK(lines[6]["frames"] == 4);

    // errors
    cfg.window = "2x";
    CHECK(vmaf_cuda_live_open(&l, vs, &cfg, err, sizeof err) == VMAF_CUDA_EINVAL);
    CHECK(l == nullptr);
    CHECK(std::string(err).find("window '2x'") != std::string::npos);
    cfg.window = nullptr;
    CHECK(vmaf_cuda_live_open(&l, vs, &cfg, err, sizeof err) < 0);
    CHECK(std::string(err).find("needs a window") != std::string::npos);
    cfg.window = "3";
    cfg.ndjson_path = nullptr;
    CHECK(vmaf_cuda_live_open(&l, vs, &cfg, err, sizeof err) < 0);
    CHECK(std::string(err).find("needs an NDJSON stream") != std::string::npos);
    cfg.window_log = 0;
    for (const int p : {0, 18, -2}) {
        cfg.precision = p;
        CHECK(vmaf_cuda_live_open(&l, vs, &cfg, err, sizeof err) == VMAF_CUDA_EINVAL);
    }
    cfg.precision = 6;
    cfg.pool = VmafCudaPool(7);
    CHECK(vmaf_cuda_live_open(&l, vs, &cfg, err, sizeof err) == VMAF_CUDA_EINVAL);
    CHECK(std::string(err).find(VMAF_CUDA_POOL_NAMES) != std::string::npos);
    cfg.pool = VMAF_CUDA_POOL_MEAN;
    CHECK(vmaf_cuda_live_open(&l, nullptr, &cfg, err, sizeof err) == VMAF_CUDA_EINVAL);
    // an NDJSON path that cannot be opened fails at the first line, with a message
    const std::string missing =
        std::filesystem::temp_directory_path().string() + "/vmaf_cuda_live_no_such_dir/x.ndjson";
    cfg.ndjson_path = missing.c_str();
    REQUIRE(vmaf_cuda_live_open(&l, vs, &cfg, err, sizeof err) == 0);
    VmafCudaFrameScores fs{0, 3, names, rows[0].data()};
    VmafCudaLiveFrame out;
    CHECK(vmaf_cuda_live_frame(l, &fs, 0, 1, &out) == VMAF_CUDA_EIO);
    CHECK(std::string(vmaf_cuda_live_error(l)).find("cannot open the NDJSON log") != std::string::npos);
    CHECK(out.sei_size > 16);  // the frame's data is still there
    CHECK(out.nb_meta == 3 * 4);
    CHECK(vmaf_cuda_live_frame(l, &fs, 1, 1, &out) == 0);  // no further lines
    CHECK(vmaf_cuda_live_finish(l, vs, 2) == 0);
    vmaf_cuda_live_close(l);
    vmaf_cuda_close(vs);
}

namespace {

/// The text tests/api/live_expected/variantN.txt holds: what the filter's plain-C live QA
/// (filter/vmaf_cuda_live*.c before it moved into the library) gave for these frames.
std::string live_transcript(int variant) {
    const std::string path = temp_path("vmaf_cuda_live_bytes");
    VmafCudaSession* vs =
        open_session(variant == 1 ? "version=vmaf_v0.6.1" : "version=vmaf_v0.6.1|version=vmaf_v0.6.1neg");
    VmafCudaLiveSettings cfg;
    vmaf_cuda_live_default_settings(&cfg);
    cfg.ndjson_path = path.c_str();
    cfg.key_prefix = "lavfi.vmaf.";
    cfg.sei = 1;
    if (variant == 0) {
        cfg.window = "3";
        cfg.window_log = 2;
        cfg.precision = -1;
        cfg.pool = VMAF_CUDA_POOL_PERC5;
        cfg.tb_num = 1;
        cfg.tb_den = 25;
    } else if (variant == 1) {
        cfg.window = "100ms";
        cfg.window_log = 3;
        cfg.pool = VMAF_CUDA_POOL_MAX;
        cfg.tb_num = 1;
        cfg.tb_den = 1000;
        cfg.fr_num = 25;
        cfg.fr_den = 1;
    } else {
        cfg.precision = 3;
        cfg.pool = VMAF_CUDA_POOL_HARMONIC_MEAN;
        cfg.tb_num = 1001;
        cfg.tb_den = 30000;
    }
    VmafCudaLive* l = nullptr;
    char err[256];
    REQUIRE(vmaf_cuda_live_open(&l, vs, &cfg, err, sizeof err) == 0);
    const char* names[] = {"integer_adm2", "VMAF_integer_feature_motion_sad_score", "vmaf", "vmaf_v0.6.1neg"};
    const double nan = std::nan("");
    std::vector<std::vector<double>> rows = {
        {0.93456789012345, 0, 80.123456789, 70.5}, {1e-9, 3.25, 60.0, 50.25},
        {0.95, 12.5, 95.00000001, 85},            {0.7, HUGE_VAL, nan, 40.125},
        {0.5, -2.5, 100, 99.999999999},           {0.25, 1e20, 0.0000001, 1.0 / 3.0}};
    std::vector<std::int64_t> pts = {0, 40, 80, 80, 200, 240};
    const std::vector<int> has = {1, 1, 0, 1, 1, 0};
    if (variant == 1) pts = {0, 40, 80, 120, 160, 240};
    std::string o;
    char line[512];
    for (unsigned i = 0; i < rows.size(); ++i) {
        VmafCudaFrameScores fs{i * 2 + 1, 4, names, rows[i].data()};
        VmafCudaLiveFrame out;
        const int rc = vmaf_cuda_live_frame(l, &fs, pts[i], has[i], &out);
        std::snprintf(line, sizeof line, "frame %u rc %d\n", i, rc);
        o += line;
        for (std::size_t k = 0; k < out.nb_meta; ++k)
            o += std::string("M ") + out.meta_keys[k] + "=" + out.meta_values[k] + "\n";
        if (out.sei) {
            o += "S ";
            for (std::size_t k = 0; k < 16; k++) {
                std::snprintf(line, sizeof line, "%02x", out.sei[k]);
                o += line;
            }
            o += " " + std::string((const char*)out.sei + 16, out.sei_size - 16) + "\n";
        }
    }
    o += "finish " + std::to_string(vmaf_cuda_live_finish(l, nullptr, 6)) + "\n";
    vmaf_cuda_live_close(l);
    vmaf_cuda_close(vs);
    o += "NDJSON\n" + read_file(path);
    std::remove(path.c_str());
    return o;
}

} // namespace

TEST_CASE("score metadata: FFmpeg's libvmaf filter's keys, %.17g values", "[api][live]") {
    VmafCudaSession* vs = open_session("version=vmaf_v0.6.1|version=vmaf_v0.6.1neg");
    const char* names[] = {"integer_adm2", "vmaf", "vmaf_v0.6.1neg"};
    for (const int window : {0, 1}) {
        VmafCudaLiveSettings cfg;
        vmaf_cuda_live_default_settings(&cfg);
        cfg.key_prefix = "lavfi.vmaf.";
        cfg.score_meta = 1;
        cfg.window = window ? "2" : nullptr;
        VmafCudaLive* l = nullptr;
        char err[256] = "";
        REQUIRE(vmaf_cuda_live_open(&l, vs, &cfg, err, sizeof err) == 0);
        CHECK(vmaf_cuda_live_active(l));
        double v[] = {0.1, 93.123456789, std::nan("")};
        VmafCudaFrameScores fs{0, 3, names, v};
        VmafCudaLiveFrame out;
        REQUIRE(vmaf_cuda_live_frame(l, &fs, 0, 1, &out) == 0);
        std::vector<std::string> keys(out.meta_keys, out.meta_keys + out.nb_meta);
        std::vector<std::string> values(out.meta_values, out.meta_values + out.nb_meta);
        REQUIRE(keys.size() == (window ? 4u + 3 * 4 : 4u));
        CHECK(keys[0] == "lavfi.vmaf.integer_adm2");
        CHECK(values[0] == "0.10000000000000001");
        CHECK(keys[1] == "lavfi.vmaf.score");
        CHECK(keys[2] == "lavfi.vmaf.score.vmaf");
        CHECK(values[1] == "93.123456789000002");
        CHECK(values[2] == values[1]);
        CHECK(keys[3] == "lavfi.vmaf.score.vmaf_v0.6.1neg");
        CHECK((values[3] == "nan" || values[3] == "-nan"));
        if (window) CHECK(keys[4] == "lavfi.vmaf.window.frames");
        vmaf_cuda_live_close(l);
    }
    vmaf_cuda_close(vs);
}

TEST_CASE("vmaf_cuda_live_truncate: a file is cut back to the frames output, a stream says "
          "so", "[api][live]") {
    VmafCudaSession* vs = open_session("version=vmaf_v0.6.1");
    const char* names[] = {"vmaf"};
    auto run = [&](const std::string& path, unsigned frames, unsigned keep) {
        VmafCudaLiveSettings cfg;
        vmaf_cuda_live_default_settings(&cfg);
        cfg.ndjson_path = path.c_str();
        cfg.window = "2";
        cfg.window_log = 2;
        VmafCudaLive* l = nullptr;
        char err[256] = "";
        REQUIRE(vmaf_cuda_live_open(&l, vs, &cfg, err, sizeof err) == 0);
        for (unsigned i = 0; i < frames; ++i) {
            double v = 50.0 + i;
            VmafCudaFrameScores fs{i, 1, names, &v};
            VmafCudaLiveFrame out;
            REQUIRE(vmaf_cuda_live_frame(l, &fs, i, 1, &out) == 0);
        }
        const int rc = vmaf_cuda_live_truncate(l, keep);
        const std::string msg = vmaf_cuda_live_error(l);
        REQUIRE(vmaf_cuda_live_finish(l, nullptr, keep) == 0);
        vmaf_cuda_live_close(l);
        return std::make_pair(rc, msg);
    };
    const std::string path = temp_path("vmaf_cuda_live_truncate");
    CHECK(run(path, 9, 5).first == 0);
    std::vector<nlohmann::json> lines;
    {
        std::ifstream f(path);
        for (std::string t; std::getline(f, t);) lines.push_back(nlohmann::json::parse(t));
    }
    // frames 0..4 and the window lines after the 2nd and 4th (frameNum 1 and 3), then the
    // pooled line
    REQUIRE(lines.size() == 5 + 2 + 1);
    CHECK(lines[5]["type"] == "window");
    CHECK(lines[5]["frameNum"] == 3);
    CHECK(lines[6]["frameNum"] == 4);
    CHECK(lines[7]["type"] == "pooled");
    CHECK(lines[7]["frames"] == 5);
    CHECK(run(path, 4, 9).first == 0);  // nothing to cut
    CHECK(run(path, 4, 0).first == 0);  // every line
    CHECK(read_file(path).rfind("{\"type\":\"pooled\"", 0) == 0);
    std::remove(path.c_str());
    // a descriptor: the lines are out, and it says so
    int p[2];
    REQUIRE(::pipe(p) == 0);
    const auto [rc, msg] = run("pipe:" + std::to_string(p[1]), 3, 1);
    ::close(p[1]);
    ::close(p[0]);
    CHECK(rc == 1);
    CHECK(msg.find("cannot take them back") != std::string::npos);
    vmaf_cuda_close(vs);
}

TEST_CASE("live output byte for byte as the filter wrote it (metadata, SEI, NDJSON)", "[api][live]") {
    // frame windows with perc5 at precision max, 100 ms windows with max and frames
    // without pts at 6 digits, no window at 3 digits; NaN, infinity, 1e-9, 1e20
    for (int v = 0; v < 3; ++v) {
        DYNAMIC_SECTION("variant " << v) {
            const std::string want =
                read_file(VMAF_CUDA_LIVE_EXPECTED_DIR "/variant" + std::to_string(v) + ".txt");
            REQUIRE(!want.empty());
            CHECK(live_transcript(v) == want);
        }
    }
}

TEST_CASE("NDJSON stream: descriptors, FIFOs, a full device, whole lines", "[api][live]") {
    CHECK(vmaf_cuda_live_path_is_stream("-"));
    CHECK(vmaf_cuda_live_path_is_stream("pipe:"));
    CHECK(vmaf_cuda_live_path_is_stream("pipe:5"));
    CHECK(!vmaf_cuda_live_path_is_stream(nullptr));
    const std::string file = temp_path("vmaf_cuda_live_stream");
    CHECK(!vmaf_cuda_live_path_is_stream(file.c_str()));
    std::remove(file.c_str());
    CHECK(!vmaf_cuda_live_path_is_stream(file.c_str()));  // missing
    REQUIRE(mkfifo(file.c_str(), 0600) == 0);
    CHECK(vmaf_cuda_live_path_is_stream(file.c_str()));
    std::remove(file.c_str());

    VmafCudaSession* vs = open_session(nullptr);
    std::vector<std::string> names;
    const auto rows = score_frames(vs, 6, &names);
    std::vector<const char*> np;
    for (const std::string& s : names) np.push_back(s.c_str());
    VmafCudaLiveSettings cfg;
    vmaf_cuda_live_default_settings(&cfg);
    cfg.precision = -1;
    VmafCudaLive* l = nullptr;
    char err[256];
    VmafCudaLiveFrame out;

    SECTION("pipe:N writes to a duplicate of descriptor N, line by line, then the pooled line") {
        int p[2];
        REQUIRE(pipe(p) == 0);
        const std::string name = "pipe:" + std::to_string(p[1]);
        cfg.ndjson_path = name.c_str();
        cfg.pool = VMAF_CUDA_POOL_PERC10;
        REQUIRE(vmaf_cuda_live_open(&l, vs, &cfg, err, sizeof err) == 0);
        std::string got;
        char buf[65536];
        for (unsigned i = 0; i < rows.size(); ++i) {
            VmafCudaFrameScores fs{i, unsigned(np.size()), np.data(), rows[i].data()};
            REQUIRE(vmaf_cuda_live_frame(l, &fs, i, 1, &out) == 0);
            if (i == 0) close(p[1]);  // opened at the first line: it writes to its own duplicate
            const ssize_t n = read(p[0], buf, sizeof buf);  // the line is there at once
            REQUIRE(n > 0);
            got.assign(buf, std::size_t(n));
            REQUIRE(got.back() == '\n');
            const auto j = nlohmann::json::parse(got);
            for (std::size_t k = 0; k < names.size(); ++k)
                CHECK(j["metrics"][names[k]].get<double>() == rows[i][k]);  // exact at max
        }
        REQUIRE(vmaf_cuda_live_finish(l, vs, rows.size()) == 0);
        const ssize_t n = read(p[0], buf, sizeof buf);
        REQUIRE(n > 0);
        const auto pooled = nlohmann::json::parse(std::string(buf, std::size_t(n)));
        CHECK(pooled["frames"] == rows.size());
        for (const std::string& name : names)
            for (const int pool : {VMAF_CUDA_POOL_MIN, VMAF_CUDA_POOL_MAX, VMAF_CUDA_POOL_MEAN,
                                   VMAF_CUDA_POOL_HARMONIC_MEAN, VMAF_CUDA_POOL_PERC10}) {
                double v;
                REQUIRE(vmaf_cuda_pooled(vs, name.c_str(), VmafCudaPool(pool), &v) == 0);
                CHECK(pooled["pooled_metrics"][name][vmaf_cuda_pool_name(pool)].get<double>() == v);
            }
        CHECK(read(p[0], buf, sizeof buf) == 0);  // closed by finish
        close(p[0]);
    }
    SECTION("a full device: the error names the path and the reason, no further lines") {
        cfg.ndjson_path = "/dev/full";
        REQUIRE(vmaf_cuda_live_open(&l, vs, &cfg, err, sizeof err) == 0);
        VmafCudaFrameScores fs{0, unsigned(np.size()), np.data(), rows[0].data()};
        CHECK(vmaf_cuda_live_frame(l, &fs, 0, 1, &out) == VMAF_CUDA_EIO);
        CHECK(std::string(vmaf_cuda_live_error(l)) ==
              "writing the NDJSON log '/dev/full' failed: No space left on device; it holds the "
              "lines before this one, and no further lines are written");
        CHECK(vmaf_cuda_live_frame(l, &fs, 1, 1, &out) == 0);
        CHECK(vmaf_cuda_live_finish(l, vs, 1) == 0);
    }
    SECTION("pipe: with a bad number, a closed descriptor") {
        for (const char* bad : {"pipe:x", "pipe:1000000"}) {
            cfg.ndjson_path = bad;
            REQUIRE(vmaf_cuda_live_open(&l, vs, &cfg, err, sizeof err) == 0);
            VmafCudaFrameScores fs{0, unsigned(np.size()), np.data(), rows[0].data()};
            CHECK(vmaf_cuda_live_frame(l, &fs, 0, 1, &out) == VMAF_CUDA_EIO);
            CHECK(std::string(vmaf_cuda_live_error(l)) ==
                  std::string("cannot open the NDJSON log '") + bad + "': Bad file descriptor");
            vmaf_cuda_live_close(l);
            l = nullptr;
        }
    }
    SECTION("a file is truncated and holds whole lines") {
        const std::string path = temp_path("vmaf_cuda_live_file");
        { std::ofstream(path) << "an older log, longer than the new one\n"; }
        cfg.ndjson_path = path.c_str();
        REQUIRE(vmaf_cuda_live_open(&l, vs, &cfg, err, sizeof err) == 0);
        VmafCudaFrameScores fs{0, unsigned(np.size()), np.data(), rows[0].data()};
        REQUIRE(vmaf_cuda_live_frame(l, &fs, 0, 0, &out) == 0);
        REQUIRE(vmaf_cuda_live_finish(l, vs, 1) == 0);
        std::ifstream f(path);
        std::vector<std::string> lines;
        for (std::string s; std::getline(f, s);) lines.push_back(s);
        REQUIRE(lines.size() == 2);
        CHECK(nlohmann::json::parse(lines[0])["pts_time"].is_null());
        CHECK(nlohmann::json::parse(lines[1])["type"] == "pooled");
        std::remove(path.c_str());
    }
    vmaf_cuda_live_close(l);
    vmaf_cuda_close(vs);
}

TEST_CASE("summary: the score lines of the filter and the CLI", "[api][live]") {
    VmafCudaSession* vs = open_session("version=vmaf_v0.6.1|version=vmaf_b_v0.6.3");
    const char* boot = vmaf_cuda_model_name(vs, 1);
    REQUIRE(std::string(boot) == "vmaf_b_v0.6.3");
    CHECK(vmaf_cuda_summary(vs, VMAF_CUDA_POOL_MEAN, nullptr, nullptr, 0) == VMAF_CUDA_EINVAL);
    INFO(vmaf_cuda_error_message(vs));
    CHECK(std::string(vmaf_cuda_error_message(vs)).find("no frame has been scored") != std::string::npos);
    score_frames(vs, 5);
    for (const int pool : {VMAF_CUDA_POOL_MEAN, VMAF_CUDA_POOL_PERC5, VMAF_CUDA_POOL_MAX}) {
        for (const char* prefix : {(const char*)nullptr, "rendition 2: "}) {
            INFO("pool " << pool << " prefix " << (prefix ? prefix : "none"));
            std::string want;
            char line[256];
            const std::string pre = prefix ? prefix : "";
            for (unsigned i = 0; i < 2; ++i) {
                double v;
                REQUIRE(vmaf_cuda_pooled(vs, vmaf_cuda_model_name(vs, i), VmafCudaPool(pool), &v) == 0);
                std::snprintf(line, sizeof line, "%sVMAF score: %f\n", pre.c_str(), v);
                want += line;
            }
            double b[4];
            const char* suffix[4] = {"_bagging", "_ci_p95_lo", "_ci_p95_hi", "_stddev"};
            for (int k = 0; k < 4; ++k)
                REQUIRE(vmaf_cuda_pooled(vs, (std::string(boot) + suffix[k]).c_str(),
                                         VmafCudaPool(pool), &b[k]) == 0);
            std::snprintf(line, sizeof line, "%s%s: %f, ci.p95: [%f, %f], stddev: %f\n", pre.c_str(),
                          boot, b[0], b[1], b[2], b[3]);
            want += line;
            const int len = vmaf_cuda_summary(vs, pool, prefix, nullptr, 0);
            REQUIRE(len == int(want.size()));
            std::vector<char> buf(std::size_t(len) + 1);
            CHECK(vmaf_cuda_summary(vs, pool, prefix, buf.data(), buf.size()) == len);
            CHECK(std::string(buf.data()) == want);
            // too small: cut, NUL-terminated, the whole length returned
            char small[10];
            CHECK(vmaf_cuda_summary(vs, pool, prefix, small, sizeof small) == len);
            CHECK(std::string(small) == want.substr(0, 9));
        }
    }
    CHECK(vmaf_cuda_summary(vs, 9, nullptr, nullptr, 0) == VMAF_CUDA_EINVAL);
    CHECK(vmaf_cuda_summary(nullptr, VMAF_CUDA_POOL_MEAN, nullptr, nullptr, 0) == VMAF_CUDA_EINVAL);
    vmaf_cuda_close(vs);
}

TEST_CASE("percentile pooling: nearest rank, integer rank arithmetic", "[api][pooling]") {
    using vmaf_cuda::engine::pool;
    std::vector<double> v;
    for (int i = 20; i >= 1; --i) v.push_back(i);  // 20..1, unsorted order
    CHECK(pool(v, VMAF_CUDA_POOL_PERC5) == 1.0);    // ceil(5 * 20 / 100) = 1
    CHECK(pool(v, VMAF_CUDA_POOL_PERC10) == 2.0);   // rank 2
    CHECK(pool(v, VMAF_CUDA_POOL_PERC1) == 1.0);
    v.push_back(0.5);                               // n = 21: 5% -> rank 2
    CHECK(pool(v, VMAF_CUDA_POOL_PERC5) == 1.0);
    CHECK(pool(v, VMAF_CUDA_POOL_PERC10) == 2.0);   // ceil(2.1) = 3 -> 2.0
    std::vector<double> h(1000);
    for (int i = 0; i < 1000; ++i) h[std::size_t(i)] = (i * 37) % 1000;  // a permutation of 0..999
    CHECK(pool(h, VMAF_CUDA_POOL_PERC1) == 9.0);    // rank 10
    CHECK(pool(h, VMAF_CUDA_POOL_PERC5) == 49.0);
    CHECK(pool(h, VMAF_CUDA_POOL_PERC10) == 99.0);
    CHECK(pool({{42.0}}, VMAF_CUDA_POOL_PERC1) == 42.0);
    CHECK(pool({{std::nan(""), 3.0, 4.0}}, VMAF_CUDA_POOL_PERC10) == 3.0);  // NaN last
    CHECK_THROWS(pool({}, VMAF_CUDA_POOL_PERC5));
    CHECK_THROWS(pool(v, 7));
}

TEST_CASE("vmaf_cuda_pooled accepts the percentiles", "[api][pooling]") {
    const unsigned w = 48, h = 40, n = 12;
    VmafCudaSettings s;
    vmaf_cuda_default_settings(&s);
    s.width = w;
    s.height = h;
    s.backend = VMAF_CUDA_BACKEND_CPU;
    VmafCudaSession* vs = nullptr;
    char err[256];
    REQUIRE(vmaf_cuda_open(&vs, &s, err, sizeof err) == VMAF_CUDA_OK);
    std::mt19937 rng(5);
    std::vector<double> scores;
    VmafCudaFrameScores fs;
    for (unsigned k = 0; k < n; ++k) {
        std::vector<std::uint8_t> r(w * h), d(w * h);
        for (unsigned i = 0; i < w * h; ++i) {
            r[i] = std::uint8_t((i * 7 + k * 13) % 200 + 20);
            d[i] = std::uint8_t(std::clamp(int(r[i]) + int(rng() % (2 * k + 3)) - int(k + 1), 0, 255));
        }
        VmafCudaPicture rp{r.data(), ptrdiff_t(w), 0, VMAF_CUDA_MEMORY_HOST, {}, 0, 0};
        VmafCudaPicture dp{d.data(), ptrdiff_t(w), 0, VMAF_CUDA_MEMORY_HOST, {}, 0, 0};
        REQUIRE(vmaf_cuda_send(vs, &rp, &dp) == VMAF_CUDA_OK);
        while (vmaf_cuda_receive(vs, &fs) == VMAF_CUDA_OK) scores.push_back(fs.values[fs.count - 1]);
    }
    REQUIRE(vmaf_cuda_flush(vs) == VMAF_CUDA_OK);
    while (vmaf_cuda_receive(vs, &fs) == VMAF_CUDA_OK) scores.push_back(fs.values[fs.count - 1]);
    REQUIRE(scores.size() == n);
    std::vector<double> sorted = scores;
    std::sort(sorted.begin(), sorted.end());
    double p;
    REQUIRE(vmaf_cuda_pooled(vs, "vmaf", VMAF_CUDA_POOL_PERC10, &p) == VMAF_CUDA_OK);
    CHECK(p == sorted[1]);  // ceil(10 * 12 / 100) = 2
    REQUIRE(vmaf_cuda_pooled(vs, "vmaf", VMAF_CUDA_POOL_PERC1, &p) == VMAF_CUDA_OK);
    CHECK(p == sorted[0]);
    CHECK(vmaf_cuda_pooled(vs, "vmaf", VmafCudaPool(7), &p) == VMAF_CUDA_EINVAL);
    vmaf_cuda_close(vs);
}

TEST_CASE("metrics: the Prometheus text of two renditions, read while frames are scored",
          "[api][live][metrics]") {
    VmafCudaSession* vs = open_session("version=vmaf_v0.6.1|version=vmaf_v0.6.1neg");
    VmafCudaLiveSettings cfg;
    vmaf_cuda_live_default_settings(&cfg);
    cfg.window = "2";
    cfg.pool = VMAF_CUDA_POOL_MAX;
    cfg.tb_num = 1;
    cfg.tb_den = 25;
    VmafCudaLive* l[2] = {nullptr, nullptr};
    char err[256] = "";
    for (auto& x : l) REQUIRE(vmaf_cuda_live_open(&x, vs, &cfg, err, sizeof err) == 0);
    const char* names[] = {"integer_adm2", "vmaf", "vmaf_v0.6.1neg"};
    std::vector<std::vector<double>> rows = {{0.9, 80.25, 70}, {0.8, 60.1, std::nan("")},
                                             {0.95, 90, 85}};
    for (unsigned i = 0; i < rows.size(); ++i) {
        VmafCudaFrameScores fs{i, 3, names, rows[i].data()};
        VmafCudaLiveFrame out;
        REQUIRE(vmaf_cuda_live_frame(l[0], &fs, 2 * i, 1, &out) == 0);
    }
    REQUIRE(vmaf_cuda_live_unscored(l[1], "reference_gap") == 0);
    REQUIRE(vmaf_cuda_live_unscored(l[1], "reference_gap") == 0);
    REQUIRE(vmaf_cuda_live_unscored(l[1], nullptr) == 0);
    REQUIRE(vmaf_cuda_live_event(l[0], "stalled", "reference", 4, 1, "the reference \"stalls\"") == 0);
    const VmafCudaLive* const lives[2] = {l[0], l[1]};
    const int n = vmaf_cuda_live_metrics(lives, 2, nullptr, 0);
    REQUIRE(n > 0);
    // (the uptime's digits may differ from one call to the next)
    std::string text(std::size_t(n) + 64, '\0');
    const int got = vmaf_cuda_live_metrics(lives, 2, text.data(), text.size());
    REQUIRE(got > 0);
    REQUIRE(std::size_t(got) < text.size());
    text.resize(std::size_t(got));
    CHECK(std::strlen(text.c_str()) == std::size_t(got));
    INFO(text);
    // every family once, each sample a "name{labels} value" line, values as %.17g
    std::istringstream in(text);
    std::vector<std::string> samples;
    std::map<std::string, int> types;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("# TYPE ", 0) == 0) ++types[line.substr(7, line.find(' ', 7) - 7)];
        else if (line.rfind("# HELP ", 0) != 0 && line.rfind("vmaf_cuda_uptime_seconds", 0) != 0)
            samples.push_back(line);
    }
    CHECK(types.size() == 8);
    for (const auto& [name, count] : types) CHECK(count == 1);
    VmafCudaWindowStats ws;
    REQUIRE(vmaf_cuda_live_window(l[0], 0, &ws) == 0);
    const std::vector<std::string> want = {
        "vmaf_cuda_frames_scored_total{rendition=\"0\"} 3",
        "vmaf_cuda_frames_scored_total{rendition=\"1\"} 0",
        "vmaf_cuda_frames_unscored_total{rendition=\"1\",reason=\"reference_gap\"} 2",
        "vmaf_cuda_frames_unscored_total{rendition=\"1\",reason=\"unknown\"} 1",
        "vmaf_cuda_events_total{rendition=\"0\",event=\"stalled\",input=\"reference\"} 1",
        "vmaf_cuda_frame_number{rendition=\"0\"} 2",
        "vmaf_cuda_frame_pts_seconds{rendition=\"0\"} 0.16",
        "vmaf_cuda_frame_score{rendition=\"0\",metric=\"integer_adm2\"} 0.94999999999999996",
        "vmaf_cuda_frame_score{rendition=\"0\",metric=\"vmaf\"} 90",
        "vmaf_cuda_frame_score{rendition=\"0\",metric=\"vmaf_v0.6.1neg\"} 85",
        "vmaf_cuda_window_score{rendition=\"0\",model=\"vmaf\",stat=\"frames\"} 2",
        "vmaf_cuda_window_score{rendition=\"0\",model=\"vmaf\",stat=\"min\"} 60.100000000000001",
        "vmaf_cuda_window_score{rendition=\"0\",model=\"vmaf\",stat=\"mean\"} 75.049999999999997",
        "vmaf_cuda_window_score{rendition=\"0\",model=\"vmaf\",stat=\"harmonic_mean\"} " +
            fmt(ws.harmonic_mean, -1),
        "vmaf_cuda_window_score{rendition=\"0\",model=\"vmaf\",stat=\"max\"} 90",
        "vmaf_cuda_window_score{rendition=\"0\",model=\"vmaf_v0.6.1neg\",stat=\"frames\"} 2",
        "vmaf_cuda_window_score{rendition=\"0\",model=\"vmaf_v0.6.1neg\",stat=\"min\"} 85",
        "vmaf_cuda_window_score{rendition=\"0\",model=\"vmaf_v0.6.1neg\",stat=\"mean\"} NaN",
        "vmaf_cuda_window_score{rendition=\"0\",model=\"vmaf_v0.6.1neg\",stat=\"harmonic_mean\"} NaN",
        "vmaf_cuda_window_score{rendition=\"0\",model=\"vmaf_v0.6.1neg\",stat=\"max\"} 85",
        "vmaf_cuda_window_score{rendition=\"1\",model=\"vmaf\",stat=\"frames\"} 0",
    };
    std::string missing;
    for (const std::string& w : want)
        if (std::find(samples.begin(), samples.end(), w) == samples.end()) missing += w + "\n";
    CHECK(missing == "");
    // one live state: no rendition label; a short buffer is cut, NUL-terminated
    char small[16];
    CHECK(vmaf_cuda_live_metrics(lives, 1, small, sizeof small) > int(sizeof small));
    CHECK(std::strlen(small) == sizeof small - 1);
    std::string one(std::size_t(vmaf_cuda_live_metrics(lives, 1, nullptr, 0)) + 64, '\0');
    vmaf_cuda_live_metrics(lives, 1, one.data(), one.size());
    CHECK(one.find("vmaf_cuda_frames_scored_total 3\n") != std::string::npos);
    CHECK(one.find("rendition=") == std::string::npos);
    CHECK(vmaf_cuda_live_metrics(nullptr, 1, nullptr, 0) == VMAF_CUDA_EINVAL);
    // a scrape from another thread while frames are scored sees whole counts
    std::atomic<bool> done{false};
    std::thread scraper([&] {
        std::vector<char> buf(1 << 16);
        while (!done) vmaf_cuda_live_metrics(lives, 2, buf.data(), buf.size());
    });
    for (unsigned i = 3; i < 20003; ++i) {
        VmafCudaFrameScores fs{i, 3, names, rows[i % 3].data()};
        VmafCudaLiveFrame out;
        REQUIRE(vmaf_cuda_live_frame(l[0], &fs, 2 * i, 1, &out) == 0);
    }
    done = true;
    scraper.join();
    std::string last(std::size_t(vmaf_cuda_live_metrics(lives, 1, nullptr, 0)) + 64, '\0');
    vmaf_cuda_live_metrics(lives, 1, last.data(), last.size());
    CHECK(last.find("vmaf_cuda_frames_scored_total 20003\n") != std::string::npos);
    for (auto& x : l) vmaf_cuda_live_close(x);
    vmaf_cuda_close(vs);
}

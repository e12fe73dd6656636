// SPDX-License-Identifier: BSD-2-Clause-Patent
// Suite `api`: the filter's live QA helpers (filter/vmaf_cuda_live*.c, plain C, no FFmpeg):
// exact running sums, rolling windows against brute force, option parsing, the number
// format of the NDJSON log, NDJSON lines and the SEI payload; and the percentile pooling
// of the engine and of vmaf_cuda_pooled().

#include "vmaf_cuda.h"
#include "vmaf_cuda_live.h"

#include "pooling.h"

#include "catch.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

/// Python's math.fsum of `v` from scratch (additions only).
double fsum(const std::vector<double>& v) {
    VmafLiveSum s{};
    for (double x : v) REQUIRE(vmaf_live_sum_add(&s, x, 1) == 0);
    const double r = vmaf_live_sum_value(&s);
    vmaf_live_sum_free(&s);
    return r;
}

bool same(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

/// Brute-force window statistics, as the header defines them.
VmafLiveStats brute(const std::vector<double>& w, unsigned perc) {
    VmafLiveStats st{};
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

void check_stats(const VmafLiveStats& got, const VmafLiveStats& want, std::size_t frame) {
    INFO("frame " << frame << " count " << want.count);
    REQUIRE(got.count == want.count);
    CHECK(same(got.min, want.min));
    CHECK(same(got.max, want.max));
    CHECK(same(got.mean, want.mean));
    CHECK(same(got.harmonic_mean, want.harmonic_mean));
    CHECK(same(got.perc, want.perc));
}

std::string fmt(double v, int precision) {
    char buf[400];
    vmaf_live_format_number(buf, sizeof buf, v, precision);
    return buf;
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
    VmafLiveSum s{};
    const std::size_t n = 37;
    for (std::size_t i = 0; i < v.size(); ++i) {
        REQUIRE(vmaf_live_sum_add(&s, v[i], 1) == 0);
        if (i >= n) REQUIRE(vmaf_live_sum_add(&s, v[i - n], -1) == 0);
        const std::size_t lo = i >= n ? i - n + 1 : 0;
        const std::vector<double> w(v.begin() + std::ptrdiff_t(lo), v.begin() + std::ptrdiff_t(i + 1));
        REQUIRE(vmaf_live_sum_value(&s) == fsum(w));
    }
    CHECK(s.n < 40);  // the partials stay few
    vmaf_live_sum_free(&s);
}

TEST_CASE("frame windows equal brute force over the trailing values", "[api][live]") {
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> u(20, 100);
    for (const std::size_t n : {std::size_t(1), std::size_t(2), std::size_t(7), std::size_t(100)}) {
        for (const unsigned perc : {0u, 1u, 5u, 10u}) {
            VmafLiveWindow w;
            REQUIRE(vmaf_live_window_init(&w, n, 0, perc) == 0);
            std::vector<double> all;
            for (std::size_t i = 0; i < 600; ++i) {
                // repeated values and plateaus: ties in the deques and the treap
                const double x = i % 13 == 0 ? 50.0 : std::round(u(rng) * 4) / 4;
                all.push_back(x);
                REQUIRE(vmaf_live_window_push(&w, std::int64_t(i), x) == 0);
                VmafLiveStats got;
                vmaf_live_window_stats(&w, &got);
                const std::size_t lo = all.size() > n ? all.size() - n : 0;
                check_stats(got, brute({all.begin() + std::ptrdiff_t(lo), all.end()}, perc), i);
            }
            vmaf_live_window_free(&w);
        }
    }
}

TEST_CASE("duration windows keep the values of the trailing duration", "[api][live]") {
    // 1/90000 time base, 25 fps with jitter and a gap; 2 s = 180000 ticks
    VmafLiveWindow w;
    REQUIRE(vmaf_live_window_init(&w, 0, 180000, 5) == 0);
    std::vector<std::pair<std::int64_t, double>> all;
    std::int64_t t = 1000;
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<double> u(0, 100);
    for (int i = 0; i < 400; ++i) {
        t += i == 200 ? 500000 : 3600 + (i % 3) * 10;
        const double x = u(rng);
        all.push_back({t, x});
        REQUIRE(vmaf_live_window_push(&w, t, x) == 0);
        std::vector<double> win;
        for (const auto& [ti, xi] : all)
            if (ti > t - 180000) win.push_back(xi);
        VmafLiveStats got;
        vmaf_live_window_stats(&w, &got);
        check_stats(got, brute(win, 5), std::size_t(i));
    }
    vmaf_live_window_free(&w);
}

TEST_CASE("windows: NaN is ignored by min and max, makes the means NaN", "[api][live]") {
    const double nan = std::nan("");
    VmafLiveWindow w;
    REQUIRE(vmaf_live_window_init(&w, 3, 0, 10) == 0);
    VmafLiveStats st;
    const std::vector<double> v = {nan, 40, nan, 30, 50, 60, nan, nan, nan};
    for (std::size_t i = 0; i < v.size(); ++i) {
        REQUIRE(vmaf_live_window_push(&w, std::int64_t(i), v[i]) == 0);
        vmaf_live_window_stats(&w, &st);
        const std::size_t lo = i >= 2 ? i - 2 : 0;
        check_stats(st, brute({v.begin() + std::ptrdiff_t(lo), v.begin() + std::ptrdiff_t(i + 1)}, 10), i);
    }
    CHECK(std::isnan(st.min));  // all three NaN
    vmaf_live_window_free(&w);
    VmafLiveWindow e;
    REQUIRE(vmaf_live_window_init(&e, 4, 0, 0) == 0);
    vmaf_live_window_stats(&e, &st);
    CHECK(st.count == 0);
    CHECK(std::isnan(st.mean));
    vmaf_live_window_free(&e);
    CHECK(vmaf_live_window_init(&e, 0, 0, 0) < 0);
}

TEST_CASE("windows: memory bounded by the window over a million frames", "[api][live]") {
    // the filter's memory over a long stream: rings, deques, treap nodes and partials
    // reach their size in the first window and stay there
    for (const bool frames : {true, false}) {
        VmafLiveWindow w;
        REQUIRE(vmaf_live_window_init(&w, frames ? 50 : 0, frames ? 0 : 2 * 25, 5) == 0);
        std::mt19937_64 rng(9);
        std::uniform_real_distribution<double> u(0, 100);
        std::size_t caps[5] = {};
        for (std::int64_t i = 0; i < 1000000; ++i) {
            const double x = i % 1000 < 500 ? u(rng) : 100.0 - double(i % 1000) / 10;  // noise, ramps
            REQUIRE(vmaf_live_window_push(&w, i, x) == 0);
            if (i == 10000) {
                const std::size_t c[5] = {w.values.cap, w.min_dq.cap, w.max_dq.cap, w.nodes_cap, w.sum.cap};
                std::copy(c, c + 5, caps);
            }
        }
        CHECK(w.values.count == 50);
        CHECK(w.values.cap == caps[0]);
        CHECK(w.min_dq.cap == caps[1]);
        CHECK(w.max_dq.cap == caps[2]);
        CHECK(w.nodes_cap == caps[3]);
        CHECK(w.sum.cap == caps[4]);
        CHECK(w.values.cap <= 128);
        CHECK(w.nodes_cap <= 128);
        CHECK(w.sum.cap <= 64);
        vmaf_live_window_free(&w);
    }
}

TEST_CASE("window= and pool= parsing", "[api][live]") {
    std::size_t frames;
    double secs;
    CHECK(vmaf_live_parse_window("50", &frames, &secs) == 0);
    CHECK(frames == 50);
    CHECK(secs == 0);
    CHECK(vmaf_live_parse_window("2s", &frames, &secs) == 0);
    CHECK(frames == 0);
    CHECK(secs == 2.0);
    CHECK(vmaf_live_parse_window("0.5s", &frames, &secs) == 0);
    CHECK(secs == 0.5);
    CHECK(vmaf_live_parse_window("1500ms", &frames, &secs) == 0);
    CHECK(secs == 1.5);
    for (const char* bad : {"", "0", "-3", "2m", "s", "0s", "abc", "2 s", "1e400s"})
        CHECK(vmaf_live_parse_window(bad, &frames, &secs) < 0);
    CHECK(vmaf_live_parse_pool("mean") == VMAF_CUDA_POOL_MEAN);
    CHECK(vmaf_live_parse_pool("harmonic_mean") == VMAF_CUDA_POOL_HARMONIC_MEAN);
    CHECK(vmaf_live_parse_pool("perc1") == VMAF_CUDA_POOL_PERC1);
    CHECK(vmaf_live_parse_pool("perc5") == VMAF_CUDA_POOL_PERC5);
    CHECK(vmaf_live_parse_pool("perc10") == VMAF_CUDA_POOL_PERC10);
    CHECK(vmaf_live_parse_pool("perc50") == -1);
    CHECK(vmaf_live_parse_pool("median") == -1);
    CHECK(std::string(vmaf_live_pool_name(VMAF_CUDA_POOL_PERC5)) == "perc5");
    CHECK(vmaf_live_pool_percentile(VMAF_CUDA_POOL_PERC10) == 10);
    CHECK(vmaf_live_pool_percentile(VMAF_CUDA_POOL_MAX) == 0);
    // every name the message lists parses
    std::string names = VMAF_LIVE_POOL_NAMES;
    std::size_t pos = 0;
    int count = 0;
    while (pos <= names.size()) {
        std::size_t end = names.find(", ", pos);
        if (end == std::string::npos) end = names.size();
        CHECK(vmaf_live_parse_pool(names.substr(pos, end - pos).c_str()) >= 0);
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
    VmafLiveBuf b{};
    vmaf_live_buf_json_string(&b, "a\"b\\c\n");
    CHECK(std::string(b.s) == "\"a\\\"b\\\\c\\u000a\"");
    vmaf_live_buf_free(&b);
}

TEST_CASE("live state: window metadata, NDJSON lines, SEI payload", "[api][live]") {
    const std::string tmp = std::filesystem::temp_directory_path().string();
    std::string templ = tmp + "/vmaf_cuda_live_testXXXXXX";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back(0);
    const int fd = mkstemp(buf.data());
    REQUIRE(fd >= 0);
    close(fd);
    const char* path = buf.data();
    const char* models[] = {"vmaf", "vmaf_v0.6.1neg"};
    VmafCudaLiveConfig cfg{};
    cfg.window = "3";
    cfg.window_log = 2;
    cfg.sei = 1;
    cfg.ndjson_path = path;
    cfg.precision = -1;
    cfg.pool = VMAF_CUDA_POOL_PERC5;
    cfg.tb_num = 1;
    cfg.tb_den = 25;
    cfg.nb_models = 2;
    cfg.model_names = models;
    VmafCudaLive* l = nullptr;
    char err[256] = "";
    REQUIRE(vmaf_cuda_live_open(&l, &cfg, err, sizeof err) == 0);
    CHECK(vmaf_cuda_live_active(l));

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
        const VmafLiveStats want = brute(w, 5);
        CHECK(meta["lavfi.vmaf.window.frames"] == std::to_string(w.size()));
        CHECK(same(std::strtod(meta["lavfi.vmaf.window.mean"].c_str(), nullptr), want.mean));
        CHECK(same(std::strtod(meta["lavfi.vmaf.window.min"].c_str(), nullptr), want.min));
        CHECK(same(std::strtod(meta["lavfi.vmaf.window.perc5"].c_str(), nullptr), want.perc));
        CHECK(meta["lavfi.vmaf.window.vmaf.mean"] == meta["lavfi.vmaf.window.mean"]);
        CHECK(meta.count("lavfi.vmaf.window.vmaf_v0.6.1neg.harmonic_mean") == 1);
        // SEI: our UUID, then JSON
        REQUIRE(out.sei_size > 16);
        CHECK(std::memcmp(out.sei, vmaf_cuda_live_sei_uuid, 16) == 0);
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
    std::remove(path);
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
    CHECK(vmaf_cuda_live_open(&l, &cfg, err, sizeof err) < 0);
    CHECK(std::string(err).find("window '2x'") != std::string::npos);
    cfg.window = nullptr;
    CHECK(vmaf_cuda_live_open(&l, &cfg, err, sizeof err) < 0);
    CHECK(std::string(err).find("needs a window") != std::string::npos);
    // an NDJSON path that cannot be opened fails at the first line, with a message
    cfg.window_log = 0;
    const std::string missing = tmp + "/vmaf_cuda_live_no_such_dir/x.ndjson";
    cfg.ndjson_path = missing.c_str();
    REQUIRE(vmaf_cuda_live_open(&l, &cfg, err, sizeof err) == 0);
    VmafCudaFrameScores fs{0, 3, names, rows[0].data()};
    VmafCudaLiveFrame out;
    CHECK(vmaf_cuda_live_frame(l, &fs, 0, 1, &out) == VMAF_LIVE_EOUTPUT);
    CHECK(std::string(vmaf_cuda_live_error(l)).find("cannot open the NDJSON log") != std::string::npos);
    CHECK(out.sei_size > 16);  // the frame's data is still there
    vmaf_cuda_live_close(l);
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

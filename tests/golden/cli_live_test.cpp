// SPDX-License-Identifier: BSD-2-Clause-Patent
// Suite `golden`: live QA through the vmaf-cuda CLI (--ndjson, --window, --window-log,
// --pool, --fps), the library's vmaf_cuda_live_*() as the filter has it. Frame lines equal
// the JSON log of the same run at precision max (itself equal to libvmaf's golden values,
// cli_test.cpp); window lines are recomputed here, their means with Python's math.fsum
// (the definition the library follows); the pooled line equals the log's pooled block, its
// percentile the nearest rank of the golden scores. tests/filter/live_test.py compares the
// CLI's NDJSON with the filter's byte for byte.

#include "cli_util.h"
#include "golden_util.h"

#include "catch.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <pty.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace vmaf_cuda_test;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string read_text(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}

/// Nearest rank: the value at rank max(1, ceil(p * n / 100)) of the values sorted.
double nearest_rank(std::vector<double> v, unsigned p) {
    std::sort(v.begin(), v.end());
    const std::size_t rank = std::max<std::size_t>(1, (p * v.size() + 99) / 100);
    return v[rank - 1];
}

/// For each window (a list of scores): [math.fsum(w) / n, n / math.fsum(1 / (v + 1)) - 1],
/// computed by Python (the definition of the window values), read back exactly.
std::vector<std::pair<double, double>> python_means(const std::vector<std::vector<double>>& wins,
                                                    const fs::path& dir) {
    const fs::path in = dir / "windows.json", out = dir / "means.json";
    std::ofstream(in) << json(wins).dump();
    const std::string cmd =
        "python3 -c 'import json, math, sys\n"
        "w = json.load(open(sys.argv[1]))\n"
        "r = [[math.fsum(v) / len(v), len(v) / math.fsum(1.0 / (x + 1.0) for x in v) - 1.0] for v in w]\n"
        "open(sys.argv[2], \"w\").write(json.dumps([[x.hex() for x in p] for p in r]))' " +
        q(in) + " " + q(out);
    REQUIRE(std::system(cmd.c_str()) == 0);
    std::ifstream o(out);
    const json j = json::parse(o);
    std::vector<std::pair<double, double>> r;
    for (const auto& p : j)  // float.hex(): exact
        r.push_back({std::strtod(p[0].get<std::string>().c_str(), nullptr),
                     std::strtod(p[1].get<std::string>().c_str(), nullptr)});
    return r;
}

GoldenCase bbb() {
    const GoldenCase c = find_case("bbb_854x480_120f_8bit");
    REQUIRE(!c.name.empty());
    return c;
}

} // namespace

TEST_CASE("CLI NDJSON: frame lines equal the JSON log, windows equal math.fsum's, the pooled "
          "line the log's, --pool perc5 the nearest rank",
          "[golden][cli][live]") {
    const fs::path dir = tmp_dir() / "live";
    fs::create_directories(dir);
    const GoldenCase c = bbb();
    const fs::path log = dir / "log.json", nd = dir / "live.ndjson";
    const Proc p = run(case_args(c) + " --backend " + test_backend() + " --fps 24 --precision max"
                       " --json -o " + q(log) + " --ndjson " + q(nd) +
                       " --window 10 --window-log 7 --pool perc5");
    INFO(p.output);
    REQUIRE(exit_code(p) == 0);
    std::ifstream li(log);
    const json jl = json::parse(li);
    const auto& frames = jl.at("frames");
    REQUIRE(frames.size() == c.frames);
    std::vector<json> docs;
    const std::vector<std::string> text = lines_of(read_text(nd));
    for (const std::string& l : text) docs.push_back(json::parse(l));

    std::vector<double> vmaf;
    std::size_t f = 0;
    std::vector<std::vector<double>> wins;
    std::vector<json> win_lines;
    for (std::size_t i = 0; i < docs.size(); ++i) {
        const json& d = docs[i];
        INFO("line " << i << ": " << text[i].substr(0, 200));
        if (d.at("type") == "frame") {
            REQUIRE(f < frames.size());
            CHECK(d.at("frameNum") == f);
            char pts[32];
            std::snprintf(pts, sizeof pts, "\"pts_time\":%.6f,", double(f) / 24);
            CHECK(text[i].find(pts) != std::string::npos);
            // the log's metrics, in the log's order, the same doubles
            const json& want = frames[f].at("metrics");
            const json& got = d.at("metrics");
            REQUIRE(got.size() == want.size());
            auto w = want.begin();
            for (auto g = got.begin(); g != got.end(); ++g, ++w) {
                CHECK(g.key() == w.key());
                CHECK(g.value().get<double>() == w.value().get<double>());
            }
            vmaf.push_back(want.at("vmaf").get<double>());
            ++f;
            if (f % 7 == 0) {
                const std::size_t lo = f > 10 ? f - 10 : 0;
                wins.emplace_back(vmaf.begin() + std::ptrdiff_t(lo), vmaf.end());
            }
        } else if (d.at("type") == "window") {
            REQUIRE(f % 7 == 0);
            CHECK(d.at("frameNum") == f - 1);
            win_lines.push_back(d);
        } else {
            CHECK(i + 1 == docs.size());  // the pooled line comes last
            CHECK(d.at("type") == "pooled");
        }
    }
    CHECK(f == c.frames);
    REQUIRE(win_lines.size() == c.frames / 7);
    REQUIRE(wins.size() == win_lines.size());
    const auto means = python_means(wins, dir);
    for (std::size_t k = 0; k < wins.size(); ++k) {
        INFO("window line " << k);
        const json& w = win_lines[k].at("window").at("vmaf");
        CHECK(w.at("frames") == wins[k].size());
        CHECK(w.at("min").get<double>() == *std::min_element(wins[k].begin(), wins[k].end()));
        CHECK(w.at("mean").get<double>() == means[k].first);
        CHECK(w.at("harmonic_mean").get<double>() == means[k].second);
        CHECK(w.at("perc5").get<double>() == nearest_rank(wins[k], 5));
        CHECK(w.size() == 5);
    }
    // the pooled line: the log's pooled block, and the percentile of each metric
    const json& pooled = docs.back();
    CHECK(pooled.at("frames") == c.frames);
    const json& lp = jl.at("pooled_metrics");
    REQUIRE(pooled.at("pooled_metrics").size() == lp.size());
    for (auto m = lp.begin(); m != lp.end(); ++m) {
        INFO(m.key());
        const json& got = pooled.at("pooled_metrics").at(m.key());
        for (const char* k : {"min", "max", "mean", "harmonic_mean"})
            CHECK(got.at(k).get<double>() == m.value().at(k).get<double>());
        std::vector<double> v;
        for (const auto& fr : frames) v.push_back(fr.at("metrics").at(m.key()).get<double>());
        CHECK(got.at("perc5").get<double>() == nearest_rank(v, 5));
    }
    // --pool perc5: the score line is the nearest rank of libvmaf's per-frame scores
    const GoldenTable g = read_golden_csv(golden_dir() + "/" + c.name + ".csv");
    std::vector<double> golden;
    for (std::size_t k = 0; k < g.columns.size(); ++k)
        if (api_name(g.columns[k]) == "vmaf")
            for (const auto& row : g.rows) golden.push_back(row[k]);
    REQUIRE(golden.size() == c.frames);
    char line[64];
    std::snprintf(line, sizeof line, "VMAF score: %f\n", nearest_rank(golden, 5));
    CHECK(has(p, line));
    CHECK(pooled.at("pooled_metrics").at("vmaf").at("perc5").get<double>() == nearest_rank(golden, 5));
    fs::remove_all(dir);
}

TEST_CASE("CLI NDJSON: duration windows, frames without a rate, score lines per model",
          "[golden][cli][live]") {
    const fs::path dir = tmp_dir() / "live2";
    fs::create_directories(dir);
    const GoldenCase c = find_case("testsrc2_320x240_8bit");
    REQUIRE(!c.name.empty());
    SECTION("--window 200ms at --fps 25 holds 5 frames; the pool's max in the window") {
        const fs::path nd = dir / "d.ndjson";
        const Proc p = run(case_args(c) + " --backend cpu --fps 25 --ndjson " + q(nd) +
                           " --window 200ms --window-log 1 --pool max");
        INFO(p.output);
        REQUIRE(exit_code(p) == 0);
        std::size_t k = 0;
        for (const std::string& l : lines_of(read_text(nd))) {
            const json d = json::parse(l);
            if (d.at("type") != "window") continue;
            CHECK(d.at("window").at("vmaf").at("frames") == std::min<std::size_t>(++k, 5));
            CHECK(d.at("window").at("vmaf").contains("max"));
        }
        CHECK(k == c.frames);
    }
    SECTION("raw input without --fps: pts_time null; several models and a collection") {
        const fs::path nd = dir / "n.ndjson";
        const Proc p = run(case_args(c) + " --backend cpu --ndjson " + q(nd) +
                           " -m version=vmaf_v0.6.1 -m version=vmaf_b_v0.6.3 --pool harmonic_mean"
                           " --precision max --json -o " + q(dir / "n.json"));
        INFO(p.output);
        REQUIRE(exit_code(p) == 0);
        const auto l = lines_of(read_text(nd));
        REQUIRE(l.size() == c.frames + 1);
        CHECK(json::parse(l[0]).at("pts_time").is_null());
        // stdout: the library's summary, pooled with --pool, from the log's pooled block
        std::ifstream li(dir / "n.json");
        const json lp = json::parse(li).at("pooled_metrics");
        char want[512];
        std::snprintf(want, sizeof want,
                      "VMAF score: %f\nVMAF score: %f\nvmaf_b_v0.6.3: %f, ci.p95: [%f, %f], stddev: %f\n",
                      lp["vmaf"]["harmonic_mean"].get<double>(),
                      lp["vmaf_b_v0.6.3"]["harmonic_mean"].get<double>(),
                      lp["vmaf_b_v0.6.3_bagging"]["harmonic_mean"].get<double>(),
                      lp["vmaf_b_v0.6.3_ci_p95_lo"]["harmonic_mean"].get<double>(),
                      lp["vmaf_b_v0.6.3_ci_p95_hi"]["harmonic_mean"].get<double>(),
                      lp["vmaf_b_v0.6.3_stddev"]["harmonic_mean"].get<double>());
        const Proc out = run(case_args(c) + " --backend cpu -m version=vmaf_v0.6.1"
                             " -m version=vmaf_b_v0.6.3 --pool harmonic_mean",
                             "", " 2>/dev/null");
        CHECK(out.output == want);
    }
    fs::remove_all(dir);
}

TEST_CASE("CLI NDJSON on standard output from standard input; ladders; errors",
          "[golden][cli][live]") {
    const fs::path dir = tmp_dir() / "live3";
    fs::create_directories(dir);
    const GoldenCase c = find_case("testsrc2_320x240_8bit");
    REQUIRE(!c.name.empty());
    const std::string raw = " -w 320 -h 240 --backend cpu --precision max";
    SECTION("--ndjson - : stdout holds JSON lines only, the score line goes to stderr") {
        const fs::path err = dir / "err.txt";
        const Proc p = run("-r '" + c.ref + "' -d -" + raw + " --ndjson - --window 4 --window-log 5",
                           "cat '" + c.dist + "' | ", " 2>" + q(err));
        REQUIRE(exit_code(p) == 0);
        const auto l = lines_of(p.output);
        REQUIRE(l.size() == c.frames + 2 + 1);
        for (const std::string& s : l) CHECK_NOTHROW(json::parse(s));
        CHECK(json::parse(l.back()).at("type") == "pooled");
        CHECK(read_text(err).find("VMAF score: ") != std::string::npos);
        // the same lines as a file
        const fs::path nd = dir / "same.ndjson";
        REQUIRE(exit_code(run("-r '" + c.ref + "' -d '" + c.dist + "'" + raw + " --ndjson " + q(nd) +
                              " --window 4 --window-log 5")) == 0);
        CHECK(read_text(nd) == p.output);
    }
    SECTION("a ladder's NDJSON streams equal each rendition's own run byte for byte") {
        const Proc p = run("-r '" + c.ref + "' -d '" + c.dist + "' -d '" + c.ref + "'" + raw +
                           " --ndjson " + q(dir / "l.%d.ndjson") + " --window 3 --window-log 2");
        INFO(p.output);
        REQUIRE(exit_code(p) == 0);
        const char* d[2] = {c.dist.c_str(), c.ref.c_str()};
        for (int k = 0; k < 2; ++k) {
            const fs::path own = dir / ("own" + std::to_string(k) + ".ndjson");
            REQUIRE(exit_code(run("-r '" + c.ref + "' -d '" + d[k] + "'" + raw + " --ndjson " +
                                  q(own) + " --window 3 --window-log 2")) == 0);
            CHECK(read_text(dir / ("l." + std::to_string(k) + ".ndjson")) == read_text(own));
        }
        const Proc no_d = run("-r '" + c.ref + "' -d '" + c.dist + "' -d '" + c.ref + "'" + raw +
                              " --ndjson " + q(dir / "l.ndjson"));
        CHECK(exit_code(no_d) == 1);
        CHECK(has(no_d, "the NDJSON path must contain %d"));
    }
    SECTION("errors name the option") {
        const std::string in = case_args(c) + " --backend cpu";
        for (const auto& [args, msg] : std::vector<std::pair<std::string, std::string>>{
                 {" --ndjson x.ndjson --window 3x --window-log 1", "error: --window '3x' is neither"},
                 {" --ndjson x.ndjson --window-log 5", "error: --window-log 5 writes window lines"},
                 {" --ndjson x.ndjson --window 10", "give --window-log N"},
                 {" --ndjson x.ndjson --window 2s --window-log 1", "--window 2s is a duration: it needs the frame rate"},
                 {" --pool median", "error: --pool 'median' is not one of mean, harmonic_mean, min, max, perc1, perc5, perc10"},
                 {" --fps 0", "error: --fps '0' is not a frame rate"},
                 {" --ndjson '" + c.dist + "'", "is the input"},
                 {" --json -o - --ndjson pipe:1", "error: -o \"-\" and --ndjson \"pipe:1\" are the same output"},
                 {" --json -o x.json --ndjson x.json", "are the same output"}}) {
            const Proc p = run(in + args, "cd " + q(dir) + " && ");
            INFO(args << "\n" << p.output);
            CHECK(exit_code(p) == 1);
            CHECK(has(p, msg));
            CHECK(!has(p, "VMAF score"));
        }
        CHECK(!fs::exists(dir / "x.ndjson"));
        CHECK(!fs::exists(dir / "x.json"));
    }
    SECTION("an NDJSON stream that cannot be written: the error, the score line, exit status 1") {
        const Proc p = run(case_args(c) + " --backend cpu --ndjson /dev/full");
        INFO(p.output);
        CHECK(exit_code(p) == 1);
        CHECK(has(p, "error: writing the NDJSON log '/dev/full' failed: No space left on device"));
        CHECK(has(p, "VMAF score: "));
    }
    fs::remove_all(dir);
}

TEST_CASE("CLI NDJSON: a run that writes no line removes an older file at its path, as -o",
          "[golden][cli][live][stale]") {
    const fs::path dir = tmp_dir() / "live4";
    fs::create_directories(dir);
    const GoldenCase c = find_case("testsrc2_320x240_8bit_3f");
    REQUIRE(!c.name.empty());
    const std::string raw = " -w 320 -h 240 --backend cpu";
    SECTION("no frames to score") {
        const fs::path old = dir / "old.ndjson";
        std::ofstream(old) << "{\"an\": \"older stream\"}\n";
        const Proc p = run("-r '" + c.ref + "' -d /dev/null" + raw + " --ndjson " + q(old));
        INFO(p.output);
        CHECK(exit_code(p) == 1);
        CHECK(has(p, "error: removed the older file at \"" + old.string() +
                     "\" so that it is not taken for this run's log"));
        CHECK(!fs::exists(old));
    }
    SECTION("a ladder's empty rendition: its older stream only; a FIFO is not removed") {
        for (const char* f : {"l0.ndjson", "l1.ndjson"}) std::ofstream(dir / f) << "older\n";
        REQUIRE(::mkfifo((dir / "l2.ndjson").c_str(), 0600) == 0);
        const Proc p = run("-r '" + c.ref + "' -d '" + c.dist + "' -d /dev/null -d /dev/null" + raw +
                           " --ndjson " + q(dir / "l%d.ndjson"));
        INFO(p.output);
        CHECK(exit_code(p) == 1);
        CHECK(has(p, "error: rendition 1: removed the older file at \"" + (dir / "l1.ndjson").string() + "\""));
        CHECK(lines_of(read_text(dir / "l0.ndjson")).size() == c.frames + 1); // this run's
        CHECK(!fs::exists(dir / "l1.ndjson"));
        CHECK(fs::is_fifo(dir / "l2.ndjson"));
        CHECK(!has(p, "l2.ndjson\" so that"));
    }
    fs::remove_all(dir);
}

namespace {

/// Runs the CLI with `args`, its stderr (and stdout, stdin) on a pseudo-terminal of its
/// own: what a user at a terminal sees, escape sequences included.
Proc run_on_terminal(const std::vector<std::string>& args) {
    Proc p{-1, {}};
    int master = -1;
    const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
    if (pid < 0) return p;
    if (pid == 0) {
        std::vector<char*> argv;
        std::string cli = cli_path();
        argv.push_back(cli.data());
        std::vector<std::string> copy = args;
        for (auto& a : copy) argv.push_back(a.data());
        argv.push_back(nullptr);
        execv(cli.c_str(), argv.data());
        _exit(127);
    }
    char buf[4096];
    for (;;) {
        const ssize_t n = read(master, buf, sizeof buf);
        if (n <= 0) break; // EIO once the child's side is closed
        p.output.append(buf, std::size_t(n));
    }
    close(master);
    waitpid(pid, &p.status, 0);
    return p;
}

} // namespace

TEST_CASE("CLI progress on a terminal: frames scored and frames/s, cleared before the summary",
          "[golden][cli][progress]") {
    const GoldenCase c = find_case("bbb_854x480_120f_8bit");
    REQUIRE(!c.name.empty());
    // one worker thread, so that the run outlasts a few redraws (250 ms)
    auto args_of = [](const GoldenCase& k) {
        return std::vector<std::string>{
            "-r", k.ref, "-d", k.dist, "-w", std::to_string(k.width), "-h",
            std::to_string(k.height), "-p", std::to_string(k.chroma), "-b",
            std::to_string(k.bpc), "--threads", "1", "--backend", test_backend()};
    };
    const Proc t = run_on_terminal(args_of(c));
    INFO(t.output);
    REQUIRE(exit_code(t) == 0);
    // "\r<N> frames scored, <F> frames/s\033[K", N rising up to at most 120
    std::vector<long> shown;
    for (std::size_t at = 0; (at = t.output.find('\r', at)) != std::string::npos; ++at) {
        long n = 0;
        double fps = 0;
        char word[16] = {};
        if (std::sscanf(t.output.c_str() + at + 1, "%ld frame%*[s] scored, %lf frames/%1s", &n,
                        &fps, word) == 3) {
            CHECK(fps > 0);
            shown.push_back(n);
        }
    }
    REQUIRE(!shown.empty());
    CHECK(std::is_sorted(shown.begin(), shown.end()));
    CHECK(shown.front() >= 1);
    CHECK(shown.back() <= 120);
    // the line is cleared before the summary: "\r\033[K120 frames in"
    CHECK(t.output.find("\r\033[K120 frames in ") != std::string::npos);
    CHECK(t.output.find("VMAF score: ") != std::string::npos);

    // not a terminal (a pipe, a file): no progress; -q: none on a terminal either
    const GoldenCase s = find_case("testsrc2_320x240_8bit");
    REQUIRE(!s.name.empty());
    const Proc piped = run(case_args(s) + " --threads 1 --backend " + test_backend());
    REQUIRE(exit_code(piped) == 0);
    CHECK(piped.output.find("VMAF score: ") != std::string::npos);
    CHECK(piped.output.find('\r') == std::string::npos);
    std::vector<std::string> quiet = args_of(s);
    quiet.push_back("-q");
    const Proc q = run_on_terminal(quiet);
    REQUIRE(exit_code(q) == 0);
    CHECK(q.output.find("frames scored") == std::string::npos);
    // the NDJSON stream on the same terminal: its lines alone, no progress among them
    std::vector<std::string> nd = args_of(s);
    nd.insert(nd.end(), {"--ndjson", "-"});
    const Proc n = run_on_terminal(nd);
    REQUIRE(exit_code(n) == 0);
    CHECK(n.output.find("{\"type\":\"frame\"") != std::string::npos);
    CHECK(n.output.find("frames scored") == std::string::npos);
}

TEST_CASE("CLI --sync auto: the offset found, the leading frames skipped, the log as by hand",
          "[golden][cli][sync]") {
    const GoldenCase c = find_case("bbb_854x480_120f_8bit");
    REQUIRE(!c.name.empty());
    const fs::path dir = tmp_dir();
    const std::string base = case_args(c) + " --fps 24 --backend " + test_backend();
    // (skip given, frames skipped by the offset on the other input, offset in seconds)
    struct Case { std::string skip, other; long frames; double offset; std::string said; };
    const Case cases[] = {
        {"--frame_skip_dist 7", "--frame_skip_ref", 7, -7.0 / 24,
         "vmaf-cuda: sync: the main is ahead of the reference by 0.292 s (offset -0.292 s; "},
        {"--frame_skip_ref 5", "--frame_skip_dist", 5, 5.0 / 24,
         "vmaf-cuda: sync: the main is behind the reference by 0.208 s (offset +0.208 s; "},
        {"--frame_skip_dist 1", "--frame_skip_ref", 1, -1.0 / 24,
         "vmaf-cuda: sync: the main is ahead of the reference by 0.042 s (offset -0.042 s; "},
        {"", "", 0, 0.0, "vmaf-cuda: sync: the inputs are aligned (offset +0.000 s; "},
    };
    for (const Case& k : cases) {
        INFO("skip '" << k.skip << "'");
        const fs::path got = dir / "sync.json", want = dir / "hand.json";
        const Proc p = run(base + " " + k.skip + " --sync auto --sync_window 1s --json -o " + q(got));
        INFO(p.output);
        REQUIRE(exit_code(p) == 0);
        CHECK(has(p, k.said));
        const std::string hand = k.frames ? " " + k.other + " " + std::to_string(k.frames) : "";
        const Proc h = run(base + " " + k.skip + hand + " --json -o " + q(want));
        REQUIRE(exit_code(h) == 0);
        const json g = json::parse(read_text(got)), w = json::parse(read_text(want));
        CHECK(g.at("sync_offset").get<double>() == std::stod(([&] {
                  char b[32];
                  std::snprintf(b, sizeof b, "%.6f", k.offset);
                  return std::string(b);
              })()));
        CHECK(w.find("sync_offset") == w.end());
        REQUIRE(g.at("frames").size() == w.at("frames").size());
        CHECK(g["frames"] == w["frames"]);
        CHECK(g["pooled_metrics"] == w["pooled_metrics"]);
    }
    // what it cannot do, said before any frame
    const Proc in = run("-r - -d '" + c.dist + "' -w 854 -h 480 -p 420 -b 8 --fps 24 --sync auto",
                        "cat '" + c.ref + "' | ");
    CHECK(exit_code(in) == 1);
    CHECK(has(in, "--sync auto reads the first seconds of \"-\" twice: it must be a regular file"));
    const Proc nofps = run(case_args(c) + " --sync auto");
    CHECK(exit_code(nofps) == 1);
    CHECK(has(nofps, "--sync auto needs the frame rate: from a Y4M header, or --fps for raw input"));
    const Proc lad = run(case_args(c) + " -d '" + c.dist + "' --fps 24 --sync auto");
    CHECK(exit_code(lad) == 1);
    CHECK(has(lad, "--sync auto aligns one distorted input with the reference"));
    const Proc win = run(case_args(c) + " --fps 24 --sync auto --sync_window 12");
    CHECK(exit_code(win) == 1);
    CHECK(has(win, "--sync_window '12' is not a duration from 100ms to 300s"));
    const Proc mode = run(case_args(c) + " --fps 24 --sync sometimes");
    CHECK(exit_code(mode) != 0);
}

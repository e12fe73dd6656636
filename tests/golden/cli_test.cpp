// SPDX-License-Identifier: BSD-2-Clause-Patent
// Suite `golden`: the vmaf-cuda CLI on every golden case with --json --precision max;
// the log is parsed back (nlohmann-json) and compared with the golden doubles. Also the
// CLI's error messages for bad input.

#include "cli_util.h"
#include "golden_util.h"

#include "catch.hpp"
#include <cmath>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <sys/stat.h>
#include <sys/wait.h>

using namespace vmaf_cuda_test;
namespace fs = std::filesystem;

namespace {

/// Checks every frame's golden columns (and the pooled vmaf, when the table has it)
/// against a --json --precision max log.
void check_log_equals_golden(const fs::path& log, const GoldenTable& g) {
    std::ifstream in(log);
    REQUIRE(in);
    const nlohmann::json j = nlohmann::json::parse(in);
    const auto& frames = j.at("frames");
    REQUIRE(frames.size() == g.rows.size());
    std::size_t bad = 0, checked = 0;
    std::string first;
    for (std::size_t f = 0; f < g.rows.size(); ++f) {
        REQUIRE(frames[f].at("frameNum").get<unsigned>() == f);
        const auto& m = frames[f].at("metrics");
        for (std::size_t k = 0; k < g.columns.size(); ++k) {
            const std::string name = api_name(g.columns[k]);
            REQUIRE(m.contains(name));
            const double v = m.at(name).get<double>();
            ++checked;
            if (!same_double(v, g.rows[f][k]) && !bad++)
                first = "frame " + std::to_string(f) + " " + name + ": " + fmt17(v) + " vs " +
                        fmt17(g.rows[f][k]);
        }
    }
    INFO(bad << " of " << checked << " differ; first: " << first);
    CHECK(bad == 0);
    if (g.pooled.count("mean")) {
        const auto& pv = j.at("pooled_metrics").at("vmaf");
        for (const char* k : {"mean", "harmonic_mean", "min", "max"}) {
            INFO(k);
            CHECK(same_double(pv.at(k).get<double>(), g.pooled.at(k)));
        }
    }
}

/// Writes the frames of the 4:2:0 file `in` (case c) in another layout: 4:2:2 or 4:4:4
/// (each chroma sample repeated to the larger plane, ceil-sized at odd sizes), 4:0:0
/// (luma alone) or 4:2:0 itself; raw YUV, or Y4M when `y4m`. Luma stays the case's.
void write_layout(const GoldenCase& c, const std::string& in, const fs::path& out,
                  unsigned chroma, bool y4m) {
    const std::vector<YuvFrame> frames = read_yuv_frames(c, in);
    REQUIRE(frames.size() == c.frames);
    const unsigned cw = chroma == 400 ? 0 : chroma == 444 ? c.width : (c.width + 1) / 2;
    const unsigned ch = chroma == 400 ? 0 : chroma == 420 ? (c.height + 1) / 2 : c.height;
    std::ofstream o(out, std::ios::binary);
    if (y4m) {
        const std::string bits = c.bpc > 8 ? std::to_string(c.bpc) : "";
        o << "YUV4MPEG2 W" << c.width << " H" << c.height << " F25:1 Ip A1:1 C"
          << (chroma == 400 ? "mono" + bits : std::to_string(chroma) + (bits.empty() ? "" : "p" + bits))
          << "\n";
    }
    for (const YuvFrame& f : frames) {
        if (y4m) o << "FRAME\n";
        o.write(reinterpret_cast<const char*>(f.y.data()), std::streamsize(f.y.size()));
        for (unsigned p = 1; p <= 2 && cw; ++p)
            for (unsigned y = 0; y < ch; ++y)
                for (unsigned x = 0; x < cw; ++x) {
                    const unsigned sx = chroma == 444 ? x / 2 : x, sy = chroma == 420 ? y : y / 2;
                    o.write(reinterpret_cast<const char*>(f.plane(p) + sy * f.pitch(p) + sx * f.bps),
                            std::streamsize(f.bps));
                }
    }
    REQUIRE(o.good());
}

} // namespace

TEST_CASE("CLI --json logs equal the golden values on every case", "[golden][cli]") {
    const fs::path dir = tmp_dir();
    for (const GoldenCase& c : golden_cases()) {
        DYNAMIC_SECTION(c.name) {
            const fs::path log = dir / (c.name + ".json");
            const Proc p = run(case_args(c) + " --backend " + test_backend() +
                               " --json --precision max -o '" + log.string() + "'");
            INFO(p.output);
            REQUIRE(p.status == 0);
            const GoldenTable g = read_golden_csv(golden_dir() + "/" + c.name + ".csv");
            // The printed score is the pooled mean with %f.
            char line[64];
            std::snprintf(line, sizeof line, "VMAF score: %f", g.pooled.at("mean"));
            CHECK(p.output.find(line) != std::string::npos);

            std::ifstream in(log);
            REQUIRE(in);
            const nlohmann::json j = nlohmann::json::parse(in);
            REQUIRE(j.contains("version"));
            REQUIRE(j.contains("fps"));
            REQUIRE(j.contains("frames"));
            REQUIRE(j.contains("pooled_metrics"));
            REQUIRE(j.contains("aggregate_metrics"));
            check_log_equals_golden(log, g);
        }
    }
    fs::remove_all(dir);
}

TEST_CASE("CLI logs in libvmaf's XML, CSV and SUB layouts", "[golden][cli]") {
    const fs::path dir = tmp_dir();
    GoldenCase c;
    for (const auto& k : golden_cases())
        if (k.name == "testsrc2_320x240_8bit_3f") c = k;
    REQUIRE(!c.name.empty());
    const fs::path x = dir / "log.xml", v = dir / "log.csv", s = dir / "log.sub";
    REQUIRE(run(case_args(c) + " --backend cpu --xml -o '" + x.string() + "'").status == 0);
    REQUIRE(run(case_args(c) + " --backend cpu --csv -o '" + v.string() + "'").status == 0);
    REQUIRE(run(case_args(c) + " --backend cpu --sub -o '" + s.string() + "'").status == 0);
    std::ifstream xi(x), vi(v), si(s);
    std::string l;
    std::getline(xi, l);
    CHECK(l.rfind("<VMAF version=", 0) == 0);
    std::getline(vi, l);
    CHECK(l.rfind("Frame,", 0) == 0);
    CHECK(l.find("vmaf") != std::string::npos);
    std::getline(si, l);
    CHECK(l.rfind("{0}{1}", 0) == 0);
    fs::remove_all(dir);
}

TEST_CASE("CLI errors name the problem", "[golden][cli]") {
    const fs::path dir = tmp_dir();
    GoldenCase c;
    for (const auto& k : golden_cases())
        if (k.name == "testsrc2_320x240_8bit_3f") c = k;
    REQUIRE(!c.name.empty());

    SECTION("size that does not match the file") {
        const Proc p = run("-r '" + c.ref + "' -d '" + c.dist + "' -w 321 -h 240 -p 420 -b 8");
        INFO(p.output);
        CHECK(p.status != 0);
        CHECK(p.output.find("not a whole number") != std::string::npos);
    }
    SECTION("short file") {
        const fs::path shortf = dir / "short.yuv";
        {
            std::ifstream in(c.dist, std::ios::binary);
            std::vector<char> b(320 * 240 * 3 / 2 * 2);
            in.read(b.data(), std::streamsize(b.size()));
            std::ofstream(shortf, std::ios::binary).write(b.data(), std::streamsize(b.size()));
        }
        // as libvmaf's vmaf: the common frames are scored, with a warning
        const fs::path log = dir / "short.json";
        const Proc p = run("-r '" + c.ref + "' -d '" + shortf.string() +
                           "' -w 320 -h 240 -p 420 -b 8 --backend cpu --json -o '" + log.string() + "'");
        INFO(p.output);
        CHECK(p.status == 0);
        CHECK(p.output.find("warning: \"" + shortf.string() + "\" ended before \"" + c.ref +
                            "\": scoring the 2 frames both have") != std::string::npos);
        std::ifstream in(log);
        REQUIRE(in);
        CHECK(nlohmann::json::parse(in).at("frames").size() == 2);
    }
    SECTION("unreadable model") {
        const Proc p = run(case_args(c) + " -m path=" + (dir / "missing.json").string());
        INFO(p.output);
        CHECK(p.status != 0);
        CHECK(p.output.find("missing.json") != std::string::npos);
    }
    SECTION("unknown model version") {
        const Proc p = run(case_args(c) + " -m version=vmaf_v9");
        INFO(p.output);
        CHECK(p.status != 0);
        CHECK(p.output.find("vmaf_v9") != std::string::npos);
    }
    SECTION("--feature as vmaf parses it: NAME=opt=val:opt=val") {
        const Proc p = run(case_args(c) + " --backend cpu --feature adm=adm_enhn_gain_limit");
        INFO(p.output);
        CHECK(p.status != 0);
        CHECK(p.output.find("Problem parsing feature \"adm\", bad option string "
                            "\"adm_enhn_gain_limit\"") != std::string::npos);
    }
    SECTION("--no_prediction needs a --feature") {
        const Proc p = run(case_args(c) + " --backend cpu -n");
        INFO(p.output);
        CHECK(p.status != 0);
        CHECK(p.output.find("--no_prediction") != std::string::npos);
    }
    SECTION("bad Y4M header") {
        const fs::path y = dir / "bad.y4m";
        std::ofstream(y) << "YUV4MPEG2 Wabc H240 F25:1 C420\n";
        const Proc p = run("-r '" + y.string() + "' -d '" + y.string() + "'");
        INFO(p.output);
        CHECK(p.status != 0);
        CHECK(p.output.find("width 'abc'") != std::string::npos);
    }
    SECTION("bad --precision, before any frame is read") {
        const Proc p = run(case_args(c) + " --precision 6abc -o '" + (dir / "x.json").string() + "'");
        INFO(p.output);
        CHECK(p.status != 0);
        CHECK(p.output.find("--precision") != std::string::npos);
    }
    SECTION("missing file") {
        const Proc p = run("-r nothere.yuv -d nothere.yuv -w 320 -h 240");
        INFO(p.output);
        CHECK(p.status != 0);
        CHECK(p.output.find("nothere.yuv") != std::string::npos);
    }
    fs::remove_all(dir);
}

TEST_CASE("CLI options of libvmaf's vmaf: frame skips, features, no prediction, score lines",
          "[golden][cli]") {
    const fs::path dir = tmp_dir();
    GoldenCase c;
    for (const auto& k : golden_cases())
        if (k.name == "testsrc2_320x240_8bit_3f") c = k;
    REQUIRE(!c.name.empty());
    auto frames_of = [](const fs::path& log) {
        std::ifstream in(log);
        return nlohmann::json::parse(in).at("frames");
    };
    SECTION("--frame_skip_ref/--frame_skip_dist, --cpumask and -q") {
        const fs::path log = dir / "skip.json";
        const Proc p = run(case_args(c) + " --backend cpu --frame_skip_ref 1 --frame_skip_dist 1"
                           " --cpumask 0x38 -q --json -o '" + log.string() + "'");
        INFO(p.output);
        REQUIRE(p.status == 0);
        CHECK(frames_of(log).size() == 2);
        CHECK(p.output.find("vmaf_v0.6.1: ") == std::string::npos); // -q with -o, as vmaf
        CHECK(p.output.find("VMAF score: ") != std::string::npos);
    }
    SECTION("one score line per model, as vmaf prints them") {
        const Proc p = run(case_args(c) + " --backend cpu -m version=vmaf_v0.6.1"
                           " -m version=vmaf_v0.6.1neg:name=neg");
        INFO(p.output);
        REQUIRE(p.status == 0);
        const auto a = p.output.find("vmaf_v0.6.1: "), b = p.output.find("vmaf_v0.6.1neg: ");
        CHECK(a != std::string::npos);
        CHECK(b != std::string::npos);
        CHECK(a < b);
    }
    SECTION("--no_prediction --feature NAME=opt=val: features only") {
        const fs::path log = dir / "features.json";
        const Proc p = run(case_args(c) + " --backend cpu -n --feature adm=adm_enhn_gain_limit=1.0"
                           " --feature vif --json -o '" + log.string() + "'");
        INFO(p.output);
        REQUIRE(p.status == 0);
        const auto f = frames_of(log);
        REQUIRE(f.size() == 3);
        const auto& m = f[0].at("metrics");
        CHECK(m.contains("integer_adm2_egl_1"));
        CHECK(m.contains("integer_vif_scale0"));
        CHECK(!m.contains("vmaf"));
        CHECK(m.size() == 11);
        CHECK(p.output.find("VMAF score") == std::string::npos);
    }
    fs::remove_all(dir);
}

TEST_CASE("CLI reads the chroma planes of 4:2:0, 4:2:2, 4:4:4 and 4:0:0 input, raw and Y4M",
          "[golden][cli]") {
    // The golden 4:2:0 clips rewritten in each layout (their luma unchanged): a frame
    // read with a wrong chroma size would shift every later frame's luma, so the luma
    // features must still give the golden values, frame skips included.
    const fs::path dir = tmp_dir();
    for (const char* name : {"testsrc2_321x241_8bit", "testsrc2_320x240_10bit"}) {
        const GoldenCase c = find_case(name);
        REQUIRE(!c.name.empty());
        const GoldenTable g = read_golden_csv(golden_dir() + "/" + c.name + ".csv");
        for (unsigned chroma : {420u, 422u, 444u, 400u})
            for (bool y4m : {false, true}) {
                if (chroma == 400 && !y4m) continue; // raw -p is 420, 422 or 444, as vmaf's
                const std::string tag = std::to_string(chroma) + (y4m ? ".y4m" : ".yuv");
                DYNAMIC_SECTION(c.name << " as " << tag) {
                    const fs::path r = dir / ("ref_" + tag), d = dir / ("dist_" + tag);
                    write_layout(c, c.ref, r, chroma, y4m);
                    write_layout(c, c.dist, d, chroma, y4m);
                    const std::string in =
                        "-r '" + r.string() + "' -d '" + d.string() + "'" +
                        (y4m ? std::string() : " -w " + std::to_string(c.width) + " -h " +
                                                   std::to_string(c.height) + " -p " +
                                                   std::to_string(chroma) + " -b " +
                                                   std::to_string(c.bpc));
                    const fs::path log = dir / ("log_" + tag + ".json");
                    const Proc p = run(in + " --backend " + test_backend() +
                                       " --json --precision max -o '" + log.string() + "'");
                    INFO(p.output);
                    REQUIRE(p.status == 0);
                    check_log_equals_golden(log, g);

                    // skipping frames reads (and drops) whole frames, chroma included
                    const fs::path skip = dir / ("skip_" + tag + ".json"),
                                   skip420 = dir / ("skip420_" + tag + ".json");
                    const std::string opts = " --backend cpu --frame_skip_ref 2 --frame_skip_dist 1"
                                             " --frame_cnt 5 --json --precision max -o '";
                    REQUIRE(run(in + opts + skip.string() + "'").status == 0);
                    REQUIRE(run(case_args(c) + opts + skip420.string() + "'").status == 0);
                    std::ifstream a(skip), b(skip420);
                    const auto fa = nlohmann::json::parse(a).at("frames");
                    CHECK(fa.size() == 5);
                    CHECK(fa == nlohmann::json::parse(b).at("frames"));
                }
            }
    }
    SECTION("inputs of two subsamplings are refused, as libvmaf refuses them") {
        const GoldenCase c = find_case("testsrc2_320x240_8bit_3f");
        REQUIRE(!c.name.empty());
        const fs::path r = dir / "ref444.y4m", d = dir / "dist420.y4m";
        write_layout(c, c.ref, r, 444, true);
        write_layout(c, c.dist, d, 420, true);
        const Proc p = run("-r '" + r.string() + "' -d '" + d.string() + "' --backend cpu");
        INFO(p.output);
        CHECK(p.status != 0);
        CHECK(p.output.find("reference \"" + r.string() + "\" is 4:4:4 but distorted \"" +
                            d.string() + "\" is 4:2:0: chroma subsampling must match") !=
              std::string::npos);
    }
    fs::remove_all(dir);
}

// psnr's Cb/Cr and ciede through the CLI equal libvmaf's values
// (../shared/golden/libvmaf/*.companion.json). libvmaf's ciede of 4:2:0 pictures of odd
// height reads past its picture (see libvmaf_log_test.cpp): compared within 0.1 there.
TEST_CASE("CLI psnr and ciede of the chroma planes equal libvmaf's", "[golden][cli]") {
    const fs::path dir = tmp_dir();
    for (const GoldenCase& c : golden_cases()) {
        const std::string path = golden_dir() + "/libvmaf/" + c.name + ".companion.json";
        if (!fs::exists(path)) continue;
        DYNAMIC_SECTION(c.name) {
            std::ifstream gin(path);
            const nlohmann::json g = nlohmann::json::parse(gin);
            const fs::path log = dir / (c.name + ".chroma.json");
            const Proc p = run(case_args(c) + " --backend " + test_backend() +
                               " -n --feature psnr --feature ciede --json --precision max -o '" +
                               log.string() + "'");
            INFO(p.output);
            REQUIRE(p.status == 0);
            std::ifstream in(log);
            const auto frames = nlohmann::json::parse(in).at("frames");
            REQUIRE(frames.size() == g.at("frames").size());
            std::size_t bad = 0;
            std::string first;
            for (std::size_t f = 0; f < frames.size(); ++f)
                for (const char* k : {"psnr_y", "psnr_cb", "psnr_cr", "ciede2000"}) {
                    const auto& want = g.at("frames")[f].at("metrics").at(k);
                    const auto& m = frames[f].at("metrics");
                    REQUIRE(m.contains(k));
                    // libvmaf prints a non-finite value as null
                    const bool approx = std::string(k) == "ciede2000" && c.chroma == 420 &&
                                        c.height % 2 == 1;
                    const bool same =
                        want.is_null()
                            ? m.at(k).is_null()
                            : !m.at(k).is_null() &&
                                  (approx ? std::fabs(m.at(k).get<double>() - want.get<double>()) < 0.1
                                          : same_double(m.at(k).get<double>(), want.get<double>()));
                    if (!same && !bad++)
                        first = "frame " + std::to_string(f) + " " + k + ": " + m.at(k).dump() +
                                " vs " + want.dump();
                }
            INFO(first);
            CHECK(bad == 0);
        }
    }
    fs::remove_all(dir);
}

TEST_CASE("CLI ladder: -d several times, each rendition's log equals its own run",
          "[golden][cli][ladder]") {
    const fs::path dir = tmp_dir();
    GoldenCase full = find_case("testsrc2_320x240_8bit"), shorter = find_case("testsrc2_320x240_8bit_3f");
    REQUIRE(!full.name.empty());
    REQUIRE(!shorter.name.empty());
    const std::string size = " -w 320 -h 240 -p 420 -b 8 --backend " + test_backend() +
                             " --json --precision max";
    // renditions: the full distorted clip, a 3-frame one (ends early), the reference itself
    const std::vector<std::string> dists = {full.dist, shorter.dist, full.ref};
    std::string args = "-r '" + full.ref + "'";
    for (const auto& d : dists) args += " -d '" + d + "'";
    const Proc p = run(args + size + " -m version=vmaf_v0.6.1 -m version=vmaf_v0.6.1neg:name=neg"
                       " --feature psnr -o '" + (dir / "lad.%d.json").string() + "'");
    INFO(p.output);
    REQUIRE(p.status == 0);
    CHECK(p.output.find("ended before") != std::string::npos);
    auto load = [](const fs::path& f) {
        std::ifstream in(f);
        REQUIRE(in);
        nlohmann::json j = nlohmann::json::parse(in);
        j.erase("fps");
        return j;
    };
    for (std::size_t k = 0; k < dists.size(); ++k) {
        INFO("rendition " << k);
        const fs::path own = dir / ("own." + std::to_string(k) + ".json");
        const Proc q = run("-r '" + full.ref + "' -d '" + dists[k] + "'" + size +
                           " -m version=vmaf_v0.6.1 -m version=vmaf_v0.6.1neg:name=neg"
                           " --feature psnr -o '" + own.string() + "'");
        INFO(q.output);
        REQUIRE(q.status == 0);
        const auto a = load(dir / ("lad." + std::to_string(k) + ".json")), b = load(own);
        CHECK(a.at("frames").size() == (k == 1 ? 3u : full.frames));
        CHECK(a == b);
        // "rendition K: VMAF score: X" equals the single run's "VMAF score: X"
        const std::string line = "rendition " + std::to_string(k) + ": VMAF score: ";
        const auto at = p.output.find(line);
        REQUIRE(at != std::string::npos);
        const auto own_at = q.output.find("VMAF score: ");
        REQUIRE(own_at != std::string::npos);
        CHECK(p.output.substr(at + line.size(), 10) == q.output.substr(own_at + 12, 10));
    }
    SECTION("errors: -o without %d, a rendition of another size") {
        const Proc e = run(args + size + " -o '" + (dir / "x.json").string() + "'");
        CHECK(e.status != 0);
        CHECK(e.output.find("%d") != std::string::npos);
        const GoldenCase odd = find_case("testsrc2_321x241_8bit");
        REQUIRE(!odd.name.empty());
        const fs::path y4m = dir / "odd.y4m";
        write_layout(odd, odd.dist, y4m, 420, true);
        const Proc f = run("-r '" + full.ref + "' -d '" + full.dist + "' -d '" + y4m.string() + "'" +
                           size + " -o '" + (dir / "y.%d.json").string() + "'");
        INFO(f.output);
        CHECK(f.status != 0);
        CHECK(f.output.find("321x241") != std::string::npos);
        CHECK(f.output.find("320x240") != std::string::npos);
    }
    fs::remove_all(dir);
}

TEST_CASE("CLI ladder: a reference shorter than every rendition is warned about once",
          "[golden][cli][ladder]") {
    GoldenCase full = find_case("testsrc2_320x240_8bit"), shorter = find_case("testsrc2_320x240_8bit_3f");
    REQUIRE(!full.name.empty());
    REQUIRE(!shorter.name.empty());
    const Proc p = run("-r '" + shorter.ref + "' -d '" + full.dist + "' -d '" + full.ref +
                       "' -w 320 -h 240 -p 420 -b 8 --backend " + test_backend());
    INFO(p.output);
    REQUIRE(p.status == 0);
    const std::string want = "warning: \"" + shorter.ref + "\" ended before \"" + full.dist +
                             "\", \"" + full.ref + "\": scoring the 3 frames both have";
    const std::size_t at = p.output.find(want);
    CHECK(at != std::string::npos);
    CHECK(p.output.find("ended before", at + want.size()) == std::string::npos); // only once
}

TEST_CASE("CLI ladder: a rendition with no frame to score fails alone, the others are scored",
          "[golden][cli][ladder]") {
    const fs::path dir = tmp_dir();
    GoldenCase full = find_case("testsrc2_320x240_8bit");
    REQUIRE(!full.name.empty());
    const fs::path empty = dir / "empty.yuv";
    { std::ofstream(empty.string(), std::ios::binary); }
    const std::string size = " -w 320 -h 240 -p 420 -b 8 --backend " + test_backend() +
                             " --json --precision max";
    // the empty rendition in the middle; "%d" twice and "%%" in the log path (as the
    // filter's log_path: every %d is the index, %% a percent sign)
    const Proc p = run("-r '" + full.ref + "' -d '" + full.dist + "' -d '" + empty.string() +
                       "' -d '" + full.ref + "'" + size + " -o '" +
                       (dir / "l%d.%%.%d.json").string() + "'");
    INFO(p.output);
    CHECK(WIFEXITED(p.status));
    CHECK(WEXITSTATUS(p.status) == 1);
    CHECK(p.output.find("rendition 1: no frames to score in \"" + empty.string() + "\"") !=
          std::string::npos);
    CHECK(p.output.find("rendition 1: VMAF score") == std::string::npos);
    CHECK(!fs::exists(dir / "l1.%.1.json"));
    for (unsigned k : {0u, 2u}) {
        INFO("rendition " << k);
        const fs::path log = dir / ("l" + std::to_string(k) + ".%." + std::to_string(k) + ".json");
        REQUIRE(fs::exists(log));
        const fs::path own = dir / ("own." + std::to_string(k) + ".json");
        const Proc q = run("-r '" + full.ref + "' -d '" + (k == 0 ? full.dist : full.ref) + "'" +
                           size + " -o '" + own.string() + "'");
        REQUIRE(q.status == 0);
        std::ifstream a(log), b(own);
        nlohmann::json ja = nlohmann::json::parse(a), jb = nlohmann::json::parse(b);
        ja.erase("fps");
        jb.erase("fps");
        CHECK(ja == jb);
        CHECK(p.output.find("rendition " + std::to_string(k) + ": VMAF score: ") != std::string::npos);
    }
    // an empty reference: one error naming it; every rendition empty: one error each
    const Proc r = run("-r '" + empty.string() + "' -d '" + full.dist + "' -d '" + full.ref + "'" + size);
    CHECK(r.status != 0);
    CHECK(r.output.find("the reference \"" + empty.string() + "\" has none") != std::string::npos);
    const Proc both = run("-r '" + full.ref + "' -d '" + empty.string() + "' -d '" + empty.string() + "'" + size);
    CHECK(both.status != 0);
    CHECK(both.output.find("rendition 0: no frames to score") != std::string::npos);
    CHECK(both.output.find("rendition 1: no frames to score") != std::string::npos);
    CHECK(both.output.find(": VMAF score:") == std::string::npos);
    // "%%d" is a literal "%d", not the index: refused as a path without %d
    const Proc e = run("-r '" + full.ref + "' -d '" + full.dist + "' -d '" + full.ref + "'" + size +
                       " -o '" + (dir / "x%%d.json").string() + "'");
    CHECK(e.status != 0);
    CHECK(e.output.find("must contain %d") != std::string::npos);
    fs::remove_all(dir);
}

// ---- streams, truncation, header contradictions, bit depth, logs and exit status ----

namespace {

/// The first `bytes` bytes of `in` (all when npos), then `extra`, written to `out`.
void copy_prefix(const fs::path& in, const fs::path& out, std::size_t bytes,
                 const std::string& extra = "") {
    std::ifstream i(in, std::ios::binary);
    std::string data((std::istreambuf_iterator<char>(i)), std::istreambuf_iterator<char>());
    if (bytes < data.size()) data.resize(bytes);
    std::ofstream(out, std::ios::binary) << data << extra;
}

GoldenCase case_3f() {
    const GoldenCase c = find_case("testsrc2_320x240_8bit_3f");
    REQUIRE(!c.name.empty());
    return c;
}

constexpr std::size_t kFrame = 320 * 240 * 3 / 2; // bytes of one 8-bit 4:2:0 frame

} // namespace

TEST_CASE("CLI reads raw YUV and Y4M from a pipe, a FIFO and standard input",
          "[golden][cli][stream]") {
    const fs::path dir = tmp_dir();
    const GoldenCase c = case_3f();
    const GoldenTable g = read_golden_csv(golden_dir() + "/" + c.name + ".csv");
    const std::string size = " -w 320 -h 240 -p 420 -b 8 --backend cpu --json --precision max -o ";
    const fs::path log = dir / "pipe.json";
    SECTION("raw YUV: -, /dev/stdin, a FIFO; read to the end, scored as from a file") {
        for (const std::string d : {"-", "/dev/stdin"}) {
            INFO(d);
            const Proc p = run("-r '" + c.ref + "' -d " + d + size + q(log), "cat '" + c.dist + "' | ");
            INFO(p.output);
            REQUIRE(exit_code(p) == 0);
            check_log_equals_golden(log, g);
        }
        const fs::path fifo = dir / "ref.fifo";
        REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
        const Proc p = run("-r " + q(fifo) + " -d '" + c.dist + "'" + size + q(log),
                           "timeout 60 cat '" + c.ref + "' > " + q(fifo) + " & ");
        INFO(p.output);
        REQUIRE(exit_code(p) == 0);
        check_log_equals_golden(log, g);
    }
    SECTION("Y4M from a pipe") {
        const fs::path r = dir / "ref.y4m", d = dir / "dist.y4m";
        write_layout(c, c.ref, r, 420, true);
        write_layout(c, c.dist, d, 420, true);
        const Proc p = run("-r " + q(r) + " -d - --backend cpu --json --precision max -o " + q(log),
                           "cat " + q(d) + " | ");
        INFO(p.output);
        REQUIRE(exit_code(p) == 0);
        check_log_equals_golden(log, g);
    }
    SECTION("a stream ending inside a frame is an error naming it and its bytes") {
        const Proc p = run("-r '" + c.ref + "' -d -" + size + q(log),
                           "head -c " + std::to_string(2 * kFrame + 69600) + " '" + c.dist + "' | ");
        INFO(p.output);
        CHECK(exit_code(p) == 1);
        CHECK(has(p, "error: '-' is truncated: frame 2 is incomplete (got 69600 of 115200 bytes)"));
        CHECK(!has(p, "VMAF score"));
        CHECK(!fs::exists(log));
    }
    SECTION("two inputs cannot both read standard input") {
        for (const std::string r : {"-", "/dev/stdin"}) {
            const Proc p = run("-r " + r + " -d -" + size + q(log), "cat '" + c.dist + "' | ");
            INFO(p.output);
            CHECK(exit_code(p) == 1);
            CHECK(has(p, "\"" + r + "\" and \"-\" are the same stream, standard input: at most "
                         "one input can be read from it"));
        }
    }
    fs::remove_all(dir);
}

TEST_CASE("CLI: a truncated input is an error naming the file, the frame and the bytes",
          "[golden][cli][truncated]") {
    // libvmaf's vmaf prints "problem while reading pictures" and still writes the frames
    // before; vmaf-cuda refuses: exit status 1, no log, no score line.
    const fs::path dir = tmp_dir();
    const GoldenCase c = case_3f();
    const fs::path r = dir / "ref.y4m", d = dir / "dist.y4m", log = dir / "t.json";
    write_layout(c, c.ref, r, 420, true);
    write_layout(c, c.dist, d, 420, true);
    const std::size_t y4m_size = fs::file_size(d); // header, then 3 x ("FRAME\n" + frame)
    auto refused = [&](const fs::path& cut, const std::string& what) {
        const Proc p = run("-r " + q(r) + " -d " + q(cut) + " --backend cpu --json -o " + q(log));
        INFO(p.output);
        CHECK(exit_code(p) == 1);
        CHECK(has(p, "error: '" + cut.string() + "' is truncated: " + what));
        CHECK(!has(p, "VMAF score"));
        CHECK(!fs::exists(log));
    };
    SECTION("raw YUV in a file, refused at open") {
        const fs::path cut = dir / "cut.yuv";
        copy_prefix(c.dist, cut, 2 * kFrame + 100);
        const Proc p = run("-r '" + c.ref + "' -d " + q(cut) + " -w 320 -h 240 --backend cpu");
        INFO(p.output);
        CHECK(exit_code(p) == 1);
        CHECK(has(p, "'" + cut.string() + "' holds 230500 bytes, not a whole number of 320x240 420 "
                     "8-bit frames of 115200 bytes: frame 2 is incomplete (got 100 of 115200 bytes;"));
    }
    SECTION("Y4M: a partial picture") {
        const fs::path cut = dir / "cut.y4m";
        copy_prefix(d, cut, y4m_size - 100);
        refused(cut, "frame 2 is incomplete (got 115100 of 115200 bytes)");
    }
    SECTION("Y4M: a FRAME header without its picture") {
        const fs::path cut = dir / "nopic.y4m";
        copy_prefix(d, cut, y4m_size - kFrame);
        refused(cut, "frame 2 is incomplete (got 0 of 115200 bytes)");
    }
    SECTION("Y4M: a partial FRAME header") {
        const fs::path cut = dir / "fra.y4m";
        copy_prefix(d, cut, y4m_size, "FRA");
        refused(cut, "frame 3's FRAME header is incomplete (got 3 of 6 bytes)");
    }
    SECTION("Y4M: a header claiming a huge frame fails on its data, in little memory") {
        // The first frames are read before the session opens: its buffers for 32768x32768
        // 4:4:4 16-bit (GiBs) are never allocated. ulimit -v: 1 GiB of address space.
        const fs::path huge = dir / "huge.y4m";
        std::ofstream(huge) << "YUV4MPEG2 W32768 H32768 C444p16\nFRAME\nabc";
        const Proc p = run("-r " + q(huge) + " -d " + q(huge) + " --backend cpu", "ulimit -v 1048576; ");
        INFO(p.output);
        CHECK(exit_code(p) == 1);
        CHECK(has(p, "error: '" + huge.string() + "' is truncated: frame 0 is incomplete "
                     "(got 3 of 6442450944 bytes)"));
    }
    SECTION("a ladder's truncated rendition fails alone, the others are scored") {
        const fs::path cut = dir / "cut.y4m";
        copy_prefix(d, cut, y4m_size - 100);
        const Proc p = run("-r " + q(r) + " -d " + q(d) + " -d " + q(cut) +
                           " --backend cpu --json -o " + q(dir / "l%d.json"));
        INFO(p.output);
        CHECK(exit_code(p) == 1);
        CHECK(has(p, "error: rendition 1: '" + cut.string() + "' is truncated: frame 2 is "
                     "incomplete (got 115100 of 115200 bytes): no log written, no VMAF score"));
        CHECK(has(p, "rendition 0: VMAF score: "));
        CHECK(!has(p, "rendition 1: VMAF score"));
        CHECK(fs::exists(dir / "l0.json"));
        CHECK(!fs::exists(dir / "l1.json"));
    }
    fs::remove_all(dir);
}

TEST_CASE("CLI: -w/-h/-p/-b that contradict a Y4M header are refused; Y4M must be progressive",
          "[golden][cli][header]") {
    const fs::path dir = tmp_dir();
    const GoldenCase c = case_3f();
    const fs::path r = dir / "ref.y4m", d = dir / "dist.y4m";
    write_layout(c, c.ref, r, 420, true);
    write_layout(c, c.dist, d, 420, true);
    const std::string in = "-r " + q(r) + " -d " + q(d) + " --backend cpu";
    const std::string hdr = " contradicts the Y4M header of \"" + r.string() + "\", which says ";
    for (const auto& [opt, want] : std::vector<std::pair<std::string, std::string>>{
             {"-w 321", "-w 321" + hdr + "320: leave -w out for Y4M input"},
             {"-h 480", "-h 480" + hdr + "240: leave -h out"},
             {"-p 444", "-p 444" + hdr + "420 (C420): leave -p out"},
             {"-b 10", "-b 10" + hdr + "8 (C420): leave -b out"}}) {
        const Proc p = run(in + " " + opt);
        INFO(p.output);
        CHECK(exit_code(p) == 1);
        CHECK(has(p, "error: " + want));
        CHECK(!has(p, "VMAF score"));
    }
    const Proc same = run(in + " -w 320 -h 240 -p 420 -b 8");
    INFO(same.output);
    CHECK(exit_code(same) == 0);
    CHECK(has(same, "VMAF score: 45.737317")); // the golden mean of the 3-frame case

    // interlaced: refused, as libvmaf refuses it; "Ip" (and no I token) is progressive
    for (const std::string tok : {"It", "Ib", "Im"}) {
        const fs::path y = dir / (tok + ".y4m");
        std::ifstream i(d, std::ios::binary);
        std::string data((std::istreambuf_iterator<char>(i)), std::istreambuf_iterator<char>());
        data.replace(data.find(" Ip "), 4, " " + tok + " ");
        std::ofstream(y, std::ios::binary) << data;
        const Proc p = run("-r " + q(r) + " -d " + q(y) + " --backend cpu");
        INFO(p.output);
        CHECK(exit_code(p) == 1);
        CHECK(has(p, "error: '" + y.string() + "': Y4M header says " + tok +
                     ": interlaced video (It top field first, Ib bottom field first, Im mixed) "
                     "is not supported"));
    }
    fs::remove_all(dir);
}

TEST_CASE("CLI: a sample above the declared bit depth is an error (is -b right?)", "[golden][cli][range]") {
    const fs::path dir = tmp_dir();
    const GoldenCase c = case_3f();
    SECTION("8-bit frames read with -b 10") {
        // 6 frames of 8 bits hold exactly 3 frames of 10 bits: the size check passes
        const fs::path r6 = dir / "r6.yuv", d6 = dir / "d6.yuv";
        for (const auto& [in, out] : {std::pair{c.ref, r6}, std::pair{c.dist, d6}}) {
            copy_prefix(in, out, std::string::npos);
            std::ofstream(out, std::ios::app | std::ios::binary) << std::ifstream(in, std::ios::binary).rdbuf();
        }
        const Proc p = run("-r " + q(r6) + " -d " + q(d6) + " -w 320 -h 240 -b 10 --backend cpu");
        INFO(p.output);
        CHECK(exit_code(p) == 1);
        CHECK(has(p, "error: '" + r6.string() + "': frame 0 holds the value "));
        CHECK(has(p, ", the largest 10-bit value: is -b right?"));
        CHECK(!has(p, "VMAF score"));
    }
    SECTION("one Cr sample of frame 1 of a 10-bit clip at 1024; Y4M names its header") {
        const GoldenCase t = find_case("testsrc2_320x240_10bit");
        REQUIRE(!t.name.empty());
        const std::size_t fb = kFrame * 2, cr = fb - 160 * 120 * 2; // Cr plane's offset
        const fs::path d = dir / "d.yuv", y = dir / "d.y4m";
        std::string data;
        {
            std::ifstream i(t.dist, std::ios::binary);
            data.assign((std::istreambuf_iterator<char>(i)), std::istreambuf_iterator<char>());
        }
        const std::size_t at = fb + cr + 2 * (7 * 160 + 5); // frame 1, Cr x 5, y 7
        data[at] = 0x00;
        data[at + 1] = 0x04;
        std::ofstream(d, std::ios::binary) << data;
        const Proc p = run("-r '" + t.ref + "' -d " + q(d) + " -w 320 -h 240 -b 10 --backend cpu");
        INFO(p.output);
        CHECK(exit_code(p) == 1);
        CHECK(has(p, "error: '" + d.string() + "': frame 1 holds the value 1024 (Cr plane, x 5, "
                     "y 7), above 1023, the largest 10-bit value: is -b right?"));
        write_layout(t, d.string(), y, 420, true);
        const fs::path yr = dir / "r.y4m";
        write_layout(t, t.ref, yr, 420, true);
        const Proc py = run("-r " + q(yr) + " -d " + q(y) + " --backend cpu");
        INFO(py.output);
        CHECK(exit_code(py) == 1);
        CHECK(has(py, "frame 1 holds the value 1024 (Cr plane, x 5, y 7), above 1023, the "
                      "largest 10-bit value: is the Y4M header's C420p10 right?"));
    }
    fs::remove_all(dir);
}

TEST_CASE("CLI checks every log path before reading a frame, and leaves no file there",
          "[golden][cli][log]") {
    const fs::path dir = tmp_dir();
    const GoldenCase c = case_3f();
    // a truncated distorted input: an error after reading frames would name it
    const fs::path cut = dir / "cut.yuv";
    copy_prefix(c.dist, cut, 2 * kFrame);
    std::ofstream(cut, std::ios::app | std::ios::binary) << std::string(100, '\0');
    const std::string in = "-r '" + c.ref + "' -d - -w 320 -h 240 --backend cpu --json -o ";
    const std::string feed = "cat " + q(cut) + " | ";
    SECTION("a missing folder, a directory, a ladder's rendition in a missing folder") {
        const fs::path missing = dir / "missing" / "x.json";
        const Proc p = run(in + q(missing), feed);
        INFO(p.output);
        CHECK(exit_code(p) == 1);
        CHECK(has(p, "error: cannot write the log \"" + missing.string() + "\": No such file or directory"));
        CHECK(!has(p, "truncated"));
        const Proc d = run(in + q(dir), feed);
        INFO(d.output);
        CHECK(exit_code(d) == 1);
        CHECK(has(d, "error: cannot write the log \"" + dir.string() + "\": Is a directory"));
        fs::create_directory(dir / "0");
        const Proc l = run("-r '" + c.ref + "' -d '" + c.dist + "' -d - -w 320 -h 240 --backend cpu -o " +
                           q(dir / "%d" / "x.xml"), feed);
        INFO(l.output);
        CHECK(exit_code(l) == 1);
        CHECK(has(l, "error: rendition 1: cannot write the log \"" + (dir / "1" / "x.xml").string() +
                     "\": No such file or directory"));
        CHECK(!has(l, "truncated"));
        CHECK(fs::is_empty(dir / "0"));
    }
    SECTION("the check leaves nothing behind; /dev/stdout is written as it is") {
        const fs::path out = dir / "logs";
        fs::create_directory(out);
        const Proc p = run("-r '" + c.ref + "' -d '" + c.dist + "' -w 320 -h 240 --backend cpu -o " +
                           q(out / "x.xml"));
        INFO(p.output);
        REQUIRE(exit_code(p) == 0);
        CHECK(std::distance(fs::directory_iterator(out), fs::directory_iterator()) == 1);
        const Proc s = run("-r '" + c.ref + "' -d '" + c.dist + "' -w 320 -h 240 --backend cpu --csv -o /dev/stdout");
        INFO(s.output);
        CHECK(exit_code(s) == 0);
        CHECK(has(s, "Frame,"));
    }
    fs::remove_all(dir);
}

TEST_CASE("CLI: a run that writes no log removes an older file at its path", "[golden][cli][log]") {
    const fs::path dir = tmp_dir();
    const GoldenCase c = case_3f();
    const fs::path old = dir / "old.json";
    const std::string removed = "error: removed the older file at \"" + old.string() +
                                "\" so that it is not taken for this run's log";
    SECTION("no frames to score, a truncated input") {
        const fs::path cut = dir / "cut.yuv";
        copy_prefix(c.dist, cut, kFrame + 10);
        // (an input that cannot be opened is not a run: [stale] keeps the older file)
        for (const std::string& args :
             {"-r '" + c.ref + "' -d /dev/null -w 320 -h 240", "-r '" + c.ref + "' -d - -w 320 -h 240"}) {
            std::ofstream(old) << "{\"an\": \"older log\"}";
            const Proc p = run(args + " --backend cpu --json -o " + q(old), "cat " + q(cut) + " | ");
            INFO(p.output);
            CHECK(exit_code(p) == 1);
            CHECK(has(p, removed));
            CHECK(!fs::exists(old));
        }
    }
    SECTION("a ladder's empty rendition: its older log only; a FIFO is not removed") {
        for (const char* f : {"l0.json", "l1.json"}) std::ofstream(dir / f) << "older";
        REQUIRE(::mkfifo((dir / "l2.json").c_str(), 0600) == 0);
        const Proc p = run("-r '" + c.ref + "' -d '" + c.dist + "' -d /dev/null -d /dev/null"
                           " -w 320 -h 240 --backend cpu --json -o " + q(dir / "l%d.json"));
        INFO(p.output);
        CHECK(exit_code(p) == 1);
        CHECK(has(p, "error: rendition 1: removed the older file at \"" + (dir / "l1.json").string() + "\""));
        CHECK(fs::file_size(dir / "l0.json") > 100); // this run's log
        CHECK(!fs::exists(dir / "l1.json"));
        CHECK(fs::is_fifo(dir / "l2.json"));
        CHECK(!has(p, "l2.json\" so that"));
    }
    SECTION("a log path that is an input is refused, and the input kept") {
        const fs::path d = dir / "d.yuv";
        copy_prefix(c.dist, d, std::string::npos);
        const Proc p = run("-r '" + c.ref + "' -d " + q(d) + " -w 320 -h 240 --backend cpu -o " + q(d));
        INFO(p.output);
        CHECK(exit_code(p) == 1);
        CHECK(has(p, "error: -o \"" + d.string() + "\" is the input \"" + d.string() + "\""));
        CHECK(fs::file_size(d) == 3 * kFrame);
    }
    fs::remove_all(dir);
}

TEST_CASE("CLI exit status: output that cannot be written is a failure", "[golden][cli][log]") {
    const GoldenCase c = case_3f();
    const std::string in = "-r '" + c.ref + "' -d '" + c.dist + "' -w 320 -h 240 --backend cpu";
    const Proc full = run(in + " -o /dev/full");
    INFO(full.output);
    CHECK(exit_code(full) == 1);
    CHECK(has(full, "error: cannot write the log \"/dev/full\": No space left on device"));
    CHECK(!has(full, "VMAF score"));
    // the score line on a full or closed stdout (stderr still captured)
    const Proc so = run(in, "", " 2>&1 >/dev/full");
    INFO(so.output);
    CHECK(exit_code(so) == 1);
    CHECK(has(so, "error: cannot write to standard output: No space left on device"));
    const Proc closed = run(in, "", " 2>&1 >&-");
    INFO(closed.output);
    CHECK(exit_code(closed) == 1);
    CHECK(has(closed, "error: cannot write to standard output"));
}

// The library's message for a failed write names the user's path and the reason
// (engine/log_file.cpp).
TEST_CASE("CLI -o /dev/full names the reason", "[golden][cli][log]") {
    const GoldenCase c = case_3f();
    const Proc p = run("-r '" + c.ref + "' -d '" + c.dist + "' -w 320 -h 240 --backend cpu -o /dev/full");
    INFO(p.output);
    CHECK(exit_code(p) == 1);
    CHECK(has(p, "/dev/full"));
    CHECK(has(p, "No space left on device"));
}

TEST_CASE("CLI option errors: repeated single-value options, --threads above 64",
          "[golden][cli][options]") {
    const GoldenCase c = case_3f();
    const std::string in = "-r '" + c.ref + "' -d '" + c.dist + "' -w 320 -h 240 --backend cpu";
    // CLI11 refuses a second value of a single-value option (-m, --feature, -d repeat)
    for (const auto& [args, name] : std::vector<std::pair<std::string, std::string>>{
             {" -o a.xml -o b.xml", "--output"},
             {" --precision 3 --precision 4", "--precision"},
             {" -w 320", "--width"},
             {" --threads 2 --threads 3", "--threads"},
             {" -r '" + c.ref + "'", "--reference"}}) {
        const Proc p = run(in + args);
        INFO(p.output);
        CHECK(exit_code(p) != 0);
        CHECK(has(p, name + ": At Most 1 required but received 2"));
        CHECK(!has(p, "VMAF score"));
    }
    const Proc t = run(in + " --threads 65");
    INFO(t.output);
    CHECK(exit_code(t) == 1);
    CHECK(has(t, "error: --threads 65: at most 64 (the library caps its worker threads at 64)"));
    const Proc ok = run(in + " --threads 64");
    INFO(ok.output);
    CHECK(exit_code(ok) == 0);
    CHECK(has(ok, "VMAF score: 45.737317"));
}

TEST_CASE("CLI: a log on standard output, by any of its names, leaves stdout to the log",
          "[golden][cli][log][stdout]") {
    const fs::path dir = tmp_dir();
    const GoldenCase c = case_3f();
    const std::string in = "-r '" + c.ref + "' -d '" + c.dist + "' -w 320 -h 240 --backend cpu";
    const fs::path err = dir / "err.txt";
    // stdout holds the JSON log alone (`| jq` reads it), the score line goes to stderr
    for (const char* name : {"-", "pipe:", "pipe:1", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"})
        for (const char* quiet : {"", " -q"}) {
            const Proc p = run(in + quiet + " --json -o " + name, "", " 2>" + q(err));
            const std::string e = file_text(err);
            INFO(name << quiet << "\nstdout:\n" << p.output << "\nstderr:\n" << e);
            CHECK(exit_code(p) == 0);
            CHECK_NOTHROW(nlohmann::json::parse(p.output));
            CHECK(e.find("VMAF score: 45.737317") != std::string::npos);
        }
    // a path that is the file open as stdout is stdout too: a device ...
    const Proc null = run(in + " -o /dev/null", "", " 2>&1 >/dev/null");
    INFO(null.output);
    CHECK(exit_code(null) == 0);
    CHECK(has(null, "VMAF score: 45.737317"));
    // ... or a named pipe that stdout writes to as well, for -o and the NDJSON stream: what
    // its reader gets is the log or the JSON lines alone (a regular file open as stdout is
    // refused by the library: the log would overwrite it)
    const fs::path fifo = dir / "fifo", got = dir / "got.txt", rc = dir / "rc.txt";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    for (const std::string& out : {" --json -o " + q(fifo), " --ndjson " + q(fifo)}) {
        run(in + out, "cat " + q(fifo) + " >" + q(got) + " & ",
            " 2>" + q(err) + " >" + q(fifo) + "; echo $? >" + q(rc) + "; wait");
        const std::string text = file_text(got);
        INFO(out << "\nthe pipe's reader got:\n" << text << "\nstderr:\n" << file_text(err));
        CHECK(file_text(rc) == "0\n");
        if (out.find("--json") != std::string::npos) {
            CHECK_NOTHROW(nlohmann::json::parse(text));
        } else {
            std::istringstream lines(text);
            std::size_t n = 0;
            for (std::string l; std::getline(lines, l); ++n) CHECK_NOTHROW(nlohmann::json::parse(l));
            CHECK(n == 4);
        }
        CHECK(file_text(err).find("VMAF score: 45.737317") != std::string::npos);
    }
    // another path is not: the score line stays on stdout
    const Proc other = run(in + " -o /dev/null", "", " 2>/dev/null");
    INFO(other.output);
    CHECK(exit_code(other) == 0);
    CHECK(has(other, "VMAF score: 45.737317"));
    // and two names of stdout are one output
    const Proc both = run(in + " --json -o /dev/stdout --ndjson /proc/self/fd/1");
    INFO(both.output);
    CHECK(exit_code(both) == 1);
    CHECK(has(both, "error: -o \"/dev/stdout\" and --ndjson \"/proc/self/fd/1\" are the same "
                    "output: give them different paths"));
    fs::remove_all(dir);
}

TEST_CASE("CLI: a log whose reader has gone is an error naming it, not a silent SIGPIPE",
          "[golden][cli][log][sigpipe]") {
    const fs::path dir = tmp_dir();
    const GoldenCase c = find_case("testsrc2_320x240_8bit");
    REQUIRE(!c.name.empty());
    // 100 frames: a JSON log far above a pipe's 64 KiB, so that head -c 100 has gone
    // before the last of it is written
    const fs::path r = dir / "r.yuv", d = dir / "d.yuv";
    for (int i = 0; i < 10; ++i) {
        std::ofstream(r, std::ios::binary | std::ios::app) << file_text(c.ref);
        std::ofstream(d, std::ios::binary | std::ios::app) << file_text(c.dist);
    }
    const fs::path err = dir / "err.txt", rc = dir / "rc.txt";
    const std::string in = "-r " + q(r) + " -d " + q(d) + " -w 320 -h 240 --backend cpu";
    // the CLI's own exit status, not head's
    for (const char* name : {"-", "/dev/stdout"}) {
        const Proc p = run(in + " --json --precision max --feature psnr -o " + name, "{ ",
                           " 2>" + q(err) + "; echo $? >" + q(rc) + "; } | head -c 100 >/dev/null");
        const std::string e = file_text(err);
        INFO(name << "\n" << e);
        CHECK(file_text(rc) == "1\n");
        CHECK(e.find(std::string("error: cannot write the log \"") + name + "\": Broken pipe") !=
              std::string::npos);
    }
    fs::remove_all(dir);
}

TEST_CASE("CLI: an option or input error leaves an older log where it is",
          "[golden][cli][log][stale]") {
    const fs::path dir = tmp_dir();
    const GoldenCase c = case_3f();
    const fs::path old = dir / "old.json", nd = dir / "old.ndjson";
    const std::string in = "-r '" + c.ref + "' -d '" + c.dist + "' -w 320 -h 240 --backend cpu";
    // a typo must not cost the user's file: nothing is removed before the run has started
    for (const auto& [args, msg] : std::vector<std::pair<std::string, std::string>>{
             {in + " --threads 99", "--threads 99: at most 64"},
             {in + " --precision 99", "--precision must be 1..17 or max"},
             {in + " --pool median", "--pool 'median' is not one of"},
             {in + " --fps 0", "--fps '0' is not a frame rate"},
             {in + " --window-log 5", "--window-log 5 writes window lines"},
             {in + " -m version=vmaf_v9", "vmaf_v9"},
             {in + " --feature adm=adm_enhn_gain_limit", "bad option string"},
             {in + " --feature psnr=no_such_option=1", "no_such_option"},
             {in + " --no_prediction", "--no_prediction without --feature"},
             {"-r '" + c.ref + "' -d '" + c.dist + "' -w 321 -h 240 --backend cpu", "not a whole number"},
             {"-r '" + c.ref + "' -d " + q(dir / "nothere.yuv") + " -w 320 -h 240 --backend cpu",
              "nothere.yuv"}}) {
        std::ofstream(old) << "{\"an\": \"older log\"}";
        std::ofstream(nd) << "{\"an\": \"older stream\"}\n";
        const Proc p = run(args + " --json -o " + q(old) + " --ndjson " + q(nd));
        INFO(args << "\n" << p.output);
        CHECK(exit_code(p) == 1);
        CHECK(has(p, msg));
        CHECK(!has(p, "removed the older file"));
        CHECK(fs::exists(old));
        CHECK(fs::exists(nd));
    }
    // -o and --ndjson on one file
    std::ofstream(old) << "{\"an\": \"older log\"}";
    const Proc same = run(in + " --json -o " + q(old) + " --ndjson " + q(old));
    INFO(same.output);
    CHECK(exit_code(same) == 1);
    CHECK(has(same, "are the same output"));
    CHECK(file_text(old) == "{\"an\": \"older log\"}");
    fs::remove_all(dir);
}

TEST_CASE("CLI ladder: every message about one rendition begins with 'rendition K: '",
          "[golden][cli][ladder][prefix]") {
    const fs::path dir = tmp_dir();
    const GoldenCase c = case_3f();
    const fs::path shortf = dir / "short.yuv";
    copy_prefix(c.dist, shortf, 2 * kFrame);
    const std::string in = "-r '" + c.ref + "' -d '" + c.dist + "' -d " + q(shortf);
    const Proc p = run(in + " -w 320 -h 240 --backend cpu");
    INFO(p.output);
    CHECK(exit_code(p) == 0);
    CHECK(has(p, "vmaf-cuda: warning: rendition 1: \"" + shortf.string() + "\" ended before \"" +
                     c.ref + "\": scoring the 2 frames both have"));
    CHECK(has(p, "rendition 1: VMAF score: "));
    // a rendition that does not match the reference
    const fs::path y = dir / "d.y4m", r = dir / "r.y4m";
    write_layout(c, c.dist, y, 444, true);
    write_layout(c, c.ref, r, 420, true);
    const Proc chroma = run("-r " + q(r) + " -d " + q(r) + " -d " + q(y) + " --backend cpu");
    INFO(chroma.output);
    CHECK(exit_code(chroma) == 1);
    CHECK(has(chroma, "error: rendition 1: reference "));
    CHECK(has(chroma, "chroma subsampling must match"));
    fs::remove_all(dir);
}

TEST_CASE("CLI --feature: an option given twice within one feature is an error naming it",
          "[golden][cli][options][feature]") {
    const GoldenCase c = case_3f();
    const std::string in = "-r '" + c.ref + "' -d '" + c.dist + "' -w 320 -h 240 --backend cpu";
    for (const auto& [arg, msg] : std::vector<std::pair<std::string, std::string>>{
             {"psnr=enable_chroma=false:enable_chroma=true",
              "error: --feature 'psnr=enable_chroma=false:enable_chroma=true': option "
              "\"enable_chroma\" of feature \"psnr\" is given twice: give it once"},
             {"psnr=enable_chroma=true:enable_chroma=true", "\"enable_chroma\" of feature \"psnr\" is given twice"},
             {"adm=adm_enhn_gain_limit=1.0:debug=false:adm_enhn_gain_limit=1.1",
              "\"adm_enhn_gain_limit\" of feature \"adm\" is given twice"},
             {"psnr=name=ciede",
              "error: --feature 'psnr=name=ciede': name= is not an option: the feature's name is "
              "what comes before the first '=' (psnr)"}}) {
        const Proc p = run(in + " --feature '" + arg + "'");
        INFO(arg << "\n" << p.output);
        CHECK(exit_code(p) == 1);
        CHECK(has(p, msg));
        CHECK(!has(p, "VMAF score"));
    }
    // the same option in two --feature of one extractor is two features, as before
    const Proc two = run(in + " --feature psnr=enable_chroma=false --feature psnr=enable_chroma=true");
    INFO(two.output);
    CHECK(exit_code(two) == 0);
}

TEST_CASE("CLI errors name the user's files", "[golden][cli][paths]") {
    const fs::path dir = tmp_dir();
    const GoldenCase c = case_3f();
    const Proc none = run("-r '" + c.ref + "' -d /dev/null -w 320 -h 240 --backend cpu");
    INFO(none.output);
    CHECK(exit_code(none) == 1);
    CHECK(has(none, "error: no frames to score in \"/dev/null\": no log written, no VMAF score"));
    // inputs that do not match: both named
    const fs::path y = dir / "d.y4m";
    write_layout(c, c.dist, y, 444, true);
    const Proc chroma = run("-r '" + c.ref + "' -d " + q(y) + " -w 320 -h 240 --backend cpu");
    INFO(chroma.output);
    CHECK(exit_code(chroma) == 1);
    CHECK(has(chroma, "error: reference \"" + c.ref + "\" is 4:2:0 but distorted \"" + y.string() +
                          "\" is 4:4:4: chroma subsampling must match"));
    const GoldenCase odd = find_case("testsrc2_321x241_8bit");
    REQUIRE(!odd.name.empty());
    const fs::path oy = dir / "odd.y4m";
    write_layout(odd, odd.dist, oy, 420, true);
    const Proc size = run("-r '" + c.ref + "' -d " + q(oy) + " -w 320 -h 240 --backend cpu");
    INFO(size.output);
    CHECK(exit_code(size) == 1);
    CHECK(has(size, "error: reference \"" + c.ref + "\" is 320x240 but distorted \"" + oy.string() +
                        "\" is 321x241: sizes must match"));
    fs::remove_all(dir);
}

TEST_CASE("CLI: a run that writes no log names a link to an older file, and leaves it",
          "[golden][cli][log][link]") {
    const fs::path dir = tmp_dir();
    const GoldenCase c = case_3f();
    const fs::path target = dir / "older.json", link = dir / "link.json";
    const fs::path ntarget = dir / "older.ndjson", nlink = dir / "link.ndjson";
    std::ofstream(target) << "{\"an\": \"older log\"}";
    std::ofstream(ntarget) << "{\"an\": \"older stream\"}\n";
    fs::create_symlink(target, link);
    fs::create_symlink(ntarget, nlink);
    const Proc p = run("-r '" + c.ref + "' -d /dev/null -w 320 -h 240 --backend cpu --json -o " +
                       q(link) + " --ndjson " + q(nlink));
    INFO(p.output);
    CHECK(exit_code(p) == 1);
    for (const fs::path& l : {link, nlink})
        CHECK(has(p, "vmaf-cuda: warning: \"" + l.string() + "\" is a link to an older file, left "
                     "as it is: it does not hold this run's log"));
    CHECK(!has(p, "removed the older file"));
    CHECK(fs::is_symlink(link));
    CHECK(fs::is_symlink(nlink));
    CHECK(file_text(target) == "{\"an\": \"older log\"}");
    CHECK(file_text(ntarget) == "{\"an\": \"older stream\"}\n");
    fs::remove_all(dir);
}

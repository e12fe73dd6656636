// SPDX-License-Identifier: BSD-2-Clause-Patent
// Suite `golden` (and `gpu` with VMAF_CUDA_TEST_BACKEND=cuda): the float_ssim,
// float_ms_ssim and cambi feature records end to end through the C API (settings.features,
// no model), against libvmaf v3.2.0's own JSON logs in ../shared/golden/libvmaf:
//   - <case>.companion.json (float_ssim and float_ms_ssim with enable_lcs, cambi at its
//     defaults): every frame, every key of these features in libvmaf's order, every
//     pooled value, exact doubles;
//   - <case>.vmaf_v1.0.16_*.json: cambi with each model's CAMBI options (its
//     feature_opts_dicts given as features=cambi:...), the log's cambi_* key;
//   - tests/golden/cambi_options.tsv (libvmaf v3.2.0's values for every other option);
//   - the size rules: float_ms_ssim below 176x176 (libvmaf: "scale below 1x1!", the
//     .error.txt cases that show it, and synthetic sizes) and cambi below 216 are errors of
//     open naming the feature, the size and the minimum; small sizes that libvmaf computes
//     agree with the CPU reference.
// Environment: VMAF_CUDA_TEST_IN_FLIGHT (frames_in_flight), VMAF_CUDA_TEST_THREADS (n_threads),
// VMAF_CUDA_CAMBI_TABLE (cambi_options.tsv elsewhere).

#include "cambi.h"
#include "golden_util.h"
#include "ms_ssim.h"
#include "ssim.h"
#include "vmaf_cuda.h"

#include "catch.hpp"
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace vmaf_cuda_test;
namespace ref = vmaf_cuda::ref;
using json = nlohmann::ordered_json; // keeps libvmaf's key order

namespace {

VmafCudaBackend test_backend() {
    const char* b = std::getenv("VMAF_CUDA_TEST_BACKEND");
    if (b && std::string(b) == "cuda") return VMAF_CUDA_BACKEND_CUDA;
    return VMAF_CUDA_BACKEND_CPU;
}

json read_json(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    return json::parse(in);
}

/// Luma frames of one run (tightly packed, w x h samples of bpc bits).
struct Clip {
    unsigned w = 0, h = 0, bpc = 8;
    std::vector<std::vector<std::uint8_t>> ref, dis;
    std::ptrdiff_t pitch() const { return std::ptrdiff_t(w) * (bpc > 8 ? 2 : 1); }
    ref::LumaView view(const std::vector<std::uint8_t>& f) const {
        return ref::LumaView{f.data(), pitch(), w, h, bpc};
    }
};

Clip load_clip(const GoldenCase& c) {
    Clip k;
    k.w = c.width, k.h = c.height, k.bpc = c.bpc;
    k.ref = read_luma_frames(c, c.ref);
    k.dis = read_luma_frames(c, c.dist);
    REQUIRE(k.ref.size() == c.frames);
    REQUIRE(k.dis.size() == c.frames);
    return k;
}

/// What a session gave: per frame the names (in order) and values; pooled values.
struct ApiRun {
    std::vector<std::vector<std::string>> names;
    std::vector<std::map<std::string, double>> frames;
    std::map<std::string, std::map<std::string, double>> pooled; // name -> pool -> value
};

/// `features` must outlive the settings (they keep its c_str()).
VmafCudaSettings settings_for(unsigned w, unsigned h, unsigned bpc, const std::string& features) {
    VmafCudaSettings s;
    vmaf_cuda_default_settings(&s);
    s.width = w;
    s.height = h;
    s.bpc = bpc;
    s.backend = test_backend();
    s.no_prediction = 1;
    s.features = features.c_str();
    s.chroma = VMAF_CUDA_CHROMA_400; // these features read luma only
    if (const char* f = std::getenv("VMAF_CUDA_TEST_IN_FLIGHT")) s.frames_in_flight = unsigned(std::atoi(f));
    if (const char* t = std::getenv("VMAF_CUDA_TEST_THREADS")) s.n_threads = unsigned(std::atoi(t));
    return s;
}

/// Runs every frame of `clip` through a session with `features` (host pictures, luma).
ApiRun run_api(const Clip& clip, const std::string& features) {
    const VmafCudaSettings s = settings_for(clip.w, clip.h, clip.bpc, features);
    VmafCudaSession* vs = nullptr;
    char err[512] = "";
    const int rc = vmaf_cuda_open(&vs, &s, err, sizeof err);
    INFO("open " << clip.w << "x" << clip.h << " " << clip.bpc << "-bit with features " << features
                 << ": " << err);
    REQUIRE(rc == VMAF_CUDA_OK);
    ApiRun out;
    VmafCudaFrameScores fs;
    auto drain = [&](int until) {
        int r;
        while ((r = vmaf_cuda_receive(vs, &fs)) == VMAF_CUDA_OK) {
            REQUIRE(fs.index == out.frames.size());
            std::vector<std::string> n;
            std::map<std::string, double> m;
            for (unsigned i = 0; i < fs.count; ++i) {
                n.emplace_back(fs.names[i]);
                m[fs.names[i]] = fs.values[i];
            }
            out.names.push_back(n);
            out.frames.push_back(m);
        }
        INFO(vmaf_cuda_error_message(vs));
        REQUIRE(r == until);
    };
    for (std::size_t i = 0; i < clip.dis.size(); ++i) {
        VmafCudaPicture rp{clip.ref[i].data(), clip.pitch(), 0, VMAF_CUDA_MEMORY_HOST, {}, 0, 0};
        VmafCudaPicture dp{clip.dis[i].data(), clip.pitch(), 0, VMAF_CUDA_MEMORY_HOST, {}, 0, 0};
        const int sr = vmaf_cuda_send(vs, &rp, &dp);
        INFO("send frame " << i << ": " << vmaf_cuda_error_message(vs));
        REQUIRE(sr == VMAF_CUDA_OK);
        drain(VMAF_CUDA_EAGAIN);
    }
    REQUIRE(vmaf_cuda_flush(vs) == VMAF_CUDA_OK);
    drain(VMAF_CUDA_EOF);
    const char* pools[] = {"mean", "harmonic_mean", "min", "max"};
    if (!out.names.empty())
        for (const std::string& name : out.names.front())
            for (int p = 0; p < 4; ++p) {
                double v = 0;
                if (vmaf_cuda_pooled(vs, name.c_str(), VmafCudaPool(p), &v) == VMAF_CUDA_OK)
                    out.pooled[name][pools[p]] = v;
            }
    vmaf_cuda_close(vs);
    return out;
}

/// Counts comparisons; the first few mismatches fail with their values, the rest count.
struct Comparer {
    unsigned compared = 0, mismatched = 0;
    void operator()(const std::string& where, double got, double want) {
        ++compared;
        if (same_double(got, want)) return;
        if (mismatched++ < 8) FAIL_CHECK(where << ": ours " << fmt17(got) << ", libvmaf " << fmt17(want));
    }
    void missing(const std::string& where) {
        ++compared;
        if (mismatched++ < 8) FAIL_CHECK(where << ": no such output");
    }
};

/// Compares `keys` of a libvmaf log with a run: every frame, then the four pooled values.
void compare_log(Comparer& cmp, const std::string& what, const json& log, const ApiRun& run,
                 const std::vector<std::string>& keys) {
    const json& frames = log.at("frames");
    REQUIRE(frames.size() == run.frames.size());
    for (const std::string& key : keys) {
        for (std::size_t i = 0; i < run.frames.size(); ++i) {
            const std::string where = what + " frame " + std::to_string(i) + " " + key;
            const auto it = run.frames[i].find(key);
            if (it == run.frames[i].end()) {
                cmp.missing(where);
                continue;
            }
            cmp(where, it->second, frames[i].at("metrics").at(key).get<double>());
        }
        const json& pm = log.at("pooled_metrics").at(key);
        for (const char* p : {"min", "max", "mean", "harmonic_mean"}) {
            const std::string where = what + " pooled " + p + " " + key;
            const auto it = run.pooled.find(key);
            if (it == run.pooled.end() || !it->second.count(p)) {
                cmp.missing(where);
                continue;
            }
            cmp(where, it->second.at(p), pm.at(p).get<double>());
        }
    }
}

bool is_ours(const std::string& key) {
    return key.rfind("float_ssim", 0) == 0 || key.rfind("float_ms_ssim", 0) == 0 ||
           key.rfind("cambi", 0) == 0;
}

const char* backend_name() { return test_backend() == VMAF_CUDA_BACKEND_CUDA ? "cuda" : "cpu"; }

} // namespace

TEST_CASE("float_ssim, float_ms_ssim (enable_lcs) and cambi through the C API vs libvmaf's "
          "companion logs",
          "[golden][api][companion]") {
    Comparer cmp;
    unsigned cases = 0;
    for (const GoldenCase& c : golden_cases()) {
        const std::string path = golden_dir() + "/libvmaf/" + c.name + ".companion.json";
        if (!std::filesystem::exists(path)) continue;
        ++cases;
        const json g = read_json(path);
        const Clip clip = load_clip(c);
        const ApiRun run =
            run_api(clip, "name=float_ssim:enable_lcs=true|name=float_ms_ssim:enable_lcs=true|name=cambi");
        REQUIRE(run.frames.size() == c.frames);
        // The keys of these features in libvmaf's log order are exactly our outputs.
        std::vector<std::string> keys;
        for (auto it = g.at("frames")[0].at("metrics").begin(); it != g.at("frames")[0].at("metrics").end(); ++it)
            if (is_ours(it.key())) keys.push_back(it.key());
        REQUIRE(keys.size() == 1 + 3 + 1 + 15 + 1);
        for (std::size_t i = 0; i < run.names.size(); ++i) {
            INFO(c.name << " frame " << i);
            CHECK(run.names[i] == keys);
        }
        compare_log(cmp, c.name, g, run, keys);
    }
    std::printf("companion float_ssim/float_ms_ssim/cambi through the C API (%s): %u cases, %u values "
                "compared, %u differ\n",
                backend_name(), cases, cmp.compared, cmp.mismatched);
    CHECK(cases >= 14);
    CHECK(cmp.mismatched == 0);
}

namespace {

/// The features-string entry of the CAMBI options of a model file (its feature_opts_dicts
/// entry for Cambi_feature_*; values as their JSON text), or "" when it has no CAMBI.
std::string model_cambi_entry(const std::string& model) {
    const json m = read_json(model_dir() + "/" + model + ".json").at("model_dict");
    const json& names = m.at("feature_names");
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (names[i].get<std::string>().rfind("Cambi_feature", 0) != 0) continue;
        std::string e = "name=cambi";
        if (m.contains("feature_opts_dicts") && i < m.at("feature_opts_dicts").size())
            for (const auto& [k, v] : m.at("feature_opts_dicts")[i].items())
                e += ":" + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
        return e;
    }
    return "";
}

} // namespace

TEST_CASE("cambi with the v1.0.16 models' options through the C API vs libvmaf's v1.0.16 logs",
          "[golden][api][cambi][v1016]") {
    const std::string gdir = require_golden_dir();
    Comparer cmp;
    unsigned logs = 0;
    for (const GoldenCase& c : golden_cases()) {
        // Model logs of this case (cases where libvmaf failed have an .error.txt instead).
        std::map<std::string, std::vector<std::string>> by_entry; // features entry -> logs
        for (const auto& e : std::filesystem::directory_iterator(gdir + "/libvmaf")) {
            const std::string f = e.path().filename().string();
            const std::string pre = c.name + ".vmaf_v1.0.16_";
            if (f.rfind(pre, 0) != 0 || !f.ends_with(".json")) continue;
            const std::string version = f.substr(c.name.size() + 1, f.size() - c.name.size() - 6);
            const std::string entry = model_cambi_entry(version);
            if (!entry.empty()) by_entry[entry].push_back(e.path().string());
        }
        if (by_entry.empty()) continue;
        const Clip clip = load_clip(c);
        for (const auto& [entry, paths] : by_entry) {
            const ApiRun run = run_api(clip, entry);
            REQUIRE(run.frames.size() == c.frames);
            REQUIRE(run.names[0].size() == 1);
            const std::string key = run.names[0][0];
            for (const std::string& p : paths) {
                ++logs;
                const json g = read_json(p);
                INFO(p << ": our output " << key);
                REQUIRE(g.at("frames")[0].at("metrics").contains(key));
                compare_log(cmp, c.name + " " + entry, g, run, {key});
            }
        }
    }
    std::printf("v1.0.16 cambi through the C API (%s): %u logs, %u values compared, %u differ\n",
                backend_name(), logs, cmp.compared, cmp.mismatched);
    CHECK(logs > 0);
    CHECK(cmp.mismatched == 0);
}

namespace {

/// Luma planes of cambi_options.tsv's input spec: "all", or "frames=F,N;upscale=U"
/// (frames F..F+N-1, each sample repeated U x U times).
Clip table_clip(const GoldenCase& c, const Clip& all, const std::string& spec) {
    if (spec == "all") return all;
    unsigned first = 0, count = 0, up = 1;
    if (std::sscanf(spec.c_str(), "frames=%u,%u;upscale=%u", &first, &count, &up) != 3)
        throw std::runtime_error("cambi_options.tsv: bad input " + spec);
    const std::size_t bps = c.bpc > 8 ? 2 : 1;
    Clip k;
    k.w = c.width * up, k.h = c.height * up, k.bpc = c.bpc;
    auto scale = [&](const std::vector<std::uint8_t>& in) {
        std::vector<std::uint8_t> p(std::size_t(k.w) * k.h * bps);
        for (unsigned y = 0; y < k.h; ++y)
            for (unsigned x = 0; x < k.w; ++x)
                for (std::size_t b = 0; b < bps; ++b)
                    p[(std::size_t(y) * k.w + x) * bps + b] =
                        in[(std::size_t(y / up) * c.width + x / up) * bps + b];
        return p;
    };
    for (unsigned n = first; n < first + count; ++n) {
        k.ref.push_back(scale(all.ref.at(n)));
        k.dis.push_back(scale(all.dis.at(n)));
    }
    return k;
}

} // namespace

TEST_CASE("cambi: every other option through the C API vs libvmaf v3.2.0 (cambi_options.tsv)",
          "[golden][api][cambi][tsv]") {
    // The table: $VMAF_CUDA_CAMBI_TABLE, else the source tree's (build-time path), else
    // tests/golden/cambi_options.tsv from the working directory (a bundle run at the root).
    std::string table = VMAF_CUDA_CAMBI_TABLE;
    if (const char* e = std::getenv("VMAF_CUDA_CAMBI_TABLE")) table = e;
    else if (!std::filesystem::exists(table)) table = "tests/golden/cambi_options.tsv";
    std::ifstream in(table);
    INFO("cambi options table " << table);
    REQUIRE(in);
    struct Row {
        unsigned frame;
        std::string key;
        double value;
    };
    std::vector<std::pair<std::array<std::string, 3>, std::vector<Row>>> runs;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream ls(line);
        std::array<std::string, 6> f;
        for (auto& x : f) std::getline(ls, x, '\t');
        const std::array<std::string, 3> id{f[0], f[1], f[2]};
        if (runs.empty() || runs.back().first != id) runs.push_back({id, {}});
        runs.back().second.push_back({unsigned(std::stoul(f[3])), f[4], std::strtod(f[5].c_str(), nullptr)});
    }
    std::map<std::string, GoldenCase> cases;
    for (const GoldenCase& c : golden_cases()) cases[c.name] = c;
    std::map<std::string, Clip> clips;
    Comparer cmp;
    for (const auto& [id, rows] : runs) {
        const GoldenCase& c = cases.at(id[0]);
        if (!clips.count(c.name)) clips[c.name] = load_clip(c);
        const Clip clip = table_clip(c, clips[c.name], id[1]);
        const std::string entry = id[2] == "-" ? "name=cambi" : "name=cambi:" + id[2];
        const ApiRun run = run_api(clip, entry);
        // The names are the reference's libvmaf names, in libvmaf's order.
        ref::CambiOptions opt;
        if (id[2] != "-") {
            std::stringstream ss(id[2]);
            std::string kv;
            while (std::getline(ss, kv, ':')) {
                const auto eq = kv.find('=');
                REQUIRE(ref::cambi_set_option(opt, kv.substr(0, eq), kv.substr(eq + 1)));
            }
        }
        for (std::size_t i = 0; i < run.names.size(); ++i) {
            INFO(c.name << " " << entry << " frame " << i);
            CHECK(run.names[i] == ref::cambi_output_names(opt));
        }
        for (const Row& row : rows) {
            const std::string where = c.name + " " + id[1] + " " + entry + " frame " +
                                      std::to_string(row.frame) + " " + row.key;
            REQUIRE(row.frame < run.frames.size());
            const auto it = run.frames[row.frame].find(row.key);
            if (it == run.frames[row.frame].end())
                cmp.missing(where);
            else
                cmp(where, it->second, row.value);
        }
    }
    std::printf("cambi options table through the C API (%s): %zu option runs, %u values compared, "
                "%u differ\n",
                backend_name(), runs.size(), cmp.compared, cmp.mismatched);
    CHECK(cmp.compared > 0);
    CHECK(cmp.mismatched == 0);
}

namespace {

/// Opens a session expecting failure; returns the message.
std::string open_error(unsigned w, unsigned h, unsigned bpc, const std::string& features, int want) {
    const VmafCudaSettings s = settings_for(w, h, bpc, features);
    VmafCudaSession* vs = nullptr;
    char err[512] = "";
    const int rc = vmaf_cuda_open(&vs, &s, err, sizeof err);
    INFO(w << "x" << h << " " << bpc << "-bit, features " << features << ": rc " << rc << ", " << err);
    CHECK(rc == want);
    CHECK(vs == nullptr);
    if (vs) vmaf_cuda_close(vs);
    return err;
}

/// A deterministic textured clip: two frames of w x h, the distorted one a noisy copy.
Clip synthetic_clip(unsigned w, unsigned h, unsigned bpc, unsigned frames = 2) {
    Clip k;
    k.w = w, k.h = h, k.bpc = bpc;
    const std::size_t bps = bpc > 8 ? 2 : 1;
    const unsigned maxv = (1u << bpc) - 1;
    std::uint32_t seed = 12345u + w * 7u + h * 13u + bpc;
    auto rnd = [&] { return seed = seed * 1664525u + 1013904223u, seed >> 8; };
    for (unsigned f = 0; f < frames; ++f) {
        std::vector<std::uint8_t> r(std::size_t(w) * h * bps), d(r.size());
        for (unsigned y = 0; y < h; ++y)
            for (unsigned x = 0; x < w; ++x) {
                const unsigned base = ((x * 5 + y * 3 + f * 11) % 64) * maxv / 80 + (rnd() % 8) * maxv / 64;
                const unsigned a = std::min(maxv, base);
                const unsigned b = std::min(maxv, a + unsigned(rnd() % 17) * maxv / 255);
                const std::size_t i = (std::size_t(y) * w + x) * bps;
                r[i] = std::uint8_t(a & 0xff), d[i] = std::uint8_t(b & 0xff);
                if (bps == 2) r[i + 1] = std::uint8_t(a >> 8), d[i + 1] = std::uint8_t(b >> 8);
            }
        k.ref.push_back(r);
        k.dis.push_back(d);
    }
    return k;
}

} // namespace

TEST_CASE("float_ms_ssim below its smallest size is an error of open; at it, the reference's values",
          "[golden][api][float_ms_ssim]") {
    const unsigned m = ref::float_ms_ssim_min_size();
    REQUIRE(m == 176);
    // Golden cases where libvmaf failed in float_ms_ssim ("scale below 1x1!"), if any.
    std::map<std::string, GoldenCase> cases;
    for (const GoldenCase& c : golden_cases()) cases[c.name] = c;
    unsigned golden_errors = 0;
    for (const auto& e : std::filesystem::directory_iterator(golden_dir() + "/libvmaf")) {
        const std::string f = e.path().filename().string();
        if (!f.ends_with(".error.txt")) continue;
        std::ifstream in(e.path());
        const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (text.find("scale below 1x1") == std::string::npos) continue;
        const GoldenCase& c = cases.at(f.substr(0, f.find('.')));
        ++golden_errors;
        const std::string msg = open_error(c.width, c.height, c.bpc, "name=float_ms_ssim", VMAF_CUDA_EINVAL);
        CHECK(msg.find("float_ms_ssim") != std::string::npos);
        CHECK(msg.find(std::to_string(c.width) + "x" + std::to_string(c.height)) != std::string::npos);
    }
    std::printf("float_ms_ssim: %u golden cases where libvmaf failed for its size\n", golden_errors);

    const unsigned small[][2] = {{m - 1, m}, {m, m - 1}, {160, 120}, {64, 48}, {33, 1080}, {1920, 100}};
    for (const auto& s : small)
        for (const char* f : {"name=float_ms_ssim", "name=float_ms_ssim:enable_lcs=true:enable_db=true"}) {
            const std::string msg = open_error(s[0], s[1], 8, f, VMAF_CUDA_EINVAL);
            INFO(msg);
            CHECK(msg.find("float_ms_ssim") != std::string::npos);
            CHECK(msg.find(std::to_string(s[0]) + "x" + std::to_string(s[1])) != std::string::npos);
            CHECK(msg.find(std::to_string(m) + "x" + std::to_string(m)) != std::string::npos);
        }
    // With a model too: the error is the feature's, before the first frame.
    {
        const std::string features = "name=float_ms_ssim"; // s.features points into it
        VmafCudaSettings s = settings_for(160, 120, 8, features);
        s.no_prediction = 0;
        VmafCudaSession* vs = nullptr;
        char err[512] = "";
        const int rc = vmaf_cuda_open(&vs, &s, err, sizeof err);
        INFO("open: " << rc << " " << err);
        CHECK(rc == VMAF_CUDA_EINVAL);
        CHECK(std::string(err).find("float_ms_ssim") != std::string::npos);
        if (vs) vmaf_cuda_close(vs);
    }

    // At and just above the minimum (odd sizes, every bit depth libvmaf converts): the values
    // of the reference, every output.
    const unsigned ok[][3] = {{m, m, 8}, {m + 1, m + 3, 10}, {m + 7, m, 12}, {m, m + 9, 16}};
    for (const auto& s : ok) {
        const Clip clip = synthetic_clip(s[0], s[1], s[2]);
        for (const bool lcs : {true, false}) {
            const ref::FloatMsSsimOptions opt{lcs, !lcs, !lcs};
            const ApiRun run = run_api(clip, lcs ? "name=float_ms_ssim:enable_lcs=true"
                                                 : "name=float_ms_ssim:enable_db=true:clip_db=true");
            REQUIRE(run.frames.size() == clip.dis.size());
            for (std::size_t i = 0; i < clip.dis.size(); ++i) {
                const ref::FloatMsSsimScores w =
                    ref::float_ms_ssim(clip.view(clip.ref[i]), clip.view(clip.dis[i]), opt);
                INFO(s[0] << "x" << s[1] << " " << s[2] << "-bit frame " << i << (lcs ? " enable_lcs" : " dB"));
                REQUIRE(run.names[i].size() == (lcs ? 16u : 1u));
                CHECK(same_double(run.frames[i].at("float_ms_ssim"), w.ms_ssim));
                if (!lcs) continue;
                for (int k = 0; k < ref::kMsSsimScales; ++k) {
                    const std::string sk = "_scale" + std::to_string(k);
                    CHECK(same_double(run.frames[i].at("float_ms_ssim_l" + sk), w.l[k]));
                    CHECK(same_double(run.frames[i].at("float_ms_ssim_c" + sk), w.c[k]));
                    CHECK(same_double(run.frames[i].at("float_ms_ssim_s" + sk), w.s[k]));
                }
            }
        }
    }
}

TEST_CASE("float_ssim at small and odd sizes, every scale and the dB options: the reference's values",
          "[golden][api][float_ssim]") {
    struct Case {
        unsigned w, h, bpc;
        std::string opts;
        ref::FloatSsimOptions opt;
    };
    const Case cases[] = {
        {17, 17, 8, ":enable_lcs=true", {true, false, false, 0}},
        {33, 35, 10, ":enable_lcs=true:enable_db=true", {true, true, false, 0}},
        {176, 144, 12, ":enable_db=true:clip_db=true", {false, true, true, 0}},
        {384, 217, 16, ":enable_lcs=true", {true, false, false, 0}},
        {641, 360, 8, ":enable_lcs=true:scale=1", {true, false, false, 1}},
        {127, 99, 8, ":enable_lcs=true:scale=2", {true, false, false, 2}},
        {133, 102, 10, ":scale=5", {false, false, false, 5}},
    };
    for (const Case& c : cases) {
        const Clip clip = synthetic_clip(c.w, c.h, c.bpc);
        const ApiRun run = run_api(clip, "name=float_ssim" + c.opts);
        REQUIRE(run.frames.size() == clip.dis.size());
        for (std::size_t i = 0; i < clip.dis.size(); ++i) {
            const ref::FloatSsimScores w = ref::float_ssim(clip.view(clip.ref[i]), clip.view(clip.dis[i]), c.opt);
            INFO(c.w << "x" << c.h << " " << c.bpc << "-bit " << c.opts << " frame " << i);
            const std::vector<std::string> want_names =
                c.opt.enable_lcs ? std::vector<std::string>{"float_ssim", "float_ssim_l", "float_ssim_c", "float_ssim_s"}
                                 : std::vector<std::string>{"float_ssim"};
            CHECK(run.names[i] == want_names);
            CHECK(same_double(run.frames[i].at("float_ssim"), w.ssim));
            if (c.opt.enable_lcs) {
                CHECK(same_double(run.frames[i].at("float_ssim_l"), w.l));
                CHECK(same_double(run.frames[i].at("float_ssim_c"), w.c));
                CHECK(same_double(run.frames[i].at("float_ssim_s"), w.s));
            }
        }
    }
    // Bit depths libvmaf's float conversion does not take, and scales outside 0..10.
    for (unsigned bpc : {9u, 11u, 14u}) {
        const std::string msg = open_error(320, 240, bpc, "name=float_ssim", VMAF_CUDA_EINVAL);
        CHECK(msg.find("float_ssim") != std::string::npos);
        const std::string msg2 = open_error(320, 240, bpc, "name=float_ms_ssim", VMAF_CUDA_EINVAL);
        CHECK(msg2.find("float_ms_ssim") != std::string::npos);
    }
    for (const char* f : {"name=float_ssim:scale=11", "name=float_ssim:scale=-1", "name=float_ssim:enable_lcs=2",
                          "name=float_ms_ssim:scale=2"})
        open_error(320, 240, 8, f, VMAF_CUDA_EINVAL);
}

TEST_CASE("cambi: sizes and options libvmaf refuses are errors of open naming cambi",
          "[golden][api][cambi]") {
    // Width and height below 216 (either one at 216 or more is enough).
    for (const auto& s : {std::array<unsigned, 2>{215, 215}, {200, 120}, {64, 64}}) {
        const std::string msg = open_error(s[0], s[1], 8, "name=cambi", VMAF_CUDA_EINVAL);
        INFO(msg);
        CHECK(msg.find("cambi") != std::string::npos);
        CHECK(msg.find(std::to_string(s[0]) + "x" + std::to_string(s[1])) != std::string::npos);
        CHECK(msg.find("216") != std::string::npos);
    }
    for (const char* f : {"name=cambi:eotf=srgb", "name=cambi:cambi_eotf=hlg", "name=cambi:enc_width=0",
                          "name=cambi:window_size=129", "name=cambi:cambi_max_val=1001",
                          "name=cambi:heatmaps_path=/tmp/x", "name=cambi:vlt=0.06",
                          "name=cambi:full_ref=true:src_width=1280:src_height=200"}) {
        const std::string msg = open_error(320, 240, 8, f, VMAF_CUDA_EINVAL);
        INFO(f << ": " << msg);
        CHECK(msg.find("cambi") != std::string::npos);
    }
    // 216 in one dimension is enough, as libvmaf: the reference's values.
    const Clip clip = synthetic_clip(216, 100, 10, 2);
    const ApiRun run = run_api(clip, "name=cambi:full_ref=true");
    const ref::CambiOptions opt = [] {
        ref::CambiOptions o;
        o.full_ref = true;
        return o;
    }();
    const ref::CambiPlan plan = ref::cambi_plan(opt, clip.w, clip.h, clip.bpc);
    ref::CambiScratch scratch;
    for (std::size_t i = 0; i < clip.dis.size(); ++i) {
        const ref::LumaView d = clip.view(clip.dis[i]), r = clip.view(clip.ref[i]);
        const ref::CambiScores want = ref::cambi_frame(d, &r, plan, scratch);
        INFO("frame " << i);
        CHECK(run.names[i] == std::vector<std::string>{"cambi", "cambi_source", "cambi_full_reference"});
        CHECK(same_double(run.frames[i].at("cambi"), want.cambi));
        CHECK(same_double(run.frames[i].at("cambi_source"), want.source));
        CHECK(same_double(run.frames[i].at("cambi_full_reference"), want.full_reference));
    }
}

TEST_CASE("cambi: banded 4K frames whose pooling needs libvmaf's quick-select, through the C API",
          "[golden][api][cambi][quick_select]") {
    // 10-bit 3840x2160: vertical stripes of two codes over part of the frame (c-values near
    // 1000), the rest flat with one code up per 65x65 cell (c-values of full mantissas);
    // the stripes' share and phase change per frame. The top-60% sum at scale 0 is beyond
    // the order-free guarantee, so the backend pools those scales with libvmaf's
    // quick-select (CPU: on the host; CUDA: on the device, cambi_pool.cuh, from worker
    // threads, several frames in flight); the values must be the reference's. Full_ref:
    // both passes.
    const unsigned w = 3840, h = 2160, frames = 4;
    Clip clip;
    clip.w = w, clip.h = h, clip.bpc = 10;
    for (unsigned f = 0; f < frames; ++f) {
        std::vector<std::uint8_t> r(std::size_t(w) * h * 2), d(r.size());
        const unsigned split = w * (30 + 7 * f) / 100;
        for (unsigned y = 0; y < h; ++y)
            for (unsigned x = 0; x < w; ++x) {
                const unsigned dv = x < split ? 100 + (((x + 5 * f) / 32) & 1)
                                              : ((x + f) % 65 == 0 && y % 65 == 0) ? 121 : 120;
                const unsigned rv = x < split / 2 ? 100 + ((x / 16) & 1) : 120 + ((x * 7 + y * 3 + f) % 3 == 0);
                const std::size_t i = (std::size_t(y) * w + x) * 2;
                d[i] = std::uint8_t(dv & 0xff), d[i + 1] = std::uint8_t(dv >> 8);
                r[i] = std::uint8_t(rv & 0xff), r[i + 1] = std::uint8_t(rv >> 8);
            }
        clip.ref.push_back(r);
        clip.dis.push_back(d);
    }
    ref::CambiOptions opt;
    opt.full_ref = true;
    const ref::CambiPlan plan = ref::cambi_plan(opt, w, h, clip.bpc);
    // The case is the one meant: at scale 0 of the first distorted frame the order-free sum
    // is not guaranteed, and is not libvmaf's value.
    {
        std::vector<std::uint16_t> img(std::size_t(w) * h), mask(img.size()), scratch;
        std::vector<float> cv(img.size());
        ref::cambi_preprocess(clip.view(clip.dis[0]), w, h, plan.enc_bitdepth, img.data());
        ref::cambi_spatial_mask(img.data(), w, h, plan.dist.mask_index, mask.data());
        ref::cambi_filter_mode(img.data(), w, h, scratch);
        ref::cambi_c_values(img.data(), mask.data(), w, h, plan.dist.window_size, plan, cv.data(), scratch);
        const ref::CambiTopkExact ex = ref::cambi_topk_exact(cv, plan.topk);
        REQUIRE_FALSE(ex.equals_libvmaf);
        REQUIRE_FALSE(same_double(ex.score, ref::cambi_spatial_pooling(cv, plan.topk)));
    }
    const ApiRun run = run_api(clip, "name=cambi:full_ref=true");
    REQUIRE(run.frames.size() == frames);
    ref::CambiScratch scratch;
    for (unsigned i = 0; i < frames; ++i) {
        const ref::LumaView d = clip.view(clip.dis[i]), r = clip.view(clip.ref[i]);
        const ref::CambiScores want = ref::cambi_frame(d, &r, plan, scratch);
        INFO(backend_name() << " backend, frame " << i);
        CHECK(fmt17(run.frames[i].at("cambi")) == fmt17(want.cambi));
        CHECK(fmt17(run.frames[i].at("cambi_source")) == fmt17(want.source));
        CHECK(fmt17(run.frames[i].at("cambi_full_reference")) == fmt17(want.full_reference));
    }
}

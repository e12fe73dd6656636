// SPDX-License-Identifier: BSD-2-Clause-Patent
// Suite `golden`: the integer ADM and motion outputs of the VMAF v1.0.16 models (SDR and
// HFR), computed directly through the CPU reference (reference/adm.h, reference/motion.h)
// with each model's feature_opts_dicts, against libvmaf v3.2.0's own JSON logs
// (../shared/golden/libvmaf/<case>.vmaf_v1.0.16_*.json): every frame's value of every
// ADM/motion key and their pooled values (min, max, mean, harmonic mean), exact doubles.
//
// The option values reach the reference the way libvmaf's do: the model's JSON value is
// stored as "%g" of the float (libvmaf's feature dictionary), and the extractor parses
// that text (engine option_value). Names come from the engine's feature_key/alias.

#include "adm.h"
#include "feature_registry.h"
#include "golden_util.h"
#include "model.h"
#include "motion.h"
#include "pooling.h"
#include "vmaf_cuda.h"

#include "catch.hpp"
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

using namespace vmaf_cuda_test;
namespace eng = vmaf_cuda::engine;
namespace vref = vmaf_cuda::ref;
using json = nlohmann::json;

namespace {

json read_json(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    return json::parse(in);
}

/// libvmaf's feature dictionary text of a model option value: numbers as "%g" of the
/// float, booleans "true"/"false", strings as they are.
std::string dict_text(const json& v) {
    if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
    if (v.is_string()) return v.get<std::string>();
    char b[64];
    std::snprintf(b, sizeof b, "%g", double(float(v.get<double>())));
    return b;
}

/// The ADM and motion extractor instances of a model file (others, e.g. cambi, skipped).
std::vector<eng::FeatureSpec> model_specs(const std::string& model_path) {
    const json md = read_json(model_path).at("model_dict");
    const json& names = md.at("feature_names");
    const json opts = md.value("feature_opts_dicts", json::array());
    std::vector<eng::FeatureSpec> out;
    for (std::size_t i = 0; i < names.size(); ++i) {
        const auto ext = eng::extractor_of_feature(names[i].get<std::string>());
        if (!ext || (*ext != "adm" && *ext != "motion")) continue;
        eng::FeatureSpec spec{*ext, {}};
        if (i < opts.size())
            for (auto o = opts[i].begin(); o != opts[i].end(); ++o)
                spec.options[o.key()] = dict_text(*o);
        eng::add_unique(out, spec);
    }
    return out;
}

struct CaseData {
    GoldenCase c;
    std::vector<std::vector<std::uint8_t>> ref, dist;
    vref::LumaView view(const std::vector<std::uint8_t>& f) const {
        vref::LumaView v;
        v.data = f.data();
        v.pitch = std::ptrdiff_t(c.width) * (c.bpc > 8 ? 2 : 1);
        v.width = c.width;
        v.height = c.height;
        v.bpc = c.bpc;
        return v;
    }
};

/// Per-frame values of each output name of one extractor instance.
using Series = std::map<std::string, std::vector<double>>;

Series compute_adm(const CaseData& d, const eng::FeatureSpec& spec) {
    const vref::AdmOptions opt = eng::adm_options(spec);
    const auto names = eng::extractor_output_names(spec); // adm2, aim, adm3, scale0..3
    vref::AdmScratch scratch(d.c.width, d.c.height);
    Series s;
    for (std::size_t i = 0; i < d.ref.size(); ++i) {
        vref::AdmAccum acc;
        vref::adm_accumulate(d.view(d.ref[i]), d.view(d.dist[i]), opt, scratch, acc);
        const vref::AdmScores a = vref::adm_finish(acc, opt, d.c.width, d.c.height);
        const double v[7] = {a.adm2, a.aim, a.adm3, a.scale[0], a.scale[1], a.scale[2], a.scale[3]};
        for (int k = 0; k < 7; ++k) s[names[k]].push_back(v[k]);
    }
    return s;
}

/// Raw SADs of frames 0..n-1 for one frame distance (0 before the first frame that has one).
std::vector<std::uint64_t> raw_sads(const CaseData& d, unsigned distance) {
    vref::MotionScratch scratch(d.c.width, d.c.height, d.c.bpc);
    std::vector<std::uint64_t> out(d.ref.size(), 0);
    for (std::size_t i = distance; i < d.ref.size(); ++i)
        out[i] = vref::motion_sad(d.view(d.ref[i - distance]), d.view(d.ref[i]), scratch);
    return out;
}

Series compute_motion(const CaseData& d, const eng::FeatureSpec& spec,
                      std::map<unsigned, std::vector<std::uint64_t>>& sad_cache) {
    const vref::MotionOptions opt = eng::motion_options(spec);
    const auto names = eng::extractor_output_names(spec); // sad, motion2, motion3
    const unsigned dist = vref::motion_sad_distance(opt);
    if (!sad_cache.count(dist)) sad_cache[dist] = raw_sads(d, dist);
    const std::vector<std::uint64_t>& raw = sad_cache[dist];
    const std::size_t n = raw.size();
    std::vector<double> sad(n, 0.0);
    for (std::size_t i = vref::motion_first_index(opt); i < n; ++i)
        sad[i] = vref::motion_sad_finish(raw[i], d.c.width, d.c.height, opt);
    Series s;
    s[names[0]] = sad;
    std::vector<double>& m2 = s[names[1]];
    std::vector<double>& m3 = s[names[2]];
    vref::motion_pool(sad, m2, m3, opt);
    // Streaming: each frame's scores are final once its lookahead is known.
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t known = std::min(n, i + 1 + vref::motion_lookahead(opt, i));
        const vref::MotionScores ms =
            vref::motion_scores(i, std::span<const double>(sad.data(), known), opt);
        if (!same_double(ms.motion2, m2[i]) || !same_double(ms.motion3, m3[i]))
            throw std::runtime_error("motion: frame " + std::to_string(i) +
                                     " differs with only its lookahead known");
    }
    return s;
}

/// Values compared and mismatches of one key; the very first mismatch of the run is
/// printed (the others go to the failing CHECK's message).
struct Tally {
    long values = 0, mismatches = 0;
    std::string first;
    void note(const std::string& what) {
        static bool printed = false;
        if (mismatches++ == 0) first = what;
        if (!printed) {
            printed = true;
            std::cout << "first mismatch: " << what << std::endl;
        }
    }
};

} // namespace

TEST_CASE("v1.0.16 models: integer ADM and motion outputs through the reference",
          "[golden][v1016]") {
    const std::string gdir = require_golden_dir();
    Tally total;
    long files = 0;
    for (const GoldenCase& c : golden_cases()) {
        std::vector<std::pair<std::string, std::string>> logs; // model version, path
        for (const auto& e : std::filesystem::directory_iterator(gdir + "/libvmaf")) {
            const std::string f = e.path().filename().string();
            const std::string pre = c.name + ".vmaf_v1.0.16_";
            if (f.rfind(pre, 0) == 0 && f.size() > 5 && f.ends_with(".json"))
                logs.emplace_back(f.substr(c.name.size() + 1, f.size() - c.name.size() - 6),
                                  e.path().string());
        }
        if (logs.empty()) continue;
        std::sort(logs.begin(), logs.end());
        CaseData d{c, read_luma_frames(c, c.ref), read_luma_frames(c, c.dist)};
        REQUIRE(d.ref.size() == c.frames);
        REQUIRE(d.dist.size() == c.frames);
        std::map<eng::OptionMap, Series> adm_cache;
        std::map<unsigned, std::vector<std::uint64_t>> sad_cache;

        for (const auto& [version, path] : logs) {
            ++files;
            const json g = read_json(path);
            Series ours;
            for (const eng::FeatureSpec& spec : model_specs(model_dir() + "/" + version + ".json")) {
                Series s;
                if (spec.extractor == "adm") {
                    if (!adm_cache.count(spec.options)) adm_cache[spec.options] = compute_adm(d, spec);
                    s = adm_cache[spec.options];
                } else {
                    s = compute_motion(d, spec, sad_cache);
                }
                ours.insert(s.begin(), s.end());
            }
            // Every ADM/motion key of libvmaf's log is one we computed.
            const json& frames = g.at("frames");
            REQUIRE(frames.size() == c.frames);
            for (auto it = frames[0].at("metrics").begin(); it != frames[0].at("metrics").end(); ++it) {
                const std::string k = it.key();
                const bool ours_kind = k.find("adm") != std::string::npos ||
                                       k.find("aim") != std::string::npos ||
                                       k.find("motion") != std::string::npos;
                INFO(c.name << " " << version << ": libvmaf key " << k);
                if (ours_kind) CHECK(ours.count(k) == 1);
            }
            for (const auto& [name, vals] : ours) {
                Tally t;
                for (std::size_t i = 0; i < frames.size(); ++i) {
                    const json& m = frames[i].at("metrics");
                    ++t.values;
                    if (!m.contains(name)) {
                        t.note(c.name + " " + version + " frame " + std::to_string(i) + " " + name +
                               ": not in libvmaf's log");
                        continue;
                    }
                    const double want = m.at(name).get<double>();
                    if (!same_double(vals[i], want))
                        t.note(c.name + " " + version + " frame " + std::to_string(i) + " " + name +
                               ": ours " + fmt17(vals[i]) + ", libvmaf " + fmt17(want));
                }
                INFO(t.first);
                CHECK(t.mismatches == 0);
                const json& pm = g.at("pooled_metrics").at(name);
                const std::pair<const char*, int> pools[] = {
                    {"min", VMAF_CUDA_POOL_MIN}, {"max", VMAF_CUDA_POOL_MAX},
                    {"mean", VMAF_CUDA_POOL_MEAN}, {"harmonic_mean", VMAF_CUDA_POOL_HARMONIC_MEAN}};
                for (const auto& [pname, method] : pools) {
                    const double want = pm.at(pname).get<double>();
                    const double got = eng::pool(vals, method);
                    ++t.values;
                    const bool ok = same_double(got, want);
                    if (!ok)
                        t.note(c.name + " " + version + " pooled " + pname + " " + name + ": ours " +
                               fmt17(got) + ", libvmaf " + fmt17(want));
                    INFO(c.name << " " << version << " pooled " << pname << " " << name << ": ours "
                                << fmt17(got) << ", libvmaf " << fmt17(want));
                    CHECK(ok);
                }
                total.values += t.values;
                total.mismatches += t.mismatches;
                if (total.first.empty()) total.first = t.first;
            }
        }
    }
    std::cout << "v1.0.16: " << files << " libvmaf logs, " << total.values
              << " values compared, " << total.mismatches << " differ"
              << (total.first.empty() ? "" : "; first: " + total.first) << std::endl;
    CHECK(files > 0);
}

namespace {

VmafCudaBackend test_backend() {
    const char* b = std::getenv("VMAF_CUDA_TEST_BACKEND");
    if (b && std::string(b) == "cuda") return VMAF_CUDA_BACKEND_CUDA;
    return VMAF_CUDA_BACKEND_CPU;
}

/// The C API `features` entry of an ADM spec: "adm:opt=val:...".
std::string feature_entry(const eng::FeatureSpec& spec) {
    std::string e = spec.extractor;
    for (const auto& [k, v] : spec.options) e += ":" + k + "=" + v;
    return e;
}

/// Runs a case through the C API with extra features `features`; per-frame values by
/// name, and the four pooled values of every name.
struct ApiRun {
    std::vector<std::map<std::string, double>> frames;
    std::map<std::string, std::map<std::string, double>> pooled;
};

ApiRun run_api(const CaseData& d, const std::string& features) {
    VmafCudaSettings s;
    vmaf_cuda_default_settings(&s);
    s.width = d.c.width;
    s.height = d.c.height;
    s.bpc = d.c.bpc;
    s.backend = test_backend();
    s.features = features.c_str();
    VmafCudaSession* vs = nullptr;
    char err[512] = "";
    const int rc = vmaf_cuda_open(&vs, &s, err, sizeof err);
    INFO("open with features " << features << ": " << err);
    REQUIRE(rc == VMAF_CUDA_OK);
    ApiRun out;
    const std::ptrdiff_t pitch = std::ptrdiff_t(d.c.width) * (d.c.bpc > 8 ? 2 : 1);
    VmafCudaFrameScores fs;
    auto drain = [&](int until) {
        int r;
        while ((r = vmaf_cuda_receive(vs, &fs)) == VMAF_CUDA_OK) {
            std::map<std::string, double> m;
            for (unsigned i = 0; i < fs.count; ++i) m[fs.names[i]] = fs.values[i];
            out.frames.push_back(m);
        }
        INFO(vmaf_cuda_error_message(vs));
        REQUIRE(r == until);
    };
    for (std::size_t i = 0; i < d.ref.size(); ++i) {
        VmafCudaPicture rp{d.ref[i].data(), pitch, 0, VMAF_CUDA_MEMORY_HOST};
        VmafCudaPicture dp{d.dist[i].data(), pitch, 0, VMAF_CUDA_MEMORY_HOST};
        REQUIRE(vmaf_cuda_send(vs, &rp, &dp) == VMAF_CUDA_OK);
        drain(VMAF_CUDA_EAGAIN);
    }
    REQUIRE(vmaf_cuda_flush(vs) == VMAF_CUDA_OK);
    drain(VMAF_CUDA_EOF);
    const char* pools[] = {"mean", "harmonic_mean", "min", "max"};
    if (!out.frames.empty())
        for (const auto& [name, value] : out.frames.front())
            for (int p = 0; p < 4; ++p) {
                double v = 0;
                if (vmaf_cuda_pooled(vs, name.c_str(), VmafCudaPool(p), &v) == VMAF_CUDA_OK)
                    out.pooled[name][pools[p]] = v;
            }
    vmaf_cuda_close(vs);
    return out;
}

} // namespace

TEST_CASE("v1.0.16 models: ADM options through the C API (features=adm:...)", "[golden][v1016][api]") {
    const std::string gdir = require_golden_dir();
    Tally total;
    for (const GoldenCase& c : golden_cases()) {
        // One libvmaf log per distinct ADM option set of the v1.0.16 models.
        std::map<eng::OptionMap, std::pair<eng::FeatureSpec, std::string>> configs;
        for (const auto& e : std::filesystem::directory_iterator(gdir + "/libvmaf")) {
            const std::string f = e.path().filename().string();
            const std::string pre = c.name + ".vmaf_v1.0.16_";
            if (f.rfind(pre, 0) != 0 || !f.ends_with(".json")) continue;
            const std::string version = f.substr(c.name.size() + 1, f.size() - c.name.size() - 6);
            for (const eng::FeatureSpec& spec : model_specs(model_dir() + "/" + version + ".json"))
                if (spec.extractor == "adm" && !configs.count(spec.options))
                    configs[spec.options] = {spec, e.path().string()};
        }
        if (configs.empty()) continue;
        CaseData d{c, read_luma_frames(c, c.ref), read_luma_frames(c, c.dist)};
        std::string features;
        for (const auto& [opts, cfg] : configs) {
            if (!features.empty()) features += '|';
            features += feature_entry(cfg.first);
        }
        const ApiRun run = run_api(d, features);
        REQUIRE(run.frames.size() == c.frames);
        for (const auto& [opts, cfg] : configs) {
            const json g = read_json(cfg.second);
            for (const std::string& name : eng::extractor_output_names(cfg.first)) {
                Tally t;
                for (std::size_t i = 0; i < c.frames; ++i) {
                    ++t.values;
                    const auto it = run.frames[i].find(name);
                    const double want = g.at("frames")[i].at("metrics").at(name).get<double>();
                    if (it == run.frames[i].end())
                        t.note(c.name + " API: no output " + name);
                    else if (!same_double(it->second, want))
                        t.note(c.name + " API frame " + std::to_string(i) + " " + name + ": ours " +
                               fmt17(it->second) + ", libvmaf " + fmt17(want));
                }
                for (const char* p : {"mean", "harmonic_mean", "min", "max"}) {
                    ++t.values;
                    const double want = g.at("pooled_metrics").at(name).at(p).get<double>();
                    const auto pit = run.pooled.find(name);
                    if (pit == run.pooled.end() || !same_double(pit->second.at(p), want))
                        t.note(c.name + " API pooled " + p + " " + name + ": libvmaf " + fmt17(want));
                }
                INFO(t.first);
                CHECK(t.mismatches == 0);
                total.values += t.values;
                total.mismatches += t.mismatches;
            }
        }
    }
    std::cout << "v1.0.16 ADM through the C API (" << (test_backend() == VMAF_CUDA_BACKEND_CUDA ? "cuda" : "cpu")
              << "): " << total.values << " values compared, " << total.mismatches << " differ" << std::endl;
    CHECK(total.values > 0);
}

TEST_CASE("ADM options libvmaf rejects are refused at open", "[v1016][api]") {
    VmafCudaSettings s;
    vmaf_cuda_default_settings(&s);
    s.width = 64;
    s.height = 64;
    s.bpc = 8;
    s.backend = test_backend();
    for (const char* f : {"adm:adm_norm_view_dist=1", "adm:adm_csf_mode=2:adm_ref_display_height=1440",
                          "adm:adm_csf_mode=3:adm_norm_view_dist=4"}) {
        s.features = f;
        VmafCudaSession* vs = nullptr;
        char err[512] = "";
        const int rc = vmaf_cuda_open(&vs, &s, err, sizeof err);
        INFO(f << ": " << err);
        CHECK(rc == VMAF_CUDA_EINVAL);
        CHECK(std::string(err).find("adm") != std::string::npos);
        if (vs) vmaf_cuda_close(vs);
    }
}

TEST_CASE("motion lookahead follows libvmaf's flush()", "[v1016][motion]") {
    vref::MotionOptions def, ffw;
    ffw.five_frame_window = true;
    CHECK(vref::motion_first_index(def) == 1);
    CHECK(vref::motion_first_index(ffw) == 2);
    CHECK(vref::motion_sad_distance(def) == 1);
    CHECK(vref::motion_sad_distance(ffw) == 2);
    CHECK(vref::motion_max_lookahead(def) == 1);
    CHECK(vref::motion_max_lookahead(ffw) == 2);
    for (std::size_t i = 0; i < 5; ++i) CHECK(vref::motion_lookahead(def, i) == 1);
    CHECK(vref::motion_lookahead(ffw, 0) == 2);
    CHECK(vref::motion_lookahead(ffw, 1) == 1);
    CHECK(vref::motion_lookahead(ffw, 2) == 1);
    CHECK(vref::motion_lookahead(ffw, 9) == 1);
    // With the default options the optioned functions equal the default ones.
    const std::vector<double> sad = {0.0, 3.5, 1.25, 7.0, 2.0};
    std::vector<double> a2, a3, b2, b3;
    vref::motion_pool(sad, a2, a3);
    vref::motion_pool(sad, b2, b3, def);
    for (std::size_t i = 0; i < sad.size(); ++i) {
        CHECK(same_double(a2[i], b2[i]));
        CHECK(same_double(a3[i], b3[i]));
    }
    // Five-frame window by hand: sad[0], sad[1] are 0; motion2(2) = sad[3];
    // motion2(i >= 3) = min(sad[i-1], sad[i+1]); the last frame keeps its own sad.
    const std::vector<double> s5 = {0.0, 0.0, 4.0, 6.0, 1.0, 5.0};
    ffw.moving_average = true;
    ffw.max_val = 5.5;
    vref::motion_pool(s5, b2, b3, ffw);
    const double want2[] = {0.0, 0.0, 6.0, 1.0, 5.0, 5.0};
    const double p[] = {4.0, 4.0, 5.5, 1.0, 5.0, 5.0}; // stamp = blend(sad[2]); clipped at 5.5
    for (std::size_t i = 0; i < s5.size(); ++i) {
        INFO("frame " << i);
        CHECK(b2[i] == want2[i]);
        CHECK(b3[i] == (i < 2 ? p[i] : (p[i] + p[i - 1]) / 2.0));
    }
}

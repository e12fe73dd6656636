// SPDX-License-Identifier: BSD-2-Clause-Patent
// Suite `golden` (and `gpu` with VMAF_CUDA_TEST_BACKEND=cuda): the VMAF v1.0.16 models
// (SDR and HFR) end to end through the C API, against libvmaf v3.2.0's own JSON logs
// (../shared/golden/libvmaf/<case>.<model>.json): every case of cases.tsv, every frame,
// every key (and the key order), every pooled value, exact doubles; the chroma planes
// come from the YUV files (ceil-sized where subsampled, as reference/yuv.h says). Where
// libvmaf crashed (<case>.<model>.error.txt), vmaf_cuda_open must fail with EINVAL and a
// message naming the model, the feature, the frame size and the smallest size accepted.
//
// Also: speed_chroma alone through the features string (the models' option sets), the
// model's chroma correction (predict() from libvmaf's own logged inputs gives libvmaf's
// score), and speed_temporal against the reference.

#include "error.h"
#include "feature_registry.h"
#include "golden_util.h"
#include "model.h"
#include "speed.h"
#include "vmaf_cuda.h"

#include "catch.hpp"
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

using namespace vmaf_cuda_test;
namespace eng = vmaf_cuda::engine;
namespace vref = vmaf_cuda::ref;
using ojson = nlohmann::ordered_json;

namespace {

const char* const kModels[] = {
    "vmaf_v1.0.16_3d0h",          "vmaf_v1.0.16_5d0h",          "vmaf_v1.0.16_3d0h_2160",
    "vmaf_v1.0.16_1d5h_2160",     "vmaf_v1.0.16_hfr_3d0h",      "vmaf_v1.0.16_hfr_5d0h",
    "vmaf_v1.0.16_hfr_3d0h_2160", "vmaf_v1.0.16_hfr_1d5h_2160",
};

VmafCudaBackend test_backend() {
    const char* b = std::getenv("VMAF_CUDA_TEST_BACKEND");
    if (b && std::string(b) == "cuda") return VMAF_CUDA_BACKEND_CUDA;
    return VMAF_CUDA_BACKEND_CPU;
}

bool exists(const std::string& p) { return bool(std::ifstream(p)); }

ojson read_ojson(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    return ojson::parse(in);
}

struct Frames {
    std::vector<YuvFrame> ref, dist;
};

/// One case's frames, read once.
const Frames& case_frames(const GoldenCase& c) {
    static std::map<std::string, Frames> cache;
    auto it = cache.find(c.name);
    if (it != cache.end()) return it->second;
    if (cache.size() > 2) cache.clear();
    Frames f{read_yuv_frames(c, c.ref), read_yuv_frames(c, c.dist)};
    REQUIRE(f.ref.size() == c.frames);
    REQUIRE(f.dist.size() == c.frames);
    return cache[c.name] = std::move(f);
}

VmafCudaSettings case_settings(const GoldenCase& c) {
    VmafCudaSettings s;
    vmaf_cuda_default_settings(&s);
    s.width = c.width;
    s.height = c.height;
    s.bpc = c.bpc;
    s.chroma = c.chroma == 444 ? VMAF_CUDA_CHROMA_444
               : c.chroma == 422 ? VMAF_CUDA_CHROMA_422
                                 : VMAF_CUDA_CHROMA_420;
    s.backend = test_backend();
    return s;
}

VmafCudaPicture picture(const YuvFrame& f) {
    VmafCudaPicture p{};
    p.luma = f.y.data();
    p.pitch = std::ptrdiff_t(f.pitch(0));
    p.shift = 0;
    p.memory = VMAF_CUDA_MEMORY_HOST;
    p.chroma[0] = f.u.data();
    p.chroma[1] = f.v.data();
    p.chroma_pitch = std::ptrdiff_t(f.pitch(1));
    p.chroma_step = 1;
    return p;
}

struct Run {
    std::vector<unsigned> index;
    std::vector<std::vector<std::pair<std::string, double>>> frames; ///< in API order
    std::map<std::string, std::map<std::string, double>> pooled;     ///< name -> pool -> value
};

/// Opens a session with `models` / `features`; runs the whole case when it opens.
/// Returns the open status; `err` gets the open message.
int run(const GoldenCase& c, const char* models, const char* features, Run& out, std::string& err,
        unsigned n_subsample = 1) {
    VmafCudaSettings s = case_settings(c);
    s.n_subsample = n_subsample;
    s.models = models;
    s.features = features;
    s.no_prediction = models == nullptr;
    VmafCudaSession* vs = nullptr;
    char buf[1024] = "";
    const int rc = vmaf_cuda_open(&vs, &s, buf, sizeof buf);
    err = buf;
    if (rc != VMAF_CUDA_OK) return rc;
    const Frames& f = case_frames(c);
    VmafCudaFrameScores fs;
    auto drain = [&](int until) {
        int r;
        while ((r = vmaf_cuda_receive(vs, &fs)) == VMAF_CUDA_OK) {
            out.index.push_back(fs.index);
            std::vector<std::pair<std::string, double>> row;
            for (unsigned i = 0; i < fs.count; ++i) row.emplace_back(fs.names[i], fs.values[i]);
            out.frames.push_back(std::move(row));
        }
        INFO(vmaf_cuda_error_message(vs));
        REQUIRE(r == until);
    };
    for (unsigned i = 0; i < c.frames; ++i) {
        const VmafCudaPicture rp = picture(f.ref[i]), dp = picture(f.dist[i]);
        const int sr = vmaf_cuda_send(vs, &rp, &dp);
        INFO("send frame " << i << ": " << vmaf_cuda_error_message(vs));
        REQUIRE(sr == VMAF_CUDA_OK);
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
    return rc;
}

/// Values compared and mismatches; the first mismatch described.
struct Tally {
    long values = 0, bad = 0;
    std::string first;
    void check(bool ok, const std::string& what) {
        ++values;
        if (!ok && bad++ == 0) first = what;
    }
};

/// Compares the keys of libvmaf's log `g` that `keep` accepts with the run: every frame
/// (and, with `order`, the key order: our names must be exactly libvmaf's, in order) and
/// every pooled value.
template <class Keep>
void compare(const ojson& g, const Run& r, Keep keep, bool order, Tally& t, const std::string& who) {
    const ojson& frames = g.at("frames");
    REQUIRE(r.frames.size() == frames.size());
    for (std::size_t f = 0; f < frames.size(); ++f) {
        t.check(frames[f].at("frameNum").template get<unsigned>() == r.index[f],
                who + ": frame " + std::to_string(f) + " has index " + std::to_string(r.index[f]));
        std::map<std::string, double> ours(r.frames[f].begin(), r.frames[f].end());
        std::vector<std::string> want_names;
        for (const auto& [key, val] : frames[f].at("metrics").items()) {
            want_names.push_back(key);
            if (!keep(key)) continue;
            const auto it = ours.find(key);
            if (it == ours.end()) {
                t.check(false, who + " frame " + std::to_string(f) + ": no output named " + key);
                continue;
            }
            const double want = val.template get<double>();
            t.check(same_double(it->second, want), who + " frame " + std::to_string(f) + " " + key +
                                                       ": ours " + fmt17(it->second) + ", libvmaf " +
                                                       fmt17(want));
        }
        if (order) {
            std::vector<std::string> got;
            for (const auto& [n, v] : r.frames[f]) got.push_back(n);
            std::string gs, ws;
            for (const auto& n : got) gs += n + " ";
            for (const auto& n : want_names) ws += n + " ";
            t.check(got == want_names, who + " frame " + std::to_string(f) + ": names [" + gs +
                                           "], libvmaf [" + ws + "]");
        }
    }
    for (const auto& [key, pools] : g.at("pooled_metrics").items()) {
        if (!keep(key)) continue;
        const auto pit = r.pooled.find(key);
        for (const auto& [pool, val] : pools.items()) {
            const double want = val.template get<double>();
            const bool have = pit != r.pooled.end() && pit->second.count(pool);
            const double got = have ? pit->second.at(pool) : 0.0;
            t.check(have && same_double(got, want), who + " pooled " + key + " " + pool + ": ours " +
                                                        (have ? fmt17(got) : "none") + ", libvmaf " +
                                                        fmt17(want));
        }
    }
}

/// The model's speed_chroma spec (its options as the model sets them).
eng::FeatureSpec speed_spec(const eng::Model& m) {
    for (const eng::ModelFeature& f : m.features())
        if (f.spec.extractor == "speed_chroma") return f.spec;
    throw std::runtime_error(m.source() + ": no speed_chroma input");
}

/// The speed_chroma options of a model file, read from its JSON as libvmaf's feature
/// dictionary stores them ("%g" of the float; strings as they are); for the tests that
/// do not load the model (its other inputs may need extractors this build lacks).
eng::FeatureSpec speed_spec_from_file(const std::string& version) {
    const ojson j = read_ojson(model_dir() + "/" + version + ".json");
    const ojson& md = j.at("model_dict");
    const ojson& names = md.at("feature_names");
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (names[i].get<std::string>().rfind("Speed_chroma_feature", 0) != 0) continue;
        eng::FeatureSpec spec{"speed_chroma", {}};
        for (const auto& [k, v] : md.at("feature_opts_dicts")[i].items()) {
            std::string text;
            if (v.is_string()) {
                text = v.get<std::string>();
            } else {
                char b[64];
                std::snprintf(b, sizeof b, "%g", double(float(v.get<double>())));
                text = b;
            }
            eng::set_option(spec, k, text, VMAF_CUDA_EINVAL);
        }
        return spec;
    }
    throw std::runtime_error(version + ": no speed_chroma input");
}

std::string features_entry(const eng::FeatureSpec& spec) {
    std::string e = "name=" + spec.extractor;
    for (const auto& [k, v] : spec.options) e += ":" + k + "=" + v;
    return e;
}

std::string size_text(unsigned w, unsigned h) { return std::to_string(w) + "x" + std::to_string(h); }

} // namespace

TEST_CASE("v1.0.16 models through the C API: every case, frame, key (in order), pooled value",
          "[golden][v1016][models]") {
    const auto cases = golden_cases();
    for (const GoldenCase& c : cases)
        for (const char* model : kModels) {
            const std::string base = golden_dir() + "/libvmaf/" + c.name + "." + model;
            const bool has_json = exists(base + ".json"), has_err = exists(base + ".error.txt");
            if (!has_json && !has_err) continue;
            DYNAMIC_SECTION(c.name << " " << model) {
                const std::string models = std::string("version=") + model + ":name=" + model;
                Run r;
                std::string err;
                const int rc = run(c, models.c_str(), nullptr, r, err);
                if (has_err) {
                    // libvmaf crashed ("SpEED: image too small"): a clear error at open.
                    INFO(c.name << " " << model << ": open says: " << err);
                    CHECK(rc == VMAF_CUDA_EINVAL);
                    const eng::Model m = eng::resolve_model(eng::parse_model_string(models)[0], true, nullptr);
                    const vref::SpeedSize min =
                        vref::speed_chroma_min_frame_size(c.chroma, eng::speed_options(speed_spec(m)));
                    CHECK(err.find(model) != std::string::npos);
                    CHECK(err.find("speed_chroma") != std::string::npos);
                    CHECK(err.find(size_text(c.width, c.height)) != std::string::npos);
                    CHECK(err.find(size_text(min.width, min.height)) != std::string::npos);
                } else {
                    INFO(c.name << " " << model << ": open says: " << err);
                    REQUIRE(rc == VMAF_CUDA_OK);
                    const ojson g = read_ojson(base + ".json");
                    Tally t;
                    compare(g, r, [](const std::string&) { return true; }, true, t, c.name + " " + model);
                    std::cout << c.name << "." << model << " ("
                              << (test_backend() == VMAF_CUDA_BACKEND_CUDA ? "cuda" : "cpu") << "): "
                              << t.values << " values, " << t.bad << " differ" << std::endl;
                    INFO(t.bad << " of " << t.values << " differ; first: " << t.first);
                    CHECK(t.values > 0);
                    CHECK(t.bad == 0);
                }
            }
        }
}

TEST_CASE("speed_chroma through the features string: the v1.0.16 option sets vs libvmaf's logs",
          "[golden][v1016][speed]") {
    const auto cases = golden_cases();
    for (const GoldenCase& c : cases) {
        // One libvmaf log per distinct speed_chroma option set.
        std::map<eng::OptionMap, std::pair<eng::FeatureSpec, std::string>> configs;
        for (const char* model : kModels) {
            const std::string base = golden_dir() + "/libvmaf/" + c.name + "." + model;
            const eng::FeatureSpec spec = speed_spec_from_file(model);
            if (configs.count(spec.options)) continue;
            if (exists(base + ".json")) configs[spec.options] = {spec, base + ".json"};
            else if (exists(base + ".error.txt")) configs[spec.options] = {spec, ""};
        }
        for (const auto& [opts, cfg] : configs) {
            const std::string features = features_entry(cfg.first);
            DYNAMIC_SECTION(c.name << " " << features) {
                Run r;
                std::string err;
                const int rc = run(c, nullptr, features.c_str(), r, err);
                INFO(c.name << " " << features << ": open says: " << err);
                if (cfg.second.empty()) {
                    const vref::SpeedSize min =
                        vref::speed_chroma_min_frame_size(c.chroma, eng::speed_options(cfg.first));
                    CHECK(rc == VMAF_CUDA_EINVAL);
                    CHECK(err.find("speed_chroma") != std::string::npos);
                    CHECK(err.find(size_text(c.width, c.height)) != std::string::npos);
                    CHECK(err.find(size_text(min.width, min.height)) != std::string::npos);
                } else {
                    REQUIRE(rc == VMAF_CUDA_OK);
                    Tally t;
                    compare(read_ojson(cfg.second), r,
                            [](const std::string& k) { return k.rfind("speed_chroma", 0) == 0; },
                            false, t, c.name + " " + features);
                    std::cout << c.name << " " << features << ": " << t.values << " values, " << t.bad
                              << " differ" << std::endl;
                    INFO(t.bad << " of " << t.values << " differ; first: " << t.first);
                    CHECK(t.values > 0);
                    CHECK(t.bad == 0);
                }
            }
        }
    }
}

TEST_CASE("chroma correction: predict() on libvmaf's logged inputs gives libvmaf's score",
          "[golden][v1016][model]") {
    const auto cases = golden_cases();
    Tally t;
    long corrected = 0;
    for (const char* model : kModels) {
        const eng::Model m = eng::resolve_model(
            eng::parse_model_string(std::string("version=") + model + ":name=" + model)[0], true, nullptr);
        REQUIRE(m.chroma_correction());
        for (const GoldenCase& c : cases) {
            const std::string path = golden_dir() + "/libvmaf/" + c.name + "." + model + ".json";
            if (!exists(path)) continue;
            const ojson g = read_ojson(path);
            for (const ojson& fr : g.at("frames")) {
                const ojson& mt = fr.at("metrics");
                std::vector<double> in;
                for (const eng::ModelFeature& f : m.features()) {
                    in.push_back(mt.at(f.log_name).get<double>());
                    if (f.spec.extractor == "speed_chroma" && in.back() == 0.0) ++corrected;
                }
                const double want = mt.at(model).get<double>();
                const double got = m.predict(in);
                t.check(same_double(got, want), c.name + " " + model + " frame " +
                                                    std::to_string(fr.at("frameNum").get<unsigned>()) +
                                                    ": ours " + fmt17(got) + ", libvmaf " + fmt17(want));
            }
        }
    }
    std::cout << "chroma correction: " << t.values << " frames predicted (" << corrected
              << " with speed_chroma 0, corrected), " << t.bad << " differ" << std::endl;
    INFO(t.first);
    CHECK(t.values > 0);
    CHECK(corrected > 0);
    CHECK(t.bad == 0);
}

TEST_CASE("speed_temporal through the C API equals the reference", "[golden][v1016][speed]") {
    const auto cases = golden_cases();
    int runs = 0;
    for (const GoldenCase& c : cases) {
        if (c.name != "src01_576x324_3f_8bit" && c.name != "sparks_480x270_5f_10bit" &&
            c.name != "testsrc2_321x241_8bit")
            continue;
        for (const char* features : {"name=speed_temporal",
                                     "name=speed_temporal:speed_use_ref_diff=true:speed_sigma_nn=0.19"})
        for (unsigned sub : {1u, 2u}) {
            DYNAMIC_SECTION(c.name << " " << features << " n_subsample " << sub) {
                ++runs;
                std::vector<eng::FeatureSpec> specs = eng::parse_feature_string(features);
                const vref::SpeedOptions o = eng::speed_options(specs[0]);
                const std::string name = vref::speed_temporal_output_name(o);
                Run r;
                std::string err;
                const int rc = run(c, nullptr, features, r, err, sub);
                INFO(err);
                REQUIRE(rc == VMAF_CUDA_OK);
                const Frames& f = case_frames(c);
                // A temporal extractor: every frame's pair counts, scored or not.
                vref::SpeedTemporal ref(c.width, c.height, o);
                REQUIRE(r.frames.size() == (c.frames + sub - 1) / sub);
                for (unsigned i = 0, k = 0; i < c.frames; ++i) {
                    auto view = [&](const YuvFrame& y) {
                        vref::LumaView v;
                        v.data = y.y.data();
                        v.pitch = std::ptrdiff_t(y.pitch(0));
                        v.width = c.width;
                        v.height = c.height;
                        v.bpc = c.bpc;
                        return v;
                    };
                    const double want = ref.push(view(f.ref[i]), view(f.dist[i]));
                    if (i % sub) continue;
                    REQUIRE(r.index[k] == i);
                    REQUIRE(r.frames[k].size() == 1);
                    CHECK(r.frames[k][0].first == name);
                    INFO("frame " << i << ": ours " << fmt17(r.frames[k][0].second) << ", reference "
                                  << fmt17(want));
                    CHECK(same_double(r.frames[k][0].second, want));
                    ++k;
                }
            }
        }
    }
    CHECK(runs > 0);
}

TEST_CASE("speed_chroma refuses what libvmaf cannot compute, before the first frame",
          "[v1016][speed]") {
    VmafCudaSettings s;
    vmaf_cuda_default_settings(&s);
    s.width = 320;
    s.height = 240;
    s.bpc = 8;
    s.backend = test_backend();
    s.no_prediction = 1;
    struct Bad {
        const char* features;
        unsigned bpc;
        VmafCudaChroma chroma;
        std::string says;
    };
    // The smallest sizes, from the reference's size rule.
    vref::SpeedOptions ps05;
    ps05.prescale = 0.5;
    const vref::SpeedSize c05 = vref::speed_chroma_min_frame_size(420, ps05);
    vref::SpeedOptions ps02;
    ps02.prescale = 0.2;
    const vref::SpeedSize t02 = vref::speed_temporal_min_frame_size(ps02);
    REQUIRE((c05.width > 320 || c05.height > 240)); // 320x240 is refused
    REQUIRE((t02.width > 320 || t02.height > 240));
    const Bad bad[] = {
        {"speed_chroma:speed_prescale=0.5", 8, VMAF_CUDA_CHROMA_420, size_text(c05.width, c05.height)},
        {"speed_chroma", 8, VMAF_CUDA_CHROMA_400, "4:0:0"},
        {"speed_chroma", 9, VMAF_CUDA_CHROMA_420, "bit depth 9"},
        {"speed_chroma:speed_kernelscale=1.3", 8, VMAF_CUDA_CHROMA_420, "speed_kernelscale"},
        {"speed_chroma:speed_prescale_method=area", 8, VMAF_CUDA_CHROMA_420, "area"},
        {"speed_temporal:speed_prescale=0.2", 8, VMAF_CUDA_CHROMA_420, size_text(t02.width, t02.height)},
    };
    for (const Bad& b : bad) {
        s.features = b.features;
        s.bpc = b.bpc;
        s.chroma = b.chroma;
        VmafCudaSession* vs = nullptr;
        char err[1024] = "";
        const int rc = vmaf_cuda_open(&vs, &s, err, sizeof err);
        INFO(b.features << " (bpc " << b.bpc << "): " << err);
        CHECK(rc == VMAF_CUDA_EINVAL);
        CHECK(std::string(err).find(b.says) != std::string::npos);
        CHECK(std::string(err).find(std::string(b.features).substr(0, 10)) != std::string::npos);
        if (vs) vmaf_cuda_close(vs);
    }
}

TEST_CASE("chroma_correction_parameter: what libvmaf cannot predict is refused at load",
          "[v1016][model]") {
    // A two-input model in libvmaf's layout; the variants break the correction.
    auto doc = [](const std::string& names, const std::string& param) {
        return std::string(R"({"model_dict": {"model_type": "LIBSVMNUSVR", "norm_type": "linear_rescale",
            "feature_names": )") + names + R"(,
            "slopes": [1.0, 1.0, 1.0], "intercepts": [0.0, 0.0, 0.0],
            "model": "svm_type nu_svr\nkernel_type rbf\ngamma 0.5\nnr_class 2\ntotal_sv 1\nrho 0\nSV\n1 1:0.5 2:0.5 \n")" +
               (param.empty() ? "" : ", \"chroma_correction_parameter\": " + param) + "}}";
    };
    const std::string good = R"(["Speed_chroma_feature_speed_chroma_uv_score", "VMAF_integer_feature_adm3_score"])";
    const eng::Model m = eng::load_model(doc(good, "120.0"), {});
    CHECK(m.chroma_correction());
    CHECK(m.chroma_correction_parameter() == 120.0);
    CHECK_FALSE(eng::load_model(doc(good, ""), {}).chroma_correction());
    const std::pair<std::string, std::string> bad[] = {
        {good, "0"},                 // libvmaf then writes no score at all
        {good, "\"120\""},           // not a number (libvmaf: -EINVAL)
        {R"(["Speed_chroma_feature_speed_chroma_uv_score", "VMAF_integer_feature_adm2_score"])", "120"},
        {R"(["VMAF_integer_feature_adm3_score", "VMAF_integer_feature_adm2_score"])", "120"},
        {R"(["Speed_chroma_feature_speed_chroma_uv_score", "Speed_chroma_feature_speed_chroma_u_score"])", "120"},
    };
    for (const auto& [names, param] : bad) {
        int status = 0;
        std::string what;
        try {
            (void)eng::load_model(doc(names, param), {});
        } catch (const eng::Error& e) {
            status = e.status;
            what = e.what();
        }
        INFO(names << " " << param << ": " << what);
        CHECK(status == VMAF_CUDA_EMODEL);
        CHECK(what.find("chroma_correction_parameter") != std::string::npos);
    }
}

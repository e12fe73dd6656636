// SPDX-License-Identifier: BSD-2-Clause-Patent
// Models (libvmaf JSON, nu-SVR predict) against libvmaf v3.2.0's golden `vmaf` column,
// model-file errors, model/feature strings, pooling and the log writers.

#include "catch.hpp"

#include "error.h"
#include "golden_util.h"
#include "model.h"
#include "pooling.h"
#include "vmaf_cuda.h"
#include "writers.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <unistd.h>

using namespace vmaf_cuda::engine;
namespace fs = std::filesystem;

using vmaf_cuda_test::model_dir;

namespace {

std::string read_text(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::ostringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

std::string g17(double v) {
    char b[64];
    std::snprintf(b, sizeof b, "%.17g", v);
    return b;
}

bool same_double(double a, double b) {
    return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b));
}

// Feeds every row of `csv` to `m` (inputs looked up by the model's feature keys) and
// counts rows whose prediction is the golden `vmaf` double. Reports the first mismatch.
std::size_t check_rows(const Model& m, const std::string& csv, std::size_t& rows) {
    const vmaf_cuda_test::GoldenTable t = vmaf_cuda_test::read_golden_csv(csv);
    std::vector<std::size_t> cols;
    for (const ModelFeature& f : m.features()) {
        std::size_t c = 0;
        while (c < t.columns.size() && t.columns[c] != f.key) ++c;
        INFO(csv << ": no column " << f.key);
        REQUIRE(c < t.columns.size());
        cols.push_back(c);
    }
    std::size_t vmaf_col = 0;
    while (vmaf_col < t.columns.size() && t.columns[vmaf_col] != "vmaf") ++vmaf_col;
    REQUIRE(vmaf_col < t.columns.size());
    std::size_t exact = 0;
    std::vector<double> scores;
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
        std::vector<double> in;
        for (std::size_t c : cols) in.push_back(t.rows[r][c]);
        const double got = m.predict(in);
        const double want = t.rows[r][vmaf_col];
        scores.push_back(got);
        if (same_double(got, want)) {
            ++exact;
        } else {
            FAIL_CHECK(csv << " frame " << r << ": vmaf " << g17(got) << ", libvmaf " << g17(want));
        }
    }
    rows += t.rows.size();
    // The trailing comment holds libvmaf's pooled vmaf.
    const std::pair<const char*, int> pools[] = {{"mean", VMAF_CUDA_POOL_MEAN},
                                                 {"harmonic_mean", VMAF_CUDA_POOL_HARMONIC_MEAN},
                                                 {"min", VMAF_CUDA_POOL_MIN},
                                                 {"max", VMAF_CUDA_POOL_MAX}};
    for (const auto& [name, method] : pools) {
        const auto it = t.pooled.find(name);
        if (it == t.pooled.end()) continue;
        const double got = pool(scores, method);
        INFO(csv << " pooled " << name << ": " << g17(got) << ", libvmaf " << g17(it->second));
        CHECK(same_double(got, it->second));
    }
    return exact;
}

template <class F>
int status_of(F&& f) {
    try {
        f();
    } catch (const Error& e) {
        UNSCOPED_INFO("error: " << e.what());
        return e.status;
    }
    return 0;
}

template <class F>
std::string message_of(F&& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

} // namespace

// ---- golden predictions ------------------------------------------------------------

TEST_CASE("vmaf_v0.6.1 reproduces libvmaf's vmaf for every golden frame", "[model][golden]") {
    const Model m = load_model_file(model_dir() + "/vmaf_v0.6.1.json", {});
    std::size_t rows = 0, exact = 0, files = 0;
    for (const auto& e : fs::directory_iterator(vmaf_cuda_test::require_golden_dir())) {
        if (e.path().extension() != ".csv") continue;
        exact += check_rows(m, e.path().string(), rows);
        ++files;
    }
    WARN("vmaf_v0.6.1: " << exact << "/" << rows << " frames exact in " << files << " files");
    CHECK(files >= 14);
    CHECK(exact == rows);
}

TEST_CASE("other models reproduce libvmaf (NEG, 4K, enable_transform)", "[model][golden]") {
    std::size_t rows = 0, exact = 0, files = 0;
    for (const auto& e : fs::directory_iterator(vmaf_cuda_test::require_golden_dir() + "/models")) {
        if (e.path().extension() != ".csv") continue;
        // <case>.<model>.csv
        const std::string stem = e.path().stem().string();
        std::string model = stem.substr(stem.find('.') + 1);
        ModelConfig cfg;
        if (model.ends_with("_enable_transform")) {
            model.resize(model.size() - std::strlen("_enable_transform"));
            cfg.enable_transform = true;
        }
        const Model m = load_model_file(model_dir() + "/" + model + ".json", cfg);
        exact += check_rows(m, e.path().string(), rows);
        ++files;
    }
    WARN("other models: " << exact << "/" << rows << " frames exact in " << files << " files");
    CHECK(files == 12);
    CHECK(exact == rows);
}

TEST_CASE("built-in models equal the model files", "[model]") {
    // Every model libvmaf v3.2.0 builds in is built in.
    const auto versions = builtin_model_versions();
    CHECK(versions == std::vector<std::string>{
                          "vmaf_4k_v0.6.1", "vmaf_4k_v0.6.1neg", "vmaf_b_v0.6.3",
                          "vmaf_float_4k_v0.6.1", "vmaf_float_b_v0.6.3", "vmaf_float_v0.6.1",
                          "vmaf_float_v0.6.1neg", "vmaf_v0.6.1",
                          "vmaf_v0.6.1neg", "vmaf_v1.0.16_1d5h_2160", "vmaf_v1.0.16_3d0h",
                          "vmaf_v1.0.16_3d0h_2160", "vmaf_v1.0.16_5d0h",
                          "vmaf_v1.0.16_hfr_1d5h_2160", "vmaf_v1.0.16_hfr_3d0h",
                          "vmaf_v1.0.16_hfr_3d0h_2160", "vmaf_v1.0.16_hfr_5d0h"});
    for (const std::string& v : versions) {
        const auto text = builtin_model_json(v);
        REQUIRE(text);
        CHECK(*text == read_text(model_dir() + "/" + v + ".json"));
    }
    CHECK_FALSE(builtin_model_json("vmaf_v9"));
}

TEST_CASE("the repository's models/ are libvmaf v3.2.0's model files, unchanged", "[model]") {
    // ../shared/models holds the files libvmaf v3.2.0 builds in, with their LICENSE.
    const std::string shared = vmaf_cuda_test::require_golden_dir() + "/../models";
    int n = 0;
    for (const auto& e : fs::directory_iterator(shared)) {
        const std::string name = e.path().filename().string();
        if (name != "LICENSE" && e.path().extension() != ".json") continue;
        INFO(name);
        CHECK(read_text(model_dir() + "/" + name) == read_text(e.path().string()));
        ++n;
    }
    CHECK(n == 18);
}

// ---- model contents ----------------------------------------------------------------

TEST_CASE("model inputs: names, keys, log names", "[model]") {
    const Model m = load_model_file(model_dir() + "/vmaf_v0.6.1.json", {});
    CHECK(m.name() == "vmaf");
    REQUIRE(m.features().size() == 6);
    CHECK(m.features()[0].name == "VMAF_integer_feature_adm2_score");
    CHECK(m.features()[0].key == "VMAF_integer_feature_adm2_score");
    CHECK(m.features()[0].log_name == "integer_adm2");
    CHECK(m.features()[0].spec.extractor == "adm");
    CHECK(m.features()[1].spec.extractor == "motion");
    CHECK(m.features()[1].log_name == "integer_motion2");
    CHECK(m.features()[2].spec.extractor == "vif");
    CHECK(m.support_vector_count() == 211);
    CHECK(m.clip_enabled());
    CHECK_FALSE(m.transform().enabled);

    const Model neg = load_model_file(model_dir() + "/vmaf_v0.6.1neg.json", {"vmaf_neg"});
    CHECK(neg.name() == "vmaf_neg");
    const char* keys[] = {"integer_adm2_egl_1", "VMAF_integer_feature_motion2_score",
                          "integer_vif_scale0_egl_1", "integer_vif_scale1_egl_1",
                          "integer_vif_scale2_egl_1", "integer_vif_scale3_egl_1"};
    for (std::size_t i = 0; i < 6; ++i) CHECK(neg.features()[i].key == keys[i]);
    CHECK(neg.features()[0].log_name == "integer_adm2_egl_1");
    CHECK(neg.features()[0].spec.options.at("adm_enhn_gain_limit") == "1");
    CHECK(option_value(neg.features()[0].spec, "adm_enhn_gain_limit") == 1.0);
    CHECK(option_value(neg.features()[1].spec, "motion_max_val") == 10000.0);
    CHECK(feature_key("integer_adm_scale2", neg.features()[0].spec) == "integer_adm_scale2_egl_1");
}

TEST_CASE("enable_transform and disable_clip", "[model]") {
    const std::string text = read_text(model_dir() + "/vmaf_4k_v0.6.1.json");
    const double ones[] = {1, 0, 1, 1, 1, 1};  // a perfect frame: the 4K model clips it to 100
    const Model plain = load_model(text, {});
    const Model unclipped = load_model(text, {"", false, true});
    // The 4K model has no score_transform block: enable_transform changes nothing.
    CHECK_FALSE(load_model(text, {"", true, false}).transform().enabled);
    const std::string v061 = read_text(model_dir() + "/vmaf_v0.6.1.json");
    const Model phone = load_model(v061, {"", true, false});
    const Model plain061 = load_model(v061, {});
    CHECK(plain.predict(ones) == 100.0);
    CHECK(unclipped.predict(ones) > 100.0);
    CHECK_FALSE(unclipped.clip_enabled());
    CHECK(phone.transform().enabled);
    CHECK(phone.transform().out_gte_in);
    CHECK(phone.transform().p2.has_value());
    const double mid[] = {0.9, 2.0, 0.5, 0.8, 0.9, 0.95};
    CHECK(phone.predict(mid) >= plain061.predict(mid));
    CHECK(phone.predict(mid) != plain061.predict(mid));
}

// ---- model errors ------------------------------------------------------------------

TEST_CASE("malformed models fail with EMODEL, never a crash", "[model][errors]") {
    const std::string good = read_text(model_dir() + "/vmaf_v0.6.1.json");
    REQUIRE(status_of([&] { load_model(good, {}); }) == 0);
    auto edited = [&](auto&& edit) {
        nlohmann::json j = nlohmann::json::parse(good);
        edit(j["model_dict"]);
        return j.dump();
    };
    auto emodel = [](const std::string& text) {
        return status_of([&] { load_model(text, {}); }) == VMAF_CUDA_EMODEL;
    };

    SECTION("truncated / not JSON") {
        CHECK(emodel(good.substr(0, good.size() / 2)));
        CHECK(emodel(""));
        CHECK(emodel("[1, 2]"));
        CHECK(emodel("{\"model_dict\": 5}"));
        CHECK(emodel("{}"));
        for (std::size_t cut = 1; cut < good.size(); cut += good.size() / 97) CHECK(emodel(good.substr(0, cut)));
    }
    SECTION("missing keys are named") {
        for (const char* key : {"model", "feature_names", "slopes", "intercepts", "norm_type", "model_type"}) {
            const std::string t = edited([&](nlohmann::json& md) { md.erase(key); });
            CHECK(emodel(t));
            CHECK(message_of([&] { load_model(t, {}); }).find(key) != std::string::npos);
        }
    }
    SECTION("wrong types and bad numbers") {
        CHECK(emodel(edited([](nlohmann::json& md) { md["slopes"][2] = "x"; })));
        CHECK(emodel(edited([](nlohmann::json& md) { md["feature_names"][0] = 3; })));
        CHECK(emodel(edited([](nlohmann::json& md) { md["score_clip"] = {0.0}; })));
        CHECK(emodel(edited([](nlohmann::json& md) { md["score_transform"]["p1"] = "1"; })));
        CHECK(emodel(edited([](nlohmann::json& md) { md["norm_type"] = "clip_0to1"; })));
        CHECK(emodel(edited([](nlohmann::json& md) {
            std::string s = md["model"];
            s.replace(s.find("gamma 0.04"), 10, "gamma 0.0x");
            md["model"] = s;
        })));
        CHECK(emodel(edited([](nlohmann::json& md) {
            std::string s = md["model"];
            s.replace(s.find("kernel_type rbf"), 15, "kernel_type lin");
            md["model"] = s;
        })));
        CHECK(emodel(edited([](nlohmann::json& md) {
            std::string s = md["model"];
            s.resize(s.size() / 2);  // fewer support vectors than total_sv
            md["model"] = s;
        })));
    }
    SECTION("counts that disagree") {
        CHECK(emodel(edited([](nlohmann::json& md) { md["slopes"].erase(1); })));
        CHECK(emodel(edited([](nlohmann::json& md) { md["intercepts"].push_back(0.5); })));
        CHECK(emodel(edited([](nlohmann::json& md) { md["feature_names"].erase(5); md["slopes"].erase(6); md["intercepts"].erase(6); })));
        CHECK(emodel(edited([](nlohmann::json& md) {
            md["feature_opts_dicts"] = nlohmann::json::array({{}, {}, {}, {}, {}, {}, {}});
        })));
    }
    SECTION("unknown features and options") {
        CHECK(emodel(edited([](nlohmann::json& md) { md["feature_names"][0] = "VMAF_feature_bogus_score"; })));
        CHECK(emodel(edited([](nlohmann::json& md) {
            md["feature_opts_dicts"] = nlohmann::json::array({{{"adm_bogus", 1}}});
        })));
        CHECK(emodel(edited([](nlohmann::json& md) {
            md["feature_opts_dicts"] = nlohmann::json::array({{{"adm_enhn_gain_limit", 0.5}}});
        })));
    }
    SECTION("unreadable path names the path") {
        const std::string path = "/nonexistent/dir/model.json";
        CHECK(status_of([&] { load_model_file(path, {}); }) == VMAF_CUDA_EMODEL);
        CHECK(message_of([&] { load_model_file(path, {}); }).find(path) != std::string::npos);
        CHECK(status_of([&] { load_model_file(model_dir(), {}); }) == VMAF_CUDA_EMODEL);
    }
}

TEST_CASE("values that make scores meaningless fail at load, naming the field", "[model][errors]") {
    // libvmaf v3.2.0 loads most of these and then scores NaN ("VMAF score: -nan" for a NaN
    // gamma), a constant, or every frame at a clip bound.
    const std::string good = read_text(model_dir() + "/vmaf_v0.6.1.json");
    auto edited = [&](auto&& edit) {
        nlohmann::json j = nlohmann::json::parse(good);
        edit(j["model_dict"]);
        return j.dump();
    };
    auto svm_edited = [&](const std::string& from, const std::string& to) {
        return edited([&](nlohmann::json& md) {
            std::string m = md["model"];
            const std::size_t at = m.find(from);
            REQUIRE(at != std::string::npos);
            m.replace(at, from.size(), to);
            md["model"] = m;
        });
    };
    // EMODEL, and the message names `field`.
    auto refused = [](const std::string& text, const std::string& field, ModelConfig cfg = {}) {
        const int st = status_of([&] { load_model(text, cfg); });
        const std::string msg = message_of([&] { load_model(text, cfg); });
        INFO(msg);
        CHECK(st == VMAF_CUDA_EMODEL);
        CHECK(msg.find(field) != std::string::npos);
    };
    SECTION("score_clip reversed or empty") {
        refused(edited([](nlohmann::json& md) { md["score_clip"] = {100.0, 0.0}; }), "score_clip");
        refused(edited([](nlohmann::json& md) { md["score_clip"] = {50.0, 50.0}; }), "score_clip");
        // with disable_clip the clip is not read (libvmaf skips it): nothing to refuse
        CHECK(status_of([&] {
                  load_model(edited([](nlohmann::json& md) { md["score_clip"] = {100.0, 0.0}; }),
                             {"", false, true});
              }) == 0);
    }
    SECTION("gamma NaN, infinite, negative or 0") {
        for (const char* g : {"nan", "-nan", "inf", "-inf", "infinity", "-0.04", "0", "-0"})
            refused(svm_edited("gamma 0.04", std::string("gamma ") + g), "gamma");
    }
    SECTION("a header item twice; more support vectors than total_sv") {
        // libsvm takes the last gamma, and reads total_sv vectors ignoring the rest
        refused(svm_edited("gamma 0.04", "gamma 0.04\ngamma 0.05"), "\"gamma\" is given twice");
        refused(svm_edited("rho -1.33133", "rho -1.33133\nrho -1.2"), "\"rho\" is given twice");
        std::string m = nlohmann::json::parse(good)["model_dict"]["model"];
        const std::size_t at = m.find("total_sv ");
        REQUIRE(at != std::string::npos);
        const std::string total = m.substr(at, m.find('\n', at) - at);
        refused(svm_edited(total, "total_sv 5"), "total_sv is 5, but ");
        // trailing blank lines are no support vectors
        CHECK(status_of([&] { load_model(edited([](nlohmann::json& md) {
                  md["model"] = md["model"].get<std::string>() + "\n\n  \n";
              }), {}); }) == 0);
    }
    SECTION("rho, coefficients and support vectors not finite") {
        refused(svm_edited("rho -1.33133", "rho nan"), "rho");
        refused(svm_edited("rho -1.33133", "rho inf"), "rho");
        // the first support vector of vmaf_v0.6.1: "-4 1:0.65734273 2:..."
        refused(svm_edited("SV\n-4 1:0.65734273 ", "SV\nnan 1:0.65734273 "), "support vector 1 coefficient");
        refused(svm_edited("SV\n-4 1:0.65734273 ", "SV\n-4 1:inf "), "support vector 1 value of feature index 1");
        refused(svm_edited("SV\n-4 1:0.65734273 ", "SV\n-4 1:-nan "), "support vector 1 value of feature index 1");
    }
    SECTION("no support vectors") {
        refused(svm_edited("total_sv 211", "total_sv 0"), "total_sv");
        refused(svm_edited("total_sv 211", "total_sv -3"), "total_sv");
    }
    SECTION("slopes of 0 (division by 0, an ignored input)") {
        refused(edited([](nlohmann::json& md) { md["slopes"][0] = 0.0; }), "slopes[0]");
        refused(edited([](nlohmann::json& md) { md["slopes"][3] = 0; }), "slopes[3]");
    }
    SECTION("numbers out of range name their field") {
        // nlohmann refuses 1e999 (libvmaf's JSON reader takes it as infinity)
        std::string t = edited([](nlohmann::json& md) { md["slopes"][2] = 12345.5; });
        t.replace(t.find("12345.5"), 7, "1e999");
        refused(t, "model_dict.slopes[2]");
        t = edited([](nlohmann::json& md) { md["score_transform"]["p1"] = 12345.5; });
        t.replace(t.find("12345.5"), 7, "-1e999");
        refused(t, "model_dict.score_transform.p1");
        t = edited([](nlohmann::json& md) { md["score_clip"][1] = 12345.5; });
        t.replace(t.find("12345.5"), 7, "1e400");
        refused(t, "model_dict.score_clip[1]");
    }
    SECTION("knots that libvmaf's mapping stops at") {
        refused(edited([](nlohmann::json& md) {
                    md["score_transform"]["knots"] = {{0.0, 0.0}, {50.0, 60.0}, {40.0, 100.0}};
                }),
                "score_transform.knots[1] and [2]");
        refused(edited([](nlohmann::json& md) {
                    md["score_transform"]["knots"] = {{0.0, 10.0}, {50.0, 5.0}};
                }),
                "score_transform.knots[0] and [1]");
        // increasing knots load
        CHECK(status_of([&] {
                  load_model(edited([](nlohmann::json& md) {
                                 md["score_transform"]["knots"] = {{0.0, 0.0}, {50.0, 50.0}, {90.0, 100.0}};
                             }),
                             {});
              }) == 0);
    }
    SECTION("chroma_correction_parameter out of range") {
        std::string t = read_text(model_dir() + "/vmaf_v1.0.16_3d0h.json");
        const std::string key = "\"chroma_correction_parameter\": ";
        const std::size_t at = t.find(key);
        REQUIRE(at != std::string::npos);
        t.replace(at + key.size(), t.find_first_of(",}\n", at + key.size()) - (at + key.size()), "1e999");
        refused(t, "chroma_correction_parameter");
    }
    SECTION("a bootstrap member's field is named with its entry") {
        nlohmann::json j = nlohmann::json::parse(read_text(model_dir() + "/vmaf_b_v0.6.3.json"));
        j["7"]["model_dict"]["score_clip"] = {100.0, 0.0};
        refused(j.dump(), "collection entry \"7\": score_clip");
    }
    SECTION("files: the message names the path and the field") {
        const fs::path dir = fs::temp_directory_path() / ("vmaf_cuda_model_test_" + std::to_string(::getpid()));
        fs::create_directories(dir);
        const std::string path = (dir / "nan_gamma.json").string();
        std::ofstream(path) << svm_edited("gamma 0.04", "gamma nan");
        const std::string msg = message_of([&] { load_model_file(path, {}); });
        CHECK(status_of([&] { load_model_file(path, {}); }) == VMAF_CUDA_EMODEL);
        CHECK(msg.find(path) != std::string::npos);
        CHECK(msg.find("gamma nan") != std::string::npos);
        fs::remove_all(dir);
    }
}

TEST_CASE("every model file of models/ loads (plain, enable_transform, disable_clip)", "[model]") {
    int n = 0;
    for (const auto& e : fs::directory_iterator(model_dir())) {
        if (e.path().extension() != ".json") continue;
        INFO(e.path().string());
        for (const ModelConfig& cfg : {ModelConfig{}, ModelConfig{"", true, false}, ModelConfig{"", false, true}})
            CHECK(status_of([&] { load_model_file(e.path().string(), cfg); }) == 0);
        ++n;
    }
    CHECK(n == 17);
    for (const std::string& v : builtin_model_versions()) {
        INFO(v);
        CHECK(status_of([&] { resolve_model(ModelSpec{v, "", std::nullopt, false, false, {}}, true, nullptr); }) == 0);
    }
}

// ---- model and feature strings -------------------------------------------------------

TEST_CASE("model string", "[model][strings]") {
    auto d = parse_model_string("");
    REQUIRE(d.size() == 1);
    CHECK(d[0].version == "vmaf_v0.6.1");

    auto s = parse_model_string("version=vmaf_v0.6.1|version=vmaf_v0.6.1neg:name=neg"
                                "|path=/x/my_model.json:enable_transform:disable_clip=false"
                                "|version=vmaf_4k_v0.6.1:adm.adm_enhn_gain_limit=1.0");
    REQUIRE(s.size() == 4);
    CHECK(s[1].name == std::optional<std::string>("neg"));
    CHECK(s[2].path == "/x/my_model.json");
    CHECK(s[2].enable_transform);
    CHECK_FALSE(s[2].disable_clip);
    REQUIRE(s[3].overloads.size() == 1);
    CHECK(s[3].overloads[0][0] == "adm");
    CHECK(s[3].overloads[0][1] == "adm_enhn_gain_limit");
    CHECK(parse_model_string("path=a\\:b.json")[0].path == "a:b.json");

    for (const char* bad : {"version=vmaf_v0.6.1:colour=red", "version", "path=a:version=b",
                            "name=x", "version=v:enable_transform=maybe", "version=v:name="})
        CHECK(status_of([&] { parse_model_string(bad); }) == VMAF_CUDA_EINVAL);
}

TEST_CASE("model name= must be UTF-8 (it keys the JSON and NDJSON logs)", "[model][strings]") {
    for (const char* bad : {"a\xff", "\xc0\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "x\xe2\x82"}) {
        const std::string text = std::string("version=vmaf_v0.6.1:name=") + bad;
        INFO(text);
        CHECK(status_of([&] { parse_model_string(text); }) == VMAF_CUDA_EINVAL);
        CHECK(message_of([&] { parse_model_string(text); }).find("name=") != std::string::npos);
    }
    for (const char* good : {"vmaf", "vmaf_\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x8e\xac", "a b"})
        CHECK(parse_model_string(std::string("version=vmaf_v0.6.1:name=") + good).at(0).name == good);
}

TEST_CASE("resolve_model: built-in, search dir, names, overloads", "[model][strings]") {
    const auto specs = parse_model_string("version=vmaf_v0.6.1|version=vmaf_v0.6.1neg|path=" +
                                          model_dir() + "/vmaf_4k_v0.6.1.json|version=vmaf_v0.6.1:name=x");
    CHECK(resolve_model(specs[0], true, nullptr).name() == "vmaf");
    CHECK(resolve_model(specs[1], false, nullptr).name() == "vmaf_v0.6.1neg");
    CHECK(resolve_model(specs[2], false, nullptr).name() == "vmaf_4k_v0.6.1");
    CHECK(resolve_model(specs[2], true, nullptr).name() == "vmaf");
    CHECK(resolve_model(specs[3], true, nullptr).name() == "x");

    const auto unknown = parse_model_string("version=vmaf_v0.6.1neg_copy");
    CHECK(status_of([&] { resolve_model(unknown[0], true, nullptr); }) == VMAF_CUDA_EMODEL);
    CHECK(status_of([&] { resolve_model(unknown[0], true, "/nonexistent"); }) == VMAF_CUDA_EMODEL);
    // The float models are built in (found without a search folder).
    const auto float_model = parse_model_string("version=vmaf_float_v0.6.1");
    const Model fm = resolve_model(float_model[0], true, nullptr);
    CHECK(fm.source() == "built-in vmaf_float_v0.6.1");
    CHECK(fm.features()[0].spec.extractor == "float_adm");
    CHECK(fm.features()[1].spec.extractor == "float_motion");
    CHECK(fm.features()[2].spec.extractor == "float_vif");

    const auto ov = parse_model_string("version=vmaf_v0.6.1:vif.vif_enhn_gain_limit=1.0");
    const Model m = resolve_model(ov[0], true, nullptr);
    CHECK(m.features()[0].key == "VMAF_integer_feature_adm2_score");
    CHECK(m.features()[2].key == "integer_vif_scale0_egl_1");
    CHECK(status_of([&] {
              resolve_model(parse_model_string("version=vmaf_v0.6.1:vif.vif_nope=1")[0], true, nullptr);
          }) == VMAF_CUDA_EINVAL);
}

TEST_CASE("feature string and option values", "[model][strings]") {
    CHECK(parse_feature_string("").empty());
    const auto f = parse_feature_string("name=adm:adm_enhn_gain_limit=1.0|name=vif|motion|vif:vif_enhn_gain_limit=2.50");
    REQUIRE(f.size() == 4);
    CHECK(f[0].extractor == "adm");
    CHECK(f[0].options.at("adm_enhn_gain_limit") == "1");
    CHECK(f[1] == FeatureSpec{"vif", {}});
    CHECK(f[2].extractor == "motion");
    CHECK(f[3].options.at("vif_enhn_gain_limit") == "2.5");
    CHECK(feature_key("VMAF_integer_feature_vif_scale1_score", f[3]) == "integer_vif_scale1_egl_2.5");
    CHECK(feature_key("VMAF_integer_feature_adm2_score", f[0]) == "integer_adm2_egl_1");
    CHECK(feature_key("VMAF_integer_feature_adm2_score", FeatureSpec{"adm", {{"adm_enhn_gain_limit", "100"}}}) ==
          "VMAF_integer_feature_adm2_score");
    // Naming follows libvmaf for options vmaf_cuda does not compute, too.
    CHECK(feature_key("integer_adm_scale0", FeatureSpec{"adm", {{"adm_skip_scale0", "true"}, {"adm_csf_mode", "3"}}}) ==
          "integer_adm_scale0_csf_3_ssz");
    CHECK(feature_alias("VMAF_integer_feature_motion2_score") == "integer_motion2");
    CHECK(feature_alias("integer_adm2_egl_1") == "integer_adm2_egl_1");

    // Motion options are computed since the v1.0.16 models (motion3 names carry them).
    const auto mo = parse_feature_string("motion:motion_max_val=18:motion_five_frame_window=true");
    REQUIRE(mo.size() == 1);
    CHECK(feature_key("VMAF_integer_feature_motion3_score", mo[0]) == "integer_motion3_mffw_mmxv_18");
    for (const char* bad : {"name=no_such_feature", "adm:adm_enhn_gain_limit=0.5", "adm:adm_enhn_gain_limit=x",
                            "vif:egl=1", "adm:adm_csf_mode=4", "adm:adm_skip_scale0=true",
                            "motion:motion_max_val=10001", "name=vif:vif_enhn_gain_limit",
                            "adm_enhn_gain_limit=1"})
        CHECK(status_of([&] { parse_feature_string(bad); }) == VMAF_CUDA_EINVAL);
}

// ---- pooling -----------------------------------------------------------------------

TEST_CASE("pooling follows libvmaf", "[pooling]") {
    const double v[] = {3.0, 1.0, 2.0, 4.0};
    CHECK(pool(v, VMAF_CUDA_POOL_MEAN) == 2.5);
    CHECK(pool(v, VMAF_CUDA_POOL_MIN) == 1.0);
    CHECK(pool(v, VMAF_CUDA_POOL_MAX) == 4.0);
    const double h = 4 / (1. / 4 + 1. / 2 + 1. / 3 + 1. / 5) - 1.0;
    CHECK(pool(v, VMAF_CUDA_POOL_HARMONIC_MEAN) == h);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double first_nan[] = {nan, 1.0, 2.0};
    const double later_nan[] = {1.0, nan, 2.0};
    CHECK(std::isnan(pool(first_nan, VMAF_CUDA_POOL_MIN)));
    CHECK(pool(later_nan, VMAF_CUDA_POOL_MAX) == 2.0);
    CHECK(status_of([] { pool(std::span<const double>(), VMAF_CUDA_POOL_MEAN); }) == VMAF_CUDA_EINVAL);
    CHECK(status_of([&] { pool(v, 7); }) == VMAF_CUDA_EINVAL);
}

// ---- writers -----------------------------------------------------------------------

namespace {
LogTable sample_table(int precision) {
    LogTable t;
    t.version = "test 1.0";
    t.fps = 25.0;
    t.width = 320;
    t.height = 240;
    t.precision = precision;
    t.frames = {0, 2, 4};
    LogColumn a{"VMAF_integer_feature_adm2_score", {0.9, 0.123456789012345678, 1e-9}};
    LogColumn b{"vmaf", {95.5, std::numeric_limits<double>::quiet_NaN(), 100.0}};
    for (LogColumn* c : {&a, &b})
        for (int m = 0; m < 4; ++m) {
            std::vector<double> finite;
            for (double x : c->values)
                if (!std::isnan(x)) finite.push_back(x);
            c->pooled[m] = pool(finite, m);
        }
    t.columns = {a, b};
    return t;
}

std::vector<std::string> lines(const std::string& s) {
    std::vector<std::string> out;
    std::istringstream in(s);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}
} // namespace

TEST_CASE("JSON log parses back with libvmaf's keys", "[writers]") {
    const LogTable t = sample_table(-1);
    const std::string text = format_log(LogFormat::json, t);
    nlohmann::json j;
    REQUIRE_NOTHROW(j = nlohmann::json::parse(text));
    CHECK(j["version"] == "test 1.0");
    CHECK(j["fps"] == 25.0);
    REQUIRE(j["frames"].size() == 3);
    CHECK(j["frames"][1]["frameNum"] == 2);
    CHECK(j["frames"][1]["metrics"]["integer_adm2"].get<double>() == 0.123456789012345678);
    CHECK(j["frames"][2]["metrics"]["integer_adm2"].get<double>() == 1e-9);
    CHECK(j["frames"][1]["metrics"]["vmaf"].is_null());
    const auto& p = j["pooled_metrics"]["vmaf"];
    std::vector<std::string> keys;
    for (auto it = p.begin(); it != p.end(); ++it) keys.push_back(it.key());
    CHECK(keys.size() == 4);
    CHECK(p["min"].get<double>() == 95.5);
    CHECK(p["mean"].get<double>() == t.columns[1].pooled[VMAF_CUDA_POOL_MEAN]);
    CHECK(p["harmonic_mean"].get<double>() == t.columns[1].pooled[VMAF_CUDA_POOL_HARMONIC_MEAN]);
    CHECK(j["aggregate_metrics"].empty());
    // libvmaf's order in the text: min, max, mean, harmonic_mean.
    CHECK(text.find("\"min\"") < text.find("\"max\""));
    CHECK(text.find("\"max\"") < text.find("\"mean\""));
    CHECK(text.find("\"mean\"") < text.find("\"harmonic_mean\""));

    LogTable n = t;
    n.fps = std::numeric_limits<double>::quiet_NaN();
    n.precision = 6;
    n.columns[0].values[0] = std::numeric_limits<double>::infinity();
    n.aggregate = {{"agg", 1.5}};
    const std::string nt = format_log(LogFormat::json, n);
    REQUIRE_NOTHROW(j = nlohmann::json::parse(nt));
    CHECK(j["fps"].is_null());
    CHECK(j["frames"][0]["metrics"]["integer_adm2"].is_null());
    CHECK(j["aggregate_metrics"]["agg"] == 1.5);
    CHECK(nt.find("\"integer_adm2\": 0.123457,") != std::string::npos);
    CHECK(nt.find("\"integer_adm2\": 0.0000000010000000") != std::string::npos);
}

TEST_CASE("XML, CSV and SUB layouts", "[writers]") {
    const LogTable t = sample_table(6);
    const auto x = lines(format_log(LogFormat::xml, t));
    REQUIRE(x.size() >= 12);
    CHECK(x[0] == "<VMAF version=\"test 1.0\">");
    CHECK(x[1] == "  <params qualityWidth=\"320\" qualityHeight=\"240\" />");
    CHECK(x[2] == "  <fyi fps=\"25.00\" />");
    CHECK(x[3] == "  <frames>");
    CHECK(x[4] == "    <frame frameNum=\"0\" integer_adm2=\"0.900000\" vmaf=\"95.500000\" />");
    CHECK(x[6] == "    <frame frameNum=\"4\" integer_adm2=\"0.0000000010000000\" vmaf=\"100.000000\" />");
    CHECK(x[8] == "  <pooled_metrics>");
    CHECK(x[10].rfind("    <metric name=\"vmaf\" min=\"95.500000\" max=\"100.000000\" mean=", 0) == 0);
    CHECK(x[12] == "  <aggregate_metrics />");
    CHECK(x.back() == "</VMAF>");

    const auto c = lines(format_log(LogFormat::csv, t));
    REQUIRE(c.size() == 4);
    CHECK(c[0] == "Frame,integer_adm2,vmaf,");
    CHECK(c[1] == "0,0.900000,95.500000,");
    CHECK(c[2] == "2,0.123457,nan,");

    const auto s = lines(format_log(LogFormat::sub, t));
    REQUIRE(s.size() == 3);
    CHECK(s[0] == "{0}{1}frame: 0|integer_adm2: 0.900000|vmaf: 95.500000|");
    CHECK(s[1].rfind("{2}{3}frame: 2|", 0) == 0);
}

TEST_CASE("value precision", "[writers]") {
    CHECK(format_value(0.5, 6) == "0.500000");
    CHECK(format_value(1.5e-7, 6) == "0.0000001500000000");   // 6 leading zeros: 16 digits
    CHECK(format_value(1.5e-6, 6) == "0.000002");             // 5 leading zeros: 6 digits
    CHECK(format_value(0.0, 6) == "0.000000");
    CHECK(format_value(-2.25, 3) == "-2.250");
    CHECK(format_value(97.428042642610308, 17) == "97.42804264261030767");
    CHECK(format_value(97.428042642610308, -1) == "97.428042642610308");
    const double hard = 0.1 + 0.2;
    CHECK(std::strtod(format_value(hard, -1).c_str(), nullptr) == hard);
    CHECK(status_of([] { format_value(1.0, 0); }) == VMAF_CUDA_EINVAL);
    CHECK(status_of([] { format_value(1.0, 18); }) == VMAF_CUDA_EINVAL);
}

TEST_CASE("log file errors", "[writers]") {
    const LogTable t = sample_table(6);
    CHECK(status_of([&] { write_log_file("/nonexistent/dir/log.json", LogFormat::json, t); }) == VMAF_CUDA_EIO);
    LogTable bad = t;
    bad.columns[0].values.pop_back();
    CHECK(status_of([&] { format_log(LogFormat::csv, bad); }) == VMAF_CUDA_EINVAL);
    CHECK(status_of([&] { format_log(LogFormat(9), t); }) == VMAF_CUDA_EINVAL);
    const std::string path = (fs::temp_directory_path() / "vmaf_cuda_model_test_log.xml").string();
    write_log_file(path, LogFormat::xml, t);
    CHECK(read_text(path) == format_log(LogFormat::xml, t));
    fs::remove(path);
}

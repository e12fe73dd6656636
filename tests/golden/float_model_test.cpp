// SPDX-License-Identifier: BSD-2-Clause-Patent
// Suite `golden`: the float models (vmaf_float_v0.6.1, vmaf_float_v0.6.1neg,
// vmaf_float_4k_v0.6.1, the bootstrap collection vmaf_float_b_v0.6.3) through the C API on
// the CPU backend (the float_adm, float_vif and float_motion records):
//  - vmaf_float_v0.6.1 against libvmaf v3.2.0's own JSON logs on every case: every frame,
//    every key in libvmaf's order, every value and the pooled mean, harmonic mean, min
//    and max of every key, exact doubles;
//  - the others (no libvmaf logs): their features against libvmaf's logs where the
//    extractors run at the defaults (4k, bootstrap), or against the CPU reference with
//    the NEG options (egl 1); their scores against the model's own prediction of those
//    features (members, bagging, stddev and interval of the collection included).

#include "float_adm.h"
#include "float_motion.h"
#include "float_vif.h"
#include "golden_util.h"
#include "model.h"
#include "vmaf_cuda.h"

#include "catch.hpp"
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

using namespace vmaf_cuda_test;
namespace ref = vmaf_cuda::ref;
namespace engine = vmaf_cuda::engine;

namespace {

struct Run {
    std::vector<std::string> names;                 ///< output names, in the API's order
    std::vector<std::vector<double>> values;        ///< [frame][column]
    std::map<std::string, std::array<double, 4>> pooled; ///< mean, harmonic mean, min, max
    std::string warning;
};

const char* const kPools[4] = {"mean", "harmonic_mean", "min", "max"};

/// Runs a case through the API on the CPU backend (luma only: the float features read no
/// chroma), collecting every frame and the pools of every output. No models: no_prediction
/// with the `features` string.
Run run_case(const GoldenCase& c, const std::string& models, unsigned threads = 0,
             const char* features = nullptr, bool keep_history = true) {
    VmafCudaSettings s;
    vmaf_cuda_default_settings(&s);
    s.width = c.width;
    s.height = c.height;
    s.bpc = c.bpc;
    s.backend = VMAF_CUDA_BACKEND_CPU;
    s.models = models.c_str();
    s.no_prediction = models.empty();
    s.features = features;
    s.n_threads = threads;
    s.keep_history = keep_history;
    VmafCudaSession* vs = nullptr;
    char err[512] = {};
    const int rc = vmaf_cuda_open(&vs, &s, err, sizeof err);
    INFO("open " << models << ": " << err);
    REQUIRE(rc == VMAF_CUDA_OK);
    const auto refs = read_luma_frames(c, c.ref);
    const auto dists = read_luma_frames(c, c.dist);
    REQUIRE(refs.size() == c.frames);
    REQUIRE(dists.size() == c.frames);
    Run out;
    out.warning = vmaf_cuda_open_warning(vs);
    const ptrdiff_t pitch = ptrdiff_t(c.width) * (c.bpc > 8 ? 2 : 1);
    VmafCudaFrameScores fs;
    auto drain = [&](int until) {
        int r;
        while ((r = vmaf_cuda_receive(vs, &fs)) == VMAF_CUDA_OK) {
            REQUIRE(fs.index == out.values.size());
            std::vector<std::string> names(fs.names, fs.names + fs.count);
            if (out.values.empty()) out.names = names;
            REQUIRE(names == out.names);
            out.values.emplace_back(fs.values, fs.values + fs.count);
        }
        INFO(vmaf_cuda_error_message(vs));
        REQUIRE(r == until);
    };
    for (unsigned i = 0; i < c.frames; ++i) {
        VmafCudaPicture rp{refs[i].data(), pitch, 0, VMAF_CUDA_MEMORY_HOST};
        VmafCudaPicture dp{dists[i].data(), pitch, 0, VMAF_CUDA_MEMORY_HOST};
        REQUIRE(vmaf_cuda_send(vs, &rp, &dp) == VMAF_CUDA_OK);
        drain(VMAF_CUDA_EAGAIN);
    }
    REQUIRE(vmaf_cuda_flush(vs) == VMAF_CUDA_OK);
    drain(VMAF_CUDA_EOF);
    for (const std::string& n : out.names)
        for (int p = 0; p < 4; ++p)
            REQUIRE(vmaf_cuda_pooled(vs, n.c_str(), VmafCudaPool(p), &out.pooled[n][p]) ==
                    VMAF_CUDA_OK);
    vmaf_cuda_close(vs);
    return out;
}

nlohmann::ordered_json golden_log(const GoldenCase& c, const std::string& what) {
    const std::string path = golden_dir() + "/libvmaf/" + c.name + "." + what + ".json";
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    return nlohmann::ordered_json::parse(in);
}

std::size_t column(const Run& r, const std::string& name) {
    for (std::size_t k = 0; k < r.names.size(); ++k)
        if (r.names[k] == name) return k;
    FAIL("no output named '" << name << "'");
    return 0;
}

/// Every key of libvmaf's log that `keep` accepts: per frame, same keys in the same order
/// (when `all_keys`), same values; pooled values of those keys.
void compare_log(const GoldenCase& c, const nlohmann::ordered_json& g, const Run& r,
                 bool all_keys, bool (*keep)(const std::string&)) {
    const auto& frames = g.at("frames");
    REQUIRE(r.values.size() == frames.size());
    std::size_t checked = 0, bad = 0;
    std::string first;
    auto miss = [&](const std::string& what, double got, double want) {
        if (!bad++) first = what + ": got " + fmt17(got) + " expected " + fmt17(want);
    };
    for (std::size_t f = 0; f < frames.size(); ++f) {
        REQUIRE(frames[f].at("frameNum").get<std::size_t>() == f);
        std::vector<std::string> keys;
        for (const auto& [k, v] : frames[f].at("metrics").items())
            if (keep(k)) keys.push_back(k);
        if (all_keys) {
            INFO(c.name << " frame " << f << ": the columns in libvmaf's order");
            CHECK(keys == r.names);
        }
        for (const std::string& k : keys) {
            const double want = frames[f].at("metrics").at(k).get<double>();
            const double got = r.values[f][column(r, k)];
            ++checked;
            if (!same_double(got, want)) miss("frame " + std::to_string(f) + " " + k, got, want);
        }
    }
    for (const auto& [k, pools] : g.at("pooled_metrics").items()) {
        if (!keep(k)) continue;
        REQUIRE(r.pooled.count(k));
        for (int p = 0; p < 4; ++p) {
            ++checked;
            const double want = pools.at(kPools[p]).get<double>();
            if (!same_double(r.pooled.at(k)[p], want))
                miss(std::string("pooled ") + kPools[p] + " " + k, r.pooled.at(k)[p], want);
        }
    }
    INFO(c.name << ": " << bad << " of " << checked << " values differ; first: " << first);
    CHECK(checked > 0);
    CHECK(bad == 0);
}

bool every_key(const std::string&) { return true; }
bool feature_key(const std::string& k) { return k.rfind("vmaf", 0) != 0; }

/// The model's scores of every frame from the run's own feature columns (the model's
/// prediction, as libvmaf's predict.c makes it): checks `name` (and, for a collection,
/// the members NAME_0001.., NAME_bagging, _stddev, _ci_p95_lo, _ci_p95_hi).
void check_model(const Run& r, const engine::Model& m, const std::string& name) {
    std::vector<std::size_t> in;
    for (const engine::ModelFeature& f : m.features()) in.push_back(column(r, f.log_name));
    std::size_t checked = 0, bad = 0;
    std::string first;
    auto check = [&](std::size_t f, const std::string& key, double want) {
        ++checked;
        const double got = r.values[f][column(r, key)];
        if (!same_double(got, want) && !bad++)
            first = "frame " + std::to_string(f) + " " + key + ": got " + fmt17(got) +
                    " expected " + fmt17(want);
    };
    for (std::size_t f = 0; f < r.values.size(); ++f) {
        std::vector<double> x;
        for (std::size_t k : in) x.push_back(r.values[f][k]);
        check(f, name, m.predict(x));
        if (m.bootstrap().empty()) continue;
        std::vector<double> raw;
        for (std::size_t b = 0; b < m.bootstrap().size(); ++b) {
            char suffix[16];
            std::snprintf(suffix, sizeof suffix, "_%04zu", b + 1);
            check(f, name + suffix, m.bootstrap()[b].predict(x));
            raw.push_back(m.bootstrap()[b].predict(
                x, engine::Model::kPredictNoTransform | engine::Model::kPredictNoClip));
        }
        const engine::BootstrapScores bs = engine::bootstrap_combine(m.bootstrap()[0], raw);
        check(f, name + "_bagging", bs.bagging);
        check(f, name + "_stddev", bs.stddev);
        check(f, name + "_ci_p95_lo", bs.ci_p95_lo);
        check(f, name + "_ci_p95_hi", bs.ci_p95_hi);
    }
    INFO(name << ": " << bad << " of " << checked << " scores differ; first: " << first);
    CHECK(checked > 0);
    CHECK(bad == 0);
}

engine::Model model_file(const std::string& version) {
    engine::ModelConfig cfg;
    cfg.name = version;
    return engine::load_model_file(model_dir() + "/" + version + ".json", cfg);
}

ref::LumaView view(const GoldenCase& c, const std::vector<std::uint8_t>& frame) {
    ref::LumaView v;
    v.data = frame.data();
    v.pitch = std::ptrdiff_t(c.width) * (c.bpc > 8 ? 2 : 1);
    v.width = c.width;
    v.height = c.height;
    v.bpc = c.bpc;
    return v;
}

/// The NEG model's features from the CPU reference: adm2_egl_1, vif_scale0..3_egl_1
/// (enhancement gain limit 1) and motion2 (defaults), per frame.
std::map<std::string, std::vector<double>> neg_reference(const GoldenCase& c) {
    const auto refs = read_luma_frames(c, c.ref);
    const auto dists = read_luma_frames(c, c.dist);
    std::map<std::string, std::vector<double>> out;
    ref::FloatAdmOptions ao;
    ao.enhn_gain_limit = 1.0;
    ref::FloatVifOptions vo;
    vo.enhn_gain_limit = 1.0;
    const ref::FloatMotionOptions mo;
    ref::FloatAdmScratch as(c.width, c.height);
    ref::FloatVifScratch vsc(c.width, c.height, vo);
    ref::FloatMotionScratch ms(c.width, c.height);
    const auto vn = ref::float_vif_feature_names(vo);
    std::vector<float> prev, cur, rows(c.height);
    std::vector<double> sad(refs.size(), 0.0);
    for (std::size_t i = 0; i < refs.size(); ++i) {
        ref::FloatAdmAccum aa;
        ref::float_adm_accumulate(view(c, refs[i]), view(c, dists[i]), ao, as, aa);
        out[ref::float_adm_feature_names(ao).adm2].push_back(
            ref::float_adm_finish(aa, ao, c.width, c.height).adm2);
        ref::FloatVifAccum va;
        ref::float_vif_accumulate(view(c, refs[i]), view(c, dists[i]), vo, vsc, va);
        const ref::FloatVifScores v = ref::float_vif_finish(va, vo);
        for (int k = 0; k < 4; ++k) out[vn[k]].push_back(v.scale[k]);
        ref::float_motion_blur(view(c, refs[i]), mo, ms, cur);
        if (i > 0) {
            ref::float_motion_row_sums(prev, cur, c.width, c.height, rows);
            sad[i] = ref::float_motion_finish(rows, c.width, c.height);
        }
        std::swap(prev, cur);
    }
    const auto pooled = ref::float_motion_pool(sad, mo);
    out["motion2"] = pooled.motion2;
    return out;
}

} // namespace

TEST_CASE("vmaf_float_v0.6.1 equals libvmaf's log on every golden case (C API, CPU)",
          "[golden][float_model]") {
    const auto cases = golden_cases();
    REQUIRE(cases.size() >= 14);
    for (const GoldenCase& c : cases) {
        DYNAMIC_SECTION(c.name) {
            const auto g = golden_log(c, "vmaf_float_v0.6.1");
            const Run r = run_case(c, "version=vmaf_float_v0.6.1:name=vmaf_float_v0.6.1");
            CHECK(r.warning.empty());
            compare_log(c, g, r, true, every_key);
            std::printf("%s vmaf_float_v0.6.1: %zu frames x %zu keys checked\n", c.name.c_str(),
                        r.values.size(), r.names.size());
        }
    }
}

TEST_CASE("vmaf_float_v0.6.1 with worker threads, or without history, gives the same log",
          "[golden][float_model]") {
    const std::string m = "version=vmaf_float_v0.6.1:name=vmaf_float_v0.6.1";
    for (const GoldenCase& c : golden_cases()) {
        if (c.name != "testsrc2_320x240_8bit" && c.name != "sparks_480x270_5f_10bit" &&
            c.name != "bbb_854x480_120f_8bit")
            continue;
        DYNAMIC_SECTION(c.name) {
            const auto g = golden_log(c, "vmaf_float_v0.6.1");
            if (c.frames <= 10) compare_log(c, g, run_case(c, m, 3), true, every_key);
            // keep_history=0: the series is trimmed behind the newest frames; the pools
            // come from running sums.
            else compare_log(c, g, run_case(c, m, 2, nullptr, false), true, every_key);
        }
    }
}

TEST_CASE("vmaf_float_4k_v0.6.1 and vmaf_float_b_v0.6.3: libvmaf's float features, the "
          "model's own scores", "[golden][float_model]") {
    const engine::Model m4k = model_file("vmaf_float_4k_v0.6.1");
    const engine::Model mb = model_file("vmaf_float_b_v0.6.3");
    REQUIRE(mb.bootstrap().size() == 20);
    for (const GoldenCase& c : golden_cases()) {
        DYNAMIC_SECTION(c.name) {
            // Same extractors at the same (default) options as vmaf_float_v0.6.1: the
            // feature columns are libvmaf's.
            const auto g = golden_log(c, "vmaf_float_v0.6.1");
            const Run r4 = run_case(c, "version=vmaf_float_4k_v0.6.1:name=vmaf_float_4k_v0.6.1");
            compare_log(c, g, r4, false, feature_key);
            check_model(r4, m4k, "vmaf_float_4k_v0.6.1");
            CHECK(r4.names.back() == "vmaf_float_4k_v0.6.1");

            const Run rb = run_case(c, "version=vmaf_float_b_v0.6.3:name=vmaf_float_b_v0.6.3");
            compare_log(c, g, rb, false, feature_key);
            check_model(rb, mb, "vmaf_float_b_v0.6.3");
            // Columns: the float features as in libvmaf's vmaf_float_v0.6.1 log, then the
            // collection as libvmaf's vmaf_b_v0.6.3 log has it.
            std::vector<std::string> want;
            for (const auto& [k, v] : g.at("frames")[0].at("metrics").items())
                if (feature_key(k)) want.push_back(k);
            const auto gb = golden_log(c, "vmaf_b_v0.6.3");
            for (const auto& [k, v] : gb.at("frames")[0].at("metrics").items())
                if (k.rfind("vmaf_b_v0.6.3", 0) == 0)
                    want.push_back("vmaf_float_b_v0.6.3" + k.substr(std::string("vmaf_b_v0.6.3").size()));
            CHECK(rb.names == want);
        }
    }
}

TEST_CASE("vmaf_float_v0.6.1neg: the egl_1 features of the reference, the model's own scores",
          "[golden][float_model]") {
    const engine::Model m = model_file("vmaf_float_v0.6.1neg");
    for (const GoldenCase& c : golden_cases()) {
        DYNAMIC_SECTION(c.name) {
            const Run r = run_case(c, "version=vmaf_float_v0.6.1neg:name=neg");
            const std::vector<std::string> want = {
                "adm2_egl_1",        "aim_egl_1",         "adm3_egl_1",        "adm_scale0_egl_1",
                "adm_scale1_egl_1",  "adm_scale2_egl_1",  "adm_scale3_egl_1",  "motion2",
                "motion",            "vif_scale0_egl_1",  "vif_scale1_egl_1",  "vif_scale2_egl_1",
                "vif_scale3_egl_1",  "motion3",           "neg"};
            CHECK(r.names == want);
            const auto expect = neg_reference(c);
            std::size_t bad = 0, checked = 0;
            for (const auto& [name, values] : expect) {
                const std::size_t k = column(r, name);
                REQUIRE(values.size() == r.values.size());
                for (std::size_t f = 0; f < values.size(); ++f, ++checked)
                    if (!same_double(r.values[f][k], values[f])) ++bad;
            }
            INFO(c.name << ": " << bad << " of " << checked << " feature values differ");
            CHECK(checked == 6 * c.frames);
            CHECK(bad == 0);
            check_model(r, m, "neg");
        }
    }
}

TEST_CASE("float models are built in; their extractors are named in feature strings",
          "[golden][float_model]") {
    const auto versions = engine::builtin_model_versions();
    for (const char* v : {"vmaf_float_v0.6.1", "vmaf_float_v0.6.1neg", "vmaf_float_4k_v0.6.1",
                          "vmaf_float_b_v0.6.3"}) {
        INFO(v);
        CHECK(std::find(versions.begin(), versions.end(), v) != versions.end());
    }
    // The features string reaches the same records: float_adm + float_motion + float_vif
    // without a model give the feature columns of libvmaf's vmaf_float_v0.6.1 log.
    for (const GoldenCase& c : golden_cases()) {
        if (c.name != "src01_576x324_3f_8bit" && c.name != "testsrc2_320x240_8bit_1f") continue;
        const Run r = run_case(c, "", 0, "name=float_adm|float_motion|float_vif");
        compare_log(c, golden_log(c, "vmaf_float_v0.6.1"), r, true, feature_key);
        VmafCudaSettings s;
        vmaf_cuda_default_settings(&s);
        s.width = c.width;
        s.height = c.height;
        s.bpc = c.bpc;
        s.backend = VMAF_CUDA_BACKEND_CPU;
        s.no_prediction = 1;
        VmafCudaSession* vs = nullptr;
        char err[512] = {};
        // Options: ranges and the ones the reference does not compute.
        s.features = "float_vif:vif_prescale_method=bicubic";
        CHECK(vmaf_cuda_open(&vs, &s, err, sizeof err) == VMAF_CUDA_EINVAL);
        CHECK(std::string(err).find("vif_prescale_method") != std::string::npos);
        s.features = "float_motion:motion_add_uv=true";
        CHECK(vmaf_cuda_open(&vs, &s, err, sizeof err) == VMAF_CUDA_EINVAL);
        s.features = "float_adm:adm_csf_mode=1";
        CHECK(vmaf_cuda_open(&vs, &s, err, sizeof err) == VMAF_CUDA_EINVAL);
        CHECK(std::string(err).find("float_adm") != std::string::npos);
        s.features = "float_adm:adm_enhn_gain_limit=0.5";
        CHECK(vmaf_cuda_open(&vs, &s, err, sizeof err) == VMAF_CUDA_EINVAL);
        s.features = "float_vif:vif_kernelscale=0.7";
        CHECK(vmaf_cuda_open(&vs, &s, err, sizeof err) == VMAF_CUDA_EINVAL);

        // float_motion's column order follows libvmaf's writes: with motion_force_zero every
        // frame's extract writes motion2, motion3 and motion (all 0); debug=false drops
        // motion.
        const Run z = run_case(c, "", 0, "float_motion:motion_force_zero=true");
        CHECK(z.names == std::vector<std::string>{"motion2_force_0", "motion3_force_0",
                                                  "motion_force_0"});
        for (const auto& row : z.values)
            for (double v : row) CHECK(same_double(v, 0.0));
        const Run d = run_case(c, "", 0, "float_motion:debug=false");
        CHECK(d.names == std::vector<std::string>{"motion2", "motion3"});
        const Run full = run_case(c, "", 0, "float_motion");
        REQUIRE(full.names == std::vector<std::string>{"motion2", "motion", "motion3"});
        REQUIRE(d.values.size() == full.values.size());
        for (std::size_t f = 0; f < d.values.size(); ++f) {
            CHECK(same_double(d.values[f][0], full.values[f][0]));
            CHECK(same_double(d.values[f][1], full.values[f][2]));
        }
    }
}

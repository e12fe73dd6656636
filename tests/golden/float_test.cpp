// SPDX-License-Identifier: BSD-2-Clause-Patent
// Suite `golden`: the CPU reference of libvmaf's float extractors (float_motion,
// float_vif, float_adm) against libvmaf v3.2.0's own JSON logs of vmaf_float_v0.6.1:
// every case, every frame, every float feature key, and the pooled mean, min, max and
// harmonic mean of each, exact doubles.

#include "float_adm.h"
#include "float_motion.h"
#include "float_picture.h"
#include "float_vif.h"
#include "golden_util.h"
#include "pooling.h"
#include "vmaf_cuda.h"

#include "catch.hpp"
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

using namespace vmaf_cuda_test;
namespace ref = vmaf_cuda::ref;

namespace {

using Series = std::map<std::string, std::vector<double>>; // log name -> per-frame values

ref::LumaView view(const GoldenCase& c, const std::vector<std::uint8_t>& frame) {
    ref::LumaView v;
    v.data = frame.data();
    v.pitch = std::ptrdiff_t(c.width) * (c.bpc > 8 ? 2 : 1);
    v.width = c.width;
    v.height = c.height;
    v.bpc = c.bpc;
    return v;
}

void add_motion(const GoldenCase& c, const std::vector<std::vector<std::uint8_t>>& refs,
                Series& out) {
    const ref::FloatMotionOptions opt;
    ref::FloatMotionScratch scratch(c.width, c.height);
    std::vector<float> prev, cur, rows(c.height);
    std::vector<double> sad(refs.size(), 0.0);
    for (std::size_t i = 0; i < refs.size(); ++i) {
        ref::float_motion_blur(view(c, refs[i]), opt, scratch, cur);
        if (i > 0) {
            ref::float_motion_row_sums(prev, cur, c.width, c.height, rows);
            sad[i] = ref::float_motion_finish(rows, c.width, c.height);
        }
        std::swap(prev, cur);
    }
    const ref::FloatMotionScores s = ref::float_motion_pool(sad, opt);
    const auto names = ref::float_motion_feature_names(opt);
    out[names[0]] = s.motion;
    out[names[1]] = s.motion2;
    out[names[2]] = s.motion3;
}

void add_vif(const GoldenCase& c, const std::vector<std::vector<std::uint8_t>>& refs,
             const std::vector<std::vector<std::uint8_t>>& dists, Series& out) {
    const ref::FloatVifOptions opt;
    ref::FloatVifScratch scratch(c.width, c.height, opt);
    const auto names = ref::float_vif_feature_names(opt);
    for (std::size_t i = 0; i < refs.size(); ++i) {
        ref::FloatVifAccum acc;
        ref::float_vif_accumulate(view(c, refs[i]), view(c, dists[i]), opt, scratch, acc);
        const ref::FloatVifScores s = ref::float_vif_finish(acc, opt);
        for (int k = 0; k < 4; ++k) out[names[k]].push_back(s.scale[k]);
    }
}

void add_adm(const GoldenCase& c, const std::vector<std::vector<std::uint8_t>>& refs,
             const std::vector<std::vector<std::uint8_t>>& dists, Series& out) {
    const ref::FloatAdmOptions opt;
    ref::FloatAdmScratch scratch(c.width, c.height);
    const auto names = ref::float_adm_feature_names(opt);
    for (std::size_t i = 0; i < refs.size(); ++i) {
        ref::FloatAdmAccum acc;
        ref::float_adm_accumulate(view(c, refs[i]), view(c, dists[i]), opt, scratch, acc);
        const ref::FloatAdmScores s = ref::float_adm_finish(acc, opt, c.width, c.height);
        out[names.adm2].push_back(s.adm2);
        out[names.aim].push_back(s.aim);
        out[names.adm3].push_back(s.adm3);
        for (int k = 0; k < 4; ++k) out[names.scale[k]].push_back(s.scale[k]);
    }
}

/// Compares the keys of `ours` present in libvmaf's log; returns how many were checked.
std::size_t compare(const std::string& case_name, const nlohmann::json& g, const Series& ours,
                    const std::string& feature) {
    std::size_t checked = 0, bad = 0;
    std::string first;
    const auto& frames = g.at("frames");
    for (const auto& [key, values] : ours) {
        bool present = false;
        for (std::size_t f = 0; f < frames.size(); ++f) {
            const auto& m = frames[f].at("metrics");
            if (!m.contains(key)) continue;
            present = true;
            ++checked;
            const double want = m.at(key).get<double>();
            if (!same_double(values.at(f), want) && std::getenv("FLOAT_TEST_VERBOSE"))
                std::printf("  mismatch frame %zu %s: got %s expected %s\n", f, key.c_str(),
                            fmt17(values.at(f)).c_str(), fmt17(want).c_str());
            if (!same_double(values.at(f), want) && !bad++)
                first = "frame " + std::to_string(f) + " " + key + ": got " + fmt17(values.at(f)) +
                        " expected " + fmt17(want);
        }
        INFO(case_name << ": libvmaf's log has no key '" << key << "'");
        CHECK(present);
        const auto& pooled = g.at("pooled_metrics");
        if (!pooled.contains(key)) continue;
        const char* names[] = {"mean", "harmonic_mean", "min", "max"};
        for (int p = 0; p < 4; ++p) {
            const double got = vmaf_cuda::engine::pool(values, p == 0   ? VMAF_CUDA_POOL_MEAN
                                                               : p == 1 ? VMAF_CUDA_POOL_HARMONIC_MEAN
                                                               : p == 2 ? VMAF_CUDA_POOL_MIN
                                                                        : VMAF_CUDA_POOL_MAX);
            const double want = pooled.at(key).at(names[p]).get<double>();
            ++checked;
            if (!same_double(got, want) && !bad++)
                first = std::string("pooled ") + names[p] + " " + key + ": got " + fmt17(got) +
                        " expected " + fmt17(want);
        }
    }
    INFO(case_name << " " << feature << ": " << bad << " of " << checked
                   << " values differ; first: " << first);
    CHECK(bad == 0);
    std::printf("%s %s: %zu of %zu values bit-exact%s%s\n", case_name.c_str(), feature.c_str(),
                checked - bad, checked, bad ? "; first mismatch: " : "", first.c_str());
    return checked;
}

nlohmann::json golden_log(const GoldenCase& c) {
    const std::string path = golden_dir() + "/libvmaf/" + c.name + ".vmaf_float_v0.6.1.json";
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    return nlohmann::json::parse(in);
}

template <class Fn>
void run_feature(const char* feature, Fn&& compute) {
    const auto cases = golden_cases();
    REQUIRE(cases.size() >= 14);
    for (const GoldenCase& c : cases) {
        DYNAMIC_SECTION(c.name) {
            const nlohmann::json g = golden_log(c);
            const auto refs = read_luma_frames(c, c.ref);
            const auto dists = read_luma_frames(c, c.dist);
            REQUIRE(refs.size() == c.frames);
            REQUIRE(dists.size() == c.frames);
            REQUIRE(g.at("frames").size() == c.frames);
            Series s;
            compute(c, refs, dists, s);
            CHECK(compare(c.name, g, s, feature) > 0);
        }
    }
}

} // namespace

TEST_CASE("float_motion equals libvmaf's log on every golden case", "[golden][float]") {
    run_feature("float_motion", [](const GoldenCase& c, const auto& refs, const auto&, Series& s) {
        add_motion(c, refs, s);
    });
}

TEST_CASE("float_vif equals libvmaf's log on every golden case", "[golden][float]") {
    run_feature("float_vif", [](const GoldenCase& c, const auto& refs, const auto& dists, Series& s) {
        add_vif(c, refs, dists, s);
    });
}

TEST_CASE("float_adm equals libvmaf's log on every golden case", "[golden][float]") {
    run_feature("float_adm", [](const GoldenCase& c, const auto& refs, const auto& dists, Series& s) {
        add_adm(c, refs, dists, s);
    });
}

TEST_CASE("float extractors: option-suffixed names as libvmaf forms them", "[golden][float]") {
    ref::FloatVifOptions vif;
    vif.enhn_gain_limit = 1.0;
    CHECK(ref::float_vif_feature_names(vif)[0] == "vif_scale0_egl_1");
    CHECK(ref::float_vif_feature_names(ref::FloatVifOptions{})[3] == "vif_scale3");
    ref::FloatAdmOptions adm;
    adm.enhn_gain_limit = 1.0;
    CHECK(ref::float_adm_feature_names(adm).adm2 == "adm2_egl_1");
    adm.dlm_weight = 0.7;
    adm.min_val = 0.5;
    adm.noise_weight = 0.02;
    // Sorted by option name: adm_dlm_weight, adm_enhn_gain_limit, adm_min_val, adm_noise_weight.
    CHECK(ref::float_adm_feature_names(adm).adm3 == "adm3_dlmw_0.7_egl_1_min_0.5_nw_0.02");
    ref::FloatMotionOptions mo;
    mo.max_val = 18;
    mo.force_zero = true;
    CHECK(ref::float_motion_feature_names(mo)[1] == "motion2_force_0_mmxv_18");
    CHECK(ref::float_motion_feature_names(ref::FloatMotionOptions{})[0] == "motion");
}

TEST_CASE("float_adm_rcpss: Intel's RCPSS values and special cases", "[golden][float]") {
    CHECK(ref::float_adm_rcpss(1.0f) == 0.999755859375f); // 4095 / 4096
    CHECK(ref::float_adm_rcpss(2.0f) == 0.999755859375f / 2);
    CHECK(ref::float_adm_rcpss(-1.0f) == -0.999755859375f);
    CHECK(std::isinf(ref::float_adm_rcpss(0.0f)));
    CHECK(std::signbit(ref::float_adm_rcpss(-0.0f)));
    CHECK(ref::float_adm_rcpss(INFINITY) == 0.0f);
    CHECK(std::isnan(ref::float_adm_rcpss(NAN)));
    CHECK(ref::float_adm_rcpss(1e38f) == 0.0f); // reciprocal below the normal range
    // Within 1.5 * 2^-12 relative of 1/x, as Intel documents, on a sweep of mantissas.
    double worst = 0;
    for (float x = 1.0f; x < 2.0f; x += 1.0f / 8192)
        worst = std::max(worst, std::fabs(double(ref::float_adm_rcpss(x)) * x - 1.0));
    CHECK(worst <= 1.5 / 4096);
}

TEST_CASE("float extractors: NEG options change the numbers, bad input is refused",
          "[golden][float]") {
    const auto cases = golden_cases();
    const GoldenCase* c = nullptr;
    for (const auto& k : cases)
        if (k.name == "src01_576x324_3f_8bit") c = &k;
    REQUIRE(c);
    const auto refs = read_luma_frames(*c, c->ref);
    const auto dists = read_luma_frames(*c, c->dist);
    ref::FloatVifOptions vneg;
    vneg.enhn_gain_limit = 1.0;
    ref::FloatVifScratch vs(c->width, c->height, vneg);
    ref::FloatVifAccum va;
    ref::float_vif_accumulate(view(*c, refs[0]), view(*c, dists[0]), vneg, vs, va);
    const double neg_vif = ref::float_vif_finish(va, vneg).scale[0];
    ref::float_vif_accumulate(view(*c, refs[0]), view(*c, dists[0]), {}, vs, va);
    const double vif = ref::float_vif_finish(va, {}).scale[0];
    CHECK(neg_vif <= vif);
    ref::FloatAdmOptions aneg;
    aneg.enhn_gain_limit = 1.0;
    ref::FloatAdmScratch as(c->width, c->height);
    ref::FloatAdmAccum aa;
    ref::float_adm_accumulate(view(*c, refs[0]), view(*c, dists[0]), aneg, as, aa);
    const double neg_adm = ref::float_adm_finish(aa, aneg, c->width, c->height).adm2;
    ref::float_adm_accumulate(view(*c, refs[0]), view(*c, dists[0]), {}, as, aa);
    const double adm = ref::float_adm_finish(aa, {}, c->width, c->height).adm2;
    CHECK(neg_adm <= adm);
    CHECK(neg_adm > 0);

    ref::LumaView v9 = view(*c, refs[0]);
    v9.bpc = 9;
    std::vector<float> out(std::size_t(c->width) * c->height);
    CHECK_THROWS_AS(ref::float_picture_copy(v9, out.data(), c->width), std::invalid_argument);
    CHECK_THROWS_AS(ref::FloatAdmScratch(15, 64), std::invalid_argument);
    CHECK_THROWS_AS(ref::FloatVifScratch(15, 64, {}), std::invalid_argument);
    ref::FloatAdmOptions barten;
    barten.csf_mode = 1;
    CHECK_THROWS_AS(ref::float_adm_check(barten), std::invalid_argument);
    ref::FloatVifOptions bilinear;
    bilinear.prescale_method = "bilinear";
    CHECK_THROWS_AS(ref::float_vif_check(bilinear), std::invalid_argument);
    ref::FloatMotionOptions zero;
    zero.force_zero = true;
    const std::vector<double> sad = {0, 3, 4};
    const auto z = ref::float_motion_pool(sad, zero);
    CHECK(z.motion2 == std::vector<double>{0, 0, 0});
}

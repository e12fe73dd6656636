// SPDX-License-Identifier: BSD-2-Clause-Patent
// Suite `golden`: the reference SpEED (reference/speed.h) against libvmaf v3.2.0's own
// logs of the v1.0.16 models (../shared/golden/libvmaf/<case>.vmaf_v1.0.16_*.json):
// speed_chroma_u/v/uv, every frame, exact doubles, plus the pooled values; and the size
// rule against the cases where libvmaf failed (<case>.<model>.error.txt).

#include "golden_util.h"
#include "speed.h"

#include "catch.hpp"
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

using namespace vmaf_cuda_test;
namespace ref = vmaf_cuda::ref;

namespace {

const char* const kModels[] = {
    "vmaf_v1.0.16_1d5h_2160",     "vmaf_v1.0.16_3d0h",     "vmaf_v1.0.16_3d0h_2160",
    "vmaf_v1.0.16_5d0h",          "vmaf_v1.0.16_hfr_1d5h_2160", "vmaf_v1.0.16_hfr_3d0h",
    "vmaf_v1.0.16_hfr_3d0h_2160", "vmaf_v1.0.16_hfr_5d0h",
};

/// The speed_chroma options of a model file (its feature_opts_dicts entry).
ref::SpeedOptions model_speed_options(const std::string& model) {
    const std::string path = model_dir() + "/" + model + ".json";
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    const nlohmann::json j = nlohmann::json::parse(in);
    const auto& md = j.at("model_dict");
    const auto& names = md.at("feature_names");
    ref::SpeedOptions o;
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (names[i].get<std::string>().rfind("Speed_chroma_feature", 0) != 0) continue;
        for (const auto& [k, v] : md.at("feature_opts_dicts")[i].items()) {
            if (k == "speed_kernelscale") o.kernelscale = v.get<double>();
            else if (k == "speed_prescale") o.prescale = v.get<double>();
            else if (k == "speed_sigma_nn") o.sigma_nn = v.get<double>();
            else if (k == "speed_nn_floor") o.nn_floor = v.get<double>();
            else if (k == "speed_max_val") o.max_val = v.get<double>();
            else if (k == "speed_weight_var_mode") o.weight_var_mode = v.get<int>();
            else if (k == "speed_prescale_method") {
                const std::string m = v.get<std::string>();
                o.prescale_method = m == "bilinear" ? ref::SpeedScaleMethod::bilinear
                                    : m == "bicubic" ? ref::SpeedScaleMethod::bicubic
                                    : m == "lanczos4" ? ref::SpeedScaleMethod::lanczos4
                                                      : ref::SpeedScaleMethod::nearest;
            } else {
                throw std::runtime_error(model + ": unknown speed option " + k);
            }
        }
        return o;
    }
    throw std::runtime_error(model + ": no speed_chroma feature");
}

ref::LumaView view(const std::vector<std::uint8_t>& p, unsigned w, unsigned h, unsigned bpc) {
    ref::LumaView v;
    v.data = p.data();
    v.pitch = std::ptrdiff_t(w) * (bpc > 8 ? 2 : 1);
    v.width = w;
    v.height = h;
    v.bpc = bpc;
    return v;
}

struct Pooled {
    double mean, harmonic_mean, min, max;
};

/// libvmaf's vmaf_feature_score_pooled over all frames.
Pooled pool(const std::vector<double>& s) {
    double mn = 0, mx = 0, sum = 0, isum = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        sum += s[i];
        isum += 1. / (s[i] + 1.);
        if (i == 0 || s[i] < mn) mn = s[i];
        if (i == 0 || s[i] > mx) mx = s[i];
    }
    const double n = double(unsigned(s.size()));
    return {sum / n, n / isum - 1.0, mn, mx};
}

bool exists(const std::string& p) { return bool(std::ifstream(p)); }

} // namespace

TEST_CASE("speed_chroma equals libvmaf's v1.0.16 logs: every frame, u/v/uv, pooled",
          "[golden][speed]") {
    const auto cases = golden_cases();
    int compared_files = 0, refused = 0;
    std::size_t total_values = 0, total_bad = 0;
    for (const GoldenCase& c : cases) {
        std::vector<YuvFrame> rf, df; // read on first use
        for (const char* model : kModels) {
            const std::string base = golden_dir() + "/libvmaf/" + c.name + "." + model;
            const bool has_json = exists(base + ".json"), has_err = exists(base + ".error.txt");
            if (!has_json && !has_err) continue;
            const ref::SpeedOptions o = model_speed_options(model);
            const bool accepted = ref::speed_chroma_accepts(c.width, c.height, c.chroma, o);
            const ref::SpeedSize min = ref::speed_chroma_min_frame_size(c.chroma, o);
            INFO(c.name << " " << model << ": " << c.width << "x" << c.height << ", smallest "
                        << min.width << "x" << min.height);
            CHECK(accepted == (c.width >= min.width && c.height >= min.height));
            if (has_err) {
                // libvmaf: "SpEED: image too small, operating width or height is 0", crash.
                std::ifstream e(base + ".error.txt");
                const std::string text((std::istreambuf_iterator<char>(e)), {});
                REQUIRE(text.find("SpEED: image too small") != std::string::npos);
                CHECK_FALSE(accepted);
                const ref::SpeedSize p = ref::speed_chroma_plane_size(c.width, c.height, c.chroma);
                CHECK_THROWS_AS(ref::SpeedScratch(p.width, p.height, o), std::invalid_argument);
                ++refused;
                continue;
            }
            REQUIRE(accepted);
            ++compared_files;
            {
                std::ifstream in(base + ".json");
                const nlohmann::json g = nlohmann::json::parse(in);
                if (rf.empty()) {
                    rf = read_yuv_frames(c, c.ref);
                    df = read_yuv_frames(c, c.dist);
                }
                REQUIRE(rf.size() == c.frames);
                REQUIRE(df.size() == c.frames);
                REQUIRE(g.at("frames").size() == c.frames);
                const auto names = ref::speed_chroma_output_names(o);
                const ref::SpeedSize p = ref::speed_chroma_plane_size(c.width, c.height, c.chroma);
                ref::SpeedScratch scratch(p.width, p.height, o);
                const unsigned cw = chroma_width(c), ch = chroma_height(c);
                std::vector<double> ours[3];
                std::size_t checked = 0, bad = 0;
                std::string first;
                for (unsigned f = 0; f < c.frames; ++f) {
                    const ref::SpeedChromaScores s = ref::speed_chroma(
                        view(rf[f].u, cw, ch, c.bpc), view(rf[f].v, cw, ch, c.bpc),
                        view(df[f].u, cw, ch, c.bpc), view(df[f].v, cw, ch, c.bpc), scratch);
                    const double vals[3] = {s.u, s.v, s.uv};
                    const auto& gm = g["frames"][f].at("metrics");
                    for (int k = 0; k < 3; ++k) {
                        ours[k].push_back(vals[k]);
                        if (!gm.contains(names[k]))
                            FAIL(c.name << " " << model << ": golden has no key " << names[k]);
                        const double want = gm.at(names[k]).get<double>();
                        ++checked;
                        if (!same_double(vals[k], want) && !bad++)
                            first = "frame " + std::to_string(f) + " " + names[k] + ": got " +
                                    fmt17(vals[k]) + " expected " + fmt17(want);
                    }
                }
                for (int k = 0; k < 3; ++k) {
                    const Pooled pl = pool(ours[k]);
                    const auto& gp = g.at("pooled_metrics").at(names[k]);
                    const std::pair<const char*, double> pv[] = {
                        {"mean", pl.mean}, {"harmonic_mean", pl.harmonic_mean},
                        {"min", pl.min}, {"max", pl.max}};
                    for (const auto& [pname, v] : pv) {
                        const double want = gp.at(pname).get<double>();
                        ++checked;
                        if (!same_double(v, want) && !bad++)
                            first = std::string("pooled ") + names[k] + " " + pname + ": got " +
                                    fmt17(v) + " expected " + fmt17(want);
                    }
                }
                INFO(c.name << " " << model << ": " << bad << " of " << checked
                            << " values differ; first: " << first);
                CHECK(checked == std::size_t(c.frames) * 3 + 12);
                CHECK(bad == 0);
                total_values += checked;
                total_bad += bad;
            }
        }
    }
    std::printf("speed_chroma: %d golden logs compared (%zu values, %zu differ); %d sizes "
                "refused as libvmaf did\n",
                compared_files, total_values, total_bad, refused);
    CHECK(compared_files > 0);
    CHECK(refused > 0);
}

TEST_CASE("speed size rule and names", "[speed]") {
    ref::SpeedOptions o; // defaults: ps 1
    CHECK(ref::speed_chroma_min_frame_size(420, o).width == 160);
    CHECK(ref::speed_chroma_min_frame_size(420, o).height == 160);
    CHECK(ref::speed_chroma_min_frame_size(422, o).height == 80);
    CHECK(ref::speed_chroma_min_frame_size(444, o).width == 80);
    CHECK(ref::speed_temporal_min_frame_size(o).width == 80);
    CHECK(ref::speed_chroma_accepts(160, 160, 420, o));
    CHECK_FALSE(ref::speed_chroma_accepts(159, 160, 420, o));
    CHECK_FALSE(ref::speed_chroma_accepts(160, 159, 420, o));
    o.prescale = 0.5;
    o.prescale_method = ref::SpeedScaleMethod::bilinear;
    CHECK(ref::speed_chroma_min_frame_size(420, o).width == 318);
    o.prescale = 0.6;
    CHECK(ref::speed_chroma_min_frame_size(420, o).width == 266);
    CHECK(ref::speed_chroma_output_names(ref::SpeedOptions{})[2] ==
          "speed_chroma_uv");
    CHECK(ref::speed_temporal_output_name(ref::SpeedOptions{}) == "speed_temporal");
    o = ref::SpeedOptions{};
    o.nn_floor = 0.1;
    o.sigma_nn = 0.19;
    o.weight_var_mode = 5;
    o.max_val = 45.0;
    o.prescale = 0.6;
    o.prescale_method = ref::SpeedScaleMethod::bilinear;
    CHECK(ref::speed_chroma_output_names(o)[0] ==
          "speed_chroma_u_mxv_45_nnf_0.1_ps_0.6_psm_bilinear_snn_0.19_wvm_5");
    CHECK_THROWS_AS(ref::SpeedScratch(100, 100, ref::SpeedOptions{.kernelscale = 0.9}),
                    std::invalid_argument);
}

TEST_CASE("speed_temporal and speed_chroma on synthetic planes: zero for equal inputs",
          "[speed]") {
    // No golden values exist for speed_temporal; these are properties of libvmaf's code:
    // frame 0 scores 0, and identical ref/dis give identical entropies, hence 0.
    const unsigned w = 480, h = 400; // operating 30x25: a regular covariance matrix
    std::uint32_t seed = 12345;
    auto noise = [&seed](std::vector<std::uint8_t>& p) {
        for (auto& v : p) {
            seed = seed * 1664525u + 1013904223u;
            v = std::uint8_t(seed >> 24);
        }
    };
    std::vector<std::uint8_t> a(w * h), b(w * h), c(w * h);
    noise(a);
    noise(b);
    noise(c);
    ref::SpeedOptions o;
    ref::SpeedTemporal same(w, h, o), diff(w, h, o);
    CHECK(same.push(view(a, w, h, 8), view(a, w, h, 8)) == 0.0);
    CHECK(same.push(view(b, w, h, 8), view(b, w, h, 8)) == 0.0);
    CHECK(diff.push(view(a, w, h, 8), view(a, w, h, 8)) == 0.0);
    const double t = diff.push(view(b, w, h, 8), view(c, w, h, 8));
    CHECK(t > 0.0);
    CHECK(std::isfinite(t));

    ref::SpeedScratch s(w, h, o); // a 4:4:4 chroma plane of 480x400
    const ref::SpeedChromaScores z =
        ref::speed_chroma(view(a, w, h, 8), view(b, w, h, 8), view(a, w, h, 8), view(b, w, h, 8), s);
    CHECK(z.u == 0.0);
    CHECK(z.v == 0.0);
    CHECK(z.uv == 0.0);
    const ref::SpeedChromaScores d =
        ref::speed_chroma(view(a, w, h, 8), view(b, w, h, 8), view(c, w, h, 8), view(a, w, h, 8), s);
    CHECK(d.u > 0.0);
    CHECK(d.v > 0.0);

    // bpc 9: libvmaf's picture_copy would read the 16-bit words as bytes; refused here.
    std::vector<std::uint8_t> a16(2 * w * h, 0);
    CHECK_THROWS_AS(ref::speed_chroma(view(a16, w, h, 9), view(a16, w, h, 9),
                                      view(a16, w, h, 9), view(a16, w, h, 9), s),
                    std::invalid_argument);
    // prescale > 1 for speed_temporal: libvmaf's buffers are too small; refused.
    o.prescale = 1.5;
    CHECK_THROWS_AS(ref::SpeedTemporal(w, h, o), std::invalid_argument);
}

// SPDX-License-Identifier: BSD-2-Clause-Patent
// Suite `golden`: the CPU reference CAMBI (reference/cambi.h) against libvmaf v3.2.0's
// own JSON logs (../shared/golden/libvmaf): every case of cases.tsv, every frame and the
// pooled values, exact doubles; at default options (<case>.companion.json, key `cambi`)
// and with the CAMBI options of every v1.0.16 model (<case>.<model>.json, key
// `cambi_hrs_1080_cmxv_17_vlt_0.06`; cases where libvmaf failed on the model, in SpEED,
// have an .error.txt instead and are skipped); then every other option against
// cambi_options.tsv (libvmaf v3.2.0's values, how they were made is in its header).

#include "cambi.h"
#include "cambi_pool_cases.h"
#include "golden_util.h"
#include "pooling.h"
#include "vmaf_cuda.h"

#include "catch.hpp"
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace vmaf_cuda_test;
namespace ref = vmaf_cuda::ref;
namespace fs = std::filesystem;

namespace {

nlohmann::json read_json(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    return nlohmann::json::parse(in);
}

/// Counts comparisons; reports the first few mismatches in full.
struct Comparer {
    unsigned compared = 0, mismatched = 0;
    void operator()(const std::string& where, double got, double expected) {
        ++compared;
        if (same_double(got, expected)) {
            SUCCEED();
            return;
        }
        if (mismatched++ < 5)
            FAIL_CHECK(where << ": got " << fmt17(got) << ", libvmaf " << fmt17(expected));
    }
};

/// Per-frame scores of a case; also cross-checks the order-free top-k pooling meant for
/// the GPU (cambi_topk_exact) against libvmaf's quick-select wherever it claims equality.
struct CaseRun {
    std::vector<double> scores;
    unsigned exact_scales = 0, total_scales = 0;
};

CaseRun run_case(const GoldenCase& c, const std::vector<std::vector<std::uint8_t>>& frames,
                 const ref::CambiOptions& opt) {
    const ref::CambiPlan plan = ref::cambi_plan(opt, c.width, c.height, c.bpc);
    ref::CambiScratch s;
    CaseRun out;
    const std::ptrdiff_t pitch = std::ptrdiff_t(c.width) * (c.bpc > 8 ? 2 : 1);
    for (const auto& f : frames) {
        const ref::LumaView v{f.data(), pitch, c.width, c.height, c.bpc};
        // Stages as a GPU port would run them, with both poolings per scale.
        const ref::CambiPassGeometry& g = plan.dist;
        std::vector<std::uint16_t> img(std::size_t(g.width) * g.height), mask(img.size());
        std::vector<float> cv(img.size());
        ref::cambi_preprocess(v, g.width, g.height, plan.enc_bitdepth, img.data());
        ref::cambi_spatial_mask(img.data(), g.width, g.height, g.mask_index, mask.data());
        ref::CambiPassScores ps{};
        unsigned w = g.width, h = g.height;
        for (unsigned sc = 0; sc < ref::kCambiScales; ++sc) {
            if (sc > 0 || plan.high_res_speedup) {
                const unsigned nw = (w + 1) >> 1, nh = (h + 1) >> 1;
                ref::cambi_decimate(img.data(), w, nw, nh, img.data());
                ref::cambi_decimate(mask.data(), w, nw, nh, mask.data());
                w = nw, h = nh;
            }
            ref::cambi_filter_mode(img.data(), w, h, s.mode);
            ref::cambi_c_values(img.data(), mask.data(), w, h, g.window_size, plan, cv.data(),
                                s.hist);
            const std::span<float> span(cv.data(), std::size_t(w) * h);
            const ref::CambiTopkExact ex = ref::cambi_topk_exact(span, plan.topk);
            ps.scale[sc] = ref::cambi_spatial_pooling(span, plan.topk);
            ++out.total_scales;
            if (ex.equals_libvmaf) {
                ++out.exact_scales;
                if (!same_double(ex.score, ps.scale[sc]))
                    FAIL_CHECK(c.name << " scale " << sc << ": cambi_topk_exact " << fmt17(ex.score)
                                      << " != quick-select " << fmt17(ps.scale[sc]));
            }
        }
        out.scores.push_back(ref::cambi_finish(plan, ps, ps).cambi);
    }
    // The convenience driver gives the same numbers.
    if (!frames.empty()) {
        const ref::LumaView v{frames.back().data(), pitch, c.width, c.height, c.bpc};
        CHECK(same_double(ref::cambi_frame(v, nullptr, plan, s).cambi, out.scores.back()));
    }
    return out;
}

void compare_log(Comparer& cmp, const std::string& what, const nlohmann::json& log,
                 const std::string& key, const std::vector<double>& got) {
    const auto& frames = log.at("frames");
    REQUIRE(frames.size() == got.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        INFO(what);
        REQUIRE(frames[i].at("metrics").contains(key));
        cmp(what + " frame " + std::to_string(i) + " " + key, got[i],
            frames[i]["metrics"][key].get<double>());
    }
    const auto& pooled = log.at("pooled_metrics").at(key);
    const std::pair<const char*, int> pools[] = {{"mean", VMAF_CUDA_POOL_MEAN},
                                                 {"min", VMAF_CUDA_POOL_MIN},
                                                 {"max", VMAF_CUDA_POOL_MAX},
                                                 {"harmonic_mean", VMAF_CUDA_POOL_HARMONIC_MEAN}};
    for (const auto& [name, method] : pools)
        cmp(what + " pooled " + name + " " + key, vmaf_cuda::engine::pool(got, method),
            pooled.at(name).get<double>());
}

/// CAMBI options of a model file (its feature_opts_dicts entry for Cambi_feature_*), set
/// as libvmaf sets them (the JSON text of each value through cambi_set_option()).
ref::CambiOptions model_cambi_options(const std::string& model) {
    const auto m = read_json(model_dir() + "/" + model + ".json").at("model_dict");
    const auto& names = m.at("feature_names");
    ref::CambiOptions o;
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (names[i].get<std::string>().rfind("Cambi_feature", 0) != 0) continue;
        for (const auto& [k, v] : m.at("feature_opts_dicts")[i].items()) {
            const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
            if (!ref::cambi_set_option(o, k, text))
                FAIL("model " << model << ": CAMBI option " << k << " is not an option name");
        }
    }
    return o;
}

} // namespace

TEST_CASE("cambi: option names as libvmaf logs them") {
    ref::CambiOptions o;
    CHECK(ref::cambi_feature_name(o) == "cambi");
    o.cambi_high_res_speedup = 1080;
    o.cambi_vis_lum_threshold = 0.06;
    o.cambi_max_val = 17.0;
    CHECK(ref::cambi_feature_name(o) == "cambi_hrs_1080_cmxv_17_vlt_0.06");
    o = {};
    o.full_ref = true;
    o.eotf = "pq";
    o.window_size = 63;
    CHECK(ref::cambi_output_names(o) ==
          std::vector<std::string>{"cambi_eotf_pq_ws_63", "cambi_source", "cambi_full_reference"});
    CHECK_THROWS_AS(ref::cambi_plan(ref::CambiOptions{}, 200, 200, 8), std::invalid_argument);
    o = {};
    o.eotf = "hlg";
    CHECK_THROWS_AS(ref::cambi_plan(o, 320, 240, 8), std::invalid_argument);
    // Where libvmaf v3.2.0 fails: a visibility threshold above every contrast threshold
    // (it crashes), a scaled window above 65 (3000x220 with window_size 127 gives 69).
    o = {};
    o.cambi_vis_lum_threshold = 100.0;
    CHECK_THROWS_AS(ref::cambi_plan(o, 576, 324, 10), std::invalid_argument);
    o.cambi_vis_lum_threshold = 80.0;
    CHECK_NOTHROW(ref::cambi_plan(o, 576, 324, 10));
    o = {};
    o.window_size = 127;
    CHECK_THROWS_AS(ref::cambi_plan(o, 3000, 220, 10), std::invalid_argument);
    CHECK(ref::cambi_plan(o, 2000, 64, 10).dist.window_size == 43);
}

TEST_CASE("cambi: options set as libvmaf sets them") {
    ref::CambiOptions o;
    // Aliases and unknown names are ignored by libvmaf (the output stays "cambi").
    CHECK_FALSE(ref::cambi_set_option(o, "vlt", "0.06"));
    CHECK_FALSE(ref::cambi_set_option(o, "bogus", "3"));
    CHECK(ref::cambi_feature_name(o) == "cambi");
    // Numbers go through libvmaf's dictionary (strtof, %g) first.
    CHECK(ref::cambi_set_option(o, "window_size", "0x20"));
    CHECK(o.window_size == 32);
    CHECK(ref::cambi_set_option(o, "tvi_threshold", "0.0191234567"));
    CHECK(o.tvi_threshold == 0.0191235);
    CHECK(ref::cambi_set_option(o, "topk", "0.6000001")); // "0.6": the default again
    CHECK(ref::cambi_feature_name(o) == "cambi_tvit_0.0191235_ws_32");
    // Refused by libvmaf ("problem loading feature extractor").
    CHECK_THROWS_AS(ref::cambi_set_option(o, "cambi_max_val", "abc"), std::invalid_argument);
    CHECK_THROWS_AS(ref::cambi_set_option(o, "full_ref", "1"), std::invalid_argument);
    CHECK_THROWS_AS(ref::cambi_set_option(o, "enc_width", "0"), std::invalid_argument);
    CHECK_THROWS_AS(ref::cambi_set_option(o, "window_size", "14"), std::invalid_argument);
    CHECK(ref::cambi_set_option(o, "full_ref", "true"));
    CHECK(o.full_ref);

    // libvmaf v3.2.0 with --feature cambi=window_size=0x20 on src01 8-bit, frame 0.
    for (const auto& c : golden_cases()) {
        if (c.name != "src01_576x324_3f_8bit") continue;
        ref::CambiOptions w;
        REQUIRE(ref::cambi_set_option(w, "window_size", "0x20"));
        REQUIRE(ref::cambi_feature_name(w) == "cambi_ws_32");
        const auto frames = read_luma_frames(c, c.dist);
        ref::CambiScratch s;
        const ref::LumaView v{frames[0].data(), std::ptrdiff_t(c.width), c.width, c.height, c.bpc};
        const double got = ref::cambi_frame(v, nullptr, ref::cambi_plan(w, c.width, c.height, c.bpc), s).cambi;
        CHECK(fmt17(got) == "0.30098264001458724");
    }
}

TEST_CASE("cambi: every golden case, default and v1.0.16 model options, vs libvmaf logs") {
    const std::string lv = require_golden_dir() + "/libvmaf";
    Comparer cmp;
    unsigned model_logs = 0, skipped = 0, exact_scales = 0, total_scales = 0;
    for (const auto& c : golden_cases()) {
        const auto frames = read_luma_frames(c, c.dist);
        REQUIRE(frames.size() == c.frames);

        // Default options: the companion log.
        {
            const CaseRun r = run_case(c, frames, ref::CambiOptions{});
            exact_scales += r.exact_scales;
            total_scales += r.total_scales;
            compare_log(cmp, c.name + " (defaults)", read_json(lv + "/" + c.name + ".companion.json"),
                        "cambi", r.scores);
        }

        // Every v1.0.16 model log of this case; runs once per distinct option set.
        std::map<std::string, std::vector<double>> by_name;
        std::vector<std::string> models;
        for (const auto& e : fs::directory_iterator(lv)) {
            const std::string f = e.path().filename().string();
            const std::string pre = c.name + ".vmaf_v1.0.16";
            if (f.rfind(pre, 0) != 0 || f.size() < 5) continue;
            const auto dot = f.find('.');
            const std::string rest = f.substr(dot + 1);
            if (rest.size() > 10 && rest.compare(rest.size() - 10, 10, ".error.txt") == 0) {
                ++skipped;
                continue;
            }
            if (rest.size() > 5 && rest.compare(rest.size() - 5, 5, ".json") == 0)
                models.push_back(rest.substr(0, rest.size() - 5));
        }
        std::sort(models.begin(), models.end());
        for (const auto& m : models) {
            const ref::CambiOptions o = model_cambi_options(m);
            const std::string key = ref::cambi_feature_name(o);
            auto it = by_name.find(key);
            if (it == by_name.end()) it = by_name.emplace(key, run_case(c, frames, o).scores).first;
            compare_log(cmp, c.name + " (" + m + ")", read_json(lv + "/" + c.name + "." + m + ".json"),
                        key, it->second);
            ++model_logs;
        }
    }
    WARN("cambi: " << cmp.compared << " values compared, " << cmp.mismatched << " mismatched; "
                   << model_logs << " model logs (" << skipped << " .error.txt skipped); "
                   << "order-free top-k provably equal on " << exact_scales << " of "
                   << total_scales << " scale poolings");
    CHECK(cmp.mismatched == 0);
    CHECK(model_logs > 0);
}

namespace {

/// CambiOptions from libvmaf's "name=value:name=value" syntax ("-": none).
ref::CambiOptions parse_cambi_options(const std::string& s) {
    ref::CambiOptions o;
    if (s == "-") return o;
    std::stringstream ss(s);
    std::string kv;
    while (std::getline(ss, kv, ':')) {
        const auto eq = kv.find('=');
        if (!ref::cambi_set_option(o, kv.substr(0, eq), kv.substr(eq + 1)))
            throw std::runtime_error("cambi_options.tsv: unknown option " + kv);
    }
    return o;
}

/// Luma planes of the table's input spec: "all", or "frames=F,N;upscale=U" (frames
/// F..F+N-1, each sample repeated U x U times).
std::vector<std::vector<std::uint8_t>> table_input(const GoldenCase& c,
                                                   const std::vector<std::vector<std::uint8_t>>& all,
                                                   const std::string& spec, unsigned& w,
                                                   unsigned& h) {
    w = c.width, h = c.height;
    if (spec == "all") return all;
    unsigned first = 0, count = 0, up = 1;
    if (std::sscanf(spec.c_str(), "frames=%u,%u;upscale=%u", &first, &count, &up) != 3)
        throw std::runtime_error("cambi_options.tsv: bad input " + spec);
    const std::size_t bps = c.bpc > 8 ? 2 : 1;
    w = c.width * up, h = c.height * up;
    std::vector<std::vector<std::uint8_t>> out;
    for (unsigned n = first; n < first + count; ++n) {
        std::vector<std::uint8_t> p(std::size_t(w) * h * bps);
        for (unsigned y = 0; y < h; ++y)
            for (unsigned x = 0; x < w; ++x)
                for (std::size_t k = 0; k < bps; ++k)
                    p[(std::size_t(y) * w + x) * bps + k] =
                        all.at(n)[(std::size_t(y / up) * c.width + x / up) * bps + k];
        out.push_back(std::move(p));
    }
    return out;
}

} // namespace

TEST_CASE("cambi: every other option vs libvmaf v3.2.0 (cambi_options.tsv)") {
    std::ifstream in(VMAF_CUDA_CAMBI_TABLE);
    REQUIRE(in);
    struct Row { unsigned frame; std::string key; double value; };
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
    for (const auto& c : golden_cases()) cases[c.name] = c;
    std::map<std::string, std::pair<std::vector<std::vector<std::uint8_t>>,
                                    std::vector<std::vector<std::uint8_t>>>> clips;
    Comparer cmp;
    for (const auto& [id, rows] : runs) {
        const GoldenCase& c = cases.at(id[0]);
        auto it = clips.find(c.name);
        if (it == clips.end())
            it = clips.emplace(c.name, std::make_pair(read_luma_frames(c, c.ref),
                                                      read_luma_frames(c, c.dist))).first;
        unsigned w = 0, h = 0;
        const auto ref_frames = table_input(c, it->second.first, id[1], w, h);
        const auto dis_frames = table_input(c, it->second.second, id[1], w, h);
        const ref::CambiOptions opt = parse_cambi_options(id[2]);
        const ref::CambiPlan plan = ref::cambi_plan(opt, w, h, c.bpc);
        const auto names = ref::cambi_output_names(opt);
        ref::CambiScratch s;
        const std::ptrdiff_t pitch = std::ptrdiff_t(w) * (c.bpc > 8 ? 2 : 1);
        std::vector<std::map<std::string, double>> got;
        for (std::size_t i = 0; i < dis_frames.size(); ++i) {
            const ref::LumaView d{dis_frames[i].data(), pitch, w, h, c.bpc};
            const ref::LumaView r{ref_frames[i].data(), pitch, w, h, c.bpc};
            const ref::CambiScores sc = ref::cambi_frame(d, &r, plan, s);
            std::map<std::string, double> m{{names[0], sc.cambi}};
            if (opt.full_ref) m[names[1]] = sc.source, m[names[2]] = sc.full_reference;
            got.push_back(m);
        }
        for (const Row& row : rows) {
            const std::string where = c.name + " " + id[1] + " " + id[2] + " frame " +
                                      std::to_string(row.frame) + " " + row.key;
            INFO(where);
            REQUIRE(row.frame < got.size());
            REQUIRE(got[row.frame].count(row.key) == 1);
            cmp(where, got[row.frame][row.key], row.value);
        }
    }
    WARN("cambi options table: " << runs.size() << " option runs, " << cmp.compared
                                 << " values compared, " << cmp.mismatched << " mismatched");
    CHECK(cmp.mismatched == 0);
}

TEST_CASE("cambi: a banded 3416x1920 frame whose pooling depends on the quick-select order") {
    // bbb 10-bit frame 33, each sample repeated 4 x 4 (cambi_options.tsv has libvmaf's
    // score of it, which the table test matches): at scale 0 the top-k sum is beyond the
    // order-free guarantee and the order-free result really differs, so only the
    // quick-select replica gives libvmaf's number there.
    GoldenCase c;
    for (const auto& g : golden_cases())
        if (g.name == "bbb_854x480_120f_10bit_hevc") c = g;
    REQUIRE(c.width == 854);
    const auto all = read_luma_frames(c, c.dist);
    unsigned w = 0, h = 0;
    const auto frames = table_input(c, all, "frames=33,1;upscale=4", w, h);
    const ref::CambiPlan plan = ref::cambi_plan(ref::CambiOptions{}, w, h, c.bpc);
    const ref::LumaView v{frames[0].data(), std::ptrdiff_t(w) * 2, w, h, c.bpc};
    const auto& g = plan.dist;
    std::vector<std::uint16_t> img(std::size_t(w) * h), mask(img.size()), scratch;
    std::vector<float> cv(img.size());
    ref::cambi_preprocess(v, w, h, plan.enc_bitdepth, img.data());
    ref::cambi_spatial_mask(img.data(), w, h, g.mask_index, mask.data());
    ref::cambi_filter_mode(img.data(), w, h, scratch);
    ref::cambi_c_values(img.data(), mask.data(), w, h, g.window_size, plan, cv.data(), scratch);
    const ref::CambiTopkExact ex = ref::cambi_topk_exact(cv, plan.topk);
    const double qs = ref::cambi_spatial_pooling(cv, plan.topk);
    CHECK_FALSE(ex.equals_libvmaf);
    CHECK_FALSE(same_double(ex.score, qs));
    ref::CambiScratch s;
    CHECK(fmt17(ref::cambi_frame(v, nullptr, plan, s).cambi) == "5.9967437864092359");
}

TEST_CASE("cambi: order-free top-k pooling says when it cannot match the quick-select") {
    // c-values as CAMBI makes them (0, or >= 0.5): large ones (strong banding) and small
    // ones with full mantissas; the top-k sum (~5.4e9) is far above 2^53 ulps of 0.5.
    std::mt19937 rng(1);
    std::vector<float> c;
    for (int i = 0; i < 600000; ++i) c.push_back(float(9000 + (rng() % 100000) / 7.0));
    for (int i = 0; i < 300000; ++i)
        c.push_back(std::nextafter(0.5f + float(rng()) / 8.6e9f, 1.0f));
    c.resize(c.size() + 400000, 0.0f);
    for (std::size_t i = c.size() - 1; i > 0; --i) std::swap(c[i], c[rng() % (i + 1)]);
    const ref::CambiTopkExact ex = ref::cambi_topk_exact(c, 0.6);
    std::vector<float> q = c;
    const double qs = ref::cambi_spatial_pooling(q, 0.6);
    CHECK_FALSE(ex.equals_libvmaf);
    CHECK_FALSE(same_double(ex.score, qs)); // the summation order matters here
    // Without the small values every top-k value is a multiple of 2^-12: guaranteed.
    std::vector<float> big;
    for (const float f : c)
        if (f > 1.0f || f == 0.0f) big.push_back(f);
    const ref::CambiTopkExact ex2 = ref::cambi_topk_exact(big, 0.6);
    CHECK(ex2.equals_libvmaf);
    CHECK(same_double(ex2.score, ref::cambi_spatial_pooling(big, 0.6)));
}


TEST_CASE("cambi: the blocked quick-select leaves every value where libvmaf's loop does") {
    // Random arrays of c-value-like floats: many zeros, few distinct values (ties with the
    // pivot on both sides), full mantissas, sorted and reversed runs; sizes around the
    // block size and large; topk from tiny to 1.
    const std::uint32_t seed = 20261201;
    std::mt19937 rng(seed);
    const std::size_t sizes[] = {1,   2,   3,    5,    127,  128,  129,  255,  256,  257,
                                 300, 511, 1000, 1024, 4097, 9999, 65536, 250000, 1000003};
    const double topks[] = {0.0001, 0.05, 0.3, 0.6, 0.6, 0.97, 1.0};
    unsigned runs = 0, bad = 0;
    for (const std::size_t n : sizes)
        for (const double topk : topks)
            for (int kind = 0; kind < 6; ++kind) {
                std::vector<float> a = pool_case_array(kind, n, rng);
                std::vector<float> want = a;
                const double want_score = literal_pooling(want, topk);
                const double got_score = ref::cambi_spatial_pooling(std::span<float>(a), topk);
                ++runs;
                const bool same = std::memcmp(a.data(), want.data(), n * sizeof(float)) == 0 &&
                                  same_double(got_score, want_score);
                if (!same && bad++ < 5)
                    FAIL_CHECK("seed " << seed << ", n " << n << ", topk " << topk << ", kind "
                                       << kind << ": the order or the score differs ("
                                       << fmt17(got_score) << " vs " << fmt17(want_score) << ")");
            }
    INFO(runs << " arrays");
    CHECK(bad == 0);
    CHECK(runs == std::size(sizes) * std::size(topks) * 6);
}

TEST_CASE("cambi: the device pooling's arithmetic, run on the host, equals libvmaf's loop") {
    // kernels/cambi_pool_math.cuh: quick-select rounds from the position-local swap rule
    // and the ordered double sum by binade phases, emulated sequentially
    // (emulated_pooling); the device kernels (tests/check/cambi_pool.cpp) run the same
    // functions. Kinds 6..8 make libvmaf's sum round, with ties to even.
    const std::uint32_t seed = 20261202;
    std::mt19937 rng(seed);
    const std::size_t sizes[] = {1, 2, 3, 5, 64, 129, 1000, 4097, 65536, 300000, 1000003};
    const double topks[] = {0.0001, 0.3, 0.6, 0.97, 1.0};
    const int chunks[] = {1, 37, 2048};
    unsigned runs = 0, bad = 0, rounded = 0;
    for (const std::size_t n : sizes)
        for (const double topk : topks)
            for (int kind = 0; kind < kPoolKinds; ++kind) {
                const std::vector<float> a = pool_case_array(kind, n, rng);
                std::vector<float> want = a;
                const double want_score = literal_pooling(want, topk);
                {
                    // Does libvmaf's sum round here (not the order-free exact sum)?
                    const ref::CambiTopkExact ex = ref::cambi_topk_exact(a, topk);
                    rounded += !ex.equals_libvmaf;
                }
                const int chunk = chunks[runs % std::size(chunks)];
                std::vector<float> got = a;
                const double got_score = emulated_pooling(got, topk, chunk);
                ++runs;
                const bool same = std::memcmp(got.data(), want.data(), n * sizeof(float)) == 0 &&
                                  same_double(got_score, want_score);
                if (!same && bad++ < 5)
                    FAIL_CHECK("seed " << seed << ", n " << n << ", topk " << topk << ", kind "
                                       << kind << ", chunk " << chunk
                                       << ": the order or the score differs ("
                                       << fmt17(got_score) << " vs " << fmt17(want_score) << ")");
            }
    INFO(runs << " arrays, " << rounded << " with a rounding sum");
    CHECK(bad == 0);
    CHECK(runs == std::size(sizes) * std::size(topks) * kPoolKinds);
    CHECK(rounded >= 20); // the phases after the first really ran
}

TEST_CASE("cambi: full_ref on identical pictures") {
    const auto cases = golden_cases();
    const GoldenCase& c = cases.front();
    const auto frames = read_luma_frames(c, c.dist);
    ref::CambiOptions o;
    o.full_ref = true;
    const ref::CambiPlan plan = ref::cambi_plan(o, c.width, c.height, c.bpc);
    ref::CambiScratch s;
    const ref::LumaView v{frames[0].data(), std::ptrdiff_t(c.width) * (c.bpc > 8 ? 2 : 1),
                          c.width, c.height, c.bpc};
    const ref::CambiScores r = ref::cambi_frame(v, &v, plan, s);
    CHECK(same_double(r.cambi, r.source));
    CHECK(r.full_reference == 0.0);
}

// SPDX-License-Identifier: BSD-2-Clause-Patent
// Suite `golden` (and `gpu` with VMAF_CUDA_TEST_BACKEND=cuda): every case of
// ../shared/golden through the C API, every frame, every column, exact doubles.

#include "golden_util.h"
#include "vmaf_cuda.h"

#include "catch.hpp"
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

using namespace vmaf_cuda_test;

namespace {

VmafCudaBackend test_backend() {
    const char* b = std::getenv("VMAF_CUDA_TEST_BACKEND");
    if (b && std::string(b) == "cuda") return VMAF_CUDA_BACKEND_CUDA;
    return VMAF_CUDA_BACKEND_CPU;
}

struct RunResult {
    std::vector<unsigned> index;
    std::vector<std::map<std::string, double>> frames;
    std::map<std::string, double> pooled; // of model key `model_key`
    std::map<std::string, std::map<std::string, double>> pooled_all; // name -> pool -> value
};

/// Runs a whole case through the API; device pictures when `device` (CUDA backend).
RunResult run_case(const GoldenCase& c, const std::string& models, const std::string& model_key,
                   unsigned n_subsample = 1) {
    VmafCudaSettings s;
    vmaf_cuda_default_settings(&s);
    s.width = c.width;
    s.height = c.height;
    s.bpc = c.bpc;
    s.backend = test_backend();
    s.models = models.empty() ? nullptr : models.c_str();
    s.n_subsample = n_subsample;
    if (const char* f = std::getenv("VMAF_CUDA_TEST_IN_FLIGHT")) s.frames_in_flight = unsigned(std::atoi(f));
    VmafCudaSession* vs = nullptr;
    char err[512];
    const int rc = vmaf_cuda_open(&vs, &s, err, sizeof err);
    INFO("open: " << err);
    REQUIRE(rc == VMAF_CUDA_OK);

    const auto ref = read_luma_frames(c, c.ref);
    const auto dist = read_luma_frames(c, c.dist);
    REQUIRE(ref.size() == c.frames);
    REQUIRE(dist.size() == c.frames);
    RunResult out;
    const ptrdiff_t pitch = ptrdiff_t(c.width) * (c.bpc > 8 ? 2 : 1);
    VmafCudaFrameScores fs;
    auto drain = [&](int until) {
        int r;
        while ((r = vmaf_cuda_receive(vs, &fs)) == VMAF_CUDA_OK) {
            out.index.push_back(fs.index);
            std::map<std::string, double> m;
            for (unsigned i = 0; i < fs.count; ++i) m[fs.names[i]] = fs.values[i];
            out.frames.push_back(m);
        }
        INFO(vmaf_cuda_error_message(vs));
        REQUIRE(r == until);
    };
    for (unsigned i = 0; i < c.frames; ++i) {
        VmafCudaPicture rp{ref[i].data(), pitch, 0, VMAF_CUDA_MEMORY_HOST};
        VmafCudaPicture dp{dist[i].data(), pitch, 0, VMAF_CUDA_MEMORY_HOST};
        REQUIRE(vmaf_cuda_send(vs, &rp, &dp) == VMAF_CUDA_OK);
        drain(VMAF_CUDA_EAGAIN);
    }
    REQUIRE(vmaf_cuda_flush(vs) == VMAF_CUDA_OK);
    drain(VMAF_CUDA_EOF);
    const char* pools[] = {"mean", "harmonic_mean", "min", "max"};
    for (int p = 0; p < 4; ++p) {
        double v = 0;
        REQUIRE(vmaf_cuda_pooled(vs, model_key.c_str(), VmafCudaPool(p), &v) == VMAF_CUDA_OK);
        out.pooled[pools[p]] = v;
    }
    if (!out.frames.empty())
        for (const auto& [name, value] : out.frames.front())
            for (int p = 0; p < 4; ++p) {
                double v = 0;
                if (vmaf_cuda_pooled(vs, name.c_str(), VmafCudaPool(p), &v) == VMAF_CUDA_OK)
                    out.pooled_all[name][pools[p]] = v;
            }
    vmaf_cuda_close(vs);
    return out;
}

/// Compares every column of the golden table; reports the first mismatch.
void compare(const GoldenCase& c, const GoldenTable& g, const RunResult& r,
             const std::string& model_key) {
    REQUIRE(r.frames.size() == g.rows.size());
    std::size_t checked = 0, bad = 0;
    std::string first;
    for (std::size_t f = 0; f < g.rows.size(); ++f) {
        REQUIRE(r.index[f] == f);
        for (std::size_t j = 0; j < g.columns.size(); ++j) {
            const std::string name = g.columns[j] == "vmaf" ? model_key : api_name(g.columns[j]);
            const auto it = r.frames[f].find(name);
            if (it == r.frames[f].end()) {
                FAIL("case " << c.name << ": no output named '" << name << "'");
            }
            ++checked;
            if (!same_double(it->second, g.rows[f][j])) {
                if (!bad++)
                    first = "frame " + std::to_string(f) + " " + name + ": got " +
                            fmt17(it->second) + " expected " + fmt17(g.rows[f][j]);
            }
        }
    }
    INFO("case " << c.name << ": " << bad << " of " << checked << " values differ; first: " << first);
    CHECK(bad == 0);
    for (const char* p : {"mean", "harmonic_mean", "min", "max"}) {
        if (!g.pooled.count(p)) continue;
        INFO("case " << c.name << " pooled " << p << ": got " << fmt17(r.pooled.at(p))
                     << " expected " << fmt17(g.pooled.at(p)));
        CHECK(same_double(r.pooled.at(p), g.pooled.at(p)));
    }
    if (g.pooled.count("frames")) CHECK(double(r.frames.size()) == g.pooled.at("frames"));
}

} // namespace

TEST_CASE("every golden case, every frame and column, bit-exact", "[golden]") {
    const auto cases = golden_cases();
    REQUIRE(cases.size() >= 14);
    for (const GoldenCase& c : cases) {
        DYNAMIC_SECTION(c.name) {
            const GoldenTable g = read_golden_csv(golden_dir() + "/" + c.name + ".csv");
            const RunResult r = run_case(c, "", "vmaf");
            compare(c, g, r, "vmaf");
        }
    }
}

TEST_CASE("other models (NEG, 4K, enable_transform), bit-exact", "[golden][models]") {
    const auto cases = golden_cases();
    struct M { const char* file; const char* spec; };
    const M models[] = {
        {"vmaf_v0.6.1neg", "version=vmaf_v0.6.1neg"},
        {"vmaf_4k_v0.6.1", "version=vmaf_4k_v0.6.1"},
        {"vmaf_v0.6.1_enable_transform", "version=vmaf_v0.6.1:enable_transform=true"},
    };
    int files = 0;
    for (const GoldenCase& c : cases) {
        for (const M& m : models) {
            const std::string path = golden_dir() + "/models/" + c.name + "." + m.file + ".csv";
            std::ifstream probe(path);
            if (!probe) continue;
            ++files;
            DYNAMIC_SECTION(c.name << " " << m.file) {
                const GoldenTable g = read_golden_csv(path);
                const RunResult r = run_case(c, m.spec, "vmaf");
                compare(c, g, r, "vmaf");
            }
        }
    }
    CHECK(files == 12);
}

TEST_CASE("several models in one session agree with single-model runs", "[golden][models]") {
    const auto cases = golden_cases();
    const GoldenCase* c = nullptr;
    for (const auto& k : cases)
        if (k.name == "src01_576x324_3f_8bit") c = &k;
    REQUIRE(c);
    const RunResult r = run_case(*c, "version=vmaf_v0.6.1|version=vmaf_v0.6.1neg|version=vmaf_4k_v0.6.1",
                                 "vmaf");
    const GoldenTable g = read_golden_csv(golden_dir() + "/" + c->name + ".csv");
    const GoldenTable neg =
        read_golden_csv(golden_dir() + "/models/" + c->name + ".vmaf_v0.6.1neg.csv");
    const GoldenTable k4 =
        read_golden_csv(golden_dir() + "/models/" + c->name + ".vmaf_4k_v0.6.1.csv");
    const std::size_t vcol = g.columns.size() - 1;
    for (std::size_t f = 0; f < g.rows.size(); ++f) {
        INFO("frame " << f);
        CHECK(same_double(r.frames[f].at("vmaf"), g.rows[f][vcol]));
        CHECK(same_double(r.frames[f].at("vmaf_v0.6.1neg"), neg.rows[f].back()));
        CHECK(same_double(r.frames[f].at("vmaf_4k_v0.6.1"), k4.rows[f].back()));
        CHECK(same_double(r.frames[f].at("integer_adm2_egl_1"), neg.rows[f][0]));
    }
}

TEST_CASE("n_subsample scores every n-th frame with unchanged values", "[golden]") {
    const auto cases = golden_cases();
    const GoldenCase* c = nullptr;
    for (const auto& k : cases)
        if (k.name == "testsrc2_320x240_8bit") c = &k;
    REQUIRE(c);
    const GoldenTable g = read_golden_csv(golden_dir() + "/" + c->name + ".csv");
    const RunResult r = run_case(*c, "", "vmaf", 3);
    REQUIRE(r.frames.size() == (g.rows.size() + 2) / 3);
    for (std::size_t k = 0; k < r.frames.size(); ++k) {
        REQUIRE(r.index[k] == 3 * k);
        for (std::size_t j = 0; j < g.columns.size(); ++j) {
            const std::string name = g.columns[j] == "vmaf" ? "vmaf" : api_name(g.columns[j]);
            INFO("frame " << 3 * k << " " << name);
            CHECK(same_double(r.frames[k].at(name), g.rows[3 * k][j]));
        }
    }
}

TEST_CASE("the same input twice gives byte-identical results", "[golden]") {
    const auto cases = golden_cases();
    const GoldenCase* c = nullptr;
    for (const auto& k : cases)
        if (k.name == "sparks_480x270_5f_10bit") c = &k;
    REQUIRE(c);
    const RunResult a = run_case(*c, "", "vmaf");
    const RunResult b = run_case(*c, "", "vmaf");
    REQUIRE(a.frames.size() == b.frames.size());
    for (std::size_t f = 0; f < a.frames.size(); ++f)
        for (const auto& [name, v] : a.frames[f]) {
            INFO("frame " << f << " " << name);
            CHECK(same_double(v, b.frames[f].at(name)));
        }
}

// vmaf_4k_v0.6.1neg, and vmaf_b_v0.6.3 (a bootstrap collection), against libvmaf's logs.
TEST_CASE("libvmaf JSON logs: 4K NEG and bootstrap models, every frame, key, pooled value",
          "[golden][models][libvmaf]") {
    const auto cases = golden_cases();
    int files = 0;
    for (const std::string model : {"vmaf_4k_v0.6.1neg", "vmaf_b_v0.6.3"})
    for (const GoldenCase& c : cases) {
        const std::string path = golden_dir() + "/libvmaf/" + c.name + "." + model + ".json";
        std::ifstream in(path);
        if (!in) continue;
        ++files;
        DYNAMIC_SECTION(c.name << " " << model) {
            const nlohmann::json g = nlohmann::json::parse(in);
            const RunResult r =
                run_case(c, "version=" + model + ":name=" + model, model);
            REQUIRE(r.frames.size() == g.at("frames").size());
            std::size_t checked = 0, bad = 0;
            std::string first;
            for (std::size_t f = 0; f < r.frames.size(); ++f) {
                const auto& gm = g["frames"][f].at("metrics");
                REQUIRE(g["frames"][f].at("frameNum").get<unsigned>() == r.index[f]);
                for (const auto& [key, val] : gm.items()) {
                    const auto it = r.frames[f].find(api_name(key));
                    if (it == r.frames[f].end()) FAIL(c.name << ": no output named '" << key << "'");
                    ++checked;
                    if (!same_double(it->second, val.get<double>()) && !bad++)
                        first = "frame " + std::to_string(f) + " " + key + ": got " +
                                fmt17(it->second) + " expected " + fmt17(val.get<double>());
                }
            }
            for (const auto& [key, pools] : g.at("pooled_metrics").items())
                for (const auto& [pool, val] : pools.items()) {
                    ++checked;
                    const auto& ours = r.pooled_all.at(api_name(key));
                    if (!same_double(ours.at(pool), val.get<double>()) && !bad++)
                        first = "pooled " + key + " " + pool + ": got " + fmt17(ours.at(pool)) +
                                " expected " + fmt17(val.get<double>());
                }
            INFO(c.name << ": " << bad << " of " << checked << " values differ; first: " << first);
            CHECK(checked > 0);
            CHECK(bad == 0);
        }
    }
    CHECK(files == 2 * int(cases.size()));
}

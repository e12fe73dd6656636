// SPDX-License-Identifier: BSD-2-Clause-Patent
// Suite `golden` (and `gpu` with VMAF_CUDA_TEST_BACKEND=cuda): the `psnr` and `ciede`
// feature records end to end through the C API, against libvmaf v3.2.0's own logs
// (../shared/golden/libvmaf/<case>.companion.json: psnr with enable_mse and enable_apsnr,
// ciede): every case, every frame, key order, pooled values, and aggregate_metrics
// apsnr_* in the JSON log vmaf_cuda_write_log() writes. The chroma planes are read from
// the YUV files (ceil-sized for odd sizes) and given planar, then interleaved (NV12-like,
// chroma_step 2, padded pitch), which must give the same doubles; the gpu build also
// gives them as device pictures (NV12/P010-like, read in place). Then the errors: chroma
// missing at send, formats libvmaf refuses at open.

#include "golden_util.h"
#include "vmaf_cuda.h"

#include "ciede.h"
#include "psnr.h"

#include "catch.hpp"
#include <nlohmann/json.hpp>

#ifdef VMAF_CUDA_TEST_DEVICE_PICTURES
#include <cuda_runtime.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

using namespace vmaf_cuda_test;
using ojson = nlohmann::ordered_json;
namespace ref = vmaf_cuda::ref;

namespace {

VmafCudaBackend test_backend() {
    const char* b = std::getenv("VMAF_CUDA_TEST_BACKEND");
    if (b && std::string(b) == "cuda") return VMAF_CUDA_BACKEND_CUDA;
    return VMAF_CUDA_BACKEND_CPU;
}

const char* const kFeatures = "name=psnr:enable_mse=true:enable_apsnr=true|name=ciede";
const std::vector<std::string> kKeys = {"psnr_y", "mse_y", "psnr_cb", "mse_cb",
                                        "psnr_cr", "mse_cr", "ciede2000"};
const char* const kPools[] = {"mean", "harmonic_mean", "min", "max"};
const char* const kApsnr[] = {"apsnr_y", "apsnr_cb", "apsnr_cr"};

enum class Layout { planar, interleaved, device };

const char* layout_name(Layout l) {
    return l == Layout::planar ? "planar" : l == Layout::interleaved ? "interleaved" : "device NV12";
}

/// Interleaved UV rows (U, V, U, V, ...) of one frame, `pitch` bytes per row (padding 0xEE).
std::vector<std::uint8_t> interleave(const YuvFrame& f, std::size_t pitch) {
    std::vector<std::uint8_t> uv(pitch * f.ch, 0xEE);
    for (unsigned y = 0; y < f.ch; ++y)
        for (unsigned x = 0; x < f.cw; ++x)
            for (std::size_t b = 0; b < f.bps; ++b) {
                const std::size_t src = (std::size_t(y) * f.cw + x) * f.bps + b;
                uv[y * pitch + 2 * x * f.bps + b] = f.u[src];
                uv[y * pitch + (2 * x + 1) * f.bps + b] = f.v[src];
            }
    return uv;
}

/// What one run through the API gave.
struct Run {
    std::vector<std::vector<std::pair<std::string, double>>> frames; ///< names and values, in order
    std::map<std::string, std::map<std::string, double>> pooled;     ///< name -> pool -> value
    ojson log;                                                       ///< the JSON log, parsed
};

struct CaseData {
    GoldenCase c;
    ojson g;
    std::vector<YuvFrame> ref, dis;
};

CaseData load_case(const GoldenCase& c) {
    CaseData d;
    d.c = c;
    const std::string path = golden_dir() + "/libvmaf/" + c.name + ".companion.json";
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    d.g = ojson::parse(in);
    d.ref = read_yuv_frames(c, c.ref);
    d.dis = read_yuv_frames(c, c.dist);
    return d;
}

VmafCudaSettings settings_for(const GoldenCase& c, const char* features) {
    VmafCudaSettings s;
    vmaf_cuda_default_settings(&s);
    s.width = c.width;
    s.height = c.height;
    s.bpc = c.bpc;
    s.chroma = c.chroma == 444 ? VMAF_CUDA_CHROMA_444
               : c.chroma == 422 ? VMAF_CUDA_CHROMA_422
                                 : VMAF_CUDA_CHROMA_420;
    s.backend = test_backend();
    s.no_prediction = 1;
    s.features = features;
    return s;
}

#ifdef VMAF_CUDA_TEST_DEVICE_PICTURES
/// Device copies of a case's frames: luma and one interleaved UV plane per frame, as NVDEC
/// delivers them (pitched, UV in place).
struct DeviceFrames {
    std::vector<void*> mem;
    std::size_t luma_pitch = 0, uv_pitch = 0;
    DeviceFrames() = default;
    DeviceFrames(const DeviceFrames&) = delete;
    DeviceFrames& operator=(const DeviceFrames&) = delete;
    ~DeviceFrames() {
        for (void* p : mem) cudaFree(p);
    }
    /// A device copy of `rows` rows of `row` bytes (pitch returned in `pitch`).
    void* add(const void* host, std::size_t host_pitch, std::size_t row, unsigned rows, std::size_t& pitch) {
        void* p = nullptr;
        REQUIRE(cudaMallocPitch(&p, &pitch, row, rows) == cudaSuccess);
        mem.push_back(p);
        REQUIRE(cudaMemcpy2D(p, pitch, host, host_pitch, row, rows, cudaMemcpyHostToDevice) == cudaSuccess);
        // The session reads these frames on its non-blocking streams, which do not wait
        // for this pageable copy's DMA (see copy_to_device(), cuda_common.cuh).
        REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
        return p;
    }
};
#endif

/// Runs every frame of `d` through a session with `s`, chroma in `layout` (none unless
/// `give_chroma`): the scores received, pooled values, and the JSON log.
Run run_api(const CaseData& d, const VmafCudaSettings& s, Layout layout, bool give_chroma = true) {
    const GoldenCase& c = d.c;
    VmafCudaSession* vs = nullptr;
    char err[512] = "";
    const int rc = vmaf_cuda_open(&vs, &s, err, sizeof err);
    INFO("case " << c.name << " open: " << err);
    REQUIRE(rc == VMAF_CUDA_OK);
    Run out;
    VmafCudaFrameScores fs;
    auto drain = [&](int until) {
        int r;
        while ((r = vmaf_cuda_receive(vs, &fs)) == VMAF_CUDA_OK) {
            auto& row = out.frames.emplace_back();
            for (unsigned i = 0; i < fs.count; ++i) row.emplace_back(fs.names[i], fs.values[i]);
        }
        INFO(vmaf_cuda_error_message(vs));
        REQUIRE(r == until);
    };
    const std::size_t bps = c.bpc > 8 ? 2 : 1;
    const std::size_t uv_pitch = 2 * std::size_t(chroma_width(c)) * bps + 64;
#ifdef VMAF_CUDA_TEST_DEVICE_PICTURES
    DeviceFrames dev;
#endif
    for (std::size_t i = 0; i < d.ref.size(); ++i) {
        VmafCudaPicture pic[2] = {};
        std::vector<std::uint8_t> uv[2];
        for (int k = 0; k < 2; ++k) {
            const YuvFrame& f = k == 0 ? d.ref[i] : d.dis[i];
            VmafCudaPicture& p = pic[k];
            p.luma = f.y.data();
            p.pitch = std::ptrdiff_t(f.pitch(0));
            p.memory = VMAF_CUDA_MEMORY_HOST;
            if (!give_chroma) continue;
            if (layout == Layout::planar) {
                p.chroma[0] = f.u.data();
                p.chroma[1] = f.v.data();
                p.chroma_pitch = std::ptrdiff_t(f.pitch(1));
                p.chroma_step = 1;
                continue;
            }
            uv[k] = interleave(f, uv_pitch);
            p.chroma[0] = uv[k].data();
            p.chroma[1] = uv[k].data() + bps;
            p.chroma_pitch = std::ptrdiff_t(uv_pitch);
            p.chroma_step = 2;
#ifdef VMAF_CUDA_TEST_DEVICE_PICTURES
            if (layout == Layout::device) {
                std::size_t lp = 0, cp = 0;
                p.luma = dev.add(f.y.data(), f.pitch(0), f.pitch(0), f.h, lp);
                p.pitch = std::ptrdiff_t(lp);
                const auto* uvd = static_cast<const std::uint8_t*>(
                    dev.add(uv[k].data(), uv_pitch, uv_pitch, f.ch, cp));
                p.chroma[0] = uvd;
                p.chroma[1] = uvd + bps;
                p.chroma_pitch = std::ptrdiff_t(cp);
                p.memory = VMAF_CUDA_MEMORY_DEVICE;
            }
#endif
        }
        const int sr = vmaf_cuda_send(vs, &pic[0], &pic[1]);
        INFO("case " << c.name << " frame " << i << ": " << vmaf_cuda_error_message(vs));
        REQUIRE(sr == VMAF_CUDA_OK);
        drain(VMAF_CUDA_EAGAIN);
    }
    REQUIRE(vmaf_cuda_flush(vs) == VMAF_CUDA_OK);
    drain(VMAF_CUDA_EOF);
    if (!out.frames.empty())
        for (const auto& [name, v] : out.frames.front())
            for (int p = 0; p < 4; ++p) {
                double x = 0;
                REQUIRE(vmaf_cuda_pooled(vs, name.c_str(), VmafCudaPool(p), &x) == VMAF_CUDA_OK);
                out.pooled[name][kPools[p]] = x;
            }
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("vmaf_cuda_psnr_ciede_" + std::to_string(getpid()) + ".json")).string();
    const int wr = vmaf_cuda_write_log(vs, path.c_str(), VMAF_CUDA_LOG_JSON, -1, 25.0);
    INFO(vmaf_cuda_error_message(vs));
    REQUIRE(wr == VMAF_CUDA_OK);
    {
        std::ifstream in(path);
        out.log = ojson::parse(in);
    }
    std::filesystem::remove(path);
    vmaf_cuda_close(vs);
    return out;
}

ref::YuvView view_of(const YuvFrame& f, const GoldenCase& c) {
    ref::YuvView v;
    v.chroma = c.chroma;
    ref::LumaView* planes[3] = {&v.y, &v.cb, &v.cr};
    for (unsigned p = 0; p < 3; p++)
        *planes[p] = ref::LumaView{f.plane(p), std::ptrdiff_t(f.pitch(p)), p ? f.cw : f.w,
                                   p ? f.ch : f.h, c.bpc};
    return v;
}

/// libvmaf's JSON prints a non-finite value as null (ciede2000 of identical pictures is
/// +inf): null matches any non-finite value; otherwise the same double.
bool matches(double got, const ojson& want) {
    return want.is_null() ? !std::isfinite(got) : same_double(got, want.get<double>());
}

/// libvmaf's 4:2:0 ciede reads heap memory past its picture for odd heights (ciede.h):
/// not reproducible, so ciede2000 is compared with the CPU reference there.
bool ciede_reproducible(const GoldenCase& c) { return !(c.chroma == 420 && c.height % 2 == 1); }

/// Every frame (values and key order), every pooled value, and the log's frames and
/// aggregate_metrics against the golden log, for the keys `keys` (in libvmaf's order).
void compare_golden(const CaseData& d, const Run& r, const std::vector<std::string>& keys,
                    bool aggregate = true, unsigned subsample = 1) {
    const GoldenCase& c = d.c;
    const auto& gf = d.g.at("frames");
    REQUIRE(r.frames.size() == (gf.size() + subsample - 1) / subsample);
    unsigned bad = 0, checked = 0;
    auto check = [&](const std::string& where, double got, const ojson& want) {
        ++checked;
        const bool ok = matches(got, want);
        if (ok || ++bad > 8) return;
        INFO("case " << c.name << " " << where << ": ours " << fmt17(got) << ", libvmaf "
                     << (want.is_null() ? std::string("null") : fmt17(want.get<double>())));
        CHECK(ok);
    };
    for (std::size_t i = 0; i < r.frames.size(); ++i) {
        const std::size_t gi = i * subsample;
        const auto& gm = gf[gi].at("metrics");
        std::vector<std::string> names;
        for (const auto& [name, v] : r.frames[i]) names.push_back(name);
        INFO("case " << c.name << " frame " << gi);
        REQUIRE(names == keys); // the keys libvmaf writes, in its order
        // libvmaf's log order restricted to these keys
        std::vector<std::string> gorder;
        for (const auto& [k, v] : gm.items())
            for (const auto& key : keys)
                if (k == key) gorder.push_back(k);
        REQUIRE(gorder == keys);
        const auto& lm = r.log.at("frames")[i].at("metrics");
        CHECK(r.log.at("frames")[i].at("frameNum").get<std::size_t>() == gi);
        for (const auto& [name, v] : r.frames[i]) {
            if (name == "ciede2000" && !ciede_reproducible(c)) {
                // The CPU reference's value exactly, and libvmaf's within 0.1.
                const double want = ref::ciede_score(view_of(d.ref[gi], c), view_of(d.dis[gi], c));
                INFO("case " << c.name << " frame " << gi << " ciede2000: ours " << fmt17(v)
                             << ", reference " << fmt17(want) << ", libvmaf "
                             << fmt17(gm.at(name).get<double>()));
                CHECK(same_double(v, want));
                CHECK(same_double(lm.at(name).get<double>(), want));
                CHECK(std::abs(v - gm.at(name).get<double>()) < 0.1);
                continue;
            }
            check("frame " + std::to_string(gi) + " " + name, v, gm.at(name));
            check("log frame " + std::to_string(gi) + " " + name,
                  lm.at(name).is_null() ? NAN : lm.at(name).get<double>(), gm.at(name));
        }
    }
    if (subsample == 1)
        for (const auto& key : keys) {
            if (key == "ciede2000" && !ciede_reproducible(c)) continue;
            for (const char* p : kPools) {
                check("pooled " + std::string(p) + " of " + key, r.pooled.at(key).at(p),
                      d.g.at("pooled_metrics").at(key).at(p));
                const auto& lp = r.log.at("pooled_metrics").at(key).at(p);
                check("log pooled " + std::string(p) + " of " + key,
                      lp.is_null() ? NAN : lp.get<double>(), d.g.at("pooled_metrics").at(key).at(p));
            }
        }
    if (aggregate) {
        const auto& ga = d.g.at("aggregate_metrics");
        const auto& la = r.log.at("aggregate_metrics");
        for (const char* a : kApsnr) {
            INFO("case " << c.name << " aggregate " << a);
            REQUIRE(la.contains(a));
            check(std::string("aggregate ") + a, la.at(a).get<double>(), ga.at(a));
        }
    }
    INFO("case " << c.name << ": " << bad << " of " << checked << " values differ");
    CHECK(bad == 0);
}

} // namespace

TEST_CASE("psnr and ciede through the C API vs libvmaf: planar, interleaved chroma, log",
          "[golden][psnr][ciede]") {
    const auto cases = golden_cases();
    REQUIRE(cases.size() >= 14);
    for (const GoldenCase& c : cases) {
        DYNAMIC_SECTION(c.name) {
            const CaseData d = load_case(c);
            REQUIRE(d.ref.size() == c.frames);
            REQUIRE(d.dis.size() == c.frames);
            const VmafCudaSettings s = settings_for(c, kFeatures);
            std::vector<Layout> layouts = {Layout::planar, Layout::interleaved};
#ifdef VMAF_CUDA_TEST_DEVICE_PICTURES
            if (test_backend() == VMAF_CUDA_BACKEND_CUDA) layouts.push_back(Layout::device);
#endif
            std::vector<Run> runs;
            for (Layout l : layouts) {
                INFO("chroma " << layout_name(l));
                runs.push_back(run_api(d, s, l));
                compare_golden(d, runs.back(), kKeys);
            }
            // Every layout gives the planar run's doubles (non-finite ones included).
            for (std::size_t k = 1; k < runs.size(); ++k) {
                INFO("case " << c.name << ": " << layout_name(layouts[k]) << " vs planar");
                REQUIRE(runs[k].frames.size() == runs[0].frames.size());
                std::size_t differ = 0;
                for (std::size_t i = 0; i < runs[0].frames.size(); ++i)
                    for (std::size_t j = 0; j < runs[0].frames[i].size(); ++j)
                        if (runs[k].frames[i][j].first != runs[0].frames[i][j].first ||
                            !same_double(runs[k].frames[i][j].second, runs[0].frames[i][j].second))
                            ++differ;
                CHECK(differ == 0);
                CHECK(runs[k].log.at("aggregate_metrics") == runs[0].log.at("aggregate_metrics"));
            }
        }
    }
}

TEST_CASE("psnr luma only: 4:0:0, enable_chroma=false, without chroma planes", "[golden][psnr]") {
    for (const GoldenCase& c : golden_cases()) {
        if (c.name != "testsrc2_320x240_8bit" && c.name != "testsrc2_320x240_10bit" &&
            c.name != "src01_576x324_3f_16bit")
            continue;
        DYNAMIC_SECTION(c.name) {
            const CaseData d = load_case(c);
            {
                INFO("4:0:0");
                VmafCudaSettings s = settings_for(c, "name=psnr:enable_mse=true");
                s.chroma = VMAF_CUDA_CHROMA_400;
                compare_golden(d, run_api(d, s, Layout::planar, false), {"psnr_y", "mse_y"}, false);
            }
            {
                INFO("enable_chroma=false, apsnr");
                const VmafCudaSettings s =
                    settings_for(c, "name=psnr:enable_chroma=false:enable_apsnr=true");
                const Run r = run_api(d, s, Layout::planar, false);
                compare_golden(d, r, {"psnr_y"}, false);
                // libvmaf's flush computes all three: luma as usual, chroma from zero
                // totals (MIN(NaN, -inf) = -inf), which its JSON prints as null.
                const auto& la = r.log.at("aggregate_metrics");
                CHECK(same_double(la.at("apsnr_y").get<double>(),
                                  d.g.at("aggregate_metrics").at("apsnr_y").get<double>()));
                CHECK(la.at("apsnr_cb").is_null());
                CHECK(la.at("apsnr_cr").is_null());
            }
        }
    }
}

TEST_CASE("psnr apsnr counts the frames n_subsample skips, as libvmaf's temporal psnr does",
          "[golden][psnr]") {
    for (const GoldenCase& c : golden_cases()) {
        if (c.name != "testsrc2_320x240_8bit" && c.name != "sparks_480x270_5f_10bit") continue;
        DYNAMIC_SECTION(c.name) {
            const CaseData d = load_case(c);
            VmafCudaSettings s = settings_for(c, "name=psnr:enable_mse=true:enable_apsnr=true");
            s.n_subsample = 3;
            compare_golden(d, run_api(d, s, Layout::interleaved),
                           {"psnr_y", "mse_y", "psnr_cb", "mse_cb", "psnr_cr", "mse_cr"}, true, 3);
        }
    }
}

namespace {

/// A synthetic frame pair at any format: random samples, the distorted one a noisy copy.
struct Synthetic {
    GoldenCase c;
    std::vector<YuvFrame> ref, dis;
};

Synthetic synthetic(unsigned w, unsigned h, unsigned bpc, unsigned chroma, unsigned frames) {
    Synthetic s;
    s.c.name = std::to_string(w) + "x" + std::to_string(h) + " " + std::to_string(bpc) + "-bit " +
               std::to_string(chroma);
    s.c.width = w;
    s.c.height = h;
    s.c.bpc = bpc;
    s.c.chroma = chroma;
    s.c.frames = frames;
    std::uint64_t state = 0x9E3779B97F4A7C15ull ^ (w * 131 + h * 7 + bpc + chroma);
    auto next = [&] {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        return state;
    };
    const unsigned max = (1u << bpc) - 1;
    for (unsigned f = 0; f < frames; ++f) {
        YuvFrame r, d;
        r.bps = d.bps = bpc > 8 ? 2 : 1;
        r.w = d.w = w;
        r.h = d.h = h;
        r.cw = d.cw = chroma_width(s.c);
        r.ch = d.ch = chroma_height(s.c);
        auto fill = [&](std::vector<std::uint8_t>& rp, std::vector<std::uint8_t>& dp, unsigned pw,
                        unsigned ph) {
            rp.resize(std::size_t(pw) * ph * r.bps);
            dp.resize(rp.size());
            for (std::size_t i = 0; i < std::size_t(pw) * ph; ++i) {
                const unsigned a = unsigned(next() % (max + 1));
                const int noise = int(next() % 41) - 20;
                const unsigned b = unsigned(std::clamp(int(a) + noise, 0, int(max)));
                if (r.bps == 1) {
                    rp[i] = std::uint8_t(a);
                    dp[i] = std::uint8_t(b);
                } else {
                    const std::uint16_t a16 = std::uint16_t(a), b16 = std::uint16_t(b);
                    std::memcpy(&rp[2 * i], &a16, 2);
                    std::memcpy(&dp[2 * i], &b16, 2);
                }
            }
        };
        fill(r.y, d.y, w, h);
        fill(r.u, d.u, r.cw, r.ch);
        fill(r.v, d.v, r.cw, r.ch);
        s.ref.push_back(std::move(r));
        s.dis.push_back(std::move(d));
    }
    return s;
}

/// Runs `features` on a synthetic pair through the API, both chroma layouts; returns the
/// planar run and checks the interleaved one gives the same doubles.
Run run_synthetic(const Synthetic& syn, const char* features) {
    CaseData d;
    d.c = syn.c;
    d.ref = syn.ref;
    d.dis = syn.dis;
    const VmafCudaSettings s = settings_for(d.c, features);
    Run a = run_api(d, s, Layout::planar);
    const Run b = run_api(d, s, Layout::interleaved);
    REQUIRE(a.frames.size() == b.frames.size());
    for (std::size_t i = 0; i < a.frames.size(); ++i)
        for (std::size_t j = 0; j < a.frames[i].size(); ++j) {
            CHECK(a.frames[i][j].first == b.frames[i][j].first);
            CHECK(same_double(a.frames[i][j].second, b.frames[i][j].second));
        }
    return a;
}

} // namespace

TEST_CASE("psnr at 4:2:2 and 4:4:4, odd sizes, vs the CPU reference", "[psnr]") {
    for (unsigned chroma : {422u, 444u, 420u})
        for (unsigned bpc : {8u, 10u, 16u}) {
            const Synthetic syn = synthetic(67, 35, bpc, chroma, 3);
            INFO(syn.c.name);
            const Run r = run_synthetic(syn, "name=psnr:enable_mse=true:enable_apsnr=true");
            ref::PsnrOptions opt;
            opt.enable_mse = opt.enable_apsnr = true;
            const ref::PsnrSetup setup = ref::psnr_setup(opt, bpc, 67, 35, chroma);
            ref::PsnrTotals totals{};
            REQUIRE(r.frames.size() == 3);
            for (unsigned i = 0; i < 3; ++i) {
                ref::PsnrAccum acc;
                ref::psnr_accumulate(view_of(syn.ref[i], syn.c), view_of(syn.dis[i], syn.c), setup, acc);
                ref::psnr_totals_add(totals, acc);
                const ref::PsnrScores want = ref::psnr_finish(setup, acc);
                REQUIRE(r.frames[i].size() == 6);
                for (unsigned p = 0; p < 3; ++p) {
                    CHECK(same_double(r.frames[i][2 * p].second, want.psnr[p]));
                    CHECK(same_double(r.frames[i][2 * p + 1].second, want.mse[p]));
                }
            }
            const ref::PsnrAggregate a = ref::psnr_aggregate(setup, totals);
            for (unsigned p = 0; p < 3; ++p)
                CHECK(same_double(r.log.at("aggregate_metrics").at(kApsnr[p]).get<double>(), a.apsnr[p]));
        }
}

TEST_CASE("ciede at 4:4:4 and odd 4:2:0 sizes vs the CPU reference", "[ciede]") {
    for (unsigned chroma : {444u, 420u})
        for (unsigned bpc : {8u, 12u}) {
            const Synthetic syn = synthetic(67, 35, bpc, chroma, 2);
            INFO(syn.c.name);
            const Run r = run_synthetic(syn, "name=ciede");
            REQUIRE(r.frames.size() == 2);
            for (unsigned i = 0; i < 2; ++i) {
                REQUIRE(r.frames[i].size() == 1);
                CHECK(r.frames[i][0].first == "ciede2000");
                CHECK(same_double(r.frames[i][0].second,
                                  ref::ciede_score(view_of(syn.ref[i], syn.c), view_of(syn.dis[i], syn.c))));
            }
        }
}

namespace {

/// Opens a session; returns the status and the message.
std::pair<int, std::string> try_open(unsigned w, unsigned h, unsigned bpc, VmafCudaChroma chroma,
                                     const char* features) {
    VmafCudaSettings s;
    vmaf_cuda_default_settings(&s);
    s.width = w;
    s.height = h;
    s.bpc = bpc;
    s.chroma = chroma;
    s.backend = test_backend();
    s.no_prediction = 1;
    s.features = features;
    VmafCudaSession* vs = reinterpret_cast<VmafCudaSession*>(&s); // must be reset to NULL
    char err[512] = "";
    const int rc = vmaf_cuda_open(&vs, &s, err, sizeof err);
    if (rc == VMAF_CUDA_OK) vmaf_cuda_close(vs);
    else CHECK(vs == nullptr);
    return {rc, err};
}

bool has(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

} // namespace

TEST_CASE("psnr and ciede errors: chroma missing at send, formats refused at open",
          "[psnr][ciede][errors]") {
    SECTION("chroma NULL: send fails with EINVAL naming the feature") {
        const Synthetic syn = synthetic(64, 48, 8, 420, 1);
        for (const char* f : {"name=psnr", "name=ciede", "name=psnr:enable_mse=true|name=ciede"}) {
            INFO(f);
            VmafCudaSettings s = settings_for(syn.c, f);
            VmafCudaSession* vs = nullptr;
            char err[512] = "";
            REQUIRE(vmaf_cuda_open(&vs, &s, err, sizeof err) == VMAF_CUDA_OK);
            VmafCudaPicture r = {}, d = {};
            r.luma = syn.ref[0].y.data();
            d.luma = syn.dis[0].y.data();
            r.pitch = d.pitch = 64;
            CHECK(vmaf_cuda_send(vs, &r, &d) == VMAF_CUDA_EINVAL);
            const std::string m = vmaf_cuda_error_message(vs);
            INFO(m);
            CHECK(has(m, "chroma"));
            CHECK(has(m, std::string(f).find("ciede") != std::string::npos ? "ciede" : "psnr"));
            // Only one of the two planes: refused as well.
            r.chroma[0] = syn.ref[0].u.data();
            d.chroma[0] = syn.dis[0].u.data();
            r.chroma_pitch = d.chroma_pitch = 32;
            CHECK(vmaf_cuda_send(vs, &r, &d) == VMAF_CUDA_EINVAL);
            vmaf_cuda_close(vs);
        }
    }
    SECTION("ciede: 4:2:2 and 4:0:0 refused at open, naming the feature and the format") {
        auto [rc, m] = try_open(64, 48, 8, VMAF_CUDA_CHROMA_422, "name=ciede");
        INFO(m);
        CHECK(rc == VMAF_CUDA_EINVAL);
        CHECK(has(m, "ciede"));
        CHECK(has(m, "4:2:2"));
        auto [rc2, m2] = try_open(64, 48, 10, VMAF_CUDA_CHROMA_400, "name=psnr|name=ciede");
        INFO(m2);
        CHECK(rc2 == VMAF_CUDA_EINVAL);
        CHECK(has(m2, "ciede"));
        CHECK(has(m2, "4:0:0"));
        // The formats libvmaf computes open.
        CHECK(try_open(64, 48, 8, VMAF_CUDA_CHROMA_420, "name=ciede").first == VMAF_CUDA_OK);
        CHECK(try_open(64, 48, 16, VMAF_CUDA_CHROMA_444, "name=ciede").first == VMAF_CUDA_OK);
    }
    SECTION("bit depths libvmaf does not compute (only 8, 10, 12, 16): refused at open") {
        for (unsigned bpc : {9u, 11u, 14u})
            for (const char* f : {"name=psnr", "name=ciede"}) {
                auto [rc, m] = try_open(64, 48, bpc, VMAF_CUDA_CHROMA_420, f);
                INFO(f << " bpc " << bpc << ": " << m);
                CHECK(rc == VMAF_CUDA_EINVAL);
                CHECK(has(m, f + 5));
                CHECK(has(m, ("bpc " + std::to_string(bpc)).c_str()));
            }
        for (unsigned bpc : {8u, 10u, 12u, 16u})
            CHECK(try_open(64, 48, bpc, VMAF_CUDA_CHROMA_422, "name=psnr").first == VMAF_CUDA_OK);
    }
    SECTION("psnr options: libvmaf's names, types and ranges") {
        CHECK(try_open(64, 48, 8, VMAF_CUDA_CHROMA_420,
                       "name=psnr:enable_chroma=false:enable_mse=true:enable_apsnr=true:"
                       "reduced_hbd_peak=true:min_sse=0.5").first == VMAF_CUDA_OK);
        for (const char* f : {"name=psnr:min_sse=-1", "name=psnr:enable_mse=1",
                              "name=psnr:no_such_option=1", "name=ciede:enable_mse=true"}) {
            auto [rc, m] = try_open(64, 48, 8, VMAF_CUDA_CHROMA_420, f);
            INFO(f << ": " << m);
            CHECK(rc == VMAF_CUDA_EINVAL);
        }
    }
}

TEST_CASE("psnr and ciede with keep_history=0: the same scores, no log", "[golden][psnr][ciede]") {
    for (const GoldenCase& c : golden_cases()) {
        if (c.name != "testsrc2_320x240_8bit") continue;
        const CaseData d = load_case(c);
        VmafCudaSettings s = settings_for(c, kFeatures);
        const Run with = run_api(d, s, Layout::planar);
        s.keep_history = 0;
        VmafCudaSession* vs = nullptr;
        char err[512] = "";
        REQUIRE(vmaf_cuda_open(&vs, &s, err, sizeof err) == VMAF_CUDA_OK);
        std::size_t n = 0, differ = 0;
        VmafCudaFrameScores fs;
        auto drain = [&] {
            while (vmaf_cuda_receive(vs, &fs) == VMAF_CUDA_OK) {
                REQUIRE(n < with.frames.size());
                REQUIRE(fs.count == with.frames[n].size());
                for (unsigned k = 0; k < fs.count; ++k)
                    if (with.frames[n][k].first != fs.names[k] ||
                        !same_double(with.frames[n][k].second, fs.values[k]))
                        ++differ;
                ++n;
            }
        };
        for (std::size_t i = 0; i < d.ref.size(); ++i) {
            VmafCudaPicture p[2] = {};
            for (int k = 0; k < 2; ++k) {
                const YuvFrame& f = k == 0 ? d.ref[i] : d.dis[i];
                p[k].luma = f.y.data();
                p[k].pitch = std::ptrdiff_t(f.pitch(0));
                p[k].chroma[0] = f.u.data();
                p[k].chroma[1] = f.v.data();
                p[k].chroma_pitch = std::ptrdiff_t(f.pitch(1));
            }
            REQUIRE(vmaf_cuda_send(vs, &p[0], &p[1]) == VMAF_CUDA_OK);
            drain();
        }
        REQUIRE(vmaf_cuda_flush(vs) == VMAF_CUDA_OK);
        drain();
        CHECK(n == with.frames.size());
        CHECK(differ == 0);
        double mean = 0;
        REQUIRE(vmaf_cuda_pooled(vs, "psnr_y", VMAF_CUDA_POOL_MEAN, &mean) == VMAF_CUDA_OK);
        CHECK(same_double(mean, with.pooled.at("psnr_y").at("mean")));
        CHECK(vmaf_cuda_write_log(vs, "/dev/null", VMAF_CUDA_LOG_JSON, -1, 25.0) == VMAF_CUDA_ESTATE);
        vmaf_cuda_close(vs);
    }
}

TEST_CASE("a feature given twice: libvmaf's first instance of that name wins, whole",
          "[golden][psnr][ciede]") {
    // libvmaf v3.2.0 (fex_ctx_vector.c) registers one extractor instance per
    // vmaf_feature_name_from_options() name and drops a later one with all its options;
    // options that do not name outputs (enable_mse, enable_apsnr, enable_chroma) do not
    // make another instance. The log of the companion golden then still matches.
    std::size_t seen = 0;
    for (const GoldenCase& c : golden_cases()) {
        if (c.name != "testsrc2_320x240_8bit" && c.name != "src01_576x324_3f_10bit") continue;
        ++seen;
        const CaseData d = load_case(c);
        // kFeatures first: the later psnr (other options) and ciede are dropped.
        const std::string later = std::string(kFeatures) +
                                  "|name=psnr|name=psnr:enable_chroma=false:enable_mse=false|name=ciede";
        const VmafCudaSettings s = settings_for(c, later.c_str());
        compare_golden(d, run_api(d, s, Layout::planar), kKeys);
        VmafCudaSession* vs = nullptr;
        char err[512] = "";
        REQUIRE(vmaf_cuda_open(&vs, &s, err, sizeof err) == VMAF_CUDA_OK);
        const std::string warning = vmaf_cuda_open_warning(vs);
        vmaf_cuda_close(vs);
        INFO("warning: " << warning);
        CHECK(warning.find("feature psnr ignored") != std::string::npos);
        // (options at their defaults are not repeated: enable_mse=false is psnr's default)
        CHECK(warning.find("feature psnr=enable_chroma=false ignored") != std::string::npos);
        CHECK(warning.find("ciede") == std::string::npos); // the same spec again: silent
        // A plain psnr first: no mse, no apsnr, whatever the later one asks for.
        const VmafCudaSettings s2 =
            settings_for(c, "name=psnr|name=psnr:enable_mse=true:enable_apsnr=true|name=ciede");
        const Run r = run_api(d, s2, Layout::planar);
        compare_golden(d, r, {"psnr_y", "psnr_cb", "psnr_cr", "ciede2000"}, false);
        CHECK(r.log.at("aggregate_metrics").empty());
    }
    CHECK(seen == 2);
}

// SPDX-License-Identifier: BSD-2-Clause-Patent
// vmaf-cuda-bench: kernel-only throughput of the CUDA backend (frames already in device
// memory, VMAF v0.6.1 features + model, or any feature string, through the C API),
// device memory per session, host CPU time per frame, and the CPU reference's throughput
// on the same machine. Pictures carry luma and chroma (planar or interleaved UV), so
// features that read chroma (psnr, ciede) can be measured too.

#include "vmaf_cuda.h"

#include <CLI/CLI.hpp>
#include <cuda_runtime.h>

#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

/// What each session scores and the layout of its pictures.
struct Config {
    unsigned chroma = 420;         ///< 420, 422, 444 or 400 (no chroma)
    bool interleaved = false;      ///< chroma as one UV plane (NV12, P010 ...), else planar
    std::string models;            ///< settings.models ("" = the default model)
    std::string features;          ///< settings.features ("" = none)
    bool no_prediction = false;    ///< settings.no_prediction
    unsigned in_flight = 4;        ///< settings.frames_in_flight

    unsigned cw(unsigned w) const { return chroma == 400 ? 0 : chroma == 444 ? w : (w + 1) / 2; }
    unsigned ch(unsigned h) const { return chroma == 400 ? 0 : chroma == 420 ? (h + 1) / 2 : h; }
    VmafCudaChroma api_chroma() const {
        return chroma == 444 ? VMAF_CUDA_CHROMA_444 : chroma == 422 ? VMAF_CUDA_CHROMA_422
             : chroma == 400 ? VMAF_CUDA_CHROMA_400 : VMAF_CUDA_CHROMA_420;
    }
};

double cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

/// A smooth moving pattern with noise; `k` shifts it so frames differ (motion > 0).
/// `plane` 0 is luma, 1 and 2 chroma (other phases, around mid-grey). Samples go every
/// `step` samples from `out + first` (step 2: interleaved UV), rows `w * step` apart.
void make_plane(std::vector<std::uint8_t>& out, std::size_t first, unsigned step, unsigned w,
                unsigned h, unsigned bpc, unsigned k, unsigned plane, double noise_sigma,
                std::mt19937_64& rng) {
    const unsigned bps = bpc > 8 ? 2 : 1;
    const double maxv = double((1u << bpc) - 1);
    const double amp = plane ? 0.2 : 0.4, phase = 1.7 * plane;
    std::normal_distribution<double> noise(0.0, noise_sigma * maxv);
    for (unsigned y = 0; y < h; ++y)
        for (unsigned x = 0; x < w; ++x) {
            double v = maxv * (0.5 + amp * std::sin(0.013 * (x + 7.0 * k) + phase) *
                                         std::cos(0.021 * y + phase));
            if (noise_sigma > 0) v += noise(rng);
            v = v < 0 ? 0 : v > maxv ? maxv : v;
            const unsigned s = unsigned(v);
            const std::size_t at = first + (std::size_t(y) * w + x) * step * bps;
            if (bps == 1) out[at] = std::uint8_t(s);
            else {
                const std::uint16_t s16 = std::uint16_t(s);
                std::memcpy(&out[at], &s16, 2);
            }
        }
}

/// One picture's planes in host memory, tightly packed: luma, then Cb and Cr (planar) or
/// one UV plane (interleaved); no chroma for 4:0:0.
struct HostFrame {
    std::vector<std::uint8_t> luma, chroma[2]; // interleaved: chroma[0] holds UV
};

HostFrame make_frame(unsigned w, unsigned h, unsigned bpc, unsigned k, double noise_sigma,
                     const Config& cfg, std::mt19937_64& rng) {
    const std::size_t bps = bpc > 8 ? 2 : 1;
    const unsigned cw = cfg.cw(w), ch = cfg.ch(h);
    HostFrame f;
    f.luma.resize(std::size_t(w) * h * bps);
    make_plane(f.luma, 0, 1, w, h, bpc, k, 0, noise_sigma, rng);
    if (!cw) return f;
    if (cfg.interleaved) {
        f.chroma[0].resize(2 * std::size_t(cw) * ch * bps);
        make_plane(f.chroma[0], 0, 2, cw, ch, bpc, k, 1, noise_sigma, rng);
        make_plane(f.chroma[0], bps, 2, cw, ch, bpc, k, 2, noise_sigma, rng);
    } else {
        for (unsigned c = 0; c < 2; ++c) {
            f.chroma[c].resize(std::size_t(cw) * ch * bps);
            make_plane(f.chroma[c], 0, 1, cw, ch, bpc, k, 1 + c, noise_sigma, rng);
        }
    }
    return f;
}

/// The same planes in device memory (one allocation per plane, as a decoder's).
struct DeviceFrame {
    void* plane[3] = {nullptr, nullptr, nullptr}; // luma, Cb (or UV), Cr
};

bool upload(const HostFrame& h, DeviceFrame& d) {
    const std::vector<std::uint8_t>* src[3] = {&h.luma, &h.chroma[0], &h.chroma[1]};
    for (int p = 0; p < 3; ++p) {
        if (src[p]->empty()) continue;
        if (cudaMalloc(&d.plane[p], src[p]->size()) != cudaSuccess ||
            cudaMemcpy(d.plane[p], src[p]->data(), src[p]->size(), cudaMemcpyHostToDevice) !=
                cudaSuccess)
            return false;
    }
    return true;
}

void free_device(DeviceFrame& d) {
    for (void*& p : d.plane) {
        cudaFree(p);
        p = nullptr;
    }
}

/// Device frames freed with the pool.
struct DevicePool : std::vector<DeviceFrame> {
    using std::vector<DeviceFrame>::vector;
    DevicePool(const DevicePool&) = delete;
    DevicePool& operator=(const DevicePool&) = delete;
    ~DevicePool() {
        for (auto& f : *this) free_device(f);
    }
};

/// The picture of a frame: planes `plane[0..2]` (host or device) laid out as make_frame().
VmafCudaPicture picture(const void* const plane[3], unsigned w, unsigned bpc, bool device,
                        const Config& cfg) {
    const std::size_t bps = bpc > 8 ? 2 : 1;
    VmafCudaPicture p{};
    p.luma = plane[0];
    p.pitch = ptrdiff_t(std::size_t(w) * bps);
    p.memory = device ? VMAF_CUDA_MEMORY_DEVICE : VMAF_CUDA_MEMORY_HOST;
    if (cfg.cw(w)) {
        const auto* c0 = static_cast<const std::uint8_t*>(plane[1]);
        p.chroma[0] = c0;
        p.chroma[1] = cfg.interleaved ? c0 + bps : plane[2];
        p.chroma_pitch = ptrdiff_t(std::size_t(cfg.cw(w)) * bps * (cfg.interleaved ? 2 : 1));
        p.chroma_step = cfg.interleaved ? 2 : 1;
    }
    return p;
}

/// The session settings of a run: the pictures' geometry, the backend, --model/--feature.
VmafCudaSettings settings_for(unsigned w, unsigned h, unsigned bpc, bool device, const Config& cfg) {
    VmafCudaSettings s;
    vmaf_cuda_default_settings(&s);
    s.width = w;
    s.height = h;
    s.bpc = bpc;
    s.chroma = cfg.api_chroma();
    s.backend = device ? VMAF_CUDA_BACKEND_CUDA : VMAF_CUDA_BACKEND_CPU;
    s.frames_in_flight = cfg.in_flight;
    s.models = cfg.models.empty() ? nullptr : cfg.models.c_str();
    s.features = cfg.features.empty() ? nullptr : cfg.features.c_str();
    s.no_prediction = cfg.no_prediction;
    return s;
}

struct Result {
    double fps = 0, cpu_us_per_frame = 0, dev_mib = 0, pooled = 0;
    std::string pooled_name; ///< the score pooled: the first model's, else the first feature
    bool ok = false;
    std::string error;
};

/// Runs `frames` frame pairs through a session; device pictures when `device`.
Result run(unsigned w, unsigned h, unsigned bpc, unsigned frames, bool device, unsigned pool_n,
           const Config& cfg, unsigned warm) {
    Result r;
    std::mt19937_64 rng(42);
    std::vector<HostFrame> ref, dist;
    for (unsigned k = 0; k < pool_n; ++k) {
        ref.push_back(make_frame(w, h, bpc, k, 0.0, cfg, rng));
        dist.push_back(make_frame(w, h, bpc, k, 0.02, cfg, rng));
    }
    DevicePool dref(pool_n), ddist(pool_n);
    std::size_t free0 = 0, total = 0, free1 = 0;
    if (device) {
        for (unsigned k = 0; k < pool_n; ++k) {
            if (!upload(ref[k], dref[k]) || !upload(dist[k], ddist[k])) {
                r.error = "cudaMalloc/cudaMemcpy failed";
                return r;
            }
        }
        cudaDeviceSynchronize();
        cudaMemGetInfo(&free0, &total);
    }
    const VmafCudaSettings s = settings_for(w, h, bpc, device, cfg);
    VmafCudaSession* vs = nullptr;
    char err[512];
    if (vmaf_cuda_open(&vs, &s, err, sizeof err) < 0) {
        r.error = err;
        return r;
    }
    r.pooled_name = vmaf_cuda_model_count(vs) ? vmaf_cuda_model_name(vs, 0) : "";
    if (device) {
        cudaMemGetInfo(&free1, &total);
        r.dev_mib = double(free0 - free1) / (1024.0 * 1024.0);
    }
    VmafCudaFrameScores fs;
    // Warm-up (module load, first launches), not timed.
    auto send = [&](unsigned i) {
        const unsigned k = i % pool_n;
        const void* rplanes[3] = {ref[k].luma.data(), ref[k].chroma[0].data(), ref[k].chroma[1].data()};
        const void* dplanes[3] = {dist[k].luma.data(), dist[k].chroma[0].data(), dist[k].chroma[1].data()};
        const VmafCudaPicture rp = picture(device ? dref[k].plane : rplanes, w, bpc, device, cfg);
        const VmafCudaPicture dp = picture(device ? ddist[k].plane : dplanes, w, bpc, device, cfg);
        return vmaf_cuda_send(vs, &rp, &dp);
    };
    // with no model the pooled score is the first feature's (its name from a frame)
    auto take = [&] {
        if (r.pooled_name.empty() && fs.count) r.pooled_name = fs.names[0];
    };
    for (unsigned i = 0; i < warm; ++i) {
        if (send(i) < 0) { r.error = vmaf_cuda_error_message(vs); vmaf_cuda_close(vs); return r; }
        while (vmaf_cuda_receive(vs, &fs) == VMAF_CUDA_OK) take();
    }
    const double c0 = cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    for (unsigned i = warm; i < warm + frames; ++i) {
        if (send(i) < 0) { r.error = vmaf_cuda_error_message(vs); vmaf_cuda_close(vs); return r; }
        while (vmaf_cuda_receive(vs, &fs) == VMAF_CUDA_OK) take();
    }
    int st = vmaf_cuda_flush(vs);
    while (st == VMAF_CUDA_OK && (st = vmaf_cuda_receive(vs, &fs)) == VMAF_CUDA_OK) take();
    if (st != VMAF_CUDA_EOF) {
        r.error = vmaf_cuda_error_message(vs);
        vmaf_cuda_close(vs);
        return r;
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = cpu_seconds() - c0;
    r.fps = frames / secs;
    r.cpu_us_per_frame = 1e6 * cpu / frames;
    if (vmaf_cuda_pooled(vs, r.pooled_name.c_str(), VMAF_CUDA_POOL_MEAN, &r.pooled) < 0) {
        r.error = vmaf_cuda_error_message(vs);
        vmaf_cuda_close(vs);
        return r;
    }
    vmaf_cuda_close(vs);
    r.ok = true;
    return r;
}

/// A ladder of `n` renditions (device pictures, each rendition its own noise) against one
/// reference: reference frames/s over `frames` reference frames; pooled = rendition 0's.
Result run_ladder(unsigned w, unsigned h, unsigned bpc, unsigned frames, unsigned n,
                  const Config& cfg, unsigned warm) {
    Result r;
    const unsigned pool_n = 8;
    std::mt19937_64 rng(42);
    DevicePool dref(pool_n), ddist(pool_n * n);
    for (unsigned k = 0; k < pool_n; ++k) {
        bool ok = upload(make_frame(w, h, bpc, k, 0.0, cfg, rng), dref[k]);
        for (unsigned j = 0; j < n; ++j)
            ok = ok && upload(make_frame(w, h, bpc, k, 0.01 + 0.01 * j, cfg, rng), ddist[k * n + j]);
        if (!ok) {
            r.error = "cudaMalloc/cudaMemcpy failed";
            return r;
        }
    }
    cudaDeviceSynchronize();
    std::size_t free0 = 0, free1 = 0, total = 0;
    cudaMemGetInfo(&free0, &total);
    const VmafCudaSettings s = settings_for(w, h, bpc, true, cfg);
    VmafCudaLadder* l = nullptr;
    char err[512];
    if (vmaf_cuda_ladder_open(&l, &s, n, err, sizeof err) < 0) {
        r.error = err;
        return r;
    }
    struct Closer { VmafCudaLadder* p; ~Closer() { vmaf_cuda_ladder_close(p); } } closer{l};
    cudaMemGetInfo(&free1, &total);
    r.dev_mib = double(free0 - free1) / (1024.0 * 1024.0);
    VmafCudaSession* s0 = vmaf_cuda_ladder_session(l, 0);
    r.pooled_name = vmaf_cuda_model_count(s0) ? vmaf_cuda_model_name(s0, 0) : "";
    VmafCudaFrameScores fs;
    std::vector<VmafCudaPicture> dp(n);
    std::vector<const VmafCudaPicture*> dptr(n);
    auto step = [&](unsigned i) {
        const unsigned k = i % pool_n;
        const VmafCudaPicture rp = picture(dref[k].plane, w, bpc, true, cfg);
        for (unsigned j = 0; j < n; ++j) {
            dp[j] = picture(ddist[k * n + j].plane, w, bpc, true, cfg);
            dptr[j] = &dp[j];
        }
        if (vmaf_cuda_ladder_send(l, &rp, dptr.data()) < 0) {
            r.error = vmaf_cuda_ladder_error_message(l);
            return false;
        }
        for (unsigned j = 0; j < n; ++j) {
            VmafCudaSession* vs = vmaf_cuda_ladder_session(l, j);
            while (vmaf_cuda_receive(vs, &fs) == VMAF_CUDA_OK)
                if (j == 0 && r.pooled_name.empty() && fs.count) r.pooled_name = fs.names[0];
        }
        return true;
    };
    for (unsigned i = 0; i < warm; ++i)
        if (!step(i)) return r;
    const double c0 = cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    for (unsigned i = warm; i < warm + frames; ++i)
        if (!step(i)) return r;
    if (vmaf_cuda_ladder_flush(l) < 0) {
        r.error = vmaf_cuda_ladder_error_message(l);
        return r;
    }
    for (unsigned j = 0; j < n; ++j) {
        VmafCudaSession* vs = vmaf_cuda_ladder_session(l, j);
        int st;
        while ((st = vmaf_cuda_receive(vs, &fs)) == VMAF_CUDA_OK) {}
        if (st != VMAF_CUDA_EOF) {
            r.error = vmaf_cuda_error_message(vs);
            return r;
        }
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.fps = frames / secs;
    r.cpu_us_per_frame = 1e6 * (cpu_seconds() - c0) / frames;
    if (vmaf_cuda_pooled(s0, r.pooled_name.c_str(), VMAF_CUDA_POOL_MEAN, &r.pooled) < 0) {
        r.error = vmaf_cuda_error_message(s0);
        return r;
    }
    r.ok = true;
    return r;
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"vmaf-cuda-bench: kernel-only frames/s of the CUDA backend vs the CPU reference"};
    std::vector<std::string> sizes{"576x324", "1920x1080", "3840x2160"};
    std::vector<unsigned> depths{8, 10};
    double seconds = 2.0;
    unsigned cpu_frames = 6;
    bool no_cpu = false;
    Config cfg;
    app.add_option("--sizes", sizes, "WxH list")->delimiter(',');
    app.add_option("--bpc", depths, "Bit depths")->delimiter(',');
    app.add_option("--seconds", seconds, "Approximate GPU time per configuration");
    app.add_option("--cpu-frames", cpu_frames, "Frames for the CPU reference measurement");
    app.add_option("--in-flight", cfg.in_flight, "frames_in_flight of the session (1..16)");
    app.add_flag("--no-cpu", no_cpu, "Skip the CPU reference measurement");
    bool blocking_sync = false;
    app.add_flag("--blocking-sync", blocking_sync,
                 "Waits for the GPU block the thread (cudaDeviceScheduleBlockingSync) instead of "
                 "spinning, so that host CPU time per frame is the submission's own cost");
    app.add_option("--chroma", cfg.chroma, "Chroma subsampling of the pictures: 420, 422, 444, 400")
        ->check(CLI::IsMember({420, 422, 444, 400}));
    app.add_flag("--interleaved", cfg.interleaved,
                 "Chroma as one interleaved UV plane (NV12/P010 layout, chroma_step 2), not planar");
    app.add_option("--model", cfg.models, "settings.models (default: version=vmaf_v0.6.1)");
    app.add_option("--feature", cfg.features,
                   "settings.features, the library's syntax: '|'-separated name=X[:opt=val] "
                   "(e.g. 'name=psnr|name=ciede')");
    app.add_flag("--no-prediction", cfg.no_prediction,
                 "No model: time the --feature features alone");
    std::vector<unsigned> renditions;
    app.add_option("--renditions", renditions,
                   "Ladders instead: for each N of this list, N renditions against one "
                   "reference (vmaf_cuda_ladder_*), reference frames/s and frame pairs/s")
        ->delimiter(',');
    CLI11_PARSE(app, argc, argv);

    int ndev = 0;
    const bool gpu = cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0;
    if (gpu && blocking_sync && cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync) != cudaSuccess) {
        std::printf("--blocking-sync: cudaSetDeviceFlags failed\n");
        return 1;
    }
    if (gpu) {
        cudaDeviceProp p{};
        cudaGetDeviceProperties(&p, 0);
        std::printf("device: %s, %d SMs, %.0f GiB\n", p.name, p.multiProcessorCount,
                    double(p.totalGlobalMem) / (1 << 30));
    } else {
        std::printf("device: none (CPU reference only)\n");
    }
    std::printf("pictures: %u%s%s%s%s%s\n", cfg.chroma,
                cfg.chroma == 400 ? " (luma only)" : cfg.interleaved ? " interleaved UV" : " planar",
                cfg.no_prediction ? ", no model" : ", model ",
                cfg.no_prediction ? "" : cfg.models.empty() ? "version=vmaf_v0.6.1" : cfg.models.c_str(),
                cfg.features.empty() ? "" : ", features ", cfg.features.c_str());
    if (!renditions.empty()) {
        if (!gpu) {
            std::printf("--renditions needs a CUDA device\n");
            return 1;
        }
        std::printf("\n| size | bpc | renditions | reference frames/s | frame pairs/s | pairs/s vs one pair | host CPU us/ref frame | device MiB |\n");
        std::printf("|---|---|---|---|---|---|---|---|\n");
        int lrc = 0;
        for (const std::string& sz : sizes) {
            unsigned w = 0, h = 0;
            if (std::sscanf(sz.c_str(), "%ux%u", &w, &h) != 2) return 2;
            for (unsigned bpc : depths) {
                double one = 0;
                for (unsigned n : renditions) {
                    if (n < 1 || n > 64) return 2;
                    Result probe = run_ladder(w, h, bpc, 32, n, cfg, 8);
                    if (!probe.ok) {
                        std::printf("| %ux%u | %u | %u | error: %s |\n", w, h, bpc, n, probe.error.c_str());
                        lrc = 1;
                        continue;
                    }
                    const unsigned frames =
                        unsigned(std::max(32.0, std::min(100000.0, probe.fps * seconds)));
                    const Result g = run_ladder(w, h, bpc, frames, n, cfg, 8);
                    if (!g.ok) {
                        std::printf("| %ux%u | %u | %u | error: %s |\n", w, h, bpc, n, g.error.c_str());
                        lrc = 1;
                        continue;
                    }
                    if (n == 1 || one == 0) one = g.fps * n;
                    std::printf("| %ux%u | %u | %u | %.0f | %.0f | %.2f | %.1f | %.0f |\n", w, h, bpc, n,
                                g.fps, g.fps * n, g.fps * n / one, g.cpu_us_per_frame, g.dev_mib);
                    std::fflush(stdout);
                }
            }
        }
        return lrc;
    }
    std::printf("\n| size | bpc | GPU frames/s | host CPU us/frame | device MiB/session | CPU ref frames/s | GPU/CPU |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    int rc = 0;
    for (const std::string& sz : sizes) {
        unsigned w = 0, h = 0;
        if (std::sscanf(sz.c_str(), "%ux%u", &w, &h) != 2) {
            std::fprintf(stderr, "bad size %s\n", sz.c_str());
            return 2;
        }
        for (unsigned bpc : depths) {
            Result g, c;
            if (gpu) {
                // Calibrate the frame count to roughly `seconds` of work.
                Result probe = run(w, h, bpc, 64, true, 8, cfg, 8);
                if (!probe.ok) {
                    std::printf("| %ux%u | %u | error: %s |\n", w, h, bpc, probe.error.c_str());
                    rc = 1;
                    continue;
                }
                const unsigned n = unsigned(std::max(64.0, std::min(100000.0, probe.fps * seconds)));
                g = run(w, h, bpc, n, true, 8, cfg, 8);
            }
            Result same; // the CPU run's frames on the GPU: pooled scores must agree exactly
            if (!no_cpu) {
                c = run(w, h, bpc, cpu_frames, false, 2, cfg, 1);
                if (gpu) same = run(w, h, bpc, cpu_frames, true, 2, cfg, 1);
            }
            char gs[32] = "-", cs[32] = "-", ratio[32] = "-", us[32] = "-", mib[32] = "-";
            if (g.ok) {
                std::snprintf(gs, sizeof gs, "%.0f", g.fps);
                std::snprintf(us, sizeof us, "%.1f", g.cpu_us_per_frame);
                std::snprintf(mib, sizeof mib, "%.1f", g.dev_mib);
            }
            if (c.ok) std::snprintf(cs, sizeof cs, "%.2f", c.fps);
            if (g.ok && c.ok) std::snprintf(ratio, sizeof ratio, "%.0fx", g.fps / c.fps);
            std::printf("| %ux%u | %u | %s | %s | %s | %s | %s |\n", w, h, bpc, gs, us, mib, cs, ratio);
            for (const Result* e : {&g, &c, &same})
                if (!e->ok && !e->error.empty()) {
                    std::printf("  error: %s\n", e->error.c_str());
                    rc = 1;
                }
            if (same.ok && c.ok && same.pooled != c.pooled) {
                std::printf("  MISMATCH: GPU pooled %s %.17g vs CPU %.17g\n",
                            c.pooled_name.c_str(), same.pooled, c.pooled);
                rc = 1;
            }
            std::fflush(stdout);
        }
    }
    return rc;
}

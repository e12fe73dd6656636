// SPDX-License-Identifier: BSD-2-Clause-Patent
// vmaf-cuda-bench: kernel-only throughput of the CUDA backend (frames already in device
// memory, VMAF v0.6.1 features + model, through the C API), device memory per session,
// host CPU time per frame, and the CPU reference's throughput on the same machine.

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

struct Size {
    unsigned w, h;
};

double cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

/// A smooth moving pattern with noise; `k` shifts it so frames differ (motion > 0).
std::vector<std::uint8_t> make_frame(unsigned w, unsigned h, unsigned bpc, unsigned k,
                                     double noise_sigma, std::mt19937_64& rng) {
    const unsigned bps = bpc > 8 ? 2 : 1;
    const double maxv = double((1u << bpc) - 1);
    std::vector<std::uint8_t> out(std::size_t(w) * h * bps);
    std::normal_distribution<double> noise(0.0, noise_sigma * maxv);
    for (unsigned y = 0; y < h; ++y)
        for (unsigned x = 0; x < w; ++x) {
            double v = maxv * (0.5 + 0.4 * std::sin(0.013 * (x + 7.0 * k)) * std::cos(0.021 * y));
            if (noise_sigma > 0) v += noise(rng);
            v = v < 0 ? 0 : v > maxv ? maxv : v;
            const unsigned s = unsigned(v);
            if (bps == 1) out[std::size_t(y) * w + x] = std::uint8_t(s);
            else {
                const std::uint16_t s16 = std::uint16_t(s);
                std::memcpy(&out[2 * (std::size_t(y) * w + x)], &s16, 2);
            }
        }
    return out;
}

struct Result {
    double fps = 0, cpu_us_per_frame = 0, dev_mib = 0, pooled = 0;
    bool ok = false;
    std::string error;
};

/// Runs `frames` frame pairs through a session; device pictures when `device`.
Result run(unsigned w, unsigned h, unsigned bpc, unsigned frames, bool device, unsigned pool_n,
           unsigned in_flight, unsigned warm) {
    Result r;
    std::mt19937_64 rng(42);
    std::vector<std::vector<std::uint8_t>> ref, dist;
    for (unsigned k = 0; k < pool_n; ++k) {
        ref.push_back(make_frame(w, h, bpc, k, 0.0, rng));
        dist.push_back(make_frame(w, h, bpc, k, 0.02, rng));
    }
    const std::size_t pitch = std::size_t(w) * (bpc > 8 ? 2 : 1);
    std::vector<void*> dref(pool_n, nullptr), ddist(pool_n, nullptr);
    std::size_t free0 = 0, total = 0, free1 = 0;
    if (device) {
        for (unsigned k = 0; k < pool_n; ++k) {
            if (cudaMalloc(&dref[k], pitch * h) != cudaSuccess ||
                cudaMalloc(&ddist[k], pitch * h) != cudaSuccess) {
                r.error = "cudaMalloc failed";
                return r;
            }
            cudaMemcpy(dref[k], ref[k].data(), pitch * h, cudaMemcpyHostToDevice);
            cudaMemcpy(ddist[k], dist[k].data(), pitch * h, cudaMemcpyHostToDevice);
        }
        cudaDeviceSynchronize();
        cudaMemGetInfo(&free0, &total);
    }
    VmafCudaSettings s;
    vmaf_cuda_default_settings(&s);
    s.width = w;
    s.height = h;
    s.bpc = bpc;
    s.backend = device ? VMAF_CUDA_BACKEND_CUDA : VMAF_CUDA_BACKEND_CPU;
    s.frames_in_flight = in_flight;
    VmafCudaSession* vs = nullptr;
    char err[512];
    if (vmaf_cuda_open(&vs, &s, err, sizeof err) < 0) {
        r.error = err;
        return r;
    }
    if (device) {
        cudaMemGetInfo(&free1, &total);
        r.dev_mib = double(free0 - free1) / (1024.0 * 1024.0);
    }
    VmafCudaFrameScores fs;
    // Warm-up (module load, first launches), not timed.
    auto send = [&](unsigned i) {
        const unsigned k = i % pool_n;
        VmafCudaPicture rp{device ? dref[k] : ref[k].data(), ptrdiff_t(pitch), 0,
                           device ? VMAF_CUDA_MEMORY_DEVICE : VMAF_CUDA_MEMORY_HOST};
        VmafCudaPicture dp{device ? ddist[k] : dist[k].data(), ptrdiff_t(pitch), 0,
                           device ? VMAF_CUDA_MEMORY_DEVICE : VMAF_CUDA_MEMORY_HOST};
        return vmaf_cuda_send(vs, &rp, &dp);
    };
    for (unsigned i = 0; i < warm; ++i) {
        if (send(i) < 0) { r.error = vmaf_cuda_error_message(vs); vmaf_cuda_close(vs); return r; }
        while (vmaf_cuda_receive(vs, &fs) == VMAF_CUDA_OK) {}
    }
    const double c0 = cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    for (unsigned i = warm; i < warm + frames; ++i) {
        if (send(i) < 0) { r.error = vmaf_cuda_error_message(vs); vmaf_cuda_close(vs); return r; }
        while (vmaf_cuda_receive(vs, &fs) == VMAF_CUDA_OK) {}
    }
    vmaf_cuda_flush(vs);
    while (vmaf_cuda_receive(vs, &fs) == VMAF_CUDA_OK) {}
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = cpu_seconds() - c0;
    r.fps = frames / secs;
    r.cpu_us_per_frame = 1e6 * cpu / frames;
    vmaf_cuda_pooled(vs, "vmaf", VMAF_CUDA_POOL_MEAN, &r.pooled);
    vmaf_cuda_close(vs);
    for (unsigned k = 0; k < pool_n; ++k) {
        cudaFree(dref[k]);
        cudaFree(ddist[k]);
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
    unsigned cpu_frames = 6, in_flight = 4;
    bool no_cpu = false;
    app.add_option("--sizes", sizes, "WxH list")->delimiter(',');
    app.add_option("--bpc", depths, "Bit depths")->delimiter(',');
    app.add_option("--seconds", seconds, "Approximate GPU time per configuration");
    app.add_option("--cpu-frames", cpu_frames, "Frames for the CPU reference measurement");
    app.add_option("--in-flight", in_flight, "frames_in_flight of the session (1..16)");
    app.add_flag("--no-cpu", no_cpu, "Skip the CPU reference measurement");
    CLI11_PARSE(app, argc, argv);

    int ndev = 0;
    const bool gpu = cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0;
    if (gpu) {
        cudaDeviceProp p{};
        cudaGetDeviceProperties(&p, 0);
        std::printf("device: %s, %d SMs, %.0f GiB\n", p.name, p.multiProcessorCount,
                    double(p.totalGlobalMem) / (1 << 30));
    } else {
        std::printf("device: none (CPU reference only)\n");
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
                Result probe = run(w, h, bpc, 64, true, 8, in_flight, 8);
                if (!probe.ok) {
                    std::printf("| %ux%u | %u | error: %s |\n", w, h, bpc, probe.error.c_str());
                    rc = 1;
                    continue;
                }
                const unsigned n = unsigned(std::max(64.0, std::min(100000.0, probe.fps * seconds)));
                g = run(w, h, bpc, n, true, 8, in_flight, 8);
            }
            Result same; // the CPU run's frames on the GPU: pooled scores must agree exactly
            if (!no_cpu) {
                c = run(w, h, bpc, cpu_frames, false, 2, in_flight, 1);
                if (gpu) same = run(w, h, bpc, cpu_frames, true, 2, in_flight, 1);
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
            if (same.ok && c.ok && same.pooled != c.pooled) {
                std::printf("  MISMATCH: GPU pooled %.17g vs CPU %.17g\n", same.pooled, c.pooled);
                rc = 1;
            }
            std::fflush(stdout);
        }
    }
    return rc;
}

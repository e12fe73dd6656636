// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file check_util.h
/// Helpers of the kernel check suite (tests/check, meson suite `gpu`), in the spirit of
/// dav1d's checkasm: seeded random planes, fill modes, padded pitches, device upload.

#include "cuda_common.cuh"
#include "plane.h"

#include "catch.hpp"
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>
#include <vector>

namespace vmaf_cuda_test {

/// True when a CUDA device is usable; otherwise prints why the test is skipped.
/// (gpu_main.cpp already exits 77 without a device; this guards direct runs.)
/// Also fails (once, then clears it) when a CUDA error is pending from an earlier GPU
/// test: a failed runtime call sets the thread's last error, and a later launch check
/// (cudaGetLastError) would report it as its own.
inline bool require_gpu_or_skip() {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        std::printf("SKIPPED: no CUDA device found\n");
        return false;
    }
    static std::string previous = "(none)";
    const cudaError_t pending = cudaGetLastError();
    if (pending != cudaSuccess)
        FAIL_CHECK("a CUDA error is pending from an earlier GPU test (the last one: " << previous
                                                                             << "): "
                                                                             << cudaGetErrorString(pending));
    previous = Catch::getResultCapture().getCurrentTestName();
    return true;
}

/// Seed of the random inputs: VMAF_CHECK_SEED from the environment, else a fixed one.
inline std::uint64_t check_seed() {
    if (const char* s = std::getenv("VMAF_CHECK_SEED")) return std::strtoull(s, nullptr, 0);
    return 0x5eed2026ULL;
}

enum class Fill { zero, max, noise, smooth_noise };

inline const char* fill_name(Fill f) {
    switch (f) {
    case Fill::zero: return "zero";
    case Fill::max: return "max";
    case Fill::noise: return "noise";
    default: return "smooth+noise";
    }
}

/// A host plane with a padded pitch (bytes), values in [0, 2^bpc).
struct HostPlane {
    unsigned width = 0, height = 0, bpc = 8;
    std::size_t pitch = 0;
    std::vector<std::uint8_t> bytes;
    void set(unsigned x, unsigned y, unsigned v) {
        if (bpc == 8) bytes[y * pitch + x] = std::uint8_t(v);
        else {
            const std::uint16_t w = std::uint16_t(v);
            std::memcpy(&bytes[y * pitch + 2 * x], &w, 2);
        }
    }
    unsigned get(unsigned x, unsigned y) const {
        if (bpc == 8) return bytes[y * pitch + x];
        std::uint16_t w;
        std::memcpy(&w, &bytes[y * pitch + 2 * x], 2);
        return w;
    }
};

/// Makes a plane of the given fill; `pad` extra bytes per row (rounded to the sample size).
inline HostPlane make_plane(unsigned w, unsigned h, unsigned bpc, Fill fill, std::mt19937_64& rng,
                            unsigned pad = 0) {
    HostPlane p;
    p.width = w;
    p.height = h;
    p.bpc = bpc;
    const unsigned bps = bpc > 8 ? 2 : 1;
    p.pitch = std::size_t(w) * bps + (pad / bps) * bps;
    p.bytes.assign(p.pitch * h, 0xA5); // padding bytes are garbage on purpose
    const unsigned maxv = (1u << bpc) - 1;
    std::uniform_int_distribution<unsigned> any(0, maxv);
    std::normal_distribution<double> noise(0.0, double(maxv) / 20.0);
    const double ph = std::uniform_real_distribution<double>(0, 6.28)(rng);
    for (unsigned y = 0; y < h; ++y)
        for (unsigned x = 0; x < w; ++x) {
            unsigned v = 0;
            switch (fill) {
            case Fill::zero: v = 0; break;
            case Fill::max: v = maxv; break;
            case Fill::noise: v = any(rng); break;
            case Fill::smooth_noise: {
                const double base = 0.5 + 0.35 * std::sin(0.05 * x + ph) * std::cos(0.07 * y);
                double d = base * maxv + noise(rng);
                d = d < 0 ? 0 : d > maxv ? maxv : d;
                v = unsigned(d);
                break;
            }
            }
            p.set(x, y, v);
        }
    return p;
}

/// A distorted version of `ref`: ref + small noise (clamped), so that VIF/ADM see
/// realistic statistics rather than unrelated planes.
inline HostPlane distort(const HostPlane& ref, std::mt19937_64& rng, double sigma_frac = 0.03) {
    HostPlane d = ref;
    const unsigned maxv = (1u << ref.bpc) - 1;
    std::normal_distribution<double> noise(0.0, sigma_frac * maxv);
    for (unsigned y = 0; y < ref.height; ++y)
        for (unsigned x = 0; x < ref.width; ++x) {
            double v = ref.get(x, y) + noise(rng);
            v = v < 0 ? 0 : v > maxv ? maxv : v;
            d.set(x, y, unsigned(v));
        }
    return d;
}

/// Seed of combination `index`, derived from the base seed (splitmix64), so that one
/// failing combination can be re-run alone.
inline std::uint64_t combo_seed(std::uint64_t base, std::uint64_t index) {
    std::uint64_t z = base + 0x9e3779b97f4a7c15ull * (index + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

inline std::string hex(std::uint64_t v) {
    char b[32];
    std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
    return b;
}

inline std::string describe(unsigned w, unsigned h, unsigned bpc, Fill f) {
    return std::to_string(w) + "x" + std::to_string(h) + " " + std::to_string(bpc) + "-bit " +
           fill_name(f);
}

inline constexpr Fill kAllFills[] = {Fill::zero, Fill::max, Fill::noise, Fill::smooth_noise};

/// A plane of `fill` with 0..64 bytes of garbage padding per row.
inline HostPlane random_plane(unsigned w, unsigned h, unsigned bpc, Fill fill, std::mt19937_64& rng) {
    const unsigned pad = std::uniform_int_distribution<unsigned>(0, 64)(rng);
    return make_plane(w, h, bpc, fill, rng, pad);
}

/// A non-blocking CUDA stream owned for the scope.
struct Stream {
    cudaStream_t s = nullptr;
    Stream() { VMAF_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
    ~Stream() { cudaStreamDestroy(s); }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
};

/// Runs `launch(d_out, stream)`, which must write one `Out` at `d_out`, into a device
/// buffer poisoned with guard bytes on both sides; copies the result to `got`. Returns
/// an error text, empty when the guards are intact.
template <class Out, class Launch>
std::string run_guarded(Launch&& launch, cudaStream_t stream, Out& got) {
    constexpr std::size_t kGuard = 256;
    constexpr unsigned char kGuardByte = 0xa5;
    vmaf_cuda::cuda::DeviceBuffer out(2 * kGuard + sizeof(Out));
    // On the kernel's own stream: a legacy-stream cudaMemset would not be ordered before
    // work on a non-blocking stream.
    VMAF_CUDA_CHECK(cudaMemsetAsync(out.get(), kGuardByte, out.bytes(), stream));
    launch(reinterpret_cast<Out*>(out.get<unsigned char>() + kGuard), stream);
    VMAF_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<unsigned char> host(out.bytes());
    VMAF_CUDA_CHECK(cudaMemcpy(host.data(), out.get(), host.size(), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < kGuard; ++i)
        if (host[i] != kGuardByte || host[kGuard + sizeof(Out) + i] != kGuardByte)
            return "guard bytes around the output were overwritten";
    std::memcpy(&got, host.data() + kGuard, sizeof got);
    return {};
}

/// Mean time of `enqueue(stream)` in microseconds over `iters` runs after `warm` runs,
/// timed with CUDA events (for the hidden "[.bench]" tests).
template <class Enqueue>
double time_us(Enqueue&& enqueue, cudaStream_t stream, int warm, int iters) {
    for (int i = 0; i < warm; ++i) enqueue(stream);
    cudaEvent_t t0, t1;
    VMAF_CUDA_CHECK(cudaEventCreate(&t0));
    VMAF_CUDA_CHECK(cudaEventCreate(&t1));
    VMAF_CUDA_CHECK(cudaEventRecord(t0, stream));
    for (int i = 0; i < iters; ++i) enqueue(stream);
    VMAF_CUDA_CHECK(cudaEventRecord(t1, stream));
    VMAF_CUDA_CHECK(cudaEventSynchronize(t1));
    float ms = 0;
    VMAF_CUDA_CHECK(cudaEventElapsedTime(&ms, t0, t1));
    cudaEventDestroy(t0);
    cudaEventDestroy(t1);
    return 1000.0 * ms / iters;
}

/// Runs `run(combo, seed)` (returns an error text, empty when the kernel agrees with the
/// reference) for every combination, each with its own seed derived from the base seed
/// (VMAF_CHECK_SEED) and `seed_offset + index`. Reports up to 8 failures with the base
/// seed, the combination's index and seed and `describe(combo)`, then the total.
template <class Combo, class Run, class Describe>
void run_combos(const std::vector<Combo>& all, std::uint64_t seed_offset, Run&& run,
                Describe&& describe) {
    const std::uint64_t base = check_seed();
    int failures = 0;
    for (std::size_t i = 0; i < all.size(); ++i) {
        const std::uint64_t seed = combo_seed(base, seed_offset + i);
        std::string err;
        try {
            err = run(all[i], seed);
        } catch (const std::exception& e) {
            err = std::string("exception: ") + e.what();
        }
        if (err.empty()) continue;
        ++failures;
        if (failures <= 8)
            FAIL_CHECK("VMAF_CHECK_SEED=" << hex(base) << " combo #" << i << " (seed " << hex(seed)
                                          << ") " << describe(all[i]) << ": " << err);
    }
    INFO("combinations: " << all.size() << ", failed: " << failures);
    CHECK(failures == 0);
}

/// The reference's view of a host plane.
inline vmaf_cuda::ref::LumaView to_view(const HostPlane& p) {
    return vmaf_cuda::ref::LumaView{p.bytes.data(), std::ptrdiff_t(p.pitch), p.width, p.height, p.bpc};
}

/// Copies `bytes` host bytes to device memory and waits until they are there
/// (copy_to_device(), cuda_common.cuh: a plain cudaMemcpy from pageable memory may return
/// before its DMA has landed, and the kernels under test run on non-blocking streams;
/// seen on an H100: the ADM ladder check read a reference plane uploaded just before the
/// launch as zeros, once in 129 combinations). Every upload that a kernel on a
/// non-blocking stream reads goes through here.
inline void upload(void* dst, const void* src, std::size_t bytes) {
    vmaf_cuda::cuda::copy_to_device(dst, src, bytes);
}

/// A device copy of a host plane, same pitch.
struct DevicePlane {
    vmaf_cuda::cuda::DeviceBuffer buf;
    vmaf_cuda::cuda::DeviceLuma view;
    explicit DevicePlane(const HostPlane& h) : buf(h.bytes.size()) {
        upload(buf.get(), h.bytes.data(), h.bytes.size());
        view.data = buf.get();
        view.pitch = h.pitch;
        view.width = h.width;
        view.height = h.height;
        view.bpc = h.bpc;
    }
};

} // namespace vmaf_cuda_test

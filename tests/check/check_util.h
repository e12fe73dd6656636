// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file check_util.h
/// Helpers of the kernel check suite (tests/check, meson suite `gpu`), in the spirit of
/// dav1d's checkasm: seeded random planes, fill modes, padded pitches, device upload.

#include "cuda_common.cuh"
#include "plane.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace vmaf_cuda_test {

/// True when a CUDA device is usable; otherwise prints why the test is skipped.
/// (gpu_main.cpp already exits 77 without a device; this guards direct runs.)
inline bool require_gpu_or_skip() {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        std::printf("SKIPPED: no CUDA device found\n");
        return false;
    }
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

/// The reference's view of a host plane.
inline vmaf_cuda::ref::LumaView to_view(const HostPlane& p) {
    return vmaf_cuda::ref::LumaView{p.bytes.data(), std::ptrdiff_t(p.pitch), p.width, p.height, p.bpc};
}

/// A device copy of a host plane, same pitch.
struct DevicePlane {
    vmaf_cuda::cuda::DeviceBuffer buf;
    vmaf_cuda::cuda::DeviceLuma view;
    explicit DevicePlane(const HostPlane& h) : buf(h.bytes.size()) {
        VMAF_CUDA_CHECK(cudaMemcpy(buf.get(), h.bytes.data(), h.bytes.size(), cudaMemcpyHostToDevice));
        view.data = buf.get();
        view.pitch = h.pitch;
        view.width = h.width;
        view.height = h.height;
        view.bpc = h.bpc;
    }
};

} // namespace vmaf_cuda_test

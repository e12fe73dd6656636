// SPDX-License-Identifier: BSD-2-Clause-Patent
// checkasm-style test of the alignment signature (vmaf_cuda_align.h): a device picture's
// signature (cuda::cell_sums through the CUDA backend) equals the host picture's of the
// same samples, exactly, on random planes: odd and tiny sizes up to 4K, 8/10/12/16 bit,
// LSB- and MSB-aligned samples (P010/P016: shift), pitches padded with garbage. Prints
// the seed and the case on failure; VMAF_CHECK_SEED changes the base seed.

#include "catch.hpp"

#include "vmaf_cuda.h"
#include "vmaf_cuda_align.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

TEST_CASE("signature: device pictures sum to the host pictures' signature", "[signature][gpu]") {
    const char* env = std::getenv("VMAF_CHECK_SEED");
    const unsigned base = env ? unsigned(std::strtoul(env, nullptr, 10)) : 4242u;
    struct Case { unsigned w, h, bpc, shift; };
    const Case cases[] = {{32, 32, 8, 0},     {33, 47, 8, 0},    {321, 241, 10, 0},
                          {320, 240, 10, 6},  {1920, 1080, 8, 0}, {1917, 1083, 12, 4},
                          {3840, 2160, 10, 6}, {640, 360, 16, 0},  {48, 1000, 8, 0}};
    int k = 0;
    for (const Case& c : cases) {
        const unsigned seed = base + unsigned(k++);
        INFO("seed " << seed << ", " << c.w << "x" << c.h << " " << c.bpc << "-bit, shift "
                     << c.shift);
        std::mt19937 rng(seed);
        VmafCudaSettings s;
        vmaf_cuda_default_settings(&s);
        s.width = c.w;
        s.height = c.h;
        s.bpc = c.bpc;
        s.backend = VMAF_CUDA_BACKEND_CUDA;
        VmafCudaSession* vs = nullptr;
        char err[256];
        REQUIRE(vmaf_cuda_open(&vs, &s, err, sizeof err) == VMAF_CUDA_OK);
        const std::size_t bps = c.bpc > 8 ? 2 : 1, pitch = c.w * bps + 64 + (seed % 3) * 2;
        std::vector<std::uint8_t> plane(pitch * c.h);
        std::uniform_int_distribution<unsigned> byte(0, 255);
        for (auto& b : plane) b = std::uint8_t(byte(rng)); // garbage in the padding too
        std::uniform_int_distribution<unsigned> v(0, (1u << c.bpc) - 1);
        for (unsigned y = 0; y < c.h; ++y)
            for (unsigned x = 0; x < c.w; ++x) {
                // the bits below the shift hold garbage, as the shift drops them
                const unsigned low = c.shift ? byte(rng) & ((1u << c.shift) - 1) : 0;
                const unsigned sample = (v(rng) << c.shift) | low;
                if (bps == 2) reinterpret_cast<std::uint16_t*>(&plane[y * pitch])[x] = std::uint16_t(sample);
                else plane[y * pitch + x] = std::uint8_t(sample);
            }
        void* dev = nullptr;
        REQUIRE(cudaMalloc(&dev, plane.size()) == cudaSuccess);
        REQUIRE(cudaMemcpy(dev, plane.data(), plane.size(), cudaMemcpyHostToDevice) == cudaSuccess);
        VmafCudaPicture host{}, device{};
        host.luma = plane.data();
        host.pitch = std::ptrdiff_t(pitch);
        host.shift = c.shift;
        host.memory = VMAF_CUDA_MEMORY_HOST;
        device = host;
        device.luma = dev;
        device.memory = VMAF_CUDA_MEMORY_DEVICE;
        VmafCudaSignature a, b;
        REQUIRE(vmaf_cuda_picture_signature(vs, &host, &a) == VMAF_CUDA_OK);
        const int rc = vmaf_cuda_picture_signature(vs, &device, &b);
        INFO(vmaf_cuda_error_message(vs));
        REQUIRE(rc == VMAF_CUDA_OK);
        for (unsigned i = 0; i < VMAF_CUDA_SIGNATURE_CELLS; ++i) {
            INFO("cell " << i);
            REQUIRE(a.cell[i] == b.cell[i]);
        }
        cudaFree(dev);
        vmaf_cuda_close(vs);
    }
}

// SPDX-License-Identifier: BSD-2-Clause-Patent
// Catch2 main of the `gpu` suite: without a usable CUDA device the whole executable
// reports itself skipped (exit code 77, which meson counts as SKIP), never a pass.
#define CATCH_CONFIG_RUNNER
#include "catch.hpp"

#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

int main(int argc, char* argv[]) {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        std::printf("SKIPPED: no CUDA device found (%s); the gpu suite needs one\n",
                    e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return 77;
    }
    cudaDeviceProp p{};
    cudaGetDeviceProperties(&p, 0);
    std::printf("gpu suite on %s (sm_%d%d, %d SMs)\n", p.name, p.major, p.minor,
                p.multiProcessorCount);
    std::vector<char*> args(argv, argv + argc);
    static char w[] = "--warn", na[] = "NoAssertions";
    args.push_back(w); // a test case that checks nothing fails (catch_main.cpp)
    args.push_back(na);
    return Catch::Session().run(int(args.size()), args.data());
}

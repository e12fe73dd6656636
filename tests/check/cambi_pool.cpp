// SPDX-License-Identifier: BSD-2-Clause-Patent
// checkasm-style test of cuda::CambiDevicePool (kernels/cambi_pool.cuh) against
// libvmaf v3.2.0's quick_select + spatial_pooling run literally on the host
// (cambi_pool_cases.h): every value of the reordered array and the pooled double, on the
// arrays of pool_case_array() (zeros, ties with the pivot, sorted runs, sums that round
// with ties to even) at sizes around the block sizes (2048 values, the one-block range
// of kCambiPoolSmall) and up to 4K frames, for several topk. Seed: VMAF_CHECK_SEED.
// Also: one pool object reused across sizes, and its argument checks.
// VMAF_CHECK_MAX_VALUES=N leaves out the arrays longer than N (compute-sanitizer runs).

#include "catch.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "cambi_pool.cuh"
#include "cambi_pool_cases.h"
#include "check_util.h"

namespace {

using namespace vmaf_cuda_test;
namespace vcu = vmaf_cuda::cuda;

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

} // namespace

TEST_CASE("cambi pool: device quick-select and ordered sum equal libvmaf's loop", "[cambi][cambi_pool]") {
    if (!require_gpu_or_skip()) return;
    const std::uint64_t seed = check_seed();
    std::mt19937 rng(std::uint32_t(seed ^ 0xca3b1u));
    const std::size_t sizes[] = {1,    2,    3,    7,     100,   2047,  2048,  2049,   4095,
                                 4096, 4097, 6000, 10000, 65537, 300000, 1000003, 3840 * 2160};
    const double topks[] = {0.0001, 0.3, 0.6, 0.97, 1.0};
    vcu::CambiDevicePool pool(3840 * 2160);
    vcu::DeviceBuffer d(std::size_t(3840) * 2160 * sizeof(float));
    cudaStream_t stream;
    REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
    std::size_t max_values = std::size_t(3840) * 2160;
    if (const char* e = std::getenv("VMAF_CHECK_MAX_VALUES")) max_values = std::strtoull(e, nullptr, 10);
    unsigned runs = 0, bad = 0, rounded = 0, grid_rounds = 0, phases_past_first = 0;
    for (const std::size_t n : sizes)
        for (const double topk : topks)
            for (int kind = 0; kind < kPoolKinds; ++kind) {
                if (n > max_values) continue;
                if (n == std::size_t(3840) * 2160 && topk != 0.6 && kind % 3) continue; // time
                const std::vector<float> a = pool_case_array(kind, n, rng);
                const int k = pool_topk_count(topk, n);
                std::vector<float> want = a;
                const double want_score = literal_pooling(want, topk);
                upload(d.get(), a.data(), n * sizeof(float));
                vcu::CambiPoolStats st;
                const double got_score = pool.pool(d.get<float>(), unsigned(n), unsigned(k), stream, &st);
                std::vector<float> got(n);
                REQUIRE(cudaMemcpy(got.data(), d.get(), n * sizeof(float), cudaMemcpyDeviceToHost) ==
                        cudaSuccess);
                ++runs;
                grid_rounds += st.grid_rounds;
                rounded += st.sum_phases > 1;
                phases_past_first += st.sum_phases > 2;
                std::size_t first_diff = n;
                for (std::size_t i = 0; i < n && first_diff == n; ++i)
                    if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0) first_diff = i;
                if ((first_diff != n || !same_bits(got_score, want_score)) && bad++ < 5)
                    FAIL_CHECK("seed " << seed << ", n " << n << ", k " << k << ", topk " << topk
                                       << ", kind " << kind << ": "
                                       << (first_diff != n ? "order differs at " + std::to_string(first_diff)
                                                           : std::string("order equal"))
                                       << ", score " << got_score << " vs " << want_score
                                       << " (grid rounds " << st.grid_rounds << ", phases "
                                       << st.sum_phases << ")");
            }
    cudaStreamDestroy(stream);
    std::printf("cambi pool: %u arrays, %u grid rounds, %u with a rounding sum, %u with 3+ phases\n",
                runs, grid_rounds, rounded, phases_past_first);
    CHECK(bad == 0);
    if (max_values >= std::size_t(3840) * 2160) { // coverage, on the whole set of arrays
        CHECK(grid_rounds > 100);     // the grid rounds really ran
        CHECK(rounded >= 10);         // and the phases past the exact one
        CHECK(phases_past_first >= 5);
    }
}

TEST_CASE("cambi pool: arguments are checked", "[cambi][cambi_pool]") {
    if (!require_gpu_or_skip()) return;
    vcu::CambiDevicePool pool(1000);
    vcu::DeviceBuffer d(2000 * sizeof(float));
    CHECK_THROWS_AS(pool.pool(d.get<float>(), 1001, 10, nullptr), std::invalid_argument);
    CHECK_THROWS_AS(pool.pool(d.get<float>(), 100, 0, nullptr), std::invalid_argument);
    CHECK_THROWS_AS(pool.pool(d.get<float>(), 100, 101, nullptr), std::invalid_argument);
    CHECK_THROWS_AS(vcu::CambiDevicePool(0), std::invalid_argument);
}

// SPDX-License-Identifier: BSD-2-Clause-Patent
// checkasm-style test of cuda::OrderedSum (kernels/ordered_sum.cuh) against the
// sequential double sum on the host (ordered_sum_cases.h: signed values crossing binades
// both ways, cancellation to zero, subnormals, ties to even), as single arrays and as
// products (a * b) * c (float_ssim's l * c * s), at sizes around the 2048-value blocks and
// up to a 4K scale, also with phases of short ranges; NaN and infinity refused. Seed: VMAF_CHECK_SEED.
// VMAF_CHECK_MAX_VALUES=N leaves out the arrays longer than N, VMAF_CHECK_MAX_SUMS=N all
// but the first N arrays of each size (compute-sanitizer runs).

#include "catch.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "check_util.h"
#include "ordered_sum.cuh"
#include "ordered_sum_cases.h"

namespace {

using namespace vmaf_cuda_test;
namespace vcu = vmaf_cuda::cuda;

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void upload(vcu::DeviceBuffer& d, const std::vector<double>& x) {
    vmaf_cuda_test::upload(d.get(), x.data(), x.size() * sizeof(double));
}

} // namespace

TEST_CASE("ordered sum: the device gives the sequential double sum", "[ordered_sum]") {
    if (!require_gpu_or_skip()) return;
    const std::uint64_t seed = check_seed();
    std::mt19937_64 rng(seed ^ 0x05d5u);
    const std::size_t big = std::size_t(3830) * 2150; // float_ms_ssim's scale 0 at 4K
    std::size_t max_values = big;
    if (const char* e = std::getenv("VMAF_CHECK_MAX_VALUES")) max_values = std::strtoull(e, nullptr, 10);
    // VMAF_CHECK_MAX_SUMS=N: the first N arrays only (racecheck: every phase is a few launches)
    unsigned max_sums = ~0u;
    if (const char* e = std::getenv("VMAF_CHECK_MAX_SUMS")) max_sums = unsigned(std::strtoul(e, nullptr, 10));
    const std::size_t sizes[] = {1, 2, 3, 100, 2047, 2048, 2049, 4097, 100003, 1000000, big};
    vcu::OrderedSum os(big);
    // The same sums with phases of short ranges (1, then twice the values summed): each
    // phase goes on across several ranges.
    vcu::OrderedSum os_short(big);
    os_short.set_min_range(1);
    CHECK_THROWS_AS(os_short.set_min_range(0), std::invalid_argument);
    vcu::DeviceBuffer a(big * sizeof(double)), b(big * sizeof(double)), c(big * sizeof(double));
    cudaStream_t stream;
    REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
    unsigned runs = 0, bad = 0, multi = 0;
    for (const std::size_t n : sizes) {
        if (n > max_values) continue;
        unsigned of_size = 0;
        for (int kind = 0; kind < kOrderedSumKinds && of_size++ < max_sums; ++kind) {
            if (n == big && kind % 3) continue; // time
            const std::vector<double> x = ordered_sum_case(kind, n, rng);
            upload(a, x);
            double got = -1.0;
            vcu::OrderedSumStats st;
            REQUIRE(os.sum(a.get<double>(), nullptr, nullptr, n, stream, got, &st));
            const double want = sequential_sum(x);
            ++runs;
            multi += st.phases > 3;
            if (!same_bits(got, want) && bad++ < 5)
                FAIL_CHECK("seed " << seed << ", n " << n << ", kind " << kind << ": " << got
                                   << " vs " << want << " (" << st.phases << " phases)");
            double got_short = -1.0;
            REQUIRE(os_short.sum(a.get<double>(), nullptr, nullptr, n, stream, got_short, &st));
            if (!same_bits(got_short, want) && bad++ < 5)
                FAIL_CHECK("seed " << seed << ", n " << n << ", kind " << kind << ", short ranges: "
                                   << got_short << " vs " << want << " (" << st.phases << " phases)");
        }
        // products (a * b) * c of SSIM-like terms
        std::uniform_real_distribution<double> u01(0.0, 1.0);
        std::vector<double> l(n), cc(n), s(n), prod(n);
        for (std::size_t i = 0; i < n; ++i) {
            l[i] = 0.9 + 0.1 * u01(rng);
            cc[i] = 0.5 + 0.5 * u01(rng);
            s[i] = 2.0 * u01(rng) - 0.7;
            prod[i] = l[i] * cc[i] * s[i];
        }
        upload(a, l);
        upload(b, cc);
        upload(c, s);
        double got = -1.0;
        REQUIRE(os.sum(a.get<double>(), b.get<double>(), c.get<double>(), n, stream, got));
        ++runs;
        if (!same_bits(got, sequential_sum(prod)) && bad++ < 5)
            FAIL_CHECK("seed " << seed << ", n " << n << ", products: " << got << " vs "
                               << sequential_sum(prod));
        REQUIRE(os_short.sum(a.get<double>(), b.get<double>(), c.get<double>(), n, stream, got));
        if (!same_bits(got, sequential_sum(prod)) && bad++ < 5)
            FAIL_CHECK("seed " << seed << ", n " << n << ", products, short ranges: " << got
                               << " vs " << sequential_sum(prod));
    }
    std::printf("ordered sum: %u sums, %u with more than 3 phases\n", runs, multi);
    CHECK(bad == 0);
    if (max_values >= big && max_sums == ~0u) CHECK(multi >= 20); // coverage, on the whole set
    // not finite: refused
    std::vector<double> x(5000, 0.5);
    x[4321] = std::numeric_limits<double>::quiet_NaN();
    upload(a, x);
    double got = 7.0;
    CHECK_FALSE(os.sum(a.get<double>(), nullptr, nullptr, x.size(), stream, got));
    CHECK(got == 7.0);
    x[4321] = std::numeric_limits<double>::infinity();
    upload(a, x);
    CHECK_FALSE(os.sum(a.get<double>(), nullptr, nullptr, x.size(), stream, got));
    // all zeros: +0.0
    std::fill(x.begin(), x.end(), -0.0);
    upload(a, x);
    REQUIRE(os.sum(a.get<double>(), nullptr, nullptr, x.size(), stream, got));
    CHECK(same_bits(got, 0.0));
    cudaStreamDestroy(stream);
    CHECK_THROWS_AS(os.sum(a.get<double>(), nullptr, nullptr, big + 1, nullptr, got), std::invalid_argument);
}

TEST_CASE("ordered sum: DeviceSums from several threads at once", "[ordered_sum]") {
    // The CUDA engine's float_ssim / float_ms_ssim finishes call one DeviceSums from its
    // host-tail workers: each concurrent call must get its own scratch and stream.
    if (!require_gpu_or_skip()) return;
    const std::uint64_t seed = check_seed();
    constexpr int kThreads = 6;
    const int kArrays = std::getenv("VMAF_CHECK_MAX_SUMS") ? 1 : 4;
    std::size_t n = 300007;
    if (const char* e = std::getenv("VMAF_CHECK_MAX_VALUES")) n = std::min<std::size_t>(n, std::strtoull(e, nullptr, 10));
    vcu::DeviceSums sums(n);
    std::vector<vcu::DeviceBuffer> dev;
    std::vector<double> want;
    std::mt19937_64 rng(seed ^ 0x7badu);
    for (int i = 0; i < kArrays * kThreads; ++i) {
        const std::vector<double> x = ordered_sum_case(i % kOrderedSumKinds, n, rng);
        dev.emplace_back(n * sizeof(double));
        upload(dev.back(), x);
        want.push_back(sequential_sum(x));
    }
    std::vector<double> got(want.size(), -1.0);
    std::vector<int> ok(want.size(), 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            // (no Catch assertions off the main thread)
            if (cudaSetDevice(0) != cudaSuccess) return;
            for (int j = 0; j < kArrays; ++j) {
                const int i = t * kArrays + j;
                try {
                    ok[i] = sums.sum(dev[i].get<double>(), nullptr, nullptr, n, got[i]);
                } catch (...) {
                    ok[i] = -1; // CudaError: reported below
                }
            }
        });
    for (auto& th : threads) th.join();
    for (std::size_t i = 0; i < want.size(); ++i) {
        INFO("seed " << seed << ", array " << i << " (kind " << i % kOrderedSumKinds << "), n " << n);
        CHECK(ok[i] == 1);
        CHECK(same_bits(got[i], want[i]));
    }
}

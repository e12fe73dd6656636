// SPDX-License-Identifier: BSD-2-Clause-Patent
// Suite `api` (CPU): the ordered double sum's arithmetic (kernels/ordered_sum_math.cuh),
// run sequentially on the host (emulated_ordered_sum), against the plain sequential sum
// libvmaf's `_iqa_ssim` does, bit for bit, on signed arrays that cross binades both ways,
// cancel to zero, hold subnormals and ties to even; several chunk sizes (the device's
// blocks). Seed fixed, printed on failure.

#include "catch.hpp"

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ordered_sum_cases.h"

using namespace vmaf_cuda_test;

namespace {
bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }
} // namespace

TEST_CASE("ordered sum: binade phases and maps give the sequential double sum", "[ordered_sum]") {
    const std::uint64_t seed = 20261203;
    std::mt19937_64 rng(seed);
    const std::size_t sizes[] = {1, 2, 3, 17, 100, 2047, 2048, 2049, 10000, 100003, 1000000};
    const int chunks[] = {1, 37, 2048};
    unsigned runs = 0, bad = 0, multi = 0;
    for (const std::size_t n : sizes)
        for (int kind = 0; kind < kOrderedSumKinds; ++kind) {
            const std::vector<double> x = ordered_sum_case(kind, n, rng);
            const double want = sequential_sum(x);
            const int chunk = chunks[runs % std::size(chunks)];
            unsigned phases = 0;
            const double got = emulated_ordered_sum(x, chunk, &phases);
            ++runs;
            multi += phases > 3;
            if (!same_bits(got, want) && bad++ < 5)
                FAIL_CHECK("seed " << seed << ", n " << n << ", kind " << kind << ", chunk " << chunk
                                   << ": " << got << " vs " << want << " (" << phases << " phases)");
        }
    INFO(runs << " arrays, " << multi << " with more than 3 phases");
    CHECK(bad == 0);
    CHECK(multi >= 30);
}

TEST_CASE("ordered sum: phase bounds", "[ordered_sum]") {
    using namespace vmaf_cuda::cuda;
    // s = 1.5 (binade [1, 2), u = 2^-52): up to 2^-1 below, 2^-1 above.
    const OrderedSumPhase p = ordered_sum_phase_at(1.5, 0x1p-60);
    CHECK(p.u == 0x1p-52);
    CHECK(p.hi_end == (1LL << 51));
    CHECK(p.lo_end == -(1LL << 51) - 1);
    // s = -1.5: the same binade mirrored.
    const OrderedSumPhase q = ordered_sum_phase_at(-1.5, 0x1p-60);
    CHECK(q.lo_end == -(1LL << 51));
    CHECK(q.hi_end == (1LL << 51) + 1);
    CHECK(ordered_sum_phase_at(0.0, 0x1p-60).u == 0x1p-60);
    // A tie: 1 + 2^-53 from s = 1 (parity 0) stays at 1; from 1 + 2^-52 (odd) it rounds up.
    const OrderedSumMap m = ordered_sum_map_of(0x1p-53, 0x1p-52);
    CHECK(m.d[0] == 0);
    CHECK(m.d[1] == 1);
    CHECK(1.0 + 0x1p-53 == 1.0);
    CHECK((1.0 + 0x1p-52) + 0x1p-53 == 1.0 + 0x1p-51);
}

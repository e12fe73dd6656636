// SPDX-License-Identifier: BSD-2-Clause-Patent
// Suite `api` (CPU): VIF's compact log2 table (kernels/vif_log2.cuh), the one the CUDA
// kernels read, gives libvmaf's table logarithm (reference vif_log2_table(), libvmaf
// v3.2.0 integer_vif.c log2_table) for every 16-bit mantissa, and its builder refuses a
// table whose steps are not 0 or 1.

#include "catch.hpp"

#include "vif.h"
#include "vif_log2.cuh"

#include <cstdint>
#include <string>
#include <vector>

namespace vc = vmaf_cuda::cuda;

TEST_CASE("vif log2: the compact table equals libvmaf's table at every mantissa", "[vif_log2]") {
    const std::uint16_t* table = vmaf_cuda::ref::vif_log2_table();
    std::vector<vc::Log2Block> blocks(vc::kLog2Blocks);
    REQUIRE(vc::build_log2_blocks(table, blocks.data()));
    unsigned bad = 0, steps = 0;
    std::string first;
    for (std::uint32_t m = 32768; m < 65536; ++m) {
        const std::int32_t got = vc::log2_mantissa(blocks.data(), m);
        if (got != table[m] && bad++ == 0)
            first = "m=" + std::to_string(m) + " got " + std::to_string(got) + " want " +
                    std::to_string(table[m]);
        if (m > 32768 && table[m] != table[m - 1]) ++steps;
    }
    INFO(first);
    CHECK(bad == 0);
    // The table spans log2 of [2^15, 2^16) in Q11: 2048 steps up (less the last rounding).
    CHECK(table[32768] == 30720);
    CHECK(steps + 1 >= 2047);
    CHECK(steps <= 2048);
}

TEST_CASE("vif log2: the builder refuses steps other than 0 or 1", "[vif_log2]") {
    std::vector<std::uint16_t> t(vmaf_cuda::ref::vif_log2_table(),
                                 vmaf_cuda::ref::vif_log2_table() + 65536);
    std::vector<vc::Log2Block> blocks(vc::kLog2Blocks);
    // (m inside a run of 32: a run's first entry is stored whole, so any step into it is fine)
    for (const std::uint32_t m : {32769u, 40001u, 65535u}) {
        REQUIRE((m - 32768u) % 32u != 0);
        std::vector<std::uint16_t> u = t;
        u[m] = static_cast<std::uint16_t>(u[m - 1] + 2); // a step of 2
        CHECK_FALSE(vc::build_log2_blocks(u.data(), blocks.data()));
        u = t;
        u[m] = static_cast<std::uint16_t>(u[m - 1] - 1); // a step down
        CHECK_FALSE(vc::build_log2_blocks(u.data(), blocks.data()));
    }
}

// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// libvmaf's VIF table logarithm from an 8 KiB table instead of its 64 KiB one.
///
/// libvmaf v3.2.0 (src/feature/integer_vif.c, log2_table) looks up log2 in Q11 of a
/// 16-bit mantissa m in [32768, 65535]: table[m] = round(log2f(m) * 2048) (reference/vif.cpp,
/// vif_log2_table()). On the GPU those lookups scatter over 64 KiB, more than the L1 that
/// VIF scale 0 leaves beside its shared memory: they were most of that kernel's global
/// loads and its L2 waits (docs/PERFORMANCE.md, 2026-12-06, third session).
///
/// The table rises by 0 or 1 from one m to the next (its slope, 2048 / (m ln 2), is below
/// 0.1), so each run of 32 entries is its first value plus a 32-bit mask of the steps:
///   Log2Block b = blocks[(m - 32768) / 32], j = (m - 32768) % 32:
///   table[m] = b.base + popcount(b.steps & (2^(j+1) - 1))
/// where bit j of b.steps (j = 1..31) says table[m] = table[m - 1] + 1 (bit 0 is 0).
/// 1024 blocks of 8 bytes. Exact for every m: build_log2_blocks() refuses a table that
/// does not have this shape, and tests/api/vif_log2_test.cpp compares all 32768 entries.

#include <cstdint>

#if defined(__CUDACC__)
#define VMAF_VIF_LOG2_HD __host__ __device__ __forceinline__
#else
#define VMAF_VIF_LOG2_HD inline
#endif

namespace vmaf_cuda::cuda {

struct alignas(8) Log2Block {
    std::uint32_t steps; ///< bit j: entry j of the run is one more than entry j - 1
    std::uint32_t base;  ///< the run's first entry
};

constexpr int kLog2Blocks = 32768 / 32;

/// table[m] for m in [32768, 65535] (other m: undefined). `blocks`: kLog2Blocks entries
/// (on the device: global or shared memory).
VMAF_VIF_LOG2_HD std::int32_t log2_mantissa(const Log2Block* blocks, std::uint32_t m) {
    const std::uint32_t i = m - 32768u;
    const Log2Block b = blocks[i >> 5];
    const std::uint32_t upto = (2u << (i & 31u)) - 1u; // bits 0..j (j = 31: all: 2u << 31 == 0)
#if defined(__CUDA_ARCH__)
    return static_cast<std::int32_t>(b.base) + __popc(b.steps & upto);
#else
    return static_cast<std::int32_t>(b.base) + __builtin_popcount(b.steps & upto);
#endif
}

/// Fills `blocks` (kLog2Blocks) from `table` (65536 entries, as vif_log2_table()); false
/// when some step of entries 32768..65535 is neither 0 nor 1 (the caller reports it).
inline bool build_log2_blocks(const std::uint16_t* table, Log2Block* blocks) {
    for (int b = 0; b < kLog2Blocks; ++b) {
        const std::uint32_t m0 = 32768u + 32u * static_cast<std::uint32_t>(b);
        blocks[b].base = table[m0];
        blocks[b].steps = 0;
        for (std::uint32_t j = 1; j < 32; ++j) {
            const int step = int(table[m0 + j]) - int(table[m0 + j - 1]);
            if (step < 0 || step > 1) return false;
            if (step) blocks[b].steps |= 1u << j;
        }
    }
    return true;
}

} // namespace vmaf_cuda::cuda

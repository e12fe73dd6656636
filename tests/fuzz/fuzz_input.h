// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file fuzz_input.h
/// Reading a fuzz input as a stream of small choices (bytes, numbers, strings) for the
/// harnesses of tests/fuzz/. Past the end every read gives 0 / empty, so any input is
/// a valid one.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace vmaf_cuda_fuzz {

struct Input {
    const std::uint8_t* p;
    std::size_t n;

    bool empty() const { return n == 0; }
    std::uint8_t byte() {
        if (!n) return 0;
        --n;
        return *p++;
    }
    /// A value in [lo, hi].
    unsigned pick(unsigned lo, unsigned hi) { return lo + byte() % (hi - lo + 1); }
    double real() {
        double v = 0;
        std::uint8_t b[sizeof v] = {};
        for (std::uint8_t& x : b) x = byte();
        std::memcpy(&v, b, sizeof v);
        return v;
    }
    /// A string of up to `max` bytes, its length first.
    std::string text(std::size_t max) {
        std::size_t len = byte() % (max + 1);
        if (len > n) len = n;
        std::string s(reinterpret_cast<const char*>(p), len);
        p += len;
        n -= len;
        return s;
    }
    /// Everything up to the next `sep` (consumed) or the end.
    std::string until(char sep) {
        const void* at = n ? std::memchr(p, sep, n) : nullptr;
        const std::size_t len = at ? std::size_t(static_cast<const std::uint8_t*>(at) - p) : n;
        std::string s(reinterpret_cast<const char*>(p), len);
        p += len;
        n -= len;
        if (at) {
            ++p;
            --n;
        }
        return s;
    }
    std::string rest() { return until('\0'); }
};

/// A broken promise of the code under test: says what and aborts (libFuzzer and the
/// replay driver report the input).
[[noreturn]] inline void broken(const std::string& what) {
    std::fprintf(stderr, "fuzz harness: %s\n", what.c_str());
    std::abort();
}

/// Whether the harness should step around findings that were reported and are not fixed
/// yet (tests/fuzz/known-failures.txt): set by tools/fuzz.sh for the timed runs, so that
/// they look for new findings; the replay of tests/fuzz/regression/ reproduces them.
inline bool skip_known() {
    static const bool skip = std::getenv("VMAF_CUDA_FUZZ_SKIP_KNOWN") != nullptr;
    return skip;
}

} // namespace vmaf_cuda_fuzz

// SPDX-License-Identifier: BSD-2-Clause-Patent
// Catch2 main shared by the test executables (v2: the runner is compiled here; v3: from
// its library). A test case without a single assertion fails (--warn NoAssertions: a
// test that checks nothing is not a pass). A test executable that cannot check anything
// on this machine (missing hardware or data) defines vmaf_cuda_test_skip_reason() to say
// why: it then exits 77, which meson counts as SKIP, and prints the reason.
#define CATCH_CONFIG_RUNNER
#include "catch.hpp"

#include <cstdio>
#include <cstring>
#include <vector>

/// The reason this executable cannot check anything here, or nullptr (the default).
extern "C" __attribute__((weak)) const char* vmaf_cuda_test_skip_reason(void) { return nullptr; }

int main(int argc, char* argv[]) {
    if (const char* why = vmaf_cuda_test_skip_reason()) {
        std::printf("SKIPPED: %s\n", why);
        return 77;
    }
    std::vector<char*> args(argv, argv + argc);
    bool warn = false;
    for (int i = 1; i < argc; ++i)
        warn = warn || !std::strcmp(argv[i], "--warn") || !std::strcmp(argv[i], "-w");
    static char w[] = "--warn", na[] = "NoAssertions";
    if (!warn) {
        args.push_back(w);
        args.push_back(na);
    }
    return Catch::Session().run(int(args.size()), args.data());
}

// SPDX-License-Identifier: BSD-2-Clause-Patent
// Suite `api` (CPU): engine/frame_trace.h, the per-frame timing of VMAF_CUDA_TRACE: off
// without the variable (no file, times 0); with it, one TSV per object in creation order
// (PATH, PATH.1, ...), rows as added, no file for an object without rows; and
// tools/frame_trace.py (VMAF_CUDA_FRAME_TRACE_PY) reads what it writes.

#include "catch.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

#include "frame_trace.h"

using vmaf_cuda::engine::FrameTrace;

namespace {
std::string slurp(const std::string& path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}
bool exists(const std::string& path) { return std::ifstream(path).good(); }
} // namespace

TEST_CASE("frame trace: off without VMAF_CUDA_TRACE, one TSV per session with it", "[frame_trace]") {
    char dir[] = "/tmp/vmaf_cuda_trace_XXXXXX";
    REQUIRE(mkdtemp(dir) != nullptr);
    const std::string path = std::string(dir) + "/t.tsv";
    unsetenv("VMAF_CUDA_TRACE");
    {
        FrameTrace t;
        CHECK_FALSE(t.on());
        CHECK(t.now() == 0);
        t.add({0, 1, 2, 3, 4, 5, 6});
    }
    CHECK_FALSE(exists(path));

    REQUIRE(setenv("VMAF_CUDA_TRACE", path.c_str(), 1) == 0);
    {
        FrameTrace a, b, empty;
        REQUIRE(a.on());
        const std::int64_t t0 = a.now();
        CHECK(t0 >= 0);
        // 40 frames, 2 ms apart, 3 ms on the device, the last 5 blocked 1 ms
        for (std::uint64_t i = 0; i < 40; ++i) {
            const std::int64_t s = 1000 + std::int64_t(i) * 2000;
            a.add({i, s, s + 100, s + 3100, s + 3200, s + 3300, i >= 35 ? 1000 : 0});
        }
        b.add({7, 10, 20, 30, 40, 50, 0});
        CHECK(a.now() >= t0);
    }
    unsetenv("VMAF_CUDA_TRACE");
    const std::string first = slurp(path);
    CHECK(first.rfind("index\tsubmit_begin\tsubmit_end\tready\tdone\tretrieved\twaited\n", 0) == 0);
    CHECK(first.find("\n0\t1000\t1100\t4100\t4200\t4300\t0\n") != std::string::npos);
    CHECK(first.find("\n39\t79000\t79100\t82100\t82200\t82300\t1000\n") != std::string::npos);
    CHECK(slurp(path + ".1") ==
          "index\tsubmit_begin\tsubmit_end\tready\tdone\tretrieved\twaited\n7\t10\t20\t30\t40\t50\t0\n");
    CHECK_FALSE(exists(path + ".2")); // no rows: no file

    if (const char* py = std::getenv("VMAF_CUDA_FRAME_TRACE_PY")) {
        const std::string out = std::string(dir) + "/summary.txt";
        const std::string cmd = std::string("python3 ") + py + " --skip 0 " + path + " > " + out;
        REQUIRE(std::system(cmd.c_str()) == 0);
        const std::string s = slurp(out);
        INFO(s);
        CHECK(s.find("frames 40: arrival 500.0 fps, hand-on 500.0 fps") != std::string::npos);
        CHECK(s.find("device          3.000    3.000    3.000") != std::string::npos);
        CHECK(s.find("in 5 hand-ons") != std::string::npos);
    } else {
        WARN("VMAF_CUDA_FRAME_TRACE_PY not set: tools/frame_trace.py not run");
    }
    std::remove((path + ".1").c_str());
    std::remove(path.c_str());
    std::remove((std::string(dir) + "/summary.txt").c_str());
    rmdir(dir);
}

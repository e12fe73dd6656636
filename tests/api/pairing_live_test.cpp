// SPDX-License-Identifier: BSD-2-Clause-Patent
// The pairing watch's live rules (API 8, engine/pairing_live.cpp): which main frames a
// live run scores, the notices word for word, and the NDJSON event line
// (vmaf_cuda_live_event()). The filter suite's live_cases.py checks the same through
// ffmpeg on BBB's frames.

#include "vmaf_cuda.h"

#include "catch.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

/// A watch in ticks of 1/240 s (10 ticks a frame at 24 fps); live rules unless 0.
struct Live {
    VmafCudaPairing* p = nullptr;
    explicit Live(long timeout_ticks) {
        VmafCudaPairingSettings s{1, 240, 24, 1, 24, 1, nullptr, 0};
        REQUIRE(vmaf_cuda_pairing_open(&p, &s) == VMAF_CUDA_OK);
        if (timeout_ticks) REQUIRE(vmaf_cuda_pairing_set_live(p, timeout_ticks) == VMAF_CUDA_OK);
    }
    ~Live() { vmaf_cuda_pairing_close(p); }
    void frames(int input, std::vector<long> pts, long dur = 10) {
        for (long t : pts) REQUIRE(vmaf_cuda_pairing_frame(p, input, t, dur) == VMAF_CUDA_OK);
    }
    /// The verdict for a main frame at `main` paired with the reference frame at `ref`
    /// (< 0: none), whose next frame is at `next` (-1: unknown, -2: the reference ended);
    /// records the event as the filter does. Returns the reason ("" scored).
    std::string check(long main, long ref, long next, VmafCudaPairingNotice& n) {
        VmafCudaPairingEvent e{main, main, ref >= 0, ref >= 0 ? ref : VMAF_CUDA_NOPTS,
                               next == -2, next >= 0, next >= 0 ? next : 0, 0};
        const char* reason = nullptr;
        const int r = vmaf_cuda_pairing_live_check(p, &e, &n, &reason);
        REQUIRE(r >= 0);
        REQUIRE((r == 1) == (reason == nullptr));
        if (!r) {
            e.has_ref = 0;
            e.index = -1;
        }
        REQUIRE(vmaf_cuda_pairing_event(p, &e, nullptr, 0) >= 0);
        return reason ? reason : "";
    }
    std::string report() const {
        const int n = vmaf_cuda_pairing_report(p, nullptr, 0);
        std::string s(std::size_t(n) + 1, '\0');
        vmaf_cuda_pairing_report(p, s.data(), s.size());
        s.resize(std::size_t(n));
        return s;
    }
};

} // namespace

TEST_CASE("live rules: a stall longer than the timeout is told, its frames unscored", "[api][pairing]") {
    Live w(240); // 1 s
    // reference frames 0..3, then nothing until frame 40 (a 3.7 s gap); main 0..41
    w.frames(1, {0, 10, 20, 30, 400, 410});
    std::vector<long> main;
    for (long t = 0; t <= 410; t += 10) main.push_back(t);
    w.frames(0, main);
    VmafCudaPairingNotice n;
    for (long t = 0; t <= 30; t += 10) {
        CHECK(w.check(t, t, t + 10 <= 30 ? t + 10 : 400, n).empty());
        CHECK(n.event[0] == 0);
    }
    CHECK(w.check(40, 30, 400, n) == "reference_stalled");
    CHECK(std::string(n.event) == "stalled");
    CHECK(std::string(n.input) == "reference");
    CHECK(n.pts == 40);
    CHECK(std::string(n.message) ==
          "the reference has no frame between 0.125 s and 1.666667 s (more than 1 s, "
          "input_timeout): main frames from 0.166667 s pass through unscored until it delivers "
          "again\n");
    for (long t = 50; t < 400; t += 10) {
        CHECK(w.check(t, 30, 400, n) == "reference_stalled");
        CHECK(n.event[0] == 0);
    }
    CHECK(w.check(400, 400, 410, n).empty());
    CHECK(std::string(n.event) == "resumed");
    CHECK(std::string(n.message) ==
          "the reference delivers again (its frame at 1.666667 s, main at 1.666667 s): 36 main "
          "frames from 0.166667 s to 1.625 s passed through unscored\n");
    CHECK(w.check(410, 410, -2, n).empty());
    CHECK(n.event[0] == 0);
    CHECK(w.report() ==
          "36 main frames passed through unscored where the reference had no frame of their "
          "time (gaps in it: dropped frames, a stall, the frames a stop cut off; input_timeout): "
          "in neither the log nor the score\n");
}

TEST_CASE("live rules: dropped frames unscored without a notice; rounding and rates are no gap",
          "[api][pairing]") {
    Live w(240);
    VmafCudaPairingNotice n;
    // reference frame 20 missing: main 20 is past frame 10's duration
    w.frames(1, {0, 10, 30});
    w.frames(0, {0, 10, 20, 30});
    CHECK(w.check(0, 0, 10, n).empty());
    CHECK(w.check(10, 10, 30, n).empty());
    CHECK(w.check(20, 10, 30, n) == "reference_gap");
    CHECK(n.event[0] == 0);
    CHECK(w.check(30, 30, -1, n).empty());
    CHECK(n.event[0] == 0); // (a short gap ends without a notice)

    Live r(240);
    // the next reference frame 1 tick after the main frame (half a frame: rounding)
    r.frames(1, {0, 41});
    r.frames(0, {0, 40});
    CHECK(r.check(0, 0, 41, n).empty());
    CHECK(r.check(40, 0, 41, n) == "reference_gap"); // 4 frames past: a gap
    Live q(240);
    q.frames(1, {0, 11});
    q.frames(0, {0, 10});
    CHECK(q.check(0, 0, 11, n).empty());
    CHECK(q.check(10, 0, 11, n).empty()); // rounded: the same moment

    // a main frame rate twice the reference's: frames within the reference's duration
    Live h(240);
    h.frames(1, {0, 10, 20}, 10);
    h.frames(0, {0, 5, 10, 15, 20}, 5);
    for (long t = 0; t <= 20; t += 5) CHECK(h.check(t, t / 10 * 10, t / 10 * 10 + 10, n).empty());
    CHECK(h.report().empty());
}

TEST_CASE("live rules: the reference's end, shortest=1, the main's gap, without live rules",
          "[api][pairing]") {
    VmafCudaPairingNotice n;
    Live w(240);
    w.frames(1, {0, 10});
    w.frames(0, {0, 10, 20, 30});
    CHECK(w.check(0, 0, 10, n).empty());
    CHECK(w.check(10, 10, -2, n).empty());
    CHECK(w.check(20, -1, -2, n) == "reference_ended");
    CHECK(std::string(n.event) == "ended");
    CHECK(std::string(n.message) ==
          "the reference ended after its frame at 0.0416667 s: main frames from 0.0833333 s on "
          "pass through unscored (input_timeout: an input's end is not repeated)\n");
    CHECK(w.check(30, -1, -2, n) == "reference_ended");
    CHECK(n.event[0] == 0);
    REQUIRE(vmaf_cuda_pairing_live_end(w.p, 1, &n) == VMAF_CUDA_OK);
    CHECK(n.event[0] == 0); // told already

    Live s(240);
    s.frames(1, {0});
    s.frames(0, {0, 10});
    CHECK(s.check(0, 0, -2, n).empty());
    REQUIRE(vmaf_cuda_pairing_live_end(s.p, 1, &n) == VMAF_CUDA_OK);
    CHECK(std::string(n.event) == "ended");
    CHECK(std::string(n.message) == "the reference ended after its frame at 0 s while the main "
                                    "input had frames left: the run ends here (shortest=1 or "
                                    "eof_action=endall)\n");

    Live m(240);
    m.frames(1, {0, 10, 500});
    m.frames(0, {0, 500});
    CHECK(m.check(0, 0, 10, n).empty());
    CHECK(m.check(500, 500, -1, n).empty());
    CHECK(std::string(n.event) == "resumed");
    CHECK(std::string(n.input) == "main");
    CHECK(std::string(n.message) == "the main input had no frame between 0.0416667 s and 2.083333 s "
                                    "(more than 1 s, input_timeout): the reference frames "
                                    "between were not scored\n");

    Live off(0); // no live rules: framesync's default, scored as paired
    off.frames(1, {0});
    off.frames(0, {0, 10, 20});
    CHECK(off.check(0, 0, -1, n).empty());
    CHECK(off.check(500, 0, -1, n).empty());
    CHECK(off.check(20, -1, -2, n) == "reference_ended");
    CHECK(n.event[0] == 0);
    REQUIRE(vmaf_cuda_pairing_live_end(off.p, 1, &n) == VMAF_CUDA_OK);
    CHECK(n.event[0] == 0);
}

TEST_CASE("live rules: the reference's last frame covers its duration; a nearer later frame "
          "across a gap; a timeout below a frame; a main gap inside a reference stall",
          "[api][pairing]") {
    VmafCudaPairingNotice n;
    // a main at twice the reference's rate: the last reference frame covers two main
    // frames (framesync repeats it after its end; the live rules judge by its duration)
    Live h(240);
    h.frames(1, {0, 10}, 10);
    h.frames(0, {0, 5, 10, 15, 20}, 5);
    CHECK(h.check(0, 0, 10, n).empty());
    CHECK(h.check(5, 0, 10, n).empty());
    CHECK(h.check(10, 10, -2, n).empty());
    CHECK(h.check(15, 10, -2, n).empty());
    CHECK(n.event[0] == 0);
    CHECK(h.check(20, 10, -2, n) == "reference_ended");
    CHECK(std::string(n.event) == "ended");

    // ts_sync_mode=nearest pairs the frame after a gap when it is nearer: a stand-in too
    Live s(240);
    s.frames(1, {0, 10, 50}, 10);
    s.frames(0, {0, 10, 20, 30, 40, 50}, 10);
    CHECK(s.check(0, 0, 10, n).empty());
    CHECK(s.check(10, 10, 50, n).empty());
    CHECK(s.check(20, 10, 50, n) == "reference_gap");
    CHECK(s.check(30, 50, 60, n) == "reference_gap");
    CHECK(s.check(40, 50, 60, n) == "reference_gap");
    CHECK(s.check(50, 50, 60, n).empty());
    CHECK(n.event[0] == 0);

    // a timeout below one frame: frames one after another are no gap of the main
    Live t(4);
    t.frames(1, {0, 10, 20}, 10);
    t.frames(0, {0, 10, 20}, 10);
    for (long f = 0; f <= 20; f += 10) {
        CHECK(t.check(f, f, f + 10, n).empty());
        CHECK(n.event[0] == 0);
    }

    // the main's gap ends where a reference stall starts: told at the next event
    Live g(100);
    g.frames(1, {0, 10, 400}, 10);
    g.frames(0, {0, 300, 310, 400}, 10);
    CHECK(g.check(0, 0, 10, n).empty());
    CHECK(g.check(300, 10, 400, n) == "reference_stalled");
    CHECK(std::string(n.event) == "stalled");
    CHECK(g.check(310, 10, 400, n) == "reference_stalled");
    CHECK(std::string(n.event) == "resumed");
    CHECK(std::string(n.input) == "main");
    CHECK(std::string(n.message).rfind("the main input had no frame between 0.0416667 s and 1.25 s", 0) == 0);
    CHECK(g.check(400, 400, -2, n).empty());
    CHECK(std::string(n.event) == "resumed");
    CHECK(std::string(n.input) == "reference");

    // the same at the main's last frame: the main's gap is told at the end
    Live e(100);
    e.frames(1, {0, 10, 400}, 10);
    e.frames(0, {0, 400}, 10);
    CHECK(e.check(0, 0, 10, n).empty());
    CHECK(e.check(400, 400, -2, n).empty()); // (no stand-in: the reference is there again)
    CHECK(std::string(n.input) == "main");
    Live f(100);
    f.frames(1, {0, 10, 400}, 10);
    f.frames(0, {0, 300}, 10);
    CHECK(f.check(0, 0, 10, n).empty());
    CHECK(f.check(300, 10, 400, n) == "reference_stalled");
    CHECK(std::string(n.event) == "stalled");
    REQUIRE(vmaf_cuda_pairing_live_end(f.p, 0, &n) == VMAF_CUDA_OK);
    CHECK(std::string(n.event) == "resumed");
    CHECK(std::string(n.input) == "main");
    REQUIRE(vmaf_cuda_pairing_live_end(f.p, 0, &n) == VMAF_CUDA_OK);
    CHECK(n.event[0] == 0);
}

TEST_CASE("live rules: errors and saturating arithmetic", "[api][pairing]") {
    VmafCudaPairingNotice n;
    VmafCudaPairingEvent e{};
    CHECK(vmaf_cuda_pairing_set_live(nullptr, 1) == VMAF_CUDA_EINVAL);
    Live w(0);
    CHECK(vmaf_cuda_pairing_set_live(w.p, 0) == VMAF_CUDA_EINVAL);
    CHECK(vmaf_cuda_pairing_set_live(w.p, -5) == VMAF_CUDA_EINVAL);
    CHECK(vmaf_cuda_pairing_live_check(w.p, nullptr, &n, nullptr) == VMAF_CUDA_EINVAL);
    CHECK(vmaf_cuda_pairing_live_check(w.p, &e, nullptr, nullptr) == VMAF_CUDA_EINVAL);
    CHECK(vmaf_cuda_pairing_live_end(nullptr, 1, &n) == VMAF_CUDA_EINVAL);
    Live x(INT64_MAX);
    x.frames(1, {INT64_MIN + 1, INT64_MAX - 1}, INT64_MAX);
    x.frames(0, {INT64_MIN + 1, INT64_MAX - 1}, 1);
    const char* reason = nullptr;
    for (const std::int64_t t : {INT64_MIN + 1, INT64_MAX - 1}) {
        VmafCudaPairingEvent ev{t, t, 1, t, 0, 1, INT64_MAX - 1, 0};
        CHECK(vmaf_cuda_pairing_live_check(x.p, &ev, &n, &reason) == 1);
        CHECK(vmaf_cuda_pairing_event(x.p, &ev, nullptr, 0) >= 0);
        // a main frame far past a reference frame of unbounded duration: no overflow
        VmafCudaPairingEvent far{INT64_MAX, INT64_MAX, 1, INT64_MIN + 1, 0, 1, INT64_MAX, 0};
        CHECK(vmaf_cuda_pairing_live_check(x.p, &far, &n, &reason) == 1);
    }
}

TEST_CASE("vmaf_cuda_live_event: an event line in order with the frame lines", "[api][live]") {
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("vmaf_cuda_event_" + std::to_string(getpid()) + ".ndjson")).string();
    VmafCudaSettings s;
    vmaf_cuda_default_settings(&s);
    s.width = 48;
    s.height = 40;
    s.backend = VMAF_CUDA_BACKEND_CPU;
    VmafCudaSession* vs = nullptr;
    REQUIRE(vmaf_cuda_open(&vs, &s, nullptr, 0) == VMAF_CUDA_OK);
    VmafCudaLiveSettings cfg;
    vmaf_cuda_live_default_settings(&cfg);
    cfg.ndjson_path = path.c_str();
    cfg.tb_num = 1;
    cfg.tb_den = 24;
    VmafCudaLive* l = nullptr;
    REQUIRE(vmaf_cuda_live_open(&l, vs, &cfg, nullptr, 0) == VMAF_CUDA_OK);
    CHECK(vmaf_cuda_live_event(l, nullptr, "main", 0, 1, "x") == VMAF_CUDA_EINVAL);
    CHECK(vmaf_cuda_live_event(l, "stalled", "main", 0, 1, nullptr) == VMAF_CUDA_EINVAL);
    CHECK(vmaf_cuda_live_event(nullptr, "stalled", nullptr, 0, 0, "x") == VMAF_CUDA_EINVAL);
    const char* names[] = {"vmaf"};
    double v = 90.5;
    VmafCudaFrameScores fs{0, 1, names, &v};
    VmafCudaLiveFrame out;
    REQUIRE(vmaf_cuda_live_frame(l, &fs, 12, 1, &out) == VMAF_CUDA_OK);
    REQUIRE(vmaf_cuda_live_event(l, "stalled", "reference", 36, 1,
                                 "the \"reference\" has no frame\n") == VMAF_CUDA_OK);
    REQUIRE(vmaf_cuda_live_event(l, "ended", nullptr, 0, 0, "over") == VMAF_CUDA_OK);
    REQUIRE(vmaf_cuda_live_finish(l, vs, 1) == VMAF_CUDA_OK);
    vmaf_cuda_live_close(l);
    vmaf_cuda_close(vs);
    std::ifstream f(path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(f, line);) lines.push_back(line);
    std::remove(path.c_str());
    REQUIRE(lines.size() == 4);
    CHECK(lines[0].rfind("{\"type\":\"frame\",\"frameNum\":0,\"pts_time\":0.500000,", 0) == 0);
    CHECK(lines[1] == "{\"type\":\"event\",\"event\":\"stalled\",\"input\":\"reference\","
                      "\"pts_time\":1.500000,\"message\":\"the \\\"reference\\\" has no frame\"}");
    CHECK(lines[2] == "{\"type\":\"event\",\"event\":\"ended\",\"pts_time\":null,"
                      "\"message\":\"over\"}");
    CHECK(lines[3].rfind("{\"type\":\"pooled\",\"frames\":1,", 0) == 0);
}

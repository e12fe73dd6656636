// SPDX-License-Identifier: BSD-2-Clause-Patent
// The pairing watch (vmaf_cuda_pairing_*(), engine/pairing.cpp): the counts and the
// end-of-stream warnings of typical misalignments, word for word as the filter logs them,
// and FFmpeg's timestamp format. The filter suite checks the same warnings through ffmpeg.

#include "vmaf_cuda.h"

#include "pairing.h"

#include "catch.hpp"

#include <string>
#include <vector>

namespace {

using vmaf_cuda::engine::time_string;

struct Watch {
    VmafCudaPairing* p = nullptr;
    Watch(int tb_num, int tb_den, int mr, int rr, const char* prefix = nullptr) {
        VmafCudaPairingSettings s{tb_num, tb_den, mr, mr ? 1 : 0, rr, rr ? 1 : 0, prefix};
        REQUIRE(vmaf_cuda_pairing_open(&p, &s) == VMAF_CUDA_OK);
    }
    ~Watch() { vmaf_cuda_pairing_close(p); }
    void frames(int input, std::vector<long> pts, long dur) {
        for (long t : pts) REQUIRE(vmaf_cuda_pairing_frame(p, input, t, dur) == VMAF_CUDA_OK);
    }
    /// A pair (ref >= 0) or an unscored main frame (ref < 0); next < 0: no next reference
    /// frame known, next == -2: the reference ended.
    int event(long main, long ref, long next, long index = 0, std::string* line = nullptr) {
        VmafCudaPairingEvent e{main, main, ref >= 0, ref >= 0 ? ref : VMAF_CUDA_NOPTS,
                               next == -2, next >= 0, next >= 0 ? next : 0, index};
        char buf[256];
        const int r = vmaf_cuda_pairing_event(p, &e, buf, sizeof buf);
        if (line) *line = buf;
        return r;
    }
    std::string report() const {
        const int n = vmaf_cuda_pairing_report(p, nullptr, 0);
        REQUIRE(n >= 0);
        std::string s(std::size_t(n) + 1, '\0');
        REQUIRE(vmaf_cuda_pairing_report(p, s.data(), s.size()) == n);
        s.resize(std::size_t(n));
        return s;
    }
};

} // namespace

TEST_CASE("pairing: FFmpeg's timestamp strings", "[api][pairing]") {
    CHECK(time_string(vmaf_cuda::engine::kNoPts, 1, 25) == "NOPTS");
    CHECK(time_string(0, 1, 25) == "0");
    CHECK(time_string(10, 1, 25) == "0.4");
    CHECK(time_string(-1, 1, 25) == "-0.04");
    CHECK(time_string(1, 1, 3) == "0.333333");
    CHECK(time_string(3, 1, 2) == "1.5");
    CHECK(time_string(25000, 1, 25) == "1000");
    CHECK(time_string(1, 1, 90000) == "0.0000111111"); // 6 significant digits below 1 s
    CHECK(time_string(INT64_MAX, 1000000000, 1).size() <= 31);  // AV_TS_MAX_STRING_SIZE - 1
}

TEST_CASE("pairing: aligned inputs give no warning, each event a debug line", "[api][pairing]") {
    Watch w(1, 25, 25, 25, "rendition 1: ");
    w.frames(0, {0, 1, 2}, 1);
    w.frames(1, {0, 1, 2}, 1);
    std::string line;
    CHECK(w.event(0, 0, 1, 0, &line) == 1); // the first pair
    CHECK(line == "rendition 1: pair 0: main 0 s, reference 0 s");
    CHECK(w.event(1, 1, 2, 1, &line) == 0);
    CHECK(line == "rendition 1: pair 1: main 0.04 s, reference 0.04 s");
    CHECK(w.event(2, 2, -2, 2) == 0);
    CHECK(w.report().empty());
}

TEST_CASE("pairing: the reference ends first and is repeated", "[api][pairing]") {
    Watch w(1, 25, 25, 25);
    w.frames(0, {0, 1, 2, 3, 4}, 1);
    w.frames(1, {0, 1, 2}, 1);
    w.event(0, 0, 1);
    w.event(1, 1, 2);
    w.event(2, 2, -2);
    w.event(3, 2, -2);
    w.event(4, 2, -2);
    CHECK(w.report() == "the reference ended first: its last frame was repeated for 2 more main "
                        "frames (eof_action=repeat); add shortest=1 to stop at the end of the "
                        "shorter input\n");
}

TEST_CASE("pairing: the main ends first; main frames after the reference's end", "[api][pairing]") {
    Watch w(1, 25, 25, 25);
    w.frames(0, {0, 1}, 1);
    w.frames(1, {0, 1, 2, 3}, 1);
    w.event(0, 0, 1);
    w.event(1, 1, 2);
    VmafCudaPairingEvent e{2, 1, 1, 2, 0, 1, 3, 2}; // main's last frame again, at 2 and 3
    REQUIRE(vmaf_cuda_pairing_event(w.p, &e, nullptr, 0) == 0);
    e = {3, 1, 1, 3, 1, 0, 0, 3};
    REQUIRE(vmaf_cuda_pairing_event(w.p, &e, nullptr, 0) == 0);
    CHECK(w.report() == "the main input ended first: its last frame was paired with 2 more "
                        "reference frames; add shortest=1 to stop at the end of the shorter "
                        "input\n");

    Watch v(1, 25, 25, 25);
    v.frames(0, {0, 1, 2}, 1);
    v.frames(1, {0}, 1);
    v.event(0, 0, -2);
    v.event(1, -1, -1);
    v.event(2, -1, -1);
    CHECK(v.report() == "2 main frames after the end of the reference passed through unscored "
                        "(eof_action=pass or repeatlast=0): in neither the log nor the score; "
                        "shortest=1 ends the output with the reference\n");
}

TEST_CASE("pairing: a late reference; a reference that never came", "[api][pairing]") {
    Watch w(1, 25, 25, 25);
    w.frames(0, {0, 1, 2, 3}, 1);
    w.frames(1, {2, 3}, 1);
    std::string line;
    CHECK(w.event(0, -1, -1, -1, &line) == 0);
    CHECK(line == "unscored: main 0 s (no reference frame)");
    w.event(1, -1, -1);
    CHECK(w.event(2, 2, 3) == 1);
    w.event(3, 3, -2);
    CHECK(w.report() == "the inputs start at different times: main at 0 s, reference at 0.08 s "
                        "(2 main frames passed through unscored and 0 reference frames never "
                        "paired before the first pair); if both start with the same picture, "
                        "add setpts=PTS-STARTPTS to both inputs\n");

    Watch none(1, 25, 25, 0);
    none.frames(0, {0, 1, 2}, 1);
    for (long t : {0, 1, 2}) none.event(t, -1, -1);
    CHECK(none.report() == "the reference delivered no frame: the 3 main frames passed "
                           "through unscored\n");
}

TEST_CASE("pairing: gaps, frame rates, offsets of a part of a frame", "[api][pairing]") {
    // main drops frames 1 and 3 at equal rates: reference frames never paired
    Watch gaps(1, 25, 25, 25);
    gaps.frames(0, {0, 2, 4}, 1);
    gaps.frames(1, {0, 1, 2, 3, 4}, 1);
    gaps.event(0, 0, 1);
    gaps.event(2, 2, 3);
    gaps.event(4, 4, -2);
    CHECK(gaps.report() == "2 reference frames never paired with a main frame (gaps in the "
                           "main's timestamps: dropped frames or a variable frame rate); the "
                           "scores leave them out\n");

    // 25 fps main against a 50 fps reference: one rate warning with the count
    Watch rates(1, 50, 25, 50);
    rates.frames(0, {0, 2, 4}, 2);
    rates.frames(1, {0, 1, 2, 3, 4, 5}, 1);
    rates.event(0, 0, 1);
    rates.event(2, 2, 3);
    rates.event(4, 4, 5);
    CHECK(rates.report() == "frame rates differ: main 25/1 (25.000 fps), reference 50/1 "
                            "(50.000 fps); each main frame is paired with the last reference "
                            "frame at or before its timestamp; 2 reference frames between "
                            "pairs were never paired\n");

    // timestamps 30 ms apart at 25 fps (-copyts): each pair had a nearer next reference
    Watch off(1, 1000, 25, 25);
    off.frames(0, {30, 70, 110}, 40);
    off.frames(1, {0, 40, 80, 120}, 40);
    off.event(30, 0, 40);
    off.event(70, 40, 80);
    off.event(110, 80, 120);
    CHECK(off.report() ==
          "the inputs start at different times: main at 0.03 s, reference at 0 s (0 main "
          "frames passed through unscored and 0 reference frames never paired before the "
          "first pair); if both start with the same picture, add setpts=PTS-STARTPTS to both "
          "inputs\n"
          "3 of 3 pairs took an earlier reference frame although the next one was nearer in "
          "time: the inputs' timestamps are 0.03 s apart, not a whole number of frames (main "
          "starts at 0.03 s, reference at 0 s, e.g. -copyts keeping each input's own start); "
          "add setpts=PTS-STARTPTS to both inputs if they start with the same picture, or "
          "ts_sync_mode=nearest to pair each main frame with the nearest reference frame\n");
}

TEST_CASE("pairing: two time bases (MP4's 1/24000 s, MKV's 1 ms) are no gap", "[api][pairing]") {
    // 23.976 fps: main at k * 1001 ticks of 1/24000 s; the reference's timestamps rounded
    // to whole milliseconds (MKV), some of them past the main's: framesync pairs those main
    // frames with the reference frame before, and passes over the rounded-up one
    for (long ref_dur_ms : {41L, 42L}) {
        Watch w(1, 24000, 0, 0);
        std::vector<long> main_pts, ref_pts;
        for (long k = 0; k < 48; k++) {
            main_pts.push_back(k * 1001);
            ref_pts.push_back(24 * ((k * 1001 + 12) / 24)); // round(k * 1001 / 24) ms
        }
        w.frames(0, main_pts, 1001);
        w.frames(1, ref_pts, 24 * ref_dur_ms);
        long nearer = 0;
        for (long m : main_pts) {
            std::size_t j = 0;
            while (j + 1 < ref_pts.size() && ref_pts[j + 1] <= m) j++;
            const long next = j + 1 < ref_pts.size() ? ref_pts[j + 1] : -1;
            if (next >= 0 && next - m < m - ref_pts[j]) nearer++;
            w.event(m, ref_pts[j], next);
        }
        INFO("reference frame duration " << ref_dur_ms << " ms");
        REQUIRE(nearer > 0);
        CHECK(w.report() == std::to_string(nearer) + " of 48 pairs took an earlier reference "
                            "frame although the next one was nearer in time (timestamps "
                            "rounded to different time bases, e.g. MKV and MP4); "
                            "ts_sync_mode=nearest pairs each main frame with the nearest "
                            "reference frame\n");
    }
}

TEST_CASE("pairing: gaps in the reference; ts_sync_mode=nearest's words", "[api][pairing]") {
    // reference frames 5 and 6 dropped: main 5 and 6 meet reference 4 again (main 6 had a
    // nearer next one, 7: the gaps' doing, not two time bases)
    Watch gaps(1, 25, 25, 25);
    gaps.frames(0, {3, 4, 5, 6, 7}, 1);
    gaps.frames(1, {3, 4, 7}, 1);
    gaps.event(3, 3, 4);
    gaps.event(4, 4, 7);
    gaps.event(5, 4, 7);
    gaps.event(6, 4, 7);
    gaps.event(7, 7, -2);
    CHECK(gaps.report() == "2 main frames paired with a reference frame already paired before, "
                           "past its duration (gaps in the reference's timestamps: dropped "
                           "frames or a variable frame rate), so scored against an older "
                           "picture; ts_sync_mode=nearest pairs each main frame with the "
                           "nearest reference frame\n");
    // a 50 fps main meets each 25 fps reference frame twice, within its duration: no gap
    Watch fast(1, 50, 50, 25);
    fast.frames(0, {0, 1, 2, 3}, 1);
    fast.frames(1, {0, 2}, 2);
    fast.event(0, 0, 2);
    fast.event(1, 0, 2);
    fast.event(2, 2, -2);
    fast.event(3, 2, -2);
    CHECK(fast.report().find("already paired") == std::string::npos);
    // nearest mode: the rate warning says how it pairs
    VmafCudaPairing* p = nullptr;
    VmafCudaPairingSettings s{1, 50, 25, 1, 50, 1, nullptr, 1};
    REQUIRE(vmaf_cuda_pairing_open(&p, &s) == VMAF_CUDA_OK);
    VmafCudaPairingEvent e{0, 0, 1, 0, 0, 1, 1, 0};
    REQUIRE(vmaf_cuda_pairing_frame(p, 0, 0, 2) == VMAF_CUDA_OK);
    REQUIRE(vmaf_cuda_pairing_frame(p, 1, 0, 1) == VMAF_CUDA_OK);
    REQUIRE(vmaf_cuda_pairing_event(p, &e, nullptr, 0) == 1);
    char buf[512];
    REQUIRE(vmaf_cuda_pairing_report(p, buf, sizeof buf) > 0);
    CHECK(std::string(buf) == "frame rates differ: main 25/1 (25.000 fps), reference 50/1 "
                              "(50.000 fps); each main frame is paired with the nearest "
                              "reference frame\n");
    vmaf_cuda_pairing_close(p);
}

TEST_CASE("pairing: errors", "[api][pairing]") {
    VmafCudaPairing* p = nullptr;
    VmafCudaPairingSettings s{0, 25, 0, 0, 0, 0, nullptr};
    CHECK(vmaf_cuda_pairing_open(&p, &s) == VMAF_CUDA_EINVAL);
    CHECK(p == nullptr);
    CHECK(vmaf_cuda_pairing_open(nullptr, &s) == VMAF_CUDA_EINVAL);
    s.tb_num = 1;
    REQUIRE(vmaf_cuda_pairing_open(&p, &s) == VMAF_CUDA_OK);
    CHECK(vmaf_cuda_pairing_frame(p, 2, 0, 1) == VMAF_CUDA_EINVAL);
    CHECK(vmaf_cuda_pairing_event(p, nullptr, nullptr, 0) == VMAF_CUDA_EINVAL);
    CHECK(vmaf_cuda_pairing_report(nullptr, nullptr, 0) == VMAF_CUDA_EINVAL);
    CHECK(vmaf_cuda_pairing_report(p, nullptr, 0) == 0);
    vmaf_cuda_pairing_close(p);
    vmaf_cuda_pairing_close(nullptr);
}

TEST_CASE("pairing: timestamp discontinuities on the continuous timeline (API 7)", "[api][pairing]") {
    // 25 fps in ticks of 1/25 s: main resets to 0 at its frame 20, then jumps ahead 100 s
    Watch w(1, 25, 25, 25);
    auto place = [&](int input, long pts, std::string* line) {
        int64_t off = -1;
        char buf[512];
        const int r = vmaf_cuda_pairing_timeline(w.p, input, pts, 1, &off, buf, sizeof buf);
        REQUIRE(r >= 0);
        *line = r ? buf : "";
        return off;
    };
    std::string line;
    for (long t = 0; t < 20; t++) {
        CHECK(place(0, t, &line) == 0);
        CHECK(line.empty());
    }
    CHECK(place(0, 0, &line) == 20); // frame 20 at 0: follows on at 20
    CHECK(line == "the main input's timestamps go back from 0.76 s to 0 s at its frame 20 (a "
                  "reset or a wrap): its frames from there are paired as if they followed on "
                  "at 0.8 s\n");
    CHECK(place(0, 1, &line) == 20);
    CHECK(line.empty());
    // two frames out of order (22 before 21), a repeated timestamp: no reset, kept
    CHECK(place(0, 3, &line) == 20);
    CHECK(place(0, 2, &line) == 20);
    CHECK(place(0, 2, &line) == 20);
    CHECK(place(0, 4, &line) == 20);
    CHECK(line.empty());
    // 100 s ahead (2500 ticks past the previous frame's end): warned, kept
    CHECK(place(0, 2505, &line) == 20);
    CHECK(line == "the main input's timestamps jump ahead by 100 s at its frame 26 (from 0.96 s "
                  "to 101 s): frames lost or a stall; paired by its timestamps\n");
    // a gap of 9 frames (0.36 s) is not a discontinuity; the reference has its own timeline
    CHECK(place(0, 2515, &line) == 20);
    CHECK(line.empty());
    CHECK(place(1, 30, &line) == 0);
    CHECK(place(1, 3, &line) == 28);
    CHECK(line.find("the reference input's timestamps go back from 1.2 s to 0.12 s at its frame 1") == 0);
    // no timestamp: the offset only; extremes saturate instead of overflowing
    CHECK(place(1, VMAF_CUDA_NOPTS, &line) == 28);
    CHECK(place(1, INT64_MIN + 1, &line) >= 0);
    CHECK(place(1, INT64_MAX, &line) >= 0);
    // the widest jump ahead: from the lowest timestamp to the highest, no overflow
    Watch wide(1, 25, 25, 25);
    int64_t o = -1;
    REQUIRE(vmaf_cuda_pairing_timeline(wide.p, 0, INT64_MIN + 1, 1, &o, nullptr, 0) == 0);
    CHECK(vmaf_cuda_pairing_timeline(wide.p, 0, INT64_MAX, 1, &o, nullptr, 0) == 1);
    CHECK(o == 0);
    int64_t off;
    CHECK(vmaf_cuda_pairing_timeline(nullptr, 0, 0, 1, &off, nullptr, 0) == VMAF_CUDA_EINVAL);
    CHECK(vmaf_cuda_pairing_timeline(w.p, 2, 0, 1, &off, nullptr, 0) == VMAF_CUDA_EINVAL);
    CHECK(vmaf_cuda_pairing_timeline(w.p, 0, 0, 1, nullptr, nullptr, 0) == VMAF_CUDA_EINVAL);
}

TEST_CASE("pairing: a reset where frame durations are unknown", "[api][pairing]") {
    // durations 0 (unknown, as after setpts in FFmpeg 7.1): the step between the last
    // two frames places the frame after the reset
    Watch w(1, 12288, 24, 24);
    int64_t off = 0;
    char buf[512];
    for (long k = 0; k < 60; k++)
        REQUIRE(vmaf_cuda_pairing_timeline(w.p, 0, k * 512, 0, &off, buf, sizeof buf) == 0);
    REQUIRE(vmaf_cuda_pairing_timeline(w.p, 0, 0, 0, &off, buf, sizeof buf) == 1);
    CHECK(off == 60 * 512);
    CHECK(std::string(buf).find("followed on at 2.5 s\n") != std::string::npos);
}

TEST_CASE("pairing: a reset in a variable frame rate takes the current step", "[api][pairing]") {
    // 24 fps to frame 50, then 12 fps (durations left at 1/24 s, as setpts leaves them);
    // a reset to 0 at frame 60: placed one current step (2/24 s) after frame 59
    Watch w(1, 24, 0, 0);
    int64_t off = 0, pts = 0;
    for (long k = 0; k < 60; k++) {
        pts = k < 50 ? k : 50 + (k - 50) * 2;
        REQUIRE(vmaf_cuda_pairing_timeline(w.p, 0, pts, 1, &off, nullptr, 0) == 0);
    }
    REQUIRE(vmaf_cuda_pairing_timeline(w.p, 0, 0, 1, &off, nullptr, 0) == 1);
    CHECK(off == pts + 2);
}

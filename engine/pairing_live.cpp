// SPDX-License-Identifier: BSD-2-Clause-Patent
// The pairing watch's live rules (vmaf_cuda_pairing_set_live(), pairing.h): which main
// frames a live run scores, and what it tells the user at once. Decided on the frames'
// own timestamps and durations (a run gives the same result from a file as from the
// feed it was recorded from), with nothing standing in for a missing frame:
//  - an input's end is not repeated: main frames after the reference's last frame pass
//    through unscored (the synchroniser's eof_action=pass), told at the first of them;
//  - a main frame whose time lies past its reference frame's duration, where the
//    reference has a gap (dropped frames, a stall, the last frames a stop cut out of a
//    group of pictures), passes through unscored instead of being scored against the
//    older picture. The next reference frame within half a frame after a main frame
//    that lies within half a frame past the reference frame's end is rounding, not a
//    gap (two time bases). A gap longer than the timeout is told when it
//    starts and when the reference delivers again: the synchroniser knows the
//    reference's next frame before it pairs a main frame with the one before it, so the
//    gap's length is known at its first main frame.

#include "pairing.h"

#include <cinttypes>
#include <cstdio>

namespace vmaf_cuda::engine {

namespace {

const char* plural(std::int64_t n) { return n == 1 ? "" : "s"; }

} // namespace

std::int64_t PairingWatch::live_duration(int i, std::int64_t pts, std::int64_t last_pts,
                                         std::int64_t last_dur) const {
    for (const Seen& f : queue_[i]) {
        if (f.pts > pts) break;
        if (f.pts == pts && f.dur > 0) return f.dur;
    }
    return pts == last_pts && last_dur ? last_dur : tl_step_[i] > 0 ? tl_step_[i] : tl_dur_[i];
}

PairingWatch::Notice PairingWatch::live_notice(const PairingEvent& e, const char* event,
                                               const char* input, const std::string& text) const {
    return Notice{event, input, cfg_.prefix + text, e.pts};
}

std::string PairingWatch::live_check(const PairingEvent& e, Notice& n) {
    n = Notice{};
    if (!live()) return e.has_ref ? "" : e.ref_ended ? "reference_ended" : "no_reference";
    // The main input: a gap of more than the timeout between the end of its previous
    // frame and this one (told when it delivers again, after any notice of the
    // reference's at this frame: its output had no frames meanwhile).
    if (e.main_pts != kNoPts) {
        if (live_main_end_ != kNoPts && sat_sub(e.main_pts, live_main_end_) > live_timeout_) {
            live_main_notice_ = live_notice(
                e, "resumed", "main",
                "the main input had no frame between " + ts(live_main_end_) + " s and " +
                    ts(e.main_pts) + " s (more than " + ts(live_timeout_) +
                    " s, input_timeout): the reference frames between were not scored\n");
        }
        const std::int64_t mdur = live_duration(0, e.main_pts, last_main_pts_, last_main_dur_);
        live_main_end_ = mdur > 0 ? sat_add(e.main_pts, mdur) : e.main_pts;
    }
    const std::string why = live_reason(e, n);
    if (n.event.empty() && !live_main_notice_.event.empty()) {
        n = live_main_notice_;
        live_main_notice_ = Notice{};
    }
    return why;
}

std::string PairingWatch::live_reason(const PairingEvent& e, Notice& n) {
    const bool ended = e.ref_ended;
    if (!e.has_ref && !ended) return "no_reference";
    // the reference frame's duration (none: the reference ended before its first frame)
    const std::int64_t dur = e.has_ref ? live_duration(1, e.ref_pts, last_ref_pts_, last_ref_dur_) : 0;
    const std::int64_t half = dur / 2;
    const std::int64_t past = e.has_ref && e.main_pts != kNoPts && e.ref_pts != kNoPts
                                  ? sat_sub(e.main_pts, e.ref_pts) : 0;
    // Past the reference frame's end (the next reference frame within half a frame after
    // a main frame within half a frame past that end: the same moment, rounded to two
    // time bases), or half a frame or more before its start (ts_sync_mode=nearest pairs a
    // later frame across a gap).
    const bool rounded = e.has_next_ref && dur > 0 && e.next_ref_pts >= e.pts &&
                         sat_sub(e.next_ref_pts, e.pts) <= half && sat_sub(past, dur) < half;
    const bool stand_in = !e.has_ref || (dur > 0 && ((past >= dur && !rounded) || -past > half));
    if (!stand_in) {
        if (live_stalled_) {
            live_stalled_ = false;
            char count[64];
            std::snprintf(count, sizeof count, "%" PRId64 " main frame%s", live_run_,
                          plural(live_run_));
            n = live_notice(e, "resumed", "reference",
                 "the reference delivers again (its frame at " + ts(e.ref_pts) + " s, main at " +
                     ts(e.pts) + " s): " + count + " from " + ts(live_run_from_) + " s to " +
                     ts(live_run_to_) + " s passed through unscored\n");
        }
        return "";
    }
    if (ended) {
        // past the reference's last frame: its end is not repeated
        live_ref_over_ = true;
        if (!live_end_told_) {
            live_end_told_ = true;
            n = live_notice(e, "ended", "reference",
                 "the reference ended" +
                     (last_seen_[1] != kNoPts ? " after its frame at " + ts(last_seen_[1]) + " s"
                                              : std::string(" before its first frame")) +
                     ": main frames from " + ts(e.pts) +
                     " s on pass through unscored (input_timeout: an input's end is not "
                     "repeated)\n");
        }
        return "reference_ended";
    }
    const std::int64_t from = past >= 0 ? e.ref_pts : last_ref_pts_;
    const std::int64_t to = past >= 0 ? e.next_ref_pts : e.ref_pts;
    const bool long_gap = past >= 0 ? e.has_next_ref && e.next_ref_pts != INT64_MAX &&
                                          sat_sub(e.next_ref_pts, e.ref_pts) > live_timeout_
                                    : from != kNoPts && sat_sub(to, from) > live_timeout_;
    if (long_gap && !live_stalled_) {
        live_stalled_ = true;
        live_run_ = 0;
        live_run_from_ = e.pts;
        n = live_notice(e, "stalled", "reference",
             "the reference has no frame between " + ts(from) + " s and " + ts(to) +
                 " s (more than " + ts(live_timeout_) + " s, input_timeout): main frames from " +
                 ts(e.pts) + " s pass through unscored until it delivers again\n");
    }
    if (live_stalled_) {
        ++live_run_;
        live_run_to_ = e.pts;
    }
    live_gap_pts_ = e.main_pts;
    return live_stalled_ ? "reference_stalled" : "reference_gap";
}

PairingWatch::Notice PairingWatch::live_end(bool reference_ended) {
    Notice n;
    if (live() && !live_main_notice_.event.empty()) {
        std::swap(n, live_main_notice_);
        return n;
    }
    if (!live() || !reference_ended || live_end_told_) return n;
    live_end_told_ = true;
    const std::int64_t last = last_seen_[1];
    n.event = "ended";
    n.input = "reference";
    n.pts = last;
    n.message = cfg_.prefix + "the reference ended" +
                (last != kNoPts ? " after its frame at " + ts(last) + " s" : std::string()) +
                " while the main input had frames left: the run ends here (shortest=1 or "
                "eof_action=endall)\n";
    return n;
}

} // namespace vmaf_cuda::engine

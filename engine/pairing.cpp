// SPDX-License-Identifier: BSD-2-Clause-Patent
// The pairing watch: see pairing.h.

#include "pairing.h"

#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace vmaf_cuda::engine {

namespace {

std::string format(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* f, ...) {
    va_list ap, ap2;
    va_start(ap, f);
    va_copy(ap2, ap);
    const int n = std::vsnprintf(nullptr, 0, f, ap);
    va_end(ap);
    std::string s(n > 0 ? std::size_t(n) : 0, '\0');
    if (n > 0) std::vsnprintf(s.data(), s.size() + 1, f, ap2);
    va_end(ap2);
    return s;
}

/// "s" when n is not 1, for counts in messages.
const char* plural(std::int64_t n) { return n == 1 ? "" : "s"; }

bool known(int num, int den) { return num > 0 && den > 0; }

} // namespace

std::string time_string(std::int64_t ts, int tb_num, int tb_den) {
    if (ts == kNoPts) return "NOPTS";
    // FFmpeg's rule: %.6f, more decimals below 1 s (6 significant), then the trailing
    // zeros and a trailing point go; 31 characters at most (AV_TS_MAX_STRING_SIZE 32)
    const double val = double(tb_num) / double(tb_den) * double(ts);
    const double lg = val == 0 ? -INFINITY : std::floor(std::log10(std::fabs(val)));
    const int precision = (std::isfinite(lg) && lg < 0) ? int(-lg + 5) : 6;
    char buf[32];
    int last = std::snprintf(buf, sizeof buf, "%.*f", precision, val);
    last = (last < 31 ? last : 31) - 1;
    for (; last > 0 && buf[last] == '0'; last--) {}
    for (; last > 0 && buf[last] != 'f' && (buf[last] < '0' || buf[0] > '9'); last--) {}
    buf[last + 1] = '\0';
    return buf;
}

PairingWatch::PairingWatch(PairingConfig c) : cfg_(std::move(c)) {}

void PairingWatch::frame(int input, std::int64_t pts, std::int64_t dur) {
    const int i = input ? 1 : 0;
    if (!observed_[i]) {
        first_pts_[i] = pts;
        first_dur_[i] = dur;
    }
    ++observed_[i];
    last_seen_[i] = pts;
    queue_[i].push_back({pts, dur});
}

std::int64_t PairingWatch::timeline(int input, std::int64_t pts, std::int64_t dur,
                                    std::string* warning) {
    const int i = input ? 1 : 0;
    if (pts == kNoPts) return tl_offset_[i];
    const std::int64_t n = tl_frames_[i]++;
    const char* name = i ? "reference" : "main";
    // saturating: a hostile timestamp near INT64_MIN/MAX must not overflow
    auto add = [](std::int64_t a, std::int64_t b) {
        if (b > 0 && a > INT64_MAX - b) return INT64_MAX;
        if (b < 0 && a < INT64_MIN + 1 - b) return INT64_MIN + 1;
        return a + b;
    };
    std::int64_t placed = add(pts, tl_offset_[i]);
    const std::int64_t last = tl_last_[i];
    if (last != kNoPts) {
        // a frame: the last step between two frames (a variable frame rate's current one;
        // durations may be stale or unknown, e.g. after setpts), else the previous
        // frame's duration, else this one's
        const std::int64_t step = tl_step_[i] > 0 ? tl_step_[i]
                                  : tl_dur_[i] > 0 ? tl_dur_[i]
                                  : dur > 0        ? dur : 1;
        const double tick = double(cfg_.tb_num) / double(cfg_.tb_den);
        // back by more than 1 s or 10 frames behind the next frame's place: a reset; less
        // (two frames out of order, a repeated timestamp) is left as it is
        const std::int64_t behind = add(add(last, step), -placed);
        if (placed < last && (double(behind) * tick > 1.0 || behind / 10 > step)) {
            const std::int64_t want = add(last, step);
            tl_offset_[i] = add(want, -pts);
            if (warning)
                *warning = format("%sthe %s input's timestamps go back from %s s to %s s at its "
                                  "frame %" PRId64 " (a reset or a wrap): its frames from there "
                                  "are paired as if they followed on at %s s\n",
                                  cfg_.prefix.c_str(), name, ts(last).c_str(), ts(placed).c_str(),
                                  n, ts(want).c_str());
            placed = want;
        } else {
            // past the previous frame's end (saturating, as the steps below)
            const std::int64_t gap = add(placed, -add(last, step));
            const bool jump = double(gap) * tick > 1.0 && gap / 10 > step;
            if (!jump && placed > last) tl_step_[i] = add(placed, -last);
            if (placed < last) placed = last; // out of order: the timeline stays where it was
            if (jump && warning)
                *warning = format("%sthe %s input's timestamps jump ahead by %s s at its frame "
                                  "%" PRId64 " (from %s s to %s s): frames lost or a stall; "
                                  "paired by its timestamps\n", cfg_.prefix.c_str(), name,
                                  ts(gap).c_str(), n, ts(last).c_str(), ts(placed).c_str());
        }
    }
    tl_last_[i] = placed;
    if (dur > 0) tl_dur_[i] = dur;
    return tl_offset_[i];
}

std::string PairingWatch::event(const PairingEvent& e) {
    const std::string& pre = cfg_.prefix;
    first_pair_ = false;
    // the main frame of this event, and its duration
    while (!queue_[0].empty() && queue_[0].front().pts <= e.main_pts) {
        if (queue_[0].front().pts == e.main_pts) last_main_dur_ = queue_[0].front().dur;
        queue_[0].pop_front();
    }
    if (!e.has_ref && live_gap_pts_ != kNoPts && e.main_pts == live_gap_pts_) {
        ++live_gap_unscored_;
        live_gap_pts_ = kNoPts;
        return pre + "unscored: main " + ts(e.pts) + " s (a gap in the reference)";
    }
    if (!e.has_ref) {
        (nb_pairs_ ? main_after_ : main_before_)++;
        return pre + "unscored: main " + ts(e.pts) + " s (no reference frame)";
    }
    // reference frames passed over since the previous pair were never paired
    // (except the one a main frame met in all but rounding, see rounded_next_ below)
    while (!queue_[1].empty() && queue_[1].front().pts < e.ref_pts) {
        if (queue_[1].front().pts != rounded_next_) (nb_pairs_ ? ref_gaps_ : ref_leading_)++;
        queue_[1].pop_front();
    }
    bool new_ref = false;
    if (!queue_[1].empty() && queue_[1].front().pts == e.ref_pts) {
        last_ref_dur_ = queue_[1].front().dur;
        queue_[1].pop_front();
        new_ref = true;
    } else if (e.ref_pts != last_ref_pts_) {
        new_ref = true; // a frame not given to frame() (should not happen)
        last_ref_dur_ = 0;
    }
    // framesync repeats a main frame only after the main input ended; within the frame's
    // duration that is a higher reference frame rate, past it a repeat
    if (nb_pairs_ && e.main_pts == last_main_pts_) {
        if (!last_main_dur_ || e.pts >= sat_add(e.main_pts, last_main_dur_)) ++main_repeated_;
    } else {
        if (!new_ref && e.ref_ended && (!last_ref_dur_ || e.pts >= sat_add(e.ref_pts, last_ref_dur_)))
            ++ref_repeated_;
        // The next reference frame within half a frame of this main frame: the same
        // moment, its timestamp rounded up past the main's (two time bases, e.g. MKV's
        // 1 ms and MP4's 1/24000 s), not a gap on either side.
        const bool rounded = e.has_next_ref && last_ref_dur_ && e.next_ref_pts >= e.pts &&
                             sat_sub(e.next_ref_pts, e.pts) <= last_ref_dur_ / 2;
        if (rounded) rounded_next_ = e.next_ref_pts;
        // a reference frame paired again past its duration while the reference goes on:
        // a gap in the reference (dropped frames), the main frame scored against an older
        // picture
        if (!new_ref && !e.ref_ended && last_ref_dur_ && e.pts >= sat_add(e.ref_pts, last_ref_dur_) &&
            !rounded)
            ++ref_reused_;
        // ts_sync_mode=nearest's rule (FFmpeg's framesync_advance)
        if (e.has_next_ref && e.ref_pts != kNoPts &&
            sat_sub(e.next_ref_pts, e.pts) < sat_sub(e.pts, e.ref_pts))
            ++nearer_;
    }
    first_pair_ = !nb_pairs_;
    last_main_pts_ = e.main_pts;
    last_ref_pts_ = e.ref_pts;
    ++nb_pairs_;
    return format("%spair %" PRId64 ": main %s s, reference %s s", pre.c_str(), e.index,
                  ts(e.main_pts).c_str(), ts(e.ref_pts).c_str());
}

std::string PairingWatch::report() const {
    const char* pre = cfg_.prefix.c_str();
    const int n0 = cfg_.rate_num[0], d0 = cfg_.rate_den[0], n1 = cfg_.rate_num[1],
              d1 = cfg_.rate_den[1];
    const bool rates_differ = known(n0, d0) && known(n1, d1) &&
                              std::int64_t(n0) * d1 != std::int64_t(n1) * d0;
    std::string o;

    if (main_repeated_)
        o += format("%sthe main input ended first: its last frame was paired with %" PRId64
                    " more reference frame%s; add shortest=1 to stop at the end of the shorter "
                    "input\n", pre, main_repeated_, plural(main_repeated_));
    if (ref_repeated_)
        o += format("%sthe reference ended first: its last frame was repeated for %" PRId64
                    " more main frame%s (eof_action=repeat); add shortest=1 to stop at the end "
                    "of the shorter input\n", pre, ref_repeated_, plural(ref_repeated_));
    if (main_after_)
        o += format("%s%" PRId64 " main frame%s after the end of the reference passed through "
                    "unscored (%s): in neither the log nor the score; shortest=1 ends the "
                    "output with the reference\n", pre, main_after_, plural(main_after_),
                    live() ? "input_timeout: an input's end is not repeated"
                           : "eof_action=pass or repeatlast=0");
    if (live_gap_unscored_)
        o += format("%s%" PRId64 " main frame%s passed through unscored where the reference had "
                    "no frame of their time (gaps in it: dropped frames, a stall, the frames a "
                    "stop cut off; input_timeout): in neither the log nor the score\n", pre,
                    live_gap_unscored_, plural(live_gap_unscored_));

    const std::int64_t offset = first_pts_[0] != kNoPts && first_pts_[1] != kNoPts
                                    ? std::llabs(sat_sub(first_pts_[0], first_pts_[1])) : 0;
    const std::int64_t dur = first_dur_[0] ? first_dur_[0] : first_dur_[1];
    const std::int64_t half = dur / 2;
    if (!observed_[1]) {
        if (main_before_)
            o += format("%sthe reference delivered no frame: the %" PRId64 " main frame%s "
                        "passed through unscored\n", pre, main_before_, plural(main_before_));
    } else if (aligned_ && (main_before_ || ref_leading_)) {
        o += format("%ssync=auto: after the offset, the main starts at %s s and the reference "
                    "at %s s: %" PRId64 " main frame%s passed through unscored and %" PRId64
                    " reference frame%s never paired before the first pair\n", pre,
                    ts(first_pts_[0]).c_str(), ts(first_pts_[1]).c_str(), main_before_,
                    plural(main_before_), ref_leading_, plural(ref_leading_));
    } else if (aligned_) {
    } else if ((half && offset > half) || main_before_ || ref_leading_) {
        o += format("%sthe inputs start at different times: main at %s s, reference at %s s "
                    "(%" PRId64 " main frame%s passed through unscored and %" PRId64
                    " reference frame%s never paired before the first pair); if both start "
                    "with the same picture, add setpts=PTS-STARTPTS to both inputs\n", pre,
                    ts(first_pts_[0]).c_str(), ts(first_pts_[1]).c_str(), main_before_,
                    plural(main_before_), ref_leading_, plural(ref_leading_));
    }
    // a reference at a higher frame rate leaves frames unpaired by design: the rate
    // warning below says so, with the count
    if (ref_gaps_ && !rates_differ)
        o += format("%s%" PRId64 " reference frame%s never paired with a main frame (gaps in "
                    "the main's timestamps: dropped frames or a variable frame rate); the "
                    "scores leave them out\n", pre, ref_gaps_, plural(ref_gaps_));
    // Different frame rates explain pairs with a nearer next reference frame: one warning
    // then (30 vs 25 fps), the time-base one only for equal rates. An offset of a part of
    // a frame between the inputs' timestamps (-copyts keeps each input's own start)
    // explains them too; timestamps rounded to two time bases differ by far less than a
    // tenth of a frame.
    if (ref_reused_ && !rates_differ)
        o += format("%s%" PRId64 " main frame%s paired with a reference frame already paired "
                    "before, past its duration (gaps in the reference's timestamps: dropped "
                    "frames or a variable frame rate), so scored against an older picture%s\n",
                    pre, ref_reused_, plural(ref_reused_),
                    cfg_.nearest ? "" : "; ts_sync_mode=nearest pairs each main frame with the "
                                        "nearest reference frame");
    // (pairs with a nearer next frame next to such gaps are the gaps' doing)
    if (nearer_ && !rates_differ && !ref_reused_) {
        if (dur > 0 && offset % dur > dur / 10 && dur - offset % dur > dur / 10)
            o += format("%s%" PRId64 " of %" PRId64 " pairs took an earlier reference frame "
                        "although the next one was nearer in time: the inputs' timestamps are "
                        "%s s apart, not a whole number of frames (main starts at %s s, "
                        "reference at %s s, e.g. -copyts keeping each input's own start); add "
                        "setpts=PTS-STARTPTS to both inputs if they start with the same "
                        "picture, or ts_sync_mode=nearest to pair each main frame with the "
                        "nearest reference frame\n", pre, nearer_, nb_pairs_,
                        ts(offset).c_str(), ts(first_pts_[0]).c_str(), ts(first_pts_[1]).c_str());
        else
            o += format("%s%" PRId64 " of %" PRId64 " pairs took an earlier reference frame "
                        "although the next one was nearer in time (timestamps rounded to "
                        "different time bases, e.g. MKV and MP4); ts_sync_mode=nearest pairs "
                        "each main frame with the nearest reference frame\n", pre, nearer_,
                        nb_pairs_);
    }
    if (rates_differ) {
        std::string nearer, gaps;
        if (nearer_)
            nearer = format(" (%" PRId64 " of %" PRId64 " pairs had a nearer next one; "
                            "ts_sync_mode=nearest takes the nearest)", nearer_, nb_pairs_);
        if (ref_gaps_)
            gaps = format("; %" PRId64 " reference frame%s between pairs were never paired",
                          ref_gaps_, plural(ref_gaps_));
        o += format("%sframe rates differ: main %d/%d (%.3f fps), reference %d/%d (%.3f fps); "
                    "each main frame is paired with the %s%s%s\n", pre, n0, d0, double(n0) / d0,
                    n1, d1, double(n1) / d1,
                    cfg_.nearest ? "nearest reference frame"
                                 : "last reference frame at or before its timestamp",
                    nearer.c_str(), gaps.c_str());
    }
    return o;
}

} // namespace vmaf_cuda::engine

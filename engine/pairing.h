// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file pairing.h
/// The pairing watch behind vmaf_cuda_pairing_*() (vmaf_cuda.h documents the C API): how
/// two timed inputs were paired by a frame synchroniser with libvmaf's / FFmpeg's
/// framesync defaults (every main frame meets the last reference frame at or before its
/// time), and the end-of-stream warnings where that was probably not what the user meant.
/// It only watches: the caller pairs. Used by the FFmpeg filter (each rendition), open to
/// any program that pairs timed frames.

#include <cstdint>
#include <deque>
#include <string>

namespace vmaf_cuda::engine {

/// Timestamps are ticks of a time base tb_num / tb_den seconds; kNoPts (INT64_MIN, FFmpeg's
/// AV_NOPTS_VALUE) is "none".
constexpr std::int64_t kNoPts = INT64_MIN;

/// a + b and a - b saturating at the int64 limits (INT64_MIN + 1, kNoPts stays free):
/// hostile timestamps must not overflow.
inline std::int64_t sat_add(std::int64_t a, std::int64_t b) {
    if (b > 0 && a > INT64_MAX - b) return INT64_MAX;
    if (b < 0 && a < INT64_MIN + 1 - b) return INT64_MIN + 1;
    return a + b;
}
inline std::int64_t sat_sub(std::int64_t a, std::int64_t b) {
    if (b == INT64_MIN) return a >= 0 ? INT64_MAX : a - b;
    return sat_add(a, -b);
}

/// A time as FFmpeg's av_ts_make_time_string2() prints it (seconds with 6 significant
/// decimals, trailing zeros and point dropped, "NOPTS" for kNoPts): the words of the
/// filter's messages.
std::string time_string(std::int64_t ts, int tb_num, int tb_den);

struct PairingConfig {
    int tb_num = 1, tb_den = 1;
    int rate_num[2] = {0, 0}, rate_den[2] = {0, 0}; ///< main, reference; 0/0: unknown
    std::string prefix;                             ///< starts every message
    bool nearest = false; ///< the synchroniser pairs the nearest reference frame
};

/// One event of the frame synchroniser: a main frame with its reference frame, or alone.
struct PairingEvent {
    std::int64_t pts = 0;          ///< the event's time
    std::int64_t main_pts = 0;     ///< the main frame's time
    bool has_ref = false;          ///< a reference frame was paired (else: unscored)
    std::int64_t ref_pts = kNoPts; ///< the paired reference frame's time
    bool ref_ended = false;        ///< the reference's end is known (no next frame will come)
    bool has_next_ref = false;     ///< the reference's next frame is known
    std::int64_t next_ref_pts = 0; ///< its time
    std::int64_t index = -1;       ///< the frame's index in the log (the debug line)
};

class PairingWatch {
public:
    explicit PairingWatch(PairingConfig c);
    /// A frame queued on input 0 (main) or 1 (reference), in input order, before the
    /// events that use or pass over it; dur 0: unknown.
    void frame(int input, std::int64_t pts, std::int64_t dur);
    /// Places a frame of `input` (in input order, before frame() records it) on the
    /// input's continuous timeline and returns the offset to add to its pts. Its
    /// timestamp going back by more than 1 s or 10 frames (a reset, a wrap) starts a new
    /// stretch one frame after the previous frame (less is left as it is), and `warning`
    /// (when given) gets the message; a jump ahead by more than 1 s and 10 frames (a
    /// stall, lost frames) is only reported, the timestamps kept (pairing by them stays
    /// right when the gap is real). kNoPts: offset only.
    std::int64_t timeline(int input, std::int64_t pts, std::int64_t dur, std::string* warning);
    /// Records an event; returns its debug line ("pair N: main T s, reference T s" or
    /// "unscored: main T s (no reference frame)", with the prefix, no newline).
    std::string event(const PairingEvent& e);
    /// Whether the last event was the first pair (the caller's start checks).
    bool first_pair() const { return first_pair_; }
    /// The end-of-stream warnings, each line ending in '\n' ("" on aligned inputs).
    std::string report() const;

    /// Live QA's rules (vmaf_cuda_pairing_set_live(), pairing_live.cpp): a frame stands
    /// in for at most `timeout` ticks (> 0), an input's end is not repeated.
    /// The reference's timestamps were moved by an alignment (sync=auto): the report
    /// tells the start difference as the alignment's, without the setpts advice.
    void set_aligned() { aligned_ = true; }
    void set_live(std::int64_t timeout) { live_timeout_ = timeout; }
    bool live() const { return live_timeout_ > 0; }
    /// The live rules found the reference over (its end is past): nothing more is scored.
    bool live_reference_over() const { return live_ref_over_; }
    /// What starts or ends at an event, for the user at once (empty event: nothing).
    struct Notice {
        std::string event, input, message; ///< "ended"/"stalled"/"resumed", "main"/"reference"
        std::int64_t pts = kNoPts;         ///< the time of the frame it comes with
    };
    /// Whether the main frame of `e` (before event() records it) is scored: "" yes, else
    /// why not ("no_reference", "reference_ended", "reference_gap", "reference_stalled");
    /// `n` gets what starts or ends now. Without live rules: "" when paired, else
    /// "reference_ended" or "no_reference".
    std::string live_check(const PairingEvent& e, Notice& n);
    /// At the synchroniser's end, until it returns no event: a notice still pending, then
    /// with `reference_ended` (it ended there while the main had frames left: shortest=1)
    /// the notice for that (none when told already).
    Notice live_end(bool reference_ended);

private:
    struct Seen {
        std::int64_t pts, dur;
    };
    std::string ts(std::int64_t t) const { return time_string(t, cfg_.tb_num, cfg_.tb_den); }

    PairingConfig cfg_;
    std::deque<Seen> queue_[2];
    std::int64_t observed_[2] = {0, 0};
    std::int64_t first_pts_[2] = {kNoPts, kNoPts};
    std::int64_t first_dur_[2] = {0, 0};
    std::int64_t nb_pairs_ = 0;
    std::int64_t last_main_pts_ = kNoPts, last_ref_pts_ = kNoPts;
    std::int64_t last_main_dur_ = 0, last_ref_dur_ = 0;
    bool first_pair_ = false;
    std::int64_t main_before_ = 0;   ///< main frames unscored before the first reference frame
    std::int64_t main_after_ = 0;    ///< main frames unscored after the reference ended
    std::int64_t main_repeated_ = 0; ///< pairs repeating the main's last frame after it ended
    std::int64_t ref_repeated_ = 0;  ///< pairs reusing the reference's last frame past its end
    std::int64_t ref_leading_ = 0;   ///< reference frames before the first pair, never paired
    std::int64_t ref_gaps_ = 0;      ///< reference frames between pairs, never paired
    std::int64_t nearer_ = 0;        ///< pairs where the next reference frame was nearer
    std::int64_t ref_reused_ = 0;    ///< pairs reusing a reference frame past its duration
                                     ///< while the reference goes on (gaps in it)
    std::int64_t rounded_next_ = kNoPts; ///< next reference frame a main frame met but for rounding
    // timeline(): per input, the last frame's place on its timeline, its duration, the
    // last step between two frames, the offset of the current stretch, the frames seen
    std::int64_t tl_last_[2] = {kNoPts, kNoPts};
    std::int64_t tl_dur_[2] = {0, 0};
    std::int64_t tl_step_[2] = {0, 0};
    std::int64_t tl_offset_[2] = {0, 0};
    std::int64_t tl_frames_[2] = {0, 0};
    // live rules (pairing_live.cpp)
    std::int64_t live_timeout_ = 0;
    bool aligned_ = false;           ///< set_aligned()
    std::int64_t last_seen_[2] = {kNoPts, kNoPts}; ///< the last frame given to frame()
    bool live_stalled_ = false;      ///< main frames pass unscored: a gap in the reference
    bool live_end_told_ = false;     ///< the reference's end was reported
    std::int64_t live_run_ = 0, live_run_from_ = kNoPts, live_run_to_ = kNoPts;
    std::int64_t live_main_end_ = kNoPts;  ///< the end of the last main frame checked
    Notice live_main_notice_;              ///< the main's gap, told at the next free event
    bool live_ref_over_ = false;           ///< main frames are past the reference's end
    /// live_check()'s verdict on the reference side (the main's gap aside).
    std::string live_reason(const PairingEvent& e, Notice& n);
    /// Input i's frame at `pts`: its own duration (given to frame(), not yet passed by
    /// event()), else the input's last step between two frames, else its last duration;
    /// last_pts / last_dur: the input's last frame an event used.
    std::int64_t live_duration(int i, std::int64_t pts, std::int64_t last_pts,
                               std::int64_t last_dur) const;
    Notice live_notice(const PairingEvent& e, const char* event, const char* input,
                       const std::string& text) const;
    std::int64_t live_gap_pts_ = kNoPts;   ///< main frame live_check() left unscored for a gap
    std::int64_t live_gap_unscored_ = 0;   ///< main frames unscored for gaps in the reference
};

} // namespace vmaf_cuda::engine

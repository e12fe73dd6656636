// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file live.h
/// Live QA behind vmaf_cuda_live_*() (vmaf_cuda.h defines what each value is): a rolling
/// window per model (pooling.h Window), the window values as metadata text, the NDJSON
/// stream (writers.h JsonLine, log_file.h LineLog), the SEI payload; and the end-of-stream
/// score lines. One implementation for the FFmpeg filter, the CLI and any program.

#include "log_file.h"
#include "pooling.h"
#include "vmaf_cuda.h"
#include "writers.h"

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vmaf_cuda::engine {

class Session;

/// A window as vmaf_cuda_parse_window() reads it: frames > 0, or seconds > 0.
struct WindowSpec {
    std::uint64_t frames = 0;
    double seconds = 0;
};
/// Parses "N", "Xs" or "Xms"; nullopt when invalid.
std::optional<WindowSpec> parse_window(const char* text);

/// vmaf_cuda_live_open()'s settings, with the session's model names.
struct LiveConfig {
    std::optional<WindowSpec> window;
    unsigned window_log = 0;
    bool sei = false;
    std::optional<std::string> ndjson_path;
    int precision = 6;
    int pool = VMAF_CUDA_POOL_MEAN;
    int tb_num = 1, tb_den = 1;
    int fr_num = 0, fr_den = 0;
    std::string key_prefix;
    bool score_meta = false;
    std::vector<std::string> models;
};

/// Checks a VmafCudaLiveSettings and makes the config. Throws Error(EINVAL) naming what
/// is wrong.
LiveConfig live_config(const VmafCudaLiveSettings& s, std::vector<std::string> models);

class Live {
public:
    explicit Live(LiveConfig c);
    ~Live();

    bool active() const { return cfg_.window || cfg_.ndjson_path || cfg_.sei || cfg_.score_meta; }
    /// One scored frame (vmaf_cuda_live_frame()). Returns VMAF_CUDA_OK or VMAF_CUDA_EIO
    /// (the NDJSON stream failed now: error()). Throws std::bad_alloc, Error(EINVAL).
    int frame(const VmafCudaFrameScores& fs, std::int64_t pts, bool has_pts,
              VmafCudaLiveFrame& out);
    /// An event line in the NDJSON stream (vmaf_cuda_live_event()): VMAF_CUDA_OK, or
    /// VMAF_CUDA_EIO (error()). `input` may be null.
    int event(const char* event, const char* input, std::int64_t pts, bool has_pts,
              std::string_view message);
    /// The pooled line and the end of the NDJSON stream (vmaf_cuda_live_finish()).
    int finish(const Session* s, std::uint64_t frames);
    /// Drops the lines of frames from session index `frames` on (vmaf_cuda_live_truncate()):
    /// VMAF_CUDA_OK, 1 (they went to a stream), or VMAF_CUDA_EIO (error()).
    int truncate(std::uint64_t frames);
    /// Model m's window values (count 0 before the first frame).
    const WindowStats& window(unsigned m) const { return stats_.at(m); }
    bool windowed() const { return cfg_.window.has_value(); }
    unsigned models() const { return unsigned(cfg_.models.size()); }
    const std::string& error() const { return error_; }

    /// Metrics (live_metrics.cpp, vmaf_cuda_live_metrics()): what frame() and event()
    /// counted, read by a scrape from another thread under the metrics lock.
    struct Metrics {
        std::chrono::steady_clock::time_point opened = std::chrono::steady_clock::now();
        std::uint64_t scored = 0;
        std::map<std::string, std::uint64_t> unscored;                        ///< by reason
        std::map<std::pair<std::string, std::string>, std::uint64_t> events; ///< (event, input)
        std::int64_t last_index = -1;
        double last_pts = 0;
        bool last_has_pts = false;
        std::vector<std::string> names;  ///< the last frame's metrics
        std::vector<double> values;
        std::vector<WindowStats> windows; ///< per model, with a window
    };
    /// A main frame that went out unscored, by the caller's reason (e.g. "reference_gap").
    void note_unscored(const char* reason);
    /// A copy of the metrics, taken under the lock.
    Metrics metrics() const;
    const std::vector<std::string>& model_names() const { return cfg_.models; }
    const std::vector<const char*>& window_stat_names() const { return stat_names_; }
    /// A window value by its name in window_stat_names() (min, mean, harmonic_mean, max,
    /// percN).
    double stat_value(const WindowStats& st, const char* name) const;

private:
    void note_frame(const VmafCudaFrameScores& fs, std::int64_t pts, bool has_pts);
    void note_event(const char* event, const char* input);
    mutable std::mutex metrics_mu_;
    Metrics metrics_;
    void first_frame(const VmafCudaFrameScores& fs);
    void window_object(JsonLine& j) const;
    int write(const std::string& line);

    LiveConfig cfg_;
    std::int64_t win_ticks_ = 0;   ///< duration windows, in ticks of the time base
    std::int64_t frame_ticks_ = 1; ///< ticks per frame, for frames without pts
    unsigned perc_ = 0;
    std::vector<const char*> stat_names_; ///< the window values after "frames"
    std::vector<Window> win_;             ///< per model (with a window)
    std::vector<WindowStats> stats_;      ///< per model, after the last frame
    std::vector<int> model_col_;          ///< each model's score column (-1: none)
    std::vector<std::string> names_;      ///< the metric names of the first frame
    std::unique_ptr<LineLog> out_;
    bool out_failed_ = false;
    /// (frame index, NDJSON offset where its lines start) of the last frames, for truncate()
    std::deque<std::pair<std::uint64_t, long long>> starts_;
    long long dropped_ = -1; ///< the index of the newest entry starts_ let go (-1: none)
    bool stream_lines_ = false; ///< lines went to a stream, which cannot be cut
    std::vector<std::string> meta_keys_, meta_values_; ///< score keys, then window keys
    std::vector<unsigned> score_cols_;    ///< the column of each score key
    std::vector<const char*> meta_key_ptrs_, meta_value_ptrs_;
    std::int64_t last_t_ = 0;
    bool have_t_ = false;
    std::uint64_t nb_frames_ = 0;
    JsonLine line_, sei_json_;
    std::vector<std::uint8_t> sei_;
    std::string error_;
};

/// The end-of-stream score lines of vmaf_cuda_summary(). Throws Error as Session::pooled().
std::string summary_text(const Session& s, int pool, const std::string& prefix);

/// The metrics of `lives` in the Prometheus text format (live_metrics.cpp): rendition k
/// is lives[k], labelled rendition="k" when there are several.
std::string metrics_text(const std::vector<const Live*>& lives);

} // namespace vmaf_cuda::engine

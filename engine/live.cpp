// SPDX-License-Identifier: BSD-2-Clause-Patent
// Live QA: windows, metadata text, NDJSON lines, SEI payload (see live.h, vmaf_cuda.h).

#include "live.h"

#include "error.h"
#include "session.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

namespace vmaf_cuda::engine {
namespace {

constexpr std::uint8_t kSeiUuid[16] = VMAF_CUDA_LIVE_SEI_UUID;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

} // namespace

std::optional<WindowSpec> parse_window(const char* text) {
    if (!text || !*text) return std::nullopt;
    const char* c = text;
    while (std::isdigit(static_cast<unsigned char>(*c))) ++c;
    WindowSpec w;
    if (!*c) {
        const unsigned long long n = std::strtoull(text, nullptr, 10);
        if (n < 1 || n > 100000000ull) return std::nullopt;
        w.frames = n;
        return w;
    }
    char* end = nullptr;
    double d = std::strtod(text, &end);
    if (end == text || !std::isfinite(d)) return std::nullopt;
    if (!std::strcmp(end, "ms"))
        d /= 1000;
    else if (std::strcmp(end, "s"))
        return std::nullopt;
    if (!(d > 0)) return std::nullopt;
    w.seconds = d;
    return w;
}

LiveConfig live_config(const VmafCudaLiveSettings& s, std::vector<std::string> models) {
    LiveConfig c;
    auto fail = [](const std::string& m) { throw Error(VMAF_CUDA_EINVAL, m); };
    if (s.window && *s.window) {
        c.window = parse_window(s.window);
        if (!c.window)
            fail(std::string("window '") + s.window + "' is neither a number of frames "
                 "(window=50) nor a duration (window=2s, window=500ms)");
        if (models.empty()) fail("a window pools model scores: the session has no model");
    }
    c.window_log = s.window_log;
    if (c.window_log && !c.window)
        fail("window_log=" + std::to_string(c.window_log) +
             " needs a window (window=N or window=2s)");
    if (c.window_log && !s.ndjson_path)
        fail("window_log=" + std::to_string(c.window_log) +
             " writes NDJSON lines: it needs an NDJSON stream (ndjson_path)");
    c.sei = s.sei != 0;
    if (s.ndjson_path) c.ndjson_path = s.ndjson_path;
    if (s.precision != -1 && (s.precision < 1 || s.precision > 17))
        fail("precision " + std::to_string(s.precision) + " is invalid (1..17, or -1 for max)");
    c.precision = s.precision;
    if (!pool_name(s.pool))
        fail("pool " + std::to_string(int(s.pool)) + " is not one of " + std::string(kPoolNames));
    c.pool = s.pool;
    c.tb_num = s.tb_num > 0 ? s.tb_num : 1;
    c.tb_den = s.tb_den > 0 ? s.tb_den : 1;
    c.fr_num = s.fr_num;
    c.fr_den = s.fr_den;
    if (s.key_prefix) c.key_prefix = s.key_prefix;
    c.score_meta = s.score_meta != 0;
    c.models = std::move(models);
    return c;
}

namespace {
/// Frames whose NDJSON line ends are kept for truncate(): more than a consumer can be
/// behind the frames that went out (-frames:v N stops it within a few).
constexpr std::size_t kTruncateHistory = 4096;

/// A positive tick count from a double, INT64_MAX where it does not fit (window=1e30s).
std::int64_t ticks_of(double t) {
    return t >= 9.2e18 ? INT64_MAX : std::int64_t(std::llrint(t));
}
}  // namespace

Live::Live(LiveConfig c) : cfg_(std::move(c)), line_(cfg_.precision), sei_json_(cfg_.precision) {
    perc_ = pool_percentile(cfg_.pool);
    if (cfg_.window && !cfg_.window->frames) {
        const double ticks = cfg_.window->seconds * cfg_.tb_den / cfg_.tb_num;
        win_ticks_ = ticks < 1 ? 1 : ticks_of(ticks);
    }
    if (cfg_.fr_num > 0 && cfg_.fr_den > 0) {
        const double t = double(cfg_.tb_den) * cfg_.fr_den / (double(cfg_.tb_num) * cfg_.fr_num);
        frame_ticks_ = t < 1 ? 1 : ticks_of(t);
    }
    const std::size_t n = cfg_.models.size();
    model_col_.assign(n, -1);
    stats_.assign(n, WindowStats{0, kNaN, kNaN, kNaN, kNaN, kNaN});
    if (cfg_.window)
        for (std::size_t m = 0; m < n; ++m)
            win_.emplace_back(std::size_t(cfg_.window->frames), win_ticks_, perc_);
    if (cfg_.window) metrics_.windows = stats_; // (frames 0 until the first frame)
    // the window values reported: min, mean, harmonic_mean, and what the pool asks for
    stat_names_ = {"min", "mean", "harmonic_mean"};
    if (cfg_.pool == VMAF_CUDA_POOL_MAX) stat_names_.push_back("max");
    if (perc_) stat_names_.push_back(pool_name(cfg_.pool));
}

Live::~Live() = default;

double Live::stat_value(const WindowStats& st, const char* name) const {
    if (!std::strcmp(name, "min")) return st.min;
    if (!std::strcmp(name, "mean")) return st.mean;
    if (!std::strcmp(name, "harmonic_mean")) return st.harmonic_mean;
    if (!std::strcmp(name, "max")) return st.max;
    return st.perc;
}

void Live::first_frame(const VmafCudaFrameScores& fs) {
    names_.assign(fs.names, fs.names + fs.count);
    // a model's score is the last column of its name
    for (std::size_t m = 0; m < cfg_.models.size(); ++m)
        for (unsigned i = fs.count; i-- > 0;)
            if (model_col_[m] < 0 && cfg_.models[m] == fs.names[i]) model_col_[m] = int(i);
    const std::size_t n = cfg_.models.size();
    // the score keys, as FFmpeg's libvmaf filter: "score" for the first model, "score.NAME"
    // for each model when there are several, every other score by its name
    for (unsigned i = 0; cfg_.score_meta && i < fs.count; ++i) {
        const auto model = std::find(cfg_.models.begin(), cfg_.models.end(), fs.names[i]);
        if (model == cfg_.models.end()) {
            meta_keys_.push_back(cfg_.key_prefix + fs.names[i]);
            score_cols_.push_back(i);
            continue;
        }
        if (model == cfg_.models.begin()) {
            meta_keys_.push_back(cfg_.key_prefix + "score");
            score_cols_.push_back(i);
        }
        if (n > 1) {
            meta_keys_.push_back(cfg_.key_prefix + "score." + fs.names[i]);
            score_cols_.push_back(i);
        }
    }
    // the window keys: the first model's values, then with several models each model's
    const std::string base = cfg_.key_prefix + "window.";
    for (std::size_t m = 0; cfg_.window && m < (n > 1 ? n + 1 : 1); ++m)
        for (std::size_t k = 0; k <= stat_names_.size(); ++k) {
            const std::string stat = k ? stat_names_[k - 1] : "frames";
            meta_keys_.push_back(m ? base + cfg_.models[m - 1] + "." + stat : base + stat);
        }
    meta_values_.resize(meta_keys_.size());
    for (const std::string& k : meta_keys_) meta_key_ptrs_.push_back(k.c_str());
    meta_value_ptrs_.resize(meta_keys_.size());
}

int Live::write(const std::string& line) {
    if (!cfg_.ndjson_path || out_failed_) return VMAF_CUDA_OK;
    if (!out_) out_ = std::make_unique<LineLog>(*cfg_.ndjson_path, "NDJSON log");
    try {
        out_->write_line(line);
    } catch (const Error& e) {
        error_ = e.what();
        out_failed_ = true;
        return VMAF_CUDA_EIO;
    }
    return VMAF_CUDA_OK;
}

// "window":{"<model>":{"frames":K,"min":...},...}
void Live::window_object(JsonLine& j) const {
    j.begin_object("window");
    for (std::size_t m = 0; m < cfg_.models.size(); ++m) {
        j.begin_object(cfg_.models[m]);
        j.count("frames", stats_[m].count);
        for (const char* stat : stat_names_) j.number(stat, stat_value(stats_[m], stat));
        j.end_object();
    }
    j.end_object();
}

int Live::frame(const VmafCudaFrameScores& fs, std::int64_t pts, bool has_pts,
                VmafCudaLiveFrame& out) {
    out = VmafCudaLiveFrame{};
    if (fs.count && (!fs.names || !fs.values))
        throw Error(VMAF_CUDA_EINVAL, "vmaf_cuda_live_frame: frame scores without names or values");
    if (!nb_frames_) first_frame(fs);
    ++nb_frames_;
    // a frame without pts: one frame after the last one (saturating at INT64_MAX)
    std::int64_t t = has_pts ? pts
                     : !have_t_ ? 0
                     : last_t_ > INT64_MAX - frame_ticks_ ? INT64_MAX
                                                          : last_t_ + frame_ticks_;
    if (have_t_ && t < last_t_) t = last_t_;
    last_t_ = t;
    have_t_ = true;

    auto model_score = [&](std::size_t m) {
        const int c = model_col_[m];
        return c >= 0 && unsigned(c) < fs.count ? fs.values[c] : kNaN;
    };
    std::size_t k = 0;
    for (const unsigned c : score_cols_) { // printf's %.17g, as the filter always printed them
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.17g", c < fs.count ? fs.values[c] : kNaN);
        meta_values_[k++] = buf;
    }
    if (cfg_.window) {
        for (std::size_t m = 0; m < cfg_.models.size(); ++m) {
            win_[m].push(t, model_score(m));
            stats_[m] = win_[m].stats();
        }
        const std::size_t n = cfg_.models.size();
        for (std::size_t m = 0; m < (n > 1 ? n + 1 : 1); ++m) {
            const WindowStats& st = stats_[m ? m - 1 : 0];
            meta_values_[k++] = std::to_string(st.count);
            for (const char* stat : stat_names_)
                meta_values_[k++] = format_value(stat_value(st, stat), -1); // %.17g
        }
    }
    if (k) {
        for (std::size_t i = 0; i < meta_values_.size(); ++i)
            meta_value_ptrs_[i] = meta_values_[i].c_str();
        out.nb_meta = meta_keys_.size();
        out.meta_keys = meta_key_ptrs_.data();
        out.meta_values = meta_value_ptrs_.data();
    }

    int ret = VMAF_CUDA_OK;
    if (cfg_.ndjson_path && !out_failed_) {
        const std::string pts_time =
            has_pts ? format_fixed(double(pts) * cfg_.tb_num / cfg_.tb_den, 6) : "null";
        line_.clear();
        line_.string("type", "frame");
        line_.count("frameNum", fs.index);
        line_.raw("pts_time", pts_time);
        line_.begin_object("metrics");
        for (unsigned i = 0; i < fs.count; ++i) line_.number(fs.names[i], fs.values[i]);
        line_.end_object();
        // where this frame's lines start (after the event lines before it), for a
        // consumer that takes fewer frames (a bounded history: the frames still on their
        // way to it); the file's start when nothing was written yet
        const long long start = out_ ? out_->position() : 0;
        ret = write(line_.text());
        if (ret == VMAF_CUDA_OK && cfg_.window_log && nb_frames_ % cfg_.window_log == 0) {
            line_.clear();
            line_.string("type", "window");
            line_.count("frameNum", fs.index);
            line_.raw("pts_time", pts_time);
            window_object(line_);
            ret = write(line_.text());
        }
        if (ret == VMAF_CUDA_OK && out_) {
            stream_lines_ = stream_lines_ || start < 0 || out_->position() < 0;
            starts_.emplace_back(fs.index, start);
            if (starts_.size() > kTruncateHistory) {
                dropped_ = starts_.front().first;
                starts_.pop_front();
            }
        }
    }

    if (cfg_.sei) {
        sei_json_.clear();
        sei_json_.count("frameNum", fs.index);
        sei_json_.begin_object("scores");
        for (std::size_t m = 0; m < cfg_.models.size(); ++m)
            sei_json_.number(cfg_.models[m], model_score(m));
        sei_json_.end_object();
        if (cfg_.window) window_object(sei_json_);
        const std::string& json = sei_json_.text();
        sei_.assign(kSeiUuid, kSeiUuid + 16);
        sei_.insert(sei_.end(), json.begin(), json.end());
        out.sei = sei_.data();
        out.sei_size = sei_.size();
    }
    note_frame(fs, pts, has_pts);
    return ret;
}

int Live::event(const char* event, const char* input, std::int64_t pts, bool has_pts,
                std::string_view message) {
    note_event(event, input);
    if (!cfg_.ndjson_path || out_failed_) return VMAF_CUDA_OK;
    while (!message.empty() && message.back() == '\n') message.remove_suffix(1);
    line_.clear();
    line_.string("type", "event");
    line_.string("event", event);
    if (input) line_.string("input", input);
    line_.raw("pts_time", has_pts ? format_fixed(double(pts) * cfg_.tb_num / cfg_.tb_den, 6)
                                  : std::string("null"));
    line_.string("message", message);
    return write(line_.text());
}

int Live::truncate(std::uint64_t frames) {
    if (!out_ || out_failed_ || starts_.empty() || starts_.back().first < frames) return VMAF_CUDA_OK;
    if (stream_lines_) {
        error_ = "the NDJSON stream '" + *cfg_.ndjson_path + "' already carries the lines of "
                 "frames after the " + std::to_string(frames) + " output (a stream cannot take "
                 "them back); its pooled line covers those " + std::to_string(frames);
        return 1;
    }
    // cut where the first frame not output starts: the event lines before it stay (the
    // unscored frames they came with may have gone out; a consumer reports only the
    // scored ones)
    if (dropped_ >= 0 && std::uint64_t(dropped_) >= frames) {
        error_ = "the NDJSON log '" + *cfg_.ndjson_path + "' cannot be cut back to frame " +
                 std::to_string(frames) + ": more than " + std::to_string(kTruncateHistory) +
                 " frames went out after it";
        return VMAF_CUDA_EIO;
    }
    while (starts_.size() > 1 && starts_[starts_.size() - 2].first >= frames) starts_.pop_back();
    const long long pos = starts_.back().second;
    starts_.pop_back();
    try {
        out_->cut(pos);
    } catch (const Error& e) {
        error_ = e.what();
        out_failed_ = true;
        return VMAF_CUDA_EIO;
    }
    return VMAF_CUDA_OK;
}

int Live::finish(const Session* s, std::uint64_t frames) {
    static const int order[4] = {VMAF_CUDA_POOL_MIN, VMAF_CUDA_POOL_MAX, VMAF_CUDA_POOL_MEAN,
                                 VMAF_CUDA_POOL_HARMONIC_MEAN};
    if (!cfg_.ndjson_path || out_failed_) return VMAF_CUDA_OK;
    line_.clear();
    line_.string("type", "pooled");
    line_.count("frames", frames);
    line_.begin_object("pooled_metrics");
    for (std::size_t i = 0; frames && s && i < names_.size(); ++i) {
        line_.begin_object(names_[i]);
        for (int k = 0; k < 5; ++k) {
            if (k == 4 && !perc_) break;
            const int pool = k < 4 ? order[k] : cfg_.pool;
            double v = kNaN;
            try {
                v = s->pooled(names_[i], pool);
            } catch (const Error&) {
            }
            line_.number(pool_name(pool), v);
        }
        line_.end_object();
    }
    line_.end_object();
    int ret = write(line_.text());
    if (out_) {
        try {
            out_->close();
        } catch (const Error& e) {
            if (ret == VMAF_CUDA_OK) {
                error_ = e.what();
                ret = VMAF_CUDA_EIO;
            }
        }
        out_.reset();
    }
    out_failed_ = true; // nothing more
    return ret;
}

std::string summary_text(const Session& s, int pool, const std::string& prefix) {
    std::string o;
    for (const Model& m : s.models())
        o += prefix + "VMAF score: " + format_fixed(s.pooled(m.name(), pool), 6) + "\n";
    // a bootstrap collection (vmaf_b_v0.6.3), as libvmaf's vmaf prints it
    for (const Model& m : s.models()) {
        if (m.bootstrap().empty()) continue;
        double v[4];
        const char* suffix[4] = {"_bagging", "_ci_p95_lo", "_ci_p95_hi", "_stddev"};
        for (int k = 0; k < 4; ++k) v[k] = s.pooled(m.name() + suffix[k], pool);
        o += prefix + m.name() + ": " + format_fixed(v[0], 6) + ", ci.p95: [" +
             format_fixed(v[1], 6) + ", " + format_fixed(v[2], 6) + "], stddev: " +
             format_fixed(v[3], 6) + "\n";
    }
    return o;
}

} // namespace vmaf_cuda::engine

// SPDX-License-Identifier: BSD-2-Clause-Patent
// Live QA's metrics for dashboards (API 9): what the live state counted, in the
// Prometheus text exposition format (version 0.0.4), read by a scrape from another
// thread while frames are scored (vmaf_cuda_live_metrics(); the filter serves it on
// metrics_port). One text for several live states (a ladder's renditions), each metric
// family once with a sample per rendition.

#include "vmaf_cuda.h"

#include "live.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace vmaf_cuda::engine {

void Live::note_frame(const VmafCudaFrameScores& fs, std::int64_t pts, bool has_pts) {
    std::lock_guard<std::mutex> lock(metrics_mu_);
    ++metrics_.scored;
    metrics_.last_index = fs.index;
    metrics_.last_has_pts = has_pts;
    metrics_.last_pts = has_pts ? double(pts) * cfg_.tb_num / cfg_.tb_den : 0;
    if (metrics_.names.size() != fs.count) metrics_.names.assign(fs.names, fs.names + fs.count);
    metrics_.values.assign(fs.values, fs.values + fs.count);
    if (cfg_.window) metrics_.windows = stats_;
}

void Live::note_event(const char* event, const char* input) {
    std::lock_guard<std::mutex> lock(metrics_mu_);
    ++metrics_.events[{event ? event : "", input ? input : ""}];
}

void Live::note_unscored(const char* reason) {
    std::lock_guard<std::mutex> lock(metrics_mu_);
    ++metrics_.unscored[reason && *reason ? reason : "unknown"];
}

Live::Metrics Live::metrics() const {
    std::lock_guard<std::mutex> lock(metrics_mu_);
    return metrics_;
}

namespace {

/// A label value with the format's escapes (backslash, double quote, newline).
std::string label(const std::string& v) {
    std::string o;
    for (char c : v) {
        if (c == '\\' || c == '"') o += '\\';
        if (c == '\n') {
            o += "\\n";
            continue;
        }
        o += c;
    }
    return o;
}

/// A sample value: %.17g (parsing gives the same double), NaN and infinities as the
/// format spells them.
std::string value(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

struct Family {
    const char* name;
    const char* type;
    const char* help;
};

} // namespace

/// The metrics of `lives` (rendition k = lives[k]; the label only with several).
std::string metrics_text(const std::vector<const Live*>& lives) {
    std::vector<Live::Metrics> m;
    for (const Live* l : lives) m.push_back(l->metrics());
    const auto now = std::chrono::steady_clock::now();
    std::string o;
    auto head = [&](const Family& f) {
        o += std::string("# HELP ") + f.name + " " + f.help + "\n# TYPE " + f.name + " " + f.type + "\n";
    };
    auto labels = [&](std::size_t k, const std::string& more) {
        std::string l = lives.size() > 1 ? "rendition=\"" + std::to_string(k) + "\"" : "";
        if (!more.empty()) l += (l.empty() ? "" : ",") + more;
        return l.empty() ? std::string() : "{" + l + "}";
    };
    auto sample = [&](const char* name, std::size_t k, const std::string& more, const std::string& v) {
        o += std::string(name) + labels(k, more) + " " + v + "\n";
    };

    head({"vmaf_cuda_uptime_seconds", "gauge", "Seconds since the live state was opened."});
    for (std::size_t k = 0; k < m.size(); ++k)
        sample("vmaf_cuda_uptime_seconds", k, "",
               value(std::chrono::duration<double>(now - m[k].opened).count()));
    head({"vmaf_cuda_frames_scored_total", "counter", "Frames scored."});
    for (std::size_t k = 0; k < m.size(); ++k)
        sample("vmaf_cuda_frames_scored_total", k, "", std::to_string(m[k].scored));
    head({"vmaf_cuda_frames_unscored_total", "counter",
          "Main frames passed through unscored, by reason (no_reference, reference_ended, "
          "reference_gap, reference_stalled)."});
    for (std::size_t k = 0; k < m.size(); ++k)
        for (const auto& [reason, n] : m[k].unscored)
            sample("vmaf_cuda_frames_unscored_total", k, "reason=\"" + label(reason) + "\"",
                   std::to_string(n));
    head({"vmaf_cuda_events_total", "counter",
          "Events told (stalled, resumed, ended, resized), by event and input."});
    for (std::size_t k = 0; k < m.size(); ++k)
        for (const auto& [key, n] : m[k].events)
            sample("vmaf_cuda_events_total", k,
                   "event=\"" + label(key.first) + "\",input=\"" + label(key.second) + "\"",
                   std::to_string(n));
    head({"vmaf_cuda_frame_number", "gauge", "The last scored frame's number in the log (frameNum)."});
    for (std::size_t k = 0; k < m.size(); ++k)
        if (m[k].last_index >= 0)
            sample("vmaf_cuda_frame_number", k, "", std::to_string(m[k].last_index));
    head({"vmaf_cuda_frame_pts_seconds", "gauge", "The last scored frame's time."});
    for (std::size_t k = 0; k < m.size(); ++k)
        if (m[k].last_index >= 0 && m[k].last_has_pts)
            sample("vmaf_cuda_frame_pts_seconds", k, "", value(m[k].last_pts));
    head({"vmaf_cuda_frame_score", "gauge",
          "The last scored frame's value of each feature and model (libvmaf's log names)."});
    for (std::size_t k = 0; k < m.size(); ++k)
        for (std::size_t i = 0; i < m[k].names.size() && i < m[k].values.size(); ++i)
            sample("vmaf_cuda_frame_score", k, "metric=\"" + label(m[k].names[i]) + "\"",
                   value(m[k].values[i]));
    head({"vmaf_cuda_window_score", "gauge",
          "Each model's rolling window (window=): frames, min, mean, harmonic_mean, and max "
          "or the percentile of pool=."});
    for (std::size_t k = 0; k < m.size(); ++k) {
        const auto& models = lives[k]->model_names();
        for (std::size_t j = 0; j < m[k].windows.size() && j < models.size(); ++j) {
            const WindowStats& st = m[k].windows[j];
            const std::string model = "model=\"" + label(models[j]) + "\",stat=\"";
            sample("vmaf_cuda_window_score", k, model + "frames\"", std::to_string(st.count));
            for (const char* stat : lives[k]->window_stat_names())
                sample("vmaf_cuda_window_score", k, model + stat + "\"",
                       value(lives[k]->stat_value(st, stat)));
        }
    }
    return o;
}

} // namespace vmaf_cuda::engine

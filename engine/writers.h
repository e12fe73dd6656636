// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file writers.h
/// Log files in the layouts of libvmaf v3.2.0 src/output.c (vmaf_write_output_xml,
/// _json, _csv, _sub), from a plain table of scored frames.

#include <array>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vmaf_cuda::engine {

/// Same values as VmafCudaLogFormat.
enum class LogFormat { xml = 0, json = 1, csv = 2, sub = 3 };

/// One feature or model score over the scored frames.
struct LogColumn {
    /// Name as stored (collector key, e.g. "VMAF_integer_feature_adm2_score" or "vmaf");
    /// the writers print feature_alias(name), as libvmaf does ("integer_adm2").
    std::string name;
    /// One value per LogTable::frames entry. NaN/Inf print as null in JSON and as
    /// printf prints them ("nan", "inf") elsewhere, as libvmaf does.
    std::vector<double> values;
    /// Pooled values indexed by VmafCudaPool (MEAN, HARMONIC_MEAN, MIN, MAX); written
    /// in libvmaf's order min, max, mean, harmonic_mean. See pooling.h.
    std::array<double, 4> pooled{std::numeric_limits<double>::quiet_NaN(),
                                 std::numeric_limits<double>::quiet_NaN(),
                                 std::numeric_limits<double>::quiet_NaN(),
                                 std::numeric_limits<double>::quiet_NaN()};
};

/// Everything a log shows.
struct LogTable {
    std::string version;   ///< "version" field; empty: this library's version string
    double fps = std::numeric_limits<double>::quiet_NaN(); ///< "%.2f"; JSON null when NaN/Inf
    unsigned width = 0, height = 0; ///< XML <params qualityWidth/qualityHeight>
    unsigned subsample = 1;  ///< informational: `frames` already holds only scored frames
    /// Digits after the decimal point, 1..17: "%.Nf", switching to "%.Mf" (M = max(N, 16))
    /// for values with more than N leading zeros after the decimal point; N = 6 is
    /// exactly libvmaf's rule (%.6f, %.16f beyond 6 leading zeros). -1: "%.17g",
    /// which parses back to the same double.
    int precision = 6;
    std::vector<unsigned> frames;   ///< frame numbers of the rows, increasing (frameNum)
    std::vector<LogColumn> columns; ///< in output order
    /// Segments of a stream whose picture size changed (Session::adopt()), oldest first;
    /// written (JSON "segments", XML <segments>) only when there are several, so a log
    /// of one size is libvmaf's layout exactly. CSV and SUB have no place for them.
    struct Segment { unsigned first_frame, frames, width, height, bpc; };
    std::vector<Segment> segments;
    /// The offset a synchroniser paired with (vmaf_cuda_set_sync_offset()): (first frame,
    /// seconds), in order; JSON "sync_offset" (the first) and "sync_changes" (the rest).
    std::vector<std::pair<std::uint64_t, double>> sync;
    /// libvmaf's aggregate_metrics (name, value), in order; empty for adm/vif/motion.
    std::vector<std::pair<std::string, double>> aggregate;
};

/// The log text. Throws Error(VMAF_CUDA_EINVAL) for a bad format or precision, or a
/// column whose value count differs from frames.size().
std::string format_log(LogFormat fmt, const LogTable& t);

/// Writes format_log() to `path` by log_file.h's rules (whole or not at all; "-" and
/// "pipe:N" are descriptors; links and devices written through). Throws
/// Error(VMAF_CUDA_EIO) naming the path and the reason when it cannot be written,
/// Error(VMAF_CUDA_EINVAL) as format_log().
void write_log_file(const std::string& path, LogFormat fmt, const LogTable& t);

/// One value as the logs print it with `precision` (see LogTable::precision).
std::string format_value(double v, int precision);

/// printf's "%.<digits>f" in the C locale, whatever the process locale.
std::string format_fixed(double v, int digits);

/// The JSON text of a string, as the JSON log writes names (nlohmann-json: quotes and
/// escapes). Throws Error(VMAF_CUDA_EINVAL) for a string that is not UTF-8.
std::string json_string(std::string_view s);

/// A JSON object on one line (live QA: the NDJSON lines, the SEI payload), its values
/// written as the JSON log writes them: names through json_string(), numbers by
/// format_value() with the precision given and null when not finite (JSON has no NaN).
/// nlohmann-json prints a double by its shortest round trip, not by libvmaf's rule, so
/// the numbers are placed here; commas and braces are placed by the nesting.
class JsonLine {
public:
    explicit JsonLine(int precision) : precision_(precision) {}
    /// Starts a new object, dropping what was there.
    void clear();
    /// "key":{ ... until end_object().
    void begin_object(std::string_view key);
    void end_object();
    void number(std::string_view key, double v);        ///< as the JSON log
    void count(std::string_view key, unsigned long long v); ///< an integer
    void string(std::string_view key, std::string_view v);
    void raw(std::string_view key, std::string_view json); ///< JSON text as given
    /// The text, every object closed.
    const std::string& text();

private:
    void key(std::string_view k);
    int precision_;
    std::string s_;
    std::vector<bool> first_; ///< per open object: no member yet
};

} // namespace vmaf_cuda::engine

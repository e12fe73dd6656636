// SPDX-License-Identifier: BSD-2-Clause-Patent
// libvmaf-layout logs (src/output.c of libvmaf v3.2.0): element and key names,
// separators and the per-value precision rule are libvmaf's. Numbers are printed
// with std::to_chars, i.e. printf's output in the C locale whatever the process locale.

#include "writers.h"

#include "error.h"
#include "log_file.h"
#include "model.h"
#include "vmaf_cuda.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>


#ifndef VMAF_CUDA_VERSION_STRING
#define VMAF_CUDA_VERSION_STRING "unknown"
#endif

namespace vmaf_cuda::engine {
namespace {

// libvmaf's count_leading_zeros_d: zeros between the decimal point and the first
// non-zero digit of |x|'s fractional part, found by repeated *10 in double.
// Where libvmaf's (int) conversion would overflow (|x| >= 2^31, Inf, NaN) x86 gives
// INT_MIN, which leaves a "fraction" >= 1 (or NaN): 0 zeros.
int leading_zeros(double x) {
    if (x < 0) x = std::fabs(x);
    if (!(x < 2147483648.0)) return 0;
    const int int_part = int(x);
    double frac = x - int_part;
    int n = 0;
    while (frac < 1.0 && frac != 0) {
        frac *= 10;
        ++n;
    }
    return n;
}

std::string fixed(double v, int digits) {
    char buf[400];  // DBL_MAX in fixed notation needs 309 digits + sign + point + 17
    const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, digits);
    return std::string(buf, r.ptr);
}

bool finite(double v) { return std::isfinite(v); }

// JSON: non-finite values are null (libvmaf switches on fpclassify()).
std::string json_value(double v, int precision) {
    return finite(v) ? format_value(v, precision) : std::string("null");
}


std::string xml_escape(const std::string& s) {
    std::string o;
    for (const char c : s) {
        switch (c) {
        case '&': o += "&amp;"; break;
        case '<': o += "&lt;"; break;
        case '>': o += "&gt;"; break;
        case '"': o += "&quot;"; break;
        default: o += c;
        }
    }
    return o;
}

// Pool methods in libvmaf's log order (VMAF_POOL_METHOD_MIN..HARMONIC_MEAN) with the
// VmafCudaPool index holding each.
struct PoolName {
    const char* name;
    int index;
};
constexpr PoolName kPoolOrder[] = {{"min", VMAF_CUDA_POOL_MIN},
                                   {"max", VMAF_CUDA_POOL_MAX},
                                   {"mean", VMAF_CUDA_POOL_MEAN},
                                   {"harmonic_mean", VMAF_CUDA_POOL_HARMONIC_MEAN}};

std::string log_name(const LogColumn& c) { return std::string(feature_alias(c.name)); }

std::string version_of(const LogTable& t) {
    return t.version.empty() ? std::string(VMAF_CUDA_VERSION_STRING) : t.version;
}

void write_xml(std::string& o, const LogTable& t) {
    const int p = t.precision;
    o += "<VMAF version=\"" + xml_escape(version_of(t)) + "\">\n";
    o += "  <params qualityWidth=\"" + std::to_string(t.width) + "\" qualityHeight=\"" +
         std::to_string(t.height) + "\" />\n";
    o += "  <fyi fps=\"" + fixed(t.fps, 2) + "\" />\n";
    if (t.segments.size() > 1) {
        o += "  <segments>\n";
        for (const LogTable::Segment& g : t.segments)
            o += "    <segment firstFrame=\"" + std::to_string(g.first_frame) + "\" frames=\"" +
                 std::to_string(g.frames) + "\" width=\"" + std::to_string(g.width) +
                 "\" height=\"" + std::to_string(g.height) + "\" bitDepth=\"" +
                 std::to_string(g.bpc) + "\" />\n";
        o += "  </segments>\n";
    }
    o += "  <frames>\n";
    for (std::size_t r = 0; r < t.frames.size(); ++r) {
        o += "    <frame frameNum=\"" + std::to_string(t.frames[r]) + "\" ";
        for (const LogColumn& c : t.columns)
            o += log_name(c) + "=\"" + format_value(c.values[r], p) + "\" ";
        o += "/>\n";
    }
    o += "  </frames>\n";
    o += "  <pooled_metrics>\n";
    for (const LogColumn& c : t.columns) {
        o += "    <metric name=\"" + log_name(c) + "\" ";
        for (const PoolName& pn : kPoolOrder)
            o += std::string(pn.name) + "=\"" + format_value(c.pooled[pn.index], p) + "\" ";
        o += "/>\n";
    }
    o += "  </pooled_metrics>\n";
    o += "  <aggregate_metrics ";
    for (const auto& [name, v] : t.aggregate) o += name + "=\"" + format_value(v, p) + "\" ";
    o += "/>\n";
    o += "</VMAF>\n";
}

void write_json(std::string& o, const LogTable& t) {
    const int p = t.precision;
    o += "{\n";
    o += "  \"version\": " + json_string(version_of(t)) + ",\n";
    o += "  \"fps\": " + (finite(t.fps) ? fixed(t.fps, 2) : std::string("null")) + ",\n";
    if (!t.sync.empty()) {
        // the alignment's offset in seconds (main relative to the reference), "%.6f" as
        // FFmpeg's pts_time, and where a re-check changed it
        char v[64];
        std::snprintf(v, sizeof v, "%.6f", t.sync.front().second);
        // (NaN: the search found none, the inputs were paired as their timestamps say)
        o += "  \"sync_offset\": " + std::string(std::isnan(t.sync.front().second) ? "null" : v) + ",\n";
        if (t.sync.size() > 1) {
            o += "  \"sync_changes\": [";
            for (std::size_t i = 1; i < t.sync.size(); ++i) {
                std::snprintf(v, sizeof v, "%.6f", t.sync[i].second);
                o += (i > 1 ? ", " : "") + std::string("{\"frame\": ") +
                     std::to_string(t.sync[i].first) + ", \"offset\": " + v + "}";
            }
            o += "],\n";
        }
    }
    if (t.segments.size() > 1) {
        // the picture size changed: where each size starts (frameNum) and how many
        // frames were sent at it
        o += "  \"segments\": [";
        for (std::size_t i = 0; i < t.segments.size(); ++i) {
            const LogTable::Segment& g = t.segments[i];
            o += (i ? ",\n" : "\n") + std::string("    {\"first_frame\": ") +
                 std::to_string(g.first_frame) + ", \"frames\": " + std::to_string(g.frames) +
                 ", \"width\": " + std::to_string(g.width) + ", \"height\": " +
                 std::to_string(g.height) + ", \"bit_depth\": " + std::to_string(g.bpc) + "}";
        }
        o += "\n  ],\n";
    }
    o += "  \"frames\": [";
    for (std::size_t r = 0; r < t.frames.size(); ++r) {
        // libvmaf writes ",\n" before every frame but frame 0; frame 0 is always first.
        o += r > 0 ? ",\n" : "\n";
        o += "    {\n";
        o += "      \"frameNum\": " + std::to_string(t.frames[r]) + ",\n";
        o += "      \"metrics\": {\n";
        for (std::size_t c = 0; c < t.columns.size(); ++c) {
            const LogColumn& col = t.columns[c];
            o += "        " + json_string(log_name(col)) + ": " + json_value(col.values[r], p);
            o += c + 1 < t.columns.size() ? ",\n" : "\n";
        }
        o += "      }\n";
        o += "    }";
    }
    o += "\n  ],\n";
    o += "  \"pooled_metrics\": {";
    for (std::size_t c = 0; c < t.columns.size(); ++c) {
        const LogColumn& col = t.columns[c];
        o += c > 0 ? ",\n" : "\n";
        o += "    " + json_string(log_name(col)) + ": {";
        for (std::size_t j = 0; j < 4; ++j) {
            o += j > 0 ? ",\n" : "\n";
            o += std::string("      \"") + kPoolOrder[j].name + "\": " +
                 json_value(col.pooled[kPoolOrder[j].index], p);
        }
        o += "\n";
        o += "    }";
    }
    o += "\n  },\n";
    o += "  \"aggregate_metrics\": {";
    for (std::size_t i = 0; i < t.aggregate.size(); ++i) {
        o += "\n    " + json_string(t.aggregate[i].first) + ": " +
             json_value(t.aggregate[i].second, p);
        if (i + 1 < t.aggregate.size()) o += ",";
    }
    o += "\n  }\n";
    o += "}\n";
}

void write_csv(std::string& o, const LogTable& t) {
    o += "Frame,";
    for (const LogColumn& c : t.columns) o += log_name(c) + ",";
    o += "\n";
    for (std::size_t r = 0; r < t.frames.size(); ++r) {
        o += std::to_string(t.frames[r]) + ",";
        for (const LogColumn& c : t.columns) o += format_value(c.values[r], t.precision) + ",";
        o += "\n";
    }
}

void write_sub(std::string& o, const LogTable& t) {
    for (std::size_t r = 0; r < t.frames.size(); ++r) {
        const unsigned i = t.frames[r];
        o += '{';
        o += std::to_string(i);
        o += "}{";
        o += std::to_string(i + 1u);
        o += "}frame: ";
        o += std::to_string(i);
        o += '|';
        for (const LogColumn& c : t.columns)
            o += log_name(c) + ": " + format_value(c.values[r], t.precision) + "|";
        o += "\n";
    }
}

} // namespace

std::string format_value(double v, int precision) {
    if (precision == -1) {
        char buf[64];
        const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 17);
        return std::string(buf, r.ptr);
    }
    if (precision < 1 || precision > 17)
        throw Error(VMAF_CUDA_EINVAL, "log precision " + std::to_string(precision) +
                                          " is invalid (1..17, or -1 for round-trip)");
    return leading_zeros(v) <= precision ? fixed(v, precision)
                                         : fixed(v, std::max(precision, 16));
}

std::string format_fixed(double v, int digits) { return fixed(v, digits); }

std::string json_string(std::string_view s) {
    try {
        return nlohmann::json(std::string(s)).dump();
    } catch (const nlohmann::json::exception& e) {
        throw Error(VMAF_CUDA_EINVAL, "a name that is not UTF-8 cannot be written as JSON (" +
                                          std::string(e.what()) + ")");
    }
}

void JsonLine::clear() {
    s_ = "{";
    first_.assign(1, true);
}

void JsonLine::key(std::string_view k) {
    if (first_.empty()) clear();
    if (!first_.back()) s_ += ',';
    first_.back() = false;
    s_ += json_string(k);
    s_ += ':';
}

void JsonLine::begin_object(std::string_view k) {
    key(k);
    s_ += '{';
    first_.push_back(true);
}

void JsonLine::end_object() {
    if (first_.size() > 1) {
        s_ += '}';
        first_.pop_back();
    }
}

void JsonLine::number(std::string_view k, double v) {
    key(k);
    s_ += json_value(v, precision_);
}

void JsonLine::count(std::string_view k, unsigned long long v) {
    key(k);
    s_ += std::to_string(v);
}

void JsonLine::string(std::string_view k, std::string_view v) {
    key(k);
    s_ += json_string(v);
}

void JsonLine::raw(std::string_view k, std::string_view json) {
    key(k);
    s_ += json;
}

const std::string& JsonLine::text() {
    if (first_.empty()) clear();
    while (!first_.empty()) {
        s_ += '}';
        first_.pop_back();
    }
    return s_;
}

std::string format_log(LogFormat fmt, const LogTable& t) {
    if (t.precision != -1 && (t.precision < 1 || t.precision > 17))
        throw Error(VMAF_CUDA_EINVAL, "log precision " + std::to_string(t.precision) +
                                          " is invalid (1..17, or -1 for round-trip)");
    for (const LogColumn& c : t.columns)
        if (c.values.size() != t.frames.size())
            throw Error(VMAF_CUDA_EINVAL, "log column \"" + c.name + "\" has " +
                                              std::to_string(c.values.size()) + " values for " +
                                              std::to_string(t.frames.size()) + " frames");
    std::string o;
    switch (fmt) {
    case LogFormat::xml: write_xml(o, t); break;
    case LogFormat::json: write_json(o, t); break;
    case LogFormat::csv: write_csv(o, t); break;
    case LogFormat::sub: write_sub(o, t); break;
    default:
        throw Error(VMAF_CUDA_EINVAL, "unknown log format " + std::to_string(int(fmt)));
    }
    return o;
}

void write_log_file(const std::string& path, LogFormat fmt, const LogTable& t) {
    write_text_file(path, format_log(fmt, t));
}

} // namespace vmaf_cuda::engine

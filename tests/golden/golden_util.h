// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file golden_util.h
/// Reading ../shared/golden: the case list, the per-frame CSVs (values printed with
/// %.17g, so strtod gives libvmaf's exact doubles) and the clips' planes (luma only, or
/// all three).

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace vmaf_cuda_test {

/// Folder of the golden files; from the environment (VMAF_CUDA_GOLDEN_DIR) or the
/// build-time default.
inline std::string golden_dir() {
    if (const char* e = std::getenv("VMAF_CUDA_GOLDEN_DIR")) return e;
#ifdef VMAF_CUDA_GOLDEN_DIR
    return VMAF_CUDA_GOLDEN_DIR;
#else
    return "../shared/golden";
#endif
}

/// Folder of the model files (the repository's models/); from the environment
/// (VMAF_CUDA_MODEL_DIR) or the build-time default.
inline std::string model_dir() {
    if (const char* e = std::getenv("VMAF_CUDA_MODEL_DIR")) return e;
#ifdef VMAF_CUDA_MODEL_DIR
    return VMAF_CUDA_MODEL_DIR;
#else
    return "models";
#endif
}

/// Folder where the .mp4 clips were decoded to raw YUV (X.mp4 -> X.yuv).
inline std::string decoded_dir() {
    if (const char* e = std::getenv("VMAF_CUDA_DECODED_DIR")) return e;
#ifdef VMAF_CUDA_DECODED_DIR
    return VMAF_CUDA_DECODED_DIR;
#else
    return ".";
#endif
}

struct GoldenCase {
    std::string name, ref, dist; ///< ref/dist: paths of raw YUV files
    unsigned width = 0, height = 0, bpc = 8, chroma = 420, frames = 0;
};

/// Maps "media/x.mp4" to the decoded YUV, "media/x.yuv" to the file beside golden/.
inline std::string media_path(const std::string& rel) {
    if (rel.size() > 4 && rel.compare(rel.size() - 4, 4, ".mp4") == 0) {
        const auto slash = rel.find_last_of('/');
        const std::string stem = rel.substr(slash + 1, rel.size() - slash - 5);
        return decoded_dir() + "/" + stem + ".yuv";
    }
    return golden_dir() + "/../" + rel;
}

/// The golden folder, or a clear error when it is missing (a clone without the project's
/// shared/ folder beside it).
inline std::string require_golden_dir() {
    const std::string dir = golden_dir();
    if (!std::ifstream(dir + "/cases.tsv"))
        throw std::runtime_error(
            "golden folder \"" + dir + "\" not found (no cases.tsv there): these tests compare "
            "with the libvmaf v3.2.0 values in it. Put the project's shared/ folder beside the "
            "clone, or name its golden/ folder with meson configure BUILDDIR -Dgolden_dir=PATH "
            "(or the environment variable VMAF_CUDA_GOLDEN_DIR)");
    return dir;
}

inline std::vector<GoldenCase> golden_cases() {
    std::ifstream in(require_golden_dir() + "/cases.tsv");
    if (!in) throw std::runtime_error("cannot read " + golden_dir() + "/cases.tsv");
    std::vector<GoldenCase> out;
    std::string line;
    std::getline(in, line); // header
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        std::istringstream ls(line);
        std::vector<std::string> f;
        std::string tok;
        while (std::getline(ls, tok, '\t')) f.push_back(tok);
        if (f.size() < 8) continue;
        GoldenCase c;
        c.name = f[0];
        c.ref = media_path(f[1]);
        c.dist = media_path(f[2]);
        c.width = unsigned(std::stoul(f[3]));
        c.height = unsigned(std::stoul(f[4]));
        c.bpc = unsigned(std::stoul(f[5]));
        c.chroma = unsigned(std::stoul(f[6]));
        c.frames = unsigned(std::stoul(f[7]));
        out.push_back(c);
    }
    return out;
}

/// One golden CSV: column names and rows of doubles; the trailing "# pooled" comment.
struct GoldenTable {
    std::vector<std::string> columns;      ///< without "frame"
    std::vector<std::vector<double>> rows; ///< rows[i][j] = frame i, column j
    std::map<std::string, double> pooled;  ///< mean, harmonic_mean, min, max, frames
};

inline GoldenTable read_golden_csv(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    GoldenTable t;
    std::string line;
    std::getline(in, line);
    {
        std::istringstream ls(line);
        std::string tok;
        std::getline(ls, tok, ','); // frame
        while (std::getline(ls, tok, ',')) t.columns.push_back(tok);
    }
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        if (line[0] == '#') {
            std::istringstream ls(line);
            std::string tok;
            while (ls >> tok) {
                const auto eq = tok.find('=');
                if (eq != std::string::npos)
                    t.pooled[tok.substr(0, eq)] = std::strtod(tok.c_str() + eq + 1, nullptr);
            }
            continue;
        }
        std::istringstream ls(line);
        std::string tok;
        std::getline(ls, tok, ',');
        std::vector<double> row;
        while (std::getline(ls, tok, ',')) row.push_back(std::strtod(tok.c_str(), nullptr));
        t.rows.push_back(row);
    }
    return t;
}

/// The name our logs and API use for a golden column (libvmaf's log alias).
inline std::string api_name(const std::string& golden_column) {
    static const std::map<std::string, std::string> m = {
        {"VMAF_integer_feature_adm2_score", "integer_adm2"},
        {"VMAF_integer_feature_vif_scale0_score", "integer_vif_scale0"},
        {"VMAF_integer_feature_vif_scale1_score", "integer_vif_scale1"},
        {"VMAF_integer_feature_vif_scale2_score", "integer_vif_scale2"},
        {"VMAF_integer_feature_vif_scale3_score", "integer_vif_scale3"},
        {"VMAF_integer_feature_motion2_score", "integer_motion2"},
        {"VMAF_integer_feature_motion3_score", "integer_motion3"},
        {"VMAF_integer_feature_aim_score", "integer_aim"},
        {"VMAF_integer_feature_adm3_score", "integer_adm3"},
    };
    const auto it = m.find(golden_column);
    return it == m.end() ? golden_column : it->second;
}

/// Reads all frames' luma of a raw planar YUV file (tightly packed, w*h samples each).
inline std::vector<std::vector<std::uint8_t>> read_luma_frames(const GoldenCase& c,
                                                               const std::string& path) {
    const std::size_t bps = c.bpc > 8 ? 2 : 1;
    const std::size_t cw = c.chroma == 444 ? c.width : (c.width + 1) / 2;
    const std::size_t ch = c.chroma == 420 ? (c.height + 1) / 2 : c.height;
    const std::size_t luma = std::size_t(c.width) * c.height * bps;
    const std::size_t frame = luma + 2 * cw * ch * bps;
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path);
    std::vector<std::vector<std::uint8_t>> out;
    std::vector<char> buf(frame);
    while (in.read(buf.data(), std::streamsize(frame)))
        out.emplace_back(buf.begin(), buf.begin() + std::ptrdiff_t(luma));
    return out;
}

/// One frame of a raw planar YUV file: Y (w x h), U and V (cw x ch each, ceil halves
/// where subsampled, as in the files), tightly packed; 16-bit little-endian above 8 bits.
struct YuvFrame {
    std::vector<std::uint8_t> y, u, v;
    std::size_t bps = 1;             ///< bytes per sample
    unsigned w = 0, h = 0, cw = 0, ch = 0;
    const std::uint8_t* plane(unsigned p) const { return p == 0 ? y.data() : p == 1 ? u.data() : v.data(); }
    std::size_t pitch(unsigned p) const { return (p == 0 ? w : cw) * bps; }
};

/// Chroma plane size of a case as stored in the files: ceil halves where subsampled.
inline unsigned chroma_width(const GoldenCase& c) {
    return c.chroma == 444 ? c.width : (c.width + 1) / 2;
}
inline unsigned chroma_height(const GoldenCase& c) {
    return c.chroma == 420 ? (c.height + 1) / 2 : c.height;
}

/// Reads all frames (all three planes) of a raw planar YUV file.
inline std::vector<YuvFrame> read_yuv_frames(const GoldenCase& c, const std::string& path) {
    YuvFrame proto;
    proto.bps = c.bpc > 8 ? 2 : 1;
    proto.w = c.width;
    proto.h = c.height;
    proto.cw = chroma_width(c);
    proto.ch = chroma_height(c);
    const std::size_t luma = std::size_t(proto.w) * proto.h * proto.bps;
    const std::size_t chroma = std::size_t(proto.cw) * proto.ch * proto.bps;
    const std::size_t frame = luma + 2 * chroma;
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path);
    std::vector<YuvFrame> out;
    std::vector<char> buf(frame);
    while (in.read(buf.data(), std::streamsize(frame))) {
        YuvFrame f = proto;
        const auto b = buf.begin();
        f.y.assign(b, b + std::ptrdiff_t(luma));
        f.u.assign(b + std::ptrdiff_t(luma), b + std::ptrdiff_t(luma + chroma));
        f.v.assign(b + std::ptrdiff_t(luma + chroma), b + std::ptrdiff_t(frame));
        out.push_back(std::move(f));
    }
    return out;
}

/// Same double? (bitwise, so that -0.0 vs 0.0 and NaN patterns are caught too)
inline bool same_double(double a, double b) {
    return std::memcmp(&a, &b, sizeof a) == 0;
}

inline std::string fmt17(double v) {
    char b[64];
    std::snprintf(b, sizeof b, "%.17g", v);
    return b;
}

} // namespace vmaf_cuda_test

// SPDX-License-Identifier: BSD-2-Clause-Patent
#include "video_reader.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <sstream>

namespace vmaf_cuda::tools {
namespace {

/// Whole decimal number in [lo, hi], else InputError naming `what` and the text.
unsigned long parse_number(const std::string& text, unsigned long lo, unsigned long hi,
                           const std::string& what) {
    std::size_t used = 0;
    unsigned long v = 0;
    try {
        if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) throw 0;
        v = std::stoul(text, &used);
    } catch (...) {
        used = 0;
    }
    if (used == 0 || used != text.size() || v < lo || v > hi)
        throw InputError(what + " '" + text + "' is not a number in " + std::to_string(lo) + ".." +
                         std::to_string(hi));
    return v;
}

} // namespace

unsigned VideoFormat::chroma_width() const {
    switch (chroma) {
    case 400: return 0;
    case 444: return width;
    default: return width / 2 + width % 2;
    }
}

unsigned VideoFormat::chroma_height() const {
    switch (chroma) {
    case 400: return 0;
    case 420: return height / 2 + height % 2;
    default: return height;
    }
}

VmafCudaPicture host_picture(const std::vector<std::uint8_t>& frame, const VideoFormat& f) {
    VmafCudaPicture p{};
    p.luma = frame.data();
    p.pitch = ptrdiff_t(f.width) * f.bytes_per_sample();
    p.memory = VMAF_CUDA_MEMORY_HOST;
    if (f.chroma_samples()) {
        p.chroma[0] = frame.data() + f.cb_offset();
        p.chroma[1] = frame.data() + f.cr_offset();
        p.chroma_pitch = ptrdiff_t(f.chroma_width()) * f.bytes_per_sample();
        p.chroma_step = 1;
    }
    return p;
}

VideoReader::VideoReader(const std::string& path, const VideoFormat& fmt)
    : path_(path), fmt_(fmt) {
    f_ = std::fopen(path.c_str(), "rb");
    if (!f_)
        throw InputError("cannot open '" + path + "': " + std::strerror(errno));
    char magic[9] = {};
    const std::size_t got = std::fread(magic, 1, 9, f_);
    if (got == 9 && std::memcmp(magic, "YUV4MPEG2", 9) == 0) {
        y4m_ = true;
        parse_y4m_header();
        return;
    }
    if (fmt_.width == 0 || fmt_.height == 0)
        throw InputError("'" + path + "' is raw YUV: give its size with -w and -h");
    if (std::fseek(f_, 0, SEEK_END) != 0)
        throw InputError("cannot seek in '" + path + "'");
    const long size = std::ftell(f_);
    std::rewind(f_);
    const std::size_t fb = fmt_.frame_bytes();
    if (size < 0 || std::size_t(size) % fb != 0) {
        std::ostringstream m;
        m << "'" << path << "' holds " << size << " bytes, not a whole number of "
          << fmt_.width << "x" << fmt_.height << " " << fmt_.chroma << " " << fmt_.bpc
          << "-bit frames of " << fb << " bytes (wrong -w/-h/-p/-b, or a truncated file?)";
        throw InputError(m.str());
    }
    frame_count_ = long(std::size_t(size) / fb);
}

VideoReader::~VideoReader() {
    if (f_) std::fclose(f_);
}

void VideoReader::parse_y4m_header() {
    std::string line;
    int c;
    while ((c = std::fgetc(f_)) != EOF && c != '\n') line.push_back(char(c));
    if (c != '\n') throw InputError("'" + path_ + "': truncated Y4M header");
    std::istringstream in(line);
    std::string tok;
    std::string cs = "420";
    unsigned w = 0, h = 0;
    const std::string where = "'" + path_ + "': Y4M header ";
    while (in >> tok) {
        switch (tok[0]) {
        case 'W': w = unsigned(parse_number(tok.substr(1), 1, 1u << 20, where + "width")); break;
        case 'H': h = unsigned(parse_number(tok.substr(1), 1, 1u << 20, where + "height")); break;
        case 'C': cs = tok.substr(1); break;
        case 'F': {
            const auto colon = tok.find(':');
            if (colon == std::string::npos)
                throw InputError(where + "frame rate '" + tok.substr(1) + "' is not N:D");
            const double num = double(parse_number(tok.substr(1, colon - 1), 0, ~0u, where + "frame rate"));
            const double den = double(parse_number(tok.substr(colon + 1), 0, ~0u, where + "frame rate"));
            if (den > 0) fmt_.fps = num / den;
            break;
        }
        default: break;
        }
    }
    if (w == 0 || h == 0) throw InputError(where + "has no W/H");
    fmt_.width = w;
    fmt_.height = h;
    // Colour space: 420jpeg, 420paldv, 420mpeg2, 420, 422, 444, mono, 420p10, 444p12 ...
    unsigned chroma = 0, bpc = 8;
    const std::string bad = where + "colour space C" + cs + " is not supported (420, 422, 444, mono, with pNN for more than 8 bits)";
    if (cs.rfind("mono", 0) == 0) {
        chroma = 400;
        if (cs.size() > 4) bpc = unsigned(parse_number(cs.substr(4), 8, 16, bad));
    } else if (cs.size() >= 3 && std::isdigit((unsigned char)cs[0])) {
        chroma = unsigned(parse_number(cs.substr(0, 3), 0, 999, bad));
        const auto p = cs.find('p', 3);
        if (p != std::string::npos && p + 1 < cs.size() && std::isdigit((unsigned char)cs[p + 1]))
            bpc = unsigned(parse_number(cs.substr(p + 1), 8, 16, bad));
    }
    if ((chroma != 420 && chroma != 422 && chroma != 444 && chroma != 400) || bpc < 8 || bpc > 16)
        throw InputError(bad);
    fmt_.chroma = chroma;
    fmt_.bpc = bpc;
}

bool VideoReader::read(std::vector<std::uint8_t>& frame) {
    if (y4m_) {
        char tag[5];
        const std::size_t got = std::fread(tag, 1, 5, f_);
        if (got == 0) return false;
        if (got != 5 || std::memcmp(tag, "FRAME", 5) != 0)
            throw InputError("'" + path_ + "': bad Y4M frame header at frame " +
                             std::to_string(frames_read_));
        int c;
        while ((c = std::fgetc(f_)) != EOF && c != '\n') {}
        if (c != '\n')
            throw InputError("'" + path_ + "': truncated at frame " + std::to_string(frames_read_));
    }
    frame.resize(fmt_.frame_bytes());
    const std::size_t got = std::fread(frame.data(), 1, frame.size(), f_);
    if (got == 0 && !y4m_) return false;
    if (got != frame.size())
        throw InputError("'" + path_ + "' is truncated: frame " + std::to_string(frames_read_) +
                         " is incomplete");
    ++frames_read_;
    return true;
}

} // namespace vmaf_cuda::tools

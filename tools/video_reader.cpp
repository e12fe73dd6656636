// SPDX-License-Identifier: BSD-2-Clause-Patent
#include "video_reader.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <sstream>

#include <sys/stat.h>
#include <unistd.h>

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
    if (path == "-") {
        f_ = stdin;
        own_ = false;
    } else {
        f_ = std::fopen(path.c_str(), "rb");
    }
    if (!f_)
        throw InputError("cannot open '" + path + "': " + std::strerror(errno));
    struct stat st {};
    if (::fstat(::fileno(f_), &st) != 0)
        throw InputError("cannot open '" + path + "': " + std::strerror(errno));
    if (S_ISDIR(st.st_mode))
        throw InputError("cannot read '" + path + "': " + std::strerror(EISDIR));
    // A regular file may be measured; anything else (a pipe, a FIFO, /dev/stdin, a
    // terminal) is read as a stream until its end, never seeked: the magic's bytes are
    // kept in head_ and returned first.
    const bool regular = S_ISREG(st.st_mode);
    const long start = regular ? std::ftell(f_) : 0; // standard input may start past 0
    head_.resize(9);
    head_.resize(std::fread(head_.data(), 1, head_.size(), f_));
    if (std::ferror(f_))
        throw InputError("cannot read '" + path + "': " + std::strerror(errno));
    if (head_.size() == 9 && std::memcmp(head_.data(), "YUV4MPEG2", 9) == 0) {
        head_.clear();
        y4m_ = true;
        parse_y4m_header();
        return;
    }
    if (fmt_.width == 0 || fmt_.height == 0)
        throw InputError("'" + path + "' is raw YUV: give its size with -w and -h");
    if (!regular) return; // a stream: frames until its end, the count unknown
    const std::size_t size = std::size_t(st.st_size) - std::size_t(start > 0 ? start : 0);
    const std::size_t fb = fmt_.frame_bytes();
    if (size % fb != 0) {
        std::ostringstream m;
        m << "'" << path << "' holds " << size << " bytes, not a whole number of "
          << fmt_.width << "x" << fmt_.height << " " << fmt_.chroma << " " << fmt_.bpc
          << "-bit frames of " << fb << " bytes: frame " << size / fb << " is incomplete (got "
          << size % fb << " of " << fb << " bytes; wrong -w/-h/-p/-b, or a truncated file?)";
        throw InputError(m.str());
    }
    frame_count_ = long(size / fb);
}

VideoReader::~VideoReader() {
    if (f_ && own_) std::fclose(f_);
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
        case 'I':
            // as libvmaf's vmaf (y4m_input.c): progressive ("Ip") or unknown ("I?", or
            // no I token) is read, anything else is refused
            if (tok != "Ip" && tok != "I?")
                throw InputError(where + "says " + tok + ": interlaced video (It top field first, "
                                 "Ib bottom field first, Im mixed) is not supported, as libvmaf "
                                 "refuses it; deinterlace it first");
            break;
        case 'F': {
            const auto colon = tok.find(':');
            if (colon == std::string::npos)
                throw InputError(where + "frame rate '" + tok.substr(1) + "' is not N:D");
            const double num = double(parse_number(tok.substr(1, colon - 1), 0, ~0u, where + "frame rate"));
            const double den = double(parse_number(tok.substr(colon + 1), 0, ~0u, where + "frame rate"));
            if (den > 0) {
                fmt_.fps = num / den;
                fmt_.fps_num = unsigned(num);
                fmt_.fps_den = unsigned(den);
            }
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
    y4m_cs_ = "C" + cs;
}

std::size_t VideoReader::fill(std::uint8_t* dst, std::size_t n) {
    const std::size_t ahead = std::min(n, head_.size());
    std::memcpy(dst, head_.data(), ahead);
    head_.erase(head_.begin(), head_.begin() + std::ptrdiff_t(ahead));
    const std::size_t got = ahead + std::fread(dst + ahead, 1, n - ahead, f_);
    if (got < n && std::ferror(f_))
        throw InputError("cannot read '" + path_ + "' at frame " + std::to_string(frames_read_) +
                         ": " + std::strerror(errno));
    return got;
}

void VideoReader::check_range(const std::vector<std::uint8_t>& frame) const {
    if (fmt_.bpc <= 8 || fmt_.bpc >= 16) return; // every stored value is valid
    // Samples are 16-bit little-endian words: a value above 2^bpc - 1 has a bit of its
    // high (odd) byte set above bit bpc - 9. One OR over 8-byte words; the byte mask is
    // laid out as the bytes are, so it holds on any host byte order.
    const std::uint8_t hi = std::uint8_t((0xffu << (fmt_.bpc - 8)) & 0xffu);
    const std::uint8_t pattern[8] = {0, hi, 0, hi, 0, hi, 0, hi};
    std::uint64_t mask = 0, acc = 0;
    std::memcpy(&mask, pattern, 8);
    const std::uint8_t* p = frame.data();
    const std::size_t n = frame.size(), words = n / 8;
    for (std::size_t i = 0; i < words; ++i) {
        std::uint64_t w;
        std::memcpy(&w, p + 8 * i, 8);
        acc |= w;
    }
    std::uint8_t tail = 0;
    for (std::size_t i = words * 8 + 1; i < n; i += 2) tail |= p[i];
    if (!(acc & mask) && !(tail & hi)) return;
    const unsigned max = (1u << fmt_.bpc) - 1;
    for (std::size_t i = 0; i + 1 < n; i += 2) {
        const unsigned v = unsigned(p[i]) | unsigned(p[i + 1]) << 8;
        if (v <= max) continue;
        std::size_t s = i / 2; // sample index in the frame
        const std::size_t ls = fmt_.luma_bytes() / 2, cs = fmt_.chroma_samples();
        const char* plane = s < ls ? "Y" : s < ls + cs ? "Cb" : "Cr";
        const unsigned w = s < ls ? fmt_.width : fmt_.chroma_width();
        s = s < ls ? s : (s - ls) % cs;
        std::ostringstream m;
        m << "'" << path_ << "': frame " << frames_read_ << " holds the value " << v << " ("
          << plane << " plane, x " << s % w << ", y " << s / w << "), above " << max
          << ", the largest " << fmt_.bpc << "-bit value: "
          << (y4m_ ? "is the Y4M header's " + y4m_cs_ + " right?" : std::string("is -b right?"));
        throw InputError(m.str());
    }
}

bool VideoReader::read(std::vector<std::uint8_t>& frame) {
    const std::string frame_n = "frame " + std::to_string(frames_read_);
    if (y4m_) {
        std::uint8_t tag[5];
        const std::size_t got = fill(tag, 5);
        if (got == 0) return false;
        if (std::memcmp(tag, "FRAME", got) != 0)
            throw InputError("'" + path_ + "': bad Y4M frame header at " + frame_n);
        if (got != 5)
            throw InputError("'" + path_ + "' is truncated: " + frame_n + "'s FRAME header is "
                             "incomplete (got " + std::to_string(got) + " of 6 bytes)");
        int c;
        while ((c = std::fgetc(f_)) != EOF && c != '\n') {}
        if (std::ferror(f_))
            throw InputError("cannot read '" + path_ + "' at " + frame_n + ": " + std::strerror(errno));
        if (c != '\n')
            throw InputError("'" + path_ + "' is truncated: " + frame_n + "'s FRAME header has "
                             "no end of line, and no picture (got 0 of " +
                             std::to_string(fmt_.frame_bytes()) + " bytes)");
    }
    // The buffer grows with the data read (at most 64 MiB ahead of it): a header that
    // claims a huge frame costs memory only when the file really holds that much.
    const std::size_t want = fmt_.frame_bytes();
    constexpr std::size_t kStep = std::size_t(64) << 20;
    std::size_t got = 0;
    frame.resize(std::min(want, kStep));
    for (;;) {
        const std::size_t n = fill(frame.data() + got, frame.size() - got);
        got += n;
        if (got < frame.size() || frame.size() == want) break;
        frame.resize(std::min(want, frame.size() + kStep));
    }
    if (got == 0 && !y4m_) return false;
    if (got != want)
        throw InputError("'" + path_ + "' is truncated: " + frame_n + " is incomplete (got " +
                         std::to_string(got) + " of " + std::to_string(want) + " bytes)");
    check_range(frame);
    ++frames_read_;
    return true;
}

bool same_stream(const std::string& a, const std::string& b) {
    if (a == "-" && b == "-") return true; // one FILE, whatever standard input is
    struct stat sa {}, sb {};
    auto get = [](const std::string& p, struct stat& s) {
        return (p == "-" ? ::fstat(STDIN_FILENO, &s) : ::stat(p.c_str(), &s)) == 0;
    };
    if (!get(a, sa) || !get(b, sb)) return false;
    return (S_ISFIFO(sa.st_mode) || S_ISSOCK(sa.st_mode)) && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

} // namespace vmaf_cuda::tools

// SPDX-License-Identifier: BSD-2-Clause-Patent
// Suite `api`: the CLI's frame reader (tools/video_reader.h) on small raw YUV and Y4M
// files written here: every plane of every frame lands where host_picture() points
// (4:2:0, 4:2:2, 4:4:4 with ceil-sized chroma at odd sizes, 4:0:0 without chroma,
// 8..16 bits), truncated frames are errors, and the pictures are accepted by a session.
// Pipes are read as streams; interlaced Y4M and samples above the bit depth are refused.

#include "video_reader.h"

#include "catch.hpp"

#include <csignal>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using vmaf_cuda::tools::host_picture;
using vmaf_cuda::tools::InputError;
using vmaf_cuda::tools::VideoFormat;
using vmaf_cuda::tools::VideoReader;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

fs::path tmp_dir() {
    fs::path d = fs::temp_directory_path() / ("vmaf_cuda_reader_test_" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
}

/// Sample value of plane p (0 luma, 1 Cb, 2 Cr) at (x, y) of frame k, below 2^bpc.
unsigned value(unsigned p, unsigned x, unsigned y, unsigned k, unsigned bpc) {
    return (1000u * p + 31u * x + 17u * y + 101u * k) % (1u << bpc);
}

/// One plane as the file holds it: w x h samples, 1 or 2 bytes (little-endian) each.
std::vector<std::uint8_t> plane_bytes(unsigned p, unsigned w, unsigned h, unsigned k,
                                      unsigned bpc) {
    std::vector<std::uint8_t> out;
    for (unsigned y = 0; y < h; ++y)
        for (unsigned x = 0; x < w; ++x) {
            const unsigned v = value(p, x, y, k, bpc);
            out.push_back(std::uint8_t(v & 0xff));
            if (bpc > 8) out.push_back(std::uint8_t(v >> 8));
        }
    return out;
}

struct Layout {
    unsigned chroma, cw, ch; // subsampling, expected chroma plane size
};

/// Writes `frames` frames of a w x h stream; Y4M with header colour space `cs` when not
/// empty, else raw YUV. Returns the path.
fs::path write_stream(const fs::path& dir, const std::string& name, unsigned w, unsigned h,
                      unsigned bpc, const Layout& l, unsigned frames, const std::string& cs,
                      std::size_t drop_tail = 0) {
    const fs::path path = dir / name;
    std::string data;
    if (!cs.empty())
        data += "YUV4MPEG2 W" + std::to_string(w) + " H" + std::to_string(h) +
                " F25:1 Ip A1:1 C" + cs + "\n";
    for (unsigned k = 0; k < frames; ++k) {
        if (!cs.empty()) data += "FRAME\n";
        for (unsigned p = 0; p < (l.cw ? 3u : 1u); ++p) {
            const auto b = p ? plane_bytes(p, l.cw, l.ch, k, bpc) : plane_bytes(0, w, h, k, bpc);
            data.append(reinterpret_cast<const char*>(b.data()), b.size());
        }
    }
    data.resize(data.size() - drop_tail);
    std::ofstream(path, std::ios::binary).write(data.data(), std::streamsize(data.size()));
    return path;
}

/// Plane p of a picture, read back through its pointers, pitch and step.
std::vector<std::uint8_t> read_back(const VmafCudaPicture& pic, unsigned p, unsigned w, unsigned h,
                                    unsigned bpc) {
    const std::size_t bps = bpc > 8 ? 2 : 1;
    const auto* base = static_cast<const std::uint8_t*>(p ? pic.chroma[p - 1] : pic.luma);
    const std::size_t pitch = std::size_t(p ? pic.chroma_pitch : pic.pitch);
    const std::size_t step = p && pic.chroma_step > 1 ? pic.chroma_step : 1;
    std::vector<std::uint8_t> out;
    for (unsigned y = 0; y < h; ++y)
        for (unsigned x = 0; x < w; ++x)
            for (std::size_t b = 0; b < bps; ++b) out.push_back(base[y * pitch + x * step * bps + b]);
    return out;
}

VmafCudaChroma api_chroma(unsigned c) {
    return c == 444 ? VMAF_CUDA_CHROMA_444 : c == 422 ? VMAF_CUDA_CHROMA_422
         : c == 400 ? VMAF_CUDA_CHROMA_400 : VMAF_CUDA_CHROMA_420;
}

} // namespace

TEST_CASE("reader: every plane of every frame, raw YUV and Y4M, odd sizes", "[api][reader]") {
    const fs::path dir = tmp_dir();
    struct Case {
        std::string name, cs; // cs: Y4M colour space, "" for raw
        unsigned w, h, bpc;
        Layout l;
    };
    const Case cases[] = {
        {"420_8bit_odd.y4m", "420jpeg", 35, 19, 8, {420, 18, 10}},
        {"420_8bit_odd.yuv", "", 35, 19, 8, {420, 18, 10}},
        {"420_10bit.y4m", "420p10", 34, 20, 10, {420, 17, 10}},
        {"422_10bit_odd.y4m", "422p10", 35, 19, 10, {422, 18, 19}},
        {"422_8bit_odd.yuv", "", 35, 19, 8, {422, 18, 19}},
        {"444_12bit_odd.yuv", "", 35, 19, 12, {444, 35, 19}},
        {"444_16bit.y4m", "444p16", 34, 18, 16, {444, 34, 18}},
        {"mono_8bit_odd.y4m", "mono", 35, 19, 8, {400, 0, 0}},
        {"mono_10bit.y4m", "mono10", 34, 18, 10, {400, 0, 0}},
    };
    for (const Case& c : cases) {
        DYNAMIC_SECTION(c.name) {
            const unsigned frames = 3;
            const fs::path path = write_stream(dir, c.name, c.w, c.h, c.bpc, c.l, frames, c.cs);
            VideoFormat hint;
            if (c.cs.empty()) {
                hint.width = c.w;
                hint.height = c.h;
                hint.bpc = c.bpc;
                hint.chroma = c.l.chroma;
            }
            VideoReader r(path.string(), hint);
            const VideoFormat& f = r.format();
            CHECK(f.width == c.w);
            CHECK(f.height == c.h);
            CHECK(f.bpc == c.bpc);
            CHECK(f.chroma == c.l.chroma);
            CHECK(f.chroma_width() == c.l.cw);
            CHECK(f.chroma_height() == c.l.ch);
            CHECK(r.frame_count() == (c.cs.empty() ? long(frames) : -1L));

            VmafCudaSettings s;
            vmaf_cuda_default_settings(&s);
            s.width = c.w;
            s.height = c.h;
            s.bpc = c.bpc;
            s.chroma = api_chroma(c.l.chroma);
            s.backend = VMAF_CUDA_BACKEND_CPU;
            VmafCudaSession* vs = nullptr;
            char err[256] = "";
            REQUIRE(vmaf_cuda_open(&vs, &s, err, sizeof err) == VMAF_CUDA_OK);

            std::vector<std::uint8_t> buf;
            for (unsigned k = 0; k < frames; ++k) {
                INFO("frame " << k);
                REQUIRE(r.read(buf));
                CHECK(buf.size() == f.frame_bytes());
                const VmafCudaPicture pic = host_picture(buf, f);
                CHECK(pic.memory == VMAF_CUDA_MEMORY_HOST);
                CHECK(pic.shift == 0);
                CHECK(read_back(pic, 0, c.w, c.h, c.bpc) == plane_bytes(0, c.w, c.h, k, c.bpc));
                if (c.l.chroma == 400) {
                    CHECK(pic.chroma[0] == nullptr);
                    CHECK(pic.chroma[1] == nullptr);
                } else {
                    CHECK(pic.chroma_step == 1);
                    CHECK(std::size_t(pic.chroma_pitch) == c.l.cw * (c.bpc > 8 ? 2u : 1u));
                    for (unsigned p = 1; p <= 2; ++p)
                        CHECK(read_back(pic, p, c.l.cw, c.l.ch, c.bpc) ==
                              plane_bytes(p, c.l.cw, c.l.ch, k, c.bpc));
                }
                // the pictures as the CLI sends them (reference = distorted)
                const int st = vmaf_cuda_send(vs, &pic, &pic);
                INFO(vmaf_cuda_error_message(vs));
                CHECK(st == VMAF_CUDA_OK);
            }
            CHECK_FALSE(r.read(buf)); // clean end of file
            vmaf_cuda_close(vs);
        }
    }
    fs::remove_all(dir);
}

TEST_CASE("reader: a frame cut short in its chroma is an error, not a frame", "[api][reader]") {
    const fs::path dir = tmp_dir();
    SECTION("Y4M 4:4:4, the last frame's Cr incomplete") {
        const fs::path path = write_stream(dir, "cut.y4m", 9, 7, 8, {444, 9, 7}, 2, "444", 5);
        VideoReader r(path.string(), VideoFormat{});
        std::vector<std::uint8_t> buf;
        REQUIRE(r.read(buf));
        CHECK_THROWS_AS(r.read(buf), InputError);
    }
    SECTION("raw 4:2:0 at an odd size: the size check counts ceil-sized chroma") {
        // 9x7 4:2:0 frames are 63 + 2 * 5 * 4 = 103 bytes; a file of floor-sized ones is not
        const fs::path path = write_stream(dir, "odd.yuv", 9, 7, 8, {420, 5, 4}, 2, "");
        VideoFormat hint;
        hint.width = 9;
        hint.height = 7;
        CHECK(VideoReader(path.string(), hint).frame_count() == 2);
        const fs::path floor_sized = write_stream(dir, "floor.yuv", 9, 7, 8, {420, 4, 3}, 2, "");
        CHECK_THROWS_AS(VideoReader(floor_sized.string(), hint), InputError);
    }
    fs::remove_all(dir);
}

namespace {

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

/// `data` written into a pipe by a thread; the reader opens its read end by path
/// (/dev/fd/N), as a shell's pipe or /dev/stdin reaches the CLI.
struct Pipe {
    int fd[2] = {-1, -1};
    std::thread writer;
    explicit Pipe(std::string data) {
        std::signal(SIGPIPE, SIG_IGN); // a reader that stops early: EPIPE, not death
        REQUIRE(::pipe(fd) == 0);
        writer = std::thread([w = fd[1], d = std::move(data)] {
            for (std::size_t at = 0; at < d.size();) {
                const ssize_t n = ::write(w, d.data() + at, d.size() - at);
                if (n <= 0) break;
                at += std::size_t(n);
            }
            ::close(w);
        });
    }
    std::string path() const { return "/dev/fd/" + std::to_string(fd[0]); }
    ~Pipe() {
        ::close(fd[0]); // a writer blocked on a full pipe gets EPIPE
        writer.join();
    }
};

} // namespace

TEST_CASE("reader: a pipe is read as a stream, to its end, never seeked", "[api][reader][stream]") {
    const fs::path dir = tmp_dir();
    const Layout l{420, 5, 4}; // 9x7 4:2:0: 63 + 2 * 20 = 103 bytes a frame
    VideoFormat hint;
    hint.width = 9;
    hint.height = 7;
    std::vector<std::uint8_t> buf;
    SECTION("raw YUV: every frame, then a clean end; a frame smaller than the magic") {
        Pipe p(slurp(write_stream(dir, "s.yuv", 9, 7, 8, l, 3, "")));
        VideoReader r(p.path(), hint);
        CHECK(r.frame_count() == -1);
        for (unsigned k = 0; k < 3; ++k) {
            REQUIRE(r.read(buf));
            CHECK(std::vector<std::uint8_t>(buf.begin(), buf.begin() + 63) == plane_bytes(0, 9, 7, k, 8));
        }
        CHECK_FALSE(r.read(buf));
        VideoFormat tiny; // 2x1 4:4:4: 6 bytes a frame, fewer than "YUV4MPEG2"
        tiny.width = 2;
        tiny.height = 1;
        tiny.chroma = 444;
        Pipe t("abcdefghijkl");
        VideoReader rt(t.path(), tiny);
        REQUIRE(rt.read(buf));
        CHECK(std::string(buf.begin(), buf.end()) == "abcdef");
        REQUIRE(rt.read(buf));
        CHECK(std::string(buf.begin(), buf.end()) == "ghijkl");
        CHECK_FALSE(rt.read(buf));
    }
    SECTION("raw YUV: a partial last frame names the frame and its bytes") {
        Pipe p(slurp(write_stream(dir, "s.yuv", 9, 7, 8, l, 3, "", 98)));
        VideoReader r(p.path(), hint);
        REQUIRE(r.read(buf));
        REQUIRE(r.read(buf));
        CHECK_THROWS_WITH(r.read(buf), Contains("' is truncated: frame 2 is incomplete (got 5 of 103 bytes)"));
    }
    SECTION("Y4M") {
        Pipe p(slurp(write_stream(dir, "s.y4m", 9, 7, 10, l, 2, "420p10")));
        VideoReader r(p.path(), VideoFormat{});
        CHECK(r.format().bpc == 10);
        REQUIRE(r.read(buf));
        REQUIRE(r.read(buf));
        CHECK(std::vector<std::uint8_t>(buf.begin(), buf.begin() + 126) == plane_bytes(0, 9, 7, 1, 10));
        CHECK_FALSE(r.read(buf));
    }
    fs::remove_all(dir);
}

TEST_CASE("reader: interlaced Y4M is refused, progressive read", "[api][reader]") {
    const fs::path dir = tmp_dir();
    const std::string frame = "FRAME\n" + std::string(9 * 7 + 2 * 5 * 4, '\x10');
    for (const std::string tok : {"It", "Ib", "Im", "Ip", "I?", ""}) {
        INFO("'" << tok << "'");
        const fs::path y = dir / "i.y4m";
        std::ofstream(y, std::ios::binary)
            << "YUV4MPEG2 W9 H7 F25:1 " << tok << (tok.empty() ? "" : " ") << "C420jpeg\n" << frame;
        if (tok == "Ip" || tok == "I?" || tok.empty()) {
            VideoReader r(y.string(), VideoFormat{});
            std::vector<std::uint8_t> buf;
            CHECK(r.read(buf));
        } else {
            CHECK_THROWS_WITH(VideoReader(y.string(), VideoFormat{}),
                              Contains("': Y4M header says " + tok + ": interlaced video"));
        }
    }
    fs::remove_all(dir);
}

TEST_CASE("reader: every sample is checked against the bit depth", "[api][reader][range]") {
    const fs::path dir = tmp_dir();
    // 35x19 4:2:0: 665 luma and 2 x 180 chroma samples; 2050 bytes above 8 bits, not a
    // multiple of 8: the last sample lies in the tail past the 8-byte words
    const std::size_t luma = 665, chroma = 180, samples = luma + 2 * chroma;
    auto frame_with = [&](const std::string& name, unsigned bpc, unsigned fill, std::size_t at,
                          unsigned value, bool y4m) {
        std::string data = y4m ? "YUV4MPEG2 W35 H19 C420p" + std::to_string(bpc) + "\nFRAME\n" : "";
        for (std::size_t i = 0; i < samples; ++i) {
            const unsigned v = i == at ? value : fill;
            data += char(v & 0xff);
            data += char(v >> 8);
        }
        const fs::path p = dir / name;
        std::ofstream(p, std::ios::binary) << data;
        return p;
    };
    VideoFormat hint;
    hint.width = 35;
    hint.height = 19;
    std::vector<std::uint8_t> buf;
    for (unsigned bpc : {9u, 10u, 12u, 16u}) {
        INFO(bpc << " bits");
        hint.bpc = bpc;
        const unsigned max = (1u << bpc) - 1;
        VideoReader ok(frame_with("ok.yuv", bpc, max, 0, max, false).string(), hint);
        CHECK(ok.read(buf)); // every sample at the largest value
        if (bpc == 16) continue;
        for (const auto& [at, where] : {std::pair<std::size_t, std::string>{0, "Y plane, x 0, y 0"},
                                        {luma - 1, "Y plane, x 34, y 18"},
                                        {luma + 20, "Cb plane, x 2, y 1"},
                                        {samples - 1, "Cr plane, x 17, y 9"}}) {
            VideoReader bad(frame_with("bad.yuv", bpc, 0, at, max + 1, false).string(), hint);
            CHECK_THROWS_WITH(bad.read(buf),
                              Contains("': frame 0 holds the value " + std::to_string(max + 1) +
                                       " (" + where + "), above " + std::to_string(max) + ", the largest " +
                                       std::to_string(bpc) + "-bit value: is -b right?"));
        }
    }
    VideoReader y(frame_with("bad.y4m", 10, 3, 100, 0xffff, true).string(), VideoFormat{});
    CHECK_THROWS_WITH(y.read(buf), Contains("holds the value 65535 (Y plane, x 30, y 2), above 1023, "
                                            "the largest 10-bit value: is the Y4M header's C420p10 right?"));
    fs::remove_all(dir);
}

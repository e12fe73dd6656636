// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file video_reader.h
/// Frame reader for the CLI: raw planar YUV and YUV4MPEG2 (Y4M). A frame is read whole
/// into one buffer, as the file holds it: the luma plane, then Cb and Cr (none for 4:0:0),
/// each tightly packed.

#include "vmaf_cuda.h"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace vmaf_cuda::tools {

/// Layout of a stream's frames.
struct VideoFormat {
    unsigned width = 0;   ///< luma samples per row
    unsigned height = 0;  ///< luma rows
    unsigned bpc = 8;     ///< 8..16; above 8 bits, samples are 16-bit little-endian words
    unsigned chroma = 420; ///< 420, 422, 444 or 400
    double fps = 0.0;     ///< frames per second from a Y4M header, 0 when unknown
    unsigned fps_num = 0, fps_den = 0; ///< the Y4M header's F<num>:<den>, 0/0 when unknown

    unsigned bytes_per_sample() const { return bpc > 8 ? 2u : 1u; }
    std::size_t luma_bytes() const { return std::size_t(width) * height * bytes_per_sample(); }
    /// Samples per row and rows of each of the two chroma planes (ceil for odd sizes:
    /// 420 is ceil(w/2) x ceil(h/2), 422 ceil(w/2) x h, 444 w x h, 400 none).
    unsigned chroma_width() const;
    unsigned chroma_height() const;
    /// Chroma plane size in samples for one of the two planes.
    std::size_t chroma_samples() const { return std::size_t(chroma_width()) * chroma_height(); }
    std::size_t chroma_bytes() const { return chroma_samples() * bytes_per_sample(); }
    std::size_t frame_bytes() const { return luma_bytes() + 2 * chroma_bytes(); }
    /// Offsets of the planes in a frame buffer of read(): luma at 0, Cb, Cr.
    std::size_t cb_offset() const { return luma_bytes(); }
    std::size_t cr_offset() const { return luma_bytes() + chroma_bytes(); }
};

/// The picture of a frame of VideoReader::read() (host memory, planar, tightly packed:
/// chroma_step 1, no chroma for 4:0:0). Valid while `frame` is unchanged.
VmafCudaPicture host_picture(const std::vector<std::uint8_t>& frame, const VideoFormat& f);

/// Error with a message for the user (bad file, size mismatch, short file).
struct InputError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// Reads frames one at a time from a raw .yuv or a .y4m file, or a stream: a pipe, a
/// FIFO, /dev/stdin, or "-" (standard input), read until its end without seeking.
class VideoReader {
public:
    /// Opens `path` ("-": standard input). A file starting with "YUV4MPEG2" is parsed as
    /// Y4M (its header gives the format, `fmt` is only a fallback); anything else is raw
    /// YUV of format `fmt`. Throws InputError when the file cannot be opened or is a
    /// directory, the Y4M header is invalid, interlaced (I t, b or m) or uses an
    /// unsupported colour space, or a regular raw file's size is not a whole number of
    /// frames (the message names the incomplete frame and its bytes).
    VideoReader(const std::string& path, const VideoFormat& fmt);
    ~VideoReader();
    VideoReader(const VideoReader&) = delete;
    VideoReader& operator=(const VideoReader&) = delete;

    const VideoFormat& format() const { return fmt_; }
    bool is_y4m() const { return y4m_; }
    /// The Y4M header's colour space token (e.g. "C420p10"); "" for raw YUV.
    const std::string& y4m_colour_space() const { return y4m_cs_; }
    /// Number of frames when known up front (raw YUV in a regular file), -1 otherwise
    /// (Y4M, or a stream).
    long frame_count() const { return frame_count_; }

    /// Reads the next frame into `frame` (frame_bytes(): luma, Cb, Cr, each plane tightly
    /// packed; see cb_offset(), cr_offset()). Returns false at a clean end of file.
    /// Throws InputError naming the file, the frame number and the bytes when the frame
    /// is truncated (a partial frame, a Y4M FRAME header without its payload), on a
    /// read error, and when a sample is above 2^bpc - 1 (the bit depth is wrong).
    bool read(std::vector<std::uint8_t>& frame);

private:
    void parse_y4m_header();
    std::size_t fill(std::uint8_t* dst, std::size_t n);
    void check_range(const std::vector<std::uint8_t>& frame) const;
    std::string path_;
    std::FILE* f_ = nullptr;
    bool own_ = true;                ///< fclose f_ (not standard input)
    std::vector<std::uint8_t> head_; ///< bytes read ahead for the magic, not yet returned
    VideoFormat fmt_;
    bool y4m_ = false;
    std::string y4m_cs_;
    long frame_count_ = -1;
    long frames_read_ = 0;
};

/// Whether two input paths ("-": standard input) name one stream: "-" twice, or the same
/// pipe, FIFO or socket (e.g. "-" and /dev/stdin on a pipe): two readers would split its
/// bytes.
bool same_stream(const std::string& a, const std::string& b);

} // namespace vmaf_cuda::tools

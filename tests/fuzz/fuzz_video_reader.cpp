// SPDX-License-Identifier: BSD-2-Clause-Patent
// Fuzz harness (b): the CLI's frame reader (tools/video_reader.cpp), raw YUV and Y4M.
// Promise checked: any file either reads frame by frame or fails with InputError; every
// frame is frame_bytes() long and host_picture()'s planes lie inside it; no frame buffer
// above 1 GiB is allocated for a file that cannot fill it.
// Input: 4 bytes of raw format (width, height, chroma, bits: the fallback the CLI's -w -h
// -p -b give), then the file's bytes (a Y4M file when they start with YUV4MPEG2).

#include "fuzz_input.h"
#include "video_reader.h"

#include <cstdio>

#include <sys/mman.h>
#include <unistd.h>

using namespace vmaf_cuda::tools;
using vmaf_cuda_fuzz::broken;

namespace {

// A file holding `bytes` that fopen() can open: a memfd, by its /proc/self/fd path.
struct MemFile {
    int fd = -1;
    std::string path;
    MemFile(const std::uint8_t* p, std::size_t n) {
        fd = memfd_create("fuzz_video", 0);
        if (fd < 0) broken("memfd_create failed");
        for (std::size_t done = 0; done < n;) {
            const ssize_t w = write(fd, p + done, n - done);
            if (w <= 0) broken("writing the memfd failed");
            done += std::size_t(w);
        }
        path = "/proc/self/fd/" + std::to_string(fd);
    }
    ~MemFile() { close(fd); }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    vmaf_cuda_fuzz::Input in{data, size};
    VideoFormat fmt;
    fmt.width = in.pick(0, 40);
    fmt.height = in.pick(0, 40);
    const unsigned chromas[] = {420, 422, 444, 400};
    fmt.chroma = chromas[in.byte() % 4];
    fmt.bpc = in.pick(8, 16);
    const MemFile file(in.p, in.n);
    try {
        VideoReader r(file.path, fmt);
        const VideoFormat& f = r.format();
        if (f.width == 0 || f.height == 0) broken("a reader with an empty frame size");
        if (f.bpc < 8 || f.bpc > 16) broken("a reader with bpc " + std::to_string(f.bpc));
        std::vector<std::uint8_t> frame;
        for (int k = 0; k < 64 && r.read(frame); ++k) {
            if (frame.size() != f.frame_bytes()) broken("a frame of the wrong size");
            const VmafCudaPicture pic = host_picture(frame, f);
            const auto* base = frame.data();
            if (pic.luma != base) broken("luma does not start the frame");
            if (f.chroma != 400) {
                const auto* cr = static_cast<const std::uint8_t*>(pic.chroma[1]);
                const std::size_t end = std::size_t(cr - base) +
                                        std::size_t(pic.chroma_pitch) * f.chroma_height();
                if (end != frame.size()) broken("the chroma planes do not end the frame");
            }
        }
    } catch (const InputError& e) {
        if (!*e.what()) broken("InputError without a message");
    }
    return 0;
}

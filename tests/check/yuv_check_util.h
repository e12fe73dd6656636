// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file yuv_check_util.h
/// Whole pictures for the kernel checks of the features that read chroma (psnr, ciede):
/// a host picture (Y, Cb, Cr of the caller's sizes: ceil-halved chroma, yuv.h) with its
/// reference view, and its device copy in one of the layouts NVDEC / FFmpeg use: planar
/// (yuv420p, yuv420p10le, ...) or semi-planar (NV12, P010, P016: UV interleaved in one
/// plane), values optionally MSB-aligned (stored << (16 - bpc), as P010), read by the
/// kernels in place through cuda::DevicePlane.

#include "check_util.h"
#include "yuv.h"

#include <array>
#include <memory>

namespace vmaf_cuda_test {

enum class Layout { planar, semi };

inline const char* layout_name(Layout l) { return l == Layout::planar ? "planar" : "semi-planar"; }

/// A host picture: sample values in [0, 2^bpc) (not shifted), padded pitches with garbage.
struct HostPicture {
    unsigned w = 0, h = 0, bpc = 8, chroma = 420;
    HostPlane y, cb, cr; // cb/cr: yuv_chroma_width/height (ceil) sizes; empty for 400

    vmaf_cuda::ref::YuvView view() const {
        vmaf_cuda::ref::YuvView v;
        v.y = to_view(y);
        v.cb = to_view(cb);
        v.cr = to_view(cr);
        v.chroma = chroma;
        return v;
    }
};

/// A picture of `fill` (every plane), random 0..64 bytes of padding per plane row.
inline HostPicture random_picture(unsigned w, unsigned h, unsigned bpc, unsigned chroma, Fill fill,
                                  std::mt19937_64& rng) {
    HostPicture p;
    p.w = w;
    p.h = h;
    p.bpc = bpc;
    p.chroma = chroma;
    p.y = random_plane(w, h, bpc, fill, rng);
    if (chroma != 400) {
        const unsigned cw = vmaf_cuda::ref::yuv_chroma_width(w, chroma);
        const unsigned ch = vmaf_cuda::ref::yuv_chroma_height(h, chroma);
        p.cb = random_plane(cw, ch, bpc, fill, rng);
        p.cr = random_plane(cw, ch, bpc, fill, rng);
    }
    return p;
}

/// `ref` with every plane distorted by small noise (distort(), check_util.h).
inline HostPicture distort_picture(const HostPicture& ref, std::mt19937_64& rng, double sigma = 0.03) {
    HostPicture d = ref;
    d.y = distort(ref.y, rng, sigma);
    if (ref.chroma != 400) {
        d.cb = distort(ref.cb, rng, sigma);
        d.cr = distort(ref.cr, rng, sigma);
    }
    return d;
}

/// The device copy of a HostPicture in `layout`, values stored << shift (shift = 16 - bpc
/// when `msb` and bpc > 8, else 0), pitches padded (with garbage) by `pad` bytes.
/// plane[0..2]: the cuda::DevicePlane views of Y, Cb, Cr (Cb/Cr: the caller's ceil size,
/// step 2 and Cr one sample after Cb for semi-planar). Without chroma only plane[0] is set.
struct DevicePicture {
    std::vector<vmaf_cuda::cuda::DeviceBuffer> bufs;
    std::array<vmaf_cuda::cuda::DevicePlane, 3> plane{};
    std::string what;

    DevicePicture(const HostPicture& p, Layout layout, bool msb, unsigned pad) {
        const unsigned shift = (msb && p.bpc > 8) ? 16 - p.bpc : 0;
        const unsigned bps = p.bpc > 8 ? 2 : 1;
        what = std::string(layout_name(layout)) + (shift ? " msb-aligned (<<" + std::to_string(shift) + ")" : "") +
               " pad " + std::to_string(pad);
        auto upload = [&](const std::vector<const HostPlane*>& comps, unsigned w, unsigned h) {
            const unsigned n = unsigned(comps.size());
            const std::size_t pitch = std::size_t(w) * n * bps + (pad / bps) * bps;
            std::vector<std::uint8_t> bytes(pitch * h, 0x5a);
            for (unsigned y = 0; y < h; ++y)
                for (unsigned x = 0; x < w; ++x)
                    for (unsigned c = 0; c < n; ++c) {
                        const unsigned v = comps[c]->get(x, y) << shift;
                        const std::size_t o = y * pitch + (std::size_t(x) * n + c) * bps;
                        if (bps == 1) bytes[o] = std::uint8_t(v);
                        else {
                            const std::uint16_t s = std::uint16_t(v);
                            std::memcpy(&bytes[o], &s, 2);
                        }
                    }
            bufs.emplace_back(bytes.size());
            vmaf_cuda_test::upload(bufs.back().get(), bytes.data(), bytes.size());
            return pitch;
        };
        auto view = [&](const void* data, std::size_t pitch, unsigned w, unsigned h, unsigned step) {
            vmaf_cuda::cuda::DevicePlane v;
            v.data = data;
            v.pitch = pitch;
            v.width = w;
            v.height = h;
            v.bpc = p.bpc;
            v.step = step;
            v.shift = shift;
            return v;
        };
        bufs.reserve(3);
        std::size_t pitch = upload({&p.y}, p.w, p.h);
        plane[0] = view(bufs.back().get(), pitch, p.w, p.h, 1);
        if (p.chroma == 400) return;
        const unsigned cw = p.cb.width, ch = p.cb.height;
        if (layout == Layout::planar) {
            pitch = upload({&p.cb}, cw, ch);
            plane[1] = view(bufs.back().get(), pitch, cw, ch, 1);
            pitch = upload({&p.cr}, cw, ch);
            plane[2] = view(bufs.back().get(), pitch, cw, ch, 1);
        } else {
            pitch = upload({&p.cb, &p.cr}, cw, ch);
            plane[1] = view(bufs.back().get(), pitch, cw, ch, 2);
            plane[2] = view(bufs.back().get<unsigned char>() + bps, pitch, cw, ch, 2);
        }
    }
};

} // namespace vmaf_cuda_test

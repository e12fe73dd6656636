// SPDX-License-Identifier: BSD-2-Clause-Patent
// CUDA CIEDE2000 dE00 map; contract in ciede.cuh, arithmetic in reference/ciede.cpp
// (libvmaf v3.2.0 ciede.c) and ciede_pixel.cuh.

#include "ciede.cuh"

#include <stdexcept>
#include <string>

#include "ciede.h"
#include "ciede_pixel.cuh"

namespace vmaf_cuda::cuda {

namespace {

constexpr int kBlockX = 32, kBlockY = 8;

struct CiedeParams {
    DevicePlane ref[3], dis[3];
    unsigned w, h, bpc;
    bool yuv420;
    Chroma420Layout layout; // 4:2:0: libvmaf's chroma layout (ciede_pixel.cuh)
    float* out;
};

// libvmaf's 4:2:0 chroma sample of plane c (0 = U, 1 = V) for luma (x, y); 0 where
// libvmaf reads its padding or past its V plane (the reference's zeros).
__device__ __forceinline__ unsigned chroma420(const CiedeParams& p, const DevicePlane* pic, unsigned c,
                                              unsigned x, unsigned y) {
    unsigned pp, col, row;
    if (!p.layout.locate(c, x, y, pp, col, row)) return 0;
    return load(pic[1 + pp], col, row);
}

__global__ void __launch_bounds__(kBlockX * kBlockY) ciede_map_kernel(CiedeParams p) {
    const unsigned x = blockIdx.x * kBlockX + threadIdx.x;
    const unsigned y = blockIdx.y * kBlockY + threadIdx.y;
    if (x >= p.w || y >= p.h) return;
    unsigned ru, rv, du, dv;
    if (p.yuv420) {
        ru = chroma420(p, p.ref, 0, x, y);
        rv = chroma420(p, p.ref, 1, x, y);
        du = chroma420(p, p.dis, 0, x, y);
        dv = chroma420(p, p.dis, 1, x, y);
    } else {
        ru = load(p.ref[1], x, y);
        rv = load(p.ref[2], x, y);
        du = load(p.dis[1], x, y);
        dv = load(p.dis[2], x, y);
    }
    p.out[static_cast<std::size_t>(y) * p.w + x] =
        ciede_de00(p.bpc, float(load(p.ref[0], x, y)), float(ru), float(rv),
                   float(load(p.dis[0], x, y)), float(du), float(dv));
}

[[noreturn]] void invalid(const std::string& what) {
    throw CudaError(cudaErrorInvalidValue, "CiedeKernel: " + what);
}

} // namespace

CiedeKernel::CiedeKernel(unsigned width, unsigned height, unsigned bpc, unsigned chroma)
    : w_(width), h_(height), bpc_(bpc), chroma_(chroma) {
    try {
        ref::ciede_check_format(width, height, bpc, chroma);
    } catch (const std::invalid_argument& e) {
        invalid(e.what());
    }
    if (std::size_t(width) * height >= 0x80000000u) invalid("width * height must be below 2^31");
}

void CiedeKernel::enqueue(const DevicePlane ref[3], const DevicePlane dis[3], void* d_accum,
                          cudaStream_t stream) const {
    if (!ref || !dis || !d_accum) invalid("null pointer");
    CiedeParams p{};
    p.w = w_;
    p.h = h_;
    p.bpc = bpc_;
    p.yuv420 = chroma_ == 420;
    p.layout = Chroma420Layout::of(w_, h_);
    const unsigned cw = ref::yuv_libvmaf_chroma_width(w_, chroma_);
    const unsigned ch = ref::yuv_libvmaf_chroma_height(h_, chroma_);
    for (unsigned i = 0; i < 3; i++) {
        const unsigned pw = i ? cw : w_, ph = i ? ch : h_;
        require_plane(ref[i], pw, ph, bpc_, "CiedeKernel: ref plane " + std::to_string(i));
        require_plane(dis[i], pw, ph, bpc_, "CiedeKernel: dis plane " + std::to_string(i));
        p.ref[i] = ref[i];
        p.dis[i] = dis[i];
    }
    p.out = static_cast<float*>(d_accum);
    const dim3 block(kBlockX, kBlockY);
    const dim3 grid((w_ + kBlockX - 1) / kBlockX, (h_ + kBlockY - 1) / kBlockY);
    ciede_map_kernel<<<grid, block, 0, stream>>>(p);
    VMAF_CUDA_CHECK_LAUNCH();
}

double ciede_finish_host(const CiedeKernel& k, const void* host_accum) {
    const std::size_t n = std::size_t(k.width()) * k.height();
    return ref::ciede_finish(ref::ciede_sum(static_cast<const float*>(host_accum), n), k.width(),
                             k.height());
}

} // namespace vmaf_cuda::cuda

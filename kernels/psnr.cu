// SPDX-License-Identifier: BSD-2-Clause-Patent
// CUDA PSNR sums of squared differences; contract in psnr.cuh, arithmetic in
// reference/psnr.h (libvmaf v3.2.0 integer_psnr.c).

#include "psnr.cuh"

#include <stdexcept>
#include <string>

namespace vmaf_cuda::cuda {

namespace {

constexpr int kThreads = 256;

struct PsnrParams {
    DevicePlane ref[3], dis[3];
    unsigned pw[3], ph[3];
    unsigned long long* sse;      // PsnrAccum::sse
    unsigned long long* n_pixels; // PsnrAccum::n_pixels
};

template <typename T>
__device__ __forceinline__ unsigned sample(const DevicePlane& p, const unsigned char* row, unsigned x) {
    return unsigned(reinterpret_cast<const T*>(row)[std::size_t(x) * p.step]) >> p.shift;
}

// Grid (blocks_per_plane, planes): block b of plane p sums rows b, b + gridDim.x, ...
template <typename T>
__global__ void __launch_bounds__(kThreads) psnr_sse_kernel(PsnrParams prm) {
    const unsigned p = blockIdx.y;
    const DevicePlane r = prm.ref[p], d = prm.dis[p];
    const unsigned w = prm.pw[p], h = prm.ph[p];
    if (blockIdx.x == 0 && threadIdx.x == 0) prm.n_pixels[p] = (unsigned long long)(w * h);
    unsigned long long sse = 0;
    for (unsigned y = blockIdx.x; y < h; y += gridDim.x) {
        const unsigned char* rr = static_cast<const unsigned char*>(r.data) + std::size_t(y) * r.pitch;
        const unsigned char* dr = static_cast<const unsigned char*>(d.data) + std::size_t(y) * d.pitch;
        for (unsigned x = threadIdx.x; x < w; x += kThreads) {
            const int e = int(sample<T>(r, rr, x)) - int(sample<T>(d, dr, x));
            const unsigned a = unsigned(e < 0 ? -e : e);
            sse += a * a; // uint32 product, < 2^32 (a <= 65535), as libvmaf

        }
    }
    __shared__ unsigned long long red[kThreads / 32];
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) sse += __shfl_down_sync(0xffffffffu, sse, off);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (lane == 0) red[warp] = sse;
    __syncthreads();
    if (warp == 0) {
        unsigned long long s = lane < kThreads / 32 ? red[lane] : 0;
#pragma unroll
        for (int off = 4; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
        if (lane == 0 && s != 0) atomicAdd(&prm.sse[p], s);
    }
}

[[noreturn]] void invalid(const std::string& what) {
    throw CudaError(cudaErrorInvalidValue, "PsnrKernel: " + what);
}

} // namespace

PsnrKernel::PsnrKernel(unsigned width, unsigned height, unsigned bpc, unsigned chroma,
                       const ref::PsnrOptions& opt) {
    try {
        setup_ = ref::psnr_setup(opt, bpc, width, height, chroma);
    } catch (const std::invalid_argument& e) {
        invalid(e.what());
    }
    if (width > 66051) invalid("width above 66051 (libvmaf's 8-bit row sum would wrap)");
    if (std::size_t(width) * height > 0xffffffffu) invalid("width * height must be below 2^32");
    for (unsigned p = 0; p < 3; p++) {
        const bool on = p < setup_.planes;
        pw_[p] = !on ? 0 : p == 0 ? width : ref::yuv_libvmaf_chroma_width(width, chroma);
        ph_[p] = !on ? 0 : p == 0 ? height : ref::yuv_libvmaf_chroma_height(height, chroma);
    }
    // Enough blocks to fill the device; never more than the luma rows.
    int per_sm = 0;
    VMAF_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, reinterpret_cast<const void*>(psnr_sse_kernel<unsigned short>), kThreads, 0));
    const int want = (per_sm > 0 ? per_sm : 1) * sm_count() / int(setup_.planes);
    blocks_per_plane_ = want < 1 ? 1 : want;
    if (unsigned(blocks_per_plane_) > height) blocks_per_plane_ = int(height);
}

void PsnrKernel::enqueue(const DevicePlane ref[3], const DevicePlane dis[3], void* d_accum,
                         cudaStream_t stream) const {
    if (!ref || !dis || !d_accum) invalid("null pointer");
    PsnrParams prm{};
    for (unsigned p = 0; p < setup_.planes; p++) {
        require_plane(ref[p], pw_[p], ph_[p], setup_.bpc, "PsnrKernel: ref plane " + std::to_string(p));
        require_plane(dis[p], pw_[p], ph_[p], setup_.bpc, "PsnrKernel: dis plane " + std::to_string(p));
        prm.ref[p] = ref[p];
        prm.dis[p] = dis[p];
        prm.pw[p] = pw_[p];
        prm.ph[p] = ph_[p];
    }
    auto* acc = static_cast<ref::PsnrAccum*>(d_accum);
    prm.sse = reinterpret_cast<unsigned long long*>(acc->sse);
    prm.n_pixels = reinterpret_cast<unsigned long long*>(acc->n_pixels);
    VMAF_CUDA_CHECK(cudaMemsetAsync(d_accum, 0, sizeof(ref::PsnrAccum), stream));
    const dim3 grid(unsigned(blocks_per_plane_), setup_.planes);
    if (setup_.bpc == 8) psnr_sse_kernel<unsigned char><<<grid, kThreads, 0, stream>>>(prm);
    else psnr_sse_kernel<unsigned short><<<grid, kThreads, 0, stream>>>(prm);
    VMAF_CUDA_CHECK_LAUNCH();
}

} // namespace vmaf_cuda::cuda

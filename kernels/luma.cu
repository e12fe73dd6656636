// SPDX-License-Identifier: BSD-2-Clause-Patent
#include "luma.cuh"

namespace vmaf_cuda::cuda {
namespace {

template <class T>
__global__ void shift_kernel(const unsigned char* src, std::size_t src_pitch, unsigned char* dst,
                             std::size_t dst_pitch, unsigned w, unsigned h, unsigned shift) {
    const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    const T v = reinterpret_cast<const T*>(src + y * src_pitch)[x];
    reinterpret_cast<T*>(dst + y * dst_pitch)[x] = T(v >> shift);
}

/// One block per cell: its threads stride over the cell's samples, then a tree sum in
/// shared memory (integers: any order gives the same sum).
template <class T>
__global__ void cell_sum_kernel(const unsigned char* src, std::size_t pitch, unsigned w, unsigned h,
                                unsigned shift, unsigned grid, unsigned long long* sums) {
    __shared__ unsigned long long part[256];
    const unsigned cx = blockIdx.x % grid, cy = blockIdx.x / grid;
    const unsigned x0 = cx * w / grid, x1 = (cx + 1) * w / grid;
    const unsigned y0 = cy * h / grid, y1 = (cy + 1) * h / grid;
    const unsigned cw = x1 - x0, n = cw * (y1 - y0);
    unsigned long long acc = 0;
    for (unsigned i = threadIdx.x; i < n; i += blockDim.x) {
        const unsigned x = x0 + i % cw, y = y0 + i / cw;
        acc += unsigned(reinterpret_cast<const T*>(src + std::size_t(y) * pitch)[x] >> shift);
    }
    part[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) sums[blockIdx.x] = part[0];
}

} // namespace

void cell_sums(const DeviceLuma& src, unsigned shift, unsigned grid, unsigned long long* sums,
               cudaStream_t stream) {
    const auto* s = static_cast<const unsigned char*>(src.data);
    if (src.bpc > 8)
        cell_sum_kernel<unsigned short><<<grid * grid, 256, 0, stream>>>(
            s, src.pitch, src.width, src.height, shift, grid, sums);
    else
        cell_sum_kernel<unsigned char><<<grid * grid, 256, 0, stream>>>(
            s, src.pitch, src.width, src.height, shift, grid, sums);
    VMAF_CUDA_CHECK_LAUNCH();
}

cudaError_t kernel_image_status() {
    cudaFuncAttributes a{};
    const cudaError_t e = cudaFuncGetAttributes(&a, shift_kernel<unsigned char>);
    if (e != cudaSuccess) cudaGetLastError(); // not sticky: leave no error behind
    return e;
}

void shift_luma(const DeviceLuma& src, unsigned shift, void* dst, std::size_t dst_pitch,
                cudaStream_t stream) {
    const dim3 block(64, 4);
    const dim3 grid((src.width + block.x - 1) / block.x, (src.height + block.y - 1) / block.y);
    const auto* s = static_cast<const unsigned char*>(src.data);
    auto* d = static_cast<unsigned char*>(dst);
    if (src.bpc > 8)
        shift_kernel<unsigned short><<<grid, block, 0, stream>>>(s, src.pitch, d, dst_pitch,
                                                                  src.width, src.height, shift);
    else
        shift_kernel<unsigned char><<<grid, block, 0, stream>>>(s, src.pitch, d, dst_pitch,
                                                                 src.width, src.height, shift);
    VMAF_CUDA_CHECK_LAUNCH();
}

} // namespace vmaf_cuda::cuda

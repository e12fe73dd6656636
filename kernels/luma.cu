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

} // namespace

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

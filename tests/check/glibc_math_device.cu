// SPDX-License-Identifier: BSD-2-Clause-Patent
// Device side of tests/check/glibc_math_device.h.

#include "glibc_math_device.h"

#include "ciede_pixel.cuh"
#include "cuda_common.cuh"
#include "glibc_math.cuh"

namespace vmaf_cuda_test {

namespace {

__global__ void glibc_math_kernel(GlibcFn fn, const double* x, const double* y, double* out, std::size_t n) {
    const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    namespace g = vmaf_cuda::glibc;
    switch (fn) {
    case GlibcFn::exp: out[i] = g::exp(x[i]); break;
    case GlibcFn::pow: out[i] = g::pow(x[i], y[i]); break;
    case GlibcFn::powf: out[i] = double(g::powf(float(x[i]), float(y[i]))); break;
    case GlibcFn::sin: out[i] = g::sin(x[i]); break;
    case GlibcFn::cos: out[i] = g::cos(x[i]); break;
    case GlibcFn::atan2: out[i] = g::atan2(x[i], y[i]); break;
    }
}

__global__ void de00_kernel(unsigned bpc, const float* v, float* out, std::size_t n) {
    const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float* s = v + 6 * i;
    out[i] = vmaf_cuda::cuda::ciede_de00(bpc, s[0], s[1], s[2], s[3], s[4], s[5]);
}

__global__ void dadd_float_kernel(bool nonneg, const double* s, const float* f, double* fast,
                                  double* plain, std::size_t n) {
    const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    fast[i] = nonneg ? vmaf_cuda::cuda::dadd_nonneg_float_rn(s[i], f[i])
                     : vmaf_cuda::cuda::dadd_float_rn(s[i], f[i]);
    plain[i] = __dadd_rn(s[i], double(f[i]));
}

} // namespace

void dadd_float_on_device(bool nonneg, const double* s, const float* f, double* fast, double* plain,
                          std::size_t n) {
    using vmaf_cuda::cuda::DeviceBuffer;
    DeviceBuffer ds(n * 8), df(n * 4), dfast(n * 8), dplain(n * 8);
    VMAF_CUDA_CHECK(cudaMemcpy(ds.get(), s, n * 8, cudaMemcpyHostToDevice));
    VMAF_CUDA_CHECK(cudaMemcpy(df.get(), f, n * 4, cudaMemcpyHostToDevice));
    dadd_float_kernel<<<unsigned((n + 255) / 256), 256>>>(nonneg, ds.get<double>(), df.get<float>(),
                                                         dfast.get<double>(), dplain.get<double>(), n);
    VMAF_CUDA_CHECK_LAUNCH();
    VMAF_CUDA_CHECK(cudaMemcpy(fast, dfast.get(), n * 8, cudaMemcpyDeviceToHost));
    VMAF_CUDA_CHECK(cudaMemcpy(plain, dplain.get(), n * 8, cudaMemcpyDeviceToHost));
}

void glibc_math_on_device(GlibcFn fn, const double* x, const double* y, double* out, std::size_t n) {
    using vmaf_cuda::cuda::DeviceBuffer;
    DeviceBuffer dx(n * 8), dy(n * 8), dout(n * 8);
    VMAF_CUDA_CHECK(cudaMemcpy(dx.get(), x, n * 8, cudaMemcpyHostToDevice));
    VMAF_CUDA_CHECK(cudaMemcpy(dy.get(), y, n * 8, cudaMemcpyHostToDevice));
    glibc_math_kernel<<<unsigned((n + 255) / 256), 256>>>(fn, dx.get<double>(), dy.get<double>(),
                                                         dout.get<double>(), n);
    VMAF_CUDA_CHECK_LAUNCH();
    VMAF_CUDA_CHECK(cudaMemcpy(out, dout.get(), n * 8, cudaMemcpyDeviceToHost));
}

void ciede_de00_on_device(unsigned bpc, const float* v, float* out, std::size_t n) {
    using vmaf_cuda::cuda::DeviceBuffer;
    DeviceBuffer dv(n * 24), dout(n * 4);
    VMAF_CUDA_CHECK(cudaMemcpy(dv.get(), v, n * 24, cudaMemcpyHostToDevice));
    de00_kernel<<<unsigned((n + 255) / 256), 256>>>(bpc, dv.get<float>(), dout.get<float>(), n);
    VMAF_CUDA_CHECK_LAUNCH();
    VMAF_CUDA_CHECK(cudaMemcpy(out, dout.get(), n * 4, cudaMemcpyDeviceToHost));
}

} // namespace vmaf_cuda_test

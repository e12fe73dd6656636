// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file glibc_math_device.h
/// Runs kernels/glibc_math.cuh's functions on the device, for the check suite
/// (tests/check/ciede.cpp): `out[i] = f(x[i], y[i])` for n inputs (host arrays; y is
/// ignored by the one-argument functions; powf takes and returns floats widened to double).

#include <cstddef>

namespace vmaf_cuda_test {

enum class GlibcFn { exp, pow, powf, sin, cos, atan2 };

/// \throws vmaf_cuda::cuda::CudaError on a CUDA failure.
void glibc_math_on_device(GlibcFn fn, const double* x, const double* y, double* out, std::size_t n);

/// ciede_pixel.cuh's ciede_de00 on the device: `out[i]` for the six samples v[6 * i ...].
void ciede_de00_on_device(unsigned bpc, const float* v, float* out, std::size_t n);

/// cuda_common.cuh's dadd_float_rn (nonneg = false) or dadd_nonneg_float_rn (true) next to
/// __dadd_rn(s, double(f)) on the device: `fast[i]`, `plain[i]` for s[i], f[i].
void dadd_float_on_device(bool nonneg, const double* s, const float* f, double* fast, double* plain,
                          std::size_t n);

} // namespace vmaf_cuda_test

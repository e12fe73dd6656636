// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file error.h
/// The one exception type used inside the engine. The C API layer (api.cpp) catches it
/// and returns `status` (a negative VmafCudaStatus) with `what()` as the message.

#include <stdexcept>
#include <string>

namespace vmaf_cuda::engine {

/// An engine failure: `status` is a VmafCudaStatus value from vmaf_cuda.h (e.g.
/// VMAF_CUDA_EMODEL, VMAF_CUDA_EINVAL, VMAF_CUDA_EIO); `what()` says what failed.
struct Error : std::runtime_error {
    int status;
    Error(int status_code, const std::string& message)
        : std::runtime_error(message), status(status_code) {}
};

} // namespace vmaf_cuda::engine

// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
// What the float feature records (float_adm, float_vif, float_motion) share: the checks
// before the first frame and the CUDA backend's refusal.

#include "feature.h"

#include "error.h"
#include "float_picture.h"
#include "vmaf_cuda.h"

#include <string>

namespace vmaf_cuda::engine::float_feature {

/// libvmaf's picture_copy converts 8, 10, 12 and 16 bits only (float_picture.h).
inline void check_bpc(const char* name, const Geometry& g) {
    if (!ref::float_bpc_supported(g.bpc))
        throw Error(VMAF_CUDA_EINVAL, std::string(name) + ": bit depth " + std::to_string(g.bpc) +
                                          " is not supported (libvmaf's float extractors read "
                                          "8, 10, 12 or 16 bits)");
}

/// The frame size refusal of a float extractor, naming the feature and both sizes.
[[noreturn]] inline void too_small(const char* name, const Geometry& g, const std::string& min,
                                   const std::string& why) {
    throw Error(VMAF_CUDA_EINVAL, std::string(name) + ": frame size " + std::to_string(g.width) +
                                      "x" + std::to_string(g.height) + " is too small (at least " +
                                      min + " luma samples: " + why + ")");
}

/// gpu_refusal() of the float records.
inline std::string refusal(const char* name) {
    return std::string(name) + " (vmaf_float_* models) runs on the CPU backend only";
}

} // namespace vmaf_cuda::engine::float_feature

// SPDX-License-Identifier: BSD-2-Clause-Patent
// Samples to floats and option-suffixed names; see float_picture.h.

#include "float_picture.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace vmaf_cuda::ref {

bool float_bpc_supported(unsigned bpc) {
    return bpc == 8 || bpc == 10 || bpc == 12 || bpc == 16;
}

void float_picture_copy(const LumaView& src, float* dst, std::size_t dst_stride) {
    if (!float_bpc_supported(src.bpc))
        throw std::invalid_argument("float features: bpc " + std::to_string(src.bpc) +
                                    " is not supported (libvmaf converts 8, 10, 12, 16)");
    const int offset = -128;
    if (src.bpc == 8) {
        for (unsigned i = 0; i < src.height; ++i) {
            const std::uint8_t* row = src.row8(i);
            float* out = dst + dst_stride * i;
            for (unsigned j = 0; j < src.width; ++j)
                out[j] = static_cast<float>(row[j]) + static_cast<float>(offset);
        }
        return;
    }
    const float scaler = src.bpc == 10 ? 4.0f : src.bpc == 12 ? 16.0f : 256.0f;
    for (unsigned i = 0; i < src.height; ++i) {
        const std::uint16_t* row = src.row16(i);
        float* out = dst + dst_stride * i;
        for (unsigned j = 0; j < src.width; ++j)
            out[j] = static_cast<float>(row[j]) / scaler + static_cast<float>(offset);
    }
}

std::string format_g(double v) {
    char b[64];
    std::snprintf(b, sizeof b, "%g", v);
    return b;
}

std::string float_feature_name(std::string_view alias, std::vector<FeatureParam> params) {
    std::string out(alias);
    std::sort(params.begin(), params.end(),
              [](const FeatureParam& a, const FeatureParam& b) { return a.name < b.name; });
    for (const FeatureParam& p : params) {
        out += '_';
        out += p.alias;
        if (!p.value.empty()) {
            out += '_';
            out += p.value;
        }
    }
    return out;
}

} // namespace vmaf_cuda::ref

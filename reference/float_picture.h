// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file float_picture.h
/// What the float extractors (float_adm, float_vif, float_motion) share: the conversion
/// of luma samples to floats, and libvmaf's option-suffixed feature names.
///
/// Arithmetic followed: libvmaf v3.2.0 `libvmaf/src/feature/picture_copy.c`
/// (`picture_copy`, `picture_copy_hbd`) called with offset -128, and
/// `feature_name.c` (`vmaf_feature_name_from_options`) for the names.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "plane.h"

namespace vmaf_cuda::ref {

/// True for the bit depths libvmaf's picture_copy converts correctly: 8, 10, 12, 16.
/// (libvmaf v3.2.0 sends every other depth through its 8-bit branch, which reads the
/// uint16 samples byte by byte; the float extractors here refuse those depths.)
bool float_bpc_supported(unsigned bpc);

/// libvmaf's picture_copy(dst, stride, pic, -128, bpc, 0) for one luma plane:
///   bpc 8:          dst = (float)x + -128
///   bpc 10, 12, 16: dst = (float)x / s + -128 with s = 4.0f, 16.0f, 256.0f (float division,
///                   then float addition; exact for every sample value)
/// So samples land on the 8-bit scale, centred: [-128, 127.99...].
/// \param src luma plane (bpc 8, 10, 12 or 16).
/// \param dst row-major floats, `dst_stride` floats per row (>= src.width), src.height rows.
/// \throws std::invalid_argument for another bpc.
void float_picture_copy(const LumaView& src, float* dst, std::size_t dst_stride);

/// One non-default feature parameter of an extractor, for float_feature_name().
struct FeatureParam {
    std::string_view name;  ///< libvmaf option name (the sort key), e.g. "vif_enhn_gain_limit"
    std::string_view alias; ///< what the name shows, e.g. "egl"
    std::string value;      ///< printed value ("%g" for doubles, "%d" for ints); empty: bool
};

/// libvmaf's log name of a feature: `alias` alone when `params` is empty (all options at
/// their defaults; libvmaf then logs the alias of the plain name), else
/// alias + "_" + p.alias + "_" + p.value for each parameter in alphabetical order of
/// p.name ("_" + p.alias alone for a boolean). E.g. ("vif_scale0", {egl 1}) gives
/// "vif_scale0_egl_1".
std::string float_feature_name(std::string_view alias, std::vector<FeatureParam> params);

/// "%g" of a double, as libvmaf prints option values into names.
std::string format_g(double v);

} // namespace vmaf_cuda::ref

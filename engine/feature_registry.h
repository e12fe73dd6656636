// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file feature_registry.h
/// The feature registry, trimmed from libvmaf's: which extractors exist (integer ADM,
/// VIF, motion), the names their outputs carry in scores and logs, and how a
/// FeatureSpec's options become the reference's option structs.

#include "adm.h"
#include "model.h"
#include "vif.h"

#include <string>
#include <vector>

namespace vmaf_cuda::engine {

/// Smallest luma width and height accepted (libvmaf's integer VIF needs a 2x2 plane at
/// scale 3; ADM's four DWT levels likewise).
inline constexpr unsigned kMinSize = 16;

enum class ExtractorKind { adm, vif, motion };

/// Kind of a spec's extractor; throws Error(EINVAL) for an unknown one.
ExtractorKind extractor_kind(const FeatureSpec& spec);

/// Output names (libvmaf log aliases, with option suffixes) in a fixed order:
/// adm: adm2, aim, adm3, adm_scale0..3; vif: vif_scale0..3; motion: motion_sad,
/// motion2, motion3. E.g. "integer_adm2", "integer_vif_scale0_egl_1",
/// "VMAF_integer_feature_motion_sad_score".
std::vector<std::string> extractor_output_names(const FeatureSpec& spec);

/// Appends `spec` unless an equal one is present.
void add_unique(std::vector<FeatureSpec>& list, const FeatureSpec& spec);

/// The extractor instances a model needs, in the order of its inputs.
std::vector<FeatureSpec> model_extractors(const Model& m);

/// Log names of a model's inputs, in model order.
std::vector<std::string> model_input_names(const Model& m);

ref::AdmOptions adm_options(const FeatureSpec& spec);
ref::VifOptions vif_options(const FeatureSpec& spec);

} // namespace vmaf_cuda::engine

// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file feature_registry.h
/// The feature registry (the table is feature_registry.cpp; records are
/// engine/features/<stem>.cpp, see feature.h), size limits, and how a FeatureSpec's
/// options become the reference's option structs of the integer VMAF extractors.

#include "adm.h"
#include "feature.h"
#include "model.h"
#include "motion.h"
#include "speed.h"
#include "vif.h"

#include <string>
#include <vector>

namespace vmaf_cuda::engine {

/// Smallest luma width and height accepted: ADM's four DWT levels need 17 (each level's
/// input at least 3 samples). Below 33 libvmaf v3.2.0 itself reads outside its buffers
/// in ADM (one sample at index -1 of a 3- or 4-sample level), so its numbers there are
/// not reproducible; vmaf_cuda mirrors that index as at every other size (see
/// reference/adm_math.h), so its results are defined and equal on CPU and GPU.
inline constexpr unsigned kMinSize = ref::kAdmMinSize;
/// Largest luma width and height accepted (beyond 16K; keeps sizes and sums in range).
inline constexpr unsigned kMaxSize = 32768;
/// Most CPU worker threads used (frames in flight bound the useful number anyway).
inline constexpr unsigned kMaxThreads = 64;

/// Output names of an extractor instance in its outputs() order, e.g. adm: adm2, aim,
/// adm3, adm_scale0..3 ("integer_adm2", "integer_adm2_egl_1"); motion: motion_sad,
/// motion2, motion3. Throws Error(EINVAL) for an unknown extractor or bad options.
std::vector<std::string> extractor_output_names(const FeatureSpec& spec, unsigned width = 1920,
                                                unsigned height = 1080, unsigned bpc = 8,
                                                unsigned chroma = 420);

/// Appends `spec` unless an equal one is present.
void add_unique(std::vector<FeatureSpec>& list, const FeatureSpec& spec);

/// The extractor instances a model needs, in the order of its inputs.
std::vector<FeatureSpec> model_extractors(const Model& m);

/// Log names of a model's inputs, in model order.
std::vector<std::string> model_input_names(const Model& m);

/// The reference's option structs for a spec: every libvmaf option of the extractor,
/// given or at its libvmaf default (option_value). Which of them users and models may
/// set is model_spec.cpp's `supported` flag. adm_options throws
/// Error(EINVAL) for combinations ref::adm_factors refuses (e.g. norm_view_dist *
/// ref_display_height < 3240, csf_mode 2 at a viewing geometry it has no table for).
ref::AdmOptions adm_options(const FeatureSpec& spec);
ref::VifOptions vif_options(const FeatureSpec& spec);
ref::MotionOptions motion_options(const FeatureSpec& spec);
/// SpEED options of a speed_chroma or speed_temporal spec (weight_var_mode only for
/// speed_chroma, use_ref_diff only for speed_temporal). Throws Error(EINVAL) naming the
/// extractor for a prescale method libvmaf does not know or options ref::speed_validate
/// refuses (e.g. a kernelscale outside libvmaf's list).
ref::SpeedOptions speed_options(const FeatureSpec& spec);

} // namespace vmaf_cuda::engine

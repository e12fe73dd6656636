// SPDX-License-Identifier: BSD-2-Clause-Patent
// The feature registry: one line per feature record (engine/features/<stem>.cpp).

#include "feature_registry.h"

#include "error.h"
#include "vmaf_cuda.h"

#include <stdexcept>

namespace vmaf_cuda::engine {

extern const FeatureRecord kAdmRecord;
extern const FeatureRecord kVifRecord;
extern const FeatureRecord kMotionRecord;
extern const FeatureRecord kSpeedChromaRecord;
extern const FeatureRecord kSpeedTemporalRecord;
extern const FeatureRecord kFloatSsimRecord;
extern const FeatureRecord kFloatMsSsimRecord;
extern const FeatureRecord kCambiRecord;
extern const FeatureRecord kPsnrRecord;
extern const FeatureRecord kCiedeRecord;
extern const FeatureRecord kFloatAdmRecord;
extern const FeatureRecord kFloatVifRecord;
extern const FeatureRecord kFloatMotionRecord;

namespace {

// libvmaf's extractor order does not matter here: instances are planned in the order
// models and the features string name them.
const FeatureRecord* const kRecords[] = {
    &kAdmRecord,
    &kVifRecord,
    &kMotionRecord,
    &kSpeedChromaRecord,
    &kSpeedTemporalRecord,
    &kFloatSsimRecord,
    &kFloatMsSsimRecord,
    &kCambiRecord,
    &kPsnrRecord,
    &kCiedeRecord,
    &kFloatAdmRecord,
    &kFloatVifRecord,
    &kFloatMotionRecord,
};

} // namespace

std::span<const FeatureRecord* const> feature_records() { return kRecords; }

const FeatureRecord* find_feature(std::string_view name) {
    for (const FeatureRecord* r : kRecords)
        if (name == r->name) return r;
    return nullptr;
}

std::vector<std::string> extractor_output_names(const FeatureSpec& spec, unsigned width,
                                                unsigned height, unsigned bpc, unsigned chroma) {
    const FeatureRecord* r = find_feature(spec.extractor);
    if (!r) extractor_features(spec.extractor); // throws, listing the known ones
    const auto inst = r->make(spec, Geometry{width, height, bpc, chroma});
    std::vector<std::string> out;
    for (const OutputDef& o : inst->outputs()) out.push_back(o.name);
    return out;
}

void add_unique(std::vector<FeatureSpec>& list, const FeatureSpec& spec) {
    for (const FeatureSpec& s : list)
        if (s == spec) return;
    list.push_back(spec);
}

std::vector<FeatureSpec> model_extractors(const Model& m) {
    std::vector<FeatureSpec> out;
    for (const ModelFeature& f : m.features()) add_unique(out, f.spec);
    return out;
}

std::vector<std::string> model_input_names(const Model& m) {
    std::vector<std::string> out;
    for (const ModelFeature& f : m.features()) out.push_back(f.log_name);
    return out;
}

ref::AdmOptions adm_options(const FeatureSpec& spec) {
    ref::AdmOptions o;
    o.enhn_gain_limit = option_value(spec, "adm_enhn_gain_limit");
    o.norm_view_dist = option_value(spec, "adm_norm_view_dist");
    o.ref_display_height = static_cast<int>(option_value(spec, "adm_ref_display_height"));
    o.csf_mode = static_cast<int>(option_value(spec, "adm_csf_mode"));
    o.csf_scale = option_value(spec, "adm_csf_scale");
    o.csf_diag_scale = option_value(spec, "adm_csf_diag_scale");
    o.noise_weight = option_value(spec, "adm_noise_weight");
    o.min_val = option_value(spec, "adm_min_val");
    o.dlm_weight = option_value(spec, "adm_dlm_weight");
    o.skip_aim = option_value(spec, "adm_skip_aim") != 0.0;
    o.skip_scale0 = option_value(spec, "adm_skip_scale0") != 0.0;
    try {
        (void)ref::adm_factors(o); // combinations libvmaf rejects: refused before the first frame
    } catch (const std::invalid_argument& e) {
        throw Error(VMAF_CUDA_EINVAL, e.what());
    }
    return o;
}

ref::MotionOptions motion_options(const FeatureSpec& spec) {
    ref::MotionOptions o;
    o.force_zero = option_value(spec, "motion_force_zero") != 0.0;
    o.blend_factor = option_value(spec, "motion_blend_factor");
    o.blend_offset = option_value(spec, "motion_blend_offset");
    o.fps_weight = option_value(spec, "motion_fps_weight");
    o.max_val = option_value(spec, "motion_max_val");
    o.five_frame_window = option_value(spec, "motion_five_frame_window") != 0.0;
    o.moving_average = option_value(spec, "motion_moving_average") != 0.0;
    return o;
}

ref::SpeedOptions speed_options(const FeatureSpec& spec) {
    const bool chroma = spec.extractor == "speed_chroma";
    ref::SpeedOptions o;
    o.kernelscale = option_value(spec, "speed_kernelscale");
    o.prescale = option_value(spec, "speed_prescale");
    o.sigma_nn = option_value(spec, "speed_sigma_nn");
    o.nn_floor = option_value(spec, "speed_nn_floor");
    o.max_val = option_value(spec, "speed_max_val");
    if (chroma) o.weight_var_mode = static_cast<int>(option_value(spec, "speed_weight_var_mode"));
    else o.use_ref_diff = option_value(spec, "speed_use_ref_diff") != 0.0;
    // libvmaf's vif_get_scaling_method: these four names, compared exactly.
    const std::string m = option_text(spec, "speed_prescale_method");
    if (m == "nearest") o.prescale_method = ref::SpeedScaleMethod::nearest;
    else if (m == "bilinear") o.prescale_method = ref::SpeedScaleMethod::bilinear;
    else if (m == "bicubic") o.prescale_method = ref::SpeedScaleMethod::bicubic;
    else if (m == "lanczos4") o.prescale_method = ref::SpeedScaleMethod::lanczos4;
    else
        throw Error(VMAF_CUDA_EINVAL, spec.extractor + ": speed_prescale_method \"" + m +
                                          "\" is not one of nearest, bilinear, bicubic, lanczos4");
    try {
        ref::speed_validate(o);
    } catch (const std::invalid_argument& e) {
        throw Error(VMAF_CUDA_EINVAL, spec.extractor + ": " + e.what());
    }
    return o;
}

ref::VifOptions vif_options(const FeatureSpec& spec) {
    ref::VifOptions o;
    o.enhn_gain_limit = option_value(spec, "vif_enhn_gain_limit");
    return o;
}

} // namespace vmaf_cuda::engine

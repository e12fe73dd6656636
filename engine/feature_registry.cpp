// SPDX-License-Identifier: BSD-2-Clause-Patent
#include "feature_registry.h"

#include "error.h"
#include "vmaf_cuda.h"

namespace vmaf_cuda::engine {

ExtractorKind extractor_kind(const FeatureSpec& spec) {
    if (spec.extractor == "adm") return ExtractorKind::adm;
    if (spec.extractor == "vif") return ExtractorKind::vif;
    if (spec.extractor == "motion") return ExtractorKind::motion;
    throw Error(VMAF_CUDA_EINVAL, "unknown feature extractor '" + spec.extractor +
                                      "' (vmaf_cuda provides adm, vif and motion)");
}

std::vector<std::string> extractor_output_names(const FeatureSpec& spec) {
    static const std::vector<std::string> adm = {
        "VMAF_integer_feature_adm2_score", "VMAF_integer_feature_aim_score",
        "VMAF_integer_feature_adm3_score", "integer_adm_scale0", "integer_adm_scale1",
        "integer_adm_scale2", "integer_adm_scale3"};
    static const std::vector<std::string> vif = {
        "VMAF_integer_feature_vif_scale0_score", "VMAF_integer_feature_vif_scale1_score",
        "VMAF_integer_feature_vif_scale2_score", "VMAF_integer_feature_vif_scale3_score"};
    static const std::vector<std::string> motion = {"VMAF_integer_feature_motion_sad_score",
                                                    "VMAF_integer_feature_motion2_score",
                                                    "VMAF_integer_feature_motion3_score"};
    const auto kind = extractor_kind(spec);
    const auto& raw = kind == ExtractorKind::adm ? adm : kind == ExtractorKind::vif ? vif : motion;
    std::vector<std::string> out;
    for (const std::string& r : raw) out.emplace_back(feature_alias(feature_key(r, spec)));
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
    return o;
}

ref::VifOptions vif_options(const FeatureSpec& spec) {
    ref::VifOptions o;
    o.enhn_gain_limit = option_value(spec, "vif_enhn_gain_limit");
    return o;
}

} // namespace vmaf_cuda::engine

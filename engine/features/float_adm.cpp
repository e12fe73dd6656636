// SPDX-License-Identifier: BSD-2-Clause-Patent
// Feature record: float ADM (libvmaf v3.2.0 `float_adm`, src/feature/float_adm.c), what
// the vmaf_float_* models read. Stage: reference/float_adm.h (CPU only; the CUDA backend
// refuses it, backend=auto scores on the CPU).

#include "feature.h"
#include "feature_registry.h"
#include "features/float_common.h"

#include "float_adm.h"

#include <stdexcept>

namespace vmaf_cuda::engine {
namespace {

// libvmaf's option table of float_adm.c (defaults from adm_options.h). debug (more
// outputs, no renaming) is accepted at its default only. adm_csf_scale and
// adm_csf_diag_scale change only Barten's CSF (adm_csf_mode 1, which the reference
// refuses): elsewhere they rename the outputs and change no number, as in libvmaf.
constexpr OptionDef kOptions[] = {
    {"debug", nullptr, OptType::boolean, 0, 0, 1, false, false},
    {"adm_enhn_gain_limit", "egl", OptType::real, 100.0, 1.0, 100.0, true, true},
    {"adm_norm_view_dist", "nvd", OptType::real, 3.0, 0.75, 24.0, true, true},
    {"adm_noise_weight", "nw", OptType::real, 0.03125, 0.0, 1500.0, true, true},
    {"adm_csf_scale", "scf", OptType::real, 1.0, 0.0, 50.0, true, true},
    {"adm_csf_diag_scale", "scfd", OptType::real, 1.0, 0.0, 50.0, true, true},
    {"adm_ref_display_height", "rdf", OptType::integer, 1080, 1, 4320, true, true},
    {"adm_csf_mode", "csf", OptType::integer, 0, 0, 9, true, true},
    {"adm_bypass_cm", "bcm", OptType::integer, 0, 0, 1, true, true},
    {"adm_adm3_apply_hm", "aah", OptType::boolean, 0, 0, 1, true, true},
    {"adm_p_norm", "apn", OptType::real, 3.0, 1.0, 20.0, true, true},
    {"adm_dlm_weight", "dlmw", OptType::real, 0.5, 0.0, 1.0, true, true},
    {"adm_min_val", "min", OptType::real, 0.0, 0.0, 1.0, true, true},
    {"adm_f1s0", "f1s0", OptType::real, -1.0, -1.0, 10.0, true, true},
    {"adm_f1s1", "f1s1", OptType::real, -1.0, -1.0, 10.0, true, true},
    {"adm_f1s2", "f1s2", OptType::real, -1.0, -1.0, 10.0, true, true},
    {"adm_f1s3", "f1s3", OptType::real, -1.0, -1.0, 10.0, true, true},
    {"adm_f2s0", "f2s0", OptType::real, -1.0, -1.0, 10.0, true, true},
    {"adm_f2s1", "f2s1", OptType::real, -1.0, -1.0, 10.0, true, true},
    {"adm_f2s2", "f2s2", OptType::real, -1.0, -1.0, 10.0, true, true},
    {"adm_f2s3", "f2s3", OptType::real, -1.0, -1.0, 10.0, true, true},
    {"adm_skip_aim_scale", "sasc", OptType::integer, -1, 0, 3, true, true},
    {"adm_skip_scale0", "ssz", OptType::boolean, 0, 0, 1, true, true},
};

// libvmaf's provided_features of float_adm.c, in its order.
constexpr const char* kProvided[] = {
    "VMAF_feature_adm2_score", "VMAF_feature_aim_score", "VMAF_feature_adm3_score",
    "VMAF_feature_adm_scale0_score", "VMAF_feature_adm_scale1_score",
    "VMAF_feature_adm_scale2_score", "VMAF_feature_adm_scale3_score", "adm_num", "adm_den",
    "adm_scale0", "adm_num_scale0", "adm_den_scale0", "adm_num_scale1", "adm_den_scale1",
    "adm_num_scale2", "adm_den_scale2", "adm_num_scale3", "adm_den_scale3"};

constexpr const char* kName = "float_adm";

ref::FloatAdmOptions options_of(const FeatureSpec& spec) {
    ref::FloatAdmOptions o;
    o.enhn_gain_limit = option_value(spec, "adm_enhn_gain_limit");
    o.norm_view_dist = option_value(spec, "adm_norm_view_dist");
    o.ref_display_height = static_cast<int>(option_value(spec, "adm_ref_display_height"));
    o.csf_mode = static_cast<int>(option_value(spec, "adm_csf_mode"));
    o.csf_scale = option_value(spec, "adm_csf_scale");
    o.csf_diag_scale = option_value(spec, "adm_csf_diag_scale");
    o.noise_weight = option_value(spec, "adm_noise_weight");
    o.bypass_cm = static_cast<int>(option_value(spec, "adm_bypass_cm"));
    o.adm3_apply_hm = option_value(spec, "adm_adm3_apply_hm") != 0.0;
    o.p_norm = option_value(spec, "adm_p_norm");
    o.dlm_weight = option_value(spec, "adm_dlm_weight");
    o.min_val = option_value(spec, "adm_min_val");
    const char* f1[4] = {"adm_f1s0", "adm_f1s1", "adm_f1s2", "adm_f1s3"};
    const char* f2[4] = {"adm_f2s0", "adm_f2s1", "adm_f2s2", "adm_f2s3"};
    for (int s = 0; s < 4; ++s) {
        o.f1[s] = option_value(spec, f1[s]);
        o.f2[s] = option_value(spec, f2[s]);
    }
    o.skip_aim_scale = static_cast<int>(option_value(spec, "adm_skip_aim_scale"));
    o.skip_scale0 = option_value(spec, "adm_skip_scale0") != 0.0;
    try {
        ref::float_adm_check(o);
    } catch (const std::invalid_argument& e) {
        throw Error(VMAF_CUDA_EINVAL, e.what());
    }
    return o;
}

class FloatAdm final : public FeatureInstance {
public:
    FloatAdm(const FeatureSpec& spec, const Geometry& g) : geo_(g), opt_(options_of(spec)) {
        float_feature::check_bpc(kName, g);
        if (g.width < 17 || g.height < 17)
            float_feature::too_small(kName, g, "17x17", "its four DWT levels");
        for (int k = 0; k < 7; ++k) outs_.push_back(make_output(kProvided[k], spec));
    }
    const std::vector<OutputDef>& outputs() const override { return outs_; }

    std::unique_ptr<CpuStage> cpu() const override {
        struct Stage final : CpuStage {
            const FloatAdm& f;
            ref::FloatAdmScratch scratch;
            explicit Stage(const FloatAdm& a) : f(a), scratch(a.geo_.width, a.geo_.height) {}
            void compute(const CpuFrame& fr, double* out, double*) override {
                ref::FloatAdmAccum acc;
                ref::float_adm_accumulate(fr.ref->y, fr.dist->y, f.opt_, scratch, acc);
                const ref::FloatAdmScores s =
                    ref::float_adm_finish(acc, f.opt_, f.geo_.width, f.geo_.height);
                const double v[7] = {s.adm2, s.aim, s.adm3, s.scale[0], s.scale[1], s.scale[2],
                                     s.scale[3]};
                for (int k = 0; k < 7; ++k) out[k] = v[k];
            }
        };
        return std::make_unique<Stage>(*this);
    }

    std::string gpu_refusal() const override { return float_feature::refusal(kName); }

private:
    Geometry geo_;
    ref::FloatAdmOptions opt_;
    std::vector<OutputDef> outs_;
};

std::unique_ptr<FeatureInstance> make(const FeatureSpec& spec, const Geometry& g) {
    return std::make_unique<FloatAdm>(spec, g);
}

} // namespace

extern const FeatureRecord kFloatAdmRecord = {kName, kOptions, kProvided, make};

} // namespace vmaf_cuda::engine

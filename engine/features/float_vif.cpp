// SPDX-License-Identifier: BSD-2-Clause-Patent
// Feature record: float VIF (libvmaf v3.2.0 `float_vif`, src/feature/float_vif.c), what
// the vmaf_float_* models read. Stage: reference/float_vif.h (CPU only; the CUDA backend
// refuses it, backend=auto scores on the CPU).

#include "feature.h"
#include "feature_registry.h"
#include "features/float_common.h"

#include "float_vif.h"

#include <stdexcept>

namespace vmaf_cuda::engine {
namespace {

// libvmaf's option table of float_vif.c (defaults from vif_options.h). debug (more
// outputs, no renaming) is accepted at its default only, vif_prescale_method at
// "nearest" only (the reference has no other resampler).
constexpr OptionDef kOptions[] = {
    {"debug", nullptr, OptType::boolean, 0, 0, 1, false, false},
    {"vif_enhn_gain_limit", "egl", OptType::real, 100.0, 1.0, 100.0, true, true},
    {"vif_kernelscale", "ks", OptType::real, 1.0, 0.1, 4.0, true, true},
    {"vif_prescale", "ps", OptType::real, 1.0, 0.1, 4.0, true, true},
    {"vif_scale1_min_val", "s1miv", OptType::real, 0.0, 0.0, 1.0, true, true},
    {"vif_scale2_min_val", "s2miv", OptType::real, 0.0, 0.0, 1.0, true, true},
    {"vif_scale3_min_val", "s3miv", OptType::real, 0.0, 0.0, 1.0, true, true},
    {"vif_prescale_method", "pm", OptType::text, 0, 0, 0, true, false, "nearest"},
    {"vif_sigma_nsq", "snsq", OptType::real, 2.0, 0.0, 5.0, true, true},
    {"vif_skip_scale0", "ssclz", OptType::boolean, 0, 0, 1, true, true},
};

// libvmaf's provided_features of float_vif.c, in its order.
constexpr const char* kProvided[] = {
    "VMAF_feature_vif_scale0_score", "VMAF_feature_vif_scale1_score",
    "VMAF_feature_vif_scale2_score", "VMAF_feature_vif_scale3_score", "vif", "vif_num",
    "vif_den", "vif_num_scale0", "vif_den_scale0", "vif_num_scale1", "vif_den_scale1",
    "vif_num_scale2", "vif_den_scale2", "vif_num_scale3", "vif_den_scale3"};

constexpr const char* kName = "float_vif";

ref::FloatVifOptions options_of(const FeatureSpec& spec) {
    ref::FloatVifOptions o;
    o.enhn_gain_limit = option_value(spec, "vif_enhn_gain_limit");
    o.kernelscale = option_value(spec, "vif_kernelscale");
    o.prescale = option_value(spec, "vif_prescale");
    o.prescale_method = option_text(spec, "vif_prescale_method");
    o.scale1_min_val = option_value(spec, "vif_scale1_min_val");
    o.scale2_min_val = option_value(spec, "vif_scale2_min_val");
    o.scale3_min_val = option_value(spec, "vif_scale3_min_val");
    o.sigma_nsq = option_value(spec, "vif_sigma_nsq");
    o.skip_scale0 = option_value(spec, "vif_skip_scale0") != 0.0;
    try {
        ref::float_vif_check(o);
    } catch (const std::invalid_argument& e) {
        throw Error(VMAF_CUDA_EINVAL, e.what());
    }
    return o;
}

/// Whether every scale of a w x h frame is large enough for its filter (the rule of
/// FloatVifScratch: scale s of floor(round(n * prescale) / 2^s) samples needs more than
/// half its filter width).
bool fits(unsigned n, const ref::FloatVifOptions& o) {
    unsigned m = static_cast<unsigned>(static_cast<int>(n * o.prescale + 0.5));
    for (unsigned s = 0; s < 4; ++s) {
        if (s > 0) m /= 2;
        if (m < static_cast<unsigned>(ref::float_vif_filter_width(s, o.kernelscale) / 2 + 1))
            return false;
    }
    return true;
}

class FloatVif final : public FeatureInstance {
public:
    FloatVif(const FeatureSpec& spec, const Geometry& g) : geo_(g), opt_(options_of(spec)) {
        float_feature::check_bpc(kName, g);
        if (!fits(g.width, opt_) || !fits(g.height, opt_)) {
            unsigned min = 1;
            while (!fits(min, opt_) && min < (1u << 20)) ++min;
            float_feature::too_small(kName, g, std::to_string(min) + "x" + std::to_string(min),
                                     "each of its four scales must be wider than half its filter");
        }
        for (int k = 0; k < 4; ++k) outs_.push_back(make_output(kProvided[k], spec));
    }
    const std::vector<OutputDef>& outputs() const override { return outs_; }

    std::unique_ptr<CpuStage> cpu() const override {
        struct Stage final : CpuStage {
            const FloatVif& f;
            ref::FloatVifScratch scratch;
            explicit Stage(const FloatVif& v)
                : f(v), scratch(v.geo_.width, v.geo_.height, v.opt_) {}
            void compute(const CpuFrame& fr, double* out, double*) override {
                ref::FloatVifAccum acc;
                ref::float_vif_accumulate(fr.ref->y, fr.dist->y, f.opt_, scratch, acc);
                const ref::FloatVifScores s = ref::float_vif_finish(acc, f.opt_);
                for (int k = 0; k < 4; ++k) out[k] = s.scale[k];
            }
        };
        return std::make_unique<Stage>(*this);
    }

    std::string gpu_refusal() const override { return float_feature::refusal(kName); }

private:
    Geometry geo_;
    ref::FloatVifOptions opt_;
    std::vector<OutputDef> outs_;
};

std::unique_ptr<FeatureInstance> make(const FeatureSpec& spec, const Geometry& g) {
    return std::make_unique<FloatVif>(spec, g);
}

} // namespace

extern const FeatureRecord kFloatVifRecord = {kName, kOptions, kProvided, make};

} // namespace vmaf_cuda::engine

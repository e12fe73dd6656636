// SPDX-License-Identifier: BSD-2-Clause-Patent
// Feature record: integer ADM (libvmaf v3.2.0 `adm`, src/feature/integer_adm.c).
// Stages: reference/adm.h (CPU and the host finish), kernels/adm.cuh (GPU).

#include "feature.h"
#include "feature_registry.h"

#include "adm.h"
#include "error.h"
#include "vmaf_cuda.h"

#ifdef VMAF_CUDA_HAVE_CUDA
#include "adm.cuh"
#endif

namespace vmaf_cuda::engine {
namespace {

// libvmaf's option table of integer_adm.c (defaults from integer_adm.h). adm_skip_aim,
// adm_skip_scale0 and debug are recognised and accepted at their defaults only.
constexpr OptionDef kOptions[] = {
    {"debug", nullptr, OptType::boolean, 0, 0, 1, false, false},
    {"adm_csf_scale", "scf", OptType::real, 1.0, 0.0, 50.0, true, true},
    {"adm_csf_diag_scale", "scfd", OptType::real, 1.0, 0.0, 50.0, true, true},
    {"adm_dlm_weight", "dlmw", OptType::real, 0.5, 0.0, 1.0, true, true},
    {"adm_enhn_gain_limit", "egl", OptType::real, 100.0, 1.0, 100.0, true, true},
    {"adm_norm_view_dist", "nvd", OptType::real, 3.0, 0.75, 24.0, true, true},
    {"adm_ref_display_height", "rdh", OptType::integer, 1080, 1, 4320, true, true},
    {"adm_csf_mode", "csf", OptType::integer, 0, 0, 3, true, true},
    {"adm_noise_weight", "nw", OptType::real, 0.03125, 0.0, 1500.0, true, true},
    {"adm_skip_aim", nullptr, OptType::boolean, 0, 0, 1, false, false},
    {"adm_skip_scale0", "ssz", OptType::boolean, 0, 0, 1, true, false},
    {"adm_min_val", "min", OptType::real, 0.0, 0.0, 1.0, true, true},
};

constexpr const char* kProvided[] = {
    "VMAF_integer_feature_adm2_score", "VMAF_integer_feature_aim_score",
    "VMAF_integer_feature_adm3_score", "integer_adm_scale0", "integer_adm_scale1",
    "integer_adm_scale2", "integer_adm_scale3", "integer_adm", "integer_adm_num",
    "integer_adm_den", "integer_adm_num_scale0", "integer_adm_den_scale0",
    "integer_adm_num_scale1", "integer_adm_den_scale1", "integer_adm_num_scale2",
    "integer_adm_den_scale2", "integer_adm_num_scale3", "integer_adm_den_scale3"};

void put(const ref::AdmScores& a, double* out) {
    const double v[7] = {a.adm2, a.aim, a.adm3, a.scale[0], a.scale[1], a.scale[2], a.scale[3]};
    for (int k = 0; k < 7; ++k) out[k] = v[k];
}

class Adm final : public FeatureInstance {
public:
    Adm(const FeatureSpec& spec, const Geometry& g) : geo_(g), opt_(adm_options(spec)) {
        for (int k = 0; k < 7; ++k) outs_.push_back(make_output(kProvided[k], spec));
    }
    const std::vector<OutputDef>& outputs() const override { return outs_; }
    bool ladder_shared() const override { return true; }

    std::unique_ptr<CpuStage> cpu() const override {
        struct Stage final : CpuStage {
            const Adm& f;
            ref::AdmScratch scratch;
            explicit Stage(const Adm& a) : f(a), scratch(a.geo_.width, a.geo_.height) {}
            void compute(const CpuFrame& fr, double* out, double*) override {
                ref::AdmAccum acc;
                ref::adm_accumulate(fr.ref->y, fr.dist->y, f.opt_, scratch, acc);
                put(ref::adm_finish(acc, f.opt_, f.geo_.width, f.geo_.height), out);
            }
        };
        return std::make_unique<Stage>(*this);
    }

#ifdef VMAF_CUDA_HAVE_CUDA
    bool has_gpu() const override { return true; }
    std::unique_ptr<GpuStage> gpu(const GpuContext& ctx) const override {
        struct Stage final : GpuStage {
            const Adm& f;
            cuda::AdmKernel k;
            Stage(const Adm& a, unsigned renditions)
                : f(a), k(a.geo_.width, a.geo_.height, a.geo_.bpc, a.opt_, renditions) {}
            std::size_t accum_bytes() const override { return sizeof(ref::AdmAccum); }
            bool ladder() const override { return true; }
            void enqueue(const GpuFrame& fr, void* d, void* st) override {
                if (fr.renditions > 1) { // a ladder's share: every rendition at once
                    k.enqueue(*fr.ref_luma, fr.dist_lumas, fr.renditions,
                              static_cast<ref::AdmAccum*>(d), static_cast<cudaStream_t>(st));
                    return;
                }
                k.enqueue(*fr.ref_luma, *fr.dist_luma, static_cast<ref::AdmAccum*>(d),
                          static_cast<cudaStream_t>(st));
            }
            bool finish_on_any_thread() const override { return true; }
            void finish(unsigned, const void* h, double* out, double*, void*) override {
                put(ref::adm_finish(*static_cast<const ref::AdmAccum*>(h), f.opt_, f.geo_.width,
                                    f.geo_.height),
                    out);
            }
        };
        return std::make_unique<Stage>(*this, ctx.renditions);
    }
#endif

private:
    Geometry geo_;
    ref::AdmOptions opt_;
    std::vector<OutputDef> outs_;
};

std::unique_ptr<FeatureInstance> make(const FeatureSpec& spec, const Geometry& g) {
    return std::make_unique<Adm>(spec, g);
}

} // namespace

extern const FeatureRecord kAdmRecord = {"adm", kOptions, kProvided, make};

} // namespace vmaf_cuda::engine

// SPDX-License-Identifier: BSD-2-Clause-Patent
// Feature record: integer VIF (libvmaf v3.2.0 `vif`, src/feature/integer_vif.c).
// Stages: reference/vif.h (CPU and the host finish), kernels/vif.cuh (GPU).

#include "feature.h"
#include "feature_registry.h"

#include "vif.h"

#ifdef VMAF_CUDA_HAVE_CUDA
#include "vif.cuh"
#endif

namespace vmaf_cuda::engine {
namespace {

constexpr OptionDef kOptions[] = {
    {"debug", nullptr, OptType::boolean, 0, 0, 1, false, false},
    {"vif_enhn_gain_limit", "egl", OptType::real, 100.0, 1.0, 100.0, true, true},
    {"vif_skip_scale0", "ssclz", OptType::boolean, 0, 0, 1, true, false},
};

constexpr const char* kProvided[] = {
    "VMAF_integer_feature_vif_scale0_score", "VMAF_integer_feature_vif_scale1_score",
    "VMAF_integer_feature_vif_scale2_score", "VMAF_integer_feature_vif_scale3_score",
    "integer_vif", "integer_vif_num", "integer_vif_den", "integer_vif_num_scale0",
    "integer_vif_den_scale0", "integer_vif_num_scale1", "integer_vif_den_scale1",
    "integer_vif_num_scale2", "integer_vif_den_scale2", "integer_vif_num_scale3",
    "integer_vif_den_scale3"};

void put(const ref::VifScores& v, double* out) {
    for (int k = 0; k < 4; ++k) out[k] = v.scale[k];
}

class Vif final : public FeatureInstance {
public:
    Vif(const FeatureSpec& spec, const Geometry& g) : geo_(g), opt_(vif_options(spec)) {
        for (int k = 0; k < 4; ++k) outs_.push_back(make_output(kProvided[k], spec));
    }
    const std::vector<OutputDef>& outputs() const override { return outs_; }
    bool ladder_shared() const override { return true; }

    std::unique_ptr<CpuStage> cpu() const override {
        struct Stage final : CpuStage {
            const Vif& f;
            ref::VifScratch scratch;
            explicit Stage(const Vif& v) : f(v), scratch(v.geo_.width, v.geo_.height, v.geo_.bpc) {}
            void compute(const CpuFrame& fr, double* out, double*) override {
                ref::VifAccum acc;
                ref::vif_accumulate(fr.ref->y, fr.dist->y, f.opt_, scratch, acc);
                put(ref::vif_finish(acc, f.opt_), out);
            }
        };
        return std::make_unique<Stage>(*this);
    }

#ifdef VMAF_CUDA_HAVE_CUDA
    bool has_gpu() const override { return true; }
    std::unique_ptr<GpuStage> gpu(const GpuContext& ctx) const override {
        struct Stage final : GpuStage {
            const Vif& f;
            cuda::VifKernel k;
            Stage(const Vif& v, unsigned renditions)
                : f(v), k(v.geo_.width, v.geo_.height, v.geo_.bpc, v.opt_, renditions) {}
            std::size_t accum_bytes() const override { return sizeof(ref::VifAccum); }
            bool ladder() const override { return true; }
            void enqueue(const GpuFrame& fr, void* d, void* st) override {
                if (fr.renditions > 1) { // a ladder's share: every rendition at once
                    k.enqueue(*fr.ref_luma, fr.dist_lumas, fr.renditions,
                              static_cast<ref::VifAccum*>(d), static_cast<cudaStream_t>(st),
                              true); // the backend zeroed every accumulator of the frame
                    return;
                }
                k.enqueue(*fr.ref_luma, *fr.dist_luma, static_cast<ref::VifAccum*>(d),
                          static_cast<cudaStream_t>(st), true);
            }
            bool finish_on_any_thread() const override { return true; }
            void finish(unsigned, const void* h, double* out, double*, void*) override {
                put(ref::vif_finish(*static_cast<const ref::VifAccum*>(h), f.opt_), out);
            }
        };
        return std::make_unique<Stage>(*this, ctx.renditions);
    }
#endif

private:
    Geometry geo_;
    ref::VifOptions opt_;
    std::vector<OutputDef> outs_;
};

std::unique_ptr<FeatureInstance> make(const FeatureSpec& spec, const Geometry& g) {
    return std::make_unique<Vif>(spec, g);
}

} // namespace

extern const FeatureRecord kVifRecord = {"vif", kOptions, kProvided, make};

} // namespace vmaf_cuda::engine

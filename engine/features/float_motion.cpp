// SPDX-License-Identifier: BSD-2-Clause-Patent
// Feature record: float motion (libvmaf v3.2.0 `float_motion`, src/feature/float_motion.c),
// what the vmaf_float_* models read. Stage: reference/float_motion.h (CPU only; the CUDA
// backend refuses it, backend=auto scores on the CPU).
//
// Temporal, reference luma only: frame i's stage blurs the reference frames i-1 (its
// prev_ref, blurred again: the blur is a pure function of the frame, so this is the
// plane libvmaf kept) and i, and gives sad_i as its series row and `motion`;
// motion2/motion3 of frame i need sad_{i+1} (one frame of lookahead) and come from
// float_motion_pool, libvmaf's extract/flush bookkeeping. Columns in libvmaf's order:
// frame 0's extract writes motion2 then motion; motion3 of frame 0 is first written while
// frame 1 is extracted, so it comes after every feature's other outputs (late). With
// motion_force_zero libvmaf writes motion2, motion3, motion on each frame, all 0.

#include "feature.h"
#include "feature_registry.h"
#include "features/float_common.h"

#include "float_motion.h"

#include <stdexcept>

namespace vmaf_cuda::engine {
namespace {

// libvmaf's option table of float_motion.c (debug defaults to true: the `motion` output).
// motion_add_scale1 and motion_add_uv are accepted at their defaults only.
constexpr OptionDef kOptions[] = {
    {"debug", nullptr, OptType::boolean, 1, 0, 1, false, true},
    {"motion_force_zero", "force_0", OptType::boolean, 0, 0, 1, true, true},
    {"motion_fps_weight", "mfw", OptType::real, 1.0, 0.0, 5.0, true, true},
    {"motion_blend_factor", "mbf", OptType::real, 1.0, 0.0, 1.0, true, true},
    {"motion_blend_offset", "mbo", OptType::real, 40.0, 0.0, 1000.0, true, true},
    {"motion_add_scale1", "mdc", OptType::boolean, 0, 0, 1, true, false},
    {"motion_filter_size", "mfs", OptType::integer, 5, 0, 9, true, true},
    {"motion_add_uv", "mau", OptType::boolean, 0, 0, 1, true, false},
    {"motion_max_val", "mmxv", OptType::real, 10000.0, 0.0, 10000.0, true, true},
};

// libvmaf's provided_features of float_motion.c, in its order.
constexpr const char* kProvided[] = {"VMAF_feature_motion_score", "VMAF_feature_motion2_score",
                                     "VMAF_feature_motion3_score"};

constexpr const char* kName = "float_motion";

ref::FloatMotionOptions options_of(const FeatureSpec& spec) {
    ref::FloatMotionOptions o;
    o.force_zero = option_value(spec, "motion_force_zero") != 0.0;
    o.fps_weight = option_value(spec, "motion_fps_weight");
    o.blend_factor = option_value(spec, "motion_blend_factor");
    o.blend_offset = option_value(spec, "motion_blend_offset");
    o.add_scale1 = option_value(spec, "motion_add_scale1") != 0.0;
    o.filter_size = static_cast<int>(option_value(spec, "motion_filter_size"));
    o.add_uv = option_value(spec, "motion_add_uv") != 0.0;
    o.max_val = option_value(spec, "motion_max_val");
    try {
        ref::float_motion_check(o);
    } catch (const std::invalid_argument& e) {
        throw Error(VMAF_CUDA_EINVAL, e.what());
    }
    return o;
}

class FloatMotion final : public FeatureInstance {
public:
    FloatMotion(const FeatureSpec& spec, const Geometry& g)
        : geo_(g), opt_(options_of(spec)), debug_(option_value(spec, "debug") != 0.0) {
        float_feature::check_bpc(kName, g);
        const unsigned min = ref::float_motion_filter(opt_.filter_size).size() == 3 ? 2 : 3;
        if (g.width < min || g.height < min)
            float_feature::too_small(kName, g, std::to_string(min) + "x" + std::to_string(min),
                                     "its blur mirrors inside the frame");
        const OutputDef m = make_output(kProvided[0], spec);
        if (opt_.force_zero) {
            // extract() writes motion2, motion3 (and motion) of each frame, all 0.
            m2_ = 0;
            m3_ = 1;
            outs_ = {make_output(kProvided[1], spec), make_output(kProvided[2], spec)};
            if (debug_) {
                m_ = 2;
                outs_.push_back(m);
            }
            return;
        }
        m2_ = 0;
        outs_.push_back(make_output(kProvided[1], spec, false, true));
        if (debug_) {
            m_ = int(outs_.size());
            outs_.push_back(m);
        }
        m3_ = int(outs_.size());
        outs_.push_back(make_output(kProvided[2], spec, true, true));
    }
    const std::vector<OutputDef>& outputs() const override { return outs_; }
    bool temporal() const override { return !opt_.force_zero; }
    unsigned history() const override { return opt_.force_zero ? 0 : 1; }
    unsigned series_width() const override { return opt_.force_zero ? 0 : 1; }
    unsigned series_keep() const override { return 4; }
    unsigned lookahead(std::size_t) const override { return opt_.force_zero ? 0 : 1; }
    unsigned max_lookahead() const override { return opt_.force_zero ? 0 : 1; }

    void delayed(std::size_t i, const Series& s, std::size_t n, double* out) const override {
        // float_motion_pool over the frames frame i's values depend on: frame 0 reads
        // sad_1; frame i > 0 reads sad_i and sad_{i+1}, placed at 1 and 2 of a window
        // (its row 0 is frame 0's, never read for row 1).
        double w[3] = {0.0, 0.0, 0.0};
        std::size_t len = 0, at = 0;
        if (i == 0) {
            len = n > 1 ? 2 : 1;
            if (len == 2) w[1] = s.at(1)[0];
        } else {
            at = 1;
            w[1] = s.at(i)[0];
            len = 2;
            if (i + 1 < n) {
                w[2] = s.at(i + 1)[0];
                len = 3;
            }
        }
        const ref::FloatMotionScores p = ref::float_motion_pool(std::span<const double>(w, len), opt_);
        out[m2_] = p.motion2[at];
        out[m3_] = p.motion3[at];
    }

    std::unique_ptr<CpuStage> cpu() const override {
        struct Stage final : CpuStage {
            const FloatMotion& f;
            ref::FloatMotionScratch scratch;
            std::vector<float> prev, cur, rows;
            explicit Stage(const FloatMotion& m)
                : f(m), scratch(m.geo_.width, m.geo_.height), rows(m.geo_.height) {}
            void compute(const CpuFrame& fr, double* out, double* series) override {
                if (f.opt_.force_zero) {
                    for (std::size_t k = 0; k < f.outs_.size(); ++k) out[k] = 0.0;
                    return;
                }
                double sad = 0.0;
                if (fr.index > 0) {
                    if (!fr.prev_ref[0])
                        throw Error(VMAF_CUDA_EINTERNAL, "float_motion: no previous frame");
                    ref::float_motion_blur(fr.prev_ref[0]->y, f.opt_, scratch, prev);
                    ref::float_motion_blur(fr.ref->y, f.opt_, scratch, cur);
                    ref::float_motion_row_sums(prev, cur, f.geo_.width, f.geo_.height, rows);
                    sad = ref::float_motion_finish(rows, f.geo_.width, f.geo_.height);
                }
                series[0] = sad;
                if (f.m_ >= 0) {
                    // motion of frame i: float_motion_pool's, from sad_i at row 1.
                    const double w[2] = {0.0, sad};
                    const ref::FloatMotionScores p = ref::float_motion_pool(w, f.opt_);
                    out[f.m_] = p.motion[fr.index > 0 ? 1 : 0];
                }
            }
        };
        return std::make_unique<Stage>(*this);
    }

    std::string gpu_refusal() const override { return float_feature::refusal(kName); }

private:
    Geometry geo_;
    ref::FloatMotionOptions opt_;
    bool debug_;
    int m2_ = -1, m_ = -1, m3_ = -1; // indices of motion2, motion, motion3 in outs_
    std::vector<OutputDef> outs_;
};

std::unique_ptr<FeatureInstance> make(const FeatureSpec& spec, const Geometry& g) {
    return std::make_unique<FloatMotion>(spec, g);
}

} // namespace

extern const FeatureRecord kFloatMotionRecord = {kName, kOptions, kProvided, make};

} // namespace vmaf_cuda::engine

// SPDX-License-Identifier: BSD-2-Clause-Patent
// Feature record: integer motion (libvmaf v3.2.0 `motion`, src/feature/integer_motion.c).
// Stages: reference/motion.h (CPU, the host finish and flush()'s pooling as the temporal
// step), kernels/motion.cuh (GPU). Temporal: the SAD runs on every frame, on the
// reference only; motion2/motion3 need one frame of lookahead (two for frame 0 with the
// five-frame window) and are written one frame later, as libvmaf does.

#include "feature.h"
#include "feature_registry.h"

#include "motion.h"

#include <cstdint>

#ifdef VMAF_CUDA_HAVE_CUDA
#include "motion.cuh"
#endif

namespace vmaf_cuda::engine {
namespace {

constexpr OptionDef kOptions[] = {
    {"motion_force_zero", "force_0", OptType::boolean, 0, 0, 1, true, true},
    {"motion_blend_factor", "mbf", OptType::real, 1.0, 0.0, 1.0, true, true},
    {"motion_blend_offset", "mbo", OptType::real, 40.0, 0.0, 1000.0, true, true},
    {"motion_fps_weight", "mfw", OptType::real, 1.0, 0.0, 5.0, true, true},
    {"motion_max_val", "mmxv", OptType::real, 10000.0, 0.0, 10000.0, true, true},
    {"motion_five_frame_window", "mffw", OptType::boolean, 0, 0, 1, true, true},
    {"motion_moving_average", "mma", OptType::boolean, 0, 0, 1, true, true},
    {"debug", nullptr, OptType::boolean, 0, 0, 1, false, false},
};

constexpr const char* kProvided[] = {
    "VMAF_integer_feature_motion_sad_score", "VMAF_integer_feature_motion_score",
    "VMAF_integer_feature_motion2_score", "VMAF_integer_feature_motion3_score"};

class Motion final : public FeatureInstance {
public:
    Motion(const FeatureSpec& spec, const Geometry& g) : geo_(g), opt_(motion_options(spec)) {
        outs_.push_back(make_output(kProvided[0], spec));
        outs_.push_back(make_output(kProvided[2], spec, true, true));
        outs_.push_back(make_output(kProvided[3], spec, true, true));
    }
    const std::vector<OutputDef>& outputs() const override { return outs_; }
    bool temporal() const override { return true; }
    bool reference_only() const override { return true; }
    unsigned history() const override { return ref::motion_sad_distance(opt_); }
    unsigned series_width() const override { return 1; }
    unsigned series_keep() const override { return 8; }
    unsigned lookahead(std::size_t i) const override { return ref::motion_lookahead(opt_, i); }
    unsigned max_lookahead() const override { return ref::motion_max_lookahead(opt_); }

    void delayed(std::size_t i, const Series& s, std::size_t n, double* out) const override {
        // motion_scores(i, sad) reads the sad of frames `first` (only for i <= first) and
        // i - 3 .. i + 1, and is otherwise invariant under a shift of the frame index:
        // give it a window of at most eight frames (frame d + j as j), so that the work
        // and memory per frame do not grow with the stream.
        const std::size_t first = ref::motion_first_index(opt_);
        const std::size_t d = i >= first + 4 ? i - (first + 4) : 0;
        const std::size_t li = i - d;            // i's index in the window
        // Up to i + lookahead(i): frames before `first` read frame `first`'s sad (two
        // frames ahead for frame 0 with the five-frame window).
        const std::size_t want = i + 1 + ref::motion_lookahead(opt_, i);
        const std::size_t end = n < want ? n : want;
        sad_.assign(end - d, 0.0);
        for (std::size_t j = 0; j < sad_.size(); ++j)
            if (d == 0 || j + 4 >= li) sad_[j] = s.at(d + j)[0];
        const ref::MotionScores m = ref::motion_scores(li, sad_, opt_);
        out[1] = m.motion2;
        out[2] = m.motion3;
    }

    /// The sad score of frame `index` from its integer SAD.
    double sad_score(unsigned index, std::uint64_t sad) const {
        if (index < ref::motion_first_index(opt_)) return 0.0;
        return ref::motion_sad_finish(sad, geo_.width, geo_.height, opt_);
    }

    std::unique_ptr<CpuStage> cpu() const override {
        struct Stage final : CpuStage {
            const Motion& f;
            ref::MotionScratch scratch;
            explicit Stage(const Motion& m) : f(m), scratch(m.geo_.width, m.geo_.height, m.geo_.bpc) {}
            void compute(const CpuFrame& fr, double* out, double* series) override {
                const unsigned d = ref::motion_sad_distance(f.opt_);
                std::uint64_t sad = 0;
                if (fr.index >= ref::motion_first_index(f.opt_) && fr.prev_ref[d - 1])
                    sad = ref::motion_sad(fr.prev_ref[d - 1]->y, fr.ref->y, scratch);
                out[0] = series[0] = f.sad_score(fr.index, sad);
            }
        };
        return std::make_unique<Stage>(*this);
    }

#ifdef VMAF_CUDA_HAVE_CUDA
    bool has_gpu() const override { return true; }
    std::unique_ptr<GpuStage> gpu(const GpuContext&) const override {
        struct Stage final : GpuStage {
            const Motion& f;
            cuda::MotionKernel k;
            explicit Stage(const Motion& m) : f(m), k(m.geo_.width, m.geo_.height, m.geo_.bpc) {}
            std::size_t accum_bytes() const override { return sizeof(std::uint64_t); }
            void enqueue(const GpuFrame& fr, void* d, void* st) override {
                const unsigned dist = ref::motion_sad_distance(f.opt_);
                if (fr.index >= ref::motion_first_index(f.opt_) && fr.prev_ref_luma[dist - 1])
                    k.enqueue(*fr.prev_ref_luma[dist - 1], *fr.ref_luma,
                              static_cast<std::uint64_t*>(d), static_cast<cudaStream_t>(st),
                              true); // zeroed by the backend
            }
            bool finish_on_any_thread() const override { return true; }
            void finish(unsigned index, const void* h, double* out, double* series, void*) override {
                out[0] = series[0] = f.sad_score(index, *static_cast<const std::uint64_t*>(h));
            }
        };
        return std::make_unique<Stage>(*this);
    }
#endif

private:
    Geometry geo_;
    ref::MotionOptions opt_;
    std::vector<OutputDef> outs_;
    mutable std::vector<double> sad_; // delayed()'s window (session thread only)
};

std::unique_ptr<FeatureInstance> make(const FeatureSpec& spec, const Geometry& g) {
    return std::make_unique<Motion>(spec, g);
}

} // namespace

extern const FeatureRecord kMotionRecord = {"motion", kOptions, kProvided, make};

} // namespace vmaf_cuda::engine

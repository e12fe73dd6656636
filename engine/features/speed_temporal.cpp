// SPDX-License-Identifier: BSD-2-Clause-Patent
// Feature record: SpEED on luma frame differences (libvmaf v3.2.0 `speed_temporal`,
// src/feature/speed.c, init / extract; VMAF_FEATURE_EXTRACTOR_TEMPORAL). Output
// speed_temporal (not clipped: libvmaf never applies speed_max_val here).
//
// What libvmaf computes (its extract keeps the last two frames' float planes):
//   frame 0: 0;
//   frame i >= 1: speed_extract_score (weight mode 0) of
//     ref:  load(ref[i - 1]) - load(ref[i])
//     dis:  load(dis[i - 1]) - load(dis[i])   (speed_use_ref_diff: load(dis[i - 1]) - load(ref[i]))
// with load() = picture_copy's float conversion with offset -128 (ref::speed_load_plane).
// As a temporal extractor it runs on every frame, n_subsample's skipped ones included,
// and reads both pictures of each (reads_dist_every_frame), plus the previous frame's
// reference and distorted pictures (history 1, dist_history 1). Each frame's score
// depends only on frames i - 1 and i, so the stage is stateless (CPU workers may run
// frames in any order).
// Stages: reference/speed.h (CPU: the steps of ref::SpeedTemporal::push per frame pair),
// kernels/speed.cuh (GPU: SpeedTemporalKernel, speed_temporal_from_accum).

#include "feature.h"
#include "feature_registry.h"

#include "error.h"
#include "speed.h"
#include "vmaf_cuda.h"

#include <stdexcept>
#include <string>
#include <vector>

#ifdef VMAF_CUDA_HAVE_CUDA
#include "speed.cuh"
#endif

namespace vmaf_cuda::engine {
namespace {

// libvmaf's options table of speed_temporal (speed.c), every option
// VMAF_OPT_FLAG_FEATURE_PARAM.
constexpr OptionDef kOptions[] = {
    {"speed_kernelscale", "ks", OptType::real, 1.0, 0.1, 4.0, true, true},
    {"speed_prescale", "ps", OptType::real, 1.0, 0.1, 4.0, true, true},
    {"speed_prescale_method", "psm", OptType::text, 0, 0, 0, true, true, "nearest"},
    {"speed_sigma_nn", "snn", OptType::real, 0.29, 0.1, 2.0, true, true},
    {"speed_nn_floor", "nnf", OptType::real, 0.0, 0.0, 1.0, true, true},
    {"speed_max_val", "mxv", OptType::real, 1000.0, 0.0, 1000.0, true, true},
    {"speed_use_ref_diff", "urd", OptType::boolean, 0, 0, 1, true, true},
};

constexpr const char* kProvided[] = {"Speed_temporal_feature_speed_temporal_score"};

std::string size_text(unsigned w, unsigned h) { return std::to_string(w) + "x" + std::to_string(h); }

class SpeedTemporal final : public FeatureInstance {
public:
    SpeedTemporal(const FeatureSpec& spec, const Geometry& g) : geo_(g), opt_(speed_options(spec)) {
        outs_.push_back(make_output(kProvided[0], spec));
        const std::string who = "speed_temporal (" + outs_[0].name + ")";
        if (g.bpc != 8 && g.bpc != 10 && g.bpc != 12 && g.bpc != 16)
            throw Error(VMAF_CUDA_EINVAL, who + ": bit depth " + std::to_string(g.bpc) +
                                              " is not supported (libvmaf's SpEED converts "
                                              "8, 10, 12 and 16 bits only)");
        const ref::SpeedGeometry sg = ref::speed_geometry(g.width, g.height, opt_);
        if (!sg.valid()) {
            const ref::SpeedSize min = ref::speed_temporal_min_frame_size(opt_);
            throw Error(VMAF_CUDA_EINVAL,
                        who + ": frame size " + size_text(g.width, g.height) +
                            " is too small: the luma plane scaled by speed_prescale must be at "
                            "least 80x80; the smallest frame accepted is " +
                            size_text(min.width, min.height) +
                            " (libvmaf: \"SpEED: image too small, operating width or height "
                            "is 0\", then it crashes)");
        }
        if (sg.alloc_w != g.width || sg.alloc_h != g.height)
            throw Error(VMAF_CUDA_EINVAL, who + ": speed_prescale above 1 is not supported "
                                              "(libvmaf's temporal frame buffers are too small "
                                              "for the prescaled frame)");
        if (!sg.rescale && (sg.scaled_w != g.width || sg.scaled_h != g.height))
            throw Error(VMAF_CUDA_EINVAL, who + ": speed_prescale within 1e-3 of 1 but changing "
                                              "the size (libvmaf then reads unset samples)");
    }
    const std::vector<OutputDef>& outputs() const override { return outs_; }
    bool temporal() const override { return true; }
    bool reads_dist_every_frame() const override { return true; }
    unsigned history() const override { return 1; }
    unsigned dist_history() const override { return 1; }

    bool heavy_host_finish() const override { return true; }

    std::unique_ptr<CpuStage> cpu() const override {
        struct Stage final : CpuStage {
            const SpeedTemporal& f;
            ref::SpeedScratch s;
            std::vector<float> prev_ref, prev_dis, cur_ref, cur_dis;
            explicit Stage(const SpeedTemporal& t) : f(t), s(t.geo_.width, t.geo_.height, t.opt_) {
                const std::size_t n = s.stride() * t.geo_.height;
                prev_ref.assign(n, 0.0f);
                prev_dis.assign(n, 0.0f);
                cur_ref.assign(n, 0.0f);
                cur_dis.assign(n, 0.0f);
            }
            void compute(const CpuFrame& fr, double* out, double*) override {
                if (fr.index == 0 || !fr.prev_ref[0] || !fr.prev_dist[0] || !fr.dist) {
                    if (fr.index != 0)
                        throw Error(VMAF_CUDA_EINTERNAL, "speed_temporal: frame " +
                                                             std::to_string(fr.index) +
                                                             " without its previous pictures");
                    out[0] = 0.0;
                    return;
                }
                const ref::SpeedGeometry& g = s.geometry();
                const std::size_t stride = s.stride();
                ref::speed_load_plane(fr.prev_ref[0]->y, g.original_w, g.original_h, prev_ref.data(), stride);
                ref::speed_load_plane(fr.prev_dist[0]->y, g.original_w, g.original_h, prev_dis.data(), stride);
                ref::speed_load_plane(fr.ref->y, g.original_w, g.original_h, cur_ref.data(), stride);
                ref::speed_load_plane(fr.dist->y, g.original_w, g.original_h, cur_dis.data(), stride);
                const bool urd = f.opt_.use_ref_diff;
                for (unsigned y = 0; y < g.original_h; ++y)
                    for (unsigned x = 0; x < g.original_w; ++x) {
                        const std::size_t i = y * stride + x;
                        s.ref[i] = prev_ref[i] - cur_ref[i];
                        s.dis[i] = prev_dis[i] - (urd ? cur_ref[i] : cur_dis[i]);
                    }
                out[0] = ref::speed_extract_score(s.ref.data(), s.dis.data(), s, 0, nullptr);
            }
        };
        return std::make_unique<Stage>(*this);
    }

#ifdef VMAF_CUDA_HAVE_CUDA
    bool has_gpu() const override { return true; }
    std::unique_ptr<GpuStage> gpu(const GpuContext&) const override {
        struct Stage final : GpuStage {
            cuda::SpeedTemporalKernel k;
            explicit Stage(const SpeedTemporal& t) : k(t.geo_.width, t.geo_.height, t.geo_.bpc, t.opt_) {}
            std::size_t accum_bytes() const override { return k.accum_bytes(); }
            void enqueue(const GpuFrame& fr, void* d, void* st) override {
                if (fr.index == 0) return; // scores 0, nothing to compute
                if (!fr.prev_ref[0] || !fr.prev_dist[0] || !fr.dist)
                    throw Error(VMAF_CUDA_EINTERNAL, "speed_temporal: frame " +
                                                         std::to_string(fr.index) +
                                                         " without its previous pictures");
                k.enqueue(fr.prev_ref[0][0], fr.ref[0], fr.prev_dist[0][0], fr.dist[0], d,
                          static_cast<cudaStream_t>(st));
            }
            bool finish_on_any_thread() const override { return true; } // host code only
            void finish(unsigned index, const void* h, double* out, double*, void*) override {
                out[0] = index == 0 ? 0.0 : cuda::speed_temporal_from_accum(h, k.geometry(), k.options());
            }
        };
        return std::make_unique<Stage>(*this);
    }
#endif

private:
    Geometry geo_;
    ref::SpeedOptions opt_;
    std::vector<OutputDef> outs_;
};

std::unique_ptr<FeatureInstance> make(const FeatureSpec& spec, const Geometry& g) {
    return std::make_unique<SpeedTemporal>(spec, g);
}

} // namespace

extern const FeatureRecord kSpeedTemporalRecord = {"speed_temporal", kOptions, kProvided, make};

} // namespace vmaf_cuda::engine

// SPDX-License-Identifier: BSD-2-Clause-Patent
// Feature record: SpEED on chroma (libvmaf v3.2.0 `speed_chroma`, src/feature/speed.c,
// init_chroma / extract_chroma). Outputs speed_chroma_u, _v, _uv (the v1.0.16 models
// read _uv), clipped to speed_max_val. Reads Cb and Cr of both pictures.
// Stages: reference/speed.h (CPU: ref::speed_chroma), kernels/speed.cuh (GPU: steps 1-5
// on the device, SpeedChromaKernel; steps 6-8 on the host, speed_chroma_from_accum).
//
// Size rule: libvmaf needs each chroma plane, prescaled, to be at least 80x80
// (ref::speed_chroma_min_frame_size); below that it logs "SpEED: image too small,
// operating width or height is 0" and crashes. Here the instance refuses the size
// before the first frame, naming the frame size and the smallest one accepted.

#include "feature.h"
#include "feature_registry.h"

#include "error.h"
#include "speed.h"
#include "vmaf_cuda.h"

#include <cstdio>
#include <stdexcept>
#include <string>

#ifdef VMAF_CUDA_HAVE_CUDA
#include "speed.cuh"
#endif

namespace vmaf_cuda::engine {
namespace {

// libvmaf's options_chroma table (speed.c), every option VMAF_OPT_FLAG_FEATURE_PARAM.
constexpr OptionDef kOptions[] = {
    {"speed_kernelscale", "ks", OptType::real, 1.0, 0.1, 4.0, true, true},
    {"speed_prescale", "ps", OptType::real, 1.0, 0.1, 4.0, true, true},
    {"speed_prescale_method", "psm", OptType::text, 0, 0, 0, true, true, "nearest"},
    {"speed_sigma_nn", "snn", OptType::real, 0.29, 0.1, 2.0, true, true},
    {"speed_nn_floor", "nnf", OptType::real, 0.0, 0.0, 1.0, true, true},
    {"speed_max_val", "mxv", OptType::real, 1000.0, 0.0, 1000.0, true, true},
    {"speed_weight_var_mode", "wvm", OptType::integer, 0, 0, 6, true, true},
};

constexpr const char* kProvided[] = {
    "Speed_chroma_feature_speed_chroma_u_score",
    "Speed_chroma_feature_speed_chroma_v_score",
    "Speed_chroma_feature_speed_chroma_uv_score",
};

void put(const ref::SpeedChromaScores& s, double* out) {
    out[0] = s.u;
    out[1] = s.v;
    out[2] = s.uv;
}

std::string fmt_g(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", v);
    return b;
}

std::string chroma_text(unsigned c) {
    return c == 420 ? "4:2:0" : c == 422 ? "4:2:2" : "4:4:4";
}

std::string size_text(unsigned w, unsigned h) { return std::to_string(w) + "x" + std::to_string(h); }

class SpeedChroma final : public FeatureInstance {
public:
    SpeedChroma(const FeatureSpec& spec, const Geometry& g) : geo_(g), opt_(speed_options(spec)) {
        for (const char* p : kProvided) outs_.push_back(make_output(p, spec));
        const std::string who = "speed_chroma (" + outs_[2].name + ")";
        if (g.chroma == 400)
            throw Error(VMAF_CUDA_EINVAL, who + " reads Cb and Cr; 4:0:0 pictures have none "
                                                "(libvmaf refuses it too)");
        if (g.bpc != 8 && g.bpc != 10 && g.bpc != 12 && g.bpc != 16)
            throw Error(VMAF_CUDA_EINVAL, who + ": bit depth " + std::to_string(g.bpc) +
                                              " is not supported (libvmaf's SpEED converts "
                                              "8, 10, 12 and 16 bits only)");
        ref::SpeedSize min;
        try {
            min = ref::speed_chroma_min_frame_size(g.chroma, opt_);
        } catch (const std::invalid_argument& e) {
            throw Error(VMAF_CUDA_EINVAL, who + ": " + e.what());
        }
        if (!ref::speed_chroma_accepts(g.width, g.height, g.chroma, opt_)) {
            const ref::SpeedSize p = ref::speed_chroma_plane_size(g.width, g.height, g.chroma);
            throw Error(VMAF_CUDA_EINVAL,
                        who + ": frame size " + size_text(g.width, g.height) +
                            " is too small: its " + chroma_text(g.chroma) +
                            " chroma planes (" + size_text(p.width, p.height) +
                            ") scaled by speed_prescale " + fmt_g(opt_.prescale) +
                            " must be at least 80x80; the smallest frame accepted is " +
                            size_text(min.width, min.height) +
                            " (libvmaf: \"SpEED: image too small, operating width or height "
                            "is 0\", then it crashes)");
        }
        plane_ = ref::speed_chroma_plane_size(g.width, g.height, g.chroma);
        const ref::SpeedGeometry sg = ref::speed_geometry(plane_.width, plane_.height, opt_);
        if (!sg.rescale && (sg.scaled_w != plane_.width || sg.scaled_h != plane_.height))
            throw Error(VMAF_CUDA_EINVAL, who + ": speed_prescale within 1e-3 of 1 but changing "
                                              "the size (libvmaf then reads unset samples)");
    }
    const std::vector<OutputDef>& outputs() const override { return outs_; }
    bool reads_chroma() const override { return true; }

    bool heavy_host_finish() const override { return true; }

    std::unique_ptr<CpuStage> cpu() const override {
        struct Stage final : CpuStage {
            ref::SpeedScratch scratch;
            explicit Stage(const SpeedChroma& f) : scratch(f.plane_.width, f.plane_.height, f.opt_) {}
            void compute(const CpuFrame& fr, double* out, double*) override {
                put(ref::speed_chroma(fr.ref->cb, fr.ref->cr, fr.dist->cb, fr.dist->cr, scratch), out);
            }
        };
        return std::make_unique<Stage>(*this);
    }

#ifdef VMAF_CUDA_HAVE_CUDA
    bool has_gpu() const override { return true; }
    std::unique_ptr<GpuStage> gpu(const GpuContext&) const override {
        struct Stage final : GpuStage {
            cuda::SpeedChromaKernel k;
            explicit Stage(const SpeedChroma& f)
                : k(f.geo_.width, f.geo_.height, f.geo_.bpc, f.geo_.chroma, f.opt_) {}
            std::size_t accum_bytes() const override { return k.accum_bytes(); }
            void enqueue(const GpuFrame& fr, void* d, void* st) override {
                k.enqueue(fr.ref[1], fr.ref[2], fr.dist[1], fr.dist[2], d,
                          static_cast<cudaStream_t>(st));
            }
            bool finish_on_any_thread() const override { return true; } // host code only
            void finish(unsigned, const void* h, double* out, double*, void*) override {
                put(cuda::speed_chroma_from_accum(h, k.geometry(), k.options()), out);
            }
        };
        return std::make_unique<Stage>(*this);
    }
#endif

private:
    Geometry geo_;
    ref::SpeedOptions opt_;
    ref::SpeedSize plane_;
    std::vector<OutputDef> outs_;
};

std::unique_ptr<FeatureInstance> make(const FeatureSpec& spec, const Geometry& g) {
    return std::make_unique<SpeedChroma>(spec, g);
}

} // namespace

extern const FeatureRecord kSpeedChromaRecord = {"speed_chroma", kOptions, kProvided, make};

} // namespace vmaf_cuda::engine

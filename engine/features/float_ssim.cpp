// SPDX-License-Identifier: BSD-2-Clause-Patent
// Feature record: SSIM (libvmaf v3.2.0 `float_ssim`, src/feature/float_ssim.c with
// ssim.c and the iqa code). Luma only.
// Stages: reference/ssim.h (CPU), kernels/ssim.cuh (GPU: exact fixed-point sums on the
// device; the host finish of ssim_accum.h decides each mean from them, or sums the
// frame's term maps in its slot on the device when it cannot, ordered_sum.cuh).
//
// libvmaf's options have no VMAF_OPT_FLAG_FEATURE_PARAM and no aliases: the outputs are
// always named float_ssim, float_ssim_l, float_ssim_c, float_ssim_s (the last three with
// enable_lcs, in that order, as extract() appends them).

#include "feature.h"
#include "feature_registry.h"

#include "error.h"
#include "ssim.h"
#include "vmaf_cuda.h"

#include <stdexcept>
#include <string>

#ifdef VMAF_CUDA_HAVE_CUDA
#include "iqa.cuh"
#include "ordered_sum.cuh"
#include "ssim.cuh"
#include "ssim_accum.h"
#endif

namespace vmaf_cuda::engine {
namespace {

constexpr OptionDef kOptions[] = {
    {"enable_lcs", nullptr, OptType::boolean, 0, 0, 1, false, true},
    {"enable_db", nullptr, OptType::boolean, 0, 0, 1, false, true},
    {"clip_db", nullptr, OptType::boolean, 0, 0, 1, false, true},
    {"scale", nullptr, OptType::integer, 0, 0, 10, false, true},
};

constexpr const char* kProvided[] = {"float_ssim"};

void put(const ref::FloatSsimScores& s, bool lcs, double* out) {
    out[0] = s.ssim;
    if (!lcs) return;
    out[1] = s.l;
    out[2] = s.c;
    out[3] = s.s;
}

class FloatSsim final : public FeatureInstance {
public:
    FloatSsim(const FeatureSpec& spec, const Geometry& g) : geo_(g) {
        opt_.enable_lcs = option_value(spec, "enable_lcs") != 0.0;
        opt_.enable_db = option_value(spec, "enable_db") != 0.0;
        opt_.clip_db = option_value(spec, "clip_db") != 0.0;
        opt_.scale = static_cast<int>(option_value(spec, "scale"));
        // libvmaf's picture_copy converts 8, 10, 12 and 16-bit pictures only.
        if (g.bpc != 8 && g.bpc != 10 && g.bpc != 12 && g.bpc != 16)
            throw Error(VMAF_CUDA_EINVAL, "float_ssim: bit depth " + std::to_string(g.bpc) +
                                              " is not supported (libvmaf's float_ssim takes "
                                              "8, 10, 12 or 16 bits)");
        try {
            scale_ = ref::float_ssim_scale(g.width, g.height, opt_.scale);
        } catch (const std::invalid_argument& e) {
            throw Error(VMAF_CUDA_EINVAL, e.what());
        }
        outs_.push_back(make_output("float_ssim", spec));
        if (opt_.enable_lcs)
            for (const char* n : {"float_ssim_l", "float_ssim_c", "float_ssim_s"})
                outs_.push_back(make_output(n, spec));
    }
    const std::vector<OutputDef>& outputs() const override { return outs_; }

    std::unique_ptr<CpuStage> cpu() const override {
        struct Stage final : CpuStage {
            const FloatSsim& f;
            explicit Stage(const FloatSsim& s) : f(s) {}
            void compute(const CpuFrame& fr, double* out, double*) override {
                put(ref::float_ssim(fr.ref->y, fr.dist->y, f.opt_), f.opt_.enable_lcs, out);
            }
        };
        return std::make_unique<Stage>(*this);
    }

#ifdef VMAF_CUDA_HAVE_CUDA
    /// The device decimates out of place; that equals libvmaf's in-place decimation
    /// unless an explicit scale on a tiny picture makes libvmaf read outside the picture
    /// or its own outputs (not reproducible there; the CPU stage computes it in place).
    bool has_gpu() const override {
        return scale_ <= 1 || cuda::iqa::decimate_in_place_safe(int(geo_.width), int(geo_.height),
                                                                scale_, scale_);
    }
    std::string gpu_refusal() const override {
        return "float_ssim: scale " + std::to_string(scale_) + " on " + std::to_string(geo_.width) +
               "x" + std::to_string(geo_.height) +
               ": libvmaf's in-place decimation reads outside the picture or its own outputs "
               "there; the CUDA backend does not reproduce that (the CPU backend does)";
    }
    std::unique_ptr<GpuStage> gpu(const GpuContext& ctx) const override {
        if (!has_gpu()) return nullptr;
        struct Stage final : GpuStage {
            const FloatSsim& f;
            cuda::SsimKernel k;
            cuda::SsimFinishParams params;
            cuda::DeviceSums sums; // the undecided sums, on the device (thread-safe)
            Stage(const FloatSsim& s, unsigned slots)
                : f(s), k(s.geo_.width, s.geo_.height, s.geo_.bpc, s.opt_, slots),
                  params(k.finish_params()), sums(k.term_count()) {}
            std::size_t accum_bytes() const override { return k.accum_bytes(); }
            void enqueue(const GpuFrame& fr, void* d, void* st) override {
                k.enqueue(fr.ref[0], fr.dist[0], d, static_cast<cudaStream_t>(st));
            }
            // On the host-tail workers: an undecided sum waits for its device phases there,
            // not on the thread that enqueues the next frames.
            bool finish_on_any_thread() const override { return true; }
            void finish(unsigned, const void* h, double* out, double*, void*) override {
                const auto& acc = *static_cast<const cuda::SsimAccum*>(h);
                ref::IqaSsimMaps terms; // a sum with a value that is not finite
                ref::FloatSsimScores s{};
                if (!cuda::float_ssim_finish(acc, params, s)) {
                    // Undecided from the exact sums: libvmaf's sequential sums over the
                    // frame's own terms (still in its slot: finish comes before the
                    // enqueue of frame + slots), on the device (kIqaSsim: of the products
                    // l * c * s); a sum with a value that is not finite on the host.
                    cuda::float_ssim_finish(acc, params, s, [&](int, int j) {
                        double v = 0.0;
                        const bool ok = j == cuda::kIqaSsim
                                            ? sums.sum(k.term_map_of(acc, 0), k.term_map_of(acc, 1),
                                                       k.term_map_of(acc, 2), k.term_count(), v)
                                            : sums.sum(k.term_map_of(acc, j - cuda::kIqaL), nullptr,
                                                       nullptr, k.term_count(), v);
                        if (ok) return v;
                        k.copy_terms(acc, terms);
                        return cuda::iqa_sum_of_maps(terms, j);
                    });
                }
                put(s, f.opt_.enable_lcs, out);
            }
        };
        return std::make_unique<Stage>(*this, ctx.slots);
    }
#endif

private:
    Geometry geo_;
    ref::FloatSsimOptions opt_;
    int scale_ = 1;
    std::vector<OutputDef> outs_;
};

std::unique_ptr<FeatureInstance> make(const FeatureSpec& spec, const Geometry& g) {
    return std::make_unique<FloatSsim>(spec, g);
}

} // namespace

extern const FeatureRecord kFloatSsimRecord = {"float_ssim", kOptions, kProvided, make};

} // namespace vmaf_cuda::engine

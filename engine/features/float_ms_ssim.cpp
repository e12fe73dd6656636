// SPDX-License-Identifier: BSD-2-Clause-Patent
// Feature record: MS-SSIM (libvmaf v3.2.0 `float_ms_ssim`, src/feature/float_ms_ssim.c
// with ms_ssim.c and the iqa code). Luma only.
// Stages: reference/ms_ssim.h (CPU), kernels/ms_ssim.cuh (GPU: exact fixed-point sums of
// the five scales on the device; the host finish of ssim_accum.h decides the means from
// them; the undecided sums are summed on the device from the frame's term maps in its
// slot, ordered_sum.cuh).
//
// libvmaf's options have no VMAF_OPT_FLAG_FEATURE_PARAM and no aliases: float_ms_ssim,
// then with enable_lcs float_ms_ssim_l_scale0..4, _c_scale0..4, _s_scale0..4 (extract()'s
// order). Frames below 176x176 make libvmaf fail every frame ("scale below 1x1!"): here
// that is an error of open naming the feature, the size and the minimum.

#include "feature.h"
#include "feature_registry.h"

#include "error.h"
#include "ms_ssim.h"
#include "vmaf_cuda.h"

#include <stdexcept>
#include <string>

#ifdef VMAF_CUDA_HAVE_CUDA
#include "ms_ssim.cuh"
#include "ordered_sum.cuh"
#include "ssim_accum.h"
#endif

namespace vmaf_cuda::engine {
namespace {

constexpr OptionDef kOptions[] = {
    {"enable_lcs", nullptr, OptType::boolean, 0, 0, 1, false, true},
    {"enable_db", nullptr, OptType::boolean, 0, 0, 1, false, true},
    {"clip_db", nullptr, OptType::boolean, 0, 0, 1, false, true},
};

constexpr const char* kProvided[] = {"float_ms_ssim"};

constexpr int kScales = ref::kMsSsimScales;

void put(const ref::FloatMsSsimScores& s, bool lcs, double* out) {
    out[0] = s.ms_ssim;
    if (!lcs) return;
    for (int k = 0; k < kScales; ++k) {
        out[1 + k] = s.l[k];
        out[1 + kScales + k] = s.c[k];
        out[1 + 2 * kScales + k] = s.s[k];
    }
}

class FloatMsSsim final : public FeatureInstance {
public:
    FloatMsSsim(const FeatureSpec& spec, const Geometry& g) : geo_(g) {
        opt_.enable_lcs = option_value(spec, "enable_lcs") != 0.0;
        opt_.enable_db = option_value(spec, "enable_db") != 0.0;
        opt_.clip_db = option_value(spec, "clip_db") != 0.0;
        if (g.bpc != 8 && g.bpc != 10 && g.bpc != 12 && g.bpc != 16)
            throw Error(VMAF_CUDA_EINVAL, "float_ms_ssim: bit depth " + std::to_string(g.bpc) +
                                              " is not supported (libvmaf's float_ms_ssim takes "
                                              "8, 10, 12 or 16 bits)");
        try {
            ref::float_ms_ssim_check_size(g.width, g.height);
        } catch (const std::invalid_argument& e) {
            throw Error(VMAF_CUDA_EINVAL, e.what());
        }
        outs_.push_back(make_output("float_ms_ssim", spec));
        if (opt_.enable_lcs)
            for (const char* term : {"l", "c", "s"})
                for (int k = 0; k < kScales; ++k)
                    outs_.push_back(make_output(std::string("float_ms_ssim_") + term + "_scale" +
                                                    std::to_string(k),
                                                spec));
    }
    const std::vector<OutputDef>& outputs() const override { return outs_; }

    std::unique_ptr<CpuStage> cpu() const override {
        struct Stage final : CpuStage {
            const FloatMsSsim& f;
            explicit Stage(const FloatMsSsim& s) : f(s) {}
            void compute(const CpuFrame& fr, double* out, double*) override {
                put(ref::float_ms_ssim(fr.ref->y, fr.dist->y, f.opt_), f.opt_.enable_lcs, out);
            }
        };
        return std::make_unique<Stage>(*this);
    }

#ifdef VMAF_CUDA_HAVE_CUDA
    bool has_gpu() const override { return true; }
    std::unique_ptr<GpuStage> gpu(const GpuContext& ctx) const override {
        struct Stage final : GpuStage {
            const FloatMsSsim& f;
            cuda::MsSsimKernel k;
            cuda::MsSsimFinishParams params;
            cuda::DeviceSums sums; // the undecided sums, on the device (thread-safe)
            Stage(const FloatMsSsim& s, unsigned slots)
                : f(s), k(s.geo_.width, s.geo_.height, s.geo_.bpc, s.opt_, slots),
                  params(k.finish_params()), sums(k.term_count(0)) {}
            std::size_t accum_bytes() const override { return k.accum_bytes(); }
            void enqueue(const GpuFrame& fr, void* d, void* st) override {
                k.enqueue(fr.ref[0], fr.dist[0], d, static_cast<cudaStream_t>(st));
            }
            // On the host-tail workers: an undecided sum waits for its device phases there,
            // not on the thread that enqueues the next frames.
            bool finish_on_any_thread() const override { return true; }
            void finish(unsigned, const void* h, double* out, double*, void*) override {
                const auto& acc = *static_cast<const cuda::MsSsimAccum*>(h);
                ref::IqaSsimMaps terms[kScales]; // a sum with a value that is not finite
                ref::FloatMsSsimScores s{};
                if (cuda::float_ms_ssim_finish(acc, params, s)) {
                    // Undecided sums: libvmaf's sequential sums over the frame's own terms
                    // (still in its slot: finish comes before the enqueue of frame + slots),
                    // on the device; a map with a value that is not finite on the host.
                    cuda::float_ms_ssim_finish(acc, params, s, [&](int scale, int j) {
                        const double* m = k.term_map_of(acc, scale, j - cuda::kIqaL);
                        double v = 0.0;
                        if (sums.sum(m, nullptr, nullptr, k.term_count(scale), v)) return v;
                        k.copy_terms(acc, cuda::iqa_need_bit(scale, j), terms);
                        return cuda::iqa_sum_of_maps(terms[scale], j);
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
    ref::FloatMsSsimOptions opt_;
    std::vector<OutputDef> outs_;
};

std::unique_ptr<FeatureInstance> make(const FeatureSpec& spec, const Geometry& g) {
    return std::make_unique<FloatMsSsim>(spec, g);
}

} // namespace

extern const FeatureRecord kFloatMsSsimRecord = {"float_ms_ssim", kOptions, kProvided, make};

} // namespace vmaf_cuda::engine

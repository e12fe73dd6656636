// SPDX-License-Identifier: BSD-2-Clause-Patent
// Feature record: CIEDE2000 (libvmaf v3.2.0 `ciede`, src/feature/ciede.c), output
// `ciede2000`. Reads all three planes. No options.
// Stages: reference/ciede.h (CPU: ciede_map, ciede_sum, ciede_finish), kernels/ciede.cuh
// (GPU: the per-pixel dE00 float map as the accumulator; the host then adds it in
// libvmaf's row-major order, ciede_finish_host, since that double sum is order-dependent).
// Formats: ref::ciede_check_format at open: 4:0:0 is refused as libvmaf refuses it
// (-EINVAL at init), 4:2:2 because libvmaf's values there are not reproducible (it indexes
// 4:2:2 chroma outside the picture), and bpc other than 8, 10, 12, 16 as libvmaf does.

#include "feature.h"
#include "feature_registry.h"

#include "ciede.h"
#include "error.h"
#include "vmaf_cuda.h"

#include <stdexcept>
#include <vector>

#ifdef VMAF_CUDA_HAVE_CUDA
#include "ciede.cuh"
#endif

namespace vmaf_cuda::engine {
namespace {

constexpr std::span<const OptionDef> kOptions{}; // libvmaf's ciede has no options
constexpr const char* kProvided[] = {"ciede2000"};

class Ciede final : public FeatureInstance {
public:
    Ciede(const FeatureSpec& spec, const Geometry& g) : geo_(g) {
        try {
            ref::ciede_check_format(g.width, g.height, g.bpc, g.chroma);
        } catch (const std::invalid_argument& e) {
            // e.g. "ciede: 4:2:2 not supported (libvmaf v3.2.0 indexes 4:2:2 chroma ...)"
            throw Error(VMAF_CUDA_EINVAL, e.what());
        }
        outs_.push_back(make_output(kProvided[0], spec));
    }
    const std::vector<OutputDef>& outputs() const override { return outs_; }
    bool reads_chroma() const override { return true; }

    bool heavy_host_finish() const override { return true; }

    std::unique_ptr<CpuStage> cpu() const override {
        struct Stage final : CpuStage {
            const Ciede& f;
            std::vector<float> map; // the frame's dE00 per pixel (scratch)
            explicit Stage(const Ciede& c) : f(c) {}
            void compute(const CpuFrame& fr, double* out, double*) override {
                ref::ciede_map(*fr.ref, *fr.dist, map);
                out[0] = ref::ciede_finish(ref::ciede_sum(map), f.geo_.width, f.geo_.height);
            }
        };
        return std::make_unique<Stage>(*this);
    }

#ifdef VMAF_CUDA_HAVE_CUDA
    bool has_gpu() const override { return true; }
    std::unique_ptr<GpuStage> gpu(const GpuContext&) const override {
        struct Stage final : GpuStage {
            cuda::CiedeKernel k;
            explicit Stage(const Ciede& c) : k(c.geo_.width, c.geo_.height, c.geo_.bpc, c.geo_.chroma) {}
            std::size_t accum_bytes() const override { return k.accum_bytes(); }
            void enqueue(const GpuFrame& fr, void* d, void* st) override {
                k.enqueue(fr.ref, fr.dist, d, static_cast<cudaStream_t>(st));
            }
            bool finish_on_any_thread() const override { return true; }
            void finish(unsigned, const void* h, double* out, double*, void*) override {
                out[0] = cuda::ciede_finish_host(k, h);
            }
        };
        return std::make_unique<Stage>(*this);
    }
#endif

private:
    Geometry geo_;
    std::vector<OutputDef> outs_;
};

std::unique_ptr<FeatureInstance> make(const FeatureSpec& spec, const Geometry& g) {
    return std::make_unique<Ciede>(spec, g);
}

} // namespace

extern const FeatureRecord kCiedeRecord = {"ciede", kOptions, kProvided, make};

} // namespace vmaf_cuda::engine

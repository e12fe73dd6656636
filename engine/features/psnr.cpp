// SPDX-License-Identifier: BSD-2-Clause-Patent
// Feature record: PSNR (libvmaf v3.2.0 `psnr`, src/feature/integer_psnr.c).
// Stages: reference/psnr.h (CPU: psnr_accumulate, and the host finish psnr_finish;
// the stream totals psnr_totals_add / psnr_aggregate for apsnr), kernels/psnr.cuh (GPU:
// the per-plane SSE, the same ref::PsnrAccum).
//
// Outputs, in libvmaf's collector order: psnr_y, (mse_y), psnr_cb, (mse_cb), psnr_cr,
// (mse_cr); the chroma ones unless enable_chroma=false or 4:0:0. None of the options
// names the feature (no VMAF_OPT_FLAG_FEATURE_PARAM in libvmaf's table), so the keys
// are the plain names. With enable_apsnr, aggregate() gives apsnr_y/cb/cr
// (libvmaf's `flush`, its aggregate_metrics) from each frame's SSE kept in the series.
//
// libvmaf flags psnr VMAF_FEATURE_EXTRACTOR_TEMPORAL, so it extracts every frame, also
// those n_subsample skips, and its apsnr totals count them. The per-frame values of
// skipped frames are never written, so only apsnr can tell: the instance is temporal
// (and reads the distorted picture on every frame) only with enable_apsnr.

#include "feature.h"
#include "feature_registry.h"

#include "error.h"
#include "psnr.h"
#include "vmaf_cuda.h"

#include <cstdint>
#include <limits>
#include <stdexcept>

#ifdef VMAF_CUDA_HAVE_CUDA
#include "psnr.cuh"
#endif

namespace vmaf_cuda::engine {
namespace {

// libvmaf's option table of integer_psnr.c, in its order; no option has
// VMAF_OPT_FLAG_FEATURE_PARAM. min_sse: double in [0, DBL_MAX].
constexpr OptionDef kOptions[] = {
    {"enable_chroma", nullptr, OptType::boolean, 1, 0, 1, false, true},
    {"enable_mse", nullptr, OptType::boolean, 0, 0, 1, false, true},
    {"enable_apsnr", nullptr, OptType::boolean, 0, 0, 1, false, true},
    {"reduced_hbd_peak", nullptr, OptType::boolean, 0, 0, 1, false, true},
    {"min_sse", nullptr, OptType::real, 0.0, 0.0, std::numeric_limits<double>::max(), false, true},
};

// libvmaf's provided_features (mse_* are written but not listed there).
constexpr const char* kProvided[] = {"psnr_y", "psnr_cb", "psnr_cr"};
constexpr const char* kMse[] = {"mse_y", "mse_cb", "mse_cr"};
constexpr const char* kApsnr[] = {"apsnr_y", "apsnr_cb", "apsnr_cr"};

/// Series row with enable_apsnr, per plane p: [3p] low and [3p + 1] high 32 bits of the
/// frame's SSE (a uint64, exact in two doubles), [3p + 2] its pixel count (< 2^32).
constexpr unsigned kSeriesWidth = 9;

ref::PsnrOptions psnr_options(const FeatureSpec& spec) {
    ref::PsnrOptions o;
    o.enable_chroma = option_value(spec, "enable_chroma") != 0.0;
    o.enable_mse = option_value(spec, "enable_mse") != 0.0;
    o.enable_apsnr = option_value(spec, "enable_apsnr") != 0.0;
    o.reduced_hbd_peak = option_value(spec, "reduced_hbd_peak") != 0.0;
    o.min_sse = option_value(spec, "min_sse");
    return o;
}

class Psnr final : public FeatureInstance {
public:
    Psnr(const FeatureSpec& spec, const Geometry& g) : geo_(g) {
        try {
            setup_ = ref::psnr_setup(psnr_options(spec), g.bpc, g.width, g.height, g.chroma);
        } catch (const std::invalid_argument& e) {
            throw Error(VMAF_CUDA_EINVAL, e.what()); // "psnr: bpc 9 not supported (...)"
        }
        for (unsigned p = 0; p < setup_.planes; ++p) {
            outs_.push_back(make_output(kProvided[p], spec));
            if (setup_.opt.enable_mse) outs_.push_back(make_output(kMse[p], spec));
        }
    }
    const std::vector<OutputDef>& outputs() const override { return outs_; }
    bool reads_chroma() const override { return setup_.planes == 3; }
    bool temporal() const override { return setup_.opt.enable_apsnr; }
    bool reads_dist_every_frame() const override { return setup_.opt.enable_apsnr; }
    unsigned series_width() const override { return setup_.opt.enable_apsnr ? kSeriesWidth : 0; }
    bool series_all() const override { return setup_.opt.enable_apsnr; }

    /// The frame's outputs (outputs() order) and series row from its SSE.
    void put(const ref::PsnrAccum& acc, double* out, double* series) const {
        const ref::PsnrScores s = ref::psnr_finish(setup_, acc);
        unsigned k = 0;
        for (unsigned p = 0; p < setup_.planes; ++p) {
            out[k++] = s.psnr[p];
            if (setup_.opt.enable_mse) out[k++] = s.mse[p];
        }
        if (!setup_.opt.enable_apsnr) return;
        for (unsigned p = 0; p < 3; ++p) {
            series[3 * p] = double(acc.sse[p] & 0xffffffffu);
            series[3 * p + 1] = double(acc.sse[p] >> 32);
            series[3 * p + 2] = double(acc.n_pixels[p]);
        }
    }

    /// libvmaf's flush: apsnr over every frame extracted (with enable_apsnr the instance
    /// is temporal, so that is every frame sent, as libvmaf counts them).
    std::vector<std::pair<std::string, double>>
    aggregate(std::span<const unsigned>, const Series& s) const override {
        if (!setup_.opt.enable_apsnr) return {};
        ref::PsnrTotals totals{};
        for (std::size_t i = 0; i < s.end(); ++i) {
            const double* row = s.at(i);
            ref::PsnrAccum acc{};
            for (unsigned p = 0; p < 3; ++p) {
                acc.sse[p] = std::uint64_t(row[3 * p]) | (std::uint64_t(row[3 * p + 1]) << 32);
                acc.n_pixels[p] = std::uint64_t(row[3 * p + 2]);
            }
            ref::psnr_totals_add(totals, acc);
        }
        const ref::PsnrAggregate a = ref::psnr_aggregate(setup_, totals);
        std::vector<std::pair<std::string, double>> out;
        for (unsigned p = 0; p < 3; ++p) out.emplace_back(kApsnr[p], a.apsnr[p]);
        return out;
    }

    std::unique_ptr<CpuStage> cpu() const override {
        struct Stage final : CpuStage {
            const Psnr& f;
            explicit Stage(const Psnr& p) : f(p) {}
            void compute(const CpuFrame& fr, double* out, double* series) override {
                if (!fr.dist) throw Error(VMAF_CUDA_EINTERNAL, "psnr: no distorted picture");
                ref::PsnrAccum acc;
                ref::psnr_accumulate(*fr.ref, *fr.dist, f.setup_, acc);
                f.put(acc, out, series);
            }
        };
        return std::make_unique<Stage>(*this);
    }

#ifdef VMAF_CUDA_HAVE_CUDA
    bool has_gpu() const override { return true; }
    std::unique_ptr<GpuStage> gpu(const GpuContext&) const override {
        struct Stage final : GpuStage {
            const Psnr& f;
            cuda::PsnrKernel k;
            explicit Stage(const Psnr& p)
                : f(p), k(p.geo_.width, p.geo_.height, p.geo_.bpc, p.geo_.chroma, p.setup_.opt) {}
            std::size_t accum_bytes() const override { return k.accum_bytes(); }
            void enqueue(const GpuFrame& fr, void* d, void* st) override {
                if (!fr.dist) throw Error(VMAF_CUDA_EINTERNAL, "psnr: no distorted picture");
                k.enqueue(fr.ref, fr.dist, d, static_cast<cudaStream_t>(st));
            }
            bool finish_on_any_thread() const override { return true; }
            void finish(unsigned, const void* h, double* out, double* series, void*) override {
                f.put(*static_cast<const ref::PsnrAccum*>(h), out, series);
            }
        };
        return std::make_unique<Stage>(*this);
    }
#endif

private:
    Geometry geo_;
    ref::PsnrSetup setup_{};
    std::vector<OutputDef> outs_;
};

std::unique_ptr<FeatureInstance> make(const FeatureSpec& spec, const Geometry& g) {
    return std::make_unique<Psnr>(spec, g);
}

} // namespace

extern const FeatureRecord kPsnrRecord = {"psnr", kOptions, kProvided, make};

} // namespace vmaf_cuda::engine

// SPDX-License-Identifier: BSD-2-Clause-Patent
// Feature record: CAMBI (libvmaf v3.2.0 `cambi`, src/feature/cambi.c). No-reference
// banding score of the distorted luma; with full_ref also of the reference (read then).
// Stages: reference/cambi.h (CPU: ref::cambi_frame), kernels/cambi.cuh (GPU: integer
// stages and the order-free top-k on the device; when the order-free sum cannot guarantee
// libvmaf's quick-select value, cambi_pool.cuh pools that scale on the device from the
// frame's c-values in its slot; cambi_kernel_finish() on the host does the rest).
//
// Options: libvmaf's table of cambi.c in its order, names, aliases, types, defaults and
// ranges; every one but heatmaps_path (a debugging dump) is computed. The given texts
// reach ref::CambiOptions through ref::cambi_set_option(), as libvmaf's option parser
// sets them. Names: "cambi" (raw Cambi_feature_cambi_score) with libvmaf's option
// suffixes, e.g. cambi_hrs_1080_cmxv_17_vlt_0.06; with full_ref also cambi_source and
// cambi_full_reference, never suffixed (libvmaf appends them through the name dictionary
// of its provided features, which does not hold them).

#include "feature.h"
#include "feature_registry.h"

#include "cambi.h"
#include "error.h"
#include "vmaf_cuda.h"

#include <array>
#include <cstring>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <utility>
#include <span>
#include <stdexcept>
#include <vector>
#include <string>

#ifdef VMAF_CUDA_HAVE_CUDA
#include "cambi.cuh"
#endif

namespace vmaf_cuda::engine {
namespace {

constexpr OptionDef kOptions[] = {
    {"cambi_max_val", "cmxv", OptType::real, 1000.0, 0.0, 1000.0, true, true},
    {"enc_width", "encw", OptType::integer, 0, 180, 7680, true, true},
    {"enc_height", "ench", OptType::integer, 0, 150, 7680, true, true},
    {"enc_bitdepth", "encbd", OptType::integer, 0, 6, 16, true, true},
    {"src_width", "srcw", OptType::integer, 0, 320, 7680, true, true},
    {"src_height", "srch", OptType::integer, 0, 200, 4320, true, true},
    {"window_size", "ws", OptType::integer, 65, 15, 127, true, true},
    {"topk", nullptr, OptType::real, 0.6, 0.0001, 1.0, true, true},
    {"cambi_topk", "ctpk", OptType::real, 0.6, 0.0001, 1.0, true, true},
    {"tvi_threshold", "tvit", OptType::real, 0.019, 0.0001, 1.0, true, true},
    {"cambi_vis_lum_threshold", "vlt", OptType::real, 0.0, 0.0, 300.0, true, true},
    {"max_log_contrast", "mlc", OptType::integer, 2, 0, 5, true, true},
    {"heatmaps_path", nullptr, OptType::text, 0, 0, 0, false, false, nullptr},
    {"full_ref", nullptr, OptType::boolean, 0, 0, 1, false, true},
    {"eotf", nullptr, OptType::text, 0, 0, 0, true, true, "bt1886"},
    {"cambi_eotf", "ceot", OptType::text, 0, 0, 0, true, true, "bt1886"},
    {"cambi_high_res_speedup", "hrs", OptType::integer, 0, 0, 2160, true, true},
};

constexpr const char* kProvided[] = {"Cambi_feature_cambi_score"};

#ifdef VMAF_CUDA_HAVE_CUDA
/// Device pool objects per CAMBI stage (engine GPU stage, below).
constexpr std::size_t kMaxCambiPools = 4;
#endif

/// The spec's options as libvmaf's option parser sets them (the texts as given; options
/// not given keep CambiOptions' defaults, which are libvmaf's).
ref::CambiOptions cambi_options(const FeatureSpec& spec) {
    ref::CambiOptions o;
    for (const OptionDef& d : kOptions) {
        if (!spec.options.count(d.name)) continue;
        try {
            if (!ref::cambi_set_option(o, d.name, option_text(spec, d.name)))
                throw Error(VMAF_CUDA_EINTERNAL, std::string("cambi: option ") + d.name +
                                                     " is not known to the reference");
        } catch (const std::invalid_argument& e) {
            throw Error(VMAF_CUDA_EINVAL, e.what());
        }
    }
    return o;
}

void put(const ref::CambiScores& s, bool full_ref, double* out) {
    out[0] = s.cambi;
    if (!full_ref) return;
    out[1] = s.source;
    out[2] = s.full_reference;
}

class Cambi final : public FeatureInstance {
public:
    Cambi(const FeatureSpec& spec, const Geometry& g) : geo_(g), opt_(cambi_options(spec)) {
        try {
            plan_ = ref::cambi_plan(opt_, g.width, g.height, g.bpc);
        } catch (const std::invalid_argument& e) {
            const std::string m = e.what();
            throw Error(VMAF_CUDA_EINVAL, m.rfind("cambi", 0) == 0 ? m : "cambi: " + m);
        }
        outs_.push_back(make_output(kProvided[0], spec));
        // The engine's naming (feature_key: what models look inputs up by) and the
        // reference's libvmaf naming must agree.
        if (outs_[0].name != ref::cambi_feature_name(opt_))
            throw Error(VMAF_CUDA_EINTERNAL, "cambi: output name " + outs_[0].name +
                                                 " differs from libvmaf's " +
                                                 ref::cambi_feature_name(opt_));
        if (opt_.full_ref)
            for (const char* n : {"cambi_source", "cambi_full_reference"})
                outs_.push_back(OutputDef{n, n, false, false});
    }
    const std::vector<OutputDef>& outputs() const override { return outs_; }

    bool heavy_host_finish() const override { return true; }

    std::unique_ptr<CpuStage> cpu() const override {
        struct Stage final : CpuStage {
            const Cambi& f;
            ref::CambiScratch scratch;
            explicit Stage(const Cambi& c) : f(c) {}
            void compute(const CpuFrame& fr, double* out, double*) override {
                const ref::LumaView* src = f.opt_.full_ref ? &fr.ref->y : nullptr;
                put(ref::cambi_frame(fr.dist->y, src, f.plan_, scratch), f.opt_.full_ref, out);
            }
        };
        return std::make_unique<Stage>(*this);
    }

#ifdef VMAF_CUDA_HAVE_CUDA
    bool has_gpu() const override { return true; }
    std::unique_ptr<GpuStage> gpu(const GpuContext& ctx) const override {
        // The host tail runs on any thread. before_finish() (on the dispatching thread,
        // which also enqueues) notes where the c-values of the scales whose order-free sum
        // cannot guarantee libvmaf's value lie in the frame's slot (strongly banded frames
        // near 4K, at scale 0); finish() pools them on the device (cuda::CambiDevicePool:
        // libvmaf's quick-select and ordered sum, in place in the slot) on the slot's
        // stream, with a pool object taken from a small free list (Lease). Only the pooled
        // double comes back; where the device has no memory for a pool, the c-values are
        // copied and pooled on the host (ref::cambi_spatial_pooling), as before.
        struct Stage final : GpuStage {
            const Cambi& f;
            cuda::CambiKernel k;
            struct Fetch {
                cudaStream_t stream = nullptr;
                std::array<float*, 2 * ref::kCambiScales> src{}; ///< null: not needed
            };
            std::vector<Fetch> fetch; ///< per c-value slot
            std::mutex pools_mutex;
            std::vector<std::unique_ptr<cuda::CambiDevicePool>> free_pools;
            // c-values of a frame stay in its slot until `slots` further enqueues: the
            // finish of frame i comes before the enqueue of frame i + slots.
            Stage(const Cambi& c, unsigned slots)
                : f(c), k(c.geo_.width, c.geo_.height, c.geo_.bpc, c.opt_, slots), fetch(slots) {
                // (greatest priority: a pooling's rounds do not queue behind other frames' kernels)
                try {
                    for (Fetch& fe : fetch) fe.stream = cuda::make_latency_stream();
                } catch (...) {
                    destroy_streams();
                    throw;
                }
            }
            ~Stage() override { destroy_streams(); }
            void destroy_streams() {
                for (Fetch& fe : fetch)
                    if (fe.stream) cudaStreamDestroy(std::exchange(fe.stream, nullptr));
            }
            std::size_t accum_bytes() const override { return k.accum_bytes(); }
            void enqueue(const GpuFrame& fr, void* d, void* st) override {
                k.enqueue(fr.dist[0], f.opt_.full_ref ? &fr.ref[0] : nullptr, d,
                          static_cast<cudaStream_t>(st));
            }
            bool finish_on_any_thread() const override { return true; }
            static ref::CambiTopkExact exact(const cuda::CambiScaleAccum& a) {
                float min_pos;
                std::memcpy(&min_pos, &a.min_pos_bits, sizeof min_pos);
                return ref::cambi_topk_from_sum(a.sum_units, int(a.k), min_pos);
            }
            unsigned passes() const { return f.opt_.full_ref ? 2 : 1; }
            void before_finish(unsigned, const void* h, void*) override {
                const auto& acc = *static_cast<const cuda::CambiAccum*>(h);
                Fetch& fe = fetch.at(acc.slot);
                fe.src.fill(nullptr);
                if (acc.invalid_sample[0] || acc.invalid_sample[1]) return; // finish throws
                for (unsigned p = 0; p < passes(); ++p)
                    for (unsigned s = 0; s < ref::kCambiScales; ++s)
                        if (!exact(acc.pass[p][s]).equals_libvmaf)
                            fe.src[p * ref::kCambiScales + s] = k.cvalues_device(acc, p, s);
            }
            /// A pool object for one finish, back to the free list on destruction. At
            /// most kMaxCambiPools exist (a pooling holds one for its rounds of small
            /// launches and readbacks, a few ms at 4K; each takes 4 bytes per value of the
            /// largest scale, 33 MB at 4K): a finisher waits for one when all are lent.
            std::condition_variable pools_cv;
            std::size_t pools_made = 0;
            bool device_pool_failed = false; ///< allocation failed once: host pooling
            struct Lease {
                Stage& st;
                std::unique_ptr<cuda::CambiDevicePool> pool;
                explicit Lease(Stage& s) : st(s) {}
                ~Lease() {
                    if (!pool) return;
                    {
                        std::lock_guard<std::mutex> g(st.pools_mutex);
                        st.free_pools.push_back(std::move(pool));
                    }
                    st.pools_cv.notify_one();
                }
                /// The pool, or null when the device has no memory for one (then the
                /// caller pools on the host).
                cuda::CambiDevicePool* get() {
                    if (pool) return pool.get();
                    std::unique_lock<std::mutex> g(st.pools_mutex);
                    st.pools_cv.wait(g, [&] {
                        return st.device_pool_failed || !st.free_pools.empty() ||
                               st.pools_made < kMaxCambiPools;
                    });
                    if (st.device_pool_failed) return nullptr;
                    if (!st.free_pools.empty()) {
                        pool = std::move(st.free_pools.back());
                        st.free_pools.pop_back();
                        return pool.get();
                    }
                    ++st.pools_made;
                    g.unlock();
                    try {
                        pool = std::make_unique<cuda::CambiDevicePool>(st.k.max_scale_values());
                        return pool.get();
                    } catch (const cuda::CudaError& e) {
                        if (e.code != cudaErrorMemoryAllocation) {
                            made_failed(g, false);
                            throw;
                        }
                    } catch (...) {
                        made_failed(g, false);
                        throw;
                    }
                    cudaGetLastError(); // (not sticky) so that later launch checks pass
                    made_failed(g, true);
                    return nullptr;
                }
                /// A pool could not be made: one fewer, and every waiter looks again.
                void made_failed(std::unique_lock<std::mutex>& g, bool oom) {
                    g.lock();
                    --st.pools_made;
                    if (oom) st.device_pool_failed = true;
                    g.unlock();
                    st.pools_cv.notify_all();
                }
            };
            void finish(unsigned, const void* h, double* out, double*, void*) override {
                const auto& acc = *static_cast<const cuda::CambiAccum*>(h);
                const Fetch& fe = fetch.at(acc.slot);
                Lease lease(*this);
                thread_local std::vector<float> host; // host pooling, without device memory
                try {
                    const auto pool_scale = [&](unsigned p, unsigned s) {
                        float* src = fe.src.at(p * ref::kCambiScales + s);
                        if (!src)
                            throw Error(VMAF_CUDA_EINTERNAL, "cambi: a scale pooled on the device has no c-values");
                        const cuda::CambiScaleAccum& a = acc.pass[p][s];
                        if (cuda::CambiDevicePool* pool = lease.get())
                            return pool->pool(src, a.n, a.k, fe.stream);
                        host.resize(a.n);
                        VMAF_CUDA_CHECK(cudaMemcpyAsync(host.data(), src, host.size() * sizeof(float),
                                                        cudaMemcpyDeviceToHost, fe.stream));
                        VMAF_CUDA_CHECK(cudaStreamSynchronize(fe.stream));
                        return ref::cambi_spatial_pooling(std::span<float>(host), f.plan_.topk);
                    };
                    put(cuda::cambi_kernel_finish(k.plan(), acc, pool_scale), f.opt_.full_ref, out);
                } catch (const std::invalid_argument& e) {
                    throw Error(VMAF_CUDA_EINVAL, e.what());
                }
            }
        };
        return std::make_unique<Stage>(*this, ctx.slots);
    }
#endif

private:
    Geometry geo_;
    ref::CambiOptions opt_;
    ref::CambiPlan plan_;
    std::vector<OutputDef> outs_;
};

std::unique_ptr<FeatureInstance> make(const FeatureSpec& spec, const Geometry& g) {
    return std::make_unique<Cambi>(spec, g);
}

} // namespace

extern const FeatureRecord kCambiRecord = {"cambi", kOptions, kProvided, make};

} // namespace vmaf_cuda::engine

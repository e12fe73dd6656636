// SPDX-License-Identifier: BSD-2-Clause-Patent
// CUDA backend: every frame's feature stages (feature.h GpuStage) run on the device, on
// the caller's stream and in the caller's context; only the accumulators come back,
// through a pinned ring with one event per slot. Nothing is allocated per frame and the
// host waits only when the ring is full or at flush.

#include "backend.h"
#include "error.h"
#include "frame_trace.h"
#include "thread_name.h"

#include "cuda_common.cuh"
#include "luma.cuh"
#include "yuv.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>
#include <limits>
#include <type_traits>
#include <vector>

namespace vmaf_cuda::engine {
namespace {

using cuda::CudaError;
using cuda::DeviceBuffer;
using cuda::DeviceLuma;
using cuda::PinnedBuffer;

/// Driver-API context push/pop, reached through the runtime (no link-time libcuda).
struct DriverApi {
    using PushFn = int (*)(void*);
    using PopFn = int (*)(void**);
    PushFn push = nullptr;
    PopFn pop = nullptr;
    DriverApi() {
        cudaDriverEntryPointQueryResult q{};
        void* f = nullptr;
        if (cudaGetDriverEntryPointByVersion("cuCtxPushCurrent", &f, 12000, cudaEnableDefault, &q) ==
                cudaSuccess && q == cudaDriverEntryPointSuccess)
            push = reinterpret_cast<PushFn>(f);
        if (cudaGetDriverEntryPointByVersion("cuCtxPopCurrent", &f, 12000, cudaEnableDefault, &q) ==
                cudaSuccess && q == cudaDriverEntryPointSuccess)
            pop = reinterpret_cast<PopFn>(f);
    }
};

/// Makes the caller's CUDA context current for the scope (when one was given).
class ContextScope {
public:
    ContextScope(const DriverApi& api, void* ctx) : api_(api), ctx_(ctx) {
        if (!ctx_) return;
        if (!api_.push || api_.push(ctx_) != 0)
            throw Error(VMAF_CUDA_ECUDA, "cuCtxPushCurrent failed for the given CUDA context");
    }
    ~ContextScope() {
        if (ctx_ && api_.pop) {
            void* old = nullptr;
            api_.pop(&old);
        }
    }
    ContextScope(const ContextScope&) = delete;
    ContextScope& operator=(const ContextScope&) = delete;

private:
    const DriverApi& api_;
    void* ctx_;
};

/// Where each feature's accumulator lies in one frame's slot (256-byte aligned).
struct SlotLayout {
    std::vector<std::size_t> off;
    std::size_t bytes = 0;
};

/// One set of the features' GPU stages with its streams. Frames go to the lanes in
/// turn, so several frames are computed at once; a lane's stages (and their scratch)
/// only ever run on the lane's own streams, in frame order. Feature i runs on stream
/// i % streams; stream 0 also joins and reads back.
struct Lane {
    std::vector<std::unique_ptr<GpuStage>> stages;
    std::vector<cudaStream_t> stream;
    std::vector<cudaEvent_t> join;
};

/// Device views of one frame's pictures.
struct FrameViews {
    cuda::DevicePlane ref[3], dist[3];
    DeviceLuma ref_luma, dist_luma;
    bool valid = false;
};

class CudaBackend final : public Backend {
public:
    /// Lanes: frames computed at once. Half the frames in flight (1..4); at four or five
    /// frames in flight a third lane where a lane's frame is small (luma pixels times
    /// renditions, or the ladder's renditions for one rendition's session, up to
    /// 1920x1088): two such frames at once leave the GPU idle between
    /// their kernels (1080p one pair on an H100: 9,800 -> 10,100 pairs/s for 8 MiB more;
    /// at 4K a third lane gains nothing; docs/PERFORMANCE.md, 2026-12-06, fourth session).
    /// VMAF_CUDA_LANES (1..8, read once; capped at the frames in flight) overrides it: a
    /// knob for timing the choice.
    static unsigned lane_count(unsigned frames_in_flight, std::uint64_t lane_pixels) {
        static const long forced = [] {
            const char* q = std::getenv("VMAF_CUDA_LANES");
            char* end = nullptr;
            const long v = q ? std::strtol(q, &end, 10) : 0;
            return q && end != q && *end == '\0' && v >= 1 && v <= 8 ? v : 0L;
        }();
        if (forced > 0) return std::min(static_cast<unsigned>(forced), frames_in_flight);
        const unsigned lanes = std::clamp(frames_in_flight / 2, 1u, 4u);
        constexpr std::uint64_t kSmallFrame = 1920ull * 1088;
        return frames_in_flight >= 4 && lanes < 3 && lane_pixels <= kSmallFrame ? 3 : lanes;
    }

    /// CUDA priority of a lane's stream k (stage k of the plan): the default 0, or the
    /// k-th of VMAF_CUDA_STREAM_PRIORITIES ("p0,p1,...", CUDA's scale: lower is more
    /// urgent; CUDA clamps values outside the device's range), read once: a knob for
    /// timing how the stages' kernels share the SMs (docs/PERFORMANCE.md).
    static int stream_priority(std::size_t k) {
        static const std::vector<int> prio = [] {
            std::vector<int> v;
            const char* q = std::getenv("VMAF_CUDA_STREAM_PRIORITIES");
            for (char* end = nullptr; q && *q; q = *end == ',' ? end + 1 : nullptr) {
                const long x = std::strtol(q, &end, 10);
                if (end == q) break;
                v.push_back(static_cast<int>(std::clamp(x, -1000L, 1000L)));
            }
            return v;
        }();
        return k < prio.size() ? prio[k] : 0;
    }

    CudaBackend(const BackendConfig& c, const FramePlan& p) : cfg_(c), plan_(p) {
        ContextScope scope(api_, cfg_.cuda_context);
        if (!cfg_.cuda_context) VMAF_CUDA_CHECK(cudaSetDevice(cfg_.cuda_device < 0 ? 0 : cfg_.cuda_device));
        if (cfg_.cuda_stream) {
            stream_ = static_cast<cudaStream_t>(cfg_.cuda_stream);
        } else {
            // Blocking: ordered after work on the legacy default stream (e.g. an
            // NVDEC copy enqueued there), like the caller would expect.
            VMAF_CUDA_CHECK(cudaStreamCreateWithFlags(&own_stream_, cudaStreamDefault));
            stream_ = own_stream_;
        }
        VMAF_CUDA_CHECK(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
        const unsigned lanes = lane_count(
            cfg_.frames_in_flight,
            std::uint64_t{cfg_.width} * cfg_.height *
                std::max({cfg_.renditions, cfg_.ladder_size, 1u}));
        // Owned planes (host input, high-bit luma): frame i uses i % owned_; frames up to
        // `history` later read it as a previous picture.
        owned_ = lanes + 1 + plan_.history;
        ring_ = std::max(cfg_.frames_in_flight + 2, owned_ + 2);
        // Long host finishes run on workers, several frames at once: keep enough in flight
        // (kHeavyInFlight, or kDeepInFlight where the device has the memory: below).
        bool heavy = false;
        for (const FeatureInstance* f : plan_.features) heavy = heavy || f->heavy_host_finish();
        const unsigned base_ring = ring_;
        GpuContext ctx;
        auto align = [](std::size_t v) { return (v + 255) & ~std::size_t(255); };
        auto set_depth = [&](unsigned depth) {
            hint_ = depth;
            ring_ = std::max(base_ring, hint_ + 2);
            ctx.slots = (ring_ + lanes - 1) / lanes + 1;
        };
        set_depth(heavy ? kHeavyInFlight : 0);
        rend_ = std::max(cfg_.renditions, 1u);
        ctx.renditions = rend_;
        std::size_t free_before = 0, total = 0;
        if (heavy) VMAF_CUDA_CHECK(cudaMemGetInfo(&free_before, &total));
        const std::size_t n_streams = std::clamp<std::size_t>(plan_.features.size(), 1, 4);
        lanes_.resize(lanes);
        for (Lane& l : lanes_) {
            l.stream.resize(n_streams);
            l.join.resize(n_streams);
            for (std::size_t k = 0; k < n_streams; ++k)
                VMAF_CUDA_CHECK(cudaStreamCreateWithPriority(&l.stream[k], cudaStreamNonBlocking,
                                                             stream_priority(k)));
            for (auto& e : l.join) VMAF_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        }
        auto make_stages = [&]() {
            for (Lane& l : lanes_)
                for (const FeatureInstance* f : plan_.features) {
                    auto st = f->gpu(ctx);
                    if (!st) throw Error(VMAF_CUDA_ENODEV, f->gpu_refusal());
                    l.stages.push_back(std::move(st));
                }
        };
        make_stages();
        if (heavy) {
            // The frames' per-slot buffers (term maps, c-values) are most of what the stages
            // took. A deeper pipeline needs about as much again; take it only when a quarter
            // of the device stays free after it (other sessions, the decoders' surfaces).
            std::size_t free_after = 0;
            VMAF_CUDA_CHECK(cudaMemGetInfo(&free_after, &total));
            std::size_t used = free_before > free_after ? free_before - free_after : 0;
            // plus the accumulator ring allocated below, which grows with the depth too
            std::size_t acc = 0;
            for (const auto& st : lanes_[0].stages) acc += align(std::max<std::size_t>(st->accum_bytes(), 1));
            used += acc * (kDeepInFlight - kHeavyInFlight);
            if (free_after > used && free_after - used >= total / 4) {
                for (Lane& l : lanes_) l.stages.clear();
                set_depth(kDeepInFlight);
                try {
                    make_stages();
                } catch (const CudaError& e) { // taken meanwhile (another session): stay at 16
                    if (e.code != cudaErrorMemoryAllocation) throw;
                    cudaGetLastError();
                    for (Lane& l : lanes_) l.stages.clear();
                    set_depth(kHeavyInFlight);
                    make_stages();
                }
            }
        }
        // A ladder's share (renditions > 1): its features are reference-only (one
        // accumulator) or ladder stages (one per rendition); nothing else can be shared.
        for (std::size_t i = 0; i < plan_.features.size(); ++i) {
            const auto& st = lanes_[0].stages[i];
            const unsigned per_frame = renditions_of(rend_, i);
            if (per_frame > 1 && !st->ladder())
                throw Error(VMAF_CUDA_EINTERNAL, "a ladder's share holds a feature without a ladder stage");
            layout_.off.push_back(layout_.bytes);
            layout_.bytes += align(std::max<std::size_t>(st->accum_bytes(), 1) * per_frame);
        }
        if (layout_.bytes == 0) layout_.bytes = 256;
        dev_acc_ = DeviceBuffer(layout_.bytes * ring_);
        host_acc_ = PinnedBuffer(layout_.bytes * ring_);
        events_.resize(ring_, nullptr);
        for (auto& e : events_) VMAF_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        bps_ = c.bpc > 8 ? 2 : 1;
        pitch_ = (std::size_t(c.width) * bps_ + 255) & ~std::size_t(255);
        cw_ = ref::yuv_chroma_width(c.width, c.chroma);
        ch_ = ref::yuv_chroma_height(c.height, c.chroma);
        // Allocated on first use: device pictures without a shift never need them.
        own_ref_.resize(owned_);
        own_dist_.resize(std::size_t(owned_) * rend_);
        own_ref_c_.resize(owned_);
        own_dist_c_.resize(std::size_t(owned_) * rend_);
        dist_views_.resize(rend_);
        dist_lumas_.resize(rend_);
        dist_luma_ptrs_.resize(rend_);
        hist_.resize(plan_.history + 1);
        // Workers for the host finishes that may run on any thread, when some stage has one:
        // settings.n_threads of them, or by default half the host's cores, up to eight
        // (SpEED's eigenvalues; CAMBI's device pooling waits for a few small readbacks).
        bool any = false;
        for (const auto& st : lanes_[0].stages) any = any || st->finish_on_any_thread();
        const unsigned hw = std::thread::hardware_concurrency();
        const unsigned n = !any ? 0 : cfg_.n_threads ? cfg_.n_threads : std::clamp(hw / 2, 1u, 8u);
        try {
            for (unsigned i = 0; i < n; ++i) workers_.emplace_back([this] { work(); });
        } catch (...) {
            stop_workers();
            throw;
        }
    }

    ~CudaBackend() override {
        stop_workers();
        try {
            ContextScope scope(api_, cfg_.cuda_context);
            cudaStreamSynchronize(stream_);
            for (Lane& l : lanes_)
                for (auto st : l.stream)
                    if (st) cudaStreamSynchronize(st);
            for (auto e : events_)
                if (e) cudaEventDestroy(e);
            if (fork_) cudaEventDestroy(fork_);
            for (Lane& l : lanes_) {
                l.stages.clear();
                for (auto e : l.join)
                    if (e) cudaEventDestroy(e);
                for (auto st : l.stream)
                    if (st) cudaStreamDestroy(st);
            }
            dev_acc_ = DeviceBuffer();
            host_acc_ = PinnedBuffer();
            own_ref_.clear();
            own_dist_.clear();
            own_ref_c_.clear();
            own_dist_c_.clear();
            if (own_stream_) cudaStreamDestroy(own_stream_);
        } catch (...) {
        }
    }

    const char* name() const override { return "cuda"; }
    BackendCaps caps() const override {
        BackendCaps c;
        c.device_pictures = true;
        c.ladder_one_pass = true;
        return c;
    }
    std::unique_ptr<Backend> make_like(const BackendConfig& c, const FramePlan& p) const override {
        return make_cuda_backend(c, p);
    }

    void submit(unsigned index, const VmafCudaPicture& r, const VmafCudaPicture& d,
                std::uint64_t skip) override {
        const VmafCudaPicture* dp = &d;
        submit_frame(index, r, &dp, 1, skip);
    }

    void submit_ladder(unsigned index, const VmafCudaPicture& r, const VmafCudaPicture* const* dists,
                       unsigned n) override {
        if (!dists || n < 1 || n > rend_)
            throw Error(VMAF_CUDA_EINTERNAL, "ladder frame with " + std::to_string(n) +
                                                 " renditions (1.." + std::to_string(cfg_.renditions) + ")");
        submit_frame(index, r, dists, n, 0);
    }

    void submit_frame(unsigned index, const VmafCudaPicture& r, const VmafCudaPicture* const* dp,
                      unsigned n, std::uint64_t skip) {
        ContextScope scope(api_, cfg_.cuda_context);
        const std::int64_t t_begin = trace_.now();
        try {
            if (queue_.size() >= ring_)
                throw Error(VMAF_CUDA_EINTERNAL, "CUDA readback ring overflow");
            const unsigned slot = index % ring_;
            const bool scored = cfg_.scored(index);
            const bool need_dist = scored || plan_.dist_every_frame;
            Lane& lane = lanes_[index % lanes_.size()];

            // Inputs on the caller's stream (upload or shift into owned planes when needed).
            bool owns = r.memory == VMAF_CUDA_MEMORY_HOST || r.shift;
            for (unsigned k = 0; k < n && need_dist; ++k)
                owns = owns || dp[k]->memory == VMAF_CUDA_MEMORY_HOST || dp[k]->shift;
            if (owns && index >= owned_) {
                // The owned planes to be overwritten were last read by frame index - owned_
                // and, as a previous picture, by the `history` frames after it.
                for (unsigned k = 0; k <= plan_.history; ++k)
                    VMAF_CUDA_CHECK(cudaStreamWaitEvent(stream_, events_[(index - owned_ + k) % ring_], 0));
            }
            // Nothing to compute (a ladder rendition whose features all come from the share):
            // no device work; the reference is prepared only for later frames' history
            // (the rendition may fall out of step with the share), the distorted not at all.
            bool any = false;
            for (std::size_t i = 0; i < lane.stages.size(); ++i) any = any || plan_.runs(i, scored, skip);
            FrameViews cur;
            const unsigned o = index % owned_;
            if (!any) {
                if (plan_.history) {
                    prepare(r, own_ref_[o], own_ref_c_[o], cur.ref, cur.ref_luma);
                    cur.valid = true;
                    push_history(cur);
                }
                VMAF_CUDA_CHECK(cudaEventRecord(events_[slot], stream_));
                queue_.push_back(make_pending(index, scored, skip, slot, n, t_begin));
                return;
            }
            prepare(r, own_ref_[o], own_ref_c_[o], cur.ref, cur.ref_luma);
            if (need_dist) {
                prepare(*dp[0], own_dist_[o * rend_], own_dist_c_[o * rend_], cur.dist, cur.dist_luma);
                dist_luma_ptrs_[0] = &cur.dist_luma;
                for (unsigned k = 1; k < n; ++k) {
                    prepare(*dp[k], own_dist_[o * rend_ + k], own_dist_c_[o * rend_ + k],
                            dist_views_[k].planes, dist_lumas_[k]);
                    dist_luma_ptrs_[k] = &dist_lumas_[k];
                }
            }
            cur.valid = true;

            auto* dbase = dev_acc_.get<unsigned char>() + slot * layout_.bytes;
            VMAF_CUDA_CHECK(cudaMemsetAsync(dbase, 0, layout_.bytes, stream_));
            // Fork: the lane's streams start once the inputs are ready on stream_.
            VMAF_CUDA_CHECK(cudaEventRecord(fork_, stream_));
            for (auto st : lane.stream) VMAF_CUDA_CHECK(cudaStreamWaitEvent(st, fork_, 0));

            GpuFrame f;
            f.index = index;
            f.scored = scored;
            f.ref = cur.ref;
            f.ref_luma = &cur.ref_luma;
            if (need_dist) {
                f.dist = cur.dist;
                f.dist_luma = &cur.dist_luma;
                f.dist_lumas = dist_luma_ptrs_.data();
            }
            // hist_[k]: frame index - 1 - k
            for (unsigned k = 0; k < plan_.history && k < 2; ++k) {
                if (k >= index || !hist_[k].valid) continue;
                f.prev_ref[k] = hist_[k].ref;
                f.prev_ref_luma[k] = &hist_[k].ref_luma;
                if (k < plan_.dist_history && hist_[k].dist[0].data) f.prev_dist[k] = hist_[k].dist;
            }
            for (std::size_t i = 0; i < lane.stages.size(); ++i) {
                if (!plan_.runs(i, scored, skip)) continue;
                // A ladder's frame: ladder stages get every rendition, reference-only ones one.
                f.renditions = renditions_of(n, i);
                lane.stages[i]->enqueue(f, dbase + layout_.off[i], lane.stream[i % lane.stream.size()]);
            }
            if (plan_.history) {
                if (!need_dist) cur.dist[0] = cuda::DevicePlane{};
                push_history(cur);
            }
            // Join on the lane's first stream, read the accumulators back, mark the slot.
            for (std::size_t k = 1; k < lane.stream.size(); ++k) {
                VMAF_CUDA_CHECK(cudaEventRecord(lane.join[k], lane.stream[k]));
                VMAF_CUDA_CHECK(cudaStreamWaitEvent(lane.stream[0], lane.join[k], 0));
            }
            auto* hbase = host_acc_.get<unsigned char>() + slot * layout_.bytes;
            VMAF_CUDA_CHECK(cudaMemcpyAsync(hbase, dbase, layout_.bytes, cudaMemcpyDeviceToHost,
                                            lane.stream[0]));
            VMAF_CUDA_CHECK(cudaEventRecord(events_[slot], lane.stream[0]));
            queue_.push_back(make_pending(index, scored, skip, slot, n, t_begin));
        } catch (const CudaError& e) {
            throw Error(e.code == cudaErrorMemoryAllocation ? VMAF_CUDA_ENOMEM : VMAF_CUDA_ECUDA,
                        e.what());
        }
    }

    bool retrieve(FrameResult& out, bool wait) override {
        if (queue_.empty()) return false;
        ContextScope scope(api_, cfg_.cuda_context);
        const std::int64_t t_call = trace_.now();
        // (the oldest frame's event wait in dispatch(true) counts as waiting too)
        bool waited = false;
        if (wait && trace_.on()) {
            std::lock_guard<std::mutex> lk(mu_);
            waited = queue_.front()->state != Pending::done;
        }
        for (;;) {
            dispatch(wait);
            Pending& head = *queue_.front();
            {
                std::unique_lock<std::mutex> lk(mu_);
                if (head.state == Pending::finishing && wait) {
                    waited = true;
                    cv_done_.wait(lk, [&] { return head.state == Pending::done; });
                }
                if (head.state != Pending::done) {
                    if (!wait) return false;
                    waited = true;
                    continue; // not dispatched yet: dispatch(true) waits for its event
                }
            }
            auto p = std::move(queue_.front());
            queue_.pop_front();
            if (trace_.on()) {
                p->trace.retrieved = trace_.now();
                p->trace.waited = waited ? p->trace.retrieved - t_call : 0;
                trace_.add(p->trace);
            }
            if (!p->error.empty()) throw Error(p->status, p->error);
            // A ladder's frame: the reference-only features' values in every block.
            for (unsigned r = 1; r < p->renditions; ++r)
                for (std::size_t i = 0; i < plan_.features.size(); ++i) {
                    if (renditions_of(p->renditions, i) > 1) continue;
                    auto& v = p->result.values;
                    auto& sr = p->result.series;
                    std::copy_n(v.begin() + plan_.out_offset[i], plan_.features[i]->outputs().size(),
                                v.begin() + r * plan_.n_values + plan_.out_offset[i]);
                    std::copy_n(sr.begin() + plan_.series_offset[i], plan_.features[i]->series_width(),
                                sr.begin() + r * plan_.n_series + plan_.series_offset[i]);
                }
            out = std::move(p->result);
            return true;
        }
    }

    unsigned pending() const override { return unsigned(queue_.size()); }
    unsigned in_flight_hint() const override { return hint_; }
    unsigned capacity() const override { return ring_ - 2; }

    /// Ordered on the session's stream after the work enqueued before (the picture's
    /// producer's, when it shares the stream), and waited for: signatures are wanted only
    /// while an alignment collects (a few seconds of frames), not on every frame.
    void device_cell_sums(const VmafCudaPicture& pic, unsigned grid, std::uint64_t* sums) override {
        try {
            ContextScope scope(api_, cfg_.cuda_context);
            if (!cfg_.cuda_context) VMAF_CUDA_CHECK(cudaSetDevice(cfg_.cuda_device < 0 ? 0 : cfg_.cuda_device));
            const std::size_t bytes = std::size_t(grid) * grid * sizeof(unsigned long long);
            if (cell_sums_.bytes() < bytes) cell_sums_ = DeviceBuffer(bytes);
            const DeviceLuma luma{pic.luma, std::size_t(pic.pitch), cfg_.width, cfg_.height, cfg_.bpc};
            cuda::cell_sums(luma, pic.shift, grid, cell_sums_.get<unsigned long long>(), stream_);
            static_assert(sizeof(unsigned long long) == sizeof(std::uint64_t));
            VMAF_CUDA_CHECK(cudaMemcpyAsync(sums, cell_sums_.get(), bytes, cudaMemcpyDeviceToHost, stream_));
            VMAF_CUDA_CHECK(cudaStreamSynchronize(stream_));
        } catch (const CudaError& e) {
            throw Error(e.code == cudaErrorMemoryAllocation ? VMAF_CUDA_ENOMEM : VMAF_CUDA_ECUDA,
                        e.what());
        }
    }

private:
    struct Pending {
        unsigned index = 0;
        bool scored = false;
        std::uint64_t skip = 0;
        unsigned slot = 0;
        unsigned renditions = 1; ///< a ladder's frame: one result block per rendition
        enum State { enqueued, finishing, done } state = enqueued;
        FrameResult result;
        std::string error;
        int status = VMAF_CUDA_OK;
        std::size_t todo = 0; ///< host-pool finishes still running
        FrameTrace::Row trace;
    };

    std::unique_ptr<Pending> make_pending(unsigned index, bool scored, std::uint64_t skip,
                                          unsigned slot, unsigned n, std::int64_t t_begin) {
        auto pend = std::make_unique<Pending>();
        pend->index = index;
        pend->scored = scored;
        pend->skip = skip;
        pend->slot = slot;
        pend->renditions = n;
        pend->trace.index = index;
        pend->trace.submit_begin = t_begin;
        pend->trace.submit_end = trace_.now();
        return pend;
    }

    struct Task {
        Pending* p = nullptr;
        std::size_t feature = 0;
        unsigned rendition = 0;
        const unsigned char* hbase = nullptr;
        Lane* lane = nullptr;
    };

    /// Frames whose readback event has fired get their host finish, in frame order:
    /// stages that may run on any thread go to the host workers (pure host tails such as
    /// SpEED's), the others (device fallbacks on the lane's stream) run here. With
    /// `wait`, blocks for the oldest frame's event.
    void dispatch(bool wait) {
        for (std::size_t q = 0; q < queue_.size(); ++q) {
            Pending& p = *queue_[q];
            if (p.state != Pending::enqueued) continue;
            const cudaError_t st = (wait && q == 0) ? cudaEventSynchronize(events_[p.slot])
                                                    : cudaEventQuery(events_[p.slot]);
            if (st == cudaErrorNotReady) return;
            if (st != cudaSuccess) {
                cudaGetLastError();
                std::lock_guard<std::mutex> lk(mu_);
                p.error = std::string("CUDA work of frame ") + std::to_string(p.index) +
                          " failed: " + cudaGetErrorString(st);
                p.status = VMAF_CUDA_ECUDA;
                p.state = Pending::done;
                return;
            }
            p.trace.ready = trace_.now();
            start_finish(p);
        }
    }

    /// Rendition r's part of feature i's accumulator, values and series (a ladder's frame:
    /// one block per rendition; reference-only features have one accumulator).
    struct Where {
        const unsigned char* accum;
        double* values;
        double* series;
    };
    Where where(Pending& p, const unsigned char* hbase, std::size_t i, unsigned r) {
        return {hbase + layout_.off[i] + r * lanes_[0].stages[i]->accum_bytes(),
                p.result.values.data() + r * plan_.n_values + plan_.out_offset[i],
                p.result.series.data() + r * plan_.n_series + plan_.series_offset[i]};
    }
    /// Renditions feature i computes on a frame of n (a ladder's frame: all of them, but
    /// once for the reference-only features).
    unsigned renditions_of(unsigned n, std::size_t i) const {
        return n > 1 && !plan_.features[i]->reference_only() ? n : 1;
    }
    /// Frame views `cur` become the newest previous frame.
    void push_history(const FrameViews& cur) {
        for (std::size_t k = hist_.size() - 1; k > 0; --k) hist_[k] = hist_[k - 1];
        hist_[0] = cur;
    }

    void start_finish(Pending& p) {
        const auto* hbase = host_acc_.get<unsigned char>() + p.slot * layout_.bytes;
        p.result.index = p.index;
        p.result.scored = p.scored;
        p.result.values.assign(plan_.n_values * p.renditions, std::numeric_limits<double>::quiet_NaN());
        p.result.series.assign(plan_.n_series * p.renditions, 0.0);
        Lane& lane = lanes_[p.index % lanes_.size()];
        std::vector<std::pair<std::size_t, unsigned>> pooled;
        try {
            for (std::size_t i = 0; i < lane.stages.size(); ++i)
                if (plan_.runs(i, p.scored, p.skip))
                    for (unsigned r = 0; r < renditions_of(p.renditions, i); ++r)
                        lane.stages[i]->before_finish(p.index, where(p, hbase, i, r).accum,
                                                      lane.stream[i % lane.stream.size()]);
            for (std::size_t i = 0; i < lane.stages.size(); ++i) {
                if (!plan_.runs(i, p.scored, p.skip)) continue;
                for (unsigned r = 0; r < renditions_of(p.renditions, i); ++r) {
                    if (!workers_.empty() && lane.stages[i]->finish_on_any_thread()) {
                        pooled.emplace_back(i, r);
                        continue;
                    }
                    const Where w = where(p, hbase, i, r);
                    lane.stages[i]->finish(p.index, w.accum, w.values, w.series,
                                           lane.stream[i % lane.stream.size()]);
                }
            }
        } catch (const CudaError& e) {
            p.error = e.what();
            p.status = e.code == cudaErrorMemoryAllocation ? VMAF_CUDA_ENOMEM : VMAF_CUDA_ECUDA;
        } catch (const Error& e) {
            p.error = e.what();
            p.status = e.status;
        } catch (const std::exception& e) {
            p.error = e.what();
            p.status = VMAF_CUDA_EINTERNAL;
        }
        std::lock_guard<std::mutex> lk(mu_);
        if (pooled.empty() || !p.error.empty()) {
            p.trace.done = trace_.now();
            p.state = Pending::done;
            cv_done_.notify_all();
            return;
        }
        p.state = Pending::finishing;
        p.todo = pooled.size();
        for (const auto& [i, r] : pooled) tasks_.push_back({&p, i, r, hbase, &lane});
        cv_work_.notify_all();
    }

    void work() {
        name_this_thread("vmaf-host-tail");
        // Finishes may wait for CUDA events of the session's context.
        std::unique_ptr<ContextScope> scope;
        try {
            if (cfg_.cuda_context) scope = std::make_unique<ContextScope>(api_, cfg_.cuda_context);
            else cudaSetDevice(cfg_.cuda_device < 0 ? 0 : cfg_.cuda_device);
        } catch (...) {
        }
        for (;;) {
            Task t;
            {
                std::unique_lock<std::mutex> lk(mu_);
                cv_work_.wait(lk, [&] { return stop_ || !tasks_.empty(); });
                if (stop_) return;
                t = tasks_.front();
                tasks_.pop_front();
            }
            std::string err;
            int status = VMAF_CUDA_OK;
            try {
                const Where w = where(*t.p, t.hbase, t.feature, t.rendition);
                t.lane->stages[t.feature]->finish(t.p->index, w.accum, w.values, w.series, nullptr);
            } catch (const CudaError& e) { // (device work of a finish: sums, pools, copies)
                err = e.what();
                status = e.code == cudaErrorMemoryAllocation ? VMAF_CUDA_ENOMEM : VMAF_CUDA_ECUDA;
            } catch (const Error& e) {
                err = e.what();
                status = e.status;
            } catch (const std::exception& e) {
                err = e.what();
                status = VMAF_CUDA_EINTERNAL;
            } catch (...) {
                err = "a host finish failed with an unknown exception";
                status = VMAF_CUDA_EINTERNAL;
            }
            std::lock_guard<std::mutex> lk(mu_);
            if (!err.empty() && t.p->error.empty()) {
                t.p->error = err;
                t.p->status = status;
            }
            if (--t.p->todo == 0) {
                t.p->trace.done = trace_.now();
                t.p->state = Pending::done;
                cv_done_.notify_all();
            }
        }
    }

    void stop_workers() {
        {
            std::lock_guard<std::mutex> lk(mu_);
            stop_ = true;
        }
        cv_work_.notify_all();
        for (auto& t : workers_) t.join();
        workers_.clear();
    }

    /// Device views of picture `p`: its planes in place when they are device memory
    /// (chroma as given: planar, or interleaved with step 2), else uploaded into `own` /
    /// `own_c`; `luma` without the shift (shifted into `own` when needed), for the
    /// integer VMAF kernels. Stream-ordered; buffers are allocated once.
    void prepare(const VmafCudaPicture& p, DeviceBuffer& own, DeviceBuffer& own_c,
                 cuda::DevicePlane (&planes)[3], DeviceLuma& luma) {
        const unsigned bpc = cfg_.bpc;
        const std::size_t row = std::size_t(cfg_.width) * bps_;
        const bool host = p.memory == VMAF_CUDA_MEMORY_HOST;
        if ((host || p.shift) && !own.get()) own = DeviceBuffer(pitch_ * cfg_.height);
        for (auto& pl : planes) pl = cuda::DevicePlane{};
        // Luma: device planes are read in place (DevicePlane carries the shift); the integer
        // VMAF kernels get a shifted copy. Host planes are uploaded and shifted in place.
        cuda::DevicePlane& y = planes[0];
        y.width = cfg_.width;
        y.height = cfg_.height;
        y.bpc = bpc;
        y.step = 1;
        if (host) {
            VMAF_CUDA_CHECK(cudaMemcpy2DAsync(own.get(), pitch_, p.luma, std::size_t(p.pitch), row,
                                              cfg_.height, cudaMemcpyHostToDevice, stream_));
            luma = DeviceLuma{own.get(), pitch_, cfg_.width, cfg_.height, bpc};
            if (p.shift) cuda::shift_luma(luma, p.shift, own.get(), pitch_, stream_);
            y.data = own.get();
            y.pitch = pitch_;
            y.shift = 0;
        } else {
            y.data = p.luma;
            y.pitch = std::size_t(p.pitch);
            y.shift = p.shift;
            luma = DeviceLuma{p.luma, std::size_t(p.pitch), cfg_.width, cfg_.height, bpc};
            if (p.shift) {
                cuda::shift_luma(luma, p.shift, own.get(), pitch_, stream_);
                luma.data = own.get();
                luma.pitch = pitch_;
            }
        }
        // Chroma
        if (!plan_.chroma || cfg_.chroma == 400 || !p.chroma[0] || !p.chroma[1]) return;
        const unsigned step = p.chroma_step == 2 ? 2 : 1;
        for (int k = 1; k < 3; ++k) {
            cuda::DevicePlane& c = planes[k];
            c.width = cw_;
            c.height = ch_;
            c.bpc = bpc;
            c.step = step;
            c.shift = p.shift;
            c.pitch = std::size_t(p.chroma_pitch);
            c.data = p.chroma[k - 1];
        }
        if (!host) return;
        const std::size_t crow = std::size_t(cw_) * step * bps_;
        const std::size_t cpitch = (crow + 255) & ~std::size_t(255);
        if (!own_c.get()) own_c = DeviceBuffer(cpitch * ch_ * 2);
        auto* base = own_c.get<unsigned char>();
        if (step == 2) {
            // Interleaved: one upload of the UV rows; Cr is one sample after Cb.
            VMAF_CUDA_CHECK(cudaMemcpy2DAsync(base, cpitch, p.chroma[0], std::size_t(p.chroma_pitch),
                                              crow, ch_, cudaMemcpyHostToDevice, stream_));
            planes[1].data = base;
            planes[2].data = base + bps_;
        } else {
            for (int k = 0; k < 2; ++k) {
                VMAF_CUDA_CHECK(cudaMemcpy2DAsync(base + k * cpitch * ch_, cpitch, p.chroma[k],
                                                  std::size_t(p.chroma_pitch), crow, ch_,
                                                  cudaMemcpyHostToDevice, stream_));
                planes[1 + k].data = base + k * cpitch * ch_;
            }
        }
        planes[1].pitch = planes[2].pitch = cpitch;
    }

    DriverApi api_;
    BackendConfig cfg_;
    FramePlan plan_;
    SlotLayout layout_;
    cudaStream_t stream_ = nullptr, own_stream_ = nullptr;
    cudaEvent_t fork_ = nullptr;
    std::vector<Lane> lanes_;
    unsigned ring_ = 0;
    DeviceBuffer dev_acc_;
    DeviceBuffer cell_sums_; ///< device_cell_sums()
    PinnedBuffer host_acc_;
    std::vector<cudaEvent_t> events_;
    std::size_t bps_ = 1, pitch_ = 0;
    unsigned cw_ = 0, ch_ = 0;
    unsigned owned_ = 0;
    unsigned rend_ = 1; ///< distorted pictures per frame, at most (BackendConfig::renditions)
    std::vector<DeviceBuffer> own_ref_, own_dist_, own_ref_c_, own_dist_c_;
    std::vector<FrameViews> hist_;   ///< hist_[k]: frame index - 1 - k (history frames)
    /// A ladder's frame: renditions 1.. (rendition 0's views are FrameViews::dist).
    struct DistViews {
        cuda::DevicePlane planes[3];
    };
    std::vector<DistViews> dist_views_;
    std::vector<DeviceLuma> dist_lumas_;
    std::vector<const DeviceLuma*> dist_luma_ptrs_;
    std::deque<std::unique_ptr<Pending>> queue_;
    /// Frames in flight with a long host finish (CAMBI's quick-select, SpEED's eigenvalues):
    /// 16, or 32 where the device's memory allows (about twice the per-frame buffers; at 4K
    /// with float_ms_ssim and cambi 32 reach the NVDEC rate where 16 do not, docs/PERFORMANCE-2026-12-01.md).
    static constexpr unsigned kHeavyInFlight = 16, kDeepInFlight = 32;
    unsigned hint_ = 0;
    // Host finishes (feature.h GpuStage::finish_on_any_thread) run on a few workers.
    std::mutex mu_;
    std::condition_variable cv_work_, cv_done_;
    std::deque<Task> tasks_;
    std::vector<std::thread> workers_;
    bool stop_ = false;
    FrameTrace trace_; ///< VMAF_CUDA_TRACE (frame_trace.h)
};

} // namespace

namespace {

/// "device 0 (NVIDIA H200, compute capability 9.0)"
std::string describe_device(int dev) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, dev) != cudaSuccess) {
        cudaGetLastError();
        return "device " + std::to_string(dev);
    }
    return "device " + std::to_string(dev) + " (" + p.name + ", compute capability " +
           std::to_string(p.major) + "." + std::to_string(p.minor) + ")";
}

CudaDeviceCheck check_device(const BackendConfig& c) {
    using R = CudaDeviceCheck::Result;
    CudaDeviceCheck out;
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        cudaGetLastError();
        int runtime = 0, driver = 0;
        cudaRuntimeGetVersion(&runtime);
        cudaDriverGetVersion(&driver);
        auto ver = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
        if (e == cudaErrorInsufficientDriver && driver > 0) {
            // A GPU with a driver too old for this build: the kernels cannot run there.
            out.result = CudaDeviceCheck::Result::cannot_run;
            out.message = "the NVIDIA driver supports CUDA " + ver(driver) +
                          ", but this build needs a driver for CUDA " + ver(runtime) +
                          " or newer (update the driver, or build with an older CUDA toolkit)";
        } else if (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice || n == 0) {
            out.message = "no NVIDIA GPU or CUDA driver found";
        } else {
            out.message = std::string("CUDA is not usable: ") + cudaGetErrorString(e);
        }
        if (c.cuda_context)
            throw Error(VMAF_CUDA_ENODEV, "a CUDA context was given, but " + out.message);
        return out;
    }
    DriverApi api;
    ContextScope scope(api, c.cuda_context);
    int dev = c.cuda_device < 0 ? 0 : c.cuda_device;
    if (c.cuda_context) {
        VMAF_CUDA_CHECK(cudaGetDevice(&dev));
        if (c.cuda_device >= 0 && c.cuda_device != dev)
            throw Error(VMAF_CUDA_EINVAL,
                        "cuda_device=" + std::to_string(c.cuda_device) +
                            " names another device than the CUDA frames' (" + describe_device(dev) +
                            "): leave cuda_device unset with CUDA frames (they are scored where "
                            "they are), or decode on device " +
                            std::to_string(c.cuda_device) + " (-hwaccel_device " +
                            std::to_string(c.cuda_device) + ")");
    } else {
        if (dev >= n) {
            std::string list;
            for (int i = 0; i < n; ++i) list += (i ? ", " : "") + describe_device(i);
            throw Error(VMAF_CUDA_ENODEV, "cuda_device=" + std::to_string(dev) +
                                              ": no such CUDA device (this machine has " +
                                              std::to_string(n) + ": " + list + ")");
        }
        VMAF_CUDA_CHECK(cudaSetDevice(dev));
    }
    const cudaError_t img = cuda::kernel_image_status();
    if (img != cudaSuccess) {
        int major = 0, minor = 0;
        if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess)
            cudaGetLastError();
        out.result = R::cannot_run;
        out.message = "CUDA " + describe_device(dev) + " cannot run this build's kernels, built for " +
                      std::string(VMAF_CUDA_ARCHS) + " (" + cudaGetErrorString(img) +
                      "); rebuild with -Dgpu_arch=" +
                      (major ? std::to_string(major * 10 + minor) : std::string("NN")) +
                      " or the default arch list";
        return out;
    }
    out.result = R::ok;
    return out;
}

} // namespace

CudaDeviceCheck check_cuda_device(const BackendConfig& c) {
    try {
        return check_device(c);
    } catch (const CudaError& e) {
        throw Error(VMAF_CUDA_ECUDA, e.what());
    }
}

std::unique_ptr<Backend> make_cuda_backend(const BackendConfig& c, const FramePlan& p) {
    try {
        return std::make_unique<CudaBackend>(c, p);
    } catch (const CudaError& e) {
        throw Error(e.code == cudaErrorMemoryAllocation ? VMAF_CUDA_ENOMEM : VMAF_CUDA_ECUDA,
                    e.what());
    }
}

} // namespace vmaf_cuda::engine

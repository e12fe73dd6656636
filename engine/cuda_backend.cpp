// SPDX-License-Identifier: BSD-2-Clause-Patent
// CUDA backend: every frame's integer stages run on the device, on the caller's stream
// and in the caller's context; only the accumulators (a few hundred bytes) come back,
// through a pinned ring with one event per slot. Nothing is allocated per frame and the
// host waits only when the ring is full or at flush.

#include "backend.h"
#include "error.h"

#include "adm.cuh"
#include "cuda_common.cuh"
#include "luma.cuh"
#include "motion.cuh"
#include "vif.cuh"

#include <cuda_runtime.h>

#include <deque>
#include <type_traits>

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

/// Device-side accumulators of one frame; copied back whole.
struct SlotLayout {
    std::size_t adm_off = 0, vif_off = 0, sad_off = 0, bytes = 0;
    SlotLayout(std::size_t n_adm, std::size_t n_vif) {
        static_assert(std::is_trivially_copyable_v<ref::AdmAccum>);
        static_assert(std::is_trivially_copyable_v<ref::VifAccum>);
        auto align = [](std::size_t v) { return (v + 255) & ~std::size_t(255); };
        adm_off = 0;
        vif_off = align(adm_off + n_adm * sizeof(ref::AdmAccum));
        sad_off = align(vif_off + n_vif * sizeof(ref::VifAccum));
        bytes = align(sad_off + sizeof(std::uint64_t));
    }
};

class CudaBackend final : public Backend {
public:
    CudaBackend(const BackendConfig& c, const ExtractorPlan& p)
        : cfg_(c), plan_(p), layout_(p.adm.size(), p.vif.size()) {
        ContextScope scope(api_, cfg_.cuda_context);
        if (!cfg_.cuda_context) VMAF_CUDA_CHECK(cudaSetDevice(cfg_.cuda_device));
        if (cfg_.cuda_stream) {
            stream_ = static_cast<cudaStream_t>(cfg_.cuda_stream);
        } else {
            // Blocking: ordered after work on the legacy default stream (e.g. an
            // NVDEC copy enqueued there), like the caller would expect.
            VMAF_CUDA_CHECK(cudaStreamCreateWithFlags(&own_stream_, cudaStreamDefault));
            stream_ = own_stream_;
        }
        // ADM, VIF and motion are independent: each runs on a stream of its own, forked
        // from and joined back into the caller's stream with events, so they overlap.
        for (auto& fs : feature_streams_)
            VMAF_CUDA_CHECK(cudaStreamCreateWithFlags(&fs, cudaStreamNonBlocking));
        VMAF_CUDA_CHECK(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
        for (auto& e : joins_) VMAF_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        for (const auto& o : plan_.adm)
            adm_.push_back(std::make_unique<cuda::AdmKernel>(c.width, c.height, c.bpc, o));
        for (const auto& o : plan_.vif)
            vif_.push_back(std::make_unique<cuda::VifKernel>(c.width, c.height, c.bpc, o));
        if (plan_.motion) motion_ = std::make_unique<cuda::MotionKernel>(c.width, c.height, c.bpc);

        ring_ = cfg_.frames_in_flight + 2;
        dev_acc_ = DeviceBuffer(layout_.bytes * ring_);
        host_acc_ = PinnedBuffer(layout_.bytes * ring_);
        events_.resize(ring_, nullptr);
        for (auto& e : events_) VMAF_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        // Owned planes for host input and for shifted (high-bit) layouts: two of each
        // kind so that frame N's reference is still intact for frame N+1's motion.
        bps_ = c.bpc > 8 ? 2 : 1;
        pitch_ = (std::size_t(c.width) * bps_ + 255) & ~std::size_t(255);
        for (int i = 0; i < 2; ++i) {
            own_ref_[i] = DeviceBuffer(pitch_ * c.height);
            own_dist_[i] = DeviceBuffer(pitch_ * c.height);
        }
    }

    ~CudaBackend() override {
        try {
            ContextScope scope(api_, cfg_.cuda_context);
            cudaStreamSynchronize(stream_);
            for (auto e : events_)
                if (e) cudaEventDestroy(e);
            for (auto e : joins_)
                if (e) cudaEventDestroy(e);
            if (fork_) cudaEventDestroy(fork_);
            for (auto fs : feature_streams_)
                if (fs) cudaStreamSynchronize(fs);
            adm_.clear();
            vif_.clear();
            motion_.reset();
            dev_acc_ = DeviceBuffer();
            host_acc_ = PinnedBuffer();
            for (auto& b : own_ref_) b = DeviceBuffer();
            for (auto& b : own_dist_) b = DeviceBuffer();
            for (auto fs : feature_streams_)
                if (fs) cudaStreamDestroy(fs);
            if (own_stream_) cudaStreamDestroy(own_stream_);
        } catch (...) {
        }
    }

    const char* name() const override { return "cuda"; }

    void submit(unsigned index, const VmafCudaPicture& r, const VmafCudaPicture& d) override {
        ContextScope scope(api_, cfg_.cuda_context);
        try {
            if (queue_.size() >= ring_)
                throw Error(VMAF_CUDA_EINTERNAL, "CUDA readback ring overflow");
            const unsigned slot = index % ring_;
            const bool scored = cfg_.n_subsample <= 1 || index % cfg_.n_subsample == 0;
            const DeviceLuma ref = prepare(r, own_ref_[index & 1]);
            DeviceLuma dist{};
            if (scored) dist = prepare(d, own_dist_[index & 1]);

            auto* dbase = dev_acc_.get<unsigned char>() + slot * layout_.bytes;
            VMAF_CUDA_CHECK(cudaMemsetAsync(dbase, 0, layout_.bytes, stream_));
            // Fork: the feature streams start after the inputs are ready on stream_.
            VMAF_CUDA_CHECK(cudaEventRecord(fork_, stream_));
            for (auto fs : feature_streams_) VMAF_CUDA_CHECK(cudaStreamWaitEvent(fs, fork_, 0));
            cudaStream_t s_adm = feature_streams_[0], s_vif = feature_streams_[1],
                         s_mot = feature_streams_[2];
            if (scored) {
                for (std::size_t i = 0; i < adm_.size(); ++i)
                    adm_[i]->enqueue(ref, dist,
                                     reinterpret_cast<ref::AdmAccum*>(dbase + layout_.adm_off) + i,
                                     s_adm);
                for (std::size_t i = 0; i < vif_.size(); ++i)
                    vif_[i]->enqueue(ref, dist,
                                     reinterpret_cast<ref::VifAccum*>(dbase + layout_.vif_off) + i,
                                     s_vif);
            }
            if (motion_ && index > 0)
                motion_->enqueue(prev_ref_, ref,
                                 reinterpret_cast<std::uint64_t*>(dbase + layout_.sad_off), s_mot);
            prev_ref_ = ref;
            // Join: stream_ continues (readback, the caller's next work) after all three.
            for (std::size_t k = 0; k < 3; ++k) {
                VMAF_CUDA_CHECK(cudaEventRecord(joins_[k], feature_streams_[k]));
                VMAF_CUDA_CHECK(cudaStreamWaitEvent(stream_, joins_[k], 0));
            }
            auto* hbase = host_acc_.get<unsigned char>() + slot * layout_.bytes;
            VMAF_CUDA_CHECK(cudaMemcpyAsync(hbase, dbase, layout_.bytes, cudaMemcpyDeviceToHost, stream_));
            VMAF_CUDA_CHECK(cudaEventRecord(events_[slot], stream_));
            queue_.push_back({index, scored, slot});
        } catch (const CudaError& e) {
            throw Error(e.code == cudaErrorMemoryAllocation ? VMAF_CUDA_ENOMEM : VMAF_CUDA_ECUDA,
                        e.what());
        }
    }

    bool retrieve(FrameAccum& out, bool wait) override {
        if (queue_.empty()) return false;
        ContextScope scope(api_, cfg_.cuda_context);
        const Pending p = queue_.front();
        cudaError_t st = wait ? cudaEventSynchronize(events_[p.slot]) : cudaEventQuery(events_[p.slot]);
        if (st == cudaErrorNotReady) return false;
        if (st != cudaSuccess)
            throw Error(VMAF_CUDA_ECUDA, std::string("CUDA work of frame ") + std::to_string(p.index) +
                                             " failed: " + cudaGetErrorString(st));
        queue_.pop_front();
        const auto* hbase = host_acc_.get<unsigned char>() + p.slot * layout_.bytes;
        out.index = p.index;
        out.scored = p.scored;
        out.adm.clear();
        out.vif.clear();
        if (p.scored) {
            const auto* a = reinterpret_cast<const ref::AdmAccum*>(hbase + layout_.adm_off);
            const auto* v = reinterpret_cast<const ref::VifAccum*>(hbase + layout_.vif_off);
            out.adm.assign(a, a + adm_.size());
            out.vif.assign(v, v + vif_.size());
        }
        out.sad = *reinterpret_cast<const std::uint64_t*>(hbase + layout_.sad_off);
        return true;
    }

    unsigned pending() const override { return unsigned(queue_.size()); }

private:
    struct Pending {
        unsigned index;
        bool scored;
        unsigned slot;
    };

    /// A device luma view of picture `p`, uploading host memory or shifting high-bit
    /// samples into `own` when needed (stream-ordered, nothing allocated).
    DeviceLuma prepare(const VmafCudaPicture& p, DeviceBuffer& own) {
        DeviceLuma v;
        v.width = cfg_.width;
        v.height = cfg_.height;
        v.bpc = cfg_.bpc;
        const std::size_t row = std::size_t(cfg_.width) * bps_;
        if (p.memory == VMAF_CUDA_MEMORY_HOST) {
            VMAF_CUDA_CHECK(cudaMemcpy2DAsync(own.get(), pitch_, p.luma, std::size_t(p.pitch), row,
                                              cfg_.height, cudaMemcpyHostToDevice, stream_));
            v.data = own.get();
            v.pitch = pitch_;
            if (p.shift) cuda::shift_luma(v, p.shift, own.get(), pitch_, stream_);
            return v;
        }
        v.data = p.luma;
        v.pitch = std::size_t(p.pitch);
        if (p.shift) {
            cuda::shift_luma(v, p.shift, own.get(), pitch_, stream_);
            v.data = own.get();
            v.pitch = pitch_;
        }
        return v;
    }

    DriverApi api_;
    BackendConfig cfg_;
    ExtractorPlan plan_;
    SlotLayout layout_;
    cudaStream_t stream_ = nullptr, own_stream_ = nullptr;
    cudaStream_t feature_streams_[3] = {}; ///< ADM, VIF, motion
    cudaEvent_t fork_ = nullptr, joins_[3] = {};
    std::vector<std::unique_ptr<cuda::AdmKernel>> adm_;
    std::vector<std::unique_ptr<cuda::VifKernel>> vif_;
    std::unique_ptr<cuda::MotionKernel> motion_;
    unsigned ring_ = 0;
    DeviceBuffer dev_acc_;
    PinnedBuffer host_acc_;
    std::vector<cudaEvent_t> events_;
    std::size_t bps_ = 1, pitch_ = 0;
    DeviceBuffer own_ref_[2], own_dist_[2];
    DeviceLuma prev_ref_{};
    std::deque<Pending> queue_;
};

} // namespace

bool cuda_device_available(std::string* why) {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        if (why) *why = e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device";
        cudaGetLastError(); // clear the sticky-free error so later calls start clean
        return false;
    }
    return true;
}

std::unique_ptr<Backend> make_cuda_backend(const BackendConfig& c, const ExtractorPlan& p) {
    std::string why;
    if (!c.cuda_context && !cuda_device_available(&why))
        throw Error(VMAF_CUDA_ENODEV, "backend=cuda asked, but no CUDA device is usable: " + why);
    try {
        return std::make_unique<CudaBackend>(c, p);
    } catch (const CudaError& e) {
        throw Error(e.code == cudaErrorMemoryAllocation ? VMAF_CUDA_ENOMEM : VMAF_CUDA_ECUDA,
                    e.what());
    }
}

} // namespace vmaf_cuda::engine

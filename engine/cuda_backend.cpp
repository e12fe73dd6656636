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

#include <algorithm>
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

/// One set of feature kernels with its three streams (ADM, VIF, motion). Frames go to
/// the lanes in turn, so two frames are computed at once; a lane's kernels (and their
/// scratch) only ever run on the lane's own streams, in frame order.
struct Lane {
    std::vector<std::unique_ptr<cuda::AdmKernel>> adm;
    std::vector<std::unique_ptr<cuda::VifKernel>> vif;
    std::unique_ptr<cuda::MotionKernel> motion;
    cudaStream_t stream[3] = {};   ///< ADM (also readback), VIF, motion
    cudaEvent_t join[3] = {};      ///< VIF and motion done (index 1, 2)
};

class CudaBackend final : public Backend {
public:
    /// Lanes: frames computed at once, half the frames in flight (1..4).
    static unsigned lane_count(unsigned frames_in_flight) {
        return std::clamp(frames_in_flight / 2, 1u, 4u);
    }
    /// Owned device planes (host input, high-bit layouts) per kind: frame i uses
    /// i % owned_; frame i - owned_ (and i - owned_ + 1's motion) must be done first.

    CudaBackend(const BackendConfig& c, const ExtractorPlan& p)
        : cfg_(c), plan_(p), layout_(p.adm.size(), p.vif.size()) {
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
        const unsigned lanes = lane_count(cfg_.frames_in_flight);
        owned_ = lanes + 2;
        lanes_.resize(lanes);
        for (Lane& l : lanes_) {
            for (auto& st : l.stream) VMAF_CUDA_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
            for (auto& e : l.join) VMAF_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
            for (const auto& o : plan_.adm)
                l.adm.push_back(std::make_unique<cuda::AdmKernel>(c.width, c.height, c.bpc, o));
            for (const auto& o : plan_.vif)
                l.vif.push_back(std::make_unique<cuda::VifKernel>(c.width, c.height, c.bpc, o));
            if (plan_.motion) l.motion = std::make_unique<cuda::MotionKernel>(c.width, c.height, c.bpc);
        }

        ring_ = std::max(cfg_.frames_in_flight + 2, owned_ + 2);
        dev_acc_ = DeviceBuffer(layout_.bytes * ring_);
        host_acc_ = PinnedBuffer(layout_.bytes * ring_);
        events_.resize(ring_, nullptr);
        for (auto& e : events_) VMAF_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        bps_ = c.bpc > 8 ? 2 : 1;
        pitch_ = (std::size_t(c.width) * bps_ + 255) & ~std::size_t(255);
        // Allocated on first use: device pictures without a shift never need them.
        own_ref_.resize(owned_);
        own_dist_.resize(owned_);
    }

    ~CudaBackend() override {
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
                l.adm.clear();
                l.vif.clear();
                l.motion.reset();
                for (auto e : l.join)
                    if (e) cudaEventDestroy(e);
                for (auto st : l.stream)
                    if (st) cudaStreamDestroy(st);
            }
            dev_acc_ = DeviceBuffer();
            host_acc_ = PinnedBuffer();
            own_ref_.clear();
            own_dist_.clear();
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
            Lane& lane = lanes_[index % lanes_.size()];

            // Inputs on the caller's stream (upload or shift into owned planes when needed).
            const bool owns = r.memory == VMAF_CUDA_MEMORY_HOST || r.shift ||
                              (scored && (d.memory == VMAF_CUDA_MEMORY_HOST || d.shift));
            if (owns && index >= owned_) {
                // The owned plane to be overwritten was last read by frame index - owned_
                // and, as the previous reference, by frame index - owned_ + 1's motion.
                VMAF_CUDA_CHECK(cudaStreamWaitEvent(stream_, events_[(index - owned_) % ring_], 0));
                VMAF_CUDA_CHECK(cudaStreamWaitEvent(stream_, events_[(index - owned_ + 1) % ring_], 0));
            }
            const DeviceLuma ref = prepare(r, own_ref_[index % owned_]);
            DeviceLuma dist{};
            if (scored) dist = prepare(d, own_dist_[index % owned_]);

            auto* dbase = dev_acc_.get<unsigned char>() + slot * layout_.bytes;
            VMAF_CUDA_CHECK(cudaMemsetAsync(dbase, 0, layout_.bytes, stream_));
            // Fork: the lane's streams start once the inputs are ready on stream_.
            VMAF_CUDA_CHECK(cudaEventRecord(fork_, stream_));
            for (auto st : lane.stream) VMAF_CUDA_CHECK(cudaStreamWaitEvent(st, fork_, 0));
            if (scored) {
                for (std::size_t i = 0; i < lane.adm.size(); ++i)
                    lane.adm[i]->enqueue(ref, dist,
                                         reinterpret_cast<ref::AdmAccum*>(dbase + layout_.adm_off) + i,
                                         lane.stream[0]);
                for (std::size_t i = 0; i < lane.vif.size(); ++i)
                    lane.vif[i]->enqueue(ref, dist,
                                         reinterpret_cast<ref::VifAccum*>(dbase + layout_.vif_off) + i,
                                         lane.stream[1]);
            }
            if (lane.motion && index > 0)
                lane.motion->enqueue(prev_ref_, ref,
                                     reinterpret_cast<std::uint64_t*>(dbase + layout_.sad_off),
                                     lane.stream[2]);
            prev_ref_ = ref;
            // Join on the lane's first stream, read the accumulators back, mark the slot.
            for (int k = 1; k < 3; ++k) {
                VMAF_CUDA_CHECK(cudaEventRecord(lane.join[k], lane.stream[k]));
                VMAF_CUDA_CHECK(cudaStreamWaitEvent(lane.stream[0], lane.join[k], 0));
            }
            auto* hbase = host_acc_.get<unsigned char>() + slot * layout_.bytes;
            VMAF_CUDA_CHECK(cudaMemcpyAsync(hbase, dbase, layout_.bytes, cudaMemcpyDeviceToHost,
                                            lane.stream[0]));
            VMAF_CUDA_CHECK(cudaEventRecord(events_[slot], lane.stream[0]));
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
            out.adm.assign(a, a + plan_.adm.size());
            out.vif.assign(v, v + plan_.vif.size());
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
    /// samples into `own` when needed (stream-ordered; `own` is allocated once).
    DeviceLuma prepare(const VmafCudaPicture& p, DeviceBuffer& own) {
        DeviceLuma v;
        v.width = cfg_.width;
        v.height = cfg_.height;
        v.bpc = cfg_.bpc;
        const std::size_t row = std::size_t(cfg_.width) * bps_;
        const bool needs_own = p.memory == VMAF_CUDA_MEMORY_HOST || p.shift;
        if (needs_own && !own.get()) own = DeviceBuffer(pitch_ * cfg_.height);
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
    cudaEvent_t fork_ = nullptr;
    std::vector<Lane> lanes_;
    unsigned ring_ = 0;
    DeviceBuffer dev_acc_;
    PinnedBuffer host_acc_;
    std::vector<cudaEvent_t> events_;
    std::size_t bps_ = 1, pitch_ = 0;
    unsigned owned_ = 0;
    std::vector<DeviceBuffer> own_ref_, own_dist_;
    DeviceLuma prev_ref_{};
    std::deque<Pending> queue_;
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

std::unique_ptr<Backend> make_cuda_backend(const BackendConfig& c, const ExtractorPlan& p) {
    try {
        return std::make_unique<CudaBackend>(c, p);
    } catch (const CudaError& e) {
        throw Error(e.code == cudaErrorMemoryAllocation ? VMAF_CUDA_ENOMEM : VMAF_CUDA_ECUDA,
                    e.what());
    }
}

} // namespace vmaf_cuda::engine

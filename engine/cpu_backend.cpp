// SPDX-License-Identifier: BSD-2-Clause-Patent
// CPU backend: the reference/ integer stages, run on host copies of the luma planes.
// Frames are independent once the previous reference luma is kept, so with
// n_threads > 1 several frames are computed at once by a small worker pool.

#include "backend.h"
#include "error.h"

#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

namespace vmaf_cuda::engine {
namespace {

/// A tightly packed luma plane owned by the backend (values in the low bits).
struct OwnedLuma {
    std::vector<std::uint8_t> bytes;
    ref::LumaView view(unsigned w, unsigned h, unsigned bpc) const {
        return ref::LumaView{bytes.data(), std::ptrdiff_t(w) * (bpc > 8 ? 2 : 1), w, h, bpc};
    }
};

void copy_luma(const VmafCudaPicture& p, unsigned w, unsigned h, unsigned bpc, OwnedLuma& out) {
    const std::size_t bps = bpc > 8 ? 2 : 1;
    out.bytes.resize(std::size_t(w) * h * bps);
    for (unsigned y = 0; y < h; ++y) {
        const auto* src = static_cast<const std::uint8_t*>(p.luma) + p.pitch * std::ptrdiff_t(y);
        std::uint8_t* dst = out.bytes.data() + std::size_t(y) * w * bps;
        if (p.shift == 0) {
            std::memcpy(dst, src, w * bps);
        } else if (bps == 2) {
            for (unsigned x = 0; x < w; ++x) {
                std::uint16_t v;
                std::memcpy(&v, src + 2 * x, 2);
                v = std::uint16_t(v >> p.shift);
                std::memcpy(dst + 2 * x, &v, 2);
            }
        } else {
            for (unsigned x = 0; x < w; ++x) dst[x] = std::uint8_t(src[x] >> p.shift);
        }
    }
}

/// Per-worker scratch for every extractor of the plan.
struct Scratch {
    std::vector<ref::AdmScratch> adm;
    std::vector<ref::VifScratch> vif;
    ref::MotionScratch motion;
    Scratch(const BackendConfig& c, const ExtractorPlan& p) : motion(c.width, c.height, c.bpc) {
        for (std::size_t i = 0; i < p.adm.size(); ++i) adm.emplace_back(c.width, c.height);
        for (std::size_t i = 0; i < p.vif.size(); ++i) vif.emplace_back(c.width, c.height, c.bpc);
    }
};

struct Job {
    unsigned index = 0;
    std::shared_ptr<const OwnedLuma> prev_ref, ref, dist;
    FrameAccum result;
    bool done = false;
    std::string error;
};

class CpuBackend final : public Backend {
public:
    CpuBackend(const BackendConfig& c, const ExtractorPlan& p) : cfg_(c), plan_(p) {
        const unsigned n = c.n_threads > 1 ? c.n_threads : 0;
        if (n == 0) {
            inline_scratch_ = std::make_unique<Scratch>(cfg_, plan_);
        } else {
            // Scratch is made here, so that a failure (size, memory) is an error of open.
            std::vector<std::unique_ptr<Scratch>> scratch;
            for (unsigned i = 0; i < n; ++i) scratch.push_back(std::make_unique<Scratch>(cfg_, plan_));
            try {
                for (unsigned i = 0; i < n; ++i)
                    workers_.emplace_back([this, s = std::shared_ptr<Scratch>(std::move(scratch[i]))] {
                        work(*s);
                    });
            } catch (...) {
                stop_workers(); // a thread could not start: end the others before failing
                throw;
            }
        }
    }
    ~CpuBackend() override { stop_workers(); }

    const char* name() const override { return "cpu"; }

    void submit(unsigned index, const VmafCudaPicture& r, const VmafCudaPicture& d) override {
        if (r.memory != VMAF_CUDA_MEMORY_HOST || d.memory != VMAF_CUDA_MEMORY_HOST)
            throw Error(VMAF_CUDA_ENODEV,
                        "device pictures need the CUDA backend, but this session runs on the CPU");
        auto ref = std::make_shared<OwnedLuma>();
        auto dist = std::make_shared<OwnedLuma>();
        copy_luma(r, cfg_.width, cfg_.height, cfg_.bpc, *ref);
        const bool scored = cfg_.n_subsample <= 1 || index % cfg_.n_subsample == 0;
        if (scored) copy_luma(d, cfg_.width, cfg_.height, cfg_.bpc, *dist);
        auto job = std::make_shared<Job>();
        job->index = index;
        job->prev_ref = prev_ref_;
        job->ref = ref;
        job->dist = scored ? dist : nullptr;
        prev_ref_ = ref;
        if (workers_.empty()) {
            compute(*job, *inline_scratch_);
            job->done = true;
            queue_.push_back(job);
            return;
        }
        {
            std::lock_guard<std::mutex> lk(mu_);
            queue_.push_back(job);
            todo_.push_back(job);
        }
        cv_work_.notify_one();
    }

    bool retrieve(FrameAccum& out, bool wait) override {
        std::unique_lock<std::mutex> lk(mu_);
        if (queue_.empty()) return false;
        if (!queue_.front()->done) {
            if (!wait) return false;
            cv_done_.wait(lk, [&] { return queue_.front()->done; });
        }
        auto job = queue_.front();
        queue_.pop_front();
        if (!job->error.empty()) throw Error(VMAF_CUDA_EINTERNAL, job->error);
        out = std::move(job->result);
        return true;
    }

    unsigned pending() const override {
        std::lock_guard<std::mutex> lk(mu_);
        return unsigned(queue_.size());
    }

private:
    void stop_workers() {
        {
            std::lock_guard<std::mutex> lk(mu_);
            stop_ = true;
        }
        cv_work_.notify_all();
        for (auto& t : workers_) t.join();
        workers_.clear();
    }

    void compute(Job& job, Scratch& s) {
        const unsigned w = cfg_.width, h = cfg_.height, bpc = cfg_.bpc;
        FrameAccum& fa = job.result;
        fa.index = job.index;
        fa.scored = job.dist != nullptr;
        const ref::LumaView rv = job.ref->view(w, h, bpc);
        if (fa.scored) {
            const ref::LumaView dv = job.dist->view(w, h, bpc);
            fa.adm.resize(plan_.adm.size());
            fa.vif.resize(plan_.vif.size());
            for (std::size_t i = 0; i < plan_.adm.size(); ++i)
                ref::adm_accumulate(rv, dv, plan_.adm[i], s.adm[i], fa.adm[i]);
            for (std::size_t i = 0; i < plan_.vif.size(); ++i)
                ref::vif_accumulate(rv, dv, plan_.vif[i], s.vif[i], fa.vif[i]);
        }
        fa.sad = 0;
        if (plan_.motion && job.prev_ref)
            fa.sad = ref::motion_sad(job.prev_ref->view(w, h, bpc), rv, s.motion);
    }

    void work(Scratch& scratch) {
        for (;;) {
            std::shared_ptr<Job> job;
            {
                std::unique_lock<std::mutex> lk(mu_);
                cv_work_.wait(lk, [&] { return stop_ || !todo_.empty(); });
                if (stop_) return;
                job = todo_.front();
                todo_.pop_front();
            }
            std::string err;
            try {
                compute(*job, scratch);
            } catch (const std::exception& e) {
                err = e.what();
            }
            {
                std::lock_guard<std::mutex> lk(mu_);
                job->error = err;
                job->done = true;
            }
            cv_done_.notify_all();
        }
    }

    BackendConfig cfg_;
    ExtractorPlan plan_;
    std::shared_ptr<const OwnedLuma> prev_ref_;
    std::unique_ptr<Scratch> inline_scratch_;
    std::vector<std::thread> workers_;
    mutable std::mutex mu_;
    std::condition_variable cv_work_, cv_done_;
    std::deque<std::shared_ptr<Job>> queue_, todo_;
    bool stop_ = false;
};

} // namespace

std::unique_ptr<Backend> make_cpu_backend(const BackendConfig& c, const ExtractorPlan& p) {
    return std::make_unique<CpuBackend>(c, p);
}

} // namespace vmaf_cuda::engine

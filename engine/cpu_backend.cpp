// SPDX-License-Identifier: BSD-2-Clause-Patent
// CPU backend: the features' CPU stages (reference/), run on host copies of the planes.
// Frames are independent once the previous pictures are kept, so with
// n_threads > 1 several frames are computed at once by a small worker pool.

#include "backend.h"
#include "error.h"
#include "thread_name.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <limits>
#include <deque>
#include <mutex>
#include <thread>

namespace vmaf_cuda::engine {
namespace {

/// A picture owned by the backend: tightly packed planes (values in the low bits),
/// chroma de-interleaved, when the plan reads it.
struct OwnedPicture {
    std::vector<std::uint8_t> planes[3];
    ref::YuvView view;
};

void copy_plane(const void* base, std::ptrdiff_t pitch, unsigned step, unsigned shift, unsigned w,
                unsigned h, unsigned bpc, std::vector<std::uint8_t>& out, ref::LumaView& v) {
    const std::size_t bps = bpc > 8 ? 2 : 1;
    out.resize(std::size_t(w) * h * bps);
    for (unsigned y = 0; y < h; ++y) {
        const auto* src = static_cast<const std::uint8_t*>(base) + pitch * std::ptrdiff_t(y);
        std::uint8_t* dst = out.data() + std::size_t(y) * w * bps;
        if (shift == 0 && step == 1) {
            std::memcpy(dst, src, w * bps);
        } else if (bps == 2) {
            for (unsigned x = 0; x < w; ++x) {
                std::uint16_t s;
                std::memcpy(&s, src + 2 * std::size_t(x) * step, 2);
                s = std::uint16_t(s >> shift);
                std::memcpy(dst + 2 * x, &s, 2);
            }
        } else {
            for (unsigned x = 0; x < w; ++x) dst[x] = std::uint8_t(src[std::size_t(x) * step] >> shift);
        }
    }
    v = ref::LumaView{out.data(), std::ptrdiff_t(w * bps), w, h, bpc};
}

void copy_picture(const VmafCudaPicture& p, const BackendConfig& c, bool chroma, OwnedPicture& out) {
    copy_plane(p.luma, p.pitch, 1, p.shift, c.width, c.height, c.bpc, out.planes[0], out.view.y);
    out.view.chroma = c.chroma;
    if (!chroma || c.chroma == 400) return;
    const unsigned cw = ref::yuv_chroma_width(c.width, c.chroma);
    const unsigned ch = ref::yuv_chroma_height(c.height, c.chroma);
    const unsigned step = p.chroma_step == 2 ? 2 : 1;
    copy_plane(p.chroma[0], p.chroma_pitch, step, p.shift, cw, ch, c.bpc, out.planes[1], out.view.cb);
    copy_plane(p.chroma[1], p.chroma_pitch, step, p.shift, cw, ch, c.bpc, out.planes[2], out.view.cr);
}

/// One worker's stages, one per feature of the plan.
struct Scratch {
    std::vector<std::unique_ptr<CpuStage>> stages;
    explicit Scratch(const FramePlan& p) {
        for (const FeatureInstance* f : p.features) stages.push_back(f->cpu());
    }
};

struct Job {
    unsigned index = 0;
    bool scored = false;
    std::uint64_t skip = 0;
    std::shared_ptr<const OwnedPicture> ref, dist;
    /// A ladder's frame: the distorted picture of every rendition (dists[0] == dist).
    std::vector<std::shared_ptr<const OwnedPicture>> dists;
    std::shared_ptr<const OwnedPicture> prev_ref[2], prev_dist[2];
    FrameResult result;
    unsigned renditions = 1;
    bool done = false;
    std::string error;
};

class CpuBackend final : public Backend {
public:
    CpuBackend(const BackendConfig& c, const FramePlan& p) : cfg_(c), plan_(p) {
        const unsigned n = c.n_threads > 1 ? c.n_threads : 0;
        if (n == 0) {
            inline_scratch_ = std::make_unique<Scratch>(plan_);
        } else {
            // Scratch is made here, so that a failure (size, memory) is an error of open.
            std::vector<std::unique_ptr<Scratch>> scratch;
            for (unsigned i = 0; i < n; ++i) scratch.push_back(std::make_unique<Scratch>(plan_));
            try {
                for (unsigned i = 0; i < n; ++i)
                    workers_.emplace_back([this, s = std::shared_ptr<Scratch>(std::move(scratch[i]))] {
                        name_this_thread("vmaf-cpu");
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
    BackendCaps caps() const override {
        BackendCaps c;
        c.workers = cfg_.n_threads; // n_threads frames at once on its workers
        return c;
    }
    std::unique_ptr<Backend> make_like(const BackendConfig& c, const FramePlan& p) const override {
        return make_cpu_backend(c, p);
    }

    void submit(unsigned index, const VmafCudaPicture& r, const VmafCudaPicture& d,
                std::uint64_t skip) override {
        const VmafCudaPicture* dp = &d;
        submit_frame(index, r, &dp, 1, skip);
    }

    void submit_ladder(unsigned index, const VmafCudaPicture& r, const VmafCudaPicture* const* dists,
                       unsigned n) override {
        if (!dists || n < 1 || n > cfg_.renditions)
            throw Error(VMAF_CUDA_EINTERNAL, "ladder frame with " + std::to_string(n) +
                                                 " renditions (1.." + std::to_string(cfg_.renditions) + ")");
        submit_frame(index, r, dists, n, 0);
    }

private:
    void submit_frame(unsigned index, const VmafCudaPicture& r, const VmafCudaPicture* const* d,
                      unsigned n, std::uint64_t skip) {
        bool host = r.memory == VMAF_CUDA_MEMORY_HOST;
        for (unsigned k = 0; k < n; ++k) host = host && d[k]->memory == VMAF_CUDA_MEMORY_HOST;
        if (!host)
            throw Error(VMAF_CUDA_ENODEV,
                        "device pictures need the CUDA backend, but this session runs on the CPU");
        const bool scored = cfg_.scored(index);
        auto ref = std::make_shared<OwnedPicture>();
        copy_picture(r, cfg_, plan_.chroma, *ref);
        auto job = std::make_shared<Job>();
        if (scored || plan_.dist_every_frame)
            for (unsigned k = 0; k < n; ++k) {
                auto dist = std::make_shared<OwnedPicture>();
                copy_picture(*d[k], cfg_, plan_.chroma, *dist);
                job->dists.push_back(std::move(dist));
            }
        std::shared_ptr<const OwnedPicture> dist = job->dists.empty() ? nullptr : job->dists[0];
        job->index = index;
        job->scored = scored;
        job->skip = skip;
        job->ref = ref;
        job->dist = dist;
        job->renditions = n;
        for (int k = 0; k < 2; ++k) {
            job->prev_ref[k] = prev_ref_[k];
            job->prev_dist[k] = prev_dist_[k];
        }
        // Keep as many previous pictures as the plan reads.
        prev_ref_[1] = prev_ref_[0];
        prev_dist_[1] = prev_dist_[0];
        prev_ref_[0] = plan_.history ? ref : nullptr;
        prev_dist_[0] = plan_.dist_history ? dist : nullptr;
        if (plan_.history < 2) prev_ref_[1] = nullptr;
        if (plan_.dist_history < 2) prev_dist_[1] = nullptr;
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

public:
    bool retrieve(FrameResult& out, bool wait) override {
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
        FrameResult& fr = job.result;
        fr.index = job.index;
        fr.scored = job.scored;
        const unsigned n = job.renditions;
        fr.values.assign(plan_.n_values * n, std::numeric_limits<double>::quiet_NaN());
        fr.series.assign(plan_.n_series * n, 0.0);
        CpuFrame f;
        f.index = job.index;
        f.ref = &job.ref->view;
        f.dist = job.dist ? &job.dist->view : nullptr;
        for (int k = 0; k < 2; ++k) {
            f.prev_ref[k] = job.prev_ref[k] ? &job.prev_ref[k]->view : nullptr;
            f.prev_dist[k] = job.prev_dist[k] ? &job.prev_dist[k]->view : nullptr;
        }
        for (std::size_t i = 0; i < plan_.features.size(); ++i) {
            if (!plan_.runs(i, job.scored, job.skip)) continue;
            const FeatureInstance& fi = *plan_.features[i];
            // A ladder's frame: ladder-shared features once per rendition (block r), the
            // reference-only ones once, their values repeated in every block.
            const bool per_rendition = n > 1 && !fi.reference_only();
            for (unsigned r = 0; r < (per_rendition ? n : 1u); ++r) {
                if (per_rendition) f.dist = &job.dists[r]->view;
                s.stages[i]->compute(f, fr.values.data() + r * plan_.n_values + plan_.out_offset[i],
                                     fr.series.data() + r * plan_.n_series + plan_.series_offset[i]);
            }
            f.dist = job.dist ? &job.dist->view : nullptr;
            if (per_rendition) continue;
            for (unsigned r = 1; r < n; ++r) {
                std::copy_n(fr.values.data() + plan_.out_offset[i], fi.outputs().size(),
                            fr.values.data() + r * plan_.n_values + plan_.out_offset[i]);
                std::copy_n(fr.series.data() + plan_.series_offset[i], fi.series_width(),
                            fr.series.data() + r * plan_.n_series + plan_.series_offset[i]);
            }
        }
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
    FramePlan plan_;
    std::shared_ptr<const OwnedPicture> prev_ref_[2], prev_dist_[2];
    std::unique_ptr<Scratch> inline_scratch_;
    std::vector<std::thread> workers_;
    mutable std::mutex mu_;
    std::condition_variable cv_work_, cv_done_;
    std::deque<std::shared_ptr<Job>> queue_, todo_;
    bool stop_ = false;
};

} // namespace

std::unique_ptr<Backend> make_cpu_backend(const BackendConfig& c, const FramePlan& p) {
    return std::make_unique<CpuBackend>(c, p);
}

} // namespace vmaf_cuda::engine

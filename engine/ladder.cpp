// SPDX-License-Identifier: BSD-2-Clause-Patent
// The ladder C API (vmaf_cuda.h, API 4): one reference, N distorted renditions, each
// rendition a session of its own that gets its frames through the ladder.

#include "vmaf_cuda.h"

#include "api_internal.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <string>
#include <vector>

using vmaf_cuda::api::guarded_to;
using vmaf_cuda::api::write_err;

namespace vmaf_cuda::engine {
namespace {

/// The shared features of a ladder, run on a backend of the renditions' kind: the
/// reference-only ones (motion) once per reference frame, the ladder-shared ones (VIF,
/// ADM) for all in-sync renditions at once, the reference's side once (on the CUDA
/// backend; the CPU backend runs them per rendition). A rendition uses them while it has
/// had a frame at every reference frame since the first (then its previous reference
/// pictures and its frame index are the ladder's); a rendition that started later or
/// skipped a reference frame computes them itself, as a session of its own would.
class LadderShare final : public ReferenceShare {
public:
    LadderShare(const Session& like, std::vector<const FeatureInstance*> features, unsigned renditions)
        : plan_(std::move(features)), backend_(like.make_backend(plan_, renditions)),
          // as deep as the renditions' sessions, but no deeper than the share's own
          // backend holds (its motion-only plan has no deep pipeline of its own)
          limit_(std::max(std::min(like.in_flight(), backend_->capacity()), 1u)) {}

    const FramePlan& plan() const override { return plan_; }

    /// Whether ladder frame `ladder_index` can be shared: only while every reference
    /// frame so far went to the share (it never resumes after a gap).
    bool open_for(unsigned ladder_index) const { return ladder_index == submitted_; }

    /// Ladder frame `ladder_index` for the consumers' distorted pictures (block r of its
    /// result belongs to dists[r]).
    void submit(unsigned ladder_index, const VmafCudaPicture& ref,
                const std::vector<const VmafCudaPicture*>& dists) {
        while (backend_->pending() >= limit_) collect(true);
        backend_->submit_ladder(ladder_index, ref, dists.data(), unsigned(dists.size()));
        entries_[ladder_index].consumers = unsigned(dists.size());
        ++submitted_;
        collect(false);
    }

    const FrameResult& result(unsigned ladder_index) override {
        for (;;) {
            auto it = entries_.find(ladder_index);
            if (it == entries_.end())
                throw Error(VMAF_CUDA_EINTERNAL, "ladder: no shared reference frame " +
                                                      std::to_string(ladder_index));
            if (it->second.ready) return it->second.result;
            if (!collect(true))
                throw Error(VMAF_CUDA_EINTERNAL, "ladder: shared reference frame " +
                                                      std::to_string(ladder_index) + " never came");
        }
    }

    void release(unsigned ladder_index) override {
        auto it = entries_.find(ladder_index);
        if (it != entries_.end() && --it->second.consumers == 0) entries_.erase(it);
    }

    /// Reference frames whose pictures the share no longer reads. With nothing pending it
    /// reads none: the previous reference pictures its next frame would read are held by
    /// the in-sync renditions (their sessions keep their history), and once the share has
    /// closed (a ladder frame without in-sync rendition) it reads nothing ever again.
    unsigned released() const {
        const unsigned history = plan_.history;
        if (backend_->pending() == 0) return std::numeric_limits<unsigned>::max();
        return retrieved_ > history ? retrieved_ - history : 0;
    }

private:
    struct Entry {
        FrameResult result;
        unsigned consumers = 0;
        bool ready = false;
    };

    bool collect(bool wait) {
        FrameResult fr;
        bool any = false;
        while (backend_->retrieve(fr, wait && !any)) {
            any = true;
            ++retrieved_;
            auto it = entries_.find(fr.index);
            if (it == entries_.end()) continue; // no consumer left
            it->second.result = std::move(fr);
            it->second.ready = true;
        }
        return any;
    }

    FramePlan plan_;
    std::unique_ptr<Backend> backend_;
    unsigned limit_;
    unsigned submitted_ = 0, retrieved_ = 0;
    std::map<unsigned, Entry> entries_;
};

} // namespace
} // namespace vmaf_cuda::engine

struct VmafCudaLadder {
    std::vector<VmafCudaSession*> renditions;
    /// Per rendition: the ladder frame of each of its frames not yet released, oldest
    /// first; base[k] is the rendition's frame number of the front.
    std::vector<std::deque<unsigned>> ladder_frame;
    std::vector<unsigned> base;
    unsigned sent = 0; ///< vmaf_cuda_ladder_send() calls in this segment
    unsigned sent_base = 0; ///< and in the earlier segments (vmaf_cuda_ladder_reopen())
    std::string error;
    std::unique_ptr<vmaf_cuda::engine::LadderShare> share; ///< null: nothing to share

    ~VmafCudaLadder() {
        for (VmafCudaSession* s : renditions) delete s;
        share.reset();
    }
};

namespace {

/// Drops the released frames from the front of rendition k's map.
void trim(VmafCudaLadder& l, unsigned k) {
    const unsigned rel = l.renditions[k]->impl->pictures_released();
    while (!l.ladder_frame[k].empty() && l.base[k] < rel) {
        l.ladder_frame[k].pop_front();
        ++l.base[k];
    }
}

} // namespace

extern "C" {

int vmaf_cuda_ladder_open(VmafCudaLadder** out, const VmafCudaSettings* s, unsigned renditions,
                          char* err, size_t err_size) {
    if (out) *out = nullptr;
    write_err(err, err_size, "");
    if (!out || !s) {
        write_err(err, err_size, "vmaf_cuda_ladder_open: NULL argument");
        return VMAF_CUDA_EINVAL;
    }
    if (renditions < 1 || renditions > VMAF_CUDA_MAX_RENDITIONS) {
        write_err(err, err_size, "vmaf_cuda_ladder_open: renditions=" + std::to_string(renditions) +
                                     " is out of range (1.." +
                                     std::to_string(VMAF_CUDA_MAX_RENDITIONS) + ")");
        return VMAF_CUDA_EINVAL;
    }
    std::string msg;
    VmafCudaLadder* l = nullptr;
    const int rc = guarded_to(&msg, [&] {
        auto lad = std::make_unique<VmafCudaLadder>();
        lad->ladder_frame.resize(renditions);
        lad->base.assign(renditions, 0);
        for (unsigned k = 0; k < renditions; ++k) {
            auto vs = std::make_unique<VmafCudaSession>();
            vs->ladder = true;
            vs->impl = std::make_unique<vmaf_cuda::engine::Session>(*s, renditions);
            lad->renditions.push_back(vs.release());
        }
        auto shared = lad->renditions[0]->impl->shared_features();
        if (renditions > 1 && !shared.empty())
            lad->share = std::make_unique<vmaf_cuda::engine::LadderShare>(
                *lad->renditions[0]->impl, std::move(shared), renditions);
        l = lad.release();
        return VMAF_CUDA_OK;
    });
    if (rc < 0) {
        write_err(err, err_size, msg);
        return rc;
    }
    *out = l;
    return VMAF_CUDA_OK;
}

void vmaf_cuda_ladder_close(VmafCudaLadder* l) {
    try {
        delete l;
    } catch (...) {
    }
}

unsigned vmaf_cuda_ladder_renditions(const VmafCudaLadder* l) {
    return l ? unsigned(l->renditions.size()) : 0;
}

VmafCudaSession* vmaf_cuda_ladder_session(VmafCudaLadder* l, unsigned k) {
    return l && k < l->renditions.size() ? l->renditions[k] : nullptr;
}

int vmaf_cuda_ladder_send(VmafCudaLadder* l, const VmafCudaPicture* ref,
                          const VmafCudaPicture* const* dist) {
    if (!l) return VMAF_CUDA_EINVAL;
    if (!ref || !dist) {
        l->error = "vmaf_cuda_ladder_send: NULL argument (use vmaf_cuda_ladder_flush at the end)";
        return VMAF_CUDA_EINVAL;
    }
    const unsigned n = unsigned(l->renditions.size());
    for (unsigned k = 0; k < n; ++k)
        if (dist[k] && l->renditions[k]->impl->flushed()) {
            l->error = "vmaf_cuda_ladder_send: rendition " + std::to_string(k) +
                       " was flushed (ended) and cannot take more frames";
            return VMAF_CUDA_ESTATE;
        }
    // Renditions that had a frame at every reference frame so far share the work of this
    // one: block[k] is rendition k's block of the share's result, or -1.
    std::vector<int> block(n, -1);
    std::vector<const VmafCudaPicture*> consumers;
    if (l->share && l->share->open_for(l->sent))
        for (unsigned k = 0; k < n; ++k)
            if (dist[k] && l->renditions[k]->impl->sent() == l->sent) {
                block[k] = int(consumers.size());
                consumers.push_back(dist[k]);
            }
    // Refuse a bad picture before anything of this frame is sent (the share reads the
    // consumers' pictures; a refusal half-way would leave the renditions out of step).
    for (unsigned k = 0; k < n; ++k) {
        if (!dist[k]) continue;
        VmafCudaSession& vs = *l->renditions[k];
        const int rc = guarded_to(&l->error, [&] {
            vs.impl->check_pair(*ref, *dist[k]);
            return VMAF_CUDA_OK;
        });
        if (rc < 0) {
            l->error = "rendition " + std::to_string(k) + ": " + l->error;
            vs.error = l->error;
            return rc;
        }
    }
    if (!consumers.empty()) {
        const int rc = guarded_to(&l->error, [&] {
            l->share->submit(l->sent, *ref, consumers);
            return VMAF_CUDA_OK;
        });
        if (rc < 0) return rc;
    }
    for (unsigned k = 0; k < n; ++k) {
        if (!dist[k]) continue;
        VmafCudaSession& vs = *l->renditions[k];
        const int rc = guarded_to(&l->error, [&] {
            if (block[k] >= 0) vs.impl->send(*ref, *dist[k], l->share.get(), l->sent, unsigned(block[k]));
            else vs.impl->send(*ref, *dist[k]);
            return VMAF_CUDA_OK;
        });
        if (rc < 0) {
            l->error = "rendition " + std::to_string(k) + ": " + l->error;
            vs.error = l->error;
            return rc;
        }
        l->ladder_frame[k].push_back(l->sent);
        trim(*l, k);
    }
    ++l->sent;
    return VMAF_CUDA_OK;
}

int vmaf_cuda_ladder_flush(VmafCudaLadder* l) {
    if (!l) return VMAF_CUDA_EINVAL;
    for (unsigned k = 0; k < l->renditions.size(); ++k) {
        VmafCudaSession& vs = *l->renditions[k];
        if (vs.impl->flushed()) continue;
        const int rc = guarded_to(&l->error, [&] {
            vs.impl->flush();
            return VMAF_CUDA_OK;
        });
        if (rc < 0) {
            l->error = "rendition " + std::to_string(k) + ": " + l->error;
            return rc;
        }
    }
    return VMAF_CUDA_OK;
}

unsigned vmaf_cuda_ladder_pictures_released(const VmafCudaLadder* l) {
    if (!l) return 0;
    auto& m = const_cast<VmafCudaLadder&>(*l);
    unsigned released = l->sent;
    if (l->share) released = std::min(released, l->share->released());
    for (unsigned k = 0; k < l->renditions.size(); ++k) {
        trim(m, k);
        if (!m.ladder_frame[k].empty() && m.ladder_frame[k].front() < released)
            released = m.ladder_frame[k].front();
    }
    return l->sent_base + released;
}

int vmaf_cuda_ladder_reopen(VmafCudaLadder* l, const VmafCudaSettings* s, char* err,
                            size_t err_size) {
    write_err(err, err_size, "");
    if (!l || !s) {
        write_err(err, err_size, "vmaf_cuda_ladder_reopen: NULL argument");
        return VMAF_CUDA_EINVAL;
    }
    const unsigned n = unsigned(l->renditions.size());
    std::string msg;
    const int rc = guarded_to(&msg, [&] {
        using vmaf_cuda::engine::Session;
        for (unsigned k = 0; k < n; ++k) l->renditions[k]->impl->flush();
        l->share.reset(); // its device memory, before the new segment's
        std::vector<std::unique_ptr<Session>> next;
        for (unsigned k = 0; k < n; ++k) {
            next.push_back(std::make_unique<Session>(*s, n));
            if (next.back()->names() != l->renditions[k]->impl->names())
                throw vmaf_cuda::engine::Error(
                    VMAF_CUDA_EINVAL, "vmaf_cuda_ladder_reopen: the new settings score other "
                                      "features or models than the stream so far");
        }
        for (unsigned k = 0; k < n; ++k) {
            VmafCudaSession& vs = *l->renditions[k];
            next[k]->adopt(std::move(vs.impl));
            vs.impl = std::move(next[k]);
            l->ladder_frame[k].clear();
            l->base[k] = 0;
        }
        l->sent_base += l->sent;
        l->sent = 0;
        auto shared = l->renditions[0]->impl->shared_features();
        if (n > 1 && !shared.empty())
            l->share = std::make_unique<vmaf_cuda::engine::LadderShare>(
                *l->renditions[0]->impl, std::move(shared), n);
        return VMAF_CUDA_OK;
    });
    if (rc < 0) {
        l->error = msg;
        write_err(err, err_size, msg);
    }
    return rc;
}

unsigned vmaf_cuda_ladder_lookahead(const VmafCudaLadder* l) {
    return l && !l->renditions.empty() ? l->renditions[0]->impl->lookahead() : 0;
}

const char* vmaf_cuda_ladder_error_message(const VmafCudaLadder* l) {
    return l ? l->error.c_str() : "no ladder";
}

} // extern "C"

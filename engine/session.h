// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file session.h
/// The engine behind the C API: one distorted/reference stream pair. Plans the feature
/// instances (feature.h) the models and the features string ask for, owns the backend
/// (CPU or CUDA) that runs their stages, applies their temporal steps once the lookahead
/// frames are there, runs the models, keeps the scored frames for pooling and the log.

#include "backend.h"
#include "feature.h"
#include "model.h"
#include "vmaf_cuda.h"

#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace vmaf_cuda::engine {

/// One scored frame: values[i] belongs to Session::names()[i] (NaN when not computed).
struct FrameRow {
    unsigned index = 0;
    std::vector<double> values;
};

/// A ladder's shared work (ladder.cpp): for each reference frame, the results of the
/// reference-only features (FeatureInstance::reference_only()), computed once, and of the
/// ladder-shared ones (FeatureInstance::ladder_shared(): VIF, ADM) for every in-sync
/// rendition at once, the reference's side computed once.
class ReferenceShare {
public:
    virtual ~ReferenceShare() = default;
    /// The share's plan: its features are the session's shared ones, in session order.
    virtual const FramePlan& plan() const = 0;
    /// Ladder frame L's results (blocks until they are there): one block of plan().n_values
    /// values and plan().n_series series per consumer, in the order they were given.
    /// Throws engine::Error.
    virtual const FrameResult& result(unsigned ladder_index) = 0;
    /// One consumer of ladder frame L is done with it.
    virtual void release(unsigned ladder_index) = 0;
};

class Session {
public:
    /// Validates settings, loads models, plans the features, picks and opens the backend.
    /// Throws engine::Error (EINVAL, EMODEL, ENODEV, ECUDA). ladder_size: renditions of
    /// the ladder the session is one rendition of (1: a session of its own).
    explicit Session(const VmafCudaSettings& s, unsigned ladder_size = 1);
    ~Session();

    void send(const VmafCudaPicture& ref, const VmafCudaPicture& dist);
    /// A ladder's send: with `share` (not null) the shared features do not run here; frame
    /// sent_'s values for them come from block `block` of share->result(ladder_index),
    /// which the caller guarantees are those this session would compute (same reference
    /// pictures, same distorted picture, same frame index).
    void send(const VmafCudaPicture& ref, const VmafCudaPicture& dist, ReferenceShare* share,
              unsigned ladder_index, unsigned block);
    /// Throws engine::Error (EINVAL) naming what send() would refuse in this pair.
    void check_pair(const VmafCudaPicture& ref, const VmafCudaPicture& dist) const;
    /// The features a ladder's share computes (in session order): the reference-only ones
    /// and the ladder-shared ones.
    std::vector<const FeatureInstance*> shared_features() const;
    /// A backend of this session's kind and configuration for another plan, taking up to
    /// `renditions` distorted pictures per frame (Backend::submit_ladder).
    std::unique_ptr<Backend> make_backend(const FramePlan& plan, unsigned renditions = 1) const;
    /// Frames the session keeps in flight before it waits.
    unsigned in_flight() const { return in_flight_; }
    /// Returns VMAF_CUDA_OK (row filled), VMAF_CUDA_EAGAIN or VMAF_CUDA_EOF.
    int receive(VmafCudaFrameScores& out);
    void flush();
    bool flushed() const { return flushed_; }
    /// Frames sent so far to this segment (numbered from 0 here; base() before them).
    unsigned sent() const { return sent_; }
    /// Whether frame `index` (numbered over every segment) is scored (n_subsample, counted
    /// from each segment's first frame; BackendConfig::scored()).
    bool scored(std::uint64_t index) const;
    /// After flush: keep the first `frames` frames (numbered over every segment), as if
    /// the stream had ended there.
    void truncate(unsigned frames);
    /// Segments (API 9): this session continues the stream of `prev` (flushed here if it
    /// is not), e.g. at a new picture size: its frames are numbered after prev's (base()),
    /// and receive(), pooled(), write_log() and truncate() cover every segment, in frame
    /// order, as one stream; temporal features start afresh at the segment's first frame.
    /// Call before the first send. Throws Error: EINVAL when the two score other names
    /// (other models or features) or differ in keep_history; ESTATE after a send.
    void adopt(std::unique_ptr<Session> prev);
    /// Frames of the earlier segments (0 for the first).
    unsigned base() const { return base_; }
    /// One segment of the stream: its first frame (over every segment), frames sent, size.
    struct Segment { unsigned first, frames, width, height, bpc; };
    /// Every segment, oldest first.
    std::vector<Segment> segments() const;
    /// Frames of this segment, from its first, whose pictures the backend no longer reads.
    unsigned pictures_released() const {
        if (flushed_) return sent_;
        return computed_ > plan_.history ? computed_ - plan_.history : 0;
    }
    /// vmaf_cuda_picture_signature(): the picture's luma cell means (vmaf_cuda_align.h),
    /// `cells` VMAF_CUDA_SIGNATURE_CELLS values. Throws Error (EINVAL, ECUDA).
    void signature(const VmafCudaPicture& pic, double* cells) const;
    /// vmaf_cuda_set_sync_offset(): the offset paired with from frame `frame` on (the log's
    /// "sync_offset", then "sync_changes"); kept over adopt().
    void set_sync_offset(std::uint64_t frame, double seconds) { sync_.emplace_back(frame, seconds); }
    double pooled(const std::string& name, int method) const;
    void write_log(const std::string& path, int fmt, int precision, double fps) const;

    const char* backend_name() const { return backend_->name(); }
    /// A warning raised at open (backend=auto fell back to the CPU), or "".
    const std::string& warning() const { return warning_; }
    const std::vector<std::string>& names() const { return names_; }
    const std::vector<Model>& models() const { return models_; }
    /// Frames after frame i that must be sent (or the stream flushed) before frame i's
    /// scores are final: the largest lookahead of the features (1 with motion, 2 with
    /// motion's five-frame window, 0 without temporal features).
    unsigned lookahead() const { return max_lookahead_; }

private:
    struct ModelSlot { const Model* model; std::vector<int> cols; int out_col; };
    /// A collection's members are model_slots_[first .. first + count); col: the bagging,
    /// stddev, ci_p95_lo, ci_p95_hi columns.
    struct BootstrapSlot { std::size_t first = 0, count = 0; int col[4] = {}; };
    /// Per feature: the column of each output.
    struct FeatureSlot { std::vector<int> cols; bool has_delayed = false; };
    class SeriesStore;

    int add_name(const std::string& name);
    void collect(bool wait);
    void on_result(FrameResult&& fr);
    void finalize_ready();
    void finish_row(FrameRow& row, std::size_t n);
    void keep_row(FrameRow&& row);
    void add_running(const FrameRow& row);
    bool ready(unsigned index) const;
    void truncate_segment(unsigned frames);
    /// The segments oldest first (this one last).
    std::vector<const Session*> chain() const;

    VmafCudaSettings settings_;
    std::vector<Model> models_;
    std::vector<std::unique_ptr<FeatureInstance>> features_;
    FramePlan plan_;
    std::vector<FeatureSlot> feature_slots_;
    std::vector<ModelSlot> model_slots_;       ///< every model, collection members included
    std::vector<BootstrapSlot> bootstrap_slots_;
    std::vector<std::unique_ptr<SeriesStore>> series_;
    unsigned max_lookahead_ = 0;
    std::vector<std::string> names_;
    std::string warning_;
    std::vector<const char*> name_ptrs_;
    std::unique_ptr<Backend> backend_;
    BackendConfig backend_config_;
    std::vector<std::pair<std::uint64_t, double>> sync_; ///< set_sync_offset(), in order
    /// Frames whose reference-only values come from a ladder's share: (frame, ladder frame).
    struct SharedFrame { unsigned index, ladder_index, block; ReferenceShare* share; };
    std::deque<SharedFrame> shared_frames_;
    std::uint64_t share_mask_ = 0; ///< bit i: feature i is computed by a ladder's share
    /// Whether feature i comes from a ladder's share (only the first 64 can).
    bool shared(std::size_t i) const { return i < 64 && (share_mask_ >> i & 1); }

    unsigned sent_ = 0;
    unsigned computed_ = 0;              ///< frames whose results came back
    unsigned in_flight_ = 4;             ///< frames submitted ahead of collection
    bool flushed_ = false;
    bool chroma_checked_ = false;
    std::deque<FrameRow> waiting_;       ///< frames with results, waiting for lookahead
    std::vector<FrameRow> rows_;         ///< final scored frames, in index order (history)
    std::deque<FrameRow> undelivered_;   ///< without history: final rows not yet received
    std::size_t delivered_ = 0;
    std::vector<double> receive_values_; ///< storage behind the last receive()
    /// Without history: running pools per column (sum, 1/(v+1) sum, min, max) in frame order.
    struct Running { double sum = 0, inv = 0, min = 0, max = 0; };
    std::vector<Running> running_;
    unsigned running_count_ = 0;
    /// Without history: the last scored rows (truncate() can drop them); older ones are
    /// in running_.
    std::deque<FrameRow> recent_;
    static constexpr std::size_t kRecentRows = 64;
    std::vector<unsigned> scored_frames_; ///< indices of the final scored frames (aggregates)
    /// Segments (adopt()): the stream's earlier segments (flushed, backend closed) and the
    /// frames they hold; this segment's own indices count from 0 and are base_ + i outside.
    std::unique_ptr<Session> prev_;
    unsigned base_ = 0;
    /// Without history: running_ starts with the earlier segments' running pools
    /// (running_base_ rows); prev_'s recent rows are not in it yet while pending.
    unsigned running_base_ = 0;
    bool prev_recent_pending_ = false;
    void fold_prev_recent();
    /// Without history: the first frames of the segments let go (adopt()), oldest first.
    std::vector<unsigned> earlier_bases_;
    /// Every final row was received (and none waits for lookahead).
    bool drained() const {
        return flushed_ && waiting_.empty() &&
               (settings_.keep_history ? delivered_ == rows_.size() : undelivered_.empty()) &&
               (!prev_ || prev_->drained());
    }
};

} // namespace vmaf_cuda::engine

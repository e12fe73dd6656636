// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file session.h
/// The engine behind the C API: one distorted/reference stream pair. Owns the backend
/// (CPU or CUDA), turns its integer accumulators into feature values with the
/// reference's finish code, applies motion's one-frame lookahead, runs the models,
/// keeps every scored frame for pooling and the log.

#include "backend.h"
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

class Session {
public:
    /// Validates settings, loads models, picks and opens the backend.
    /// Throws engine::Error (EINVAL, EMODEL, ENODEV, ECUDA).
    explicit Session(const VmafCudaSettings& s);
    ~Session();

    void send(const VmafCudaPicture& ref, const VmafCudaPicture& dist);
    /// Returns VMAF_CUDA_OK (row filled), VMAF_CUDA_EAGAIN or VMAF_CUDA_EOF.
    int receive(VmafCudaFrameScores& out);
    void flush();
    /// After flush: keep the first `frames` frames, as if the stream had ended there.
    void truncate(unsigned frames);
    /// Frames, from the first, whose pictures the backend no longer reads.
    unsigned pictures_released() const {
        if (flushed_) return sent_;
        if (!plan_.motion) return computed_;
        return computed_ ? computed_ - 1 : 0;  // the next frame's motion reads this reference
    }
    double pooled(const std::string& name, int method) const;
    void write_log(const std::string& path, int fmt, int precision, double fps) const;

    const char* backend_name() const { return backend_->name(); }
    /// A warning raised at open (backend=auto fell back to the CPU), or "".
    const std::string& warning() const { return warning_; }
    const std::vector<std::string>& names() const { return names_; }
    const std::vector<Model>& models() const { return models_; }

private:
    struct AdmSlot { std::string suffix; int col[7]; }; // adm2, aim, adm3, scale0..3
    struct VifSlot { std::string suffix; int col[4]; };
    struct ModelSlot { const Model* model; std::vector<int> cols; int out_col; };
    /// A collection's members are model_slots_[first .. first + count); col: the bagging,
    /// stddev, ci_p95_lo, ci_p95_hi columns.
    struct BootstrapSlot { std::size_t first = 0, count = 0; int col[4] = {}; };

    int add_name(const std::string& name);
    void collect(bool wait);
    void on_accum(FrameAccum&& fa);
    void finalize(unsigned index);
    void finish_row(FrameRow& row, bool has_next);

    VmafCudaSettings settings_;
    std::vector<Model> models_;
    ExtractorPlan plan_;
    std::vector<AdmSlot> adm_slots_;
    std::vector<VifSlot> vif_slots_;
    std::vector<ModelSlot> model_slots_;       ///< every model, collection members included
    std::vector<BootstrapSlot> bootstrap_slots_;
    int col_sad_ = -1, col_motion2_ = -1, col_motion3_ = -1;
    std::vector<std::string> names_;
    std::string warning_;
    std::vector<const char*> name_ptrs_;
    std::unique_ptr<Backend> backend_;

    unsigned sent_ = 0;
    unsigned computed_ = 0;              ///< frames whose accumulators came back
    unsigned in_flight_ = 4;             ///< frames submitted ahead of collection
    bool flushed_ = false;
    std::vector<double> sad_;            ///< motion SAD score of every frame received
    std::deque<FrameRow> waiting_;       ///< frames with features, waiting for motion lookahead
    std::vector<FrameRow> rows_;         ///< final scored frames, in index order
    std::size_t delivered_ = 0;
    std::vector<double> receive_values_; ///< storage behind the last receive()
};

} // namespace vmaf_cuda::engine

// SPDX-License-Identifier: BSD-2-Clause-Patent
// Session: backend accumulators -> feature values -> motion lookahead -> models -> rows.

#include "session.h"

#include "error.h"
#include "feature_registry.h"
#include "pooling.h"
#include "writers.h"

#include <cmath>
#include <limits>
#include <optional>

namespace vmaf_cuda::engine {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void validate(const VmafCudaSettings& s) {
    if (s.width == 0 || s.height == 0)
        throw Error(VMAF_CUDA_EINVAL, "frame size " + std::to_string(s.width) + "x" +
                                          std::to_string(s.height) + " is invalid");
    if (s.width < kMinSize || s.height < kMinSize)
        throw Error(VMAF_CUDA_EINVAL,
                    "frame size " + std::to_string(s.width) + "x" + std::to_string(s.height) +
                        " is too small: VMAF needs at least " + std::to_string(kMinSize) + "x" +
                        std::to_string(kMinSize) + " luma samples");
    if (s.width > kMaxSize || s.height > kMaxSize)
        throw Error(VMAF_CUDA_EINVAL, "frame size " + std::to_string(s.width) + "x" +
                                          std::to_string(s.height) + " is too large (at most " +
                                          std::to_string(kMaxSize) + " per side)");
    if (s.bpc < 8 || s.bpc > 16)
        throw Error(VMAF_CUDA_EINVAL,
                    "bit depth " + std::to_string(s.bpc) + " is not supported (8..16)");
    if (s.n_subsample == 0) throw Error(VMAF_CUDA_EINVAL, "n_subsample must be >= 1");
    if (s.frames_in_flight == 0 || s.frames_in_flight > 16)
        throw Error(VMAF_CUDA_EINVAL, "frames_in_flight must be 1..16");
    if (s.backend != VMAF_CUDA_BACKEND_AUTO && s.backend != VMAF_CUDA_BACKEND_CUDA &&
        s.backend != VMAF_CUDA_BACKEND_CPU)
        throw Error(VMAF_CUDA_EINVAL, "unknown backend");
}

void validate_picture(const VmafCudaPicture& p, const char* which, const VmafCudaSettings& s) {
    const std::ptrdiff_t row = std::ptrdiff_t(s.width) * (s.bpc > 8 ? 2 : 1);
    if (!p.luma) throw Error(VMAF_CUDA_EINVAL, std::string(which) + " picture has no luma plane");
    if (p.pitch < row)
        throw Error(VMAF_CUDA_EINVAL, std::string(which) + " picture pitch " +
                                          std::to_string(p.pitch) + " is below one row (" +
                                          std::to_string(row) + " bytes)");
    if (p.shift > 8 || (s.bpc == 8 && p.shift != 0) || (s.bpc > 8 && p.shift + s.bpc > 16))
        throw Error(VMAF_CUDA_EINVAL, std::string(which) + " picture shift " +
                                          std::to_string(p.shift) + " does not fit " +
                                          std::to_string(s.bpc) + "-bit samples");
    if (p.memory != VMAF_CUDA_MEMORY_HOST && p.memory != VMAF_CUDA_MEMORY_DEVICE)
        throw Error(VMAF_CUDA_EINVAL, std::string(which) + " picture memory kind is invalid");
}

} // namespace

int Session::add_name(const std::string& name) {
    for (std::size_t i = 0; i < names_.size(); ++i)
        if (names_[i] == name) return int(i);
    names_.push_back(name);
    return int(names_.size() - 1);
}

Session::Session(const VmafCudaSettings& s) : settings_(s) {
    validate(s);

    // Models and the extractors they need; then the extra features asked for.
    if (!s.no_prediction) {
        const auto specs = parse_model_string(s.models ? s.models : "");
        for (std::size_t i = 0; i < specs.size(); ++i)
            models_.push_back(resolve_model(specs[i], i == 0, s.model_search_dir));
    }
    std::vector<FeatureSpec> extractors;
    for (const Model& m : models_)
        for (const FeatureSpec& e : model_extractors(m)) add_unique(extractors, e);
    for (const FeatureSpec& e : parse_feature_string(s.features ? s.features : ""))
        add_unique(extractors, e);
    if (extractors.empty())
        throw Error(VMAF_CUDA_EINVAL, "no_prediction without features: nothing to compute");

    // Columns in libvmaf's feature collector order: what each extractor writes while
    // extracting a frame (ADM's seven, motion's sad, VIF's four), in extractor order;
    // then motion2 and motion3, which libvmaf writes one frame later; then the models.
    bool motion = false;
    std::string motion2_name, motion3_name;
    for (const FeatureSpec& e : extractors) {
        const auto outs = extractor_output_names(e);
        const ExtractorKind kind = extractor_kind(e);
        if (kind == ExtractorKind::adm) {
            AdmSlot slot;
            for (int k = 0; k < 7; ++k) slot.col[k] = add_name(outs[k]);
            adm_slots_.push_back(slot);
            plan_.adm.push_back(adm_options(e));
        } else if (kind == ExtractorKind::vif) {
            VifSlot slot;
            for (int k = 0; k < 4; ++k) slot.col[k] = add_name(outs[k]);
            vif_slots_.push_back(slot);
            plan_.vif.push_back(vif_options(e));
        } else if (!motion) {
            motion = true;
            col_sad_ = add_name(outs[0]);
            motion2_name = outs[1];
            motion3_name = outs[2];
        }
    }
    if (motion) {
        col_motion2_ = add_name(motion2_name);
        col_motion3_ = add_name(motion3_name);
    }
    plan_.motion = motion;
    // Model columns: each model's score; a collection (vmaf_b_v0.6.3) then its members'
    // scores NAME_0001.. and NAME_bagging, _stddev, _ci_p95_lo, _ci_p95_hi, in libvmaf's
    // order (predict.c vmaf_bootstrap_predict_score_at_index).
    auto add_output = [&](const std::string& name) {
        for (const std::string& n : names_)
            if (n == name)
                throw Error(VMAF_CUDA_EINVAL, "two outputs are named '" + name +
                                                  "': give models distinct names (name=...)");
        names_.push_back(name);
        return int(names_.size() - 1);
    };
    auto add_model_slot = [&](const Model& m) {
        ModelSlot ms;
        ms.model = &m;
        for (const std::string& f : model_input_names(m)) {
            int col = -1;
            for (std::size_t i = 0; i < names_.size(); ++i)
                if (names_[i] == f) col = int(i);
            if (col < 0)
                throw Error(VMAF_CUDA_EMODEL, "model '" + m.name() + "' needs feature '" + f +
                                                  "', which no extractor provides");
            ms.cols.push_back(col);
        }
        ms.out_col = add_output(m.name());
        model_slots_.push_back(std::move(ms));
    };
    for (const Model& m : models_) {
        add_model_slot(m);
        if (m.bootstrap().empty()) continue;
        BootstrapSlot bs;
        bs.first = model_slots_.size();
        for (const Model& b : m.bootstrap()) add_model_slot(b);
        bs.count = m.bootstrap().size();
        int k = 0;
        for (const char* suffix : {"_bagging", "_stddev", "_ci_p95_lo", "_ci_p95_hi"})
            bs.col[k++] = add_output(m.name() + suffix);
        bootstrap_slots_.push_back(bs);
    }
    for (const std::string& n : names_) name_ptrs_.push_back(n.c_str());

    BackendConfig bc;
    bc.width = s.width;
    bc.height = s.height;
    bc.bpc = s.bpc;
    bc.n_subsample = s.n_subsample;
    bc.n_threads = s.n_threads < kMaxThreads ? s.n_threads : kMaxThreads;
    bc.frames_in_flight = s.frames_in_flight;
    bc.cuda_device = s.cuda_device;
    bc.cuda_context = s.cuda_context;
    bc.cuda_stream = s.cuda_stream;
#ifdef VMAF_CUDA_HAVE_CUDA
    if (s.backend == VMAF_CUDA_BACKEND_CPU) {
        backend_ = make_cpu_backend(bc, plan_);
    } else {
        const CudaDeviceCheck chk = check_cuda_device(bc);
        if (chk.result == CudaDeviceCheck::Result::ok) {
            backend_ = make_cuda_backend(bc, plan_);
        } else if (s.backend == VMAF_CUDA_BACKEND_CUDA) {
            throw Error(VMAF_CUDA_ENODEV, "backend=cuda: " + chk.message);
        } else {
            // auto: the CPU backend gives the same numbers; say why once when a device
            // is there but cannot run the kernels (no device at all is the plain case).
            if (chk.result == CudaDeviceCheck::Result::cannot_run)
                warning_ = "backend=auto: " + chk.message + "; scoring on the CPU backend instead";
            backend_ = make_cpu_backend(bc, plan_);
        }
    }
#else
    if (s.backend == VMAF_CUDA_BACKEND_CUDA)
        throw Error(VMAF_CUDA_ENODEV,
                    "backend=cuda asked, but this build of vmaf_cuda has no CUDA backend");
    backend_ = make_cpu_backend(bc, plan_);
#endif
    // The CPU backend computes as many frames at once as it has workers: let at least
    // that many be in flight, or workers beyond frames_in_flight would idle.
    in_flight_ = s.frames_in_flight;
    if (std::string(backend_->name()) == "cpu" && bc.n_threads > in_flight_)
        in_flight_ = bc.n_threads;
}

Session::~Session() = default;

void Session::send(const VmafCudaPicture& ref, const VmafCudaPicture& dist) {
    if (flushed_) throw Error(VMAF_CUDA_ESTATE, "send after flush");
    validate_picture(ref, "reference", settings_);
    validate_picture(dist, "distorted", settings_);
    backend_->submit(sent_, ref, dist);
    ++sent_;
    // Keep the pipeline bounded: collect what is finished; block only when too far ahead.
    collect(false);
    while (backend_->pending() > in_flight_) collect(true);
}

void Session::collect(bool wait) {
    FrameAccum fa;
    bool first = true;
    while (backend_->retrieve(fa, wait && first)) {
        first = false;
        on_accum(std::move(fa));
    }
}

void Session::on_accum(FrameAccum&& fa) {
    const unsigned w = settings_.width, h = settings_.height;
    ++computed_;
    FrameRow row;
    row.index = fa.index;
    row.values.assign(names_.size(), kNaN);
    if (fa.scored) {
        for (std::size_t i = 0; i < adm_slots_.size(); ++i) {
            const ref::AdmScores a = ref::adm_finish(fa.adm[i], plan_.adm[i], w, h);
            const double v[7] = {a.adm2, a.aim, a.adm3, a.scale[0], a.scale[1], a.scale[2], a.scale[3]};
            for (int k = 0; k < 7; ++k) row.values[adm_slots_[i].col[k]] = v[k];
        }
        for (std::size_t i = 0; i < vif_slots_.size(); ++i) {
            const ref::VifScores v = ref::vif_finish(fa.vif[i], plan_.vif[i]);
            for (int k = 0; k < 4; ++k) row.values[vif_slots_[i].col[k]] = v.scale[k];
        }
    }
    if (plan_.motion) {
        const double sad = fa.index == 0 ? 0.0 : ref::motion_sad_finish(fa.sad, w, h);
        if (sad_.size() != fa.index) throw Error(VMAF_CUDA_EINTERNAL, "frames out of order");
        sad_.push_back(sad);
        row.values[col_sad_] = sad;
    }
    waiting_.push_back(std::move(row));
    // A frame is final once the next frame's SAD is known (motion2 = min of the two).
    if (!plan_.motion) {
        finalize(fa.index);
    } else if (fa.index > 0) {
        finalize(fa.index - 1);
    }
}

void Session::finalize(unsigned index) {
    if (waiting_.empty() || waiting_.front().index != index)
        throw Error(VMAF_CUDA_EINTERNAL, "motion lookahead out of order");
    FrameRow row = std::move(waiting_.front());
    waiting_.pop_front();
    const bool scored = settings_.n_subsample <= 1 || index % settings_.n_subsample == 0;
    if (!scored) return;
    finish_row(row, index + 1 < sad_.size());
    rows_.push_back(std::move(row));
}

void Session::finish_row(FrameRow& row, bool has_next) {
    const unsigned index = row.index;
    if (plan_.motion) {
        std::optional<double> next;
        if (has_next) next = sad_[index + 1];
        const double m2 = ref::motion2_score(index, sad_[index], next);
        row.values[col_motion2_] = m2;
        row.values[col_motion3_] = ref::motion3_score(index, m2, next);
    }
    std::vector<double> in;
    for (const ModelSlot& ms : model_slots_) {
        in.clear();
        for (int c : ms.cols) in.push_back(row.values[c]);
        row.values[ms.out_col] = ms.model->predict(in);
    }
    // Collections: bagging, stddev and the 95% interval over the members' untransformed,
    // unclipped scores.
    std::vector<double> raw;
    for (const BootstrapSlot& bs : bootstrap_slots_) {
        raw.clear();
        for (std::size_t k = 0; k < bs.count; ++k) {
            const ModelSlot& ms = model_slots_[bs.first + k];
            in.clear();
            for (int c : ms.cols) in.push_back(row.values[c]);
            raw.push_back(ms.model->predict(in, Model::kPredictNoTransform | Model::kPredictNoClip));
        }
        const BootstrapScores b = bootstrap_combine(*model_slots_[bs.first].model, raw);
        row.values[bs.col[0]] = b.bagging;
        row.values[bs.col[1]] = b.stddev;
        row.values[bs.col[2]] = b.ci_p95_lo;
        row.values[bs.col[3]] = b.ci_p95_hi;
    }
}

void Session::truncate(unsigned frames) {
    if (!flushed_) throw Error(VMAF_CUDA_ESTATE, "truncate before flush");
    if (frames >= sent_) return;
    while (!rows_.empty() && rows_.back().index >= frames) rows_.pop_back();
    if (delivered_ > rows_.size()) delivered_ = rows_.size();
    if (sad_.size() > frames) sad_.resize(frames);
    sent_ = frames;
    // The new last frame has no successor: its motion (and so its model scores) are
    // those libvmaf computes for the last frame of a stream.
    if (frames && !rows_.empty() && rows_.back().index == frames - 1)
        finish_row(rows_.back(), false);
}

int Session::receive(VmafCudaFrameScores& out) {
    if (delivered_ >= rows_.size()) collect(false);
    if (delivered_ >= rows_.size()) {
        if (flushed_) return VMAF_CUDA_EOF;
        return VMAF_CUDA_EAGAIN;
    }
    const FrameRow& r = rows_[delivered_++];
    receive_values_ = r.values;
    out.index = r.index;
    out.count = unsigned(names_.size());
    out.names = name_ptrs_.data();
    out.values = receive_values_.data();
    return VMAF_CUDA_OK;
}

void Session::flush() {
    if (flushed_) return;
    while (backend_->pending() > 0) collect(true);
    if (!waiting_.empty()) finalize(waiting_.front().index);
    flushed_ = true;
}

double Session::pooled(const std::string& name, int method) const {
    int col = -1;
    for (std::size_t i = 0; i < names_.size(); ++i)
        if (names_[i] == name) col = int(i);
    if (col < 0) throw Error(VMAF_CUDA_EINVAL, "no feature or model named '" + name + "'");
    if (rows_.empty()) throw Error(VMAF_CUDA_EINVAL, "no frame has been scored yet");
    std::vector<double> v;
    v.reserve(rows_.size());
    for (const FrameRow& r : rows_) v.push_back(r.values[col]);
    return pool(v, method);
}

void Session::write_log(const std::string& path, int fmt, int precision, double fps) const {
    LogTable t;
    t.width = settings_.width;
    t.height = settings_.height;
    t.subsample = settings_.n_subsample;
    t.fps = fps;
    t.precision = precision;
    for (const FrameRow& r : rows_) t.frames.push_back(r.index);
    for (std::size_t c = 0; c < names_.size(); ++c) {
        LogColumn col;
        col.name = names_[c];
        for (const FrameRow& r : rows_) col.values.push_back(r.values[c]);
        if (!rows_.empty())
            for (int m = 0; m < 4; ++m) col.pooled[m] = pool(col.values, m);
        t.columns.push_back(std::move(col));
    }
    write_log_file(path, static_cast<LogFormat>(fmt), t);
}

} // namespace vmaf_cuda::engine

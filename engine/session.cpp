// SPDX-License-Identifier: BSD-2-Clause-Patent
// Session: feature instances -> backend stages -> temporal steps -> models -> rows.

#include "session.h"

#include "error.h"
#include "feature_registry.h"
#include "pooling.h"
#include "writers.h"

#include <algorithm>
#include <cmath>
#include <deque>
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
    if (s.n_threads > kMaxThreads)
        throw Error(VMAF_CUDA_EINVAL, "n_threads " + std::to_string(s.n_threads) +
                                          " is more than the " + std::to_string(kMaxThreads) +
                                          " threads a session uses at most");
    if (s.backend != VMAF_CUDA_BACKEND_AUTO && s.backend != VMAF_CUDA_BACKEND_CUDA &&
        s.backend != VMAF_CUDA_BACKEND_CPU)
        throw Error(VMAF_CUDA_EINVAL, "unknown backend");
}

void validate_picture(const VmafCudaPicture& p, const char* which, const VmafCudaSettings& s) {
    const std::ptrdiff_t bps = s.bpc > 8 ? 2 : 1;
    const std::ptrdiff_t row = std::ptrdiff_t(s.width) * bps;
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
    if (p.chroma_step > 2)
        throw Error(VMAF_CUDA_EINVAL, std::string(which) + " picture chroma_step " +
                                          std::to_string(p.chroma_step) + " is not 0, 1 or 2");
}

unsigned chroma_code(VmafCudaChroma c) {
    switch (c) {
    case VMAF_CUDA_CHROMA_420: return 420;
    case VMAF_CUDA_CHROMA_422: return 422;
    case VMAF_CUDA_CHROMA_444: return 444;
    case VMAF_CUDA_CHROMA_400: return 400;
    }
    throw Error(VMAF_CUDA_EINVAL, "unknown chroma subsampling " + std::to_string(int(c)));
}

/// Checks the chroma planes of a picture for features that read them.
void validate_chroma(const VmafCudaPicture& p, const char* which, const VmafCudaSettings& s,
                     const std::string& readers) {
    const unsigned code = chroma_code(s.chroma);
    if (code == 400) return;
    if (!p.chroma[0] || !p.chroma[1])
        throw Error(VMAF_CUDA_EINVAL, std::string(which) + " picture has no chroma planes, but " +
                                          readers + " read(s) Cb and Cr: give chroma[0], chroma[1]");
    const std::ptrdiff_t bps = s.bpc > 8 ? 2 : 1;
    const unsigned step = p.chroma_step == 2 ? 2 : 1;
    const std::ptrdiff_t row =
        (std::ptrdiff_t(ref::yuv_chroma_width(s.width, code) - 1) * step + 1) * bps;
    if (p.chroma_pitch < row)
        throw Error(VMAF_CUDA_EINVAL, std::string(which) + " picture chroma_pitch " +
                                          std::to_string(p.chroma_pitch) +
                                          " is below one chroma row (" + std::to_string(row) +
                                          " bytes)");
}

} // namespace

/// A feature's series: `width` doubles per frame. Rows [0, keep) stay; with `trim`, rows
/// older than `keep` behind the newest are dropped (the session keeps no history).
class Session::SeriesStore final : public Series {
public:
    SeriesStore(unsigned width, unsigned keep, bool trim) : w_(width), keep_(keep), trim_(trim) {}
    const double* at(std::size_t i) const override {
        if (i < head_.size() / (w_ ? w_ : 1)) return head_.data() + i * w_;
        if (i < base_ || i >= end())
            throw Error(VMAF_CUDA_EINTERNAL, "series row " + std::to_string(i) + " is not kept");
        return &tail_[(i - base_) * w_];
    }
    std::size_t end() const override { return base_ + tail_.size() / (w_ ? w_ : 1); }
    void push(const double* row) {
        if (!w_) return;
        if (head_.size() < std::size_t(keep_) * w_ && tail_.empty()) {
            head_.insert(head_.end(), row, row + w_);
            base_ = head_.size() / w_;
            return;
        }
        tail_.insert(tail_.end(), row, row + w_);
        if (trim_)
            while (tail_.size() / w_ > std::size_t(keep_) + 2) {
                tail_.erase(tail_.begin(), tail_.begin() + w_);
                ++base_;
            }
    }
    void truncate(std::size_t n) {
        if (!w_) return;
        if (n < base_) {
            tail_.clear();
            head_.resize(std::min(head_.size(), n * w_));
            base_ = head_.size() / w_;
            return;
        }
        tail_.resize(std::min(tail_.size(), (n - base_) * w_));
    }

private:
    unsigned w_, keep_;
    bool trim_;
    std::vector<double> head_;
    // Contiguous (a vector, not a deque): at() hands out a pointer to w_ doubles, which
    // may not straddle a deque block. Trimmed tails hold at most keep_ + 2 rows, so the
    // erase at the front stays small.
    std::vector<double> tail_;
    std::size_t base_ = 0;
};

int Session::add_name(const std::string& name) {
    for (std::size_t i = 0; i < names_.size(); ++i)
        if (names_[i] == name) return int(i);
    names_.push_back(name);
    return int(names_.size() - 1);
}

Session::Session(const VmafCudaSettings& s, unsigned ladder_size) : settings_(s) {
    validate(s);
    const Geometry geo{s.width, s.height, s.bpc, chroma_code(s.chroma)};

    // Models and the extractors they need; then the extra features asked for.
    if (!s.no_prediction) {
        const auto specs = parse_model_string(s.models ? s.models : "");
        for (std::size_t i = 0; i < specs.size(); ++i)
            models_.push_back(resolve_model(specs[i], i == 0, s.model_search_dir));
    }
    // One instance per libvmaf instance name (instance_key): as libvmaf v3.2.0 does, a
    // later spec of the same name is dropped whole, the first one's options kept (e.g.
    // "psnr" then "psnr=enable_mse=true" writes no mse); options that name the outputs
    // (cambi_high_res_speedup=1080) make another instance. Said once where options differ.
    std::vector<FeatureSpec> extractors;
    std::vector<std::string> instance_keys; // instance_key of each of extractors
    std::string dropped;
    auto add_instance = [&](const FeatureSpec& e) {
        const std::string key = instance_key(e);
        for (std::size_t i = 0; i < extractors.size(); ++i) {
            if (instance_keys[i] != key) continue;
            if (!(extractors[i] == e)) {
                std::string opts;
                for (const auto& [k, v] : e.options) opts += (opts.empty() ? "" : ":") + k + "=" + v;
                dropped += std::string(dropped.empty() ? "" : "; ") + "feature " + e.extractor +
                           (opts.empty() ? "" : "=" + opts) + " ignored: an instance named \"" +
                           key + "\" is already there (libvmaf keeps the first one's options)";
            }
            return;
        }
        extractors.push_back(e);
        instance_keys.push_back(key);
    };
    for (const Model& m : models_)
        for (const FeatureSpec& e : model_extractors(m)) add_instance(e);
    for (const FeatureSpec& e : parse_feature_string(s.features ? s.features : ""))
        add_instance(e);
    if (extractors.empty())
        throw Error(VMAF_CUDA_EINVAL, "no_prediction without features: nothing to compute");

    // Instances (each checks its options and the frame size before the first frame).
    std::vector<const FeatureInstance*> plan_list;
    for (const FeatureSpec& e : extractors) {
        const FeatureRecord* r = find_feature(e.extractor);
        if (!r) extractor_features(e.extractor); // throws, naming the known extractors
        try {
            features_.push_back(r->make(e, geo));
        } catch (const Error& err) {
            // A model's extractor (e.g. speed_chroma of vmaf_v1.0.16_3d0h refusing a small
            // frame): say which model needs it.
            for (const Model& m : models_) {
                const auto needed = model_extractors(m);
                if (std::find(needed.begin(), needed.end(), e) == needed.end()) continue;
                std::string label = m.source();
                if (label.rfind("built-in ", 0) == 0) label = label.substr(9);
                throw Error(err.status, "model " + label + ": " + err.what());
            }
            throw;
        }
        plan_list.push_back(features_.back().get());
    }
    plan_ = FramePlan(plan_list);

    // Columns in libvmaf's feature collector order: what each extractor writes while
    // extracting a frame, in extractor order; then the outputs libvmaf writes one frame
    // later (motion2, motion3); then the models.
    feature_slots_.resize(features_.size());
    for (int pass = 0; pass < 2; ++pass)
        for (std::size_t i = 0; i < features_.size(); ++i) {
            const auto& outs = features_[i]->outputs();
            FeatureSlot& fs = feature_slots_[i];
            fs.cols.resize(outs.size(), -1);
            for (std::size_t k = 0; k < outs.size(); ++k) {
                if (outs[k].late != (pass == 1)) continue;
                fs.cols[k] = add_name(outs[k].name);
                if (outs[k].delayed) fs.has_delayed = true;
            }
        }
    // Without history no aggregate can be asked for (write_log needs it), so series_all()
    // rows are dropped too and memory stays flat (e.g. psnr's apsnr rows).
    for (const auto& f : features_) {
        max_lookahead_ = std::max(max_lookahead_, f->max_lookahead());
        // without history the series keep what a truncation within the recent rows needs
        series_.push_back(std::make_unique<SeriesStore>(
            f->series_width(), f->series_keep() + (s.keep_history ? 0 : kRecentRows + 4),
            !s.keep_history));
    }
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
    // Model inputs are looked up by feature-collector key (the raw name, or the
    // option-suffixed alias).
    std::vector<std::pair<std::string, int>> keys;
    for (std::size_t i = 0; i < features_.size(); ++i)
        for (std::size_t k = 0; k < features_[i]->outputs().size(); ++k)
            keys.emplace_back(features_[i]->outputs()[k].key, feature_slots_[i].cols[k]);
    auto add_model_slot = [&](const Model& m) {
        ModelSlot ms;
        ms.model = &m;
        for (const ModelFeature& f : m.features()) {
            int col = -1;
            for (const auto& [key, c] : keys)
                if (key == f.key || feature_alias(key) == f.log_name) col = c;
            if (col < 0)
                throw Error(VMAF_CUDA_EMODEL, "model '" + m.name() + "' needs feature '" +
                                                  f.log_name + "', which no extractor provides");
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
    running_.resize(names_.size());

    BackendConfig bc;
    bc.width = s.width;
    bc.height = s.height;
    bc.bpc = s.bpc;
    bc.chroma = geo.chroma;
    bc.n_subsample = s.n_subsample;
    bc.n_threads = s.n_threads;
    bc.frames_in_flight = s.frames_in_flight;
    bc.ladder_size = ladder_size;
    bc.cuda_device = s.cuda_device;
    bc.cuda_context = s.cuda_context;
    bc.cuda_stream = s.cuda_stream;
#ifdef VMAF_CUDA_HAVE_CUDA
    // Features without a GPU stage: backend=cuda refuses them (EINVAL, whatever the
    // device: the settings ask for what the CUDA backend cannot do), auto runs on the CPU.
    // The message names the first model that needs the feature.
    std::string cpu_only;
    for (std::size_t i = 0; i < features_.size() && cpu_only.empty(); ++i) {
        if (features_[i]->has_gpu()) continue;
        cpu_only = features_[i]->gpu_refusal();
        for (const Model& m : models_) {
            const auto needs = model_extractors(m);
            if (std::find(needs.begin(), needs.end(), extractors[i]) == needs.end()) continue;
            cpu_only += " (needed by model '" + m.name() + "', " + m.source() + ")";
            break;
        }
    }
    if (s.backend == VMAF_CUDA_BACKEND_CPU) {
        backend_ = make_cpu_backend(bc, plan_);
    } else if (s.backend == VMAF_CUDA_BACKEND_CUDA && !cpu_only.empty()) {
        throw Error(VMAF_CUDA_EINVAL, "backend=cuda: " + cpu_only);
    } else {
        const CudaDeviceCheck chk = check_cuda_device(bc);
        if (chk.result == CudaDeviceCheck::Result::ok && cpu_only.empty()) {
            backend_ = make_cuda_backend(bc, plan_);
        } else if (s.backend == VMAF_CUDA_BACKEND_CUDA) {
            throw Error(VMAF_CUDA_ENODEV, "backend=cuda: " + chk.message);
        } else {
            // auto: the CPU backend gives the same numbers; say why once when a device
            // is there but cannot run the kernels (no device at all is the plain case).
            if (chk.result == CudaDeviceCheck::Result::cannot_run)
                warning_ = "backend=auto: " + chk.message + "; scoring on the CPU backend instead";
            else if (chk.result == CudaDeviceCheck::Result::ok)
                warning_ = "backend=auto: " + cpu_only + "; scoring on the CPU backend instead";
            backend_ = make_cpu_backend(bc, plan_);
        }
    }
#else
    if (s.backend == VMAF_CUDA_BACKEND_CUDA)
        throw Error(VMAF_CUDA_ENODEV,
                    "backend=cuda asked, but this build of vmaf_cuda has no CUDA backend");
    backend_ = make_cpu_backend(bc, plan_);
#endif
    backend_config_ = bc;
    if (!dropped.empty()) warning_ = warning_.empty() ? dropped : warning_ + "; " + dropped;
    // A ladder's share computes the ladder-shared features (VIF, ADM) of its renditions at
    // once: on the CUDA backend in one pass with the reference's side once; on the CPU
    // backend one rendition after the other, which saves nothing, so only where the
    // renditions' sessions compute on the calling thread anyway (n_threads <= 1; with
    // workers each rendition keeps its own, in parallel).
    const BackendCaps caps = backend_->caps();
    const bool ladder_shares_all = caps.ladder_one_pass || bc.n_threads <= 1;
    for (std::size_t i = 0; i < features_.size() && i < 64; ++i)
        if (features_[i]->reference_only() || (features_[i]->ladder_shared() && ladder_shares_all))
            share_mask_ |= std::uint64_t(1) << i;
    // The CPU backend computes as many frames at once as it has workers: let at least
    // that many be in flight, or workers beyond frames_in_flight would idle.
    in_flight_ = std::max({s.frames_in_flight, backend_->in_flight_hint(), caps.workers});
}

Session::~Session() = default;

void Session::send(const VmafCudaPicture& ref, const VmafCudaPicture& dist) {
    send(ref, dist, nullptr, 0, 0);
}

std::vector<const FeatureInstance*> Session::shared_features() const {
    std::vector<const FeatureInstance*> out;
    for (std::size_t i = 0; i < features_.size(); ++i)
        if (shared(i)) out.push_back(features_[i].get());
    return out;
}

std::unique_ptr<Backend> Session::make_backend(const FramePlan& plan, unsigned renditions) const {
    BackendConfig bc = backend_config_;
    bc.renditions = renditions;
    return backend_->make_like(bc, plan);
}

void Session::send(const VmafCudaPicture& ref, const VmafCudaPicture& dist, ReferenceShare* share,
                   unsigned ladder_index, unsigned block) {
    if (flushed_) throw Error(VMAF_CUDA_ESTATE, "send after flush");
    check_pair(ref, dist);
    const std::uint64_t skip = share && share_mask_ ? share_mask_ : 0;
    backend_->submit(sent_, ref, dist, skip);
    if (skip) shared_frames_.push_back({sent_, ladder_index, block, share});
    ++sent_;
    // Keep the pipeline bounded: collect what is finished; block only when too far ahead.
    collect(false);
    while (backend_->pending() > in_flight_) collect(true);
}

void Session::check_pair(const VmafCudaPicture& ref, const VmafCudaPicture& dist) const {
    validate_picture(ref, "reference", settings_);
    validate_picture(dist, "distorted", settings_);
    if (!backend_->caps().device_pictures &&
        (ref.memory != VMAF_CUDA_MEMORY_HOST || dist.memory != VMAF_CUDA_MEMORY_HOST))
        throw Error(VMAF_CUDA_ENODEV,
                    "device pictures need the CUDA backend, but this session runs on the CPU");
    if (plan_.chroma) {
        std::string readers;
        for (const auto& f : features_)
            if (f->reads_chroma()) {
                const std::string& n = f->outputs().empty() ? std::string() : f->outputs()[0].name;
                readers += (readers.empty() ? "" : ", ") + n;
            }
        validate_chroma(ref, "reference", settings_, readers);
        validate_chroma(dist, "distorted", settings_, readers);
    }
}

void Session::collect(bool wait) {
    if (!backend_) return; // an earlier segment: flushed, its backend closed
    FrameResult fr;
    bool first = true;
    while (backend_->retrieve(fr, wait && first)) {
        first = false;
        on_result(std::move(fr));
    }
}

void Session::on_result(FrameResult&& fr) {
    if (fr.index != computed_) throw Error(VMAF_CUDA_EINTERNAL, "frames out of order");
    if (!shared_frames_.empty() && shared_frames_.front().index == fr.index) {
        // A ladder's frame: the shared features' values and series from the share.
        const SharedFrame sf = shared_frames_.front();
        shared_frames_.pop_front();
        const FrameResult& sr = sf.share->result(sf.ladder_index);
        const FramePlan& sp = sf.share->plan();
        std::size_t j = 0;
        for (std::size_t i = 0; i < features_.size(); ++i) {
            if (!shared(i)) continue;
            const FeatureInstance& f = *features_[i];
            const std::size_t bv = sf.block * sp.n_values, bs = sf.block * sp.n_series;
            std::copy_n(sr.values.begin() + bv + sp.out_offset[j], f.outputs().size(),
                        fr.values.begin() + plan_.out_offset[i]);
            std::copy_n(sr.series.begin() + bs + sp.series_offset[j], f.series_width(),
                        fr.series.begin() + plan_.series_offset[i]);
            ++j;
        }
        sf.share->release(sf.ladder_index);
    }
    ++computed_;
    FrameRow row;
    row.index = fr.index;
    row.values.assign(names_.size(), kNaN);
    for (std::size_t i = 0; i < features_.size(); ++i) {
        if (plan_.runs(i, fr.scored)) {
            const auto& outs = features_[i]->outputs();
            for (std::size_t k = 0; k < outs.size(); ++k)
                if (!outs[k].delayed) row.values[feature_slots_[i].cols[k]] = fr.values[plan_.out_offset[i] + k];
        }
        series_[i]->push(fr.series.data() + plan_.series_offset[i]);
    }
    if (fr.scored) waiting_.push_back(std::move(row));
    finalize_ready();
}

bool Session::ready(unsigned index) const {
    if (flushed_) return true;
    for (const auto& f : features_)
        if (std::size_t(index) + f->lookahead(index) >= computed_) return false;
    return true;
}

void Session::finalize_ready() {
    while (!waiting_.empty() && ready(waiting_.front().index)) {
        FrameRow row = std::move(waiting_.front());
        waiting_.pop_front();
        finish_row(row, flushed_ ? sent_ : computed_);
        keep_row(std::move(row));
    }
}

void Session::keep_row(FrameRow&& row) {
    scored_frames_.push_back(row.index);
    if (settings_.keep_history) {
        rows_.push_back(std::move(row));
        return;
    }
    // No history: the last kRecentRows rows stay (a caller that output fewer frames than
    // it sent can still truncate, e.g. ffmpeg's -frames:v), older ones go into running
    // pools in frame order (the same sums libvmaf's pooling makes).
    scored_frames_.clear(); // aggregates need history
    recent_.push_back(row);
    while (recent_.size() > kRecentRows) {
        fold_prev_recent();
        add_running(recent_.front());
        recent_.pop_front();
    }
    undelivered_.push_back(std::move(row));
}

void Session::fold_prev_recent() {
    // the earlier segment's last rows come before this one's first in the running pools
    if (!prev_recent_pending_) return;
    prev_recent_pending_ = false;
    for (const FrameRow& row : prev_->recent_) add_running(row);
    running_base_ = running_count_;
}

void Session::add_running(const FrameRow& row) {
    for (std::size_t c = 0; c < names_.size(); ++c) {
        const double v = row.values[c];
        Running& r = running_[c];
        if (running_count_ == 0) r.min = r.max = v;
        r.sum += v;
        r.inv += 1. / (v + 1.);
        if (v < r.min) r.min = v;
        if (v > r.max) r.max = v;
    }
    ++running_count_;
}

void Session::finish_row(FrameRow& row, std::size_t n) {
    const unsigned index = row.index;
    std::vector<double> tmp;
    for (std::size_t i = 0; i < features_.size(); ++i) {
        if (!feature_slots_[i].has_delayed) continue;
        const auto& outs = features_[i]->outputs();
        tmp.assign(outs.size(), kNaN);
        features_[i]->delayed(index, *series_[i], n, tmp.data());
        for (std::size_t k = 0; k < outs.size(); ++k)
            if (outs[k].delayed) row.values[feature_slots_[i].cols[k]] = tmp[k];
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
    if (frames >= base_ || !prev_) {
        truncate_segment(frames - std::min(frames, base_));
        return;
    }
    // The cut falls in an earlier segment: none of this one's frames stay. Without the
    // history, only while its last rows are not folded into the running pools.
    if (!settings_.keep_history && (!prev_recent_pending_ || frames < prev_->base_))
        throw Error(VMAF_CUDA_ESTATE, "truncate to " + std::to_string(frames) +
                                          " frames, before the segment that starts at frame " +
                                          std::to_string(base_) +
                                          ", needs the frame history (keep_history=1)");
    prev_->truncate(frames); // (first: it throws before changing anything)
    truncate_segment(0);
    prev_recent_pending_ = !settings_.keep_history && !prev_->recent_.empty();
}

void Session::truncate_segment(unsigned frames) {
    if (frames >= sent_) return;
    if (!settings_.keep_history) {
        // Without history only the last kRecentRows scored frames can be dropped.
        if (running_count_ > running_base_ && (recent_.empty() || recent_.front().index >= frames))
            throw Error(VMAF_CUDA_ESTATE, "truncate to " + std::to_string(frames) + " of " +
                                              std::to_string(sent_) +
                                              " frames needs the frame history (keep_history=1)");
        while (!recent_.empty() && recent_.back().index >= frames) recent_.pop_back();
        for (auto& st : series_) st->truncate(frames);
        sent_ = frames;
        for (auto it = recent_.rbegin(); it != recent_.rend(); ++it) {
            if (std::size_t(it->index) + max_lookahead_ < frames) break;
            finish_row(*it, frames);
        }
        return;
    }
    while (!rows_.empty() && rows_.back().index >= frames) rows_.pop_back();
    while (!scored_frames_.empty() && scored_frames_.back() >= frames) scored_frames_.pop_back();
    if (delivered_ > rows_.size()) delivered_ = rows_.size();
    for (auto& st : series_) st->truncate(frames);
    sent_ = frames;
    // Frames whose lookahead reached past the new end: their temporal outputs (and so
    // their model scores) are those libvmaf computes near the end of a stream.
    for (auto it = rows_.rbegin(); it != rows_.rend(); ++it) {
        if (std::size_t(it->index) + max_lookahead_ < frames) break;
        finish_row(*it, frames);
    }
}

int Session::receive(VmafCudaFrameScores& out) {
    // the earlier segments' frames first (flushed: OK or EOF)
    if (prev_ && prev_->receive(out) == VMAF_CUDA_OK) return VMAF_CUDA_OK;
    auto available = [&] {
        return settings_.keep_history ? delivered_ < rows_.size() : !undelivered_.empty();
    };
    if (!available()) collect(false);
    if (!available()) {
        if (flushed_) return VMAF_CUDA_EOF;
        return VMAF_CUDA_EAGAIN;
    }
    if (settings_.keep_history) {
        receive_values_ = rows_[delivered_].values;
        out.index = base_ + rows_[delivered_].index;
        ++delivered_;
    } else {
        receive_values_ = std::move(undelivered_.front().values);
        out.index = base_ + undelivered_.front().index;
        undelivered_.pop_front();
    }
    out.count = unsigned(names_.size());
    out.names = name_ptrs_.data();
    out.values = receive_values_.data();
    return VMAF_CUDA_OK;
}

void Session::flush() {
    if (flushed_) return;
    while (backend_->pending() > 0) collect(true);
    flushed_ = true;
    finalize_ready();
}

double Session::pooled(const std::string& name, int method) const {
    int col = -1;
    for (std::size_t i = 0; i < names_.size(); ++i)
        if (names_[i] == name) col = int(i);
    if (col < 0) throw Error(VMAF_CUDA_EINVAL, "no feature or model named '" + name + "'");
    if (!settings_.keep_history) {
        // the running pools of the older frames, continued over the recent rows in order
        Running r = running_[col];
        unsigned count = running_count_;
        std::vector<const FrameRow*> rows;
        if (prev_recent_pending_)
            for (const FrameRow& row : prev_->recent_) rows.push_back(&row);
        for (const FrameRow& row : recent_) rows.push_back(&row);
        for (const FrameRow* rp : rows) {
            const FrameRow& row = *rp;
            const double v = row.values[col];
            if (count == 0) r.min = r.max = v;
            r.sum += v;
            r.inv += 1. / (v + 1.);
            if (v < r.min) r.min = v;
            if (v > r.max) r.max = v;
            ++count;
        }
        if (count == 0) throw Error(VMAF_CUDA_EINVAL, "no frame has been scored yet");
        switch (method) {
        case VMAF_CUDA_POOL_MEAN: return r.sum / count;
        case VMAF_CUDA_POOL_HARMONIC_MEAN: return count / r.inv - 1.0;
        case VMAF_CUDA_POOL_MIN: return r.min;
        case VMAF_CUDA_POOL_MAX: return r.max;
        default:
            throw Error(VMAF_CUDA_ESTATE, "pooling method " + std::to_string(method) +
                                              " needs the frame history (keep_history=1)");
        }
    }
    std::vector<double> v;
    for (const Session* seg : chain())
        for (const FrameRow& r : seg->rows_) v.push_back(r.values[col]);
    if (v.empty()) throw Error(VMAF_CUDA_EINVAL, "no frame has been scored yet");
    return pool(v, method);
}

namespace {

/// A feature's series over every segment: row i (numbered over the stream) is row
/// i - first of the segment that holds it.
class ChainSeries final : public Series {
public:
    void add(unsigned first, const Series& s) { parts_.push_back({first, &s}); }
    const double* at(std::size_t i) const override {
        for (auto it = parts_.rbegin(); it != parts_.rend(); ++it)
            if (i >= it->first) return it->s->at(i - it->first);
        throw Error(VMAF_CUDA_EINTERNAL, "series row " + std::to_string(i) + " is in no segment");
    }
    std::size_t end() const override {
        // (segments after a truncate() into an earlier one hold no rows)
        for (auto it = parts_.rbegin(); it != parts_.rend(); ++it)
            if (it->s->end()) return it->first + it->s->end();
        return 0;
    }

private:
    struct Part { std::size_t first; const Series* s; };
    std::vector<Part> parts_;
};

} // namespace

std::vector<const Session*> Session::chain() const {
    std::vector<const Session*> c;
    for (const Session* s = this; s; s = s->prev_.get()) c.insert(c.begin(), s);
    return c;
}

std::vector<Session::Segment> Session::segments() const {
    std::vector<Segment> out;
    for (const Session* s : chain())
        out.push_back({s->base_, s->sent_, s->settings_.width, s->settings_.height, s->settings_.bpc});
    return out;
}

bool Session::scored(std::uint64_t index) const {
    if (index < base_ && prev_ && index >= prev_->base_) return prev_->scored(index);
    if (index < base_ && prev_ && !prev_->prev_ && !earlier_bases_.empty()) {
        // a segment let go (below): counted from its own first frame
        auto it = std::upper_bound(earlier_bases_.begin(), earlier_bases_.end(), unsigned(
            std::min<std::uint64_t>(index, UINT32_MAX)));
        const unsigned first = it == earlier_bases_.begin() ? 0 : *(it - 1);
        return backend_config_.scored(index - first);
    }
    if (index < base_ && prev_) return prev_->scored(index);
    return backend_config_.scored(index - std::min<std::uint64_t>(index, base_));
}

void Session::adopt(std::unique_ptr<Session> prev) {
    if (!prev) return;
    if (sent_ || prev_) throw Error(VMAF_CUDA_ESTATE, "a session continues another only before its first frame");
    if (prev->names_ != names_)
        throw Error(VMAF_CUDA_EINVAL, "the new segment's settings score other features or models "
                                      "than the stream so far");
    if (!prev->settings_.keep_history != !settings_.keep_history)
        throw Error(VMAF_CUDA_EINVAL, "the new segment's settings differ in keep_history");
    prev->flush();
    if (!settings_.keep_history) {
        // the running pools go on over this segment's frames, in frame order: the same
        // sums as over one stream; prev's last rows are folded in when this segment's
        // first row leaves its recent rows (until then a truncate may still drop them)
        prev->fold_prev_recent(); // (a cut back two segments needs the history)
        running_ = prev->running_;
        running_count_ = running_base_ = prev->running_count_;
        prev_recent_pending_ = !prev->recent_.empty();
    }
    base_ = prev->base_ + prev->sent_;
    prev->backend_.reset(); // its device memory: nothing more is computed there
    // Without history only the previous segment can still matter (its last rows, a cut
    // back into it); the ones before it, all delivered, are let go, so memory stays flat
    // over any number of changes. Their first frames stay for scored().
    earlier_bases_ = std::move(prev->earlier_bases_);
    if (!settings_.keep_history && prev->prev_ && prev->prev_->drained()) {
        for (const Session* seg : prev->prev_->chain()) earlier_bases_.push_back(seg->base_);
        prev->prev_.reset();
    }
    sync_.insert(sync_.begin(), prev->sync_.begin(), prev->sync_.end());
    prev_ = std::move(prev);
}

void Session::write_log(const std::string& path, int fmt, int precision, double fps) const {
    if (!settings_.keep_history)
        throw Error(VMAF_CUDA_ESTATE, "a log needs the frame history (keep_history=1)");
    const std::vector<const Session*> segs = chain();
    LogTable t;
    t.width = segs.front()->settings_.width;
    t.height = segs.front()->settings_.height;
    t.subsample = settings_.n_subsample;
    t.fps = fps;
    t.precision = precision;
    t.sync = sync_;
    std::size_t n_rows = 0;
    for (const Session* seg : segs) {
        for (const FrameRow& r : seg->rows_) t.frames.push_back(seg->base_ + r.index);
        n_rows += seg->rows_.size();
        if (segs.size() > 1 && seg->sent_)
            t.segments.push_back({seg->base_, seg->sent_, seg->settings_.width,
                                  seg->settings_.height, seg->settings_.bpc});
    }
    for (std::size_t c = 0; c < names_.size(); ++c) {
        LogColumn col;
        col.name = names_[c];
        for (const Session* seg : segs)
            for (const FrameRow& r : seg->rows_) col.values.push_back(r.values[c]);
        if (n_rows)
            for (int m = 0; m < 4; ++m) col.pooled[m] = pool(col.values, m);
        t.columns.push_back(std::move(col));
    }
    if (n_rows)
        for (std::size_t i = 0; i < features_.size(); ++i) {
            ChainSeries series;
            std::vector<unsigned> scored;
            for (const Session* seg : segs) {
                series.add(seg->base_, *seg->series_[i]);
                for (unsigned f : seg->scored_frames_) scored.push_back(seg->base_ + f);
            }
            for (auto& a : features_[i]->aggregate(scored, series)) t.aggregate.push_back(a);
        }
    write_log_file(path, static_cast<LogFormat>(fmt), t);
}

FramePlan::FramePlan(std::vector<const FeatureInstance*> f) : features(std::move(f)) {
    for (const FeatureInstance* x : features) {
        out_offset.push_back(n_values);
        series_offset.push_back(n_series);
        n_values += x->outputs().size();
        n_series += x->series_width();
        chroma = chroma || x->reads_chroma();
        history = std::max(history, x->history());
        dist_history = std::max(dist_history, x->dist_history());
        dist_every_frame = dist_every_frame || (x->temporal() && x->reads_dist_every_frame());
    }
}

} // namespace vmaf_cuda::engine

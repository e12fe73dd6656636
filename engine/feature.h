// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file feature.h
/// Features as records (DESIGN.md 4b): the one extension point of the engine.
///
/// Each feature extractor (libvmaf's name: "adm", "vif", "motion", "psnr", "float_ssim",
/// ...) is one FeatureRecord in engine/features/<stem>.cpp, listed once in
/// feature_registry.cpp. A record says:
///   - its options, with libvmaf's names, aliases, types, defaults, ranges and whether a
///     non-default value renames its outputs (libvmaf's VMAF_OPT_FLAG_FEATURE_PARAM);
///   - the raw feature names it provides (what model files name as inputs);
///   - how to make a FeatureInstance for a session (options resolved, size checked).
/// A FeatureInstance says which outputs it writes (libvmaf's log names, suffixes
/// included) and in which collector position, the planes and previous frames it reads,
/// how many frames of lookahead its late outputs need, and gives the stages:
///   - a CPU stage (CpuStage: host planes -> output values),
///   - a GPU stage (GpuStage: device planes -> device accumulator -> host finish),
///   - the host-only temporal step (delayed(): outputs that need later frames) and the
///     whole-stream aggregate (libvmaf's aggregate_metrics).
/// The session plans columns from instances, the backends run stages, the writers print
/// names: none of them names a feature.

#include "model.h"
#include "yuv.h"

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vmaf_cuda::cuda {
struct DevicePlane;
struct DeviceLuma;
} // namespace vmaf_cuda::cuda

namespace vmaf_cuda::engine {

/// Value types of libvmaf's VmafOption.
enum class OptType { boolean, integer, real, text };

/// One option of an extractor, as libvmaf v3.2.0's `options[]` table of it declares it.
struct OptionDef {
    const char* name;
    const char* alias;   ///< suffix key in output names; nullptr: the name itself
    OptType type;
    double def, min, max; ///< numeric default and range (booleans 0/1; text: unused)
    bool names_feature;  ///< VMAF_OPT_FLAG_FEATURE_PARAM: a non-default value renames outputs
    bool supported;      ///< vmaf_cuda computes this option (else only the default is accepted)
    const char* def_text = nullptr; ///< text options: the default
};

/// The frames of a session.
struct Geometry {
    unsigned width = 0, height = 0; ///< luma samples
    unsigned bpc = 8;               ///< 8..16
    unsigned chroma = 420;          ///< 420, 422, 444 or 400
};

/// One output of an instance.
struct OutputDef {
    std::string name;     ///< log name (libvmaf alias + option suffix), e.g. "integer_adm2"
    std::string key;      ///< feature-collector key models look up (raw name unless suffixed)
    bool late = false;    ///< its column comes after every feature's other outputs (libvmaf
                          ///< writes it one frame later, e.g. integer_motion2)
    bool delayed = false; ///< its value comes from FeatureInstance::delayed(), not the stage
};

/// Host views of one frame pair for a CPU stage. `dist` is null on frames n_subsample
/// skips (only temporal instances see those). prev_ref[k] / prev_dist[k]: frame
/// index - 1 - k, null before the first frame or beyond the instance's history().
struct CpuFrame {
    unsigned index = 0;
    const ref::YuvView* ref = nullptr;
    const ref::YuvView* dist = nullptr;
    const ref::YuvView* prev_ref[2] = {};
    const ref::YuvView* prev_dist[2] = {};
};

/// Device views of one frame pair for a GPU stage. `ref`/`dist` are three DevicePlanes
/// (Y, Cb, Cr; chroma empty when not read) with the caller's step and shift; `ref_luma`/
/// `dist_luma` the luma as the integer VMAF kernels take it (shift already removed).
/// Previous frames as in CpuFrame.
struct GpuFrame {
    unsigned index = 0;
    bool scored = true;
    const cuda::DevicePlane* ref = nullptr;
    const cuda::DevicePlane* dist = nullptr;
    const cuda::DeviceLuma* ref_luma = nullptr;
    const cuda::DeviceLuma* dist_luma = nullptr;
    const cuda::DevicePlane* prev_ref[2] = {};
    const cuda::DevicePlane* prev_dist[2] = {};
    const cuda::DeviceLuma* prev_ref_luma[2] = {};
    /// A ladder's frame (the share of ladder.cpp): `renditions` distorted lumas scored
    /// against the one reference, dist_lumas[r] for rendition r (dist_luma is
    /// dist_lumas[0]). Only stages whose ladder() is true are given more than one.
    unsigned renditions = 1;
    const cuda::DeviceLuma* const* dist_lumas = nullptr;
};

/// Per-frame numbers an instance keeps for its temporal step or aggregate (e.g. motion's
/// SAD score), `width` doubles per frame. at(i) is frame i's row; frames [first(), end())
/// are available (older ones may have been dropped when the session keeps no history).
class Series {
public:
    virtual ~Series() = default;
    virtual const double* at(std::size_t i) const = 0;
    virtual std::size_t end() const = 0;
};

/// The CPU stage of one instance, one per worker thread (may keep scratch).
class CpuStage {
public:
    virtual ~CpuStage() = default;
    /// Writes the stage's outputs (non-delayed ones, in outputs() order; delayed slots
    /// untouched) into out[], and the frame's series row into series[].
    virtual void compute(const CpuFrame& f, double* out, double* series) = 0;
};

/// The GPU stage of one instance, one per backend lane; enqueue and finish of one frame
/// are called in order, and the finish of frame i before frame i + slots is enqueued.
class GpuStage {
public:
    virtual ~GpuStage() = default;
    /// Bytes of the device accumulator one frame writes (the backend zeroes it on the
    /// stage's stream before enqueue, so kernels need not; copied back).
    virtual std::size_t accum_bytes() const = 0;
    /// Enqueues the frame's kernels on `stream` (a cudaStream_t).
    virtual void enqueue(const GpuFrame& f, void* d_accum, void* stream) = 0;
    /// After the accumulator is back on the host: outputs and series row as CpuStage.
    /// `stream`: the lane's stream, for fallbacks that copy more from the device.
    virtual void finish(unsigned index, const void* h_accum, double* out, double* series,
                        void* stream) = 0;
    /// Whether finish() may run on a worker thread, several frames at once and in any
    /// order, concurrently with enqueue() and before_finish() of later frames (`stream` is
    /// then null; the session's CUDA context is current there): host code over `h_accum`,
    /// or device work over the frame's slot (valid until the finish of frame i is done,
    /// see above) on streams of its own or synchronous copies, complete when finish()
    /// returns, with any shared state thread-safe (CAMBI's pools, float_ssim's sums, the
    /// kernels' atomic frame counts). Stages whose finish uses the lane's stream keep the
    /// default and run on the session's thread, in frame order.
    virtual bool finish_on_any_thread() const { return false; }
    /// Called on the session's thread, in frame order, once the frame's accumulator is on
    /// the host and before finish(): a stage whose finish needs more from the device may
    /// start asynchronous copies here (the frame's device results are complete), so that
    /// finish() can run on a worker thread and only wait for them.
    virtual void before_finish(unsigned /*index*/, const void* /*h_accum*/, void* /*stream*/) {}
    /// Whether enqueue() scores GpuFrame::renditions distorted lumas against one reference
    /// at once (up to GpuContext::renditions), computing the reference's side once, and
    /// writes rendition r's accumulator at d_accum + r * accum_bytes(); finish() is then
    /// called once per rendition with that rendition's accumulator (concurrently for the
    /// renditions of one frame where finish_on_any_thread()).
    virtual bool ladder() const { return false; }
};

/// What a GPU stage may ask of its backend.
struct GpuContext {
    unsigned slots = 4;      ///< frames of one lane between enqueue and finish, at most
    unsigned renditions = 1; ///< distorted pictures per frame, at most (a ladder's share)
};

/// One feature extractor with its options, for one session geometry.
class FeatureInstance {
public:
    virtual ~FeatureInstance() = default;
    virtual const std::vector<OutputDef>& outputs() const = 0;
    /// Reads Cb/Cr (the caller must give chroma planes).
    virtual bool reads_chroma() const { return false; }
    /// Computed on every frame, also those n_subsample skips (motion: reference only).
    virtual bool temporal() const { return false; }
    /// Whether the stage reads only reference pictures (the current one and history()
    /// previous ones) and keeps no state between frames, so that its outputs and series
    /// row for a frame are a function of those reference pictures and the frame index:
    /// a ladder computes it once per reference frame for all renditions.
    virtual bool reference_only() const { return false; }
    /// Whether a ladder's share computes it for all its renditions at once (VIF, ADM): a
    /// per-frame function of the luma pair with no history and no state between frames,
    /// whose GPU stage has ladder() true (the CPU backend runs it once per rendition).
    virtual bool ladder_shared() const { return false; }
    /// Reads the distorted picture on frames n_subsample skips (temporal instances only).
    virtual bool reads_dist_every_frame() const { return false; }
    /// Previous frames (0..2) the stage reads: prev_ref[0 .. history()).
    virtual unsigned history() const { return 0; }
    /// Previous distorted frames the stage reads (<= history()).
    virtual unsigned dist_history() const { return 0; }
    /// Doubles per frame kept in the series.
    virtual unsigned series_width() const { return 0; }
    /// Whether the aggregate needs the series of every frame (else frames older than
    /// series_keep() behind the newest may be dropped).
    virtual bool series_all() const { return false; }
    /// Frames behind the newest whose series rows delayed() may read (and frames at the
    /// start: it may read rows [0, series_keep()) at any time).
    virtual unsigned series_keep() const { return 4; }
    /// Frames after i whose series delayed() needs before frame i is final.
    virtual unsigned lookahead(std::size_t /*i*/) const { return 0; }
    /// Largest lookahead over all frames.
    virtual unsigned max_lookahead() const { return 0; }
    /// Fills the delayed outputs of frame i (outputs()[k].delayed) into out[], from the
    /// series of frames 0..n-1 (n > i + lookahead(i), or the stream ended at n).
    virtual void delayed(std::size_t /*i*/, const Series& /*s*/, std::size_t /*n*/, double* /*out*/) const {}
    /// libvmaf's aggregate_metrics of this instance over the scored frames (indices, in
    /// order): (name, value) pairs; none by default.
    virtual std::vector<std::pair<std::string, double>>
    aggregate(std::span<const unsigned> /*frames*/, const Series& /*s*/) const { return {}; }
    /// A fresh CPU stage (throws Error on bad input).
    virtual std::unique_ptr<CpuStage> cpu() const = 0;
    /// A fresh GPU stage; nullptr when the instance cannot run on the GPU (then
    /// gpu_refusal() says why). Only in builds with the CUDA backend.
    virtual std::unique_ptr<GpuStage> gpu(const GpuContext& /*ctx*/) const { return nullptr; }
    /// Whether the GPU stage's host finish takes long (milliseconds per 4K frame: SpEED's
    /// covariances, CIEDE's map sum, CAMBI's quick-select fallback), so that the CUDA
    /// backend keeps more frames in flight to run several finishes at once.
    virtual bool heavy_host_finish() const { return false; }
    /// Whether gpu() gives a stage (without making one).
    virtual bool has_gpu() const { return false; }
    virtual std::string gpu_refusal() const { return "not implemented on the CUDA backend"; }
};

/// A feature extractor of the registry.
struct FeatureRecord {
    const char* name;                    ///< libvmaf's extractor name, e.g. "float_ssim"
    std::span<const OptionDef> options;  ///< in libvmaf's table order
    std::span<const char* const> provided; ///< raw feature names (model inputs), libvmaf order
    /// The instance for `spec` (spec.extractor == name) at `geo`. Throws Error(EINVAL)
    /// naming the feature for options or sizes libvmaf refuses (before the first frame).
    std::unique_ptr<FeatureInstance> (*make)(const FeatureSpec& spec, const Geometry& geo);
};

/// Every record, in registry order.
std::span<const FeatureRecord* const> feature_records();
/// The record named `name`, or nullptr.
const FeatureRecord* find_feature(std::string_view name);

/// Helpers for records: the outputs for raw names `provided` of `spec` (key = feature_key,
/// name = feature_alias(key)).
OutputDef make_output(std::string_view provided, const FeatureSpec& spec, bool late = false,
                      bool delayed = false);
/// The text of option `option` of `spec` (given or default); for text options.
std::string option_text(const FeatureSpec& spec, std::string_view option);

} // namespace vmaf_cuda::engine

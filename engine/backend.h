// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file backend.h
/// The backend interface: something that runs the stages of the session's feature
/// instances (feature.h) on frame pairs and returns each frame's outputs. Temporal
/// steps, models, pooling and logs are shared and live in the session.

#include "vmaf_cuda.h"

#include "feature.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace vmaf_cuda::engine {

/// What to compute for each frame: the session's feature instances (feature.h), and
/// where each one's outputs and series row go in a FrameResult.
struct FramePlan {
    std::vector<const FeatureInstance*> features;
    std::vector<std::size_t> out_offset;    ///< per feature: first of its outputs() in values
    std::vector<std::size_t> series_offset; ///< per feature: first of its series row
    std::size_t n_values = 0, n_series = 0;
    bool chroma = false;          ///< some feature reads Cb/Cr
    unsigned history = 0;         ///< previous reference frames read (max over features)
    unsigned dist_history = 0;    ///< previous distorted frames read
    bool dist_every_frame = false; ///< some temporal feature reads the distorted picture of
                                   ///< frames n_subsample skips

    explicit FramePlan(std::vector<const FeatureInstance*> f = {});
    /// Whether feature i runs on frame `index` (temporal ones on every frame).
    bool runs(std::size_t i, bool scored) const { return scored || features[i]->temporal(); }
    /// The same, with a ladder's skip mask (Backend::submit).
    bool runs(std::size_t i, bool scored, std::uint64_t skip) const {
        return runs(i, scored) && !(i < 64 && (skip >> i & 1));
    }
};

/// Results of one frame: values[out_offset[i] + k] is output k of feature i (NaN where a
/// feature did not run, and for delayed outputs), series likewise.
struct FrameResult {
    unsigned index = 0;
    bool scored = false;          ///< index % n_subsample == 0
    std::vector<double> values;
    std::vector<double> series;
};

/// Geometry and scheduling parameters common to all backends.
struct BackendConfig {
    unsigned width = 0, height = 0, bpc = 8;
    unsigned chroma = 420;        ///< 420, 422, 444 or 400
    unsigned n_subsample = 1;
    unsigned n_threads = 0;
    unsigned frames_in_flight = 4;
    int cuda_device = -1;         ///< -1: not named (device 0, or the context's device)
    void* cuda_context = nullptr;
    void* cuda_stream = nullptr;
    unsigned renditions = 1;      ///< distorted pictures per submit_ladder(), at most
    /// Renditions of the ladder this backend's session scores one of (1: not in a ladder);
    /// the CUDA backend sizes its lanes by the ladder's work, not the rendition's.
    unsigned ladder_size = 1;

    /// Whether frame `index` is scored: n_subsample = n scores frames 0, n, 2n, ... (the
    /// one definition; vmaf_cuda_frame_scored() answers it for the filter and the CLI).
    bool scored(std::uint64_t index) const { return n_subsample <= 1 || index % n_subsample == 0; }
};

/// What a backend can do: the session plans from these, never from the backend's name.
struct BackendCaps {
    /// Reads pictures in device memory (VMAF_CUDA_MEMORY_DEVICE).
    bool device_pictures = false;
    /// submit_ladder() computes the renditions' ladder-shared features (VIF, ADM) in one
    /// pass with the reference's side once; without it they are computed one after the
    /// other, which a ladder's share only does where nothing else would run them at once.
    bool ladder_one_pass = false;
    /// Frames it computes at once on host worker threads (0: none); the session keeps at
    /// least that many in flight.
    unsigned workers = 0;
};

class Backend {
public:
    virtual ~Backend() = default;
    /// For messages and vmaf_cuda_backend_name(): "cpu" or "cuda".
    virtual const char* name() const = 0;
    virtual BackendCaps caps() const = 0;
    /// A backend of the same kind for another configuration and plan (a ladder's share).
    virtual std::unique_ptr<Backend> make_like(const BackendConfig&, const FramePlan&) const = 0;
    /// Starts work on frame pair `index` (0, 1, 2, ... in order). Host pictures are
    /// consumed before return; device pictures must stay valid until retrieved.
    /// `skip`: bit i set = feature i does not run on this frame (a ladder gives its
    /// values from the shared reference work); its values stay NaN, its series row 0.
    /// Throws engine::Error (EINVAL, ENODEV, ECUDA).
    virtual void submit(unsigned index, const VmafCudaPicture& ref, const VmafCudaPicture& dist,
                        std::uint64_t skip = 0) = 0;
    /// A ladder's frame (ladder.cpp's share): the plan's features on one reference and
    /// `n` distorted pictures (1..BackendConfig::renditions). The plan holds only
    /// reference-only features, run once, and ladder-shared ones
    /// (FeatureInstance::ladder_shared), run for every rendition. Its FrameResult holds one
    /// block of values and series per rendition: values[r * plan.n_values + ...] (the
    /// reference-only features' values repeated in every block). Throws as submit().
    virtual void submit_ladder(unsigned index, const VmafCudaPicture& ref,
                               const VmafCudaPicture* const* dists, unsigned n) = 0;
    /// Moves the oldest finished frame's results into `out`. Returns false when
    /// none is finished yet (`wait` = false) or none is pending at all.
    virtual bool retrieve(FrameResult& out, bool wait) = 0;
    /// Frames submitted but not yet retrieved.
    virtual unsigned pending() const = 0;
    /// Frames the session should let be in flight at least (0: no preference).
    virtual unsigned in_flight_hint() const { return 0; }
    /// The most frames that may be pending after a submit (the CUDA backend's readback
    /// ring less two; no limit on the CPU backend).
    virtual unsigned capacity() const { return ~0u; }
    /// The alignment signature's cell sums (vmaf_cuda_align.h: `grid` x `grid` cells of
    /// the luma samples >> shift) of a picture in device memory, on the host when it
    /// returns. Backends without device pictures throw Error(VMAF_CUDA_EINVAL).
    virtual void device_cell_sums(const VmafCudaPicture& pic, unsigned grid,
                                  std::uint64_t* sums);
};

std::unique_ptr<Backend> make_cpu_backend(const BackendConfig&, const FramePlan&);
#ifdef VMAF_CUDA_HAVE_CUDA
/// Runs on the device that check_cuda_device() found usable. Throws engine::Error
/// (ENOMEM, ECUDA).
std::unique_ptr<Backend> make_cuda_backend(const BackendConfig&, const FramePlan&);

/// Whether the CUDA backend can run with these settings.
struct CudaDeviceCheck {
    enum class Result {
        ok,          ///< the device can run this build's kernels
        no_device,   ///< no driver or no device at all
        cannot_run,  ///< a device, but this build has no machine code or PTX it can load
    } result = Result::no_device;
    std::string message; ///< why not, naming the device, its compute capability, the archs built in
};
/// Finds the device (the context's, else cuda_device, -1 meaning 0) and checks that the
/// kernels load on it. Throws engine::Error: ENODEV when cuda_device names a device
/// that does not exist, EINVAL when it names another device than the given context's.
CudaDeviceCheck check_cuda_device(const BackendConfig&);
#endif

} // namespace vmaf_cuda::engine

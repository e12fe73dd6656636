// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file backend.h
/// The backend interface: something that turns frame pairs into integer accumulators
/// (ADM, VIF, motion SAD). The floating-point tail (reference/ `*_finish`), motion
/// pooling, the model and the logs are shared and live in the session.

#include "vmaf_cuda.h"

#include "adm.h"
#include "motion.h"
#include "vif.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace vmaf_cuda::engine {

/// What to compute for each frame: one ADM and one VIF accumulator per option set.
struct ExtractorPlan {
    std::vector<ref::AdmOptions> adm;
    std::vector<ref::VifOptions> vif;
    bool motion = true;
};

/// Integer results of one frame, in plan order.
struct FrameAccum {
    unsigned index = 0;
    bool scored = false;          ///< ADM/VIF computed (index % n_subsample == 0)
    std::vector<ref::AdmAccum> adm;
    std::vector<ref::VifAccum> vif;
    std::uint64_t sad = 0;        ///< blurred SAD against the previous reference (0 for frame 0)
};

/// Geometry and scheduling parameters common to all backends.
struct BackendConfig {
    unsigned width = 0, height = 0, bpc = 8;
    unsigned n_subsample = 1;
    unsigned n_threads = 0;
    unsigned frames_in_flight = 4;
    int cuda_device = -1;         ///< -1: not named (device 0, or the context's device)
    void* cuda_context = nullptr;
    void* cuda_stream = nullptr;
};

class Backend {
public:
    virtual ~Backend() = default;
    virtual const char* name() const = 0;
    /// Starts work on frame pair `index` (0, 1, 2, ... in order). Host pictures are
    /// consumed before return; device pictures must stay valid until retrieved.
    /// Throws engine::Error (EINVAL, ENODEV, ECUDA).
    virtual void submit(unsigned index, const VmafCudaPicture& ref,
                        const VmafCudaPicture& dist) = 0;
    /// Moves the oldest finished frame's accumulators into `out`. Returns false when
    /// none is finished yet (`wait` = false) or none is pending at all.
    virtual bool retrieve(FrameAccum& out, bool wait) = 0;
    /// Frames submitted but not yet retrieved.
    virtual unsigned pending() const = 0;
};

std::unique_ptr<Backend> make_cpu_backend(const BackendConfig&, const ExtractorPlan&);
#ifdef VMAF_CUDA_HAVE_CUDA
/// Runs on the device that check_cuda_device() found usable. Throws engine::Error
/// (ENOMEM, ECUDA).
std::unique_ptr<Backend> make_cuda_backend(const BackendConfig&, const ExtractorPlan&);

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

// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file api_internal.h
/// What the C API's translation units share: the session handle and the guard that turns
/// exceptions into status codes.

#include "vmaf_cuda.h"

#include "error.h"
#include "session.h"

#include <cstdio>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>

struct VmafCudaSession {
    std::unique_ptr<vmaf_cuda::engine::Session> impl;
    std::string error;
    /// A ladder's rendition session (vmaf_cuda_ladder_session()): frames come through the
    /// ladder, and the ladder closes it.
    bool ladder = false;
};

namespace vmaf_cuda::api {

/// Runs `f`, turning exceptions into a status code and a message in `*error`.
template <class F> int guarded_to(std::string* error, F&& f) {
    auto set = [&](std::string m) {
        if (error) *error = std::move(m);
    };
    try {
        return f();
    } catch (const engine::Error& e) {
        set(e.what());
        return e.status;
    } catch (const std::bad_alloc&) {
        set("out of memory");
        return VMAF_CUDA_ENOMEM;
    } catch (const std::invalid_argument& e) {
        // The reference and the kernels reject what they cannot compute this way.
        set(e.what());
        return VMAF_CUDA_EINVAL;
    } catch (const std::exception& e) {
        set(std::string("internal error: ") + e.what());
        return VMAF_CUDA_EINTERNAL;
    } catch (...) {
        set("internal error");
        return VMAF_CUDA_EINTERNAL;
    }
}

template <class F> int guarded(VmafCudaSession* vs, F&& f) {
    return guarded_to(vs ? &vs->error : nullptr, std::forward<F>(f));
}

inline void write_err(char* err, size_t n, const std::string& msg) {
    if (err && n) std::snprintf(err, n, "%s", msg.c_str());
}

} // namespace vmaf_cuda::api

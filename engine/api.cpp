// SPDX-License-Identifier: BSD-2-Clause-Patent
// The C API: every entry catches everything and returns a status code.

#include "vmaf_cuda.h"

#include "error.h"
#include "log_file.h"
#include "session.h"

#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include "api_internal.h"

using vmaf_cuda::api::guarded;
using vmaf_cuda::api::write_err;

extern "C" {

void vmaf_cuda_default_settings(VmafCudaSettings* s) {
    if (!s) return;
    std::memset(s, 0, sizeof *s);
    s->bpc = 8;
    s->chroma = VMAF_CUDA_CHROMA_420;
    s->backend = VMAF_CUDA_BACKEND_AUTO;
    s->n_subsample = 1;
    s->frames_in_flight = 4;
    s->cuda_device = -1;
    s->keep_history = 1;
}

int vmaf_cuda_open(VmafCudaSession** out, const VmafCudaSettings* s, char* err, size_t err_size) {
    if (out) *out = nullptr;
    write_err(err, err_size, "");
    if (!out || !s) {
        write_err(err, err_size, "vmaf_cuda_open: NULL argument");
        return VMAF_CUDA_EINVAL;
    }
    VmafCudaSession* vs = nullptr;
    try {
        vs = new VmafCudaSession;
    } catch (...) {
        write_err(err, err_size, "out of memory");
        return VMAF_CUDA_ENOMEM;
    }
    const int rc = guarded(vs, [&] {
        vs->impl = std::make_unique<vmaf_cuda::engine::Session>(*s);
        return VMAF_CUDA_OK;
    });
    if (rc < 0) {
        write_err(err, err_size, vs->error);
        delete vs;
        return rc;
    }
    *out = vs;
    return VMAF_CUDA_OK;
}

void vmaf_cuda_close(VmafCudaSession* vs) {
    if (!vs || vs->ladder) return;
    try {
        vs->impl.reset();
    } catch (...) {
    }
    delete vs;
}

unsigned vmaf_cuda_model_count(const VmafCudaSession* vs) {
    return vs && vs->impl ? unsigned(vs->impl->models().size()) : 0;
}

unsigned vmaf_cuda_model_bootstrap_count(const VmafCudaSession* vs, unsigned i) {
    if (!vs || !vs->impl || i >= vs->impl->models().size()) return 0;
    return unsigned(vs->impl->models()[i].bootstrap().size());
}

const char* vmaf_cuda_model_name(const VmafCudaSession* vs, unsigned i) {
    if (!vs || !vs->impl || i >= vs->impl->models().size()) return nullptr;
    return vs->impl->models()[i].name().c_str();
}

int vmaf_cuda_model_builtin(const VmafCudaSession* vs, unsigned i) {
    if (!vs || !vs->impl || i >= vs->impl->models().size()) return 0;
    return vs->impl->models()[i].builtin() ? 1 : 0;
}

int vmaf_cuda_frame_scored(const VmafCudaSession* vs, uint64_t index) {
    return vs && vs->impl && vs->impl->scored(index) ? 1 : 0;
}

uint64_t vmaf_cuda_frames_scored(const VmafCudaSession* vs, uint64_t frames) {
    uint64_t n = 0;
    for (uint64_t i = 0; vs && vs->impl && i < frames; ++i) n += vs->impl->scored(i) ? 1 : 0;
    return n;
}

int vmaf_cuda_rendition_path(const char* tmpl, unsigned k, char* out, size_t size) {
    if (!tmpl || !out || !size) return VMAF_CUDA_EINVAL;
    std::string path;
    bool has_d = false;
    for (const char* p = tmpl; *p; ++p) {
        if (p[0] == '%' && p[1] == 'd') {
            path += std::to_string(k);
            has_d = true;
            ++p;
        } else if (p[0] == '%' && p[1] == '%') {
            path += '%';
            ++p;
        } else {
            path += *p;
        }
    }
    if (!has_d || path.size() >= size) {
        out[0] = 0;
        return VMAF_CUDA_EINVAL;
    }
    std::memcpy(out, path.c_str(), path.size() + 1);
    return VMAF_CUDA_OK;
}

const char* vmaf_cuda_backend_name(const VmafCudaSession* vs) {
    return vs && vs->impl ? vs->impl->backend_name() : "";
}

const char* vmaf_cuda_open_warning(const VmafCudaSession* vs) {
    return vs && vs->impl ? vs->impl->warning().c_str() : "";
}

int vmaf_cuda_send(VmafCudaSession* vs, const VmafCudaPicture* ref, const VmafCudaPicture* dist) {
    if (!vs || !vs->impl) return VMAF_CUDA_EINVAL;
    if (vs->ladder) {
        vs->error = "vmaf_cuda_send: this is a ladder's rendition session: send its frames "
                    "with vmaf_cuda_ladder_send()";
        return VMAF_CUDA_ESTATE;
    }
    if (!ref || !dist) {
        vs->error = "vmaf_cuda_send: NULL picture (use vmaf_cuda_flush at the end of the stream)";
        return VMAF_CUDA_EINVAL;
    }
    return guarded(vs, [&] {
        vs->impl->send(*ref, *dist);
        return VMAF_CUDA_OK;
    });
}

int vmaf_cuda_receive(VmafCudaSession* vs, VmafCudaFrameScores* out) {
    if (!vs || !vs->impl) return VMAF_CUDA_EINVAL;
    if (!out) {
        vs->error = "vmaf_cuda_receive: NULL output";
        return VMAF_CUDA_EINVAL;
    }
    return guarded(vs, [&] { return vs->impl->receive(*out); });
}

int vmaf_cuda_flush(VmafCudaSession* vs) {
    if (!vs || !vs->impl) return VMAF_CUDA_EINVAL;
    return guarded(vs, [&] {
        vs->impl->flush();
        return VMAF_CUDA_OK;
    });
}

int vmaf_cuda_truncate(VmafCudaSession* vs, unsigned frames) {
    if (!vs || !vs->impl) return VMAF_CUDA_EINVAL;
    return guarded(vs, [&] {
        vs->impl->truncate(frames);
        return VMAF_CUDA_OK;
    });
}

unsigned vmaf_cuda_lookahead(const VmafCudaSession* vs) {
    return vs && vs->impl ? vs->impl->lookahead() : 0;
}

unsigned vmaf_cuda_pictures_released(const VmafCudaSession* vs) {
    return vs && vs->impl ? vs->impl->base() + vs->impl->pictures_released() : 0;
}

int vmaf_cuda_pooled(VmafCudaSession* vs, const char* name, enum VmafCudaPool pool, double* out) {
    if (!vs || !vs->impl) return VMAF_CUDA_EINVAL;
    if (!name || !out || pool < VMAF_CUDA_POOL_MEAN || pool > VMAF_CUDA_POOL_PERC10) {
        vs->error = "vmaf_cuda_pooled: invalid argument";
        return VMAF_CUDA_EINVAL;
    }
    return guarded(vs, [&] {
        *out = vs->impl->pooled(name, pool);
        return VMAF_CUDA_OK;
    });
}

int vmaf_cuda_write_log(VmafCudaSession* vs, const char* path, enum VmafCudaLogFormat fmt,
                        int precision, double fps) {
    if (!vs || !vs->impl) return VMAF_CUDA_EINVAL;
    if (!path || fmt < VMAF_CUDA_LOG_XML || fmt > VMAF_CUDA_LOG_SUB ||
        !(precision == -1 || (precision >= 1 && precision <= 17))) {
        vs->error = "vmaf_cuda_write_log: invalid path, format or precision";
        return VMAF_CUDA_EINVAL;
    }
    return guarded(vs, [&] {
        vs->impl->write_log(path, fmt, precision, fps);
        return VMAF_CUDA_OK;
    });
}

int vmaf_cuda_check_log_path(const char* path, char* err, size_t err_size) {
    write_err(err, err_size, "");
    std::string msg;
    const int rc = vmaf_cuda::api::guarded_to(&msg, [&] {
        if (!path) throw vmaf_cuda::engine::Error(VMAF_CUDA_EINVAL, "log path is NULL");
        vmaf_cuda::engine::check_log_path(path);
        return VMAF_CUDA_OK;
    });
    if (rc < 0) write_err(err, err_size, msg);
    return rc;
}

int vmaf_cuda_remove_stale_log(const char* path, char* err, size_t err_size) {
    write_err(err, err_size, "");
    std::string msg;
    const int rc = vmaf_cuda::api::guarded_to(&msg, [&] {
        return path ? int(vmaf_cuda::engine::remove_stale_log(path)) : 0;
    });
    if (rc < 0) write_err(err, err_size, msg);
    return rc;
}

const char* vmaf_cuda_error_message(const VmafCudaSession* vs) {
    return vs ? vs->error.c_str() : "no session";
}

const char* vmaf_cuda_strerror(int status) {
    switch (status) {
    case VMAF_CUDA_OK: return "success";
    case VMAF_CUDA_EAGAIN: return "no frame is final yet";
    case VMAF_CUDA_EOF: return "end of stream";
    case VMAF_CUDA_EINVAL: return "invalid argument";
    case VMAF_CUDA_ENOMEM: return "out of memory";
    case VMAF_CUDA_ENODEV: return "no usable CUDA device";
    case VMAF_CUDA_ECUDA: return "CUDA error";
    case VMAF_CUDA_EMODEL: return "model error";
    case VMAF_CUDA_EIO: return "I/O error";
    case VMAF_CUDA_ESTATE: return "call not valid in this state";
    case VMAF_CUDA_EINTERNAL: return "internal error";
    default: return "unknown status";
    }
}

const char* vmaf_cuda_version(void) {
    return VMAF_CUDA_VERSION_STRING " (libvmaf v3.2.0 compatible)";
}

const char* vmaf_cuda_cuda_archs(void) {
    return VMAF_CUDA_ARCHS;
}

} // extern "C"

// SPDX-License-Identifier: BSD-2-Clause-Patent
// The C API of live QA, pool names and the end-of-stream summary (API 6): every entry
// catches everything and returns a status code.

#include "vmaf_cuda.h"

#include "api_internal.h"
#include "error.h"
#include "live.h"
#include "log_file.h"
#include "pooling.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

struct VmafCudaLive {
    std::unique_ptr<vmaf_cuda::engine::Live> impl;
    std::string error;
};

using vmaf_cuda::api::guarded;
using vmaf_cuda::api::guarded_to;
using vmaf_cuda::api::write_err;
namespace engine = vmaf_cuda::engine;

static_assert(engine::kPoolNames == VMAF_CUDA_POOL_NAMES);

extern "C" {

int vmaf_cuda_pool_from_name(const char* name) {
    return name ? engine::pool_from_name(name) : -1;
}

const char* vmaf_cuda_pool_name(int pool) { return engine::pool_name(pool); }

unsigned vmaf_cuda_pool_percentile(int pool) { return engine::pool_percentile(pool); }

int vmaf_cuda_summary(VmafCudaSession* vs, int pool, const char* prefix,
                      char* buf, size_t size) {
    if (buf && size) buf[0] = 0;
    if (!vs || !vs->impl || (!buf && size)) return VMAF_CUDA_EINVAL;
    if (!engine::pool_name(pool)) {
        vs->error = "vmaf_cuda_summary: invalid pool";
        return VMAF_CUDA_EINVAL;
    }
    std::string text;
    const int rc = guarded(vs, [&] {
        text = engine::summary_text(*vs->impl, pool, prefix ? prefix : "");
        return VMAF_CUDA_OK;
    });
    if (rc < 0) return rc;
    if (text.size() > std::size_t(INT32_MAX)) {
        vs->error = "vmaf_cuda_summary: text too long";
        return VMAF_CUDA_EINVAL;
    }
    if (buf && size) {
        const std::size_t n = std::min(text.size(), size - 1);
        std::memcpy(buf, text.data(), n);
        buf[n] = 0;
    }
    return int(text.size());
}

int vmaf_cuda_parse_window(const char* text, uint64_t* frames, double* seconds) {
    if (frames) *frames = 0;
    if (seconds) *seconds = 0;
    const auto w = engine::parse_window(text);
    if (!w) return VMAF_CUDA_EINVAL;
    if (frames) *frames = w->frames;
    if (seconds) *seconds = w->seconds;
    return VMAF_CUDA_OK;
}

int vmaf_cuda_live_path_is_stream(const char* path) {
    try {
        return path && engine::is_stream(path) ? 1 : 0;
    } catch (...) {
        return 0;
    }
}

void vmaf_cuda_live_default_settings(VmafCudaLiveSettings* s) {
    if (!s) return;
    std::memset(s, 0, sizeof *s);
    s->precision = 6;
    s->pool = VMAF_CUDA_POOL_MEAN;
    s->tb_num = 1;
    s->tb_den = 1;
}

int vmaf_cuda_live_open(VmafCudaLive** out, const VmafCudaSession* vs,
                        const VmafCudaLiveSettings* s, char* err, size_t err_size) {
    if (out) *out = nullptr;
    write_err(err, err_size, "");
    if (!out || !vs || !vs->impl || !s) {
        write_err(err, err_size, "vmaf_cuda_live_open: NULL argument");
        return VMAF_CUDA_EINVAL;
    }
    std::string msg;
    std::unique_ptr<VmafCudaLive> l;
    const int rc = guarded_to(&msg, [&] {
        std::vector<std::string> models;
        for (const engine::Model& m : vs->impl->models()) models.push_back(m.name());
        l = std::make_unique<VmafCudaLive>();
        l->impl = std::make_unique<engine::Live>(engine::live_config(*s, std::move(models)));
        return VMAF_CUDA_OK;
    });
    if (rc < 0) {
        write_err(err, err_size, msg);
        return rc;
    }
    *out = l.release();
    return VMAF_CUDA_OK;
}

int vmaf_cuda_live_active(const VmafCudaLive* l) { return l && l->impl && l->impl->active(); }

int vmaf_cuda_live_frame(VmafCudaLive* l, const VmafCudaFrameScores* fs, int64_t pts,
                         int has_pts, VmafCudaLiveFrame* out) {
    if (out) *out = VmafCudaLiveFrame{};
    if (!l || !l->impl) return VMAF_CUDA_EINVAL;
    if (!fs || !out) {
        l->error = "vmaf_cuda_live_frame: NULL argument";
        return VMAF_CUDA_EINVAL;
    }
    return guarded_to(&l->error, [&] {
        const int rc = l->impl->frame(*fs, pts, has_pts != 0, *out);
        if (rc < 0) l->error = l->impl->error();
        return rc;
    });
}

int vmaf_cuda_live_window(const VmafCudaLive* l, unsigned model, VmafCudaWindowStats* out) {
    if (!l || !l->impl || !out || !l->impl->windowed() || model >= l->impl->models())
        return VMAF_CUDA_EINVAL;
    const engine::WindowStats& st = l->impl->window(model);
    *out = VmafCudaWindowStats{st.count, st.min, st.max, st.mean, st.harmonic_mean, st.perc};
    return VMAF_CUDA_OK;
}

int vmaf_cuda_live_finish(VmafCudaLive* l, VmafCudaSession* vs, uint64_t frames) {
    if (!l || !l->impl) return VMAF_CUDA_EINVAL;
    return guarded_to(&l->error, [&] {
        const int rc = l->impl->finish(vs && vs->impl ? vs->impl.get() : nullptr, frames);
        if (rc < 0) l->error = l->impl->error();
        return rc;
    });
}

int vmaf_cuda_live_truncate(VmafCudaLive* l, uint64_t frames) {
    if (!l || !l->impl) return VMAF_CUDA_EINVAL;
    return guarded_to(&l->error, [&] {
        const int rc = l->impl->truncate(frames);
        if (rc != 0) l->error = l->impl->error();
        return rc;
    });
}

int vmaf_cuda_live_event(VmafCudaLive* l, const char* event, const char* input, int64_t pts,
                         int has_pts, const char* message) {
    if (!l || !l->impl) return VMAF_CUDA_EINVAL;
    if (!event || !message) {
        l->error = "vmaf_cuda_live_event: NULL argument";
        return VMAF_CUDA_EINVAL;
    }
    return guarded_to(&l->error, [&] {
        const int rc = l->impl->event(event, input, pts, has_pts != 0, message);
        if (rc < 0) l->error = l->impl->error();
        return rc;
    });
}

int vmaf_cuda_live_unscored(VmafCudaLive* l, const char* reason) {
    if (!l || !l->impl) return VMAF_CUDA_EINVAL;
    return guarded_to(&l->error, [&] {
        l->impl->note_unscored(reason);
        return VMAF_CUDA_OK;
    });
}

int vmaf_cuda_live_metrics(const VmafCudaLive* const* lives, unsigned n, char* buf, size_t size) {
    if (buf && size) *buf = 0;
    if (!lives || !n) return VMAF_CUDA_EINVAL;
    std::string text;
    const int rc = guarded_to(nullptr, [&] {
        std::vector<const engine::Live*> v;
        for (unsigned k = 0; k < n; ++k) {
            if (!lives[k] || !lives[k]->impl) return int(VMAF_CUDA_EINVAL);
            v.push_back(lives[k]->impl.get());
        }
        text = engine::metrics_text(v);
        return int(VMAF_CUDA_OK);
    });
    if (rc < 0) return rc;
    if (buf && size) std::snprintf(buf, size, "%s", text.c_str());
    return text.size() > size_t(INT32_MAX) ? VMAF_CUDA_ENOMEM : int(text.size());
}

const char* vmaf_cuda_live_error(const VmafCudaLive* l) { return l ? l->error.c_str() : ""; }

void vmaf_cuda_live_close(VmafCudaLive* l) {
    try {
        delete l;
    } catch (...) {
    }
}

} // extern "C"

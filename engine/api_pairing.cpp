// SPDX-License-Identifier: BSD-2-Clause-Patent
// The C API of the pairing watch (API 6, pairing.h): every entry catches everything and
// returns a status code.

#include "vmaf_cuda.h"

#include "pairing.h"

#include <cstring>
#include <memory>
#include <new>
#include <string>

struct VmafCudaPairing {
    vmaf_cuda::engine::PairingWatch watch;
};

namespace {

int copy_out(const std::string& text, char* buf, size_t size) {
    if (buf && size) {
        const std::size_t n = text.size() < size ? text.size() : size - 1;
        std::memcpy(buf, text.data(), n);
        buf[n] = '\0';
    }
    return text.size() > std::size_t(INT32_MAX) ? VMAF_CUDA_EINVAL : int(text.size());
}

vmaf_cuda::engine::PairingEvent to_event(const VmafCudaPairingEvent& e) {
    vmaf_cuda::engine::PairingEvent ev;
    ev.pts = e.pts;
    ev.main_pts = e.main_pts;
    ev.has_ref = e.has_ref;
    ev.ref_pts = e.ref_pts;
    ev.ref_ended = e.ref_ended;
    ev.has_next_ref = e.has_next_ref;
    ev.next_ref_pts = e.next_ref_pts;
    ev.index = e.index;
    return ev;
}

void fill_notice(const vmaf_cuda::engine::PairingWatch::Notice& in, VmafCudaPairingNotice& out) {
    out = VmafCudaPairingNotice{};
    out.pts = in.pts;
    copy_out(in.event, out.event, sizeof out.event);
    copy_out(in.input, out.input, sizeof out.input);
    copy_out(in.message, out.message, sizeof out.message);
}

/// The reason as a string that outlives the call.
const char* static_reason(const std::string& why) {
    for (const char* r : {"no_reference", "reference_ended", "reference_stalled", "reference_gap"})
        if (why == r) return r;
    return "unscored";
}

} // namespace

extern "C" {

int vmaf_cuda_pairing_open(VmafCudaPairing** out, const VmafCudaPairingSettings* s) {
    if (!out) return VMAF_CUDA_EINVAL;
    *out = nullptr;
    if (!s || s->tb_num <= 0 || s->tb_den <= 0) return VMAF_CUDA_EINVAL;
    try {
        vmaf_cuda::engine::PairingConfig c;
        c.tb_num = s->tb_num;
        c.tb_den = s->tb_den;
        c.rate_num[0] = s->main_rate_num;
        c.rate_den[0] = s->main_rate_den;
        c.rate_num[1] = s->ref_rate_num;
        c.rate_den[1] = s->ref_rate_den;
        c.prefix = s->prefix ? s->prefix : "";
        c.nearest = s->nearest != 0;
        *out = new VmafCudaPairing{vmaf_cuda::engine::PairingWatch(std::move(c))};
        return VMAF_CUDA_OK;
    } catch (const std::bad_alloc&) {
        return VMAF_CUDA_ENOMEM;
    } catch (...) {
        return VMAF_CUDA_EINTERNAL;
    }
}

int vmaf_cuda_pairing_frame(VmafCudaPairing* p, int input, int64_t pts, int64_t duration) {
    if (!p || (input != 0 && input != 1)) return VMAF_CUDA_EINVAL;
    try {
        p->watch.frame(input, pts, duration > 0 ? duration : 0);
        return VMAF_CUDA_OK;
    } catch (const std::bad_alloc&) {
        return VMAF_CUDA_ENOMEM;
    } catch (...) {
        return VMAF_CUDA_EINTERNAL;
    }
}

int vmaf_cuda_pairing_timeline(VmafCudaPairing* p, int input, int64_t pts, int64_t duration,
                               int64_t* offset, char* line, size_t size) {
    if (line && size) line[0] = '\0';
    if (!p || !offset || (input != 0 && input != 1)) return VMAF_CUDA_EINVAL;
    try {
        std::string warning;
        *offset = p->watch.timeline(input, pts, duration > 0 ? duration : 0, &warning);
        if (line && size) copy_out(warning, line, size);
        return warning.empty() ? 0 : 1;
    } catch (const std::bad_alloc&) {
        return VMAF_CUDA_ENOMEM;
    } catch (...) {
        return VMAF_CUDA_EINTERNAL;
    }
}

int vmaf_cuda_pairing_event(VmafCudaPairing* p, const VmafCudaPairingEvent* e, char* line,
                            size_t size) {
    if (line && size) line[0] = '\0';
    if (!p || !e) return VMAF_CUDA_EINVAL;
    try {
        const std::string text = p->watch.event(to_event(*e));
        if (line && size) copy_out(text, line, size);
        return p->watch.first_pair() ? 1 : 0;
    } catch (const std::bad_alloc&) {
        return VMAF_CUDA_ENOMEM;
    } catch (...) {
        return VMAF_CUDA_EINTERNAL;
    }
}

int vmaf_cuda_pairing_report(const VmafCudaPairing* p, char* buf, size_t size) {
    if (buf && size) buf[0] = '\0';
    if (!p || (!buf && size)) return VMAF_CUDA_EINVAL;
    try {
        return copy_out(p->watch.report(), buf, size);
    } catch (const std::bad_alloc&) {
        return VMAF_CUDA_ENOMEM;
    } catch (...) {
        return VMAF_CUDA_EINTERNAL;
    }
}

int vmaf_cuda_pairing_set_live(VmafCudaPairing* p, int64_t timeout) {
    if (!p || timeout <= 0) return VMAF_CUDA_EINVAL;
    p->watch.set_live(timeout);
    return VMAF_CUDA_OK;
}

int vmaf_cuda_pairing_set_aligned(VmafCudaPairing* p) {
    if (!p) return VMAF_CUDA_EINVAL;
    p->watch.set_aligned();
    return VMAF_CUDA_OK;
}

int vmaf_cuda_pairing_live_check(VmafCudaPairing* p, const VmafCudaPairingEvent* e,
                                 VmafCudaPairingNotice* n, const char** reason) {
    if (reason) *reason = nullptr;
    if (n) *n = VmafCudaPairingNotice{};
    if (!p || !e || !n) return VMAF_CUDA_EINVAL;
    try {
        vmaf_cuda::engine::PairingWatch::Notice notice;
        const std::string why = p->watch.live_check(to_event(*e), notice);
        fill_notice(notice, *n);
        if (why.empty()) return 1;
        if (reason) *reason = static_reason(why);
        return 0;
    } catch (const std::bad_alloc&) {
        return VMAF_CUDA_ENOMEM;
    } catch (...) {
        return VMAF_CUDA_EINTERNAL;
    }
}

int vmaf_cuda_pairing_live_end(VmafCudaPairing* p, int reference_ended, VmafCudaPairingNotice* n) {
    if (n) *n = VmafCudaPairingNotice{};
    if (!p || !n) return VMAF_CUDA_EINVAL;
    try {
        fill_notice(p->watch.live_end(reference_ended != 0), *n);
        return VMAF_CUDA_OK;
    } catch (const std::bad_alloc&) {
        return VMAF_CUDA_ENOMEM;
    } catch (...) {
        return VMAF_CUDA_EINTERNAL;
    }
}

void vmaf_cuda_pairing_close(VmafCudaPairing* p) { delete p; }

} // extern "C"

// SPDX-License-Identifier: BSD-2-Clause-Patent
// Fuzz harness (c): the `models` and `features` strings of VmafCudaSettings, parsed at
// vmaf_cuda_open (engine/model_spec.cpp, engine/session.cpp, the feature records), on the
// CPU backend at a tiny frame size; a session that opens scores three frames, pools and
// writes its log to /dev/null (a few milliseconds).
// Promise checked: open succeeds or fails with EINVAL/EMODEL and a message (never
// EINTERNAL); an open session scores, pools and logs without an error or a report.
// Input: 3 bytes of settings (size, depth, chroma, flags), then `models`, a newline,
// then `features`. Entries with path= are skipped (the harness reads no files).

#include "error.h"
#include "fuzz_input.h"
#include "model.h"
#include "vmaf_cuda.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using vmaf_cuda_fuzz::broken;

namespace {

bool names_a_file(const std::string& models) {
    try {
        for (const auto& spec : vmaf_cuda::engine::parse_model_string(models))
            if (!spec.path.empty()) return true;
    } catch (const vmaf_cuda::engine::Error&) {
        // open fails on it the same way, before any file is read
    }
    return false;
}

void check_status(int rc, const char* call, const char* msg) {
    if (rc == VMAF_CUDA_EINTERNAL || rc == VMAF_CUDA_ENOMEM || rc == VMAF_CUDA_ECUDA)
        broken(std::string(call) + " returned " + std::to_string(rc) + ": " + msg);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    vmaf_cuda_fuzz::Input in{data, size};
    VmafCudaSettings s;
    vmaf_cuda_default_settings(&s);
    s.backend = VMAF_CUDA_BACKEND_CPU;
    const std::uint8_t a = in.byte(), b = in.byte(), c = in.byte();
    s.width = 17 + a % 32;   // 17x17 is ADM's smallest frame
    s.height = 17 + b % 32;
    s.bpc = 8 + (c & 7);     // 8..15
    s.chroma = static_cast<VmafCudaChroma>((c >> 3) & 3);
    s.no_prediction = (c >> 5) & 1;
    s.keep_history = !((c >> 6) & 1);
    s.n_subsample = 1 + ((c >> 7) & 1);
    const std::string models = in.until('\n');
    const std::string features = in.rest();
    if (names_a_file(models)) return 0;
    s.models = models.c_str();
    s.features = features.c_str();

    VmafCudaSession* vs = nullptr;
    char err[1024];
    const int rc = vmaf_cuda_open(&vs, &s, err, sizeof err);
    if (std::getenv("VMAF_CUDA_FUZZ_VERBOSE"))
        std::fprintf(stderr, "open %ux%u %u-bit: %d %s\n", s.width, s.height, s.bpc, rc, err);
    if (rc != VMAF_CUDA_OK) {
        check_status(rc, "vmaf_cuda_open", err);
        if (!*err) broken("vmaf_cuda_open failed without a message");
        if (vs) broken("vmaf_cuda_open failed and returned a session");
        return 0;
    }
    // Three frames of a gradient with a little noise (deterministic), planar chroma.
    const unsigned bps = s.bpc > 8 ? 2 : 1;
    const unsigned cw = s.chroma == VMAF_CUDA_CHROMA_444 ? s.width : (s.width + 1) / 2;
    const unsigned ch = s.chroma == VMAF_CUDA_CHROMA_420 ? (s.height + 1) / 2 : s.height;
    std::vector<std::uint16_t> ref(std::size_t(s.width) * s.height), dist(ref.size());
    std::vector<std::uint16_t> cref(std::size_t(cw) * ch), cdist(cref.size());
    const unsigned maxv = (1u << s.bpc) - 1;
    VmafCudaFrameScores fs;
    std::vector<std::string> names;  // of the first frame received
    auto collect = [&] {
        for (unsigned i = 0; names.size() < fs.count; ++i) names.emplace_back(fs.names[i]);
    };
    for (unsigned k = 0; k < 3; ++k) {
        std::uint32_t rng = 12345u + k;
        auto fill = [&](std::vector<std::uint16_t>& r, std::vector<std::uint16_t>& d, unsigned w) {
            for (std::size_t i = 0; i < r.size(); ++i) {
                rng = rng * 1664525u + 1013904223u;
                r[i] = std::uint16_t(((i % w) * 7 + (i / w) * 3 + k * 5) * maxv / 400 % (maxv + 1));
                d[i] = std::uint16_t(std::min<unsigned>(maxv, r[i] + (rng >> 28)));
            }
        };
        fill(ref, dist, s.width);
        fill(cref, cdist, cw);
        std::vector<std::uint8_t> planes[4];
        const std::vector<std::uint16_t>* src[4] = {&ref, &dist, &cref, &cdist};
        for (int p = 0; p < 4; ++p) {
            planes[p].resize(src[p]->size() * bps);
            for (std::size_t i = 0; i < src[p]->size(); ++i) {
                if (bps == 1) planes[p][i] = std::uint8_t((*src[p])[i]);
                else std::memcpy(&planes[p][2 * i], &(*src[p])[i], 2);
            }
        }
        VmafCudaPicture rp{}, dp{};
        rp.luma = planes[0].data();
        dp.luma = planes[1].data();
        rp.pitch = dp.pitch = ptrdiff_t(s.width) * bps;
        if (s.chroma != VMAF_CUDA_CHROMA_400) {
            rp.chroma[0] = rp.chroma[1] = planes[2].data();
            dp.chroma[0] = dp.chroma[1] = planes[3].data();
            rp.chroma_pitch = dp.chroma_pitch = ptrdiff_t(cw) * bps;
            rp.chroma_step = dp.chroma_step = 1;
        }
        const int sr = vmaf_cuda_send(vs, &rp, &dp);
        if (sr != VMAF_CUDA_OK) broken(std::string("vmaf_cuda_send: ") + vmaf_cuda_error_message(vs));
        while (vmaf_cuda_receive(vs, &fs) == VMAF_CUDA_OK) collect();
    }
    if (vmaf_cuda_flush(vs) != VMAF_CUDA_OK) broken(std::string("flush: ") + vmaf_cuda_error_message(vs));
    int r;
    while ((r = vmaf_cuda_receive(vs, &fs)) == VMAF_CUDA_OK) collect();
    if (r != VMAF_CUDA_EOF) broken(std::string("receive after flush: ") + vmaf_cuda_error_message(vs));
    for (const std::string& name : names) {
        double v = 0;
        for (int pool = VMAF_CUDA_POOL_MEAN; pool <= VMAF_CUDA_POOL_PERC10; ++pool) {
            const int pr = vmaf_cuda_pooled(vs, name.c_str(), static_cast<VmafCudaPool>(pool), &v);
            check_status(pr, "vmaf_cuda_pooled", vmaf_cuda_error_message(vs));
        }
    }
    if (s.keep_history) {
        const int lr = vmaf_cuda_write_log(vs, "/dev/null", static_cast<VmafCudaLogFormat>(c % 4),
                                           (a & 1) ? -1 : 6, 25.0);
        check_status(lr, "vmaf_cuda_write_log", vmaf_cuda_error_message(vs));
    }
    vmaf_cuda_close(vs);
    return 0;
}

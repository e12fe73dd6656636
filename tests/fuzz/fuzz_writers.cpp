// SPDX-License-Identifier: BSD-2-Clause-Patent
// Fuzz harness (d): the log writers, fed random scores, names, precisions and frame
// numbers: engine/writers.cpp format_log (XML, JSON, CSV, SUB) and live QA's NDJSON lines
// and SEI payload (vmaf_cuda_live_*(), engine/live.cpp, on a CPU session's models).
// Promises checked: format_log returns text or throws Error(EINVAL) for a precision or
// format out of range; its JSON parses, with one frame object per row and, at
// precision -1 (max), every finite value read back as the same double; each NDJSON line
// and each SEI payload (after its 16-byte UUID) is one JSON object. The JSON checks need
// names that are UTF-8 (JSON text is UTF-8).
// Input: a byte choosing the writer, then the table or the live run, byte by byte.

#include "error.h"
#include "fuzz_input.h"
#include "model.h"
#include "vmaf_cuda.h"
#include "writers.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <fcntl.h>
#include <unistd.h>

using namespace vmaf_cuda::engine;
using vmaf_cuda_fuzz::broken;
using vmaf_cuda_fuzz::Input;
using json = nlohmann::json;

namespace {

bool utf8(const std::string& s) {
    try {
        (void)json(s).dump();
        return true;
    } catch (const json::exception&) {
        return false;
    }
}

// A score: mostly ordinary values, sometimes the raw bits (NaN, inf, denormals, huge).
double score(Input& in) {
    const std::uint8_t k = in.byte();
    if (k < 128) return (k - 28) + in.byte() / 256.0 + in.byte() / 65536.0;
    if (k < 160) return std::ldexp(1.0 + in.byte() / 256.0, int(in.byte()) - 128);
    return in.real();
}

void fuzz_format_log(Input& in) {
    LogTable t;
    const int fmt = in.byte() % 5;  // 4: not a format
    t.precision = int(in.byte() % 21) - 2;  // -2..18: -1 and 1..17 are valid
    t.version = in.text(12);
    t.fps = in.byte() < 200 ? in.byte() / 4.0 : in.real();
    t.width = in.byte();
    t.height = in.byte();
    const unsigned frames = in.pick(0, 6), cols = in.pick(0, 5), aggs = in.pick(0, 2);
    unsigned f = in.byte();
    for (unsigned r = 0; r < frames; ++r, f += 1 + in.byte() % 3) t.frames.push_back(f);
    bool names_utf8 = utf8(t.version);
    std::set<std::string> distinct;
    for (unsigned c = 0; c < cols; ++c) {
        LogColumn col;
        col.name = in.byte() < 64 ? "VMAF_integer_feature_adm2_score" : in.text(16);
        names_utf8 = names_utf8 && utf8(col.name);
        for (unsigned r = 0; r < frames; ++r) col.values.push_back(score(in));
        for (double& p : col.pooled) p = score(in);
        t.columns.push_back(std::move(col));
    }
    for (unsigned a = 0; a < aggs; ++a) {
        t.aggregate.emplace_back(in.text(12), score(in));
        names_utf8 = names_utf8 && utf8(t.aggregate.back().first);
    }
    std::string text;
    try {
        text = format_log(static_cast<LogFormat>(fmt), t);
    } catch (const Error& e) {
        const bool precision_ok = t.precision == -1 || (t.precision >= 1 && t.precision <= 17);
        // EINVAL for a precision or format out of range, or a JSON log with a name that
        // is not UTF-8 (JSON text is UTF-8)
        const bool json_names = fmt == int(LogFormat::json) && !names_utf8;
        if (e.status != VMAF_CUDA_EINVAL || (precision_ok && fmt < 4 && !json_names))
            broken(std::string("format_log failed: ") + e.what());
        return;
    }
    if (fmt != int(LogFormat::json) || !names_utf8) return;
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception& e) {
        broken(std::string("the JSON log does not parse: ") + e.what() + "\n" + text);
    }
    if (j.at("frames").size() != frames) broken("the JSON log has another number of frames");
    for (const LogColumn& c : t.columns) distinct.insert(std::string(feature_alias(c.name)));
    if (t.precision != -1 || distinct.size() != t.columns.size()) return;
    for (unsigned r = 0; r < frames; ++r) {
        const json& m = j["frames"][r]["metrics"];
        for (const LogColumn& c : t.columns) {
            const json& v = m.at(std::string(feature_alias(c.name)));
            const double want = c.values[r];
            if (std::isfinite(want) ? !(v.is_number() && v.get<double>() == want) : !v.is_null())
                broken("a value does not read back: " + v.dump());
        }
    }
}

const std::uint8_t kSeiUuid[16] = VMAF_CUDA_LIVE_SEI_UUID;

void check_json_object(const char* p, std::size_t n, const char* what) {
    try {
        if (!json::parse(p, p + n).is_object()) broken(std::string(what) + " is not a JSON object");
    } catch (const json::exception& e) {
        broken(std::string(what) + " does not parse: " + e.what() + "\n" + std::string(p, n));
    }
}

// A CPU session at 17x17 naming the live state's models: none (no_prediction), "vmaf",
// or "vmaf" and a second model named by the input (opened anew: a name the model string
// refuses ends the input).
VmafCudaSession* open_session(unsigned nb_models, const std::string& second) {
    VmafCudaSettings s;
    vmaf_cuda_default_settings(&s);
    s.backend = VMAF_CUDA_BACKEND_CPU;
    s.width = s.height = 17;
    s.no_prediction = nb_models == 0;
    const std::string models =
        nb_models < 2 ? "version=vmaf_v0.6.1"
                      : "version=vmaf_v0.6.1|version=vmaf_v0.6.1neg:name=" + second;
    s.models = models.c_str();
    VmafCudaSession* vs = nullptr;
    char err[512];
    return vmaf_cuda_open(&vs, &s, err, sizeof err) == VMAF_CUDA_OK ? vs : nullptr;
}

void fuzz_live(Input& in) {
    VmafCudaLiveSettings cfg;
    vmaf_cuda_live_default_settings(&cfg);
    std::string window;
    const std::uint8_t w = in.byte();
    if (w & 1) window = (w & 2) ? std::to_string(1 + in.byte() % 8) : in.text(10);
    cfg.window = (w & 1) ? window.c_str() : nullptr;
    cfg.window_log = (w >> 2) & 3;
    cfg.sei = (w >> 4) & 1;
    const bool ndjson = (w >> 5) & 1;
    cfg.precision = int(in.byte() % 19) - 1;  // -1..17
    cfg.pool = VmafCudaPool(in.byte() % 7);
    cfg.tb_num = 1 + in.byte();
    cfg.tb_den = 1 + in.byte() * 1000;
    cfg.fr_num = in.byte();
    cfg.fr_den = in.byte();
    const unsigned nb_models = in.pick(0, 2), nb_scores = in.pick(1, 5);
    const std::string second = in.text(8);
    std::vector<std::string> names;
    for (unsigned i = 0; i < nb_scores; ++i) names.push_back(in.byte() < 100 ? "vmaf" : in.text(8));
    bool names_utf8 = true;
    for (const std::string& n : names) names_utf8 = names_utf8 && utf8(n);
    std::vector<const char*> np;
    for (const std::string& n : names) np.push_back(n.c_str());
    VmafCudaSession* vs = open_session(nb_models, second);
    if (!vs) return;

    // the log's descriptor write-only and the only one open on the file (the library
    // refuses a descriptor of a file the process also reads: O_RDWR, or open elsewhere)
    int fd = ndjson ? memfd_create("fuzz_ndjson", 0) : -1;
    if (fd >= 0) {
        const int wfd = open(("/proc/self/fd/" + std::to_string(fd)).c_str(), O_WRONLY);
        close(fd);
        if (wfd < 0) broken("cannot reopen the memfd write-only");
        fd = wfd;
    }
    const std::string path = "/proc/self/fd/" + std::to_string(fd);
    cfg.ndjson_path = ndjson ? path.c_str() : nullptr;
    VmafCudaLive* l = nullptr;
    char err[512];
    if (vmaf_cuda_live_open(&l, vs, &cfg, err, sizeof err) < 0) {
        if (!*err) broken("vmaf_cuda_live_open failed without a message");
        if (fd >= 0) close(fd);
        vmaf_cuda_close(vs);
        return;
    }
    const unsigned frames = in.pick(1, 8);
    std::int64_t pts = in.byte();
    if (pts < 16) {  // anywhere in the int64 range
        const double bits = in.real();
        std::memcpy(&pts, &bits, sizeof pts);
    }
    for (unsigned k = 0; k < frames; ++k) {
        std::vector<double> values;
        for (unsigned i = 0; i < nb_scores; ++i) values.push_back(score(in));
        const VmafCudaFrameScores fs{k, nb_scores, np.data(), values.data()};
        const int has_pts = in.byte() % 4 != 0;
        const std::int64_t step = in.byte() % 5;
        pts = pts <= INT64_MAX - step ? pts + step : pts;
        VmafCudaLiveFrame out;
        const int r = vmaf_cuda_live_frame(l, &fs, pts, has_pts, &out);
        if (r < 0 && !(r == VMAF_CUDA_EINVAL && !names_utf8))
            broken(std::string("vmaf_cuda_live_frame failed: ") + vmaf_cuda_live_error(l));
        if (r < 0) break;
        if (out.sei) {
            if (out.sei_size < 16 || std::memcmp(out.sei, kSeiUuid, 16) != 0)
                broken("the SEI payload does not start with the UUID");
            if (names_utf8)
                check_json_object(reinterpret_cast<const char*>(out.sei) + 16, out.sei_size - 16,
                                  "the SEI payload");
        }
    }
    if (vmaf_cuda_live_finish(l, nullptr, frames) < 0)
        broken(std::string("vmaf_cuda_live_finish failed: ") + vmaf_cuda_live_error(l));
    vmaf_cuda_live_close(l);
    vmaf_cuda_close(vs);
    if (fd < 0) return;
    // Every line of the NDJSON file is one JSON object.
    const int rfd = open(path.c_str(), O_RDONLY);
    close(fd);
    if (rfd < 0) broken("cannot reopen the memfd to read it");
    const off_t size = lseek(rfd, 0, SEEK_END);
    std::string text(std::size_t(size > 0 ? size : 0), '\0');
    if (size > 0 && pread(rfd, text.data(), text.size(), 0) != size) broken("reading the NDJSON back failed");
    close(rfd);
    if (text.empty() || text.back() != '\n') broken("the NDJSON output does not end a line");
    if (!names_utf8) return;
    for (std::size_t b = 0; b < text.size();) {
        const std::size_t e = text.find('\n', b);
        check_json_object(text.data() + b, e - b, "an NDJSON line");
        b = e + 1;
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Input in{data, size};
    if (in.byte() & 1) fuzz_live(in);
    else fuzz_format_log(in);
    return 0;
}

// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// Per-frame timing of the CUDA backend, for finding where a pipeline waits (a debugging
/// aid, off unless the environment variable VMAF_CUDA_TRACE names a file).
///
/// With VMAF_CUDA_TRACE=PATH, each CUDA session writes, when it is closed, a TSV with one
/// row per frame and these columns (microseconds since the session's backend was made,
/// steady clock):
///   index        frame index (0-based, send order)
///   submit_begin the library got the pair (vmaf_cuda_send / the filter's pair)
///   submit_end   its device work was enqueued
///   ready        the host saw its device work complete (readback event)
///   done         its host finishes completed (the scores are known)
///   retrieved    the scores were handed on, in frame order
///   waited       how long the call that handed them on blocked for them (0: not)
/// The first session writes PATH, later ones in the same process PATH.1, PATH.2, ...
/// A file that cannot be written is skipped silently (tracing never fails a session); a
/// session that handed on no frame writes none.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace vmaf_cuda::engine {

class FrameTrace {
public:
    struct Row {
        std::uint64_t index = 0;
        std::int64_t submit_begin = 0, submit_end = 0, ready = 0, done = 0, retrieved = 0,
                     waited = 0;
    };

    FrameTrace() : t0_(std::chrono::steady_clock::now()) {
        if (const char* p = std::getenv("VMAF_CUDA_TRACE"); p && *p) {
            static std::atomic<unsigned> sessions{0};
            const unsigned n = sessions++;
            path_ = n ? std::string(p) + "." + std::to_string(n) : std::string(p);
        }
    }
    FrameTrace(const FrameTrace&) = delete;
    FrameTrace& operator=(const FrameTrace&) = delete;
    ~FrameTrace() { write(); }

    bool on() const { return !path_.empty(); }
    /// Microseconds since construction (0 when tracing is off, to cost nothing).
    std::int64_t now() const {
        if (!on()) return 0;
        return std::chrono::duration_cast<std::chrono::microseconds>(
                   std::chrono::steady_clock::now() - t0_)
            .count();
    }
    void add(const Row& r) {
        if (on()) rows_.push_back(r);
    }

private:
    void write() const {
        if (!on() || rows_.empty()) return; // (a session that scored nothing writes nothing)
        std::FILE* f = std::fopen(path_.c_str(), "w");
        if (!f) return;
        std::fputs("index\tsubmit_begin\tsubmit_end\tready\tdone\tretrieved\twaited\n", f);
        for (const Row& r : rows_)
            std::fprintf(f, "%llu\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\n",
                         static_cast<unsigned long long>(r.index), static_cast<long long>(r.submit_begin),
                         static_cast<long long>(r.submit_end), static_cast<long long>(r.ready),
                         static_cast<long long>(r.done), static_cast<long long>(r.retrieved),
                         static_cast<long long>(r.waited));
        std::fclose(f);
    }
    std::chrono::steady_clock::time_point t0_;
    std::string path_;
    std::vector<Row> rows_;
};

} // namespace vmaf_cuda::engine

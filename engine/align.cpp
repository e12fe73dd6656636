// SPDX-License-Identifier: BSD-2-Clause-Patent
// Automatic alignment (API 10, vmaf_cuda_align.h): frame signatures (luma cell means, on
// the host or, for device pictures, summed on the GPU), the offset search between the
// two inputs' signatures, and the watch that re-checks the offset when the scores
// collapse. The search is host arithmetic in a fixed order: identical inputs, identical
// offsets.

#include "vmaf_cuda_align.h"

#include "api_internal.h"
#include "backend.h"
#include "error.h"
#include "session.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <limits>
#include <string>
#include <vector>

namespace vmaf_cuda::engine {

void Backend::device_cell_sums(const VmafCudaPicture&, unsigned, std::uint64_t*) {
    throw Error(VMAF_CUDA_EINVAL, std::string("a picture in device memory cannot be read by the ") +
                                      name() + " backend");
}

namespace {

constexpr unsigned kGrid = VMAF_CUDA_SIGNATURE_GRID;

template <class T>
void host_cell_sums(const VmafCudaPicture& pic, unsigned w, unsigned h, std::uint64_t* sums) {
    for (unsigned cy = 0; cy < kGrid; ++cy)
        for (unsigned cx = 0; cx < kGrid; ++cx) {
            const unsigned x0 = cx * w / kGrid, x1 = (cx + 1) * w / kGrid;
            const unsigned y0 = cy * h / kGrid, y1 = (cy + 1) * h / kGrid;
            std::uint64_t acc = 0;
            for (unsigned y = y0; y < y1; ++y) {
                const T* row = reinterpret_cast<const T*>(static_cast<const unsigned char*>(pic.luma) +
                                                          std::ptrdiff_t(y) * pic.pitch);
                for (unsigned x = x0; x < x1; ++x) acc += unsigned(row[x] >> pic.shift);
            }
            sums[cy * kGrid + cx] = acc;
        }
}

} // namespace

void Session::signature(const VmafCudaPicture& pic, double* cells) const {
    if (!pic.luma) throw Error(VMAF_CUDA_EINVAL, "the picture has no luma plane");
    if (pic.shift > 8) throw Error(VMAF_CUDA_EINVAL, "the picture's shift is above 8");
    const unsigned w = settings_.width, h = settings_.height, bpc = settings_.bpc;
    std::uint64_t sums[VMAF_CUDA_SIGNATURE_CELLS];
    if (pic.memory == VMAF_CUDA_MEMORY_DEVICE)
        backend_->device_cell_sums(pic, kGrid, sums);
    else if (bpc > 8)
        host_cell_sums<std::uint16_t>(pic, w, h, sums);
    else
        host_cell_sums<std::uint8_t>(pic, w, h, sums);
    const double top = double((1u << bpc) - 1);
    for (unsigned c = 0; c < VMAF_CUDA_SIGNATURE_CELLS; ++c) {
        const unsigned cx = c % kGrid, cy = c / kGrid;
        const std::uint64_t n = std::uint64_t((cx + 1) * w / kGrid - cx * w / kGrid) *
                                ((cy + 1) * h / kGrid - cy * h / kGrid);
        cells[c] = n ? double(sums[c]) / double(n) / top : 0.0;
    }
}

namespace {

struct Frame {
    std::int64_t pts;
    VmafCudaSignature sig;
};

double distance(const VmafCudaSignature& a, const VmafCudaSignature& b) {
    double d = 0;
    for (unsigned c = 0; c < VMAF_CUDA_SIGNATURE_CELLS; ++c) d += std::fabs(a.cell[c] - b.cell[c]);
    return d / VMAF_CUDA_SIGNATURE_CELLS;
}

/// "+0.480 s" from ticks.
std::string seconds_text(std::int64_t ticks, int num, int den) {
    char b[64];
    std::snprintf(b, sizeof b, "%+.3f s", double(ticks) * num / den);
    return b;
}

} // namespace

class Align {
public:
    explicit Align(const VmafCudaAlignSettings& s)
        : window_(s.window), num_(s.tb_num), den_(s.tb_den), prefix_(s.prefix ? s.prefix : "") {}

    /// Collecting, and (a re-check) its first frames known.
    bool wants() const { return collecting_ && start_[0] != kWait; }

    /// A re-check compares the main's frames from `main_pts` on and the reference's from
    /// the time the current offset pairs with it, over 2 ranges each.
    void recheck_from(std::int64_t main_pts) {
        if (!collecting_ || !recheck_) return;
        start_[0] = main_pts;
        start_[1] = main_pts - offset_;
    }

    /// The reference's first time (its own timestamps) after a re-check's frames: its
    /// frames from there on are paired with what the re-check finds, the earlier ones
    /// with the offset before. INT64_MIN: every frame (the first search).
    std::int64_t ref_limit() const {
        if (!recheck_) return std::numeric_limits<std::int64_t>::min();
        return start_[1] == kWait ? std::numeric_limits<std::int64_t>::max() : start_[1] + 2 * range();
    }

    /// Frames from the start (the first search: the input's first frame) to 2 ranges
    /// past it: the ones offered later only say the span is there, so which frames are
    /// compared does not depend on how many were read ahead.
    void add(int input, std::int64_t pts, const VmafCudaSignature& sig) {
        if (!wants() || pts < start_[input]) return;
        std::vector<Frame>& v = in_[input];
        const std::int64_t from = start_[input] != kAny ? start_[input] : v.empty() ? pts : v.front().pts;
        if (pts >= from + 2 * range()) {
            reached_[input] = true;
            return;
        }
        if (!v.empty() && pts <= v.back().pts) return; // (not increasing: not comparable)
        v.push_back({pts, sig});
    }

    void ended(int input) { ended_[input] = true; }

    int poll(bool force, VmafCudaAlignResult& r) {
        // (a re-check waiting for its start when an input ends: it decides with nothing)
        const bool stranded = collecting_ && start_[0] == kWait && (ended_[0] || ended_[1]);
        if (!wants() && !stranded) return 0;
        // each input's frames reach 2 ranges past its first (a re-check: past its start,
        // so that which frames it compares does not depend on when they arrived)
        const bool enough = stranded || ((reached_[0] || ended_[0]) && (reached_[1] || ended_[1]));
        if (!enough && !force) return 0;
        const std::int64_t limit = ref_limit();
        decide(r);
        r.ref_limit = limit;
        collecting_ = false;
        start_[0] = start_[1] = kAny;
        reached_[0] = reached_[1] = false; // (an input that ended stays ended)
        in_[0].clear();
        in_[1].clear();
        in_[0].shrink_to_fit();
        in_[1].shrink_to_fit();
        return 1;
    }

    int score(std::int64_t pts, double v, VmafCudaAlignResult& r) {
        // (after an input's end the scores fall with a repeated frame, not the pairing)
        if (collecting_ || !std::isfinite(v) || ended_[0] || ended_[1]) return 0;
        scores_.push_back({pts, v});
        const std::int64_t shortw = std::max<std::int64_t>(1, llround(0.5 * den_ / num_));
        const std::int64_t longw = std::max<std::int64_t>(1, llround(4.0 * den_ / num_));
        while (!scores_.empty() && scores_.front().first < pts - shortw - longw) scores_.pop_front();
        if (pts < quiet_until_) return 0;
        double ss = 0, ls = 0;
        long sn = 0, ln = 0;
        for (const auto& [t, x] : scores_) {
            if (t > pts - shortw) ss += x, ++sn;
            else ls += x, ++ln;
        }
        // a long window mostly full (3 s of its 4) and a short one of a few frames
        if (sn < 3 || ln < 3 || scores_.front().first > pts - shortw - longw * 3 / 4) return 0;
        const double sm = ss / double(sn), lm = ls / double(ln);
        if (!(lm >= 30 && sm < 0.75 * lm)) return 0;
        collecting_ = true;
        recheck_ = true;
        start_[0] = start_[1] = kWait; // (recheck_from())
        quiet_until_ = pts + 4 * window_;
        scores_.clear();
        r = VmafCudaAlignResult{};
        r.recheck = 1;
        r.offset = r.previous = offset_;
        r.seconds = double(offset_) * num_ / den_;
        r.runner_up = std::numeric_limits<double>::quiet_NaN();
        std::snprintf(r.message, sizeof r.message,
                      "%ssync: the scores collapsed (mean %.2f over the last 0.5 s after %.2f) "
                      "at %.3f s: re-checking the offset (%s now) over %.3f s of frames",
                      prefix_.c_str(), sm, lm, double(pts) * num_ / den_,
                      seconds_text(offset_, num_, den_).c_str(), 2.0 * double(range()) * num_ / den_);
        return 1;
    }

    std::int64_t offset() const { return offset_; }

private:
    /// The search range: the window, or for a re-check (a frame lost or doubled on the
    /// way, not a new start) at most one second each way, so that it decides soon.
    std::int64_t range() const {
        const std::int64_t second = std::max<std::int64_t>(1, llround(double(den_) / num_));
        return recheck_ ? std::min(window_, second) : window_;
    }

    void decide(VmafCudaAlignResult& r) {
        r = VmafCudaAlignResult{};
        r.recheck = recheck_;
        r.previous = offset_;
        r.runner_up = std::numeric_limits<double>::quiet_NaN();
        const std::vector<Frame>& m = in_[0];
        const std::vector<Frame>& ref = in_[1];
        const std::int64_t w = range();
        const std::string range = "within " + seconds_text(-w, num_, den_) + " .. " +
                                  seconds_text(w, num_, den_);
        std::string why;
        // the reference's frame period: its mean step (timestamps rounded to a coarser
        // clock, e.g. MKV's milliseconds, step unevenly around it)
        std::int64_t period = 0;
        if (ref.size() >= 2)
            period = (ref.back().pts - ref.front().pts + std::int64_t(ref.size() - 1) / 2) /
                     std::int64_t(ref.size() - 1);
        struct Cand { std::int64_t offset; double cost; long long n; std::int64_t dmin, dmax; };
        std::vector<Cand> cands;
        const std::int64_t kmax = period > 0 ? w / period : 0;
        if (m.size() < 5 || ref.size() < 5 || period <= 0) {
            why = "too few frames to compare (main " + std::to_string(m.size()) + ", reference " +
                  std::to_string(ref.size()) + ")";
        } else {
            // (an input read ahead of the other brings more frames than can be compared)
            const long long need = std::max<long long>(5, (long long)(std::min(m.size(), ref.size()) + 2) / 3);
            const std::int64_t tol = period / 2;
            // candidates: the current offset and whole reference frame periods around
            // it, within the window (pairing is nearest-frame, so a phase of a part of a
            // frame between the inputs' timestamps needs no candidate of its own)
            for (std::int64_t step = -kmax; step <= kmax; ++step) {
                const std::int64_t o = offset_ + step * period;
                double sum = 0;
                long long n = 0;
                std::int64_t dmin = std::numeric_limits<std::int64_t>::max(), dmax = std::numeric_limits<std::int64_t>::min();
                std::size_t k = 0;
                for (const Frame& g : m) {
                    const std::int64_t t = g.pts - o;
                    while (k + 1 < ref.size() && ref[k + 1].pts <= t) ++k;
                    std::size_t best = k;
                    if (k + 1 < ref.size() && ref[k + 1].pts - t < t - ref[k].pts) best = k + 1;
                    if (std::llabs(ref[best].pts - t) > tol) continue;
                    sum += distance(g.sig, ref[best].sig);
                    ++n;
                    dmin = std::min(dmin, g.pts - ref[best].pts);
                    dmax = std::max(dmax, g.pts - ref[best].pts);
                }
                if (n >= need) cands.push_back({o, sum / double(n), n, dmin, dmax});
            }
            if (cands.empty()) why = "no offset " + range + " overlaps enough frames";
        }
        if (!cands.empty()) {
            const Cand* best = &cands.front();
            for (const Cand& c : cands)
                if (c.cost < best->cost ||
                    (c.cost == best->cost && std::llabs(c.offset - offset_) < std::llabs(best->offset - offset_)))
                    best = &c;
            double runner = std::numeric_limits<double>::infinity();
            for (const Cand& c : cands)
                if (std::llabs(c.offset - best->offset) * 2 > 5 * period) runner = std::min(runner, c.cost);
            r.cost = best->cost;
            r.matched = best->n;
            r.runner_up = std::isfinite(runner) ? runner : std::numeric_limits<double>::quiet_NaN();
            const bool edge = std::llabs(best->offset - offset_) + period > kmax * period;
            if (std::isfinite(runner) && best->cost < 0.7 * runner && edge) {
                char b[200];
                std::snprintf(b, sizeof b, "the best match is at the edge of the range (%s): the "
                              "offset may lie beyond it; give a larger sync_window",
                              seconds_text(best->offset, num_, den_).c_str());
                why = std::string(b) + " (" + range + ")";
            } else if (std::isfinite(runner) && best->cost < 0.7 * runner) {
                r.found = 1;
                // the matched frames' own time difference when it is one up to rounding
                // (a coarser clock on one input): no shifted reference frame then lands
                // after its main frame; else the whole periods
                r.offset = best->dmax - best->dmin < period / 4 ? best->dmin : best->offset;
            } else {
                char b[260];
                std::snprintf(b, sizeof b, "no offset %s matches clearly better than the others "
                              "(%.5f at %s, %.5f elsewhere): the pictures are too still or repeat, "
                              "or the offset lies beyond the range (give a larger sync_window)",
                              range.c_str(), best->cost, seconds_text(best->offset, num_, den_).c_str(),
                              runner);
                why = std::isfinite(runner) ? b : "only offsets within 2 frames of each other could be compared";
            }
        }
        if (!r.found) r.offset = offset_;
        r.changed = r.recheck && r.found && r.offset != offset_;
        r.seconds = double(r.offset) * num_ / den_;
        const std::string off = seconds_text(r.offset, num_, den_);
        char b[512];
        if (r.found && !r.recheck && r.offset == 0)
            std::snprintf(b, sizeof b, "sync: the inputs are aligned (offset %s; %lld frames compared)",
                          off.c_str(), r.matched);
        else if (r.found && !r.recheck)
            std::snprintf(b, sizeof b, "sync: the main is %s the reference by %.3f s (offset %s; "
                          "%lld frames compared): pairing with it",
                          r.offset > 0 ? "behind" : "ahead of", std::fabs(r.seconds), off.c_str(), r.matched);
        else if (r.found && r.changed)
            std::snprintf(b, sizeof b, "sync: re-checked: the offset is now %s (was %s; %lld frames "
                          "compared): pairing with it", off.c_str(),
                          seconds_text(r.previous, num_, den_).c_str(), r.matched);
        else if (r.found)
            std::snprintf(b, sizeof b, "sync: re-checked: the offset is unchanged (%s): the "
                          "scores fell with the pictures, not the pairing", off.c_str());
        else
            std::snprintf(b, sizeof b, "sync: %s; %s", why.c_str(),
                          r.recheck ? ("keeping the offset " + off).c_str()
                                    : "pairing by the timestamps as they are");
        std::snprintf(r.message, sizeof r.message, "%s%s", prefix_.c_str(), b);
        offset_ = r.offset;
        recheck_ = false;
    }

    std::int64_t window_;
    int num_, den_;
    std::string prefix_;
    static constexpr std::int64_t kAny = std::numeric_limits<std::int64_t>::min();
    static constexpr std::int64_t kWait = std::numeric_limits<std::int64_t>::max();
    bool collecting_ = true, recheck_ = false;
    std::int64_t start_[2] = {kAny, kAny}; ///< first times a search compares (kWait: not known)
    bool ended_[2] = {false, false};
    bool reached_[2] = {false, false}; ///< a frame past the span was offered
    std::vector<Frame> in_[2];
    std::int64_t offset_ = 0;
    std::deque<std::pair<std::int64_t, double>> scores_;
    std::int64_t quiet_until_ = std::numeric_limits<std::int64_t>::min();
};

} // namespace vmaf_cuda::engine

struct VmafCudaAlign {
    vmaf_cuda::engine::Align a;
};

using vmaf_cuda::api::guarded;

int vmaf_cuda_picture_signature(VmafCudaSession* s, const VmafCudaPicture* pic, VmafCudaSignature* out) {
    if (!s || !pic || !out) return VMAF_CUDA_EINVAL;
    return guarded(s, [&] {
        s->impl->signature(*pic, out->cell);
        return VMAF_CUDA_OK;
    });
}

int vmaf_cuda_set_sync_offset(VmafCudaSession* s, uint64_t frame, double seconds) {
    if (!s || std::isinf(seconds)) return VMAF_CUDA_EINVAL;
    return guarded(s, [&] {
        s->impl->set_sync_offset(frame, seconds);
        return VMAF_CUDA_OK;
    });
}

int vmaf_cuda_align_open(VmafCudaAlign** out, const VmafCudaAlignSettings* s) {
    if (out) *out = nullptr;
    if (!out || !s || s->window <= 0 || s->tb_num <= 0 || s->tb_den <= 0) return VMAF_CUDA_EINVAL;
    try {
        *out = new VmafCudaAlign{vmaf_cuda::engine::Align(*s)};
    } catch (...) {
        return VMAF_CUDA_ENOMEM;
    }
    return VMAF_CUDA_OK;
}

int vmaf_cuda_align_wants(const VmafCudaAlign* a) { return a && a->a.wants(); }

int vmaf_cuda_align_add(VmafCudaAlign* a, int input, int64_t pts, const VmafCudaSignature* sig) {
    if (!a || !sig || (input != 0 && input != 1)) return VMAF_CUDA_EINVAL;
    try {
        a->a.add(input, pts, *sig);
    } catch (...) {
        return VMAF_CUDA_ENOMEM;
    }
    return VMAF_CUDA_OK;
}

int vmaf_cuda_align_input_ended(VmafCudaAlign* a, int input) {
    if (!a || (input != 0 && input != 1)) return VMAF_CUDA_EINVAL;
    a->a.ended(input);
    return VMAF_CUDA_OK;
}

int vmaf_cuda_align_poll(VmafCudaAlign* a, int force, VmafCudaAlignResult* r) {
    if (!a || !r) return VMAF_CUDA_EINVAL;
    try {
        return a->a.poll(force != 0, *r);
    } catch (...) {
        return VMAF_CUDA_ENOMEM;
    }
}

int vmaf_cuda_align_score(VmafCudaAlign* a, int64_t pts, double score, VmafCudaAlignResult* r) {
    if (!a || !r) return VMAF_CUDA_EINVAL;
    try {
        return a->a.score(pts, score, *r);
    } catch (...) {
        return VMAF_CUDA_ENOMEM;
    }
}

int64_t vmaf_cuda_align_offset(const VmafCudaAlign* a) { return a ? a->a.offset() : 0; }

unsigned vmaf_cuda_frames_in_pipeline(const VmafCudaSession* s) {
    return s ? s->impl->in_flight() + vmaf_cuda_lookahead(s) : 0;
}

int vmaf_cuda_align_recheck_from(VmafCudaAlign* a, int64_t main_pts) {
    if (!a) return VMAF_CUDA_EINVAL;
    a->a.recheck_from(main_pts);
    return VMAF_CUDA_OK;
}

int64_t vmaf_cuda_align_ref_limit(const VmafCudaAlign* a) {
    return a ? a->a.ref_limit() : INT64_MIN;
}

void vmaf_cuda_align_close(VmafCudaAlign* a) { delete a; }

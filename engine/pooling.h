// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file pooling.h
/// Pooling of per-frame scores: over the whole stream (the log, vmaf_cuda_pooled(), the
/// score lines) and over a rolling window (live QA: window metadata, NDJSON window lines,
/// SEI). The two means are defined differently, on purpose:
///
///  - the whole-stream mean is libvmaf v3.2.0's: a left-to-right double sum divided by
///    the count (src/libvmaf.c vmaf_feature_score_pooled()), because the log must be
///    bit-exact with libvmaf's;
///  - a window's mean is exact: the window's sum rounded once to double (what Python's
///    math.fsum() returns), kept under additions and removals by ExactSum, so a window
///    costs O(1) per frame whatever its length and does not drift over days. A sliding
///    left-to-right sum cannot be updated in O(1) (removing the oldest value would need
///    its rounding history), and the two can differ in the last bits.
///
/// min, max and the percentiles mean the same in both: nearest rank, NaN sorting last.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace vmaf_cuda::engine {

/// Pools `values` (one per scored frame, in frame order) with `method`, a VmafCudaPool:
/// - MEAN: sum in frame order (double), divided by the count;
/// - HARMONIC_MEAN: count / (sum in frame order of 1 / (v + 1)) - 1;
/// - MIN / MAX: the first value, replaced by each later value that is smaller / larger
///   (so a NaN first value stays, later NaNs are skipped, as in libvmaf);
/// - PERC1 / PERC5 / PERC10: percentile() with p = 1, 5, 10.
/// Throws Error(VMAF_CUDA_EINVAL) for an empty span or an unknown method.
double pool(std::span<const double> values, int method);

/// Nearest-rank percentile: the value at 1-based rank max(1, ceil(p * n / 100)) of the
/// values sorted ascending, NaN after every number (the rank is computed in integers,
/// so p = 5, n = 20 is rank 1 exactly). p in 1..100; throws Error(EINVAL) when empty.
double percentile(std::span<const double> values, unsigned p);

/// The percentile of a VmafCudaPool method (1, 5, 10), or 0 for the other methods.
unsigned pool_percentile(int method);

/// Every pool name, in VmafCudaPool order, as messages list them (VMAF_CUDA_POOL_NAMES).
inline constexpr std::string_view kPoolNames =
    "mean, harmonic_mean, min, max, perc1, perc5, perc10";
/// The VmafCudaPool called `name` ("mean" .. "perc10"), or -1.
int pool_from_name(std::string_view name);
/// The name of a VmafCudaPool, or nullptr when out of range.
const char* pool_name(int method);

/// Exact sum of doubles under additions and removals: Shewchuk's non-overlapping
/// partials as Python's math.fsum keeps them (Modules/mathmodule.c msum); removing x
/// adds -x, which cancels it exactly. NaN and infinities are counted apart.
class ExactSum {
public:
    /// Adds x. Throws std::bad_alloc.
    void add(double x) { add_signed(x, false); }
    /// Removes a value added before.
    void remove(double x) { add_signed(x, true); }
    /// The sum rounded once to double, ties to even (math.fsum's result; 0 when empty);
    /// NaN with a NaN or with +inf and -inf, else +-inf with an infinity.
    double value() const;
    /// Partials in use and allocated (they stay few: at most about 40 for doubles).
    std::size_t partials() const { return partials_.size(); }
    std::size_t capacity() const { return partials_.capacity(); }

private:
    void add_signed(double x, bool negate);
    std::vector<double> partials_; ///< increasing magnitude, non-overlapping
    std::int64_t nan_ = 0, pinf_ = 0, ninf_ = 0;
};

/// What a window reports. count 0: empty, every value NaN.
struct WindowStats {
    std::size_t count = 0;
    double min, max, mean, harmonic_mean;
    double perc; ///< the window's percentile (Window's `perc`), NaN without one
};

/// A rolling window of values with time keys: the last `frames` values, or those whose
/// time key lies within the trailing `duration` ticks (key > newest key - duration).
///   mean          = S / n, S the ExactSum of the n values;
///   harmonic_mean = n / T - 1, T the ExactSum of 1.0 / (v + 1.0) (each term in double,
///                   as libvmaf's);
///   min, max      = monotonic deques, NaN ignored unless every value is NaN;
///   perc          = percentile() of the window (an order-statistic treap, O(log n)).
/// A window holding NaN or an infinity has mean and harmonic_mean NaN or +-inf (as the
/// IEEE sum would). Memory is bounded by the window's length: after the first window no
/// push allocates.
class Window {
public:
    /// frames > 0: a window of frames; else of `duration` ticks (> 0). perc: 0 (none) or
    /// 1..100. Throws Error(EINVAL) otherwise.
    Window(std::size_t frames, std::int64_t duration, unsigned perc);
    Window(Window&&) noexcept;
    Window& operator=(Window&&) noexcept;
    ~Window();
    Window(const Window&) = delete;
    Window& operator=(const Window&) = delete;

    /// Adds value v at time key t (a key below the newest one counts as the newest) and
    /// drops what fell out. Throws std::bad_alloc.
    void push(std::int64_t t, double v);
    WindowStats stats() const;

    /// Allocated slots (tests: memory stays bounded over any stream length).
    struct Capacity {
        std::size_t values, min_deque, max_deque, nodes, sum_partials;
    };
    Capacity capacity() const;
    std::size_t size() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace vmaf_cuda::engine

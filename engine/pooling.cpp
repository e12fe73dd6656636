// SPDX-License-Identifier: BSD-2-Clause-Patent
// Pooling: the whole stream in the operation order of libvmaf v3.2.0
// vmaf_feature_score_pooled(), and rolling windows with exact sums (see pooling.h for why
// the two means differ).

#include "pooling.h"

#include "error.h"
#include "vmaf_cuda.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace vmaf_cuda::engine {

// ------------------------------------------------------------------ whole stream

unsigned pool_percentile(int method) {
    switch (method) {
    case VMAF_CUDA_POOL_PERC1: return 1;
    case VMAF_CUDA_POOL_PERC5: return 5;
    case VMAF_CUDA_POOL_PERC10: return 10;
    default: return 0;
    }
}

namespace {
constexpr const char* kPoolName[] = {"mean", "harmonic_mean", "min", "max", "perc1", "perc5", "perc10"};
static_assert(VMAF_CUDA_POOL_MEAN == 0 && VMAF_CUDA_POOL_HARMONIC_MEAN == 1 &&
              VMAF_CUDA_POOL_MIN == 2 && VMAF_CUDA_POOL_MAX == 3 && VMAF_CUDA_POOL_PERC1 == 4 &&
              VMAF_CUDA_POOL_PERC5 == 5 && VMAF_CUDA_POOL_PERC10 == 6);
} // namespace

int pool_from_name(std::string_view name) {
    for (int i = 0; i < int(std::size(kPoolName)); ++i)
        if (name == kPoolName[i]) return i;
    return -1;
}

const char* pool_name(int method) {
    return method >= 0 && method < int(std::size(kPoolName)) ? kPoolName[method] : nullptr;
}

double percentile(std::span<const double> values, unsigned p) {
    if (values.empty()) throw Error(VMAF_CUDA_EINVAL, "no frame scored: nothing to pool");
    if (p < 1 || p > 100)
        throw Error(VMAF_CUDA_EINVAL, "percentile " + std::to_string(p) + " is not 1..100");
    const std::size_t n = values.size();
    std::size_t rank = (std::size_t(p) * n + 99) / 100;  // ceil(p * n / 100), exact
    if (rank < 1) rank = 1;
    std::vector<double> v(values.begin(), values.end());
    // NaN last: a strict weak order on numbers and NaN
    const auto less = [](double a, double b) { return std::isnan(b) ? !std::isnan(a) : a < b; };
    std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(rank - 1), v.end(), less);
    return v[rank - 1];
}

double pool(std::span<const double> values, int method) {
    if (values.empty()) throw Error(VMAF_CUDA_EINVAL, "no frame scored: nothing to pool");
    if (const unsigned p = pool_percentile(method)) return percentile(values, p);
    // libvmaf accumulates all four in one pass; each is independent of the others.
    const unsigned count = unsigned(values.size());
    double min = values[0], max = values[0], sum = 0., inv_sum = 0.;
    for (const double s : values) {
        sum += s;
        inv_sum += 1. / (s + 1.);
        if (s < min) min = s;
        if (s > max) max = s;
    }
    switch (method) {
    case VMAF_CUDA_POOL_MEAN: return sum / count;
    case VMAF_CUDA_POOL_HARMONIC_MEAN: return count / inv_sum - 1.0;
    case VMAF_CUDA_POOL_MIN: return min;
    case VMAF_CUDA_POOL_MAX: return max;
    default: throw Error(VMAF_CUDA_EINVAL, "unknown pooling method " + std::to_string(method));
    }
}

// ------------------------------------------------------------------ exact sum

// Python's math.fsum (Modules/mathmodule.c, Shewchuk's msum): the partials stay a
// non-overlapping expansion of the exact sum.
void ExactSum::add_signed(double x, bool negate) {
    if (!std::isfinite(x)) {
        const std::int64_t d = negate ? -1 : 1;
        if (std::isnan(x))
            nan_ += d;
        else if (x > 0)
            pinf_ += d;
        else
            ninf_ += d;
        return;
    }
    if (negate) x = -x;
    // the one allocation, before anything changes (doubling: the partials stay few)
    if (partials_.size() == partials_.capacity()) partials_.reserve(std::max<std::size_t>(8, 2 * partials_.size()));
    std::size_t i = 0;
    for (std::size_t j = 0; j < partials_.size(); ++j) {
        double y = partials_[j];
        if (std::fabs(x) < std::fabs(y)) std::swap(x, y);
        const double hi = x + y;
        const double lo = y - (hi - x);
        if (lo != 0.0) partials_[i++] = lo;
        x = hi;
    }
    partials_.resize(i);
    if (x != 0.0) partials_.push_back(x);
}

double ExactSum::value() const {
    if (nan_ > 0 || (pinf_ > 0 && ninf_ > 0)) return std::numeric_limits<double>::quiet_NaN();
    if (pinf_ > 0) return HUGE_VAL;
    if (ninf_ > 0) return -HUGE_VAL;
    std::size_t n = partials_.size();
    const double* p = partials_.data();
    double hi = 0.0, lo = 0.0;
    if (n > 0) {
        hi = p[--n];
        // add from the top while the sum stays exact
        while (n > 0) {
            const double x = hi, y = p[--n];
            hi = x + y;
            const double yr = hi - x;
            lo = y - yr;
            if (lo != 0.0) break;
        }
        // half-even rounding across partials
        if (n > 0 && ((lo < 0.0 && p[n - 1] < 0.0) || (lo > 0.0 && p[n - 1] > 0.0))) {
            const double y = lo * 2.0;
            const double x = hi + y;
            const double yr = x - hi;
            if (y == yr) hi = x;
        }
    }
    return hi;
}

// ------------------------------------------------------------------ window

namespace {

/// A value in the window: its time key, push number, value and treap node (-1: none).
struct Entry {
    std::int64_t t = 0;
    std::uint64_t seq = 0;
    double v = 0;
    std::int32_t node = -1;
};

/// A FIFO on one buffer that doubles when full and never shrinks.
class Ring {
public:
    std::size_t size() const { return count_; }
    std::size_t capacity() const { return buf_.size(); }
    Entry& at(std::size_t i) { return buf_[(head_ + i) % buf_.size()]; }
    const Entry& at(std::size_t i) const { return buf_[(head_ + i) % buf_.size()]; }
    const Entry& front() const { return at(0); }
    const Entry& back() const { return at(count_ - 1); }
    void push_back(const Entry& e) {
        if (count_ == buf_.size()) {
            std::vector<Entry> n(buf_.empty() ? 16 : 2 * buf_.size());
            for (std::size_t i = 0; i < count_; ++i) n[i] = at(i);
            buf_.swap(n);
            head_ = 0;
        }
        buf_[(head_ + count_++) % buf_.size()] = e;
    }
    void pop_front() {
        head_ = (head_ + 1) % buf_.size();
        --count_;
    }
    void pop_back() { --count_; }

private:
    std::vector<Entry> buf_;
    std::size_t head_ = 0, count_ = 0;
};

/// a < b with NaN after every number (min deque, percentiles)
bool lt_nan_last(double a, double b) {
    if (std::isnan(a) || std::isnan(b)) return !std::isnan(a) && std::isnan(b);
    return a < b;
}

/// a > b with NaN before every number (max deque)
bool gt_nan_first(double a, double b) {
    if (std::isnan(a) || std::isnan(b)) return !std::isnan(a) && std::isnan(b);
    return a > b;
}

/// An order-statistic treap of (value, push number) with its nodes in one pool.
class Treap {
public:
    /// Inserts (v, seq); returns its node. Throws std::bad_alloc.
    std::int32_t insert(double v, std::uint64_t seq) {
        const std::int32_t i = make(v, seq);
        std::int32_t l, r;
        split(root_, v, seq, &l, &r);
        root_ = merge(merge(l, i), r);
        return i;
    }
    void erase(std::int32_t node) {
        root_ = erase(root_, n_[node].v, n_[node].seq);
        n_[node].l = free_;
        free_ = node;
    }
    /// The k-th smallest value (0-based), NaN when k is out of range.
    double kth(std::uint32_t k) const {
        std::int32_t t = root_;
        while (t >= 0) {
            const std::uint32_t ls = size(n_[t].l);
            if (k < ls) {
                t = n_[t].l;
            } else if (k == ls) {
                return n_[t].v;
            } else {
                k -= ls + 1;
                t = n_[t].r;
            }
        }
        return std::numeric_limits<double>::quiet_NaN();
    }
    std::size_t capacity() const { return n_.capacity(); }

private:
    struct Node {
        double v;
        std::uint64_t seq;
        std::uint32_t prio;
        std::int32_t l, r;
        std::uint32_t size;
    };

    static bool key_less(double a, std::uint64_t sa, double b, std::uint64_t sb) {
        if (lt_nan_last(a, b)) return true;
        if (lt_nan_last(b, a)) return false;
        return sa < sb;
    }
    std::uint32_t size(std::int32_t t) const { return t < 0 ? 0 : n_[t].size; }
    void update(std::int32_t t) { n_[t].size = 1 + size(n_[t].l) + size(n_[t].r); }

    std::int32_t make(double v, std::uint64_t seq) {
        std::int32_t i;
        if (free_ >= 0) {
            i = free_;
            free_ = n_[i].l;
        } else {
            n_.push_back({});
            i = std::int32_t(n_.size() - 1);
        }
        rng_ ^= rng_ << 13;
        rng_ ^= rng_ >> 17;
        rng_ ^= rng_ << 5;
        n_[i] = Node{v, seq, rng_, -1, -1, 1};
        return i;
    }
    std::int32_t merge(std::int32_t a, std::int32_t b) {
        if (a < 0) return b;
        if (b < 0) return a;
        if (n_[a].prio > n_[b].prio) {
            n_[a].r = merge(n_[a].r, b);
            update(a);
            return a;
        }
        n_[b].l = merge(a, n_[b].l);
        update(b);
        return b;
    }
    /// *l: keys < (v, seq); *r: the others
    void split(std::int32_t t, double v, std::uint64_t seq, std::int32_t* l, std::int32_t* r) {
        if (t < 0) {
            *l = *r = -1;
            return;
        }
        std::int32_t a, b;
        if (key_less(n_[t].v, n_[t].seq, v, seq)) {
            split(n_[t].r, v, seq, &a, &b);
            n_[t].r = a;
            *l = t;
            *r = b;
        } else {
            split(n_[t].l, v, seq, &a, &b);
            n_[t].l = b;
            *l = a;
            *r = t;
        }
        update(t);
    }
    std::int32_t erase(std::int32_t t, double v, std::uint64_t seq) {
        if (t < 0) return t;
        if (n_[t].seq == seq) return merge(n_[t].l, n_[t].r);
        if (key_less(v, seq, n_[t].v, n_[t].seq))
            n_[t].l = erase(n_[t].l, v, seq);
        else
            n_[t].r = erase(n_[t].r, v, seq);
        update(t);
        return t;
    }

    std::vector<Node> n_;
    std::int32_t root_ = -1, free_ = -1;
    std::uint32_t rng_ = 0x9e3779b9u;
};

} // namespace

struct Window::Impl {
    std::size_t max_frames;
    std::int64_t duration;
    unsigned perc;
    Ring values, min_dq, max_dq;
    ExactSum sum, inv_sum;
    Treap treap;
    std::uint64_t next_seq = 0;

    void pop_front() {
        const Entry e = values.front();
        values.pop_front();
        sum.remove(e.v);
        inv_sum.remove(1.0 / (e.v + 1.0));
        if (e.node >= 0) treap.erase(e.node);
        if (min_dq.size() && min_dq.front().seq == e.seq) min_dq.pop_front();
        if (max_dq.size() && max_dq.front().seq == e.seq) max_dq.pop_front();
    }
};

Window::Window(std::size_t frames, std::int64_t duration, unsigned perc) {
    if ((!frames && duration <= 0) || perc > 100)
        throw Error(VMAF_CUDA_EINVAL, "invalid window: " + std::to_string(frames) + " frames, " +
                                          std::to_string(duration) + " ticks, percentile " +
                                          std::to_string(perc));
    impl_ = std::make_unique<Impl>();
    impl_->max_frames = frames;
    impl_->duration = duration;
    impl_->perc = perc;
}

Window::Window(Window&&) noexcept = default;
Window& Window::operator=(Window&&) noexcept = default;
Window::~Window() = default;

void Window::push(std::int64_t t, double v) {
    Impl& w = *impl_;
    Entry e{t, w.next_seq++, v, -1};
    if (w.values.size() && t < w.values.back().t) e.t = t = w.values.back().t;
    if (w.perc) e.node = w.treap.insert(v, e.seq);
    w.values.push_back(e);
    w.sum.add(v);
    w.inv_sum.add(1.0 / (v + 1.0));
    while (w.min_dq.size() && !lt_nan_last(w.min_dq.back().v, v)) w.min_dq.pop_back();
    while (w.max_dq.size() && !gt_nan_first(w.max_dq.back().v, v)) w.max_dq.pop_back();
    w.min_dq.push_back(e);
    w.max_dq.push_back(e);
    for (;;) {
        const Entry& front = w.values.front();
        // t >= front.t (keys do not go back): their distance as unsigned is exact, where
        // t - duration could overflow for a key near INT64_MIN
        const bool out = w.max_frames ? w.values.size() > w.max_frames
                                      : std::uint64_t(t) - std::uint64_t(front.t) >=
                                            std::uint64_t(w.duration);
        if (!out) break;
        w.pop_front();
    }
}

WindowStats Window::stats() const {
    const Impl& w = *impl_;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    WindowStats st{0, nan, nan, nan, nan, nan};
    const std::size_t n = w.values.size();
    st.count = n;
    if (!n) return st;
    st.min = w.min_dq.front().v;
    st.max = w.max_dq.front().v;
    st.mean = w.sum.value() / double(n);
    st.harmonic_mean = double(n) / w.inv_sum.value() - 1.0;
    if (w.perc) {
        const std::size_t rank = (std::size_t(w.perc) * n + 99) / 100;
        st.perc = w.treap.kth(std::uint32_t(rank ? rank - 1 : 0));
    }
    return st;
}

Window::Capacity Window::capacity() const {
    const Impl& w = *impl_;
    return {w.values.capacity(), w.min_dq.capacity(), w.max_dq.capacity(), w.treap.capacity(),
            std::max(w.sum.capacity(), w.inv_sum.capacity())};
}

std::size_t Window::size() const { return impl_->values.size(); }

} // namespace vmaf_cuda::engine

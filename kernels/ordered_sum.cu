// SPDX-License-Identifier: BSD-2-Clause-Patent
// The sequential double sum on the device (ordered_sum.cuh), from the phases and maps of
// ordered_sum_math.cuh.

#include "ordered_sum.cuh"
#include "block_ops.cuh"
#include "ordered_sum_math.cuh"

#include <algorithm>
#include <climits>
#include <cmath>
#include <stdexcept>
#include <string>

namespace vmaf_cuda::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kPer = 8;
constexpr int kChunk = kThreads * kPer;

/// Device state of a call (read back by the host).
struct SumState {
    int min_ulp_exp;     // granularity: smallest ulp exponent of the nonzero values
    int not_finite;      // some value is NaN or infinite
    int cross_block;     // phase: first block where it ends, -1: none
    int cross_index;     // phase: the value where it ends, -1: none, -2: not found (a bug)
    long long d_in;      // phase: increment before that block
    int par_in;          // phase: parity before that block
    long long d_total;   // phase: increment of the whole range when it does not end
    int par_total;       // phase: parity after the whole range when it does not end
    double s_next;       // phase: partial sum after that value (or the final sum)
};

struct Terms {
    const double* a;
    const double* b; // null: x = a[i]
    const double* c;
    const float* f;  // not null: x = f[i]
    __device__ double operator()(long long i) const {
        if (f) return double(f[i]);
        if (!b) return a[i];
        return __dmul_rn(__dmul_rn(a[i], b[i]), c[i]);
    }
};

template <class Op>
__device__ int block_reduce(int v, int* ws, Op op) {
    return block_ops::reduce<kThreads>(v, ws, op);
}
using MinOp = block_ops::Min;
using MaxOp = block_ops::Max;

/// In-order exclusive composition of one map per thread (buf: 2 * kThreads maps).
__device__ OrderedSumMap block_excl_compose(const OrderedSumMap& mine, OrderedSumMap* buf,
                                            OrderedSumMap& total) {
    return block_ops::excl_compose<kThreads>(
        mine, buf, total,
        [](const OrderedSumMap& f, const OrderedSumMap& g) { return ordered_sum_then(f, g); },
        ordered_sum_identity());
}

/// The smallest ulp exponent of the nonzero values, and whether one is not finite.
__global__ void os_scan_kernel(Terms x, long long n, SumState* st) {
    __shared__ int ws[kThreads / 32];
    int emin = INT_MAX, bad = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const double v = x(i);
        const long long bits = __double_as_longlong(v);
        const int ef = int((bits >> 52) & 0x7ff);
        if (ef == 0x7ff) {
            bad = 1;
        } else if (ef != 0) {
            emin = min(emin, ef - 1075); // 2^(ef - 1023) * 1.m: ulp 2^(ef - 1023 - 52)
        } else if ((bits & 0x000fffffffffffffLL) != 0) {
            emin = min(emin, -1074); // subnormal
        }
    }
    emin = block_reduce(emin, ws, MinOp{});
    bad = block_reduce(bad, ws, MaxOp{});
    if (threadIdx.x == 0) {
        if (emin != INT_MAX) atomicMin(&st->min_ulp_exp, emin);
        if (bad) atomicMax(&st->not_finite, 1);
    }
}

__global__ void os_init_kernel(SumState* st) {
    st->min_ulp_exp = INT_MAX;
    st->not_finite = 0;
}

/// Composed map of each block of values [start + b * kChunk, ...) below n.
__global__ void os_map_kernel(Terms x, long long start, long long n, double u, OrderedSumMap* maps) {
    __shared__ OrderedSumMap buf[2 * kThreads];
    const long long x0 = start + (long long)blockIdx.x * kChunk + (long long)threadIdx.x * kPer;
    OrderedSumMap m = ordered_sum_identity();
#pragma unroll
    for (int e = 0; e < kPer; ++e)
        if (x0 + e < n) m = ordered_sum_then(m, ordered_sum_map_of(x(x0 + e), u));
    OrderedSumMap total;
    block_excl_compose(m, buf, total);
    if (threadIdx.x == 0) maps[blockIdx.x] = total;
}

/// One block: the first block where the phase ends, with the state before it; or the
/// whole range's increment.
__global__ void os_find_kernel(const OrderedSumMap* maps, int nb, OrderedSumPhase ph, SumState* st) {
    __shared__ OrderedSumMap buf[2 * kThreads];
    __shared__ int ws[kThreads / 32];
    const int per = (nb + kThreads - 1) / kThreads;
    const int b0 = int(threadIdx.x) * per, b1 = min(nb, b0 + per);
    OrderedSumMap mine = ordered_sum_identity();
    for (int b = b0; b < b1; ++b) mine = ordered_sum_then(mine, maps[b]);
    OrderedSumMap total;
    const OrderedSumMap before = block_excl_compose(mine, buf, total);
    long long d = before.d[ph.parity];
    int par = before.p[ph.parity];
    int found = INT_MAX;
    for (int b = b0; b < b1; ++b) {
        if (ordered_sum_ends(maps[b], d, par, ph)) {
            found = b;
            break;
        }
        d = ordered_sum_clamp(d + maps[b].d[par]);
        par = maps[b].p[par];
    }
    const int first = block_reduce(found, ws, MinOp{});
    if (first == INT_MAX) {
        if (threadIdx.x == 0) {
            st->cross_block = -1;
            st->d_total = total.d[ph.parity];
            st->par_total = total.p[ph.parity];
        }
    } else if (found == first) {
        st->cross_block = first;
        st->d_in = d;
        st->par_in = par;
    }
}

/// One block: inside the block found, the value where the phase ends and the partial sum
/// after it (a plain double addition); or the final sum when the phase does not end.
__global__ void os_cross_kernel(Terms x, long long start, long long n, OrderedSumPhase ph, SumState* st) {
    __shared__ OrderedSumMap buf[2 * kThreads];
    __shared__ int ws[kThreads / 32];
    const int b = st->cross_block;
    if (b < 0) {
        if (threadIdx.x == 0) {
            st->cross_index = -1;
            st->s_next = __dadd_rn(ph.s_start, __dmul_rn(double(st->d_total), ph.u));
        }
        return;
    }
    const long long x0 = start + (long long)b * kChunk + (long long)threadIdx.x * kPer;
    OrderedSumMap m = ordered_sum_identity();
#pragma unroll
    for (int e = 0; e < kPer; ++e)
        if (x0 + e < n) m = ordered_sum_then(m, ordered_sum_map_of(x(x0 + e), ph.u));
    OrderedSumMap total;
    const OrderedSumMap before = block_excl_compose(m, buf, total);
    const int par_in = st->par_in;
    long long d = ordered_sum_clamp(st->d_in + before.d[par_in]);
    int par = before.p[par_in];
    // (the marks of the values before this thread's are within `before`: if one had
    // ended the phase, an earlier thread finds it first)
    int found = INT_MAX;
    long long d_found = 0;
    for (int e = 0; e < kPer && x0 + e < n; ++e) {
        const OrderedSumMap v = ordered_sum_map_of(x(x0 + e), ph.u);
        if (ordered_sum_ends(v, d, par, ph)) {
            found = int(e) + int(threadIdx.x) * kPer; // offset in the block
            d_found = d;
            break;
        }
        d = ordered_sum_clamp(d + v.d[par]);
        par = v.p[par];
    }
    const int first = block_reduce(found, ws, MinOp{});
    if (first == INT_MAX) {
        if (threadIdx.x == 0) st->cross_index = -2; // the block's map and its values disagree
    } else if (found == first) {
        const long long i = start + (long long)b * kChunk + first;
        st->cross_index = int(i); // n < 2^31
        st->s_next = __dadd_rn(__dadd_rn(ph.s_start, __dmul_rn(double(d_found), ph.u)), x(i));
    }
}

int blocks_for(long long len) { return int((len + kChunk - 1) / kChunk); }

} // namespace

OrderedSum::OrderedSum(std::size_t max_n)
    : max_n_(max_n),
      blocks_((max_n == 0 || max_n > std::size_t(INT_MAX) ? 1 : std::size_t(blocks_for((long long)max_n) + 1)) *
              sizeof(OrderedSumMap)),
      state_(sizeof(SumState)),
      host_state_(sizeof(SumState)) {
    if (max_n == 0 || max_n > std::size_t(INT_MAX))
        throw std::invalid_argument("OrderedSum: max_n must be in 1.." + std::to_string(INT_MAX));
}

void OrderedSum::set_min_range(std::size_t v) {
    if (v == 0 || v > std::size_t(INT_MAX)) throw std::invalid_argument("OrderedSum: min_range must be in 1..2^31 - 1");
    min_range_ = (long long)v;
}

bool OrderedSum::sum(const double* a, const double* b, const double* c, std::size_t n,
                     cudaStream_t stream, double& out, OrderedSumStats* stats) {
    if ((b == nullptr) != (c == nullptr))
        throw std::invalid_argument("OrderedSum::sum: give both b and c, or neither");
    return run({a, b, c, nullptr}, n, stream, out, stats);
}

bool OrderedSum::sum(const float* x, std::size_t n, cudaStream_t stream, double& out,
                     OrderedSumStats* stats) {
    return run({nullptr, nullptr, nullptr, x}, n, stream, out, stats);
}

bool OrderedSum::run(const Input& in, std::size_t n, cudaStream_t stream, double& out,
                     OrderedSumStats* stats) {
    if (n > max_n_)
        throw std::invalid_argument("OrderedSum::sum: n = " + std::to_string(n) + " above " +
                                    std::to_string(max_n_));
    OrderedSumStats local;
    OrderedSumStats& s = stats ? *stats : local;
    s = OrderedSumStats{};
    if (n == 0) {
        out = 0.0;
        return true;
    }
    const Terms x{in.a, in.b, in.c, in.f};
    auto* st = state_.get<SumState>();
    auto* hst = host_state_.get<SumState>();
    const auto read_state = [&] {
        VMAF_CUDA_CHECK(cudaMemcpyAsync(hst, st, sizeof(SumState), cudaMemcpyDeviceToHost, stream));
        VMAF_CUDA_CHECK(cudaStreamSynchronize(stream));
    };
    const long long nn = (long long)n;
    os_init_kernel<<<1, 1, 0, stream>>>(st);
    VMAF_CUDA_CHECK_LAUNCH();
    os_scan_kernel<<<std::min(blocks_for(nn) * kPer, 1024), kThreads, 0, stream>>>(x, nn, st);
    VMAF_CUDA_CHECK_LAUNCH();
    read_state();
    if (hst->not_finite) return false;
    if (hst->min_ulp_exp == INT_MAX) { // every value is zero
        out = 0.0;
        return true;
    }
    const double g = std::ldexp(1.0, hst->min_ulp_exp);
    OrderedSumPhase ph = ordered_sum_phase0(g);
    auto* maps = blocks_.get<OrderedSumMap>();
    long long start = 0;
    for (;;) {
        ++s.phases;
        // A phase maps at most max(min_range_, 2 * start) values: a binade phase of a sum
        // that grows steadily ends near twice its start, and mapping every remaining value
        // each phase would read the array about once per binade. A phase that does not
        // end in its range goes on from the range's end (the same phase, shifted).
        const long long len = std::min(nn - start, std::max(min_range_, 2 * start));
        const long long end = start + len;
        const int nb = blocks_for(len);
        os_map_kernel<<<nb, kThreads, 0, stream>>>(x, start, end, ph.u, maps);
        VMAF_CUDA_CHECK_LAUNCH();
        os_find_kernel<<<1, kThreads, 0, stream>>>(maps, nb, ph, st);
        VMAF_CUDA_CHECK_LAUNCH();
        os_cross_kernel<<<1, kThreads, 0, stream>>>(x, start, end, ph, st);
        VMAF_CUDA_CHECK_LAUNCH();
        read_state();
        if (hst->cross_index == -2)
            throw CudaError(cudaErrorUnknown, "OrderedSum: a phase end was not found in its block (internal error)");
        if (!std::isfinite(hst->s_next)) return false; // the sum overflowed: the host's
        if (s.phases > 2 * n + 64)
            throw CudaError(cudaErrorUnknown, "OrderedSum: the sum did not finish (internal error)");
        if (hst->cross_index < 0) { // the phase goes on past `end`
            if (end >= nn) {
                out = hst->s_next;
                return true;
            }
            ph.s_start = hst->s_next; // exact: s_start + d_total * u inside the phase
            ph.lo_end -= hst->d_total;
            ph.hi_end -= hst->d_total;
            ph.parity = hst->par_total;
            start = end;
            continue;
        }
        if (hst->cross_index + 1 >= nn) {
            out = hst->s_next;
            return true;
        }
        start = hst->cross_index + 1;
        ph = ordered_sum_phase_at(hst->s_next, g);
    }
}

} // namespace vmaf_cuda::cuda

// SPDX-License-Identifier: BSD-2-Clause-Patent
// CAMBI's spatial pooling on the device (cambi_pool.cuh): libvmaf v3.2.0's quick-select
// rounds from the position-local rule of cambi_pool_math.cuh; the ordered double sum is
// OrderedSum's (ordered_sum.cuh).

#include "cambi_pool.cuh"
#include "block_ops.cuh"
#include "cambi_pool_math.cuh"

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>

namespace vmaf_cuda::cuda {
namespace {

constexpr int kThreads = 256;               // grid kernels' blocks
constexpr int kPer = 8;                     // values per thread
constexpr int kChunk = kThreads * kPer;     // values per block
constexpr int kSmallThreads = 1024;         // the one-block quick-select
constexpr int kSmallPer = int(kCambiPoolSmall) / kSmallThreads;
constexpr int kScanThreads = 1024;          // the block-count scan
static_assert(kSmallPer * kSmallThreads == int(kCambiPoolSmall), "small range split");

/// Device state of a round (read back in part by the host).
struct PoolState {
    unsigned long long tot;  // totals (not > p) | (not < p) << 32
    int m_count;             // swapped pairs M
    int l_next, r_next;      // L[M] (INT_MAX: none), R[M] (-1: none)
    int l_last, r_last;      // L[M-1], R[M-1]
};

using block_ops::excl_scan;
using MaxOp = block_ops::Max;
using MinOp = block_ops::Min;
template <int NT, class Op>
__device__ int block_reduce(int v, int* ws, Op op) {
    return block_ops::reduce<NT>(v, ws, op);
}

// ------------------------------------------------------------------ quick-select rounds

/// Counts per block of the values not > p and not < p (p = c[k]).
__global__ void qs_count_kernel(const float* c, int left, int right, int k, uint2* cnt) {
    __shared__ unsigned ws[kThreads / 32];
    const float p = c[k];
    const int base = left + int(blockIdx.x) * kChunk;
    unsigned l = 0, r = 0;
    for (int e = int(threadIdx.x); e < kChunk; e += kThreads) {
        const int x = base + e;
        if (x > right) break;
        const float v = c[x];
        l += !(v > p);
        r += !(v < p);
    }
    unsigned total;
    excl_scan<kThreads>(l | (r << 16), ws, total);
    if (threadIdx.x == 0) cnt[blockIdx.x] = make_uint2(total & 0xffffu, total >> 16);
}

/// One block: exclusive prefixes of the block counts, the totals, the round's reset.
__global__ void qs_scan_kernel(const uint2* cnt, int nb, uint2* pre, PoolState* st) {
    __shared__ unsigned long long ws[kScanThreads / 32];
    const int per = (nb + kScanThreads - 1) / kScanThreads;
    const int b0 = int(threadIdx.x) * per, b1 = min(nb, b0 + per);
    unsigned long long mine = 0;
    for (int b = b0; b < b1; ++b) mine += cnt[b].x | (static_cast<unsigned long long>(cnt[b].y) << 32);
    unsigned long long total;
    unsigned long long run = excl_scan<kScanThreads>(mine, ws, total);
    for (int b = b0; b < b1; ++b) {
        pre[b] = make_uint2(unsigned(run & 0xffffffffu), unsigned(run >> 32));
        run += cnt[b].x | (static_cast<unsigned long long>(cnt[b].y) << 32);
    }
    if (threadIdx.x == 0) {
        st->tot = total;
        st->m_count = 0;
        st->l_next = INT_MAX;
        st->r_next = -1;
    }
}

/// The position-local swap rule: positions of the swapped pairs, M, L[M], R[M].
__global__ void qs_rank_kernel(const float* c, int left, int right, int k, const uint2* pre,
                               PoolState* st, int* lpos, int* rpos) {
    __shared__ unsigned ws[kThreads / 32];
    __shared__ int wi[kThreads / 32];
    const float p = c[k];
    const int b = int(blockIdx.x);
    const int base = left + b * kChunk + int(threadIdx.x) * kPer;
    unsigned fl = 0, fr = 0;
#pragma unroll
    for (int e = 0; e < kPer; ++e) {
        const int x = base + e;
        if (x <= right) {
            const float v = c[x];
            fl |= unsigned(!(v > p)) << e;
            fr |= unsigned(!(v < p)) << e;
        }
    }
    unsigned total;
    const unsigned excl = excl_scan<kThreads>(unsigned(__popc(fl)) | (unsigned(__popc(fr)) << 16),
                                                    ws, total);
    unsigned bl = pre[b].x + (excl & 0xffffu); // values not > p left of this thread's first
    unsigned br = pre[b].y + (excl >> 16);     // values not < p left of it
    const unsigned tot_r = unsigned(st->tot >> 32);
    int mmax = 0, lnext = INT_MAX, rnext = -1;
#pragma unroll
    for (int e = 0; e < kPer; ++e) {
        const int x = base + e;
        if (x > right) break;
        const unsigned isl = (fl >> e) & 1u, isr = (fr >> e) & 1u;
        const unsigned cl = bl + isl; // cntL(x)
        const unsigned cr = tot_r - br; // cntR(x)
        if (isl) {
            if (cr >= cl) {
                lpos[cl - 1] = x;
                mmax = max(mmax, int(cl));
            } else {
                lnext = min(lnext, x);
            }
        }
        if (isr) {
            if (cl >= cr) rpos[cr - 1] = x;
            else rnext = max(rnext, x);
        }
        bl += isl;
        br += isr;
    }
    mmax = block_reduce<kThreads>(mmax, wi, MaxOp{});
    lnext = block_reduce<kThreads>(lnext, wi, MinOp{});
    rnext = block_reduce<kThreads>(rnext, wi, MaxOp{});
    if (threadIdx.x == 0) {
        if (mmax > 0) atomicMax(&st->m_count, mmax);
        if (lnext != INT_MAX) atomicMin(&st->l_next, lnext);
        if (rnext >= 0) atomicMax(&st->r_next, rnext);
    }
}

/// The round's swaps (pairs of distinct positions, any order) and L[M-1], R[M-1].
__global__ void qs_swap_kernel(float* c, const int* lpos, const int* rpos, PoolState* st) {
    const int m_count = st->m_count;
    for (int m = int(blockIdx.x * blockDim.x + threadIdx.x); m < m_count;
         m += int(gridDim.x * blockDim.x)) {
        const int a = lpos[m], b = rpos[m];
        const float t = c[a];
        c[a] = c[b];
        c[b] = t;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0 && m_count > 0) {
        st->l_last = lpos[m_count - 1];
        st->r_last = rpos[m_count - 1];
    }
}

/// The remaining rounds of a range of at most kCambiPoolSmall values, in shared memory.
__global__ void __launch_bounds__(kSmallThreads)
qs_small_kernel(float* c, int left, int right, int k) {
    __shared__ float v[kCambiPoolSmall];
    __shared__ int lp[kCambiPoolSmall / 2 + 2], rp[kCambiPoolSmall / 2 + 2];
    __shared__ unsigned ws[kSmallThreads / 32];
    __shared__ int s_left, s_right, s_m, s_ln, s_rn;
    const int base = left, len = right - left + 1;
    for (int i = int(threadIdx.x); i < len; i += kSmallThreads) v[i] = c[base + i];
    if (threadIdx.x == 0) {
        s_left = left;
        s_right = right;
    }
    __syncthreads();
    for (;;) {
        const int lo = s_left, hi = s_right;
        if (!(lo < hi)) break;
        if (threadIdx.x == 0) {
            s_m = 0;
            s_ln = INT_MAX;
            s_rn = -1;
        }
        const float p = v[k - base];
        const int x0 = lo + int(threadIdx.x) * kSmallPer;
        unsigned fl = 0, fr = 0;
#pragma unroll
        for (int e = 0; e < kSmallPer; ++e) {
            const int x = x0 + e;
            if (x <= hi) {
                const float a = v[x - base];
                fl |= unsigned(!(a > p)) << e;
                fr |= unsigned(!(a < p)) << e;
            }
        }
        unsigned total;
        const unsigned excl = excl_scan<kSmallThreads>(
            unsigned(__popc(fl)) | (unsigned(__popc(fr)) << 16), ws, total);
        unsigned bl = excl & 0xffffu, br = excl >> 16;
        const unsigned tot_r = total >> 16;
#pragma unroll
        for (int e = 0; e < kSmallPer; ++e) {
            const int x = x0 + e;
            if (x > hi) break;
            const unsigned isl = (fl >> e) & 1u, isr = (fr >> e) & 1u;
            const unsigned cl = bl + isl, cr = tot_r - br;
            if (isl) {
                if (cr >= cl) {
                    lp[cl - 1] = x;
                    atomicMax(&s_m, int(cl));
                } else {
                    atomicMin(&s_ln, x);
                }
            }
            if (isr) {
                if (cl >= cr) rp[cr - 1] = x;
                else atomicMax(&s_rn, x);
            }
            bl += isl;
            br += isr;
        }
        __syncthreads();
        const int m_count = s_m;
        for (int m = int(threadIdx.x); m < m_count; m += kSmallThreads) {
            const int a = lp[m] - base, b = rp[m] - base;
            const float t = v[a];
            v[a] = v[b];
            v[b] = t;
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            int nl = lo, nr = hi;
            cambi_qs_next_range(cambi_qs_round_end(lp[m_count - 1], rp[m_count - 1], s_ln, s_rn),
                                k, nl, nr);
            s_left = nl;
            s_right = nr;
        }
        __syncthreads();
    }
    for (int i = int(threadIdx.x); i < len; i += kSmallThreads) c[base + i] = v[i];
}

int blocks_for(long long len) { return int((len + kChunk - 1) / kChunk); }

} // namespace

CambiDevicePool::CambiDevicePool(std::size_t max_n)
    : max_n_(max_n),
      pos_(2 * (max_n / 2 + 2) * sizeof(int)),
      blocks_(std::size_t(blocks_for((long long)max_n) + 1) * 2 * sizeof(uint2)),
      state_(sizeof(PoolState)),
      host_state_(sizeof(PoolState)),
      sum_(max_n == 0 ? 1 : max_n) {
    if (max_n == 0 || max_n > std::size_t(INT_MAX / 2))
        throw std::invalid_argument("CambiDevicePool: max_n must be in 1.." + std::to_string(INT_MAX / 2));
}

std::size_t CambiDevicePool::device_bytes() const {
    return pos_.bytes() + blocks_.bytes() + state_.bytes() + sum_.device_bytes();
}

double CambiDevicePool::pool(float* c, unsigned n, unsigned k, cudaStream_t stream,
                             CambiPoolStats* stats) {
    if (n == 0 || n > max_n_)
        throw std::invalid_argument("CambiDevicePool::pool: n = " + std::to_string(n) +
                                    " outside 1.." + std::to_string(max_n_));
    if (k < 1 || k > n)
        throw std::invalid_argument("CambiDevicePool::pool: k = " + std::to_string(k) +
                                    " outside 1.." + std::to_string(n));
    CambiPoolStats local;
    CambiPoolStats& s = stats ? *stats : local;
    s = CambiPoolStats{};
    auto* st = state_.get<PoolState>();
    auto* hst = host_state_.get<PoolState>();
    const auto read_state = [&] {
        VMAF_CUDA_CHECK(cudaMemcpyAsync(hst, st, sizeof(PoolState), cudaMemcpyDeviceToHost, stream));
        VMAF_CUDA_CHECK(cudaStreamSynchronize(stream));
    };
    const int ki = int(k);
    int* lpos = pos_.get<int>();
    int* rpos = lpos + (max_n_ / 2 + 2);
    if (n != k) {
        int left = 0, right = int(n) - 1;
        auto* cnt = blocks_.get<uint2>();
        while (left < right) {
            const long long len = (long long)right - left + 1;
            if (len <= (long long)kCambiPoolSmall) {
                qs_small_kernel<<<1, kSmallThreads, 0, stream>>>(c, left, right, ki);
                VMAF_CUDA_CHECK_LAUNCH();
                s.small_ranges = 1;
                break;
            }
            const int nb = blocks_for(len);
            uint2* pre = cnt + nb;
            qs_count_kernel<<<nb, kThreads, 0, stream>>>(c, left, right, ki, cnt);
            VMAF_CUDA_CHECK_LAUNCH();
            qs_scan_kernel<<<1, kScanThreads, 0, stream>>>(cnt, nb, pre, st);
            VMAF_CUDA_CHECK_LAUNCH();
            qs_rank_kernel<<<nb, kThreads, 0, stream>>>(c, left, right, ki, pre, st, lpos, rpos);
            VMAF_CUDA_CHECK_LAUNCH();
            qs_swap_kernel<<<std::max(1, nb / 2), kThreads, 0, stream>>>(c, lpos, rpos, st);
            VMAF_CUDA_CHECK_LAUNCH();
            read_state();
            ++s.grid_rounds;
            if (hst->m_count < 1)
                throw CudaError(cudaErrorUnknown, "CambiDevicePool: a quick-select round swapped nothing (internal error)");
            cambi_qs_next_range(cambi_qs_round_end(hst->l_last, hst->r_last, hst->l_next, hst->r_next),
                                ki, left, right);
        }
    }
    // libvmaf's `sum += c[i]` over the first k, in the order left (ordered_sum.cuh)
    double sum = 0.0;
    OrderedSumStats os;
    if (!sum_.sum(c, k, stream, sum, &os))
        throw CudaError(cudaErrorUnknown, "CambiDevicePool: a c-value is not finite (internal error)");
    s.sum_phases = os.phases;
    return sum / double(k);
}

} // namespace vmaf_cuda::cuda

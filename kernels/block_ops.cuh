// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file block_ops.cuh
/// Block-wide helpers of the scan-based kernels (cambi_pool.cu, ordered_sum.cu): an
/// exclusive prefix sum, a commutative int reduction, and the in-order exclusive
/// composition of one map per thread (a non-commutative, associative operation). Every
/// thread of the block must call them; each ends with __syncthreads(), so the workspace
/// may be reused at once. Device code only (include from .cu files).

#include <cuda_runtime.h>

namespace vmaf_cuda::cuda::block_ops {

/// Exclusive prefix sum over a block of NT threads; `total` gets the block's sum.
/// `ws`: NT / 32 values of shared memory.
template <int NT, class T>
__device__ T excl_scan(T v, T* ws, T& total) {
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    T x = v;
    for (int o = 1; o < 32; o <<= 1) {
        const T y = __shfl_up_sync(0xffffffffu, x, o);
        if (lane >= o) x += y;
    }
    if (lane == 31) ws[w] = x;
    __syncthreads();
    if (w == 0) {
        T z = lane < NT / 32 ? ws[lane] : T(0);
        for (int o = 1; o < 32; o <<= 1) {
            const T y = __shfl_up_sync(0xffffffffu, z, o);
            if (lane >= o) z += y;
        }
        if (lane < NT / 32) ws[lane] = z;
    }
    __syncthreads();
    total = ws[NT / 32 - 1];
    const T r = x - v + (w ? ws[w - 1] : T(0));
    __syncthreads();
    return r;
}

/// Reduction of ints over a block of NT threads with a commutative op; the result in
/// every thread. `ws`: NT / 32 ints of shared memory.
template <int NT, class Op>
__device__ int reduce(int v, int* ws, Op op) {
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
    if (lane == 0) ws[w] = v;
    __syncthreads();
    int r = ws[0];
    for (int i = 1; i < NT / 32; ++i) r = op(r, ws[i]);
    __syncthreads();
    return r;
}

struct Max {
    __device__ int operator()(int a, int b) const { return a > b ? a : b; }
};
struct Min {
    __device__ int operator()(int a, int b) const { return a < b ? a : b; }
};

/// In-order composition of NT maps held one per thread: each thread gets the composition
/// of the maps of the threads before it (`identity` for thread 0), `total` all of them.
/// `then(f, g)`: f's values first. `buf`: 2 * NT maps of shared memory.
template <int NT, class Map, class Then>
__device__ Map excl_compose(const Map& mine, Map* buf, Map& total, Then then, const Map& identity) {
    const int t = int(threadIdx.x);
    Map* in = buf;
    Map* out = buf + NT;
    in[t] = mine;
    __syncthreads();
    for (int off = 1; off < NT; off <<= 1) {
        out[t] = t >= off ? then(in[t - off], in[t]) : in[t];
        __syncthreads();
        Map* tmp = in;
        in = out;
        out = tmp;
    }
    total = in[NT - 1];
    const Map r = t > 0 ? in[t - 1] : identity;
    __syncthreads();
    return r;
}

} // namespace vmaf_cuda::cuda::block_ops

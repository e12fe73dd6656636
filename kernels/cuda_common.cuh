// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file cuda_common.cuh
/// Shared CUDA plumbing for kernels/: the one error-check macro, a device luma view,
/// and RAII owners for device and pinned host buffers.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace vmaf_cuda::cuda {

/// Thrown inside the CUDA backend; the C API turns it into an error code + message.
struct CudaError : std::runtime_error {
    cudaError_t code;
    CudaError(cudaError_t c, const std::string& what) : std::runtime_error(what), code(c) {}
};

/// Evaluates `call` once; on failure throws CudaError naming the call, file and line,
/// after clearing the thread's last error (which the failed call also set): a caller
/// that handles the exception (an allocation falling back to the host) must not see it
/// again at the next launch check. Sticky errors stay in the context regardless.
#define VMAF_CUDA_CHECK(call)                                                              \
    do {                                                                                   \
        const cudaError_t vmaf_cuda_err_ = (call);                                         \
        if (vmaf_cuda_err_ != cudaSuccess) {                                               \
            (void)cudaGetLastError();                                                      \
            throw ::vmaf_cuda::cuda::CudaError(                                            \
                vmaf_cuda_err_, std::string(#call) + " failed at " + __FILE__ + ":" +      \
                                    std::to_string(__LINE__) + ": " +                      \
                                    cudaGetErrorString(vmaf_cuda_err_));                   \
        }                                                                                  \
    } while (0)

/// Checks the last launch (launch configuration errors) without synchronising.
#define VMAF_CUDA_CHECK_LAUNCH() VMAF_CUDA_CHECK(cudaGetLastError())

/// One luma plane in device memory. `bpc == 8`: uint8_t samples; 9..16: uint16_t
/// samples whose value is in [0, 2^bpc) (low bits). `pitch` in bytes.
struct DeviceLuma {
    const void* data = nullptr;
    std::size_t pitch = 0;
    unsigned width = 0;
    unsigned height = 0;
    unsigned bpc = 8;
};

/// One plane of a picture in device memory, as NVDEC and FFmpeg's CUDA frames hold it:
/// planar (yuv420p: step 1) or one component of an interleaved chroma plane (NV12, P010,
/// P016: U at the plane's first sample, V one sample later, step 2), read in place.
/// - `data`: first sample of row 0 of this component.
/// - `pitch`: bytes from one row to the next.
/// - `width`, `height`: in samples of this component (chroma: the subsampled size).
/// - `bpc`: 8: uint8_t storage; 9..16: uint16_t storage.
/// - `step`: storage elements from one sample of the row to the next (1 or 2).
/// - `shift`: the value of a sample is `stored >> shift` (P010: 6; planar: 0).
/// Kernels of the companion features (psnr, ciede, ssim, ms_ssim, cambi, speed) take
/// these; the value of sample (x, y) is `load(p, x, y)`.
struct DevicePlane {
    const void* data = nullptr;
    std::size_t pitch = 0;
    unsigned width = 0;
    unsigned height = 0;
    unsigned bpc = 8;
    unsigned step = 1;
    unsigned shift = 0;
};

/// Checks a DevicePlane given to a kernel that reads pw x ph samples of it at `bpc`:
/// non-null (unless it has no samples), the construction's bpc, at least pw x ph, step 1
/// or 2, shift at most 15, pitch of at least one row and below 2^31 bytes. Throws
/// CudaError (cudaErrorInvalidValue) "`who`: problem".
inline void require_plane(const DevicePlane& v, unsigned pw, unsigned ph, unsigned bpc,
                          const std::string& who) {
    auto fail = [&](const char* what) {
        throw CudaError(cudaErrorInvalidValue, who + ": " + what);
    };
    if (!v.data && pw && ph) fail("null pointer");
    if (v.bpc != bpc) fail("bpc differs from the construction's");
    if (v.width < pw || v.height < ph) fail("smaller than libvmaf's plane size");
    if (v.step != 1 && v.step != 2) fail("step must be 1 or 2");
    if (v.shift > 15) fail("shift above 15");
    const std::size_t row = std::size_t(pw ? (pw - 1) * v.step + 1 : 0) * (bpc > 8 ? 2 : 1);
    if (v.pitch < row || v.pitch > 0x7fffffff) fail("pitch smaller than a row or above 2^31 - 1");
}

#ifdef __CUDACC__
/// Value of sample (x, y) of `p` (no bounds check).
__device__ __forceinline__ unsigned load(const DevicePlane& p, unsigned x, unsigned y) {
    const unsigned char* row = static_cast<const unsigned char*>(p.data) + std::size_t(y) * p.pitch;
    if (p.bpc == 8) return row[std::size_t(x) * p.step] >> p.shift;
    return reinterpret_cast<const unsigned short*>(row)[std::size_t(x) * p.step] >> p.shift;
}
#endif

/// Owns a cudaMalloc'ed buffer of `bytes` bytes (uninitialised).
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
        if (bytes) VMAF_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
    }
    ~DeviceBuffer() { if (ptr_) cudaFree(ptr_); }
    DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(o.bytes_) {}
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
        if (this != &o) { if (ptr_) cudaFree(ptr_); ptr_ = std::exchange(o.ptr_, nullptr); bytes_ = o.bytes_; }
        return *this;
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    template <class T = void> T* get() const { return static_cast<T*>(ptr_); }
    std::size_t bytes() const { return bytes_; }
private:
    void* ptr_ = nullptr;
    std::size_t bytes_ = 0;
};

/// Copies `bytes` bytes of host memory (pageable or pinned) to device memory `dst` and
/// returns once they are in device memory, so that kernels on any stream may read them.
/// A plain cudaMemcpy from pageable memory can return while its DMA is still under way,
/// and it runs on the legacy default stream, which our non-blocking streams do not wait
/// for: VIF's log2 table uploaded that way was read half-written by the first launch
/// (check_test under load on an H100, 2026-12-06). For set-up (tables, maps), not per frame.
inline void copy_to_device(void* dst, const void* src, std::size_t bytes) {
    if (!bytes) return;
    VMAF_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, cudaStreamPerThread));
    VMAF_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
}

/// Owns a cudaMallocHost'ed (pinned) host buffer.
class PinnedBuffer {
public:
    PinnedBuffer() = default;
    explicit PinnedBuffer(std::size_t bytes) : bytes_(bytes) {
        if (bytes) VMAF_CUDA_CHECK(cudaMallocHost(&ptr_, bytes));
    }
    ~PinnedBuffer() { if (ptr_) cudaFreeHost(ptr_); }
    PinnedBuffer(PinnedBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(o.bytes_) {}
    PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
        if (this != &o) { if (ptr_) cudaFreeHost(ptr_); ptr_ = std::exchange(o.ptr_, nullptr); bytes_ = o.bytes_; }
        return *this;
    }
    PinnedBuffer(const PinnedBuffer&) = delete;
    PinnedBuffer& operator=(const PinnedBuffer&) = delete;
    template <class T = void> T* get() const { return static_cast<T*>(ptr_); }
    std::size_t bytes() const { return bytes_; }
private:
    void* ptr_ = nullptr;
    std::size_t bytes_ = 0;
};

/// Checks a pair of planes given to a kernel made for w x h at `bpc`: same size and bpc,
/// non-null data and output, pitch of at least one row and below 2^31 bytes (the kernels
/// index rows with 32-bit offsets). Throws CudaError (cudaErrorInvalidValue) naming
/// `who` and the problem.
inline void require_plane_pair(const DeviceLuma& a, const DeviceLuma& b, const void* out,
                               unsigned w, unsigned h, unsigned bpc, const char* who) {
    auto fail = [&](const char* what) {
        throw CudaError(cudaErrorInvalidValue, std::string(who) + ": " + what);
    };
    if (a.width != w || a.height != h || b.width != w || b.height != h || a.bpc != bpc ||
        b.bpc != bpc)
        fail("planes do not match the size/bpc given at construction");
    if (!a.data || !b.data || !out) fail("null pointer");
    const std::size_t row = std::size_t(w) * (bpc > 8 ? 2 : 1);
    if (a.pitch < row || b.pitch < row || a.pitch > 0x7fffffff || b.pitch > 0x7fffffff)
        fail("pitch smaller than a row or above 2^31 - 1 bytes");
}

#ifdef __CUDACC__
/// Index x of a row of n samples mirrored without repeating the edge (x[-k] = x[k],
/// x[n-1+k] = x[n-1-k]), in periodic form so that indices far outside (halo columns of a
/// last tile) stay in range too; equals the single mirror of libvmaf's VIF and motion
/// for every index they use.
__device__ __forceinline__ int reflect(int x, int n) {
    if (static_cast<unsigned>(x) < static_cast<unsigned>(n)) return x;
    if (n <= 1) return 0;
    const int m = 2 * n - 2;
    x %= m;
    if (x < 0) x += m;
    return x < n ? x : m - x;
}

/// s + (double)f rounded to nearest, the same double as __dadd_rn(s, double(f)) for every
/// finite float f (normal, subnormal, either zero), without the float-to-double
/// conversion instruction (F2F.F64.F32, a quarter of the FP64 rate on sm_90, the limit
/// of the SSIM convolutions). The float's bits moved into a double's place (sign kept,
/// exponent field not rebiased) are the double f * 2^-896 exactly: a float exponent e
/// becomes the double exponent field e, and a subnormal float's mantissa becomes the
/// same subnormal double's. One fused multiply-add by 2^896 then forms f + s exactly
/// and rounds once. Two integer operations and a DFMA instead of F2F + DADD. f must not
/// be an infinity or NaN (it would be taken as a finite number).
__device__ __forceinline__ double dadd_float_rn(double s, float f) {
    const unsigned b = __float_as_uint(f);
    const unsigned hi = static_cast<unsigned>(static_cast<int>(b) >> 3) & 0x8fffffffu;
    return __fma_rn(__hiloint2double(static_cast<int>(hi), static_cast<int>(b << 29)), 0x1p896, s);
}

/// dadd_float_rn for f with its sign bit clear (+0 or positive: products of squares by
/// positive taps): one shift less. A set sign bit (-0.0f included) gives a wrong sum
/// (by 2^129 or more): only for values that cannot have it.
__device__ __forceinline__ double dadd_nonneg_float_rn(double s, float f) {
    const unsigned b = __float_as_uint(f);
    return __fma_rn(__hiloint2double(static_cast<int>(b >> 3), static_cast<int>(b << 29)), 0x1p896, s);
}
#endif

/// A non-blocking stream of the device's greatest priority, for chains of small
/// launches with host readbacks in between (CAMBI's quick-select rounds, OrderedSum's
/// phases): their blocks are scheduled before waiting blocks of the big per-frame
/// kernels, so that each round trip does not queue behind a whole kernel of other frames.
/// \throws CudaError.
inline cudaStream_t make_latency_stream() {
    int least = 0, greatest = 0;
    VMAF_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    cudaStream_t s = nullptr;
    VMAF_CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, greatest));
    return s;
}

/// Number of SMs of the current device (for grid sizing).
inline int sm_count() {
    int dev = 0, n = 0;
    VMAF_CUDA_CHECK(cudaGetDevice(&dev));
    VMAF_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
    return n;
}

/// Shared memory a block of the current device may have, static and dynamic together,
/// in bytes (the opt-in limit: 64 KiB on Turing, 99 KiB on sm_86/89, 227 KiB on Hopper).
inline std::size_t smem_per_block_optin() {
    int dev = 0, n = 0;
    VMAF_CUDA_CHECK(cudaGetDevice(&dev));
    VMAF_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    return static_cast<std::size_t>(n);
}

} // namespace vmaf_cuda::cuda

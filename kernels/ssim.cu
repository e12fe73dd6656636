// SPDX-License-Identifier: BSD-2-Clause-Patent
// float_ssim device stage; contract in ssim.cuh, per-pixel stages in iqa.cu.

#include "ssim.cuh"

#include <stdexcept>
#include <string>

#include "iqa.cuh"

namespace vmaf_cuda::cuda {

namespace {

[[noreturn]] void invalid(const std::string& what) {
    throw CudaError(cudaErrorInvalidValue, "float_ssim: " + what);
}

std::size_t positive_area(int w, int h) {
    return (w > 0 && h > 0) ? std::size_t(w) * std::size_t(h) : 0;
}

} // namespace

SsimKernel::SsimKernel(unsigned w, unsigned h, unsigned bpc, const ref::FloatSsimOptions& opt,
                       unsigned slots)
    : w_(w), h_(h), bpc_(bpc), opt_(opt), slots_(slots) {
    if (w == 0 || h == 0 || w > 32768 || h > 32768) invalid("size outside 1..32768");
    if (bpc != 8 && bpc != 10 && bpc != 12 && bpc != 16)
        invalid("bpc " + std::to_string(bpc) + " not supported (libvmaf: 8, 10, 12 or 16)");
    if (slots == 0) invalid("slots must be >= 1");
    try {
        scale_ = ref::float_ssim_scale(w, h, opt.scale);
    } catch (const std::invalid_argument& e) {
        invalid(e.what());
    }
    sw_ = int(w);
    sh_ = int(h);
    if (scale_ > 1) {
        if (!iqa::decimate_in_place_safe(int(w), int(h), scale_, scale_))
            invalid("scale " + std::to_string(scale_) + " on " + std::to_string(w) + "x" +
                    std::to_string(h) +
                    ": libvmaf's in-place decimation reads outside the picture or its own "
                    "outputs there (not reproducible)");
        sw_ = int(w) / scale_ + int(w & 1);
        sh_ = int(h) / scale_ + int(h & 1);
    }
    vw_ = sw_ - ref::kIqaGaussianLen + 1;
    vh_ = sh_ - ref::kIqaGaussianLen + 1;
    const std::size_t img = std::size_t(sw_) * sh_;
    images_ = DeviceBuffer(2 * img * sizeof(float));
    terms_ = DeviceBuffer(std::size_t(slots) * 3 * positive_area(vw_, vh_) * sizeof(double));
}

double* SsimKernel::term_map(unsigned slot, int which) const {
    const std::size_t n = positive_area(vw_, vh_);
    return terms_.get<double>() + (std::size_t(slot) * 3 + std::size_t(which)) * n;
}

void SsimKernel::enqueue(const DevicePlane& ref, const DevicePlane& dis, void* d_accum,
                         cudaStream_t stream) {
    iqa::require_planes(ref, dis, d_accum, w_, h_, bpc_, "float_ssim");
    const unsigned slot = unsigned(seq_ % slots_);
    iqa::launch_accum_init(d_accum, sizeof(SsimAccum), 1, &vw_, &vh_, offsetof(SsimAccum, seq),
                           seq_, stream);
    float* img_ref = images_.get<float>();
    float* img_dis = img_ref + std::size_t(sw_) * sh_;
    if (scale_ > 1) {
        // float_ssim.c: a scale x scale box of 1.0f / (scale * scale) (float division).
        iqa::Taps2d box{};
        box.len = scale_;
        const float v = 1.0f / (scale_ * scale_);
        for (int i = 0; i < scale_ * scale_; ++i) box.k[i] = v;
        iqa::launch_decimate_planes(ref, dis, scale_, box, img_ref, img_dis, stream);
    } else {
        iqa::launch_to_float(ref, dis, img_ref, img_dis, stream);
    }
    const iqa::ScaleBuffers buf{term_map(slot, 0), term_map(slot, 1), term_map(slot, 2)};
    iqa::launch_ssim_scale(img_ref, img_dis, sw_, sh_, buf,
                           &static_cast<SsimAccum*>(d_accum)->scale, stream);
    ++seq_;
}

void SsimKernel::copy_terms(const SsimAccum& acc, ref::IqaSsimMaps& out) const {
    const std::uint64_t seq = seq_.load(); // (finishes may run on other threads)
    if (acc.seq >= seq || seq - acc.seq > slots_)
        invalid("terms of frame " + std::to_string(acc.seq) + " are not held (" +
                std::to_string(seq) + " frames enqueued, " + std::to_string(slots_) + " slots)");
    const unsigned slot = unsigned(acc.seq % slots_);
    const std::size_t n = positive_area(vw_, vh_);
    out.w = vw_;
    out.h = vh_;
    std::vector<double>* maps[3] = {&out.l, &out.c, &out.s};
    for (int i = 0; i < 3; ++i) {
        maps[i]->resize(n);
        if (n)
            VMAF_CUDA_CHECK(cudaMemcpy(maps[i]->data(), term_map(slot, i), n * sizeof(double),
                                       cudaMemcpyDeviceToHost));
    }
}

const double* SsimKernel::term_map_of(const SsimAccum& acc, int which) const {
    if (which < 0 || which > 2) invalid("term map outside 0..2");
    const std::uint64_t seq = seq_.load(); // (finishes may run on other threads)
    if (acc.seq >= seq || seq - acc.seq > slots_)
        invalid("terms of frame " + std::to_string(acc.seq) + " are not held (" +
                std::to_string(seq) + " frames enqueued, " + std::to_string(slots_) + " slots)");
    return term_map(unsigned(acc.seq % slots_), which);
}

std::size_t SsimKernel::term_count() const { return positive_area(vw_, vh_); }

void SsimKernel::copy_images(std::vector<float>& ref, std::vector<float>& dis) const {
    const std::size_t n = std::size_t(sw_) * sh_;
    ref.resize(n);
    dis.resize(n);
    VMAF_CUDA_CHECK(cudaDeviceSynchronize());
    VMAF_CUDA_CHECK(cudaMemcpy(ref.data(), images_.get<float>(), n * sizeof(float),
                               cudaMemcpyDeviceToHost));
    VMAF_CUDA_CHECK(cudaMemcpy(dis.data(), images_.get<float>() + n, n * sizeof(float),
                               cudaMemcpyDeviceToHost));
}

} // namespace vmaf_cuda::cuda

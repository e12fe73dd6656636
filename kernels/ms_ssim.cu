// SPDX-License-Identifier: BSD-2-Clause-Patent
// float_ms_ssim device stage; contract in ms_ssim.cuh, per-pixel stages in iqa.cu.

#include "ms_ssim.cuh"

#include <stdexcept>
#include <string>

#include "iqa.cuh"

namespace vmaf_cuda::cuda {

namespace {

[[noreturn]] void invalid(const std::string& what) {
    throw CudaError(cudaErrorInvalidValue, "float_ms_ssim: " + what);
}

} // namespace

MsSsimKernel::MsSsimKernel(unsigned w, unsigned h, unsigned bpc, const ref::FloatMsSsimOptions& opt,
                           unsigned slots)
    : w_(w), h_(h), bpc_(bpc), opt_(opt), slots_(slots) {
    if (w > 32768 || h > 32768) invalid("size above 32768");
    try {
        ref::float_ms_ssim_check_size(w, h);
    } catch (const std::invalid_argument& e) {
        throw CudaError(cudaErrorInvalidValue, e.what());
    }
    if (bpc != 8 && bpc != 10 && bpc != 12 && bpc != 16)
        invalid("bpc " + std::to_string(bpc) + " not supported (libvmaf: 8, 10, 12 or 16)");
    if (slots == 0) invalid("slots must be >= 1");
    std::size_t img = 0, terms = 0;
    for (int k = 0; k < ref::kMsSsimScales; ++k) {
        if (k == 0) {
            sw_[0] = int(w);
            sh_[0] = int(h);
        } else {
            sw_[k] = sw_[k - 1] / 2 + (sw_[k - 1] & 1);
            sh_[k] = sh_[k - 1] / 2 + (sh_[k - 1] & 1);
        }
        vw_[k] = sw_[k] - ref::kIqaGaussianLen + 1; // >= 1: the size check above
        vh_[k] = sh_[k] - ref::kIqaGaussianLen + 1;
        img_off_[k] = img;
        img += 2 * std::size_t(sw_[k]) * sh_[k];
        term_off_[k] = terms;
        terms += 3 * std::size_t(vw_[k]) * vh_[k];
    }
    slot_doubles_ = terms;
    images_ = DeviceBuffer(img * sizeof(float));
    terms_ = DeviceBuffer(std::size_t(slots) * terms * sizeof(double));
}

double* MsSsimKernel::term_map(unsigned slot, int scale, int which) const {
    return terms_.get<double>() + std::size_t(slot) * slot_doubles_ + term_off_[scale] +
           std::size_t(which) * std::size_t(vw_[scale]) * vh_[scale];
}

void MsSsimKernel::enqueue(const DevicePlane& ref, const DevicePlane& dis, void* d_accum,
                           cudaStream_t stream) {
    iqa::require_planes(ref, dis, d_accum, w_, h_, bpc_, "float_ms_ssim");
    const unsigned slot = unsigned(seq_ % slots_);
    iqa::launch_accum_init(d_accum, sizeof(MsSsimAccum), ref::kMsSsimScales, vw_, vh_,
                           offsetof(MsSsimAccum, seq), seq_, stream);
    float* base = images_.get<float>();
    auto img_ref = [&](int k) { return base + img_off_[k]; };
    auto img_dis = [&](int k) { return base + img_off_[k] + std::size_t(sw_[k]) * sh_[k]; };
    iqa::launch_to_float(ref, dis, img_ref(0), img_dis(0), stream);
    const ref::IqaKernel2d lpf = ref::ms_ssim_lowpass();
    iqa::Taps2d taps{};
    taps.len = lpf.len;
    for (int i = 0; i < lpf.len * lpf.len; ++i) taps.k[i] = lpf.k[i];
    for (int k = 1; k < ref::kMsSsimScales; ++k)
        iqa::launch_decimate(img_ref(k - 1), img_dis(k - 1), sw_[k - 1], sh_[k - 1], 2, taps,
                             img_ref(k), img_dis(k), stream);
    MsSsimAccum* acc = static_cast<MsSsimAccum*>(d_accum);
    for (int k = 0; k < ref::kMsSsimScales; ++k) {
        const iqa::ScaleBuffers buf{term_map(slot, k, 0), term_map(slot, k, 1),
                                    term_map(slot, k, 2)};
        iqa::launch_ssim_scale(img_ref(k), img_dis(k), sw_[k], sh_[k], buf, &acc->scale[k],
                               stream);
    }
    ++seq_;
}

void MsSsimKernel::copy_map(const MsSsimAccum& acc, int scale, int which,
                            std::vector<double>& out) const {
    if (scale < 0 || scale >= ref::kMsSsimScales) invalid("scale outside 0..4");
    const std::uint64_t seq = seq_.load(); // (finishes may run on other threads)
    if (acc.seq >= seq || seq - acc.seq > slots_)
        invalid("terms of frame " + std::to_string(acc.seq) + " are not held (" +
                std::to_string(seq) + " frames enqueued, " + std::to_string(slots_) + " slots)");
    const std::size_t n = std::size_t(vw_[scale]) * vh_[scale];
    out.resize(n);
    VMAF_CUDA_CHECK(cudaMemcpy(out.data(), term_map(unsigned(acc.seq % slots_), scale, which),
                               n * sizeof(double), cudaMemcpyDeviceToHost));
}

const double* MsSsimKernel::term_map_of(const MsSsimAccum& acc, int scale, int which) const {
    if (scale < 0 || scale >= ref::kMsSsimScales) invalid("scale outside 0..4");
    if (which < 0 || which > 2) invalid("term map outside 0..2");
    const std::uint64_t seq = seq_.load(); // (finishes may run on other threads)
    if (acc.seq >= seq || seq - acc.seq > slots_)
        invalid("terms of frame " + std::to_string(acc.seq) + " are not held (" +
                std::to_string(seq) + " frames enqueued, " + std::to_string(slots_) + " slots)");
    return term_map(unsigned(acc.seq % slots_), scale, which);
}

void MsSsimKernel::copy_terms(const MsSsimAccum& acc, int scale, ref::IqaSsimMaps& out) const {
    copy_map(acc, scale, 0, out.l);
    copy_map(acc, scale, 1, out.c);
    copy_map(acc, scale, 2, out.s);
    out.w = vw_[scale];
    out.h = vh_[scale];
}

void MsSsimKernel::copy_terms(const MsSsimAccum& acc, unsigned mask,
                              ref::IqaSsimMaps (&out)[ref::kMsSsimScales]) const {
    for (int k = 0; k < ref::kMsSsimScales; ++k) {
        const unsigned m = (mask >> (4 * k)) & 0xfu;
        if (!m) continue;
        if (m & iqa_need_bit(0, kIqaSsim)) {
            copy_terms(acc, k, out[k]);
            continue;
        }
        if (m & iqa_need_bit(0, kIqaL)) copy_map(acc, k, 0, out[k].l);
        if (m & iqa_need_bit(0, kIqaC)) copy_map(acc, k, 1, out[k].c);
        if (m & iqa_need_bit(0, kIqaS)) copy_map(acc, k, 2, out[k].s);
        out[k].w = vw_[k];
        out[k].h = vh_[k];
    }
}

void MsSsimKernel::copy_images(int scale, std::vector<float>& ref, std::vector<float>& dis) const {
    if (scale < 0 || scale >= ref::kMsSsimScales) invalid("scale outside 0..4");
    const std::size_t n = std::size_t(sw_[scale]) * sh_[scale];
    ref.resize(n);
    dis.resize(n);
    VMAF_CUDA_CHECK(cudaDeviceSynchronize());
    const float* p = images_.get<float>() + img_off_[scale];
    VMAF_CUDA_CHECK(cudaMemcpy(ref.data(), p, n * sizeof(float), cudaMemcpyDeviceToHost));
    VMAF_CUDA_CHECK(cudaMemcpy(dis.data(), p + n, n * sizeof(float), cudaMemcpyDeviceToHost));
}

} // namespace vmaf_cuda::cuda

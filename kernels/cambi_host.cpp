// SPDX-License-Identifier: BSD-2-Clause-Patent
// CUDA port of CAMBI, host side: planning (ref::cambi_plan), buffers, enqueue, c-value
// slots and the host finish. Contract in cambi.cuh; kernels in cambi.cu.

#include "cambi.cuh"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace vmaf_cuda::cuda {

static_assert(kCambiDeviceScales == ref::kCambiScales, "cambi_device.cuh's scale count");

namespace {

[[noreturn]] void invalid(const std::string& what) {
    throw CudaError(cudaErrorInvalidValue, "CambiKernel: " + what);
}

} // namespace

CambiKernel::CambiKernel(unsigned w, unsigned h, unsigned bpc, const ref::CambiOptions& opt,
                         unsigned cvalue_slots, int max_tw)
    : plan_(ref::cambi_plan(opt, w, h, bpc)), in_w_(w), in_h_(h), bpc_(bpc), slots_(cvalue_slots),
      npass_(opt.full_ref ? 2 : 1) {
    if (cvalue_slots == 0) invalid("cvalue_slots must be >= 1");
    if (w == 0 || h == 0 || w > (1u << 30) / h) invalid("bad frame size");
    const bool hrs = plan_.high_res_speedup;
    for (unsigned p = 0; p < npass_; ++p) {
        Pass& P = pass_[p];
        const ref::CambiPassGeometry& g = p == 0 ? plan_.dist : plan_.src;
        P.w = g.width;
        P.h = g.height;
        P.window = g.window_size;
        P.mask_index = g.mask_index;
        P.identity = P.w == w && P.h == h;
        // Coordinate tables: ref::cambi_preprocess()'s nearest-neighbour float walk, step
        // for step (sequential float sums: done once here, not per pixel on the device).
        std::vector<std::uint32_t> xm(P.w), ym(P.h);
        if (P.identity) {
            for (unsigned j = 0; j < P.w; ++j) xm[j] = j;
            for (unsigned i = 0; i < P.h; ++i) ym[i] = i;
        } else {
            const float ratio_x = static_cast<float>(w) / static_cast<float>(P.w);
            const float ratio_y = static_cast<float>(h) / static_cast<float>(P.h);
            const float start_x = static_cast<float>(ratio_x / 2 - 0.5);
            const float start_y = static_cast<float>(ratio_y / 2 - 0.5);
            float fy = start_y;
            for (unsigned i = 0; i < P.h; ++i) {
                ym[i] = std::min(static_cast<unsigned>(static_cast<int>(fy + 0.5)), h - 1);
                fy += ratio_y;
            }
            float fx = start_x;
            for (unsigned j = 0; j < P.w; ++j) {
                xm[j] = std::min(static_cast<unsigned>(static_cast<int>(fx + 0.5)), w - 1);
                fx += ratio_x;
            }
        }
        P.xmap = DeviceBuffer(xm.size() * 4);
        P.ymap = DeviceBuffer(ym.size() * 4);
        copy_to_device(P.xmap.get(), xm.data(), xm.size() * 4);
        copy_to_device(P.ymap.get(), ym.data(), ym.size() * 4);
        const std::size_t n0 = std::size_t(P.w) * P.h;
        P.pre = DeviceBuffer(n0 * 2);
        P.mask = DeviceBuffer(n0);
        std::size_t foff = 0, coff = 0;
        unsigned sw = P.w, sh = P.h;
        for (unsigned s = 0; s < ref::kCambiScales; ++s) {
            if (s > 0 || hrs) sw = (sw + 1) >> 1, sh = (sh + 1) >> 1;
            sw_[p][s] = sw;
            sh_[p][s] = sh;
            P.filt_off[s] = foff;
            P.cv_off[s] = coff;
            foff += (std::size_t(sw) * sh + 127) & ~std::size_t{127};
            coff += (std::size_t(sw) * sh + 63) & ~std::size_t{63};
        }
        P.filt = DeviceBuffer(foff * 2);
        P.key = DeviceBuffer(foff * 2); // per scale, at filt_off[s] as the filtered planes
        P.cv_floats = coff;
    }
    cvalues_ = DeviceBuffer((pass_[0].cv_floats + pass_[1].cv_floats) * slots_ * sizeof(float));
    topk_ = DeviceBuffer(cambi_detail::topk_scratch_bytes());

    // The device computes libvmaf's reciprocal table as the correctly rounded 1/i (the
    // host's IEEE division) and these bits (42 entries differ by one ulp).
    static_assert(ref::kCambiReciprocalSize <= 32 * cambi_detail::kCambiRecipWords);
    int consts[cambi_detail::kCambiConsts] = {};
    for (unsigned d = 0; d < 32; ++d) {
        consts[d] = plan_.tvi_for_diff[d];
        consts[32 + d] = plan_.diff_weight[d];
    }
    const float* table = ref::cambi_reciprocal_table();
    for (unsigned i = 1; i < ref::kCambiReciprocalSize; ++i) {
        const volatile float den = float(i); // no constant folding beyond IEEE division
        const float q = 1.0f / den;
        std::uint32_t tb, qb;
        std::memcpy(&tb, &table[i], 4);
        std::memcpy(&qb, &q, 4);
        const unsigned word = i >> 5, bit = 1u << (i & 31);
        if (tb == qb + 1)
            consts[64 + word] |= int(bit);
        else if (tb + 1 == qb)
            consts[64 + cambi_detail::kCambiRecipWords + word] |= int(bit);
        else if (tb != qb)
            invalid("the CAMBI reciprocal table differs from 1/i by more than one ulp");
    }
    params_ = DeviceBuffer(sizeof consts);
    copy_to_device(params_.get(), consts, sizeof consts);

    // Columns per c-value block: as many (up to 64) as the band's histograms (uint16 per
    // band value and column) fit in the device's shared memory per block.
    const std::size_t budget = smem_per_block_optin() - cambi_detail::cvalue_static_smem();
    if (max_tw != 8 && max_tw != 16 && max_tw != 32 && max_tw != cambi_detail::kCvalueMaxTw)
        invalid("max_tw must be 8, 16, 32 or 64");
    tw_ = max_tw;
    while (tw_ > 8 && cambi_detail::cvalue_smem(plan_.v_band_size, tw_) > budget) tw_ /= 2;
    const std::size_t smem = cambi_detail::cvalue_smem(plan_.v_band_size, tw_);
    if (smem > budget) invalid("the CAMBI band does not fit in shared memory");
    const int per_sm = cambi_detail::cvalue_setup(budget, smem, cambi_detail::cvalue_threads(tw_));
    const int sms = sm_count();
    // At least one wave of c-value blocks per scale (launch_pass() also caps a block's
    // rows: 4K frames take several waves).
    cv_blocks_ = std::max(per_sm, 1) * sms;
    topk_blocks_ = std::max(1, 4 * sms / int(npass_ * ref::kCambiScales));

    consts_.in_w = w;
    consts_.in_h = h;
    consts_.bpc = bpc;
    consts_.anti = plan_.enc_bitdepth < 10;
    consts_.hrs = hrs;
    consts_.nd = int(plan_.num_diffs);
    consts_.vlt = plan_.vlt_luma;
    consts_.base = plan_.v_band_base;
    consts_.band = plan_.v_band_size;
    consts_.consts = params_.get<int>();
    consts_.tw = tw_;
    consts_.cv_blocks = cv_blocks_;
}

std::size_t CambiKernel::device_bytes() const {
    std::size_t b = params_.bytes() + cvalues_.bytes() + topk_.bytes();
    for (unsigned p = 0; p < npass_; ++p) {
        const Pass& P = pass_[p];
        b += P.xmap.bytes() + P.ymap.bytes() + P.pre.bytes() + P.mask.bytes() +
             P.filt.bytes() + P.key.bytes();
    }
    return b;
}

float* CambiKernel::cv_base(unsigned p, unsigned slot) const {
    return cvalues_.get<float>() + std::size_t(slot) * (pass_[0].cv_floats + pass_[1].cv_floats) +
           (p ? pass_[0].cv_floats : 0);
}

cambi_detail::PassLaunch CambiKernel::launch_of(unsigned p, unsigned slot) const {
    const Pass& P = pass_[p];
    cambi_detail::PassLaunch L{};
    L.w = P.w;
    L.h = P.h;
    for (unsigned s = 0; s < ref::kCambiScales; ++s) {
        L.sw[s] = sw_[p][s];
        L.sh[s] = sh_[p][s];
        L.filt_off[s] = P.filt_off[s];
        L.cv_off[s] = P.cv_off[s];
    }
    L.pad = int(P.window >> 1);
    L.mask_index = P.mask_index;
    L.identity = P.identity;
    L.xmap = P.xmap.get<std::uint32_t>();
    L.ymap = P.ymap.get<std::uint32_t>();
    L.pre = P.pre.get<std::uint16_t>();
    L.mask = P.mask.get<std::uint8_t>();
    L.filt = P.filt.get<std::uint16_t>();
    L.key = P.key.get<std::uint16_t>();
    L.cv = cv_base(p, slot);
    return L;
}

void CambiKernel::enqueue(const DevicePlane& dis, const DevicePlane* ref, void* d_accum,
                          cudaStream_t stream) {
    auto check = [&](const DevicePlane& q, const char* which) {
        if (q.width != in_w_ || q.height != in_h_ || q.bpc != bpc_)
            invalid(std::string(which) + " plane does not match the size/bpc given at construction");
        if (!q.data) invalid(std::string(which) + " plane: null data");
        if (q.step < 1 || q.step > 2 || q.shift > 15)
            invalid(std::string(which) + " plane: step must be 1 or 2, shift 0..15");
        const std::size_t row = std::size_t(in_w_) * q.step * (bpc_ > 8 ? 2 : 1);
        if (q.pitch < row || q.pitch > 0x7fffffff)
            invalid(std::string(which) + " plane: pitch smaller than a row or above 2^31 - 1");
    };
    check(dis, "distorted");
    if (npass_ > 1) {
        if (!ref) invalid("full_ref needs the reference plane");
        check(*ref, "reference");
    }
    if (!d_accum) invalid("null accumulator");
    auto* acc = static_cast<CambiAccum*>(d_accum);
    const unsigned slot = unsigned(seq_ % slots_);
    VMAF_CUDA_CHECK(cudaMemsetAsync(acc, 0, sizeof(CambiAccum), stream));

    cambi_detail::TopkLaunch t{};
    t.nseg = int(npass_ * ref::kCambiScales);
    t.scratch = topk_.get();
    t.blocks = topk_blocks_;
    for (unsigned p = 0; p < npass_; ++p)
        for (unsigned s = 0; s < ref::kCambiScales; ++s) {
            const unsigned i = p * ref::kCambiScales + s;
            t.c[i] = cv_base(p, slot) + pass_[p].cv_off[s];
            t.n[i] = sw_[p][s] * sh_[p][s];
            t.k[i] = unsigned(ref::cambi_topk_count(plan_.topk, t.n[i]));
        }
    cambi_detail::launch_topk_init(t, stream);
    cambi_detail::launch_pass(launch_of(0, slot), consts_, dis, &acc->invalid_sample[0], stream);
    if (npass_ > 1)
        cambi_detail::launch_pass(launch_of(1, slot), consts_, *ref, &acc->invalid_sample[1], stream);
    cambi_detail::launch_topk(t, acc, slot, seq_, int(npass_), stream);
    ++seq_;
}

void CambiKernel::copy_cvalues(const CambiAccum& acc, unsigned pass, unsigned scale,
                               std::vector<float>& out, cudaStream_t stream) const {
    if (pass >= npass_ || scale >= ref::kCambiScales)
        invalid("copy_cvalues: pass or scale out of range");
    if (acc.sequence >= seq_ || seq_ > acc.sequence + slots_ || acc.slot != acc.sequence % slots_)
        invalid("copy_cvalues: the frame's c-value slot was reused or is not this object's (frame " +
                std::to_string(acc.sequence) + ", " + std::to_string(seq_) + " enqueued, " +
                std::to_string(slots_) + " slots)");
    const float* src = cv_base(pass, acc.slot) + pass_[pass].cv_off[scale];
    out.resize(std::size_t(sw_[pass][scale]) * sh_[pass][scale]);
    VMAF_CUDA_CHECK(cudaMemcpyAsync(out.data(), src, out.size() * sizeof(float),
                                    cudaMemcpyDeviceToHost, stream));
    VMAF_CUDA_CHECK(cudaStreamSynchronize(stream));
}

float* CambiKernel::cvalues_device(const CambiAccum& acc, unsigned pass,
                                   unsigned scale) const {
    if (pass >= npass_ || scale >= ref::kCambiScales)
        invalid("cvalues_device: pass or scale out of range");
    if (acc.sequence >= seq_ || seq_ > acc.sequence + slots_ || acc.slot != acc.sequence % slots_)
        invalid("cvalues_device: the frame's c-value slot was reused or is not this object's (frame " +
                std::to_string(acc.sequence) + ", " + std::to_string(seq_) + " enqueued, " +
                std::to_string(slots_) + " slots)");
    return cv_base(pass, acc.slot) + pass_[pass].cv_off[scale];
}

std::size_t CambiKernel::max_scale_values() const {
    std::size_t m = 0;
    for (unsigned p = 0; p < npass_; ++p)
        for (unsigned s = 0; s < ref::kCambiScales; ++s)
            m = std::max(m, std::size_t(sw_[p][s]) * sh_[p][s]);
    return m;
}

ref::CambiScores cambi_kernel_finish(const ref::CambiPlan& plan, const CambiAccum& acc,
                                     const CambiScalePool& pool, bool force_slow_path,
                                     unsigned* slow_scales) {
    if ((acc.full_ref != 0) != plan.full_ref)
        throw std::invalid_argument("cambi: the accumulator's full_ref does not match the plan");
    const unsigned npass = plan.full_ref ? 2 : 1;
    for (unsigned p = 0; p < npass; ++p)
        if (acc.invalid_sample[p])
            throw std::invalid_argument(
                "cambi: invalid input: a sample of the " +
                std::string(p ? "reference" : "distorted") + " picture is greater than " +
                std::to_string((1u << plan.in_bpc) - 1) + ", the maximum for " +
                std::to_string(plan.in_bpc) + "-bit samples");
    ref::CambiPassScores scores[2]{};
    unsigned slow = 0;
    for (unsigned p = 0; p < npass; ++p)
        for (unsigned s = 0; s < ref::kCambiScales; ++s) {
            const CambiScaleAccum& a = acc.pass[p][s];
            float min_pos;
            std::memcpy(&min_pos, &a.min_pos_bits, sizeof min_pos);
            const ref::CambiTopkExact ex = ref::cambi_topk_from_sum(a.sum_units, int(a.k), min_pos);
            if (ex.equals_libvmaf && !force_slow_path) {
                scores[p].scale[s] = ex.score;
            } else {
                // libvmaf's quick-select order on the frame's own c-values.
                scores[p].scale[s] = pool(p, s);
                ++slow;
            }
        }
    if (slow_scales) *slow_scales = slow;
    return ref::cambi_finish(plan, scores[0], scores[1]);
}

ref::CambiScores cambi_kernel_finish(const CambiKernel& k, const CambiAccum& acc,
                                     cudaStream_t stream, bool force_slow_path,
                                     unsigned* slow_scales, CambiDevicePool* device_pool) {
    if (device_pool && device_pool->max_n() < k.max_scale_values())
        invalid("cambi_kernel_finish: the device pool holds fewer values than the largest scale");
    std::vector<float> c;
    return cambi_kernel_finish(
        k.plan(), acc,
        [&](unsigned p, unsigned s) {
            if (device_pool) {
                const CambiScaleAccum& a = acc.pass[p][s];
                return device_pool->pool(k.cvalues_device(acc, p, s), a.n, a.k, stream);
            }
            k.copy_cvalues(acc, p, s, c, stream);
            return ref::cambi_spatial_pooling(std::span<float>(c), k.plan().topk);
        },
        force_slow_path, slow_scales);
}

} // namespace vmaf_cuda::cuda

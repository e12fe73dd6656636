// SPDX-License-Identifier: BSD-2-Clause-Patent
// Reference float_ssim; see ssim.h for the contract and the libvmaf functions followed.

#include "ssim.h"

#include <math.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace vmaf_cuda::ref {

int float_ssim_scale(unsigned width, unsigned height, int scale_option) {
    if (scale_option < 0 || scale_option > 10)
        throw std::invalid_argument("float_ssim: scale " + std::to_string(scale_option) +
                                    " outside 0..10");
    if (scale_option > 0) return scale_option;
    const int m = std::min(int(width), int(height));
    return std::max(1, iqa_round(static_cast<float>(m) / 256.0f));
}

FloatSsimInput float_ssim_prepare(const LumaView& ref, const LumaView& dis,
                                  const FloatSsimOptions& opt) {
    if (ref.width != dis.width || ref.height != dis.height || ref.bpc != dis.bpc)
        throw std::invalid_argument("float_ssim: ref and dis planes differ in size or bpc");
    if (ref.width == 0 || ref.height == 0) throw std::invalid_argument("float_ssim: empty plane");
    FloatSsimInput in;
    iqa_picture_to_float(ref, in.ref);
    iqa_picture_to_float(dis, in.dis);
    in.w = int(ref.width);
    in.h = int(ref.height);
    const int scale = float_ssim_scale(ref.width, ref.height, opt.scale);
    if (scale > 1) {
        std::vector<float> box(std::size_t(scale) * scale, 1.0f / (scale * scale));
        const IqaKernel2d k{box.data(), scale};
        int sw = 0, sh = 0;
        // In place, as libvmaf (ref first, then dis; both give the same size).
        iqa_decimate(in.ref.data(), in.w, in.h, scale, k, in.ref.data(), nullptr, nullptr);
        iqa_decimate(in.dis.data(), in.w, in.h, scale, k, in.dis.data(), &sw, &sh);
        in.w = sw;
        in.h = sh;
        in.ref.resize(std::size_t(sw) * sh);
        in.dis.resize(std::size_t(sw) * sh);
    }
    return in;
}

double float_ssim_to_db(double score, unsigned width, unsigned height, unsigned bpc,
                        bool clip_db) {
    double max_db = INFINITY;
    if (clip_db) {
        const unsigned peak = (1u << bpc) - 1;
        const double mse = 0.5 / double(width * height);
        max_db = ::ceil(10. * ::log10(double(peak * peak) / mse));
    }
    const double db = -10. * ::log10(1 - score);
    return db < max_db ? db : max_db;
}

FloatSsimScores float_ssim(const LumaView& ref, const LumaView& dis,
                           const FloatSsimOptions& opt) {
    const FloatSsimInput in = float_ssim_prepare(ref, dis, opt);
    const IqaSsimMeans m = iqa_ssim(in.ref.data(), in.dis.data(), in.w, in.h);
    FloatSsimScores s{double(m.ssim), double(m.l), double(m.c), double(m.s)};
    if (opt.enable_db) s.ssim = float_ssim_to_db(s.ssim, ref.width, ref.height, ref.bpc, opt.clip_db);
    return s;
}

} // namespace vmaf_cuda::ref

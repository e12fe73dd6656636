// SPDX-License-Identifier: BSD-2-Clause-Patent
// Developer tool, not built by meson: the CPU reference of the companion features (psnr,
// float_ssim, float_ms_ssim, ciede) against libvmaf v3.2.0 itself, linked in, on
// generated pictures the golden set does not have: odd and tiny sizes, 8/10/12/16 bpc,
// 4:2:0 / 4:2:2 / 4:4:4 / 4:0:0, random and smooth content, identical pictures, and the
// options (enable_chroma, reduced_hbd_peak, min_sse, scale, enable_db, clip_db).
// Every output (all planes, mse, lcs, per-scale values, apsnr) must be the same double.
//
// libvmaf's ciede reads past its picture for odd sizes (ciede.h); the tool makes that
// memory zero (posix_memalign is wrapped to allocate 4 KiB more, zeroed), which is what
// the reference assumes, so those sizes are compared exactly too.
//
/* Build (LIBVMAF = a libvmaf v3.2.0 source tree, `git archive v3.2.0 libvmaf` of
   Netflix/vmaf; output.c patched to print %.17g so that apsnr parses exactly):
     sed -i 's/%\.16f/%.17g/g; s/%\.6f/%.17g/g' $LIBVMAF/src/output.c
     meson setup $LIBVMAF/build $LIBVMAF --buildtype=release -Denable_asm=false \
         -Denable_float=true -Dbuilt_in_models=false -Denable_tests=false \
         -Denable_tools=false -Denable_docs=false -Ddefault_library=static
     ninja -C $LIBVMAF/build
     g++ -std=c++20 -O2 -ffp-contract=off -Ireference -I$LIBVMAF/include \
         -I$LIBVMAF/build/include tests/golden/libvmaf_diff.cpp build/libvmaf_cuda.a \
         $LIBVMAF/build/src/libvmaf.a -lm -lpthread -Wl,--wrap=posix_memalign -o libvmaf_diff
     ./libvmaf_diff        # prints the first mismatches and "N compared, M differ"
*/

extern "C" {
#include <libvmaf/feature.h>
#include <libvmaf/libvmaf.h>
#include <libvmaf/picture.h>
}

#include "ciede.h"
#include "ms_ssim.h"
#include "psnr.h"
#include "ssim.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

namespace ref = vmaf_cuda::ref;

extern "C" int __real_posix_memalign(void**, std::size_t, std::size_t);
extern "C" int __wrap_posix_memalign(void** p, std::size_t a, std::size_t s) {
    const int r = __real_posix_memalign(p, a, s + 4096);
    if (!r) std::memset(*p, 0, s + 4096);
    return r;
}

namespace {

std::uint64_t rng_state = 88172645463325252ull;
std::uint32_t rnd() {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return std::uint32_t(rng_state);
}

/// A picture in the caller's layout (ceil-sized chroma), one sample per uint16.
struct Pic {
    std::vector<std::uint16_t> p[3];
    unsigned w, h, cw, ch, bpc, chroma;
};

/// kind 0: random; 1: smooth pattern + small noise; 2: flat; with `base`: base + noise
/// (kind 3: base unchanged, identical pictures).
Pic make(unsigned w, unsigned h, unsigned bpc, unsigned chroma, int kind, const Pic* base) {
    Pic P{{}, w, h, ref::yuv_chroma_width(w, chroma), ref::yuv_chroma_height(h, chroma), bpc, chroma};
    const int maxv = (1 << bpc) - 1;
    for (int p = 0; p < 3; p++) {
        const unsigned pw = p ? P.cw : w, ph = p ? P.ch : h;
        P.p[p].resize(std::size_t(pw) * ph);
        for (unsigned y = 0; y < ph; y++)
            for (unsigned x = 0; x < pw; x++) {
                int v;
                if (base) {
                    const int noise = kind == 3 ? 0 : int(rnd() % (2 * (maxv / 16) + 1)) - maxv / 16;
                    v = base->p[p][y * pw + x] + noise;
                } else if (kind == 0) {
                    v = int(rnd() & unsigned(maxv));
                } else if (kind == 1) {
                    v = int(((x * 7 + y * 3 + p * 50) % 256) * (maxv / 255.0)) + int(rnd() % 9) - 4;
                } else {
                    v = maxv / 3;
                }
                P.p[p][y * pw + x] = std::uint16_t(v < 0 ? 0 : v > maxv ? maxv : v);
            }
    }
    return P;
}

ref::YuvView view(const Pic& P, std::vector<std::uint8_t> (&mem)[3]) {
    ref::YuvView v;
    v.chroma = P.chroma;
    ref::LumaView* pl[3] = {&v.y, &v.cb, &v.cr};
    const std::size_t bps = P.bpc > 8 ? 2 : 1;
    for (int p = 0; p < 3; p++) {
        const unsigned pw = p ? P.cw : P.w, ph = p ? P.ch : P.h;
        mem[p].resize(std::size_t(pw) * ph * bps);
        for (std::size_t i = 0; i < std::size_t(pw) * ph; i++) {
            if (bps == 1)
                mem[p][i] = std::uint8_t(P.p[p][i]);
            else
                std::memcpy(&mem[p][2 * i], &P.p[p][i], 2);
        }
        *pl[p] = {mem[p].data(), std::ptrdiff_t(pw * bps), pw, ph, P.bpc};
    }
    return v;
}

/// libvmaf's picture: floor-sized chroma, the top-left part (as its YUV reader does).
VmafPicture to_vmaf(const Pic& P) {
    const VmafPixelFormat f = P.chroma == 420   ? VMAF_PIX_FMT_YUV420P
                              : P.chroma == 422 ? VMAF_PIX_FMT_YUV422P
                              : P.chroma == 444 ? VMAF_PIX_FMT_YUV444P
                                                : VMAF_PIX_FMT_YUV400P;
    VmafPicture pic;
    if (vmaf_picture_alloc(&pic, f, P.bpc, P.w, P.h)) {
        std::cerr << "vmaf_picture_alloc failed\n";
        std::exit(1);
    }
    for (int p = 0; p < (P.chroma == 400 ? 1 : 3); p++) {
        const unsigned srcw = p ? P.cw : P.w;
        for (unsigned y = 0; y < pic.h[p]; y++) {
            std::uint8_t* row = static_cast<std::uint8_t*>(pic.data[p]) + y * pic.stride[p];
            for (unsigned x = 0; x < pic.w[p]; x++) {
                const std::uint16_t v = P.p[p][y * srcw + x];
                if (P.bpc == 8)
                    row[x] = std::uint8_t(v);
                else
                    reinterpret_cast<std::uint16_t*>(row)[x] = v;
            }
        }
    }
    return pic;
}

long n_cmp = 0, n_bad = 0;
void cmp(const std::string& what, double ours, double lib) {
    n_cmp++;
    if (std::memcmp(&ours, &lib, 8) == 0 || (std::isnan(ours) && std::isnan(lib))) return;
    if (++n_bad <= 40) {
        char b[128];
        std::snprintf(b, sizeof b, "%.17g vs libvmaf %.17g", ours, lib);
        std::cout << "MISMATCH " << what << ": " << b << "\n";
    }
}

using Opts = std::map<std::string, std::string>;
struct Cfg {
    unsigned w, h, bpc, chroma;
    int kind;
    unsigned frames;
    Opts psnr, ssim, msssim;
};

void run(const Cfg& c) {
    std::string tag = std::to_string(c.w) + "x" + std::to_string(c.h) + " bpc" +
                      std::to_string(c.bpc) + " " + std::to_string(c.chroma) + " kind" +
                      std::to_string(c.kind);
    for (const auto& [k, v] : c.psnr) tag += " psnr:" + k + "=" + v;
    for (const auto& [k, v] : c.ssim) tag += " ssim:" + k + "=" + v;
    for (const auto& [k, v] : c.msssim) tag += " ms_ssim:" + k + "=" + v;

    VmafConfiguration cfg{};
    cfg.log_level = VMAF_LOG_LEVEL_NONE;
    VmafContext* vm = nullptr;
    vmaf_init(&vm, cfg);
    auto use = [&](const char* name, Opts o) {
        VmafFeatureDictionary* d = nullptr;
        for (const auto& [k, v] : o) vmaf_feature_dictionary_set(&d, k.c_str(), v.c_str());
        if (vmaf_use_feature(vm, name, d)) {
            std::cerr << "vmaf_use_feature " << name << " failed\n";
            std::exit(1);
        }
    };
    Opts po_ = c.psnr, so_ = c.ssim, mo_ = c.msssim;
    po_["enable_mse"] = "true";
    po_["enable_apsnr"] = "true";
    so_["enable_lcs"] = "true";
    mo_["enable_lcs"] = "true";
    use("psnr", po_);
    use("float_ssim", so_);
    const bool ms_ok = c.w >= ref::float_ms_ssim_min_size() && c.h >= ref::float_ms_ssim_min_size();
    if (ms_ok) use("float_ms_ssim", mo_);
    const bool ciede = c.chroma == 420 || c.chroma == 444;
    if (ciede) use("ciede", {});

    ref::PsnrOptions po;
    po.enable_mse = po.enable_apsnr = true;
    for (const auto& [k, v] : c.psnr) {
        if (k == "enable_chroma") po.enable_chroma = v == "true";
        if (k == "reduced_hbd_peak") po.reduced_hbd_peak = v == "true";
        if (k == "min_sse") po.min_sse = std::stod(v);
    }
    ref::FloatSsimOptions so;
    for (const auto& [k, v] : c.ssim) {
        if (k == "enable_db") so.enable_db = v == "true";
        if (k == "clip_db") so.clip_db = v == "true";
        if (k == "scale") so.scale = std::stoi(v);
    }
    ref::FloatMsSsimOptions mo;
    for (const auto& [k, v] : c.msssim) {
        if (k == "enable_db") mo.enable_db = v == "true";
        if (k == "clip_db") mo.clip_db = v == "true";
    }
    const ref::PsnrSetup setup = ref::psnr_setup(po, c.bpc, c.w, c.h, c.chroma);
    ref::PsnrTotals tot{};
    std::vector<std::map<std::string, double>> ours;
    for (unsigned i = 0; i < c.frames; i++) {
        const Pic r = make(c.w, c.h, c.bpc, c.chroma, c.kind == 3 ? 1 : c.kind, nullptr);
        const Pic d = make(c.w, c.h, c.bpc, c.chroma, c.kind, &r);
        std::vector<std::uint8_t> mr[3], md[3];
        const ref::YuvView vr = view(r, mr), vd = view(d, md);
        auto& m = ours.emplace_back();
        ref::PsnrAccum a;
        ref::psnr_accumulate(vr, vd, setup, a);
        ref::psnr_totals_add(tot, a);
        const ref::PsnrScores ps = ref::psnr_finish(setup, a);
        const char* pn[3] = {"psnr_y", "psnr_cb", "psnr_cr"};
        const char* mn[3] = {"mse_y", "mse_cb", "mse_cr"};
        for (unsigned p = 0; p < setup.planes; p++) {
            m[pn[p]] = ps.psnr[p];
            m[mn[p]] = ps.mse[p];
        }
        const ref::FloatSsimScores s = ref::float_ssim(vr.y, vd.y, so);
        m["float_ssim"] = s.ssim;
        m["float_ssim_l"] = s.l;
        m["float_ssim_c"] = s.c;
        m["float_ssim_s"] = s.s;
        if (ms_ok) {
            const ref::FloatMsSsimScores ms = ref::float_ms_ssim(vr.y, vd.y, mo);
            m["float_ms_ssim"] = ms.ms_ssim;
            for (int k = 0; k < ref::kMsSsimScales; k++) {
                const std::string sk = "_scale" + std::to_string(k);
                m["float_ms_ssim_l" + sk] = ms.l[k];
                m["float_ms_ssim_c" + sk] = ms.c[k];
                m["float_ms_ssim_s" + sk] = ms.s[k];
            }
        }
        if (ciede) m["ciede2000"] = ref::ciede_score(vr, vd);
        VmafPicture pr = to_vmaf(r), pd = to_vmaf(d);
        if (vmaf_read_pictures(vm, &pr, &pd, i)) {
            std::cerr << "vmaf_read_pictures failed: " << tag << "\n";
            std::exit(1);
        }
    }
    vmaf_read_pictures(vm, nullptr, nullptr, 0);
    for (unsigned i = 0; i < c.frames; i++)
        for (const auto& [k, v] : ours[i]) {
            double lib;
            if (vmaf_feature_score_at_index(vm, k.c_str(), &lib, i)) {
                std::cout << "MISSING " << k << " in libvmaf: " << tag << "\n";
                n_bad++;
                continue;
            }
            cmp(tag + " frame " + std::to_string(i) + " " + k, v, lib);
        }
    // apsnr: libvmaf reports it only in its log's aggregate_metrics.
    const std::string path =
        (std::filesystem::temp_directory_path() / "libvmaf_diff_aggregate.json").string();
    vmaf_write_output(vm, path.c_str(), VMAF_OUTPUT_FORMAT_JSON);
    std::ifstream in(path);
    const auto j = nlohmann::json::parse(in, nullptr, false);
    const ref::PsnrAggregate a = ref::psnr_aggregate(setup, tot);
    const char* an[3] = {"apsnr_y", "apsnr_cb", "apsnr_cr"};
    if (j.is_discarded()) {
        std::cout << "UNPARSABLE libvmaf log: " << tag << "\n";
        n_bad++;
    } else {
        for (int p = 0; p < 3; p++) {
            const auto& v = j.at("aggregate_metrics").at(an[p]);
            if (v.is_null()) { // libvmaf prints non-finite values as null
                n_cmp++;
                if (std::isfinite(a.apsnr[p])) {
                    n_bad++;
                    std::cout << "MISMATCH " << tag << " " << an[p] << ": ours " << a.apsnr[p]
                              << ", libvmaf null\n";
                }
            } else {
                cmp(tag + " " + an[p], a.apsnr[p], v.get<double>());
            }
        }
    }
    vmaf_close(vm);
}

} // namespace

int main() {
    std::vector<Cfg> cfgs;
    const unsigned sizes[][2] = {{176, 176}, {177, 179}, {200, 181}, {321, 240}, {322, 241},
                                 {64, 48},   {65, 47},   {18, 22},   {33, 17},   {12, 12},
                                 {8, 30},    {384, 200}, {641, 640}, {177, 178}, {65, 48},
                                 {33, 18},   {97, 31}};
    for (const auto& s : sizes)
        for (unsigned bpc : {8u, 10u, 12u, 16u})
            for (unsigned ch : {420u, 444u, 422u})
                for (int kind : {0, 1}) {
                    if (s[0] == 641 && (bpc != 8 || ch != 420)) continue;
                    cfgs.push_back({s[0], s[1], bpc, ch, kind, 2, {}, {}, {}});
                }
    cfgs.push_back({200, 180, 10, 420, 1, 2, {{"reduced_hbd_peak", "true"}}, {{"scale", "3"}},
                    {{"enable_db", "true"}}});
    cfgs.push_back({200, 180, 12, 420, 1, 2, {{"min_sse", "0.5"}},
                    {{"enable_db", "true"}, {"clip_db", "true"}},
                    {{"enable_db", "true"}, {"clip_db", "true"}}});
    cfgs.push_back({201, 181, 8, 420, 3, 2, {{"min_sse", "2.5"}},
                    {{"enable_db", "true"}, {"clip_db", "true"}},
                    {{"enable_db", "true"}, {"clip_db", "true"}}});
    cfgs.push_back({200, 180, 8, 420, 3, 2, {}, {{"enable_db", "true"}}, {}});
    cfgs.push_back({200, 180, 8, 420, 1, 2, {{"enable_chroma", "false"}}, {{"scale", "1"}}, {}});
    cfgs.push_back({200, 180, 16, 400, 1, 2, {}, {{"scale", "10"}}, {}});
    cfgs.push_back({200, 180, 8, 420, 2, 2, {}, {}, {}});
    cfgs.push_back({1000, 700, 8, 420, 1, 1, {}, {}, {}});
    cfgs.push_back({700, 1000, 10, 444, 0, 1, {}, {}, {}});
    for (const auto& c : cfgs) run(c);
    std::cout << n_cmp << " compared, " << n_bad << " differ\n";
    return n_bad == 0 ? 0 : 1;
}

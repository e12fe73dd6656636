// SPDX-License-Identifier: BSD-2-Clause-Patent
// Reference CAMBI; see cambi.h for the contract, the stages and the libvmaf functions
// followed.

#include "cambi.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <utility>

namespace vmaf_cuda::ref {

namespace {

// Facts from libvmaf's cambi.c: per-scale weights, contrast weights per step, size
// limits, the spatial-mask window.
constexpr int kScaleWeights[kCambiScales] = {16, 8, 4, 2, 1};
constexpr int kContrastWeights[32] = {1, 2, 3, 4, 4, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7, 8,
                                      8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9};
constexpr unsigned kMinWidthHeight = 216;
constexpr int kMaskFilterSize = 7;
constexpr double kDefaultTopk = 0.6;

// ---------------------------------------------------------------- luminance (EOTFs)
// luminance_tools.c, 10-bit limited range [64, 940]: the sample is clipped to the range,
// normalised to [0, 1] in double and passed through the EOTF (cd/m^2).

double bt1886_eotf(double v) {
    // Same expressions as libvmaf (Lw = 300, Lb = 0.01, gamma 2.4), same order.
    const double a = std::pow(std::pow(300.0, 1.0 / 2.4) - std::pow(0.01, 1.0 / 2.4), 2.4);
    const double b =
        std::pow(0.01, 1.0 / 2.4) / (std::pow(300.0, 1.0 / 2.4) - std::pow(0.01, 1.0 / 2.4));
    const double vb = v + b;
    return a * std::pow(vb > 0 ? vb : 0.0, 2.4);
}

double pq_eotf(double v) {
    const double m_1 = 0.1593017578125;
    const double m_2 = 78.84375;
    const double c_1 = 0.8359375;
    const double c_2 = 18.8515625;
    const double c_3 = 18.6875;
    const double num = std::pow(v, 1.0 / m_2) - c_1;
    const double num_clipped = num > 0 ? num : 0.0;
    const double den = c_2 - c_3 * std::pow(v, 1.0 / m_2);
    return 10000 * std::pow(num_clipped / den, 1.0 / m_1);
}

struct Luma {
    int foot = 64, head = 940; // 10-bit limited range
    double (*eotf)(double) = bt1886_eotf;

    double luminance(int sample) const {
        const int c = sample < foot ? foot : (sample > head ? head : sample);
        return eotf(static_cast<double>(c - foot) / (head - foot));
    }
    // Is a step of `diff` codes above `sample` visible (delta L > threshold * L)?
    bool tvi_condition(int sample, int diff, double thr) const {
        const double mean = luminance(sample);
        const double up = luminance(sample + diff);
        return up - mean > thr * mean;
    }
};

enum class Bisect { too_small, correct, too_big };

Bisect tvi_hard_threshold(const Luma& l, int sample, int diff, double thr) {
    if (!l.tvi_condition(sample, diff, thr)) return Bisect::too_big;
    if (l.tvi_condition(sample + 1, diff, thr)) return Bisect::too_small;
    return Bisect::correct;
}

// libvmaf get_tvi_for_diff at 10 bits: the largest sample at which `diff` is visible.
int tvi_for_diff(const Luma& l, int diff, double thr) {
    const int max_val = (1 << 10) - 1;
    int foot = l.foot;
    int head = l.head - diff - 1;
    Bisect b = tvi_hard_threshold(l, foot, diff, thr);
    if (b == Bisect::too_big) return 0;
    if (b == Bisect::correct) return foot;
    b = tvi_hard_threshold(l, head, diff, thr);
    if (b == Bisect::too_small) return max_val;
    if (b == Bisect::correct) return head;
    for (;;) {
        const int mid = foot + (head - foot) / 2;
        b = tvi_hard_threshold(l, mid, diff, thr);
        if (b == Bisect::too_big)
            head = mid;
        else if (b == Bisect::too_small)
            foot = mid;
        else
            return mid;
    }
}

// libvmaf get_vlt_luma: the smallest sample from the foot up whose luminance reaches the
// threshold; 0 when that is the foot itself.
std::uint16_t vlt_luma_of(const Luma& l, double threshold) {
    if (l.luminance(l.head) < threshold)
        throw std::invalid_argument(
            "cambi: cambi_vis_lum_threshold is above the peak luminance of the EOTF "
            "(libvmaf loops forever there)");
    std::uint16_t sample = static_cast<std::uint16_t>(l.foot);
    while (l.luminance(sample) < threshold) ++sample;
    return sample == l.foot ? 0 : sample;
}

// libvmaf adjust_window_size: window scaled by (w + h) / (3840 + 2160), in its integer
// order; halved (rounding up) with the speed-up; made odd.
unsigned adjust_window(unsigned window, unsigned w, unsigned h, bool speedup) {
    std::uint16_t ws = static_cast<std::uint16_t>((window * (w + h)) / 375 >> 4);
    if (speedup) ws = static_cast<std::uint16_t>((ws + 1) >> 1);
    ws |= 1;
    return ws;
}

void check_range(const char* name, double v, double lo, double hi) {
    if (!(v >= lo && v <= hi)) {
        char b[256];
        std::snprintf(b, sizeof b, "cambi: option %s = %g is outside [%g, %g]", name, v, lo, hi);
        throw std::invalid_argument(b);
    }
}
void check_range_or_zero(const char* name, unsigned v, double lo, double hi) {
    if (v != 0) check_range(name, v, lo, hi);
}

// Sample converter to 10 bits (libvmaf decimate_generic_*_and_convert_to_10b).
struct To10 {
    int shift_up = 0, shift_down = 0, round = 0;
    std::uint16_t operator()(int v) const {
        return static_cast<std::uint16_t>(shift_up ? v << shift_up : (v + round) >> shift_down);
    }
};

To10 to10_for(unsigned bpc) {
    To10 t;
    if (bpc >= 10) {
        t.shift_down = static_cast<int>(bpc) - 10;
        t.round = t.shift_down == 0 ? 0 : 1 << (t.shift_down - 1);
    } else {
        t.shift_up = 10 - static_cast<int>(bpc);
    }
    return t;
}

// libvmaf's anti_dithering_filter, in place in its order (each output only reads
// samples not yet overwritten, so it equals the out-of-place 2x2 mean).
void anti_dithering(std::uint16_t* d, unsigned w, unsigned h) {
    for (unsigned i = 0; i + 1 < h; ++i) {
        std::uint16_t* r = d + std::size_t(i) * w;
        const std::uint16_t* n = r + w;
        for (unsigned j = 0; j + 1 < w; ++j)
            r[j] = static_cast<std::uint16_t>((r[j] + r[j + 1] + n[j] + n[j + 1]) >> 2);
        r[w - 1] = static_cast<std::uint16_t>((r[w - 1] + n[w - 1]) >> 1);
    }
    std::uint16_t* r = d + std::size_t(h - 1) * w;
    for (unsigned j = 0; j + 1 < w; ++j) r[j] = static_cast<std::uint16_t>((r[j] + r[j + 1]) >> 1);
}

inline std::uint16_t mode3(std::uint16_t a, std::uint16_t b, std::uint16_t c) {
    if (a == b || a == c) return a;
    if (b == c) return b;
    return std::min({a, b, c});
}

// libvmaf's quick_select (Hoare partition around arr[k], descending): the order it leaves
// the first k elements in is the order they are summed in, so every swap must be its.
//
// One round on [left, right] with pivot p pairs the m-th position from the left whose
// value is not > p with the m-th position from the right whose value is not < p, for as
// long as the first lies left of the second, then scans once more past the last pair.
// While the two scans have not met, those positions depend only on values neither side
// has swapped yet, so they can be found a block at a time without branches (as in
// BlockQuicksort, Edelkamp and Weiss 2016) and swapped pair by pair; the last few blocks'
// worth of the round, where the scans meet, runs libvmaf's loop from the state the
// sequential loop would have after the same swaps. tests/golden/cambi_test.cpp checks the
// result against a literal copy of the sequential loop.
void quick_select(float* arr, int n, int k) {
    if (n == k) return;
    constexpr int B = 128;
    int off_l[B], off_r[B];
    int left = 0;
    int right = n - 1;
    while (left < right) {
        const float pivot = arr[k];
        int i = left;
        int j = right;
        {
            int li = left, rj = right; // next positions neither side has scanned
            int nl = 0, sl = 0, nr = 0, sr = 0;
            bool swapped = false;
            int last_l = 0, last_r = 0;
            for (;;) {
                if (sl == nl) {
                    if (rj - li + 1 < B) break;
                    nl = sl = 0;
                    for (int t = 0; t < B; ++t) {
                        off_l[nl] = li + t;
                        nl += !(arr[li + t] > pivot);
                    }
                    li += B;
                }
                if (sr == nr) {
                    if (rj - li + 1 < B) break;
                    nr = sr = 0;
                    for (int t = 0; t < B; ++t) {
                        off_r[nr] = rj - t;
                        nr += !(arr[rj - t] < pivot);
                    }
                    rj -= B;
                }
                const int m = std::min(nl - sl, nr - sr);
                for (int q = 0; q < m; ++q) std::swap(arr[off_l[sl + q]], arr[off_r[sr + q]]);
                if (m > 0) {
                    swapped = true;
                    last_l = off_l[sl + m - 1];
                    last_r = off_r[sr + m - 1];
                }
                sl += m;
                sr += m;
            }
            if (swapped) {
                i = last_l + 1;
                j = last_r - 1;
            }
            if (!swapped || i <= j) {
                do {
                    while (arr[i] > pivot) i++;
                    while (arr[j] < pivot) j--;
                    if (i <= j) {
                        std::swap(arr[i], arr[j]);
                        i++;
                        j--;
                    }
                } while (i <= j);
            }
        }
        if (j < k) left = i;
        if (k < i) right = j;
    }
}

int topk_count(double topk, std::size_t n_elements) {
    const int n = static_cast<int>(n_elements);
    const int k = static_cast<int>(topk * n); // libvmaf: double passed to clip(int, ...)
    return k < 1 ? 1 : (k > n ? n : k);
}

} // namespace

// ---------------------------------------------------------------- options

bool cambi_set_option(CambiOptions& o, const std::string& name, const std::string& value) {
    // libvmaf's dictionary: numeric texts (sscanf "%f %c" reads one number only) become
    // "%g" of their strtof value.
    std::string v = value;
    {
        float f = 0;
        char c = 0;
        if (std::sscanf(value.c_str(), "%f %c", &f, &c) == 1) {
            char* end = nullptr;
            const double d = std::strtof(value.c_str(), &end);
            if (!(d == 0 && end == value.c_str())) {
                char b[64];
                std::snprintf(b, sizeof b, "%g", d);
                v = b;
            }
        }
    }
    const auto bad = [&](const char* what) {
        return std::invalid_argument("cambi: option " + name + "=" + value + ": " + what);
    };
    // libvmaf set_option_int / set_option_double: atoi / atof, 0 only from a leading '0'.
    const auto as_int = [&](int lo, int hi) {
        const int n = std::atoi(v.c_str());
        if (n == 0 && v[0] != '0') throw bad("not a number");
        if (n < lo || n > hi) throw bad(("outside [" + std::to_string(lo) + ", " +
                                         std::to_string(hi) + "]").c_str());
        return n;
    };
    const auto as_double = [&](double lo, double hi) {
        const double n = std::atof(v.c_str());
        if (n == 0 && v[0] != '0') throw bad("not a number");
        if (n < lo || n > hi) {
            char b[96];
            std::snprintf(b, sizeof b, "outside [%g, %g]", lo, hi);
            throw bad(b);
        }
        return n;
    };
    if (name == "cambi_max_val") o.cambi_max_val = as_double(0.0, 1000.0);
    else if (name == "enc_width") o.enc_width = unsigned(as_int(180, 7680));
    else if (name == "enc_height") o.enc_height = unsigned(as_int(150, 7680));
    else if (name == "enc_bitdepth") o.enc_bitdepth = unsigned(as_int(6, 16));
    else if (name == "src_width") o.src_width = unsigned(as_int(320, 7680));
    else if (name == "src_height") o.src_height = unsigned(as_int(200, 4320));
    else if (name == "window_size") o.window_size = unsigned(as_int(15, 127));
    else if (name == "topk") o.topk = as_double(0.0001, 1.0);
    else if (name == "cambi_topk") o.cambi_topk = as_double(0.0001, 1.0);
    else if (name == "tvi_threshold") o.tvi_threshold = as_double(0.0001, 1.0);
    else if (name == "cambi_vis_lum_threshold") o.cambi_vis_lum_threshold = as_double(0.0, 300.0);
    else if (name == "max_log_contrast") o.max_log_contrast = unsigned(as_int(0, 5));
    else if (name == "cambi_high_res_speedup") o.cambi_high_res_speedup = as_int(0, 2160);
    else if (name == "eotf") o.eotf = v;
    else if (name == "cambi_eotf") o.cambi_eotf = v;
    else if (name == "full_ref") {
        if (v == "true") o.full_ref = true;
        else if (v == "false") o.full_ref = false;
        else throw bad("not true or false");
    } else if (name == "heatmaps_path") {
        // A debugging dump of libvmaf's; not implemented.
    } else {
        return false;
    }
    return true;
}

// ---------------------------------------------------------------- names

std::string cambi_feature_name(const CambiOptions& o) {
    // (option name, suffix key, value) for every feature parameter off its default;
    // libvmaf sorts them by option name (strcmp) and appends "_key_value".
    std::vector<std::pair<std::string, std::string>> parts;
    auto fmt_g = [](double v) {
        char b[64];
        std::snprintf(b, sizeof b, "%g", v);
        return std::string(b);
    };
    auto add_d = [&](const char* name, const char* key, double v, double def) {
        if (v != def) parts.emplace_back(name, std::string(key) + "_" + fmt_g(v));
    };
    auto add_i = [&](const char* name, const char* key, long v, long def) {
        if (v != def) parts.emplace_back(name, std::string(key) + "_" + std::to_string(int(v)));
    };
    auto add_s = [&](const char* name, const char* key, const std::string& v, const char* def) {
        if (v != def) parts.emplace_back(name, std::string(key) + "_" + v);
    };
    add_d("cambi_max_val", "cmxv", o.cambi_max_val, 1000.0);
    add_i("enc_width", "encw", o.enc_width, 0);
    add_i("enc_height", "ench", o.enc_height, 0);
    add_i("enc_bitdepth", "encbd", o.enc_bitdepth, 0);
    add_i("src_width", "srcw", o.src_width, 0);
    add_i("src_height", "srch", o.src_height, 0);
    add_i("window_size", "ws", o.window_size, 65);
    add_d("topk", "topk", o.topk, kDefaultTopk);
    add_d("cambi_topk", "ctpk", o.cambi_topk, kDefaultTopk);
    add_d("tvi_threshold", "tvit", o.tvi_threshold, 0.019);
    add_d("cambi_vis_lum_threshold", "vlt", o.cambi_vis_lum_threshold, 0.0);
    add_i("max_log_contrast", "mlc", o.max_log_contrast, 2);
    add_s("eotf", "eotf", o.eotf, "bt1886");
    add_s("cambi_eotf", "ceot", o.cambi_eotf, "bt1886");
    add_i("cambi_high_res_speedup", "hrs", o.cambi_high_res_speedup, 0);
    std::sort(parts.begin(), parts.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    std::string name = "cambi";
    for (const auto& p : parts) name += "_" + p.second;
    if (name.size() > 256) name.resize(256); // libvmaf's name buffer
    return name;
}

std::vector<std::string> cambi_output_names(const CambiOptions& opt) {
    std::vector<std::string> n{cambi_feature_name(opt)};
    if (opt.full_ref) {
        n.emplace_back("cambi_source");
        n.emplace_back("cambi_full_reference");
    }
    return n;
}

// ---------------------------------------------------------------- plan

std::uint16_t cambi_mask_index(unsigned width, unsigned height) {
    const std::uint32_t shifted = (width >> 6) * (height >> 6);
    std::uint16_t ceil_log2 = 0;
    if (shifted != 0)
        for (std::uint32_t t = shifted - 1; t > 0; t >>= 1) ++ceil_log2;
    return static_cast<std::uint16_t>(
        (kMaskFilterSize * kMaskFilterSize + 3 * (int(ceil_log2) - 11) - 1) >> 1);
}

CambiPlan cambi_plan(const CambiOptions& o, unsigned w, unsigned h, unsigned bpc) {
    if (bpc < 8 || bpc > 16) throw std::invalid_argument("cambi: bpc must be 8..16");
    check_range("cambi_max_val", o.cambi_max_val, 0.0, 1000.0);
    check_range_or_zero("enc_width", o.enc_width, 180, 7680);
    check_range_or_zero("enc_height", o.enc_height, 150, 7680);
    check_range_or_zero("enc_bitdepth", o.enc_bitdepth, 6, 16);
    check_range_or_zero("src_width", o.src_width, 320, 7680);
    check_range_or_zero("src_height", o.src_height, 200, 4320);
    check_range("window_size", o.window_size, 15, 127);
    check_range("topk", o.topk, 0.0001, 1.0);
    check_range("cambi_topk", o.cambi_topk, 0.0001, 1.0);
    check_range("tvi_threshold", o.tvi_threshold, 0.0001, 1.0);
    check_range("cambi_vis_lum_threshold", o.cambi_vis_lum_threshold, 0.0, 300.0);
    check_range("max_log_contrast", o.max_log_contrast, 0, 5);
    check_range("cambi_high_res_speedup", o.cambi_high_res_speedup, 0, 2160);

    CambiPlan p;
    p.in_width = w;
    p.in_height = h;
    p.in_bpc = bpc;
    p.full_ref = o.full_ref;
    p.max_val = o.cambi_max_val;
    p.topk = o.topk != kDefaultTopk ? o.topk : o.cambi_topk;
    p.enc_bitdepth = o.enc_bitdepth ? o.enc_bitdepth : bpc;

    unsigned enc_w = o.enc_width, enc_h = o.enc_height;
    if (enc_w == 0 || enc_h == 0) enc_w = w, enc_h = h;
    unsigned src_w = o.src_width, src_h = o.src_height;
    if (src_w == 0 || src_h == 0) src_w = w, src_h = h;
    // An encode downscaled before upscaling to the input size is scored at its own size;
    // never above the input size.
    if (enc_h > h || enc_w > w) enc_w = w, enc_h = h;
    if (enc_w < kMinWidthHeight && enc_h < kMinWidthHeight)
        throw std::invalid_argument("cambi: the encode size " + std::to_string(enc_w) + "x" +
                                    std::to_string(enc_h) +
                                    " is too small: width or height must be at least 216");
    if (src_w < kMinWidthHeight && src_h < kMinWidthHeight)
        throw std::invalid_argument("cambi: the source size " + std::to_string(src_w) + "x" +
                                    std::to_string(src_h) +
                                    " is too small: width or height must be at least 216");
    if ((src_w > enc_w && src_h < enc_h) || (src_w < enc_w && src_h > enc_h))
        throw std::invalid_argument(
            "cambi: the source size must be at least or at most the encode size in both "
            "dimensions");

    const long enc_pix = long(enc_w) * long(enc_h);
    switch (o.cambi_high_res_speedup) {
    case 1080: p.high_res_speedup = enc_pix >= 1920L * 1080; break;
    case 1440: p.high_res_speedup = enc_pix >= 2560L * 1440; break;
    case 2160: p.high_res_speedup = enc_pix >= 3840L * 2160; break;
    default: p.high_res_speedup = false;
    }

    p.num_diffs = 1u << o.max_log_contrast;
    Luma luma;
    const std::string& eotf = o.cambi_eotf != "bt1886" ? o.cambi_eotf : o.eotf;
    if (eotf == "bt1886")
        luma.eotf = bt1886_eotf;
    else if (eotf == "pq")
        luma.eotf = pq_eotf;
    else
        throw std::invalid_argument("cambi: unknown eotf \"" + eotf + "\" (bt1886 or pq)");
    for (unsigned d = 0; d < p.num_diffs; ++d) {
        p.diff_weight[d] = kContrastWeights[d];
        p.tvi_for_diff[d] = static_cast<std::uint16_t>(
            tvi_for_diff(luma, int(d) + 1, o.tvi_threshold) + int(p.num_diffs));
    }
    p.vlt_luma = vlt_luma_of(luma, o.cambi_vis_lum_threshold);

    p.dist = {enc_w, enc_h, adjust_window(o.window_size, enc_w, enc_h, p.high_res_speedup),
              cambi_mask_index(enc_w, enc_h)};
    p.src = {src_w, src_h, adjust_window(o.window_size, src_w, src_h, p.high_res_speedup),
             cambi_mask_index(src_w, src_h)};
    const unsigned max_window = std::max(p.dist.window_size, p.src.window_size);
    if (max_window * max_window >= kCambiReciprocalSize)
        throw std::invalid_argument("cambi: window_size " + std::to_string(max_window) +
                                    " (after scaling to the frame size) is too large; at most 65");

    const int v_lo = int(p.vlt_luma) - 3 * int(p.num_diffs) + 1;
    p.v_band_base = static_cast<std::uint16_t>(v_lo > 0 ? v_lo : 0);
    // libvmaf's band size is uint16: below zero it wraps and libvmaf v3.2.0 crashes
    // (segmentation fault, checked at vlt 85 and above with the default tvi and mlc).
    if (int(p.tvi_for_diff[p.num_diffs - 1]) + 1 < int(p.v_band_base)) {
        char b[320];
        std::snprintf(b, sizeof b,
                      "cambi: cambi_vis_lum_threshold %g puts the smallest visible luma (%d, "
                      "10-bit) above every contrast threshold (largest %d): no banding can be "
                      "measured (libvmaf v3.2.0 crashes with these options)",
                      o.cambi_vis_lum_threshold, int(p.vlt_luma),
                      int(p.tvi_for_diff[p.num_diffs - 1]) - int(p.num_diffs));
        throw std::invalid_argument(b);
    }
    p.v_band_size =
        static_cast<std::uint16_t>(p.tvi_for_diff[p.num_diffs - 1] + 1 - p.v_band_base);
    return p;
}

// ---------------------------------------------------------------- tables

const float* cambi_reciprocal_table() {
    static const std::vector<float> table = [] {
        std::vector<float> t(kCambiReciprocalSize, 0.0f);
        for (unsigned i = 1; i < kCambiReciprocalSize; ++i) {
            char b[64];
            std::snprintf(b, sizeof b, "%.9g", 1.0 / i);
            t[i] = std::strtof(b, nullptr);
        }
        return t;
    }();
    return table.data();
}

// ---------------------------------------------------------------- stage 1

void cambi_preprocess(const LumaView& in, unsigned out_w, unsigned out_h, unsigned enc_bitdepth,
                      std::uint16_t* out) {
    if (in.bpc < 8 || in.bpc > 16) throw std::invalid_argument("cambi: bpc must be 8..16");
    if (in.bpc != 8 && in.bpc != 16) {
        const int max_val = (1 << in.bpc) - 1;
        for (unsigned y = 0; y < in.height; ++y) {
            const std::uint16_t* r = in.row16(y);
            for (unsigned x = 0; x < in.width; ++x)
                if (r[x] > max_val)
                    throw std::invalid_argument(
                        "cambi: invalid input: a sample is greater than " +
                        std::to_string(max_val) + ", the maximum for " +
                        std::to_string(in.bpc) + "-bit samples");
        }
    }
    const To10 conv = to10_for(in.bpc);
    if (in.width == out_w && in.height == out_h) {
        for (unsigned y = 0; y < out_h; ++y)
            for (unsigned x = 0; x < out_w; ++x)
                out[std::size_t(y) * out_w + x] = conv(in.at(x, y));
    } else {
        // Nearest neighbour with libvmaf's float walk: start at ratio / 2 - 0.5 (computed
        // in double, stored as float), add the float ratio per sample, round by
        // (int)(pos + 0.5) in double.
        const float ratio_x = static_cast<float>(in.width) / static_cast<float>(out_w);
        const float ratio_y = static_cast<float>(in.height) / static_cast<float>(out_h);
        const float start_x = static_cast<float>(ratio_x / 2 - 0.5);
        const float start_y = static_cast<float>(ratio_y / 2 - 0.5);
        float fy = start_y;
        for (unsigned i = 0; i < out_h; ++i) {
            unsigned oy = static_cast<unsigned>(static_cast<int>(fy + 0.5));
            oy = std::min(oy, in.height - 1); // never taken by libvmaf's own walk
            float fx = start_x;
            for (unsigned j = 0; j < out_w; ++j) {
                unsigned ox = static_cast<unsigned>(static_cast<int>(fx + 0.5));
                ox = std::min(ox, in.width - 1);
                out[std::size_t(i) * out_w + j] = conv(in.at(ox, oy));
                fx += ratio_x;
            }
            fy += ratio_y;
        }
    }
    if (enc_bitdepth < 10) anti_dithering(out, out_w, out_h);
}

// ---------------------------------------------------------------- stage 2

void cambi_spatial_mask(const std::uint16_t* img, unsigned w, unsigned h,
                        std::uint16_t mask_index, std::uint16_t* mask) {
    const int pad = kMaskFilterSize / 2;
    // Zero-derivative flags, then separable clipped 7-tap box sums (integer, exact).
    std::vector<std::uint8_t> z(std::size_t(w) * h);
    for (unsigned y = 0; y < h; ++y) {
        const std::uint16_t* r = img + std::size_t(y) * w;
        const std::uint16_t* n = y + 1 < h ? r + w : nullptr;
        for (unsigned x = 0; x < w; ++x) {
            const bool hz = x == w - 1 || r[x] == r[x + 1];
            const bool vz = !n || r[x] == n[x];
            z[std::size_t(y) * w + x] = hz && vz;
        }
    }
    std::vector<std::uint32_t> col(w);
    for (unsigned y = 0; y < h; ++y) {
        std::fill(col.begin(), col.end(), 0u);
        const int y0 = std::max(int(y) - pad, 0), y1 = std::min(int(y) + pad, int(h) - 1);
        for (int yy = y0; yy <= y1; ++yy)
            for (unsigned x = 0; x < w; ++x) col[x] += z[std::size_t(yy) * w + x];
        for (unsigned x = 0; x < w; ++x) {
            const int x0 = std::max(int(x) - pad, 0), x1 = std::min(int(x) + pad, int(w) - 1);
            std::uint32_t s = 0;
            for (int xx = x0; xx <= x1; ++xx) s += col[xx];
            mask[std::size_t(y) * w + x] = s > mask_index;
        }
    }
}

// ---------------------------------------------------------------- stage 3

void cambi_decimate(const std::uint16_t* in, unsigned in_w, unsigned out_w, unsigned out_h,
                    std::uint16_t* out) {
    for (unsigned y = 0; y < out_h; ++y)
        for (unsigned x = 0; x < out_w; ++x)
            out[std::size_t(y) * out_w + x] = in[std::size_t(2 * y) * in_w + 2 * x];
}

void cambi_filter_mode(std::uint16_t* img, unsigned w, unsigned h,
                       std::vector<std::uint16_t>& scratch) {
    scratch.resize(std::size_t(w) * h);
    for (unsigned y = 0; y < h; ++y) {
        const std::uint16_t* r = img + std::size_t(y) * w;
        std::uint16_t* o = scratch.data() + std::size_t(y) * w;
        o[0] = r[0];
        for (unsigned x = 1; x + 1 < w; ++x) o[x] = mode3(r[x - 1], r[x], r[x + 1]);
        o[w - 1] = r[w - 1];
    }
    for (unsigned y = 1; y + 1 < h; ++y) {
        const std::uint16_t* a = scratch.data() + std::size_t(y - 1) * w;
        std::uint16_t* o = img + std::size_t(y) * w;
        for (unsigned x = 0; x < w; ++x) o[x] = mode3(a[x], a[x + w], a[x + 2 * w]);
    }
}

void cambi_c_values(const std::uint16_t* img, const std::uint16_t* mask, unsigned w, unsigned h,
                    unsigned window_size, const CambiPlan& plan, float* c,
                    std::vector<std::uint16_t>& hist) {
    std::fill(c, c + std::size_t(w) * h, 0.0f);
    const int base = plan.v_band_base;
    // An empty band leaves every c-value at 0 (cambi_plan() refuses a negative one).
    if (plan.v_band_size == 0 ||
        int(plan.tvi_for_diff[plan.num_diffs - 1]) + 1 < base)
        return;
    const int size = plan.v_band_size; // == band here
    const int pad = int(window_size >> 1);
    const int nd = int(plan.num_diffs);
    const float* recip = cambi_reciprocal_table();
    hist.assign(std::size_t(size) * w, 0);

    // Adds (+1) or removes (-1) row r of the image to the per-column window counts:
    // a masked in-band pixel at column x counts for the columns [x - pad, x + pad].
    auto update_row = [&](int r, int delta) {
        const std::uint16_t* iv = img + std::size_t(r) * w;
        const std::uint16_t* mv = mask + std::size_t(r) * w;
        for (int x = 0; x < int(w); ++x) {
            if (!mv[x]) continue;
            const int row = int(iv[x]) - base;
            if (row < 0 || row >= size) continue;
            std::uint16_t* hr = hist.data() + std::size_t(row) * w;
            const int x0 = std::max(x - pad, 0), x1 = std::min(x + pad + 1, int(w));
            for (int k = x0; k < x1; ++k) hr[k] = static_cast<std::uint16_t>(hr[k] + delta);
        }
    };

    for (int r = 0; r <= std::min(pad, int(h) - 1); ++r) update_row(r, +1);
    for (int y = 0; y < int(h); ++y) {
        if (y > 0) {
            if (y - pad - 1 >= 0) update_row(y - pad - 1, -1);
            if (y + pad < int(h)) update_row(y + pad, +1);
        }
        // libvmaf c_value_pixel for the masked pixels of row y.
        const std::uint16_t* iv = img + std::size_t(y) * w;
        const std::uint16_t* mv = mask + std::size_t(y) * w;
        float* cv = c + std::size_t(y) * w;
        for (int x = 0; x < int(w); ++x) {
            if (!mv[x]) continue;
            const int value = int(static_cast<std::uint16_t>(iv[x] + nd));
            const int compact = int(iv[x]) - base;
            if (compact < 0 || compact >= size) continue;
            const std::uint16_t* hc = hist.data() + x;
            const int p0 = hc[std::size_t(compact) * w];
            float best = 0.0f;
            for (int d = 0; d < nd; ++d) {
                if (!(value <= plan.tvi_for_diff[d] && value + (d + 1) > plan.vlt_luma)) continue;
                const int i1 = compact + d + 1, i2 = compact - d - 1;
                const int p1 = hc[std::size_t(i1) * w];
                const int p2 = i2 >= 0 ? hc[std::size_t(i2) * w] : 0;
                const int p = p1 > p2 ? p1 : p2;
                const float val =
                    static_cast<float>(plan.diff_weight[d] * p0 * p) * recip[p + p0];
                if (val > best) best = val;
            }
            cv[x] = best;
        }
    }
}

// ---------------------------------------------------------------- stage 4

double cambi_spatial_pooling(std::span<float> c, double topk) {
    const int k = topk_count(topk, c.size());
    quick_select(c.data(), int(c.size()), k);
    double sum = 0;
    for (int i = 0; i < k; i++) sum += c[std::size_t(i)];
    return sum / k;
}

CambiTopkExact cambi_topk_exact(std::span<const float> c, double topk) {
    const int k = topk_count(topk, c.size());
    std::vector<float> v(c.begin(), c.end());
    std::nth_element(v.begin(), v.begin() + (k - 1), v.end(), std::greater<float>());
    const float kth = v[std::size_t(k - 1)];
    // Units of 2^-24: every nonzero c-value is >= 0.5, hence a whole number of units.
    float min_pos = kth; // smallest nonzero value of the top k
    auto units = [&](float f) {
        if (f > 0.0f && (min_pos == 0.0f || f < min_pos)) min_pos = f;
        return static_cast<std::uint64_t>(std::ldexp(double(f), 24));
    };
    std::uint64_t sum = 0; // < 2^63 for frames up to 7680x4320 (c < 9507)
    int taken = 0;
    for (const float f : c)
        if (f > kth) sum += units(f), ++taken;
    sum += units(kth) * std::uint64_t(k - taken);
    return cambi_topk_from_sum(sum, k, min_pos);
}

int cambi_topk_count(double topk, std::size_t n) { return topk_count(topk, n); }

CambiTopkExact cambi_topk_from_sum(std::uint64_t sum, int k, float min_pos) {
    // Every top-k value is >= min_pos; a nonzero one below 0.5 is not a whole number of
    // units (never the case for c-values).
    const bool units_ok = min_pos == 0.0f || min_pos >= 0.5f;
    // All top-k values are multiples of the float ulp of the smallest nonzero one,
    // 2^(e - 24) = 2^e units (frexp exponent e); so is every partial sum, and doubles hold
    // every multiple of it below 2^53 of them.
    int e = 0;
    if (min_pos > 0.0f) std::frexp(min_pos, &e);
    const int bits = 53 + e;
    CambiTopkExact r;
    r.equals_libvmaf = units_ok && (bits >= 64 || sum < (std::uint64_t{1} << bits));
    r.score = std::ldexp(double(sum), -24) / k;
    return r;
}

// ---------------------------------------------------------------- stage 5 and drivers

double cambi_weighted_score(const CambiPassScores& s, unsigned window_size) {
    double score = 0.0;
    for (unsigned i = 0; i < kCambiScales; ++i) score += s.scale[i] * kScaleWeights[i];
    const unsigned odd = 2 * (window_size >> 1) + 1;
    const std::uint16_t pixels_in_window = static_cast<std::uint16_t>(odd * odd);
    return score / pixels_in_window;
}

CambiScores cambi_finish(const CambiPlan& plan, const CambiPassScores& dist,
                         const CambiPassScores& src) {
    const auto clip_max = [&](double v) { return v < plan.max_val ? v : plan.max_val; };
    CambiScores out;
    const double d = cambi_weighted_score(dist, plan.dist.window_size);
    out.cambi = clip_max(d);
    if (plan.full_ref) {
        const double s = cambi_weighted_score(src, plan.src.window_size);
        out.source = clip_max(s);
        const double diff = d - s;
        out.full_reference = clip_max(0 > diff ? 0.0 : diff);
    }
    return out;
}

CambiPassScores cambi_pass(const LumaView& in, const CambiPlan& plan, bool source,
                           CambiScratch& s) {
    const CambiPassGeometry& g = source ? plan.src : plan.dist;
    const std::size_t n = std::size_t(g.width) * g.height;
    s.image.resize(n);
    s.mask.resize(n);
    s.c.resize(n);
    cambi_preprocess(in, g.width, g.height, plan.enc_bitdepth, s.image.data());
    cambi_spatial_mask(s.image.data(), g.width, g.height, g.mask_index, s.mask.data());
    CambiPassScores out{};
    unsigned w = g.width, h = g.height;
    for (unsigned scale = 0; scale < kCambiScales; ++scale) {
        if (scale > 0 || plan.high_res_speedup) {
            const unsigned nw = (w + 1) >> 1, nh = (h + 1) >> 1;
            cambi_decimate(s.image.data(), w, nw, nh, s.image.data());
            cambi_decimate(s.mask.data(), w, nw, nh, s.mask.data());
            w = nw, h = nh;
        }
        cambi_filter_mode(s.image.data(), w, h, s.mode);
        cambi_c_values(s.image.data(), s.mask.data(), w, h, g.window_size, plan, s.c.data(),
                       s.hist);
        out.scale[scale] =
            cambi_spatial_pooling(std::span<float>(s.c.data(), std::size_t(w) * h), plan.topk);
    }
    return out;
}

CambiScores cambi_frame(const LumaView& dis, const LumaView* ref, const CambiPlan& plan,
                        CambiScratch& scratch) {
    const CambiPassScores d = cambi_pass(dis, plan, false, scratch);
    CambiPassScores s{};
    if (plan.full_ref) {
        if (!ref) throw std::invalid_argument("cambi: full_ref needs the reference picture");
        s = cambi_pass(*ref, plan, true, scratch);
    }
    return cambi_finish(plan, d, s);
}

} // namespace vmaf_cuda::ref

// SPDX-License-Identifier: BSD-2-Clause-Patent
// Fuzz harness (a): libvmaf model JSON through the engine's loader (engine/model.cpp,
// engine/model_spec.cpp): parsing, validation, names, overloads and prediction.
// Promise checked: any text either loads or fails with Error(VMAF_CUDA_EMODEL) and a
// message; a loaded model predicts without a sanitizer report.
// The input is the JSON text; its length picks the load flags.

#include "error.h"
#include "fuzz_input.h"
#include "model.h"
#include "vmaf_cuda.h"

#include <cmath>
#include <vector>

using namespace vmaf_cuda::engine;
using vmaf_cuda_fuzz::broken;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    ModelConfig cfg;
    cfg.enable_transform = size % 3 == 1;
    cfg.disable_clip = size % 3 == 2;
    Model m;
    try {
        m = load_model(text, cfg);
    } catch (const Error& e) {
        if (e.status != VMAF_CUDA_EMODEL)
            broken("load_model failed with status " + std::to_string(e.status) + ", not EMODEL: " + e.what());
        if (!*e.what()) broken("load_model failed without a message");
        return 0;
    }
    // A loaded model: its inputs, names, and scores of a few feature vectors.
    if (m.features().empty()) broken("a model without inputs loaded");
    m.set_name("fuzz");
    const std::size_t n = m.features().size();
    const double probes[][3] = {{0.0, 0.0, 0.0}, {1.0, 0.5, 0.25}, {0.93, 3.0, 1e-3}};
    for (const auto& pr : probes) {
        std::vector<double> x(n);
        for (std::size_t i = 0; i < n; ++i) x[i] = pr[i % 3];
        const double y = m.predict(x);
        const double raw = m.predict(x, Model::kPredictNoTransform | Model::kPredictNoClip);
        if (m.clip_enabled() && !std::isnan(y) && (y < m.clip_min() || y > m.clip_max()))
            broken("a clipped score lies outside score_clip");
        if (!m.bootstrap().empty()) {
            std::vector<double> members;
            for (const Model& b : m.bootstrap())
                members.push_back(b.predict(x, Model::kPredictNoTransform | Model::kPredictNoClip));
            bootstrap_combine(m, members);
        }
        (void)raw;
    }
    // Overloads recompute every input's key (libvmaf's feature_name.c rules).
    try {
        m.overload("adm", "adm_enhn_gain_limit", size % 2 ? "1.0" : "1.2");
        m.overload("vif", "vif_enhn_gain_limit", "1");
        m.overload("motion", "motion_force_zero", "true");
    } catch (const Error& e) {
        if (e.status != VMAF_CUDA_EINVAL) broken(std::string("overload: ") + e.what());
    }
    for (const ModelFeature& f : m.features())
        if (f.key.empty() || f.log_name.empty()) broken("an input without a key");
    return 0;
}

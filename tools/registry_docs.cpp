// SPDX-License-Identifier: BSD-2-Clause-Patent
// registry-docs: the documentation's feature and model tables, printed from the library's
// registry (engine/feature_registry.cpp, the built-in models), so that the docs cannot
// drift from the code. tools/gen_docs.py puts them into docs/*.md; the `unit` suite
// checks that docs/ is up to date.
//
//   registry-docs features   markdown: every extractor, its outputs and options
//   registry-docs models     markdown: every built-in model and where it runs

#include "feature_registry.h"
#include "model.h"

#include <cmath>
#include <cstdio>
#include <string>

namespace e = vmaf_cuda::engine;

namespace {

std::string number(double v) {
    if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(v));
    char b[64];
    std::snprintf(b, sizeof b, "%.10g", v);
    return b;
}

const char* type_name(e::OptType t) {
    switch (t) {
    case e::OptType::boolean: return "bool";
    case e::OptType::integer: return "int";
    case e::OptType::real: return "real";
    default: return "text";
    }
}

std::string default_text(const e::OptionDef& o) {
    if (o.type == e::OptType::text) return o.def_text ? o.def_text : "";
    if (o.type == e::OptType::boolean) return o.def != 0 ? "true" : "false";
    return number(o.def);
}

std::string range_text(const e::OptionDef& o) {
    if (o.type == e::OptType::text || o.type == e::OptType::boolean) return "";
    return number(o.min) + " .. " + number(o.max);
}

void features() {
    std::printf("| feature | outputs (default options) | GPU |\n|---|---|---|\n");
    for (const e::FeatureRecord* r : e::feature_records()) {
        e::FeatureSpec spec;
        spec.extractor = r->name;
        std::string outs, gpu = "no (CPU backend)";
        try {
            e::Geometry geo;
            geo.width = 1920;
            geo.height = 1080;
            const auto inst = r->make(spec, geo);
            for (const e::OutputDef& o : inst->outputs()) outs += (outs.empty() ? "" : ", ") + o.name;
            if (inst->has_gpu()) gpu = "yes";
        } catch (const std::exception& ex) {
            outs = std::string("(") + ex.what() + ")";
        }
        std::printf("| `%s` | %s | %s |\n", r->name, outs.c_str(), gpu.c_str());
    }
    for (const e::FeatureRecord* r : e::feature_records()) {
        std::printf("\n#### `%s`\n\n", r->name);
        if (r->options.empty()) {
            std::printf("No options.\n");
            continue;
        }
        std::printf("| option | type | default | range | renames outputs | computed |\n"
                    "|---|---|---|---|---|---|\n");
        for (const e::OptionDef& o : r->options)
            std::printf("| `%s` | %s | %s | %s | %s | %s |\n", o.name, type_name(o.type),
                        default_text(o).c_str(), range_text(o).c_str(),
                        o.names_feature ? (o.alias ? (std::string("`") + o.alias + "`").c_str() : "yes") : "",
                        o.supported ? "yes" : "default only");
    }
}

void models() {
    std::printf("| `version=` | features it reads | GPU |\n|---|---|---|\n");
    for (const std::string& v : e::builtin_model_versions()) {
        std::string inputs, gpu = "yes";
        try {
            e::ModelSpec ms;
            ms.version = v;
            const e::Model m = e::resolve_model(ms, true, nullptr);
            for (const std::string& n : e::model_input_names(m))
                inputs += (inputs.empty() ? "" : ", ") + n;
            for (const e::FeatureSpec& s : e::model_extractors(m)) {
                e::Geometry geo;
                geo.width = 1920;
                geo.height = 1080;
                if (!e::find_feature(s.extractor)->make(s, geo)->has_gpu()) gpu = "no (CPU backend)";
            }
        } catch (const std::exception& ex) {
            inputs = std::string("(") + ex.what() + ")";
        }
        std::printf("| `%s` | %s | %s |\n", v.c_str(), inputs.c_str(), gpu.c_str());
    }
}

} // namespace

int main(int argc, char** argv) {
#ifndef VMAF_CUDA_HAVE_CUDA
    // the tables say which features run on the GPU: only a build with the CUDA backend knows
    std::printf("SKIPPED: built without the CUDA backend; the docs' tables come from a build with it\n");
    return 77;
#endif
    const std::string what = argc > 1 ? argv[1] : "";
    if (what == "features") features();
    else if (what == "models") models();
    else {
        std::fprintf(stderr, "usage: %s features|models\n", argv[0]);
        return 2;
    }
    return 0;
}

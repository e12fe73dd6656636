// SPDX-License-Identifier: BSD-2-Clause-Patent
// Extractor options, feature names, and the C API's model and feature strings.
// Facts from libvmaf v3.2.0: option tables of src/feature/integer_adm.c,
// integer_vif.c, integer_motion.c; naming in src/feature/feature_name.c; aliases in
// src/feature/alias.c; value normalisation in src/dict.c and parsing in src/opt.c.

#include "model.h"

#include "feature.h"

#include "error.h"
#include "vmaf_cuda.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace vmaf_cuda::engine {
namespace {

using OptionInfo = OptionDef;

const OptionDef* find_option(std::string_view extractor, std::string_view name) {
    const FeatureRecord* r = find_feature(extractor);
    if (!r) return nullptr;
    for (const OptionDef& o : r->options)
        if (name == o.name) return &o;
    return nullptr;
}

struct Alias {
    const char* name;
    const char* alias;
};

constexpr Alias kAliases[] = {
    {"VMAF_feature_adm2_score", "adm2"},
    {"VMAF_feature_aim_score", "aim"},
    {"VMAF_feature_adm3_score", "adm3"},
    {"VMAF_feature_adm_scale0_score", "adm_scale0"},
    {"VMAF_feature_adm_scale1_score", "adm_scale1"},
    {"VMAF_feature_adm_scale2_score", "adm_scale2"},
    {"VMAF_feature_adm_scale3_score", "adm_scale3"},
    {"VMAF_feature_motion_score", "motion"},
    {"VMAF_feature_motion2_score", "motion2"},
    {"VMAF_feature_motion3_score", "motion3"},
    {"VMAF_feature_vif_scale0_score", "vif_scale0"},
    {"VMAF_feature_vif_scale1_score", "vif_scale1"},
    {"VMAF_feature_vif_scale2_score", "vif_scale2"},
    {"VMAF_feature_vif_scale3_score", "vif_scale3"},
    {"VMAF_integer_feature_adm2_score", "integer_adm2"},
    {"VMAF_integer_feature_aim_score", "integer_aim"},
    {"VMAF_integer_feature_adm3_score", "integer_adm3"},
    {"VMAF_integer_feature_motion_score", "integer_motion"},
    {"VMAF_integer_feature_motion2_score", "integer_motion2"},
    {"VMAF_integer_feature_motion3_score", "integer_motion3"},
    {"VMAF_integer_feature_vif_scale0_score", "integer_vif_scale0"},
    {"VMAF_integer_feature_vif_scale1_score", "integer_vif_scale1"},
    {"VMAF_integer_feature_vif_scale2_score", "integer_vif_scale2"},
    {"VMAF_integer_feature_vif_scale3_score", "integer_vif_scale3"},
    {"Cambi_feature_cambi_score", "cambi"},
    {"Speed_chroma_feature_speed_chroma_u_score", "speed_chroma_u"},
    {"Speed_chroma_feature_speed_chroma_v_score", "speed_chroma_v"},
    {"Speed_chroma_feature_speed_chroma_uv_score", "speed_chroma_uv"},
    {"Speed_temporal_feature_speed_temporal_score", "speed_temporal"},
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// "%g" (6 significant digits, C locale).
std::string format_g(double v) {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 6);
    return std::string(buf, r.ptr);
}

// A leading sign, then from_chars; true when all of `t` was consumed.
template <class T>
bool parse_full(std::string_view t, T& out) {
    bool neg = false;
    if (!t.empty() && (t[0] == '+' || t[0] == '-')) {
        neg = t[0] == '-';
        t.remove_prefix(1);
        if (!t.empty() && (t[0] == '+' || t[0] == '-')) return false;
    }
    if (t.empty()) return false;
    T v{};
    const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
    if (r.ec != std::errc() || r.ptr != t.data() + t.size()) return false;
    out = neg ? -v : v;
    return true;
}

// libvmaf's vmaf_feature_dictionary_set: text that scans as one float (sscanf "%f %c"
// matches once: blanks around it allowed) is stored as "%g" of that float (strtof).
std::string normalize_value(std::string_view v) {
    std::string_view t = v;
    while (!t.empty() && is_space(t.front())) t.remove_prefix(1);
    while (!t.empty() && is_space(t.back())) t.remove_suffix(1);
    float f = 0.0f;
    if (!parse_full(t, f)) return std::string(v);
    return format_g(double(f));
}

// opt.c set_option_*: the value the extractor holds. Stricter than atof/atoi: the whole
// text must parse. Throws Error(status).
double parse_option(const OptionInfo& o, const std::string& val, int status) {
    const std::string what = std::string("option ") + o.name + "=" + val;
    double n = 0.0;
    switch (o.type) {
    case OptType::text:
        return 0.0;
    case OptType::boolean:
        if (val == "true") return 1.0;
        if (val == "false") return 0.0;
        throw Error(status, what + ": must be true or false");
    case OptType::integer: {
        long i = 0;
        if (!parse_full(std::string_view(val), i)) throw Error(status, what + ": not an integer");
        n = double(i);
        break;
    }
    case OptType::real:
        if (!parse_full(std::string_view(val), n) || !std::isfinite(n))
            throw Error(status, what + ": not a number");
        break;
    }
    if (n == 0 && val[0] != '0') throw Error(status, what + ": not a valid value");
    if (n < o.min || n > o.max)
        throw Error(status, what + ": out of range [" + format_g(o.min) + ", " +
                                format_g(o.max) + "]");
    return n;
}

// ---- "a=b:c=d|e=f" splitting, with '\' escapes ------------------------------------

struct Item {
    std::string key, value;
    bool has_value = false;
};

std::vector<std::vector<Item>> split_entries(std::string_view text) {
    std::vector<std::vector<Item>> entries(1);
    Item cur;
    bool touched = false;
    auto end_item = [&] {
        if (touched) entries.back().push_back(cur);
        cur = Item{};
        touched = false;
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        bool literal = false;
        if (c == '\\' && i + 1 < text.size()) {
            c = text[++i];
            literal = true;
        }
        if (!literal && c == '|') {
            end_item();
            entries.emplace_back();
        } else if (!literal && c == ':') {
            end_item();
        } else if (!literal && c == '=' && !cur.has_value) {
            cur.has_value = true;
            touched = true;
        } else {
            (cur.has_value ? cur.value : cur.key) += c;
            touched = true;
        }
    }
    end_item();
    std::erase_if(entries, [](const std::vector<Item>& e) { return e.empty(); });
    return entries;
}

// RFC 3629 UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF.
bool is_utf8(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        std::size_t len = 0;
        unsigned lo = 0x80, hi = 0xBF;  // range of the second byte
        if (c < 0x80) len = 1;
        else if (c >= 0xC2 && c <= 0xDF) len = 2;
        else if (c >= 0xE0 && c <= 0xEF) len = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        else if (c >= 0xF0 && c <= 0xF4) len = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        else return false;
        if (i + len > s.size()) return false;
        for (std::size_t k = 1; k < len; ++k) {
            const unsigned char d = static_cast<unsigned char>(s[i + k]);
            if (d < (k == 1 ? lo : 0x80) || d > (k == 1 ? hi : 0xBF)) return false;
        }
        i += len;
    }
    return true;
}

bool parse_bool(const Item& it) {
    if (!it.has_value) return true;  // bare flag, as libvmaf's CLI accepts
    if (it.value == "true" || it.value == "1") return true;
    if (it.value == "false" || it.value == "0") return false;
    throw Error(VMAF_CUDA_EINVAL, "model option " + it.key + "=" + it.value +
                                      ": must be true or false");
}

} // namespace

// ---- names ------------------------------------------------------------------------

std::vector<std::string> extractor_features(std::string_view extractor) {
    const FeatureRecord* r = find_feature(extractor);
    if (!r) {
        std::string known;
        for (const FeatureRecord* k : feature_records()) known += (known.empty() ? "" : ", ") + std::string(k->name);
        throw Error(VMAF_CUDA_EINVAL, "unknown feature extractor \"" + std::string(extractor) +
                                          "\" (vmaf_cuda has " + known + ")");
    }
    return std::vector<std::string>(r->provided.begin(), r->provided.end());
}

std::optional<std::string> extractor_of_feature(std::string_view name) {
    for (const FeatureRecord* r : feature_records())
        for (const char* f : r->provided)
            if (name == f) return std::string(r->name);
    return std::nullopt;
}

std::string_view feature_alias(std::string_view name) {
    for (const Alias& a : kAliases)
        if (name == a.name) return a.alias;
    return name;
}

namespace {
// "_<alias>[_<value>]" per feature-naming option away from its default (feature_name.c).
std::string naming_suffix(const FeatureSpec& spec) {
    std::string suffix;
    for (const auto& [opt, val] : spec.options) {  // option-name order, as libvmaf sorts
        const OptionInfo* o = find_option(spec.extractor, opt);
        if (!o || !o->names_feature) continue;
        const char* key = o->alias ? o->alias : o->name;
        if (o->type == OptType::text) {
            if (val == (o->def_text ? o->def_text : "")) continue;
            suffix += '_';
            suffix += key;
            suffix += '_';
            suffix += val;
            continue;
        }
        const double v = parse_option(*o, val, VMAF_CUDA_EINVAL);
        if (v == o->def) continue;
        suffix += '_';
        suffix += key;
        if (o->type == OptType::boolean) continue;
        suffix += '_';
        suffix += o->type == OptType::integer ? std::to_string(long(v)) : format_g(v);
    }
    return suffix;
}
} // namespace

std::string feature_key(std::string_view provided_name, const FeatureSpec& spec) {
    const std::string suffix = naming_suffix(spec);
    if (suffix.empty()) return std::string(provided_name);
    return std::string(feature_alias(provided_name)) + suffix;
}

std::string instance_key(const FeatureSpec& spec) { return spec.extractor + naming_suffix(spec); }

std::string option_text(const FeatureSpec& spec, std::string_view option) {
    const OptionInfo* o = find_option(spec.extractor, option);
    if (!o)
        throw Error(VMAF_CUDA_EINVAL, "feature extractor \"" + spec.extractor +
                                          "\" has no option \"" + std::string(option) + "\"");
    const auto it = spec.options.find(std::string(option));
    if (it != spec.options.end()) return it->second;
    if (o->type == OptType::text) return o->def_text ? o->def_text : "";
    if (o->type == OptType::boolean) return o->def != 0 ? "true" : "false";
    return format_g(o->def);
}

OutputDef make_output(std::string_view provided, const FeatureSpec& spec, bool late, bool delayed) {
    OutputDef d;
    d.key = feature_key(provided, spec);
    d.name = std::string(feature_alias(d.key));
    d.late = late;
    d.delayed = delayed;
    return d;
}

double option_value(const FeatureSpec& spec, std::string_view option) {
    const OptionInfo* o = find_option(spec.extractor, option);
    if (!o)
        throw Error(VMAF_CUDA_EINVAL, "feature extractor \"" + spec.extractor +
                                          "\" has no option \"" + std::string(option) + "\"");
    const auto it = spec.options.find(std::string(option));
    return it == spec.options.end() ? o->def : parse_option(*o, it->second, VMAF_CUDA_EINVAL);
}

void set_option(FeatureSpec& spec, std::string_view option, std::string_view value, int status) {
    extractor_features(spec.extractor);  // known extractor?
    const OptionInfo* o = find_option(spec.extractor, option);
    if (!o)
        throw Error(status, "feature extractor \"" + spec.extractor + "\" has no option \"" +
                                std::string(option) + "\"");
    std::string v = o->type == OptType::text ? std::string(value) : normalize_value(value);
    // A value equal to the default changes nothing (libvmaf names and computes the
    // feature as without it): accepted for every option, and not stored, so that
    // `adm` and `adm:adm_enhn_gain_limit=100` are one extractor.
    bool is_default = false;
    try {
        is_default = o->type == OptType::text ? v == (o->def_text ? o->def_text : "")
                                              : parse_option(*o, v, status) == o->def;
    } catch (const Error& e) { // name the extractor: "cambi: option enc_width=0: out of range ..."
        throw Error(e.status, spec.extractor + ": " + e.what());
    }
    if (is_default) {
        spec.options.erase(std::string(option));
        return;
    }
    if (!o->supported) {
        std::string list;
        for (const OptionInfo& k : find_feature(spec.extractor)->options)
            if (k.supported) {
                if (!list.empty()) list += ", ";
                list += k.name;
            }
        throw Error(status, "option " + spec.extractor + "." + std::string(option) + "=" +
                                std::string(value) + " is not supported by vmaf_cuda (supported: " +
                                (list.empty() ? "none" : list) +
                                "; other options only at their default values)");
    }
    spec.options[std::string(option)] = std::move(v);
}

// ---- feature and model strings ----------------------------------------------------

std::vector<FeatureSpec> parse_feature_string(std::string_view text) {
    std::vector<FeatureSpec> out;
    for (const std::vector<Item>& entry : split_entries(text)) {
        std::string name;
        std::vector<const Item*> opts;
        for (std::size_t i = 0; i < entry.size(); ++i) {
            const Item& it = entry[i];
            if (it.has_value && it.key == "name") {
                name = it.value;
            } else if (!it.has_value && i == 0) {
                name = it.key;
            } else if (!it.has_value) {
                throw Error(VMAF_CUDA_EINVAL, "feature option \"" + it.key + "\" has no value");
            } else {
                opts.push_back(&it);
            }
        }
        if (name.empty())
            throw Error(VMAF_CUDA_EINVAL, "feature entry without name= (e.g. name=adm)");
        FeatureSpec spec{name, {}};
        extractor_features(name);
        for (const Item* it : opts) set_option(spec, it->key, it->value, VMAF_CUDA_EINVAL);
        out.push_back(std::move(spec));
    }
    return out;
}

std::vector<ModelSpec> parse_model_string(std::string_view text) {
    std::vector<ModelSpec> out;
    for (const std::vector<Item>& entry : split_entries(text)) {
        ModelSpec spec;
        for (const Item& it : entry) {
            const bool flag = it.key == "enable_transform" || it.key == "disable_clip";
            if (!it.has_value && !flag)
                throw Error(VMAF_CUDA_EINVAL, "model option \"" + it.key + "\" has no value");
            if (it.key == "version") {
                spec.version = it.value;
            } else if (it.key == "path") {
                spec.path = it.value;
            } else if (it.key == "name") {
                if (it.value.empty()) throw Error(VMAF_CUDA_EINVAL, "model name= is empty");
                // The name keys the JSON and NDJSON logs, whose text is UTF-8.
                if (!is_utf8(it.value))
                    throw Error(VMAF_CUDA_EINVAL, "model name= is not UTF-8 text (it names the "
                                                  "model's score in the logs)");
                spec.name = it.value;
            } else if (it.key == "enable_transform") {
                spec.enable_transform = parse_bool(it);
            } else if (it.key == "disable_clip") {
                spec.disable_clip = parse_bool(it);
            } else if (const std::size_t dot = it.key.find('.');
                       dot != std::string::npos && dot > 0 && dot + 1 < it.key.size()) {
                spec.overloads.push_back(
                    {it.key.substr(0, dot), it.key.substr(dot + 1), it.value});
            } else {
                throw Error(VMAF_CUDA_EINVAL,
                            "unknown model option \"" + it.key +
                                "\" (version, path, name, enable_transform, disable_clip, "
                                "EXTRACTOR.OPTION)");
            }
        }
        if (spec.version.empty() == spec.path.empty())
            throw Error(VMAF_CUDA_EINVAL, spec.version.empty()
                                              ? "model entry needs version= or path="
                                              : "model entry has both version= and path=");
        out.push_back(std::move(spec));
    }
    if (out.empty()) out.push_back(ModelSpec{"vmaf_v0.6.1", "", std::nullopt, false, false, {}});
    return out;
}

Model resolve_model(const ModelSpec& spec, bool first, const char* search_dir) {
    ModelConfig cfg;
    cfg.enable_transform = spec.enable_transform;
    cfg.disable_clip = spec.disable_clip;
    std::string fallback;
    Model m;
    if (!spec.version.empty()) {
        fallback = spec.version;
        if (const auto text = builtin_model_json(spec.version)) {
            try {
                m = load_model(*text, cfg);
            } catch (const Error& e) {
                throw Error(e.status, "built-in model " + spec.version + ": " + e.what());
            }
            m.set_source("built-in " + spec.version);
        } else {
            std::string known;
            for (const std::string& v : builtin_model_versions())
                known += (known.empty() ? "" : ", ") + v;
            if (!search_dir)
                throw Error(VMAF_CUDA_EMODEL, "unknown model version \"" + spec.version +
                                                  "\" (built-in: " + known + ")");
            const std::string path = std::string(search_dir) + "/" + spec.version + ".json";
            try {
                m = load_model_file(path, cfg);
            } catch (const Error& e) {
                throw Error(e.status, "model version \"" + spec.version +
                                          "\" is not built in (built-in: " + known + "); " +
                                          e.what());
            }
        }
    } else {
        m = load_model_file(spec.path, cfg);
        std::string stem = spec.path.substr(spec.path.find_last_of('/') + 1);
        if (stem.size() > 5 && stem.ends_with(".json")) stem.resize(stem.size() - 5);
        fallback = stem;
    }
    m.set_name(spec.name ? *spec.name : first ? std::string("vmaf") : fallback);
    for (const auto& [ext, opt, val] : spec.overloads) m.overload(ext, opt, val);
    return m;
}

} // namespace vmaf_cuda::engine

// SPDX-License-Identifier: BSD-2-Clause-Patent
// Model JSON parsing and prediction. The arithmetic of predict() follows libvmaf
// v3.2.0 src/predict.c and src/svm.cpp (see model.h); parsing follows
// src/read_json_model.c, with stricter checks (counts, types, known features).

#include "model.h"

#include "feature.h"

#include "error.h"
#include "vmaf_cuda.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace vmaf_cuda::engine {
namespace {

using json = nlohmann::json;

// libvmaf keeps at most this many inputs and knots (read_json_model.c buffers).
constexpr std::size_t kMaxFeatures = 64;
constexpr std::size_t kMaxKnots = 10;

[[noreturn]] void fail(const std::string& msg) { throw Error(VMAF_CUDA_EMODEL, msg); }

// A value that feeds the score must be a finite number (a NaN or infinity there turns
// every score into NaN or a clip bound; libvmaf accepts some of them silently).
double finite(double v, const std::string& what) {
    if (!std::isfinite(v)) fail(what + " is " + std::to_string(v) + ": must be a finite number");
    return v;
}

const json& require(const json& obj, const char* key, const char* where) {
    const auto it = obj.find(key);
    if (it == obj.end()) fail(std::string("missing key \"") + key + "\" in " + where);
    return *it;
}

double number(const json& v, const std::string& what) {
    if (!v.is_number()) fail(what + " must be a number, not " + v.type_name());
    return finite(v.get<double>(), what);
}

std::string string_of(const json& v, const std::string& what) {
    if (!v.is_string()) fail(what + " must be a string, not " + v.type_name());
    return v.get<std::string>();
}

std::vector<double> number_array(const json& v, const std::string& what) {
    if (!v.is_array()) fail(what + " must be an array, not " + v.type_name());
    std::vector<double> out;
    for (std::size_t i = 0; i < v.size(); ++i)
        out.push_back(number(v[i], what + "[" + std::to_string(i) + "]"));
    return out;
}

// Where a JSON parse error happened, as a path (model_dict.slopes[2]): nlohmann's
// messages give a byte offset at best, and none for a number out of range (1e999).
struct JsonErrorPath {
    struct Level {
        bool array = false;
        std::string key;
        std::size_t index = 0;
    };
    std::vector<Level> stack;
    std::string where;

    void value() {
        if (!stack.empty() && stack.back().array) ++stack.back().index;
    }
    bool null() { return value(), true; }
    bool boolean(bool) { return value(), true; }
    bool number_integer(json::number_integer_t) { return value(), true; }
    bool number_unsigned(json::number_unsigned_t) { return value(), true; }
    bool number_float(json::number_float_t, const json::string_t&) { return value(), true; }
    bool string(json::string_t&) { return value(), true; }
    bool binary(json::binary_t&) { return value(), true; }
    bool start_object(std::size_t) { return stack.push_back({}), true; }
    bool start_array(std::size_t) { return stack.push_back({true, {}, 0}), true; }
    bool key(json::string_t& k) { return stack.back().key = k, true; }
    bool end_object() { return stack.pop_back(), value(), true; }
    bool end_array() { return end_object(); }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
        for (const Level& l : stack) {
            if (l.array) where += "[" + std::to_string(l.index) + "]";
            else if (!l.key.empty()) where += (where.empty() ? "" : ".") + l.key;
        }
        return false;
    }
};

std::string json_error_path(std::string_view text) {
    JsonErrorPath p;
    json::sax_parse(text.begin(), text.end(), &p);
    return p.where;
}

// Text of a JSON number as libvmaf's JSON reader would hand it to its dictionary.
// nlohmann keeps the value, not the token: integers print exactly; a float prints as
// the shortest text that parses back to the same double, which is the token itself
// (up to trailing zeros) for any token of 15 significant digits or fewer.
std::string number_text(const json& v) {
    char buf[64];
    std::to_chars_result r{};
    if (v.is_number_unsigned()) {
        r = std::to_chars(buf, buf + sizeof buf, v.get<std::uint64_t>());
    } else if (v.is_number_integer()) {
        r = std::to_chars(buf, buf + sizeof buf, v.get<std::int64_t>());
    } else {
        r = std::to_chars(buf, buf + sizeof buf, v.get<double>());
    }
    return std::string(buf, r.ptr);
}

// ---- libsvm text model (svm.cpp SVMModelParser) -----------------------------------

struct SvmText {
    std::string_view text;
    std::size_t pos = 0;

    static bool space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
    std::string_view token() {
        while (pos < text.size() && space(text[pos])) ++pos;
        const std::size_t b = pos;
        while (pos < text.size() && !space(text[pos])) ++pos;
        return text.substr(b, pos - b);
    }
    std::string_view line() {
        const std::size_t b = pos;
        while (pos < text.size() && text[pos] != '\n') ++pos;
        std::string_view l = text.substr(b, pos - b);
        if (pos < text.size()) ++pos;
        return l;
    }
};

double parse_double(std::string_view t, const std::string& what) {
    if (!t.empty() && t[0] == '+') t.remove_prefix(1);
    double v = 0.0;
    const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || r.ec != std::errc() || r.ptr != t.data() + t.size())
        fail("libsvm model: bad number \"" + std::string(t) + "\" for " + what);
    return v;
}

long parse_long(std::string_view t, const std::string& what) {
    if (!t.empty() && t[0] == '+') t.remove_prefix(1);
    long v = 0;
    const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || r.ec != std::errc() || r.ptr != t.data() + t.size())
        fail("libsvm model: bad integer \"" + std::string(t) + "\" for " + what);
    return v;
}

struct SvmModel {
    double gamma = 0.0, rho = 0.0;
    std::vector<double> coef, sv;  // sv dense, coef.size() x n
};

SvmModel parse_svm(std::string_view text, std::size_t n) {
    SvmText in{text};
    SvmModel m;
    long nr_class = -1, total_sv = -1;
    bool have_gamma = false, have_rho = false, regression = false, rbf = false;
    bool have_type = false, have_kernel = false;
    std::vector<std::string_view> seen;  // a header item given twice would silently win
    for (;;) {
        const std::string_view key = in.token();
        if (key.empty()) fail("libsvm model: no \"SV\" line");
        if (key == "SV") break;
        if (std::find(seen.begin(), seen.end(), key) != seen.end())
            fail("libsvm model: header item \"" + std::string(key) + "\" is given twice");
        seen.push_back(key);
        if (key == "svm_type") {
            const std::string_view t = in.token();
            have_type = true;
            regression = (t == "nu_svr" || t == "epsilon_svr");
            if (!regression)
                fail("libsvm model: svm_type \"" + std::string(t) + "\" is not supported (nu_svr)");
        } else if (key == "kernel_type") {
            const std::string_view t = in.token();
            have_kernel = true;
            rbf = (t == "rbf");
            if (!rbf)
                fail("libsvm model: kernel_type \"" + std::string(t) + "\" is not supported (rbf)");
        } else if (key == "gamma") {
            // libvmaf reads any number; a NaN, infinite, zero or negative gamma gives NaN
            // or scores that do not depend on the features (or grow with the distance).
            const std::string_view t = in.token();
            m.gamma = parse_double(t, "gamma");
            if (!std::isfinite(m.gamma) || !(m.gamma > 0))
                fail("libsvm model: gamma " + std::string(t) +
                     ": must be a finite number above 0 (RBF kernel exp(-gamma * |x - sv|^2))");
            have_gamma = true;
        } else if (key == "degree") {
            parse_long(in.token(), "degree");
        } else if (key == "coef0") {
            parse_double(in.token(), "coef0");
        } else if (key == "nr_class") {
            nr_class = parse_long(in.token(), "nr_class");
            if (nr_class != 2) fail("libsvm model: nr_class must be 2 for regression");
        } else if (key == "total_sv") {
            const std::string_view t = in.token();
            total_sv = parse_long(t, "total_sv");
            if (total_sv < 1 || total_sv > 100000)
                fail("libsvm model: total_sv " + std::string(t) +
                     ": a model needs 1 to 100000 support vectors");
        } else if (key == "rho") {
            if (nr_class != 2) fail("libsvm model: rho before nr_class");
            m.rho = finite(parse_double(in.token(), "rho"), "libsvm model: rho");
            have_rho = true;
        } else if (key == "label" || key == "nr_sv") {
            if (nr_class != 2) fail("libsvm model: " + std::string(key) + " before nr_class");
            for (int i = 0; i < 2; ++i) parse_long(in.token(), std::string(key));
        } else if (key == "probA" || key == "probB") {
            parse_double(in.token(), std::string(key));
        } else {
            fail("libsvm model: unknown header item \"" + std::string(key) + "\"");
        }
    }
    if (!have_type) fail("libsvm model: missing svm_type");
    if (!have_kernel) fail("libsvm model: missing kernel_type");
    if (!have_gamma) fail("libsvm model: missing gamma");
    if (nr_class != 2) fail("libsvm model: missing nr_class");
    if (total_sv < 1) fail("libsvm model: missing total_sv");
    if (!have_rho) fail("libsvm model: missing rho");
    in.line();  // rest of the "SV" line

    m.coef.resize(std::size_t(total_sv));
    m.sv.assign(std::size_t(total_sv) * n, 0.0);  // indices absent from a vector are 0
    for (long s = 0; s < total_sv; ++s) {
        const std::string what = "support vector " + std::to_string(s + 1);
        if (in.pos >= in.text.size()) fail("libsvm model: " + what + " is missing");
        SvmText ln{in.line()};
        const std::string_view c = ln.token();
        if (c.empty()) fail("libsvm model: " + what + " has no coefficient");
        m.coef[s] = finite(parse_double(c, what + " coefficient"), "libsvm model: " + what + " coefficient");
        long last = 0;
        for (std::string_view t = ln.token(); !t.empty(); t = ln.token()) {
            const std::size_t colon = t.find(':');
            if (colon == std::string_view::npos)
                fail("libsvm model: " + what + ": \"" + std::string(t) + "\" is not index:value");
            const long idx = parse_long(t.substr(0, colon), what + " index");
            if (idx <= last)
                fail("libsvm model: " + what + ": feature indices must increase from 1");
            if (std::size_t(idx) > n)
                fail("libsvm model: " + what + " has feature index " + std::to_string(idx) +
                     ", but the model has " + std::to_string(n) + " features");
            m.sv[std::size_t(s) * n + std::size_t(idx - 1)] =
                finite(parse_double(t.substr(colon + 1), what + " value"),
                       "libsvm model: " + what + " value of feature index " + std::to_string(idx));
            last = idx;
        }
    }
    // libsvm reads total_sv vectors and ignores what follows: more lines mean a total_sv
    // that does not match the model (a truncated or edited file)
    long extra = 0;
    while (in.pos < in.text.size())
        if (SvmText ln{in.line()}; !ln.token().empty()) ++extra;
    if (extra)
        fail("libsvm model: total_sv is " + std::to_string(total_sv) + ", but " +
             std::to_string(extra) + " more support vector " +
             (extra == 1 ? "line follows" : "lines follow"));
    return m;
}

// ---- score transform (predict.c transform / piecewise_linear_mapping) -------------

// Slope and offset of the line through p1, p2 (find_linear_function_parameters), for
// a segment that is neither vertical nor horizontal.
void line_through(std::pair<double, double> p1, std::pair<double, double> p2, double& alpha,
                  double& beta) {
    if (p1.first == 0) {
        beta = p1.second;
        alpha = (p2.second - beta) / p2.first;
    } else {
        alpha = (p2.second - p1.second) / (p2.first - p1.first);
        beta = p1.second - (p1.first * alpha);
    }
}

// libvmaf's mapping: every segment is visited; a later match overrides an earlier one;
// points outside the knots extend the first/last segment. A non-increasing knot list
// stops the walk (libvmaf returns early with the value built so far).
void piecewise_linear(double x, const std::vector<std::pair<double, double>>& k, double& y) {
    if (k.size() <= 1) return;  // libvmaf: error return, output left as it was
    const std::size_t n_seg = k.size() - 1;
    double slope = 0.0, offset = 0.0;
    y = 0.0;
    for (std::size_t i = 0; i < n_seg; ++i) {
        if (!(k[i].first < k[i + 1].first && k[i].second <= k[i + 1].second)) return;
        const bool in_seg = k[i].first <= x && x <= k[i + 1].first;
        if (k[i].second == k[i + 1].second) {
            if (in_seg) y = k[i].second;
            if (i == 0 && x < k[i].first) y = k[i].second;
            if (i == n_seg - 1 && x > k[i + 1].first) y = k[i].second;
        } else {
            line_through(k[i], k[i + 1], slope, offset);
            if (in_seg) y = slope * x + offset;
            if (i == 0 && x < k[i].first) y = slope * x + offset;
            if (i == n_seg - 1 && x > k[i + 1].first) y = slope * x + offset;
        }
    }
}

double apply_transform(const ScoreTransform& t, double y_in) {
    double y_out;
    if (t.p0 || t.p1 || t.p2) {
        y_out = 0.;
        if (t.p0) y_out += *t.p0;
        if (t.p1) y_out += *t.p1 * y_in;
        if (t.p2) y_out += *t.p2 * y_in * y_in;
    } else {
        y_out = y_in;
    }
    if (t.knots_enabled) {
        const double y_stage = y_out;
        piecewise_linear(y_stage, t.knots, y_out);
    }
    if (t.out_lte_in) y_out = (y_out > y_in) ? y_in : y_out;
    if (t.out_gte_in) y_out = (y_out < y_in) ? y_in : y_out;
    return y_out;
}

ScoreTransform parse_transform(const json& st, bool force_enable) {
    if (!st.is_object()) fail(std::string("score_transform must be an object, not ") + st.type_name());
    ScoreTransform t;
    for (auto it = st.begin(); it != st.end(); ++it) {
        const std::string& key = it.key();
        const json& v = it.value();
        const std::string what = "score_transform." + key;
        if (key == "enabled") {
            if (!v.is_boolean()) fail(what + " must be true or false");
            t.enabled = v.get<bool>();
        } else if (key == "p0" || key == "p1" || key == "p2") {
            std::optional<double>& p = key == "p0" ? t.p0 : key == "p1" ? t.p1 : t.p2;
            if (v.is_null()) p.reset();
            else p = number(v, what);
        } else if (key == "knots") {
            t.knots.clear();
            t.knots_enabled = false;
            if (v.is_null()) continue;
            if (!v.is_array()) fail(what + " must be an array or null");
            if (v.size() > kMaxKnots) fail(what + " has more than 10 knots");
            for (std::size_t i = 0; i < v.size(); ++i) {
                const std::vector<double> p = number_array(v[i], what + "[" + std::to_string(i) + "]");
                if (p.size() != 2) fail(what + "[" + std::to_string(i) + "] must be [x, y]");
                t.knots.emplace_back(p[0], p[1]);
                // libvmaf's mapping gives up (returning 0 or a partial value) at a pair
                // whose x does not increase or whose y decreases.
                if (i > 0 && !(t.knots[i - 1].first < p[0] && t.knots[i - 1].second <= p[1]))
                    fail(what + "[" + std::to_string(i - 1) + "] and [" + std::to_string(i) +
                         "]: x must increase and y must not decrease from knot to knot");
            }
            t.knots_enabled = true;
        } else if (key == "out_lte_in" || key == "out_gte_in") {
            // libvmaf: a string; only "true" switches it on.
            const bool on = string_of(v, what) == "true";
            (key == "out_lte_in" ? t.out_lte_in : t.out_gte_in) = on;
        }
        // other keys are ignored, as libvmaf does
    }
    if (force_enable) t.enabled = true;
    return t;
}

} // namespace

// ---- loading ----------------------------------------------------------------------

/// Builds Model objects from parsed JSON (a friend of Model).
struct ModelLoader {
    static Model from_doc(const json& doc, const ModelConfig& cfg);
};

Model load_model(std::string_view json_text, const ModelConfig& cfg) {
    json doc;
    try {
        doc = json::parse(json_text.begin(), json_text.end());
    } catch (const json::exception& e) {
        const std::string where = json_error_path(json_text);
        fail("malformed JSON" + (where.empty() ? std::string() : " at " + where) + ": " + e.what());
    }
    if (!doc.is_object()) fail("the model JSON is not an object");
    if (doc.contains("model_dict") || !doc.contains("0")) return ModelLoader::from_doc(doc, cfg);
    // A model collection (libvmaf read_json_model.c model_collection_parse): "0" is the
    // model itself, "1", "2", ... (consecutive from 1) its bootstrap members.
    Model m;
    try {
        m = ModelLoader::from_doc(doc.at("0"), cfg);
    } catch (const Error& e) {
        throw Error(e.status, std::string("collection entry \"0\": ") + e.what());
    }
    for (unsigned i = 1; doc.contains(std::to_string(i)); ++i) {
        try {
            m.bootstrap_.push_back(ModelLoader::from_doc(doc.at(std::to_string(i)), cfg));
        } catch (const Error& e) {
            throw Error(e.status, "collection entry \"" + std::to_string(i) + "\": " + e.what());
        }
    }
    if (m.bootstrap_.empty())
        fail("model collection with an entry \"0\" but no \"1\": not a bootstrap collection");
    m.set_name(m.name());
    return m;
}

Model ModelLoader::from_doc(const json& doc, const ModelConfig& cfg) {
    if (!doc.is_object()) fail("the model JSON is not an object");
    const json& md = require(doc, "model_dict", "the model JSON");
    if (!md.is_object()) fail("model_dict must be an object");

    Model m;
    m.name_ = cfg.name.empty() ? "vmaf" : cfg.name;
    m.source_ = "model JSON";

    const std::string type = string_of(require(md, "model_type", "model_dict"), "model_type");
    if (type != "LIBSVMNUSVR" && type != "BOOTSTRAP_LIBSVMNUSVR" &&
        type != "RESIDUEBOOTSTRAP_LIBSVMNUSVR")
        fail("model_type \"" + type + "\" is not supported (LIBSVMNUSVR)");

    const std::string norm = string_of(require(md, "norm_type", "model_dict"), "norm_type");
    if (norm == "linear_rescale") m.linear_rescale_ = true;
    else if (norm == "none") m.linear_rescale_ = false;
    else fail("norm_type \"" + norm + "\" is not supported (linear_rescale, none)");

    const json& names = require(md, "feature_names", "model_dict");
    if (!names.is_array()) fail("feature_names must be an array");
    if (names.empty()) fail("feature_names is empty");
    if (names.size() > kMaxFeatures) fail("feature_names has more than 64 entries");
    const std::size_t n = names.size();
    for (std::size_t i = 0; i < n; ++i) {
        ModelFeature f;
        f.name = string_of(names[i], "feature_names[" + std::to_string(i) + "]");
        const auto ext = extractor_of_feature(f.name);
        if (!ext) {
            std::string known;
            for (const FeatureRecord* r : feature_records())
                known += (known.empty() ? "" : ", ") + std::string(r->name);
            fail("feature \"" + f.name + "\" is not provided by any vmaf_cuda extractor (" +
                 known + ")");
        }
        f.spec.extractor = *ext;
        m.features_.push_back(std::move(f));
    }

    // slopes/intercepts: element 0 is the model's output scale, 1..n the inputs'.
    const bool have_sl = md.contains("slopes"), have_ic = md.contains("intercepts");
    if (m.linear_rescale_ && (!have_sl || !have_ic))
        fail(std::string("missing key \"") + (have_sl ? "intercepts" : "slopes") +
             "\" in model_dict (needed by norm_type linear_rescale)");
    if (have_sl || have_ic) {
        const std::vector<double> sl = number_array(require(md, "slopes", "model_dict"), "slopes");
        const std::vector<double> ic =
            number_array(require(md, "intercepts", "model_dict"), "intercepts");
        if (sl.size() != n + 1)
            fail("slopes has " + std::to_string(sl.size()) + " entries; " +
                 std::to_string(n) + " features need " + std::to_string(n + 1));
        if (ic.size() != n + 1)
            fail("intercepts has " + std::to_string(ic.size()) + " entries; " +
                 std::to_string(n) + " features need " + std::to_string(n + 1));
        m.slope_ = sl[0];
        m.intercept_ = ic[0];
        for (std::size_t i = 0; i < n; ++i) {
            m.features_[i].slope = sl[i + 1];
            m.features_[i].intercept = ic[i + 1];
        }
        // With linear_rescale the output is divided by slopes[0] (denormalize) and each
        // input multiplied by its slope: a 0 gives an infinite score, or an input the
        // model ignores (and a division by 0 in the chroma correction).
        if (m.linear_rescale_)
            for (std::size_t i = 0; i <= n; ++i)
                if (sl[i] == 0.0)
                    fail("slopes[" + std::to_string(i) + "] is 0" +
                         (i == 0 ? std::string(" (the score's scale: it is divided by it)")
                                 : " (feature " + m.features_[i - 1].name + " would be ignored)") +
                         ": must be a non-zero number");
    }

    if (const auto it = md.find("feature_opts_dicts"); it != md.end()) {
        if (!it->is_array()) fail("feature_opts_dicts must be an array");
        if (it->size() > n)
            fail("feature_opts_dicts has " + std::to_string(it->size()) +
                 " entries for " + std::to_string(n) + " features");
        for (std::size_t i = 0; i < it->size(); ++i) {
            const json& d = (*it)[i];
            const std::string where = "feature_opts_dicts[" + std::to_string(i) + "]";
            if (!d.is_object()) fail(where + " must be an object");
            for (auto o = d.begin(); o != d.end(); ++o) {
                std::string val;
                if (o->is_number()) val = number_text(*o);
                else if (o->is_boolean()) val = o->get<bool>() ? "true" : "false";
                else if (o->is_string()) val = o->get<std::string>();
                else fail(where + "." + o.key() + " must be a number, boolean or string");
                try {
                    set_option(m.features_[i].spec, o.key(), val, VMAF_CUDA_EMODEL);
                } catch (const Error& e) {
                    fail(where + ": " + e.what());
                }
            }
        }
    }
    for (ModelFeature& f : m.features_) {
        f.key = feature_key(f.name, f.spec);
        f.log_name = std::string(feature_alias(f.key));
    }

    // libvmaf read_json_model.c: a number enables chroma_from_luma; predict.c then
    // corrects the input whose name contains "speed_chroma" from the one whose name
    // contains "adm3" (post_process_feature_from_another). libvmaf fails the prediction
    // when either substring matches more than one input, reads undefined values when one
    // matches none, and computes no score at all when the parameter is 0: refused here.
    if (const auto it = md.find("chroma_correction_parameter"); it != md.end()) {
        const double c = number(*it, "chroma_correction_parameter");
        if (c == 0.0)
            fail("chroma_correction_parameter 0: libvmaf computes no score with it");
        auto find_one = [&](const char* sub) {
            std::size_t idx = n, count = 0;
            for (std::size_t i = 0; i < n; ++i)
                if (m.features_[i].name.find(sub) != std::string::npos) {
                    idx = i;
                    ++count;
                }
            if (count != 1)
                fail(std::string("chroma_correction_parameter needs exactly one input whose name "
                                 "contains \"") + sub + "\", not " + std::to_string(count));
            return idx;
        };
        m.guiding_ = find_one("adm3");
        m.guided_ = find_one("speed_chroma");
        m.chroma_corr_ = true;
        m.chroma_param_ = c;
    }

    if (const auto it = md.find("score_clip"); it != md.end() && !cfg.disable_clip) {
        // With disable_clip libvmaf skips the array unread; so do we.
        const std::vector<double> c = number_array(*it, "score_clip");
        if (c.size() != 2) fail("score_clip must be [min, max]");
        // libvmaf clips to min then max: with min >= max every score would be max.
        if (!(c[0] < c[1]))
            fail("score_clip [" + number_text(json(c[0])) + ", " + number_text(json(c[1])) +
                 "]: min must be below max");
        m.clip_enabled_ = true;
        m.clip_min_ = c[0];
        m.clip_max_ = c[1];
    }

    // Without a score_transform block there is nothing to enable (libvmaf alike).
    if (const auto it = md.find("score_transform"); it != md.end())
        m.transform_ = parse_transform(*it, cfg.enable_transform);

    const std::string svm = string_of(require(md, "model", "model_dict"), "model");
    SvmModel s = parse_svm(svm, n);
    m.gamma_ = s.gamma;
    m.rho_ = s.rho;
    m.coef_ = std::move(s.coef);
    m.sv_ = std::move(s.sv);
    return m;
}

Model load_model_file(const std::string& path, const ModelConfig& cfg) {
    std::ifstream f(path, std::ios::binary);
    if (!f) fail("cannot read model file \"" + path + "\": " + std::strerror(errno));
    std::ostringstream ss;
    ss << f.rdbuf();
    if (f.bad()) fail("cannot read model file \"" + path + "\"");
    try {
        Model m = load_model(ss.str(), cfg);
        m.set_source(path);
        return m;
    } catch (const Error& e) {
        throw Error(e.status, "model file \"" + path + "\": " + e.what());
    }
}

// ---- prediction -------------------------------------------------------------------

void Model::set_name(std::string n) {
    name_ = std::move(n);
    // libvmaf names the members NAME_0001, NAME_0002, ... (read_json_model.c "%s_%04d").
    char suffix[16];
    for (std::size_t i = 0; i < bootstrap_.size(); ++i) {
        std::snprintf(suffix, sizeof suffix, "_%04u", unsigned(i + 1));
        bootstrap_[i].name_ = name_ + suffix;
    }
}

double Model::transform_and_clip(double y) const {
    if (transform_.enabled) y = apply_transform(transform_, y);
    if (clip_enabled_) {
        y = (y < clip_min_) ? clip_min_ : y;
        y = (y > clip_max_) ? clip_max_ : y;
    }
    return y;
}

double Model::predict(std::span<const double> values) const { return predict(values, 0); }

double Model::predict(std::span<const double> values, unsigned flags) const {
    const std::size_t n = features_.size();
    if (values.size() != n)
        throw Error(VMAF_CUDA_EINTERNAL, "model \"" + name_ + "\" takes " + std::to_string(n) +
                                             " features, got " + std::to_string(values.size()));
    // predict.c normalize(): slope * x + intercept, no clipping.
    double x[kMaxFeatures];
    for (std::size_t i = 0; i < n; ++i)
        x[i] = linear_rescale_ ? features_[i].slope * values[i] + features_[i].intercept
                               : values[i];
    // predict.c post_process_feature_from_another(model, node, c, 0.0, "adm3",
    // "speed_chroma"), in its operation order.
    if (chroma_corr_) {
        const ModelFeature& fg = features_[guiding_];
        const ModelFeature& fs = features_[guided_];
        double guiding = x[guiding_], guided = x[guided_];
        if (linear_rescale_) {
            guiding = (guiding - fg.intercept) / fg.slope;
            guided = (guided - fs.intercept) / fs.slope;
        }
        if (guided == 0.0) {
            double corrected = (-chroma_param_ * guiding) + chroma_param_;
            if (linear_rescale_) corrected = fs.slope * corrected + fs.intercept;
            x[guided_] = corrected;
        }
    }

    // svm.cpp svm_predict_values (regression): sum of coef * K(x, sv), then - rho.
    // RBF kernel: squared distance summed in feature order, then exp(-gamma * d2).
    double sum = 0;
    const double* sv = sv_.data();
    for (std::size_t s = 0; s < coef_.size(); ++s, sv += n) {
        double d2 = 0;
        for (std::size_t j = 0; j < n; ++j) {
            const double d = x[j] - sv[j];
            d2 += d * d;
        }
        sum += coef_[s] * std::exp(-gamma_ * d2);
    }
    sum -= rho_;

    double y = sum;
    if (linear_rescale_) y = (y - intercept_) / slope_;  // denormalize()
    if (transform_.enabled && !(flags & kPredictNoTransform)) y = apply_transform(transform_, y);
    if (clip_enabled_ && !(flags & kPredictNoClip)) {
        y = (y < clip_min_) ? clip_min_ : y;
        y = (y > clip_max_) ? clip_max_ : y;
    }
    return y;
}

BootstrapScores bootstrap_combine(const Model& member0, std::vector<double> raw) {
    const std::size_t n = raw.size();
    if (n == 0) throw Error(VMAF_CUDA_EINTERNAL, "bootstrap_combine: no member scores");
    double sum = 0.;
    for (double v : raw) sum += v;
    const double mean = sum / double(n);
    BootstrapScores out;
    out.bagging = mean;
    const double delta = 0.01;
    double plus = mean + delta, minus = mean - delta;
    double ssd = 0.;
    for (double v : raw) ssd += std::pow(v - mean, 2);
    out.stddev = std::sqrt(ssd / double(n));
    std::sort(raw.begin(), raw.end());
    auto percentile = [&](double perc) {
        const double p = perc * double(n - 1) / 100.;
        const int lo = int(std::floor(p)), hi = int(std::ceil(p));
        return lo == hi ? raw[lo] : raw[lo] * (hi - p) + raw[hi] * (p - lo);
    };
    out.ci_p95_lo = percentile(2.5);
    out.ci_p95_hi = percentile(97.5);
    out.bagging = member0.transform_and_clip(out.bagging);
    out.ci_p95_lo = member0.transform_and_clip(out.ci_p95_lo);
    out.ci_p95_hi = member0.transform_and_clip(out.ci_p95_hi);
    plus = member0.transform_and_clip(plus);
    minus = member0.transform_and_clip(minus);
    out.stddev *= (plus - minus) / (2.0 * delta);
    return out;
}

void Model::overload(std::string_view extractor, std::string_view option, std::string_view value) {
    // Validate even when no input uses this extractor (libvmaf then changes nothing).
    FeatureSpec probe{std::string(extractor), {}};
    extractor_features(extractor);
    set_option(probe, option, value, VMAF_CUDA_EINVAL);
    for (ModelFeature& f : features_) {
        if (f.spec.extractor != extractor) continue;
        f.spec.options[std::string(option)] = probe.options.at(std::string(option));
        f.key = feature_key(f.name, f.spec);
        f.log_name = std::string(feature_alias(f.key));
    }
    for (Model& b : bootstrap_) b.overload(extractor, option, value);
}

} // namespace vmaf_cuda::engine

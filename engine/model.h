// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file model.h
/// VMAF models (libvmaf's JSON model files: linear feature rescale, nu-SVR with an RBF
/// kernel, denormalisation, optional score transform, clip), the model and feature
/// strings of the C API, built-in models, and how libvmaf names features whose
/// extractor runs with non-default options.
///
/// Arithmetic followed (libvmaf v3.2.0): src/read_json_model.c (parsing), src/predict.c
/// (vmaf_predict_score_at_index: normalize, svm_predict, denormalize, transform, clip),
/// src/svm.cpp (svm_predict_values, Kernel::k_function RBF), src/feature/feature_name.c
/// and src/feature/alias.c (names), src/dict.c + src/opt.c (option values).
/// Errors are thrown as engine::Error (error.h) with a VmafCudaStatus.

#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vmaf_cuda::engine {

// ---------------------------------------------------------------------------------
// Extractor options and feature names
// ---------------------------------------------------------------------------------

/// Options of one extractor: option name -> value text, normalised the way libvmaf's
/// feature dictionary stores it (numbers: parsed as float, printed with %g, so 1.0 is
/// "1"; booleans "true"/"false"). std::map order = strcmp order = the order libvmaf
/// sorts options in when it builds a feature name.
using OptionMap = std::map<std::string, std::string>;

/// One extractor instance: "adm", "vif" or "motion" (libvmaf's integer extractors)
/// with its options. Two specs are the same instance when they compare equal.
struct FeatureSpec {
    std::string extractor;
    OptionMap options;
    bool operator==(const FeatureSpec&) const = default;
};

/// The features an extractor provides, with libvmaf's raw names, in libvmaf's
/// `provided_features` order (integer_adm.c, integer_vif.c, integer_motion.c), e.g.
/// "VMAF_integer_feature_adm2_score", "integer_adm_scale0", ...
/// Throws Error(EINVAL) for an unknown extractor.
std::vector<std::string> extractor_features(std::string_view extractor);

/// The extractor ("adm", "vif", "motion") that provides raw feature `name`, or nullopt.
std::optional<std::string> extractor_of_feature(std::string_view name);

/// libvmaf's log alias of a raw feature name (alias.c), e.g.
/// "VMAF_integer_feature_adm2_score" -> "integer_adm2"; other names are returned as is.
std::string_view feature_alias(std::string_view name);

/// Key under which libvmaf's feature collector stores `provided_name` when extractor
/// `spec` runs (feature_name.c): the raw name when every feature-naming option is at
/// its default, else alias(raw name) + "_<opt alias>_<%g value>" per non-default option
/// in option-name order ("_<alias>" alone for booleans), e.g. "integer_adm2_egl_1".
/// Model inputs are looked up by this key; logs show feature_alias(key).
std::string feature_key(std::string_view provided_name, const FeatureSpec& spec);

/// The name libvmaf v3.2.0 gives an extractor instance (fex_ctx_vector.c
/// feature_extractor_vector_append, via vmaf_feature_name_from_options): the extractor
/// name plus feature_key's suffix, e.g. "psnr", "cambi_hrs_1080". libvmaf registers one
/// instance per name: a later one of the same name is dropped with all its options.
std::string instance_key(const FeatureSpec& spec);

/// Value of `option` for `spec` as the extractor sees it (the given value or the
/// libvmaf default); booleans are 0/1. E.g. option_value(spec, "adm_enhn_gain_limit").
/// Throws Error(EINVAL) for an option the extractor does not have.
double option_value(const FeatureSpec& spec, std::string_view option);

/// Sets `option` of `spec` to `value` (text as a user wrote it; numeric text is
/// normalised like libvmaf's vmaf_feature_dictionary_set). Checks the option exists,
/// that vmaf_cuda supports it (today: vif_enhn_gain_limit and adm_enhn_gain_limit,
/// adm_csf_mode, adm_csf_scale, adm_csf_diag_scale, adm_norm_view_dist,
/// adm_ref_display_height, adm_noise_weight, adm_dlm_weight, adm_min_val) and the
/// value's type and libvmaf range. Throws Error(`status`) naming the problem.
void set_option(FeatureSpec& spec, std::string_view option, std::string_view value, int status);

/// Parses the C API `features` string: '|'-separated entries, each ':'-separated
/// `name=EXTRACTOR` plus `option=value` pairs (FFmpeg libvmaf filter syntax; a first
/// item without '=' is taken as the name, like libvmaf's CLI). '\' escapes the next
/// character. Empty string or empty entries: nothing. Throws Error(EINVAL).
std::vector<FeatureSpec> parse_feature_string(std::string_view text);

// ---------------------------------------------------------------------------------
// Models
// ---------------------------------------------------------------------------------

/// Load-time choices (libvmaf VmafModelConfig).
struct ModelConfig {
    std::string name;             ///< score key; empty -> "vmaf" (libvmaf's default)
    bool enable_transform = false; ///< apply the model's score_transform (VMAF_MODEL_FLAG_ENABLE_TRANSFORM)
    bool disable_clip = false;     ///< skip score_clip (VMAF_MODEL_FLAG_DISABLE_CLIP)
};

/// One model input.
struct ModelFeature {
    std::string name;      ///< as in the JSON, e.g. "VMAF_integer_feature_adm2_score"
    FeatureSpec spec;      ///< extractor + options (feature_opts_dicts, overloads)
    std::string key;       ///< feature_key(name, spec): what predict() reads, e.g. "integer_adm2_egl_1"
    std::string log_name;  ///< feature_alias(key): the name in logs, e.g. "integer_adm2"
    double slope = 1.0;    ///< linear rescale: slope * value + intercept
    double intercept = 0.0;
};

/// libvmaf's score_transform block.
struct ScoreTransform {
    bool enabled = false;   ///< JSON "enabled", or forced on by ModelConfig::enable_transform
    std::optional<double> p0, p1, p2; ///< polynomial p0 + p1*y + p2*y*y (absent/null: term off)
    bool knots_enabled = false;
    std::vector<std::pair<double, double>> knots; ///< piecewise-linear map, (x, y) pairs
    bool out_lte_in = false, out_gte_in = false;  ///< rectification
};

/// A loaded model. Immutable after loading except for set_name() / overload().
class Model {
public:
    /// Score key (e.g. "vmaf").
    const std::string& name() const { return name_; }
    /// Sets the score key; bootstrap members become NAME_0001, NAME_0002, ...
    void set_name(std::string n);
    /// Where it came from, for messages: "built-in vmaf_v0.6.1" or the file path.
    const std::string& source() const { return source_; }
    void set_source(std::string s) { source_ = std::move(s); }
    /// Built in (version=): its source is "built-in NAME" (model_spec.cpp).
    bool builtin() const { return source_.rfind("built-in ", 0) == 0; }
    /// Inputs in model order; predict() takes one value per entry.
    const std::vector<ModelFeature>& features() const { return features_; }

    /// Overloads an option of every input computed by `extractor` (libvmaf
    /// vmaf_model_feature_overload: the new value replaces the model's), then recomputes
    /// the keys. Throws Error(EINVAL) for an unknown extractor/option or a bad value.
    void overload(std::string_view extractor, std::string_view option, std::string_view value);

    /// Model output for one frame. `values[i]` = value of features()[i] (libvmaf's
    /// double). Follows predict.c exactly: rescale (no clip), the chroma correction
    /// (chroma_correction(): post_process_feature_from_another(c, 0.0, "adm3",
    /// "speed_chroma"): with x the rescaled inputs, g = denormalised x[adm3] and
    /// s = denormalised x[speed_chroma], both (x - intercept) / slope; if s == 0.0,
    /// x[speed_chroma] = slope * ((-c * g) + c) + intercept), svm_predict (RBF),
    /// denormalise, transform (when enabled), clip (unless disabled).
    /// Throws Error(EINTERNAL) when values.size() != features().size().
    double predict(std::span<const double> values) const;
    /// The same with libvmaf's VMAF_MODEL_FLAG_DISABLE_TRANSFORM / _DISABLE_CLIP.
    static constexpr unsigned kPredictNoTransform = 1, kPredictNoClip = 2;
    double predict(std::span<const double> values, unsigned flags) const;
    /// transform (when enabled) then clip (when enabled) of a model output: predict.c's
    /// transform(model, &y, 0); clip(model, &y, 0).
    double transform_and_clip(double y) const;

    /// Bootstrap members of a model collection (libvmaf VmafModelCollection, e.g.
    /// vmaf_b_v0.6.3: the model itself is entry "0", the 20 members "1".."20"); empty
    /// for a plain model. Members read the same features as the model.
    const std::vector<Model>& bootstrap() const { return bootstrap_; }

    // Parameters (read-only), for tests and diagnostics.
    bool linear_rescale() const { return linear_rescale_; }
    double out_slope() const { return slope_; }
    double out_intercept() const { return intercept_; }
    const ScoreTransform& transform() const { return transform_; }
    bool clip_enabled() const { return clip_enabled_; }
    double clip_min() const { return clip_min_; }
    double clip_max() const { return clip_max_; }
    std::size_t support_vector_count() const { return coef_.size(); }
    /// libvmaf's chroma_from_luma step (JSON "chroma_correction_parameter", the v1.0.16
    /// models): when set, predict() replaces the speed_chroma input by
    /// c - c * adm3 where speed_chroma is 0 (see predict()).
    bool chroma_correction() const { return chroma_corr_; }
    double chroma_correction_parameter() const { return chroma_param_; }

private:
    friend Model load_model(std::string_view json_text, const ModelConfig& cfg);
    friend struct ModelLoader;
    std::string name_, source_;
    std::vector<ModelFeature> features_;
    bool linear_rescale_ = true;
    double slope_ = 1.0, intercept_ = 0.0;  ///< model-level: (y - intercept) / slope
    bool clip_enabled_ = false;
    double clip_min_ = 0.0, clip_max_ = 0.0;
    ScoreTransform transform_;
    double gamma_ = 0.0, rho_ = 0.0;
    std::vector<double> coef_;  ///< one per support vector
    std::vector<double> sv_;    ///< support vectors, dense, coef_.size() x features_.size()
    std::vector<Model> bootstrap_;
    bool chroma_corr_ = false;
    double chroma_param_ = 0.0;
    std::size_t guiding_ = 0, guided_ = 0; ///< inputs named *adm3*, *speed_chroma*
};

/// A collection's per-frame summary (libvmaf predict.c vmaf_bootstrap_predict_score_at_index).
struct BootstrapScores {
    double bagging = 0, stddev = 0, ci_p95_lo = 0, ci_p95_hi = 0;
};

/// From the members' untransformed, unclipped scores `raw` (member order): bagging = mean
/// (summed in order), stddev = sqrt(sum pow(raw - mean, 2) / n), the 2.5th and 97.5th
/// percentiles of the sorted scores (linear between ranks, p = perc * (n - 1) / 100);
/// bagging, lo and hi then go through member0's transform and clip, and stddev is scaled
/// by the slope of that map at the mean (central difference over +-0.01).
/// `raw` must not be empty (Error EINTERNAL).
BootstrapScores bootstrap_combine(const Model& member0, std::vector<double> raw);

/// Parses a libvmaf model JSON document ({"model_dict": {...}}), or a model collection
/// ({"0": {...}, "1": {...}, ...}: "0" is the model, the others its bootstrap members).
/// Throws Error(VMAF_CUDA_EMODEL) for malformed JSON (the message names the path of the
/// offending value, e.g. "model_dict.slopes[2]", where the parser stopped), a missing key
/// (named), a value of the wrong type, counts that disagree (feature_names vs
/// slopes/intercepts/feature_opts_dicts/support-vector indices), an unsupported
/// model/kernel type, a feature no vmaf_cuda extractor provides (none of the registry's
/// records names it), or values that would make the scores meaningless (libvmaf v3.2.0
/// accepts most of them silently; its libsvm reader refuses "nan" and "inf" text, its
/// JSON reader takes 1e999 as infinity): a NaN or infinite number that feeds the score (slopes,
/// intercepts, score_clip, score_transform, chroma_correction_parameter, the SVM's rho,
/// coefficients and support-vector values), a gamma that is not above 0, no support
/// vectors, a slope of 0 with linear_rescale, score_clip with min >= max, knots whose x
/// does not increase or whose y decreases. Every message names the field.
Model load_model(std::string_view json_text, const ModelConfig& cfg);

/// Reads and parses a model file; errors name the path (EMODEL, also when unreadable).
Model load_model_file(const std::string& path, const ModelConfig& cfg);

// ---------------------------------------------------------------------------------
// Built-in models (generated at build time by tools/gen_builtin_models.py)
// ---------------------------------------------------------------------------------

/// JSON text of built-in model `version` (file stem, e.g. "vmaf_v0.6.1"), or nullopt.
std::optional<std::string_view> builtin_model_json(std::string_view version);
/// Versions of all built-in models, sorted.
std::vector<std::string> builtin_model_versions();

// ---------------------------------------------------------------------------------
// Model string (C API `models`)
// ---------------------------------------------------------------------------------

/// One entry of the models string.
struct ModelSpec {
    std::string version;              ///< built-in (or search-dir) model, or empty
    std::string path;                 ///< model file, or empty (exactly one of the two is set)
    std::optional<std::string> name;  ///< score key given with name=
    bool enable_transform = false;
    bool disable_clip = false;
    /// FEATURE.OPTION=VALUE entries (FFmpeg/libvmaf model overloads), in order:
    /// (extractor, option, value).
    std::vector<std::array<std::string, 3>> overloads;
};

/// Parses the C API `models` string: entries separated by '|', each a ':'-separated
/// list of key=value with keys version, path, name, enable_transform, disable_clip
/// (values true|false; a bare `enable_transform` / `disable_clip` means true, as in
/// libvmaf's CLI) and EXTRACTOR.OPTION (an overload, as FFmpeg's libvmaf filter
/// allows). '\' escapes the next character; the last of repeated keys wins; empty
/// entries are skipped. "" (or only empty entries) means "version=vmaf_v0.6.1".
/// Throws Error(EINVAL): unknown key, bad boolean, missing '=', both or neither of
/// version/path, a name= that is empty or not UTF-8.
std::vector<ModelSpec> parse_model_string(std::string_view text);

/// Loads the model of one entry: `version` from the built-in models, else from
/// `search_dir`/VERSION.json when search_dir is non-null; `path` from the file. Applies
/// enable_transform/disable_clip and the overloads. Score key: `name` when given, else
/// "vmaf" for the first entry (`first`) and the version or the file's stem (name
/// without folder and ".json") for the others.
/// (libvmaf's CLI and FFmpeg's libvmaf filter name every unnamed model "vmaf", so a
/// second unnamed model collides there; vmaf_cuda keeps "vmaf" for the first, which is
/// what both give for a single model, and names the others so they can coexist.)
/// Throws Error(EMODEL) for an unknown version or a bad file, Error(EINVAL) for bad
/// overloads.
Model resolve_model(const ModelSpec& spec, bool first, const char* search_dir);

} // namespace vmaf_cuda::engine

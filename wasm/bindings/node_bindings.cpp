// Embind surface of the Node module: the beacon validator for the collector and the statistics for the report.
#include <cstdint>
#include <string>
#include <vector>

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include "arm_comparison.hpp"
#include "beacon.hpp"
#include "paired_runs.hpp"
#include "quantile_ci.hpp"
#include "quantiles.hpp"
#include "sample_size.hpp"

using emscripten::val;

namespace h3probe {
namespace {

struct Validation {
    bool ok = false;
    std::string error;       // why the beacon was rejected
    std::string summary;     // the run summary recomputed from the samples (JSON): the client's own is not trusted
};

Validation validate_beacon(const std::string& text) {
    Validation v;
    DecodeResult r = decode_beacon(text);
    if (!r.beacon) {
        v.error = r.error;
        return v;
    }
    v.ok = true;
    // Not the whole beacon re-encoded: that doubled the collector's cost per beacon. Every known field was checked.
    v.summary = encode_summary(r.beacon->summary);
    return v;
}

// values: a Float64Array (or array of numbers); ps: probabilities in [0, 1]. Returns a plain array.
val js_quantiles(const val& values, const val& ps) {
    const auto q = quantiles(emscripten::convertJSArrayToNumberVector<double>(values),
                             emscripten::convertJSArrayToNumberVector<double>(ps));
    val out = val::array();
    for (std::size_t i = 0; i < q.size(); ++i) out.set(i, q[i]);
    return out;
}

// The per-protocol table as JSON (see arm_comparison.hpp).
std::string js_compare_arms(const val& h2, const val& h3) {
    return to_json(compare_arms(emscripten::convertJSArrayToNumberVector<double>(h2),
                                emscripten::convertJSArrayToNumberVector<double>(h3)));
}

// Typed array (or array of numbers) -> vector, by one TypedArray.set() into a view of the vector's memory: a bulk
// copy inside the JS engine (this is also what convertJSArrayToNumberVector does in Emscripten 3.1.6).
template <typename T>
std::vector<T> copy_array(const val& array) {
    std::vector<T> out(array["length"].as<std::size_t>());
    val(emscripten::typed_memory_view(out.size(), out.data())).call<void>("set", array);
    return out;
}

std::string error_json(const std::string& message) { return "{\"error\":\"" + message + "\",\"rows\":[]}"; }

// analyzeArms(h2Values: Float64Array, h2Runs: Int32Array, h3Values, h3Runs, ps: Float64Array,
//             method: "delta" | "bootstrap", confidence) -> JSON string
//   {"method","confidence","n_h2","n_h3","runs_h2","runs_h3","rows":[{"p","h2","h3","diff_ms","diff_pct",
//    "ci_ms":[lo,hi],"ci_pct":[lo,hi],"significant","ci_h2":[lo,hi],"ci_h3":[lo,hi]}]}
// h*Runs[i] is the run (page load) of h*Values[i]; the run is the unit of variance (quantile_ci.hpp). rows is empty if
// an arm has no values; bounds are null with fewer than 10 runs in an arm or when p is too extreme for the sample.
// Bad arguments give {"error": "...", "rows": []} instead of throwing into the report.
std::string js_analyze_arms(const val& h2_values, const val& h2_runs, const val& h3_values, const val& h3_runs,
                            const val& ps, const std::string& method, double confidence) {
    if (method != "delta" && method != "bootstrap") return error_json("method must be delta or bootstrap");
    if (!(confidence > 0 && confidence < 1)) return error_json("confidence must be in (0, 1)");
    const auto v2 = copy_array<double>(h2_values);
    const auto r2 = copy_array<std::int32_t>(h2_runs);
    const auto v3 = copy_array<double>(h3_values);
    const auto r3 = copy_array<std::int32_t>(h3_runs);
    if (v2.size() != r2.size() || v3.size() != r3.size()) return error_json("values and runs differ in length");
    return to_json(analyze_arms(make_run_clustered_sample(v2, r2), make_run_clustered_sample(v3, r3),
                                copy_array<double>(ps),
                                method == "delta" ? IntervalMethod::delta : IntervalMethod::bootstrap, confidence));
}

// pairedDifferences(diffs: Float64Array (one per run: median h3 - median h2), confidence) -> JSON string
//   {"n","mean","median","p10","p90","ci_mean":[lo,hi],"ci_median":[lo,hi]} (paired_runs.hpp)
std::string js_paired_differences(const val& diffs, double confidence) {
    return to_json(summarize_paired_differences(copy_array<double>(diffs), confidence));
}

// orderEffect(diffsH2First, diffsH3First, confidence) -> JSON string {"n_h2_first","n_h3_first","mean_h2_first",
//   "mean_h3_first","diff" (= mean_h3_first - mean_h2_first),"ci":[lo,hi],"p_value"} (paired_runs.hpp)
std::string js_order_effect(const val& diffs_h2_first, const val& diffs_h3_first, double confidence) {
    return to_json(order_effect(copy_array<double>(diffs_h2_first), copy_array<double>(diffs_h3_first), confidence));
}

// sampleSize(values: Float64Array, runs: Int32Array, p, mdeRelative, alpha, power) -> JSON string
//   {"runs_per_arm","requests_per_run","design_effect","quantile","formula"} (sample_size.hpp)
std::string js_sample_size(const val& values, const val& runs, double p, double mde_relative, double alpha,
                           double power) {
    const auto v = copy_array<double>(values);
    const auto r = copy_array<std::int32_t>(runs);
    if (v.size() != r.size()) return "{\"error\":\"values and runs differ in length\"}";
    return to_json(plan_sample_size(make_run_clustered_sample(v, r), p, mde_relative, alpha, power));
}

}  // namespace
}  // namespace h3probe

EMSCRIPTEN_BINDINGS(h3probe_node) {
    using h3probe::Validation;
    emscripten::value_object<Validation>("Validation")
        .field("ok", &Validation::ok)
        .field("error", &Validation::error)
        .field("summary", &Validation::summary);
    emscripten::function("validateBeacon", &h3probe::validate_beacon);
    emscripten::function("quantiles", &h3probe::js_quantiles);
    emscripten::function("compareArms", &h3probe::js_compare_arms);
    emscripten::function("analyzeArms", &h3probe::js_analyze_arms);
    emscripten::function("pairedDifferences", &h3probe::js_paired_differences);
    emscripten::function("orderEffect", &h3probe::js_order_effect);
    emscripten::function("sampleSize", &h3probe::js_sample_size);
    emscripten::constant("version", std::string(H3PROBE_VERSION));
}

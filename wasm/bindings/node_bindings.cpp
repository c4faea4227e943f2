// Embind surface of the Node module: the beacon validator for the collector and the statistics for the report.
#include <string>
#include <vector>

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include "arm_comparison.hpp"
#include "beacon.hpp"
#include "quantiles.hpp"

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
    emscripten::constant("version", std::string(H3PROBE_VERSION));
}

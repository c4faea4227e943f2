// Embind surface of the Node module: the beacon decoder for the collector (the stored rows, each request with its
// class), the report from stored run records, exact quantiles, and the schema (column lists, classes, limits) that the
// collector's store and the typings are made from. Plain JS values in and out: nothing here needs freeing. The shapes
// are declared in web/server/h3probeNode.d.ts, which a unit test checks against schema().
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include "beacon.hpp"
#include "comparability.hpp"
#include "connection_setup.hpp"
#include "confidence_sequence.hpp"
#include "json_writer.hpp"
#include "limits.hpp"
#include "platform.hpp"
#include "quantiles.hpp"
#include "report.hpp"
#include "report_aggregates.hpp"
#include "stored_run.hpp"

using emscripten::val;

namespace h3probe {
namespace {

// Typed array (or array of numbers) -> vector, by one TypedArray.set() into a view of the vector's memory.
template <typename T>
std::vector<T> copy_array(const val& array) {
    std::vector<T> out(array["length"].as<std::size_t>());
    val(emscripten::typed_memory_view(out.size(), out.data())).call<void>("set", array);
    return out;
}

val js(double v) { return std::isnan(v) ? val::null() : val(v); }
val js(const std::vector<std::uint8_t>& bytes) {
    // A copy the JS side owns: a view into WASM memory would dangle once the vector is gone.
    return val::global("Uint8Array").new_(emscripten::typed_memory_view(bytes.size(), bytes.data()));
}
val js(const std::vector<double>& xs) {
    return val::global("Float64Array").new_(emscripten::typed_memory_view(xs.size(), xs.data()));
}
val pair(double lo, double hi) {
    val a = val::array();
    a.set(0, js(lo));
    a.set(1, js(hi));
    return a;
}

val decode_error(const std::string& error) {
    val out = val::object();
    out.set("ok", false);
    out.set("error", error);
    return out;
}

// decodeBeaconColumns(text | bytes) -> {ok: false, error} | {ok: true, requests, texts, numbers, blobs}: the rows to
// store, column by column in the order of the core's lists, for h3probeNode.mjs to assemble (decodeBeacon there).
//   texts: one JSON array of every text column: the run's (H3PROBE_RUN_COLUMNS order), then each request's;
//   numbers: a Float64Array of every real and flag column in the same order (NaN for NULL), each request's durations
//            after its columns, then the byte length of each blob;
//   blobs: one Uint8Array holding arm_counts, then arm_<metric> for each metric, then the cold-setup record (setup).
// Building ~300 JS properties from here, one Embind call each, cost a third of the decoder's time; handing over one
// string, one Float64Array and one Uint8Array costs a few calls. Bytes (a Uint8Array or Buffer: the collector's
// request body as read) are copied into the decoder's memory by one TypedArray.set(); a string is first encoded to
// UTF-8 by the glue, a character at a time in JavaScript. Bytes that are not UTF-8 are not JSON, and refused as such.
val decode_beacon_columns_js(const val& input) {
    std::string text;
    if (input.isString()) {
        text = input.as<std::string>();
    } else if (input.instanceof(val::global("Uint8Array"))) {
        text.resize(input["length"].as<std::size_t>());
        val(emscripten::typed_memory_view(text.size(), reinterpret_cast<std::uint8_t*>(text.data())))
            .call<void>("set", input);
    } else {
        return decode_error("beacon must be a string or a Uint8Array");
    }
    DecodeResult decoded = decode_beacon(text);
    if (!decoded.beacon) return decode_error(decoded.error);
    const StoredBeacon stored = to_stored(*decoded.beacon);
    JsonWriter texts;
    std::vector<double> numbers;
    texts.begin_array();
    const auto put = [&](const auto& v) {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>) texts.string(v);
        else numbers.push_back(v);
    };
#define H3PROBE_PUT_COLUMN(type, name, limit, what) put(stored.run.name);
    H3PROBE_RUN_COLUMNS(H3PROBE_PUT_COLUMN)
    for (const StoredRequest& q : stored.requests) {
#define H3PROBE_PUT_REQUEST_COLUMN(type, name, limit, what) put(q.name);
        H3PROBE_REQUEST_COLUMNS(H3PROBE_PUT_REQUEST_COLUMN)
#undef H3PROBE_PUT_REQUEST_COLUMN
#define H3PROBE_PUT_DURATION(name, max, metric, what) put(q.name);
        H3PROBE_SAMPLE_DURATIONS(H3PROBE_PUT_DURATION)
#undef H3PROBE_PUT_DURATION
    }
#undef H3PROBE_PUT_COLUMN
    texts.end_array();
    std::vector<std::uint8_t> blobs(stored.run.arm_counts);
    numbers.push_back(static_cast<double>(stored.run.arm_counts.size()));
    for (const auto& m : stored.run.arm_metrics) {
        blobs.insert(blobs.end(), m.begin(), m.end());
        numbers.push_back(static_cast<double>(m.size()));
    }
    blobs.insert(blobs.end(), stored.run.setup.begin(), stored.run.setup.end());
    numbers.push_back(static_cast<double>(stored.run.setup.size()));
    val out = val::object();
    out.set("ok", true);
    out.set("requests", static_cast<double>(stored.requests.size()));
    out.set("texts", texts.take());
    out.set("numbers", js(numbers));
    out.set("blobs", js(blobs));
    return out;
}

val analysis_js(const ArmsAnalysis& a) {
    val out = val::object();
    out.set("method", std::string(a.method == IntervalMethod::delta ? "delta" : "bootstrap"));
    out.set("confidence", a.confidence);
    out.set("runs_paired", static_cast<double>(a.runs_paired));
    val rows = val::array();
    for (std::size_t i = 0; i < a.rows.size(); ++i) {
        const QuantileDifferenceRow& r = a.rows[i];
        val row = val::object();
        row.set("p", r.p);
        row.set("h2", js(r.h2));
        row.set("h3", js(r.h3));
        row.set("diff_ms", js(r.diff_ms));
        row.set("diff_pct", js(r.diff_pct));
        row.set("ci_ms", pair(r.ci_ms_lo, r.ci_ms_hi));
        row.set("ci_pct", pair(r.ci_pct_lo, r.ci_pct_hi));
        row.set("ci_pct_unbounded", r.ci_pct_unbounded);
        row.set("ci_h2", pair(r.ci_h2_lo, r.ci_h2_hi));
        row.set("ci_h3", pair(r.ci_h3_lo, r.ci_h3_hi));
        row.set("significant", r.significant);
        row.set("unfinished", r.unfinished);
        row.set("min_runs", r.min_runs == std::numeric_limits<std::size_t>::max() ? val::null() : val(static_cast<double>(r.min_runs)));
        row.set("corr", js(r.corr));
        // The anytime-valid interval (confidence_sequence.hpp) and the multiplicity adjustment (multiplicity.hpp).
        const std::pair<const char*, double> numbers[] = {
            {"se_ms", r.se_ms}, {"df", r.df}, {"p_value", r.p_value}, {"q_value", r.q_value}};
        for (const auto& [name, v] : numbers) row.set(name, js(v));
        row.set("cs_ms", pair(r.cs_ms_lo, r.cs_ms_hi));
        row.set("cs_pct", pair(r.cs_pct_lo, r.cs_pct_hi));
        const std::pair<const char*, bool> flags[] = {
            {"cs_pct_unbounded", r.cs_pct_unbounded}, {"significant_cs", r.significant_cs}, {"discovery", r.discovery}};
        for (const auto& [name, v] : flags) row.set(name, v);
        // The stopping line (confidence_sequence.hpp): +inf runs (Δ exactly 0) reaches JSON as null, as NaN does.
        row.set("cs_runs_needed", js(r.cs_runs_needed));
        row.set("cs_days_needed", js(r.cs_days_needed));
        row.set("cs_decided_look", r.cs_decided_look < 0 ? val::null() : val(r.cs_decided_look));
        row.set("cs_decided_side", r.cs_decided_side);
        row.set("cs_conflict", r.cs_conflict);
        rows.set(i, row);
    }
    out.set("rows", rows);
    return out;
}

val paired_js(const PairedDifferenceSummary& p) {
    val out = val::object();
    out.set("n", static_cast<double>(p.n));
    out.set("mean", js(p.mean));
    out.set("median", js(p.median));
    out.set("p10", js(p.p10));
    out.set("p90", js(p.p90));
    out.set("ci_mean", pair(p.ci_mean_lo, p.ci_mean_hi));
    out.set("ci_median", pair(p.ci_median_lo, p.ci_median_hi));
    return out;
}

val order_js(const OrderEffect& e) {
    val out = val::object();
    out.set("n_h2_first", static_cast<double>(e.n_h2_first));
    out.set("n_h3_first", static_cast<double>(e.n_h3_first));
    out.set("mean_h2_first", js(e.mean_h2_first));
    out.set("mean_h3_first", js(e.mean_h3_first));
    out.set("diff", js(e.diff));
    out.set("ci", pair(e.ci_lo, e.ci_hi));
    out.set("p_value", js(e.p_value));
    return out;
}

val sample_size_js(const SampleSizePlan& s) {
    val out = val::object();
    out.set("runs_per_arm", js(s.runs_per_arm));
    out.set("requests_per_run", js(s.requests_per_run));
    out.set("design_effect", js(s.design_effect));
    out.set("quantile", js(s.quantile));
    return out;
}

val cdf_js(const std::vector<double>& qs, const std::vector<double>& ps) {
    val out = val::array();
    for (std::size_t i = 0; i < qs.size(); ++i) out.set(i, pair(qs[i], ps[i]));
    return out;
}

val group_js(const GroupReport& g, const ReportOptions& o) {
    val out = val::object();
    out.set("name", g.name);
    out.set("runs", static_cast<double>(g.runs));
    out.set("requests", static_cast<double>(g.requests));
    // Excluded requests by class (both arms), then missing_metric; usable and pre-warm are not exclusions.
    val excluded = val::object();
    for (int c = 0; c < kRequestClassCount; ++c) {
        const auto cls = static_cast<RequestClass>(c);
        if (is_usable(cls) || cls == RequestClass::prewarm) continue;
        excluded.set(to_string(cls), static_cast<double>(g.classes[0][c] + g.classes[1][c]));
    }
    excluded.set("missing_metric", static_cast<double>(g.missing_metric));
    out.set("excluded", excluded);
    const auto& t = g.classes[1];
    const double fallbacks = static_cast<double>(t[static_cast<int>(RequestClass::fallback)]);
    val fallback = val::object();
    fallback.set("fallbacks", fallbacks);
    fallback.set("rate", js(fallback_rate(g)));
    fallback.set("completed", static_cast<double>(treatment_ok(g)));
    out.set("fallback", fallback);
    // Exclusions whose share differs between the arms (comparability.hpp): the verdict leads with them.
    val unequal = val::array();
    int k = 0;
    for (const auto& u : unequal_exclusions(g)) {
        val e = val::object();
        e.set("class", std::string(to_string(u.cls)));
        e.set("control", static_cast<double>(u.control));
        e.set("treatment", static_cast<double>(u.treatment));
        e.set("control_requests", static_cast<double>(u.control_requests));
        e.set("treatment_requests", static_cast<double>(u.treatment_requests));
        unequal.set(k++, e);
    }
    out.set("unequal", unequal);
    val arms = val::object();
    val h2 = val::object(), h3 = val::object();
    h2.set("n", static_cast<double>(g.analysis.n_h2));
    h2.set("runs", static_cast<double>(g.runs_h2));
    h3.set("n", static_cast<double>(g.analysis.n_h3));
    h3.set("runs", static_cast<double>(g.runs_h3));
    arms.set("h2", h2);
    arms.set("h3", h3);
    out.set("arms", arms);
    out.set("analysis", analysis_js(g.analysis));
    out.set("paired", g.paired ? paired_js(*g.paired) : val::null());
    out.set("order", g.order ? order_js(*g.order) : val::null());
    out.set("sampleSize", g.sample_size ? sample_size_js(*g.sample_size) : val::null());
    if (g.failures) {
        const FailureComparison& f = *g.failures;
        val failures = val::object();
        const std::pair<const char*, double> counts[] = {{"runs", static_cast<double>(f.runs)},
            {"failed_h2", static_cast<double>(f.failed_h2)}, {"requests_h2", static_cast<double>(f.requests_h2)},
            {"failed_h3", static_cast<double>(f.failed_h3)}, {"requests_h3", static_cast<double>(f.requests_h3)},
            {"rate_h2", f.rate_h2}, {"rate_h3", f.rate_h3}, {"diff", f.diff}};
        for (const auto& [name, v] : counts) failures.set(name, js(v));
        failures.set("ci", pair(f.ci_lo, f.ci_hi));
        failures.set("significant", f.significant);
        out.set("failures", failures);
    } else {
        out.set("failures", val::null());
    }
    if (!o.cdf_probabilities.empty()) {
        val cdf = val::object();
        cdf.set("h2", cdf_js(g.cdf_h2, o.cdf_probabilities));
        cdf.set("h3", cdf_js(g.cdf_h3, o.cdf_probabilities));
        out.set("cdf", cdf);
    }
    return out;
}

double number_or(const val& o, const char* key, double fallback) {
    const val v = o[key];
    return v.isNumber() ? v.as<double>() : fallback;
}

// The report options from JS; "" or why they are wrong.
std::string read_report_options(const val& options, ReportOptions& o) {
    const std::string method = options["method"].isString() ? options["method"].as<std::string>() : "delta";
    if (method != "delta" && method != "bootstrap") return std::string("method must be delta or bootstrap, got \"") + method + "\"";
    o.method = method == "delta" ? IntervalMethod::delta : IntervalMethod::bootstrap;
    o.confidence = number_or(options, "confidence", o.confidence);
    if (!(o.confidence > 0 && o.confidence < 1)) return "confidence must be in (0, 1)";
    if (!options["percentiles"].isUndefined()) o.percentiles = copy_array<double>(options["percentiles"]);
    if (!options["cdfProbabilities"].isUndefined()) o.cdf_probabilities = copy_array<double>(options["cdfProbabilities"]);
    o.cumulative = options["cumulative"].isTrue();
    const val size = options["sampleSize"];
    if (!size.isUndefined() && !size.isNull()) {
        o.size_p = number_or(size, "p", o.size_p);
        o.size_mde = number_or(size, "mde", o.size_mde);
        o.size_alpha = number_or(size, "alpha", o.size_alpha);
        o.size_power = number_or(size, "power", o.size_power);
    }
    return "";
}

// The aggregates' structures to and from JavaScript objects, by their fields() (report_aggregates.hpp), where each
// structure's names are declared once: numbers, texts, exact sums as their text, lists, and maps as lists of entries.
template <class T> struct is_vector : std::false_type {};
template <class T> struct is_vector<std::vector<T>> : std::true_type {};
template <class T> struct is_list : is_vector<T> {};
template <class T, std::size_t N> struct is_list<std::array<T, N>> : std::true_type {};
template <class T> struct is_map : std::false_type {};
template <class K, class V> struct is_map<std::map<K, V>> : std::true_type {};

template <class T>
val to_js(const T& x) {
    if constexpr (std::is_same_v<T, std::string>) {
        return val(x);
    } else if constexpr (std::is_same_v<T, ExactSum>) {
        return val(x.text());
    } else if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) {
        return val(static_cast<double>(x));
    } else if constexpr (is_list<T>::value) {
        val out = val::array();
        std::size_t i = 0;
        for (const auto& e : x) out.set(i++, to_js(e));
        return out;
    } else if constexpr (is_map<T>::value) {
        return to_js(entries(x));
    } else {
        val out = val::object();
        fields(const_cast<T&>(x), [&](const char* name, const auto& member) { out.set(name, to_js(member)); });
        return out;
    }
}

// Reads x from v; the first problem goes to error, naming the field, and the rest is skipped.
template <class T>
void from_js(const val& v, T& x, const char* name, std::string& error) {
    if (!error.empty()) return;
    const auto wrong = [&](const char* what) { error = std::string(name) + " is not " + what; };
    if constexpr (std::is_same_v<T, std::string>) {
        if (v.isString()) x = v.as<std::string>();
        else wrong("a text");
    } else if constexpr (std::is_same_v<T, ExactSum>) {
        if (!v.isString() || !x.parse(v.as<std::string>())) wrong("an exact sum (hexadecimal digits)");
    } else if constexpr (std::is_same_v<T, SampleKind>) {
        const double d = v.isNumber() ? v.as<double>() : -1;
        if (d == 0 || d == 1 || d == 2) x = static_cast<SampleKind>(d);
        else wrong("a sample (0 h2, 1 h3, 2 diff)");
    } else if constexpr (std::is_integral_v<T>) {
        const double d = v.isNumber() ? v.as<double>() : -1;
        if (d >= 0 && d == std::floor(d)) x = static_cast<T>(d);
        else wrong("a count");
    } else if constexpr (std::is_floating_point_v<T>) {
        if (v.isNumber()) x = v.as<double>();
        else wrong("a number");
    } else if constexpr (is_list<T>::value) {
        if (!v.isArray()) return wrong("a list");
        const auto n = v["length"].as<std::size_t>();
        if constexpr (is_vector<T>::value) x.resize(n);
        else if (n != x.size()) return wrong(("a list of " + std::to_string(x.size())).c_str());
        for (std::size_t i = 0; i < n && error.empty(); ++i) from_js(v[i], x[i], name, error);
    } else if constexpr (is_map<T>::value) {
        decltype(entries(x)) list;
        from_js(v, list, name, error);
        from_entries(list, x);
    } else {
        if (v.isNull() || v.isUndefined() || v.typeOf().as<std::string>() != "object") return wrong("an object");
        fields(x, [&](const char* field, auto& member) { from_js(v[field], member, field, error); });
    }
}

// Each structure's field names (schema().aggregates.fields), as a visitor that only reads names.
template <class T>
val field_names() {
    val out = val::array();
    std::size_t i = 0;
    T x{};
    fields(x, [&](const char* name, const auto&) { out.set(i++, std::string(name)); });
    return out;
}

// inferReport(aggregates, options, round) -> {error, needs: Needs | null, groups}: one round of the report from a
// warehouse's aggregates (report_aggregates.hpp; the structures are typed in h3probeNode.d.ts). While needs is not
// null, add what it asks and call again with the next round; past the core's limit of rounds, error says so.
val infer_report_js(const val& aggregates, const val& options, int round) {
    val out = val::object();
    out.set("groups", val::array());
    out.set("needs", val::null());
    ReportOptions o;
    std::string error = read_report_options(options, o);
    if (error.empty() && o.method != IntervalMethod::delta) error = "aggregates give delta intervals only (the bootstrap needs every value)";
    Aggregates a;
    if (error.empty()) from_js(aggregates, a, "aggregates", error);
    if (error.empty()) error = check_aggregates(a);
    if (!error.empty()) {
        out.set("error", "the aggregates do not read: " + error);
        return out;
    }
    Needs needs;
    const std::vector<GroupReport> reports = infer_report(a.groups, o, needs);
    if (!needs.empty()) {
        out.set("error", next_round_error(round));
        out.set("needs", to_js(needs));
        return out;
    }
    out.set("error", std::string());
    val list = val::array();
    for (std::size_t i = 0; i < reports.size(); ++i) list.set(i, group_js(reports[i], o));
    out.set("groups", list);
    return out;
}

// sampleBiases(facts, groups) -> [{kind, n, of, group?, rest_n?, rest_of?}]: what makes the sample unlike the users'
// (comparability.hpp). facts: {runs, failed, timedOut, loadErrors, mainThread}; groups: [{name, fallbacks, completed}],
// overall first. A count that is not a whole number from 0 reads as 0.
val sample_biases_js(const val& facts, const val& groups) {
    const auto count = [](const val& o, const char* key) {
        const double v = number_or(o, key, 0);
        return v >= 0 && v < 9.0e15 ? static_cast<std::size_t>(v) : std::size_t{0};
    };
    const SampleFacts f{count(facts, "runs"), count(facts, "failed"), count(facts, "timedOut"), count(facts, "loadErrors"),
                        count(facts, "mainThread")};
    std::vector<GroupFallbacks> gs;
    for (std::size_t i = 0, n = groups["length"].isNumber() ? groups["length"].as<std::size_t>() : 0; i < n; ++i) {
        const val g = groups[i];
        gs.push_back({g["name"].isString() ? g["name"].as<std::string>() : std::string(), count(g, "fallbacks"), count(g, "completed")});
    }
    val out = val::array();
    int k = 0;
    for (const SampleBias& b : sample_biases(f, gs)) {
        val e = val::object();
        e.set("kind", std::string(to_string(b.kind)));
        e.set("n", static_cast<double>(b.n));
        e.set("of", static_cast<double>(b.of));
        if (b.kind == SampleBiasKind::fallback_gap) {
            e.set("group", b.group);
            e.set("rest_n", static_cast<double>(b.rest_n));
            e.set("rest_of", static_cast<double>(b.rest_of));
        }
        out.set(k++, e);
    }
    return out;
}

val groups_js(const std::vector<GroupReport>& groups, const ReportOptions& o) {
    val out = val::array();
    for (std::size_t i = 0; i < groups.size(); ++i) out.set(i, group_js(groups[i], o));
    return out;
}

// One group of the connection-setup view (connection_setup.hpp).
val setup_group_js(const SetupGroup& g) {
    val group = val::object();
    group.set("name", g.name);
    group.set("runs", static_cast<double>(g.runs));
    group.set("paired", static_cast<double>(g.paired));
    val outcomes = val::object();
    for (int p = 0; p < 2; ++p) {
        val by = val::object();
        for (int k = 0; k < kSetupOutcomes; ++k) by.set(to_string(static_cast<SetupOutcome>(k)), static_cast<double>(g.outcomes[p][k]));
        outcomes.set(p ? "h3" : "h2", by);
    }
    group.set("outcomes", outcomes);
    val first = val::object();
    int code = 0;
#define H3PROBE_FIRST_H3_JS(name) first.set(#name, static_cast<double>(g.first_h3[code++]));
    H3PROBE_FIRST_H3(H3PROBE_FIRST_H3_JS)
#undef H3PROBE_FIRST_H3_JS
    group.set("firstH3", first);
    val metrics = val::object();
    for (int m = 0; m < kSetupMetrics; ++m) {
        const GroupReport& gr = g.metric[m];
        val metric = val::object();
        metric.set("analysis", analysis_js(gr.analysis));
        metric.set("paired", gr.paired ? paired_js(*gr.paired) : val::null());
        metrics.set(to_string(static_cast<SetupMetric>(m)), metric);
    }
    group.set("metrics", metrics);
    return group;
}

std::vector<std::string> strings(const val& list) {
    std::vector<std::string> out;
    if (list.isUndefined() || list.isNull()) return out;
    for (std::size_t i = 0, n = list["length"].as<std::size_t>(); i < n; ++i) out.push_back(list[i].as<std::string>());
    return out;
}

// buildReport(records: Uint8Array | Uint8Array[], request: {groups, days?, setup?}, options) -> {error, groups, days,
// looks, setup}: the report of one pass over the records (report.hpp, ReportRequest: each record's layout), with the
// daily series (days, looks: empty without request.days) and the connection-setup view (setup: null without
// request.setup).
val build_report_js(const val& records, const val& request, const val& options) {
    val out = val::object();
    for (const char* list : {"groups", "days", "looks"}) out.set(list, val::array());
    out.set("setup", val::null());
    ReportRequest r;
    if (std::string error = read_report_options(options, r.options); !error.empty()) {
        out.set("error", error);
        return out;
    }
    r.groups = strings(request["groups"]);
    r.days = strings(request["days"]);
    r.setup = request["setup"].isTrue();
    if (const val e = request["estimand"]; !e.isUndefined() && !parse_estimand(e.as<std::string>(), r.estimand)) {
        out.set("error", "unknown estimand \"" + e.as<std::string>() + "\"");
        return out;
    }
    // One Uint8Array, or an array of them (SQLite's chunks, so that JavaScript never concatenates them), copied once
    // into memory that is not zeroed first: fresh pages touched once (their first touch is much of a report's cost).
    const val chunks = records.isArray() ? records : val::array(std::vector<val>{records});
    const auto count = chunks["length"].as<std::size_t>();
    std::size_t total = 0;
    for (std::size_t i = 0; i < count; ++i) total += chunks[i]["length"].as<std::size_t>();
    std::unique_ptr<std::uint8_t[]> bytes(new std::uint8_t[total]);
    for (std::size_t i = 0, at = 0; i < count; ++i) {
        const val chunk = chunks[i];
        const auto n = chunk["length"].as<std::size_t>();
        val(emscripten::typed_memory_view(n, bytes.get() + at)).call<void>("set", chunk);
        at += n;
    }
    SetupReport setup;
    const Report report = build_report(bytes.get(), total, r, &setup);
    out.set("error", report.error);
    if (!report.error.empty()) return out;
    out.set("groups", groups_js(report.groups, r.options));
    ReportOptions series = r.options;
    series.cdf_probabilities.clear();
    out.set("days", groups_js(report.days, series));
    out.set("looks", groups_js(report.looks, series));
    if (r.setup) {
        val groups = val::array();
        for (std::size_t i = 0; i < setup.groups.size(); ++i) groups.set(i, setup_group_js(setup.groups[i]));
        out.set("setup", groups);
    }
    return out;
}

// values: a Float64Array (or array of numbers); ps: probabilities in [0, 1]. Returns a Float64Array.
val quantiles_js(const val& values, const val& ps) {
    return js(quantiles(copy_array<double>(values), copy_array<double>(ps)));
}

val column_list(std::initializer_list<const char*> types, std::initializer_list<const char*> names,
                std::initializer_list<const char*> whats) {
    val out = val::array();
    auto t = types.begin();
    auto w = whats.begin();
    std::size_t i = 0;
    for (const char* name : names) {
        val c = val::object();
        c.set("name", std::string(name));
        c.set("type", std::string(*t++));
        c.set("description", std::string(*w++));
        out.set(i++, c);
    }
    return out;
}

// A closed list of X(name, what) entries, through H3PROBE_LIST_ENTRY, as [{name, description}].
#define H3PROBE_LIST_ENTRY(name, what) {#name, what},
val named_list(std::initializer_list<std::pair<const char*, const char*>> entries) {
    val out = val::array();
    std::size_t i = 0;
    for (const auto& [name, what] : entries) {
        val d = val::object();
        d.set("name", std::string(name));
        d.set("description", std::string(what));
        out.set(i++, d);
    }
    return out;
}

// The stored form's column lists, the request classes, the metrics and the limits, as the core defines them.
val schema_js() {
    val out = val::object();
#define H3PROBE_TYPE(type, name, limit, what) #type,
#define H3PROBE_NAME(type, name, limit, what) #name,
#define H3PROBE_WHAT(type, name, limit, what) what,
    out.set("runColumns", column_list({H3PROBE_RUN_COLUMNS(H3PROBE_TYPE)}, {H3PROBE_RUN_COLUMNS(H3PROBE_NAME)},
                                      {H3PROBE_RUN_COLUMNS(H3PROBE_WHAT)}));
    out.set("requestColumns", column_list({H3PROBE_REQUEST_COLUMNS(H3PROBE_TYPE)},
                                          {H3PROBE_REQUEST_COLUMNS(H3PROBE_NAME)},
                                          {H3PROBE_REQUEST_COLUMNS(H3PROBE_WHAT)}));
#undef H3PROBE_TYPE
#undef H3PROBE_NAME
#undef H3PROBE_WHAT
    val durations = val::array();
    std::size_t i = 0;
#define H3PROBE_DURATION(name, max, metric, what)   \
    {                                               \
        val d = val::object();                      \
        d.set("name", std::string(#name));          \
        d.set("max", static_cast<double>(max));     \
        d.set("metric", metric);                    \
        d.set("description", std::string(what));    \
        durations.set(i++, d);                      \
    }
    H3PROBE_SAMPLE_DURATIONS(H3PROBE_DURATION)
#undef H3PROBE_DURATION
    out.set("durations", durations);
    val metrics = val::array();
    const auto names = metric_names();
    for (std::size_t k = 0; k < names.size(); ++k) metrics.set(k, names[k]);
    out.set("metrics", metrics);
    val classes = val::array();
    for (int c = 0; c < kRequestClassCount; ++c) {
        const auto cls = static_cast<RequestClass>(c);
        val d = val::object();
        d.set("name", std::string(to_string(cls)));
        d.set("usable", is_usable(cls));
        d.set("role", std::string(to_string(role_of(cls))));
        d.set("holdsValue", holds_value(cls));
        d.set("description", std::string(describe(cls)));
        classes.set(c, d);
    }
    out.set("requestClasses", classes);
    val estimands = val::array();
#define H3PROBE_ESTIMAND_ENTRY(name, what)                                                              \
    {                                                                                                   \
        val e = val::object();                                                                          \
        e.set("name", std::string(#name));                                                              \
        e.set("bit", static_cast<double>(estimand_bit(Estimand::name)));                                 \
        e.set("description", std::string(what));                                                        \
        estimands.call<void>("push", e);                                                                \
    }
    H3PROBE_ESTIMANDS(H3PROBE_ESTIMAND_ENTRY)
#undef H3PROBE_ESTIMAND_ENTRY
    out.set("estimands", estimands);
    out.set("unfinishedValue", kUnfinishedValue);
    out.set("loadErrorReasons", named_list({H3PROBE_LOAD_ERROR_REASONS(H3PROBE_LIST_ENTRY)}));
    out.set("workerFallbackReasons", named_list({H3PROBE_WORKER_FALLBACK_REASONS(H3PROBE_LIST_ENTRY)}));
    val limits = val::object();
    limits.set("maxBeaconBytes", static_cast<double>(kMaxBeaconBytes));
    limits.set("maxJsonDepth", static_cast<double>(kMaxJsonDepth));
    limits.set("maxSamples", static_cast<double>(kMaxSamples));
    limits.set("maxErrors", static_cast<double>(kMaxErrors));
    limits.set("maxErrorChars", static_cast<double>(kMaxErrorChars));
    limits.set("minRunsForInterval", static_cast<double>(kMinRunsForInterval));
    limits.set("maxPayloadBytes", static_cast<double>(kMaxPayloadBytes));
    limits.set("csTightestRuns", kCsTightestRuns);
    limits.set("maxReportGroups", static_cast<double>(kMaxReportGroups));
    limits.set("runRecordHeadBytes", static_cast<double>(kArmCountsHeadBytes));
    limits.set("maxDurationMs", kMaxDurationMs);
    limits.set("unequalExclusionShare", kUnequalExclusionShare);
    limits.set("unequalExclusionMinRequests", static_cast<double>(kUnequalExclusionMinRequests));
    limits.set("failedRunShare", kFailedRunShare);
    limits.set("failedRunMinRuns", static_cast<double>(kFailedRunMinRuns));
    limits.set("loadErrorShare", kLoadErrorShare);
    limits.set("loadErrorMinLoads", static_cast<double>(kLoadErrorMinLoads));
    limits.set("mainThreadShare", kMainThreadShare);
    limits.set("mainThreadMinRuns", static_cast<double>(kMainThreadMinRuns));
    limits.set("fallbackGapShare", kFallbackGapShare);
    limits.set("fallbackGapMinRequests", static_cast<double>(kFallbackGapMinRequests));
    out.set("limits", limits);
    // The report's defaults (ReportOptions) and the daily series' and connection-setup view's percentiles.
    const ReportOptions defaults;
    val report_defaults = val::object();
    report_defaults.set("percentiles", val::array(defaults.percentiles));
    report_defaults.set("confidence", defaults.confidence);
    val size = val::object();
    size.set("p", defaults.size_p);
    size.set("mde", defaults.size_mde);
    size.set("alpha", defaults.size_alpha);
    size.set("power", defaults.size_power);
    report_defaults.set("sampleSize", size);
    report_defaults.set("seriesPercentiles", val::array(kSeriesPercentiles));
    out.set("reportDefaults", report_defaults);
    // The aggregates that cross from a warehouse (report_aggregates.hpp): their format and each structure's fields.
    val aggregates = val::object();
    aggregates.set("version", kAggregatesVersion);
    val fields_of = val::object();
    fields_of.set("Aggregates", field_names<Aggregates>());
    fields_of.set("GroupAggregates", field_names<GroupAggregates>());
    fields_of.set("FailureSums", field_names<FailureSums>());
    fields_of.set("SampleAggregates", field_names<SampleAggregates>());
    fields_of.set("MomentSums", field_names<MomentSums>());
    fields_of.set("RankValue", field_names<RankValue>());
    fields_of.set("BelowEntry", field_names<BelowEntry>());
    fields_of.set("CrossEntry", field_names<CrossEntry>());
    fields_of.set("Needs", field_names<Needs>());
    fields_of.set("RankNeed", field_names<Needs::Rank>());
    fields_of.set("BelowNeed", field_names<Needs::Below>());
    fields_of.set("CrossNeed", field_names<Needs::Cross>());
    aggregates.set("fields", fields_of);
    out.set("aggregates", aggregates);
    out.set("runRecordVersion", static_cast<double>(kRunRecordVersion));
    // The connection-setup view's outcomes per protocol and metrics (connection_setup.hpp).
    out.set("setupOutcomes", named_list({H3PROBE_SETUP_OUTCOMES(H3PROBE_LIST_ENTRY)}));
    val setup_metrics = val::array();
    int setup_metric = 0;
#define H3PROBE_SETUP_METRIC_JS(name, paired, what) \
    {                                               \
        val d = val::object();                      \
        d.set("name", std::string(#name));          \
        d.set("paired", paired);                    \
        d.set("description", std::string(what));   \
        setup_metrics.set(setup_metric++, d);       \
    }
    H3PROBE_SETUP_METRICS(H3PROBE_SETUP_METRIC_JS)
#undef H3PROBE_SETUP_METRIC_JS
    out.set("setupMetrics", setup_metrics);
    val first_h3 = val::array();
    int first_code = 0;
#define H3PROBE_FIRST_H3_NAME(name) first_h3.set(first_code++, std::string(#name));
    H3PROBE_FIRST_H3(H3PROBE_FIRST_H3_NAME)
#undef H3PROBE_FIRST_H3_NAME
    out.set("setupFirstH3", first_h3);
    out.set("setupRecordVersion", static_cast<double>(kSetupRecordVersion));
    // The Server-Timing metric the origins name the protocol with, and the server names classify() knows.
    out.set("serverTimingProtocol", std::string(kServerTimingProtocol));
    val server_protocols = val::object();
#define H3PROBE_SERVER_PROTOCOL_SET(server, next_hop) server_protocols.set(server, std::string(next_hop));
    H3PROBE_SERVER_PROTOCOLS(H3PROBE_SERVER_PROTOCOL_SET)
#undef H3PROBE_SERVER_PROTOCOL_SET
    out.set("serverProtocols", server_protocols);
    return out;
}

}  // namespace
}  // namespace h3probe

EMSCRIPTEN_BINDINGS(h3probe_node) {
    emscripten::function("decodeBeaconColumns", &h3probe::decode_beacon_columns_js);
    emscripten::function("buildReport", &h3probe::build_report_js);
    emscripten::function("inferReport", &h3probe::infer_report_js);
    emscripten::function("sampleBiases", &h3probe::sample_biases_js);
    emscripten::function("quantiles", &h3probe::quantiles_js);
    emscripten::function("schema", &h3probe::schema_js);
    emscripten::constant("version", std::string(H3PROBE_VERSION));
}

// Embind surface of the Node module: the beacon decoder for the collector (the stored rows, each request with its
// class), the report from stored run records, exact quantiles, and the schema (column lists, classes, limits) that the
// collector's store and the typings are made from. Plain JS values in and out: nothing here needs freeing. The shapes
// are declared in web/server/h3probeNode.d.ts, which a unit test checks against schema().
//
// Each structure that crosses is declared once below as an Embind value_object (EMSCRIPTEN_BINDINGS at the end): its
// fields by member, or by a getter where JavaScript sees the field otherwise (a NaN as null, two bounds as an
// interval, an enum as its name). Vectors, arrays and optionals cross as plain arrays and null (the BindingTypes
// below), not as Embind's vector handles, which would need deleting.
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include "beacon.hpp"
#include "comparability.hpp"
#include "confidence_sequence.hpp"
#include "connection_setup.hpp"
#include "limits.hpp"
#include "platform.hpp"
#include "quantiles.hpp"
#include "report.hpp"
#include "report_aggregates.hpp"
#include "stored_run.hpp"

using emscripten::val;

namespace h3probe {
namespace js {

// A number that reads as null when it is NaN (no value: SQL NULL, no interval bound).
struct Num {
    double v;
};
// [lower, upper], each a Num.
struct Interval {
    double lo, hi;
};

template <class T> struct is_vector : std::false_type {};
template <class T> struct is_vector<std::vector<T>> : std::true_type {};
template <class T> struct is_array : std::false_type {};
template <class T, std::size_t N> struct is_array<std::array<T, N>> : std::true_type {};
template <class T> struct is_map : std::false_type {};
template <class K, class V> struct is_map<std::map<K, V>> : std::true_type {};

// A C++ value as JavaScript: a registered value_object through Embind, the rest by its type.
template <class T>
val to_val(const T& x) {
    if constexpr (std::is_same_v<T, ExactSum>) {
        return val(x.text());
    } else if constexpr (std::is_enum_v<T> || (std::is_integral_v<T> && sizeof(T) > 4)) {
        return val(static_cast<double>(x));  // 64-bit integers have no Embind type without BigInt
    } else if constexpr (std::is_same_v<T, std::vector<std::uint8_t>>) {
        // A copy the JS side owns: a view into WASM memory would dangle once the vector is gone.
        return val::global("Uint8Array").new_(emscripten::typed_memory_view(x.size(), x.data()));
    } else if constexpr (is_vector<T>::value || is_array<T>::value) {
        val out = val::array();
        for (std::size_t i = 0; i < x.size(); ++i) out.set(i, to_val(x[i]));
        return out;
    } else if constexpr (is_map<T>::value) {
        return to_val(entries(x));
    } else {
        return val(x);
    }
}

// Each aggregate structure's field names (below), as declared by its value_object.
template <class T> const std::vector<std::string>& field_names();

// Reads x from v, checking its type; the first problem goes to error, naming the field, and the rest is skipped.
// A structure reads through its value_object, whose setters call this for each field.
std::string* read_error = nullptr;

template <class T>
void read(const val& v, T& x, const char* name) {
    std::string& error = *read_error;
    if (!error.empty()) return;
    const auto wrong = [&](const std::string& what) { error = std::string(name) + " is not " + what; };
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
    } else if constexpr (is_vector<T>::value || is_array<T>::value) {
        if (!v.isArray()) return wrong("a list");
        const auto n = v["length"].as<std::size_t>();
        if constexpr (is_vector<T>::value) x.resize(n);
        else if (n != x.size()) return wrong("a list of " + std::to_string(x.size()));
        for (std::size_t i = 0; i < n && error.empty(); ++i) read(v[i], x[i], name);
    } else if constexpr (is_map<T>::value) {
        decltype(entries(x)) list;
        read(v, list, name);
        from_entries(list, x);
    } else {
        if (v.isNull() || v.isUndefined() || v.typeOf().as<std::string>() != "object") return wrong("an object");
        // Embind refuses an object without one of the fields (a TypeError); a missing field reads as undefined here.
        val whole = val::object();
        val::global("Object").call<void>("assign", whole, v);
        for (const std::string& field : field_names<T>())
            if (!whole.call<bool>("hasOwnProperty", field)) whole.set(field, val::undefined());
        x = whole.as<T>();
    }
}

template <class C, double C::*M> Num num(const C& c) { return {c.*M}; }
template <class C, double C::*Lo, double C::*Hi> Interval interval(const C& c) { return {c.*Lo, c.*Hi}; }
template <class C, class V> void output_only(C&, V) {}

}  // namespace js
}  // namespace h3probe

namespace emscripten {
namespace internal {
// Types that cross as JavaScript values built by to_val: plain arrays, null, Uint8Array. Embind knows them as
// emscripten::val's type.
template <class T> struct IsJs : std::false_type {};
template <class T> struct IsJs<std::vector<T>> : std::true_type {};
template <class T> struct IsJs<std::optional<T>> : std::true_type {};
template <> struct IsJs<h3probe::js::Num> : std::true_type {};
template <> struct IsJs<h3probe::js::Interval> : std::true_type {};
template <class T>
struct TypeID<T, std::enable_if_t<IsJs<std::remove_cv_t<std::remove_reference_t<T>>>::value>> {
    static constexpr TYPEID get() { return TypeID<val>::get(); }
};
template <class T>
struct JsBinding {
    using WireType = BindingType<val>::WireType;
    static WireType toWireType(const T& x) { return BindingType<val>::toWireType(h3probe::js::to_val(x)); }
    // Output only: nothing of these crosses back from JavaScript (the aggregates read through js::read).
    static T fromWireType(WireType w) {
        val::take_ownership(w);
        return T{};
    }
};
template <class T> struct BindingType<std::vector<T>> : JsBinding<std::vector<T>> {};
template <class T> struct BindingType<std::optional<T>> {
    using WireType = BindingType<val>::WireType;
    static WireType toWireType(const std::optional<T>& x) {
        return BindingType<val>::toWireType(x ? h3probe::js::to_val(*x) : val::null());
    }
    static std::optional<T> fromWireType(WireType w) {
        val::take_ownership(w);
        return std::nullopt;
    }
};
template <> struct BindingType<h3probe::js::Num> {
    using WireType = BindingType<val>::WireType;
    static WireType toWireType(h3probe::js::Num n) {
        return BindingType<val>::toWireType(std::isnan(n.v) ? val::null() : val(n.v));
    }
    static h3probe::js::Num fromWireType(WireType w) {
        val::take_ownership(w);
        return {};
    }
};
template <> struct BindingType<h3probe::js::Interval> {
    using WireType = BindingType<val>::WireType;
    static WireType toWireType(h3probe::js::Interval i) {
        val a = val::array();
        a.set(0, h3probe::js::Num{i.lo});
        a.set(1, h3probe::js::Num{i.hi});
        return BindingType<val>::toWireType(a);
    }
    static h3probe::js::Interval fromWireType(WireType w) {
        val::take_ownership(w);
        return {};
    }
};
}  // namespace internal
}  // namespace emscripten

namespace h3probe {
namespace {
using js::Num;
using js::Interval;

// The structures a JavaScript object's fields cross into and out of, through their value_object below: the
// aggregates a warehouse hands inferReport() and the needs it hands back (report_aggregates.hpp; typed in
// h3probeNode.d.ts, and listed by name in schema().aggregates.fields). X(structure, name, member).
#define H3PROBE_AGGREGATES_FIELDS(X) X(Aggregates, "version", version) X(Aggregates, "groups", groups)
#define H3PROBE_GROUP_AGGREGATES_FIELDS(X)                                                                             \
    X(GroupAggregates, "name", counts.name) X(GroupAggregates, "runs", counts.runs)                                   \
    X(GroupAggregates, "requests", counts.requests) X(GroupAggregates, "missing_metric", counts.missing_metric)       \
    X(GroupAggregates, "classes", counts.classes) X(GroupAggregates, "failures", counts.failure_sums)                 \
    X(GroupAggregates, "runs_paired", runs_paired) X(GroupAggregates, "samples", sample)                              \
    X(GroupAggregates, "diffs", diffs) X(GroupAggregates, "diffs_h2_first", diffs_h2_first)                          \
    X(GroupAggregates, "diffs_h3_first", diffs_h3_first) X(GroupAggregates, "cross", cross)
#define H3PROBE_FAILURE_SUMS_FIELDS(X)                                                                                 \
    X(FailureSums, "runs", runs) X(FailureSums, "f2", f2) X(FailureSums, "n2", n2) X(FailureSums, "f3", f3)           \
    X(FailureSums, "n3", n3) X(FailureSums, "f2f2", f2f2) X(FailureSums, "f2n2", f2n2) X(FailureSums, "n2n2", n2n2)   \
    X(FailureSums, "f3f3", f3f3) X(FailureSums, "f3n3", f3n3) X(FailureSums, "n3n3", n3n3)                            \
    X(FailureSums, "f2f3", f2f3) X(FailureSums, "f2n3", f2n3) X(FailureSums, "n2f3", n2f3) X(FailureSums, "n2n3", n2n3)
#define H3PROBE_SAMPLE_AGGREGATES_FIELDS(X)                                                                            \
    X(SampleAggregates, "n", n) X(SampleAggregates, "runs", runs) X(SampleAggregates, "stats", order_stats)           \
    X(SampleAggregates, "below", below)
// sum: ExactSum::text(), whole units of 2^-1074; sum_sq: of 2^-2148.
#define H3PROBE_MOMENT_SUMS_FIELDS(X) X(MomentSums, "n", n) X(MomentSums, "sum", sum) X(MomentSums, "sum_sq", sum_sq)
#define H3PROBE_RANK_VALUE_FIELDS(X) X(RankValue, "rank", rank) X(RankValue, "value", value)
#define H3PROBE_BELOW_ENTRY_FIELDS(X)                                                                                  \
    X(BelowEntry, "threshold", threshold) X(BelowEntry, "below", sums.below) X(BelowEntry, "below_sq", sums.below_sq) \
    X(BelowEntry, "below_size", sums.below_size) X(BelowEntry, "size_sq", sums.size_sq)
#define H3PROBE_CROSS_ENTRY_FIELDS(X)                                                                                  \
    X(CrossEntry, "q2", q2) X(CrossEntry, "q3", q3) X(CrossEntry, "s2s3", sums.s2s3) X(CrossEntry, "s2n3", sums.s2n3) \
    X(CrossEntry, "n2s3", sums.n2s3) X(CrossEntry, "n2n3", sums.n2n3)
#define H3PROBE_NEEDS_FIELDS(X) X(Needs, "ranks", ranks) X(Needs, "below", below) X(Needs, "cross", cross)
#define H3PROBE_RANK_NEED_FIELDS(X) X(Needs::Rank, "group", group) X(Needs::Rank, "sample", sample) X(Needs::Rank, "rank", rank)
#define H3PROBE_BELOW_NEED_FIELDS(X)                                                                                   \
    X(Needs::Below, "group", group) X(Needs::Below, "sample", sample) X(Needs::Below, "threshold", threshold)
#define H3PROBE_CROSS_NEED_FIELDS(X) X(Needs::Cross, "group", group) X(Needs::Cross, "q2", q2) X(Needs::Cross, "q3", q3)
#define H3PROBE_AGGREGATE_STRUCTURES(X)                                                                                \
    X(Aggregates, "Aggregates", H3PROBE_AGGREGATES_FIELDS)                                                            \
    X(GroupAggregates, "GroupAggregates", H3PROBE_GROUP_AGGREGATES_FIELDS)                                            \
    X(FailureSums, "FailureSums", H3PROBE_FAILURE_SUMS_FIELDS)                                                        \
    X(SampleAggregates, "SampleAggregates", H3PROBE_SAMPLE_AGGREGATES_FIELDS)                                         \
    X(MomentSums, "MomentSums", H3PROBE_MOMENT_SUMS_FIELDS) X(RankValue, "RankValue", H3PROBE_RANK_VALUE_FIELDS)      \
    X(BelowEntry, "BelowEntry", H3PROBE_BELOW_ENTRY_FIELDS) X(CrossEntry, "CrossEntry", H3PROBE_CROSS_ENTRY_FIELDS)   \
    X(Needs, "Needs", H3PROBE_NEEDS_FIELDS) X(Needs::Rank, "RankNeed", H3PROBE_RANK_NEED_FIELDS)                      \
    X(Needs::Below, "BelowNeed", H3PROBE_BELOW_NEED_FIELDS) X(Needs::Cross, "CrossNeed", H3PROBE_CROSS_NEED_FIELDS)

}  // namespace

namespace js {
#define H3PROBE_FIELD_NAME(type, name, member) name,
#define H3PROBE_FIELD_NAMES(type, name, list)                       \
    template <> const std::vector<std::string>& field_names<type>() { \
        static const std::vector<std::string> names = {list(H3PROBE_FIELD_NAME)}; \
        return names;                                                 \
    }
H3PROBE_AGGREGATE_STRUCTURES(H3PROBE_FIELD_NAMES)
#undef H3PROBE_FIELD_NAMES
#undef H3PROBE_FIELD_NAME
}  // namespace js

namespace {

// The JavaScript shapes of the report that are not one structure of the core's.
struct Fallback {
    std::size_t fallbacks, completed;
    double rate;
};
struct ArmSize {
    std::size_t n, runs;
};
struct ArmSizes {
    ArmSize h2, h3;
};

// {name: count} over a closed list of names.
template <class Counts>
val counts_by_name(const char* const* names, const Counts& counts) {
    val out = val::object();
    for (std::size_t i = 0; i < counts.size(); ++i) out.set(names[i], static_cast<double>(counts[i]));
    return out;
}

// Excluded requests by class (both arms), then missing_metric; usable and pre-warm are not exclusions.
val excluded(const GroupReport& g) {
    val out = val::object();
    for (int c = 0; c < kRequestClassCount; ++c) {
        const auto cls = static_cast<RequestClass>(c);
        if (is_usable(cls) || cls == RequestClass::prewarm) continue;
        out.set(to_string(cls), static_cast<double>(g.classes[0][c] + g.classes[1][c]));
    }
    out.set("missing_metric", static_cast<double>(g.missing_metric));
    return out;
}
Fallback fallback(const GroupReport& g) {
    return {g.classes[1][static_cast<int>(RequestClass::fallback)], treatment_ok(g), fallback_rate(g)};
}
ArmSizes arms(const GroupReport& g) { return {{g.analysis.n_h2, g.runs_h2}, {g.analysis.n_h3, g.runs_h3}}; }

val group_js(const GroupReport& g, const ReportOptions& o) {
    val out(g);
    if (!o.cdf_probabilities.empty()) {
        const auto cdf = [&](const std::vector<double>& qs) {
            std::vector<Interval> points;
            for (std::size_t i = 0; i < qs.size(); ++i) points.push_back({qs[i], o.cdf_probabilities[i]});
            return points;
        };
        val points = val::object();
        points.set("h2", cdf(g.cdf_h2));
        points.set("h3", cdf(g.cdf_h3));
        out.set("cdf", points);
    }
    return out;
}
val groups_js(const std::vector<GroupReport>& groups, const ReportOptions& o) {
    val out = val::array();
    for (std::size_t i = 0; i < groups.size(); ++i) out.set(i, group_js(groups[i], o));
    return out;
}

constexpr const char* kSetupOutcomeNames[] = {
#define H3PROBE_SETUP_OUTCOME_NAME(name, what) #name,
    H3PROBE_SETUP_OUTCOMES(H3PROBE_SETUP_OUTCOME_NAME)
#undef H3PROBE_SETUP_OUTCOME_NAME
};
constexpr const char* kFirstH3Names[] = {
#define H3PROBE_FIRST_H3_NAME(name) #name,
    H3PROBE_FIRST_H3(H3PROBE_FIRST_H3_NAME)
#undef H3PROBE_FIRST_H3_NAME
};

val setup_outcomes(const SetupGroup& g) {
    val out = val::object();
    out.set("h2", counts_by_name(kSetupOutcomeNames, g.outcomes[0]));
    out.set("h3", counts_by_name(kSetupOutcomeNames, g.outcomes[1]));
    return out;
}
val setup_metrics(const SetupGroup& g) {
    val out = val::object();
    for (int m = 0; m < kSetupMetrics; ++m) {
        val metric = val::object();
        metric.set("analysis", g.metric[m].analysis);
        metric.set("paired", g.metric[m].paired);
        out.set(to_string(static_cast<SetupMetric>(m)), metric);
    }
    return out;
}

double number_or(const val& o, const char* key, double fallback) {
    const val v = o[key];
    return v.isNumber() ? v.as<double>() : fallback;
}
// Typed array (or array of numbers) -> vector, by one TypedArray.set() into a view of the vector's memory.
std::vector<double> copy_doubles(const val& array) {
    std::vector<double> out(array["length"].as<std::size_t>());
    val(emscripten::typed_memory_view(out.size(), out.data())).call<void>("set", array);
    return out;
}
std::vector<std::string> strings(const val& list) {
    if (list.isUndefined() || list.isNull()) return {};
    return emscripten::vecFromJSArray<std::string>(list);
}

// The report options from JS; "" or why they are wrong.
std::string read_report_options(const val& options, ReportOptions& o) {
    const std::string method = options["method"].isString() ? options["method"].as<std::string>() : "delta";
    if (method != "delta" && method != "bootstrap") return std::string("method must be delta or bootstrap, got \"") + method + "\"";
    o.method = method == "delta" ? IntervalMethod::delta : IntervalMethod::bootstrap;
    o.confidence = number_or(options, "confidence", o.confidence);
    if (!(o.confidence > 0 && o.confidence < 1)) return "confidence must be in (0, 1)";
    if (!options["percentiles"].isUndefined()) o.percentiles = copy_doubles(options["percentiles"]);
    if (!options["cdfProbabilities"].isUndefined()) o.cdf_probabilities = copy_doubles(options["cdfProbabilities"]);
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

// decodeBeacon(text | bytes) -> {ok: false, error} | {ok: true, run, requests}: the rows to store (StoredRun and
// StoredRequest below). Bytes (a Uint8Array or Buffer: the collector's request body as read) are copied into the
// decoder's memory by one TypedArray.set(); a string is first encoded to UTF-8 by the glue. Bytes that are not UTF-8
// are not JSON, and refused as such.
val decode_beacon_js(const val& input) {
    std::string text;
    val out = val::object();
    if (input.isString()) {
        text = input.as<std::string>();
    } else if (input.instanceof(val::global("Uint8Array"))) {
        text.resize(input["length"].as<std::size_t>());
        val(emscripten::typed_memory_view(text.size(), reinterpret_cast<std::uint8_t*>(text.data())))
            .call<void>("set", input);
    } else {
        out.set("ok", false);
        out.set("error", std::string("beacon must be a string or a Uint8Array"));
        return out;
    }
    const DecodeResult decoded = decode_beacon(text);
    out.set("ok", decoded.beacon.has_value());
    if (!decoded.beacon) {
        out.set("error", decoded.error);
        return out;
    }
    const StoredBeacon stored = to_stored(*decoded.beacon);
    out.set("run", stored.run);
    out.set("requests", stored.requests);
    return out;
}
// arm_<metric>: the run record's values of metric M (metric_names() order).
template <std::size_t M> std::vector<std::uint8_t> arm_metric(const StoredRun& r) { return r.arm_metrics.at(M); }

// buildReport(records: Uint8Array | Uint8Array[], request: {groups, days?, setup?, estimand?}, options) -> {error,
// groups, days, looks, setup}: the report of one pass over the records (report.hpp, ReportRequest: each record's
// layout), with the daily series (days, looks: empty without request.days) and the connection-setup view (setup: null
// without request.setup).
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
    if (r.setup) out.set("setup", setup.groups);
    return out;
}

// inferReport(aggregates, options, round) -> {error, needs: Needs | null, groups}: one round of the report from a
// warehouse's aggregates (report_aggregates.hpp). While needs is not null, add what it asks and call again with the
// next round; past the core's limit of rounds, error says so.
val infer_report_js(const val& aggregates, const val& options, int round) {
    val out = val::object();
    out.set("groups", val::array());
    out.set("needs", val::null());
    ReportOptions o;
    std::string error = read_report_options(options, o);
    if (error.empty() && o.method != IntervalMethod::delta) error = "aggregates give delta intervals only (the bootstrap needs every value)";
    Aggregates a;
    js::read_error = &error;
    js::read(aggregates, a, "aggregates");
    js::read_error = nullptr;
    if (error.empty()) error = check_aggregates(a);
    if (!error.empty()) {
        out.set("error", "the aggregates do not read: " + error);
        return out;
    }
    Needs needs;
    const std::vector<GroupReport> reports = infer_report(a.groups, o, needs);
    if (!needs.empty()) {
        out.set("error", next_round_error(round));
        out.set("needs", needs);
        return out;
    }
    out.set("error", std::string());
    out.set("groups", groups_js(reports, o));
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
        val e(b);
        if (b.kind == SampleBiasKind::fallback_gap) {
            e.set("group", b.group);
            e.set("rest_n", static_cast<double>(b.rest_n));
            e.set("rest_of", static_cast<double>(b.rest_of));
        }
        out.set(k++, e);
    }
    return out;
}

// values: a Float64Array (or array of numbers); ps: probabilities in [0, 1]. Returns a Float64Array.
val quantiles_js(const val& values, const val& ps) {
    const std::vector<double> q = quantiles(copy_doubles(values), copy_doubles(ps));
    return val::global("Float64Array").new_(emscripten::typed_memory_view(q.size(), q.data()));
}

// The schema: the stored form's column lists, the request classes, the metrics and the limits, as the core defines
// them.
struct Column {
    std::string name, type, description;
};
struct Duration {
    std::string name;
    double max;
    bool metric;
    std::string description;
};
struct ClassInfo {
    std::string name;
    bool usable;
    std::string role;
    bool holdsValue;
    std::string description;
};
struct EstimandInfo {
    std::string name;
    int bit;
    std::string description;
};
struct Named {
    std::string name, description;
};
struct SetupMetricInfo {
    std::string name;
    bool paired;
    std::string description;
};
struct SizeDefaults {
    double p, mde, alpha, power;
};
struct ReportDefaults {
    std::vector<double> percentiles;
    double confidence;
    SizeDefaults sampleSize;
    std::vector<double> seriesPercentiles;
};
#define H3PROBE_LIMITS(X)                                                                                              \
    X(maxBeaconBytes, kMaxBeaconBytes) X(maxJsonDepth, kMaxJsonDepth) X(maxSamples, kMaxSamples)                      \
    X(maxErrors, kMaxErrors) X(maxErrorChars, kMaxErrorChars) X(minRunsForInterval, kMinRunsForInterval)              \
    X(maxPayloadBytes, kMaxPayloadBytes) X(csTightestRuns, kCsTightestRuns) X(maxReportGroups, kMaxReportGroups)      \
    X(runRecordHeadBytes, kArmCountsHeadBytes) X(maxDurationMs, kMaxDurationMs)                                       \
    X(unequalExclusionShare, kUnequalExclusionShare) X(unequalExclusionMinRequests, kUnequalExclusionMinRequests)     \
    X(failedRunShare, kFailedRunShare) X(failedRunMinRuns, kFailedRunMinRuns) X(loadErrorShare, kLoadErrorShare)      \
    X(loadErrorMinLoads, kLoadErrorMinLoads) X(mainThreadShare, kMainThreadShare)                                     \
    X(mainThreadMinRuns, kMainThreadMinRuns) X(fallbackGapShare, kFallbackGapShare)                                   \
    X(fallbackGapMinRequests, kFallbackGapMinRequests)
struct Limits {
#define H3PROBE_LIMIT_MEMBER(name, value) double name = static_cast<double>(value);
    H3PROBE_LIMITS(H3PROBE_LIMIT_MEMBER)
#undef H3PROBE_LIMIT_MEMBER
};
struct AggregatesInfo {
    int version = 0;
    val fields = val::object();
};
struct Schema {
    std::vector<Column> runColumns, requestColumns;
    std::vector<Duration> durations;
    std::vector<std::string> metrics;
    std::vector<ClassInfo> requestClasses;
    std::vector<EstimandInfo> estimands;
    double unfinishedValue;
    std::vector<Named> loadErrorReasons, workerFallbackReasons;
    Limits limits;
    ReportDefaults reportDefaults;
    AggregatesInfo aggregates;
    int runRecordVersion;
    std::vector<Named> setupOutcomes;
    std::vector<SetupMetricInfo> setupMetrics;
    std::vector<std::string> setupFirstH3;
    int setupRecordVersion;
    std::string serverTimingProtocol;
    val serverProtocols = val::object();
};

#define H3PROBE_NAMED(name, what) {#name, what},
Schema schema_js() {
    Schema s;
#define H3PROBE_COLUMN(type, name, limit, what) {#name, #type, what},
    s.runColumns = {H3PROBE_RUN_COLUMNS(H3PROBE_COLUMN)};
    s.requestColumns = {H3PROBE_REQUEST_COLUMNS(H3PROBE_COLUMN)};
#undef H3PROBE_COLUMN
#define H3PROBE_DURATION(name, max, metric, what) {#name, static_cast<double>(max), metric, what},
    s.durations = {H3PROBE_SAMPLE_DURATIONS(H3PROBE_DURATION)};
#undef H3PROBE_DURATION
    s.metrics = metric_names();
    for (int c = 0; c < kRequestClassCount; ++c) {
        const auto cls = static_cast<RequestClass>(c);
        s.requestClasses.push_back({to_string(cls), is_usable(cls), to_string(role_of(cls)), holds_value(cls), describe(cls)});
    }
#define H3PROBE_ESTIMAND_INFO(name, what) {#name, estimand_bit(Estimand::name), what},
    s.estimands = {H3PROBE_ESTIMANDS(H3PROBE_ESTIMAND_INFO)};
#undef H3PROBE_ESTIMAND_INFO
    s.unfinishedValue = kUnfinishedValue;
    s.loadErrorReasons = {H3PROBE_LOAD_ERROR_REASONS(H3PROBE_NAMED)};
    s.workerFallbackReasons = {H3PROBE_WORKER_FALLBACK_REASONS(H3PROBE_NAMED)};
    // The report's defaults (ReportOptions) and the daily series' and connection-setup view's percentiles.
    const ReportOptions defaults;
    s.reportDefaults = {defaults.percentiles, defaults.confidence,
                        {defaults.size_p, defaults.size_mde, defaults.size_alpha, defaults.size_power}, kSeriesPercentiles};
    // The aggregates that cross from a warehouse: their format and each structure's fields.
    s.aggregates.version = kAggregatesVersion;
#define H3PROBE_STRUCTURE_FIELDS(type, name, list) s.aggregates.fields.set(name, js::field_names<type>());
    H3PROBE_AGGREGATE_STRUCTURES(H3PROBE_STRUCTURE_FIELDS)
#undef H3PROBE_STRUCTURE_FIELDS
    s.runRecordVersion = kRunRecordVersion;
    // The connection-setup view's outcomes per protocol and metrics (connection_setup.hpp).
    s.setupOutcomes = {H3PROBE_SETUP_OUTCOMES(H3PROBE_NAMED)};
#define H3PROBE_SETUP_METRIC_INFO(name, paired, what) {#name, paired, what},
    s.setupMetrics = {H3PROBE_SETUP_METRICS(H3PROBE_SETUP_METRIC_INFO)};
#undef H3PROBE_SETUP_METRIC_INFO
    s.setupFirstH3.assign(std::begin(kFirstH3Names), std::end(kFirstH3Names));
    s.setupRecordVersion = kSetupRecordVersion;
    // The Server-Timing metric the origins name the protocol with, and the server names classify() knows.
    s.serverTimingProtocol = kServerTimingProtocol;
#define H3PROBE_SERVER_PROTOCOL_SET(server, next_hop) s.serverProtocols.set(server, std::string(next_hop));
    H3PROBE_SERVER_PROTOCOLS(H3PROBE_SERVER_PROTOCOL_SET)
#undef H3PROBE_SERVER_PROTOCOL_SET
    return s;
}
#undef H3PROBE_NAMED

}  // namespace
}  // namespace h3probe

EMSCRIPTEN_BINDINGS(h3probe_node) {
    using namespace emscripten;
    using namespace h3probe;
    using js::interval;
    using js::num;
    using js::output_only;

    // The stored rows (stored_run.hpp): a text column as is, a real or flag column a number or null.
#define H3PROBE_COLUMN_text(T, name) .field(#name, &T::name)
#define H3PROBE_COLUMN_real(T, name) .field(#name, &num<T, &T::name>, &output_only<T, Num>)
#define H3PROBE_COLUMN_flag(T, name) H3PROBE_COLUMN_real(T, name)
#define H3PROBE_RUN_FIELD(type, name, limit, what) H3PROBE_COLUMN_##type(StoredRun, name)
#define H3PROBE_REQUEST_FIELD(type, name, limit, what) H3PROBE_COLUMN_##type(StoredRequest, name)
#define H3PROBE_DURATION_FIELD(name, max, metric, what) H3PROBE_COLUMN_real(StoredRequest, name)
    {
        value_object<StoredRun> run("StoredRun");
        run H3PROBE_RUN_COLUMNS(H3PROBE_RUN_FIELD).field("arm_counts", &StoredRun::arm_counts);
        using Getter = std::vector<std::uint8_t> (*)(const StoredRun&);
        constexpr Getter arm[] = {&arm_metric<0>, &arm_metric<1>, &arm_metric<2>, &arm_metric<3>, &arm_metric<4>,
                                  &arm_metric<5>, &arm_metric<6>, &arm_metric<7>, &arm_metric<8>, &arm_metric<9>};
#define H3PROBE_COUNT_DURATION(name, max, metric, what) +1
        static_assert(std::size(arm) >= 0 H3PROBE_SAMPLE_DURATIONS(H3PROBE_COUNT_DURATION), "a getter per metric");
#undef H3PROBE_COUNT_DURATION
        const std::vector<std::string> metrics = metric_names();
        for (std::size_t m = 0; m < metrics.size(); ++m)
            run.field(("arm_" + metrics.at(m)).c_str(), arm[m], &output_only<StoredRun, std::vector<std::uint8_t>>);
        run.field("setup", &StoredRun::setup);
    }
    value_object<StoredRequest>("StoredRequest")
        H3PROBE_REQUEST_COLUMNS(H3PROBE_REQUEST_FIELD) H3PROBE_SAMPLE_DURATIONS(H3PROBE_DURATION_FIELD);
#undef H3PROBE_RUN_FIELD
#undef H3PROBE_REQUEST_FIELD
#undef H3PROBE_DURATION_FIELD
#undef H3PROBE_COLUMN_text
#undef H3PROBE_COLUMN_real
#undef H3PROBE_COLUMN_flag

    // The report (report.hpp, quantile_ci.hpp, paired_runs.hpp, sample_size.hpp, failure_rate.hpp).
#define H3PROBE_NUM(T, name) .field(#name, &num<T, &T::name>, &output_only<T, Num>)
#define H3PROBE_INTERVAL(T, name, lo, hi) .field(name, &interval<T, &T::lo, &T::hi>, &output_only<T, Interval>)
    using Row = QuantileDifferenceRow;
    value_object<Row>("QuantileRow")
        .field("p", &Row::p) H3PROBE_NUM(Row, h2) H3PROBE_NUM(Row, h3) H3PROBE_NUM(Row, diff_ms) H3PROBE_NUM(Row, diff_pct)
        H3PROBE_INTERVAL(Row, "ci_ms", ci_ms_lo, ci_ms_hi) H3PROBE_INTERVAL(Row, "ci_pct", ci_pct_lo, ci_pct_hi)
        .field("ci_pct_unbounded", &Row::ci_pct_unbounded)
        H3PROBE_INTERVAL(Row, "ci_h2", ci_h2_lo, ci_h2_hi) H3PROBE_INTERVAL(Row, "ci_h3", ci_h3_lo, ci_h3_hi)
        .field("significant", &Row::significant)
        .field("unfinished", &Row::unfinished)
        .field("min_runs", +[](const Row& r) { return Num{r.min_runs == std::numeric_limits<std::size_t>::max() ? std::numeric_limits<double>::quiet_NaN() : static_cast<double>(r.min_runs)}; },
               &output_only<Row, Num>)
        H3PROBE_NUM(Row, corr) H3PROBE_NUM(Row, se_ms) H3PROBE_NUM(Row, df) H3PROBE_NUM(Row, p_value) H3PROBE_NUM(Row, q_value)
        H3PROBE_INTERVAL(Row, "cs_ms", cs_ms_lo, cs_ms_hi) H3PROBE_INTERVAL(Row, "cs_pct", cs_pct_lo, cs_pct_hi)
        .field("cs_pct_unbounded", &Row::cs_pct_unbounded)
        .field("significant_cs", &Row::significant_cs)
        .field("discovery", &Row::discovery)
        // The stopping line (confidence_sequence.hpp): +inf runs (Δ exactly 0) reaches JSON as null, as NaN does.
        H3PROBE_NUM(Row, cs_runs_needed) H3PROBE_NUM(Row, cs_days_needed)
        .field("cs_decided_look", +[](const Row& r) { return Num{r.cs_decided_look < 0 ? std::numeric_limits<double>::quiet_NaN() : static_cast<double>(r.cs_decided_look)}; }, &output_only<Row, Num>)
        .field("cs_decided_side", &Row::cs_decided_side)
        .field("cs_conflict", &Row::cs_conflict);
    value_object<ArmsAnalysis>("Analysis")
        .field("method", +[](const ArmsAnalysis& a) { return std::string(a.method == IntervalMethod::delta ? "delta" : "bootstrap"); },
               &output_only<ArmsAnalysis, std::string>)
        .field("confidence", &ArmsAnalysis::confidence)
        .field("runs_paired", &ArmsAnalysis::runs_paired)
        .field("rows", &ArmsAnalysis::rows);
    using Paired = PairedDifferenceSummary;
    value_object<Paired>("Paired")
        .field("n", &Paired::n) H3PROBE_NUM(Paired, mean) H3PROBE_NUM(Paired, median) H3PROBE_NUM(Paired, p10)
        H3PROBE_NUM(Paired, p90) H3PROBE_INTERVAL(Paired, "ci_mean", ci_mean_lo, ci_mean_hi)
        H3PROBE_INTERVAL(Paired, "ci_median", ci_median_lo, ci_median_hi);
    value_object<OrderEffect>("Order")
        .field("n_h2_first", &OrderEffect::n_h2_first)
        .field("n_h3_first", &OrderEffect::n_h3_first)
        H3PROBE_NUM(OrderEffect, mean_h2_first) H3PROBE_NUM(OrderEffect, mean_h3_first) H3PROBE_NUM(OrderEffect, diff)
        H3PROBE_INTERVAL(OrderEffect, "ci", ci_lo, ci_hi) H3PROBE_NUM(OrderEffect, p_value);
    value_object<SampleSizePlan>("SampleSize")
        H3PROBE_NUM(SampleSizePlan, runs_per_arm) H3PROBE_NUM(SampleSizePlan, requests_per_run)
        H3PROBE_NUM(SampleSizePlan, design_effect) H3PROBE_NUM(SampleSizePlan, quantile) .field("paired", &SampleSizePlan::paired);
    using Failures = FailureComparison;
    value_object<Failures>("Failures")
        .field("runs", &Failures::runs)
        .field("failed_h2", +[](const Failures& f) { return static_cast<double>(f.failed_h2); }, &output_only<Failures, double>)
        .field("requests_h2", +[](const Failures& f) { return static_cast<double>(f.requests_h2); }, &output_only<Failures, double>)
        .field("failed_h3", +[](const Failures& f) { return static_cast<double>(f.failed_h3); }, &output_only<Failures, double>)
        .field("requests_h3", +[](const Failures& f) { return static_cast<double>(f.requests_h3); }, &output_only<Failures, double>)
        H3PROBE_NUM(Failures, rate_h2) H3PROBE_NUM(Failures, rate_h3) H3PROBE_NUM(Failures, diff)
        H3PROBE_INTERVAL(Failures, "ci", ci_lo, ci_hi)
        .field("significant", &Failures::significant);
    value_object<Fallback>("Fallback")
        .field("fallbacks", &Fallback::fallbacks)
        .field("rate", &num<Fallback, &Fallback::rate>, &output_only<Fallback, Num>)
        .field("completed", &Fallback::completed);
    value_object<UnequalExclusion>("UnequalExclusion")
        .field("class", +[](const UnequalExclusion& u) { return std::string(to_string(u.cls)); }, &output_only<UnequalExclusion, std::string>)
        .field("control", &UnequalExclusion::control)
        .field("treatment", &UnequalExclusion::treatment)
        .field("control_requests", &UnequalExclusion::control_requests)
        .field("treatment_requests", &UnequalExclusion::treatment_requests);
    value_object<ArmSize>("ArmSize").field("n", &ArmSize::n).field("runs", &ArmSize::runs);
    value_object<ArmSizes>("ArmSizes").field("h2", &ArmSizes::h2).field("h3", &ArmSizes::h3);
    value_object<GroupReport>("GroupReport")
        .field("name", &GroupReport::name)
        .field("runs", &GroupReport::runs)
        .field("requests", &GroupReport::requests)
        .field("excluded", &excluded, &output_only<GroupReport, val>)
        .field("fallback", &fallback, &output_only<GroupReport, Fallback>)
        // Exclusions whose share differs between the arms (comparability.hpp): the verdict leads with them.
        .field("unequal", &unequal_exclusions, &output_only<GroupReport, std::vector<UnequalExclusion>>)
        .field("arms", &arms, &output_only<GroupReport, ArmSizes>)
        .field("analysis", &GroupReport::analysis)
        .field("paired", &GroupReport::paired)
        .field("order", &GroupReport::order)
        .field("sampleSize", &GroupReport::sample_size)
        .field("failures", &GroupReport::failures);
    value_object<SetupGroup>("SetupGroup")
        .field("name", &SetupGroup::name)
        .field("runs", &SetupGroup::runs)
        .field("paired", &SetupGroup::paired)
        .field("outcomes", &setup_outcomes, &output_only<SetupGroup, val>)
        .field("firstH3", +[](const SetupGroup& g) { return counts_by_name(kFirstH3Names, g.first_h3); }, &output_only<SetupGroup, val>)
        .field("metrics", &setup_metrics, &output_only<SetupGroup, val>);
    value_object<SampleBias>("SampleBias")
        .field("kind", +[](const SampleBias& b) { return std::string(to_string(b.kind)); }, &output_only<SampleBias, std::string>)
        .field("n", &SampleBias::n)
        .field("of", &SampleBias::of);
#undef H3PROBE_NUM
#undef H3PROBE_INTERVAL

    // The aggregates and needs (report_aggregates.hpp): each field read with its type checked (js::read) and written
    // as a plain value.
#define H3PROBE_AGGREGATE_FIELD(T, name, member)                                                                       \
    .field(name, +[](const T& x) { return js::to_val(x.member); }, +[](T& x, val v) { js::read(v, x.member, name); })
#define H3PROBE_AGGREGATE_STRUCTURE(T, name, list) value_object<T>(name) list(H3PROBE_AGGREGATE_FIELD);
    H3PROBE_AGGREGATE_STRUCTURES(H3PROBE_AGGREGATE_STRUCTURE)
#undef H3PROBE_AGGREGATE_STRUCTURE
#undef H3PROBE_AGGREGATE_FIELD

    // The schema.
    value_object<Column>("Column").field("name", &Column::name).field("type", &Column::type).field("description", &Column::description);
    value_object<Duration>("Duration")
        .field("name", &Duration::name).field("max", &Duration::max).field("metric", &Duration::metric)
        .field("description", &Duration::description);
    value_object<ClassInfo>("RequestClass")
        .field("name", &ClassInfo::name).field("usable", &ClassInfo::usable).field("role", &ClassInfo::role)
        .field("holdsValue", &ClassInfo::holdsValue).field("description", &ClassInfo::description);
    value_object<EstimandInfo>("Estimand")
        .field("name", &EstimandInfo::name).field("bit", &EstimandInfo::bit).field("description", &EstimandInfo::description);
    value_object<Named>("Named").field("name", &Named::name).field("description", &Named::description);
    value_object<SetupMetricInfo>("SetupMetric")
        .field("name", &SetupMetricInfo::name).field("paired", &SetupMetricInfo::paired)
        .field("description", &SetupMetricInfo::description);
    value_object<SizeDefaults>("SampleSizeDefaults")
        .field("p", &SizeDefaults::p).field("mde", &SizeDefaults::mde).field("alpha", &SizeDefaults::alpha)
        .field("power", &SizeDefaults::power);
    value_object<ReportDefaults>("ReportDefaults")
        .field("percentiles", &ReportDefaults::percentiles).field("confidence", &ReportDefaults::confidence)
        .field("sampleSize", &ReportDefaults::sampleSize).field("seriesPercentiles", &ReportDefaults::seriesPercentiles);
#define H3PROBE_LIMIT_FIELD(name, value) .field(#name, &Limits::name)
    value_object<Limits>("Limits") H3PROBE_LIMITS(H3PROBE_LIMIT_FIELD);
#undef H3PROBE_LIMIT_FIELD
    value_object<AggregatesInfo>("AggregatesInfo").field("version", &AggregatesInfo::version).field("fields", &AggregatesInfo::fields);
#define H3PROBE_SCHEMA_FIELD(name) .field(#name, &Schema::name)
    value_object<Schema>("Schema")
        H3PROBE_SCHEMA_FIELD(runColumns) H3PROBE_SCHEMA_FIELD(requestColumns) H3PROBE_SCHEMA_FIELD(durations)
        H3PROBE_SCHEMA_FIELD(metrics) H3PROBE_SCHEMA_FIELD(requestClasses) H3PROBE_SCHEMA_FIELD(estimands)
        H3PROBE_SCHEMA_FIELD(unfinishedValue) H3PROBE_SCHEMA_FIELD(loadErrorReasons)
        H3PROBE_SCHEMA_FIELD(workerFallbackReasons) H3PROBE_SCHEMA_FIELD(limits) H3PROBE_SCHEMA_FIELD(reportDefaults)
        H3PROBE_SCHEMA_FIELD(aggregates) H3PROBE_SCHEMA_FIELD(runRecordVersion) H3PROBE_SCHEMA_FIELD(setupOutcomes)
        H3PROBE_SCHEMA_FIELD(setupMetrics) H3PROBE_SCHEMA_FIELD(setupFirstH3) H3PROBE_SCHEMA_FIELD(setupRecordVersion)
        H3PROBE_SCHEMA_FIELD(serverTimingProtocol) H3PROBE_SCHEMA_FIELD(serverProtocols);
#undef H3PROBE_SCHEMA_FIELD

    function("decodeBeacon", &decode_beacon_js);
    function("buildReport", &build_report_js);
    function("inferReport", &infer_report_js);
    function("sampleBiases", &sample_biases_js);
    function("quantiles", &quantiles_js);
    function("schema", &schema_js);
    constant("version", std::string(H3PROBE_VERSION));
}

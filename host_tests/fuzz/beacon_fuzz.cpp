// libFuzzer target: decode_beacon on arbitrary bytes, then every invariant the collector relies on. A broken invariant
// aborts with the name of the check, so libFuzzer saves the input as a crash (see docs/fuzzing.md).
//
// Checked for every input:
//   - decode_beacon does not throw (and, through the sanitizers, reads and writes nothing it should not);
//   - a refusal carries a non-empty error of bounded length that is valid UTF-8 (it is logged and answered to clients);
//   - an accepted beacon respects every limit the decoder promises (limits.hpp, the enums' names, unique phase/idx,
//     each measured sample on its arm's protocol);
//   - its recomputed summary agrees with the class of each request;
//   - its stored rows (to_stored) respect the column lists of stored_run.hpp, each request carries a valid class, and
//     the run record's counts and packed values match the summary;
//   - encoding it and decoding that again gives the same text: decode then encode is a fixed point.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "beacon.hpp"
#include "request_class.hpp"
#include "stored_run.hpp"
#include "utf8_text.hpp"

using namespace h3probe;

namespace {

// An error names a field and at most one short value (<= 64 bytes) quoted from the beacon.
constexpr std::size_t kMaxDecodeErrorBytes = 256;

std::string_view g_input;

[[noreturn]] void broken(const char* check, int line, const std::string& detail) {
    std::fprintf(stderr, "beacon_fuzz.cpp:%d: invariant broken: %s\n  %s\n  input: %zu bytes\n", line, check,
                 detail.c_str(), g_input.size());
    std::abort();
}

#define EXPECT(cond, detail)                            \
    do {                                                \
        if (!(cond)) broken(#cond, __LINE__, (detail)); \
    } while (0)

bool valid_utf8(const std::string& s) { return utf8_text(s, s.size()) == s; }

bool is_token(const std::string& s) {
    if (s.empty() || s.size() > 64) return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    });
}

bool in_range(double v, double hi) { return std::isfinite(v) && v >= 0 && v <= hi; }
bool in_range(const std::optional<double>& v, double hi) { return !v || in_range(*v, hi); }
bool null_or_in_range(double v, double hi) { return std::isnan(v) || in_range(v, hi); }

// Column checks by the X-macros' type tag. A limit of 0 means the column list sets none (the decoder's own limits on
// those columns are checked on the Beacon itself).
void check_text_column(const char* name, const std::string& v, double limit) {
    EXPECT(limit == 0 || v.size() <= limit, name);
    EXPECT(valid_utf8(v), name);
}
void check_real_column(const char* name, double v, double limit) {
    EXPECT(limit == 0 ? std::isnan(v) || std::isfinite(v) : null_or_in_range(v, limit), name);
}
void check_flag_column(const char* name, double v, double) { EXPECT(std::isnan(v) || v == 0 || v == 1, name); }

bool is_request_class_name(const std::string& s) {
    for (int i = 0; i < kRequestClassCount; ++i)
        if (s == to_string(static_cast<RequestClass>(i))) return true;
    return false;
}

double double_at(const std::vector<std::uint8_t>& blob, std::size_t i) {
    double v;
    std::memcpy(&v, blob.data() + 8 * i, sizeof v);
    return v;
}

void check_refusal(const DecodeResult& r) {
    EXPECT(!r.error.empty(), "a refused beacon must say why");
    EXPECT(r.error.size() <= kMaxDecodeErrorBytes, r.error);
    EXPECT(valid_utf8(r.error), r.error);
}

void check_beacon(const Beacon& b) {
    EXPECT(is_token(b.run_id), b.run_id);
    EXPECT(is_token(b.page_load_id), b.page_load_id);
    EXPECT(b.config_id.size() <= 64, b.config_id);
    EXPECT(b.module_version.size() <= 32, b.module_version);
    // A load_error beacon (the gate's own) may lack the run fields, has a reason from the closed list and no samples.
    const bool load_error = b.outcome == "load_error";
    EXPECT(b.order == "h2-first" || b.order == "h3-first" || (load_error && b.order.empty()), b.order);
    Arms arms = Arms::h2_h3;
    EXPECT(parse_arms(b.arms, arms) || (load_error && b.arms.empty()), b.arms);
    EXPECT(b.outcome == "complete" || b.outcome == "deadline" || b.outcome == "stopped" || b.outcome == "error" ||
               load_error,
           b.outcome);
#define H3PROBE_FUZZ_REASON(name, what) b.reason == #name ||
    EXPECT(load_error ? (H3PROBE_LOAD_ERROR_REASONS(H3PROBE_FUZZ_REASON) false) : b.reason.empty(), b.reason);
#undef H3PROBE_FUZZ_REASON
    EXPECT(!load_error || b.samples.empty(), "a load_error beacon holds samples");
    EXPECT(b.error.size() <= kMaxRunErrorChars, "error");
    EXPECT(in_range(b.run_ms, kMaxDurationMs), "run_ms");
    EXPECT(in_range(b.sample_rate, 1), "sample_rate");
#define H3PROBE_FUZZ_CHECK_CONTEXT(type, name, limit, what) check_context_##type(#name, b.context.name, limit);
    const auto check_context_text = [](const char* name, const std::string& v, double limit) {
        EXPECT(v.size() <= limit, name);
    };
    const auto check_context_real = [](const char* name, const std::optional<double>& v, double limit) {
        EXPECT(in_range(v, limit), name);
    };
    const auto check_context_flag = [](const char*, const std::optional<bool>&, double) {};
    H3PROBE_CONTEXT_FIELDS(H3PROBE_FUZZ_CHECK_CONTEXT)
#undef H3PROBE_FUZZ_CHECK_CONTEXT
    EXPECT(b.errors.size() <= kMaxErrors, "errors");
    for (const std::string& e : b.errors) EXPECT(e.size() <= kMaxErrorChars, "errors[]");

    EXPECT(b.samples.size() <= kMaxSamples, "samples");
    std::size_t measured[2] = {0, 0}, usable[2] = {0, 0}, fallbacks[2] = {0, 0};
    for (std::size_t i = 0; i < b.samples.size(); ++i) {
        const Sample& s = b.samples[i];
        const std::string where = "samples[" + std::to_string(i) + "]";
        EXPECT(s.idx >= 0 && s.idx <= kMaxSampleIdx, where);
        EXPECT(s.http_status >= 0 && s.http_status <= 999, where);
        EXPECT(s.protocol.size() <= 32, where);
#define H3PROBE_FUZZ_CHECK_DURATION(name, max, metric, what) EXPECT(in_range(s.name, max), where + "." #name);
        H3PROBE_SAMPLE_DURATIONS(H3PROBE_FUZZ_CHECK_DURATION)
#undef H3PROBE_FUZZ_CHECK_DURATION
        EXPECT(s.result != SampleResult::ok || s.network_ms, where);
        for (std::size_t k = 0; k < i; ++k)
            EXPECT(b.samples[k].phase != s.phase || b.samples[k].idx != s.idx, where + " repeats an earlier one");
        if (s.phase == Phase::prewarm) continue;
        EXPECT(s.origin == arm_protocol(arms, s.phase), where + " asked another protocol than its arm");
        const int arm = arm_of(s);
        const RequestClass c = classify(s);
        ++measured[arm];
        if (is_usable(c)) ++usable[arm];
        if (c == RequestClass::fallback) ++fallbacks[arm];
    }

    // The summary is recomputed by the decoder: it must agree with the classes.
    const ArmSummary* arm_summary[2] = {&b.summary.control, &b.summary.treatment};
    for (int arm = 0; arm < 2; ++arm) {
        const ArmSummary& a = *arm_summary[arm];
        EXPECT(a.latency.n == usable[arm], "summary n");
        EXPECT(static_cast<std::size_t>(a.excluded) == measured[arm] - usable[arm], "summary excluded");
        EXPECT(static_cast<std::size_t>(a.fallbacks) == fallbacks[arm], "summary fallbacks");
        if (a.latency.n > 0) {
            EXPECT(in_range(a.latency.min, kMaxDurationMs) && in_range(a.latency.max, kMaxDurationMs), "summary range");
            EXPECT(a.latency.min <= a.latency.median && a.latency.median <= a.latency.max, "summary order");
        }
    }
    EXPECT(b.summary.diff_median_ms.has_value() == (usable[0] > 0 && usable[1] > 0), "diff_median_ms presence");
    if (b.summary.diff_median_ms)
        EXPECT(*b.summary.diff_median_ms == b.summary.treatment.latency.median - b.summary.control.latency.median,
               "diff_median_ms value");
}

void check_stored(const Beacon& b) {
    const StoredBeacon stored = to_stored(b);
    const StoredRun& r = stored.run;
#define H3PROBE_FUZZ_CHECK_RUN_COLUMN(type, name, limit, what) check_##type##_column(#name, r.name, limit);
    H3PROBE_RUN_COLUMNS(H3PROBE_FUZZ_CHECK_RUN_COLUMN)
#undef H3PROBE_FUZZ_CHECK_RUN_COLUMN
    EXPECT(r.run_id == b.run_id && r.run_order == b.order && r.arms == b.arms && r.outcome == b.outcome &&
               r.reason == b.reason,
           "run row copies the beacon");
    const auto errors = nlohmann::json::parse(r.errors, nullptr, /*allow_exceptions=*/false);
    EXPECT(!errors.is_discarded() && errors.is_array() && errors == nlohmann::json(b.errors), r.errors);

    EXPECT(stored.requests.size() == b.samples.size(), "one request row per sample");
    for (std::size_t i = 0; i < stored.requests.size(); ++i) {
        const StoredRequest& q = stored.requests[i];
        const Sample& s = b.samples[i];
#define H3PROBE_FUZZ_CHECK_REQUEST_COLUMN(type, name, limit, what) check_##type##_column(#name, q.name, limit);
        H3PROBE_REQUEST_COLUMNS(H3PROBE_FUZZ_CHECK_REQUEST_COLUMN)
#undef H3PROBE_FUZZ_CHECK_REQUEST_COLUMN
        EXPECT(is_request_class_name(q.request_class), q.request_class);
        EXPECT(q.request_class == to_string(classify(s)), q.request_class);
        EXPECT(q.run_id == b.run_id && q.idx == s.idx && q.http_status == s.http_status && q.protocol == s.protocol,
               "request row copies its sample");
        Phase phase;
        Proto origin;
        SampleResult result;
        EXPECT(parse_phase(q.phase, phase) && phase == s.phase, q.phase);
        EXPECT(parse_proto(q.origin, origin) && origin == s.origin, q.origin);
        EXPECT(parse_result(q.result, result) && result == s.result, q.result);
#define H3PROBE_FUZZ_CHECK_DURATION_COLUMN(name, max, metric, what) \
    EXPECT(null_or_in_range(q.name, max) && std::isnan(q.name) == !s.name, #name);
        H3PROBE_SAMPLE_DURATIONS(H3PROBE_FUZZ_CHECK_DURATION_COLUMN)
#undef H3PROBE_FUZZ_CHECK_DURATION_COLUMN
    }

    // The run record (format 3): version, order, estimands, per-class counts; then, if the run counts as assigned,
    // each metric's values for the requests that hold one (stored_run.hpp).
    EXPECT(r.arm_counts.size() == kArmCountsBytes, "arm_counts size");
    EXPECT(r.arm_counts[0] == kRunRecordVersion, "arm_counts version");
    EXPECT(r.arm_counts[1] == (b.order == "h3-first" ? 1 : b.order.empty() ? 2 : 0), "arm_counts order");
    const std::uint8_t* arm_counts[2] = {r.arm_counts.data() + kArmCountsHeadBytes,
                                         r.arm_counts.data() + kArmCountsHeadBytes + kRequestClassCount};
    const std::uint8_t estimands = r.arm_counts[2];
    EXPECT(estimands == run_estimands(arm_counts[0], arm_counts[1]), "arm_counts estimands");
    const ArmSummary* arm_summary[2] = {&b.summary.control, &b.summary.treatment};
    std::size_t values[2];
    std::size_t unfinished[2];
    for (int arm = 0; arm < 2; ++arm) {
        const std::uint8_t* counts = arm_counts[arm];
        std::size_t total = 0;
        unfinished[arm] = 0;
        for (int c = 0; c < kRequestClassCount; ++c) {
            total += counts[c];
            const ClassRole role = role_of(static_cast<RequestClass>(c));
            if (role == ClassRole::unfinished || role == ClassRole::failed) unfinished[arm] += counts[c];
        }
        const std::size_t usable = counts[static_cast<int>(RequestClass::usable_control)] +
                                   counts[static_cast<int>(RequestClass::usable_treatment)];
        EXPECT(counts[static_cast<int>(RequestClass::prewarm)] == 0, "a pre-warm request counted in an arm");
        EXPECT(usable == arm_summary[arm]->latency.n, "arm_counts usable against the summary");
        EXPECT(total - usable == static_cast<std::size_t>(arm_summary[arm]->excluded),
               "arm_counts excluded against the summary");
        values[arm] = arm_values(estimands, counts);
        if (values[arm] == 0) unfinished[arm] = 0;
    }
    const std::vector<std::string> metrics = metric_names();
    EXPECT(r.arm_metrics.size() == metrics.size(), "one blob per metric");
    for (std::size_t m = 0; m < metrics.size(); ++m)
        EXPECT(r.arm_metrics[m].size() == 8 * (values[0] + values[1]), metrics[m]);
    // network_ms: each value a measured duration or, for each request that did not finish, kUnfinishedValue.
    const auto network = std::find(metrics.begin(), metrics.end(), "network_ms");
    EXPECT(network != metrics.end(), "network_ms is a metric");
    const auto& blob = r.arm_metrics[static_cast<std::size_t>(network - metrics.begin())];
    std::size_t at = 0;
    for (int arm = 0; arm < 2; ++arm) {
        std::size_t sentinels = 0;
        for (std::size_t i = at; i < at + values[arm]; ++i) {
            const double v = double_at(blob, i);
            if (v == kUnfinishedValue) ++sentinels;
            else EXPECT(null_or_in_range(v, kMaxDurationMs), "packed network_ms");
        }
        EXPECT(sentinels == unfinished[arm], "one kUnfinishedValue per request that did not finish");
        at += values[arm];
    }
}

void check_round_trip(const Beacon& b) {
    const std::string text = encode_beacon(b);
    const DecodeResult again = decode_beacon(text);
    EXPECT(again.beacon.has_value(), "an encoded accepted beacon is refused: " + again.error);
    EXPECT(encode_beacon(*again.beacon) == text, "decode then encode is not a fixed point");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    g_input = std::string_view(reinterpret_cast<const char*>(data), size);
    try {
        const DecodeResult r = decode_beacon(g_input);
        EXPECT(r.beacon.has_value() == r.error.empty(), "exactly one of beacon and error: " + r.error);
        if (!r.beacon) {
            check_refusal(r);
            return 0;
        }
        check_beacon(*r.beacon);
        check_stored(*r.beacon);
        // The encoder writes the core's run beacons; a load_error beacon is the gate's (web/src/h3probe.js).
        if (r.beacon->outcome != "load_error") check_round_trip(*r.beacon);
    } catch (const std::exception& e) {
        broken("no exception", __LINE__, e.what());
    }
    return 0;
}

// A decoded beacon to the rows the collector stores, and the per-run record the report reads.
#include "stored_run.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <nlohmann/json.hpp>

#include "connection_setup.hpp"

namespace h3probe {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const std::string& or_null(const std::string& v) { return v; }
double or_null(const std::optional<double>& v) { return v ? *v : kNaN; }
double or_null(const std::optional<bool>& v) { return v ? (*v ? 1.0 : 0.0) : kNaN; }

std::uint8_t order_code(const std::string& order) {
    if (order == "h2-first") return 0;
    if (order == "h3-first") return 1;
    return 2;
}

void append_double(std::vector<std::uint8_t>& out, double v) {
    // WebAssembly and every host this builds on are little-endian: the bytes are the float64 as stored.
    std::uint8_t bytes[sizeof v];
    std::memcpy(bytes, &v, sizeof v);
    out.insert(out.end(), bytes, bytes + sizeof v);
}

}  // namespace

std::vector<std::string> metric_names() {
    std::vector<std::string> names;
#define H3PROBE_METRIC_NAME(name, max, metric, what) \
    if (metric) names.push_back(#name);
    H3PROBE_SAMPLE_DURATIONS(H3PROBE_METRIC_NAME)
#undef H3PROBE_METRIC_NAME
    return names;
}

std::size_t arm_values(std::uint8_t estimands, const std::uint8_t* arm_counts) {
    if (!(estimands & estimand_bit(Estimand::as_assigned))) return 0;
    std::size_t n = 0;
    for (int c = 0; c < kRequestClassCount; ++c)
        if (holds_value(static_cast<RequestClass>(c))) n += arm_counts[c];
    return n;
}

StoredBeacon to_stored(const Beacon& b) {
    StoredBeacon out;
    StoredRun& r = out.run;
    r.run_id = b.run_id;
    r.page_load_id = b.page_load_id;
    r.config_id = b.config_id;
    r.module_version = b.module_version;
    r.run_order = b.order;
    r.arms = b.arms;
    r.outcome = b.outcome;
    r.error = b.error;
    r.reason = b.reason;
    r.run_ms = b.run_ms;
    r.sample_rate = b.sample_rate;
    r.payload_bytes = b.payload_bytes;
#define H3PROBE_STORE_CONTEXT(type, name, limit, what) r.name = or_null(b.context.name);
    H3PROBE_CONTEXT_FIELDS(H3PROBE_STORE_CONTEXT)
#undef H3PROBE_STORE_CONTEXT
    r.errors = nlohmann::json(b.errors).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);

    // The requests of each arm that hold a value, in idx order, for the record.
    std::vector<std::pair<const Sample*, bool>> valued[2];  // (sample, finished)
    std::uint8_t counts[2][kRequestClassCount] = {};
    std::vector<Sample> prewarm;
    for (const Sample& s : b.samples) {
        const RequestClass cls = classify(s);
        StoredRequest q;
        q.run_id = b.run_id;
        q.phase = to_string(s.phase);
        q.idx = s.idx;
        q.origin = to_string(s.origin);
        q.result = to_string(s.result);
        q.request_class = to_string(cls);
        q.http_status = s.http_status;
        q.protocol = s.protocol;
        q.server_protocol = s.server_protocol;
        q.reused = or_null(s.reused);
#define H3PROBE_STORE_DURATION(name, max, metric, what) q.name = or_null(s.name);
        H3PROBE_SAMPLE_DURATIONS(H3PROBE_STORE_DURATION)
#undef H3PROBE_STORE_DURATION
        out.requests.push_back(std::move(q));
        if (cls == RequestClass::prewarm) {
            prewarm.push_back(s);
            continue;
        }
        const int arm = arm_of(s);
        ++counts[arm][static_cast<int>(cls)];
        if (holds_value(cls)) valued[arm].emplace_back(&s, role_of(cls) == ClassRole::measured);
    }
    for (auto& arm : valued)
        std::stable_sort(arm.begin(), arm.end(), [](const auto& x, const auto& y) { return x.first->idx < y.first->idx; });
    const std::uint8_t estimands = run_estimands(counts[0], counts[1]);
    if (!(estimands & estimand_bit(Estimand::as_assigned)))
        for (auto& arm : valued) arm.clear();

    r.arm_counts.reserve(kArmCountsBytes);
    r.arm_counts.push_back(kRunRecordVersion);
    r.arm_counts.push_back(order_code(b.order));
    r.arm_counts.push_back(estimands);
    for (const auto& arm : counts) r.arm_counts.insert(r.arm_counts.end(), arm, arm + kRequestClassCount);
#define H3PROBE_PACK_METRIC(name, max, metric, what)                                   \
    if (metric) {                                                                      \
        std::vector<std::uint8_t> blob;                                                \
        blob.reserve(8 * (valued[0].size() + valued[1].size()));                      \
        for (const auto& arm : valued)                                                 \
            for (const auto& [s, finished] : arm)                                      \
                append_double(blob, finished ? or_null(s->name) : kUnfinishedValue);   \
        r.arm_metrics.push_back(std::move(blob));                                      \
    }
    H3PROBE_SAMPLE_DURATIONS(H3PROBE_PACK_METRIC)
#undef H3PROBE_PACK_METRIC
    r.setup = setup_record(cold_setup(prewarm));
    return out;
}

}  // namespace h3probe

// The connection-setup view (see connection_setup.hpp): the rule that picks each run's cold samples, and the view's
// statistics through the report's own inference.
#include "connection_setup.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "request_class.hpp"
#include "value_aggregates.hpp"

namespace h3probe {
namespace {

std::optional<double> value_of(double v) { return std::isnan(v) ? std::nullopt : std::optional<double>(v); }

}  // namespace

const char* to_string(SetupOutcome o) {
    switch (o) {
#define H3PROBE_SETUP_OUTCOME_NAME(name, what) \
    case SetupOutcome::name: return #name;
        H3PROBE_SETUP_OUTCOMES(H3PROBE_SETUP_OUTCOME_NAME)
#undef H3PROBE_SETUP_OUTCOME_NAME
    }
    return "?";
}

const char* to_string(SetupMetric m) {
    switch (m) {
#define H3PROBE_SETUP_METRIC_NAME(name, paired, what) \
    case SetupMetric::name: return #name;
        H3PROBE_SETUP_METRICS(H3PROBE_SETUP_METRIC_NAME)
#undef H3PROBE_SETUP_METRIC_NAME
    }
    return "?";
}

bool is_paired(SetupMetric m) {
    switch (m) {
#define H3PROBE_SETUP_METRIC_PAIRED(name, paired, what) \
    case SetupMetric::name: return paired;
        H3PROBE_SETUP_METRICS(H3PROBE_SETUP_METRIC_PAIRED)
#undef H3PROBE_SETUP_METRIC_PAIRED
    }
    return false;
}

ColdSetup cold_setup(const std::vector<Sample>& prewarm) {
    ColdSetup out;
    std::vector<const Sample*> order;
    order.reserve(prewarm.size());
    for (const Sample& s : prewarm) order.push_back(&s);
    std::stable_sort(order.begin(), order.end(), [](const Sample* a, const Sample* b) { return a->idx < b->idx; });
    bool seen_h3 = false;
    for (const Sample* s : order) {
        const int p = s->origin == Proto::h3 ? 1 : 0;
        const RequestClass c = classify_measured(*s);
        const bool verified = is_usable(c);
        if (p == 1 && !seen_h3) {
            seen_h3 = true;
            out.first_h3 = verified ? FirstH3::over_h3 : c == RequestClass::fallback ? FirstH3::over_other : FirstH3::unknown;
        }
        if (out.cold[p]) continue;
        SetupOutcome& o = out.outcome[p];
        if (verified && s->reused.has_value() && !*s->reused) {
            out.cold[p] = s;
            o = SetupOutcome::cold;
        } else if (verified && s->reused.value_or(false)) {
            o = SetupOutcome::reused;
        } else if (o == SetupOutcome::absent) {
            o = SetupOutcome::unverified;
        }
    }
    return out;
}

namespace {

double metric_of(const Sample& s, SetupMetric m) {
    const std::optional<double>* v = nullptr;
    switch (m) {
        case SetupMetric::connect_ms: v = &s.connect_ms; break;
        case SetupMetric::network_ms: v = &s.network_ms; break;
        case SetupMetric::tls_ms: v = &s.tls_ms; break;
    }
    return v && v->has_value() ? **v : std::nan("");
}

void append_double(std::vector<std::uint8_t>& out, double v) {
    // WebAssembly and every host this builds on are little-endian: the bytes are the float64 as stored.
    std::uint8_t bytes[sizeof v];
    std::memcpy(bytes, &v, sizeof v);
    out.insert(out.end(), bytes, bytes + sizeof v);
}

double read_double(const std::uint8_t* at) {
    double v;
    std::memcpy(&v, at, sizeof v);
    return v;
}

// One run's pre-warm rows [first, last) as samples; false (and why) when a code or a text does not read.
bool samples_of(const SetupRows& r, std::size_t first, std::size_t last, std::vector<Sample>& out, std::string& error) {
    out.clear();
    const auto text = [&](std::uint32_t code) -> const std::string* { return code < r.texts.size() ? &r.texts[code] : nullptr; };
    for (std::size_t i = first; i < last; ++i) {
        Sample s;
        s.phase = Phase::prewarm;
        s.idx = static_cast<int>(r.idx[i]);
        const std::string *origin = text(r.origin[i]), *result = text(r.result[i]), *protocol = text(r.protocol[i]),
                          *server = text(r.server_protocol[i]);
        if (!origin || !result || !protocol || !server) {
            error = "pre-warm row " + std::to_string(i) + " names a text that is not given";
            return false;
        }
        // A row whose origin or result the core does not name is no verified sample; it still counts as a request.
        if (!parse_proto(*origin, s.origin) || !parse_result(*result, s.result)) s.result = SampleResult::network_error;
        s.protocol = *protocol;
        s.server_protocol = *server;
        if (!std::isnan(r.reused[i])) s.reused = r.reused[i] != 0;
        s.connect_ms = value_of(r.connect_ms[i]);
        s.tls_ms = value_of(r.tls_ms[i]);
        s.network_ms = value_of(r.network_ms[i]);
        out.push_back(std::move(s));
    }
    return true;
}

}  // namespace

std::vector<std::uint8_t> setup_record(const ColdSetup& setup) {
    std::vector<std::uint8_t> out;
    out.reserve(kSetupRecordBytes);
    out.push_back(kSetupRecordVersion);
    for (SetupOutcome o : setup.outcome) out.push_back(static_cast<std::uint8_t>(o));
    out.push_back(static_cast<std::uint8_t>(setup.first_h3));
    for (const Sample* s : setup.cold)
        for (int m = 0; m < kSetupMetrics; ++m) append_double(out, s ? metric_of(*s, static_cast<SetupMetric>(m)) : std::nan(""));
    return out;
}

SetupReport connection_setup_report(const SetupRows& r, const std::uint8_t* records, std::size_t bytes,
                                    const std::vector<std::string>& group_names, const ReportOptions& options) {
    SetupReport out;
    const std::size_t n = r.size();
    for (const auto* column : {&r.run, &r.idx, &r.reused, &r.connect_ms, &r.tls_ms, &r.network_ms})
        if (column->size() != n) return out.error = "the pre-warm rows' columns differ in length", out;
    for (const auto* column : {&r.origin, &r.result, &r.protocol, &r.server_protocol})
        if (column->size() != n) return out.error = "the pre-warm rows' columns differ in length", out;

    const std::size_t groups = group_names.size() + 1;
    out.groups.resize(groups);
    out.groups[0].name = "overall";
    for (std::size_t g = 1; g < groups; ++g) out.groups[g].name = group_names[g - 1];
    std::vector<std::array<ValueGroup, kSetupMetrics>> values(groups);

    std::uint32_t run = 0;
    std::vector<double> v[2];  // one run's values of one metric, kept between runs (no allocation per run)
    // One run's record (setup_record()'s layout) into its group and the overall one; false (and why) if it does not read.
    const auto add_record = [&](std::size_t group, const std::uint8_t* rec, const char* kind, std::size_t at) {
        const auto where = [&] { return kind + std::to_string(at); };
        if (group == 0 || group >= groups) return out.error = where() + " names no group", false;
        if (rec[0] != kSetupRecordVersion)
            return out.error = where() + " is a cold-setup record of version " + std::to_string(rec[0]) +
                               "; this h3probe reads version " + std::to_string(kSetupRecordVersion), false;
        if (rec[1] >= kSetupOutcomes || rec[2] >= kSetupOutcomes || rec[3] > static_cast<int>(FirstH3::unknown))
            return out.error = where() + " holds an outcome code that is not the core's", false;
        const SetupOutcome outcome[2] = {static_cast<SetupOutcome>(rec[1]), static_cast<SetupOutcome>(rec[2])};
        // A run without a pre-warm request is not in the view.
        if (outcome[0] == SetupOutcome::absent && outcome[1] == SetupOutcome::absent) return true;
        const auto value = [&](int p, int m) { return read_double(rec + 4 + 8 * (p * kSetupMetrics + m)); };
        for (std::size_t g : {std::size_t{0}, std::size_t{group}}) {
            SetupGroup& sg = out.groups[g];
            ++sg.runs;
            for (int p = 0; p < 2; ++p) ++sg.outcomes[p][static_cast<int>(outcome[p])];
            if (outcome[0] == SetupOutcome::cold && outcome[1] == SetupOutcome::cold) ++sg.paired;
            switch (static_cast<FirstH3>(rec[3])) {
                case FirstH3::over_h3: ++sg.first_h3_over_h3; break;
                case FirstH3::over_other: ++sg.first_h3_over_other; break;
                case FirstH3::unknown: ++sg.first_h3_unknown; break;
            }
            for (int m = 0; m < kSetupMetrics; ++m) {
                const auto metric = static_cast<SetupMetric>(m);
                for (int p = 0; p < 2; ++p) {
                    v[p].clear();
                    // tls_ms: the cold HTTP/2 value in both places (see SetupGroup::metric).
                    const int from = is_paired(metric) ? p : 0;
                    if (outcome[from] == SetupOutcome::cold && !std::isnan(value(from, m))) v[p].push_back(value(from, m));
                }
                // Order 2: the pre-warm's order is fixed, so no order-effect split.
                add_run(values[g][m], v, run, 2);
            }
        }
        ++run;
        return true;
    };

    for (std::size_t at = 0; at < bytes; at += kGroupNumberBytes + kSetupRecordBytes) {
        if (bytes - at < kGroupNumberBytes + kSetupRecordBytes) return out.error = "the cold-setup records end inside a record", out;
        if (!add_record(read_group_number(records + at), records + at + kGroupNumberBytes, "cold-setup record at byte ", at)) return out;
    }
    std::vector<Sample> samples;
    for (std::size_t first = 0; first < n;) {
        std::size_t last = first + 1;
        while (last < n && r.run[last] == r.run[first]) ++last;
        if (!samples_of(r, first, last, samples, out.error)) return out;
        const std::vector<std::uint8_t> record = setup_record(cold_setup(samples));
        if (!add_record(r.group[first], record.data(), "pre-warm row ", first)) return out;
        first = last;
    }
    for (int m = 0; m < kSetupMetrics; ++m) {
        std::vector<ValueGroup> per_group(groups);
        for (std::size_t g = 0; g < groups; ++g) {
            per_group[g] = std::move(values[g][m]);
            per_group[g].counts.name = out.groups[g].name;
        }
        std::vector<GroupReport> reports = infer_values(per_group, options, out.error);
        if (!out.error.empty()) return out;
        for (std::size_t g = 0; g < groups; ++g) out.groups[g].metric[m] = std::move(reports[g]);
    }
    return out;
}

}  // namespace h3probe

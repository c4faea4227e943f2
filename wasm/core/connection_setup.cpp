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

SetupView::SetupView(const std::vector<std::string>& group_names) : values_(group_names.size() + 1) {
    out_.groups.resize(group_names.size() + 1);
    out_.groups[0].name = "overall";
    for (std::size_t g = 1; g < out_.groups.size(); ++g) out_.groups[g].name = group_names[g - 1];
}

std::string SetupView::add(std::size_t group, const std::uint8_t* rec) {
    if (group == 0 || group >= out_.groups.size()) return "names no group";
    if (rec[0] != kSetupRecordVersion)
        return "is a cold-setup record of version " + std::to_string(rec[0]) + "; this h3probe reads version " +
               std::to_string(kSetupRecordVersion);
    if (rec[1] >= kSetupOutcomes || rec[2] >= kSetupOutcomes || rec[3] >= kFirstH3Codes)
        return "holds an outcome code that is not the core's";
    const SetupOutcome outcome[2] = {static_cast<SetupOutcome>(rec[1]), static_cast<SetupOutcome>(rec[2])};
    // A run without a pre-warm request is not in the view.
    if (outcome[0] == SetupOutcome::absent && outcome[1] == SetupOutcome::absent) return "";
    const auto value = [&](int p, int m) { return read_double(rec + 4 + 8 * (p * kSetupMetrics + m)); };
    for (std::size_t g : {std::size_t{0}, group}) {
        SetupGroup& sg = out_.groups[g];
        ++sg.runs;
        for (int p = 0; p < 2; ++p) ++sg.outcomes[p][static_cast<int>(outcome[p])];
        if (outcome[0] == SetupOutcome::cold && outcome[1] == SetupOutcome::cold) ++sg.paired;
        ++sg.first_h3[rec[3]];
    }
    for (int m = 0; m < kSetupMetrics; ++m) {
        const auto metric = static_cast<SetupMetric>(m);
        for (int p = 0; p < 2; ++p) {
            v_[p].clear();
            // tls_ms: the cold HTTP/2 value in both places (see SetupGroup::metric).
            const int from = is_paired(metric) ? p : 0;
            if (outcome[from] == SetupOutcome::cold && !std::isnan(value(from, m))) v_[p].push_back(value(from, m));
        }
        // Order 2: the pre-warm's order is fixed, so no order-effect split.
        const double diff = paired_difference(v_);
        add_run(values_[group][m], v_, run_, 2, diff);
        add_values(values_[0][m], v_, run_, diff);  // overall's exact sums are its groups' (infer())
    }
    ++run_;
    return "";
}

SetupReport SetupView::infer(const ReportOptions& options) {
    SetupReport out = std::move(out_);
    for (int m = 0; m < kSetupMetrics; ++m) {
        std::vector<ValueGroup> per_group(out.groups.size());
        for (std::size_t g = 0; g < out.groups.size(); ++g) {
            per_group[g] = std::move(values_[g][m]);
            per_group[g].counts.name = out.groups[g].name;
        }
        std::vector<const ValueGroup*> parts = pointers_to(per_group);
        parts.erase(parts.begin());
        sum_parts(per_group[0], parts);
        std::vector<GroupReport> reports = infer_values(per_group, options, out.error);
        if (!out.error.empty()) return out;
        for (std::size_t g = 0; g < out.groups.size(); ++g) out.groups[g].metric[m] = std::move(reports[g]);
    }
    return out;
}

SetupReport connection_setup_report(const std::uint8_t* records, std::size_t bytes, const std::vector<std::string>& group_names,
                                    const ReportOptions& options) {
    SetupView view(group_names);
    for (std::size_t at = 0; at < bytes; at += kGroupNumberBytes + kSetupRecordBytes) {
        SetupReport out;
        if (bytes - at < kGroupNumberBytes + kSetupRecordBytes) return out.error = "the cold-setup records end inside a record", out;
        if (std::string error = view.add(read_group_number(records + at), records + at + kGroupNumberBytes); !error.empty())
            return out.error = "cold-setup record at byte " + std::to_string(at) + " " + error, out;
    }
    return view.infer(options);
}

}  // namespace h3probe

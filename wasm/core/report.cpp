// Reading the per-run records into groups, and the statistics per group (see report.hpp).
#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>

#include "confidence_sequence.hpp"
#include "connection_setup.hpp"
#include "stored_run.hpp"
#include "value_aggregates.hpp"

namespace h3probe {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// How the records of one pass are laid out (ReportRequest): the numbers in front, the cold-setup record behind.
struct Layout {
    std::size_t groups = 0, days = 0;  // the names of each, with overall (groups) or without (days)
    bool setup = false;
    std::uint8_t estimand = estimand_bit(Estimand::as_assigned);  // the runs whose values are read
    std::size_t prefix() const { return (days ? 2 : 1) * kGroupNumberBytes; }
    std::size_t trailer() const { return setup ? kSetupRecordBytes : 0; }
};

// One record's fixed part, checked. Returns an error message, or "" with the record's parts set.
struct RecordHead {
    std::size_t group = 0, day = 0;
    std::uint8_t order = 0;
    std::size_t head_bytes = 0;  // the numbers and the counts
    const std::uint8_t* by_class[2] = {nullptr, nullptr};
    std::size_t n[2] = {0, 0};  // the float64s that follow, per arm
    bool read = false;          // the run counts in the report's estimand: its values are read (else skipped)
};
std::string read_head(const std::uint8_t* data, std::size_t size, std::size_t at, std::int32_t run, const Layout& layout,
                      RecordHead& h) {
    // The message is built only for a record that fails: this runs twice per run on every report.
    const auto where = [&] { return "run record " + std::to_string(run) + " (byte " + std::to_string(at) + ")"; };
    if (size - at < layout.prefix() + 2) return where() + " is cut short";
    h.group = read_group_number(data + at);
    if (h.group == 0 || h.group >= layout.groups) return where() + " names no group";
    h.day = layout.days ? read_group_number(data + at + kGroupNumberBytes) : 0;
    if (layout.days && (h.day == 0 || h.day > layout.days)) return where() + " names no day";
    const std::uint8_t* counts = data + at + layout.prefix();
    if (counts[0] != kRunRecordVersion)
        return where() + " has format " + std::to_string(counts[0]) + ", not " + std::to_string(kRunRecordVersion);
    if (size - at - layout.prefix() < kArmCountsBytes) return where() + " is cut short";
    h.head_bytes = layout.prefix() + kArmCountsBytes;
    h.order = counts[1];
    h.by_class[0] = counts + kArmCountsHeadBytes;
    h.by_class[1] = counts + kArmCountsHeadBytes + kRequestClassCount;
    h.n[0] = arm_values(counts[2], h.by_class[0]);
    h.n[1] = arm_values(counts[2], h.by_class[1]);
    h.read = (counts[2] & layout.estimand) != 0;
    if ((size - at - h.head_bytes) / 8 < h.n[0] + h.n[1] || size - at - h.head_bytes - 8 * (h.n[0] + h.n[1]) < layout.trailer())
        return where() + " holds fewer values than its counts say";
    return "";
}

// Adds one run's counts by class to a group's, and, for a run of the report's estimand, its failed requests and its
// requests that hold a value per arm to the failure sums.
void add_counts(GroupReport& r, const RecordHead& h) {
    if (h.read) {
        std::uint64_t failed[2] = {0, 0};
        for (int arm = 0; arm < 2; ++arm)
            for (int c = 0; c < kRequestClassCount; ++c)
                if (role_of(static_cast<RequestClass>(c)) == ClassRole::failed) failed[arm] += h.by_class[arm][c];
        r.failure_sums.add_run(failed[0], h.n[0], failed[1], h.n[1]);
    }
    std::size_t measured = 0;
    for (int arm = 0; arm < 2; ++arm)
        for (int c = 0; c < kRequestClassCount; ++c) {
            r.classes[arm][c] += h.by_class[arm][c];
            r.arm_requests[arm] += h.by_class[arm][c];
            measured += h.by_class[arm][c];
        }
    if (measured > 0) ++r.runs;
    r.requests += measured;
}

// Reads every record into its group, into overall (groups[0]), into its day (days[day - 1]) and its cold-setup record
// into the view. Two passes: the first checks every record and sizes each sample, so that the second fills them
// without growing a vector (a growing vector copies every value).
std::string read_records(const std::uint8_t* data, std::size_t size, const Layout& layout, std::vector<ValueGroup>& groups,
                         std::vector<ValueGroup>& days, SetupView* setup) {
    std::vector<std::array<std::size_t, 4>> sizes(groups.size() + days.size());  // values and runs per arm
    RecordHead h;
    std::int32_t run = 0;
    for (std::size_t at = 0; at < size; ++run) {
        if (auto error = read_head(data, size, at, run, layout, h); !error.empty()) return error;
        // Overall, the group and, with days, the day (numbered after the groups).
        const std::size_t in[3] = {0, h.group, groups.size() + h.day - 1};
        for (std::size_t k = 0; k < (h.day && h.read ? 3u : h.read ? 2u : 0u); ++k)
            for (int arm = 0; arm < 2; ++arm) {
                sizes[in[k]][2 * arm] += h.n[arm];
                sizes[in[k]][2 * arm + 1] += h.n[arm] > 0;
            }
        at += h.head_bytes + 8 * (h.n[0] + h.n[1]) + layout.trailer();
    }
    for (std::size_t g = 0; g < sizes.size(); ++g)
        for (int arm = 0; arm < 2; ++arm) {
            RunClusteredSample& s = (g < groups.size() ? groups[g] : days[g - groups.size()]).arm[arm];
            s.values.reserve(sizes[g][2 * arm]);
            s.run.reserve(sizes[g][2 * arm]);
            s.run_size.reserve(sizes[g][2 * arm + 1]);
            s.run_id.reserve(sizes[g][2 * arm + 1]);
        }

    std::vector<double> own[2];
    run = 0;
    for (std::size_t at = 0; at < size; ++run) {
        const std::size_t start = at;
        read_head(data, size, at, run, layout, h);
        at += h.head_bytes;
        ValueGroup* targets[3] = {&groups[h.group], &groups[0], h.day ? &days[h.day - 1] : nullptr};
        GroupReport& r = targets[0]->counts;
        add_counts(r, h);
        const std::size_t missing = r.missing_metric;
        for (int arm = 0; arm < 2; ++arm) {
            own[arm].clear();
            for (std::size_t i = 0; i < h.n[arm]; ++i, at += 8) {
                if (!h.read) continue;
                double v;
                std::memcpy(&v, data + at, sizeof v);
                if (std::isnan(v)) ++r.missing_metric;
                else own[arm].push_back(v);
            }
        }
        if (targets[2]) {
            add_counts(targets[2]->counts, h);
            targets[2]->counts.missing_metric += r.missing_metric - missing;
        }
        // The run's paired difference once, for every group it counts in; overall's exact sums are its groups'.
        const double diff = paired_difference(own);
        const auto id = static_cast<std::uint32_t>(run);
        add_run(*targets[0], own, id, h.order, diff);
        add_values(*targets[1], own, id, diff);
        if (targets[2]) add_run(*targets[2], own, id, h.order, diff);
        if (setup) {
            if (std::string error = setup->add(h.group, data + at); !error.empty())
                return "run record " + std::to_string(run) + " (byte " + std::to_string(start) + ") " + error;
            at += kSetupRecordBytes;
        }
    }
    return "";
}

// overall's counts and exact sums are its groups' (its samples were filled while reading).
void sum_counts(std::vector<ValueGroup>& groups) {
    std::vector<const ValueGroup*> parts = pointers_to(groups);
    parts.erase(parts.begin());
    sum_parts(groups[0], parts);
    GroupReport& all = groups[0].counts;
    for (std::size_t i = 1; i < groups.size(); ++i) {
        const GroupReport& g = groups[i].counts;
        for (int arm = 0; arm < 2; ++arm) {
            all.arm_requests[arm] += g.arm_requests[arm];
            for (int c = 0; c < kRequestClassCount; ++c) all.classes[arm][c] += g.classes[arm][c];
        }
        all.runs += g.runs;
        all.requests += g.requests;
        all.missing_metric += g.missing_metric;
        all.failure_sums.add(g.failure_sums);
    }
}

}  // namespace

Report build_report(const std::uint8_t* records, std::size_t size, const ReportRequest& request, SetupReport* setup) {
    Report out;
    const Layout layout{request.groups.size() + 1, request.days.size(), request.setup && setup, estimand_bit(request.estimand)};
    std::vector<ValueGroup> groups(layout.groups), days(layout.days);
    groups[0].counts.name = "overall";
    for (std::size_t i = 0; i < request.groups.size(); ++i) groups[i + 1].counts.name = request.groups[i];
    for (std::size_t i = 0; i < request.days.size(); ++i) days[i].counts.name = request.days[i];
    std::optional<SetupView> view;
    if (layout.setup) view.emplace(request.groups);
    out.error = read_records(records, size, layout, groups, days, view ? &*view : nullptr);
    if (!out.error.empty()) return out;
    sum_counts(groups);
    out.groups = infer_values(pointers_to(groups), request.options, out.error);
    if (!out.error.empty()) return out;
    if (layout.days) {
        // The daily series: overall and each day at the series' percentiles; then the looks at the report's
        // percentiles (delta intervals, as the sequence is) and their stopping line.
        ReportOptions series = request.options;
        series.cdf_probabilities.clear();
        ReportOptions looks = series;
        series.percentiles = kSeriesPercentiles;
        std::vector<const ValueGroup*> by_day = pointers_to(days);
        by_day.insert(by_day.begin(), &groups[0]);
        out.days = infer_values(by_day, series, out.error);
        if (!out.error.empty()) return out;
        looks.method = IntervalMethod::delta;
        out.looks = infer_cumulative(pointers_to(days), looks, out.error);
        if (!out.error.empty()) return out;
        mark_sequence_looks(out.looks, 0);
    }
    if (layout.setup) {
        ReportOptions view_options = request.options;
        view_options.method = IntervalMethod::delta;
        view_options.percentiles = kSeriesPercentiles;
        view_options.cdf_probabilities.clear();
        *setup = view->infer(view_options);
        if (!setup->error.empty()) out.error = setup->error;
    }
    return out;
}

std::size_t treatment_ok(const GroupReport& g) {
    const auto& t = g.classes[1];
    return t[static_cast<int>(RequestClass::fallback)] + t[static_cast<int>(RequestClass::usable_treatment)] +
           t[static_cast<int>(RequestClass::protocol_unknown)] + t[static_cast<int>(RequestClass::protocol_mismatch)];
}

double fallback_rate(const GroupReport& g) {
    const std::size_t ok = treatment_ok(g);
    const std::size_t fallbacks = g.classes[1][static_cast<int>(RequestClass::fallback)];
    return ok ? static_cast<double>(fallbacks) / static_cast<double>(ok) : kNaN;
}

}  // namespace h3probe

// Reading the per-run records into groups, and the statistics per group (see report.hpp).
#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "quantiles.hpp"
#include "stored_run.hpp"

namespace h3probe {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kUsable[2] = {static_cast<int>(RequestClass::usable_control),
                            static_cast<int>(RequestClass::usable_treatment)};

struct GroupData {
    GroupReport report;
    RunClusteredSample arm[2];  // built here directly: the records come run by run, so a run's values are adjacent
    std::vector<double> diffs, diffs_h2_first, diffs_h3_first;
};

// Median (type 7) of a run's few values; sorts them in place.
double median_in_place(std::vector<double>& v) {
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// One run's values as a new run of the sample; run is the run's id, the same in both arms.
void add_run(RunClusteredSample& s, const std::vector<double>& values, std::int32_t run) {
    const auto dense = static_cast<std::uint32_t>(s.run_size.size());
    s.run_size.push_back(static_cast<std::uint32_t>(values.size()));
    s.run_id.push_back(run);
    // push_back into reserved vectors: a range insert per run (a few values) cost more in call overhead.
    for (const double v : values) {
        s.values.push_back(v);
        s.run.push_back(dense);
    }
}

// One record's fixed part, checked. Returns an error message, or "" with the record's parts set.
struct RecordHead {
    std::uint8_t group = 0, order = 0;
    int classes = 0;            // classes per arm in this record's format
    std::size_t head_bytes = 0;  // the group byte and the counts
    const std::uint8_t* by_class[2] = {nullptr, nullptr};
    std::size_t n[2] = {0, 0};  // usable requests per arm: the float64s that follow
};
std::string read_head(const std::uint8_t* data, std::size_t size, std::size_t at, std::int32_t run, std::size_t groups,
                      RecordHead& h) {
    // The message is built only for a record that fails: this runs twice per run on every report.
    const auto where = [&] { return "run record " + std::to_string(run) + " (byte " + std::to_string(at) + ")"; };
    h.group = data[at];
    if (h.group == 0 || h.group >= groups) return where() + " names no group";
    if (size - at - 1 < 2) return where() + " is cut short";
    const std::uint8_t* counts = data + at + 1;
    if (counts[0] < 1 || counts[0] > kRunRecordVersion)
        return where() + " has format " + std::to_string(counts[0]) + ", not 1 to " + std::to_string(kRunRecordVersion);
    if (size - at - 1 < arm_counts_bytes(counts[0])) return where() + " is cut short";
    h.classes = kRecordClasses[counts[0]];
    h.head_bytes = 1 + arm_counts_bytes(counts[0]);
    h.order = counts[1];
    h.by_class[0] = counts + 2;
    h.by_class[1] = counts + 2 + h.classes;
    h.n[0] = h.by_class[0][kUsable[0]];
    h.n[1] = h.by_class[1][kUsable[1]];
    if ((size - at - h.head_bytes) / 8 < h.n[0] + h.n[1]) return where() + " holds fewer values than its counts say";
    return "";
}

// Reads every record into its group and into overall (groups[0]). Two passes: the first checks every record and
// sizes each sample, so that the second fills them without growing a vector (copies were most of the time).
std::string read_records(const std::uint8_t* data, std::size_t size, std::vector<GroupData>& groups) {
    std::vector<std::array<std::size_t, 4>> sizes(groups.size());  // values and runs per arm
    RecordHead h;
    std::int32_t run = 0;
    for (std::size_t at = 0; at < size; ++run) {
        if (auto error = read_head(data, size, at, run, groups.size(), h); !error.empty()) return error;
        for (std::size_t g : {std::size_t{0}, std::size_t{h.group}})
            for (int arm = 0; arm < 2; ++arm) {
                sizes[g][2 * arm] += h.n[arm];
                sizes[g][2 * arm + 1] += h.n[arm] > 0;
            }
        at += h.head_bytes + 8 * (h.n[0] + h.n[1]);
    }
    for (std::size_t g = 0; g < groups.size(); ++g)
        for (int arm = 0; arm < 2; ++arm) {
            RunClusteredSample& s = groups[g].arm[arm];
            s.values.reserve(sizes[g][2 * arm]);
            s.run.reserve(sizes[g][2 * arm]);
            s.run_size.reserve(sizes[g][2 * arm + 1]);
            s.run_id.reserve(sizes[g][2 * arm + 1]);
        }

    std::vector<double> own[2];
    run = 0;
    for (std::size_t at = 0; at < size; ++run) {
        read_head(data, size, at, run, groups.size(), h);
        at += h.head_bytes;
        GroupData* targets[2] = {&groups[h.group], &groups[0]};
        GroupReport& r = targets[0]->report;
        std::size_t measured = 0;
        for (int arm = 0; arm < 2; ++arm)
            for (int c = 0; c < h.classes; ++c) {
                r.classes[arm][c] += h.by_class[arm][c];
                r.arm_requests[arm] += h.by_class[arm][c];
                measured += h.by_class[arm][c];
            }
        if (measured > 0) ++r.runs;
        r.requests += measured;

        for (int arm = 0; arm < 2; ++arm) {
            own[arm].clear();
            for (std::size_t i = 0; i < h.n[arm]; ++i, at += 8) {
                double v;
                std::memcpy(&v, data + at, sizeof v);
                if (std::isnan(v)) ++r.missing_metric;
                else own[arm].push_back(v);
            }
            if (own[arm].empty()) continue;
            for (GroupData* t : targets) add_run(t->arm[arm], own[arm], run);
        }
        if (!own[0].empty() && !own[1].empty()) {
            const double d = median_in_place(own[1]) - median_in_place(own[0]);
            for (GroupData* t : targets) {
                t->diffs.push_back(d);
                if (h.order == 0) t->diffs_h2_first.push_back(d);
                if (h.order == 1) t->diffs_h3_first.push_back(d);
            }
        }
    }
    return "";
}

void analyse(GroupData& d, const ReportOptions& o) {
    GroupReport& r = d.report;
    const RunClusteredSample& h2 = d.arm[0];
    const RunClusteredSample& h3 = d.arm[1];
    r.runs_h2 = h2.runs();
    r.runs_h3 = h3.runs();
    r.analysis = analyze_arms(h2, h3, o.percentiles, o.method, o.confidence);
    if (d.diffs.size() >= 2) r.paired = summarize_paired_differences(d.diffs, o.confidence);
    // Only a randomised order gives both groups; Dropbox's fixed h2-first order cannot be tested.
    if (d.diffs_h2_first.size() >= 2 && d.diffs_h3_first.size() >= 2)
        r.order = order_effect(d.diffs_h2_first, d.diffs_h3_first, o.confidence);
    if (h2.size() >= 2 && h2.runs() >= 2)
        r.sample_size = plan_sample_size(h2, o.size_p, o.size_mde, o.size_alpha, o.size_power);
    if (!o.cdf_probabilities.empty()) {
        if (h2.size() > 0) r.cdf_h2 = quantiles(h2.values, o.cdf_probabilities);
        if (h3.size() > 0) r.cdf_h3 = quantiles(h3.values, o.cdf_probabilities);
    }
}

}  // namespace

Report build_report(const std::uint8_t* records, std::size_t size, const std::vector<std::string>& group_names,
                    const ReportOptions& options) {
    Report out;
    std::vector<GroupData> groups(group_names.size() + 1);
    groups[0].report.name = "overall";
    for (std::size_t i = 0; i < group_names.size(); ++i) groups[i + 1].report.name = group_names[i];
    out.error = read_records(records, size, groups);
    if (!out.error.empty()) return out;

    // overall's counts are its groups' (its samples were filled while reading).
    GroupReport& all = groups[0].report;
    for (std::size_t i = 1; i < groups.size(); ++i) {
        const GroupReport& g = groups[i].report;
        for (int arm = 0; arm < 2; ++arm) {
            all.arm_requests[arm] += g.arm_requests[arm];
            for (int c = 0; c < kRequestClassCount; ++c) all.classes[arm][c] += g.classes[arm][c];
        }
        all.runs += g.runs;
        all.requests += g.requests;
        all.missing_metric += g.missing_metric;
    }
    for (GroupData& g : groups) {
        analyse(g, options);
        out.groups.push_back(std::move(g.report));
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

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
    std::vector<double> values[2];
    std::vector<std::int32_t> runs[2];
    std::vector<double> diffs, diffs_h2_first, diffs_h3_first;
};

// Median (type 7) of a run's few values; sorts them in place.
double median_in_place(std::vector<double>& v) {
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

void append(std::vector<double>& to, const std::vector<double>& from) { to.insert(to.end(), from.begin(), from.end()); }
void append(std::vector<std::int32_t>& to, const std::vector<std::int32_t>& from) {
    to.insert(to.end(), from.begin(), from.end());
}

// Reads every record into its group. Returns an error message, or "" when all of them parsed.
std::string read_records(const std::uint8_t* data, std::size_t size, std::vector<GroupData>& groups) {
    std::size_t at = 0;
    std::int32_t run = 0;
    std::vector<double> own[2];
    while (at < size) {
        const std::string where = "run record " + std::to_string(run) + " (byte " + std::to_string(at) + ")";
        const std::uint8_t g = data[at];
        if (g == 0 || g >= groups.size()) return where + " names no group";
        if (size - at - 1 < kArmCountsBytes) return where + " is cut short";
        const std::uint8_t* counts = data + at + 1;
        if (counts[0] != kRunRecordVersion)
            return where + " has format " + std::to_string(counts[0]) + ", not " + std::to_string(kRunRecordVersion);
        const std::uint8_t order = counts[1];
        const std::uint8_t* by_class[2] = {counts + 2, counts + 2 + kRequestClassCount};
        const std::size_t n[2] = {by_class[0][kUsable[0]], by_class[1][kUsable[1]]};
        at += 1 + kArmCountsBytes;
        if ((size - at) / 8 < n[0] + n[1]) return where + " holds fewer values than its counts say";

        GroupReport& r = groups[g].report;
        std::size_t measured = 0;
        for (int arm = 0; arm < 2; ++arm)
            for (int c = 0; c < kRequestClassCount; ++c) {
                r.classes[arm][c] += by_class[arm][c];
                r.arm_requests[arm] += by_class[arm][c];
                measured += by_class[arm][c];
            }
        if (measured > 0) ++r.runs;
        r.requests += measured;

        for (int arm = 0; arm < 2; ++arm) {
            own[arm].clear();
            for (std::size_t i = 0; i < n[arm]; ++i, at += 8) {
                double v;
                std::memcpy(&v, data + at, sizeof v);
                if (std::isnan(v)) {
                    ++r.missing_metric;
                    continue;
                }
                own[arm].push_back(v);
                groups[g].values[arm].push_back(v);
                groups[g].runs[arm].push_back(run);
            }
        }
        if (!own[0].empty() && !own[1].empty()) {
            const double d = median_in_place(own[1]) - median_in_place(own[0]);
            groups[g].diffs.push_back(d);
            if (order == 0) groups[g].diffs_h2_first.push_back(d);
            if (order == 1) groups[g].diffs_h3_first.push_back(d);
        }
        ++run;
    }
    return "";
}

void analyse(GroupData& d, const ReportOptions& o) {
    GroupReport& r = d.report;
    const RunClusteredSample h2 = make_run_clustered_sample(d.values[0], d.runs[0]);
    const RunClusteredSample h3 = make_run_clustered_sample(d.values[1], d.runs[1]);
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
        if (!d.values[0].empty()) r.cdf_h2 = quantiles(d.values[0], o.cdf_probabilities);
        if (!d.values[1].empty()) r.cdf_h3 = quantiles(d.values[1], o.cdf_probabilities);
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

    GroupData& all = groups[0];
    for (std::size_t i = 1; i < groups.size(); ++i) {
        const GroupData& g = groups[i];
        for (int arm = 0; arm < 2; ++arm) {
            append(all.values[arm], g.values[arm]);
            append(all.runs[arm], g.runs[arm]);
            all.report.arm_requests[arm] += g.report.arm_requests[arm];
            for (int c = 0; c < kRequestClassCount; ++c) all.report.classes[arm][c] += g.report.classes[arm][c];
        }
        append(all.diffs, g.diffs);
        append(all.diffs_h2_first, g.diffs_h2_first);
        append(all.diffs_h3_first, g.diffs_h3_first);
        all.report.runs += g.report.runs;
        all.report.requests += g.report.requests;
        all.report.missing_metric += g.report.missing_metric;
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
           t[static_cast<int>(RequestClass::protocol_unknown)];
}

double fallback_rate(const GroupReport& g) {
    const std::size_t ok = treatment_ok(g);
    const std::size_t fallbacks = g.classes[1][static_cast<int>(RequestClass::fallback)];
    return ok ? static_cast<double>(fallbacks) / static_cast<double>(ok) : kNaN;
}

}  // namespace h3probe

// The report from stored runs: the per-run records (stored_run.hpp) of the selected runs, each prefixed with its
// group, become per group (overall, then each region) the usable values of both arms with their runs, the counts by
// class, and then the statistics: the quantile table with intervals, the paired within-run difference, the
// order-effect test, the sample size and the CDF points for the plots.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "paired_runs.hpp"
#include "quantile_ci.hpp"
#include "request_class.hpp"
#include "sample_size.hpp"

namespace h3probe {

// Each record the report reads (build_report's run records, connection_setup_report's cold-setup records) is prefixed
// with its group's number, from 1, in kGroupNumberBytes bytes, little-endian: so a report has at most kMaxReportGroups
// groups (a split by day over years, or by network with every network shown, has hundreds).
inline constexpr std::size_t kGroupNumberBytes = 2;
inline constexpr std::size_t kMaxReportGroups = 65535;
inline std::size_t read_group_number(const std::uint8_t* p) { return p[0] | static_cast<std::size_t>(p[1]) << 8; }

struct ReportOptions {
    std::vector<double> percentiles = {0.5, 0.75, 0.9, 0.95, 0.99};
    IntervalMethod method = IntervalMethod::delta;
    double confidence = 0.95;
    // The sample-size line: runs per arm to detect a relative change `mde` of quantile `p`.
    double size_p = 0.95, size_mde = 0.05, size_alpha = 0.05, size_power = 0.8;
    std::vector<double> cdf_probabilities;  // empty: no CDF points
    // The daily series' looks: group k (k >= 1, in the order named) holds its own runs and those of every group before
    // it, i.e. the data as it stood at the end of that day (infer_cumulative, value_aggregates.hpp). Delta intervals.
    // infer_report() given groups already cumulative (a warehouse's) marks the looks' stopping line with it
    // (mark_sequence_looks, confidence_sequence.hpp).
    bool cumulative = false;
};

struct GroupReport {
    std::string name;
    std::size_t runs = 0;      // runs with at least one control or treatment request
    std::size_t requests = 0;  // their control and treatment requests
    std::array<std::size_t, 2> arm_requests{};                                    // measured requests per arm
    std::array<std::array<std::size_t, kRequestClassCount>, 2> classes{};         // [arm][class]
    std::size_t missing_metric = 0;  // usable requests without a value of the chosen metric
    ArmsAnalysis analysis;
    std::size_t runs_h2 = 0, runs_h3 = 0;
    std::optional<PairedDifferenceSummary> paired;  // needs >= 2 runs with both arms
    std::optional<OrderEffect> order;               // needs >= 2 runs in each order
    std::optional<SampleSizePlan> sample_size;      // needs >= 2 values and runs in the HTTP/2 arm
    std::vector<double> cdf_h2, cdf_h3;             // quantiles at cdf_probabilities (empty arm: empty)
};

struct Report {
    std::string error;                // empty when the records were read
    std::vector<GroupReport> groups;  // overall, then one per group name in the order given (empty ones included)
};

// records: the concatenation of [group index + 1 (kGroupNumberBytes)][arm_counts][arm_<metric>] per run; group_names
// names groups 1..n. A record that does not parse ends the report with an error naming its position.
Report build_report(const std::uint8_t* records, std::size_t size, const std::vector<std::string>& group_names,
                    const ReportOptions& options);

// Treatment requests whose result was ok, over whatever protocol: the fallback rate's denominator.
std::size_t treatment_ok(const GroupReport& g);
// HTTP/3 fallback rate of a group: treatment fallbacks / treatment_ok (NaN when there are none).
double fallback_rate(const GroupReport& g);

}  // namespace h3probe

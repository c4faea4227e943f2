// The report from stored runs: the per-run records (stored_run.hpp) of the selected runs, each prefixed with its
// group, become per group (overall, then each region) the usable values of both arms with their runs, the counts by
// class, and then the statistics: the quantile table with intervals, the paired within-run difference, the
// order-effect test, the sample size and the CDF points for the plots. The same pass over the records makes the daily
// series (each record carrying its day) and the connection-setup view (each ending with its cold-setup record).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "failure_rate.hpp"
#include "paired_runs.hpp"
#include "quantile_ci.hpp"
#include "request_class.hpp"
#include "sample_size.hpp"

namespace h3probe {

// Each record the report reads (build_report's run records, connection_setup_report's cold-setup records) is prefixed
// with its group's number, from 1, in kGroupNumberBytes bytes, little-endian (and a day's, the same way, for the daily
// series): so a report has at most kMaxReportGroups groups (a split by day over years, or by network with every network
// shown, has hundreds); the warehouse's passes take the same limit (schema().limits.maxReportGroups).
inline constexpr std::size_t kGroupNumberBytes = 2;
inline constexpr std::size_t kMaxReportGroups = 65535;
inline std::size_t read_group_number(const std::uint8_t* p) { return p[0] | static_cast<std::size_t>(p[1]) << 8; }

// The percentiles of the daily series and of the connection-setup view: the body and the tail Dropbox reported.
inline const std::vector<double> kSeriesPercentiles = {0.5, 0.9, 0.95};

// A report's options; the defaults are every report's unless asked otherwise (schema().reportDefaults hands them to
// JavaScript: this is their one home).
struct ReportOptions {
    std::vector<double> percentiles = {0.5, 0.75, 0.9, 0.95, 0.99};
    IntervalMethod method = IntervalMethod::delta;
    double confidence = kDefaultConfidence;
    // The sample-size line: runs per arm to detect a relative change `mde` of quantile `p`.
    double size_p = 0.95, size_mde = 0.05, size_alpha = 0.05, size_power = 0.8;
    std::vector<double> cdf_probabilities;  // empty: no CDF points
    // infer_report(): the groups after the first are the daily series' looks (each day every run received up to its end,
    // as a warehouse sums them): it marks their stopping line (mark_sequence_looks, confidence_sequence.hpp).
    bool cumulative = false;
};

struct GroupReport {
    std::string name;
    std::size_t runs = 0;      // runs with at least one control or treatment request
    std::size_t requests = 0;  // their control and treatment requests
    std::array<std::size_t, 2> arm_requests{};                                    // measured requests per arm
    std::array<std::array<std::size_t, kRequestClassCount>, 2> classes{};         // [arm][class]
    std::size_t missing_metric = 0;  // usable requests without a value of the chosen metric
    FailureSums failure_sums;        // over the runs of the report's estimand (failure_rate.hpp)
    ArmsAnalysis analysis;
    std::size_t runs_h2 = 0, runs_h3 = 0;
    std::optional<PairedDifferenceSummary> paired;  // needs >= 2 runs with both arms
    std::optional<OrderEffect> order;               // needs >= 2 runs in each order
    std::optional<SampleSizePlan> sample_size;      // needs >= 2 values and runs in the HTTP/2 arm
    std::vector<double> cdf_h2, cdf_h3;             // quantiles at cdf_probabilities (empty arm: empty)
    std::optional<FailureComparison> failures;      // needs a run of the estimand
};

// What one pass over the records makes, and how each record is laid out:
//   [group number (1..groups)][day number (1..days), when days are asked][arm_counts][arm_<metric>], each number
//   kGroupNumberBytes little-endian
//   [setup_record() (connection_setup.hpp), when the view is asked]
struct ReportRequest {
    std::vector<std::string> groups;  // names groups 1..n
    // The daily series: each day a group of its own at kSeriesPercentiles (its intervals by options.method), and
    // the looks at the report's percentiles, each day with every run received up to its end (the data as it stood
    // then; delta intervals, infer_cumulative, value_aggregates.hpp) and their stopping line. Empty: no day numbers in
    // the records, no series.
    std::vector<std::string> days;
    bool setup = false;  // the connection-setup view of the same runs, by the same groups
    // The runs whose values the statistics read (request_class.hpp); the counts by class are every run's either way.
    Estimand estimand = Estimand::as_assigned;
    ReportOptions options;
};

struct SetupReport;  // connection_setup.hpp

struct Report {
    std::string error;                // empty when the records were read
    std::vector<GroupReport> groups;  // overall, then one per group name in the order given (empty ones included)
    std::vector<GroupReport> days;    // with days: overall, then one per day
    std::vector<GroupReport> looks;   // with days: one per day
};

// A record that does not parse ends the report with an error naming its position. With request.setup, *setup (not
// null) receives the view.
Report build_report(const std::uint8_t* records, std::size_t size, const ReportRequest& request, SetupReport* setup = nullptr);

// Treatment requests whose result was ok, over whatever protocol: the fallback rate's denominator.
std::size_t treatment_ok(const GroupReport& g);
// HTTP/3 fallback rate of a group: treatment fallbacks / treatment_ok (NaN when there are none).
double fallback_rate(const GroupReport& g);

}  // namespace h3probe

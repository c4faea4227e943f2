// The report split in two, as warehouse-native experiment tools do: the aggregates of each group (counts by class,
// order statistics at given ranks, run-level sums at given thresholds, the moments of the paired differences) and the
// inference from those aggregates (quantiles, delta-method intervals, the paired summary, the order effect, the sample
// size, the CDF points). The aggregates can come from values in memory (report.cpp, the SQLite path) or from SQL
// inside a warehouse (web/report/clickhouseAggregates.mjs); the inference is this one file either way.
//
// Which aggregates are needed depends on earlier ones (a threshold is a quantile estimate, a rank bound comes from the
// sums at that threshold), so infer_report() is called in rounds: each call computes what it can and lists in Needs
// what is still missing; the caller fetches those and calls again. Four rounds at most: estimate ranks, sums at the
// estimates, bound ranks, done.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "paired_runs.hpp"
#include "quantile_ci.hpp"
#include "report.hpp"

namespace h3probe {

// A group's samples: the two arms' values (with their runs) and the paired within-run differences (one per run with
// both arms: median of its h3 values - median of its h2 values).
enum class SampleKind : std::uint8_t { h2 = 0, h3 = 1, diff = 2 };
inline constexpr int kSampleKinds = 3;

// The rounds a caller of infer_report() allows before it gives up: four suffice (above), more means a source that does
// not deliver what was asked. infer_from() here and the JavaScript callers (schema().limits.maxInferenceRounds) use it.
inline constexpr int kMaxInferenceRounds = 8;

struct SampleAggregates {
    std::uint64_t n = 0;     // values
    std::uint64_t runs = 0;  // runs with at least one value (diff: n)
    std::map<std::uint64_t, double> order_stats;  // 0-based rank in ascending order -> value
    std::map<double, BelowSums> below;            // threshold -> sums (diff: each difference is a run of its own)
};

struct GroupAggregates {
    GroupReport counts;  // name, runs, requests, arm_requests, classes, missing_metric; nothing else is read
    std::array<SampleAggregates, kSampleKinds> sample;
    std::uint64_t runs_paired = 0;            // runs with values in both arms
    Moments diffs, diffs_h2_first, diffs_h3_first;  // of the paired differences: all, h2-first runs, h3-first runs
    std::map<std::pair<double, double>, CrossSums> cross;  // (h2 threshold, h3 threshold) -> cross sums
};

struct Needs {
    struct Rank { std::size_t group; SampleKind sample; std::uint64_t rank; };
    struct Below { std::size_t group; SampleKind sample; double threshold; };
    struct Cross { std::size_t group; double q2, q3; };
    std::vector<Rank> ranks;
    std::vector<Below> below;
    std::vector<Cross> cross;
    bool empty() const { return ranks.empty() && below.empty() && cross.empty(); }
};

// The groups' reports from their aggregates (delta intervals only: the bootstrap needs the values), each row with its
// confidence sequence (confidence_sequence.hpp) and, once complete, the report's multiplicity adjustment over every
// group's rows (multiplicity.hpp). Lists in needs whatever is missing; the returned groups are complete only when
// needs comes back empty (pass an empty needs).
std::vector<GroupReport> infer_report(const std::vector<GroupAggregates>& groups, const ReportOptions& options, Needs& needs);

// Where aggregates come from: values in memory (value_aggregates.hpp) or a warehouse. start() gives every group's
// counts and sizes; fill() adds what a round of infer_report() listed in needs.
class AggregateSource {
public:
    virtual ~AggregateSource() = default;
    virtual std::vector<GroupAggregates> start() = 0;
    virtual void fill(std::vector<GroupAggregates>& aggregates, const Needs& needs) = 0;
};

// The driver: calls infer_report() and asks the source for what it needs until nothing is missing. error is set (and
// nothing returned) if a round fails to make progress.
std::vector<GroupReport> infer_from(AggregateSource& source, const ReportOptions& options, std::string& error);

// The aggregates as JSON and back (for the Node binding): see web/report/clickhouseAggregates.mjs for the layout.
std::vector<GroupAggregates> aggregates_from_json(const std::string& text, std::string& error);
std::string needs_to_json(const Needs& needs);

}  // namespace h3probe

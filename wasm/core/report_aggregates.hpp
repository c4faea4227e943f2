// The report split in two, as warehouse-native experiment tools do: the aggregates of each group (counts by class,
// order statistics at given ranks, run-level sums at given thresholds, the moments of the paired differences) and the
// inference from those aggregates (quantiles, delta-method intervals, the paired summary, the order effect, the sample
// size, the CDF points). The aggregates can come from values in memory (report.cpp, the SQLite path) or from SQL
// inside a warehouse (web/report/clickhouseAggregates.mjs); the inference is this one file either way.
//
// Which aggregates are needed depends on earlier ones (a threshold is a quantile estimate, a rank bound comes from the
// sums at that threshold), so infer_report() is called in rounds: each call computes what it can and lists in Needs
// what is still missing; the caller fetches those and calls again. Four rounds at most: estimate ranks, sums at the
// estimates, bound ranks, done. The aggregates that cross from a warehouse into the core are declared here once, by
// name (fields(), below).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "exact_sum.hpp"
#include "paired_runs.hpp"
#include "quantile_ci.hpp"
#include "report.hpp"

namespace h3probe {

// A group's samples: the two arms' values (with their runs) and the paired within-run differences (one per run with
// both arms: median of its h3 values - median of its h2 values).
enum class SampleKind : std::uint8_t { h2 = 0, h3 = 1, diff = 2 };
inline constexpr int kSampleKinds = 3;

// The rounds an inference may take: four suffice (above), more means a source that does not deliver what was asked.
// Every driver asks next_round_error() after a round that left needs, so this limit is the only one.
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
    // The paired differences' exact sums (all, h2-first runs, h3-first runs): their moments are the same bits from
    // any source (exact_sum.hpp).
    MomentSums diffs, diffs_h2_first, diffs_h3_first;
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

// The group's sample-size line from its Δ row at size_p, where the report has one with a standard error
// (plan_from_difference: the pairing counted); else it stays the HTTP/2 arm's (plan_from_interval).
void plan_from_report_row(GroupReport& report, const ReportOptions& options);

// The groups' reports from their aggregates (delta intervals only: the bootstrap needs the values), each row with its
// confidence sequence (confidence_sequence.hpp) and, once complete, the report's multiplicity adjustment over every
// group's rows (multiplicity.hpp). Lists in needs whatever is missing; the returned groups are complete only when
// needs comes back empty (pass an empty needs).
std::vector<GroupReport> infer_report(const std::vector<GroupAggregates>& groups, const ReportOptions& options, Needs& needs);

// After round `round` (counted from 0) of infer_report() left needs: "" when another round may follow, else why not.
std::string next_round_error(int round);

// Where aggregates come from: values in memory (value_aggregates.hpp) or a warehouse. start() gives every group's
// counts and sizes; fill() adds what a round of infer_report() listed in needs.
class AggregateSource {
public:
    virtual ~AggregateSource() = default;
    virtual std::vector<GroupAggregates> start() = 0;
    virtual void fill(std::vector<GroupAggregates>& aggregates, const Needs& needs) = 0;
};

// The driver for a source in memory: calls infer_report() and asks the source for what it needs until nothing is
// missing (a warehouse's driver is the JavaScript one, web/report/buildReport.mjs, round by round through the
// binding). error is set (and nothing returned) when next_round_error() says so.
std::vector<GroupReport> infer_from(AggregateSource& source, const ReportOptions& options, std::string& error);

// The aggregates as they cross from a warehouse into the core, and the needs as they go back; a map crosses as a list
// of entries (RankValue, BelowEntry, CrossEntry), each with its key's fields. Their names are the Node binding's
// (wasm/bindings/node_bindings.cpp, one value_object each); schema().aggregates lists them, and
// web/server/h3probeNode.d.ts is checked against that. The format has a version: a reader refuses another.
inline constexpr int kAggregatesVersion = 2;

struct Aggregates {
    int version = kAggregatesVersion;
    std::vector<GroupAggregates> groups;  // overall, then each group
};
struct RankValue {
    std::uint64_t rank = 0;  // 0-based, ascending
    double value = 0;
};
struct BelowEntry {
    double threshold = 0;
    BelowSums sums;
};
struct CrossEntry {
    double q2 = 0, q3 = 0;
    CrossSums sums;
};

// Each map's entries, and the map from its entries (a later entry of the same key wins).
std::vector<RankValue> entries(const std::map<std::uint64_t, double>& m);
std::vector<BelowEntry> entries(const std::map<double, BelowSums>& m);
std::vector<CrossEntry> entries(const std::map<std::pair<double, double>, CrossSums>& m);
void from_entries(const std::vector<RankValue>& list, std::map<std::uint64_t, double>& m);
void from_entries(const std::vector<BelowEntry>& list, std::map<double, BelowSums>& m);
void from_entries(const std::vector<CrossEntry>& list, std::map<std::pair<double, double>, CrossSums>& m);

// What a reader checks beyond the fields' types: the version, the samples and request classes the core has, and for
// each group its arm_requests (the sums of its classes). "" or the first problem.
std::string check_aggregates(Aggregates& aggregates);

}  // namespace h3probe

// The in-process aggregate source: each group's usable values in memory, run by run, answering what infer_report()
// asks for (order statistics by radix selection, per-run counts at or below a threshold summed over the runs, and
// the same counts crossed over the runs that measured both arms). The report over SQLite and the coverage simulation
// both infer through it; a warehouse computes the same aggregates in SQL (web/report/clickhouseAggregates.mjs).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "quantile_ci.hpp"
#include "quantiles.hpp"
#include "report.hpp"
#include "report_aggregates.hpp"

namespace h3probe {

// One group's values. diffs: one paired within-run difference per run with both arms (median of its h3 values -
// median of its h2 values), for their order statistics; sums: their exact sums by the run's order (h2 first, h3
// first, neither), kept as the runs are added so that no inference adds them again, and a group made of others (the
// overall one) has its parts' summed (sum_parts()).
struct ValueGroup {
    GroupReport counts;          // name and counts by class; the inference fills the rest
    RunClusteredSample arm[2];   // h2, h3
    std::vector<double> diffs;
    std::array<MomentAccumulator, 3> sums;
};

// Adds one paired difference to the group; order 0 = h2 first, 1 = h3 first, anything else = not randomised.
void add_difference(ValueGroup& group, double diff, int order);

// whole's exact sums as the sum of its parts' (each of whole's runs in one of them).
void sum_parts(ValueGroup& whole, const std::vector<const ValueGroup*>& parts);

// Adds one run's values (non-empty) to an arm; id names the run, the same in both arms.
void add_run(RunClusteredSample& sample, const std::vector<double>& values, std::uint32_t id);

// A run's paired difference: the median of its h3 values minus the median of its h2 values (sorting them in place);
// NaN when an arm has none, or when a median is above kMaxDurationMs (among requests that did not finish).
double paired_difference(std::vector<double> (&values)[2]);

// Adds one run to the group: its values in each arm (either may be empty) and its paired difference (NaN: none, the
// run is not paired); order 0 = h2 first, 1 = h3 first, anything else = not randomised.
void add_run(ValueGroup& group, const std::vector<double> (&values)[2], std::uint32_t id, int order, double diff);
// The same, the difference computed here (paired_difference(): sorts the values in place).
void add_run(ValueGroup& group, std::vector<double> (&values)[2], std::uint32_t id, int order);
// The run's values and difference without its exact sums: for a group whose sums are its parts' (sum_parts()).
void add_values(ValueGroup& group, const std::vector<double> (&values)[2], std::uint32_t id, double diff);

class ValueAggregates : public AggregateSource {
public:
    explicit ValueAggregates(std::vector<const ValueGroup*> groups);
    std::vector<GroupAggregates> start() override;
    void fill(std::vector<GroupAggregates>& aggregates, const Needs& needs) override;

private:
    OrderStatistics& stats(std::size_t group, int sample);
    std::vector<const ValueGroup*> groups_;
    std::vector<std::array<std::unique_ptr<OrderStatistics>, kSampleKinds>> stats_;
};

// The groups by address, for the functions below that take a subset or an order of their own.
std::vector<const ValueGroup*> pointers_to(const std::vector<ValueGroup>& groups);

// infer_from() over the groups' values: the report of each group, with options.method's intervals (the bootstrap's
// replace the delta method's, bootstrap.hpp, and the discoveries follow them).
std::vector<GroupReport> infer_values(const std::vector<ValueGroup>& groups, const ReportOptions& options,
                                      std::string& error);
std::vector<GroupReport> infer_values(std::vector<const ValueGroup*> groups, const ReportOptions& options, std::string& error);

// Adds every run of `from` (values, counts, paired differences) to `into`; run ids must differ between the two.
void append_group(ValueGroup& into, const ValueGroup& from);

// The looks of a sequential analysis: report k is inferred over groups 0..k together (named as group k), one look at a
// time through infer_values(), so each look is exactly the report that group's data would give at that moment.
std::vector<GroupReport> infer_cumulative(const std::vector<const ValueGroup*>& groups, const ReportOptions& options,
                                          std::string& error);

}  // namespace h3probe

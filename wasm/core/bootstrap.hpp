// The run-level (cluster) bootstrap over the same grouped values the in-process aggregate source holds
// (value_aggregates.hpp): an alternative to the delta intervals, for comparison. It needs every value, so a warehouse
// report has delta intervals only.
#pragma once

#include <cstdint>
#include <vector>

#include "quantile_ci.hpp"

namespace h3probe {

struct BootstrapOptions {
    unsigned replicates = 400;
    std::uint64_t seed = 0x6833'7072'6f62'6521ULL;
};

// Poisson(1) weights: each replicate gives every run a weight w ~ Poisson(1) and counts each of its values w times
// (the Poisson approximation of resampling runs with replacement, which needs no re-indexing and streams over data
// sorted once). Returns [p][b]: the type-7 quantile of replicate b's weighted sample. A run's weight in replicate b is
// a hash of (seed, b, run id), not the next draw of a stream, so two samples bootstrapped with the same seed give a
// run id the same weight in both. Cost: one sort, then per replicate one hash per run and a walk over the sorted
// values from the nearer end to the farthest quantile (O(N)).
std::vector<std::vector<double>> bootstrap_quantile_replicates(const RunClusteredSample& sample,
                                                               const std::vector<double>& ps, unsigned replicates,
                                                               std::uint64_t seed);

// Replaces the intervals of a's rows (computed by infer_report(): the point estimates stay) by percentile intervals
// of the replicate differences h3_b - h2_b and of 100 (h3_b / h2_b - 1) (order statistics of the same rank, so the two
// exclude 0 together), and each arm's own; corr becomes the
// correlation of the h2 and h3 replicate quantiles. Each replicate draws one weight per run id and applies it to the
// run's values in both arms, so a replicate resamples page loads; a run with one arm moves only that arm's quantile.
void bootstrap_intervals(ArmsAnalysis& a, const RunClusteredSample& h2, const RunClusteredSample& h3,
                         const BootstrapOptions& options = {});

}  // namespace h3probe

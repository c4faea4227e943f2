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
    bool jitter = true;  // untie values on a timer's grid (timer_grid) within that grid
};

// Values jittered within their timer's resolution: width[r] for dense run r (0: none); stream keeps the arms' draws
// apart. Empty: no jitter.
struct Jitter {
    std::vector<double> width;
    std::uint64_t stream = 0;
};

// The coarsest step of the ladder 5, 2, 1, 0.5, 0.2, 0.1 ms on which every finished value (at most kMaxDurationMs)
// lies, 0 for none: a run's timer grid as its values show it. Browsers step their clocks by 1 ms (Firefox, WebKit)
// or 0.1 ms with jitter (Chromium, whose values so fall on no grid); a grid of g ties values, and the bootstrap
// replicates of a quantile on tied values jump by g or not at all, which makes its interval too short. Read from the
// values, not the beacon's timer_resolution_ms, because that is what the values carry; a run with few values may
// show a coarser grid than its clock's (two values on a 1 ms grid both fall on 2 ms with odds 1/4), and its jitter
// is then that much wider.
double timer_grid(const double* values, std::size_t n);

// Poisson(1) weights: each replicate gives every run a weight w ~ Poisson(1) and counts each of its values w times
// (the Poisson approximation of resampling runs with replacement, which needs no re-indexing and streams over data
// sorted once). Returns [p][b]: the type-7 quantile of replicate b's weighted sample. A run's weight in replicate b is
// a hash of (seed, b, run id), not the next draw of a stream, so two samples bootstrapped with the same seed give a
// run id the same weight in both. Cost: one sort, then per replicate one hash per run and a walk over the sorted
// values from the nearer end to the farthest quantile (O(N)).
std::vector<std::vector<double>> bootstrap_quantile_replicates(const RunClusteredSample& sample,
                                                               const std::vector<double>& ps, unsigned replicates,
                                                               std::uint64_t seed, const Jitter& jitter = {});

// Replaces the intervals of a's rows (computed by infer_report(): the point estimates stay) by percentile intervals
// of the replicate differences h3_b - h2_b and of 100 (h3_b / h2_b - 1) (order statistics of the same rank, so the two
// exclude 0 together), and each arm's own; corr becomes the
// correlation of the h2 and h3 replicate quantiles. Each replicate draws one weight per run id and applies it to the
// run's values in both arms, so a replicate resamples page loads; a run with one arm moves only that arm's quantile.
// The values of a run on a timer grid (timer_grid) are jittered within it first (options.jitter). The standard
// errors become the intervals' half-widths over z, the p-value the replicates' own (2 min(#{d_b <= 0}, #{d_b >= 0}) /
// B: below 1 - confidence exactly when the interval excludes 0), df NaN; no interval where an arm has fewer runs than
// the row's min_runs.
void bootstrap_intervals(ArmsAnalysis& a, const RunClusteredSample& h2, const RunClusteredSample& h3,
                         const BootstrapOptions& options = {});

}  // namespace h3probe

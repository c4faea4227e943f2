// Confidence intervals for quantiles and for the HTTP/3 - HTTP/2 difference of quantiles, with the run (page load)
// as the unit of variance: a run-clustered delta-method interval (default) and a run-level bootstrap (for comparison).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace h3probe {

// One arm's sample: every value with the run it was measured in. The requests of one run share the user's device
// and network at that moment, so they are correlated; all variances below treat the run as the independent unit.
struct RunClusteredSample {
    std::vector<double> values;      // in input order
    std::vector<std::uint32_t> run;  // dense run index (0 .. runs-1) of each value
    std::vector<std::uint32_t> run_size;  // values per dense run index
    std::size_t runs() const { return run_size.size(); }
    std::size_t size() const { return values.size(); }
};

// Builds the sample from values and run ids (any int32: ids >= 0 are grouped, each negative id is a run of its own).
// Non-finite values are dropped. values and run_ids must have the same length (extra entries of either are ignored).
RunClusteredSample make_run_clustered_sample(const std::vector<double>& values, const std::vector<std::int32_t>& run_ids);

// Fewer runs than this in an arm: no interval (null in JSON). The intervals are asymptotic in the number of runs;
// below ~10 runs the run-level variance is itself too noisy to mean anything.
constexpr std::size_t kMinRunsForInterval = 10;

struct QuantileInterval {
    double p = 0;
    double estimate = 0;       // type-7 quantile (as numpy.percentile); NaN if the sample is empty
    double lo = 0, hi = 0;     // confidence interval for the quantile; NaN when undefined
    double se = 0;             // standard error implied by the interval, (hi - lo) / (2 z); NaN when undefined
    double design_effect = 0;  // Var(F^) with runs as units / Var(F^) if requests were independent, at the estimate
};

// Deng, Knoblich & Lu, "Applying the Delta Method in Metric Analytics: A Practical Guide with Novel Ideas",
// KDD 2018 (arXiv:1803.06336), section on quantile metrics; the same construction GrowthBook uses for its quantile
// tests. For each p, with n runs, run i holding N_i values (N = sum N_i) and q^ the type-7 quantile:
//   S_i  = #{values of run i <= q^}                     (the indicator summed per run)
//   F^   = sum S_i / sum N_i                            (a ratio of run means: the delta method applies)
//   Var(F^) = n / ((n - 1) N^2) * sum_i (S_i - F^ N_i)^2   (delta method for a ratio, runs independent)
//   s    = N * sqrt(Var(F^))                            (sd of the count of values below the true quantile)
//   l    = floor(N p - z s + 1/2),  u = ceil(N p + z s + 1/2)   (1-based ranks; the 1/2 is a continuity correction)
//   CI   = [X_(l), X_(u)]                               (outer, distribution-free: no density estimate needed)
//   se   = (X_(u) - X_(l)) / (2 z)
// Independent requests would give Var(F^) = p (1 - p) / N (the textbook binomial interval); clustering inflates it
// by the design effect. The interval is undefined (NaN) when l < 1 or u > N (p too extreme for the sample size)
// or when there are fewer than kMinRunsForInterval runs. Cost: one selection pass plus O(N) per p.
std::vector<QuantileInterval> quantile_intervals_delta(const RunClusteredSample& sample, const std::vector<double>& ps,
                                                       double confidence);

// Run-level (cluster) bootstrap by Poisson(1) weights: each replicate gives every run a weight w ~ Poisson(1) and
// counts each of its values w times (the Poisson approximation of resampling runs with replacement, which needs no
// re-indexing and streams over data sorted once). Returns [p][b]: the type-7 quantile of replicate b's weighted
// sample. Deterministic for a given seed. Cost: one sort, then O(runs) per replicate on large samples (bands, see
// the .cpp; use_bands = false forces the plain O(N) walk, which gives identical results: the tests compare them).
std::vector<std::vector<double>> bootstrap_quantile_replicates(const RunClusteredSample& sample,
                                                               const std::vector<double>& ps, unsigned replicates,
                                                               std::uint64_t seed, bool use_bands = true);

enum class IntervalMethod { delta, bootstrap };

struct BootstrapOptions {
    unsigned replicates = 400;
    std::uint64_t seed = 0x6833'7072'6f62'6521ULL;
};

struct QuantileDifferenceRow {
    double p = 0;
    double h2 = 0, h3 = 0;
    double diff_ms = 0;         // h3 - h2: negative means HTTP/3 was faster
    double diff_pct = 0;        // 100 * (h3 / h2 - 1)
    double ci_ms_lo = 0, ci_ms_hi = 0;    // NaN when undefined
    double ci_pct_lo = 0, ci_pct_hi = 0;  // NaN when undefined
    double ci_h2_lo = 0, ci_h2_hi = 0;    // each arm's own interval (delta: outer CI; bootstrap: percentile)
    double ci_h3_lo = 0, ci_h3_hi = 0;
    bool significant = false;   // the ms interval is defined and excludes 0
};

struct ArmsAnalysis {
    IntervalMethod method = IntervalMethod::delta;
    double confidence = 0.95;
    std::size_t n_h2 = 0, n_h3 = 0, runs_h2 = 0, runs_h3 = 0;
    std::vector<QuantileDifferenceRow> rows;  // empty if an arm has no values
};

// The headline table with intervals. The difference of the two arms' quantiles:
//   delta:     Var(diff) = se_h3^2 + se_h2^2, CI = diff -/+ z sqrt(Var(diff));
//              ratio r = h3 / h2 by the delta method, Var(r) = se_h3^2 / h2^2 + h3^2 se_h2^2 / h2^4,
//              CI% = 100 (r - 1 -/+ z sqrt(Var(r))).
//   bootstrap: the two arms are resampled independently; percentile interval of the replicate differences
//              (and of 100 (h3_b / h2_b - 1)).
// Both treat the arms as independent samples of runs. In this experiment most runs measure both arms, and the
// run's shared conditions (device, access network, time of day) move both arms' values the same way, so the two
// quantile estimates are positively correlated and Var(diff) = Var(h3) + Var(h2) - 2 Cov is overstated by 2 Cov:
// the interval is conservative (too wide), never too narrow, unless the arms were negatively correlated within a run
// (nothing in the design suggests that; the paired within-run differences in paired_runs.hpp look at it directly).
//
// The report's default is delta: a few O(N) passes after one radix selection per arm (4.2 M requests in ~70 ms
// natively, ~140 ms in WASM on this 2-core machine, npm run bench:quantiles), deterministic, and in native_stub/coverage_sim (1000 experiments, 400 runs per arm)
// it covered the true difference 94.0 / 95.4 / 94.0% at p50 / p90 / p95. The bootstrap needs a sort and B
// replicates (seconds at this scale), adds Monte Carlo noise to the bounds, and covered 92.9 / 94.6 / 94.4% there.
ArmsAnalysis analyze_arms(const RunClusteredSample& h2, const RunClusteredSample& h3, const std::vector<double>& ps,
                          IntervalMethod method, double confidence, const BootstrapOptions& bootstrap = {});

// JSON for the report (bounds that are NaN become null):
// {"method":"delta","confidence":0.95,"n_h2":…,"n_h3":…,"runs_h2":…,"runs_h3":…,
//  "rows":[{"p":…,"h2":…,"h3":…,"diff_ms":…,"diff_pct":…,"ci_ms":[lo,hi],"ci_pct":[lo,hi],"significant":…,
//           "ci_h2":[lo,hi],"ci_h3":[lo,hi]}]}
std::string to_json(const ArmsAnalysis& a);

}  // namespace h3probe

// The delta method's formulas for run-clustered quantile intervals and for the HTTP/3 - HTTP/2 difference of quantiles,
// with the run (page load) as the unit of variance. They take aggregates only (counts, sums, order statistics):
// infer_report() (report_aggregates.hpp) asks an aggregate source for those and calls these. The run-level bootstrap,
// which needs the values themselves, is bootstrap.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace h3probe {

// One arm's sample: every value with the run it was measured in. The requests of one run share the user's device
// and network at that moment, so they are correlated; all variances below treat the run as the independent unit.
// Built run by run (add_run in value_aggregates.hpp): a run's values are adjacent.
struct RunClusteredSample {
    std::vector<double> values;      // run by run
    std::vector<std::uint32_t> run;  // dense run index (0 .. runs-1) of each value
    std::vector<std::uint32_t> run_size;  // values per dense run index
    std::vector<std::uint32_t> run_id;    // the run's id (its record): the same id in both arms is the same page load
    std::size_t runs() const { return run_size.size(); }
    std::size_t size() const { return values.size(); }
};

// Fewer runs than this in an arm: no interval (null in JSON). The intervals are asymptotic in the number of runs;
// below ~10 runs the run-level variance is itself too noisy to mean anything.
constexpr std::size_t kMinRunsForInterval = 10;

struct QuantileInterval {
    double p = 0;
    double estimate = 0;       // type-7 quantile (as numpy.percentile); NaN if the sample is empty
    double lo = 0, hi = 0;     // confidence interval for the quantile; NaN when undefined
    double se = 0;             // standard error implied by the interval, (hi - lo) / (2 z); NaN when undefined
    double se_woodruff = 0;    // (Q(p + z sd(F^)) - Q(p - z sd(F^))) / (2 z), Q the type-7 quantile; NaN as se
    double design_effect = 0;  // Var(F^) with runs as units / Var(F^) if requests were independent, at the estimate
};

// The delta method's aggregates at one threshold q (the quantile estimate), with S_i = values of run i at or below q
// and N_i = values of run i: sums over the runs. Integers: the same sums come out of C++ over values and out of SQL.
struct BelowSums {
    std::uint64_t below = 0;       // sum S_i
    std::uint64_t below_sq = 0;    // sum S_i^2
    std::uint64_t below_size = 0;  // sum S_i N_i
    std::uint64_t size_sq = 0;     // sum N_i^2
};
// Across the two arms, at the h2 threshold q2 and the h3 threshold q3, over runs with values in both arms.
struct CrossSums {
    std::uint64_t s2s3 = 0, s2n3 = 0, n2s3 = 0, n2n3 = 0;  // sum S2_i S3_i, S2_i N3_i, N2_i S3_i, N2_i N3_i
};

// Inference from aggregates, step 1: from an arm's N values in n_runs runs and its sums at the estimate of p, the
// variance of F^, the design effect, and which ranks the interval needs (below). No value is read here.
struct DeltaFit {
    double F = 0, var_F = 0, sum_sq = 0;  // sum_sq = sum_i (S_i - F^ N_i)^2; NaN when undefined (< 2 runs)
    double design_effect = 0;
    bool bounds = false;                  // l, u defined (enough runs, p not too extreme)
    std::size_t l = 0, u = 0;             // 1-based ranks of the outer interval
    double woodruff_lo = 0, woodruff_hi = 0;  // p -/+ z sd(F^), clamped to [0, 1]
};
DeltaFit delta_fit(std::size_t N, std::size_t n_runs, double p, const BelowSums& sums, double z);
// sum_i e2_i e3_i (the residuals' cross sum) from the cross sums and each arm's N and sum S_i.
double delta_cross(const CrossSums& c, std::size_t N2, std::uint64_t below2, std::size_t N3, std::uint64_t below3);

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
//   se_woodruff = (Q(p + z sd(F^)) - Q(p - z sd(F^))) / (2 z), Q the type-7 quantile (Woodruff 1952, "Confidence
//                 intervals for medians and other position measures", JASA 47): the same slope without the outward
//                 rounding of l and u, which adds one to two ranks and so overstates se at small N.
// Independent requests would give Var(F^) = p (1 - p) / N (the textbook binomial interval); clustering inflates it
// by the design effect. The interval is undefined (NaN) when l < 1 or u > N (p too extreme for the sample size)
// or when there are fewer than kMinRunsForInterval runs.

enum class IntervalMethod { delta, bootstrap };

struct QuantileDifferenceRow {
    double p = 0;
    double h2 = 0, h3 = 0;
    double diff_ms = 0;         // h3 - h2: negative means HTTP/3 was faster
    double diff_pct = 0;        // 100 * (h3 / h2 - 1)
    double ci_ms_lo = 0, ci_ms_hi = 0;    // NaN when undefined
    double ci_pct_lo = 0, ci_pct_hi = 0;  // NaN when undefined
    double ci_h2_lo = 0, ci_h2_hi = 0;    // each arm's own interval (delta: outer CI; bootstrap: percentile)
    double ci_h3_lo = 0, ci_h3_hi = 0;
    // Each interval's own mark: it is defined and excludes 0. The Δ ms and the Δ % interval are computed apart (the
    // second through the ratio's variance), so near 0 one can exclude 0 while the other does not.
    bool significant_ms = false, significant_pct = false;
    double corr = 0;            // estimated correlation of the two arms' quantile estimates (rho below); NaN if none
    // The delta method's standard errors of Δ ms and Δ % (sqrt(Var(Delta)), 100 sqrt(Var(r)) below), NaN when none.
    // The bootstrap replaces the intervals above and keeps these: the sequence and the p-value read them.
    double se_ms = 0, se_pct = 0;
    // The anytime-valid interval (confidence_sequence.hpp): NaN when undefined; each with its own mark.
    double cs_ms_lo = 0, cs_ms_hi = 0, cs_pct_lo = 0, cs_pct_hi = 0;
    bool significant_cs_ms = false, significant_cs_pct = false;
    // Multiplicity (multiplicity.hpp): the two-sided p-value of Δ ms / se_ms, its Benjamini-Hochberg adjustment over
    // every cell of the report, and whether the cell survives at 1 - confidence. NaN / false until mark_discoveries.
    double p_value = 0, q_value = 0;
    bool discovery = false;
};

// The intervals' confidence unless the report is asked for another (ReportOptions, schema().reportDefaults).
inline constexpr double kDefaultConfidence = 0.95;

struct ArmsAnalysis {
    IntervalMethod method = IntervalMethod::delta;
    double confidence = kDefaultConfidence;
    std::size_t n_h2 = 0, n_h3 = 0, runs_h2 = 0, runs_h3 = 0;
    std::size_t runs_paired = 0;              // runs (ids >= 0) with values in both arms
    std::vector<QuantileDifferenceRow> rows;  // empty if an arm has no values
    std::vector<QuantileInterval> h2, h3;     // each arm's own delta interval per row
};

// The headline table with intervals, Delta = h3 - h2 and the ratio r = h3 / h2 (Delta% = 100 (r - 1)).
//
// Most runs measure both arms, and a run's conditions (device, access network, its base latency) move both arms'
// values the same way, so the two quantile estimates are positively correlated and
//   Var(Delta) = Var(h3) + Var(h2) - 2 Cov(h2, h3).
// Leaving out the covariance overstates the variance by 2 Cov (the coverage simulation checks that it would).
//
// The per-arm se_a is se_woodruff (above): an order-statistic slope, so no kernel density estimate is needed. Not
// the outer interval's se, whose outward rounding biases it upwards, and Var(Delta) = se_h3^2 + se_h2^2 - 2 Cov, a
// difference, magnifies such a bias when the arms correlate. For the covariance, the Bahadur representation q^_a - q_a ~ -(F^_a(q_a) - p) / f_a(q_a) makes
// the two quantile estimates correlate exactly as the two arms' F^_a do, and F^_a is a ratio of run totals, whose
// delta-method linearisation per run i is the residual e_ai = S_ai - F^_a N_ai. Taking the runs of either arm as the
// units (a run absent from arm a has S_ai = N_ai = 0, so e_ai = 0):
//   rho       = sum_i e_2i e_3i / sqrt(sum_i e_2i^2 * sum_i e_3i^2)     (sums over all runs; the residuals sum to 0)
//   Cov       = rho se_h2 se_h3
//   Var(Delta) = se_h3^2 + se_h2^2 - 2 Cov,                       CI    = Delta -/+ t sqrt(Var(Delta))
//   Var(r)    = se_h3^2 / h2^2 + h3^2 se_h2^2 / h2^4 - 2 h3 Cov / h2^3,   CI% = 100 (r - 1 -/+ t sqrt(Var(r)))
// with t the critical value of Student's t with G - 1 degrees of freedom, G the units (delta_units below): the
// standard small-sample reference of a cluster-robust statistic (Cameron & Miller, "A Practitioner's Guide to
// Cluster-Robust Inference", J. Human Resources 50(2), 2015), whose variance is itself estimated from G clusters.
// The p-value of the same statistic (delta_p_value) uses the same reference, so a cell's mark and its p < alpha agree.
// (Deng, Knoblich & Lu 2018, the quantile section: the same linearisation, for two metrics on the same units.)
// |rho| <= 1 by Cauchy-Schwarz, so both variances stay >= 0. A run with only one arm (a fallback, a failed arm, or a
// negative id) adds its residual to its own arm's sum of squares and nothing to the cross sum: it widens its arm's
// interval as any run does and dilutes rho, never inflates it.
//
// The bootstrap (bootstrap.hpp) keeps these point estimates and replaces the intervals. Coverage and width of both:
// native_stub/coverage_sim.hpp, host_tests/coverage_sim_test.cpp.
// Inference from aggregates, last step: one row of the table from each arm's interval (estimate, lo, hi, se_woodruff)
// and rho, by the formulas above. enough_runs: both arms have kMinRunsForInterval runs and the confidence is valid.
// Sets significant_ms and significant_pct from the row's intervals, significant_cs_ms and significant_cs_pct from its
// confidence sequence.
void mark_significance(QuantileDifferenceRow& row);

// critical: delta_critical(confidence, units) for the interval of Δ ms and Δ %.
QuantileDifferenceRow delta_difference_row(double p, const QuantileInterval& h2, const QuantileInterval& h3, double rho,
                                           bool enough_runs, double critical);

// The units of the Δ statistic: the runs with a value in either arm (runs_h2 + runs_h3 - runs_paired).
std::size_t delta_units(const ArmsAnalysis& analysis);
// Its two-sided critical value at `confidence`: Student's t with units - 1 degrees of freedom; NaN below 2 units.
double delta_critical(double confidence, std::size_t units);
// Its two-sided p-value, P(|T| >= |estimate| / se) for T ~ t with units - 1 degrees of freedom; NaN if se is not > 0
// and finite, the estimate is not finite, or there are fewer than 2 units.
double delta_p_value(double estimate, double se, std::size_t units);




}  // namespace h3probe

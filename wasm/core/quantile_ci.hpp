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

// The fewest runs an arm needs for an interval at quantile p and a two-sided critical value z (both this and
// kMinRunsForInterval): the quantile's thinner side, runs * min(p, 1 - p), must reach z^2 max(p, 1 - p). That is the
// condition for the z-interval of F^ to stay inside the sample when every run's values fall on one side together
// (the design effect at its largest, a run counting as one value), so it depends on the number of runs alone, never
// on the data: a rule that read the estimated variance would show intervals exactly where the sample had missed the
// runs that make the tail (docs/design.md, R9). At 95 %: p75 12 runs, p90 35, p95 73, p99 381.
std::size_t min_runs_for_interval(double p, double z);

struct QuantileInterval {
    double p = 0;
    double estimate = 0;       // type-7 quantile (as numpy.percentile); NaN if the sample is empty
    double lo = 0, hi = 0;     // the outer, distribution-free interval [X_(l), X_(u)] (below); NaN when undefined
    double se = 0;             // the estimate's standard error (quantile_se below); NaN when undefined
    double df = 0;             // degrees of freedom of se (quantile_df); NaN as se
    double design_effect = 0;  // Var(F^) with runs as units / Var(F^) if requests were independent, at the estimate
    double slope_noise = 0;    // the relative variance of the slope se was read with (quantile_slope_noise); NaN as se
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
// variance of F^, the design effect, the effective runs beyond the estimate, and which probabilities and ranks the
// standard error and the interval need (below). No value is read here.
struct DeltaFit {
    double F = 0, var_F = 0, sum_sq = 0;  // sum_sq = sum_i (S_i - F^ N_i)^2; NaN when undefined (< 2 runs)
    double design_effect = 0;
    // (sum_i A_i)^2 / sum_i A_i^2 with A_i run i's values on the quantile's thinner side (above the estimate for
    // p >= 0.5, at or below it otherwise): Kish's effective number of runs among those that make the tail. The
    // variance of F^ is a sum over those runs, so they, not all the runs, are its degrees of freedom. NaN as sum_sq.
    double tail_runs = 0;
    bool bounds = false;                  // an interval exists: kMinRunsForInterval and min_runs_for_interval met
    std::size_t l = 0, u = 0;             // 1-based ranks of the outer interval, clamped to [1, N]
    double window_lo = 0, window_hi = 0;  // p -/+ kSeWindow sd(F^), clamped to [0, 1]: where quantile_se reads Q
};
DeltaFit delta_fit(std::size_t N, std::size_t n_runs, double p, const BelowSums& sums, double z);

// The half-width of the probability window over which the standard error reads the quantile function's slope, in
// standard errors of F^ (Woodruff's window is z of them: 1.96 at 95 %). docs/design.md (R9) has the calibration.
constexpr double kSeWindow = 1.5;

// The degrees of freedom of an arm's se, from two sources of noise: the variance of F^, a sum over the runs that make
// the tail (nu_F = min(runs, tail_runs) - 1), and the slope, read from the m = N (window_hi - window_lo) values in
// the window: 1 / df = 1 / nu_F + 1 / m, at least 1. Spacing theory gives a slope read from m independent values
// the weight 2 / m; half of it is what the simulation calibrates, as the slope and the estimate err together (a
// quantile that fell in a sparse stretch has both a larger error and a larger slope), which offsets part of the
// slope's noise in Delta / se. With a quarter, 5.9 % of A/A reports claim a difference after Benjamini-Hochberg once
// the slope's noise is out of Var(Delta) (quantile_slope_noise); with the full 2 / m the intervals over-cover
// (docs/design.md, R9). NaN without bounds.
double quantile_df(const DeltaFit& fit, std::size_t N, std::size_t runs);

// The standard error of the quantile estimate q^ from the fit and the quantiles at the window's ends, q_lo = Q(window_lo)
// and q_hi = Q(window_hi):
//   se = sd(F^) * dQ/dp,  dQ/dp ~ q^ (log q_hi - log q_lo) / (window_hi - window_lo)   (q_lo > 0)
//                                ~ (q_hi - q_lo) / (window_hi - window_lo)              (otherwise)
// The difference quotient of the quantile function (Siddiqui 1960; Bloch & Gastwirth 1968; Woodruff 1952 reads the
// same slope over p -/+ z sd(F^)) overstates the slope where Q is convex, and latency's right tail makes it convex:
// on log values Q is nearly linear in the body and mildly convex in the tail, so the slope is read there and turned
// back by the chain rule (dQ/dp = Q d log Q / dp). NaN when the fit has no bounds or the window is empty.
double quantile_se(double estimate, double q_lo, double q_hi, const DeltaFit& fit);
// The relative variance of the slope quantile_se reads, 1 / m over the m = N (window_hi - window_lo) values in its
// window: the difference of two order statistics m ranks apart is a sum of m spacings, and m exponential spacings sum
// to a relative variance of 1 / m. The slope's noise inflates se^2 by that factor on average: E[se^2] = se_true^2 (1 + 1 / m).
// Harmless in one arm (a percent at most), it does not cancel in Delta = h3 - h2: the two arms' slopes are read from
// values of their own, so their noise is independent while the Bahadur terms correlate (rho), and
// E[Var^(Delta)] - Var(Delta) = se_h2^2 / m_2 + se_h3^2 / m_3, against Var(Delta) = (se_h3 - se_h2)^2 + 2 (1 - rho) se_h2 se_h3:
// at rho 0.88 and m = 60, a sixth of Var(Delta). delta_difference_row takes it out (docs/design.md, R9). NaN without bounds.
double quantile_slope_noise(const DeltaFit& fit, std::size_t N);
// The share of the slopes' noise the two arms have in common, as a fraction of rho sqrt(n_2 n_3): their windows'
// counts move together through the runs they share, but less than the Bahadur terms at the quantile do (a narrow
// window's count is mostly the run's own scatter). Calibrated on the simulation: 0 leaves the A/A mixture of networks
// at 30 runs 10 % too narrow, rho itself (1) 3-6 % too wide at 30-100 runs (docs/design.md, R9).
constexpr double kSharedSlopeNoise = 0.5;
// How much of the distance from rho to 1 taking the slopes' noise out may close, at most. The correction shifts the
// correlation by about rho (1 - kSharedSlopeNoise rho) / m whatever rho is, which is right on average but, where a small
// group's rho comes out near 1 by chance (every run's values on one side of the quantile in both arms), took it to 1
// and Var(Delta) to about 0: on an A/A mixture of networks at 10-15 runs, Delta / se had an SD of 3-4 and 7 % of its
// intervals missed. Half brings those groups to 94-96 % and moves no figure from 30 runs by more than a few tenths of
// a point (docs/design.md, R9).
constexpr double kSlopeNoiseGapShare = 0.5;
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
//   CI   = [X_(l), X_(u)]                               (outer, distribution-free: no density estimate needed; each
//                                                        arm's own interval, ci_h2 and ci_h3)
//   se   = quantile_se above: sd(F^) times the slope of Q near p (Woodruff 1952, "Confidence intervals for medians and
//          other position measures", JASA 47, read the slope over p -/+ z sd(F^); here over a narrower window, on
//          log values): the standard error every Δ statistic, p-value and sequence uses.
// Independent requests would give Var(F^) = p (1 - p) / N (the textbook binomial interval); clustering inflates it
// by the design effect. The interval is undefined (NaN) when there are fewer than kMinRunsForInterval or
// min_runs_for_interval runs.

enum class IntervalMethod { delta, bootstrap };

struct QuantileDifferenceRow {
    double p = 0;
    double h2 = 0, h3 = 0;
    double diff_ms = 0;         // h3 - h2: negative means HTTP/3 was faster
    double diff_pct = 0;        // 100 * (h3 / h2 - 1)
    double ci_ms_lo = 0, ci_ms_hi = 0;    // NaN when undefined
    // Δ %: the ratios the Δ ms test does not reject (Fieller, below). NaN when undefined, and NaN with ci_pct_unbounded
    // when the set has no finite bounds (the HTTP/2 quantile's own interval reaches 0).
    double ci_pct_lo = 0, ci_pct_hi = 0;
    bool ci_pct_unbounded = false;
    double ci_h2_lo = 0, ci_h2_hi = 0;    // each arm's own interval (delta: outer CI; bootstrap: percentile)
    double ci_h3_lo = 0, ci_h3_hi = 0;
    // The cell's one decision: its Δ ms interval is defined and excludes 0. The Δ % interval excludes 0 % exactly then
    // (it is the same test, inverted), so every mark, highlight, dot and verdict reads this field.
    bool significant = false;
    // The percentile, or an arm's interval for it, reaches the requests that did not finish (kUnfinishedValue,
    // request_class.hpp): their times are only known to exceed the finished ones', so the row has estimates but no
    // Δ, interval, p-value or decision (unfinished_row).
    bool unfinished = false;
    // Estimated correlation of the two arms' quantile estimates: rho below, of the arms without their slopes' noise
    // (quantile_slope_noise, kSharedSlopeNoise), at most 1; NaN if none.
    double corr = 0;
    // The standard errors: of Δ ms (delta: sqrt(Var(Delta)) below), of Δ % (100 sqrt(Var(r)) below: reported, never
    // used for an interval) and of each arm's quantile; NaN when none. The bootstrap replaces them by its intervals'
    // half-widths over z.
    double se_ms = 0, se_pct = 0, se_h2 = 0, se_h3 = 0;
    double df = 0;              // degrees of freedom of the Δ statistic's Student t reference (below); NaN when none
    std::size_t min_runs = 0;   // the fewest runs each arm needs for an interval at p (min_runs_for_interval)
    // The anytime-valid interval (confidence_sequence.hpp): NaN when undefined; Δ % as above (Fieller with the
    // sequence's multiplier). significant_cs: the sequence of Δ ms excludes 0 (and so that of Δ %).
    double cs_ms_lo = 0, cs_ms_hi = 0, cs_pct_lo = 0, cs_pct_hi = 0;
    bool cs_pct_unbounded = false;
    bool significant_cs = false;
    // The sequence's stopping line (confidence_sequence.hpp, set_confidence_sequence and mark_sequence_looks): the more
    // runs it needs to exclude 0 if the estimate and the per-run spread stay as they are (0 when it excludes 0 now,
    // +inf when Δ is exactly 0, NaN without a sequence); and, in the daily looks only, the first look whose sequence
    // excluded 0 up to this one (-1: none), the side it excluded (-1: Δ < 0, +1: Δ > 0, 0: none), whether a later look
    // excluded 0 on the other side, and cs_runs_needed in days at the looks' runs per day (NaN elsewhere).
    double cs_runs_needed = 0;
    int cs_decided_look = -1, cs_decided_side = 0;
    bool cs_conflict = false;
    double cs_days_needed = 0;
    // The two-sided p-value of the interval's own test of Δ = 0 (delta: Δ ms / se_ms against t with df; bootstrap: the
    // replicates', bootstrap.hpp), so p < 1 - confidence exactly when the cell is significant; then (multiplicity.hpp)
    // its Benjamini-Hochberg adjustment over every cell of the report and whether the cell survives at 1 - confidence
    // (NaN / false until mark_discoveries).
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
// The per-arm se_a is QuantileInterval::se (quantile_se): an order-statistic slope, so no kernel density estimate is
// needed. Not the outer interval's width, whose outward rounding biases it upwards, and Var(Delta), a difference,
// magnifies such a bias when the arms correlate. For the covariance, the Bahadur representation
// q^_a - q_a ~ -(F^_a(q_a) - p) / f_a(q_a) makes the two quantile estimates correlate exactly as the two arms' F^_a do,
// and F^_a is a ratio of run totals, whose delta-method linearisation per run i is the residual e_ai = S_ai - F^_a N_ai.
// Taking the runs of either arm as the units (a run absent from arm a has S_ai = N_ai = 0, so e_ai = 0):
//   rho       = sum_i e_2i e_3i / sqrt(sum_i e_2i^2 * sum_i e_3i^2)     (sums over all runs; the residuals sum to 0)
//   Cov       = rho se_h2 se_h3
//   Var(Delta) = se_h3^2 + se_h2^2 - 2 Cov,                       CI = Delta -/+ t sqrt(Var(Delta))
// with each arm's se^2 and Cov less their slopes' noise (quantile_slope_noise: without that, the noise, which does not
// cancel between the arms, made Var(Delta) too large wherever rho is high).
//   Var(r)    = se_h3^2 / h2^2 + h3^2 se_h2^2 / h2^4 - 2 h3 Cov / h2^3   (the ratio's spread at the estimate: se_pct)
// (Deng, Knoblich & Lu 2018, the quantile section: the same linearisation, for two metrics on the same units.)
// |rho| <= 1 by Cauchy-Schwarz, so the variance stays >= 0. A run with only one arm (a fallback, a failed arm, or a
// negative id) adds its residual to its own arm's sum of squares and nothing to the cross sum: it widens its arm's
// interval as any run does and dilutes rho, never inflates it.
//
// t is the critical value of Student's t with `df` degrees of freedom: the standard small-sample reference of a
// cluster-robust statistic, whose variance is itself estimated from few clusters (Cameron & Miller, "A Practitioner's
// Guide to Cluster-Robust Inference", J. Human Resources 50(2), 2015). Each arm's se rests on the runs that make its
// tail and on the values its slope is read from (quantile_df: nu_a), and the degrees of freedom of Var(Delta) combine
// the arms' by Satterthwaite ("An approximate distribution of estimates of variance components",
// Biometrics Bulletin 2(6), 1946):
//   df = (se_h2^2 + se_h3^2)^2 / (se_h2^4 / nu_2 + se_h3^4 / nu_3),   at most units - 1 (delta_units), at least 1.
// The p-value of the same statistic (delta_p_value) uses the same reference, so a cell's mark and its p < alpha agree.
//
// Delta % is the same test inverted for the ratio (Fieller, "Some problems in interval estimation", JRSS B 16(2),
// 1954): the ratios R that the test of h3 - R h2 = 0 does not reject,
//   (h3 - R h2)^2 <= c^2 (se_h3^2 - 2 R Cov + R^2 se_h2^2),
// with c = t for the interval and the sequence's multiplier for the sequence. R = 1 is in the set exactly when the
// Delta ms interval holds 0, so Delta % excludes 0 % exactly when Delta ms excludes 0: one decision per cell. The
// set is a bounded interval around h3 / h2 when h2^2 > c^2 se_h2^2 (the HTTP/2 quantile's own interval excludes 0);
// otherwise it is unbounded (two rays or the whole line) and the report says so instead of a number. The delta
// method's symmetric interval for r, evaluated at the estimate, answered another question and could disagree.
//
// The bootstrap (bootstrap.hpp) keeps these point estimates and replaces the intervals. Coverage and width of both:
// host_tests/sim/coverage_sim.hpp, host_tests/coverage_sim_test.cpp.

// Sets significant (the Delta ms interval is defined and excludes 0) and significant_cs (its sequence's, likewise).
void mark_significance(QuantileDifferenceRow& row);

// The set {R : (b - R a)^2 <= c^2 (vb - 2 R cov + R^2 va)} (Fieller, above) for estimates a (the denominator) and b:
// bounded (lo <= hi, finite) when a^2 > c^2 va; unbounded otherwise. Nothing (undefined) when an input is not finite,
// a variance is negative or c is not > 0.
struct FiellerSet {
    bool defined = false, bounded = false;
    double lo = 0, hi = 0;  // NaN unless bounded
};
FiellerSet fieller(double a, double b, double va, double vb, double cov, double c);

// Sets a row's Delta % bounds (lo, hi in %, unbounded) from Fieller's set at multiplier c over its estimates, se_h2,
// se_h3 and corr; NaN bounds when there is none.
void set_pct_interval(const QuantileDifferenceRow& row, double c, double& lo, double& hi, bool& unbounded);

// Inference from aggregates, last step: one row of the table from each arm's interval (estimate, lo, hi, se, df) and
// rho, by the formulas above. enough_runs: both arms have an interval and the confidence is valid; units: the Delta
// statistic's (delta_units), which caps df.
QuantileDifferenceRow delta_difference_row(double p, const QuantileInterval& h2, const QuantileInterval& h3, double rho,
                                           bool enough_runs, double confidence, std::size_t units);

// Marks a row unfinished (QuantileDifferenceRow::unfinished) when either arm's estimate or outer interval reaches
// above kMaxDurationMs, where only requests that did not finish lie: its Δ, intervals, p-value and decision become
// undefined, and an estimate there undefined too (it is no time). Returns whether it did.
bool mark_unfinished(QuantileDifferenceRow& row, const QuantileInterval& h2, const QuantileInterval& h3);

// The units of the Δ statistic: the runs with a value in either arm (runs_h2 + runs_h3 - runs_paired).
std::size_t delta_units(const ArmsAnalysis& analysis);
// Satterthwaite's degrees of freedom of Var(Delta) from each arm's se and df (above), capped at units - 1; NaN when
// an input is not finite or there are fewer than 2 units.
double delta_df(double se_h2, double df_h2, double se_h3, double df_h3, std::size_t units);
// Its two-sided p-value, P(|T| >= |estimate| / se) for T ~ t with df degrees of freedom; NaN if se is not > 0 and
// finite, the estimate is not finite, or df is not > 0.
double delta_p_value(double estimate, double se, double df);

}  // namespace h3probe

// Anytime-valid intervals for Δ: a confidence sequence over runs in the order received, which stays valid however
// often it is looked at (a fixed-horizon interval checked every day excludes 0 far more often than 1 - confidence
// under no effect). The method: the asymptotic confidence sequence of Waudby-Smith, Arbour, Sinha, Kennedy & Ramdas,
// "Time-uniform central limit theory and asymptotic confidence sequences", Annals of Statistics 52(6), 2024
// (arXiv:2103.06476), whose boundary is Robbins' two-sided normal mixture, applied to the delta-method statistic with
// the run as the unit (see docs/design.md, R16).
//
// With t runs, Δ^_t the estimate and se_t its delta-method standard error (quantile_ci.hpp), the per-run standard
// deviation is sigma^_t = se_t sqrt(t), and for a mixture parameter rho > 0 the (1 - alpha) sequence is
//   Δ^_t -/+ sigma^_t sqrt( 2 (t rho^2 + 1) / (t^2 rho^2) * log( sqrt(t rho^2 + 1) / alpha ) )
//   = Δ^_t -/+ se_t * c(t),   c(t)^2 = (1 + 1/x) (2 log(1/alpha) + log(1 + x)),   x = t rho^2.
// Why it holds for a quantile difference of clustered runs: runs are independent units, and Δ^_t is asymptotically
// linear in them (the Bahadur representation turns each arm's quantile into the ratio F^ of run totals, whose
// per-run linearisation is the residual S_i - F^ N_i), so Δ^_t - Δ is a mean of i.i.d. per-run terms plus a remainder
// that vanishes faster than the boundary; that is the paper's condition for an asymptotic CS. The same per-run terms
// give se_t, so the sequence uses nothing the report does not already have.
#pragma once

#include <cstddef>
#include <vector>

#include "quantile_ci.hpp"

namespace h3probe {

// The number of runs at which the boundary is narrowest (the one tuning parameter). rho is chosen so that c(t) is
// smallest at t = kCsTightestRuns: c there is ~1.55 z at 95 %, and it grows only as sqrt(log t) past it (1.17x at
// 100x the runs) but as 1/sqrt(t) before it (3x at a hundredth), so the constant sits at the small end of the
// deployments the report is made for: a few days of a modest site. docs/design.md has the figures.
constexpr double kCsTightestRuns = 1000;

// c(t) above for t runs at level 1 - alpha, rho tuned to kCsTightestRuns; NaN for t < 1 or alpha outside (0, 1).
double cs_multiplier(double runs, double alpha);

// Sets the row's confidence sequence over `runs` runs (the group's runs with a value in either arm) at the row's
// confidence: cs_ms = Δ -/+ c se_ms, and cs_pct Fieller's set for the ratio at the same multiplier c (quantile_ci.hpp),
// so the two exclude 0 together; and its mark (significant_cs). Nothing when the row has no standard error (too few
// runs): the sequence stays NaN.
void set_confidence_sequence(QuantileDifferenceRow& row, std::size_t runs, double confidence);

// The stopping line. With the estimate and the per-run spread sigma = se sqrt(runs) held where they are, the sequence
// excludes 0 from the first T >= runs with |estimate| > c(T) sigma / sqrt(T) (c(T)^2 / T falls with T, so there is one
// edge, found by bisection): that T, in runs. runs itself when the sequence excludes 0 now; +inf when the estimate is 0
// (or T passes 1e15); NaN when se is not finite and >= 0, runs < 1 or alpha is outside (0, 1). It is the median of what
// an experiment whose true effect and spread were these would need; the real need scatters around it, the more the
// further off it is (host_tests/sequential_test.cpp measures the stated against the simulated runs).
double cs_runs_to_decide(double estimate, double se, std::size_t runs, double alpha);

struct GroupReport;

// The daily looks, groups[first..] with runs in time order (the report's cumulative option: each look every run up to
// its day; a group without runs is no look and numbers none):
// per percentile, the first look whose sequence excluded 0, carried forward to every later look with the side it
// excluded; whether a later look excluded 0 on the other side (cs_conflict: the looks contradict each other, which an
// anytime-valid sequence allows with probability at most alpha); and at each look cs_days_needed = cs_runs_needed /
// (the look's runs / the looks so far), the runs per day so far. A sequence that excluded 0 at one look has decided:
// its guarantee holds over every look at once, so the intersection of the looks' intervals still excludes 0 when a
// later look's alone does not.
void mark_sequence_looks(std::vector<GroupReport>& groups, std::size_t first);

}  // namespace h3probe

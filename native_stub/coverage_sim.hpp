// Coverage simulation: many experiments drawn from known, run-clustered latency distributions, each inferred by the
// report's own path (the in-process aggregate source and infer_report(), or the bootstrap), to check that the
// report's intervals for the h3 - h2 quantile difference cover the true difference at the nominal rate and are as
// wide as the estimate's actual spread (not merely wide enough).
#pragma once

#include <cstdint>
#include <vector>

#include "bootstrap.hpp"
#include "quantile_ci.hpp"

namespace h3probe::sim {

// How the simulation labels the arms' runs. by_run_id: a run that measured both arms has one id in both (the design of
// the experiment, and what the report sees). independent: the h3 arm's runs get ids of their own, as if the arms came
// from disjoint runs (no covariance term, independent bootstrap weights): too wide on paired data, which the
// simulation shows so that a lost pairing would be caught.
enum class ArmPairing { by_run_id, independent };

// Request latency = run factor * request draw: log(run factor) ~ N(0, run_sigma^2) shared by the run's requests,
// log(request) ~ N(mu, sigma^2) per request. The marginal is then exactly lognormal(mu, sqrt(sigma^2 + run_sigma^2)),
// so the true quantiles are known in closed form: exp(mu + sqrt(sigma^2 + run_sigma^2) * Phi^-1(p)).
struct ArmModel {
    double mu = 0, sigma = 0;
};

struct CoverageScenario {
    int experiments = 1000;
    int runs_per_arm = 400;  // with shared_runs: runs per experiment (each measures both arms unless single-arm)
    int requests_per_run = 5;
    double run_sigma = 0.3;
    ArmModel h2{4.0943445622221004, 0.6};   // median 60 ms before the run factor; p95 of the marginal ~181 ms
    ArmModel h3{4.0604430105464191, 0.45};  // median 58 ms, a thinner tail: p95 ~141 ms (about -22%, as Dropbox saw)
    bool shared_runs = false;  // true: the arms' requests come from the same runs (one run factor for both arms)
    // With shared_runs: the share of runs that recorded only one arm (half of them only h2, half only h3), as a
    // fallback or a failed arm leaves them. Either way the marginal of each arm is unchanged.
    double single_arm_share = 0;
    bool ignore_runs = false;  // true: analyse every request as a run of its own (the mistake the run rule prevents)
    IntervalMethod method = IntervalMethod::delta;
    ArmPairing pairing = ArmPairing::by_run_id;
    unsigned bootstrap_replicates = BootstrapOptions{}.replicates;  // the report's default
    std::vector<double> ps = {0.5, 0.9, 0.95};
    double confidence = 0.95;
    std::uint64_t seed = 20240601;
};

struct CoverageResult {
    std::vector<double> ps;
    std::vector<double> true_diff_ms, true_diff_pct;
    std::vector<double> coverage_ms, coverage_pct;  // share of experiments whose interval held the true value
    std::vector<double> coverage_h2;                // the h2 arm's own quantile interval
    std::vector<double> mean_width_ms;
    // Width check: the mean over experiments of the SE an interval implies, (hi - lo) / (2 z), divided by the
    // standard deviation of the point estimate (diff_ms, diff_pct) across experiments. 1 is an interval as wide as
    // the estimate's real spread; coverage alone can pass a too-wide interval.
    std::vector<double> se_ratio_ms, se_ratio_pct;
    std::vector<double> mean_corr;  // mean of the rows' corr (the estimated correlation of the arms' quantiles)
    int undefined = 0;  // intervals that came out null (counted as not covering)
};

double true_quantile(const ArmModel& arm, double run_sigma, double p);

CoverageResult run_coverage(const CoverageScenario& scenario);

}  // namespace h3probe::sim

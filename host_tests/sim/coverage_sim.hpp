// Coverage simulation: many experiments drawn from known, run-clustered latency distributions, each inferred by the
// report's own path (the in-process aggregate source and infer_report(), or the bootstrap), to check that the
// report's intervals for the h3 - h2 quantile difference cover the true difference at the nominal rate and are as
// wide as the estimate's actual spread (not merely wide enough). The calibration table (docs/design.md, R9) runs it by
// group size and percentile on two models of paired latency data (calibration_models()).
#pragma once

#include <cstdint>
#include <string>
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

// Packet loss on top of the lognormal draw, as the synthetic field data has it (web/synthetic/syntheticBeacons.mjs): a
// share of runs is lossy; in a lossy run, with probability h2_hold one stall of scale * (1 + 2 Exp(1)) ms holds every
// HTTP/2 request (head-of-line blocking on the one TCP connection), and each HTTP/3 request independently meets a
// stall of its own with probability h3_hit. No stall at all by default. With stalls the true quantiles have no closed
// form: true_quantiles() draws them.
struct Stalls {
    double lossy_share = 0, h2_hold = 0.6, h3_hit = 0.15, scale = 0;
};

// Field-like structure within a group (calibration_models(): "mixture", "pareto", "arm-state", "uneven", "field-mix").
// A network a run is on: with probability `share` a run's requests are exp(h2_shift) (HTTP/2) or exp(h3_shift)
// (HTTP/3) times the arm's draw, with the request sigma times sigma_scale. Empty: one network, no shift.
struct Network {
    double share = 1, h2_shift = 0, h3_shift = 0, sigma_scale = 1;
};
// A Pareto right tail: each request of an arm independently, with probability h2_share / h3_share, adds a delay of
// scale * U^(-1 / alpha) ms (Pareto with minimum `scale` and index alpha: alpha <= 2 has no variance).
struct ParetoTail {
    double h2_share = 0, h3_share = 0, alpha = 1.5, scale = 0;
};

struct CoverageScenario {
    int experiments = 1000;
    int runs_per_arm = 400;  // with shared_runs: runs per experiment (each measures both arms unless single-arm)
    int requests_per_run = 5;
    double run_sigma = 0.3;
    ArmModel h2{4.0943445622221004, 0.6};   // median 60 ms before the run factor; p95 of the marginal ~181 ms
    ArmModel h3{4.0604430105464191, 0.45};  // median 58 ms, a thinner tail: p95 ~141 ms (about -22%, as Dropbox saw)
    Stalls stalls;
    bool shared_runs = false;  // true: the arms' requests come from the same runs (one run factor for both arms)
    // With shared_runs: the share of runs that recorded only one arm (half of them only h2, half only h3), as a
    // fallback or a failed arm leaves them. Either way the marginal of each arm is unchanged.
    double single_arm_share = 0;
    double h2_only_share = 0;  // with shared_runs: the share of runs whose HTTP/3 arm fell back (UDP blocked): h2 only
    std::vector<Network> networks;  // a mixture of networks within the group; empty: one
    ParetoTail pareto;
    // Each arm's own network state within a run: a log factor N(0, arm_sigma^2) per run and arm on top of the run
    // factor, so a run's requests correlate more within an arm than across the arms (the arms share run_sigma only).
    double arm_sigma = 0;
    // The share of runs whose HTTP/3 arm keeps only 3 or 4 of its requests (either, at random): fewer usable requests
    // in one arm, independent of the values, so the arm's marginal is unchanged.
    double short_arm_share = 0;
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
    // Width check: the mean over experiments of the standard error an interval reports, divided by the standard
    // deviation of its point estimate (diff_ms, diff_pct, the h2 quantile) across experiments. 1 is an interval as
    // wide as the estimate's real spread; coverage alone can pass a too-wide interval. The delta method: the row's
    // se_ms, se_pct (the ratio's delta-method SE; its interval is Fieller's) and se_h2; the bootstrap: what its
    // intervals imply, (hi - lo) / (2 z). The mean over the experiments with an interval, the SD over all of them.
    std::vector<double> se_ratio_ms, se_ratio_pct, se_ratio_h2;
    // The standard error of se_ratio_ms and se_ratio_pct themselves over this many experiments (ratio_error in
    // coverage_sim.cpp): what the table can resolve. Heavy-tailed cells need more experiments to judge 0.95-1.05.
    std::vector<double> se_ratio_ms_error, se_ratio_pct_error;
    // Where a width comes from (npm run calibration:r9 --diagnose): the HTTP/3 arm's SE / SD as se_ratio_h2; the mean
    // stated covariance of the arms' quantiles (corr se_h2 se_h3) / their covariance across experiments; and the SD of
    // (diff_ms - true) / se_ms, which is 1 for an instrument whose stated SE is the spread it shows.
    std::vector<double> se_ratio_h3, cov_ratio, sd_z_ms;
    // The share of experiments with an interval whose |Δ ms - true| exceeds 5 stated SEs: Student's t with 5 degrees of
    // freedom puts 0.4 % there. An SE that collapses towards 0 in a few experiments shows here first, and it is those
    // cells whose p-values Benjamini-Hochberg reads as discoveries.
    std::vector<double> far_ms;
    // The HTTP/2 arm's se = sd(F^) * slope, taken apart: the mean stated sd(F^) / the SD across experiments of the
    // share of values at or below the true quantile; and the mean stated slope / the true one (dQ/dp of the marginal).
    std::vector<double> sd_F_ratio_h2, slope_ratio_h2;
    // Share of experiments whose Δ ms interval (significant) and whose confidence sequence (significant_cs) excluded 0
    // on the side of the true Δ: a decision, the power at this size when the effect is not 0.
    std::vector<double> decided, decided_cs;
    std::vector<double> mean_corr;  // mean of the rows' corr (the estimated correlation of the arms' quantiles)
    std::vector<int> undefined_at;  // per p: experiments whose Δ interval came out null (counted as not covering)
    int undefined = 0;              // all of them
    std::vector<int> unbounded_pct_at;  // per p: of those, Δ % intervals that were unbounded (Fieller's set, quantile_ci.hpp)
};

// The true quantile p of an arm's marginal without stalls, networks, Pareto tail or arm state (closed form).
double true_quantile(const ArmModel& arm, double run_sigma, double p);
// The true quantiles at ps of both arms' marginals ([0]: h2, [1]: h3): closed form for the plain model, else from
// 2^22 runs drawn with a fixed seed (the sd of F at p99 about 5e-5, a twentieth of a 1,500-run experiment's).
std::vector<std::vector<double>> true_quantiles(const CoverageScenario& scenario, const std::vector<double>& ps);

CoverageResult run_coverage(const CoverageScenario& scenario);

// The calibration table's data models (docs/design.md, R9), both paired (every run measures both arms), 5 requests per
// arm: "lognormal" (the scenario above: a run effect shared by both arms, HTTP/3's thinner tail) and "field" (the
// synthetic field data's North America: median 60 ms, run effect sigma 0.4, request sigma 0.35, HTTP/3 4 % faster,
// 6 % lossy runs with HTTP/2's head-of-line stalls, 2 % of runs with UDP blocked, whose HTTP/3 arm falls back and is
// excluded, leaving them h2-only).
struct CalibrationModel {
    std::string name;
    CoverageScenario scenario;  // experiments and runs_per_arm are set per row of the table
};
std::vector<CalibrationModel> calibration_models();

// A Dropbox-like effect on the field-mix model (npm run calibration:r9 --decide): HTTP/3 13 % faster at p90, 21 % at p95
// and 1 % at the median, from a narrower spread of its requests and a faster mobile network, whose runs make the tail.
CoverageScenario decision_model();

// The A/A twin of a scenario: HTTP/3 drawn as HTTP/2 is (the same request model, network shifts, Pareto share; no
// stalls, whose HTTP/2 and HTTP/3 forms differ), so the true Δ is 0 at every percentile.
CoverageScenario aa_twin(CoverageScenario scenario);

}  // namespace h3probe::sim

// How many runs (page loads) per arm an experiment needs to detect a given relative change of a quantile.
#pragma once

#include <cstddef>

#include "quantile_ci.hpp"

namespace h3probe {

struct SampleSizePlan {
    double runs_per_arm = 0;      // rounded up; NaN when the baseline is too small to estimate the variance
    double requests_per_run = 0;  // mean values per run in the baseline
    double design_effect = 0;     // Var(F^) with runs as units / Var(F^) with independent requests, at the quantile
    double quantile = 0;          // the baseline's quantile p
    // runs_per_arm from the Δ's own standard error at p (plan_from_difference: the pairing counted), not from the
    // HTTP/2 arm alone as if the arms were apart (plan_from_interval).
    bool paired = false;
};

// From a baseline arm (values + run ids), for quantile p, a minimum detectable relative change mde (0.05 = 5%),
// two-sided level alpha and power:
//   se(q)       = the quantile's run-clustered standard error (quantile_se, quantile_ci.hpp)
//               = sqrt(DE p (1 - p) / (N f(q)^2)), the slope 1 / f read from order statistics near q
//   sigma2_run  = n_runs * se(q)^2                      the variance of q^ scaled to one run
//   runs_per_arm = ceil(2 (z_{1-alpha/2} + z_{power})^2 sigma2_run / (mde q)^2)
// The factor 2 is the two arms (equal sizes, equal variance assumed: the baseline stands in for both).
// Equivalently runs = 2 (z_a + z_b)^2 DE p (1 - p) / (m f(q)^2 (mde q)^2) with m requests per run.
// From the baseline's size, runs and its delta interval at p (confidence 1 - alpha; infer_report() computes it).
SampleSizePlan plan_from_interval(std::size_t values, std::size_t runs, const QuantileInterval& qi, double mde_relative,
                                  double alpha, double power);

// With both arms measured at p (the report's row there, any interval method), from the difference itself: its
// standard error se_ms shrinks as 1 / sqrt(runs) when both arms grow in today's proportions, so the smaller arm needs
//   runs_per_arm = ceil(min(runs_h2, runs_h3) (z_{1-alpha/2} + z_{power})^2 se_ms^2 / (mde q)^2)
// runs, q the HTTP/2 quantile. Pairing lowers se_ms by the arms' covariance (Var(h3 - h2) = Var h2 + Var h3 - 2 Cov,
// quantile_ci.hpp): with correlation rho and equal spreads the plan needs (1 - rho) times the runs the arms taken apart
// need. Replaces plan's runs_per_arm and sets paired when the row has a standard error; else leaves plan as it was.
void plan_from_difference(SampleSizePlan& plan, const QuantileDifferenceRow& row, std::size_t runs_h2, std::size_t runs_h3,
                          double mde_relative, double alpha, double power);

}  // namespace h3probe

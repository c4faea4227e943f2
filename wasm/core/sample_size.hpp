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

}  // namespace h3probe

// The standard normal distribution's CDF and quantile, for confidence intervals, p-values and sample sizes.
#pragma once

namespace h3probe {

// P(Z <= x) for Z ~ N(0, 1).
double normal_cdf(double x);

// x with normal_cdf(x) == p, for p in (0, 1); -inf/+inf at 0/1, NaN outside [0, 1]. Accurate to a few ulp.
double normal_quantile(double p);

// The two-sided critical value for a confidence level c in (0, 1): normal_quantile((1 + c) / 2), 1.959964 at 0.95.
double two_sided_z(double confidence);

}  // namespace h3probe

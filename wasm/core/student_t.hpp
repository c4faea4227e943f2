// Student's t distribution, the small-sample reference of a cluster-robust statistic: with G clusters (runs) the
// delta-method t statistic is referred to t with G - 1 degrees of freedom rather than to the normal.
#pragma once

namespace h3probe {

// P(|T| >= |t|) for T ~ Student t with df > 0 degrees of freedom: the regularized incomplete beta I_x(df/2, 1/2) at
// x = df / (df + t^2). NaN if t is NaN or df is not > 0; df = +inf gives the normal's two-sided tail.
double student_t_two_sided_p(double t, double df);

// The two-sided critical value c with P(|T| >= c) = 1 - confidence, for confidence in (0, 1) and df > 0; NaN outside.
double student_t_two_sided_critical(double confidence, double df);

}  // namespace h3probe

// Within-run comparisons: each run measured both arms, so median(h3) - median(h2) of one run is a paired difference
// free of the between-run spread; and, for runs with randomised order, a test of whether order moves that difference.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "quantile_ci.hpp"

namespace h3probe {

struct PairedDifferenceSummary {
    std::size_t n = 0;
    double mean = 0, median = 0, p10 = 0, p90 = 0;  // NaN if n == 0
    double ci_mean_lo = 0, ci_mean_hi = 0;          // mean -/+ z sd / sqrt(n); NaN if n < 2
    double ci_median_lo = 0, ci_median_hi = 0;      // order-statistic interval (each run one unit); NaN if undefined
};

// One value per run, so runs are the units and the plain formulas apply (infer_report() computes it from the
// differences' aggregates): the mean's interval is the normal approximation (z, not Student's t: the report has
// hundreds of runs at least), the median's is the distribution-free binomial interval [X_(l), X_(u)],
// l, u = n/2 -/+ z sqrt(n)/2 + 1/2 (the delta interval with one value per run).

struct OrderEffect {
    std::size_t n_h2_first = 0, n_h3_first = 0;
    double mean_h2_first = 0, mean_h3_first = 0;  // NaN if that group is empty
    double diff = 0;                              // mean_h3_first - mean_h2_first
    double ci_lo = 0, ci_hi = 0;                  // NaN unless both groups have >= 2 runs
    double p_value = 0;                           // two-sided, H0: no order effect; NaN when undefined
};

// Welch's comparison of the paired differences of h2-first runs and h3-first runs (randomised order only):
// diff = mean_3 - mean_1, se = sqrt(s1^2 / n1 + s3^2 / n3) (sample variances), CI = diff -/+ z se,
// p = 2 (1 - Phi(|diff| / se)). Normal approximation in place of the t distribution with Welch-Satterthwaite df:
// the difference is negligible beyond ~30 runs per group. If HTTP/3 looks faster only when it runs second (warmer
// path, or the HTTP/2 burst still draining), diff is non-zero and the fixed h2-first design is biased.
// It reads each order's count, mean and sample variance (NaN when undefined): aggregates.
struct Moments {
    std::size_t n = 0;
    double mean = 0, var = 0;
};
OrderEffect order_effect_from(const Moments& h2_first, const Moments& h3_first, double confidence);

}  // namespace h3probe

// Sample size for a quantile difference from a baseline's run-clustered quantile variance.
#include "sample_size.hpp"

#include <algorithm>
#include <cmath>
#include <limits>


#include "standard_normal.hpp"

namespace h3probe {

SampleSizePlan plan_from_interval(std::size_t values, std::size_t runs, const QuantileInterval& qi, double mde_relative,
                                  double alpha, double power) {
    constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
    SampleSizePlan plan;
    plan.runs_per_arm = plan.requests_per_run = plan.design_effect = plan.quantile = kNaN;
    if (runs > 0) plan.requests_per_run = static_cast<double>(values) / static_cast<double>(runs);
    if (!(alpha > 0 && alpha < 1) || !(power > 0 && power < 1) || !(mde_relative > 0)) return plan;
    plan.quantile = qi.estimate;
    plan.design_effect = qi.design_effect;
    if (!std::isfinite(qi.se) || !(qi.estimate > 0)) return plan;
    const double z_a = two_sided_z(1 - alpha);
    const double z_b = normal_quantile(power);
    const double var_per_run = static_cast<double>(runs) * qi.se * qi.se;
    const double delta = mde_relative * qi.estimate;
    plan.runs_per_arm = std::ceil(2 * (z_a + z_b) * (z_a + z_b) * var_per_run / (delta * delta));
    return plan;
}

void plan_from_difference(SampleSizePlan& plan, const QuantileDifferenceRow& row, std::size_t runs_h2, std::size_t runs_h3,
                          double mde_relative, double alpha, double power) {
    if (!(alpha > 0 && alpha < 1) || !(power > 0 && power < 1) || !(mde_relative > 0)) return;
    if (!std::isfinite(row.se_ms) || !(row.se_ms > 0) || !(row.h2 > 0) || std::min(runs_h2, runs_h3) == 0) return;
    const double z = two_sided_z(1 - alpha) + normal_quantile(power);
    const double delta = mde_relative * row.h2;
    plan.runs_per_arm = std::ceil(static_cast<double>(std::min(runs_h2, runs_h3)) * z * z * row.se_ms * row.se_ms / (delta * delta));
    plan.quantile = row.h2;
    plan.paired = true;
}

}  // namespace h3probe

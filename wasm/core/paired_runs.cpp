// Paired within-run differences and the order-effect test.
#include "paired_runs.hpp"

#include <cmath>
#include <limits>

#include "standard_normal.hpp"

namespace h3probe {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

OrderEffect order_effect_from(const Moments& a, const Moments& b, double confidence) {
    OrderEffect e;
    e.n_h2_first = a.n;
    e.n_h3_first = b.n;
    e.mean_h2_first = a.mean;
    e.mean_h3_first = b.mean;
    e.diff = b.mean - a.mean;
    e.ci_lo = e.ci_hi = e.p_value = kNaN;
    if (a.n < 2 || b.n < 2 || !(confidence > 0 && confidence < 1)) return e;
    const double se = std::sqrt(a.var / static_cast<double>(a.n) + b.var / static_cast<double>(b.n));
    const double z = two_sided_z(confidence);
    e.ci_lo = e.diff - z * se;
    e.ci_hi = e.diff + z * se;
    if (se > 0) e.p_value = 2 * normal_cdf(-std::fabs(e.diff) / se);
    else e.p_value = e.diff == 0 ? 1.0 : 0.0;
    return e;
}

}  // namespace h3probe

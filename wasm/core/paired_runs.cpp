// Paired within-run differences and the order-effect test.
#include "paired_runs.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "standard_normal.hpp"

namespace h3probe {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct MeanVar {
    double mean = kNaN, var = kNaN;
};

MeanVar mean_var(const std::vector<double>& xs) {
    MeanVar m;
    if (xs.empty()) return m;
    double sum = 0;
    for (double x : xs) sum += x;
    m.mean = sum / static_cast<double>(xs.size());
    if (xs.size() < 2) return m;
    double ss = 0;
    for (double x : xs) ss += (x - m.mean) * (x - m.mean);
    m.var = ss / static_cast<double>(xs.size() - 1);
    return m;
}

std::vector<double> finite_only(const std::vector<double>& xs) {
    std::vector<double> out;
    out.reserve(xs.size());
    for (double x : xs)
        if (std::isfinite(x)) out.push_back(x);
    return out;
}

}  // namespace

Moments moments(const std::vector<double>& xs) {
    const auto finite = finite_only(xs);
    const MeanVar mv = mean_var(finite);
    return {finite.size(), mv.mean, mv.var};
}

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

// The asymptotic confidence sequence's boundary (see confidence_sequence.hpp).
#include "confidence_sequence.hpp"

#include <cmath>
#include <limits>

namespace h3probe {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// x* = t* rho^2 minimising c: d/dx of (1 + 1/x)(2L + log(1 + x)) is 0 where x = 2L + log(1 + x), L = log(1/alpha).
// Waudby-Smith et al. take one step of this fixed point (x = 2L + log(1 + 2L)); it converges in a few more.
double tightest_x(double alpha) {
    const double two_l = -2 * std::log(alpha);
    double x = two_l;
    for (int i = 0; i < 60; ++i) {
        const double next = two_l + std::log1p(x);
        if (std::fabs(next - x) < 1e-14 * x) return next;
        x = next;
    }
    return x;
}

}  // namespace

double cs_multiplier(double runs, double alpha) {
    if (!(runs >= 1) || !(alpha > 0 && alpha < 1)) return kNaN;
    const double rho2 = tightest_x(alpha) / kCsTightestRuns;
    const double x = runs * rho2;
    return std::sqrt((1 + 1 / x) * (-2 * std::log(alpha) + std::log1p(x)));
}

void set_confidence_sequence(QuantileDifferenceRow& row, std::size_t runs, double confidence) {
    row.cs_ms_lo = row.cs_ms_hi = row.cs_pct_lo = row.cs_pct_hi = kNaN;
    row.cs_pct_unbounded = false;
    const double c = cs_multiplier(static_cast<double>(runs), 1 - confidence);
    if (std::isfinite(c) && std::isfinite(row.se_ms) && std::isfinite(row.diff_ms)) {
        row.cs_ms_lo = row.diff_ms - c * row.se_ms;
        row.cs_ms_hi = row.diff_ms + c * row.se_ms;
        set_pct_interval(row, c, row.cs_pct_lo, row.cs_pct_hi, row.cs_pct_unbounded);
    }
    mark_significance(row);
}

}  // namespace h3probe

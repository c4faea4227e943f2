// The asymptotic confidence sequence's boundary (see confidence_sequence.hpp).
#include "confidence_sequence.hpp"

#include <cmath>
#include <limits>

#include "report.hpp"

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
    row.cs_ms_lo = row.cs_ms_hi = row.cs_pct_lo = row.cs_pct_hi = row.cs_runs_needed = row.cs_days_needed = kNaN;
    row.cs_pct_unbounded = false;
    const double c = cs_multiplier(static_cast<double>(runs), 1 - confidence);
    if (std::isfinite(c) && std::isfinite(row.se_ms) && std::isfinite(row.diff_ms)) {
        row.cs_ms_lo = row.diff_ms - c * row.se_ms;
        row.cs_ms_hi = row.diff_ms + c * row.se_ms;
        set_pct_interval(row, c, row.cs_pct_lo, row.cs_pct_hi, row.cs_pct_unbounded);
        row.cs_runs_needed = cs_runs_to_decide(row.diff_ms, row.se_ms, runs, 1 - confidence) - static_cast<double>(runs);
    }
    mark_significance(row);
    row.cs_decided_look = -1;
    row.cs_decided_side = row.significant_cs ? (row.diff_ms < 0 ? -1 : 1) : 0;
    row.cs_conflict = false;
}

double cs_runs_to_decide(double estimate, double se, std::size_t runs, double alpha) {
    if (!std::isfinite(estimate) || !std::isfinite(se) || se < 0 || runs < 1 || !(alpha > 0 && alpha < 1)) return kNaN;
    constexpr double kNever = 1e15;
    const double t0 = static_cast<double>(runs);
    const double sigma = se * std::sqrt(t0);
    // decides(T): |estimate| > c(T) sigma / sqrt(T), the sequence's own test (excludes 0 strictly, as mark_significance).
    const auto decides = [&](double t) { return std::fabs(estimate) > cs_multiplier(t, alpha) * sigma / std::sqrt(t); };
    if (decides(t0)) return t0;
    if (estimate == 0) return std::numeric_limits<double>::infinity();
    double lo = t0, hi = 2 * t0;
    while (!decides(hi)) {
        lo = hi;
        hi *= 2;
        if (hi > kNever) return std::numeric_limits<double>::infinity();
    }
    while (hi - lo > 1) {
        const double mid = std::floor((lo + hi) / 2);
        (decides(mid) ? hi : lo) = mid;
    }
    return hi;
}

void mark_sequence_looks(std::vector<GroupReport>& groups, std::size_t first) {
    for (std::size_t k = 0;; ++k) {
        int decided_look = -1, side = 0, look = -1;
        bool conflict = false, any = false;
        for (std::size_t j = first; j < groups.size(); ++j) {
            // A look is a group with runs: the report lists no other (buildReport.mjs leaves out groups without runs).
            if (groups[j].runs == 0) continue;
            ++look;
            auto& rows = groups[j].analysis.rows;
            if (k >= rows.size()) continue;
            any = true;
            QuantileDifferenceRow& row = rows[k];
            const int here = row.significant_cs ? (row.diff_ms < 0 ? -1 : 1) : 0;
            if (here != 0 && decided_look < 0) {
                decided_look = look;
                side = here;
            } else if (here != 0 && here != side) {
                conflict = true;
            }
            row.cs_decided_look = decided_look;
            row.cs_decided_side = side;
            row.cs_conflict = conflict;
            const double looks = static_cast<double>(look + 1);
            const double units = static_cast<double>(delta_units(groups[j].analysis));
            row.cs_days_needed = units > 0 ? row.cs_runs_needed / (units / looks) : kNaN;
        }
        if (!any) return;
    }
}

}  // namespace h3probe

// The delta method's formulas over aggregates: the variance of F^ and the rank bounds, rho's cross sum, the Δ rows.
#include "quantile_ci.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "student_t.hpp"

namespace h3probe {
namespace {

// Exact integer arithmetic for the residual sums (a GCC/Clang extension; __extension__ keeps -Wpedantic quiet).
__extension__ typedef __int128 i128;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool finite(double x) { return std::isfinite(x); }

}  // namespace

DeltaFit delta_fit(std::size_t N, std::size_t n_runs, double p, const BelowSums& sums, double z) {
    DeltaFit f;
    f.F = f.var_F = f.sum_sq = f.design_effect = f.woodruff_lo = f.woodruff_hi = kNaN;
    if (N == 0 || n_runs < 2) return f;
    // sum_i (S_i - F N_i)^2 with F = T / N, times N^2, in exact integer arithmetic: N^2 sum S^2 - 2 T N sum S N + T^2 sum N^2
    // (a residual sum that is 0 comes out exactly 0, and C++ and SQL, given the same sums, give the same bits).
    const i128 n = static_cast<i128>(N), t = static_cast<i128>(sums.below);
    const i128 scaled = n * n * static_cast<i128>(sums.below_sq) - 2 * t * n * static_cast<i128>(sums.below_size) +
                        t * t * static_cast<i128>(sums.size_sq);
    const double Nd = static_cast<double>(N);
    f.sum_sq = static_cast<double>(scaled) / (Nd * Nd);
    f.F = static_cast<double>(sums.below) / Nd;
    const double runs = static_cast<double>(n_runs);
    f.var_F = runs / ((runs - 1) * Nd * Nd) * f.sum_sq;
    if (f.F > 0 && f.F < 1) f.design_effect = f.var_F / (f.F * (1 - f.F) / Nd);
    if (n_runs < kMinRunsForInterval || !(z > 0 && finite(z))) return f;
    const double sd = Nd * std::sqrt(f.var_F);
    const double l = std::floor(Nd * p - z * sd + 0.5);
    const double u = std::ceil(Nd * p + z * sd + 0.5);
    if (l < 1 || u > Nd) return f;
    f.bounds = true;
    f.l = static_cast<std::size_t>(l);
    f.u = static_cast<std::size_t>(u);
    const double spread = z * std::sqrt(f.var_F);
    f.woodruff_lo = std::max(0.0, p - spread);
    f.woodruff_hi = std::min(1.0, p + spread);
    return f;
}

double delta_cross(const CrossSums& c, std::size_t N2, std::uint64_t below2, std::size_t N3, std::uint64_t below3) {
    // sum_i (S2_i - F2 N2_i)(S3_i - F3 N3_i), F_a = T_a / N_a, times N2 N3, exactly.
    const i128 n2 = static_cast<i128>(N2), n3 = static_cast<i128>(N3);
    const i128 t2 = static_cast<i128>(below2), t3 = static_cast<i128>(below3);
    const i128 scaled = n2 * n3 * static_cast<i128>(c.s2s3) - t3 * n2 * static_cast<i128>(c.s2n3) -
                        t2 * n3 * static_cast<i128>(c.n2s3) + t2 * t3 * static_cast<i128>(c.n2n3);
    return static_cast<double>(scaled) / (static_cast<double>(N2) * static_cast<double>(N3));
}

void mark_significance(QuantileDifferenceRow& row) {
    const auto excludes_zero = [](double lo, double hi) { return finite(lo) && finite(hi) && (lo > 0 || hi < 0); };
    row.significant_ms = excludes_zero(row.ci_ms_lo, row.ci_ms_hi);
    row.significant_pct = excludes_zero(row.ci_pct_lo, row.ci_pct_hi);
    row.significant_cs_ms = excludes_zero(row.cs_ms_lo, row.cs_ms_hi);
    row.significant_cs_pct = excludes_zero(row.cs_pct_lo, row.cs_pct_hi);
}

QuantileDifferenceRow delta_difference_row(double p, const QuantileInterval& q2, const QuantileInterval& q3, double rho,
                                           bool enough_runs, double critical) {
    QuantileDifferenceRow row;
    row.p = p;
    row.h2 = q2.estimate;
    row.h3 = q3.estimate;
    row.diff_ms = row.h3 - row.h2;
    row.diff_pct = row.h2 > 0 ? 100.0 * row.diff_ms / row.h2 : kNaN;
    row.ci_ms_lo = row.ci_ms_hi = row.ci_pct_lo = row.ci_pct_hi = kNaN;
    row.ci_h2_lo = row.ci_h2_hi = row.ci_h3_lo = row.ci_h3_hi = kNaN;
    row.corr = kNaN;
    row.se_ms = row.se_pct = row.cs_ms_lo = row.cs_ms_hi = row.cs_pct_lo = row.cs_pct_hi = kNaN;
    row.p_value = row.q_value = kNaN;
    if (enough_runs) {
        row.ci_h2_lo = q2.lo;
        row.ci_h2_hi = q2.hi;
        row.ci_h3_lo = q3.lo;
        row.ci_h3_hi = q3.hi;
        row.corr = rho;
        // rho is NaN only when an arm's residuals are all zero (no run-level spread at this quantile): then
        // that arm's se is 0 too, or its interval undefined, and the covariance term vanishes either way.
        const double r_cov = finite(rho) ? rho : 0.0;
        const double s2 = q2.se_woodruff, s3 = q3.se_woodruff;
        if (finite(s2) && finite(s3)) {
            const double cov = r_cov * s2 * s3;
            const double se = std::sqrt(std::max(0.0, s3 * s3 + s2 * s2 - 2 * cov));
            row.se_ms = se;
            row.ci_ms_lo = row.diff_ms - critical * se;
            row.ci_ms_hi = row.diff_ms + critical * se;
            if (row.h2 > 0) {
                const double h2v = row.h2, h3v = row.h3;
                const double var_r = s3 * s3 / (h2v * h2v) + h3v * h3v * s2 * s2 / (h2v * h2v * h2v * h2v) -
                                     2 * h3v * cov / (h2v * h2v * h2v);
                const double r = h3v / h2v;
                const double se_r = std::sqrt(std::max(0.0, var_r));
                row.se_pct = 100 * se_r;
                row.ci_pct_lo = 100 * (r - 1 - critical * se_r);
                row.ci_pct_hi = 100 * (r - 1 + critical * se_r);
            }
        }
    }
    mark_significance(row);
    return row;
}

std::size_t delta_units(const ArmsAnalysis& a) { return a.runs_h2 + a.runs_h3 - a.runs_paired; }

double delta_critical(double confidence, std::size_t units) {
    return units >= 2 ? student_t_two_sided_critical(confidence, static_cast<double>(units - 1)) : kNaN;
}

double delta_p_value(double estimate, double se, std::size_t units) {
    if (!finite(estimate) || !(se > 0) || !finite(se) || units < 2) return kNaN;
    return student_t_two_sided_p(estimate / se, static_cast<double>(units - 1));
}

}  // namespace h3probe

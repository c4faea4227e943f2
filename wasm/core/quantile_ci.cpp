// The delta method's formulas over aggregates: the variance of F^ and the rank bounds, rho's cross sum, the Δ rows.
#include "quantile_ci.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "limits.hpp"
#include "student_t.hpp"

namespace h3probe {
namespace {

// Exact integer arithmetic for the residual sums (a GCC/Clang extension; __extension__ keeps -Wpedantic quiet).
__extension__ typedef __int128 i128;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool finite(double x) { return std::isfinite(x); }

}  // namespace

std::size_t min_runs_for_interval(double p, double z) {
    const double thin = std::min(p, 1 - p);
    if (!(thin > 0) || !(z > 0 && finite(z))) return std::numeric_limits<std::size_t>::max();
    const double runs = std::ceil(z * z * (1 - thin) / thin - 1e-9);  // 1e-9: p = 0.5 at z^2 = 4 exactly is 4 runs
    return std::max(kMinRunsForInterval, static_cast<std::size_t>(runs));
}

DeltaFit delta_fit(std::size_t N, std::size_t n_runs, double p, const BelowSums& sums, double z) {
    DeltaFit f;
    f.F = f.var_F = f.sum_sq = f.design_effect = f.tail_runs = f.window_lo = f.window_hi = kNaN;
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
    // The thinner side's counts A_i: values above the estimate (N_i - S_i) from p = 0.5 up, at or below it (S_i) under.
    const i128 above_sq = static_cast<i128>(sums.size_sq) - 2 * static_cast<i128>(sums.below_size) +
                          static_cast<i128>(sums.below_sq);
    const double sum_a = p >= 0.5 ? Nd - static_cast<double>(sums.below) : static_cast<double>(sums.below);
    const double sum_a2 = static_cast<double>(p >= 0.5 ? above_sq : static_cast<i128>(sums.below_sq));
    f.tail_runs = sum_a2 > 0 ? sum_a * sum_a / sum_a2 : 0;
    if (!(z > 0 && finite(z)) || n_runs < min_runs_for_interval(p, z)) return f;
    f.bounds = true;
    const double sd = Nd * std::sqrt(f.var_F);
    const double l = std::floor(Nd * p - z * sd + 0.5);
    const double u = std::ceil(Nd * p + z * sd + 0.5);
    f.l = static_cast<std::size_t>(std::min(Nd, std::max(1.0, l)));
    f.u = static_cast<std::size_t>(std::min(Nd, std::max(1.0, u)));
    const double w = kSeWindow * std::sqrt(f.var_F);
    f.window_lo = std::max(0.0, p - w);
    f.window_hi = std::min(1.0, p + w);
    return f;
}

double quantile_df(const DeltaFit& fit, std::size_t N, std::size_t runs) {
    if (!fit.bounds || !finite(fit.tail_runs)) return kNaN;
    const double of_variance = std::max(1.0, std::min(static_cast<double>(runs), fit.tail_runs) - 1);
    const double window_values = static_cast<double>(N) * (fit.window_hi - fit.window_lo);
    if (!(window_values > 0)) return of_variance;
    return std::max(1.0, 1 / (1 / of_variance + 1 / window_values));
}

double quantile_se(double estimate, double q_lo, double q_hi, const DeltaFit& fit) {
    if (!fit.bounds || !finite(estimate) || !finite(q_lo) || !finite(q_hi)) return kNaN;
    const double sd = std::sqrt(fit.var_F);
    if (sd == 0) return 0;  // no run-level spread of F^ at this quantile
    const double width = fit.window_hi - fit.window_lo;
    if (!(width > 0)) return kNaN;
    // Why log values: see quantile_ci.hpp. A metric with zeros (dns_ms on reused connections) has no log there.
    const double slope = q_lo > 0 && estimate > 0 ? estimate * (std::log(q_hi) - std::log(q_lo)) / width
                                                  : (q_hi - q_lo) / width;
    return sd * slope;
}

double quantile_slope_noise(const DeltaFit& fit, std::size_t N) {
    if (!fit.bounds) return kNaN;
    const double window_values = static_cast<double>(N) * (fit.window_hi - fit.window_lo);
    return window_values > 1 ? 1 / window_values : kNaN;
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
    row.significant = excludes_zero(row.ci_ms_lo, row.ci_ms_hi);
    row.significant_cs = excludes_zero(row.cs_ms_lo, row.cs_ms_hi);
}

FiellerSet fieller(double a, double b, double va, double vb, double cov, double c) {
    FiellerSet set;
    set.lo = set.hi = kNaN;
    if (!finite(a) || !finite(b) || !finite(va) || !finite(vb) || !finite(cov) || va < 0 || vb < 0 || !(c > 0 && finite(c)))
        return set;
    set.defined = true;
    // R^2 (a^2 - c^2 va) - 2 R (a b - c^2 cov) + (b^2 - c^2 vb) <= 0.
    const double c2 = c * c;
    const double A = a * a - c2 * va, B = a * b - c2 * cov, C = b * b - c2 * vb;
    if (!(A > 0)) return set;
    // B^2 - A C = c^2 (a^2 vb - 2 a b cov + b^2 va) - c^4 (va vb - cov^2) >= 0 when |cov| <= sqrt(va vb); rounding aside.
    const double root = std::sqrt(std::max(0.0, B * B - A * C));
    set.bounded = true;
    set.lo = (B - root) / A;
    set.hi = (B + root) / A;
    return set;
}

void set_pct_interval(const QuantileDifferenceRow& row, double c, double& lo, double& hi, bool& unbounded) {
    lo = hi = kNaN;
    unbounded = false;
    if (!(row.h2 > 0)) return;
    const double rho = finite(row.corr) ? row.corr : 0.0;
    const FiellerSet set = fieller(row.h2, row.h3, row.se_h2 * row.se_h2, row.se_h3 * row.se_h3,
                                   rho * row.se_h2 * row.se_h3, c);
    if (!set.defined) return;
    unbounded = !set.bounded;
    if (set.bounded) {
        lo = 100 * (set.lo - 1);
        hi = 100 * (set.hi - 1);
    }
}

QuantileDifferenceRow delta_difference_row(double p, const QuantileInterval& q2, const QuantileInterval& q3, double rho,
                                           bool enough_runs, double confidence, std::size_t units) {
    QuantileDifferenceRow row;
    row.p = p;
    row.h2 = q2.estimate;
    row.h3 = q3.estimate;
    row.diff_ms = row.h3 - row.h2;
    row.diff_pct = row.h2 > 0 ? 100.0 * row.diff_ms / row.h2 : kNaN;
    row.ci_ms_lo = row.ci_ms_hi = row.ci_pct_lo = row.ci_pct_hi = kNaN;
    row.ci_h2_lo = row.ci_h2_hi = row.ci_h3_lo = row.ci_h3_hi = kNaN;
    row.corr = row.df = kNaN;
    row.se_ms = row.se_pct = row.se_h2 = row.se_h3 = row.cs_ms_lo = row.cs_ms_hi = row.cs_pct_lo = row.cs_pct_hi = kNaN;
    row.cs_runs_needed = row.cs_days_needed = kNaN;
    row.p_value = row.q_value = kNaN;
    const double s2 = q2.se, s3 = q3.se;
    if (enough_runs) {
        // Each arm's own interval, where that arm has one (NaN bounds otherwise).
        row.ci_h2_lo = q2.lo;
        row.ci_h2_hi = q2.hi;
        row.ci_h3_lo = q3.lo;
        row.ci_h3_hi = q3.hi;
    }
    if (enough_runs && finite(s2) && finite(s3)) {
        // Each arm's se without its slope's noise (quantile_slope_noise): se^2 / (1 + n_a), n_a = 1 / m_a. The
        // covariance rho s2 s3 carries the part of that noise the arms share, the product of their slopes' errors:
        // kSharedSlopeNoise rho sqrt(n_2 n_3) (docs/design.md, R9), taken out likewise; the correlation of the de-noised
        // arms is what stays, closing at most kSlopeNoiseGapShare of rho's distance to 1 (so Var(Delta) > 0 where
        // rho < 1). Fieller's Delta % reads the same three.
        const double n2 = finite(q2.slope_noise) && q2.slope_noise > 0 ? q2.slope_noise : 0;
        const double n3 = finite(q3.slope_noise) && q3.slope_noise > 0 ? q3.slope_noise : 0;
        const double k2 = 1 / std::sqrt(1 + n2), k3 = 1 / std::sqrt(1 + n3);
        // rho is NaN only when an arm's residuals are all zero (no run-level spread at this quantile): then that
        // arm's se is 0 too, and the covariance term vanishes either way.
        const double shared = finite(rho) ? rho / (1 + kSharedSlopeNoise * std::fabs(rho) * std::sqrt(n2 * n3)) : rho;
        const double top = finite(rho) && rho > 0 ? 1 - (1 - kSlopeNoiseGapShare) * (1 - rho) : 1.0;
        row.corr = finite(rho) ? std::max(-1.0, std::min(top, shared / (k2 * k3))) : rho;
        const double cov = (finite(rho) ? row.corr : 0.0) * s2 * k2 * s3 * k3;
        row.se_h2 = s2 * k2;
        row.se_h3 = s3 * k3;
        const double v2 = row.se_h2 * row.se_h2, v3 = row.se_h3 * row.se_h3;
        row.se_ms = std::sqrt(std::max(0.0, v3 + v2 - 2 * cov));
        if (row.h2 > 0) {
            const double h2 = row.h2, h3 = row.h3;
            const double var_r = v3 / (h2 * h2) + h3 * h3 * v2 / (h2 * h2 * h2 * h2) - 2 * h3 * cov / (h2 * h2 * h2);
            row.se_pct = 100 * std::sqrt(std::max(0.0, var_r));
        }
        row.df = delta_df(row.se_h2, q2.df, row.se_h3, q3.df, units);
        const double critical = student_t_two_sided_critical(confidence, row.df);
        if (finite(critical)) {
            row.ci_ms_lo = row.diff_ms - critical * row.se_ms;
            row.ci_ms_hi = row.diff_ms + critical * row.se_ms;
            set_pct_interval(row, critical, row.ci_pct_lo, row.ci_pct_hi, row.ci_pct_unbounded);
        }
        row.p_value = delta_p_value(row.diff_ms, row.se_ms, row.df);
    }
    mark_significance(row);
    return row;
}

bool mark_unfinished(QuantileDifferenceRow& row, const QuantileInterval& h2, const QuantileInterval& h3) {
    const auto reaches = [](const QuantileInterval& q) { return q.estimate > kMaxDurationMs || q.hi > kMaxDurationMs; };
    if (!reaches(h2) && !reaches(h3)) return false;
    QuantileDifferenceRow out;
    out.p = row.p;
    out.min_runs = row.min_runs;
    out.h2 = h2.estimate > kMaxDurationMs ? kNaN : row.h2;
    out.h3 = h3.estimate > kMaxDurationMs ? kNaN : row.h3;
    out.unfinished = true;
    out.diff_ms = out.diff_pct = out.ci_ms_lo = out.ci_ms_hi = out.ci_pct_lo = out.ci_pct_hi = kNaN;
    out.ci_h2_lo = out.ci_h2_hi = out.ci_h3_lo = out.ci_h3_hi = out.corr = out.df = kNaN;
    out.se_ms = out.se_pct = out.se_h2 = out.se_h3 = out.cs_ms_lo = out.cs_ms_hi = out.cs_pct_lo = out.cs_pct_hi = kNaN;
    out.cs_runs_needed = out.cs_days_needed = out.p_value = out.q_value = kNaN;
    row = out;
    return true;
}

std::size_t delta_units(const ArmsAnalysis& a) { return a.runs_h2 + a.runs_h3 - a.runs_paired; }

double delta_df(double se_h2, double df_h2, double se_h3, double df_h3, std::size_t units) {
    if (!finite(se_h2) || !finite(se_h3) || !(df_h2 > 0) || !(df_h3 > 0) || units < 2) return kNaN;
    const double cap = static_cast<double>(units - 1);
    const double v2 = se_h2 * se_h2, v3 = se_h3 * se_h3;
    const double denominator = v2 * v2 / df_h2 + v3 * v3 / df_h3;
    if (!(denominator > 0)) return cap;  // no variance: the reference does not matter
    return std::max(1.0, std::min(cap, (v2 + v3) * (v2 + v3) / denominator));
}

double delta_p_value(double estimate, double se, double df) {
    if (!finite(estimate) || !(se > 0) || !finite(se) || !(df > 0)) return kNaN;
    return student_t_two_sided_p(estimate / se, df);
}

}  // namespace h3probe

// Draws run-clustered lognormal experiments and counts how often the intervals cover the true quantile difference.
#include "coverage_sim.hpp"

#include <cmath>
#include <random>

#include "standard_normal.hpp"

namespace h3probe::sim {

double true_quantile(const ArmModel& arm, double run_sigma, double p) {
    return std::exp(arm.mu + std::sqrt(arm.sigma * arm.sigma + run_sigma * run_sigma) * normal_quantile(p));
}

CoverageResult run_coverage(const CoverageScenario& sc) {
    CoverageResult res;
    const std::size_t P = sc.ps.size();
    res.ps = sc.ps;
    res.coverage_ms.assign(P, 0);
    res.coverage_pct.assign(P, 0);
    res.coverage_h2.assign(P, 0);
    res.mean_width_ms.assign(P, 0);
    std::vector<double> true_h2(P);
    for (std::size_t k = 0; k < P; ++k) {
        true_h2[k] = true_quantile(sc.h2, sc.run_sigma, sc.ps[k]);
        const double h3 = true_quantile(sc.h3, sc.run_sigma, sc.ps[k]);
        res.true_diff_ms.push_back(h3 - true_h2[k]);
        res.true_diff_pct.push_back(100 * (h3 / true_h2[k] - 1));
    }
    std::mt19937_64 rng(sc.seed);
    std::normal_distribution<double> normal(0.0, 1.0);
    const std::size_t n = static_cast<std::size_t>(sc.runs_per_arm) * static_cast<std::size_t>(sc.requests_per_run);
    std::vector<double> v2(n), v3(n), run_factor(static_cast<std::size_t>(sc.runs_per_arm));
    std::vector<std::int32_t> runs2(n), runs3(n);
    BootstrapOptions boot;
    boot.replicates = sc.bootstrap_replicates;
    for (int e = 0; e < sc.experiments; ++e) {
        auto draw_arm = [&](const ArmModel& arm, std::vector<double>& v, std::vector<std::int32_t>& runs, int run_offset,
                            bool new_run_factors) {
            std::size_t i = 0;
            for (int r = 0; r < sc.runs_per_arm; ++r) {
                if (new_run_factors) run_factor[static_cast<std::size_t>(r)] = std::exp(sc.run_sigma * normal(rng));
                for (int k = 0; k < sc.requests_per_run; ++k, ++i) {
                    v[i] = run_factor[static_cast<std::size_t>(r)] * std::exp(arm.mu + arm.sigma * normal(rng));
                    runs[i] = sc.ignore_runs ? static_cast<std::int32_t>(i) + run_offset : r + run_offset;
                }
            }
        };
        draw_arm(sc.h2, v2, runs2, 0, true);
        draw_arm(sc.h3, v3, runs3, sc.shared_runs ? 0 : sc.runs_per_arm * sc.requests_per_run, !sc.shared_runs);
        boot.seed = sc.seed + static_cast<std::uint64_t>(e) * 7919;
        const auto a = analyze_arms(make_run_clustered_sample(v2, runs2), make_run_clustered_sample(v3, runs3), sc.ps,
                                    sc.method, sc.confidence, boot);
        for (std::size_t k = 0; k < P; ++k) {
            const auto& row = a.rows[k];
            if (!std::isfinite(row.ci_ms_lo) || !std::isfinite(row.ci_ms_hi)) {
                ++res.undefined;
                continue;
            }
            res.coverage_ms[k] += row.ci_ms_lo <= res.true_diff_ms[k] && res.true_diff_ms[k] <= row.ci_ms_hi;
            res.coverage_pct[k] += row.ci_pct_lo <= res.true_diff_pct[k] && res.true_diff_pct[k] <= row.ci_pct_hi;
            res.coverage_h2[k] += row.ci_h2_lo <= true_h2[k] && true_h2[k] <= row.ci_h2_hi;
            res.mean_width_ms[k] += row.ci_ms_hi - row.ci_ms_lo;
        }
    }
    for (std::size_t k = 0; k < P; ++k) {
        res.coverage_ms[k] /= sc.experiments;
        res.coverage_pct[k] /= sc.experiments;
        res.coverage_h2[k] /= sc.experiments;
        res.mean_width_ms[k] /= sc.experiments;
    }
    return res;
}

}  // namespace h3probe::sim

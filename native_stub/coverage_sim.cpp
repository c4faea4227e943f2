// Draws run-clustered lognormal experiments and measures the intervals' coverage of the true quantile difference
// and their width against the estimate's spread.
#include "coverage_sim.hpp"

#include <cmath>
#include <random>
#include <string>

#include "bootstrap.hpp"
#include "standard_normal.hpp"
#include "value_aggregates.hpp"

namespace h3probe::sim {
namespace {

// Running mean and variance (Welford), for the estimate's spread across experiments.
struct Moments {
    double n = 0, mean = 0, m2 = 0;
    void add(double x) {
        n += 1;
        const double d = x - mean;
        mean += d / n;
        m2 += d * (x - mean);
    }
    double sd() const { return n > 1 ? std::sqrt(m2 / (n - 1)) : 0; }
};

}  // namespace

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
    res.mean_corr.assign(P, 0);
    std::vector<double> true_h2(P);
    for (std::size_t k = 0; k < P; ++k) {
        true_h2[k] = true_quantile(sc.h2, sc.run_sigma, sc.ps[k]);
        const double h3 = true_quantile(sc.h3, sc.run_sigma, sc.ps[k]);
        res.true_diff_ms.push_back(h3 - true_h2[k]);
        res.true_diff_pct.push_back(100 * (h3 / true_h2[k] - 1));
    }
    std::vector<Moments> est_ms(P), est_pct(P), se_ms(P), se_pct(P);
    const double z = two_sided_z(sc.confidence);
    std::mt19937_64 rng(sc.seed);
    std::normal_distribution<double> normal(0.0, 1.0);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    ReportOptions options;
    options.percentiles = sc.ps;
    options.confidence = sc.confidence;
    BootstrapOptions boot;
    boot.replicates = sc.bootstrap_replicates;
    std::vector<ValueGroup> groups(1);
    std::vector<double> values[2];
    for (int e = 0; e < sc.experiments; ++e) {
        ValueGroup& g = groups[0];
        g = ValueGroup{};
        // Run ids: a run measured in both arms has one id; independent pairing gives the h3 arm ids of its own.
        const std::uint32_t h3_offset = sc.pairing == ArmPairing::independent ? 1u << 30 : 0;
        std::uint32_t next_own_id = 1u << 31;  // ignore_runs: every request a run of its own
        auto draw = [&](const ArmModel& arm, double run_factor, std::uint32_t id, int index) {
            values[index].clear();
            for (int k = 0; k < sc.requests_per_run; ++k) {
                const double v = run_factor * std::exp(arm.mu + arm.sigma * normal(rng));
                if (sc.ignore_runs) add_run(g.arm[index], {v}, next_own_id++);
                else values[index].push_back(v);
            }
            if (!values[index].empty()) add_run(g.arm[index], values[index], index == 1 ? id + h3_offset : id);
        };
        const auto runs = static_cast<std::uint32_t>(sc.runs_per_arm);
        for (std::uint32_t r = 0; r < runs; ++r) {
            const double f = std::exp(sc.run_sigma * normal(rng));
            if (!sc.shared_runs) {
                draw(sc.h2, f, r, 0);
                draw(sc.h3, std::exp(sc.run_sigma * normal(rng)), runs + r, 1);
                continue;
            }
            const double u = sc.single_arm_share > 0 ? uniform(rng) : 1.0;
            if (u >= sc.single_arm_share / 2) draw(sc.h3, f, r, 1);        // not an h2-only run
            if (u < sc.single_arm_share / 2 || u >= sc.single_arm_share) draw(sc.h2, f, r, 0);  // not h3-only
        }
        // The report's path: the in-process aggregate source, infer_report(); then the bootstrap if asked.
        std::string error;
        std::vector<GroupReport> reports = infer_values(groups, options, error);
        if (!error.empty() || reports.size() != 1) {
            res.undefined += static_cast<int>(P);
            continue;
        }
        ArmsAnalysis& a = reports[0].analysis;
        if (sc.method == IntervalMethod::bootstrap) {
            boot.seed = sc.seed + static_cast<std::uint64_t>(e) * 7919;
            bootstrap_intervals(a, g.arm[0], g.arm[1], boot);
        }
        for (std::size_t k = 0; k < P; ++k) {
            const auto& row = a.rows[k];
            est_ms[k].add(row.diff_ms);
            est_pct[k].add(row.diff_pct);
            if (!std::isfinite(row.ci_ms_lo) || !std::isfinite(row.ci_ms_hi) || !std::isfinite(row.ci_pct_lo)) {
                ++res.undefined;
                continue;
            }
            res.coverage_ms[k] += row.ci_ms_lo <= res.true_diff_ms[k] && res.true_diff_ms[k] <= row.ci_ms_hi;
            res.coverage_pct[k] += row.ci_pct_lo <= res.true_diff_pct[k] && res.true_diff_pct[k] <= row.ci_pct_hi;
            res.coverage_h2[k] += row.ci_h2_lo <= true_h2[k] && true_h2[k] <= row.ci_h2_hi;
            res.mean_width_ms[k] += row.ci_ms_hi - row.ci_ms_lo;
            se_ms[k].add((row.ci_ms_hi - row.ci_ms_lo) / (2 * z));
            se_pct[k].add((row.ci_pct_hi - row.ci_pct_lo) / (2 * z));
            res.mean_corr[k] += std::isfinite(row.corr) ? row.corr : 0;
        }
    }
    for (std::size_t k = 0; k < P; ++k) {
        res.coverage_ms[k] /= sc.experiments;
        res.coverage_pct[k] /= sc.experiments;
        res.coverage_h2[k] /= sc.experiments;
        res.mean_width_ms[k] /= sc.experiments;
        res.mean_corr[k] /= sc.experiments;
        res.se_ratio_ms.push_back(se_ms[k].mean / est_ms[k].sd());
        res.se_ratio_pct.push_back(se_pct[k].mean / est_pct[k].sd());
    }
    return res;
}

}  // namespace h3probe::sim

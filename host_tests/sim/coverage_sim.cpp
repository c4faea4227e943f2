// Draws run-clustered latency experiments and measures the intervals' coverage of the true quantile difference and
// their width against the estimate's spread.
#include "coverage_sim.hpp"

#include <cmath>
#include <random>
#include <string>

#include "bootstrap.hpp"
#include "quantiles.hpp"
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

// One run's draws: its run factor and, with stalls, whether it is lossy and the stall that holds its HTTP/2 arm.
// Nothing beyond the run factor is drawn without stalls, so those scenarios draw what they always drew.
class RunDraw {
public:
    RunDraw(const CoverageScenario& sc, std::mt19937_64& rng) : sc_(sc), rng_(rng) {
        factor = std::exp(sc.run_sigma * normal_(rng));
        if (sc.stalls.lossy_share > 0) {
            lossy_ = uniform_(rng) < sc.stalls.lossy_share;
            h2_stall_ = lossy_ && uniform_(rng) < sc.stalls.h2_hold ? stall() : 0;
        }
    }
    double factor = 1;
    // One request of arm (0: h2, 1: h3) under run factor f.
    double request(int arm, double f) {
        const ArmModel& m = arm == 0 ? sc_.h2 : sc_.h3;
        const double v = f * std::exp(m.mu + m.sigma * normal_(rng_));
        if (!lossy_) return v;
        return v + (arm == 0 ? h2_stall_ : uniform_(rng_) < sc_.stalls.h3_hit ? stall() : 0);
    }

private:
    double stall() { return sc_.stalls.scale * (1 + 2 * -std::log(1 - uniform_(rng_))); }
    const CoverageScenario& sc_;
    std::mt19937_64& rng_;
    std::normal_distribution<double> normal_{0.0, 1.0};
    std::uniform_real_distribution<double> uniform_{0.0, 1.0};
    bool lossy_ = false;
    double h2_stall_ = 0;
};

}  // namespace

double true_quantile(const ArmModel& arm, double run_sigma, double p) {
    return std::exp(arm.mu + std::sqrt(arm.sigma * arm.sigma + run_sigma * run_sigma) * normal_quantile(p));
}

std::vector<std::vector<double>> true_quantiles(const CoverageScenario& sc, const std::vector<double>& ps) {
    std::vector<std::vector<double>> out(2);
    if (sc.stalls.lossy_share <= 0) {
        for (double p : ps) {
            out[0].push_back(true_quantile(sc.h2, sc.run_sigma, p));
            out[1].push_back(true_quantile(sc.h3, sc.run_sigma, p));
        }
        return out;
    }
    // The marginal of one request: a run drawn, then one request of each arm from it.
    std::mt19937_64 rng(0x7472756571ULL);
    std::vector<double> values[2];
    constexpr std::size_t kDraws = std::size_t{1} << 22;
    for (auto& v : values) v.reserve(kDraws);
    for (std::size_t i = 0; i < kDraws; ++i) {
        RunDraw run(sc, rng);
        for (int arm = 0; arm < 2; ++arm) values[arm].push_back(run.request(arm, run.factor));
    }
    for (int arm = 0; arm < 2; ++arm) out[static_cast<std::size_t>(arm)] = quantiles(std::move(values[arm]), ps);
    return out;
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
    res.undefined_at.assign(P, 0);
    res.unbounded_pct_at.assign(P, 0);
    const auto truth = true_quantiles(sc, sc.ps);
    const std::vector<double>& true_h2 = truth[0];
    for (std::size_t k = 0; k < P; ++k) {
        res.true_diff_ms.push_back(truth[1][k] - true_h2[k]);
        res.true_diff_pct.push_back(100 * (truth[1][k] / true_h2[k] - 1));
    }
    std::vector<Moments> est_ms(P), est_pct(P), est_h2(P), se_ms(P), se_pct(P), se_h2(P);
    const double z = two_sided_z(sc.confidence);
    std::mt19937_64 rng(sc.seed);
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
        auto draw = [&](RunDraw& run, double run_factor, std::uint32_t id, int index) {
            values[index].clear();
            for (int k = 0; k < sc.requests_per_run; ++k) {
                const double v = run.request(index, run_factor);
                if (sc.ignore_runs) add_run(g.arm[index], {v}, next_own_id++);
                else values[index].push_back(v);
            }
            if (!values[index].empty()) add_run(g.arm[index], values[index], index == 1 ? id + h3_offset : id);
        };
        const auto runs = static_cast<std::uint32_t>(sc.runs_per_arm);
        for (std::uint32_t r = 0; r < runs; ++r) {
            RunDraw run(sc, rng);
            if (!sc.shared_runs) {
                draw(run, run.factor, r, 0);
                RunDraw other(sc, rng);
                draw(other, other.factor, runs + r, 1);
                continue;
            }
            // u in [0, h2_only): an h2-only run; in [h2_only, h3_only): h3-only; else both arms.
            const double u = sc.single_arm_share > 0 || sc.h2_only_share > 0 ? uniform(rng) : 1.0;
            const double h2_only = sc.single_arm_share / 2 + sc.h2_only_share, h3_only = h2_only + sc.single_arm_share / 2;
            if (u >= h2_only) draw(run, run.factor, r, 1);
            if (u < h2_only || u >= h3_only) draw(run, run.factor, r, 0);
        }
        // The report's path: the in-process aggregate source, infer_report(); then the bootstrap if asked.
        std::string error;
        std::vector<GroupReport> reports = infer_values(groups, options, error);
        if (!error.empty() || reports.size() != 1) {
            res.undefined += static_cast<int>(P);
            for (int& u : res.undefined_at) ++u;
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
            est_h2[k].add(row.h2);
            if (row.ci_pct_unbounded) ++res.unbounded_pct_at[k];
            if (!std::isfinite(row.ci_ms_lo) || !std::isfinite(row.ci_ms_hi) || !std::isfinite(row.ci_pct_lo) ||
                !std::isfinite(row.ci_pct_hi)) {
                ++res.undefined;
                ++res.undefined_at[k];
                continue;
            }
            res.coverage_ms[k] += row.ci_ms_lo <= res.true_diff_ms[k] && res.true_diff_ms[k] <= row.ci_ms_hi;
            res.coverage_pct[k] += row.ci_pct_lo <= res.true_diff_pct[k] && res.true_diff_pct[k] <= row.ci_pct_hi;
            res.coverage_h2[k] += row.ci_h2_lo <= true_h2[k] && true_h2[k] <= row.ci_h2_hi;
            res.mean_width_ms[k] += row.ci_ms_hi - row.ci_ms_lo;
            // The bootstrap's SE is what its interval implies; the delta method's, what the row reports.
            const bool boot_ci = sc.method == IntervalMethod::bootstrap;
            se_ms[k].add(boot_ci ? (row.ci_ms_hi - row.ci_ms_lo) / (2 * z) : row.se_ms);
            se_pct[k].add(boot_ci ? (row.ci_pct_hi - row.ci_pct_lo) / (2 * z) : row.se_pct);
            se_h2[k].add(boot_ci ? (row.ci_h2_hi - row.ci_h2_lo) / (2 * z) : row.se_h2);
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
        res.se_ratio_h2.push_back(se_h2[k].mean / est_h2[k].sd());
    }
    return res;
}

std::vector<CalibrationModel> calibration_models() {
    CoverageScenario lognormal;
    lognormal.shared_runs = true;
    lognormal.ps = {0.5, 0.75, 0.9, 0.95, 0.99};
    CoverageScenario field = lognormal;
    field.run_sigma = 0.4;
    field.h2 = {std::log(60.0), 0.35};
    field.h3 = {std::log(0.96 * 60.0), 0.35};
    field.stalls = {0.06, 0.6, 0.15, 60};
    field.h2_only_share = 0.02;
    return {{"lognormal", lognormal}, {"field", field}};
}

}  // namespace h3probe::sim

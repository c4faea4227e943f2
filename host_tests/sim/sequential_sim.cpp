// Daily looks at simulated experiments, and A/A reports over many cells (see sequential_sim.hpp).
#include "sequential_sim.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "multiplicity.hpp"
#include "standard_normal.hpp"
#include "value_aggregates.hpp"

namespace h3probe::sim {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One paired run as the model says.
void draw_run(ValueGroup& g, const RunModel& m, std::uint32_t id, std::mt19937_64& rng) {
    std::normal_distribution<double> normal(0.0, 1.0);
    const double f = std::exp(m.run_sigma * normal(rng));
    std::vector<double> values[2];
    const ArmModel* arms[2] = {&m.h2, &m.h3};
    for (int arm = 0; arm < 2; ++arm)
        for (int k = 0; k < m.requests_per_run; ++k)
            values[arm].push_back(f * std::exp(arms[arm]->mu + arms[arm]->sigma * normal(rng)));
    g.counts.runs += 1;
    add_run(g, values, id, 0);
}

bool holds(double lo, double hi, double x) { return std::isfinite(lo) && std::isfinite(hi) && lo <= x && x <= hi; }
bool excludes_zero(double lo, double hi) { return std::isfinite(lo) && std::isfinite(hi) && (lo > 0 || hi < 0); }

double median_or_nan(std::vector<double> v, int of) {
    // The median over `of` experiments, those that never excluded 0 counting as infinitely late.
    if (static_cast<int>(v.size()) * 2 <= of) return kNaN;
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(of / 2)];
}

}  // namespace

PeekingResult run_peeking(const PeekingScenario& sc) {
    PeekingResult res;
    const std::size_t P = sc.ps.size();
    res.ps = sc.ps;
    for (double p : sc.ps)
        res.true_diff_ms.push_back(true_quantile(sc.run.h3, sc.run.run_sigma, p) - true_quantile(sc.run.h2, sc.run.run_sigma, p));
    std::vector<double> ever_fixed(P), ever_cs(P), last_fixed(P), last_cs(P), every_cs(P), by_end_cs(P), sd_run(P);
    std::vector<std::vector<double>> first_fixed(P), first_cs(P);
    ReportOptions options;
    options.percentiles = sc.ps;
    options.confidence = sc.confidence;
    std::mt19937_64 rng(sc.seed);
    for (int e = 0; e < sc.experiments; ++e) {
        std::vector<ValueGroup> days(static_cast<std::size_t>(sc.days));
        std::uint32_t id = 0;
        for (auto& day : days)
            for (int r = 0; r < sc.runs_per_day; ++r) draw_run(day, sc.run, id++, rng);
        std::string error;
        const std::vector<GroupReport> looks = infer_cumulative(pointers_to(days), options, error);
        if (!error.empty()) {
            res.undefined += sc.days * static_cast<int>(P);
            continue;
        }
        bool any_fixed = false, any_cs = false;
        for (std::size_t k = 0; k < P; ++k) {
            bool fixed_seen = false, cs_seen = false, cs_always = true;
            for (std::size_t d = 0; d < looks.size(); ++d) {
                const auto& rows = looks[d].analysis.rows;
                if (rows.size() != P || !std::isfinite(rows[k].cs_ms_lo)) {
                    ++res.undefined;
                    continue;
                }
                const QuantileDifferenceRow& row = rows[k];
                const double runs = static_cast<double>((d + 1) * static_cast<std::size_t>(sc.runs_per_day));
                if (!fixed_seen && excludes_zero(row.ci_ms_lo, row.ci_ms_hi)) {
                    fixed_seen = true;
                    first_fixed[k].push_back(runs);
                }
                if (!cs_seen && excludes_zero(row.cs_ms_lo, row.cs_ms_hi)) {
                    cs_seen = true;
                    first_cs[k].push_back(runs);
                }
                cs_always = cs_always && holds(row.cs_ms_lo, row.cs_ms_hi, res.true_diff_ms[k]);
                if (d + 1 == looks.size()) {
                    last_fixed[k] += holds(row.ci_ms_lo, row.ci_ms_hi, res.true_diff_ms[k]);
                    last_cs[k] += holds(row.cs_ms_lo, row.cs_ms_hi, res.true_diff_ms[k]);
                    sd_run[k] += row.se_ms * std::sqrt(runs);
                }
            }
            ever_fixed[k] += fixed_seen;
            ever_cs[k] += cs_seen;
            by_end_cs[k] += cs_seen;
            every_cs[k] += cs_always;
            any_fixed = any_fixed || fixed_seen;
            any_cs = any_cs || cs_seen;
        }
        res.any_p_fixed += any_fixed;
        res.any_p_cs += any_cs;
    }
    const double n = sc.experiments;
    const double z = two_sided_z(sc.confidence), z_power = normal_quantile(0.8);
    for (std::size_t k = 0; k < P; ++k) {
        res.ever_excludes_fixed.push_back(ever_fixed[k] / n);
        res.ever_excludes_cs.push_back(ever_cs[k] / n);
        res.cover_last_fixed.push_back(last_fixed[k] / n);
        res.cover_last_cs.push_back(last_cs[k] / n);
        res.cover_every_cs.push_back(every_cs[k] / n);
        res.excluded_by_end_cs.push_back(by_end_cs[k] / n);
        res.median_runs_fixed.push_back(median_or_nan(first_fixed[k], sc.experiments));
        res.median_runs_cs.push_back(median_or_nan(first_cs[k], sc.experiments));
        const double sd = sd_run[k] / n, effect = std::fabs(res.true_diff_ms[k]);
        res.fixed_design_runs.push_back(effect > 0 ? std::pow((z + z_power) * sd / effect, 2) : kNaN);
    }
    res.any_p_fixed /= n;
    res.any_p_cs /= n;
    return res;
}

StoppingResult run_stopping(const StoppingScenario& sc) {
    StoppingResult res;
    res.true_diff_ms = true_quantile(sc.run.h3, sc.run.run_sigma, sc.p) - true_quantile(sc.run.h2, sc.run.run_sigma, sc.p);
    ReportOptions options;
    options.percentiles = {sc.p};
    options.confidence = sc.confidence;
    std::mt19937_64 rng(sc.seed);
    std::vector<double> stated, needed, ratio;
    constexpr double kNever = std::numeric_limits<double>::infinity();
    for (int e = 0; e < sc.experiments; ++e) {
        std::vector<ValueGroup> upto(1);
        std::uint32_t id = 0;
        double said = kNaN;
        for (int day = 1; day <= sc.max_days; ++day) {
            for (int r = 0; r < sc.runs_per_day; ++r) draw_run(upto[0], sc.run, id++, rng);
            std::string error;
            const std::vector<GroupReport> look = infer_values(upto, options, error);
            if (!error.empty() || look.empty() || look[0].analysis.rows.empty()) break;
            const QuantileDifferenceRow& row = look[0].analysis.rows[0];
            if (day < sc.state_day) {
                if (row.significant_cs) {
                    ++res.decided_before;
                    break;
                }
                continue;
            }
            if (day == sc.state_day) {
                if (row.significant_cs) {
                    ++res.decided_before;
                    break;
                }
                if (!std::isfinite(row.cs_runs_needed)) break;
                said = row.cs_runs_needed;
                continue;
            }
            if (row.significant_cs) {
                const double more = static_cast<double>((day - sc.state_day) * sc.runs_per_day);
                stated.push_back(said);
                needed.push_back(more);
                ratio.push_back(said / more);
                said = kNaN;
                break;
            }
        }
        if (std::isfinite(said)) {  // still undecided at max_days
            ++res.never;
            stated.push_back(said);
            needed.push_back(kNever);
            ratio.push_back(0);
        }
    }
    res.stated = static_cast<int>(stated.size());
    const auto at = [](std::vector<double> v, double q) {
        if (v.empty()) return kNaN;
        std::sort(v.begin(), v.end());
        return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
    };
    res.median_stated = at(stated, 0.5);
    res.median_needed = at(needed, 0.5);
    res.median_ratio = at(ratio, 0.5);
    res.q25_needed = at(needed, 0.25);
    res.q75_needed = at(needed, 0.75);
    return res;
}

MultiplicityResult run_multiplicity(const MultiplicityScenario& sc) {
    MultiplicityResult res;
    ReportOptions options;
    options.percentiles = sc.ps;
    options.confidence = sc.confidence;
    std::mt19937_64 rng(sc.seed);
    for (int e = 0; e < sc.reports; ++e) {
        std::vector<ValueGroup> groups(static_cast<std::size_t>(sc.groups) + 1);
        std::uint32_t id = 0;
        for (std::size_t g = 1; g < groups.size(); ++g) {
            for (int r = 0; r < sc.runs_per_group; ++r) draw_run(groups[g], sc.run, id++, rng);
            append_group(groups[0], groups[g]);
        }
        std::string error;
        const std::vector<GroupReport> reports = infer_values(groups, options, error);
        bool marked = false;
        int kept = 0;
        std::vector<double> p, p_normal;
        for (const GroupReport& g : reports)
            for (const QuantileDifferenceRow& row : g.analysis.rows) {
                marked = marked || row.significant;
                res.cell_rate += row.significant;
                kept += row.discovery;
                res.cells += std::isfinite(row.p_value);
                p.push_back(row.p_value);
                p_normal.push_back(std::isfinite(row.p_value) ? 2 * normal_cdf(-std::fabs(row.diff_ms) / row.se_ms) : kNaN);
            }
        const std::vector<double> q = benjamini_hochberg(p), q_normal = benjamini_hochberg(p_normal);
        double harmonic = 0, m = 0;  // 1 + 1/2 + ... + 1/m over the m cells with a p-value: BY's factor on BH's q
        for (double x : p)
            if (std::isfinite(x)) harmonic += 1 / ++m;
        int kept_normal = 0, kept_by = 0;
        for (std::size_t i = 0; i < q.size(); ++i) {
            kept_normal += q_normal[i] <= 1 - sc.confidence;
            kept_by += q[i] * harmonic <= 1 - sc.confidence;
        }
        res.any_marked += marked;
        res.any_discovery += kept > 0;
        res.any_discovery_normal += kept_normal > 0;
        res.any_discovery_by += kept_by > 0;
        res.discoveries += kept;
        res.discoveries_normal += kept_normal;
        res.discoveries_by += kept_by;
    }
    res.reports = sc.reports;
    res.cell_rate /= res.cells;
    for (double* share : {&res.any_marked, &res.any_discovery, &res.any_discovery_normal, &res.any_discovery_by,
                          &res.discoveries, &res.discoveries_normal, &res.discoveries_by, &res.cells})
        *share /= sc.reports;
    return res;
}

}  // namespace h3probe::sim

// Sequential simulations of the report: experiments that are looked at every day, and reports that read many cells.
// The runs are drawn as in the coverage simulation (coverage_sim.hpp: a shared run factor times a lognormal request
// draw, both arms from the same run, 5 requests per arm), and every look is inferred by the report's own path:
// infer_cumulative() (the daily series' looks) and infer_values() (a report's groups, with the multiplicity
// adjustment of infer_report()).
#pragma once

#include <cstdint>
#include <vector>

#include "coverage_sim.hpp"

namespace h3probe::sim {

// How one simulated run is drawn: a run factor shared by both arms, requests_per_run lognormal draws per arm.
struct RunModel {
    int requests_per_run = 5;
    double run_sigma = 0.3;
    ArmModel h2{4.0943445622221004, 0.6};
    ArmModel h3{4.0943445622221004, 0.6};  // A/A by default: no effect
};

// Daily looks: each experiment receives runs_per_day paired runs a day for `days` days; after each day the cumulative
// data is inferred and both the fixed-horizon interval and the confidence sequence are read.
struct PeekingScenario {
    int experiments = 400;
    int days = 28;
    int runs_per_day = 20;
    RunModel run;
    std::vector<double> ps = {0.5, 0.9, 0.95};
    double confidence = 0.95;
    std::uint64_t seed = 20261201;
};

struct PeekingResult {
    std::vector<double> ps, true_diff_ms;
    // Share of experiments whose interval of Δ ms excluded 0 at one look or more: per percentile, and at any of them.
    std::vector<double> ever_excludes_fixed, ever_excludes_cs;
    double any_p_fixed = 0, any_p_cs = 0;
    // Share whose interval at the last look holds the true Δ, and (the sequence) at every look.
    std::vector<double> cover_last_fixed, cover_last_cs, cover_every_cs;
    // Runs at the first look whose interval excluded 0, the median over experiments (NaN when fewer than half ever
    // did); and the share that had by the last look.
    std::vector<double> median_runs_fixed, median_runs_cs, excluded_by_end_cs;
    // The fixed-horizon design: runs for 80% power at the interval's level, from the per-run SD at the last look
    // (mean over experiments of se_ms sqrt(runs)): ((z + z_0.8) sd / |Δ|)^2.
    std::vector<double> fixed_design_runs;
    int undefined = 0;  // looks without an interval: they exclude nothing; at the last look they do not cover
};

PeekingResult run_peeking(const PeekingScenario& scenario);

// The stopping line against the simulation (confidence_sequence.hpp, cs_runs_to_decide): experiments with a known
// effect, looked at daily. At the look of day state_day, the experiments whose sequence has not excluded 0 yet state
// how many more runs it needs at their current estimate and spread (the row's cs_runs_needed, what the verdict
// prints); each then goes on a day at a time until its sequence first excludes 0, or max_days. The medians of the
// stated and of the simulated more runs are the comparison (docs/report.md, "May we stop?").
struct StoppingScenario {
    int experiments = 400;
    int runs_per_day = 20;
    int state_day = 4;
    int max_days = 150;
    RunModel run;
    double p = 0.9;
    double confidence = 0.95;
    std::uint64_t seed = 20261205;
};

struct StoppingResult {
    double true_diff_ms = 0;
    int stated = 0;          // experiments undecided at state_day, with a finite stated need
    int decided_before = 0;  // experiments whose sequence had excluded 0 by state_day
    int never = 0;           // of the stated, those still undecided at max_days (counted as needing infinitely many)
    double median_stated = 0, median_needed = 0;  // more runs: stated at state_day; needed in the simulation
    double median_ratio = 0;                      // median over the stated of stated / needed
    double q25_needed = 0, q75_needed = 0;        // the spread of the simulated need
};

StoppingResult run_stopping(const StoppingScenario& scenario);

// Reports over several groups of an A/A experiment (overall and `groups` groups of runs_per_group runs): the share
// of reports with any cell marked on its own (significant), and with any cell surviving the Benjamini-Hochberg
// adjustment (discovery). For comparison, the same cells under two alternatives the report does not use: BH over
// p-values referred to the normal instead of Student's t, and the Benjamini-Yekutieli adjustment (BH's q times
// 1 + 1/2 + ... + 1/m, valid under any dependence) over the report's own p-values.
struct MultiplicityScenario {
    int reports = 400;
    int groups = 8;
    int runs_per_group = 100;
    RunModel run;  // A/A: keep h3 equal to h2
    std::vector<double> ps = {0.5, 0.75, 0.9, 0.95, 0.99};
    double confidence = 0.95;
    std::uint64_t seed = 20261202;
};

struct MultiplicityResult {
    int reports = 0;
    double any_marked = 0, any_discovery = 0;  // shares of reports
    double any_discovery_normal = 0, any_discovery_by = 0;  // shares of reports, the alternatives above
    double discoveries = 0, discoveries_normal = 0, discoveries_by = 0;  // mean cells kept per report
    double cells = 0;                          // mean cells with a p-value per report
    double cell_rate = 0;                      // share of those cells marked on their own (the per-cell error)
};

MultiplicityResult run_multiplicity(const MultiplicityScenario& scenario);

}  // namespace h3probe::sim

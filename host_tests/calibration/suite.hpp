// The calibration suite's harness (issue 52, step 1): runs the report's own inference (infer_values(), the in-process
// aggregate source the SQLite report and coverage_sim use, then infer_report()) on simulated experiments of the frozen
// families (families.hpp), and judges each cell against the budgets, never pooling cells. `npm run calibration`
// (host_tests/tools/calibration_suite.cpp) prints its table; calibration_suite_test.cpp runs a slice.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "families.hpp"
#include "quantile_ci.hpp"

namespace h3probe::calib {

// A unit of work: one family variant at one size, its experiments giving every percentile, estimand and metric.
struct Unit {
    std::size_t family = 0, variant = 0;
    int size = 0;
};

enum class Metric { ms = 0, pct = 1 };

// Why an experiment's cell had no interval: the report refused it (fewer runs in an arm than min_runs_for_interval,
// decided from the count alone), the percentile reached requests that did not finish, the SE came out 0 (an interval
// of width 0 that the report still marks), Fieller's Δ % set is unbounded, or anything else left it undefined.
enum class NoInterval { refused = 0, unfinished, se_zero, unbounded, other };
inline constexpr int kNoIntervalReasons = 5;
const char* reason_name(NoInterval r);

// One cell's figures over its experiments.
struct CellStats {
    double p = 0, truth = 0;      // the true Δ (ms or %); NaN where the truth lies among unfinished requests
    int experiments = 0;
    int none[kNoIntervalReasons] = {};  // experiments without an interval, by reason
    int with_interval = 0;
    int excluded_zero = 0;        // the report's decision: the interval excludes 0 (an interval of width 0 included)
    int covered = 0, miss_low = 0, miss_high = 0;  // miss_low: the interval lies wholly below the truth
    double sd_z = 0, iqr_z = 0;   // of z = (estimate - truth) / SE over experiments with an interval; IQR / 1.349
    double far_z = 0;             // share of those with |z| > far_z
    double width_ratio = 0;       // mean width / (2 z_0.975 SD of the estimate over every experiment)
    double bias = 0, sd = 0;      // the estimate's mean minus the truth, and its SD, over every experiment
    int no_interval() const;
};

// The judgement of a cell against budgets(): each budget's pass, and how far past its edge the worst figure lies
// (score: 0 inside every budget, 1 a budget's half-width outside one; a share of experiments without an interval
// scores that share / 1 %). A cell whose every experiment was refused scores nothing and is listed as refused.
struct Verdict {
    bool aa = true, cover = true, miss_low = true, miss_high = true, sd_z = true, iqr_z = true, far = true, width = true,
         interval = true;
    bool refused_all = false;
    bool pass() const;
    double score = 0;
    std::string failed;  // the failed budgets' names, space-separated
};
Verdict judge(const CellStats& cell, bool aa);

struct UnitResult {
    Unit unit;
    // [estimand][p][metric]; h3_worked only where the family has it (else that block is empty).
    std::vector<std::vector<std::vector<CellStats>>> cells;
    double cpu_seconds = 0;
};

struct SuiteOptions {
    std::vector<std::size_t> families;  // indexes into families(); empty: all
    std::vector<int> sizes;             // empty: suite_sizes()
    std::vector<double> ps;             // empty: suite_percentiles()
    int experiments = 0;                // 0: default_experiments()
    std::map<int, int> experiments_at;  // a size's own number of experiments, where it is given
    std::uint64_t seed = 20260052;
    unsigned threads = 1;
    long truth_runs = 0;                // 0: truth_runs() (the suite's; fewer only for a quick look or a test)
    std::string truth_cache;            // a folder for the truths (empty: none); keyed by families.cpp's hash
    std::string source_hash;            // families.cpp's SHA-256, the cache's key
    IntervalMethod method = IntervalMethod::delta;  // the report's interval method under judgement
};

// The truth of a variant at ps: 0 for an A/A variant (by construction), the closed form where one exists, else Monte
// Carlo (cached in options.truth_cache when given).
Truth variant_truth(const Family& family, const Variant& variant, const std::vector<double>& ps, const SuiteOptions& options);

// The experiments per cell at a size: experiments_at's, else experiments, else default_experiments().
int experiments_for(const SuiteOptions& options, int size);

// One unit's experiments through the report's inference with `method`'s intervals; the truth as variant_truth gives it.
UnitResult run_unit(const Unit& unit, const std::vector<double>& ps, int experiments, std::uint64_t seed, const Truth& truth,
                    IntervalMethod method = IntervalMethod::delta);

// Every unit of the options, over options.threads threads (truths first, then the units, largest first); progress
// lines on `progress` when not null.
std::vector<UnitResult> run_suite(const SuiteOptions& options, std::FILE* progress);

// The tables: every cell (Markdown), and per family its worst cell, its cells failing each budget and those without
// an interval.
void print_cells(std::FILE* out, const std::vector<UnitResult>& results, const std::vector<double>& ps);
void print_summary(std::FILE* out, const std::vector<UnitResult>& results, const std::vector<double>& ps);

}  // namespace h3probe::calib

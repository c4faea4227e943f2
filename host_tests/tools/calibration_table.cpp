// `npm run calibration:r9`: the calibration table of docs/design.md (R9), kept reachable until the interval method of
// issue 52 replaces R9's table (the frozen suite, `npm run calibration`, then judges the new method; this table, made
// on the project's own models, stays the record of today's) — coverage and reported SE ÷ the true SD of the
// estimate, by data model, group size and percentile, for Δ ms, Δ % and the HTTP/2 arm's own interval, each experiment
// inferred through infer_report() (host_tests/sim/coverage_sim). Prints the table as Markdown.
// Options: --experiments N (default 10000: each SE ÷ SD to about ±0.01, printed beside it), --sizes 30,100,300,1500
// (runs per group), --models lognormal,field,... (calibration_models()), --seed S; instead of the table, --diagnose
// prints where each Δ ms width comes from (coverage_sim.hpp), --aa runs each model's A/A twin (aa_twin), and --decide
// prints the runs a Dropbox-like effect needs (decision_model; sizes 100 to 3,200 runs, 500 experiments unless given).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "coverage_sim.hpp"
#include "list_option.hpp"

using namespace h3probe::sim;

using h3probe::tools::split_list;

namespace {

[[noreturn]] void usage(const char* why) {
    std::fprintf(stderr, "calibration: %s\nusage: h3probe_calibration [--experiments N] [--sizes 30,100,300,1500] "
                         "[--models lognormal,field,...] [--seed S] [--diagnose | --aa | --decide]\n", why);
    std::exit(2);
}

std::string pct(double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f", 100 * x);
    return b;
}

std::string ratio(double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%.2f", x);
    return b;
}

// --decide: the same simulated experiments with a Dropbox-like effect (decision_model()) at each size, and the share
// whose Δ ms interval and whose confidence sequence excluded 0 on the true side; then, per percentile, the runs at
// which that share reaches 80 % (interpolated between sizes on a log scale; "> largest" when it never does).
int decide_table(const std::vector<int>& sizes, int experiments, unsigned long long seed) {
    std::printf("| runs | p | true Δ %% | decided by the interval %% | decided by the sequence %% |\n|---|---|---|---|---|\n");
    std::vector<CoverageResult> results;
    for (int size : sizes) {
        CoverageScenario sc = decision_model();
        sc.experiments = experiments;
        sc.runs_per_arm = size;
        sc.seed = seed + static_cast<unsigned long long>(size);
        results.push_back(run_coverage(sc));
        const CoverageResult& r = results.back();
        for (std::size_t k = 0; k < r.ps.size(); ++k)
            std::printf("| %d | p%g | %.1f | %s | %s |\n", size, r.ps[k] * 100, r.true_diff_pct[k], pct(r.decided[k]).c_str(),
                        pct(r.decided_cs[k]).c_str());
    }
    const auto runs_for = [&](std::size_t k, bool sequence) {
        for (std::size_t j = 0; j < results.size(); ++j) {
            const double d = sequence ? results[j].decided_cs[k] : results[j].decided[k];
            if (d < 0.8) continue;
            if (j == 0) return "≤ " + std::to_string(sizes[0]);
            const double d0 = sequence ? results[j - 1].decided_cs[k] : results[j - 1].decided[k];
            const double t = (0.8 - d0) / (d - d0);
            const double runs = std::exp(std::log(sizes[j - 1]) + t * (std::log(sizes[j]) - std::log(sizes[j - 1])));
            return std::to_string(static_cast<long>(std::lround(runs)));
        }
        return "> " + std::to_string(sizes.back());
    };
    std::printf("\n| p | runs for 80 %% decided, interval | runs for 80 %% decided, sequence |\n|---|---|---|\n");
    for (std::size_t k = 0; k < results[0].ps.size(); ++k)
        std::printf("| p%g | %s | %s |\n", results[0].ps[k] * 100, runs_for(k, false).c_str(), runs_for(k, true).c_str());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    int experiments = 10000;
    std::vector<int> sizes = {30, 100, 300, 1500};
    std::vector<std::string> models;
    for (const auto& m : calibration_models()) models.push_back(m.name);
    bool diagnose = false, aa = false, decide = false, sizes_given = false, experiments_given = false;
    unsigned long long seed = 20261210;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--diagnose" || arg == "--aa" || arg == "--decide") {
            (arg == "--aa" ? aa : arg == "--decide" ? decide : diagnose) = true;
            continue;
        }
        if (i + 1 >= argc) usage(("a value is missing after " + arg).c_str());
        const std::string value = argv[++i];
        if (arg == "--experiments") {
            experiments = std::atoi(value.c_str());
            experiments_given = true;
        }
        else if (arg == "--seed") seed = std::strtoull(value.c_str(), nullptr, 10);
        else if (arg == "--models") models = split_list(value);
        else if (arg == "--sizes") {
            sizes.clear();
            sizes_given = true;
            for (const auto& s : split_list(value)) sizes.push_back(std::atoi(s.c_str()));
        } else usage(("unknown option " + arg).c_str());
    }
    if (experiments < 10) usage("--experiments must be at least 10");
    for (int s : sizes)
        if (s < 10) usage("every size must be at least 10 runs");
    if (decide) {
        if (!sizes_given) sizes = {100, 200, 400, 800, 1600, 3200};
        return decide_table(sizes, experiments_given ? experiments : 500, seed);
    }
    if (diagnose)
        std::printf("| model | runs | p | Δ ms SE÷SD | SD of (Δ − true) ÷ SE | HTTP/2 arm SE÷SD | HTTP/3 arm SE÷SD | "
                    "stated ÷ true covariance | mean corr | HTTP/2 sd(F) stated ÷ true | HTTP/2 slope stated ÷ true |\n"
                    "|---|---|---|---|---|---|---|---|---|---|---|\n");
    else
        std::printf("| model | runs | p | Δ ms coverage %% | Δ ms SE÷SD | Δ %% coverage %% | Δ %% SE÷SD | HTTP/2 arm coverage %% | "
                    "HTTP/2 arm SE÷SD | no interval %% |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for (const std::string& name : models) {
        const CalibrationModel* model = nullptr;
        const auto all = calibration_models();
        for (const auto& m : all)
            if (m.name == name) model = &m;
        if (!model) usage(("unknown model " + name).c_str());
        for (int size : sizes) {
            CoverageScenario sc = aa ? aa_twin(model->scenario) : model->scenario;
            sc.experiments = experiments;
            sc.runs_per_arm = size;
            sc.seed = seed + static_cast<unsigned long long>(size);
            const CoverageResult r = run_coverage(sc);
            for (std::size_t k = 0; k < r.ps.size(); ++k) {
                const bool none = r.undefined_at[k] == experiments;
                const double defined = experiments - r.undefined_at[k];
                // Coverage among the experiments with an interval (run_coverage counts the others as not covering).
                if (diagnose) {
                    if (!none)
                        std::printf("| %s | %d | p%g | %s | %s | %s | %s | %s | %.3f | %s | %s |\n", name.c_str(), size,
                                    r.ps[k] * 100, ratio(r.se_ratio_ms[k]).c_str(), ratio(r.sd_z_ms[k]).c_str(),
                                    ratio(r.se_ratio_h2[k]).c_str(), ratio(r.se_ratio_h3[k]).c_str(),
                                    ratio(r.cov_ratio[k]).c_str(), r.mean_corr[k] * experiments / defined, ratio(r.sd_F_ratio_h2[k]).c_str(),
                                    ratio(r.slope_ratio_h2[k]).c_str());
                    continue;
                }
                const auto among = [&](double share) { return none ? std::string("–") : pct(share * experiments / defined); };
                const auto within = [&](double x, double error) { return none ? std::string("–") : ratio(x) + " ± " + ratio(error); };
                std::printf("| %s | %d | p%g | %s | %s | %s | %s | %s | %s | %s |\n", name.c_str(), size, r.ps[k] * 100,
                            among(r.coverage_ms[k]).c_str(), within(r.se_ratio_ms[k], r.se_ratio_ms_error[k]).c_str(),
                            among(r.coverage_pct[k]).c_str(), within(r.se_ratio_pct[k], r.se_ratio_pct_error[k]).c_str(),
                            among(r.coverage_h2[k]).c_str(), none ? "–" : ratio(r.se_ratio_h2[k]).c_str(),
                            pct(r.undefined_at[k] / static_cast<double>(experiments)).c_str());
            }
        }
    }
    return 0;
}

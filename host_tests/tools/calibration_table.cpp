// `npm run calibration`: the calibration table of docs/design.md (R9) — coverage and reported SE ÷ the true SD of the
// estimate, by data model, group size and percentile, for Δ ms, Δ % and the HTTP/2 arm's own interval, each experiment
// inferred through infer_report() (host_tests/sim/coverage_sim). Prints the table as Markdown.
// Options: --experiments N (default 2000), --sizes 30,100,300,1500 (runs per group), --models lognormal,field,
// --seed S.
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "coverage_sim.hpp"

using namespace h3probe::sim;

namespace {

std::vector<std::string> split(const std::string& text) {
    std::vector<std::string> out;
    std::stringstream in(text);
    for (std::string item; std::getline(in, item, ',');)
        if (!item.empty()) out.push_back(item);
    return out;
}

[[noreturn]] void usage(const char* why) {
    std::fprintf(stderr, "calibration: %s\nusage: h3probe_calibration [--experiments N] [--sizes 30,100,300,1500] "
                         "[--models lognormal,field] [--seed S]\n", why);
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

}  // namespace

int main(int argc, char** argv) {
    int experiments = 2000;
    std::vector<int> sizes = {30, 100, 300, 1500};
    std::vector<std::string> models = {"lognormal", "field"};
    unsigned long long seed = 20261210;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (i + 1 >= argc) usage(("a value is missing after " + arg).c_str());
        const std::string value = argv[++i];
        if (arg == "--experiments") experiments = std::atoi(value.c_str());
        else if (arg == "--seed") seed = std::strtoull(value.c_str(), nullptr, 10);
        else if (arg == "--models") models = split(value);
        else if (arg == "--sizes") {
            sizes.clear();
            for (const auto& s : split(value)) sizes.push_back(std::atoi(s.c_str()));
        } else usage(("unknown option " + arg).c_str());
    }
    if (experiments < 10) usage("--experiments must be at least 10");
    for (int s : sizes)
        if (s < 10) usage("every size must be at least 10 runs");
    std::printf("| model | runs | p | Δ ms coverage %% | Δ ms SE÷SD | Δ %% coverage %% | Δ %% SE÷SD | HTTP/2 arm coverage %% | "
                "HTTP/2 arm SE÷SD | no interval %% |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for (const std::string& name : models) {
        const CalibrationModel* model = nullptr;
        const auto all = calibration_models();
        for (const auto& m : all)
            if (m.name == name) model = &m;
        if (!model) usage(("unknown model " + name).c_str());
        for (int size : sizes) {
            CoverageScenario sc = model->scenario;
            sc.experiments = experiments;
            sc.runs_per_arm = size;
            sc.seed = seed + static_cast<unsigned long long>(size);
            const CoverageResult r = run_coverage(sc);
            for (std::size_t k = 0; k < r.ps.size(); ++k) {
                const bool none = r.undefined_at[k] == experiments;
                const double defined = experiments - r.undefined_at[k];
                // Coverage among the experiments with an interval (run_coverage counts the others as not covering).
                const auto among = [&](double share) { return none ? std::string("–") : pct(share * experiments / defined); };
                std::printf("| %s | %d | p%g | %s | %s | %s | %s | %s | %s | %s |\n", name.c_str(), size, r.ps[k] * 100,
                            among(r.coverage_ms[k]).c_str(), none ? "–" : ratio(r.se_ratio_ms[k]).c_str(),
                            among(r.coverage_pct[k]).c_str(), none ? "–" : ratio(r.se_ratio_pct[k]).c_str(),
                            among(r.coverage_h2[k]).c_str(), none ? "–" : ratio(r.se_ratio_h2[k]).c_str(),
                            pct(r.undefined_at[k] / static_cast<double>(experiments)).c_str());
            }
        }
    }
    return 0;
}

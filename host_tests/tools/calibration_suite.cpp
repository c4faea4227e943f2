// `npm run calibration`: the frozen calibration suite (issue 52; docs/design.md, "The calibration suite") on the
// report's interval method as it stands. Every family of host_tests/calibration/families.cpp, each as A/A and with its
// effects, at each size and percentile, Δ ms and Δ %, both estimands where the family makes them differ; each cell
// judged against the budgets, never pooled. Prints a time estimate, progress on stderr, then per family its worst cell
// and the cells failing each budget; --full prints every cell first.
// Options: --method delta|bootstrap (the report's interval method to judge; default delta), --families NAME,PREFIX,...
// (a family whose name starts with one of them; --list prints the names),
// --sizes 10,30,... (runs), --percentiles 50,90,..., --experiments N (default 10,000 per cell), --experiments-at
// SIZE:N,... (a size's own number, e.g. fewer at 10,000 runs), --seed S,
// --threads T (default: the machine's), --truth-runs N (default 10^7; fewer only for a quick look: the truth's own
// noise then shows in the table), --full.
// The truths are cached under build/native/calibration-truth/, keyed by families.cpp's SHA-256.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "list_option.hpp"
#include "suite.hpp"

using namespace h3probe::calib;

using h3probe::tools::split_list;

namespace {

[[noreturn]] void usage(const std::string& why) {
    std::fprintf(stderr, "calibration: %s\nusage: h3probe_calibration_suite [--families NAME,...] [--sizes 10,30,...] "
                         "[--percentiles 50,90,...] [--method delta|bootstrap] [--experiments N] [--experiments-at SIZE:N,...] [--seed S] [--threads T] [--truth-runs N] [--full] [--list]\n",
                 why.c_str());
    std::exit(2);
}

// Requests per experiment of a unit, as the cost measure: the model's declared requests per run times its runs.
double unit_values(const Unit& u) {
    const Declared d = declared(*families()[u.family].variants[u.variant].model);
    return static_cast<double>(u.size) * (d.requests[0] + d.requests[1]);
}

}  // namespace

int main(int argc, char** argv) {
    SuiteOptions o;
    o.threads = std::max(1u, std::thread::hardware_concurrency());
    o.truth_cache = H3PROBE_TRUTH_CACHE;
    o.source_hash = H3PROBE_FAMILIES_SHA256;
    bool full = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--full") {
            full = true;
            continue;
        }
        if (arg == "--list") {
            for (const Family& f : families()) {
                std::printf("%s: %s (", f.name.c_str(), f.what.c_str());
                for (std::size_t v = 0; v < f.variants.size(); ++v) std::printf("%s%s", v ? ", " : "", f.variants[v].name.c_str());
                std::printf(")%s\n", f.h3_worked ? ", both estimands" : "");
            }
            return 0;
        }
        if (i + 1 >= argc) usage("a value is missing after " + arg);
        const std::string value = argv[++i];
        if (arg == "--experiments") o.experiments = std::atoi(value.c_str());
        else if (arg == "--experiments-at") {
            for (const auto& pair : split_list(value)) {
                const auto colon = pair.find(':');
                if (colon == std::string::npos) usage("--experiments-at takes SIZE:N,...");
                const int n = std::atoi(pair.substr(colon + 1).c_str());
                if (n < 10) usage("--experiments-at: at least 10 experiments");
                o.experiments_at[std::atoi(pair.substr(0, colon).c_str())] = n;
            }
        }
        else if (arg == "--method") {
            if (value != "delta" && value != "bootstrap") usage("--method is delta or bootstrap");
            o.method = value == "delta" ? h3probe::IntervalMethod::delta : h3probe::IntervalMethod::bootstrap;
        }
        else if (arg == "--seed") o.seed = std::strtoull(value.c_str(), nullptr, 10);
        else if (arg == "--threads") o.threads = static_cast<unsigned>(std::atoi(value.c_str()));
        else if (arg == "--truth-runs") o.truth_runs = std::atol(value.c_str());
        else if (arg == "--sizes") {
            for (const auto& s : split_list(value)) o.sizes.push_back(std::atoi(s.c_str()));
        } else if (arg == "--percentiles") {
            for (const auto& s : split_list(value)) o.ps.push_back(std::atof(s.c_str()) / 100);
        } else if (arg == "--families") {
            for (const auto& name : split_list(value)) {
                bool any = false;
                for (std::size_t f = 0; f < families().size(); ++f)
                    if (families()[f].name.rfind(name, 0) == 0) {
                        o.families.push_back(f);
                        any = true;
                    }
                if (!any) usage("no family is named " + name + " (--list)");
            }
        } else usage("unknown option " + arg);
    }
    if (o.experiments < 0 || (o.experiments > 0 && o.experiments < 10)) usage("--experiments must be at least 10");
    for (int s : o.sizes)
        if (s < 2) usage("every size must be at least 2 runs");
    for (double p : o.ps)
        if (!(p > 0 && p < 1)) usage("percentiles lie between 0 and 100");
    if (o.threads < 1) usage("--threads must be at least 1");

    // The time estimate: a probe of 40 experiments at 300 runs gives the CPU per request; every unit costs its
    // requests times its experiments; the truths not cached cost their runs' requests at about the same rate.
    const auto sizes = o.sizes.empty() ? suite_sizes() : o.sizes;
    std::vector<std::size_t> fams = o.families;
    if (fams.empty())
        for (std::size_t f = 0; f < families().size(); ++f) fams.push_back(f);
    const Unit probe{fams[0], 0, 300};
    const auto ps = o.ps.empty() ? suite_percentiles() : o.ps;
    const UnitResult probed = run_unit(probe, ps, 40, o.seed, Truth(2, std::vector<std::vector<double>>(2, std::vector<double>(ps.size(), 0.0))), o.method);
    const double per_value = probed.cpu_seconds / (40 * unit_values(probe));
    double cpu = 0;
    std::size_t cells = 0;
    for (std::size_t f : fams)
        for (std::size_t v = 0; v < families()[f].variants.size(); ++v)
            for (int s : sizes) {
                cpu += per_value * experiments_for(o, s) * unit_values({f, v, s}) * (families()[f].h3_worked ? 1.9 : 1.0);
                cells += ps.size() * 2 * (families()[f].h3_worked ? 2 : 1);
            }
    std::fprintf(stderr, "calibration: %zu cells (%zu families, sizes", cells, fams.size());
    for (int s : sizes) std::fprintf(stderr, " %d", s);
    std::fprintf(stderr, "), experiments per cell");
    for (int s : sizes) std::fprintf(stderr, " %d", experiments_for(o, s));
    std::fprintf(stderr, "; estimate %.0f min CPU, %.0f min on %u threads, plus any truth not cached (about 10 s CPU per "
                         "variant without a closed form, at 10^7 runs)\n", cpu / 60, cpu / 60 / o.threads, o.threads);

    const auto started = std::chrono::steady_clock::now();
    const std::vector<UnitResult> results = run_suite(o, stderr);
    double spent = 0;
    for (const UnitResult& r : results) spent += r.cpu_seconds;
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::fprintf(stderr, "calibration: %.1f min wall, %.1f min CPU in the experiments (truths aside)\n", wall / 60, spent / 60);
    std::printf("Calibration suite, %s intervals: families.cpp SHA-256 %s; experiments per cell",
                o.method == h3probe::IntervalMethod::delta ? "delta" : "bootstrap", o.source_hash.c_str());
    for (int s : sizes) std::printf(" %d at %d runs;", experiments_for(o, s), s);
    std::printf(" seed %llu, truth from %ld runs\n\n", static_cast<unsigned long long>(o.seed),
                o.truth_runs > 0 ? o.truth_runs : truth_runs());
    if (full) {
        print_cells(stdout, results, ps);
        std::printf("\n");
    }
    print_summary(stdout, results, ps);
    return 0;
}

// h3probe_bench: exact quantiles of 10 M values (lognormal, or read from a file of float64), and the report's
// interval table on a Dropbox-sized sample (2 x 420k runs x 5 requests), timed natively.
// Usage: h3probe_bench [values.f64 | count] [bootstrap replicates, 0 to skip]. Prints one line per figure, in the
// `key: value` form web/scripts/bench_quantiles.mjs reads.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <string>
#include <random>
#include <vector>

#include "quantile_ci.hpp"
#include "quantiles.hpp"

using namespace h3probe;

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

template <typename F>
double best_of(int repeats, F&& f) {
    double best = 1e300;
    for (int i = 0; i < repeats; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        f();
        best = std::min(best, ms_since(t0));
    }
    return best;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string source = argc > 1 ? argv[1] : "10000000";
    const unsigned replicates = argc > 2 ? static_cast<unsigned>(std::strtoul(argv[2], nullptr, 10)) : 400;
    std::mt19937_64 rng(1);
    std::vector<double> values;
    if (!source.empty() && std::isdigit(static_cast<unsigned char>(source[0]))) {
        std::lognormal_distribution<double> lognormal(0.0, 1.0);
        values.resize(std::strtoull(source.c_str(), nullptr, 10));
        for (double& v : values) v = lognormal(rng);
    } else {
        std::ifstream in(source, std::ios::binary | std::ios::ate);
        if (!in) {
            std::fprintf(stderr, "cannot read %s\n", source.c_str());
            return 1;
        }
        values.resize(static_cast<std::size_t>(in.tellg()) / sizeof(double));
        in.seekg(0);
        in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(double)));
    }
    const std::size_t n = values.size();
    const std::vector<double> ps = {0.5, 0.75, 0.9, 0.95, 0.99};

    std::vector<double> q;
    const double select_ms = best_of(5, [&] { q = quantiles(values, ps); });  // includes the copy of the input
    std::printf("native_quantiles_ms: %.2f\n", select_ms);
    // The same without copying the input (a fresh 80 MB copy per call also pays its page faults).
    const double in_place_ms = best_of(5, [&] {
        OrderStatistics os(values.data(), values.size());
        std::vector<std::size_t> ranks;
        for (double p : ps) {
            std::size_t lo = 0, hi = 0;
            OrderStatistics::quantile_ranks(n, p, lo, hi);
            ranks.push_back(lo);
            ranks.push_back(hi);
        }
        os.select(ranks);
        for (std::size_t k = 0; k < ps.size(); ++k) q[k] = os.quantile(ps[k]);
    });
    std::printf("native_quantiles_in_place_ms: %.2f\n", in_place_ms);
    std::printf("native_quantiles_values:");
    for (double x : q) std::printf(" %.17g", x);
    std::printf("\nnative_n: %zu\n", n);
    const double sort_ms = best_of(1, [&] {
        std::vector<double> s = values;
        std::sort(s.begin(), s.end());
        q = {quantile_sorted(s, 0.5), quantile_sorted(s, 0.99)};
    });
    std::printf("native_full_sort_ms: %.2f\n", sort_ms);

    // Dropbox scale: 4.2 M requests = 2 arms x 420k runs x 5.
    const int runs = 420'000, per_run = 5;
    std::normal_distribution<double> normal(0.0, 1.0);
    auto arm = [&](double mu, double sigma) {
        std::vector<double> v;
        std::vector<std::int32_t> r;
        for (int i = 0; i < runs; ++i) {
            const double f = std::exp(0.3 * normal(rng));
            for (int k = 0; k < per_run; ++k) {
                v.push_back(f * std::exp(mu + sigma * normal(rng)));
                r.push_back(i);
            }
        }
        return make_run_clustered_sample(v, r);
    };
    const auto h2 = arm(std::log(60.0), 0.6), h3 = arm(std::log(58.0), 0.45);
    ArmsAnalysis a;
    const double delta_ms = best_of(3, [&] { a = analyze_arms(h2, h3, ps, IntervalMethod::delta, 0.95); });
    std::printf("native_analyze_delta_ms: %.2f\n", delta_ms);
    std::printf("native_analyze_delta_p95: %.3f [%.3f, %.3f]\n", a.rows[3].diff_ms, a.rows[3].ci_ms_lo, a.rows[3].ci_ms_hi);
    if (replicates == 0) return 0;
    BootstrapOptions boot;
    boot.replicates = replicates;
    const double boot_ms = best_of(1, [&] { a = analyze_arms(h2, h3, ps, IntervalMethod::bootstrap, 0.95, boot); });
    std::printf("native_analyze_bootstrap_ms: %.2f\n", boot_ms);
    std::printf("native_analyze_bootstrap_p95: %.3f [%.3f, %.3f] B=%u\n", a.rows[3].diff_ms, a.rows[3].ci_ms_lo,
                a.rows[3].ci_ms_hi, replicates);
    return 0;
}

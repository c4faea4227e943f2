// h3probe_bench: exact quantiles of 10 M values (lognormal, or read from a file of float64), timed natively.
// Usage: h3probe_bench [values.f64 | count]. Prints one line per figure, in the `key: value` form
// web/bench/bench_quantiles.mjs reads. The report's interval table is timed by npm run bench:report.
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

    return 0;
}

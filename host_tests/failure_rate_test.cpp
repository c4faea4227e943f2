// Each arm's failure rate and the paired interval of their difference, from run sums.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "failure_rate.hpp"
#include "standard_normal.hpp"

using namespace h3probe;

namespace {

struct Run {
    std::uint64_t f2, n2, f3, n3;
};

// The delta interval's half-width computed run by run, as the header's formula reads.
double direct_half_width(const std::vector<Run>& runs, double confidence) {
    double F2 = 0, N2 = 0, F3 = 0, N3 = 0;
    for (const Run& r : runs) F2 += r.f2, N2 += r.n2, F3 += r.f3, N3 += r.n3;
    const double n = static_cast<double>(runs.size()), p2 = F2 / N2, p3 = F3 / N3;
    double ss = 0;
    for (const Run& r : runs) {
        const double d = (r.f3 - p3 * r.n3) / (N3 / n) - (r.f2 - p2 * r.n2) / (N2 / n);
        ss += d * d;
    }
    return two_sided_z(confidence) * std::sqrt(ss / (n * (n - 1)));
}

}  // namespace

TEST_CASE("the failure rates are ratios of run totals and their interval is the run-by-run delta method's") {
    std::mt19937 rng(3);
    std::vector<Run> runs;
    FailureSums s;
    for (int i = 0; i < 200; ++i) {
        // A run on a bad network fails more in both arms: the arms correlate through the run.
        const bool bad = i % 5 == 0;
        std::binomial_distribution<int> h2(5, bad ? 0.3 : 0.01), h3(5, bad ? 0.35 : 0.01);
        const Run r{static_cast<std::uint64_t>(h2(rng)), 5, static_cast<std::uint64_t>(h3(rng)), 5};
        runs.push_back(r);
        s.add_run(r.f2, r.n2, r.f3, r.n3);
    }
    const FailureComparison c = compare_failures(s, 0.95);
    CHECK(c.runs == 200);
    CHECK(c.rate_h2 == doctest::Approx(static_cast<double>(s.f2) / 1000));
    CHECK(c.rate_h3 == doctest::Approx(static_cast<double>(s.f3) / 1000));
    CHECK(c.diff == doctest::Approx(c.rate_h3 - c.rate_h2));
    CHECK((c.ci_hi - c.ci_lo) / 2 == doctest::Approx(direct_half_width(runs, 0.95)).epsilon(1e-9));
    CHECK(c.significant == (c.ci_lo > 0 || c.ci_hi < 0));
}

TEST_CASE("the pairing narrows the failure interval when failures go with the run's network") {
    // Every run fails in both arms together or in neither: the difference is 0 in every run.
    FailureSums together, apart;
    for (int i = 0; i < 100; ++i) {
        const std::uint64_t f = i % 4 == 0 ? 2 : 0;
        together.add_run(f, 5, f, 5);
        apart.add_run(f, 5, i % 4 == 1 ? 2 : 0, 5);  // the same rates, in other runs
    }
    const FailureComparison a = compare_failures(together, 0.95), b = compare_failures(apart, 0.95);
    CHECK(a.diff == 0);
    CHECK(a.ci_hi - a.ci_lo == 0);
    CHECK(!a.significant);
    CHECK(b.diff == 0);
    CHECK(b.ci_hi - b.ci_lo > 0.05);
}

TEST_CASE("without failures, or with fewer than two runs, nothing is claimed") {
    FailureSums none;
    for (int i = 0; i < 10; ++i) none.add_run(0, 5, 0, 5);
    const FailureComparison c = compare_failures(none, 0.95);
    CHECK(c.rate_h2 == 0);
    CHECK(!c.significant);
    FailureSums one;
    one.add_run(1, 5, 3, 5);
    const FailureComparison d = compare_failures(one, 0.95);
    CHECK(std::isnan(d.ci_lo));
    CHECK(!d.significant);
    FailureSums empty;
    CHECK(std::isnan(compare_failures(empty, 0.95).rate_h2));
}

// Coverage of the report's intervals on simulated run-clustered experiments (1000 experiments x 400 runs per arm).
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "coverage_sim.hpp"

using namespace h3probe;
using namespace h3probe::sim;

namespace {

void print(const char* label, const CoverageResult& r) {
    for (std::size_t k = 0; k < r.ps.size(); ++k)
        std::printf("%-28s p%-4g true diff %+7.2f ms (%+6.2f%%)  coverage ms %.3f  pct %.3f  h2 %.3f  width %.1f ms\n",
                    label, r.ps[k] * 100, r.true_diff_ms[k], r.true_diff_pct[k], r.coverage_ms[k], r.coverage_pct[k],
                    r.coverage_h2[k], r.mean_width_ms[k]);
}

}  // namespace

TEST_CASE("the true quantiles of the simulated arms are the closed-form lognormal ones") {
    // sigma_total = sqrt(0.6^2 + 0.3^2) = 0.67082; p95: 60 * exp(0.67082 * 1.644854) = 180.8641
    CHECK(true_quantile({4.0943445622221004, 0.6}, 0.3, 0.5) == doctest::Approx(60));
    CHECK(true_quantile({4.0943445622221004, 0.6}, 0.3, 0.95) == doctest::Approx(180.8641).epsilon(1e-6));
}

TEST_CASE("delta-method intervals with runs as units cover the true difference 93-97% of the time") {
    const auto r = run_coverage(CoverageScenario{});
    print("delta, runs as units", r);
    CHECK(r.undefined == 0);
    for (std::size_t k = 0; k < r.ps.size(); ++k) {
        CHECK(r.coverage_ms[k] >= 0.93);
        CHECK(r.coverage_ms[k] <= 0.97);
        CHECK(r.coverage_pct[k] >= 0.93);
        CHECK(r.coverage_pct[k] <= 0.97);
        CHECK(r.coverage_h2[k] >= 0.93);
        CHECK(r.coverage_h2[k] <= 0.97);
    }
}

TEST_CASE("run bootstrap intervals cover the true difference 92-97% of the time") {
    // The percentile bootstrap runs a little under nominal at the median with 400 runs per arm (92.9% here against
    // the delta method's 94.0%): its lower bound 92%, not 93%, and one reason the report defaults to delta.
    CoverageScenario sc;
    sc.method = IntervalMethod::bootstrap;
    const auto r = run_coverage(sc);
    print("bootstrap B=400", r);
    for (std::size_t k = 0; k < r.ps.size(); ++k) {
        CHECK(r.coverage_ms[k] >= 0.92);
        CHECK(r.coverage_ms[k] <= 0.97);
    }
}

TEST_CASE("treating requests as independent under-covers: the run is the unit") {
    CoverageScenario sc;
    sc.ignore_runs = true;
    const auto r = run_coverage(sc);
    print("delta, requests as units", r);
    for (std::size_t k = 0; k < r.ps.size(); ++k) CHECK(r.coverage_ms[k] < 0.93);
}

TEST_CASE("when both arms come from the same runs the independent-arms interval is conservative") {
    CoverageScenario sc;
    sc.shared_runs = true;
    const auto r = run_coverage(sc);
    print("delta, arms share runs", r);
    for (std::size_t k = 0; k < r.ps.size(); ++k) CHECK(r.coverage_ms[k] >= 0.95);
}

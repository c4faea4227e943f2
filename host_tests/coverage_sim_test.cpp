// Coverage and width of the report's intervals on simulated run-clustered experiments (native_stub/coverage_sim).
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "coverage_sim.hpp"

using namespace h3probe;
using namespace h3probe::sim;

namespace {

void print(const char* label, const CoverageResult& r) {
    for (std::size_t k = 0; k < r.ps.size(); ++k)
        std::printf("%-30s p%-4g true diff %+7.2f ms (%+6.2f%%)  coverage ms %.3f  pct %.3f  h2 %.3f  "
                    "se/sd ms %.3f  pct %.3f  corr %.3f  width %.1f ms\n",
                    label, r.ps[k] * 100, r.true_diff_ms[k], r.true_diff_pct[k], r.coverage_ms[k], r.coverage_pct[k],
                    r.coverage_h2[k], r.se_ratio_ms[k], r.se_ratio_pct[k], r.mean_corr[k], r.mean_width_ms[k]);
}

// Coverage 93-97% and mean reported SE / SD of the estimate 0.9-1.1, for Delta ms and Delta %, at every p.
void check_honest(const CoverageResult& r) {
    CHECK(r.undefined == 0);
    for (std::size_t k = 0; k < r.ps.size(); ++k) {
        CAPTURE(r.ps[k]);
        CHECK(r.coverage_ms[k] >= 0.93);
        CHECK(r.coverage_ms[k] <= 0.97);
        CHECK(r.coverage_pct[k] >= 0.93);
        CHECK(r.coverage_pct[k] <= 0.97);
        CHECK(r.se_ratio_ms[k] >= 0.9);
        CHECK(r.se_ratio_ms[k] <= 1.1);
        CHECK(r.se_ratio_pct[k] >= 0.9);
        CHECK(r.se_ratio_pct[k] <= 1.1);
    }
}

// The paired design: every run measures both arms under one run factor. 2000 experiments rather than 1000: the
// SD of the estimate is itself estimated to ~2% (1 / sqrt(2 * experiments)) and the width bound is 10%.
CoverageScenario paired() {
    CoverageScenario sc;
    sc.shared_runs = true;
    sc.experiments = 2000;
    return sc;
}

}  // namespace

TEST_CASE("the true quantiles of the simulated arms are the closed-form lognormal ones") {
    // sigma_total = sqrt(0.6^2 + 0.3^2) = 0.67082; p95: 60 * exp(0.67082 * 1.644854) = 180.8641
    CHECK(true_quantile({4.0943445622221004, 0.6}, 0.3, 0.5) == doctest::Approx(60));
    CHECK(true_quantile({4.0943445622221004, 0.6}, 0.3, 0.95) == doctest::Approx(180.8641).epsilon(1e-6));
}

TEST_CASE("on paired runs the delta-method intervals cover 93-97% and are as wide as the estimate's spread") {
    const auto r = run_coverage(paired());
    print("delta, paired", r);
    check_honest(r);
    for (std::size_t k = 0; k < r.ps.size(); ++k) {
        CHECK(r.coverage_h2[k] >= 0.93);
        CHECK(r.coverage_h2[k] <= 0.97);
        CHECK(r.mean_corr[k] > 0.2);  // the shared run factor correlates the arms' quantiles
    }
}

TEST_CASE("on paired runs the interval without the covariance term is too wide by more than 10%") {
    CoverageScenario sc = paired();
    sc.pairing = ArmPairing::independent;
    const auto r = run_coverage(sc);
    print("delta, paired, no covariance", r);
    for (std::size_t k = 0; k < r.ps.size(); ++k) {
        CHECK(r.se_ratio_ms[k] > 1.1);
        CHECK(r.se_ratio_pct[k] > 1.1);
        CHECK(r.coverage_ms[k] > 0.97);  // over-covers: coverage alone would not call this a failure
    }
}

TEST_CASE("runs that recorded only one arm keep the paired intervals honest") {
    CoverageScenario sc = paired();
    sc.single_arm_share = 0.2;
    const auto r = run_coverage(sc);
    print("delta, paired, 20% one arm", r);
    check_honest(r);
}

TEST_CASE("on arms from different runs the delta-method intervals cover 93-97% at the right width") {
    CoverageScenario sc;
    const auto r = run_coverage(sc);
    print("delta, separate runs", r);
    check_honest(r);
    for (std::size_t k = 0; k < r.ps.size(); ++k) {
        CHECK(r.coverage_h2[k] >= 0.93);
        CHECK(r.coverage_h2[k] <= 0.97);
    }
}

TEST_CASE("the paired run bootstrap covers 93-97% and is as wide as the estimate's spread") {
    CoverageScenario sc = paired();
    sc.method = IntervalMethod::bootstrap;
    const auto r = run_coverage(sc);
    print("bootstrap B=400, paired", r);
    check_honest(r);
}

TEST_CASE("treating requests as independent under-covers: the run is the unit") {
    CoverageScenario sc;
    sc.ignore_runs = true;
    const auto r = run_coverage(sc);
    print("delta, requests as units", r);
    for (std::size_t k = 0; k < r.ps.size(); ++k) CHECK(r.coverage_ms[k] < 0.93);
}

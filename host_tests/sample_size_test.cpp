// Sample size for detecting a relative change of a quantile, from a baseline arm.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "infer_helpers.hpp"
#include "report_aggregates.hpp"
#include "sample_size.hpp"

using namespace h3probe;
using namespace h3probe::test;

namespace {
RunClusteredSample baseline(int copies_per_run) {
    RunClusteredSample s;
    for (int i = 1; i <= 100; ++i)
        add_run(s, std::vector<double>(static_cast<std::size_t>(copies_per_run), i), static_cast<std::uint32_t>(i));
    return s;
}
// The report's sample-size line for the baseline as its HTTP/2 arm (infer_report()).
SampleSizePlan plan_sample_size(const RunClusteredSample& h2, double p, double mde, double alpha, double power) {
    std::vector<ValueGroup> groups(1);
    groups[0].arm[0] = h2;
    ReportOptions o;
    o.size_p = p;
    o.size_mde = mde;
    o.size_alpha = alpha;
    o.size_power = power;
    std::string error;
    const auto reports = infer_values(groups, o, error);
    REQUIRE(reports.size() == 1);
    if (!reports[0].sample_size) return {NAN, NAN, NAN, NAN};
    return *reports[0].sample_size;
}
}  // namespace

TEST_CASE("sample size follows 2 (z_a + z_b)^2 n_runs se^2 / (mde q)^2") {
    // Baseline 1..100, one value per run: median 50.5, se = sd(F^) 50.5 (log Q(0.5 + w) - log Q(0.5 - w)) / (2 w) with
    // Q(p) = 1 + 99 p, sd(F^) = sqrt(25 / 9900), w = 1.5 sd(F^) (quantile_se): 5.0114;
    // 2 * (1.95996 + 0.84162)^2 * 100 * se^2 / (0.1 * 50.5)^2 = 1546.2 -> 1547 runs per arm.
    const double sd = std::sqrt(25.0 / 9900), w = kSeWindow * sd;
    const double se = sd * 50.5 * (std::log(1 + 99 * (0.5 + w)) - std::log(1 + 99 * (0.5 - w))) / (2 * w);
    const double z_a = 1.959963984540054, z_b = 0.8416212335729143;
    const auto plan = plan_sample_size(baseline(1), 0.5, 0.1, 0.05, 0.8);
    CHECK(plan.quantile == doctest::Approx(50.5));
    CHECK(plan.runs_per_arm == std::ceil(2 * (z_a + z_b) * (z_a + z_b) * 100 * se * se / (5.05 * 5.05)));
    CHECK(plan.runs_per_arm == 1547);
    CHECK(plan.requests_per_run == 1);
    CHECK(plan.design_effect == doctest::Approx(100.0 / 99));
}

TEST_CASE("copies of a value within a run add requests but hardly any information") {
    // Five identical values per run: the design effect is ~5 and the runs needed stay about the same as with one.
    const auto plan = plan_sample_size(baseline(5), 0.5, 0.1, 0.05, 0.8);
    CHECK(plan.requests_per_run == 5);
    CHECK(plan.design_effect == doctest::Approx(5 * 100.0 / 99).epsilon(0.02));
    CHECK(plan.runs_per_arm == doctest::Approx(1547).epsilon(0.05));
}

TEST_CASE("sample size is undefined for a baseline too small or arguments out of range") {
    CHECK(std::isnan(plan_sample_size(baseline(1), 0.5, 0, 0.05, 0.8).runs_per_arm));
    CHECK(std::isnan(plan_sample_size(baseline(1), 0.5, 0.1, 1.5, 0.8).runs_per_arm));
    CHECK(std::isnan(plan_sample_size(one_to(3), 0.5, 0.1, 0.05, 0.8).runs_per_arm));
}

namespace {
// 400 runs of 5 values; HTTP/3 = HTTP/2 plus noise of SD `noise` per value; the arms share each run's level (paired)
// or, with `apart`, come from different runs.
std::vector<ValueGroup> arms(double noise, bool apart) {
    std::vector<ValueGroup> groups(1);
    Lcg rng{17};
    const auto uniform = [&rng] { return rng.uniform(); };
    for (std::uint32_t run = 0; run < 400; ++run) {
        const double level = 20 + 60 * uniform();
        std::vector<double> v2, v3;
        for (int k = 0; k < 5; ++k) {
            const double v = level * (0.9 + 0.2 * uniform());
            v2.push_back(v);
            v3.push_back(v + noise * (uniform() - 0.5) * std::sqrt(12.0));
        }
        add_run(groups[0].arm[0], v2, run);
        add_run(groups[0].arm[1], v3, apart ? run + 1000 : run);
    }
    groups[0].counts.runs = apart ? 800 : 400;
    return groups;
}
SampleSizePlan plan_of(const std::vector<ValueGroup>& groups, IntervalMethod method) {
    ReportOptions o;
    o.method = method;
    std::string error;
    const auto reports = infer_values(groups, o, error);
    REQUIRE(error.empty());
    REQUIRE(reports[0].sample_size);
    return *reports[0].sample_size;
}
}  // namespace

TEST_CASE("the plan counts the pairing: arms that move together within a run need fewer runs than arms apart") {
    for (const IntervalMethod method : {IntervalMethod::delta, IntervalMethod::bootstrap}) {
        CAPTURE(static_cast<int>(method));
        const SampleSizePlan paired = plan_of(arms(1, false), method), apart = plan_of(arms(1, true), method);
        CHECK(paired.paired);
        CHECK(apart.paired);
        // The arms' run levels are the same in the paired runs (rho near 1): far fewer runs than apart, where the
        // plan is about the unpaired formula's (the HTTP/2 arm alone, both arms alike).
        CHECK(paired.runs_per_arm * 5 < apart.runs_per_arm);
        // Without a row at p95 the plan is the HTTP/2 arm's, for arms taken apart.
        ReportOptions o;
        o.percentiles = {0.5};
        std::string error;
        const auto unpaired = infer_values(arms(1, true), o, error)[0].sample_size;
        REQUIRE(unpaired);
        CHECK_FALSE(unpaired->paired);
        CHECK(apart.runs_per_arm == doctest::Approx(unpaired->runs_per_arm).epsilon(0.35));
    }
    // Below the runs an interval at p95 needs, the plan is not the paired one.
    std::vector<ValueGroup> few(1);
    for (std::uint32_t run = 0; run < 40; ++run) {
        add_run(few[0].arm[0], {10.0 + run, 11.0 + run}, run);
        add_run(few[0].arm[1], {10.5 + run, 11.5 + run}, run);
    }
    CHECK_FALSE(plan_of(few, IntervalMethod::delta).paired);
}

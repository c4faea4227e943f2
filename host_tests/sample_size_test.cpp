// Sample size for detecting a relative change of a quantile, from a baseline arm.
#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>


#include "infer_helpers.hpp"
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

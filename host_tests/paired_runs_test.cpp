// Paired within-run differences and the order-effect test, against hand-computed values.
#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>

#include "exact_sum.hpp"
#include "infer_helpers.hpp"
#include "paired_runs.hpp"

using namespace h3probe;
using namespace h3probe::test;

namespace {
PairedDifferenceSummary paired_summary(const std::vector<double>& diffs) {
    const GroupReport g = infer_group(one_to(20), one_to(20), {0.5}, 0.95, diffs);
    REQUIRE(g.paired.has_value());
    return *g.paired;
}
Moments moments(const std::vector<double>& xs) {
    MomentAccumulator m;
    for (double x : xs) m.add(x);
    return m.sums().moments();
}
OrderEffect order_effect(const std::vector<double>& h2_first, const std::vector<double>& h3_first, double confidence) {
    return order_effect_from(moments(h2_first), moments(h3_first), confidence);
}
}  // namespace

TEST_CASE("paired differences are summarised by mean, median, p10, p90 and their intervals") {
    // 1..5: mean 3, sd sqrt(2.5): CI 3 -/+ 1.96 sqrt(0.5); p10 = 1 + 0.4, p90 = 4 + 0.6. Too few for a median CI.
    const auto s = paired_summary({5, 1, 4, 2, 3});
    CHECK(s.n == 5);
    CHECK(s.mean == doctest::Approx(3));
    CHECK(s.median == doctest::Approx(3));
    CHECK(s.p10 == doctest::Approx(1.4));
    CHECK(s.p90 == doctest::Approx(4.6));
    CHECK(s.ci_mean_lo == doctest::Approx(1.6140961756503225));
    CHECK(s.ci_mean_hi == doctest::Approx(4.385903824349677));
    CHECK(std::isnan(s.ci_median_lo));
    SUBCASE("100 differences get the order-statistic interval (X_(40), X_(61)) for the median") {
        std::vector<double> d;
        for (int i = 100; i >= 1; --i) d.push_back(i);
        const auto big = paired_summary(d);
        CHECK(big.ci_median_lo == 40);
        CHECK(big.ci_median_hi == 61);
    }
}

TEST_CASE("order effect compares the mean difference of h3-first runs with that of h2-first runs") {
    // {1,2,3} vs {4,5,6}: diff 3, se sqrt(1/3 + 1/3) = 0.8165, CI 3 -/+ 1.6003, p = 2 Phi(-3.674) = 0.000239.
    const auto e = order_effect({1, 2, 3}, {4, 5, 6}, 0.95);
    CHECK(e.n_h2_first == 3);
    CHECK(e.mean_h2_first == doctest::Approx(2));
    CHECK(e.mean_h3_first == doctest::Approx(5));
    CHECK(e.diff == doctest::Approx(3));
    CHECK(e.ci_lo == doctest::Approx(1.3996961078815637));
    CHECK(e.ci_hi == doctest::Approx(4.600303892118436));
    CHECK(e.p_value == doctest::Approx(0.00023856345402872847).epsilon(1e-6));
    SUBCASE("identical groups show no effect") {
        const auto none = order_effect({1, 2, 3}, {3, 2, 1}, 0.95);
        CHECK(none.diff == 0);
        CHECK(none.p_value == doctest::Approx(1));
    }
    SUBCASE("a group of one run gives no interval") {
        const auto one = order_effect({1}, {2, 3}, 0.95);
        CHECK(std::isnan(one.ci_lo));
        CHECK(std::isnan(one.p_value));
        CHECK(one.diff == doctest::Approx(1.5));
    }
}

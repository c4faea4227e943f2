// The normal CDF and quantile against reference values (Python's statistics.NormalDist).
#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>

#include "standard_normal.hpp"

using namespace h3probe;

TEST_CASE("normal quantile gives the familiar critical values") {
    CHECK(normal_quantile(0.975) == doctest::Approx(1.9599639845400536).epsilon(1e-14));
    CHECK(normal_quantile(0.8) == doctest::Approx(0.8416212335729144).epsilon(1e-14));
    CHECK(normal_quantile(0.5) == doctest::Approx(0.0));
    CHECK(two_sided_z(0.95) == doctest::Approx(1.9599639845400536).epsilon(1e-14));
}

TEST_CASE("normal quantile stays accurate far in the tails") {
    CHECK(normal_quantile(1e-10) == doctest::Approx(-6.361340902404056).epsilon(1e-12));
    CHECK(normal_quantile(1 - 1e-10) == doctest::Approx(6.361340902404056).epsilon(1e-6));  // 1 - 1e-10 is inexact
}

TEST_CASE("normal CDF and quantile invert each other") {
    CHECK(normal_cdf(1.96) == doctest::Approx(0.9750021048517796).epsilon(1e-14));
    for (double p : {0.001, 0.025, 0.3, 0.7, 0.95, 0.999}) CHECK(normal_cdf(normal_quantile(p)) == doctest::Approx(p).epsilon(1e-13));
}

TEST_CASE("normal quantile outside (0, 1) is infinite at the ends and NaN beyond") {
    CHECK(std::isinf(normal_quantile(0)));
    CHECK(normal_quantile(1) > 0);
    CHECK(std::isnan(normal_quantile(-0.1)));
    CHECK(std::isnan(normal_quantile(1.1)));
}

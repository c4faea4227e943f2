// The per-protocol table: percentiles per arm and the h3 - h2 difference in ms and percent.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "arm_comparison.hpp"

using namespace h3probe;

TEST_CASE("arm comparison reports h3 minus h2 per percentile") {
    const auto c = compare_arms({100, 200, 300, 400, 500}, {90, 180, 270, 360, 450}, {0.5, 0.9});
    CHECK(c.n_h2 == 5);
    CHECK(c.n_h3 == 5);
    REQUIRE(c.rows.size() == 2);
    CHECK(c.rows[0].h2 == doctest::Approx(300));
    CHECK(c.rows[0].h3 == doctest::Approx(270));
    CHECK(c.rows[0].diff_ms == doctest::Approx(-30));
    CHECK(c.rows[0].diff_pct == doctest::Approx(-10));
    CHECK(c.rows[1].h2 == doctest::Approx(460));  // h = 3.6 -> 400 + 0.6*100
    CHECK(c.rows[1].diff_pct == doctest::Approx(-10));
}

TEST_CASE("arm comparison has no rows when an arm is empty") {
    const auto c = compare_arms({1, 2, 3}, {});
    CHECK(c.n_h2 == 3);
    CHECK(c.rows.empty());
    const auto j = nlohmann::json::parse(to_json(c));
    CHECK(j["rows"].empty());
}

TEST_CASE("default percentiles are the Dropbox table's") {
    CHECK(default_percentiles() == std::vector<double>{0.50, 0.75, 0.90, 0.95, 0.99});
}

// Quantiles against hand-computed values (Hyndman-Fan type 7, as numpy.percentile's default).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <cstdint>

#include "quantiles.hpp"

using namespace h3probe;

TEST_CASE("quantiles interpolate linearly between order statistics") {
    // x = 10,20,30,40: h = 3p. p=0.5 -> 25; p=0.9 -> h=2.7 -> 30+0.7*10 = 37; p=0.25 -> h=0.75 -> 17.5
    const std::vector<double> sorted = {10, 20, 30, 40};
    CHECK(quantile_sorted(sorted, 0.0) == doctest::Approx(10));
    CHECK(quantile_sorted(sorted, 0.25) == doctest::Approx(17.5));
    CHECK(quantile_sorted(sorted, 0.5) == doctest::Approx(25));
    CHECK(quantile_sorted(sorted, 0.9) == doctest::Approx(37));
    CHECK(quantile_sorted(sorted, 1.0) == doctest::Approx(40));
}

TEST_CASE("quantiles of unsorted values match numpy.percentile") {
    // numpy.percentile([7, 1, 3, 9, 5, 2, 8], [50, 75, 90, 95, 99]) = 5, 7.5, 8.4, 8.7, 8.94
    const auto q = quantiles({7, 1, 3, 9, 5, 2, 8}, {0.5, 0.75, 0.9, 0.95, 0.99});
    REQUIRE(q.size() == 5);
    CHECK(q[0] == doctest::Approx(5));
    CHECK(q[1] == doctest::Approx(7.5));
    CHECK(q[2] == doctest::Approx(8.4));
    CHECK(q[3] == doctest::Approx(8.7));
    CHECK(q[4] == doctest::Approx(8.94));
}

TEST_CASE("quantiles of a single value or no value") {
    SUBCASE("one value is every quantile") { CHECK(quantile_sorted({42}, 0.95) == 42); }
    SUBCASE("no value gives NaN, not a number that could pass as a latency") {
        CHECK(std::isnan(quantile_sorted({}, 0.5)));
    }
    SUBCASE("p outside [0, 1] gives NaN") { CHECK(std::isnan(quantile_sorted({1, 2}, 1.5))); }
}

TEST_CASE("summary holds n, min, median and max") {
    const Summary s = summarize({4, 1, 3, 2});
    CHECK(s.n == 4);
    CHECK(s.min == 1);
    CHECK(s.median == doctest::Approx(2.5));
    CHECK(s.max == 4);
    CHECK(summarize({}).n == 0);
}

TEST_CASE("order statistics by selection equal those of a full sort") {
    std::vector<double> values;
    std::uint64_t x = 12345;
    for (int i = 0; i < 10007; ++i) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        values.push_back(static_cast<double>(x >> 40) / 1000.0);
    }
    std::vector<double> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    OrderStatistics os(values);
    os.select({5000, 9000, 9500, 9900, 10006});
    for (std::size_t r : {0u, 1u, 4999u, 5000u, 5001u, 9000u, 9499u, 9500u, 9900u, 10006u}) CHECK(os.at(r) == sorted[r]);
    for (double p : {0.0, 0.5, 0.75, 0.9, 0.95, 0.99, 1.0}) CHECK(os.quantile(p) == quantile_sorted(sorted, p));
    const auto q = quantiles(values, {0.99, 0.5});
    CHECK(q[0] == quantile_sorted(sorted, 0.99));
    CHECK(q[1] == quantile_sorted(sorted, 0.5));
}

TEST_CASE("radix selection on large samples agrees with a full sort, also with negatives, ties and narrow ranges") {
    auto check_against_sort = [](std::vector<double> values) {
        std::vector<double> sorted = values;
        std::sort(sorted.begin(), sorted.end());
        OrderStatistics os(values);
        const std::size_t n = values.size();
        std::vector<std::size_t> ranks = {0, 1, n / 3, n / 2, n / 2 + 1, (n * 9) / 10, (n * 99) / 100, n - 2, n - 1};
        os.select(ranks);
        for (std::size_t r : ranks) CHECK(os.at(r) == sorted[r]);
        CHECK(os.at(n / 4) == sorted[n / 4]);  // a rank asked later, from the kept histogram
        for (double p : {0.5, 0.75, 0.9, 0.95, 0.99}) CHECK(quantiles(values, {p})[0] == quantile_sorted(sorted, p));
    };
    std::uint64_t x = 99;
    auto next = [&x] {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<double>(x >> 11) / 9007199254740992.0;  // [0, 1)
    };
    std::vector<double> v(200000);
    SUBCASE("signed values spread over many octaves") {
        for (double& e : v) e = (next() - 0.3) * std::exp(10 * next());
        check_against_sort(v);
    }
    SUBCASE("whole milliseconds: few distinct values, long runs of ties") {
        for (double& e : v) e = std::floor(20 + 200 * next() * next());
        check_against_sort(v);
    }
    SUBCASE("a range so narrow that one top-level bucket holds everything (second-level histogram)") {
        for (double& e : v) e = 1 + next() / 32;
        check_against_sort(v);
    }
    SUBCASE("one repeated value") {
        std::fill(v.begin(), v.end(), 42.5);
        check_against_sort(v);
    }
}

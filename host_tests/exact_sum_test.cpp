// Exact sums: the same bits in any order of adding and however the values are split, against sums small enough to
// check by hand, and the moments they give against the two-pass ones.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "exact_sum.hpp"

using namespace h3probe;

namespace {

MomentSums sums_of(const std::vector<double>& xs) {
    MomentAccumulator m;
    for (double x : xs) m.add(x);
    return m.sums();
}

}  // namespace

TEST_CASE("exact sums do not depend on the order of the values or on how they were split") {
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<double> exponent(-40, 40);
    std::vector<double> xs;
    // Exponents far apart (bins that collide), a long run of one exponent, the extremes of the range.
    for (int i = 0; i < 50000; ++i) xs.push_back((i % 3 ? 1 : -1) * std::ldexp(1 + (i % 977) / 977.0, static_cast<int>(exponent(rng))));
    for (int i = 0; i < 50000; ++i) xs.push_back(1.5 + (i % 1000) * 1e-7);
    for (double x : {1e-300, std::numeric_limits<double>::denorm_min(), -1e300, 1e300}) xs.push_back(x);
    const MomentSums forward = sums_of(xs);
    MomentAccumulator backward, halves[2];
    for (auto it = xs.rbegin(); it != xs.rend(); ++it) backward.add(*it);
    for (std::size_t i = 0; i < xs.size(); ++i) halves[i % 2].add(xs[i]);
    halves[0].add(halves[1]);
    halves[0].add(std::numeric_limits<double>::quiet_NaN());  // not counted
    for (const MomentSums& s : {backward.sums(), halves[0].sums()}) {
        CHECK(s.n == forward.n);
        CHECK(s.sum.text() == forward.sum.text());
        CHECK(s.sum_sq.text() == forward.sum_sq.text());
        CHECK(s.moments().mean == forward.moments().mean);
        CHECK(s.moments().var == forward.moments().var);
    }
}

TEST_CASE("exact sums against hand-computed ones, through their text") {
    const MomentSums s = sums_of({1.5, -0.25, 3});
    CHECK(s.sum.value(ExactSum::kValueUnit) == 4.25);
    CHECK(s.sum_sq.value(ExactSum::kSquareUnit) == 2.25 + 0.0625 + 9);
    ExactSum back;
    REQUIRE(back.parse(s.sum.text()));
    CHECK(back.text() == s.sum.text());
    CHECK(sums_of({2.5, -2.5}).sum.text() == "0");
    REQUIRE(back.parse("-10"));
    CHECK(back.value(0) == -16);
    CHECK(back.text() == "-10");
    CHECK(!back.parse("12g"));
    CHECK(!back.parse("-"));
    CHECK(back.text() == "-10");
    // 0.1 + 0.2 exactly lies halfway between two doubles: rounded once, to even, as the hardware's sum is; 1 + 2^-60
    // rounds to 1.
    CHECK(sums_of({0.1, 0.2}).sum.value(ExactSum::kValueUnit) == 0.1 + 0.2);
    CHECK(sums_of({1, std::ldexp(1, -60)}).sum.value(ExactSum::kValueUnit) == 1);
}

TEST_CASE("the moments from exact sums are the two-pass moments, within rounding") {
    std::mt19937_64 rng(5);
    std::normal_distribution<double> d(-12, 30);
    std::vector<double> xs;
    for (int i = 0; i < 20000; ++i) xs.push_back(d(rng));
    double mean = 0, ss = 0;
    for (double x : xs) mean += x / static_cast<double>(xs.size());
    for (double x : xs) ss += (x - mean) * (x - mean);
    const Moments exact = sums_of(xs).moments();
    CHECK(exact.n == xs.size());
    CHECK(exact.mean == doctest::Approx(mean).epsilon(1e-13));
    CHECK(exact.var == doctest::Approx(ss / static_cast<double>(xs.size() - 1)).epsilon(1e-13));
    CHECK(MomentSums{}.moments().n == 0);
    CHECK(std::isnan(MomentSums{}.moments().mean));
    CHECK(sums_of({4}).moments().mean == 4);
    CHECK(std::isnan(sums_of({4}).moments().var));
    CHECK(sums_of(std::vector<double>(10, 7.3)).moments().var == 0);
}

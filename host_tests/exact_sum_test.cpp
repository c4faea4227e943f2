// Exact sums: the same bits in any order of adding, against sums small enough to check by hand, and the moments they
// give against the two-pass ones.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "exact_sum.hpp"

using namespace h3probe;

TEST_CASE("an exact sum does not depend on the order its values come in") {
    std::mt19937_64 rng(3);
    std::lognormal_distribution<double> ms(3, 1);
    std::vector<double> xs;
    for (int i = 0; i < 5000; ++i) xs.push_back((i % 3 ? 1 : -1) * ms(rng));
    xs.push_back(1e-300);
    xs.push_back(std::numeric_limits<double>::denorm_min());
    xs.push_back(-1e300);
    xs.push_back(1e300);
    MomentSums forward, backward, halves[2];
    for (double x : xs) forward.add(x);
    for (auto it = xs.rbegin(); it != xs.rend(); ++it) backward.add(*it);
    for (std::size_t i = 0; i < xs.size(); ++i) halves[i % 2].add(xs[i]);
    halves[0].add(halves[1]);
    CHECK(forward.sum == backward.sum);
    CHECK(forward.sum_sq == backward.sum_sq);
    CHECK(forward.sum == halves[0].sum);
    CHECK(forward.sum_sq == halves[0].sum_sq);
    CHECK(forward.sum.text() == backward.sum.text());
    const Moments a = forward.moments(), b = backward.moments();
    CHECK(a.mean == b.mean);
    CHECK(a.var == b.var);
}

TEST_CASE("exact sums against hand-computed ones, through their text") {
    ExactSum s;
    s.add(1.5);
    s.add(-0.25);
    // 1.25 = 1.25 * 2^1074 units.
    CHECK(s.value(ExactSum::kValueUnit) == 1.25);
    ExactSum back;
    REQUIRE(back.parse(s.text()));
    CHECK(back == s);
    ExactSum q;
    q.add_square(3);
    q.add_square(-0.5);
    CHECK(q.value(ExactSum::kSquareUnit) == 9.25);
    ExactSum zero;
    zero.add(2.5);
    zero.add(-2.5);
    CHECK(zero.text() == "0");
    CHECK(zero.value(ExactSum::kValueUnit) == 0);
    ExactSum neg;
    REQUIRE(neg.parse("-10"));
    CHECK(neg.value(0) == -16);
    CHECK(neg.text() == "-10");
    CHECK(!neg.parse("12g"));
    CHECK(!neg.parse("-"));
    CHECK(neg.text() == "-10");
    // 0.1 + 0.2 exactly lies halfway between two doubles: rounded once, to even, as the hardware's sum is.
    ExactSum tenth;
    tenth.add(0.1);
    tenth.add(0.2);
    CHECK(tenth.value(ExactSum::kValueUnit) == 0.1 + 0.2);
    CHECK(tenth.times(tenth).value(ExactSum::kSquareUnit) == doctest::Approx(0.09));
    // 1 + 2^-60: one conversion rounds it to 1, as the sum of the two doubles does.
    ExactSum one;
    one.add(1);
    one.add(std::ldexp(1, -60));
    CHECK(one.value(ExactSum::kValueUnit) == 1);
}

TEST_CASE("the moments from exact sums are the two-pass moments, within rounding") {
    std::mt19937_64 rng(5);
    std::normal_distribution<double> d(-12, 30);
    std::vector<double> xs;
    MomentSums m;
    for (int i = 0; i < 20000; ++i) {
        xs.push_back(d(rng));
        m.add(xs.back());
    }
    m.add(std::numeric_limits<double>::quiet_NaN());  // not counted, as moments() leaves it out
    const Moments exact = m.moments(), two_pass = moments(xs);
    CHECK(exact.n == two_pass.n);
    CHECK(exact.mean == doctest::Approx(two_pass.mean).epsilon(1e-13));
    CHECK(exact.var == doctest::Approx(two_pass.var).epsilon(1e-13));
    const Moments none = MomentSums{}.moments();
    CHECK(none.n == 0);
    CHECK(std::isnan(none.mean));
    MomentSums one;
    one.add(4);
    CHECK(one.moments().mean == 4);
    CHECK(std::isnan(one.moments().var));
    MomentSums same;
    for (int i = 0; i < 10; ++i) same.add(7.3);
    CHECK(same.moments().var == 0);
}

TEST_CASE("the accumulator's sums are MomentSums' value by value, whatever the exponents and however many") {
    std::mt19937_64 rng(9);
    std::uniform_real_distribution<double> exponent(-40, 40);
    MomentSums one_by_one;
    MomentAccumulator fast, halves[2];
    for (int i = 0; i < 200000; ++i) {
        // Exponents far apart (bins that collide) and a run of one exponent long enough to fill a bin.
        const double x = i < 100000 ? (i % 2 ? -1 : 1) * std::ldexp(1.0 + (i % 977) / 977.0, static_cast<int>(exponent(rng)))
                                    : 1.5 + (i % 1000) * 1e-7;
        one_by_one.add(x);
        fast.add(x);
        halves[i % 2].add(x);
    }
    fast.add(std::numeric_limits<double>::infinity());  // not counted
    halves[0].add(halves[1]);
    for (const MomentSums& s : {fast.sums(), halves[0].sums()}) {
        CHECK(s.n == one_by_one.n);
        CHECK(s.sum == one_by_one.sum);
        CHECK(s.sum_sq == one_by_one.sum_sq);
    }
}

// Run-clustered quantile intervals (delta-method outer interval and standard error, run bootstrap) and the two-arm
// difference table with Fieller's Δ %, all through the report's inference (infer_report() over the in-process
// aggregate source).
#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>
#include <limits>
#include <utility>

#include "infer_helpers.hpp"
#include "student_t.hpp"

using namespace h3probe;
using namespace h3probe::test;

namespace {

double t95(double df) { return student_t_two_sided_critical(0.95, df); }

// Values 1..100, one per run, at the median: Var(F^) = 100 / (99 * 100^2) * 100 * 0.25; the standard error reads log Q
// over p -/+ 1.5 sd(F^), where Q(p) = 1 + 99 p exactly (type 7), and turns it back at the estimate 50.5.
double se_one_to_100() {
    const double sd = std::sqrt(25.0 / 9900), w = kSeWindow * sd;
    return sd * 50.5 * (std::log(1 + 99 * (0.5 + w)) - std::log(1 + 99 * (0.5 - w))) / (2 * w);
}

// Its degrees of freedom: 50 runs each with one value above the median (tail_runs 50, so 49), and the slope read from
// the 100 * 3 sd(F^) values in the window: 1 / df = 1 / 49 + 1 / (300 sd(F^)).
double df_one_to_100() { return 1 / (1.0 / 49 + 1 / (100 * 2 * kSeWindow * std::sqrt(25.0 / 9900))); }

// The roots of R^2 (a^2 - c^2 va) - 2 R (a b - c^2 cov) + (b^2 - c^2 vb) = 0, in % (Fieller's bounds), computed here
// from the quadratic formula.
std::pair<double, double> fieller_pct(double a, double b, double va, double vb, double cov, double c) {
    const double A = a * a - c * c * va, B = a * b - c * c * cov, C = b * b - c * c * vb;
    const double root = std::sqrt(B * B - A * C);
    return {100 * ((B - root) / A - 1), 100 * ((B + root) / A - 1)};
}

}  // namespace

TEST_CASE("with one value per run the interval is the textbook binomial one for the median") {
    // N = 100, F^ = 0.5, Var(F^) = 100 / (99 * 100^2) * 100 * 0.25, s = 5.025, z s = 9.849:
    // l = floor(50 - 9.849 + 0.5) = 40, u = ceil(50 + 9.849 + 0.5) = 61, the classic (X_(40), X_(61)).
    const auto q = interval(one_to(100), 0.5);
    CHECK(q.estimate == doctest::Approx(50.5));
    CHECK(q.lo == 40);
    CHECK(q.hi == 61);
    CHECK(q.se == doctest::Approx(se_one_to_100()));
    CHECK(q.design_effect == doctest::Approx(100.0 / 99));
}

TEST_CASE("values that share a run widen the interval by the design effect") {
    // Runs i = 1..10 each hold {i, i}. Median 5.5; S_i = 2 for i <= 5, else 0; residuals +-1, sum of squares 10;
    // Var(F^) = 10 / (9 * 400) * 10 = 0.02778, s = 3.333, z s = 6.533: l = 3, u = 18 -> (X_(3), X_(18)) = (2, 9).
    RunClusteredSample runs, own;
    for (int i = 1; i <= 10; ++i) {
        add_run(runs, {1.0 * i, 1.0 * i}, static_cast<std::uint32_t>(i));
        for (int k = 0; k < 2; ++k) add_run(own, {1.0 * i}, static_cast<std::uint32_t>(2 * i + k));
    }
    const auto clustered = interval(runs, 0.5);
    CHECK(clustered.estimate == doctest::Approx(5.5));
    CHECK(clustered.lo == 2);
    CHECK(clustered.hi == 9);
    CHECK(clustered.design_effect == doctest::Approx(20.0 / 9));
    // The same values taken as 20 independent requests: Var(F^) = 20 / (19 * 400) * 5, z s = 4.496: l = 6, u = 15.
    const auto naive = interval(own, 0.5);
    CHECK(naive.lo == 3);
    CHECK(naive.hi == 8);
}

TEST_CASE("no interval with too few runs or a quantile too extreme for the runs, whatever the values") {
    const auto few = interval(one_to(9), 0.5);
    CHECK(few.estimate == doctest::Approx(5));
    CHECK(std::isnan(few.lo));
    CHECK(std::isnan(few.se));
    const auto extreme = interval(one_to(50), 0.99);
    CHECK(extreme.estimate == doctest::Approx(49.51));
    CHECK(std::isnan(extreme.hi));
    // runs * min(p, 1 - p) >= z^2 max(p, 1 - p): at 95 %, p75 12 runs, p90 35, p95 73, p99 381; 10 at least.
    const double z = 1.9599639845400536;
    CHECK(min_runs_for_interval(0.5, z) == 10);
    CHECK(min_runs_for_interval(0.75, z) == 12);
    CHECK(min_runs_for_interval(0.1, z) == 35);
    CHECK(min_runs_for_interval(0.9, z) == 35);
    CHECK(min_runs_for_interval(0.95, z) == 73);
    CHECK(min_runs_for_interval(0.99, z) == 381);
    CHECK(min_runs_for_interval(1, z) == std::numeric_limits<std::size_t>::max());
    // The rule reads the runs, never the values: a tight sample of 72 runs gets no p95 interval, one of 73 does.
    RunClusteredSample tight72, tight73;
    for (int i = 1; i <= 73; ++i) {
        const std::vector<double> v(5, 100.0 + i % 3);
        if (i < 73) add_run(tight72, v, static_cast<std::uint32_t>(i));
        add_run(tight73, v, static_cast<std::uint32_t>(i));
    }
    CHECK(std::isnan(interval(tight72, 0.95).se));
    CHECK(std::isfinite(interval(tight73, 0.95).se));
}

TEST_CASE("the standard error is sd(F^) times the slope of log Q over p -/+ 1.5 sd(F^), of Q where a value is 0") {
    const auto q = interval(one_to(100), 0.5);
    CHECK(q.se == doctest::Approx(se_one_to_100()));
    // On exactly linear values the log slope is 0.7 % above the linear one: 99 sd(F^), Woodruff's without rounding.
    CHECK(q.se == doctest::Approx(99 * std::sqrt(25.0 / 9900)).epsilon(0.01));
    CHECK(q.lo < q.estimate - 1.96 * q.se);  // the outer interval rounds its ranks outwards
    CHECK(q.df == doctest::Approx(df_one_to_100()));
    // Where the window's lower end reads a 0 (a metric with zeros) the slope is read on the values themselves.
    const double sd = std::sqrt(25.0 / 9900);
    DeltaFit fit;
    fit.bounds = true;
    fit.var_F = sd * sd;
    fit.window_lo = 0.4;
    fit.window_hi = 0.6;
    CHECK(quantile_se(49.5, 0, 59.4, fit) == doctest::Approx(sd * 59.4 / 0.2));
    CHECK(quantile_se(49.5, 39.6, 59.4, fit) == doctest::Approx(sd * 49.5 * std::log(1.5) / 0.2));
    fit.var_F = 0;
    CHECK(quantile_se(49.5, 49.5, 49.5, fit) == 0);
    fit.bounds = false;
    CHECK(std::isnan(quantile_se(49.5, 39.6, 59.4, fit)));
}

TEST_CASE("arms measured in different runs combine their standard errors with no covariance") {
    // h2 = 1..100 (runs 1..100), h3 = 2, 4, ..., 200 (runs 1001..1100): nothing is paired. se_h3 = 2 se_h2 (the log
    // slope does not see the scale); both arms have the df above, so Satterthwaite's is df (1 + 4)^2 / (1 + 16).
    const auto a = analyze(one_to(100), one_to(100, 2, 1000), {0.5});
    REQUIRE(a.rows.size() == 1);
    const auto& r = a.rows[0];
    CHECK(a.runs_paired == 0);
    CHECK(r.corr == 0);
    CHECK(r.diff_ms == doctest::Approx(50.5));
    CHECK(r.diff_pct == doctest::Approx(100));
    // The row's se: the arm's without its slope's noise (quantile_slope_noise), the same m in both arms.
    CHECK(a.h2[0].slope_noise == doctest::Approx(a.h3[0].slope_noise));
    CHECK(a.h2[0].slope_noise > 0);
    const double se_h2 = se_one_to_100() / std::sqrt(1 + a.h2[0].slope_noise);
    CHECK(r.se_h2 == doctest::Approx(se_h2));
    CHECK(r.se_h3 == doctest::Approx(2 * se_h2));
    const double se_ms = std::sqrt(5.0) * se_h2;
    CHECK(r.se_ms == doctest::Approx(se_ms));
    CHECK(r.df == doctest::Approx(df_one_to_100() * 25 / 17));
    const double t = t95(df_one_to_100() * 25 / 17);
    CHECK(r.ci_ms_lo == doctest::Approx(50.5 - t * se_ms));
    CHECK(r.ci_ms_hi == doctest::Approx(50.5 + t * se_ms));
    // Δ %: Fieller's set for h3 / h2, not the delta method's symmetric 100 -/+ t se_pct.
    const auto [lo, hi] = fieller_pct(50.5, 101, se_h2 * se_h2, 4 * se_h2 * se_h2, 0, t);
    CHECK(r.ci_pct_lo == doctest::Approx(lo));
    CHECK(r.ci_pct_hi == doctest::Approx(hi));
    CHECK(100 - r.ci_pct_lo < r.ci_pct_hi - 100);  // a ratio's interval reaches further up than down
    CHECK(r.se_pct == doctest::Approx(100 * std::sqrt(8.0) * se_h2 / 50.5));
    CHECK_FALSE(r.ci_pct_unbounded);
    CHECK(r.ci_h2_lo == 40);
    CHECK(r.ci_h3_hi == 122);
    CHECK(r.significant);
    CHECK(a.runs_h2 == 100);
}

TEST_CASE("when every run's h3 value is twice its h2 value the arms correlate fully and the ratio is certain") {
    // Same values as above but in the same runs 1..100. Both arms' residuals are +-1/2 with the same sign in each
    // run: rho = 1, se(diff) = se_h3 - se_h2 = se_h2; Var(r) = (se_h3 / h2 - h3 se_h2 / h2^2)^2 = 0.
    const auto a = analyze(one_to(100), one_to(100, 2), {0.5});
    const auto& r = a.rows[0];
    CHECK(a.runs_paired == 100);
    CHECK(r.corr == doctest::Approx(1));
    const double se_h2 = se_one_to_100() / std::sqrt(1 + a.h2[0].slope_noise);  // without its slope's noise
    CHECK(r.ci_ms_lo == doctest::Approx(50.5 - t95(r.df) * se_h2));
    CHECK(r.ci_ms_hi == doctest::Approx(50.5 + t95(r.df) * se_h2));
    CHECK(r.ci_pct_lo == doctest::Approx(100));
    CHECK(r.ci_pct_hi == doctest::Approx(100));
}

TEST_CASE("a run with only one arm adds to its arm's variance and nothing to the covariance") {
    // h2: values 1..20 in runs 1..20. h3: the same values in runs 1..20 and again in runs 201..220 (h3 only).
    // Both medians are 10.5 and every residual is +-1/2: sum e2^2 = 20/4, sum e3^2 = 40/4, and the cross sum
    // counts the 20 shared runs only, 20/4. rho = 5 / sqrt(5 * 10) = 1/sqrt(2).
    const auto h2 = one_to(20);
    RunClusteredSample h3 = one_to(20);
    for (int i = 1; i <= 20; ++i) add_run(h3, {1.0 * i}, static_cast<std::uint32_t>(200 + i));
    const auto a = analyze(h2, h3, {0.5});
    const auto& r = a.rows[0];
    CHECK(a.runs_paired == 20);
    // corr: rho less the arms' shared slope noise, over the de-noised arms (quantile_slope_noise, kSharedSlopeNoise).
    const double n2 = a.h2[0].slope_noise, n3 = a.h3[0].slope_noise;
    const double rho = 1 / std::sqrt(2.0);
    CHECK(r.corr == doctest::Approx(rho / (1 + kSharedSlopeNoise * rho * std::sqrt(n2 * n3)) *
                                    std::sqrt((1 + n2) * (1 + n3))));
    CHECK(r.corr > rho);  // the de-noised arms correlate more than the noisy ones
    const double se2 = a.h2[0].se / std::sqrt(1 + n2);
    const double se3 = a.h3[0].se / std::sqrt(1 + n3);
    const double se = std::sqrt(se2 * se2 + se3 * se3 - 2 * r.corr * se2 * se3);
    CHECK(r.diff_ms == 0);
    CHECK(r.df == doctest::Approx(delta_df(se2, a.h2[0].df, se3, a.h3[0].df, 40)));  // 40 runs in either arm
    CHECK(r.ci_ms_hi == doctest::Approx(t95(r.df) * se));
    CHECK(r.ci_ms_lo == doctest::Approx(-t95(r.df) * se));
    SUBCASE("the same runs given ids beyond the direct table are paired the same way") {
        constexpr std::uint32_t far = 1'000'000'000;
        const auto far2 = one_to(20, 1, far);
        RunClusteredSample far3 = one_to(20, 1, far);
        for (int i = 1; i <= 20; ++i) add_run(far3, {1.0 * i}, far + static_cast<std::uint32_t>(200 + i));
        const auto spread = analyze(far2, far3, {0.5});
        CHECK(spread.runs_paired == 20);
        CHECK(spread.rows[0].ci_ms_hi == r.ci_ms_hi);
    }
}

TEST_CASE("an arm against itself in the same runs differs by exactly zero") {
    const auto a = analyze(one_to(200), one_to(200), {0.5, 0.9});
    for (const auto& r : a.rows) {
        CHECK(r.diff_ms == 0);
        CHECK(r.ci_ms_lo == doctest::Approx(0));
        CHECK(r.ci_ms_hi == doctest::Approx(0));
        CHECK_FALSE(r.significant);
    }
}

TEST_CASE("an arm against a copy of itself in other runs differs by zero and is not significant") {
    const auto a = analyze(one_to(200), one_to(200, 1, 1000), {0.5, 0.9});
    for (const auto& r : a.rows) {
        CHECK(r.diff_ms == 0);
        CHECK(r.ci_ms_lo < 0);
        CHECK(r.ci_ms_hi > 0);
        CHECK_FALSE(r.significant);
    }
}

TEST_CASE("the run bootstrap is deterministic for a seed and agrees with the delta method on a large sample") {
    RunClusteredSample s;
    Lcg rng{7};
    for (int run = 0; run < 2000; ++run) {
        const double run_factor = 1 + static_cast<double>(rng.next() >> 44) / 1048576.0;  // 1..2, shared by the run
        std::vector<double> v;
        for (int k = 0; k < 5; ++k) {
            v.push_back(run_factor * (10 + static_cast<double>(rng.next() >> 44) / 65536.0));
        }
        add_run(s, v, static_cast<std::uint32_t>(run * 3 + 11));
    }
    const auto b1 = bootstrap_quantile_replicates(s, {0.5, 0.95}, 300, 42);
    const auto b2 = bootstrap_quantile_replicates(s, {0.5, 0.95}, 300, 42);
    CHECK(b1 == b2);
    const auto delta = analyze(s, s, {0.5, 0.95}).h2;
    for (std::size_t k = 0; k < 2; ++k) {
        double mean = 0, sq = 0;
        for (double q : b1[k]) mean += q;
        mean /= 300;
        for (double q : b1[k]) sq += (q - mean) * (q - mean);
        const double sd = std::sqrt(sq / 299);
        CHECK(mean == doctest::Approx(delta[k].estimate).epsilon(0.01));
        CHECK(sd == doctest::Approx(delta[k].se).epsilon(0.25));
    }
}

TEST_CASE("the bootstrap of a constant sample is that constant") {
    RunClusteredSample s;
    for (std::uint32_t i = 0; i < 12; ++i) add_run(s, std::vector<double>(5, 7.5), i);  // all-zero weights: odds e^-12
    for (const auto& reps : bootstrap_quantile_replicates(s, {0.1, 0.5, 0.99}, 20, 1))
        for (double q : reps) CHECK(q == 7.5);
}

TEST_CASE("bootstrap replicates of a small sample are exact weighted type-7 quantiles") {
    // With Poisson weights each replicate is a multiset of the original values: every replicate median lies in
    // [min, max] and is either a value or the midpoint of two values.
    const auto replicates = bootstrap_quantile_replicates(one_to(12), {0.5}, 50, 3);
    for (double q : replicates[0]) {
        CHECK(q >= 1);
        CHECK(q <= 12);
        CHECK(std::fmod(q * 2, 1.0) == 0);
    }
}

TEST_CASE("the table has no bounds where no interval exists and no rows for an empty arm") {
    const auto few = analyze(one_to(5), one_to(5), {0.5});
    CHECK(few.method == IntervalMethod::delta);
    CHECK(few.rows[0].h2 == 3.0);
    CHECK(std::isnan(few.rows[0].ci_ms_lo));
    CHECK_FALSE(few.rows[0].significant);
    CHECK(std::isnan(few.rows[0].ci_pct_lo));
    CHECK_FALSE(few.rows[0].ci_pct_unbounded);
    CHECK(few.runs_paired == 5);
    CHECK(std::isnan(few.rows[0].corr));
    auto empty = analyze(one_to(5), RunClusteredSample{}, {0.5}, 0.9);
    bootstrap_intervals(empty, one_to(5), RunClusteredSample{});
    CHECK(empty.method == IntervalMethod::bootstrap);
    CHECK(empty.confidence == 0.9);
    CHECK(empty.rows.empty());
    CHECK(empty.runs_h2 == 5);
}

TEST_CASE("the bootstrap gives a run id the same weight in every sample bootstrapped with the same seed") {
    // A copy of an arm in the same runs has the same replicates; in other runs, other ones.
    const auto same = bootstrap_quantile_replicates(one_to(50), {0.5, 0.9}, 30, 9);
    CHECK(bootstrap_quantile_replicates(one_to(50), {0.5, 0.9}, 30, 9) == same);
    CHECK(bootstrap_quantile_replicates(one_to(50, 1, 500), {0.5, 0.9}, 30, 9) != same);
    CHECK(bootstrap_quantile_replicates(one_to(50), {0.5, 0.9}, 30, 10) != same);
}

TEST_CASE("the paired bootstrap resamples whole runs, so a run-wise doubling gives a ratio of exactly 2") {
    // h3 = 2 x h2 in every run: each replicate's h3 quantile is twice its h2 quantile, so the replicate differences
    // are the h2 replicates and every replicate ratio is 2 (without the jitter, which unties whole numbers).
    BootstrapOptions exact;
    exact.jitter = false;
    auto a = analyze(one_to(100), one_to(100, 2), {0.5, 0.9});
    bootstrap_intervals(a, one_to(100), one_to(100, 2), exact);
    for (const auto& r : a.rows) {
        CHECK(r.ci_pct_lo == doctest::Approx(100));
        CHECK(r.ci_pct_hi == doctest::Approx(100));
        CHECK(r.ci_ms_lo == doctest::Approx(r.ci_h2_lo));
        CHECK(r.ci_ms_hi == doctest::Approx(r.ci_h2_hi));
        CHECK(r.corr == doctest::Approx(1));
    }
    // The same values in disjoint runs: independent weights, a wide ratio interval.
    auto apart = analyze(one_to(100), one_to(100, 2, 1000), {0.5});
    bootstrap_intervals(apart, one_to(100), one_to(100, 2, 1000));
    CHECK(apart.rows[0].ci_pct_hi - apart.rows[0].ci_pct_lo > 20);
}

TEST_CASE("a run's timer grid is the coarsest step of the ladder its finished values lie on") {
    const auto grid = [](std::vector<double> v) { return timer_grid(v.data(), v.size()); };
    CHECK(grid({20, 21, 23}) == 1);
    CHECK(grid({20, 25, 40}) == 5);
    CHECK(grid({20, 22}) == 2);
    CHECK(grid({20.1, 20.3}) == doctest::Approx(0.1));
    CHECK(grid({20.5, 21}) == 0.5);
    CHECK(grid({20.05, 21}) == 0);
    CHECK(grid({23.399999976158142}) == 0);  // Chromium's 0.1 ms with its jitter: no grid
    CHECK(grid({21, kUnfinishedValue}) == 1);  // a request that did not finish has no time to lie on a grid
    CHECK(grid({kUnfinishedValue}) == 0);
    CHECK(grid({}) == 0);
}

TEST_CASE("the bootstrap jitters values on a timer grid within the grid, the same way in every replicate") {
    // 300 runs of 5 whole-millisecond values in both arms, the same values (an A/A on a 1 ms clock): without the
    // jitter every replicate median is a whole or half millisecond and the arms' replicates are equal, so every
    // replicate difference is 0; with it, the medians untie, stay within half a step of the values' range, and the
    // arms differ (their jitter is drawn apart), while the same seed repeats them.
    RunClusteredSample s;
    Lcg rng{3};
    for (std::uint32_t run = 0; run < 300; ++run) {
        std::vector<double> v;
        for (int k = 0; k < 5; ++k) v.push_back(20 + static_cast<double>(rng.next() >> 60));
        add_run(s, v, run);
    }
    Jitter grid;
    grid.width.assign(300, 1.0);
    const auto plain = bootstrap_quantile_replicates(s, {0.5}, 100, 7);
    const auto jittered = bootstrap_quantile_replicates(s, {0.5}, 100, 7, grid);
    CHECK(bootstrap_quantile_replicates(s, {0.5}, 100, 7, grid) == jittered);
    int whole = 0;
    for (std::size_t b = 0; b < 100; ++b) {
        CHECK(std::fmod(plain[0][b] * 2, 1.0) == 0);
        whole += std::fmod(jittered[0][b] * 2, 1.0) == 0;
        CHECK(jittered[0][b] >= 19.5);
        CHECK(jittered[0][b] <= 35.5);
    }
    CHECK(whole == 0);
    grid.stream = 1;
    CHECK(bootstrap_quantile_replicates(s, {0.5}, 100, 7, grid) != jittered);
    auto a = analyze(s, s, {0.5, 0.9});
    BootstrapOptions without;
    without.jitter = false;
    bootstrap_intervals(a, s, s, without);
    CHECK(a.rows[0].ci_ms_lo == 0);
    CHECK(a.rows[0].ci_ms_hi == 0);
    CHECK(a.rows[0].se_ms == 0);
    bootstrap_intervals(a, s, s);
    CHECK(a.rows[0].ci_ms_lo < 0);
    CHECK(a.rows[0].ci_ms_hi > 0);
    CHECK(a.rows[0].se_ms > 0);
}

TEST_CASE("the bootstrap's p-value is below 1 - confidence exactly when its interval excludes 0") {
    // Arms shifted by d ms in every run, swept across the edge of significance: the replicates' p-value and the
    // interval decide alike, and the standard error is the interval's half-width over z.
    int agree = 0, significant = 0;
    for (double d = 0; d <= 6; d += 0.25) {
        RunClusteredSample h2, h3;
        Lcg rng{5};
        for (std::uint32_t run = 0; run < 60; ++run) {
            std::vector<double> v2, v3;
            for (int k = 0; k < 3; ++k) {
                v2.push_back(30 + static_cast<double>(rng.next() >> 40) / (1 << 20));
                v3.push_back(30 + d + static_cast<double>(rng.next() >> 40) / (1 << 20));
            }
            add_run(h2, v2, run);
            add_run(h3, v3, run);
        }
        auto a = analyze(h2, h3, {0.5});
        bootstrap_intervals(a, h2, h3);
        const auto& r = a.rows[0];
        CAPTURE(d);
        REQUIRE(std::isfinite(r.p_value));
        agree += (r.p_value < 0.05) == r.significant;
        significant += r.significant;
        CHECK(r.se_ms == doctest::Approx((r.ci_ms_hi - r.ci_ms_lo) / (2 * 1.959964)).epsilon(1e-5));
        CHECK(std::isnan(r.df));
    }
    CHECK(agree == 25);
    CHECK(significant > 3);
    CHECK(significant < 24);
}

TEST_CASE("the bootstrap walk from the top and the walk from the bottom stop at the same replicate quantiles") {
    // {0.9} alone is reached from the largest value; with 0.1 also asked, one walk goes up from the smallest.
    RunClusteredSample s;
    Lcg rng{11};
    for (std::uint32_t run = 0; run < 3000; ++run) {
        std::vector<double> v;
        for (int k = 0; k < 5; ++k) v.push_back(std::floor(60 * std::exp(2 * rng.uniform())));
        add_run(s, v, run);
    }
    const auto top = bootstrap_quantile_replicates(s, {0.9}, 40, 5);
    const auto both = bootstrap_quantile_replicates(s, {0.1, 0.9}, 40, 5);
    CHECK(both[1] == top[0]);
    CHECK(bootstrap_quantile_replicates(s, {0.1}, 40, 5)[0] == both[0]);
}

TEST_CASE("one decision per cell: Δ % excludes 0 % exactly when Δ ms excludes 0, and says unbounded when it has no bounds") {
    // h2 = 100 (se 10), h3 = 100 + d (se 12), rho 0.5: Δ ms excludes 0 when |d| > t se_ms; Fieller's R = 1 is in the set
    // exactly then. Scanned across that edge in both directions.
    const double t = t95(30), s2 = 10, s3 = 12, rho = 0.5;
    const double se_ms = std::sqrt(s2 * s2 + s3 * s3 - 2 * rho * s2 * s3);
    int agree = 0;
    for (double d = -3 * t * se_ms; d <= 3 * t * se_ms; d += t * se_ms / 50) {
        QuantileInterval q2, q3;
        q2.estimate = 100;
        q3.estimate = 100 + d;
        q2.se = s2;
        q3.se = s3;
        q2.df = q3.df = 1e9;
        q2.lo = q2.hi = q3.lo = q3.hi = 0;
        const auto row = delta_difference_row(0.5, q2, q3, rho, true, 0.95, 31);
        CAPTURE(d);
        REQUIRE(std::isfinite(row.ci_pct_lo));
        CHECK(row.df == doctest::Approx(30));
        CHECK(row.significant == (std::fabs(d) > t * se_ms));
        const bool pct_excludes = row.ci_pct_lo > 0 || row.ci_pct_hi < 0;
        CHECK(pct_excludes == row.significant);
        CHECK(row.ci_pct_lo <= row.diff_pct);
        CHECK(row.diff_pct <= row.ci_pct_hi);
        agree += pct_excludes == row.significant;
    }
    CHECK(agree == 301);
    // The HTTP/2 quantile's own interval reaches 0 (100 <= t * 60): the set has no finite bounds.
    QuantileInterval q2, q3;
    q2.estimate = 100;
    q3.estimate = 60;
    q2.se = 60;
    q3.se = 5;
    q2.df = q3.df = 1e9;
    const auto wide = delta_difference_row(0.5, q2, q3, 0, true, 0.95, 31);
    CHECK(wide.ci_pct_unbounded);
    CHECK(std::isnan(wide.ci_pct_lo));
    CHECK(std::isnan(wide.ci_pct_hi));
    CHECK(std::isfinite(wide.ci_ms_lo));
    // The set itself: two rays when a^2 < c^2 va and the quadratic has roots, bounded when a^2 > c^2 va.
    CHECK_FALSE(fieller(100, 60, 3600, 25, 0, t).bounded);
    CHECK(fieller(100, 60, 3600, 25, 0, t).defined);
    const auto tight = fieller(100, 60, 100, 25, 0, t);
    CHECK(tight.bounded);
    CHECK(tight.lo < 0.6);
    CHECK(tight.hi > 0.6);
    CHECK_FALSE(fieller(100, 60, -1, 25, 0, t).defined);
    // An undefined bound marks nothing.
    QuantileDifferenceRow row;
    row.ci_ms_lo = 0.01;
    row.ci_ms_hi = NAN;
    mark_significance(row);
    CHECK_FALSE(row.significant);
}

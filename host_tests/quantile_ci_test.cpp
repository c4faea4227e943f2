// Run-clustered quantile intervals (delta-method outer interval, run bootstrap) and the two-arm difference table.
#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>
#include <numeric>


#include "quantile_ci.hpp"

using namespace h3probe;

namespace {

// Values scale * i, i = 1..n, value i alone in run first_run + i (one request per run).
RunClusteredSample one_to(int n, double scale = 1, int first_run = 0) {
    std::vector<double> v;
    std::vector<std::int32_t> r;
    for (int i = 1; i <= n; ++i) {
        v.push_back(i * scale);
        r.push_back(first_run + i);
    }
    return make_run_clustered_sample(v, r);
}

constexpr double kZ95 = 1.959963984540054;

}  // namespace

TEST_CASE("run ids are re-indexed densely whatever their values") {
    SUBCASE("sparse, unsorted ids group the values of one run") {
        const auto s = make_run_clustered_sample({1, 2, 3, 4, 5}, {70, 3, 70, 900000000, 3});
        CHECK(s.runs() == 3);
        CHECK(s.run[0] == s.run[2]);
        CHECK(s.run[1] == s.run[4]);
        CHECK(s.run_size[s.run[0]] == 2);
        CHECK(s.run_size[s.run[3]] == 1);
        CHECK(s.run_id[s.run[0]] == 70);
        CHECK(s.run_id[s.run[3]] == 900000000);
    }
    SUBCASE("each negative id is a run of its own and non-finite values are dropped") {
        const auto s = make_run_clustered_sample({1, NAN, 3, 4}, {-1, 5, -1, 5});
        CHECK(s.size() == 3);
        CHECK(s.runs() == 3);
        CHECK(s.run[0] != s.run[1]);
        CHECK(s.run_id[s.run[0]] == -1);  // a run of its own: never paired with the other arm
    }
}

TEST_CASE("with one value per run the interval is the textbook binomial one for the median") {
    // N = 100, F^ = 0.5, Var(F^) = 100 / (99 * 100^2) * 100 * 0.25, s = 5.025, z s = 9.849:
    // l = floor(50 - 9.849 + 0.5) = 40, u = ceil(50 + 9.849 + 0.5) = 61, the classic (X_(40), X_(61)).
    const auto q = quantile_intervals_delta(one_to(100), {0.5}, 0.95)[0];
    CHECK(q.estimate == doctest::Approx(50.5));
    CHECK(q.lo == 40);
    CHECK(q.hi == 61);
    CHECK(q.se == doctest::Approx(21 / (2 * 1.9599639845400536)));
    CHECK(q.design_effect == doctest::Approx(100.0 / 99));
}

TEST_CASE("values that share a run widen the interval by the design effect") {
    // Runs i = 1..10 each hold {i, i}. Median 5.5; S_i = 2 for i <= 5, else 0; residuals +-1, sum of squares 10;
    // Var(F^) = 10 / (9 * 400) * 10 = 0.02778, s = 3.333, z s = 6.533: l = 3, u = 18 -> (X_(3), X_(18)) = (2, 9).
    std::vector<double> v;
    std::vector<std::int32_t> runs, own;
    for (int i = 1; i <= 10; ++i)
        for (int k = 0; k < 2; ++k) {
            v.push_back(i);
            runs.push_back(i);
            own.push_back(static_cast<std::int32_t>(v.size()));
        }
    const auto clustered = quantile_intervals_delta(make_run_clustered_sample(v, runs), {0.5}, 0.95)[0];
    CHECK(clustered.estimate == doctest::Approx(5.5));
    CHECK(clustered.lo == 2);
    CHECK(clustered.hi == 9);
    CHECK(clustered.design_effect == doctest::Approx(20.0 / 9));
    // The same values taken as 20 independent requests: Var(F^) = 20 / (19 * 400) * 5, z s = 4.496: l = 6, u = 15.
    const auto naive = quantile_intervals_delta(make_run_clustered_sample(v, own), {0.5}, 0.95)[0];
    CHECK(naive.lo == 3);
    CHECK(naive.hi == 8);
}

TEST_CASE("no interval with too few runs or a quantile too extreme for the sample") {
    const auto few = quantile_intervals_delta(one_to(9), {0.5}, 0.95)[0];
    CHECK(few.estimate == doctest::Approx(5));
    CHECK(std::isnan(few.lo));
    CHECK(std::isnan(few.se));
    const auto extreme = quantile_intervals_delta(one_to(50), {0.99}, 0.95)[0];
    CHECK(extreme.estimate == doctest::Approx(49.51));
    CHECK(std::isnan(extreme.hi));  // u = ceil(49.5 + 1.96 * 0.7 + 0.5) = 52 > 50
}

TEST_CASE("the Woodruff standard error is the quantile's spread over p -/+ z sd(F^), divided by 2 z") {
    // Values 1..100, one per run: Q(p) = 1 + 99 p exactly, so se = 99 sd(F^) = 99 sqrt(100 / (99 * 100^2) * 25).
    const auto q = quantile_intervals_delta(one_to(100), {0.5}, 0.95)[0];
    CHECK(q.se_woodruff == doctest::Approx(99 * std::sqrt(25.0 / 9900)));
    CHECK(q.se_woodruff < q.se);  // the outer interval rounds its ranks outwards
}

TEST_CASE("arms measured in different runs combine their standard errors with no covariance") {
    // h2 = 1..100 (runs 1..100), h3 = 2, 4, ..., 200 (runs 1001..1100): nothing is paired.
    // se_h2 = 4.97494 (above), se_h3 = 2 se_h2; diff 50.5 -/+ z sqrt(se_h2^2 + se_h3^2);
    // ratio 2, Var(r) = (se_h3^2 + 2^2 se_h2^2) / 50.5^2.
    const auto a = analyze_arms(one_to(100), one_to(100, 2, 1000), {0.5}, IntervalMethod::delta, 0.95);
    REQUIRE(a.rows.size() == 1);
    const auto& r = a.rows[0];
    CHECK(a.runs_paired == 0);
    CHECK(r.corr == 0);
    CHECK(r.diff_ms == doctest::Approx(50.5));
    CHECK(r.diff_pct == doctest::Approx(100));
    CHECK(r.ci_ms_lo == doctest::Approx(28.696777094638097));
    CHECK(r.ci_ms_hi == doctest::Approx(72.3032229053619));
    CHECK(r.ci_pct_lo == doctest::Approx(45.38784577164559));
    CHECK(r.ci_pct_hi == doctest::Approx(154.61215422835443));
    CHECK(r.ci_h2_lo == 40);
    CHECK(r.ci_h3_hi == 122);
    CHECK(r.significant);
    CHECK(a.runs_h2 == 100);
}

TEST_CASE("when every run's h3 value is twice its h2 value the arms correlate fully and the ratio is certain") {
    // Same values as above but in the same runs 1..100. Both arms' residuals are +-1/2 with the same sign in each
    // run: rho = 1, se(diff) = se_h3 - se_h2 = se_h2; Var(r) = (se_h3 / h2 - h3 se_h2 / h2^2)^2 = 0.
    const auto a = analyze_arms(one_to(100), one_to(100, 2), {0.5}, IntervalMethod::delta, 0.95);
    const auto& r = a.rows[0];
    CHECK(a.runs_paired == 100);
    CHECK(r.corr == doctest::Approx(1));
    CHECK(r.ci_ms_lo == doctest::Approx(40.74930229100606));
    CHECK(r.ci_ms_hi == doctest::Approx(60.25069770899394));
    CHECK(r.ci_pct_lo == doctest::Approx(100));
    CHECK(r.ci_pct_hi == doctest::Approx(100));
    SUBCASE("the independent-arms formula, kept for comparison, ignores the pairing") {
        const auto old = analyze_arms(one_to(100), one_to(100, 2), {0.5}, IntervalMethod::delta, 0.95, {},
                                      ArmPairing::independent);
        CHECK(old.rows[0].corr == 0);
        CHECK(old.rows[0].ci_ms_lo == doctest::Approx(28.696777094638097));
        CHECK(old.rows[0].ci_pct_hi == doctest::Approx(154.61215422835443));
    }
}

TEST_CASE("a run with only one arm adds to its arm's variance and nothing to the covariance") {
    // h2: values 1..20 in runs 1..20. h3: the same values in runs 1..20 and again in runs 201..220 (h3 only).
    // Both medians are 10.5 and every residual is +-1/2: sum e2^2 = 20/4, sum e3^2 = 40/4, and the cross sum
    // counts the 20 shared runs only, 20/4. rho = 5 / sqrt(5 * 10) = 1/sqrt(2).
    std::vector<double> v3;
    std::vector<std::int32_t> r3;
    for (int i = 1; i <= 20; ++i) {
        v3.insert(v3.end(), {static_cast<double>(i), static_cast<double>(i)});
        r3.insert(r3.end(), {i, 200 + i});
    }
    const auto h2 = one_to(20), h3 = make_run_clustered_sample(v3, r3);
    const auto a = analyze_arms(h2, h3, {0.5}, IntervalMethod::delta, 0.95);
    const auto& r = a.rows[0];
    CHECK(a.runs_paired == 20);
    CHECK(r.corr == doctest::Approx(1 / std::sqrt(2.0)));
    const double se2 = quantile_intervals_delta(h2, {0.5}, 0.95)[0].se_woodruff;
    const double se3 = quantile_intervals_delta(h3, {0.5}, 0.95)[0].se_woodruff;
    const double se = std::sqrt(se2 * se2 + se3 * se3 - 2 * r.corr * se2 * se3);
    CHECK(r.diff_ms == 0);
    CHECK(r.ci_ms_hi == doctest::Approx(kZ95 * se));
    CHECK(r.ci_ms_lo == doctest::Approx(-kZ95 * se));
    SUBCASE("the same runs given ids beyond the direct table are paired the same way") {
        std::vector<std::int32_t> far2, far3;
        for (int i = 1; i <= 20; ++i) far2.push_back(1'000'000'000 + i);
        for (std::int32_t id : r3) far3.push_back(1'000'000'000 + id);
        std::vector<double> v2;
        for (int i = 1; i <= 20; ++i) v2.push_back(i);
        const auto far = analyze_arms(make_run_clustered_sample(v2, far2), make_run_clustered_sample(v3, far3), {0.5},
                                      IntervalMethod::delta, 0.95);
        CHECK(far.runs_paired == 20);
        CHECK(far.rows[0].ci_ms_hi == r.ci_ms_hi);
    }
    SUBCASE("negative ids are runs of their own and pair with nothing") {
        const auto own = analyze_arms(make_run_clustered_sample(std::vector<double>{1, 2, 3}, {-1, -1, -1}),
                                      make_run_clustered_sample(std::vector<double>{1, 2, 3}, {-1, -1, -1}), {0.5},
                                      IntervalMethod::delta, 0.95);
        CHECK(own.runs_paired == 0);
    }
}

TEST_CASE("an arm against itself in the same runs differs by exactly zero") {
    const auto a = analyze_arms(one_to(200), one_to(200), {0.5, 0.9}, IntervalMethod::delta, 0.95);
    for (const auto& r : a.rows) {
        CHECK(r.diff_ms == 0);
        CHECK(r.ci_ms_lo == doctest::Approx(0));
        CHECK(r.ci_ms_hi == doctest::Approx(0));
        CHECK_FALSE(r.significant);
    }
}

TEST_CASE("an arm against a copy of itself in other runs differs by zero and is not significant") {
    const auto a = analyze_arms(one_to(200), one_to(200, 1, 1000), {0.5, 0.9}, IntervalMethod::delta, 0.95);
    for (const auto& r : a.rows) {
        CHECK(r.diff_ms == 0);
        CHECK(r.ci_ms_lo < 0);
        CHECK(r.ci_ms_hi > 0);
        CHECK_FALSE(r.significant);
    }
}

TEST_CASE("the run bootstrap is deterministic for a seed and agrees with the delta method on a large sample") {
    std::vector<double> v;
    std::vector<std::int32_t> runs;
    std::uint64_t x = 7;
    for (int run = 0; run < 2000; ++run) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        const double run_factor = 1 + static_cast<double>(x >> 44) / 1048576.0;  // 1..2, shared by the run
        for (int k = 0; k < 5; ++k) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            v.push_back(run_factor * (10 + static_cast<double>(x >> 44) / 65536.0));
            runs.push_back(run * 3 + 11);
        }
    }
    const auto s = make_run_clustered_sample(v, runs);
    const auto b1 = bootstrap_quantile_replicates(s, {0.5, 0.95}, 300, 42);
    const auto b2 = bootstrap_quantile_replicates(s, {0.5, 0.95}, 300, 42);
    CHECK(b1 == b2);
    const auto delta = quantile_intervals_delta(s, {0.5, 0.95}, 0.95);
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
    std::vector<std::int32_t> runs;
    for (int i = 0; i < 60; ++i) runs.push_back(i / 5);  // 12 runs of 5: all-zero weights (M = 0) has odds e^-12
    const auto s = make_run_clustered_sample(std::vector<double>(60, 7.5), runs);
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
    const auto few = analyze_arms(one_to(5), one_to(5), {0.5}, IntervalMethod::delta, 0.95);
    CHECK(few.method == IntervalMethod::delta);
    CHECK(few.rows[0].h2 == 3.0);
    CHECK(std::isnan(few.rows[0].ci_ms_lo));
    CHECK_FALSE(few.rows[0].significant);
    CHECK(few.runs_paired == 5);
    CHECK(std::isnan(few.rows[0].corr));
    const auto empty = analyze_arms(one_to(5), make_run_clustered_sample({}, {}), {0.5}, IntervalMethod::bootstrap, 0.9);
    CHECK(empty.method == IntervalMethod::bootstrap);
    CHECK(empty.confidence == 0.9);
    CHECK(empty.rows.empty());
    CHECK(empty.runs_h2 == 5);
}

TEST_CASE("the bootstrap gives a run id the same weight in every sample bootstrapped with the same seed") {
    // A copy of an arm in the same runs has the same replicates; in other runs, other ones.
    const auto same = bootstrap_quantile_replicates(one_to(50), {0.5, 0.9}, 30, 9, 2);
    CHECK(bootstrap_quantile_replicates(one_to(50), {0.5, 0.9}, 30, 9, 3) == same);
    CHECK(bootstrap_quantile_replicates(one_to(50, 1, 500), {0.5, 0.9}, 30, 9, 2) != same);
    SUBCASE("runs without an id draw from the stream they are given") {
        std::vector<double> v;
        for (int i = 1; i <= 50; ++i) v.push_back(i);
        const auto own = make_run_clustered_sample(v, std::vector<std::int32_t>(50, -1));
        CHECK(bootstrap_quantile_replicates(own, {0.5}, 30, 9, 2) == bootstrap_quantile_replicates(own, {0.5}, 30, 9, 2));
        CHECK(bootstrap_quantile_replicates(own, {0.5}, 30, 9, 2) != bootstrap_quantile_replicates(own, {0.5}, 30, 9, 3));
    }
}

TEST_CASE("the paired bootstrap resamples whole runs, so a run-wise doubling gives a ratio of exactly 2") {
    // h3 = 2 x h2 in every run: each replicate's h3 quantile is twice its h2 quantile, so the replicate differences
    // are the h2 replicates and every replicate ratio is 2.
    const auto a = analyze_arms(one_to(100), one_to(100, 2), {0.5, 0.9}, IntervalMethod::bootstrap, 0.95);
    for (const auto& r : a.rows) {
        CHECK(r.ci_pct_lo == doctest::Approx(100));
        CHECK(r.ci_pct_hi == doctest::Approx(100));
        CHECK(r.ci_ms_lo == doctest::Approx(r.ci_h2_lo));
        CHECK(r.ci_ms_hi == doctest::Approx(r.ci_h2_hi));
        CHECK(r.corr == doctest::Approx(1));
    }
    const auto old = analyze_arms(one_to(100), one_to(100, 2), {0.5}, IntervalMethod::bootstrap, 0.95, {},
                                  ArmPairing::independent);
    CHECK(old.rows[0].ci_pct_hi - old.rows[0].ci_pct_lo > 20);
}

TEST_CASE("the bootstrap walk from the top and the walk from the bottom stop at the same replicate quantiles") {
    // {0.9} alone is reached from the largest value; with 0.1 also asked, one walk goes up from the smallest.
    std::vector<double> v;
    std::vector<std::int32_t> runs;
    std::uint64_t x = 11;
    for (int run = 0; run < 3000; ++run)
        for (int k = 0; k < 5; ++k) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            v.push_back(std::floor(60 * std::exp(2 * static_cast<double>(x >> 11) / 9007199254740992.0)));
            runs.push_back(run);
        }
    const auto s = make_run_clustered_sample(v, runs);
    const auto top = bootstrap_quantile_replicates(s, {0.9}, 40, 5);
    const auto both = bootstrap_quantile_replicates(s, {0.1, 0.9}, 40, 5);
    CHECK(both[1] == top[0]);
    CHECK(bootstrap_quantile_replicates(s, {0.1}, 40, 5)[0] == both[0]);
}

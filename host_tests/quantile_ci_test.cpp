// Run-clustered quantile intervals (delta-method outer interval, run bootstrap) and the two-arm difference table.
#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>
#include <numeric>

#include <nlohmann/json.hpp>

#include "quantile_ci.hpp"

using namespace h3probe;

namespace {

// 1..n, each value a run of its own (independent requests).
RunClusteredSample one_to(int n, double scale = 1) {
    std::vector<double> v;
    std::vector<std::int32_t> r;
    for (int i = 1; i <= n; ++i) {
        v.push_back(i * scale);
        r.push_back(i);
    }
    return make_run_clustered_sample(v, r);
}

}  // namespace

TEST_CASE("run ids are re-indexed densely whatever their values") {
    SUBCASE("sparse, unsorted ids group the values of one run") {
        const auto s = make_run_clustered_sample({1, 2, 3, 4, 5}, {70, 3, 70, 900000000, 3});
        CHECK(s.runs() == 3);
        CHECK(s.run[0] == s.run[2]);
        CHECK(s.run[1] == s.run[4]);
        CHECK(s.run_size[s.run[0]] == 2);
        CHECK(s.run_size[s.run[3]] == 1);
    }
    SUBCASE("each negative id is a run of its own and non-finite values are dropped") {
        const auto s = make_run_clustered_sample({1, NAN, 3, 4}, {-1, 5, -1, 5});
        CHECK(s.size() == 3);
        CHECK(s.runs() == 3);
        CHECK(s.run[0] != s.run[1]);
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

TEST_CASE("the delta-method difference combines the two arms' standard errors") {
    // h2 = 1..100: median 50.5, (40, 61); h3 = 2, 4, ..., 200: median 101, (80, 122).
    // diff 50.5 -/+ z sqrt(21^2 + 42^2) / (2 z) = (27.02, 73.98); ratio 2, CI% 100 (1 -/+ sqrt(2 * 42^2) / 101).
    const auto a = analyze_arms(one_to(100), one_to(100, 2), {0.5}, IntervalMethod::delta, 0.95);
    REQUIRE(a.rows.size() == 1);
    const auto& r = a.rows[0];
    CHECK(r.diff_ms == doctest::Approx(50.5));
    CHECK(r.diff_pct == doctest::Approx(100));
    CHECK(r.ci_ms_lo == doctest::Approx(27.02128623625221));
    CHECK(r.ci_ms_hi == doctest::Approx(73.97871376374779));
    CHECK(r.ci_pct_lo == doctest::Approx(41.191119188445555));
    CHECK(r.ci_pct_hi == doctest::Approx(158.80888081155445));
    CHECK(r.ci_h2_lo == 40);
    CHECK(r.ci_h3_hi == 122);
    CHECK(r.significant);
    CHECK(a.runs_h2 == 100);
}

TEST_CASE("an arm against itself differs by zero and is not significant") {
    const auto a = analyze_arms(one_to(200), one_to(200), {0.5, 0.9}, IntervalMethod::delta, 0.95);
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

TEST_CASE("the JSON table has null bounds where no interval exists and no rows for an empty arm") {
    const auto few = nlohmann::json::parse(to_json(analyze_arms(one_to(5), one_to(5), {0.5}, IntervalMethod::delta, 0.95)));
    CHECK(few["method"] == "delta");
    CHECK(few["rows"][0]["h2"] == 3.0);
    CHECK(few["rows"][0]["ci_ms"][0].is_null());
    CHECK(few["rows"][0]["significant"] == false);
    const auto empty = nlohmann::json::parse(
        to_json(analyze_arms(one_to(5), make_run_clustered_sample({}, {}), {0.5}, IntervalMethod::bootstrap, 0.9)));
    CHECK(empty["method"] == "bootstrap");
    CHECK(empty["confidence"] == 0.9);
    CHECK(empty["rows"].empty());
    CHECK(empty["runs_h2"] == 5);
}

TEST_CASE("the banded bootstrap gives exactly the replicates of the plain walk on a large sample") {
    std::vector<double> v;
    std::vector<std::int32_t> runs;
    std::uint64_t x = 11;
    for (int run = 0; run < 30000; ++run) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        const double run_factor = std::exp(0.3 * (static_cast<double>(x >> 11) / 9007199254740992.0 - 0.5));
        for (int k = 0; k < 5; ++k) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            v.push_back(std::floor(run_factor * 60 * std::exp(2 * static_cast<double>(x >> 11) / 9007199254740992.0)));
            runs.push_back(run);
        }
    }
    const auto s = make_run_clustered_sample(v, runs);  // 150000 values: above the size where bands are used
    const std::vector<double> ps = {0.5, 0.75, 0.9, 0.95, 0.99};
    const auto banded = bootstrap_quantile_replicates(s, ps, 40, 5, true);
    const auto plain = bootstrap_quantile_replicates(s, ps, 40, 5, false);
    CHECK(banded == plain);
}

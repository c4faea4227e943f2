// The frozen calibration suite's machinery (host_tests/calibration): that its definition is the one docs/design.md
// records, that its truth, generator and judgement do what they say, and that a short slice runs through the report's
// inference deterministically. Nothing here asserts that the report's intervals meet the budgets: today's method does
// not (docs/design.md, "The calibration suite"), and `npm run calibration` is where that is judged.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "families.hpp"
#include "suite.hpp"

using namespace h3probe::calib;

namespace {

std::size_t family_index(const std::string& name) {
    for (std::size_t i = 0; i < families().size(); ++i)
        if (families()[i].name == name) return i;
    FAIL("no family " << name);
    return 0;
}
const Variant& variant_of(const std::string& family, const std::string& variant) {
    for (const Variant& v : families()[family_index(family)].variants)
        if (v.name == variant) return v;
    FAIL("no variant " << family << " / " << variant);
    return families()[0].variants[0];
}

std::string read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// Correlation of two equally long series.
double correlation(const std::vector<double>& x, const std::vector<double>& y) {
    const double n = static_cast<double>(x.size());
    double mx = 0, my = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        mx += x[i] / n;
        my += y[i] / n;
    }
    double sxy = 0, sxx = 0, syy = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        sxy += (x[i] - mx) * (y[i] - my);
        sxx += (x[i] - mx) * (x[i] - mx);
        syy += (y[i] - my) * (y[i] - my);
    }
    return sxy / std::sqrt(sxx * syy);
}

// The correlation of log values over runs of a family's A/A variant: the HTTP/2 arm's first request against request
// `request` of arm `arm`.
double log_correlation(const char* family, int arm, std::size_t request, std::uint64_t seed) {
    RunGenerator gen(*variant_of(family, "A/A").model, seed);
    std::vector<double> a, b;
    for (int r = 0; r < 20000; ++r) {
        const RunValues& run = gen.next();
        a.push_back(std::log(run.values[0][0]));
        b.push_back(std::log(run.values[arm][request]));
    }
    return correlation(a, b);
}

}  // namespace

TEST_CASE("calibration suite: families.cpp is the frozen definition docs/design.md records") {
    const std::string design = read(std::string(H3PROBE_SOURCE_DIR) + "/docs/design.md");
    std::smatch m;
    REQUIRE_MESSAGE(std::regex_search(design, m, std::regex("families\\.cpp` SHA-256 `([0-9a-f]{64})`")),
                    "docs/design.md records families.cpp's hash as: families.cpp` SHA-256 `<64 hex digits>`");
    // A change to the suite's families, truth or budgets must show in review: record the new hash on purpose.
    // H3PROBE_FAMILIES_SHA256: CMake's file(SHA256) of families.cpp (CMakeLists.txt).
    CHECK_MESSAGE(m[1].str() == H3PROBE_FAMILIES_SHA256, "host_tests/calibration/families.cpp changed: its SHA-256 is now "
                                                             << H3PROBE_FAMILIES_SHA256 << ", docs/design.md records " << m[1].str());
}

TEST_CASE("calibration suite: the Monte Carlo truth matches the closed form where one exists") {
    const std::vector<double> ps = suite_percentiles();
    // (No structured binding: clang's C++17 cannot capture one in CAPTURE's lambda.)
    for (const std::pair<std::string, std::string>& fv : {std::pair<std::string, std::string>{"effects", "location -3 ms"},
                                                          {"within-run 0.99", "scale -10%"}}) {
        CAPTURE(fv.first);
        CAPTURE(fv.second);
        const Variant& v = variant_of(fv.first, fv.second);
        Truth exact;
        REQUIRE(closed_form_truth(*v.model, ps, exact));
        const Truth drawn = monte_carlo_truth(*v.model, ps, 200000, truth_seed());
        for (std::size_t arm = 0; arm < 2; ++arm)
            for (std::size_t k = 0; k < ps.size(); ++k) {
                CAPTURE(arm);
                CAPTURE(ps[k]);
                // 10^6 values an arm: the quantile's relative SD is at most 0.4 % (p99, within-run correlation 0.99).
                CHECK(drawn[0][arm][k] == doctest::Approx(exact[0][arm][k]).epsilon(ps[k] > 0.95 ? 0.015 : 0.006));
            }
    }
    // And the closed form is claimed nowhere it does not hold.
    Truth unused;
    for (const char* family : {"arm delay", "pareto requests", "network mixture", "one-arm runs", "repeat users", "fallbacks"})
        CHECK_FALSE(closed_form_truth(*variant_of(family, "A/A").model, suite_percentiles(), unused));
}

TEST_CASE("calibration suite: every A/A variant has true Δ 0 by construction") {
    const SuiteOptions none;
    for (const Family& f : families()) {
        CAPTURE(f.name);
        REQUIRE(!f.variants.empty());
        CHECK(f.variants[0].aa);
        for (const Variant& v : f.variants) {
            if (!v.aa) continue;
            const Truth t = variant_truth(f, v, {0.5, 0.99}, none);
            for (const auto& estimand : t)
                for (const auto& arm : estimand)
                    for (double q : arm) CHECK(q == 0);
        }
        CHECK(f.variants.size() >= 2);  // and at least one effect
    }
    // Drawn, HTTP/3 is HTTP/2's twin: the arms' quantiles agree within the draw's noise (100,000 runs), where the
    // selection (one-arm runs, fallbacks, unfinished requests) and the tails act on both.
    for (const char* family : {"fallbacks", "slowest unfinished", "one-arm runs", "network mixture", "pareto runs"}) {
        CAPTURE(family);
        const Truth t = monte_carlo_truth(*variant_of(family, "A/A").model, {0.5, 0.75, 0.9}, 100000, 7);
        for (const auto& estimand : t)
            for (std::size_t k = 0; k < 3; ++k) CHECK(estimand[1][k] == doctest::Approx(estimand[0][k]).epsilon(0.02));
    }
}

TEST_CASE("calibration suite: the generator honours its parameters") {
    constexpr int kRuns = 20000;
    // Within-run correlation of log values: two requests of one arm of a run.
    for (const char* family : {"within-run 0.1", "within-run 0.5", "within-run 0.99"}) {
        CAPTURE(family);
        CHECK(std::fabs(log_correlation(family, 0, 1, 11) - declared(*variant_of(family, "A/A").model).within) < 0.03);
    }
    // The arms' run levels: a request of each arm correlates within * cross on the log scale.
    for (const char* family : {"cross-arm 0", "cross-arm 0.5", "cross-arm 0.99"}) {
        CAPTURE(family);
        const Declared d = declared(*variant_of(family, "A/A").model);
        CHECK(std::fabs(log_correlation(family, 1, 0, 12) - d.within * d.cross) < 0.03);
    }
    // Timer grids: every value on the grid, and the rounding keeps the mean (lognormal: median exp(sigma^2 / 2)).
    for (const char* family : {"grid 0.1 ms", "grid 1 ms", "grid 5 ms"}) {
        CAPTURE(family);
        const Variant& v = variant_of(family, "A/A");
        const Declared d = declared(*v.model);
        RunGenerator gen(*v.model, 13);
        double sum = 0, n = 0;
        bool on_grid = true;
        for (int r = 0; r < kRuns; ++r)
            for (const auto& arm : gen.next().values)
                for (double x : arm) {
                    on_grid = on_grid && std::fabs(x / d.grid_ms - std::round(x / d.grid_ms)) < 1e-9;
                    sum += x;
                    ++n;
                }
        CHECK(on_grid);
        CHECK(sum / n == doctest::Approx(d.median_ms * std::exp(d.sigma * d.sigma / 2)).epsilon(0.01));
    }
    // Requests per arm: as declared; missing at random leaves 70 % of them.
    for (const char* family : {"1 request", "arm-unequal", "missing at random"}) {
        CAPTURE(family);
        const Variant& v = variant_of(family, "A/A");
        const Declared d = declared(*v.model);
        RunGenerator gen(*v.model, 14);
        double values[2] = {0, 0};
        for (int r = 0; r < kRuns; ++r)
            for (int arm = 0; arm < 2; ++arm) values[arm] += static_cast<double>(gen.next().values[arm].size());
        const double kept = std::string(family) == "missing at random" ? 0.7 : 1.0;
        for (int arm = 0; arm < 2; ++arm) CHECK(values[arm] / kRuns == doctest::Approx(kept * d.requests[arm]).epsilon(0.02));
    }
}

TEST_CASE("calibration suite: a cell without an interval is listed as a failure, never a pass") {
    CellStats good;
    good.experiments = good.with_interval = 1000;
    good.covered = 950;
    good.miss_low = good.miss_high = 25;
    good.excluded_zero = 50;
    good.sd_z = good.iqr_z = good.width_ratio = 1;
    good.far_z = 0;
    CHECK(judge(good, true).pass());
    CellStats se_zero = good;
    se_zero.none[static_cast<int>(NoInterval::se_zero)] = 1;
    se_zero.with_interval = 999;
    CHECK_FALSE(judge(se_zero, true).pass());
    CHECK(judge(se_zero, true).failed == "no interval");
    CellStats refused = good;
    refused.with_interval = refused.covered = refused.miss_low = refused.miss_high = refused.excluded_zero = 0;
    refused.none[static_cast<int>(NoInterval::refused)] = 1000;
    CHECK_FALSE(judge(refused, true).pass());
    CHECK(judge(refused, true).refused_all);
    // Through the report: 10 runs give p50 an interval and p99 none (min_runs_for_interval: 381).
    const Unit unit{family_index("within-run 0.5"), 0, 10};
    const UnitResult r = run_unit(unit, {0.5, 0.99}, 20, 1, Truth(2, std::vector<std::vector<double>>(2, {0.0, 0.0})));
    CHECK(r.cells[0][0][0].with_interval > 0);
    CHECK(r.cells[0][1][0].none[static_cast<int>(NoInterval::refused)] == 20);
    CHECK_FALSE(judge(r.cells[0][1][0], true).pass());
    CHECK_FALSE(judge(r.cells[0][1][1], true).pass());
}

TEST_CASE("calibration suite: a short slice runs through the report's inference, deterministically") {
    SuiteOptions o;
    o.families = {family_index("within-run 0.99"), family_index("grid 1 ms"), family_index("fallbacks")};
    o.sizes = {10, 30, 100};
    o.ps = {0.5, 0.9};
    o.experiments = 150;
    o.truth_runs = 50000;
    o.threads = 2;
    const std::vector<UnitResult> two = run_suite(o, nullptr);
    o.threads = 1;
    const std::vector<UnitResult> one = run_suite(o, nullptr);
    REQUIRE(two.size() == 3 * 2 * 3);
    REQUIRE(one.size() == two.size());
    for (std::size_t i = 0; i < two.size(); ++i) {
        const bool worked = families()[two[i].unit.family].h3_worked;
        REQUIRE(two[i].cells[1].size() == (worked ? 2u : 0u));
        for (std::size_t est = 0; est < 2; ++est)
            for (std::size_t k = 0; k < two[i].cells[est].size(); ++k)
                for (std::size_t m = 0; m < 2; ++m) {
                    const CellStats &a = two[i].cells[est][k][m], &b = one[i].cells[est][k][m];
                    CHECK(a.experiments == 150);
                    CHECK(a.covered == b.covered);
                    CHECK(a.excluded_zero == b.excluded_zero);
                    CHECK(a.no_interval() == b.no_interval());
                    CHECK((a.sd_z == b.sd_z || (std::isnan(a.sd_z) && std::isnan(b.sd_z))));
                }
    }
    // The truth and the report estimate the same thing: at 100 runs the estimate's mean lies within a third of its SD
    // of the truth (a harness that read another estimand, or the wrong sign of Δ, fails this; calibration is not asked).
    for (const UnitResult& r : two) {
        if (r.unit.size != 100 || families()[r.unit.family].variants[r.unit.variant].aa) continue;
        CAPTURE(families()[r.unit.family].name);
        for (const auto& estimand : r.cells)
            for (const auto& cell : estimand)
                for (const CellStats& c : cell) CHECK(std::fabs(c.bias) < c.sd / 3);
    }
    print_summary(stdout, two, o.ps);
}

TEST_CASE("calibration suite: --method bootstrap judges the report's bootstrap intervals, not the delta method's") {
    // The same experiments (same seed) under both methods: the point estimates agree, the intervals differ, and the
    // bootstrap's are defined where the report gives one (its standard error is its half-width over z).
    const Unit unit{family_index("within-run 0.5"), 0, 30};
    const Truth zero(2, std::vector<std::vector<double>>(2, {0.0, 0.0}));
    const UnitResult delta = run_unit(unit, {0.5, 0.75}, 40, 3, zero, h3probe::IntervalMethod::delta);
    const UnitResult boot = run_unit(unit, {0.5, 0.75}, 40, 3, zero, h3probe::IntervalMethod::bootstrap);
    CHECK(run_unit(unit, {0.5, 0.75}, 40, 3, zero, h3probe::IntervalMethod::bootstrap).cells[0][0][0].width_ratio ==
          boot.cells[0][0][0].width_ratio);
    for (std::size_t k = 0; k < 2; ++k) {
        const CellStats &d = delta.cells[0][k][0], &b = boot.cells[0][k][0];
        CHECK(b.with_interval == 40);
        CHECK(b.bias == d.bias);
        CHECK(b.sd == d.sd);
        CHECK(b.width_ratio != d.width_ratio);
        CHECK(b.width_ratio > 0.5);
        CHECK(b.width_ratio < 2);
    }
}

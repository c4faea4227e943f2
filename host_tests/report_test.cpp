// The report from stored run records: grouping, counts by class, the paired differences, and refusing bad records.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "connection_setup.hpp"
#include "report.hpp"
#include "value_aggregates.hpp"
#include "sample_builder.hpp"
#include "stored_run.hpp"

using namespace h3probe;

namespace {

Sample make(Phase phase, int idx, Proto origin, const char* protocol, SampleResult result, double ms) {
    return test::make_sample(phase, idx, origin, protocol, ms, result);
}

// A run with 5 requests per arm around base ms; every 7th treatment request falls back, every 11th control one fails.
Beacon run_beacon(int i, double base, std::mt19937& rng) {
    std::normal_distribution<double> noise(0, 3);
    Beacon b;
    b.run_id = "r" + std::to_string(i);
    b.order = i % 2 ? "h3-first" : "h2-first";
    for (int k = 0; k < 5; ++k) {
        const bool fails = (5 * i + k) % 11 == 0;
        b.samples.push_back(make(Phase::control, k, Proto::h2, "h2", fails ? SampleResult::http_error : SampleResult::ok,
                                 base + noise(rng)));
        const bool falls_back = (5 * i + k) % 7 == 0;
        b.samples.push_back(make(Phase::treatment, k, Proto::h3, falls_back ? "h2" : "h3", SampleResult::ok,
                                 base - 2 + noise(rng)));
    }
    b.samples.push_back(make(Phase::prewarm, 0, Proto::h3, "h2", SampleResult::ok, 3 * base));
    b.summary = summarize_run(b.samples);
    return b;
}

// A run's record: its group's number and, when asked, its day's in front; its cold-setup record behind.
void append_record(std::vector<std::uint8_t>& out, std::size_t group, const StoredRun& r, std::size_t day = 0,
                   bool setup = false) {
    // Each number two bytes, little-endian (kGroupNumberBytes).
    for (const std::size_t n : {group, day}) {
        if (n == 0) continue;
        out.push_back(static_cast<std::uint8_t>(n & 0xff));
        out.push_back(static_cast<std::uint8_t>(n >> 8));
    }
    out.insert(out.end(), r.arm_counts.begin(), r.arm_counts.end());
    out.insert(out.end(), r.arm_metrics[0].begin(), r.arm_metrics[0].end());
    if (setup) out.insert(out.end(), r.setup.begin(), r.setup.end());
}

ReportRequest request(std::vector<std::string> groups) {
    ReportRequest r;
    r.groups = std::move(groups);
    return r;
}

// The fields of a row that two computations of the same data must agree on, bit for bit (NaN equal to NaN).
void check_same_rows(const ArmsAnalysis& a, const ArmsAnalysis& b) {
    REQUIRE(a.rows.size() == b.rows.size());
    const auto same = [](double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); };
    for (std::size_t k = 0; k < a.rows.size(); ++k) {
        CHECK(same(a.rows[k].h2, b.rows[k].h2));
        CHECK(same(a.rows[k].h3, b.rows[k].h3));
        CHECK(same(a.rows[k].ci_ms_lo, b.rows[k].ci_ms_lo));
        CHECK(same(a.rows[k].ci_ms_hi, b.rows[k].ci_ms_hi));
        CHECK(same(a.rows[k].cs_ms_lo, b.rows[k].cs_ms_lo));
    }
}

}  // namespace

TEST_CASE("the report counts every run as the browser's summary did, per group and overall") {
    std::mt19937 rng(7);
    std::vector<std::uint8_t> records;
    // Per group (overall, Europe, Asia): requests per arm, fallbacks, excluded (not usable) requests; and the runs in
    // which every request was usable, with their requests per arm.
    std::size_t usable[3][2] = {}, fallbacks[3] = {}, excluded[3] = {}, runs[3] = {}, worked_runs[3] = {};
    std::size_t worked_values[3][2] = {};
    std::vector<double> worked_diffs_b;
    for (int i = 0; i < 60; ++i) {
        const std::uint8_t g = i % 3 == 0 ? 2 : 1;
        const Beacon b = run_beacon(i, g == 1 ? 50 : 150, rng);
        append_record(records, g, to_stored(b).run);
        const bool worked = b.summary.control.excluded + b.summary.treatment.excluded + b.summary.treatment.fallbacks == 0;
        for (std::size_t at : {std::size_t{0}, std::size_t{g}}) {
            usable[at][0] += b.summary.control.latency.n;
            usable[at][1] += b.summary.treatment.latency.n;
            fallbacks[at] += b.summary.treatment.fallbacks;
            excluded[at] += b.summary.control.excluded + b.summary.treatment.excluded;
            ++runs[at];
            if (worked) {
                ++worked_runs[at];
                worked_values[at][0] += b.summary.control.latency.n;
                worked_values[at][1] += b.summary.treatment.latency.n;
            }
        }
        if (g == 2 && worked && b.summary.diff_median_ms) worked_diffs_b.push_back(*b.summary.diff_median_ms);
    }
    const Report report = build_report(records.data(), records.size(), request({"Europe", "Asia"}));
    ReportRequest worked_request = request({"Europe", "Asia"});
    worked_request.estimand = Estimand::h3_worked;
    const Report worked = build_report(records.data(), records.size(), worked_request);
    REQUIRE(report.error.empty());
    REQUIRE(worked.error.empty());
    REQUIRE(report.groups.size() == 3);
    CHECK(report.groups[0].name == "overall");
    CHECK(report.groups[2].name == "Asia");
    for (int g = 0; g < 3; ++g) {
        CAPTURE(g);
        const GroupReport& r = report.groups[g];
        // As assigned: every request of both arms, the failed (http_error) and the fallbacks included: 5 per arm.
        CHECK(r.analysis.n_h2 == 5 * runs[g]);
        CHECK(r.analysis.n_h3 == 5 * runs[g]);
        CHECK(r.analysis.runs_paired == runs[g]);
        CHECK(r.classes[1][static_cast<int>(RequestClass::fallback)] == fallbacks[g]);
        std::size_t ex = 0;
        for (int arm = 0; arm < 2; ++arm)
            for (int c = 0; c < kRequestClassCount; ++c)
                if (!is_usable(static_cast<RequestClass>(c))) ex += r.classes[arm][c];
        CHECK(ex == excluded[g]);
        CHECK(r.requests == usable[g][0] + usable[g][1] + excluded[g]);
        CHECK(treatment_ok(r) == usable[g][1] + fallbacks[g]);  // no request of unknown protocol here
        CHECK(fallback_rate(r) == doctest::Approx(static_cast<double>(fallbacks[g]) / (usable[g][1] + fallbacks[g])));
        // Where HTTP/3 worked: the runs with every request usable, both arms; the counts by class stay every run's.
        const GroupReport& w = worked.groups[g];
        CHECK(w.analysis.n_h2 == worked_values[g][0]);
        CHECK(w.analysis.n_h3 == worked_values[g][1]);
        CHECK(w.analysis.runs_paired == worked_runs[g]);
        CHECK(worked_runs[g] > 0);
        CHECK(worked_runs[g] < runs[g]);
        CHECK(w.requests == r.requests);
    }
    CHECK(report.groups[0].runs == 60);
    CHECK(report.groups[2].runs == 20);
    // The failed requests (every 11th control one: an http_error) in their arm's failure rate, over every run; none
    // where HTTP/3 worked (every request of those runs finished).
    REQUIRE(report.groups[0].failures.has_value());
    CHECK(report.groups[0].failures->runs == 60);
    CHECK(report.groups[0].failures->failed_h2 == report.groups[0].classes[0][static_cast<int>(RequestClass::http_error)]);
    CHECK(report.groups[0].failures->failed_h2 > 0);
    CHECK(report.groups[0].failures->requests_h2 == 300);
    CHECK(report.groups[0].failures->failed_h3 == 0);
    REQUIRE(worked.groups[0].failures.has_value());
    CHECK(worked.groups[0].failures->failed_h2 == 0);
    CHECK(worked.groups[0].failures->runs == worked_runs[0]);
    REQUIRE(worked.groups[2].paired.has_value());
    CHECK(worked.groups[2].paired->n == worked_diffs_b.size());
    double mean = 0;
    for (double d : worked_diffs_b) mean += d / static_cast<double>(worked_diffs_b.size());
    CHECK(worked.groups[2].paired->mean == doctest::Approx(mean));
    CHECK(report.groups[0].order.has_value());  // both orders are present
    CHECK(report.groups[0].analysis.rows.size() == 5);
}

TEST_CASE("a usable request without the chosen metric is counted as missing, not as a value") {
    Beacon b;
    b.run_id = "r";
    b.order = "h2-first";
    b.samples = {make(Phase::control, 0, Proto::h2, "h2", SampleResult::ok, 10),
                 make(Phase::treatment, 0, Proto::h3, "h3", SampleResult::ok, 9)};
    StoredRun run = to_stored(b).run;
    std::vector<std::uint8_t> records{1, 0};  // group 1, two bytes little-endian
    records.insert(records.end(), run.arm_counts.begin(), run.arm_counts.end());
    const auto& dns = run.arm_metrics[2];  // dns_ms: the samples have none
    records.insert(records.end(), dns.begin(), dns.end());
    const Report r = build_report(records.data(), records.size(), request({"local"}));
    REQUIRE(r.error.empty());
    CHECK(r.groups[0].missing_metric == 2);
    CHECK(r.groups[0].analysis.n_h2 == 0);
    CHECK(r.groups[0].runs == 1);
}

TEST_CASE("a report has more groups than a byte counts: a run of group 300 is in group 300") {
    std::mt19937 rng(3);
    std::vector<std::uint8_t> records;
    append_record(records, 300, to_stored(run_beacon(1, 50, rng)).run);
    append_record(records, 1, to_stored(run_beacon(2, 50, rng)).run);
    std::vector<std::string> names;
    for (int g = 1; g <= 400; ++g) names.push_back("day " + std::to_string(g));
    const Report r = build_report(records.data(), records.size(), request(names));
    REQUIRE(r.error.empty());
    REQUIRE(r.groups.size() == 401);
    CHECK(r.groups[0].runs == 2);
    CHECK(r.groups[300].runs == 1);
    CHECK(r.groups[300 % 256].runs == 0);
    CHECK(r.groups[1].runs == 1);
}

TEST_CASE("records that do not parse end the report with an error naming the run") {
    std::mt19937 rng(1);
    const StoredRun run = to_stored(run_beacon(1, 50, rng)).run;
    std::vector<std::uint8_t> good;
    append_record(good, 1, run);
    SUBCASE("cut short") {
        good.pop_back();
        CHECK(build_report(good.data(), good.size(), request({"a"})).error.find("fewer values") != std::string::npos);
    }
    SUBCASE("a group that was not named") {
        good[0] = 2;
        CHECK(build_report(good.data(), good.size(), request({"a"})).error.find("names no group") != std::string::npos);
    }
    SUBCASE("another format version") {
        good[kGroupNumberBytes] = kRunRecordVersion + 1;
        CHECK(build_report(good.data(), good.size(), request({"a"})).error.find("format") != std::string::npos);
    }
    SUBCASE("an earlier format is refused too") {
        good[kGroupNumberBytes] = kRunRecordVersion - 1;
        CHECK(build_report(good.data(), good.size(), request({"a"})).error.find("format") != std::string::npos);
    }
    SUBCASE("nothing at all is an empty report, not an error") {
        const Report r = build_report(nullptr, 0, request({"a"}));
        CHECK(r.error.empty());
        CHECK(r.groups[0].runs == 0);
        CHECK(r.groups[0].analysis.rows.empty());
    }
}

TEST_CASE("one pass makes the report, the daily series and the connection-setup view as their own passes would") {
    std::mt19937 rng(11);
    std::vector<std::uint8_t> one_pass, by_day, setup_records;
    std::vector<StoredRun> runs;
    for (int i = 0; i < 90; ++i) {
        const std::uint8_t group = i % 3 == 0 ? 2 : 1, day = static_cast<std::uint8_t>(1 + i % 4);
        Beacon b = run_beacon(i, group == 1 ? 50 : 150, rng);
        b.samples.push_back(make(Phase::prewarm, 1, Proto::h2, "h2", SampleResult::ok, 80 + i % 13));
        b.samples.back().reused = false;
        const StoredRun r = to_stored(b).run;
        append_record(one_pass, group, r, day, true);
        append_record(by_day, day, r);
        setup_records.push_back(group);
        setup_records.push_back(0);
        setup_records.insert(setup_records.end(), r.setup.begin(), r.setup.end());
    }
    ReportRequest all = request({"a", "b"});
    all.days = {"d1", "d2", "d3", "d4"};
    all.setup = true;
    SetupReport view;
    const Report pass = build_report(one_pass.data(), one_pass.size(), all, &view);
    REQUIRE(pass.error.empty());
    // The daily series: the report of the records grouped by day, at the series' percentiles.
    ReportRequest days = request(all.days);
    days.options.percentiles = kSeriesPercentiles;
    const Report own = build_report(by_day.data(), by_day.size(), days);
    REQUIRE(pass.days.size() == own.groups.size());
    for (std::size_t g = 0; g < own.groups.size(); ++g) {
        CAPTURE(g);
        CHECK(pass.days[g].runs == own.groups[g].runs);
        check_same_rows(pass.days[g].analysis, own.groups[g].analysis);
    }
    // The looks: day k with every earlier day, at the report's percentiles (the stopping line reads them all), the
    // last one the whole report's overall group.
    REQUIRE(pass.looks.size() == 4);
    CHECK(pass.looks[3].runs == 90);
    CHECK(pass.looks[0].runs == own.groups[1].runs);
    check_same_rows(pass.looks[3].analysis, pass.groups[0].analysis);
    // The view: as from the cold-setup records alone.
    ReportOptions view_options;
    view_options.percentiles = kSeriesPercentiles;
    const SetupReport alone = connection_setup_report(setup_records.data(), setup_records.size(), all.groups, view_options);
    REQUIRE(alone.error.empty());
    REQUIRE(view.groups.size() == 3);
    for (std::size_t g = 0; g < 3; ++g) {
        CHECK(view.groups[g].runs == alone.groups[g].runs);
        CHECK(view.groups[g].outcomes == alone.groups[g].outcomes);
        for (int m = 0; m < kSetupMetrics; ++m) check_same_rows(view.groups[g].metric[m].analysis, alone.groups[g].metric[m].analysis);
    }
    CHECK(view.groups[0].outcomes[0][static_cast<int>(SetupOutcome::cold)] == 90);
    // A day number that was not named is an error.
    one_pass[kGroupNumberBytes] = 5;
    CHECK(build_report(one_pass.data(), one_pass.size(), all, &view).error.find("names no day") != std::string::npos);
}

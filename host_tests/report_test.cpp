// The report from stored run records: grouping, counts by class, the paired differences, and refusing bad records.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "report.hpp"
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

void append_record(std::vector<std::uint8_t>& out, std::size_t group, const StoredRun& r) {
    out.push_back(static_cast<std::uint8_t>(group & 0xff));
    out.push_back(static_cast<std::uint8_t>(group >> 8));
    out.insert(out.end(), r.arm_counts.begin(), r.arm_counts.end());
    out.insert(out.end(), r.arm_metrics[0].begin(), r.arm_metrics[0].end());
}

}  // namespace

TEST_CASE("the report counts every run as the browser's summary did, per group and overall") {
    std::mt19937 rng(7);
    std::vector<std::uint8_t> records;
    std::size_t usable[3][2] = {}, fallbacks[3] = {}, excluded[3] = {};
    std::vector<double> diffs_b;
    for (int i = 0; i < 60; ++i) {
        const std::uint8_t g = i % 3 == 0 ? 2 : 1;
        const Beacon b = run_beacon(i, g == 1 ? 50 : 150, rng);
        append_record(records, g, to_stored(b).run);
        for (std::size_t at : {std::size_t{0}, std::size_t{g}}) {
            usable[at][0] += b.summary.control.latency.n;
            usable[at][1] += b.summary.treatment.latency.n;
            fallbacks[at] += b.summary.treatment.fallbacks;
            excluded[at] += b.summary.control.excluded + b.summary.treatment.excluded;
        }
        if (g == 2 && b.summary.diff_median_ms) diffs_b.push_back(*b.summary.diff_median_ms);
    }
    const Report report = build_report(records.data(), records.size(), {"Europe", "Asia"}, ReportOptions{});
    REQUIRE(report.error.empty());
    REQUIRE(report.groups.size() == 3);
    CHECK(report.groups[0].name == "overall");
    CHECK(report.groups[2].name == "Asia");
    for (int g = 0; g < 3; ++g) {
        CAPTURE(g);
        const GroupReport& r = report.groups[g];
        CHECK(r.analysis.n_h2 == usable[g][0]);
        CHECK(r.analysis.n_h3 == usable[g][1]);
        CHECK(r.classes[1][static_cast<int>(RequestClass::fallback)] == fallbacks[g]);
        std::size_t ex = 0;
        for (int arm = 0; arm < 2; ++arm)
            for (int c = 0; c < kRequestClassCount; ++c)
                if (!is_usable(static_cast<RequestClass>(c))) ex += r.classes[arm][c];
        CHECK(ex == excluded[g]);
        CHECK(r.requests == usable[g][0] + usable[g][1] + excluded[g]);
        CHECK(treatment_ok(r) == usable[g][1] + fallbacks[g]);  // no request of unknown protocol here
        CHECK(fallback_rate(r) == doctest::Approx(static_cast<double>(fallbacks[g]) / (usable[g][1] + fallbacks[g])));
    }
    CHECK(report.groups[0].runs == 60);
    CHECK(report.groups[2].runs == 20);
    REQUIRE(report.groups[2].paired.has_value());
    CHECK(report.groups[2].paired->n == diffs_b.size());
    double mean = 0;
    for (double d : diffs_b) mean += d / static_cast<double>(diffs_b.size());
    CHECK(report.groups[2].paired->mean == doctest::Approx(mean));
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
    const Report r = build_report(records.data(), records.size(), {"local"}, ReportOptions{});
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
    const Report r = build_report(records.data(), records.size(), names, ReportOptions{});
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
        CHECK(build_report(good.data(), good.size(), {"a"}, {}).error.find("fewer values") != std::string::npos);
    }
    SUBCASE("a group that was not named") {
        good[0] = 2;
        CHECK(build_report(good.data(), good.size(), {"a"}, {}).error.find("names no group") != std::string::npos);
    }
    SUBCASE("another format version") {
        good[kGroupNumberBytes] = kRunRecordVersion + 1;
        CHECK(build_report(good.data(), good.size(), {"a"}, {}).error.find("format") != std::string::npos);
    }
    SUBCASE("an earlier format is refused too") {
        good[kGroupNumberBytes] = kRunRecordVersion - 1;
        CHECK(build_report(good.data(), good.size(), {"a"}, {}).error.find("format") != std::string::npos);
    }
    SUBCASE("nothing at all is an empty report, not an error") {
        const Report r = build_report(nullptr, 0, {"a"}, {});
        CHECK(r.error.empty());
        CHECK(r.groups[0].runs == 0);
        CHECK(r.groups[0].analysis.rows.empty());
    }
}

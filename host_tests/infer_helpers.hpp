// Test helpers: samples built run by run, and a group inferred through the report's own path (the in-process
// aggregate source and infer_report()).
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bootstrap.hpp"
#include "value_aggregates.hpp"

namespace h3probe::test {

// A fixed, portable stream of test data: Knuth's MMIX linear congruential generator.
struct Lcg {
    std::uint64_t x;
    std::uint64_t next() { return x = x * 6364136223846793005ULL + 1442695040888963407ULL; }
    double uniform() { return static_cast<double>(next() >> 11) / 9007199254740992.0; }  // [0, 1), 53 bits
};

// Values scale * i, i = 1..n, value i alone in run first_run + i (one request per run).
inline RunClusteredSample one_to(int n, double scale = 1, std::uint32_t first_run = 0) {
    RunClusteredSample s;
    for (int i = 1; i <= n; ++i) add_run(s, {i * scale}, first_run + static_cast<std::uint32_t>(i));
    return s;
}

// The group's report with both arms given; diffs as given (each a run of its own).
inline GroupReport infer_group(const RunClusteredSample& h2, const RunClusteredSample& h3, const std::vector<double>& ps,
                               double confidence = 0.95, const std::vector<double>& diffs = {}) {
    std::vector<ValueGroup> groups(1);
    groups[0].arm[0] = h2;
    groups[0].arm[1] = h3;
    for (double d : diffs) add_difference(groups[0], d, 2);
    ReportOptions o;
    o.percentiles = ps;
    o.confidence = confidence;
    std::string error;
    auto reports = infer_values(groups, o, error);
    REQUIRE(error.empty());
    REQUIRE(reports.size() == 1);
    return reports[0];
}

inline ArmsAnalysis analyze(const RunClusteredSample& h2, const RunClusteredSample& h3, const std::vector<double>& ps,
                            double confidence = 0.95) {
    return infer_group(h2, h3, ps, confidence).analysis;
}

// One arm's delta interval at p.
inline QuantileInterval interval(const RunClusteredSample& s, double p, double confidence = 0.95) {
    const ArmsAnalysis a = analyze(s, s, {p}, confidence);
    REQUIRE(a.h2.size() == 1);
    return a.h2[0];
}

}  // namespace h3probe::test

// What could bias the report's answer, one rule for the verdict to lead with. Every request that holds a value stays
// in its arm and an instrument fault drops its whole run (request_class.hpp), so the arms always hold the same runs;
// but a fault far more frequent on one arm's origin (a Timing-Allow-Origin missing there) drops runs by what that
// origin does: a deployment fault that leaves the runs read unlike the users', and the verdict reads no difference
// until it is fixed ("not comparable until fixed"). Runs that failed or timed out, load errors, runs on the page's main
// thread and a fallback rate that differs by group are each, past its threshold, a caution the verdict states first,
// with its numbers.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "report.hpp"
#include "request_class.hpp"

namespace h3probe {

// An instrument fault (a class of role fault) is unequal when its share of one arm's measured requests exceeds the
// other arm's by more than this (absolute, a fraction of the arm's requests) and by at least
// kUnequalExclusionMinRequests requests. Fallbacks, failures and timeouts stay in their arms: the fallback rate and the
// failure rates report them, not this rule.
inline constexpr double kUnequalExclusionShare = 0.05;
inline constexpr std::size_t kUnequalExclusionMinRequests = 5;

// The sample's thresholds: a caution when the count's share exceeds the share AND the count reaches the minimum (a
// handful of runs in a small store is noise, not a pattern). Runs that failed (outcome "error") or timed out
// ("deadline") of the runs read; load_error beacons of the sampled page loads (those beacons and the runs read); runs on
// the page's main thread of the runs read (one is already worth a look: a CSP or a bundler setting, fixed once).
inline constexpr double kFailedRunShare = 0.02;
inline constexpr std::size_t kFailedRunMinRuns = 5;
inline constexpr double kLoadErrorShare = 0.02;
inline constexpr std::size_t kLoadErrorMinLoads = 5;
inline constexpr double kMainThreadShare = 0.01;
inline constexpr std::size_t kMainThreadMinRuns = 1;
// A group's fallback rate is out of line when it exceeds the other groups' together by more than this (absolute) and
// by at least kFallbackGapMinRequests fallbacks over what the others' rate would give it: there HTTP/3 is measured
// only on the networks where UDP gets through, a selection the other groups do not have.
inline constexpr double kFallbackGapShare = 0.05;
inline constexpr std::size_t kFallbackGapMinRequests = 5;

struct UnequalExclusion {
    RequestClass cls;
    std::size_t control = 0, treatment = 0;              // requests of this class per arm
    std::size_t control_requests = 0, treatment_requests = 0;  // each arm's measured requests
};

// The instrument faults unequal between the arms of g, in the classes' order; empty: the arms are comparable.
std::vector<UnequalExclusion> unequal_exclusions(const GroupReport& g);

// The runs a report reads and what it lost, as the store counts them.
struct SampleFacts {
    std::size_t runs = 0;         // the stored runs read (one arms mode and payload mode, received since)
    std::size_t failed = 0;       // of them, outcome "error"
    std::size_t timed_out = 0;    // of them, outcome "deadline"
    std::size_t load_errors = 0;  // load_error beacons received since: sampled page loads that ran nothing
    std::size_t main_thread = 0;  // of the runs, those whose core ran on the page's main thread
};
// A group's completed treatment requests and how many of them fell back (GroupReport: treatment_ok, fallback).
struct GroupFallbacks {
    std::string name;
    std::size_t fallbacks = 0, completed = 0;
};

enum class SampleBiasKind { failed_runs, load_errors, main_thread, fallback_gap };
const char* to_string(SampleBiasKind kind);

struct SampleBias {
    SampleBiasKind kind;
    std::size_t n = 0, of = 0;  // the count and what it is a share of (fallback_gap: the group's fallbacks, completed)
    std::string group;          // fallback_gap: the group
    std::size_t rest_n = 0, rest_of = 0;  // fallback_gap: the other groups' fallbacks and completed requests together
};

// What makes the sample unlike the users', past each threshold, in the kinds' order (fallback gaps in the groups'
// order). groups: overall first, then each group; a fallback gap needs two groups with completed requests.
std::vector<SampleBias> sample_biases(const SampleFacts& facts, const std::vector<GroupFallbacks>& groups);

}  // namespace h3probe

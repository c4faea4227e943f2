// When a deployment fault selects the runs: an instrument fault whose share differs between the arms.
#include <doctest/doctest.h>

#include "comparability.hpp"

using namespace h3probe;

namespace {

// A group with `n` measured requests per arm, all usable but for the given exclusions.
GroupReport group(std::size_t n, RequestClass cls, std::size_t control, std::size_t treatment) {
    GroupReport g;
    g.classes[0][static_cast<int>(RequestClass::usable_control)] = n - control;
    g.classes[1][static_cast<int>(RequestClass::usable_treatment)] = n - treatment;
    g.classes[0][static_cast<int>(cls)] += control;
    g.classes[1][static_cast<int>(cls)] += treatment;
    g.classes[0][static_cast<int>(RequestClass::prewarm)] = 3 * n;  // never counted
    return g;
}

}  // namespace

TEST_CASE("an instrument fault in one arm only, past 5 points and 5 requests, makes the arms unequal") {
    const auto u = unequal_exclusions(group(100, RequestClass::timing_unavailable, 0, 20));
    REQUIRE(u.size() == 1);
    CHECK(u[0].cls == RequestClass::timing_unavailable);
    CHECK(u[0].control == 0);
    CHECK(u[0].treatment == 20);
    CHECK(u[0].control_requests == 100);
    CHECK(u[0].treatment_requests == 100);
    // Either arm, any fault.
    CHECK(unequal_exclusions(group(100, RequestClass::no_timing_entry, 12, 1)).size() == 1);
}

TEST_CASE("equal faults, small gaps, few requests, and requests that stay in their arms leave the arms comparable") {
    CHECK(unequal_exclusions(group(100, RequestClass::timing_unavailable, 20, 20)).empty());
    CHECK(unequal_exclusions(group(100, RequestClass::cache_hit, 0, 5)).empty());      // 5 points: not past it
    CHECK(unequal_exclusions(group(100, RequestClass::cache_hit, 0, 6)).size() == 1);  // 6 points and 6 requests
    CHECK(unequal_exclusions(group(20, RequestClass::redirected, 0, 4)).empty());      // 20 points, 4 requests
    // Fallbacks, failures and timeouts stay in their arms (as assigned): the rates report them, not this rule.
    for (RequestClass c : {RequestClass::fallback, RequestClass::timeout, RequestClass::http_error, RequestClass::network_error,
                           RequestClass::aborted, RequestClass::protocol_mismatch})
        CHECK(unequal_exclusions(group(100, c, 0, 30)).empty());
    CHECK(unequal_exclusions(GroupReport{}).empty());                                   // no requests
}

TEST_CASE("runs that failed or timed out, load errors and runs on the main thread: a caution past share and count") {
    CHECK(sample_biases({100, 0, 0, 0, 0}, {}).empty());
    auto b = sample_biases({100, 2, 3, 0, 0}, {});  // 5 of 100: past 2 % and 5 runs
    REQUIRE(b.size() == 1);
    CHECK(b[0].kind == SampleBiasKind::failed_runs);
    CHECK(b[0].n == 5);
    CHECK(b[0].of == 100);
    CHECK(sample_biases({100, 2, 2, 0, 0}, {}).empty());    // 4 runs: under the count
    CHECK(sample_biases({1000, 10, 10, 0, 0}, {}).empty()); // 2.0 %: not past it
    b = sample_biases({95, 0, 0, 5, 0}, {});                // 5 of 100 sampled page loads
    REQUIRE(b.size() == 1);
    CHECK(b[0].kind == SampleBiasKind::load_errors);
    CHECK(b[0].of == 100);
    CHECK(sample_biases({995, 0, 0, 5, 0}, {}).empty());    // 0.5 %
    b = sample_biases({203, 0, 0, 0, 3}, {});               // 1.5 % on the main thread
    REQUIRE(b.size() == 1);
    CHECK(b[0].kind == SampleBiasKind::main_thread);
    CHECK(sample_biases({201, 0, 0, 0, 1}, {}).empty());    // 0.5 %
    CHECK(sample_biases({100, 10, 0, 10, 10}, {}).size() == 3);
    CHECK(sample_biases({0, 0, 0, 0, 0}, {}).empty());
}

TEST_CASE("a group whose fallback rate exceeds the other groups' together is named, not the others") {
    const std::vector<GroupFallbacks> gap = {{"overall", 30, 300}, {"Asia", 25, 100}, {"Europe", 5, 200}};
    const auto b = sample_biases({60, 0, 0, 0, 0}, gap);
    REQUIRE(b.size() == 1);
    CHECK(b[0].kind == SampleBiasKind::fallback_gap);
    CHECK(b[0].group == "Asia");
    CHECK(b[0].n == 25);
    CHECK(b[0].of == 100);
    CHECK(b[0].rest_n == 5);
    CHECK(b[0].rest_of == 200);
    // The same rate everywhere; a gap of 5 points; few fallbacks; one group only: none.
    CHECK(sample_biases({60, 0, 0, 0, 0}, {{"overall", 30, 300}, {"Asia", 10, 100}, {"Europe", 20, 200}}).empty());
    CHECK(sample_biases({60, 0, 0, 0, 0}, {{"overall", 25, 300}, {"Asia", 11, 100}, {"Europe", 14, 200}}).empty());
    CHECK(sample_biases({6, 0, 0, 0, 0}, {{"overall", 4, 30}, {"Asia", 4, 10}, {"Europe", 0, 20}}).empty());
    CHECK(sample_biases({6, 0, 0, 0, 0}, {{"overall", 30, 300}, {"Asia", 30, 300}}).empty());
}

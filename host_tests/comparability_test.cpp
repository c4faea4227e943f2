// When the two arms no longer measure the same page loads: an exclusion whose share differs between the arms.
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

TEST_CASE("an exclusion in one arm only, past 5 points and 5 requests, makes the arms unequal") {
    const auto u = unequal_exclusions(group(100, RequestClass::timing_unavailable, 0, 20));
    REQUIRE(u.size() == 1);
    CHECK(u[0].cls == RequestClass::timing_unavailable);
    CHECK(u[0].control == 0);
    CHECK(u[0].treatment == 20);
    CHECK(u[0].control_requests == 100);
    CHECK(u[0].treatment_requests == 100);
    // Either arm, any excluded class.
    CHECK(unequal_exclusions(group(100, RequestClass::timeout, 12, 1)).size() == 1);
}

TEST_CASE("equal exclusions, small gaps, few requests and fallbacks leave the arms comparable") {
    CHECK(unequal_exclusions(group(100, RequestClass::timing_unavailable, 20, 20)).empty());
    CHECK(unequal_exclusions(group(100, RequestClass::http_error, 0, 5)).empty());      // 5 points: not past it
    CHECK(unequal_exclusions(group(100, RequestClass::http_error, 0, 6)).size() == 1);  // 6 points and 6 requests
    CHECK(unequal_exclusions(group(20, RequestClass::network_error, 0, 4)).empty());    // 20 points, 4 requests
    CHECK(unequal_exclusions(group(100, RequestClass::fallback, 0, 30)).empty());       // the fallback rate's, not this
    CHECK(unequal_exclusions(GroupReport{}).empty());                                   // no requests
}

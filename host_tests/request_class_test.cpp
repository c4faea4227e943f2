// The classification rule: every result x protocol x arm combination gets exactly one class, the one written here.
#include <doctest/doctest.h>

#include <string>

#include "request_class.hpp"

using namespace h3probe;

namespace {

Sample make(Phase phase, Proto origin, SampleResult result, const std::string& protocol) {
    Sample s;
    s.phase = phase;
    s.origin = origin;
    s.result = result;
    s.protocol = protocol;
    if (result == SampleResult::ok) s.network_ms = 12.5;
    return s;
}

// The rule as a table, written independently of classify(): what each combination must be.
RequestClass expected(Phase phase, Proto origin, SampleResult result, const std::string& protocol) {
    if (phase == Phase::prewarm) return RequestClass::prewarm;
    switch (result) {
        case SampleResult::http_error: return RequestClass::http_error;
        case SampleResult::network_error: return RequestClass::network_error;
        case SampleResult::timeout: return RequestClass::timeout;
        case SampleResult::aborted: return RequestClass::aborted;
        case SampleResult::no_timing_entry: return RequestClass::no_timing_entry;
        case SampleResult::timing_unavailable: return RequestClass::timing_unavailable;
        case SampleResult::redirected: return RequestClass::redirected;
        case SampleResult::cache_hit: return RequestClass::cache_hit;
        case SampleResult::ok: break;
    }
    if (protocol.empty()) return RequestClass::protocol_unknown;
    if (protocol != (origin == Proto::h3 ? "h3" : "h2")) return RequestClass::fallback;
    return phase == Phase::treatment ? RequestClass::usable_treatment : RequestClass::usable_control;
}

}  // namespace

TEST_CASE("every result, protocol and arm gets exactly the class the rule names") {
    const Phase phases[] = {Phase::prewarm, Phase::control, Phase::treatment};
    const Proto origins[] = {Proto::h2, Proto::h3};
    const SampleResult results[] = {
#define H3PROBE_LIST_RESULT(name, what) SampleResult::name,
        H3PROBE_SAMPLE_RESULTS(H3PROBE_LIST_RESULT)
#undef H3PROBE_LIST_RESULT
    };
    const char* protocols[] = {"", "h2", "h3", "http/1.1", "h3-29"};
    int combinations = 0;
    for (Phase phase : phases)
        for (Proto origin : origins)
            for (SampleResult result : results)
                for (const char* protocol : protocols) {
                    CAPTURE(to_string(phase));
                    CAPTURE(to_string(origin));
                    CAPTURE(to_string(result));
                    CAPTURE(protocol);
                    CHECK(classify(make(phase, origin, result, protocol)) == expected(phase, origin, result, protocol));
                    ++combinations;
                }
    CHECK(combinations == 3 * 2 * 9 * 5);
}

TEST_CASE("only ok requests over the origin's own protocol are usable, each in its own arm") {
    CHECK(classify(make(Phase::control, Proto::h2, SampleResult::ok, "h2")) == RequestClass::usable_control);
    CHECK(classify(make(Phase::treatment, Proto::h3, SampleResult::ok, "h3")) == RequestClass::usable_treatment);
    SUBCASE("an HTTP/3 request answered over h2 is a fallback") {
        CHECK(classify(make(Phase::treatment, Proto::h3, SampleResult::ok, "h2")) == RequestClass::fallback);
    }
    SUBCASE("a failed request over h2 in the HTTP/3 arm is its failure, not a fallback") {
        CHECK(classify(make(Phase::treatment, Proto::h3, SampleResult::http_error, "h2")) == RequestClass::http_error);
    }
    SUBCASE("an ok request whose protocol the browser did not name is not a fallback") {
        CHECK(classify(make(Phase::treatment, Proto::h3, SampleResult::ok, "")) == RequestClass::protocol_unknown);
    }
    SUBCASE("an A/A arm asks an origin of the other arm's protocol and is usable over it") {
        CHECK(classify(make(Phase::treatment, Proto::h2, SampleResult::ok, "h2")) == RequestClass::usable_treatment);
    }
}

TEST_CASE("class names are distinct and usable is exactly the two arms") {
    int usable = 0;
    for (int c = 0; c < kRequestClassCount; ++c) {
        const auto cls = static_cast<RequestClass>(c);
        usable += is_usable(cls);
        for (int d = c + 1; d < kRequestClassCount; ++d)
            CHECK(std::string(to_string(cls)) != to_string(static_cast<RequestClass>(d)));
    }
    CHECK(usable == 2);
}

// The classification rule: every result x protocol x arm combination gets exactly one class, the one written here.
#include <doctest/doctest.h>

#include <string>

#include "request_class.hpp"
#include "sample_builder.hpp"

using namespace h3probe;

namespace {

Sample make(Phase phase, Proto origin, SampleResult result, const char* protocol) {
    return test::make_sample(phase, 0, origin, protocol, result == SampleResult::ok ? std::optional<double>(12.5) : std::nullopt,
                             result);
}

// The rule stated without classify()'s code: a failed request is named after its result; an ok one is usable exactly
// when the browser named the origin's own protocol, and otherwise a fallback or of unknown protocol.
std::string expected(Phase phase, Proto origin, SampleResult result, const std::string& protocol) {
    if (phase == Phase::prewarm) return "prewarm";
    if (result != SampleResult::ok) return to_string(result);
    if (protocol == to_string(origin)) return phase == Phase::treatment ? "usable_treatment" : "usable_control";
    return protocol.empty() ? "protocol_unknown" : "fallback";
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
                    CHECK(to_string(classify(make(phase, origin, result, protocol))) == expected(phase, origin, result, protocol));
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

// The classification rule: every result x protocol x arm combination gets exactly one class, the one written here.
#include <doctest/doctest.h>

#include <string>

#include "request_class.hpp"
#include "sample_builder.hpp"

using namespace h3probe;

namespace {

Sample make(Phase phase, Proto origin, SampleResult result, const char* protocol, const char* server_protocol = "") {
    Sample s = test::make_sample(phase, 0, origin, protocol,
                                 result == SampleResult::ok ? std::optional<double>(12.5) : std::nullopt, result);
    s.server_protocol = server_protocol;
    return s;
}

// The server's names as Caddy and nginx send them, written out here rather than taken from the core's list.
std::string server_says(const std::string& server_protocol) {
    if (server_protocol == "HTTP/2.0" || server_protocol == "HTTP/2") return "h2";
    if (server_protocol == "HTTP/3.0" || server_protocol == "HTTP/3") return "h3";
    if (server_protocol == "HTTP/1.1") return "http/1.1";
    return "";  // none sent, or a name the rule does not know: not checked
}

// The rule stated without classify()'s code: a failed request is named after its result; an ok one is usable exactly
// when the browser named the origin's own protocol and the origin, if it said, saw that protocol too; otherwise a
// fallback, of unknown protocol, or a client/server mismatch.
std::string expected(Phase phase, Proto origin, SampleResult result, const std::string& protocol,
                     const std::string& server_protocol) {
    if (phase == Phase::prewarm) return "prewarm";
    if (result != SampleResult::ok) return to_string(result);
    if (protocol.empty()) return "protocol_unknown";
    if (protocol != to_string(origin)) return "fallback";
    const std::string seen = server_says(server_protocol);
    if (!seen.empty() && seen != protocol) return "protocol_mismatch";
    return phase == Phase::treatment ? "usable_treatment" : "usable_control";
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
    const char* server_protocols[] = {"", "HTTP/2.0", "HTTP/3.0", "HTTP/2", "HTTP/3", "HTTP/1.1", "QUIC?"};
    int combinations = 0;
    for (Phase phase : phases)
        for (Proto origin : origins)
            for (SampleResult result : results)
                for (const char* protocol : protocols)
                    for (const char* server : server_protocols) {
                        CAPTURE(to_string(phase));
                        CAPTURE(to_string(origin));
                        CAPTURE(to_string(result));
                        CAPTURE(protocol);
                        CAPTURE(server);
                        CHECK(to_string(classify(make(phase, origin, result, protocol, server))) ==
                              expected(phase, origin, result, protocol, server));
                        ++combinations;
                    }
    CHECK(combinations == 3 * 2 * 9 * 5 * 7);
}

TEST_CASE("only ok requests over the origin's own protocol are usable, each in its own arm") {
    CHECK(classify(make(Phase::control, Proto::h2, SampleResult::ok, "h2")) == RequestClass::usable_control);
    CHECK(classify(make(Phase::treatment, Proto::h3, SampleResult::ok, "h3")) == RequestClass::usable_treatment);
    SUBCASE("an h3 request the origin saw arrive over HTTP/2 (a proxy in between) is a mismatch, not usable") {
        CHECK(classify(make(Phase::treatment, Proto::h3, SampleResult::ok, "h3", "HTTP/2.0")) ==
              RequestClass::protocol_mismatch);
        CHECK(classify(make(Phase::treatment, Proto::h3, SampleResult::ok, "h3", "HTTP/3.0")) ==
              RequestClass::usable_treatment);
        CHECK(classify(make(Phase::control, Proto::h2, SampleResult::ok, "h2", "HTTP/1.1")) ==
              RequestClass::protocol_mismatch);
    }
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

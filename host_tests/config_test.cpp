// Config parsing: defaults, every validation rule, and that all errors are reported together.
#include <doctest/doctest.h>

#include <algorithm>

#include "config.hpp"

using namespace h3probe;

namespace {
const char* kMinimal = R"({"h2Origin":"https://h2.example.com","h3Origin":"https://h3.example.com:8443"})";

bool has_error(const ConfigResult& r, const std::string& needle) {
    return std::any_of(r.errors.begin(), r.errors.end(),
                       [&](const std::string& e) { return e.find(needle) != std::string::npos; });
}
}  // namespace

TEST_CASE("a minimal config gets the Dropbox defaults") {
    const auto r = parse_config(kMinimal);
    REQUIRE(r.errors.empty());
    REQUIRE(r.config);
    CHECK(r.config->h2_origin == "https://h2.example.com");
    CHECK(r.config->h3_origin == "https://h3.example.com:8443");
    CHECK(r.config->prewarm_h3 == 2);
    CHECK(r.config->prewarm_h2 == 1);
    CHECK(r.config->requests_per_arm == 5);
    CHECK(r.config->order == RunOrder::h2_first);
    CHECK(r.config->noop_path == "/noop");
    CHECK(r.config->beacon_url == "/beacon");
    CHECK(r.config->enabled);
    CHECK(r.config->sample_rate == 1);
    CHECK(r.config->payload_bytes == 0);
}

TEST_CASE("payloadBytes: a whole number of bytes from 0 to kMaxPayloadBytes") {
    const std::string head = R"({"h2Origin":"https://a.test","h3Origin":"https://b.test","payloadBytes":)";
    CHECK(parse_config(head + "131072}").config->payload_bytes == 131072);
    CHECK(parse_config(head + std::to_string(kMaxPayloadBytes) + "}").config->payload_bytes == kMaxPayloadBytes);
    CHECK(has_error(parse_config(head + std::to_string(kMaxPayloadBytes + 1) + "}"),
                    "payloadBytes: 1048577 is out of range [0, 1048576]"));
    CHECK(has_error(parse_config(head + "-1}"), "payloadBytes: -1 is out of range [0, 1048576]"));
    CHECK(has_error(parse_config(head + "1.5}"), "payloadBytes: must be an integer"));
    CHECK(has_error(parse_config(head + "\"128k\"}"), "payloadBytes: must be an integer"));
}

TEST_CASE("every key can be set") {
    const auto r = parse_config(R"({"h2Origin":"https://a.test","h3Origin":"https://b.test","noopPath":"/api/noop",
        "beaconUrl":"https://collect.test/b","configId":"exp-7","prewarmH3":3,"prewarmH2":0,"requestsPerArm":8,
        "requestTimeoutMs":2500,"entryWaitMs":300,"runDeadlineMs":9000,"order":"random"})");
    REQUIRE(r.errors.empty());
    CHECK(r.config->noop_path == "/api/noop");
    CHECK(r.config->beacon_url == "https://collect.test/b");
    CHECK(r.config->config_id == "exp-7");
    CHECK(r.config->prewarm_h3 == 3);
    CHECK(r.config->prewarm_h2 == 0);
    CHECK(r.config->requests_per_arm == 8);
    CHECK(r.config->request_timeout_ms == 2500);
    CHECK(r.config->entry_wait_ms == 300);
    CHECK(r.config->run_deadline_ms == 9000);
    CHECK(r.config->order == RunOrder::random);
}

TEST_CASE("config rejects bad input with an error naming the key") {
    SUBCASE("text that is not JSON") {
        const auto r = parse_config("{h2Origin:");
        CHECK_FALSE(r.config);
        CHECK(has_error(r, "not valid JSON"));
    }
    SUBCASE("a raw NUL byte, which the JSON lexer would take for the end of input") {
        const std::string text = R"({"h2Origin":"https://a.test","h3Origin":"https://b.test"})";
        const auto r = parse_config(text + std::string(1, '\0') + "garbage");
        CHECK_FALSE(r.config);
        CHECK(has_error(r, "config: holds a NUL byte at offset " + std::to_string(text.size())));
        CHECK(parse_config(text).config);
    }
    SUBCASE("JSON that is not an object") { CHECK(has_error(parse_config("[1,2]"), "must be a JSON object")); }
    SUBCASE("unknown keys, e.g. a typo") {
        const auto r = parse_config(R"({"h2Origin":"https://a.test","h3Origin":"https://b.test","requestPerArm":5})");
        CHECK_FALSE(r.config);
        CHECK(has_error(r, "requestPerArm: unknown key"));
    }
    SUBCASE("wrong types") {
        const auto r = parse_config(R"({"h2Origin":"https://a.test","h3Origin":"https://b.test","requestsPerArm":"5",
            "prewarmH3":1.5,"requestTimeoutMs":true})");
        CHECK(has_error(r, "requestsPerArm: must be an integer"));
        CHECK(has_error(r, "prewarmH3: must be an integer"));
        CHECK(has_error(r, "requestTimeoutMs: must be a number"));
    }
    SUBCASE("counts out of range") {
        const auto r = parse_config(R"({"h2Origin":"https://a.test","h3Origin":"https://b.test","requestsPerArm":0,
            "prewarmH2":11,"runDeadlineMs":-1})");
        CHECK(has_error(r, "requestsPerArm: 0 is out of range [1, 50]"));
        CHECK(has_error(r, "prewarmH2: 11 is out of range"));
        CHECK(has_error(r, "runDeadlineMs"));
        CHECK(r.errors.size() == 3);
    }
    SUBCASE("non-https origins, origins with a path, and a missing origin") {
        CHECK(has_error(parse_config(R"({"h2Origin":"http://a.test","h3Origin":"https://b.test"})"),
                        "h2Origin: must be an https origin"));
        CHECK(has_error(parse_config(R"({"h2Origin":"https://a.test/x","h3Origin":"https://b.test"})"),
                        "h2Origin: must be an https origin"));
        CHECK(has_error(parse_config(R"({"h2Origin":"https://a.test:99999","h3Origin":"https://b.test"})"),
                        "h2Origin"));
        CHECK(has_error(parse_config(R"({"h2Origin":"https://a.test"})"), "h3Origin: required"));
    }
    SUBCASE("the same origin for both arms") {
        CHECK(has_error(parse_config(R"({"h2Origin":"https://a.test","h3Origin":"https://a.test"})"),
                        "h3Origin: must differ from h2Origin"));
    }
    SUBCASE("a sample rate outside [0, 1] or a kill switch that is not a boolean") {
        const auto r = parse_config(R"({"h2Origin":"https://a.test","h3Origin":"https://b.test","sampleRate":1.5,"enabled":"no"})");
        CHECK(has_error(r, "sampleRate: 1.5 is out of range [0, 1]"));
        CHECK(has_error(r, "enabled: must be true or false"));
    }
    SUBCASE("an order that does not exist") {
        CHECK(has_error(parse_config(R"({"h2Origin":"https://a.test","h3Origin":"https://b.test","order":"h1-first"})"),
                        "order: must be"));
    }
    SUBCASE("a protocol-relative beacon URL") {
        CHECK(has_error(parse_config(R"({"h2Origin":"https://a.test","h3Origin":"https://b.test","beaconUrl":"//x.test/b"})"),
                        "beaconUrl"));
    }
}

TEST_CASE("an origin is a host and an optional port from 1 to 65535, an IPv6 literal in brackets") {
    const auto origin_ok = [](const std::string& origin) {
        return parse_config(R"({"h2Origin":"https://h2.test","h3Origin":")" + origin + R"("})").config.has_value();
    };
    CHECK(origin_ok("https://h3.test"));
    CHECK(origin_ok("https://h3.test:1"));
    CHECK(origin_ok("https://h3.test:65535"));
    CHECK(origin_ok("https://[::1]"));
    CHECK(origin_ok("https://[2001:db8::1]:8443"));
    // A ']' anywhere in the host must not skip the port check (a case the config fuzz target found).
    CHECK_FALSE(origin_ok("https://h3.example.co]m:8443"));
    CHECK_FALSE(origin_ok("https://[::1]:99999"));
    CHECK_FALSE(origin_ok("https://[::1]:0"));
    CHECK_FALSE(origin_ok("https://[::1]x"));
    CHECK_FALSE(origin_ok("https://[::1"));
    CHECK_FALSE(origin_ok("https://[]:443"));
    CHECK_FALSE(origin_ok("https://a:b:443"));
    CHECK_FALSE(origin_ok("https://:443"));
    CHECK_FALSE(origin_ok("https://h3.test:"));
}

TEST_CASE("arms defaults to the experiment, h2-h3, and an aaOrigin there is accepted and unused") {
    const auto r = parse_config(R"({"h2Origin":"https://h2.test","h3Origin":"https://h3.test","aaOrigin":"https://x.test"})");
    REQUIRE_MESSAGE(r.config, (r.errors.empty() ? std::string() : r.errors[0]));
    CHECK(r.config->arms == Arms::h2_h3);
    CHECK(arm_target(*r.config, Phase::control).origin == "https://h2.test");
    CHECK(arm_target(*r.config, Phase::control).protocol == Proto::h2);
    CHECK(arm_target(*r.config, Phase::treatment).origin == "https://h3.test");
    CHECK(arm_target(*r.config, Phase::treatment).protocol == Proto::h3);
}

TEST_CASE("an A/A config points both arms at one protocol on two origins, the other protocol's origin optional") {
    SUBCASE("h3-h3: control asks h3Origin, treatment aaOrigin, both over h3") {
        const auto r = parse_config(R"({"arms":"h3-h3","h3Origin":"https://h3.test","aaOrigin":"https://h3b.test"})");
        REQUIRE_MESSAGE(r.config, (r.errors.empty() ? std::string() : r.errors[0]));
        CHECK(r.config->arms == Arms::h3_h3);
        CHECK(arm_target(*r.config, Phase::control).origin == "https://h3.test");
        CHECK(arm_target(*r.config, Phase::control).protocol == Proto::h3);
        CHECK(arm_target(*r.config, Phase::treatment).origin == "https://h3b.test");
        CHECK(arm_target(*r.config, Phase::treatment).protocol == Proto::h3);
    }
    SUBCASE("h2-h2: control asks h2Origin, treatment aaOrigin, both over h2") {
        const auto r = parse_config(
            R"({"arms":"h2-h2","h2Origin":"https://h2.test","h3Origin":"https://h3.test","aaOrigin":"https://h2b.test"})");
        REQUIRE(r.config);
        CHECK(arm_target(*r.config, Phase::control).origin == "https://h2.test");
        CHECK(arm_target(*r.config, Phase::treatment).origin == "https://h2b.test");
        CHECK(arm_target(*r.config, Phase::treatment).protocol == Proto::h2);
    }
}

TEST_CASE("an A/A config without a distinct second origin is an error naming aaOrigin") {
    SUBCASE("aaOrigin missing") {
        const auto r = parse_config(R"({"arms":"h3-h3","h3Origin":"https://h3.test"})");
        CHECK_FALSE(r.config);
        CHECK(has_error(r, "aaOrigin: required when arms is \"h3-h3\""));
    }
    SUBCASE("aaOrigin equal to the repeated protocol's origin") {
        const auto r = parse_config(R"({"arms":"h2-h2","h2Origin":"https://h2.test","aaOrigin":"https://h2.test"})");
        CHECK_FALSE(r.config);
        CHECK(has_error(r, "aaOrigin: must differ from h2Origin"));
    }
    SUBCASE("aaOrigin equal to the other protocol's origin, which would answer over the wrong protocol") {
        const auto r = parse_config(
            R"({"arms":"h3-h3","h2Origin":"https://h2.test","h3Origin":"https://h3.test","aaOrigin":"https://h2.test"})");
        CHECK_FALSE(r.config);
        CHECK(has_error(r, "aaOrigin: must differ from h2Origin"));
    }
    SUBCASE("aaOrigin that is not an https origin") {
        const auto r = parse_config(R"({"arms":"h3-h3","h3Origin":"https://h3.test","aaOrigin":"http://h3b.test/x"})");
        CHECK(has_error(r, "aaOrigin: must be an https origin"));
    }
    SUBCASE("the origin of the repeated protocol missing") {
        const auto r = parse_config(R"({"arms":"h3-h3","h2Origin":"https://h2.test","aaOrigin":"https://h3b.test"})");
        CHECK(has_error(r, "h3Origin: required"));
        CHECK_FALSE(has_error(r, "h2Origin: required"));
    }
    SUBCASE("an unknown arms mode") {
        const auto r = parse_config(R"({"arms":"h3-h2","h2Origin":"https://a.test","h3Origin":"https://b.test"})");
        CHECK(has_error(r, "arms: must be \"h2-h3\", \"h2-h2\" or \"h3-h3\", got \"h3-h2\""));
    }
}

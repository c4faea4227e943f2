// The lab link's JSON settings (relay --link and control channel): what they set, and clear errors for bad input.
#include <doctest/doctest.h>

#include <string>

#include "link_settings.hpp"

using namespace h3lab;
using std::chrono::milliseconds;

namespace {
std::string error_of(const std::string& text) {
    try {
        parse_link_settings(text);
    } catch (const SettingsError& e) {
        return e.what();
    }
    return "";
}
}  // namespace

TEST_CASE("link settings set each direction on its own") {
    const auto s = parse_link_settings(R"({"seed": 7,
        "up": {"delayMs": 30, "loss": {"model": "bernoulli", "rate": 0.01}},
        "down": {"delayMs": 20.5, "jitterMs": 4, "reorder": true, "rateKbps": 8000, "queueMs": 50,
                 "loss": {"model": "gilbert", "rate": 0.02, "meanBurst": 4}}})");
    CHECK(s.seed == 7);
    CHECK(s.up.delay == milliseconds(30));
    CHECK(s.up.loss.loss_rate() == doctest::Approx(0.01));
    CHECK(s.up.rate_bps == 0);
    CHECK_FALSE(s.up.reorder);
    CHECK(s.down.delay == std::chrono::microseconds(20500));
    CHECK(s.down.jitter == milliseconds(4));
    CHECK(s.down.reorder);
    CHECK(s.down.rate_bps == doctest::Approx(8e6));
    CHECK(s.down.queue_bytes == 50000);  // 50 ms at 1,000,000 bytes/s
    CHECK(s.down.loss.loss_rate() == doctest::Approx(0.02));
    CHECK(s.down.loss.mean_burst_length() == doctest::Approx(4));
    CHECK(direction_seed(7, false) != direction_seed(7, true));
}

TEST_CASE("empty settings are a plain wire, and the full Gilbert-Elliott model takes its four parameters") {
    const auto s = parse_link_settings("{}");
    CHECK(s.up.delay == milliseconds(0));
    CHECK(s.up.loss.lossless());
    CHECK(s.down.rate_bps == 0);
    const auto ge = parse_link_settings(R"({"up": {"loss": {"model": "gilbert-elliott", "p": 0.01, "r": 0.25, "lossGood": 0.001, "lossBad": 0.6}}})");
    CHECK(ge.up.loss.p == doctest::Approx(0.01));
    CHECK(ge.up.loss.r == doctest::Approx(0.25));
    CHECK(ge.up.loss.loss_good == doctest::Approx(0.001));
    CHECK(ge.up.loss.loss_bad == doctest::Approx(0.6));
    CHECK(ge.down.loss.lossless());
    CHECK(parse_link_settings(R"({"up": {"rateKbps": 100, "queueBytes": 3000}})").up.queue_bytes == 3000);
    CHECK(parse_link_settings(R"({"up": {"rateKbps": 10, "queueMs": 1}})").up.queue_bytes == 1500);  // at least one packet
}

TEST_CASE("bad link settings are refused with a message that names the key") {
    CHECK(error_of("{") .find("not JSON") != std::string::npos);
    CHECK(error_of("[]").find("expected a JSON object") != std::string::npos);
    CHECK(error_of(R"({"rtt": 5})").find("unknown key \"rtt\"") != std::string::npos);
    CHECK(error_of(R"({"up": {"delay": 5}})").find("link.up: unknown key \"delay\"") != std::string::npos);
    CHECK(error_of(R"({"up": {"delayMs": -1}})").find("link.up.delayMs: expected a number from 0") != std::string::npos);
    CHECK(error_of(R"({"down": {"delayMs": "5"}})").find("link.down.delayMs") != std::string::npos);
    CHECK(error_of(R"({"up": {"loss": 0.01}})").find("link.up.loss: expected {\"model\"") != std::string::npos);
    CHECK(error_of(R"({"up": {"loss": {"model": "pareto"}}})").find("unknown model \"pareto\"") != std::string::npos);
    CHECK(error_of(R"({"up": {"loss": {"model": "bernoulli", "rate": 1}}})").find("link.up.loss.rate") != std::string::npos);
    CHECK(error_of(R"({"up": {"loss": {"model": "gilbert", "rate": 0.6, "meanBurst": 1}}})").find("too high") != std::string::npos);
    CHECK(error_of(R"({"up": {"loss": {"model": "gilbert", "rate": 0.02, "meanBurst": 3, "p": 1}}})").find("unknown key \"p\"") != std::string::npos);
    CHECK(error_of(R"({"up": {"loss": {"model": "gilbert-elliott", "p": 0.1, "r": 0}}})").find("link.up.loss.r") != std::string::npos);
    CHECK(error_of(R"({"up": {"queueMs": 50}})").find("needs a bandwidth limit") != std::string::npos);
    CHECK(error_of(R"({"up": {"rateKbps": 100, "queueMs": 50, "queueBytes": 9000}})").find("not both") != std::string::npos);
    CHECK(error_of(R"({"up": {"reorder": 1}})").find("link.up.reorder") != std::string::npos);
    CHECK(error_of(R"({"seed": 1.5})").find("link.seed") != std::string::npos);
}

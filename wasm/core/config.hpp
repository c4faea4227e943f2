// Experiment configuration: the keys a host page (or a remote config) sets, parsed from JSON and validated.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "sample.hpp"

namespace h3probe {

enum class RunOrder { h2_first, h3_first, random };

struct Config {
    std::string h2_origin;             // HTTP/2-only test origin, e.g. "https://h2.example.com"
    std::string h3_origin;             // HTTP/3-enabled test origin (sends Alt-Svc)
    Arms arms = Arms::h2_h3;
    std::string aa_origin;             // A/A only: the treatment arm's origin, speaking the repeated protocol
    std::string noop_path = "/noop";   // the no-op endpoint on both origins
    std::string beacon_url = "/beacon";
    std::string config_id = "default";
    int prewarm_h3 = 2;                // sequential, timings discarded: teach Alt-Svc and open QUIC
    int prewarm_h2 = 1;                // sequential: warm the HTTP/2 origin too, so both arms start warm
    int requests_per_arm = 5;          // parallel, per arm
    double request_timeout_ms = 5000;  // per request (the platform aborts the fetch)
    double entry_wait_ms = 1000;       // how long to wait for a Resource Timing entry after the body is read
    double run_deadline_ms = 20000;    // the whole run; past it what was measured is beaconed
    RunOrder order = RunOrder::h2_first;
    bool enabled = true;               // the kill switch: false runs nothing (usually set by a remote config)
    double sample_rate = 1;            // probability that a page load runs the experiment at all
};

struct ConfigResult {
    std::optional<Config> config;
    std::vector<std::string> errors;  // every problem found, each naming its key
};

// Parses a JSON object of config keys (camelCase, see README); absent keys keep their defaults.
ConfigResult parse_config(std::string_view json_text);
// The same rules over an already-built JSON value: the browser module builds it from the page's config object, so it
// needs no JSON parser (which is a large share of the WASM).
ConfigResult validate_config(const nlohmann::json& doc);

std::string to_string(RunOrder order);

// What one arm asks: the origin, and the protocol its requests must arrive over (Sample::origin).
struct ArmTarget {
    Proto protocol;
    std::string origin;
};
ArmTarget arm_target(const Config& config, Phase arm);

}  // namespace h3probe

// Experiment configuration: the keys a host page (or a remote config) sets, parsed from JSON and validated.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

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
    int payload_bytes = 0;             // the arms' requests fetch a body of this many bytes; 0: the no-op's empty 204
};

struct ConfigResult {
    std::optional<Config> config;
    std::vector<std::string> errors;  // every problem found, each naming its key
};

// What validate_config reads of a config object: its keys and each value's kind and value. Two sources implement it,
// a parsed JSON document (parse_config, for the host tests and Node) and the page's own JS object (the browser
// module, which so links no JSON library); the rules below are written once, against this view.
class ConfigSource {
public:
    enum class Kind { absent, string, number, boolean, other };  // other: null, array or object
    virtual ~ConfigSource() = default;
    virtual bool is_object() const = 0;
    virtual std::vector<std::string> keys() const = 0;
    virtual Kind kind(const char* key) const = 0;
    // Each is called only for a key of that kind.
    virtual std::string string(const char* key) const = 0;
    virtual double number(const char* key) const = 0;
    virtual bool boolean(const char* key) const = 0;
};

// Parses a JSON object of config keys (camelCase, docs/embedding.md); absent keys keep their defaults.
ConfigResult parse_config(std::string_view json_text);
// The same rules over any source of config keys.
ConfigResult validate_config(const ConfigSource& doc);

std::string to_string(RunOrder order);

// What one arm asks: the origin, and the protocol its requests must arrive over (Sample::origin).
struct ArmTarget {
    Proto protocol;
    std::string origin;
};
ArmTarget arm_target(const Config& config, Phase arm);

}  // namespace h3probe

// The beacon payload (schema "h3probe/1"): the run's samples and summary, encoded to and decoded from JSON.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "quantiles.hpp"
#include "sample.hpp"

namespace h3probe {

inline constexpr const char* kBeaconSchema = "h3probe/1";

struct ArmSummary {
    Summary latency;     // over the arm's usable samples (request_class.hpp)
    int fallbacks = 0;   // class fallback: result ok over another protocol than the arm's
    int excluded = 0;    // every sample of the arm that does not count, fallbacks included
};

struct RunSummary {
    ArmSummary control, treatment;
    std::optional<double> diff_median_ms;  // median(treatment) - median(control), when both arms have data
};

RunSummary summarize_run(const std::vector<Sample>& samples);

// Facts about the client that help explain its numbers. No personal data: no host-page URL beyond its origin, no user
// id, no IP. Network Information API fields are absent where the browser has no such API.
struct ClientContext {
    std::string page_origin;
    std::string effective_type;             // navigator.connection.effectiveType: "4g", "3g", ...
    std::optional<double> rtt_ms;           // navigator.connection.rtt
    std::optional<double> downlink_mbps;    // navigator.connection.downlink
    std::optional<bool> save_data;          // navigator.connection.saveData
    bool visible_throughout = true;         // false: the page was hidden during the run (which then stopped)
    std::optional<double> module_load_ms;   // from searchCompleted() to the WASM module ready
    std::optional<double> timer_resolution_ms;  // smallest step of performance.now() seen (coarse in some browsers)
};

struct Beacon {
    std::string run_id;
    std::string page_load_id;
    std::string config_id;
    std::string module_version;
    std::string order;    // the order this run used: "h2-first" or "h3-first"
    std::string outcome;  // "complete", "deadline", "stopped" (page hidden, host asked), or "error"
    std::string error;    // why, when outcome is not "complete"
    double run_ms = 0;    // duration from start to beacon
    double sample_rate = 1;  // the probability under which this page load was sampled
    ClientContext context;
    std::vector<std::string> errors;  // problems the module met during the run (they travel here, not to the console)
    std::vector<Sample> samples;
    RunSummary summary;
};

std::string encode_beacon(const Beacon& beacon);

struct DecodeResult {
    std::optional<Beacon> beacon;  // summary recomputed from the samples: the client's own summary is not trusted
    std::string error;             // first problem found, naming its field
};

// Strict on every known field, tolerant of unknown ones so that newer clients can add fields (they are not kept).
// Text over kMaxBeaconBytes or nested deeper than kMaxJsonDepth is refused before it is parsed.
DecodeResult decode_beacon(std::string_view json_text);

}  // namespace h3probe

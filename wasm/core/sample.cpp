// Names of the sample enums as they appear in the beacon, and the rule for which samples an arm counts.
#include "sample.hpp"

namespace h3probe {

bool Sample::counts_for_arm() const {
    return phase != Phase::prewarm && result == SampleResult::ok && network_ms.has_value() &&
           protocol == expected_protocol(origin);
}

const char* to_string(Phase p) {
    switch (p) {
        case Phase::prewarm: return "prewarm";
        case Phase::control: return "control";
        case Phase::treatment: return "treatment";
    }
    return "?";
}

const char* to_string(Proto p) { return p == Proto::h3 ? "h3" : "h2"; }

const char* expected_protocol(Proto p) { return p == Proto::h3 ? "h3" : "h2"; }

const char* to_string(SampleResult r) {
    switch (r) {
        case SampleResult::ok: return "ok";
        case SampleResult::http_error: return "http_error";
        case SampleResult::network_error: return "network_error";
        case SampleResult::timeout: return "timeout";
        case SampleResult::aborted: return "aborted";
        case SampleResult::no_timing_entry: return "no_timing_entry";
        case SampleResult::timing_unavailable: return "timing_unavailable";
        case SampleResult::redirected: return "redirected";
        case SampleResult::cache_hit: return "cache_hit";
    }
    return "?";
}

bool parse_phase(const std::string& s, Phase& out) {
    for (Phase p : {Phase::prewarm, Phase::control, Phase::treatment})
        if (s == to_string(p)) return out = p, true;
    return false;
}

bool parse_proto(const std::string& s, Proto& out) {
    for (Proto p : {Proto::h2, Proto::h3})
        if (s == to_string(p)) return out = p, true;
    return false;
}

bool parse_result(const std::string& s, SampleResult& out) {
    for (SampleResult r : {SampleResult::ok, SampleResult::http_error, SampleResult::network_error, SampleResult::timeout,
                           SampleResult::aborted, SampleResult::no_timing_entry, SampleResult::timing_unavailable,
                           SampleResult::redirected, SampleResult::cache_hit})
        if (s == to_string(r)) return out = r, true;
    return false;
}

}  // namespace h3probe

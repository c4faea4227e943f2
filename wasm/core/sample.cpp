// Names of the sample enums as they appear in the beacon.
#include "sample.hpp"

namespace h3probe {

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
#define H3PROBE_RESULT_NAME(name, what) \
    case SampleResult::name: return #name;
        H3PROBE_SAMPLE_RESULTS(H3PROBE_RESULT_NAME)
#undef H3PROBE_RESULT_NAME
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
#define H3PROBE_PARSE_RESULT(name, what) \
    if (s == #name) return out = SampleResult::name, true;
    H3PROBE_SAMPLE_RESULTS(H3PROBE_PARSE_RESULT)
#undef H3PROBE_PARSE_RESULT
    return false;
}

}  // namespace h3probe

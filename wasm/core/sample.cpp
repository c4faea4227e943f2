// Names of the sample enums as they appear in the beacon.
#include "sample.hpp"

#include <iterator>

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

namespace {
#define H3PROBE_RESULT_NAME(name, what) #name,
constexpr const char* kResultNames[] = {H3PROBE_SAMPLE_RESULTS(H3PROBE_RESULT_NAME)};
#undef H3PROBE_RESULT_NAME
}  // namespace

const char* to_string(SampleResult r) { return kResultNames[static_cast<int>(r)]; }

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
    for (std::size_t i = 0; i < std::size(kResultNames); ++i)
        if (s == kResultNames[i]) return out = static_cast<SampleResult>(i), true;
    return false;
}

}  // namespace h3probe

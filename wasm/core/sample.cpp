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

const char* to_string(Arms a) {
    switch (a) {
        case Arms::h2_h3: return "h2-h3";
        case Arms::h2_h2: return "h2-h2";
        case Arms::h3_h3: return "h3-h3";
    }
    return "h2-h3";
}

Proto arm_protocol(Arms arms, Phase arm) {
    if (arms == Arms::h2_h2) return Proto::h2;
    if (arms == Arms::h3_h3) return Proto::h3;
    return arm == Phase::treatment ? Proto::h3 : Proto::h2;
}

bool parse_arms(const std::string& s, Arms& out) {
    for (Arms a : {Arms::h2_h3, Arms::h2_h2, Arms::h3_h3})
        if (s == to_string(a)) return out = a, true;
    return false;
}

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

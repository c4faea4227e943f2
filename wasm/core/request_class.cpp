// The classification rule (see request_class.hpp) and the class names as they are stored.
#include "request_class.hpp"

namespace h3probe {

RequestClass classify(const Sample& s) {
    if (s.phase == Phase::prewarm) return RequestClass::prewarm;
    return classify_measured(s);
}

RequestClass classify_measured(const Sample& s) {
    switch (s.result) {
        case SampleResult::ok: break;
        case SampleResult::http_error: return RequestClass::http_error;
        case SampleResult::network_error: return RequestClass::network_error;
        case SampleResult::timeout: return RequestClass::timeout;
        case SampleResult::aborted: return RequestClass::aborted;
        case SampleResult::no_timing_entry: return RequestClass::no_timing_entry;
        case SampleResult::timing_unavailable: return RequestClass::timing_unavailable;
        case SampleResult::redirected: return RequestClass::redirected;
        case SampleResult::cache_hit: return RequestClass::cache_hit;
    }
    if (s.protocol.empty()) return RequestClass::protocol_unknown;
    // The protocol expected is the one of the origin asked; the arm is the phase.
    if (s.protocol != to_string(s.origin)) return RequestClass::fallback;
    if (const char* seen = next_hop_name(s.server_protocol); *seen && s.protocol != seen)
        return RequestClass::protocol_mismatch;
    return s.phase == Phase::treatment ? RequestClass::usable_treatment : RequestClass::usable_control;
}

const char* next_hop_name(const std::string& server_protocol) {
#define H3PROBE_SERVER_PROTOCOL_MATCH(server, next_hop) \
    if (server_protocol == server) return next_hop;
    H3PROBE_SERVER_PROTOCOLS(H3PROBE_SERVER_PROTOCOL_MATCH)
#undef H3PROBE_SERVER_PROTOCOL_MATCH
    return "";
}

bool is_usable(RequestClass c) { return c == RequestClass::usable_control || c == RequestClass::usable_treatment; }

namespace {
#define H3PROBE_CLASS_NAME(name, what) #name,
constexpr const char* kNames[] = {H3PROBE_REQUEST_CLASSES(H3PROBE_CLASS_NAME)};
#undef H3PROBE_CLASS_NAME
#define H3PROBE_CLASS_TEXT(name, what) what,
constexpr const char* kTexts[] = {H3PROBE_REQUEST_CLASSES(H3PROBE_CLASS_TEXT)};
#undef H3PROBE_CLASS_TEXT
}  // namespace

const char* to_string(RequestClass c) { return kNames[static_cast<int>(c)]; }
const char* describe(RequestClass c) { return kTexts[static_cast<int>(c)]; }

}  // namespace h3probe

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
#define H3PROBE_CLASS_ROLE(name, role, what) ClassRole::role,
constexpr ClassRole kRoles[] = {H3PROBE_REQUEST_CLASSES(H3PROBE_CLASS_ROLE)};
#undef H3PROBE_CLASS_ROLE
#define H3PROBE_CLASS_NAME(name, role, what) #name,
constexpr const char* kNames[] = {H3PROBE_REQUEST_CLASSES(H3PROBE_CLASS_NAME)};
#undef H3PROBE_CLASS_NAME
#define H3PROBE_CLASS_TEXT(name, role, what) what,
constexpr const char* kTexts[] = {H3PROBE_REQUEST_CLASSES(H3PROBE_CLASS_TEXT)};
#undef H3PROBE_CLASS_TEXT
}  // namespace

const char* to_string(RequestClass c) { return kNames[static_cast<int>(c)]; }
const char* describe(RequestClass c) { return kTexts[static_cast<int>(c)]; }
ClassRole role_of(RequestClass c) { return kRoles[static_cast<int>(c)]; }

namespace {
#define H3PROBE_ESTIMAND_NAME(name, what) #name,
constexpr const char* kEstimandNames[] = {H3PROBE_ESTIMANDS(H3PROBE_ESTIMAND_NAME)};
#undef H3PROBE_ESTIMAND_NAME
#define H3PROBE_ESTIMAND_TEXT(name, what) what,
constexpr const char* kEstimandTexts[] = {H3PROBE_ESTIMANDS(H3PROBE_ESTIMAND_TEXT)};
#undef H3PROBE_ESTIMAND_TEXT
}  // namespace

const char* to_string(Estimand e) { return kEstimandNames[static_cast<int>(e)]; }
const char* describe(Estimand e) { return kEstimandTexts[static_cast<int>(e)]; }
bool parse_estimand(const std::string& s, Estimand& out) {
    for (std::size_t i = 0; i < sizeof kEstimandNames / sizeof *kEstimandNames; ++i)
        if (s == kEstimandNames[i]) {
            out = static_cast<Estimand>(i);
            return true;
        }
    return false;
}

std::uint8_t run_estimands(const std::uint8_t* control_counts, const std::uint8_t* treatment_counts) {
    const std::uint8_t* arms[2] = {control_counts, treatment_counts};
    bool all_usable = true;
    for (const std::uint8_t* counts : arms) {
        std::size_t values = 0, usable = 0;
        for (int c = 0; c < kRequestClassCount; ++c) {
            const auto cls = static_cast<RequestClass>(c);
            if (role_of(cls) == ClassRole::fault && counts[c] > 0) return 0;  // an instrument fault drops the run
            if (holds_value(cls)) values += counts[c];
            if (is_usable(cls)) usable += counts[c];
        }
        if (values == 0) return 0;  // one arm only: the run compares nothing
        all_usable = all_usable && usable == values;
    }
    return estimand_bit(Estimand::as_assigned) | (all_usable ? estimand_bit(Estimand::h3_worked) : 0);
}

const char* to_string(ClassRole r) {
    switch (r) {
        case ClassRole::measured: return "measured";
        case ClassRole::unfinished: return "unfinished";
        case ClassRole::failed: return "failed";
        case ClassRole::fault: return "fault";
        case ClassRole::prewarm: return "prewarm";
    }
    return "";
}

}  // namespace h3probe

// The one rule for which requests count: every sample gets exactly one class, decided here and stored with it. The
// browser's run summary, the collector's stored rows and the report all read the class; none of them re-derives it.
#pragma once

#include <cstdint>
#include <string>

#include "sample.hpp"

namespace h3probe {

// X(name, role, what it means). The order is the storage code and the order the report lists exclusions in; add new
// classes at the end. The role says how the class enters the comparison of the arms (ClassRole, below).
#define H3PROBE_REQUEST_CLASSES(X)                                                                                              \
    X(usable_control, measured, "result ok over h2 with a network time: counts in the HTTP/2 arm")                            \
    X(usable_treatment, measured, "result ok over h3 with a network time: counts in the HTTP/3 arm")                          \
    X(prewarm, prewarm, "a pre-warm request: never measured")                                                                 \
    X(fallback, measured, "result ok, but nextHopProtocol names another protocol than the arm's (e.g. h2 in the h3 arm)")    \
    X(protocol_unknown, fault, "result ok, but nextHopProtocol is empty: the protocol cannot be checked")                     \
    X(timing_unavailable, fault, "the Resource Timing entry had zeroed fields: no Timing-Allow-Origin")                       \
    X(timeout, unfinished, "aborted after the per-request timeout")                                                           \
    X(network_error, failed, "fetch() rejected")                                                                              \
    X(http_error, failed, "the no-op endpoint answered with a non-2xx status")                                                \
    X(no_timing_entry, fault, "no Resource Timing entry arrived in time")                                                     \
    X(aborted, unfinished, "the run ended before the request did")                                                            \
    X(redirected, fault, "the no-op endpoint redirected")                                                                     \
    X(cache_hit, fault, "served from a cache despite no-store and a unique URL")                                              \
    X(protocol_mismatch, measured, "result ok, but the origin's Server-Timing names another protocol than nextHopProtocol")

// How a class enters the comparison. The randomized unit is the run: a request never leaves its arm alone, since what
// removes it (a fallback, a timeout, a failure) goes with the network, and dropping it from one arm compares HTTP/3
// where it worked against HTTP/2 everywhere.
//   measured:   it finished with a time: that time counts in its arm, whatever protocol it went over (as assigned);
//   unfinished: it ran out of time (timeout) or the run ended first (aborted): it took at least as long as it ran, so
//               it counts in its arm as slower than every request that finished (kUnfinishedValue);
//   failed:     it ended without an answer (network or HTTP error): counted in its arm's failure rate, and in the
//               latency quantiles by the same rule as unfinished (a request that brought no answer is not a fast one);
//   fault:      the instrument cannot know its time (no Timing-Allow-Origin, no entry, no protocol, a cache, a
//               redirect): the whole run leaves both arms, counted by the class;
//   prewarm:    never measured.
enum class ClassRole : std::uint8_t { measured, unfinished, failed, fault, prewarm };

enum class RequestClass : std::uint8_t {
#define H3PROBE_ENUM_CLASS(name, role, what) name,
    H3PROBE_REQUEST_CLASSES(H3PROBE_ENUM_CLASS)
#undef H3PROBE_ENUM_CLASS
};

#define H3PROBE_COUNT_CLASS(name, role, what) +1
inline constexpr int kRequestClassCount = 0 H3PROBE_REQUEST_CLASSES(H3PROBE_COUNT_CLASS);
#undef H3PROBE_COUNT_CLASS

// The rule, in this order:
//   1. a pre-warm request is `prewarm`;
//   2. any result other than ok is excluded under that result's name, whatever protocol it went over (a request that
//      failed tells nothing about the protocol's speed);
//   3. result ok and nextHopProtocol empty: `protocol_unknown` (not a fallback: nothing says another protocol was used);
//   4. result ok over another protocol than the arm's (h2 for control, h3 for treatment): `fallback`;
//   5. the origin said (Server-Timing) which protocol it saw, and that is not nextHopProtocol: `protocol_mismatch`
//      (a proxy or middlebox ended the browser's connection; the time is not that of the protocol named). An origin
//      that sends no Server-Timing, or a name next_hop_name() does not know, is not checked;
//   6. otherwise the request is usable in its arm (result ok implies a network time: the decoder enforces it).
RequestClass classify(const Sample& s);
// Steps 2 to 6 of the rule whatever the sample's phase: the class a request would have in the arm of the origin it
// asked. A pre-warm request that comes out usable went over its origin's protocol, verified as an arm's request is
// (the connection-setup view, connection_setup.hpp, counts only those).
RequestClass classify_measured(const Sample& s);

// The two comparisons a report makes, each of the same runs in both arms (the run is the randomized unit):
//   as_assigned: every run with no instrument fault and a value in both arms; each arm holds all its requests that
//                hold a value (holds_value), whatever protocol they went over. The headline: what turning HTTP/3 on
//                does to the users' requests, users who cannot get HTTP/3 included.
//   h3_worked:   of those runs, the ones whose every request finished over its arm's protocol (each arm's requests
//                all usable): how much faster HTTP/3 is where it is used, both arms restricted to the same runs.
// A run's estimands are a bit set (estimand_bit), decided once from its counts by class and stored in its record.
#define H3PROBE_ESTIMANDS(X)                                                                                  \
    X(as_assigned, "as assigned: every run, each request in the arm it was assigned to, whatever protocol")  \
    X(h3_worked, "where HTTP/3 worked: the runs whose every request finished over its arm's protocol")

enum class Estimand : std::uint8_t {
#define H3PROBE_ENUM_ESTIMAND(name, what) name,
    H3PROBE_ESTIMANDS(H3PROBE_ENUM_ESTIMAND)
#undef H3PROBE_ENUM_ESTIMAND
};
inline constexpr std::uint8_t estimand_bit(Estimand e) { return static_cast<std::uint8_t>(1u << static_cast<unsigned>(e)); }
const char* to_string(Estimand e);
const char* describe(Estimand e);
bool parse_estimand(const std::string& s, Estimand& out);
// The estimands a run counts in (bits of estimand_bit), from its requests' counts by class per arm ([arm][class]).
std::uint8_t run_estimands(const std::uint8_t* control_counts, const std::uint8_t* treatment_counts);

// The Server-Timing protocol names the origins send (the server's own names: Caddy's {http.request.proto}, nginx's
// $server_protocol) and the nextHopProtocol each stands for. X(server name, nextHopProtocol).
#define H3PROBE_SERVER_PROTOCOLS(X) \
    X("HTTP/1.0", "http/1.0")       \
    X("HTTP/1.1", "http/1.1")       \
    X("HTTP/2.0", "h2")             \
    X("HTTP/2", "h2")               \
    X("HTTP/3.0", "h3")             \
    X("HTTP/3", "h3")

// The nextHopProtocol a server's protocol name stands for, or "" for a name not in the list above.
const char* next_hop_name(const std::string& server_protocol);

bool is_usable(RequestClass c);
ClassRole role_of(RequestClass c);
const char* to_string(ClassRole r);
// A request of this class holds a value in its arm (measured, unfinished or failed) when its run counts.
inline bool holds_value(RequestClass c) {
    const ClassRole r = role_of(c);
    return r == ClassRole::measured || r == ClassRole::unfinished || r == ClassRole::failed;
}
// The value a request that did not finish (unfinished or failed) holds in its arm, for every metric: above every time
// a finished request can have (kMaxDurationMs), so that it sorts after them all; a quantile or interval that reaches
// it is not estimable (report rows' `unfinished`).
inline constexpr double kUnfinishedValue = 1e9;
// 0 for the control arm, 1 for treatment; only meaningful for samples that are not pre-warm.
inline int arm_of(const Sample& s) { return s.phase == Phase::treatment ? 1 : 0; }

const char* to_string(RequestClass c);
const char* describe(RequestClass c);

}  // namespace h3probe

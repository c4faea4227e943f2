// The one rule for which requests count: every sample gets exactly one class, decided here and stored with it. The
// browser's run summary, the collector's stored rows and the report all read the class; none of them re-derives it.
#pragma once

#include <cstdint>
#include <string>

#include "sample.hpp"

namespace h3probe {

// X(name, what it means). The order is the storage code and the order the report lists exclusions in; add new
// classes at the end.
#define H3PROBE_REQUEST_CLASSES(X)                                                                                   \
    X(usable_control, "result ok over h2 with a network time: counts in the HTTP/2 arm")                          \
    X(usable_treatment, "result ok over h3 with a network time: counts in the HTTP/3 arm")                        \
    X(prewarm, "a pre-warm request: never measured")                                                              \
    X(fallback, "result ok, but nextHopProtocol names another protocol than the arm's (e.g. h2 in the h3 arm)")  \
    X(protocol_unknown, "result ok, but nextHopProtocol is empty: the protocol cannot be checked")               \
    X(timing_unavailable, "the Resource Timing entry had zeroed fields: no Timing-Allow-Origin")                  \
    X(timeout, "aborted after the per-request timeout")                                                           \
    X(network_error, "fetch() rejected")                                                                          \
    X(http_error, "the no-op endpoint answered with a non-2xx status")                                            \
    X(no_timing_entry, "no Resource Timing entry arrived in time")                                                \
    X(aborted, "the run ended before the request did")                                                            \
    X(redirected, "the no-op endpoint redirected")                                                                \
    X(cache_hit, "served from a cache despite no-store and a unique URL")                                         \
    X(protocol_mismatch, "result ok, but the origin's Server-Timing names another protocol than nextHopProtocol")

enum class RequestClass : std::uint8_t {
#define H3PROBE_ENUM_CLASS(name, what) name,
    H3PROBE_REQUEST_CLASSES(H3PROBE_ENUM_CLASS)
#undef H3PROBE_ENUM_CLASS
};

#define H3PROBE_COUNT_CLASS(name, what) +1
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
// 0 for the control arm, 1 for treatment; only meaningful for samples that are not pre-warm.
inline int arm_of(const Sample& s) { return s.phase == Phase::treatment ? 1 : 0; }

const char* to_string(RequestClass c);
const char* describe(RequestClass c);

}  // namespace h3probe

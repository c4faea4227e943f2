// One measured request: what was asked, what the browser actually did, and how long each phase took.
#pragma once

#include <optional>
#include <string>

#include "limits.hpp"

namespace h3probe {

enum class Phase { prewarm, control, treatment };
enum class Proto { h2, h3 };  // which test origin was asked, i.e. the protocol the request was meant to use
// The protocols of the control and treatment arms: the A/B experiment, or an A/A test of one protocol on two origins.
enum class Arms { h2_h3, h2_h2, h3_h3 };

// Why a sample does (ok) or does not carry a latency that can be analysed, as the browser saw it.
#define H3PROBE_SAMPLE_RESULTS(X)                                                                                 \
    X(ok, "the no-op endpoint answered 2xx and the Resource Timing entry was read")                             \
    X(http_error, "the no-op endpoint answered with a non-2xx status")                                          \
    X(network_error, "fetch() rejected")                                                                         \
    X(timeout, "aborted after requestTimeoutMs")                                                                 \
    X(aborted, "the run ended (deadline, page hidden) before the request did")                                  \
    X(no_timing_entry, "the body arrived but no Resource Timing entry did within entryWaitMs")                   \
    X(timing_unavailable, "the entry's detailed fields are zero: Timing-Allow-Origin is missing on the origin")  \
    X(redirected, "the no-op endpoint redirected: the time includes another round trip")                        \
    X(cache_hit, "served from a cache (transferSize 0, body size not) despite cache: 'no-store' and a unique URL")

enum class SampleResult {
#define H3PROBE_ENUM_RESULT(name, what) name,
    H3PROBE_SAMPLE_RESULTS(H3PROBE_ENUM_RESULT)
#undef H3PROBE_ENUM_RESULT
};

// The numbers measured of a sample, in beacon and storage order: durations in ms, then two sizes in bytes (no metric).
// Empty unless the Resource Timing entry had detailed fields. X(name, upper bound, whether the report can be made of it,
// what it is); the decoder, the beacon encoder, the collector's columns and the report's metrics all iterate this list.
// Entries are only ever added at its end (the stores keep each request's values in this order).
#define H3PROBE_SAMPLE_DURATIONS(X)                                                                                   \
    X(network_ms, kMaxDurationMs, true, "responseEnd - fetchStart: the network time (see resource_timing.cpp)")     \
    X(queue_ms, kMaxDurationMs, true, "network time not spent in dns, connect, request or response: stalls")       \
    X(dns_ms, kMaxDurationMs, true, "domainLookupEnd - domainLookupStart")                                          \
    X(connect_ms, kMaxDurationMs, true, "connectEnd - connectStart: TCP+TLS, or the QUIC handshake")                \
    X(tls_ms, kMaxDurationMs, true, "connectEnd - secureConnectionStart, part of connect_ms")                      \
    X(request_ms, kMaxDurationMs, true, "responseStart - requestStart: request sent until first byte")             \
    X(response_ms, kMaxDurationMs, true, "responseEnd - responseStart")                                             \
    X(start_ms, kMaxTimestampMs, false, "the entry's startTime (a timestamp, not a duration)")                      \
    X(fetch_ms, kMaxDurationMs, true, "wall time around fetch() as script saw it (includes scheduling)")           \
    X(body_bytes, kMaxTransferBytes, false, "encodedBodySize: the body's bytes as received (payloadBytes, uncompressed)")

struct Sample {
    Phase phase = Phase::control;
    int idx = 0;
    Proto origin = Proto::h2;
    SampleResult result = SampleResult::network_error;
    int http_status = 0;
    std::string protocol;          // nextHopProtocol as reported ("" when unknown)
    std::string server_protocol;   // the protocol the origin saw, from its Server-Timing "proto" ("" when not sent)
    std::optional<bool> reused;    // connection reused (no DNS/connect phase) or new
#define H3PROBE_DECLARE_DURATION(name, max, metric, what) std::optional<double> name;
    H3PROBE_SAMPLE_DURATIONS(H3PROBE_DECLARE_DURATION)
#undef H3PROBE_DECLARE_DURATION
};

const char* to_string(Phase p);
const char* to_string(Proto p);  // also the nextHopProtocol an origin of that protocol answers over
const char* to_string(SampleResult r);
// "h2-h3", "h2-h2" or "h3-h3": control's protocol, then treatment's.
const char* to_string(Arms a);
// The protocol an arm (control or treatment) asks for under `arms`.
Proto arm_protocol(Arms arms, Phase arm);
bool parse_arms(const std::string& s, Arms& out);
bool parse_phase(const std::string& s, Phase& out);
bool parse_proto(const std::string& s, Proto& out);
bool parse_result(const std::string& s, SampleResult& out);

}  // namespace h3probe

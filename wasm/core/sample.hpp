// One measured request: what was asked, what the browser actually did, and how long each phase took.
#pragma once

#include <optional>
#include <string>

namespace h3probe {

enum class Phase { prewarm, control, treatment };
enum class Proto { h2, h3 };  // which test origin was asked, i.e. the protocol the request was meant to use

// Why a sample does (result == ok) or does not carry a latency that can be analysed.
enum class SampleResult {
    ok,
    http_error,          // the no-op endpoint answered with a non-2xx status
    network_error,       // fetch() rejected
    timeout,             // aborted after request_timeout_ms
    aborted,             // the run ended (deadline, page hidden) before the request did
    no_timing_entry,     // the body arrived but no Resource Timing entry did within entry_wait_ms
    timing_unavailable,  // the entry has zeroed detailed fields: Timing-Allow-Origin is missing on the test origin
    redirected,          // the no-op endpoint redirected: the time includes another round trip
    cache_hit,           // served from a cache (transferSize 0) despite cache: 'no-store' and a unique URL
};

struct Sample {
    Phase phase = Phase::control;
    int idx = 0;
    Proto origin = Proto::h2;
    SampleResult result = SampleResult::network_error;
    int http_status = 0;
    std::string protocol;          // nextHopProtocol as reported ("" when unknown)
    std::optional<bool> reused;    // connection reused (no DNS/connect phase) or new
    // Network time and its phases, in ms; empty unless the Resource Timing entry had detailed fields.
    std::optional<double> network_ms;   // responseEnd - fetchStart (see README, "network time")
    std::optional<double> queue_ms;     // network time not spent in dns/connect/request/response: stalls and queueing
    std::optional<double> dns_ms;       // domainLookupEnd - domainLookupStart
    std::optional<double> connect_ms;   // connectEnd - connectStart, TCP+TLS or the QUIC handshake
    std::optional<double> tls_ms;       // connectEnd - secureConnectionStart, part of connect_ms
    std::optional<double> request_ms;   // responseStart - requestStart: request sent until first byte
    std::optional<double> response_ms;  // responseEnd - responseStart
    std::optional<double> start_ms;     // the entry's startTime
    std::optional<double> fetch_ms;     // wall time around fetch() as seen by script (includes scheduling)

    // A sample counts in its arm only when it carries a latency and went over the protocol its arm is about.
    bool counts_for_arm() const;
};

const char* to_string(Phase p);
const char* to_string(Proto p);
const char* to_string(SampleResult r);
// The nextHopProtocol value an arm requires: "h2" for the HTTP/2 origin, "h3" for the HTTP/3 origin.
const char* expected_protocol(Proto p);
bool parse_phase(const std::string& s, Phase& out);
bool parse_proto(const std::string& s, Proto& out);
bool parse_result(const std::string& s, SampleResult& out);

}  // namespace h3probe

// Resource Timing to sample: the definition of "network time" and its phases lives here.
#include "resource_timing.hpp"

#include <algorithm>
#include <cmath>

namespace h3probe {
namespace {

// Intervals are clamped at 0: a timestamp the browser left at 0 must not turn into a negative phase.
double span(double from, double to) { return (from > 0 && to > from) ? to - from : 0.0; }

}  // namespace

bool timing_is_restricted(const ResourceTimingEntry& e) {
    // Without TAO, requestStart/responseStart (and more) are 0 and nextHopProtocol is "".
    return e.request_start <= 0 && e.response_start <= 0;
}

Sample sample_from_outcome(const RequestOutcome& outcome) {
    Sample s;
    s.http_status = outcome.http_status;
    if (outcome.fetch_ended_ms >= outcome.fetch_started_ms)
        s.fetch_ms = outcome.fetch_ended_ms - outcome.fetch_started_ms;

    switch (outcome.status) {
        case RequestOutcome::Status::network_error: s.result = SampleResult::network_error; break;
        case RequestOutcome::Status::timeout: s.result = SampleResult::timeout; break;
        case RequestOutcome::Status::aborted: s.result = SampleResult::aborted; break;
        case RequestOutcome::Status::ok: s.result = SampleResult::ok; break;
    }
    if (outcome.entry) {
        s.protocol = outcome.entry->next_hop_protocol;
        s.server_protocol = outcome.entry->server_protocol;
    }
    if (s.result != SampleResult::ok) return s;

    if (!outcome.entry) {
        s.result = SampleResult::no_timing_entry;
        return s;
    }
    const ResourceTimingEntry& e = *outcome.entry;
    s.start_ms = e.start_time;
    if (timing_is_restricted(e)) {
        s.result = SampleResult::timing_unavailable;
        return s;
    }

    const double network = span(e.fetch_start, e.response_end);
    s.network_ms = network;
    s.dns_ms = span(e.domain_lookup_start, e.domain_lookup_end);
    s.connect_ms = span(e.connect_start, e.connect_end);
    s.tls_ms = e.secure_connection_start > 0 ? span(e.secure_connection_start, e.connect_end) : 0.0;
    s.request_ms = span(e.request_start, e.response_start);
    s.response_ms = span(e.response_start, e.response_end);
    s.queue_ms = std::max(0.0, network - *s.dns_ms - *s.connect_ms - *s.request_ms - *s.response_ms);
    // A reused connection has no connect phase: connectStart == connectEnd (spec: both equal domainLookupEnd).
    s.reused = e.connect_end <= e.connect_start;
    // Cut to the decoder's limit, as texts are: a beacon the collector would refuse is lost whole.
    s.body_bytes = std::min(e.encoded_body_size, kMaxTransferBytes);

    if (outcome.http_status < 200 || outcome.http_status > 299)
        s.result = SampleResult::http_error;
    else if (outcome.redirected)
        s.result = SampleResult::redirected;
    else if (e.transfer_size <= 0 && e.encoded_body_size > 0)
        // https://www.w3.org/TR/resource-timing/#dom-performanceresourcetiming-transfersize: 0 for a local cache. But
        // WebKit reports 0 for every cross-origin response, Timing-Allow-Origin or not: transferSize 0 alone cannot tell
        // a cache from a browser that hides the size. A cached response still has its body's size; the no-op's 204 has
        // no body, so it is never called a cache hit. It cannot come from an HTTP cache anyway: its URL is unique and
        // the origin sends no-store.
        s.result = SampleResult::cache_hit;
    return s;
}

}  // namespace h3probe

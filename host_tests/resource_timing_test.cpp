// Resource Timing entry -> sample: network time, phases, connection reuse, and every way a sample is not ok.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "request_class.hpp"
#include "resource_timing.hpp"

using namespace h3probe;

namespace {
// A new HTTP/2 connection: DNS 2 ms, connect 30 ms of which TLS 15 ms, 1 ms stall, 20 ms to first byte, 1 ms body.
ResourceTimingEntry new_connection_entry() {
    ResourceTimingEntry e;
    e.next_hop_protocol = "h2";
    e.start_time = e.fetch_start = 100;
    e.domain_lookup_start = 100;
    e.domain_lookup_end = 102;
    e.connect_start = 102;
    e.secure_connection_start = 117;
    e.connect_end = 132;
    e.request_start = 133;
    e.response_start = 153;
    e.response_end = 154;
    e.transfer_size = 312;
    return e;
}

RequestOutcome ok_outcome(const ResourceTimingEntry& e) {
    RequestOutcome o;
    o.status = RequestOutcome::Status::ok;
    o.http_status = 204;
    o.fetch_started_ms = 99.5;
    o.fetch_ended_ms = 155;
    o.entry = e;
    return o;
}
}  // namespace

TEST_CASE("network time is responseEnd - fetchStart and its phases add up to it") {
    const Sample s = sample_from_outcome(ok_outcome(new_connection_entry()));
    CHECK(s.result == SampleResult::ok);
    CHECK(s.protocol == "h2");
    CHECK(*s.network_ms == doctest::Approx(54));
    CHECK(*s.dns_ms == doctest::Approx(2));
    CHECK(*s.connect_ms == doctest::Approx(30));
    CHECK(*s.tls_ms == doctest::Approx(15));
    CHECK(*s.request_ms == doctest::Approx(20));
    CHECK(*s.response_ms == doctest::Approx(1));
    CHECK(*s.queue_ms == doctest::Approx(1));
    CHECK(*s.dns_ms + *s.connect_ms + *s.request_ms + *s.response_ms + *s.queue_ms == doctest::Approx(*s.network_ms));
    CHECK(*s.fetch_ms == doctest::Approx(55.5));
    CHECK(*s.start_ms == doctest::Approx(100));
    CHECK(s.reused == false);
    CHECK(*s.body_bytes == 0);
}

TEST_CASE("a payload's body size is kept as the entry gives it, cut at the decoder's limit") {
    ResourceTimingEntry e = new_connection_entry();
    e.transfer_size = 131072 + 95;
    e.encoded_body_size = 131072;
    RequestOutcome o = ok_outcome(e);
    o.http_status = 200;
    Sample s = sample_from_outcome(o);
    CHECK(s.result == SampleResult::ok);
    CHECK(*s.body_bytes == 131072);
    o.entry->encoded_body_size = kMaxTransferBytes + 1;
    o.entry->transfer_size = kMaxTransferBytes + 100;
    s = sample_from_outcome(o);
    CHECK(*s.body_bytes == kMaxTransferBytes);
}

TEST_CASE("a request on a warm connection is marked reused and has no connect time") {
    ResourceTimingEntry e;
    e.next_hop_protocol = "h3";
    e.start_time = e.fetch_start = e.domain_lookup_start = e.domain_lookup_end = e.connect_start = e.connect_end = 500;
    e.request_start = 500.3;
    e.response_start = 520;
    e.response_end = 520.2;
    e.transfer_size = 40;  // HTTP/3 compresses the headers of a repeated response well
    const Sample s = sample_from_outcome(ok_outcome(e));
    CHECK(s.reused == true);
    CHECK(*s.connect_ms == 0);
    CHECK(*s.tls_ms == 0);
    CHECK(*s.network_ms == doctest::Approx(20.2));
}

TEST_CASE("an entry without Timing-Allow-Origin is timing_unavailable, never a zero latency") {
    ResourceTimingEntry e;  // what Chromium exposes cross-origin without TAO
    e.start_time = e.fetch_start = 100;
    e.response_end = 154;
    const Sample s = sample_from_outcome(ok_outcome(e));
    CHECK(s.result == SampleResult::timing_unavailable);
    CHECK_FALSE(s.network_ms.has_value());
    CHECK_FALSE(s.request_ms.has_value());
    CHECK(s.protocol.empty());
}

TEST_CASE("failures keep their reason and carry no latency") {
    SUBCASE("no Resource Timing entry arrived") {
        RequestOutcome o = ok_outcome(new_connection_entry());
        o.entry.reset();
        const Sample s = sample_from_outcome(o);
        CHECK(s.result == SampleResult::no_timing_entry);
        CHECK_FALSE(s.network_ms.has_value());
        CHECK(s.fetch_ms.has_value());
    }
    SUBCASE("timeout") {
        RequestOutcome o;
        o.status = RequestOutcome::Status::timeout;
        CHECK(sample_from_outcome(o).result == SampleResult::timeout);
        CHECK_FALSE(sample_from_outcome(o).network_ms.has_value());
    }
    SUBCASE("network error") {
        RequestOutcome o;
        o.status = RequestOutcome::Status::network_error;
        CHECK(sample_from_outcome(o).result == SampleResult::network_error);
    }
    SUBCASE("a non-2xx answer keeps its timings but is an http_error") {
        RequestOutcome o = ok_outcome(new_connection_entry());
        o.http_status = 500;
        const Sample s = sample_from_outcome(o);
        CHECK(s.result == SampleResult::http_error);
        CHECK(s.http_status == 500);
        CHECK(s.network_ms.has_value());
    }
}

TEST_CASE("redirects and cache hits are recorded as such and not counted as network time") {
    SUBCASE("a redirected request") {
        RequestOutcome o = ok_outcome(new_connection_entry());
        o.redirected = true;
        CHECK(sample_from_outcome(o).result == SampleResult::redirected);
    }
    SUBCASE("a response from a cache transfers 0 bytes of its body's 12") {
        ResourceTimingEntry e = new_connection_entry();
        e.transfer_size = 0;
        e.encoded_body_size = 12;
        const Sample s = sample_from_outcome(ok_outcome(e));
        CHECK(s.result == SampleResult::cache_hit);
        CHECK(classify(s) == RequestClass::cache_hit);
    }
    SUBCASE("a body-less 204 with transferSize 0 (WebKit hides it cross-origin) is a network response") {
        ResourceTimingEntry e = new_connection_entry();
        e.transfer_size = e.encoded_body_size = 0;
        const Sample s = sample_from_outcome(ok_outcome(e));
        CHECK(s.result == SampleResult::ok);
        CHECK(classify(s) == RequestClass::usable_control);
        CHECK(s.network_ms == doctest::Approx(54));
    }
}
TEST_CASE("the Resource Timing field list names each entry attribute once, as the spec spells it") {
    std::set<std::string> attributes;
    int fields = 0;
#define H3PROBE_COUNT_FIELD(type, member, attribute) \
    ++fields;                                       \
    attributes.insert(attribute);
    H3PROBE_RESOURCE_TIMING_FIELDS(H3PROBE_COUNT_FIELD)
#undef H3PROBE_COUNT_FIELD
    CHECK(attributes.size() == static_cast<std::size_t>(fields));
    // The ones the definition of network time and its phases reads (https://www.w3.org/TR/resource-timing/).
    for (const char* a : {"nextHopProtocol", "startTime", "fetchStart", "domainLookupStart", "domainLookupEnd",
                          "connectStart", "connectEnd", "secureConnectionStart", "requestStart", "responseStart",
                          "responseEnd", "transferSize"})
        CHECK_MESSAGE(attributes.count(a) == 1, a);
}

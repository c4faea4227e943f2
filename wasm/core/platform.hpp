// The platform port: the only way the core reaches the world (network, clock, randomness, timers, beacon).
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace h3probe {

// The fields of one PerformanceResourceTiming entry the core needs, in ms relative to the page's time origin.
// https://www.w3.org/TR/resource-timing/#sec-performanceresourcetiming
struct ResourceTimingEntry {
    std::string next_hop_protocol;  // "h3", "h2", "http/1.1", or "" when Timing-Allow-Origin is missing
    double start_time = 0;
    double fetch_start = 0;
    double domain_lookup_start = 0;
    double domain_lookup_end = 0;
    double connect_start = 0;
    double connect_end = 0;
    double secure_connection_start = 0;
    double request_start = 0;
    double response_start = 0;
    double response_end = 0;
    double transfer_size = 0;
    double encoded_body_size = 0;
    double decoded_body_size = 0;
    int response_status = 0;  // 0 where the browser does not expose it
};

// What the platform reports once a request it was asked to start has ended, whichever way it ended.
struct RequestOutcome {
    enum class Status { ok, network_error, timeout, aborted };
    Status status = Status::network_error;
    int http_status = 0;
    bool redirected = false;
    double fetch_started_ms = 0;  // platform clock when fetch() was called
    double fetch_ended_ms = 0;    // platform clock when the body was read to the end (or the failure seen)
    std::optional<ResourceTimingEntry> entry;  // empty: no entry arrived before the deadline
    std::string error;                         // the platform's message on failure
};

struct RequestSpec {
    int id = 0;
    std::string url;
    double timeout_ms = 0;       // the platform aborts the fetch after this long
    double entry_wait_ms = 0;    // how long to wait for the Resource Timing entry after the body is read
};

class Platform {
public:
    using RequestDone = std::function<void(const RequestOutcome&)>;
    using TimerFired = std::function<void()>;

    virtual ~Platform() = default;
    virtual double now_ms() = 0;
    virtual double random() = 0;  // uniform in [0, 1)
    // Starts a request; `done` is called exactly once, later (never from inside start_request).
    virtual void start_request(const RequestSpec& spec, RequestDone done) = 0;
    // Asks the platform to give up on a request; its `done` then reports Status::aborted (or its real end if it already ended).
    virtual void abort_request(int id) = 0;
    // Returns a handle for cancel_timer.
    virtual int set_timer(double delay_ms, TimerFired fired) = 0;
    virtual void cancel_timer(int handle) = 0;
    // Returns false if the platform could not queue the beacon.
    virtual bool send_beacon(const std::string& url, const std::string& body) = 0;
};

}  // namespace h3probe

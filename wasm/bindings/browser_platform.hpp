// The browser adapter of the platform port: forwards each call to a small JS host object (web/src/browserHost.js).
#pragma once

#include <utility>
#include <vector>

#include <emscripten/val.h>

#include "beacon.hpp"
#include "platform.hpp"

namespace h3probe {

// The JS host does what only JS can (fetch + await the body, PerformanceObserver, sendBeacon, setTimeout) and
// calls back into the Session with plain objects, which this adapter turns into the core's structs.
class BrowserPlatform : public Platform {
public:
    explicit BrowserPlatform(emscripten::val host) : host_(std::move(host)) {}

    // Called by the Session when the host reports back.
    void deliver(int request_id, const emscripten::val& outcome);
    void fire_timer(int handle);

    double now_ms() override;
    double random() override;
    void start_request(const RequestSpec& spec, RequestDone done) override;
    void abort_request(int id) override;
    int set_timer(double delay_ms, TimerFired fired) override;
    void cancel_timer(int handle) override;
    bool send_beacon(const std::string& url, const std::string& body) override;

private:
    emscripten::val host_;
    // Pending callbacks by id: a handful at a time, so a vector (a std::map's tree code is larger in the module).
    std::vector<std::pair<int, RequestDone>> requests_;
    std::vector<std::pair<int, TimerFired>> timers_;
    int next_timer_ = 1;
};

// Conversions of the host's plain objects.
RequestOutcome outcome_from_js(const emscripten::val& o);
ClientContext context_from_js(const emscripten::val& o);

}  // namespace h3probe

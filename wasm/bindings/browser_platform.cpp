// Converts between the JS host's plain objects and the core's structs; nothing here decides anything.
#include "browser_platform.hpp"

#include <utility>

using emscripten::val;

namespace h3probe {
namespace {

// Missing or non-numeric fields read as 0 rather than trapping: the host object comes from the page's world.
double number(const val& o, const char* key) {
    const val v = o[key];
    return v.isNumber() ? v.as<double>() : 0.0;
}

std::string text(const val& o, const char* key) {
    const val v = o[key];
    return v.isString() ? v.as<std::string>() : std::string();
}

std::optional<double> maybe_number(const val& o, const char* key) {
    const val v = o[key];
    return v.isNumber() ? std::optional<double>(v.as<double>()) : std::nullopt;
}

}  // namespace

ClientContext context_from_js(const val& o) {
    ClientContext c;
    c.page_origin = text(o, "pageOrigin");
    c.effective_type = text(o, "effectiveType");
    c.rtt_ms = maybe_number(o, "rtt");
    c.downlink_mbps = maybe_number(o, "downlink");
    const val save = o["saveData"];
    if (save.isTrue() || save.isFalse()) c.save_data = save.isTrue();
    c.module_load_ms = maybe_number(o, "moduleLoadMs");
    c.timer_resolution_ms = maybe_number(o, "timerResolutionMs");
    return c;
}

RequestOutcome outcome_from_js(const val& o) {
    RequestOutcome out;
    const std::string status = text(o, "status");
    out.status = status == "ok"        ? RequestOutcome::Status::ok
                 : status == "timeout" ? RequestOutcome::Status::timeout
                 : status == "aborted" ? RequestOutcome::Status::aborted
                                       : RequestOutcome::Status::network_error;
    out.http_status = static_cast<int>(number(o, "httpStatus"));
    out.redirected = o["redirected"].isTrue();
    out.fetch_started_ms = number(o, "fetchStarted");
    out.fetch_ended_ms = number(o, "fetchEnded");
    out.error = text(o, "error");
    const val e = o["entry"];
    if (e.isNull() || e.isUndefined()) return out;
    ResourceTimingEntry entry;
    entry.next_hop_protocol = text(e, "nextHopProtocol");
    entry.start_time = number(e, "startTime");
    entry.fetch_start = number(e, "fetchStart");
    entry.domain_lookup_start = number(e, "domainLookupStart");
    entry.domain_lookup_end = number(e, "domainLookupEnd");
    entry.connect_start = number(e, "connectStart");
    entry.connect_end = number(e, "connectEnd");
    entry.secure_connection_start = number(e, "secureConnectionStart");
    entry.request_start = number(e, "requestStart");
    entry.response_start = number(e, "responseStart");
    entry.response_end = number(e, "responseEnd");
    entry.transfer_size = number(e, "transferSize");
    entry.encoded_body_size = number(e, "encodedBodySize");
    entry.decoded_body_size = number(e, "decodedBodySize");
    entry.response_status = static_cast<int>(number(e, "responseStatus"));
    out.entry = entry;
    return out;
}

void BrowserPlatform::deliver(int request_id, const val& outcome) {
    const auto it = requests_.find(request_id);
    if (it == requests_.end()) return;
    RequestDone done = std::move(it->second);
    requests_.erase(it);
    done(outcome_from_js(outcome));
}

void BrowserPlatform::fire_timer(int handle) {
    const auto it = timers_.find(handle);
    if (it == timers_.end()) return;
    TimerFired fired = std::move(it->second);
    timers_.erase(it);
    fired();
}

double BrowserPlatform::now_ms() { return host_.call<double>("now"); }

double BrowserPlatform::random() { return host_.call<double>("random"); }

void BrowserPlatform::start_request(const RequestSpec& spec, RequestDone done) {
    requests_[spec.id] = std::move(done);
    host_.call<void>("startRequest", spec.id, spec.url, spec.timeout_ms, spec.entry_wait_ms);
}

void BrowserPlatform::abort_request(int id) { host_.call<void>("abortRequest", id); }

int BrowserPlatform::set_timer(double delay_ms, TimerFired fired) {
    const int handle = next_timer_++;
    timers_[handle] = std::move(fired);
    host_.call<void>("setTimer", handle, delay_ms);
    return handle;
}

void BrowserPlatform::cancel_timer(int handle) {
    timers_.erase(handle);
    host_.call<void>("cancelTimer", handle);
}

bool BrowserPlatform::send_beacon(const std::string& url, const std::string& body) {
    return host_.call<bool>("sendBeacon", url, body);
}

}  // namespace h3probe

// Converts between the JS host's plain objects and the core's structs; nothing here decides anything.
#include "browser_platform.hpp"

#include <cmath>
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

// One overload per C++ type in H3PROBE_RESOURCE_TIMING_FIELDS. A non-finite number reads as 0 like a missing one.
void read(const val& o, const char* key, double& out) {
    const double d = number(o, key);
    out = std::isfinite(d) ? d : 0.0;
}
void read(const val& o, const char* key, std::string& out) { out = text(o, key); }

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
    c.run_context = text(o, "runContext");
    c.worker_fallback = text(o, "workerFallback");
    return c;
}

// Removes the entry with `id` and returns its callback (empty when there is none).
template <typename Callback>
static Callback take(std::vector<std::pair<int, Callback>>& pending, int id) {
    for (auto it = pending.begin(); it != pending.end(); ++it) {
        if (it->first != id) continue;
        Callback c = std::move(it->second);
        pending.erase(it);
        return c;
    }
    return Callback();
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
    // e is the browser's own PerformanceResourceTiming object: its attributes are read here, by the names in the
    // core's field list, so no second list of them exists in JS.
    ResourceTimingEntry entry;
#define H3PROBE_READ_ENTRY_FIELD(type, member, attribute) read(e, attribute, entry.member);
    H3PROBE_RESOURCE_TIMING_FIELDS(H3PROBE_READ_ENTRY_FIELD)
#undef H3PROBE_READ_ENTRY_FIELD
    // Found by the host in the entry's serverTiming list; cut to the decoder's limit, so that an origin's long text
    // cannot make the whole beacon refused.
    entry.server_protocol = text(o, "serverProtocol").substr(0, kMaxProtocolChars);
    out.entry = entry;
    return out;
}

void BrowserPlatform::deliver(int request_id, const val& outcome) {
    RequestDone done = take(requests_, request_id);
    if (done) done(outcome_from_js(outcome));
}

void BrowserPlatform::fire_timer(int handle) {
    TimerFired fired = take(timers_, handle);
    if (fired) fired();
}

double BrowserPlatform::now_ms() { return host_.call<double>("now"); }

double BrowserPlatform::random() { return host_.call<double>("random"); }

void BrowserPlatform::start_request(const RequestSpec& spec, RequestDone done) {
    take(requests_, spec.id);  // an id is never reused, but a second start must not leave two entries
    requests_.emplace_back(spec.id, std::move(done));
    host_.call<void>("startRequest", spec.id, spec.url, spec.timeout_ms, spec.entry_wait_ms);
}

void BrowserPlatform::abort_request(int id) { host_.call<void>("abortRequest", id); }

int BrowserPlatform::set_timer(double delay_ms, TimerFired fired) {
    const int handle = next_timer_++;
    timers_.emplace_back(handle, std::move(fired));
    host_.call<void>("setTimer", handle, delay_ms);
    return handle;
}

void BrowserPlatform::cancel_timer(int handle) {
    take(timers_, handle);
    host_.call<void>("cancelTimer", handle);
}

bool BrowserPlatform::send_beacon(const std::string& url, const std::string& body) {
    return host_.call<bool>("sendBeacon", url, body);
}

}  // namespace h3probe

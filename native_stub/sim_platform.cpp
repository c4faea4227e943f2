// The simulated platform: every callback is an event on a virtual clock, so runs are deterministic per seed.
#include "sim_platform.hpp"

#include <cmath>
#include <utility>

namespace h3probe::sim {

SimPlatform::SimPlatform(std::uint64_t seed) : client_rng_(seed), network_rng_(seed * 7919 + 17) {}

void SimPlatform::set_origin(const std::string& origin, OriginModel model) { origins_[origin] = std::move(model); }

int SimPlatform::schedule(double at, int key, std::function<void()> fn) {
    queue_.push(Event{at, seq_++, key, std::move(fn)});
    return key;
}

void SimPlatform::run(double until_ms) {
    while (!queue_.empty() && queue_.top().at <= until_ms) {
        Event e = queue_.top();
        queue_.pop();
        now_ = std::max(now_, e.at);
        const auto c = cancelled_.find(e.key);
        if (c != cancelled_.end() && c->second) continue;
        e.fn();
    }
    if (until_ms < 1e17) now_ = std::max(now_, until_ms);
}

RequestOutcome SimPlatform::model_outcome(const RequestSpec& spec, double& finish_at) {
    RequestOutcome out;
    out.fetch_started_ms = now_;
    const OriginModel* model = nullptr;
    std::string origin_key;
    for (const auto& [origin, m] : origins_)
        if (spec.url.compare(0, origin.size(), origin) == 0) model = &m, origin_key = origin;

    auto fail = [&](RequestOutcome::Status status, double after, const char* why) {
        out.status = status;
        out.error = why;
        finish_at = now_ + after;
        out.fetch_ended_ms = finish_at;
        return out;
    };
    if (!model || !model->up) return fail(RequestOutcome::Status::network_error, 1, "Failed to fetch");
    if (uniform_(network_rng_) < model->hang_rate)
        return fail(RequestOutcome::Status::timeout, spec.timeout_ms, "The operation was aborted due to timeout");
    if (uniform_(network_rng_) < model->error_rate)
        return fail(RequestOutcome::Status::network_error, model->base_ms, "Failed to fetch");

    const bool fallback = uniform_(network_rng_) < model->fallback_rate;
    const std::string protocol = fallback ? model->fallback_protocol : model->protocol;
    Connection& conn = connections_[origin_key + "|" + protocol];

    ResourceTimingEntry e;
    e.start_time = e.fetch_start = now_;
    e.next_hop_protocol = protocol;
    double ready = now_;
    if (conn.ready_at < 0) {
        // New connection: parallel requests that start before it is ready queue behind this one.
        e.domain_lookup_start = e.domain_lookup_end = now_;
        e.connect_start = now_;
        e.secure_connection_start = now_ + model->handshake_ms / 2;
        e.connect_end = now_ + model->handshake_ms;
        conn.ready_at = ready = e.connect_end;
    } else {
        e.domain_lookup_start = e.domain_lookup_end = e.connect_start = e.connect_end = now_;
        ready = std::max(now_, conn.ready_at);
    }
    std::lognormal_distribution<double> spread(0.0, model->sigma);
    const double latency = model->base_ms * (model->sigma > 0 ? spread(network_rng_) : 1.0);
    e.request_start = ready;
    e.response_start = ready + latency;
    e.response_end = e.response_start + 0.1;
    e.transfer_size = 300;  // headers of a 204 over the network
    if (e.response_end - now_ > spec.timeout_ms)
        return fail(RequestOutcome::Status::timeout, spec.timeout_ms, "The operation was aborted due to timeout");

    if (!model->timing_allow_origin) {
        // What a browser exposes for a cross-origin entry without Timing-Allow-Origin.
        const double start = e.start_time, end = e.response_end;
        e = ResourceTimingEntry{};
        e.start_time = e.fetch_start = start;
        e.response_end = end;
    }
    out.status = RequestOutcome::Status::ok;
    out.http_status = model->http_status;
    finish_at = e.response_end + 0.05;
    out.fetch_ended_ms = finish_at;
    if (uniform_(network_rng_) >= model->entry_missing_rate) out.entry = e;
    return out;
}

void SimPlatform::start_request(const RequestSpec& spec, RequestDone done) {
    started_.push_back({now_, spec});
    double finish_at = now_;
    RequestOutcome outcome = model_outcome(spec, finish_at);
    in_flight_[spec.id] = std::move(done);
    const int id = spec.id;
    schedule(finish_at, -id, [this, id, outcome] {
        const auto it = in_flight_.find(id);
        if (it == in_flight_.end()) return;
        RequestDone cb = std::move(it->second);
        in_flight_.erase(it);
        cb(outcome);
    });
}

void SimPlatform::abort_request(int id) {
    const auto it = in_flight_.find(id);
    if (it == in_flight_.end()) return;
    aborted_.push_back(id);
    cancelled_[-id] = true;
    RequestDone cb = std::move(it->second);
    in_flight_.erase(it);
    RequestOutcome out;
    out.status = RequestOutcome::Status::aborted;
    out.fetch_started_ms = out.fetch_ended_ms = now_;
    out.error = "aborted";
    // Like a browser, the abort is reported later, never from inside abort_request.
    schedule(now_, -1000000 - id, [cb, out] { cb(out); });
}

int SimPlatform::set_timer(double delay_ms, TimerFired fired) {
    const int handle = next_timer_++;
    schedule(now_ + std::max(0.0, delay_ms), handle, std::move(fired));
    return handle;
}

void SimPlatform::cancel_timer(int handle) { cancelled_[handle] = true; }

bool SimPlatform::send_beacon(const std::string& url, const std::string& body) {
    beacons_.push_back({now_, url, body});
    return beacon_accepted_;
}

}  // namespace h3probe::sim

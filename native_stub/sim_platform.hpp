// A simulated platform for host tests and simulations: a virtual clock, an event queue and a modelled network.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <queue>
#include <random>
#include <string>
#include <vector>

#include "platform.hpp"

namespace h3probe::sim {

// How one test origin behaves. Latencies are drawn per request: base_ms * lognormal(0, sigma).
struct OriginModel {
    std::string protocol = "h2";   // nextHopProtocol the browser reports
    double fallback_rate = 0;      // chance a request is answered over `fallback_protocol` instead (UDP blocked...)
    std::string fallback_protocol = "h2";
    double base_ms = 20;           // request sent -> first byte
    double sigma = 0;              // lognormal spread of base_ms
    double handshake_ms = 30;      // connect (TCP+TLS or QUIC) on a new connection
    double error_rate = 0;         // fetch() rejects
    double hang_rate = 0;          // never answers: the platform's timeout ends it
    int http_status = 204;
    bool timing_allow_origin = true;
    double entry_missing_rate = 0;  // the Resource Timing entry never arrives
    bool up = true;                 // false: every request fails at once (origin down)
};

struct StartedRequest {
    double at_ms;
    RequestSpec spec;
};

struct SentBeacon {
    double at_ms;
    std::string url, body;
};

class SimPlatform : public Platform {
public:
    explicit SimPlatform(std::uint64_t seed = 1);

    // Requests whose URL starts with `origin` follow `model`; others fail as network errors.
    void set_origin(const std::string& origin, OriginModel model);
    void set_beacon_accepted(bool accepted) { beacon_accepted_ = accepted; }

    // Runs queued events in time order until none is left or the clock passes `until_ms`.
    void run(double until_ms = 1e18);
    void advance(double ms) { run(now_ + ms); }

    const std::vector<StartedRequest>& started() const { return started_; }
    const std::vector<SentBeacon>& beacons() const { return beacons_; }
    const std::vector<int>& aborted() const { return aborted_; }
    std::size_t pending_events() const { return queue_.size(); }

    // Platform
    double now_ms() override { return now_; }
    double random() override { return uniform_(client_rng_); }
    void start_request(const RequestSpec& spec, RequestDone done) override;
    void abort_request(int id) override;
    int set_timer(double delay_ms, TimerFired fired) override;
    void cancel_timer(int handle) override;
    bool send_beacon(const std::string& url, const std::string& body) override;

private:
    struct Event {
        double at;
        std::uint64_t seq;
        int key;  // timer handle or request id (negated) so it can be cancelled
        std::function<void()> fn;
        bool operator>(const Event& o) const { return at != o.at ? at > o.at : seq > o.seq; }
    };
    struct Connection {
        double ready_at = -1;  // < 0: no connection yet
    };

    int schedule(double at, int key, std::function<void()> fn);
    RequestOutcome model_outcome(const RequestSpec& spec, double& finish_at);

    double now_ = 1000;  // like performance.now() a second after navigation
    std::uint64_t seq_ = 0;
    std::priority_queue<Event, std::vector<Event>, std::greater<>> queue_;
    std::map<int, bool> cancelled_;  // event key -> cancelled
    std::map<int, RequestDone> in_flight_;
    std::map<std::string, OriginModel> origins_;
    std::map<std::string, Connection> connections_;
    std::vector<StartedRequest> started_;
    std::vector<SentBeacon> beacons_;
    std::vector<int> aborted_;
    int next_timer_ = 1;
    bool beacon_accepted_ = true;
    std::mt19937_64 client_rng_;
    std::mt19937_64 network_rng_;
    std::uniform_real_distribution<double> uniform_{0.0, 1.0};
};

}  // namespace h3probe::sim

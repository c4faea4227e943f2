// One direction of the lab link: random loss on entry, then a FIFO delay queue that releases each packet at its departure time.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <random>
#include <vector>

namespace h3lab {

using Clock = std::chrono::steady_clock;
using Nanos = std::chrono::nanoseconds;

struct LinkParams {
    Nanos delay{0};        // one-way delay (RTT/2)
    Nanos jitter{0};       // extra delay drawn uniformly from [0, jitter] per packet
    double loss = 0.0;     // probability that a packet is dropped (Bernoulli, independent per packet)
    std::size_t queue_limit = 100000;  // packets in flight in this direction before tail drop
};

struct LinkCounters {
    std::uint64_t received = 0;   // packets read from the source device
    std::uint64_t lost = 0;       // dropped by the random-loss draw
    std::uint64_t overflow = 0;   // dropped because the queue was full
    std::uint64_t sent = 0;       // written to the other device
    std::uint64_t write_errors = 0;
    Nanos late_total{0};          // sum over released packets of (release time - scheduled departure)
    Nanos late_max{0};
};

class DelayLine {
public:
    DelayLine(LinkParams params, std::uint64_t seed);

    // Offers a packet that arrived at `now`; returns false if it was dropped (loss or full queue).
    bool push(std::vector<std::uint8_t> packet, Clock::time_point now);

    bool empty() const { return queue_.empty(); }
    // Departure time of the head packet; only meaningful when !empty().
    Clock::time_point next_departure() const { return queue_.front().departure; }
    // Removes and returns the head packet if its departure time is <= now; `now` minus that time counts as lateness.
    bool pop_due(Clock::time_point now, std::vector<std::uint8_t>& out);

    LinkCounters& counters() { return counters_; }
    const LinkCounters& counters() const { return counters_; }

private:
    struct Entry {
        Clock::time_point departure;
        std::vector<std::uint8_t> packet;
    };
    LinkParams params_;
    std::mt19937_64 rng_;
    std::deque<Entry> queue_;
    Clock::time_point last_departure_{};
    LinkCounters counters_;
};

}  // namespace h3lab

// One direction of the lab link: a bandwidth bottleneck with a byte queue, Gilbert-Elliott (bursty) loss, then a delay
// line with optional jitter that releases each packet at its departure time. Settings can change while packets are queued.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <random>
#include <utility>
#include <vector>

namespace h3lab {

using Clock = std::chrono::steady_clock;
using Nanos = std::chrono::nanoseconds;

/**
 * Gilbert-Elliott loss: a two-state Markov chain, Good and Bad, stepped once per packet. Before each packet the state
 * moves Good -> Bad with probability p and Bad -> Good with probability r; the packet is then lost with probability
 * loss_good in Good and loss_bad in Bad. In the long run the chain is in Bad a share p / (p + r) of packets, so the loss
 * rate is (r * loss_good + p * loss_bad) / (p + r).
 * - The simple Gilbert model (loss_good 0, loss_bad 1) loses exactly the packets sent in Bad: loss rate p / (p + r), and
 *   loss bursts (runs of consecutive lost packets) are geometric with mean 1 / r. gilbert(rate, mean_burst) builds it.
 * - Independent (Bernoulli) loss is p 0, loss_good = rate: bernoulli(rate).
 * The chain starts in Good and restarts there when the settings change (see DelayLine::configure).
 */
struct LossModel {
    double p = 0.0;          // P(Good -> Bad) per packet
    double r = 1.0;          // P(Bad -> Good) per packet
    double loss_good = 0.0;  // P(lost | Good)
    double loss_bad = 1.0;   // P(lost | Bad)

    static LossModel none() { return LossModel{}; }
    static LossModel bernoulli(double rate) { return LossModel{0.0, 1.0, rate, 1.0}; }
    // Loss rate `rate` (0 <= rate < 1) in bursts of mean length `mean_burst` (>= 1 packet): r = 1 / mean_burst,
    // p = rate * r / (1 - rate). mean_burst 1 with rate > 0 needs r = 1: every Bad packet is followed by a Good one.
    static LossModel gilbert(double rate, double mean_burst);

    // The long-run share of packets lost, and the mean length of a run of consecutive losses (0 if nothing is lost).
    double loss_rate() const;
    double mean_burst_length() const;
    bool lossless() const { return loss_good <= 0.0 && (p <= 0.0 || loss_bad <= 0.0); }
};

struct LinkParams {
    Nanos delay{0};        // one-way propagation delay (RTT/2)
    Nanos jitter{0};       // extra delay drawn uniformly from [0, jitter] per packet
    bool reorder = false;  // false: a packet never leaves before the one ahead of it (jitter without reordering)
    LossModel loss;
    // Bottleneck: 0 means none. A packet is serialised at rate_bps after the packets ahead of it; while earlier packets
    // wait, their bytes sit in a FIFO queue of queue_bytes, and a packet that does not fit is dropped (tail drop).
    double rate_bps = 0.0;
    std::size_t queue_bytes = 0;
    std::size_t queue_limit = 100000;  // packets held in this direction (memory bound) before tail drop
};

struct LinkCounters {
    std::uint64_t received = 0;     // packets offered (read from the source device)
    std::uint64_t lost = 0;         // dropped by the loss model
    std::uint64_t loss_bursts = 0;  // runs of consecutive packets dropped by the loss model
    std::uint64_t overflow = 0;     // dropped because the bottleneck queue (or the packet limit) was full
    std::uint64_t sent = 0;         // written to the other device
    std::uint64_t write_errors = 0;
    std::uint64_t bytes_sent = 0;
    Nanos late_total{0};            // sum over released packets of (release time - scheduled departure)
    Nanos late_max{0};
};

class DelayLine {
public:
    DelayLine(LinkParams params, std::uint64_t seed);

    // New settings for packets that arrive from now on; packets already queued keep their departure times, and no later
    // packet leaves before them unless reorder is on. Reseeds the random stream and puts the loss chain back in Good.
    void configure(LinkParams params, std::uint64_t seed);
    const LinkParams& params() const { return params_; }

    // Offers a packet that arrived at `now`; returns false if it was dropped (queue full or lost).
    bool push(std::vector<std::uint8_t> packet, Clock::time_point now);

    bool empty() const { return queue_.empty(); }
    std::size_t size() const { return queue_.size(); }
    // Departure time of the earliest packet; only meaningful when !empty().
    Clock::time_point next_departure() const { return queue_.begin()->first.first; }
    // The latest departure scheduled so far (the newest packet's, when reordering is off).
    Clock::time_point last_departure() const { return last_departure_; }
    // Removes and returns the earliest packet if its departure time is <= now; `now` minus that time counts as lateness.
    bool pop_due(Clock::time_point now, std::vector<std::uint8_t>& out);

    LinkCounters& counters() { return counters_; }
    const LinkCounters& counters() const { return counters_; }
    // The counters since the last call (or since construction), which starts a new period.
    LinkCounters take_counters();

private:
    bool draw_loss();

    LinkParams params_;
    std::mt19937_64 rng_;
    bool bad_ = false;         // the loss chain's state
    bool last_lost_ = false;   // the previous packet past the queue was lost (burst counting)
    std::map<std::pair<Clock::time_point, std::uint64_t>, std::vector<std::uint8_t>> queue_;  // (departure, arrival no.)
    std::uint64_t seq_ = 0;
    Clock::time_point last_departure_{};
    Clock::time_point link_free_{};  // when the bottleneck finishes serialising what it holds
    LinkCounters counters_;
};

/** Adds a period's counters to a running total (late_max: the larger). */
void accumulate(LinkCounters& total, const LinkCounters& period);

}  // namespace h3lab

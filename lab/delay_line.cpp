// Loss draw and departure-time rule of one link direction (see delay_line.hpp).
#include "delay_line.hpp"

#include <algorithm>
#include <utility>

namespace h3lab {

DelayLine::DelayLine(LinkParams params, std::uint64_t seed) : params_(params), rng_(seed) {}

bool DelayLine::push(std::vector<std::uint8_t> packet, Clock::time_point now) {
    ++counters_.received;
    if (params_.loss > 0.0 && std::bernoulli_distribution(params_.loss)(rng_)) {
        ++counters_.lost;
        return false;
    }
    if (queue_.size() >= params_.queue_limit) {
        ++counters_.overflow;
        return false;
    }
    Nanos extra{0};
    if (params_.jitter.count() > 0) {
        extra = Nanos(std::uniform_int_distribution<std::int64_t>(0, params_.jitter.count())(rng_));
    }
    // A link does not reorder: with jitter a packet never leaves before the one ahead of it (FIFO), so TCP sees
    // delay variation, not spurious reordering that would trigger fast retransmits of its own.
    const auto departure = std::max(now + params_.delay + extra, last_departure_);
    last_departure_ = departure;
    queue_.push_back(Entry{departure, std::move(packet)});
    return true;
}

bool DelayLine::pop_due(Clock::time_point now, std::vector<std::uint8_t>& out) {
    if (queue_.empty() || queue_.front().departure > now) return false;
    const Nanos late = now - queue_.front().departure;
    counters_.late_total += late;
    counters_.late_max = std::max(counters_.late_max, late);
    out = std::move(queue_.front().packet);
    queue_.pop_front();
    return true;
}

}  // namespace h3lab

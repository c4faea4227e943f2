// Bottleneck, loss chain and departure-time rule of one link direction (see delay_line.hpp).
#include "delay_line.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace h3lab {

LossModel LossModel::gilbert(double rate, double mean_burst) {
    if (!(rate >= 0.0 && rate < 1.0)) throw std::invalid_argument("loss rate must be in [0, 1)");
    if (!(mean_burst >= 1.0)) throw std::invalid_argument("mean burst length must be at least 1 packet");
    if (rate == 0.0) return none();
    const double r = 1.0 / mean_burst;
    const double p = rate * r / (1.0 - rate);
    if (p > 1.0) throw std::invalid_argument("loss rate too high for that burst length (needs P(Good->Bad) > 1)");
    return LossModel{p, r, 0.0, 1.0};
}

double LossModel::loss_rate() const {
    if (p <= 0.0) return loss_good;
    return (r * loss_good + p * loss_bad) / (p + r);
}

double LossModel::mean_burst_length() const {
    // Exact for the simple Gilbert model (a run of losses is a stay in Bad); for Bernoulli loss it is 1 / (1 - rate).
    if (lossless()) return 0.0;
    if (loss_good <= 0.0 && loss_bad >= 1.0) return 1.0 / r;
    if (p <= 0.0) return 1.0 / (1.0 - loss_good);
    return std::nan("");  // general four-parameter case: no closed form used here
}

DelayLine::DelayLine(LinkParams params, std::uint64_t seed) : params_(params), rng_(seed) {}

void DelayLine::configure(LinkParams params, std::uint64_t seed) {
    params_ = params;
    rng_.seed(seed);
    bad_ = false;
    last_lost_ = false;
}

bool DelayLine::draw_loss() {
    const LossModel& m = params_.loss;
    if (m.lossless()) return false;
    std::uniform_real_distribution<double> u(0.0, 1.0);
    if (m.p > 0.0) bad_ = bad_ ? !(u(rng_) < m.r) : u(rng_) < m.p;
    const double loss = bad_ ? m.loss_bad : m.loss_good;
    return loss >= 1.0 || (loss > 0.0 && u(rng_) < loss);
}

bool DelayLine::push(std::vector<std::uint8_t> packet, Clock::time_point now) {
    ++counters_.received;
    if (queue_.size() >= params_.queue_limit) {
        ++counters_.overflow;
        return false;
    }
    Clock::time_point ready = now;
    if (params_.rate_bps > 0.0) {
        // The bytes still waiting for the bottleneck: its backlog time at the bottleneck's rate.
        const double backlog_s = std::max(0.0, std::chrono::duration<double>(link_free_ - now).count());
        const double backlog_bytes = backlog_s * params_.rate_bps / 8.0;
        if (backlog_bytes + static_cast<double>(packet.size()) > static_cast<double>(params_.queue_bytes)) {
            ++counters_.overflow;
            return false;
        }
        const auto start = std::max(now, link_free_);
        link_free_ = start + Nanos(static_cast<long long>(std::llround(static_cast<double>(packet.size()) * 8e9 / params_.rate_bps)));
        ready = link_free_;
    }
    // Lost after the bottleneck: a lost packet has used its share of the bottleneck, as on a path that drops it further on.
    const bool lost = draw_loss();
    if (lost) {
        ++counters_.lost;
        if (!last_lost_) ++counters_.loss_bursts;
        last_lost_ = true;
        return false;
    }
    last_lost_ = false;
    Nanos extra{0};
    if (params_.jitter.count() > 0) {
        extra = Nanos(std::uniform_int_distribution<std::int64_t>(0, params_.jitter.count())(rng_));
    }
    auto departure = ready + params_.delay + extra;
    // Without reordering a packet never leaves before the one ahead of it (FIFO), so TCP sees delay variation, not
    // reordering that would trigger fast retransmits of its own; with it, each packet keeps its own draw.
    if (!params_.reorder) departure = std::max(departure, last_departure_);
    last_departure_ = std::max(last_departure_, departure);
    queue_.emplace(std::make_pair(departure, seq_++), std::move(packet));
    return true;
}

bool DelayLine::pop_due(Clock::time_point now, std::vector<std::uint8_t>& out) {
    if (queue_.empty() || queue_.begin()->first.first > now) return false;
    auto head = queue_.begin();
    const Nanos late = now - head->first.first;
    counters_.late_total += late;
    counters_.late_max = std::max(counters_.late_max, late);
    out = std::move(head->second);
    queue_.erase(head);
    return true;
}

LinkCounters DelayLine::take_counters() {
    LinkCounters period = counters_;
    counters_ = LinkCounters{};
    return period;
}

void accumulate(LinkCounters& total, const LinkCounters& period) {
    total.received += period.received;
    total.lost += period.lost;
    total.loss_bursts += period.loss_bursts;
    total.overflow += period.overflow;
    total.sent += period.sent;
    total.write_errors += period.write_errors;
    total.bytes_sent += period.bytes_sent;
    total.late_total += period.late_total;
    total.late_max = std::max(total.late_max, period.late_max);
}

}  // namespace h3lab

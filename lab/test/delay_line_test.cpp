// The lab relay's link model (simulated time): delay, jitter with and without reordering, seeded Bernoulli and
// Gilbert-Elliott loss (rate and burst lengths against the parameters), the bandwidth limit and its queue.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "delay_line.hpp"

using namespace h3lab;
using std::chrono::milliseconds;

namespace {
std::vector<std::uint8_t> packet(std::uint8_t tag) { return std::vector<std::uint8_t>{tag, 0x45, 0x00}; }
const Clock::time_point t0{};
}  // namespace

TEST_CASE("a packet leaves exactly one one-way delay after it arrived") {
    LinkParams p;
    p.delay = milliseconds(25);
    DelayLine line(p, 1);
    REQUIRE(line.push(packet(1), t0));
    CHECK(line.next_departure() == t0 + milliseconds(25));
    std::vector<std::uint8_t> out;
    CHECK_FALSE(line.pop_due(t0 + milliseconds(24), out));
    REQUIRE(line.pop_due(t0 + milliseconds(25), out));
    CHECK(out == packet(1));
    CHECK(line.empty());
}

TEST_CASE("with jitter packets still leave in arrival order, each delayed by at least the base delay") {
    LinkParams p;
    p.delay = milliseconds(10);
    p.jitter = milliseconds(20);
    DelayLine line(p, 7);
    for (int i = 0; i < 200; ++i) line.push(packet(static_cast<std::uint8_t>(i)), t0 + std::chrono::microseconds(100 * i));
    std::vector<std::uint8_t> out;
    Clock::time_point last = t0;
    for (int i = 0; i < 200; ++i) {
        const auto departs = line.next_departure();
        CHECK(departs >= last);
        CHECK(departs >= t0 + std::chrono::microseconds(100 * i) + milliseconds(10));
        CHECK(departs <= t0 + std::chrono::microseconds(100 * i) + milliseconds(30) + milliseconds(20));
        REQUIRE(line.pop_due(departs, out));
        CHECK(out[0] == static_cast<std::uint8_t>(i));
        last = departs;
    }
}

TEST_CASE("random loss drops about the configured share, the same packets for the same seed") {
    LinkParams p;
    p.loss = LossModel::bernoulli(0.03);
    DelayLine a(p, 42), b(p, 42), c(p, 43);
    std::vector<bool> kept_a, kept_b, kept_c;
    for (int i = 0; i < 20000; ++i) {
        kept_a.push_back(a.push(packet(0), t0));
        kept_b.push_back(b.push(packet(0), t0));
        kept_c.push_back(c.push(packet(0), t0));
    }
    CHECK(kept_a == kept_b);
    CHECK(kept_a != kept_c);
    CHECK(a.counters().received == 20000);
    CHECK(a.counters().lost > 500);   // expected 600, sd ~24
    CHECK(a.counters().lost < 700);
}

TEST_CASE("zero loss never drops and a full queue drops at the tail") {
    LinkParams p;
    p.queue_limit = 3;
    DelayLine line(p, 1);
    for (int i = 0; i < 5; ++i) line.push(packet(static_cast<std::uint8_t>(i)), t0);
    CHECK(line.counters().lost == 0);
    CHECK(line.counters().overflow == 2);
    std::vector<std::uint8_t> out;
    REQUIRE(line.pop_due(t0, out));
    CHECK(out[0] == 0);
}

TEST_CASE("a packet released after its departure time counts as late by the difference") {
    LinkParams p;
    p.delay = milliseconds(5);
    DelayLine line(p, 1);
    line.push(packet(1), t0);
    line.push(packet(2), t0);
    std::vector<std::uint8_t> out;
    REQUIRE(line.pop_due(t0 + milliseconds(5), out));
    REQUIRE(line.pop_due(t0 + milliseconds(7), out));
    CHECK(line.counters().late_total == milliseconds(2));
    CHECK(line.counters().late_max == milliseconds(2));
}

namespace {
// Offers `n` packets at one instant each and returns, per packet, whether the loss model dropped it.
std::vector<bool> loss_pattern(const LossModel& model, std::uint64_t seed, int n) {
    LinkParams p;
    p.loss = model;
    DelayLine line(p, seed);
    std::vector<bool> lost;
    lost.reserve(static_cast<std::size_t>(n));
    std::vector<std::uint8_t> out;
    for (int i = 0; i < n; ++i) {
        lost.push_back(!line.push(packet(0), t0));
        while (line.pop_due(t0, out)) {}
    }
    CHECK(line.counters().lost == static_cast<std::uint64_t>(std::count(lost.begin(), lost.end(), true)));
    return lost;
}
struct Bursts {
    double rate = 0, mean = 0, single_share = 0;
    std::uint64_t count = 0;
};
Bursts bursts_of(const std::vector<bool>& lost) {
    Bursts b;
    std::uint64_t lost_n = 0, singles = 0, run = 0;
    for (std::size_t i = 0; i <= lost.size(); ++i) {
        if (i < lost.size() && lost[i]) { ++run; ++lost_n; continue; }
        if (run > 0) { ++b.count; if (run == 1) ++singles; }
        run = 0;
    }
    b.rate = static_cast<double>(lost_n) / static_cast<double>(lost.size());
    b.mean = b.count ? static_cast<double>(lost_n) / static_cast<double>(b.count) : 0;
    b.single_share = b.count ? static_cast<double>(singles) / static_cast<double>(b.count) : 0;
    return b;
}
}  // namespace

TEST_CASE("gilbert(rate, mean burst) sets P(Good->Bad) and P(Bad->Good) so that both come out as asked") {
    const auto m = LossModel::gilbert(0.03, 3);
    CHECK(m.r == doctest::Approx(1.0 / 3));
    CHECK(m.p == doctest::Approx(0.03 / 3 / 0.97));
    CHECK(m.loss_rate() == doctest::Approx(0.03));
    CHECK(m.mean_burst_length() == doctest::Approx(3));
    CHECK(LossModel::gilbert(0, 5).lossless());
    CHECK_THROWS_AS(LossModel::gilbert(0.6, 1), std::invalid_argument);  // would need p > 1
    CHECK_THROWS_AS(LossModel::gilbert(0.02, 0.5), std::invalid_argument);
    CHECK(LossModel::bernoulli(0.2).mean_burst_length() == doctest::Approx(1.25));
}

// Tolerances, at 10^6 packets per seed: the loss rate within 6 % of the parameter (relative), about 4.5 standard
// deviations of the count of lost packets (bursts are ~10^4, each of geometric length); the mean burst length within 5 %
// (about 6 standard deviations of a mean of 10^4 geometric lengths); the share of one-packet bursts (r for a geometric
// length) within 0.03 absolute. Five seeds, each must pass.
TEST_CASE("Gilbert loss: measured loss rate and mean burst length match the parameters, for several seeds") {
    for (std::uint64_t seed : {1, 2, 3, 4, 5}) {
        CAPTURE(seed);
        const auto b = bursts_of(loss_pattern(LossModel::gilbert(0.03, 3), seed, 1000000));
        CHECK(b.rate == doctest::Approx(0.03).epsilon(0.06));
        CHECK(b.mean == doctest::Approx(3.0).epsilon(0.05));
        CHECK(std::abs(b.single_share - 1.0 / 3) < 0.03);
    }
    // Long bursts too: 1 % loss in bursts of 8 packets.
    const auto b = bursts_of(loss_pattern(LossModel::gilbert(0.01, 8), 9, 1000000));
    CHECK(b.rate == doctest::Approx(0.01).epsilon(0.15));  // ~1250 bursts of sd ~7.5 packets: sd of the count ~4 %
    CHECK(b.mean == doctest::Approx(8.0).epsilon(0.10));   // sd of the mean ~2.6 %
}

TEST_CASE("four-parameter Gilbert-Elliott loss matches (r*lossGood + p*lossBad) / (p + r), and Bernoulli bursts are short") {
    const LossModel ge{0.01, 0.2, 0.001, 0.5};
    CHECK(ge.loss_rate() == doctest::Approx((0.2 * 0.001 + 0.01 * 0.5) / 0.21));
    const auto b = bursts_of(loss_pattern(ge, 3, 1000000));
    CHECK(b.rate == doctest::Approx(ge.loss_rate()).epsilon(0.06));
    const auto bern = bursts_of(loss_pattern(LossModel::bernoulli(0.05), 3, 1000000));
    CHECK(bern.rate == doctest::Approx(0.05).epsilon(0.03));  // 50,000 independent losses: sd 0.9 %
    CHECK(bern.mean == doctest::Approx(1.0 / 0.95).epsilon(0.02));
    // Bursty loss at the same rate has far longer bursts than independent loss.
    CHECK(bursts_of(loss_pattern(LossModel::gilbert(0.05, 4), 3, 1000000)).mean > 3 * bern.mean);
}

TEST_CASE("the loss pattern is fixed by the seed, and configure() reseeds and restarts the chain") {
    const auto a = loss_pattern(LossModel::gilbert(0.05, 3), 11, 5000);
    CHECK(a == loss_pattern(LossModel::gilbert(0.05, 3), 11, 5000));
    CHECK(a != loss_pattern(LossModel::gilbert(0.05, 3), 12, 5000));
    LinkParams p;
    p.loss = LossModel::gilbert(0.05, 3);
    DelayLine line(p, 99);
    for (int i = 0; i < 777; ++i) line.push(packet(0), t0);  // some state: chain maybe in Bad, random stream moved on
    line.configure(p, 11);
    std::vector<bool> again;
    std::vector<std::uint8_t> out;
    for (int i = 0; i < 5000; ++i) {
        again.push_back(!line.push(packet(0), t0));
        while (line.pop_due(t0, out)) {}
    }
    CHECK(again == a);
}

TEST_CASE("with reordering on, each packet keeps its own jitter draw and some overtake others") {
    LinkParams p;
    p.delay = milliseconds(10);
    p.jitter = milliseconds(20);
    p.reorder = true;
    DelayLine line(p, 7);
    for (int i = 0; i < 200; ++i) line.push(packet(static_cast<std::uint8_t>(i)), t0 + std::chrono::microseconds(100 * i));
    std::vector<std::uint8_t> out;
    int out_of_order = 0, last = -1;
    Clock::time_point prev = t0;
    while (!line.empty()) {
        const auto departs = line.next_departure();
        CHECK(departs >= prev);  // released in departure order
        REQUIRE(line.pop_due(departs, out));
        const int i = out[0];
        CHECK(departs >= t0 + std::chrono::microseconds(100 * i) + milliseconds(10));
        CHECK(departs <= t0 + std::chrono::microseconds(100 * i) + milliseconds(30));
        if (i < last) ++out_of_order;
        last = std::max(last, i);
        prev = departs;
    }
    CHECK(out_of_order > 50);  // arrivals 0.1 ms apart against 20 ms of jitter: most packets are overtaken
}

TEST_CASE("a bandwidth limit: throughput equals the rate when offered more, the queue bounds the wait and drops the rest") {
    LinkParams p;
    p.delay = milliseconds(20);
    p.rate_bps = 8e6;                // 1,000,000 bytes/s
    p.queue_bytes = 50000;           // 50 ms at that rate
    DelayLine line(p, 1);
    const std::vector<std::uint8_t> big(1000, 0x45);
    std::uint64_t released = 0, bytes_after_first = 0;
    Clock::time_point first{}, last{};
    Nanos max_wait{0};
    std::vector<std::uint8_t> out;
    for (int i = 0; i < 4000; ++i) {  // 1000 bytes every 0.5 ms for 2 s: 2 MB/s offered, twice the rate
        const auto now = t0 + std::chrono::microseconds(500 * i);
        while (!line.empty() && line.next_departure() <= now) {
            const auto d = line.next_departure();
            REQUIRE(line.pop_due(d, out));
            if (released++ == 0) first = d;
            else bytes_after_first += out.size();  // the bytes delivered in (first, last]
            last = d;
        }
        const auto before = line.counters().overflow;
        const auto queued = line.size();
        if (line.push(big, now) && line.counters().overflow == before) {
            REQUIRE(line.size() == queued + 1);
            // Without reordering the newest packet departs last: its wait is the latest departure minus its arrival.
            const auto newest = line.last_departure();
            max_wait = std::max(max_wait, std::chrono::duration_cast<Nanos>(newest - now));
        }
    }
    const double seconds = std::chrono::duration<double>(last - first).count();
    const double measured_bps = static_cast<double>(bytes_after_first) * 8 / seconds;
    CHECK(measured_bps == doctest::Approx(8e6).epsilon(0.01));
    // About half the offered packets cannot fit: dropped at the tail of the queue, never lost to the loss model.
    CHECK(line.counters().lost == 0);
    CHECK(static_cast<double>(line.counters().overflow) / 4000 == doctest::Approx(0.5).epsilon(0.05));
    // No packet waits longer than a full queue plus its own transmission (1 ms) plus the propagation delay.
    CHECK(max_wait <= milliseconds(50) + milliseconds(1) + milliseconds(20));
}

TEST_CASE("below the bandwidth limit nothing is dropped and each packet waits its transmission time plus the delay") {
    LinkParams p;
    p.delay = milliseconds(5);
    p.rate_bps = 8e6;
    p.queue_bytes = 20000;
    DelayLine line(p, 1);
    const std::vector<std::uint8_t> pkt(1000, 0x45);
    std::vector<std::uint8_t> out;
    for (int i = 0; i < 1000; ++i) {  // 1000 bytes every 2 ms: half the rate
        const auto now = t0 + milliseconds(2 * i);
        REQUIRE(line.push(pkt, now));
        CHECK(line.next_departure() == now + milliseconds(1) + milliseconds(5));
        REQUIRE(line.pop_due(line.next_departure(), out));
    }
    CHECK(line.counters().overflow == 0);
}

TEST_CASE("new settings apply to later packets only, and queued ones keep their departure and order") {
    LinkParams slow;
    slow.delay = milliseconds(100);
    DelayLine line(slow, 1);
    line.push(packet(1), t0);
    LinkParams fast;
    fast.delay = milliseconds(10);
    line.configure(fast, 2);
    line.push(packet(2), t0 + milliseconds(1));  // would leave at 11 ms, but not before packet 1 (no reordering)
    std::vector<std::uint8_t> out;
    REQUIRE(line.pop_due(t0 + milliseconds(100), out));
    CHECK(out[0] == 1);
    REQUIRE(line.pop_due(t0 + milliseconds(100), out));
    CHECK(out[0] == 2);
    const auto period = line.take_counters();
    CHECK(period.received == 2);
    CHECK(line.counters().received == 0);
}

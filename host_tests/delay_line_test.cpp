// The lab relay's link model: delay, FIFO order under jitter, seeded Bernoulli loss, queue limit (simulated time).
#include <doctest/doctest.h>

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
    p.loss = 0.03;
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

// The connection-setup view: which pre-warm request is a run's cold sample of each protocol, and the view's
// statistics over many runs through the report's inference.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "connection_setup.hpp"
#include "sample_builder.hpp"

using namespace h3probe;

namespace {

Sample prewarm(int idx, Proto origin, const char* protocol, bool reused, double connect = 0, const char* server = "",
               SampleResult result = SampleResult::ok) {
    Sample s = test::make_sample(Phase::prewarm, idx, origin, protocol,
                                 result == SampleResult::ok ? std::optional<double>(connect + 5) : std::nullopt, result);
    s.server_protocol = server;
    if (result == SampleResult::ok) {
        s.reused = reused;
        s.connect_ms = reused ? 0 : connect;
        s.tls_ms = reused ? 0 : connect / 2;
    }
    return s;
}

}  // namespace

TEST_CASE("cold setup: the first new, verified connection to each origin") {
    // Alt-Svc not yet known: the first request to the HTTP/3 origin goes over TCP, the second opens QUIC.
    const std::vector<Sample> learned = {prewarm(0, Proto::h3, "h2", false, 90), prewarm(1, Proto::h3, "h3", false, 45),
                                         prewarm(2, Proto::h2, "h2", false, 100)};
    ColdSetup s = cold_setup(learned);
    REQUIRE(s.cold[0] != nullptr);
    REQUIRE(s.cold[1] != nullptr);
    CHECK(s.cold[0]->idx == 2);
    CHECK(s.cold[1]->idx == 1);
    CHECK(s.outcome[0] == SetupOutcome::cold);
    CHECK(s.outcome[1] == SetupOutcome::cold);
    CHECK(s.first_h3 == FirstH3::over_other);

    // Alt-Svc remembered (or QUIC forced): the first request is QUIC, the second rides it. Given out of idx order.
    const std::vector<Sample> remembered = {prewarm(2, Proto::h2, "h2", false, 100), prewarm(1, Proto::h3, "h3", true),
                                            prewarm(0, Proto::h3, "h3", false, 50, "HTTP/3.0")};
    s = cold_setup(remembered);
    REQUIRE(s.cold[1] != nullptr);
    CHECK(s.cold[1]->idx == 0);
    CHECK(s.first_h3 == FirstH3::over_h3);

    // HTTP/3 never taken (UDP blocked): no cold HTTP/3 sample; the HTTP/2 one stands alone.
    const std::vector<Sample> blocked = {prewarm(0, Proto::h3, "h2", false, 90), prewarm(1, Proto::h3, "h2", true),
                                         prewarm(2, Proto::h2, "h2", false, 100)};
    s = cold_setup(blocked);
    CHECK(s.cold[1] == nullptr);
    CHECK(s.outcome[1] == SetupOutcome::unverified);
    CHECK(s.cold[0] != nullptr);
    CHECK(s.first_h3 == FirstH3::over_other);

    // Reused connections (a page that already talked to both origins), a Server-Timing that disagrees, a failure.
    const std::vector<Sample> reused = {prewarm(0, Proto::h3, "h3", true), prewarm(1, Proto::h3, "h3", false, 50, "HTTP/1.1"),
                                        prewarm(2, Proto::h2, "h2", true)};
    s = cold_setup(reused);
    CHECK(s.cold[0] == nullptr);
    CHECK(s.cold[1] == nullptr);
    CHECK(s.outcome[0] == SetupOutcome::reused);
    CHECK(s.outcome[1] == SetupOutcome::reused);
    CHECK(s.first_h3 == FirstH3::over_h3);
    const std::vector<Sample> failed = {prewarm(0, Proto::h3, "", false, 0, "", SampleResult::network_error),
                                        prewarm(1, Proto::h3, "h3", false, 50, "HTTP/1.1")};
    s = cold_setup(failed);
    CHECK(s.outcome[1] == SetupOutcome::unverified);
    CHECK(s.outcome[0] == SetupOutcome::absent);
    CHECK(s.first_h3 == FirstH3::unknown);
    // An ok without a reused flag is never a cold sample.
    Sample unknown = prewarm(0, Proto::h2, "h2", false, 100);
    unknown.reused.reset();
    const std::vector<Sample> unknown_only = {unknown};
    s = cold_setup(unknown_only);
    CHECK(s.cold[0] == nullptr);
    CHECK(s.outcome[0] == SetupOutcome::unverified);
}

namespace {

// The cold-setup records ([group byte][setup_record()] per run) of `runs` runs: per run, cold h3 at idx 0 (QUIC, connect
// base + 1 RTT), h3 reused at idx 1, cold h2 at idx 2 (connect base + 2 RTT); every fifth run in group 2, the rest in
// group 1.
std::vector<std::uint8_t> make_records(int runs, double rtt) {
    std::vector<std::uint8_t> out;
    std::mt19937_64 rng(7);
    std::normal_distribution<double> noise(0, 2), user(0, 5);
    const auto cold = [&](int idx, Proto origin, const char* protocol, const char* server, double connect) {
        Sample s = prewarm(idx, origin, protocol, false, connect, server);
        s.network_ms = connect + rtt + 1;
        return s;
    };
    for (int run = 0; run < runs; ++run) {
        const double base = 3 + std::abs(user(rng));  // the run's own device and path: shared by both setups
        const std::vector<Sample> samples = {cold(0, Proto::h3, "h3", "HTTP/3.0", base + rtt + std::abs(noise(rng))),
                                             prewarm(1, Proto::h3, "h3", true, 0, "HTTP/3.0"),
                                             cold(2, Proto::h2, "h2", "HTTP/2.0", base + 2 * rtt + std::abs(noise(rng)))};
        out.push_back(run % 5 == 0 ? 2 : 1);  // the group number, two bytes little-endian
        out.push_back(0);
        const std::vector<std::uint8_t> record = setup_record(cold_setup(samples));
        out.insert(out.end(), record.begin(), record.end());
    }
    return out;
}

}  // namespace

TEST_CASE("connection setup view: one round trip saved, paired within the run, by group") {
    ReportOptions o;
    o.percentiles = {0.5, 0.9, 0.95};
    const std::vector<std::uint8_t> records = make_records(200, 50);
    REQUIRE(records.size() == 200 * (kGroupNumberBytes + kSetupRecordBytes));
    const SetupReport rep = connection_setup_report(records.data(), records.size(), {"a", "b"}, o);
    REQUIRE(rep.error.empty());
    REQUIRE(rep.groups.size() == 3);
    const SetupGroup& all = rep.groups[0];
    CHECK(all.runs == 200);
    CHECK(all.paired == 200);
    CHECK(rep.groups[1].runs + rep.groups[2].runs == 200);
    CHECK(rep.groups[2].runs == 40);
    CHECK(all.outcomes[1][static_cast<int>(SetupOutcome::cold)] == 200);
    CHECK(all.first_h3[static_cast<int>(FirstH3::over_h3)] == 200);
    const GroupReport& connect = all.metric[static_cast<int>(SetupMetric::connect_ms)];
    REQUIRE(connect.analysis.rows.size() == 3);
    const QuantileDifferenceRow& p50 = connect.analysis.rows[0];
    CHECK(p50.diff_ms == doctest::Approx(-50).epsilon(0.05));
    CHECK(std::isfinite(p50.ci_ms_lo));
    CHECK(p50.ci_ms_hi < 0);
    // Paired by run: the runs' shared part cancels, so the interval is narrower than the arms' own spread.
    CHECK(connect.analysis.runs_paired == 200);
    REQUIRE(connect.paired.has_value());
    CHECK(connect.paired->median == doctest::Approx(-50).epsilon(0.05));
    CHECK(connect.paired->ci_median_hi - connect.paired->ci_median_lo < 2);
    // tls_ms: HTTP/2 only, the cold HTTP/2 values in both places.
    const GroupReport& tls = all.metric[static_cast<int>(SetupMetric::tls_ms)];
    REQUIRE(tls.analysis.rows.size() == 3);
    CHECK(tls.analysis.rows[0].h2 == doctest::Approx(connect.analysis.rows[0].h2 / 2).epsilon(0.05));
    CHECK(tls.analysis.rows[0].diff_ms == 0);
}

TEST_CASE("connection setup view: records that do not read are an error, not a guess") {
    std::vector<std::uint8_t> records = make_records(3, 20);
    CHECK(connection_setup_report(records.data(), records.size() - 1, {"a", "b"}, ReportOptions{}).error.find("end inside") != std::string::npos);
    records[kGroupNumberBytes] = kSetupRecordVersion + 1;
    CHECK(connection_setup_report(records.data(), records.size(), {"a", "b"}, ReportOptions{}).error.find("version") != std::string::npos);
    records = make_records(3, 20);
    records[kGroupNumberBytes + 1] = kSetupOutcomes;
    CHECK(connection_setup_report(records.data(), records.size(), {"a", "b"}, ReportOptions{}).error.find("outcome") != std::string::npos);
    records = make_records(3, 20);
    records[0] = 9;
    CHECK(connection_setup_report(records.data(), records.size(), {"a", "b"}, ReportOptions{}).error.find("group") != std::string::npos);
}

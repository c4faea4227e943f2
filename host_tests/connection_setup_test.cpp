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

// rows of `runs` runs: per run, cold h3 at idx 0 (QUIC, connect base + 1 RTT), h3 reused at idx 1, cold h2 at idx 2
// (connect base + 2 RTT); every fifth run in group 2, the rest in group 1.
SetupRows make_rows(int runs, double rtt) {
    SetupRows r;
    r.texts = {"h2", "h3", "ok", "", "HTTP/2.0", "HTTP/3.0"};
    std::mt19937_64 rng(7);
    std::normal_distribution<double> noise(0, 2), user(0, 5);
    const auto row = [&](int run, int idx, std::uint32_t origin, std::uint32_t protocol, std::uint32_t server, bool reused,
                         double connect) {
        r.group.push_back(run % 5 == 0 ? 2 : 1);
        r.run.push_back(run);
        r.idx.push_back(idx);
        r.origin.push_back(origin);
        r.result.push_back(2);
        r.protocol.push_back(protocol);
        r.server_protocol.push_back(server);
        r.reused.push_back(reused ? 1 : 0);
        r.connect_ms.push_back(connect);
        r.tls_ms.push_back(reused ? 0 : connect / 2);
        r.network_ms.push_back(connect + rtt + 1);
    };
    for (int run = 0; run < runs; ++run) {
        const double base = 3 + std::abs(user(rng));  // the run's own device and path: shared by both setups
        row(run, 0, 1, 1, 5, false, base + rtt + std::abs(noise(rng)));
        row(run, 1, 1, 1, 5, true, 0);
        row(run, 2, 0, 0, 4, false, base + 2 * rtt + std::abs(noise(rng)));
    }
    return r;
}

}  // namespace

TEST_CASE("connection setup view: one round trip saved, paired within the run, by group") {
    ReportOptions o;
    o.percentiles = {0.5, 0.9, 0.95};
    const SetupReport rep = connection_setup_report(make_rows(200, 50), nullptr, 0, {"a", "b"}, o);
    REQUIRE(rep.error.empty());
    REQUIRE(rep.groups.size() == 3);
    const SetupGroup& all = rep.groups[0];
    CHECK(all.runs == 200);
    CHECK(all.paired == 200);
    CHECK(rep.groups[1].runs + rep.groups[2].runs == 200);
    CHECK(rep.groups[2].runs == 40);
    CHECK(all.outcomes[1][static_cast<int>(SetupOutcome::cold)] == 200);
    CHECK(all.first_h3_over_h3 == 200);
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

TEST_CASE("connection setup view: rows that do not read are an error, not a guess") {
    SetupRows r = make_rows(3, 20);
    r.origin[1] = 99;
    CHECK(connection_setup_report(r, nullptr, 0, {"a", "b"}, ReportOptions{}).error.find("text") != std::string::npos);
    r = make_rows(3, 20);
    r.group[0] = 9;
    CHECK(connection_setup_report(r, nullptr, 0, {"a", "b"}, ReportOptions{}).error.find("group") != std::string::npos);
    r = make_rows(3, 20);
    r.tls_ms.pop_back();
    CHECK(!connection_setup_report(r, nullptr, 0, {"a", "b"}, ReportOptions{}).error.empty());
}

namespace {

// The runs of `rows` as cold-setup records ([group number][setup_record()] per run), made from the rows' samples.
std::vector<std::uint8_t> records_of(const SetupRows& r) {
    std::vector<std::uint8_t> out;
    for (std::size_t first = 0; first < r.size();) {
        std::vector<Sample> samples;
        std::size_t i = first;
        for (; i < r.size() && r.run[i] == r.run[first]; ++i) {
            Sample s = prewarm(static_cast<int>(r.idx[i]), r.origin[i] ? Proto::h3 : Proto::h2, r.texts[r.protocol[i]].c_str(),
                               r.reused[i] != 0, r.connect_ms[i], r.texts[r.server_protocol[i]].c_str());
            s.network_ms = r.network_ms[i];
            samples.push_back(s);
        }
        out.push_back(static_cast<std::uint8_t>(r.group[first] & 0xff));
        out.push_back(static_cast<std::uint8_t>(r.group[first] >> 8));
        const std::vector<std::uint8_t> record = setup_record(cold_setup(samples));
        out.insert(out.end(), record.begin(), record.end());
        first = i;
    }
    return out;
}

}  // namespace

TEST_CASE("connection setup view: the runs' records give the view their rows give") {
    ReportOptions o;
    o.percentiles = {0.5, 0.9};
    const SetupRows rows = make_rows(120, 30);
    const std::vector<std::uint8_t> records = records_of(rows);
    REQUIRE(records.size() == 120 * (kGroupNumberBytes + kSetupRecordBytes));
    const SetupReport from_rows = connection_setup_report(rows, nullptr, 0, {"a", "b"}, o);
    const SetupReport from_records = connection_setup_report(SetupRows{}, records.data(), records.size(), {"a", "b"}, o);
    REQUIRE(from_rows.error.empty());
    REQUIRE(from_records.error.empty());
    for (std::size_t g = 0; g < 3; ++g) {
        CHECK(from_records.groups[g].runs == from_rows.groups[g].runs);
        CHECK(from_records.groups[g].paired == from_rows.groups[g].paired);
        CHECK(from_records.groups[g].outcomes == from_rows.groups[g].outcomes);
        CHECK(from_records.groups[g].first_h3_over_h3 == from_rows.groups[g].first_h3_over_h3);
        for (int m = 0; m < kSetupMetrics; ++m)
            for (std::size_t k = 0; k < 2; ++k) {
                const QuantileDifferenceRow &a = from_records.groups[g].metric[m].analysis.rows[k],
                                            &b = from_rows.groups[g].metric[m].analysis.rows[k];
                CHECK(a.h2 == b.h2);
                CHECK(a.h3 == b.h3);
                CHECK((a.ci_ms_lo == b.ci_ms_lo || (std::isnan(a.ci_ms_lo) && std::isnan(b.ci_ms_lo))));
            }
    }
    // Half the runs by record and half by rows: the same counts.
    const SetupReport both = connection_setup_report(rows, records.data(), records.size() / 2 / (kGroupNumberBytes + kSetupRecordBytes) * (kGroupNumberBytes + kSetupRecordBytes), {"a", "b"}, o);
    REQUIRE(both.error.empty());
    CHECK(both.groups[0].runs == 120 + 60);
}

TEST_CASE("connection setup view: records that do not read are an error, not a guess") {
    std::vector<std::uint8_t> records = records_of(make_rows(3, 20));
    CHECK(connection_setup_report(SetupRows{}, records.data(), records.size() - 1, {"a", "b"}, ReportOptions{}).error.find("end inside") != std::string::npos);
    records[kGroupNumberBytes] = kSetupRecordVersion + 1;
    CHECK(connection_setup_report(SetupRows{}, records.data(), records.size(), {"a", "b"}, ReportOptions{}).error.find("version") != std::string::npos);
    records = records_of(make_rows(3, 20));
    records[kGroupNumberBytes + 1] = kSetupOutcomes;
    CHECK(connection_setup_report(SetupRows{}, records.data(), records.size(), {"a", "b"}, ReportOptions{}).error.find("outcome") != std::string::npos);
    records = records_of(make_rows(3, 20));
    records[0] = 9;
    CHECK(connection_setup_report(SetupRows{}, records.data(), records.size(), {"a", "b"}, ReportOptions{}).error.find("group") != std::string::npos);
}

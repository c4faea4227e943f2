// The stored form of a beacon: run and request rows with each request's class, and the per-run record for the report.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "sample_builder.hpp"
#include "connection_setup.hpp"
#include "stored_run.hpp"

using namespace h3probe;

namespace {

Sample make(Phase phase, int idx, Proto origin, const char* protocol, SampleResult result, std::optional<double> ms) {
    Sample s = test::make_sample(phase, idx, origin, protocol, ms, result);
    if (ms) s.dns_ms = 0.25;
    return s;
}

Beacon mixed_beacon() {
    Beacon b;
    b.run_id = "run-1";
    b.order = "h3-first";
    b.outcome = "complete";
    b.errors = {"one \"quoted\" problem"};
    b.samples = {make(Phase::prewarm, 0, Proto::h3, "h2", SampleResult::ok, 90.0),
                 make(Phase::control, 1, Proto::h2, "h2", SampleResult::ok, 31.0),
                 make(Phase::control, 0, Proto::h2, "h2", SampleResult::ok, 30.0),
                 make(Phase::control, 2, Proto::h2, "h2", SampleResult::http_error, 33.0),
                 make(Phase::treatment, 0, Proto::h3, "h3", SampleResult::ok, 20.0),
                 make(Phase::treatment, 1, Proto::h3, "h2", SampleResult::ok, 25.0),
                 make(Phase::treatment, 2, Proto::h3, "", SampleResult::ok, 21.0),
                 make(Phase::treatment, 3, Proto::h3, "", SampleResult::timeout, std::nullopt)};
    b.summary = summarize_run(b.samples);
    return b;
}

template <class If> void drop(Beacon& b, If what) {
    b.samples.erase(std::remove_if(b.samples.begin(), b.samples.end(), what), b.samples.end());
}

double double_at(const std::vector<std::uint8_t>& blob, std::size_t i) {
    double v;
    std::memcpy(&v, blob.data() + 8 * i, sizeof v);
    return v;
}

}  // namespace

TEST_CASE("every stored request carries the class the core gave it") {
    const StoredBeacon s = to_stored(mixed_beacon());
    REQUIRE(s.requests.size() == 8);
    const char* classes[] = {"prewarm",      "usable_control",   "usable_control", "http_error",
                             "usable_treatment", "fallback", "protocol_unknown", "timeout"};
    for (std::size_t i = 0; i < 8; ++i) CHECK(s.requests[i].request_class == classes[i]);
    CHECK(s.requests[3].network_ms == 33.0);  // an http_error keeps its timings in the row, not in the arm
    CHECK(std::isnan(s.requests[7].network_ms));
    CHECK(s.run.run_order == "h3-first");
    CHECK(s.run.errors == "[\"one \\\"quoted\\\" problem\"]");
}

TEST_CASE("the run record counts each arm's requests by class and packs every request that holds a value in idx order") {
    Beacon b = mixed_beacon();
    drop(b, [](const Sample& s) { return s.phase == Phase::treatment && s.idx == 2; });  // no fault
    const StoredRun r = to_stored(b).run;
    REQUIRE(r.arm_counts.size() == kArmCountsBytes);
    CHECK(r.arm_counts[0] == kRunRecordVersion);
    CHECK(r.arm_counts[1] == 1);  // h3-first
    CHECK(r.arm_counts[2] == estimand_bit(Estimand::as_assigned));  // a failure and a fallback: HTTP/3 did not work throughout
    const std::uint8_t* control = r.arm_counts.data() + kArmCountsHeadBytes;
    const std::uint8_t* treatment = control + kRequestClassCount;
    CHECK(control[static_cast<int>(RequestClass::usable_control)] == 2);
    CHECK(control[static_cast<int>(RequestClass::http_error)] == 1);
    CHECK(treatment[static_cast<int>(RequestClass::usable_treatment)] == 1);
    CHECK(treatment[static_cast<int>(RequestClass::fallback)] == 1);
    CHECK(treatment[static_cast<int>(RequestClass::timeout)] == 1);
    CHECK(control[static_cast<int>(RequestClass::prewarm)] + treatment[static_cast<int>(RequestClass::prewarm)] == 0);
    CHECK(arm_values(r.arm_counts[2], control) == 3);
    CHECK(arm_values(r.arm_counts[2], treatment) == 3);

    const auto names = metric_names();
    REQUIRE(r.arm_metrics.size() == names.size());
    CHECK(names[0] == "network_ms");
    const auto& network = r.arm_metrics[0];
    REQUIRE(network.size() == 6 * 8);
    CHECK(double_at(network, 0) == 30.0);  // control idx 0 before idx 1, whatever the beacon's order
    CHECK(double_at(network, 1) == 31.0);
    CHECK(double_at(network, 2) == kUnfinishedValue);  // the http_error: failed, slower than every finished request
    CHECK(double_at(network, 3) == 20.0);
    CHECK(double_at(network, 4) == 25.0);  // the fallback counts in its arm, as assigned
    CHECK(double_at(network, 5) == kUnfinishedValue);  // the timeout
    const auto& connect = r.arm_metrics[3];  // a metric the samples lack is NaN, one per finished request
    CHECK(names[3] == "connect_ms");
    REQUIRE(connect.size() == 6 * 8);
    CHECK(std::isnan(double_at(connect, 0)));
    CHECK(double_at(connect, 2) == kUnfinishedValue);
}

TEST_CASE("a run with an instrument fault or one arm only holds no values, and every request of it stays counted") {
    SUBCASE("an instrument fault in one arm (protocol unknown) drops the run from both arms") {
        const StoredRun r = to_stored(mixed_beacon()).run;
        CHECK(r.arm_counts[2] == 0);
        for (const auto& blob : r.arm_metrics) CHECK(blob.empty());
        const std::uint8_t* treatment = r.arm_counts.data() + kArmCountsHeadBytes + kRequestClassCount;
        CHECK(treatment[static_cast<int>(RequestClass::protocol_unknown)] == 1);
    }
    SUBCASE("a run whose treatment arm never ran compares nothing") {
        Beacon b = mixed_beacon();
        drop(b, [](const Sample& s) { return s.phase == Phase::treatment; });
        const StoredRun r = to_stored(b).run;
        CHECK(r.arm_counts[2] == 0);
        for (const auto& blob : r.arm_metrics) CHECK(blob.empty());
    }
    SUBCASE("a run whose every request finished over its arm's protocol counts in both estimands") {
        Beacon b = mixed_beacon();
        drop(b, [](const Sample& s) {
            return s.phase != Phase::prewarm && !(s.result == SampleResult::ok && s.protocol == to_string(s.origin));
        });
        const StoredRun r = to_stored(b).run;
        CHECK(r.arm_counts[2] == (estimand_bit(Estimand::as_assigned) | estimand_bit(Estimand::h3_worked)));
        CHECK(r.arm_metrics[0].size() == 3 * 8);
    }
}

TEST_CASE("no request of a run leaves one arm alone: every class holds a value in its arm or drops the whole run") {
    // For each class and arm, a run with one request of that class in that arm beside one usable request per arm.
    for (int arm = 0; arm < 2; ++arm)
        for (int c = 0; c < kRequestClassCount; ++c) {
            const auto cls = static_cast<RequestClass>(c);
            CAPTURE(arm);
            CAPTURE(to_string(cls));
            const RequestClass other_arms_usable = arm == 0 ? RequestClass::usable_treatment : RequestClass::usable_control;
            if (cls == RequestClass::prewarm || cls == other_arms_usable) continue;  // not a request of this arm
            std::uint8_t counts[2][kRequestClassCount] = {};
            counts[0][static_cast<int>(RequestClass::usable_control)] = 1;
            counts[1][static_cast<int>(RequestClass::usable_treatment)] = 1;
            ++counts[arm][c];
            const std::uint8_t e = run_estimands(counts[0], counts[1]);
            const std::size_t n[2] = {arm_values(e, counts[0]), arm_values(e, counts[1])};
            if (role_of(cls) == ClassRole::fault) {  // the whole run leaves both arms
                CHECK(e == 0);
                CHECK(n[0] + n[1] == 0);
            } else {  // the request stays in its arm, beside the other arm's
                CHECK((e & estimand_bit(Estimand::as_assigned)) != 0);
                CHECK(n[arm] == 2);
                CHECK(n[1 - arm] == 1);
                CHECK(((e & estimand_bit(Estimand::h3_worked)) != 0) == is_usable(cls));
            }
        }
}

TEST_CASE("the browser's run summary and the stored classes count a run the same way") {
    const Beacon b = mixed_beacon();
    const StoredRun r = to_stored(b).run;
    const std::uint8_t* treatment = r.arm_counts.data() + kArmCountsHeadBytes + kRequestClassCount;
    CHECK(b.summary.control.latency.n == 2);
    CHECK(b.summary.control.excluded == 1);
    CHECK(b.summary.treatment.latency.n == treatment[static_cast<int>(RequestClass::usable_treatment)]);
    CHECK(b.summary.treatment.fallbacks == treatment[static_cast<int>(RequestClass::fallback)]);
    CHECK(b.summary.treatment.excluded == 3);
}

TEST_CASE("the run's cold-setup record is the connection-setup rule's over its pre-warm requests") {
    const Beacon b = mixed_beacon();
    const StoredRun r = to_stored(b).run;
    std::vector<Sample> prewarm;
    for (const Sample& s : b.samples)
        if (s.phase == Phase::prewarm) prewarm.push_back(s);
    CHECK(r.setup == setup_record(cold_setup(prewarm)));
    REQUIRE(r.setup.size() == kSetupRecordBytes);
    CHECK(r.setup[0] == kSetupRecordVersion);
    // Its one pre-warm request asked the HTTP/3 origin and went over HTTP/2: no HTTP/2 pre-warm, HTTP/3 unverified.
    CHECK(r.setup[1] == static_cast<int>(SetupOutcome::absent));
    CHECK(r.setup[2] == static_cast<int>(SetupOutcome::unverified));
    CHECK(r.setup[3] == static_cast<int>(FirstH3::over_other));
    for (std::size_t i = 0; i < 2 * kSetupMetrics; ++i) {
        double v;
        std::memcpy(&v, r.setup.data() + 4 + 8 * i, sizeof v);
        CHECK(std::isnan(v));
    }
}

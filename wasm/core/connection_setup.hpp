// The connection-setup view: each run's pre-warm requests open new connections (one to the HTTP/2 origin over TCP+TLS,
// and one to the HTTP/3 origin over QUIC when the browser takes HTTP/3 there), and their Resource Timing phases are in
// the beacon. From them, per run, one cold HTTP/2 sample and one cold HTTP/3 sample: a paired cold-connection
// comparison inside every run, at no extra request. The arms never see these requests (classify() makes every pre-warm
// request `prewarm`); this view never sees a measured request.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "report.hpp"
#include "sample.hpp"
#include "value_aggregates.hpp"

namespace h3probe {

// What one run's pre-warm gave for one protocol. X(name, what); the order is the JSON's.
#define H3PROBE_SETUP_OUTCOMES(X)                                                                                      \
    X(cold, "a pre-warm request to the origin opened a new connection over the origin's protocol, verified")        \
    X(reused, "verified over the origin's protocol, but on a connection opened before (reused): no setup to time")  \
    X(unverified, "no pre-warm request to the origin completed over its protocol, verified, with its connection "  \
                  "known (failed, fallback, mismatch, protocol or reuse unknown)")                                   \
    X(absent, "no pre-warm request to the origin (prewarmH2 or prewarmH3 is 0)")

enum class SetupOutcome : std::uint8_t {
#define H3PROBE_ENUM_SETUP_OUTCOME(name, what) name,
    H3PROBE_SETUP_OUTCOMES(H3PROBE_ENUM_SETUP_OUTCOME)
#undef H3PROBE_ENUM_SETUP_OUTCOME
};
inline constexpr int kSetupOutcomes = 4;
const char* to_string(SetupOutcome o);

// The first request to the HTTP/3 origin (the lowest pre-warm idx asking it): over HTTP/3 already (Alt-Svc remembered
// from an earlier page load, or a browser told to), over another protocol, or not known (it failed, its protocol is
// unknown, or the origin's Server-Timing disagrees). X(name); the order is the codes'.
#define H3PROBE_FIRST_H3(X) X(over_h3) X(over_other) X(unknown)
enum class FirstH3 : std::uint8_t {
#define H3PROBE_ENUM_FIRST_H3(name) name,
    H3PROBE_FIRST_H3(H3PROBE_ENUM_FIRST_H3)
#undef H3PROBE_ENUM_FIRST_H3
};
inline constexpr int kFirstH3Codes = 3;

// The rule, for one run's pre-warm samples (any order; phase prewarm):
//   - the cold sample of protocol P (h2 or h3) is the lowest-idx pre-warm request to P's origin that classify_measured()
//     finds usable (result ok over P, the origin's Server-Timing agreeing or silent) and that opened its connection
//     (reused false: connectStart < connectEnd);
//   - outcome: cold; else reused (a verified request to the origin on a reused connection, none cold); else unverified
//     (a request to the origin, none verified with its reuse known); else absent.
// Only the h2-h3 arms mode has both origins; the report makes this view of h2-h3 runs only.
struct ColdSetup {
    const Sample* cold[2] = {nullptr, nullptr};  // [0] HTTP/2 origin, [1] HTTP/3 origin
    SetupOutcome outcome[2] = {SetupOutcome::absent, SetupOutcome::absent};
    FirstH3 first_h3 = FirstH3::unknown;
};
ColdSetup cold_setup(const std::vector<Sample>& prewarm);
// The result points into `prewarm`: a temporary list would leave it dangling.
ColdSetup cold_setup(const std::vector<Sample>&& prewarm) = delete;

// The durations the view reports, X(name, paired, what). connect_ms and network_ms are defined the same way for
// TCP+TLS and for QUIC, and are compared within the run. tls_ms is not: Firefox sets secureConnectionStart to
// connectStart for QUIC and Chromium within a fraction of a millisecond of it (QUIC's handshake carries TLS from its
// first packet), so for HTTP/3 it is the whole handshake and for HTTP/2 the TLS part after TCP's. It is reported for
// HTTP/2 only (docs/design.md, "Connection setup").
#define H3PROBE_SETUP_METRICS(X)                                                                                  \
    X(connect_ms, true, "connectEnd - connectStart: TCP and TLS for HTTP/2, the QUIC handshake for HTTP/3")        \
    X(network_ms, true, "responseEnd - fetchStart of the cold request: DNS, setup, request and response")         \
    X(tls_ms, false, "connectEnd - secureConnectionStart, HTTP/2 only: the TLS part of TCP+TLS")

enum class SetupMetric : std::uint8_t {
#define H3PROBE_ENUM_SETUP_METRIC(name, paired, what) name,
    H3PROBE_SETUP_METRICS(H3PROBE_ENUM_SETUP_METRIC)
#undef H3PROBE_ENUM_SETUP_METRIC
};
inline constexpr int kSetupMetrics = 3;
const char* to_string(SetupMetric m);
bool is_paired(SetupMetric m);

// The run's cold-setup record: what cold_setup() found, written by to_stored() when the beacon is stored, so that the
// report reads one record per run instead of every run's requests (the report's budget):
//   [format version][h2 outcome][h3 outcome][first_h3]   (SetupOutcome, FirstH3 codes, one byte each)
//   then for the cold HTTP/2 sample and then the cold HTTP/3 sample, each H3PROBE_SETUP_METRICS value in that order as
//   a little-endian float64, NaN when the protocol has no cold sample or the sample no value.
// A run without a pre-warm request (both outcomes absent) is in no count of the view. The report reads records of
// this version only: one with another version byte is an error, not a guess.
inline constexpr std::uint8_t kSetupRecordVersion = 1;
inline constexpr std::size_t kSetupRecordBytes = 4 + 2 * kSetupMetrics * 8;
std::vector<std::uint8_t> setup_record(const ColdSetup& setup);

struct SetupGroup {
    std::string name;
    std::size_t runs = 0;                                           // runs with at least one pre-warm request
    std::array<std::array<std::size_t, kSetupOutcomes>, 2> outcomes{};  // [h2, h3][outcome]
    std::size_t paired = 0;                                         // runs with both cold samples
    std::array<std::size_t, kFirstH3Codes> first_h3{};             // runs by their first HTTP/3-origin request's FirstH3
    // Per metric the inference of the report's arms over the cold samples (h2 = cold HTTP/2, h3 = cold HTTP/3, one
    // value per run each, paired by run): quantiles with intervals, Δ with the covariance, the paired within-run
    // difference. tls_ms (not paired): both "arms" hold the cold HTTP/2 values; only the h2 intervals mean anything.
    std::array<GroupReport, kSetupMetrics> metric;
};

struct SetupReport {
    std::string error;
    std::vector<SetupGroup> groups;  // overall, then one per group name
};

// The view built run by run, as build_report() reads the records (report.hpp), then inferred through the same
// inference as the report (infer_values, delta intervals).
class SetupView {
public:
    explicit SetupView(const std::vector<std::string>& group_names);
    // One run's setup_record() into group `group` (1-based) and overall: "" or why it does not read.
    std::string add(std::size_t group, const std::uint8_t* record);
    SetupReport infer(const ReportOptions& options);  // once, after the last add()

private:
    SetupReport out_;
    std::vector<std::array<ValueGroup, kSetupMetrics>> values_;  // per group, per metric
    std::uint32_t run_ = 0;
    std::vector<double> v_[2];  // one run's values of one metric, kept between runs (no allocation per run)
};

// The view from the runs' records alone
// (`records`: per run [group number, 1-based, kGroupNumberBytes][setup_record()], concatenated, `bytes` long).
SetupReport connection_setup_report(const std::uint8_t* records, std::size_t bytes, const std::vector<std::string>& group_names,
                                    const ReportOptions& options);

}  // namespace h3probe

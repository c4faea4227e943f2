// The stored form of a decoded beacon: one run row and one row per request (each with its class), plus the per-run
// record the report reads. The column lists below are the only ones: the collector's SQLite schema and the Node
// module's typings are made from them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "beacon.hpp"
#include "request_class.hpp"

namespace h3probe {

namespace column {
using text = std::string;
using real = double;  // NaN stands for NULL (SQLite stores a NaN as NULL)
using flag = double;  // 1, 0, or NaN for NULL
}  // namespace column

// X(type, name, limit, what); limit is the decoder's for the context fields (beacon.hpp) and 0 elsewhere. The
// collector adds received_at, region and country; nothing else of the beacon is kept (unknown fields are validated as
// JSON and then dropped, so a client cannot inflate the store).
#define H3PROBE_RUN_COLUMNS(X)                                                                             \
    X(text, run_id, 0, "the run's id (letters, digits, - and _)")                                         \
    X(text, page_load_id, 0, "the page load the run belonged to")                                         \
    X(text, config_id, 0, "the experiment config's id")                                                   \
    X(text, module_version, 0, "the page module's version")                                               \
    X(text, run_order, 0, "h2-first or h3-first: which arm ran first")                                    \
    X(text, arms, 0, "h2-h3 (the experiment), h2-h2 or h3-h3 (an A/A test): the arms' protocols")          \
    X(text, outcome, 0, "complete, deadline, stopped, error, or load_error (the gate could not load the run)") \
    X(text, error, 0, "why the run did not complete")                                                     \
    X(text, reason, 0, "outcome load_error: what did not load (H3PROBE_LOAD_ERROR_REASONS), '' otherwise")  \
    X(real, run_ms, 0, "from start to beacon")                                                            \
    X(real, sample_rate, 0, "the probability under which this page load was sampled")                     \
    H3PROBE_CONTEXT_FIELDS(X)                                                                              \
    X(text, errors, 0, "problems the module met, as a JSON array of strings")                             \
    X(real, payload_bytes, 0, "the arms' response body in bytes (config payloadBytes); 0 or NULL: the no-op's 204")

#define H3PROBE_REQUEST_COLUMNS(X)                                                                         \
    X(text, run_id, 0, "the run the request belongs to")                                                  \
    X(text, phase, 0, "prewarm, control or treatment")                                                    \
    X(real, idx, 0, "the request's index within its phase")                                               \
    X(text, origin, 0, "h2 or h3: the test origin asked")                                                 \
    X(text, result, 0, "the outcome as the browser saw it")                                               \
    X(text, request_class, 0, "usable in its arm, or why not (request_class.hpp)")                        \
    X(real, http_status, 0, "the HTTP status, 0 if none")                                                 \
    X(text, protocol, 0, "nextHopProtocol as reported")                                                   \
    X(text, server_protocol, 0, "the protocol the origin saw (its Server-Timing), '' when it sent none")  \
    X(flag, reused, 0, "1 if the connection was reused, 0 if opened, NULL if unknown")

#define H3PROBE_DECLARE_COLUMN(type, name, limit, what) column::type name{};

struct StoredRequest {
    H3PROBE_REQUEST_COLUMNS(H3PROBE_DECLARE_COLUMN)
#define H3PROBE_DECLARE_DURATION_COLUMN(name, max, metric, what) column::real name{};
    H3PROBE_SAMPLE_DURATIONS(H3PROBE_DECLARE_DURATION_COLUMN)
#undef H3PROBE_DECLARE_DURATION_COLUMN
};

// The metrics a report can be made of: the sample durations marked as such, in H3PROBE_SAMPLE_DURATIONS order.
std::vector<std::string> metric_names();

// The per-run record the report reads, stored in the run row so that a report reads one row per run:
//   arm_counts: [format version][order: 0 h2-first, 1 h3-first, 2 other][estimands: run_estimands(), request_class.hpp]
//               [count of the control arm's requests per class, kRequestClassCount bytes]
//               [the same for the treatment arm]
//   arm_<metric> for each metric: empty unless the run counts as assigned; then the value of each control request that
//               holds one (holds_value: measured, unfinished or failed) in idx order, then each treatment request's:
//               a measured request's metric (little-endian float64, NaN when it had none), kUnfinishedValue for one
//               that did not finish.
// The counts of the classes that hold a value say where the control values end. Counts fit a byte: a beacon holds at
// most kMaxSamples requests. The report reads records of this format only: one with another version byte is an error,
// not a guess.
inline constexpr std::uint8_t kRunRecordVersion = 3;
inline constexpr std::size_t kArmCountsHeadBytes = 3;
inline constexpr std::size_t kArmCountsBytes = kArmCountsHeadBytes + 2 * kRequestClassCount;
static_assert(kMaxSamples <= 255, "a class count must fit one byte");
// The values of one arm a record holds: its requests of the classes that hold a value, if the run counts as assigned.
std::size_t arm_values(std::uint8_t estimands, const std::uint8_t* arm_counts);

struct StoredRun {
    H3PROBE_RUN_COLUMNS(H3PROBE_DECLARE_COLUMN)
    std::vector<std::uint8_t> arm_counts;
    std::vector<std::vector<std::uint8_t>> arm_metrics;  // one per metric_names() entry
    // The connection-setup view's record of the run: setup_record(cold_setup(its pre-warm samples)),
    // connection_setup.hpp. The report reads it instead of the run's requests.
    std::vector<std::uint8_t> setup;
};

#undef H3PROBE_DECLARE_COLUMN

struct StoredBeacon {
    StoredRun run;
    std::vector<StoredRequest> requests;
};

StoredBeacon to_stored(const Beacon& beacon);

}  // namespace h3probe

// The beacon payload (schema "h3probe/1"): the run's samples and summary, encoded to and decoded from JSON.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "quantiles.hpp"
#include "sample.hpp"

namespace h3probe {

inline constexpr const char* kBeaconSchema = "h3probe/1";

struct ArmSummary {
    Summary latency;     // over the arm's usable samples (request_class.hpp)
    int fallbacks = 0;   // class fallback: result ok over another protocol than the arm's
    int excluded = 0;    // every sample of the arm that does not count, fallbacks included
};

struct RunSummary {
    ArmSummary control, treatment;
    std::optional<double> diff_median_ms;  // median(treatment) - median(control), when both arms have data
};

RunSummary summarize_run(const std::vector<Sample>& samples);

// Facts about the client that help explain its numbers. No personal data: no host-page URL beyond its origin, no user
// id, no IP. Network Information API fields are absent where the browser has no such API.
// X(type, name, limit, what): text is a string of at most `limit` bytes; real a number in [0, limit] or none; flag a
// boolean or none. The beacon's "context" object, its decoder and the stored run columns all come from this list.
#define H3PROBE_CONTEXT_FIELDS(X)                                                                                \
    X(text, page_origin, kMaxPageOriginChars, "the host page's origin")                                         \
    X(text, effective_type, kMaxEffectiveTypeChars, "navigator.connection.effectiveType: 4g, 3g, ...")          \
    X(real, rtt_ms, kMaxDurationMs, "navigator.connection.rtt")                                                 \
    X(real, downlink_mbps, kMaxDownlinkMbps, "navigator.connection.downlink")                                   \
    X(flag, save_data, 1, "navigator.connection.saveData")                                                      \
    X(flag, visible_throughout, 1, "false: the page was hidden during the run (which then stopped)")            \
    X(real, module_load_ms, kMaxDurationMs, "from searchCompleted() to the WASM module ready")                   \
    X(real, timer_resolution_ms, kMaxTimerResolutionMs, "smallest step of performance.now() seen")             \
    X(text, run_context, kMaxRunContextChars,                                                                   \
      "where the core ran: worker (a dedicated Worker) or main (the page's thread)")                            \
    X(text, worker_fallback, kMaxWorkerFallbackChars,                                                          \
      "run_context main: why the run left the Worker (H3PROBE_WORKER_FALLBACK_REASONS); '' in the Worker")

// X(name, what): why a sampled page load could not load the run, for a beacon with outcome "load_error". The page's
// gate sends that beacon itself (it has no core to write it): web/src/h3probe.js and the loaders that name the reason
// (run.js, worker.js) are checked against this list by a unit test. Closed: any other value is refused.
#define H3PROBE_LOAD_ERROR_REASONS(X)                                                                          \
    X(run_import, "run.js did not load (not found, wrong type, blocked)")                                     \
    X(worker_import, "worker.js did not load on the main thread (the core's fallback when no Worker runs it)") \
    X(glue_import, "the Emscripten glue h3probe_browser.mjs did not load (not found, wrong type, blocked)")   \
    X(wasm_fetch, "the .wasm could not be fetched, or answered a status other than 2xx")                     \
    X(wasm_type, "the .wasm was served with a Content-Type other than application/wasm")                     \
    X(csp, "the page's Content-Security-Policy forbids compiling WebAssembly (no 'wasm-unsafe-eval')")        \
    X(wasm_compile, "the .wasm did not compile or instantiate for another reason")

// X(name, what): why a run left its Worker and ran on the page's main thread, the beacon's context.worker_fallback.
// web/src/run.js names them, telling apart what Chromium, Firefox and WebKit let a page see (docs/record/platform-notes.md,
// "The probe's Worker in each engine"); a unit test checks run.js against this list. Closed: any other value is
// refused, and a run in the Worker has none.
#define H3PROBE_WORKER_FALLBACK_REASONS(X)                                                                 \
    X(disabled, "config worker: false")                                                                  \
    X(no_worker, "the browser has no Worker")                                                            \
    X(cross_origin,                                                                                      \
      "worker.js is on another origin than the page (moduleUrl, or the bundle on a CDN): no Worker starts there") \
    X(constructor, "new Worker() threw (no module workers; no import.meta.url to find worker.js by)")    \
    X(csp, "the page's Content-Security-Policy blocks the worker (worker-src, else script-src, default-src)") \
    X(worker_load, "worker.js did not load or run in the Worker (not found, not JavaScript, a script error)") \
    X(core_load, "the Worker started but could not load the glue or the .wasm there")

namespace context_field {
using text = std::string;
using real = std::optional<double>;
using flag = std::optional<bool>;
}  // namespace context_field

struct ClientContext {
#define H3PROBE_DECLARE_CONTEXT(type, name, limit, what) context_field::type name;
    H3PROBE_CONTEXT_FIELDS(H3PROBE_DECLARE_CONTEXT)
#undef H3PROBE_DECLARE_CONTEXT
};

struct Beacon {
    std::string run_id;
    std::string page_load_id;
    std::string config_id;
    std::string module_version;
    std::string order;    // the order this run used: "h2-first" (control first) or "h3-first"
    std::string arms = "h2-h3";  // the arms' protocols: "h2-h3" (the experiment), or "h2-h2" / "h3-h3" (an A/A test)
    std::string outcome;  // "complete", "deadline", "stopped" (page hidden, host asked), "error", or "load_error"
    std::string error;    // why, when outcome is not "complete"
    std::string reason;   // outcome "load_error" only: a name from H3PROBE_LOAD_ERROR_REASONS
    double run_ms = 0;    // duration from start to beacon
    double sample_rate = 1;  // the probability under which this page load was sampled
    int payload_bytes = 0;   // the arms' response body size (config payloadBytes); 0: the no-op's empty 204
    ClientContext context;
    std::vector<std::string> errors;  // problems the module met during the run (they travel here, not to the console)
    std::vector<Sample> samples;
    RunSummary summary;
};

// A run's beacon, as the core sends it. The gate writes the load_error beacon itself (no core runs then): the encoder
// writes no reason.
std::string encode_beacon(const Beacon& beacon);

struct DecodeResult {
    std::optional<Beacon> beacon;  // summary recomputed from the samples: the client's own summary is not trusted
    std::string error;             // first problem found, naming its field
};

// A load_error beacon comes from the gate, which has no core: it has no samples, and may leave out the fields only a
// run has (order, arms, module_version).
// Strict on every known field, tolerant of unknown ones so that newer clients can add fields (they are not kept, nor
// anything they hold). A key given twice counts with its last value; the error names the first problem in the order
// the fields are checked, whatever their order in the text. Text over kMaxBeaconBytes or nested deeper than
// kMaxJsonDepth is refused before it is parsed.
DecodeResult decode_beacon(std::string_view json_text);

}  // namespace h3probe

// Every limit on what a client may send, in one place: the decoder enforces them, the collector and the page module
// take them from here (through the Node module's constants), and the tests read them back.
#pragma once

#include <cstddef>

namespace h3probe {

inline constexpr std::size_t kMaxBeaconBytes = 256 * 1024;   // a beacon is ~4 KB; the collector answers 413 above this
inline constexpr std::size_t kMaxJsonDepth = 8;              // the schema nests 3 deep; deeper text is refused unparsed
inline constexpr std::size_t kMaxSamples = 200;              // requests in one beacon
inline constexpr std::size_t kMaxErrors = 10;                // problems the module met during a run
inline constexpr std::size_t kMaxErrorChars = 300;           // bytes of one such problem's text
inline constexpr std::size_t kMaxRunErrorChars = 500;        // bytes of the run's own error (why it did not complete)
inline constexpr double kMaxDurationMs = 600000;             // 10 minutes: far beyond any run deadline
inline constexpr double kMaxTimestampMs = 1e10;              // performance.now() of a page open for months
inline constexpr int kMaxSampleIdx = 1000;
inline constexpr std::size_t kMaxPageOriginChars = 200;    // an origin, never a path
inline constexpr std::size_t kMaxEffectiveTypeChars = 16;   // "slow-2g", "4g", ...
inline constexpr std::size_t kMaxRunContextChars = 8;      // "worker" or "main"
inline constexpr std::size_t kMaxWorkerFallbackChars = 16;  // a name of H3PROBE_WORKER_FALLBACK_REASONS (beacon.hpp)
inline constexpr std::size_t kMaxProtocolChars = 32;        // "h3", "HTTP/2.0", ... (nextHopProtocol, Server-Timing)
inline constexpr double kMaxDownlinkMbps = 1e6;
inline constexpr double kMaxTimerResolutionMs = 1000;
// The largest payloadBytes: a body the arms' requests fetch (config payloadBytes). 1 MiB is far beyond a page's API
// answers, and keeps an origin's answer to a bad or hostile query small (the origins refuse more).
inline constexpr int kMaxPayloadBytes = 1 << 20;
// A request's transferSize or body size in a beacon: the payload, its headers, and room for a proxy's additions.
inline constexpr double kMaxTransferBytes = 4 * (1 << 20);

}  // namespace h3probe

// libFuzzer target: parse_config on arbitrary bytes. A broken invariant aborts with the name of the check.
//
// Checked for every input:
//   - parse_config does not throw;
//   - exactly one of a config and a non-empty error list comes back; each error is non-empty, valid UTF-8, names a key
//     (or "config") before a colon, and is no longer than the input plus a fixed text;
//   - an accepted config respects every rule of config.cpp (origins, paths, ranges, an origin for each arm);
//   - writing an accepted config back as JSON and parsing that gives the same config.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "config.hpp"
#include "utf8_text.hpp"

using namespace h3probe;

namespace {

// The longest fixed text of an error, beside the key and the value it quotes.
constexpr std::size_t kMaxErrorOverheadBytes = 200;

std::string_view g_input;

[[noreturn]] void broken(const char* check, int line, const std::string& detail) {
    std::fprintf(stderr, "config_fuzz.cpp:%d: invariant broken: %s\n  %s\n  input: %zu bytes\n", line, check,
                 detail.c_str(), g_input.size());
    std::abort();
}

#define EXPECT(cond, detail)                            \
    do {                                                \
        if (!(cond)) broken(#cond, __LINE__, (detail)); \
    } while (0)

bool valid_utf8(const std::string& s) { return utf8_text(s, s.size()) == s; }

// The origin grammar, restated: "https://", a host (a bracketed IPv6 literal, or a name without ':', '[' or ']'), then
// optionally ':' and a port from 1 to 65535; nothing else.
bool looks_like_origin(const std::string& s) {
    if (s.rfind("https://", 0) != 0) return false;
    const std::string rest = s.substr(8);
    if (rest.empty() || rest.find_first_of("/?#@ \t\r\n") != std::string::npos) return false;
    std::size_t end;
    if (rest[0] == '[') {
        end = rest.find(']');
        if (end == std::string::npos || end == 1) return false;
        ++end;
    } else {
        end = std::min(rest.find_first_of(":[]"), rest.size());
        if (end == 0) return false;
    }
    if (end == rest.size()) return true;
    if (rest[end] != ':') return false;
    const std::string port = rest.substr(end + 1);
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) return false;
    const long p = std::stol(port);
    return p >= 1 && p <= 65535;
}

void check_config(const Config& c) {
    const bool uses_h2 = c.arms != Arms::h3_h3;
    const bool uses_h3 = c.arms != Arms::h2_h2;
    EXPECT(c.h2_origin.empty() ? !uses_h2 : looks_like_origin(c.h2_origin), c.h2_origin);
    EXPECT(c.h3_origin.empty() ? !uses_h3 : looks_like_origin(c.h3_origin), c.h3_origin);
    EXPECT(c.h2_origin.empty() || c.h2_origin != c.h3_origin, "one origin for both protocols");
    if (c.arms != Arms::h2_h3) {
        EXPECT(looks_like_origin(c.aa_origin), c.aa_origin);
        EXPECT(c.aa_origin != c.h2_origin && c.aa_origin != c.h3_origin, "A/A arms share an origin");
    }
    for (const ArmTarget& t : {arm_target(c, Phase::control), arm_target(c, Phase::treatment)})
        EXPECT(looks_like_origin(t.origin), "an arm without an origin: " + t.origin);
    EXPECT(!c.noop_path.empty() && c.noop_path[0] == '/' && c.noop_path.compare(0, 2, "//") != 0 &&
               c.noop_path.find_first_of("?# \t\r\n") == std::string::npos,
           c.noop_path);
    EXPECT(!c.beacon_url.empty() && c.beacon_url.find_first_of(" \t\r\n") == std::string::npos &&
               (c.beacon_url.rfind("https://", 0) == 0 || (c.beacon_url[0] == '/' && c.beacon_url.compare(0, 2, "//") != 0)),
           c.beacon_url);
    EXPECT(!c.config_id.empty() && c.config_id.size() <= 64, c.config_id);
    EXPECT(c.prewarm_h3 >= 0 && c.prewarm_h3 <= 10, "prewarmH3");
    EXPECT(c.prewarm_h2 >= 0 && c.prewarm_h2 <= 10, "prewarmH2");
    EXPECT(c.requests_per_arm >= 1 && c.requests_per_arm <= 50, "requestsPerArm");
    EXPECT(std::isfinite(c.request_timeout_ms) && c.request_timeout_ms >= 1 && c.request_timeout_ms <= 120000,
           "requestTimeoutMs");
    EXPECT(std::isfinite(c.entry_wait_ms) && c.entry_wait_ms >= 0 && c.entry_wait_ms <= 60000, "entryWaitMs");
    EXPECT(std::isfinite(c.run_deadline_ms) && c.run_deadline_ms >= 1 && c.run_deadline_ms <= 600000, "runDeadlineMs");
    EXPECT(c.sample_rate >= 0 && c.sample_rate <= 1, "sampleRate");
}

// The config as the keys a host page would write; origins only when set (an empty one is not a valid value).
nlohmann::json to_json(const Config& c) {
    nlohmann::json j = {{"arms", to_string(c.arms)},
                        {"noopPath", c.noop_path},
                        {"beaconUrl", c.beacon_url},
                        {"configId", c.config_id},
                        {"prewarmH3", c.prewarm_h3},
                        {"prewarmH2", c.prewarm_h2},
                        {"requestsPerArm", c.requests_per_arm},
                        {"requestTimeoutMs", c.request_timeout_ms},
                        {"entryWaitMs", c.entry_wait_ms},
                        {"runDeadlineMs", c.run_deadline_ms},
                        {"order", to_string(c.order)},
                        {"enabled", c.enabled},
                        {"sampleRate", c.sample_rate}};
    if (!c.h2_origin.empty()) j["h2Origin"] = c.h2_origin;
    if (!c.h3_origin.empty()) j["h3Origin"] = c.h3_origin;
    if (!c.aa_origin.empty()) j["aaOrigin"] = c.aa_origin;
    return j;
}

bool same(const Config& a, const Config& b) {
    return a.h2_origin == b.h2_origin && a.h3_origin == b.h3_origin && a.arms == b.arms && a.aa_origin == b.aa_origin &&
           a.noop_path == b.noop_path && a.beacon_url == b.beacon_url && a.config_id == b.config_id &&
           a.prewarm_h3 == b.prewarm_h3 && a.prewarm_h2 == b.prewarm_h2 && a.requests_per_arm == b.requests_per_arm &&
           a.request_timeout_ms == b.request_timeout_ms && a.entry_wait_ms == b.entry_wait_ms &&
           a.run_deadline_ms == b.run_deadline_ms && a.order == b.order && a.enabled == b.enabled &&
           a.sample_rate == b.sample_rate;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    g_input = std::string_view(reinterpret_cast<const char*>(data), size);
    try {
        const ConfigResult r = parse_config(g_input);
        EXPECT(r.config.has_value() == r.errors.empty(), "exactly one of config and errors");
        for (const std::string& e : r.errors) {
            EXPECT(!e.empty(), "an empty error");
            EXPECT(e.size() <= size + kMaxErrorOverheadBytes, e);
            EXPECT(valid_utf8(e), e);
            EXPECT(e.find(':') != std::string::npos, e);
        }
        if (!r.config) return 0;
        check_config(*r.config);
        const std::string text = to_json(*r.config).dump();
        const ConfigResult again = parse_config(text);
        EXPECT(again.config.has_value(), "a written-back config is refused: " + (again.errors.empty() ? "" : again.errors[0]));
        EXPECT(same(*r.config, *again.config), "a written-back config reads differently: " + text);
    } catch (const std::exception& e) {
        broken("no exception", __LINE__, e.what());
    }
    return 0;
}

// Parses and validates the experiment configuration; collects every error instead of stopping at the first.
#include "config.hpp"

#include <cmath>

#include <nlohmann/json.hpp>

#include "json_writer.hpp"

namespace h3probe {
namespace {

using nlohmann::json;

// "https://host" or "https://host:port", nothing after: the probe appends the path itself. The host is a name without
// ':', '[' or ']', or a bracketed IPv6 literal; the port, if any, 1 to 65535.
bool is_https_origin(const std::string& s) {
    const std::string scheme = "https://";
    if (s.compare(0, scheme.size(), scheme) != 0 || s.size() == scheme.size()) return false;
    const std::string rest = s.substr(scheme.size());
    if (rest.find_first_of("/?#@ \t\r\n") != std::string::npos) return false;
    std::size_t host_end;
    if (rest[0] == '[') {
        host_end = rest.find(']');
        if (host_end == std::string::npos || host_end == 1) return false;
        ++host_end;
    } else {
        host_end = rest.find_first_of(":[]");
        if (host_end == std::string::npos) host_end = rest.size();
        if (host_end == 0) return false;
    }
    if (host_end == rest.size()) return true;
    if (rest[host_end] != ':') return false;
    const std::string port = rest.substr(host_end + 1);
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) return false;
    long value = 0;
    for (const char d : port) value = value * 10 + (d - '0');
    return value >= 1 && value <= 65535;
}

// A beacon URL is either an https URL or a path on the page's own origin.
bool is_beacon_url(const std::string& s) {
    if (s.empty() || s.find_first_of(" \t\r\n") != std::string::npos) return false;
    if (s[0] == '/') return s.size() == 1 || s[1] != '/';  // "//host" would be protocol-relative
    return s.compare(0, 8, "https://") == 0 && s.size() > 8;
}

class Reader {
public:
    using Kind = ConfigSource::Kind;
    Reader(const ConfigSource& object, std::vector<std::string>& errors) : object_(object), errors_(errors) {}

    void string(const char* key, std::string& out, bool (*valid)(const std::string&), const char* expectation) {
        const Kind k = object_.kind(key);
        if (k == Kind::absent) return;
        if (k != Kind::string) return wrong(key, "a string");
        std::string s = object_.string(key);
        if (!valid(s)) return errors_.push_back(std::string(key) + ": must be " + expectation + ", got \"" + s + "\"");
        out = std::move(s);
    }

    void integer(const char* key, int& out, int lo, int hi) {
        const Kind k = object_.kind(key);
        if (k == Kind::absent) return;
        if (k != Kind::number || !is_whole(object_.number(key))) return wrong(key, "an integer");
        const double d = object_.number(key);
        if (d < lo || d > hi) return out_of_range(key, d, lo, hi);
        out = static_cast<int>(d);
    }

    void boolean(const char* key, bool& out) {
        const Kind k = object_.kind(key);
        if (k == Kind::absent) return;
        if (k != Kind::boolean) return wrong(key, "true or false");
        out = object_.boolean(key);
    }

    void probability(const char* key, double& out) {
        const Kind k = object_.kind(key);
        if (k == Kind::absent) return;
        if (k != Kind::number) return wrong(key, "a number from 0 to 1");
        const double d = object_.number(key);
        if (!(d >= 0 && d <= 1)) return out_of_range(key, d, 0, 1);
        out = d;
    }

    void milliseconds(const char* key, double& out, double lo, double hi) {
        const Kind k = object_.kind(key);
        if (k == Kind::absent) return;
        if (k != Kind::number) return wrong(key, "a number of milliseconds");
        const double d = object_.number(key);
        if (!std::isfinite(d) || d < lo || d > hi) return out_of_range(key, d, lo, hi);
        out = d;
    }

private:
    static bool is_whole(double d) { return std::isfinite(d) && std::floor(d) == d; }

    void wrong(const char* key, const char* type) { errors_.push_back(std::string(key) + ": must be " + type); }
    void out_of_range(const char* key, double d, double lo, double hi) {
        errors_.push_back(std::string(key) + ": " + number_text(d) + " is out of range [" + number_text(lo) + ", " +
                          number_text(hi) + "]");
    }

    const ConfigSource& object_;
    std::vector<std::string>& errors_;
};

// A parsed JSON document as a config source.
class JsonSource : public ConfigSource {
public:
    explicit JsonSource(const json& doc) : doc_(doc) {}
    bool is_object() const override { return doc_.is_object(); }
    std::vector<std::string> keys() const override {
        std::vector<std::string> out;
        for (const auto& item : doc_.items()) out.push_back(item.key());
        return out;
    }
    Kind kind(const char* key) const override {
        const auto it = doc_.find(key);
        if (it == doc_.end()) return Kind::absent;
        return it->is_string() ? Kind::string : it->is_number() ? Kind::number : it->is_boolean() ? Kind::boolean : Kind::other;
    }
    std::string string(const char* key) const override { return doc_.at(key).get<std::string>(); }
    double number(const char* key) const override { return doc_.at(key).get<double>(); }
    bool boolean(const char* key) const override { return doc_.at(key).get<bool>(); }

private:
    const json& doc_;
};

bool is_origin(const std::string& s) { return is_https_origin(s); }

const char* const kKnownKeys[] = {"h2Origin",      "h3Origin",       "arms",             "aaOrigin",
                                  "noopPath",      "beaconUrl",      "configId",         "prewarmH3",
                                  "prewarmH2",     "requestsPerArm", "requestTimeoutMs", "entryWaitMs",
                                  "runDeadlineMs", "order",          "enabled",          "sampleRate",
                                  "payloadBytes"};

}  // namespace

std::string to_string(RunOrder order) {
    switch (order) {
        case RunOrder::h2_first: return "h2-first";
        case RunOrder::h3_first: return "h3-first";
        case RunOrder::random: return "random";
    }
    return "h2-first";
}

ArmTarget arm_target(const Config& config, Phase arm) {
    const Proto protocol = arm_protocol(config.arms, arm);
    if (arm == Phase::treatment && config.arms != Arms::h2_h3) return {protocol, config.aa_origin};
    return {protocol, protocol == Proto::h3 ? config.h3_origin : config.h2_origin};
}

ConfigResult parse_config(std::string_view json_text) {
    // nlohmann/json's lexer takes a raw NUL byte for the end of input; JSON has no place for one.
    if (const auto nul = json_text.find('\0'); nul != std::string_view::npos) {
        ConfigResult result;
        result.errors.push_back("config: holds a NUL byte at offset " + std::to_string(nul));
        return result;
    }
    const json doc = json::parse(json_text.begin(), json_text.end(), nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) {
        ConfigResult result;
        result.errors.push_back("config: not valid JSON");
        return result;
    }
    return validate_config(JsonSource(doc));
}

ConfigResult validate_config(const ConfigSource& doc) {
    ConfigResult result;
    auto& errors = result.errors;
    if (!doc.is_object()) {
        errors.push_back("config: must be a JSON object");
        return result;
    }
    for (const std::string& key : doc.keys()) {
        bool known = false;
        for (const char* k : kKnownKeys) known = known || key == k;
        if (!known) errors.push_back(key + ": unknown key");
    }

    Config c;
    Reader r(doc, errors);
    const auto origin_ok = is_origin;
    r.string("h2Origin", c.h2_origin, origin_ok, "an https origin like \"https://h2.example.com\"");
    r.string("h3Origin", c.h3_origin, origin_ok, "an https origin like \"https://h3.example.com\"");
    std::string arms = to_string(c.arms);
    r.string("arms", arms, [](const std::string& s) { Arms a; return parse_arms(s, a); },
             "\"h2-h3\", \"h2-h2\" or \"h3-h3\"");
    parse_arms(arms, c.arms);
    r.string("aaOrigin", c.aa_origin, origin_ok, "an https origin like \"https://h3b.example.com\"");
    r.string("noopPath", c.noop_path,
             [](const std::string& s) {
                 return !s.empty() && s[0] == '/' && s.find_first_of("?# \t\r\n") == std::string::npos &&
                        s.compare(0, 2, "//") != 0;
             },
             "a path starting with \"/\" without query or fragment");
    r.string("beaconUrl", c.beacon_url, is_beacon_url, "an https URL or a path starting with \"/\"");
    r.string("configId", c.config_id, [](const std::string& s) { return !s.empty() && s.size() <= 64; },
             "1 to 64 bytes");
    std::string order = to_string(c.order);
    r.string("order", order,
             [](const std::string& s) { return s == "h2-first" || s == "h3-first" || s == "random"; },
             "\"h2-first\", \"h3-first\" or \"random\"");
    c.order = order == "h3-first" ? RunOrder::h3_first : order == "random" ? RunOrder::random : RunOrder::h2_first;
    r.integer("prewarmH3", c.prewarm_h3, 0, 10);
    r.integer("prewarmH2", c.prewarm_h2, 0, 10);
    r.integer("requestsPerArm", c.requests_per_arm, 1, 50);
    r.milliseconds("requestTimeoutMs", c.request_timeout_ms, 1, 120000);
    r.milliseconds("entryWaitMs", c.entry_wait_ms, 0, 60000);
    r.milliseconds("runDeadlineMs", c.run_deadline_ms, 1, 600000);
    r.boolean("enabled", c.enabled);
    r.probability("sampleRate", c.sample_rate);
    r.integer("payloadBytes", c.payload_bytes, 0, kMaxPayloadBytes);

    // An origin is required when an arm asks it; in an A/A test the other protocol's origin may be absent.
    const bool uses_h2 = c.arms != Arms::h3_h3;
    const bool uses_h3 = c.arms != Arms::h2_h2;
    if (uses_h2 && doc.kind("h2Origin") == ConfigSource::Kind::absent) errors.push_back("h2Origin: required");
    if (uses_h3 && doc.kind("h3Origin") == ConfigSource::Kind::absent) errors.push_back("h3Origin: required");
    // One origin for both arms would let the browser carry the control arm over HTTP/3 once Alt-Svc is learned.
    if (!c.h2_origin.empty() && c.h2_origin == c.h3_origin) errors.push_back("h3Origin: must differ from h2Origin");
    if (c.arms != Arms::h2_h3) {
        // Two arms on one origin share its connection: the test would compare the origin with itself, not two arms.
        const char* first = uses_h3 ? "h3Origin" : "h2Origin";
        if (doc.kind("aaOrigin") == ConfigSource::Kind::absent)
            errors.push_back(std::string("aaOrigin: required when arms is \"") + arms + "\" (the treatment arm's origin)");
        else if (!c.aa_origin.empty() && (c.aa_origin == c.h2_origin || c.aa_origin == c.h3_origin))
            errors.push_back(std::string("aaOrigin: must differ from ") +
                             (c.aa_origin == (uses_h3 ? c.h3_origin : c.h2_origin) ? first
                                                                                    : (uses_h3 ? "h2Origin" : "h3Origin")));
    }

    if (errors.empty()) result.config = c;
    return result;
}

}  // namespace h3probe

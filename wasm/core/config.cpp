// Parses and validates the experiment configuration; collects every error instead of stopping at the first.
#include "config.hpp"

#include <cmath>
#include <functional>
#include <map>

#include <nlohmann/json.hpp>

namespace h3probe {
namespace {

using nlohmann::json;

// "https://host" or "https://host:port", nothing after: the probe appends the path itself.
bool is_https_origin(const std::string& s) {
    const std::string scheme = "https://";
    if (s.compare(0, scheme.size(), scheme) != 0 || s.size() == scheme.size()) return false;
    const std::string rest = s.substr(scheme.size());
    if (rest.find_first_of("/?#@ \t\r\n") != std::string::npos) return false;
    const auto colon = rest.rfind(':');
    if (colon != std::string::npos && rest.find(']') == std::string::npos) {
        const std::string port = rest.substr(colon + 1);
        if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) return false;
        if (std::stol(port) < 1 || std::stol(port) > 65535 || colon == 0) return false;
    }
    return true;
}

// A beacon URL is either an https URL or a path on the page's own origin.
bool is_beacon_url(const std::string& s) {
    if (s.empty() || s.find_first_of(" \t\r\n") != std::string::npos) return false;
    if (s[0] == '/') return s.size() == 1 || s[1] != '/';  // "//host" would be protocol-relative
    return s.compare(0, 8, "https://") == 0 && s.size() > 8;
}

class Reader {
public:
    Reader(const json& object, std::vector<std::string>& errors) : object_(object), errors_(errors) {}

    void string(const char* key, std::string& out, const std::function<bool(const std::string&)>& valid,
                const char* expectation) {
        const json* v = find(key);
        if (!v) return;
        if (!v->is_string()) return wrong(key, "a string");
        const auto& s = v->get_ref<const std::string&>();
        if (!valid(s)) return errors_.push_back(std::string(key) + ": must be " + expectation + ", got \"" + s + "\"");
        out = s;
    }

    void integer(const char* key, int& out, int lo, int hi) {
        const json* v = find(key);
        if (!v) return;
        if (!v->is_number_integer() && !(v->is_number_float() && is_whole(v->get<double>())))
            return wrong(key, "an integer");
        const double d = v->get<double>();
        if (d < lo || d > hi) return out_of_range(key, d, lo, hi);
        out = static_cast<int>(d);
    }

    void boolean(const char* key, bool& out) {
        const json* v = find(key);
        if (!v) return;
        if (!v->is_boolean()) return wrong(key, "true or false");
        out = v->get<bool>();
    }

    void probability(const char* key, double& out) {
        const json* v = find(key);
        if (!v) return;
        if (!v->is_number()) return wrong(key, "a number from 0 to 1");
        const double d = v->get<double>();
        if (!(d >= 0 && d <= 1)) return out_of_range(key, d, 0, 1);
        out = d;
    }

    void milliseconds(const char* key, double& out, double lo, double hi) {
        const json* v = find(key);
        if (!v) return;
        if (!v->is_number()) return wrong(key, "a number of milliseconds");
        const double d = v->get<double>();
        if (!std::isfinite(d) || d < lo || d > hi) return out_of_range(key, d, lo, hi);
        out = d;
    }

private:
    static bool is_whole(double d) { return std::isfinite(d) && std::floor(d) == d; }

    const json* find(const char* key) {
        const auto it = object_.find(key);
        return it == object_.end() ? nullptr : &*it;
    }
    void wrong(const char* key, const char* type) { errors_.push_back(std::string(key) + ": must be " + type); }
    static std::string number_text(double d) {
        return is_whole(d) && std::fabs(d) < 1e15 ? std::to_string(static_cast<long long>(d)) : json(d).dump();
    }
    void out_of_range(const char* key, double d, double lo, double hi) {
        errors_.push_back(std::string(key) + ": " + number_text(d) + " is out of range [" + number_text(lo) + ", " +
                          number_text(hi) + "]");
    }

    const json& object_;
    std::vector<std::string>& errors_;
};

const char* const kKnownKeys[] = {"h2Origin",      "h3Origin",       "arms",             "aaOrigin",
                                  "noopPath",      "beaconUrl",      "configId",         "prewarmH3",
                                  "prewarmH2",     "requestsPerArm", "requestTimeoutMs", "entryWaitMs",
                                  "runDeadlineMs", "order",          "enabled",          "sampleRate"};

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
    const json doc = json::parse(json_text.begin(), json_text.end(), nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) {
        ConfigResult result;
        result.errors.push_back("config: not valid JSON");
        return result;
    }
    return validate_config(doc);
}

ConfigResult validate_config(const nlohmann::json& doc) {
    ConfigResult result;
    auto& errors = result.errors;
    if (!doc.is_object()) {
        errors.push_back("config: must be a JSON object");
        return result;
    }
    for (const auto& item : doc.items()) {
        bool known = false;
        for (const char* k : kKnownKeys) known = known || item.key() == k;
        if (!known) errors.push_back(item.key() + ": unknown key");
    }

    Config c;
    Reader r(doc, errors);
    const auto origin_ok = [](const std::string& s) { return is_https_origin(s); };
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
             "1 to 64 characters");
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

    // An origin is required when an arm asks it; in an A/A test the other protocol's origin may be absent.
    const bool uses_h2 = c.arms != Arms::h3_h3;
    const bool uses_h3 = c.arms != Arms::h2_h2;
    if (uses_h2 && !doc.contains("h2Origin")) errors.push_back("h2Origin: required");
    if (uses_h3 && !doc.contains("h3Origin")) errors.push_back("h3Origin: required");
    // One origin for both arms would let the browser carry the control arm over HTTP/3 once Alt-Svc is learned.
    if (!c.h2_origin.empty() && c.h2_origin == c.h3_origin) errors.push_back("h3Origin: must differ from h2Origin");
    if (c.arms != Arms::h2_h3) {
        // Two arms on one origin share its connection: the test would compare the origin with itself, not two arms.
        const char* first = uses_h3 ? "h3Origin" : "h2Origin";
        if (!doc.contains("aaOrigin"))
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

// Beacon encoding (JsonWriter), and the validating decoder (nlohmann/json) the collector runs on every beacon it receives.
#include "beacon.hpp"

#include <algorithm>

#include <cctype>
#include <cmath>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "json_writer.hpp"
#include "request_class.hpp"

namespace h3probe {
namespace {

using nlohmann::json;

// The encoder writes with JsonWriter (no JSON library in the browser module); times in ms are rounded to the
// microsecond, which no browser clock resolves anyway. Field names come from the same lists as the decoder's.
void write_arm(JsonWriter& w, const char* key, const ArmSummary& a) {
    w.key(key).begin_object();
    w.key("n").integer(static_cast<long long>(a.latency.n));
    w.key("fallbacks").integer(a.fallbacks);
    w.key("excluded").integer(a.excluded);
    const bool empty = a.latency.n == 0;
    w.key("min").ms(empty ? std::nullopt : std::optional<double>(a.latency.min));
    w.key("median").ms(empty ? std::nullopt : std::optional<double>(a.latency.median));
    w.key("max").ms(empty ? std::nullopt : std::optional<double>(a.latency.max));
    w.end_object();
}

void write_sample(JsonWriter& w, const Sample& s) {
    w.begin_object();
    w.key("phase").string(to_string(s.phase));
    w.key("idx").integer(s.idx);
    w.key("origin").string(to_string(s.origin));
    w.key("result").string(to_string(s.result));
    w.key("http_status").integer(s.http_status);
    w.key("protocol").string(s.protocol);
    if (!s.server_protocol.empty()) w.key("server_protocol").string(s.server_protocol);
    w.key("reused").boolean(s.reused);
#define H3PROBE_DURATION_JSON(name, max, metric, what) w.key(#name).ms(s.name);
    H3PROBE_SAMPLE_DURATIONS(H3PROBE_DURATION_JSON)
#undef H3PROBE_DURATION_JSON
    w.end_object();
}

// The context list's three kinds, by the field's type: text, a time or rate (real, rounded like the times), a flag.
void write_field(JsonWriter& w, const std::string& v) { w.string(v); }
void write_field(JsonWriter& w, const std::optional<double>& v) { w.ms(v); }
void write_field(JsonWriter& w, const std::optional<bool>& v) { w.boolean(v); }

// Field readers for the decoder: each returns false and sets `error` on the first problem.
class Fields {
public:
    Fields(const json& object, std::string where, std::string& error)
        : object_(object), where_(std::move(where)), error_(error) {}

    bool string(const char* key, std::string& out, std::size_t max_len, bool required = true) {
        const auto it = object_.find(key);
        if (it == object_.end()) return required ? fail(key, "is required") : true;
        if (!it->is_string()) return fail(key, "must be a string");
        const auto& s = it->get_ref<const std::string&>();
        if (s.size() > max_len) return fail(key, "is longer than " + std::to_string(max_len) + " characters");
        out = s;
        return true;
    }

    bool token(const char* key, std::string& out) {
        if (!string(key, out, 64)) return false;
        if (out.empty()) return fail(key, "must not be empty");
        for (char c : out)
            if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_')
                return fail(key, "may hold only letters, digits, '-' and '_'");
        return true;
    }

    bool one_of(const char* key, std::string& out, std::initializer_list<const char*> allowed) {
        if (!string(key, out, 64)) return false;
        for (const char* a : allowed)
            if (out == a) return true;
        return fail(key, "has an unknown value \"" + out + "\"");
    }

    bool integer(const char* key, int& out, int lo, int hi) {
        const auto it = object_.find(key);
        if (it == object_.end()) return fail(key, "is required");
        if (!it->is_number_integer()) return fail(key, "must be an integer");
        const auto v = it->get<long long>();
        if (v < lo || v > hi) return fail(key, "is out of range");
        out = static_cast<int>(v);
        return true;
    }

    // Absent and null both mean "no value"; a value must be finite and within [0, hi].
    bool number(const char* key, std::optional<double>& out, double hi) {
        const auto it = object_.find(key);
        if (it == object_.end() || it->is_null()) return true;
        if (!it->is_number()) return fail(key, "must be a number or null");
        const double v = it->get<double>();
        if (!std::isfinite(v) || v < 0 || v > hi) return fail(key, "is out of range");
        out = v;
        return true;
    }

    bool boolean(const char* key, std::optional<bool>& out) {
        const auto it = object_.find(key);
        if (it == object_.end() || it->is_null()) return true;
        if (!it->is_boolean()) return fail(key, "must be a boolean or null");
        out = it->get<bool>();
        return true;
    }

    // The context list's three kinds: an optional string, number or boolean, by the type of `out`.
    bool field(const char* key, std::string& out, std::size_t max_len) { return string(key, out, max_len, false); }
    bool field(const char* key, std::optional<double>& out, double hi) { return number(key, out, hi); }
    bool field(const char* key, std::optional<bool>& out, double) { return boolean(key, out); }

    bool fail(const char* key, const std::string& what) {
        error_ = where_ + key + " " + what;
        return false;
    }

private:
    const json& object_;
    std::string where_;
    std::string& error_;
};

bool decode_sample(const json& j, std::size_t i, Sample& s, std::string& error) {
    const std::string where = "samples[" + std::to_string(i) + "].";
    if (!j.is_object()) return error = "samples[" + std::to_string(i) + "] must be an object", false;
    Fields f(j, where, error);
    std::string phase, origin, result;
    if (!f.one_of("phase", phase, {"prewarm", "control", "treatment"})) return false;
    if (!f.one_of("origin", origin, {"h2", "h3"})) return false;
    if (!f.string("result", result, 64)) return false;
    if (!parse_result(result, s.result)) return f.fail("result", "has an unknown value \"" + result + "\"");
    parse_phase(phase, s.phase);
    parse_proto(origin, s.origin);
    if (!f.integer("idx", s.idx, 0, kMaxSampleIdx) || !f.integer("http_status", s.http_status, 0, 999) ||
        !f.string("protocol", s.protocol, kMaxProtocolChars) ||
        !f.string("server_protocol", s.server_protocol, kMaxProtocolChars, false) || !f.boolean("reused", s.reused))
        return false;
#define H3PROBE_DECODE_DURATION(name, max, metric, what) \
    if (!f.number(#name, s.name, max)) return false;
    H3PROBE_SAMPLE_DURATIONS(H3PROBE_DECODE_DURATION)
#undef H3PROBE_DECODE_DURATION
    if (s.result == SampleResult::ok && !s.network_ms) return f.fail("network_ms", "is required when result is ok");
    return true;
}

bool decode_context(const json& j, ClientContext& c, std::string& error) {
    if (!j.is_object()) return error = "context must be an object", false;
    Fields f(j, "context.", error);
#define H3PROBE_DECODE_CONTEXT(type, name, limit, what) \
    if (!f.field(#name, c.name, limit)) return false;
    H3PROBE_CONTEXT_FIELDS(H3PROBE_DECODE_CONTEXT)
#undef H3PROBE_DECODE_CONTEXT
    return true;
}

// The deepest nesting of arrays and objects in the text, brackets inside strings not counted. Checked before parsing so
// that no layer (here or in a consumer) ever walks a deeply nested document.
std::size_t nesting_depth(std::string_view text) {
    std::size_t depth = 0, deepest = 0;
    bool in_string = false, escaped = false;
    for (const char c : text) {
        if (in_string) {
            if (escaped) escaped = false;
            else if (c == '\\') escaped = true;
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            deepest = std::max(deepest, ++depth);
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return deepest;
}

}  // namespace

RunSummary summarize_run(const std::vector<Sample>& samples) {
    RunSummary r;
    std::vector<double> control, treatment;
    for (const Sample& s : samples) {
        const RequestClass c = classify(s);
        if (c == RequestClass::prewarm) continue;
        ArmSummary& arm = s.phase == Phase::control ? r.control : r.treatment;
        if (is_usable(c)) {
            (s.phase == Phase::control ? control : treatment).push_back(*s.network_ms);
            continue;
        }
        ++arm.excluded;
        if (c == RequestClass::fallback) ++arm.fallbacks;
    }
    r.control.latency = summarize(std::move(control));
    r.treatment.latency = summarize(std::move(treatment));
    if (r.control.latency.n > 0 && r.treatment.latency.n > 0)
        r.diff_median_ms = r.treatment.latency.median - r.control.latency.median;
    return r;
}

std::string encode_beacon(const Beacon& b) {
    JsonWriter w;
    w.begin_object();
    w.key("schema").string(kBeaconSchema);
    w.key("run_id").string(b.run_id);
    w.key("page_load_id").string(b.page_load_id);
    w.key("config_id").string(b.config_id);
    w.key("module_version").string(b.module_version);
    w.key("order").string(b.order);
    w.key("arms").string(b.arms);
    w.key("outcome").string(b.outcome);
    w.key("error").string(b.error);
    w.key("run_ms").ms(b.run_ms);
    w.key("sample_rate").number(b.sample_rate);  // a probability, not a time: not rounded
    w.key("context").begin_object();
#define H3PROBE_CONTEXT_JSON(type, name, limit, what) write_field(w.key(#name), b.context.name);
    H3PROBE_CONTEXT_FIELDS(H3PROBE_CONTEXT_JSON)
#undef H3PROBE_CONTEXT_JSON
    w.end_object();
    w.key("errors").begin_array();
    for (const std::string& e : b.errors) w.string(e);
    w.end_array();
    w.key("samples").begin_array();
    for (const Sample& s : b.samples) write_sample(w, s);
    w.end_array();
    w.key("summary").begin_object();
    write_arm(w, "control", b.summary.control);
    write_arm(w, "treatment", b.summary.treatment);
    w.key("diff_median_ms").ms(b.summary.diff_median_ms);
    w.end_object();
    w.end_object();
    // Text from the page (origin, error messages) may not be valid UTF-8: the writer puts U+FFFD for invalid bytes.
    return w.take();
}

DecodeResult decode_beacon(std::string_view json_text) {
    DecodeResult r;
    if (json_text.size() > kMaxBeaconBytes)
        return r.error = "beacon is larger than " + std::to_string(kMaxBeaconBytes) + " bytes", r;
    if (nesting_depth(json_text) > kMaxJsonDepth)
        return r.error = "beacon nests deeper than " + std::to_string(kMaxJsonDepth) + " levels", r;
    const json doc = json::parse(json_text.begin(), json_text.end(), nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) return r.error = "beacon is not valid JSON", r;
    if (!doc.is_object()) return r.error = "beacon must be a JSON object", r;

    Beacon b;
    Fields f(doc, "", r.error);
    std::string schema;
    if (!f.string("schema", schema, 32)) return r;
    if (schema != kBeaconSchema) return r.error = "schema \"" + schema + "\" is not " + kBeaconSchema, r;
    std::optional<double> run_ms;
    if (!f.token("run_id", b.run_id) || !f.token("page_load_id", b.page_load_id) ||
        !f.string("config_id", b.config_id, 64) || !f.string("module_version", b.module_version, 32) ||
        !f.one_of("order", b.order, {"h2-first", "h3-first"}) ||
        !f.one_of("outcome", b.outcome, {"complete", "deadline", "stopped", "error"}) ||
        !f.string("error", b.error, kMaxRunErrorChars, /*required=*/false) || !f.number("run_ms", run_ms, kMaxDurationMs))
        return r;
    b.run_ms = run_ms.value_or(0);
    // Absent in beacons from before A/A tests existed: those ran the experiment.
    Arms arms = Arms::h2_h3;
    if (doc.contains("arms")) {
        if (!f.string("arms", b.arms, 64)) return r;
        if (!parse_arms(b.arms, arms)) return f.fail("arms", "has an unknown value \"" + b.arms + "\""), r;
    }
    std::optional<double> sample_rate;
    if (!f.number("sample_rate", sample_rate, 1)) return r;
    b.sample_rate = sample_rate.value_or(1);
    if (const auto c = doc.find("context"); c != doc.end() && !c->is_null())
        if (!decode_context(*c, b.context, r.error)) return r;
    if (const auto e = doc.find("errors"); e != doc.end() && !e->is_null()) {
        if (!e->is_array() || e->size() > kMaxErrors)
            return r.error = "errors must be an array of at most " + std::to_string(kMaxErrors) + " strings", r;
        for (const auto& item : *e) {
            if (!item.is_string() || item.get_ref<const std::string&>().size() > kMaxErrorChars)
                return r.error = "errors must hold strings of at most " + std::to_string(kMaxErrorChars) + " bytes", r;
            b.errors.push_back(item.get<std::string>());
        }
    }

    const auto samples = doc.find("samples");
    if (samples == doc.end() || !samples->is_array()) return r.error = "samples must be an array", r;
    if (samples->size() > kMaxSamples)
        return r.error = "samples has more than " + std::to_string(kMaxSamples) + " entries", r;
    std::set<std::pair<int, int>> seen;
    for (std::size_t i = 0; i < samples->size(); ++i) {
        Sample s;
        if (!decode_sample((*samples)[i], i, s, r.error)) return r;
        // The classifier trusts a sample's origin: a measured sample must have asked what its arm asks under `arms`.
        if (s.phase != Phase::prewarm && s.origin != arm_protocol(arms, s.phase))
            return r.error = "samples[" + std::to_string(i) + "].origin " + to_string(s.origin) + " does not match arms " +
                             b.arms + " for phase " + to_string(s.phase),
                   r;
        if (!seen.insert({static_cast<int>(s.phase), s.idx}).second)
            return r.error = "samples[" + std::to_string(i) + "] repeats phase " + to_string(s.phase) + " idx " +
                             std::to_string(s.idx),
                   r;
        b.samples.push_back(std::move(s));
    }
    b.summary = summarize_run(b.samples);
    r.beacon = std::move(b);
    return r;
}

}  // namespace h3probe

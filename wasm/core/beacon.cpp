// Beacon encoding (JsonWriter), and the validating decoder (nlohmann/json's SAX parser) the collector runs on every
// beacon it receives.
#include "beacon.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "json_writer.hpp"
#include "request_class.hpp"

namespace h3probe {
namespace {

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

// The decoder parses with nlohmann/json's SAX interface, without building a DOM: one pass over the text fills a Slot
// for each field it knows, at the three levels it knows (the beacon, its context, each sample), and skips unknown
// fields with whatever they hold. The checks then read the slots in their fixed order, so the first problem reported
// does not depend on the order of the fields in the text. A key given twice keeps its last value, as in a JSON DOM.

using json = nlohmann::json;

// The keys of the beacon and of a sample that are not in a list of their own (the context's and the durations' come
// from H3PROBE_CONTEXT_FIELDS and H3PROBE_SAMPLE_DURATIONS). The order is only the encoder's, which makes the key
// look-up cheap (see find_key); the checks read the slots in their own order.
#define H3PROBE_BEACON_KEYS(X) \
    X(schema) X(run_id) X(page_load_id) X(config_id) X(module_version) X(order) X(arms) X(outcome) X(error) X(reason) \
    X(run_ms) X(sample_rate) X(payload_bytes) X(context) X(errors) X(samples)
#define H3PROBE_SAMPLE_KEYS(X) \
    X(phase) X(idx) X(origin) X(result) X(http_status) X(protocol) X(server_protocol) X(reused)

#define H3PROBE_KEY_ENUM(name) name,
#define H3PROBE_KEY_NAME(name) #name,
#define H3PROBE_DURATION_KEY_ENUM(name, max, metric, what) name,
#define H3PROBE_DURATION_KEY_NAME(name, max, metric, what) #name,
enum class BeaconKey { H3PROBE_BEACON_KEYS(H3PROBE_KEY_ENUM) count };
#define H3PROBE_CONTEXT_KEY_ENUM(type, name, limit, what) name,
enum class ContextKey { H3PROBE_CONTEXT_FIELDS(H3PROBE_CONTEXT_KEY_ENUM) count };
#undef H3PROBE_CONTEXT_KEY_ENUM
enum class SampleKey {
    H3PROBE_SAMPLE_KEYS(H3PROBE_KEY_ENUM) H3PROBE_SAMPLE_DURATIONS(H3PROBE_DURATION_KEY_ENUM) count
};
constexpr std::string_view kBeaconKeys[] = {H3PROBE_BEACON_KEYS(H3PROBE_KEY_NAME)};
constexpr std::string_view kContextKeys[] = {
#define H3PROBE_CONTEXT_KEY_NAME(type, name, limit, what) #name,
    H3PROBE_CONTEXT_FIELDS(H3PROBE_CONTEXT_KEY_NAME)
#undef H3PROBE_CONTEXT_KEY_NAME
};
constexpr std::string_view kSampleKeys[] = {H3PROBE_SAMPLE_KEYS(H3PROBE_KEY_NAME)
                                                H3PROBE_SAMPLE_DURATIONS(H3PROBE_DURATION_KEY_NAME)};
#undef H3PROBE_KEY_ENUM
#undef H3PROBE_KEY_NAME
#undef H3PROBE_DURATION_KEY_ENUM
#undef H3PROBE_DURATION_KEY_NAME

// One JSON value as the checks see it: its type and, for a scalar, its value. An array or object in a slot is only
// marked as such (its content is skipped), except where the beacon's schema has one: context, errors, samples.
struct Slot {
    enum class Type : unsigned char { absent, null, boolean, integer, unsigned_integer, real, string, array, object };
    Type type = Type::absent;
    union {
        bool boolean;
        json::number_integer_t integer;
        json::number_unsigned_t unsigned_integer;
        double real;
    };
    std::string string;

    Slot() : integer(0) {}
    bool is_integer() const { return type == Type::integer || type == Type::unsigned_integer; }
    bool is_number() const { return is_integer() || type == Type::real; }
    // As nlohmann's get<long long>() and get<double>() convert.
    long long as_integer() const {
        return type == Type::integer ? static_cast<long long>(integer) : static_cast<long long>(unsigned_integer);
    }
    double as_double() const {
        return type == Type::integer          ? static_cast<double>(integer)
               : type == Type::unsigned_integer ? static_cast<double>(unsigned_integer)
                                                : real;
    }
};

template <typename Key>
using Slots = std::array<Slot, static_cast<std::size_t>(Key::count)>;

struct SampleSlots {
    Slot self;  // the array element: a sample only when it is an object
    Slots<SampleKey> fields;
};

// Everything of the text the checks read. Arrays keep only the elements the checks can reach (one past a limit is
// refused by its count) but count them all.
struct ParsedBeacon {
    Slot root;
    Slots<BeaconKey> fields;
    Slots<ContextKey> context;
    std::size_t error_count = 0;
    std::vector<Slot> errors;
    std::size_t sample_count = 0;
    std::vector<SampleSlots> samples;
};

// The index of `key` in `names`, or -1. Clients write the keys in the encoder's order: the search starts after the last
// key found.
template <std::size_t N>
int find_key(const std::string_view (&names)[N], std::string_view key, std::size_t& hint) {
    for (std::size_t n = 0, i = hint; n < N; ++n, i = i + 1 == N ? 0 : i + 1)
        if (names[i] == key) return hint = i + 1 == N ? 0 : i + 1, static_cast<int>(i);
    return -1;
}

// nlohmann/json's SAX handler filling a ParsedBeacon. Returns false (stops) only on a parse error.
class BeaconReader {
public:
    using number_integer_t = json::number_integer_t;
    using number_unsigned_t = json::number_unsigned_t;
    using number_float_t = json::number_float_t;
    using string_t = json::string_t;
    using binary_t = json::binary_t;

    explicit BeaconReader(ParsedBeacon& out) : out_(out) {}

    bool null() { return scalar([](Slot& s) { s.type = Slot::Type::null; }); }
    bool boolean(bool v) {
        return scalar([v](Slot& s) { s.type = Slot::Type::boolean, s.boolean = v; });
    }
    bool number_integer(number_integer_t v) {
        return scalar([v](Slot& s) { s.type = Slot::Type::integer, s.integer = v; });
    }
    bool number_unsigned(number_unsigned_t v) {
        return scalar([v](Slot& s) { s.type = Slot::Type::unsigned_integer, s.unsigned_integer = v; });
    }
    bool number_float(number_float_t v, const string_t&) {
        return scalar([v](Slot& s) { s.type = Slot::Type::real, s.real = v; });
    }
    bool string(string_t& v) {
        return scalar([&v](Slot& s) { s.type = Slot::Type::string, s.string.assign(v.data(), v.size()); });
    }
    bool binary(binary_t&) { return scalar([](Slot& s) { s.type = Slot::Type::absent; }); }  // not in JSON text

    bool start_object(std::size_t) { return open(Slot::Type::object); }
    bool start_array(std::size_t) { return open(Slot::Type::array); }
    bool end_object() { return close(); }
    bool end_array() { return close(); }

    bool key(string_t& k) {
        if (skip_ > 0) return true;
        target_ = {};
        const std::string_view name(k.data(), k.size());
        switch (frames_[depth_ - 1]) {
            case Frame::beacon:
                if (const int i = find_key(kBeaconKeys, name, hint_[0]); i >= 0) {
                    const auto key = static_cast<BeaconKey>(i);
                    target_.slot = &out_.fields[i];
                    if (key == BeaconKey::context) target_.object = Frame::context;
                    if (key == BeaconKey::errors) target_.array = Frame::errors;
                    if (key == BeaconKey::samples) target_.array = Frame::samples;
                }
                break;
            case Frame::context:
                if (const int i = find_key(kContextKeys, name, hint_[1]); i >= 0) target_.slot = &out_.context[i];
                break;
            case Frame::sample:
                if (const int i = find_key(kSampleKeys, name, hint_[2]); i >= 0)
                    target_.slot = &out_.samples.back().fields[i];
                break;
            default:
                break;  // keys appear only in objects
        }
        return true;
    }

    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }

private:
    // The levels the reader descends into; any other array or object is skipped.
    enum class Frame : unsigned char { skip, beacon, context, errors, samples, sample };
    // Where the next value goes, and the level it opens if it is an object or an array.
    struct Target {
        Slot* slot = nullptr;
        Frame object = Frame::skip, array = Frame::skip;
    };

    // The next value's target: after a key, the key's slot; in a known array, its next element.
    Target take_target() {
        if (depth_ == 0) return {&out_.root, Frame::beacon, Frame::skip};
        switch (frames_[depth_ - 1]) {
            case Frame::errors:
                if (++out_.error_count > kMaxErrors) return {};
                return {&out_.errors.emplace_back()};
            case Frame::samples:
                if (++out_.sample_count > kMaxSamples) return {};
                return {&out_.samples.emplace_back().self, Frame::sample};
            default:
                return std::exchange(target_, Target{});
        }
    }

    template <typename Set>
    bool scalar(Set set) {
        if (skip_ > 0) return true;
        if (Slot* s = take_target().slot) set(*s);
        return true;
    }

    bool open(Slot::Type type) {
        if (skip_ > 0) return ++skip_, true;
        const Target t = take_target();
        if (t.slot) t.slot->type = type;
        const Frame frame = type == Slot::Type::object ? t.object : t.array;
        if (frame == Frame::skip) return skip_ = 1, true;
        // A key seen again replaces what its earlier value left.
        if (frame == Frame::context) out_.context = {};
        if (frame == Frame::errors) out_.error_count = 0, out_.errors.clear();
        if (frame == Frame::samples) out_.sample_count = 0, out_.samples.clear();
        frames_[depth_++] = frame;
        return true;
    }

    bool close() {
        if (skip_ > 0) return --skip_, true;
        --depth_;
        return true;
    }

    ParsedBeacon& out_;
    Frame frames_[3] = {};  // beacon, then context, errors or samples, then a sample
    std::size_t depth_ = 0;
    std::size_t skip_ = 0;  // levels open inside a skipped value
    Target target_;
    std::size_t hint_[3] = {};  // find_key's, per level with keys
};

// Field readers for the checks: each returns false and sets `error` on the first problem.
template <typename Key>
class Fields {
public:
    Fields(const Slots<Key>& slots, const std::string_view* names, std::string where, std::string& error)
        : slots_(slots), names_(names), where_(std::move(where)), error_(error) {}

    bool string(Key key, std::string& out, std::size_t max_len, bool required = true) {
        const Slot& v = at(key);
        if (v.type == Slot::Type::absent) return required ? fail(key, "is required") : true;
        if (v.type != Slot::Type::string) return fail(key, "must be a string");
        if (v.string.size() > max_len) return fail(key, "is longer than " + std::to_string(max_len) + " characters");
        out = v.string;
        return true;
    }

    bool token(Key key, std::string& out) {
        if (!string(key, out, 64)) return false;
        if (out.empty()) return fail(key, "must not be empty");
        for (char c : out)
            if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_')
                return fail(key, "may hold only letters, digits, '-' and '_'");
        return true;
    }

    bool one_of(Key key, std::string& out, std::initializer_list<const char*> allowed) {
        if (!string(key, out, 64)) return false;
        for (const char* a : allowed)
            if (out == a) return true;
        return fail(key, "has an unknown value \"" + out + "\"");
    }

    bool integer(Key key, int& out, int lo, int hi, bool required = true) {
        const Slot& v = at(key);
        if (v.type == Slot::Type::absent) return required ? fail(key, "is required") : true;
        if (!v.is_integer()) return fail(key, "must be an integer");
        const long long n = v.as_integer();
        if (n < lo || n > hi) return fail(key, "is out of range");
        out = static_cast<int>(n);
        return true;
    }

    // Absent and null both mean "no value"; a value must be finite and within [0, hi].
    bool number(Key key, std::optional<double>& out, double hi) {
        const Slot& v = at(key);
        if (v.type == Slot::Type::absent || v.type == Slot::Type::null) return true;
        if (!v.is_number()) return fail(key, "must be a number or null");
        const double d = v.as_double();
        if (!std::isfinite(d) || d < 0 || d > hi) return fail(key, "is out of range");
        out = d;
        return true;
    }

    bool boolean(Key key, std::optional<bool>& out) {
        const Slot& v = at(key);
        if (v.type == Slot::Type::absent || v.type == Slot::Type::null) return true;
        if (v.type != Slot::Type::boolean) return fail(key, "must be a boolean or null");
        out = v.boolean;
        return true;
    }

    // The context list's three kinds: an optional string, number or boolean, by the type of `out`.
    bool field(Key key, std::string& out, std::size_t max_len) { return string(key, out, max_len, false); }
    bool field(Key key, std::optional<double>& out, double hi) { return number(key, out, hi); }
    bool field(Key key, std::optional<bool>& out, double) { return boolean(key, out); }

    bool fail(Key key, const std::string& what) {
        error_ = where_;
        error_.append(names_[static_cast<std::size_t>(key)]).append(" ").append(what);
        return false;
    }

private:
    const Slot& at(Key key) const { return slots_[static_cast<std::size_t>(key)]; }

    const Slots<Key>& slots_;
    const std::string_view* names_;
    std::string where_;
    std::string& error_;
};

bool decode_sample(const SampleSlots& j, std::size_t i, Sample& s, std::string& error) {
    if (j.self.type != Slot::Type::object) return error = "samples[" + std::to_string(i) + "] must be an object", false;
    Fields<SampleKey> f(j.fields, kSampleKeys, "samples[" + std::to_string(i) + "].", error);
    using K = SampleKey;
    std::string phase, origin, result;
    if (!f.one_of(K::phase, phase, {"prewarm", "control", "treatment"})) return false;
    if (!f.one_of(K::origin, origin, {"h2", "h3"})) return false;
    if (!f.string(K::result, result, 64)) return false;
    if (!parse_result(result, s.result)) return f.fail(K::result, "has an unknown value \"" + result + "\"");
    parse_phase(phase, s.phase);
    parse_proto(origin, s.origin);
    if (!f.integer(K::idx, s.idx, 0, kMaxSampleIdx) || !f.integer(K::http_status, s.http_status, 0, 999) ||
        !f.string(K::protocol, s.protocol, kMaxProtocolChars) ||
        !f.string(K::server_protocol, s.server_protocol, kMaxProtocolChars, false) || !f.boolean(K::reused, s.reused))
        return false;
#define H3PROBE_DECODE_DURATION(name, max, metric, what) \
    if (!f.number(K::name, s.name, max)) return false;
    H3PROBE_SAMPLE_DURATIONS(H3PROBE_DECODE_DURATION)
#undef H3PROBE_DECODE_DURATION
    if (s.result == SampleResult::ok && !s.network_ms) return f.fail(K::network_ms, "is required when result is ok");
    return true;
}

// A name of a closed X(name, what) list (H3PROBE_LOAD_ERROR_REASONS, H3PROBE_WORKER_FALLBACK_REASONS), as text.
#define H3PROBE_LIST_NAME(name, what) #name,

bool decode_context(const Slot& j, const Slots<ContextKey>& slots, ClientContext& c, std::string& error) {
    if (j.type != Slot::Type::object) return error = "context must be an object", false;
    Fields<ContextKey> f(slots, kContextKeys, "context.", error);
#define H3PROBE_DECODE_CONTEXT(type, name, limit, what) \
    if (!f.field(ContextKey::name, c.name, limit)) return false;
    H3PROBE_CONTEXT_FIELDS(H3PROBE_DECODE_CONTEXT)
#undef H3PROBE_DECODE_CONTEXT
    // Why the run left its Worker: a name of the closed list, and only for a run on the main thread.
    if (c.worker_fallback.empty()) return true;
    static const std::set<std::string, std::less<>> kFallbacks = {
        H3PROBE_WORKER_FALLBACK_REASONS(H3PROBE_LIST_NAME)};
    if (!kFallbacks.count(c.worker_fallback))
        return f.fail(ContextKey::worker_fallback, "has an unknown value \"" + c.worker_fallback + "\"");
    if (c.run_context != "main") return f.fail(ContextKey::worker_fallback, "is only for run_context main");
    return true;
}

// The deepest nesting of arrays and objects in the text, brackets inside strings not counted. Checked before parsing so
// that no layer (here or in a consumer) ever walks a deeply nested document.
std::size_t nesting_depth(std::string_view text) {
    std::size_t depth = 0, deepest = 0;
    for (auto p = text.begin(), end = text.end(); p != end;) {
        const char c = *p++;
        if (c == '"') {  // to the closing quote, over escaped characters
            while (p != end) {
                const char s = *p++;
                if (s == '"') break;
                if (s == '\\' && p != end) ++p;
            }
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
    w.key("payload_bytes").integer(b.payload_bytes);
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
    // nlohmann/json's lexer takes a raw NUL byte for the end of input, so text after one would be ignored, not refused.
    // JSON has no place for a raw NUL (inside a string it must be escaped as \u0000).
    if (const auto nul = json_text.find('\0'); nul != std::string_view::npos)
        return r.error = "beacon holds a NUL byte at offset " + std::to_string(nul), r;
    ParsedBeacon doc;
    BeaconReader reader(doc);
    if (!json::sax_parse(json_text.begin(), json_text.end(), &reader)) return r.error = "beacon is not valid JSON", r;
    if (doc.root.type != Slot::Type::object) return r.error = "beacon must be a JSON object", r;

    using K = BeaconKey;
    Beacon b;
    Fields<BeaconKey> f(doc.fields, kBeaconKeys, "", r.error);
    const auto field = [&doc](K key) -> const Slot& { return doc.fields[static_cast<std::size_t>(key)]; };
    std::string schema;
    if (!f.string(K::schema, schema, 32)) return r;
    if (schema != kBeaconSchema) return r.error = "schema \"" + schema + "\" is not " + kBeaconSchema, r;
    std::optional<double> run_ms;
    // The gate's load_error beacon has no run: the fields only a run has are optional in it.
    const Slot& outcome = field(K::outcome);
    const bool load_error = outcome.type == Slot::Type::string && outcome.string == "load_error";
    const bool run_field = !load_error;
    const bool order_given = run_field || field(K::order).type != Slot::Type::absent;
    if (!f.token(K::run_id, b.run_id) || !f.token(K::page_load_id, b.page_load_id) ||
        !f.string(K::config_id, b.config_id, 64) || !f.string(K::module_version, b.module_version, 32, run_field) ||
        (order_given && !f.one_of(K::order, b.order, {"h2-first", "h3-first"})) ||
        !f.one_of(K::outcome, b.outcome, {"complete", "deadline", "stopped", "error", "load_error"}) ||
        !f.string(K::error, b.error, kMaxRunErrorChars, /*required=*/false) ||
        !f.number(K::run_ms, run_ms, kMaxDurationMs))
        return r;
    b.run_ms = run_ms.value_or(0);
    if (load_error) {
        static const std::set<std::string, std::less<>> kReasons = {H3PROBE_LOAD_ERROR_REASONS(H3PROBE_LIST_NAME)};
        if (!f.string(K::reason, b.reason, 64)) return r;
        if (!kReasons.count(b.reason)) return f.fail(K::reason, "has an unknown value \"" + b.reason + "\""), r;
    } else if (field(K::reason).type != Slot::Type::absent) {
        return f.fail(K::reason, "is only for outcome load_error"), r;
    }
    // A load_error beacon without arms keeps none: its stored run is in no arms mode's report (the report counts load
    // errors on their own).
    Arms arms = Arms::h2_h3;
    if (load_error && field(K::arms).type == Slot::Type::absent) b.arms.clear();
    else if (!f.string(K::arms, b.arms, 64)) return r;
    else if (!parse_arms(b.arms, arms)) return f.fail(K::arms, "has an unknown value \"" + b.arms + "\""), r;
    std::optional<double> sample_rate;
    if (!f.number(K::sample_rate, sample_rate, 1)) return r;
    b.sample_rate = sample_rate.value_or(1);
    // Absent from a beacon of a module older than the payload mode: those runs fetched the no-op.
    if (!f.integer(K::payload_bytes, b.payload_bytes, 0, kMaxPayloadBytes, /*required=*/false)) return r;
    if (const Slot& c = field(K::context); c.type != Slot::Type::absent && c.type != Slot::Type::null)
        if (!decode_context(c, doc.context, b.context, r.error)) return r;
    if (const Slot& e = field(K::errors); e.type != Slot::Type::absent && e.type != Slot::Type::null) {
        if (e.type != Slot::Type::array || doc.error_count > kMaxErrors)
            return r.error = "errors must be an array of at most " + std::to_string(kMaxErrors) + " strings", r;
        for (Slot& item : doc.errors) {
            if (item.type != Slot::Type::string || item.string.size() > kMaxErrorChars)
                return r.error = "errors must hold strings of at most " + std::to_string(kMaxErrorChars) + " bytes", r;
            b.errors.push_back(std::move(item.string));
        }
    }

    if (field(K::samples).type != Slot::Type::array) return r.error = "samples must be an array", r;
    if (load_error && doc.sample_count > 0) return r.error = "samples must be empty for outcome load_error", r;
    if (doc.sample_count > kMaxSamples)
        return r.error = "samples has more than " + std::to_string(kMaxSamples) + " entries", r;
    std::set<std::pair<int, int>> seen;
    b.samples.reserve(doc.samples.size());
    for (std::size_t i = 0; i < doc.samples.size(); ++i) {
        Sample s;
        if (!decode_sample(doc.samples[i], i, s, r.error)) return r;
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

#undef H3PROBE_LIST_NAME

}  // namespace h3probe

// Beacon payload: encode/decode round trip, server-side summary, and the decoder's rejections.
#include <doctest/doctest.h>

#include <cstring>

#include <nlohmann/json.hpp>

#include "beacon.hpp"
#include "sample_builder.hpp"

using namespace h3probe;
using nlohmann::json;

namespace {
Sample make(Phase phase, int idx, Proto origin, const char* protocol, std::optional<double> network,
            SampleResult result = SampleResult::ok) {
    Sample s = test::make_sample(phase, idx, origin, protocol, network, result);
    if (network) {
        s.dns_ms = 0;
        s.connect_ms = 0;
        s.tls_ms = 0;
        s.request_ms = *network - 1;
        s.response_ms = 0.5;
        s.queue_ms = 0.5;
        s.reused = true;
    }
    s.start_ms = 1000 + idx;
    s.fetch_ms = network ? *network + 1 : 3.0;
    return s;
}

Beacon sample_beacon() {
    Beacon b;
    b.run_id = "0123456789abcdef";
    b.page_load_id = "fedcba9876543210";
    b.config_id = "default";
    b.module_version = "0.1.0";
    b.order = "h2-first";
    b.outcome = "complete";
    b.run_ms = 321.5;
    b.samples = {make(Phase::prewarm, 0, Proto::h3, "h2", 80.0), make(Phase::prewarm, 1, Proto::h3, "h3", 40.0),
                 make(Phase::control, 0, Proto::h2, "h2", 30.0),  make(Phase::control, 1, Proto::h2, "h2", 50.0),
                 make(Phase::control, 2, Proto::h2, "h2", 40.0),  make(Phase::treatment, 0, Proto::h3, "h3", 20.0),
                 make(Phase::treatment, 1, Proto::h3, "h2", 99.0),  // fallback
                 make(Phase::treatment, 2, Proto::h3, "", std::nullopt, SampleResult::timing_unavailable)};
    b.samples[5].server_protocol = "HTTP/3.0";  // the origin's own word, kept as sent
    b.summary = summarize_run(b.samples);
    return b;
}
}  // namespace

TEST_CASE("run summary counts only samples over the arm's protocol and pairs the medians") {
    const RunSummary s = sample_beacon().summary;
    CHECK(s.control.latency.n == 3);
    CHECK(s.control.latency.median == doctest::Approx(40));
    CHECK(s.control.latency.min == doctest::Approx(30));
    CHECK(s.control.latency.max == doctest::Approx(50));
    CHECK(s.treatment.latency.n == 1);
    CHECK(s.treatment.fallbacks == 1);
    CHECK(s.treatment.excluded == 2);
    CHECK(s.control.excluded == 0);
    REQUIRE(s.diff_median_ms);
    CHECK(*s.diff_median_ms == doctest::Approx(-20));
}

TEST_CASE("a beacon survives encode then decode unchanged") {
    const Beacon b = sample_beacon();
    const std::string text = encode_beacon(b);
    const DecodeResult r = decode_beacon(text);
    REQUIRE_MESSAGE(r.beacon, r.error);
    CHECK(r.beacon->run_id == b.run_id);
    CHECK(r.beacon->page_load_id == b.page_load_id);
    CHECK(r.beacon->order == "h2-first");
    CHECK(r.beacon->run_ms == doctest::Approx(321.5));
    REQUIRE(r.beacon->samples.size() == b.samples.size());
    for (std::size_t i = 0; i < b.samples.size(); ++i) {
        const Sample &x = b.samples[i], &y = r.beacon->samples[i];
        CHECK(x.phase == y.phase);
        CHECK(x.idx == y.idx);
        CHECK(x.origin == y.origin);
        CHECK(x.result == y.result);
        CHECK(x.protocol == y.protocol);
        CHECK(x.server_protocol == y.server_protocol);
        CHECK(x.network_ms == y.network_ms);
        CHECK(x.reused == y.reused);
        CHECK(x.fetch_ms == y.fetch_ms);
    }
    CHECK(encode_beacon(*r.beacon) == text);  // decode is the exact inverse of encode
    const json j = json::parse(text);
    CHECK(j["schema"] == "h3probe/1");
    CHECK(j["samples"][7]["network_ms"].is_null());
    CHECK(j["summary"]["treatment"]["fallbacks"] == 1);
}

TEST_CASE("the decoder recomputes the summary instead of trusting the client") {
    json j = json::parse(encode_beacon(sample_beacon()));
    j["summary"]["control"]["median"] = 1;
    j["summary"]["diff_median_ms"] = -999;
    const auto r = decode_beacon(j.dump());
    REQUIRE(r.beacon);
    CHECK(*r.beacon->summary.diff_median_ms == doctest::Approx(-20));
}

TEST_CASE("the decoder accepts unknown fields from newer clients") {
    json j = json::parse(encode_beacon(sample_beacon()));
    j["context"] = {{"effective_type", "4g"}};
    j["samples"][0]["future_field"] = 1;
    CHECK(decode_beacon(j.dump()).beacon.has_value());
}

TEST_CASE("the decoder rejects malformed beacons with a reason naming the field") {
    const json good = json::parse(encode_beacon(sample_beacon()));
    auto reject = [](const json& j) {
        const auto r = decode_beacon(j.dump());
        CHECK_FALSE(r.beacon.has_value());
        return r.error;
    };
    SUBCASE("not JSON") { CHECK(decode_beacon("{\"schema\":").error == "beacon is not valid JSON"); }
    SUBCASE("another schema") {
        json j = good;
        j["schema"] = "h3probe/0";
        CHECK(reject(j).find("schema") != std::string::npos);
    }
    SUBCASE("a missing run id") {
        json j = good;
        j.erase("run_id");
        CHECK(reject(j) == "run_id is required");
    }
    SUBCASE("a run id with characters that could smuggle SQL or HTML") {
        json j = good;
        j["run_id"] = "x'; drop table runs; --";
        CHECK(reject(j).find("run_id") != std::string::npos);
    }
    SUBCASE("a negative latency") {
        json j = good;
        j["samples"][2]["network_ms"] = -5;
        CHECK(reject(j) == "samples[2].network_ms is out of range");
    }
    SUBCASE("a latency that is a string") {
        json j = good;
        j["samples"][2]["network_ms"] = "5";
        CHECK(reject(j) == "samples[2].network_ms must be a number or null");
    }
    SUBCASE("an ok sample without a latency") {
        json j = good;
        j["samples"][3]["network_ms"] = nullptr;
        CHECK(reject(j) == "samples[3].network_ms is required when result is ok");
    }
    SUBCASE("an unknown phase") {
        json j = good;
        j["samples"][0]["phase"] = "warmup";
        CHECK(reject(j).find("samples[0].phase") != std::string::npos);
    }
    SUBCASE("the same request twice") {
        json j = good;
        j["samples"][3]["idx"] = 0;
        CHECK(reject(j).find("repeats phase control idx 0") != std::string::npos);
    }
    SUBCASE("a context field of the wrong type") {
        json j = good;
        j["context"]["rtt_ms"] = "fast";
        CHECK(reject(j) == "context.rtt_ms must be a number or null");
    }
    SUBCASE("a sample rate above 1") {
        json j = good;
        j["sample_rate"] = 2;
        CHECK(reject(j) == "sample_rate is out of range");
    }
    SUBCASE("too many samples") {
        json j = good;
        j["samples"] = json::array();
        for (int i = 0; i < 201; ++i) j["samples"].push_back(good["samples"][2]);
        CHECK(reject(j).find("more than 200") != std::string::npos);
    }
}

TEST_CASE("the arms mode survives encode then decode, and a beacon without it is refused") {
    Beacon b = sample_beacon();
    CHECK(json::parse(encode_beacon(b))["arms"] == "h2-h3");
    b.arms = "h3-h3";
    b.samples = {make(Phase::prewarm, 0, Proto::h3, "h3", 40.0), make(Phase::control, 0, Proto::h3, "h3", 30.0),
                 make(Phase::treatment, 0, Proto::h3, "h3", 31.0), make(Phase::treatment, 1, Proto::h3, "h2", 90.0)};
    b.summary = summarize_run(b.samples);
    const std::string text = encode_beacon(b);
    const DecodeResult r = decode_beacon(text);
    REQUIRE_MESSAGE(r.beacon, r.error);
    CHECK(r.beacon->arms == "h3-h3");
    CHECK(encode_beacon(*r.beacon) == text);
    CHECK(r.beacon->summary.control.latency.n == 1);
    CHECK(r.beacon->summary.treatment.latency.n == 1);
    CHECK(r.beacon->summary.treatment.fallbacks == 1);

    json without = json::parse(encode_beacon(sample_beacon()));
    without.erase("arms");
    const DecodeResult refused = decode_beacon(without.dump());
    CHECK_FALSE(refused.beacon);
    CHECK(refused.error == "arms is required");
}

TEST_CASE("the payload mode and the body size survive encode then decode, and a beacon without the mode fetched the no-op") {
    Beacon b = sample_beacon();
    b.payload_bytes = 131072;
    b.samples[2].body_bytes = 131072;
    const std::string text = encode_beacon(b);
    const DecodeResult r = decode_beacon(text);
    REQUIRE_MESSAGE(r.beacon, r.error);
    CHECK(r.beacon->payload_bytes == 131072);
    CHECK(r.beacon->samples[2].body_bytes == 131072);
    CHECK_FALSE(r.beacon->samples[3].body_bytes);
    CHECK(encode_beacon(*r.beacon) == text);

    json j = json::parse(text);
    j.erase("payload_bytes");
    const DecodeResult old = decode_beacon(j.dump());
    REQUIRE_MESSAGE(old.beacon, old.error);
    CHECK(old.beacon->payload_bytes == 0);
    for (const json& bad : {json(-1), json(kMaxPayloadBytes + 1), json(1.5), json("131072")}) {
        j["payload_bytes"] = bad;
        const DecodeResult refused = decode_beacon(j.dump());
        CHECK_FALSE(refused.beacon);
        CHECK(refused.error.rfind("payload_bytes ", 0) == 0);
    }
    j = json::parse(text);
    j["samples"][2]["body_bytes"] = kMaxTransferBytes + 1;
    CHECK(decode_beacon(j.dump()).error == "samples[2].body_bytes is out of range");
}

TEST_CASE("the decoder rejects an unknown arms mode and samples that asked another protocol than their arm") {
    json j = json::parse(encode_beacon(sample_beacon()));
    j["arms"] = "h3-h2";
    CHECK(decode_beacon(j.dump()).error == "arms has an unknown value \"h3-h2\"");
    j["arms"] = 3;
    CHECK(decode_beacon(j.dump()).error == "arms must be a string");
    j["arms"] = "h2-h2";
    CHECK(decode_beacon(j.dump()).error == "samples[5].origin h3 does not match arms h2-h2 for phase treatment");
    j["arms"] = "h2-h3";
    j["samples"][2]["origin"] = "h3";
    CHECK(decode_beacon(j.dump()).error == "samples[2].origin h3 does not match arms h2-h3 for phase control");
}

TEST_CASE("beacon times are rounded to the microsecond but the sample rate is not") {
    Beacon b = sample_beacon();
    b.run_ms = 321.123456789;
    b.sample_rate = 0.0001234567;
    b.samples[2].network_ms = 30.0004999;
    b.samples[2].start_ms = 1234567.8915;
    b.context.rtt_ms = 50;
    b.context.timer_resolution_ms = 0.005;
    b.summary = summarize_run(b.samples);
    const std::string text = encode_beacon(b);
    CHECK(text.find(R"("run_ms":321.123,)") != std::string::npos);
    CHECK(text.find(R"("sample_rate":0.0001234567,)") != std::string::npos);
    CHECK(text.find(R"("network_ms":30,)") != std::string::npos);
    CHECK(text.find(R"("start_ms":1234567.892,)") != std::string::npos);
    CHECK(text.find(R"("timer_resolution_ms":0.005)") != std::string::npos);
    const DecodeResult r = decode_beacon(text);
    REQUIRE_MESSAGE(r.beacon, r.error);
    CHECK(r.beacon->run_ms == 321.123);
    CHECK(r.beacon->sample_rate == 0.0001234567);
    CHECK(r.beacon->samples[2].network_ms == 30.0);
    CHECK(r.beacon->context.rtt_ms == 50.0);
    CHECK(encode_beacon(*r.beacon) == text);
}

TEST_CASE("the decoder keeps every digit a number holds, whatever the encoder would have rounded") {
    json j = json::parse(encode_beacon(sample_beacon()));
    j["run_ms"] = 321.12345678901234;
    j["samples"][2]["network_ms"] = 30.000000000000004;
    j["samples"][2]["start_ms"] = 1002.4999999999999;
    j["context"]["timer_resolution_ms"] = 0.09999999999999964;
    const auto r = decode_beacon(j.dump());
    REQUIRE_MESSAGE(r.beacon, r.error);
    CHECK(r.beacon->run_ms == 321.12345678901234);
    CHECK(r.beacon->samples[2].network_ms == 30.000000000000004);
    CHECK(*r.beacon->context.timer_resolution_ms == 0.09999999999999964);
}

TEST_CASE("text from the page is escaped and made valid UTF-8 in the beacon") {
    Beacon b = sample_beacon();
    b.error = "quote \" slash \\ line\nend \x01";
    b.errors = {"bad \xFF byte", "ok \xE2\x82\xAC"};
    b.context.page_origin = "https://xn--caf-dma.test";
    b.samples[0].protocol = "h3\"";
    const std::string text = encode_beacon(b);
    const json j = json::parse(text);  // strict UTF-8
    CHECK(j["error"] == "quote \" slash \\ line\nend \x01");
    CHECK(j["errors"][0] == "bad \xEF\xBF\xBD byte");
    CHECK(j["errors"][1] == "ok \xE2\x82\xAC");
    const auto r = decode_beacon(text);
    REQUIRE_MESSAGE(r.beacon, r.error);
    CHECK(r.beacon->error == b.error);
    CHECK(r.beacon->samples[0].protocol == "h3\"");
    CHECK(r.beacon->context.page_origin == "https://xn--caf-dma.test");
}

namespace {
// The good beacon's text with `member` ("key":value) added at the start of the object that `at` opens (`at` ends with
// its "{"), or else at the end of the beacon: a key the text already has then appears twice, first or last.
std::string with_member(const std::string& member, const char* at = nullptr) {
    std::string text = encode_beacon(sample_beacon());
    if (at) {
        const std::size_t i = text.find(at);
        REQUIRE(i != std::string::npos);
        return text.insert(i + std::strlen(at), member + ",");
    }
    return text.insert(text.size() - 1, "," + member);
}

// The good beacon's text with `member` added at the end of its first sample (after the sample's own fields).
std::string with_last_in_sample(const std::string& member) {
    std::string text = encode_beacon(sample_beacon());
    return text.insert(text.find('}', text.find("\"samples\":[{")), "," + member);
}
}  // namespace

TEST_CASE("a key given twice keeps its last value, at every level") {
    SUBCASE("a field of the beacon") {
        const auto last = decode_beacon(with_member(R"("run_id":"second")"));
        REQUIRE_MESSAGE(last.beacon, last.error);
        CHECK(last.beacon->run_id == "second");
        CHECK(decode_beacon(with_member(R"("run_id":"bad id!")")).error ==
              "run_id may hold only letters, digits, '-' and '_'");
        // The first of the two is not checked at all.
        CHECK(decode_beacon(with_member(R"("run_id":"bad id!")", "{")).beacon.has_value());
    }
    SUBCASE("the context, replaced whole") {
        const auto r =
            decode_beacon(with_member(R"("context":{"effective_type":"4g","rtt_ms":80},"context":{"save_data":true})"));
        REQUIRE_MESSAGE(r.beacon, r.error);
        CHECK(r.beacon->context.effective_type.empty());  // nothing of the first context is left
        CHECK_FALSE(r.beacon->context.rtt_ms);
        CHECK(r.beacon->context.save_data == true);
        CHECK(decode_beacon(with_member(R"("context":[])")).error == "context must be an object");
        CHECK(decode_beacon(with_member(R"("context":null)")).beacon.has_value());
    }
    SUBCASE("the samples, replaced whole") {
        const auto last = decode_beacon(with_member(R"("samples":[])"));
        REQUIRE_MESSAGE(last.beacon, last.error);
        CHECK(last.beacon->samples.empty());
        CHECK(last.beacon->summary.control.latency.n == 0);
        const auto first = decode_beacon(with_member(R"("samples":[])", "{"));
        REQUIRE_MESSAGE(first.beacon, first.error);
        CHECK(first.beacon->samples.size() == 8);
        CHECK(decode_beacon(with_member(R"("samples":{})")).error == "samples must be an array");
    }
    SUBCASE("the errors, replaced whole") {
        const auto last = decode_beacon(with_member(R"("errors":["one","two"])"));
        REQUIRE_MESSAGE(last.beacon, last.error);
        CHECK(last.beacon->errors == std::vector<std::string>{"one", "two"});
        CHECK(decode_beacon(with_member(R"("errors":["one",2])")).error ==
              "errors must hold strings of at most 300 bytes");
    }
    SUBCASE("a field of a sample") {
        const auto r = decode_beacon(with_member(R"("network_ms":5,"network_ms":7)", "\"samples\":[{"));
        REQUIRE_MESSAGE(r.beacon, r.error);  // both come before the sample's own network_ms, which is kept
        CHECK(r.beacon->samples[0].network_ms == 80.0);
        CHECK(decode_beacon(with_last_in_sample(R"("idx":1.5)")).error == "samples[0].idx must be an integer");
    }
}

TEST_CASE("unknown fields are skipped whatever they hold, known names inside them included") {
    const char* junk = R"({"run_id":"bad id!","samples":5,"rtt_ms":"x","idx":-1,"deeper":[[{"phase":"warmup"}]]})";
    for (const char* at : {"{", "\"context\":{", "\"samples\":[{", "\"samples\":[{\"phase\":\"prewarm\",\"idx\":0,"}) {
        CAPTURE(at);
        for (const std::string& value : {std::string(junk), "[" + std::string(junk) + ",[1,[2]],null]"}) {
            const auto r = decode_beacon(with_member("\"future\":" + value, at));
            REQUIRE_MESSAGE(r.beacon, r.error);
            CHECK(encode_beacon(*r.beacon) == encode_beacon(sample_beacon()));
        }
    }
    // Depth is counted over the whole text, unknown values included: 8 levels pass, 9 do not.
    CHECK(decode_beacon(with_member(R"("future":[[[{"a":[1]}]]])", "\"samples\":[{")).beacon.has_value());
    CHECK(decode_beacon(with_member(R"("future":[[[{"a":[[1]]}]]])", "\"samples\":[{")).error ==
          "beacon nests deeper than 8 levels");
}

TEST_CASE("the first problem reported follows the decoder's order of checks, not the order of the text") {
    // samples[0].phase is broken early in the text, run_id at its end (the last of two run_ids counts); run_id is
    // checked before the samples.
    std::string text = with_member(R"("run_id":"?")");
    text.replace(text.find("\"prewarm\""), 9, "\"warmup\"");
    CHECK(decode_beacon(text).error == "run_id may hold only letters, digits, '-' and '_'");
    CHECK(decode_beacon(with_member(R"("run_id":"ok")")).beacon.has_value());
}

TEST_CASE("numbers: integers where integers are due, any finite JSON number elsewhere") {
    const auto idx = [](const char* value) {
        std::string text = encode_beacon(sample_beacon());
        const std::size_t at = text.find("\"idx\":", text.find("\"samples\":[{"));
        text.replace(at, std::strlen("\"idx\":0"), std::string("\"idx\":") + value);
        return decode_beacon(text);
    };
    CHECK(idx("-0").beacon.has_value());  // an integer (JSON's -0 has no fraction or exponent)
    CHECK(idx("1.0").error == "samples[0].idx must be an integer");
    CHECK(idx("1e0").error == "samples[0].idx must be an integer");
    CHECK(idx("\"1\"").error == "samples[0].idx must be an integer");
    CHECK(idx("1001").error == "samples[0].idx is out of range");
    CHECK(idx("-1").error == "samples[0].idx is out of range");
    CHECK(idx("9223372036854775808").error == "samples[0].idx is out of range");   // beyond int64
    CHECK(idx("18446744073709551615").error == "samples[0].idx is out of range");  // the largest uint64
    CHECK(idx("18446744073709551616").error == "samples[0].idx must be an integer");  // beyond: a float
    CHECK(idx("1e400").error == "beacon is not valid JSON");  // overflows a double
    CHECK(idx("01").error == "beacon is not valid JSON");

    const auto rtt = [](const char* value) {
        return decode_beacon(with_member(std::string(R"("context":{"rtt_ms":)") + value + "}"));
    };
    CHECK(rtt("5").beacon.value().context.rtt_ms == 5.0);
    CHECK(rtt("5e1").beacon.value().context.rtt_ms == 50.0);
    CHECK(rtt("1E-3").beacon.value().context.rtt_ms == 0.001);
    CHECK(rtt("600000").beacon.value().context.rtt_ms == 600000.0);
    CHECK(rtt("null").beacon.value().context.rtt_ms == std::nullopt);
    CHECK(rtt("600000.001").error == "context.rtt_ms is out of range");
    CHECK(rtt("18446744073709551615").error == "context.rtt_ms is out of range");
    CHECK(rtt("-1").error == "context.rtt_ms is out of range");
    CHECK(rtt("true").error == "context.rtt_ms must be a number or null");
    CHECK(rtt("[5]").error == "context.rtt_ms must be a number or null");
    CHECK(rtt("1e999").error == "beacon is not valid JSON");
}

TEST_CASE("null where a field may be absent, refused where a value is due") {
    const auto with = [](const char* member) { return decode_beacon(with_member(member)); };
    CHECK(with(R"("run_ms":null)").beacon.value().run_ms == 0);
    CHECK(with(R"("sample_rate":null)").beacon.value().sample_rate == 1);
    CHECK(with(R"("context":null)").beacon.has_value());
    CHECK(with(R"("errors":null)").beacon.value().errors.empty());
    CHECK(with(R"("arms":null)").error == "arms must be a string");
    CHECK(with(R"("error":null)").error == "error must be a string");
    CHECK(with(R"("samples":null)").error == "samples must be an array");
    CHECK(with(R"("run_id":null)").error == "run_id must be a string");
    const auto sample = [](const char* member) { return decode_beacon(with_last_in_sample(member)); };
    CHECK(sample(R"("reused":null)").beacon.has_value());
    CHECK(sample(R"("server_protocol":null)").error == "samples[0].server_protocol must be a string");
    CHECK(sample(R"("http_status":null)").error == "samples[0].http_status must be an integer");
}

TEST_CASE("text that is not JSON, or nests too deep, is refused whole") {
    CHECK(decode_beacon("").error == "beacon is not valid JSON");
    CHECK(decode_beacon("[]").error == "beacon must be a JSON object");
    CHECK(decode_beacon("\"h3probe/1\"").error == "beacon must be a JSON object");
    CHECK(decode_beacon(encode_beacon(sample_beacon()) + " {}").error == "beacon is not valid JSON");
    // Bytes that are not UTF-8, and an escaped lone surrogate, inside a string.
    std::string text = encode_beacon(sample_beacon());
    CHECK(decode_beacon(std::string(text).replace(text.find("default"), 1, "\xFF")).error ==
          "beacon is not valid JSON");
    CHECK(decode_beacon(std::string(text).replace(text.find("default"), 1, "\\ud800")).error ==
          "beacon is not valid JSON");
    // A raw NUL byte anywhere is refused before parsing: after the object (which the JSON lexer would take for the
    // end of input) and inside a string; an escaped \u0000 inside a string is text like any other.
    const std::string nul(1, '\0');
    CHECK(decode_beacon(text + nul).error == "beacon holds a NUL byte at offset " + std::to_string(text.size()));
    CHECK(decode_beacon(text + nul + "{\"anything\": 1}").error ==
          "beacon holds a NUL byte at offset " + std::to_string(text.size()));
    CHECK(decode_beacon(std::string(text).replace(text.find("default"), 1, nul)).error ==
          "beacon holds a NUL byte at offset " + std::to_string(text.find("default")));
    CHECK(decode_beacon(std::string(text).replace(text.find("default"), 1, "\\u0000")).beacon.has_value());
    // Depth is counted in the text before it is parsed: even after a syntax error; not inside strings.
    CHECK(decode_beacon(R"({"a":x,"b":[[[[[[[[[]]]]]]]]]})").error == "beacon nests deeper than 8 levels");
    CHECK(decode_beacon(with_member(R"("future":"[[[[[[[[[[\"{{{{{{{{{")")).beacon.has_value());
}

TEST_CASE("a load_error beacon from the gate: a reason from the closed list, no samples, no run fields") {
    // The gate's own shape (web/src/h3probe.js): no order, arms or module_version, since no core ran.
    const json gate = {{"schema", "h3probe/1"}, {"run_id", "1234567890"}, {"page_load_id", "987654321"},
                       {"config_id", "default"}, {"outcome", "load_error"}, {"reason", "wasm_type"},
                       {"run_ms", 12.5}, {"sample_rate", 0.5}, {"samples", json::array()}};
    const DecodeResult ok = decode_beacon(gate.dump());
    REQUIRE_MESSAGE(ok.beacon, ok.error);
    CHECK(ok.beacon->outcome == "load_error");
    CHECK(ok.beacon->reason == "wasm_type");
    CHECK(ok.beacon->order.empty());
    CHECK(ok.beacon->arms.empty());  // in no arms mode's report
    CHECK(ok.beacon->module_version.empty());
    CHECK(ok.beacon->samples.empty());
    CHECK(ok.beacon->sample_rate == 0.5);
#define H3PROBE_EVERY_REASON(name, what)                         \
    {                                                            \
        json j = gate;                                           \
        j["reason"] = #name;                                     \
        CHECK_MESSAGE(decode_beacon(j.dump()).beacon, #name);    \
    }
    H3PROBE_LOAD_ERROR_REASONS(H3PROBE_EVERY_REASON)
#undef H3PROBE_EVERY_REASON

    auto refused = [](const json& j) {
        const DecodeResult r = decode_beacon(j.dump());
        CHECK_FALSE(r.beacon);
        return r.error;
    };
    json unknown = gate;
    unknown["reason"] = "wasm_missing";
    CHECK(refused(unknown) == "reason has an unknown value \"wasm_missing\"");
    json without = gate;
    without.erase("reason");
    CHECK(refused(without) == "reason is required");
    json number = gate;
    number["reason"] = 3;
    CHECK(refused(number) == "reason must be a string");
    json with_samples = gate;
    with_samples["samples"] = json::parse(encode_beacon(sample_beacon()))["samples"];
    CHECK(refused(with_samples) == "samples must be empty for outcome load_error");
    json bad_order = gate;
    bad_order["order"] = "sideways";
    CHECK(refused(bad_order) == "order has an unknown value \"sideways\"");
    // A reason on any other outcome is refused; a run beacon still needs its run fields.
    json complete = json::parse(encode_beacon(sample_beacon()));
    complete["reason"] = "wasm_type";
    CHECK(refused(complete) == "reason is only for outcome load_error");
    json run = json::parse(encode_beacon(sample_beacon()));
    run.erase("order");
    CHECK(refused(run) == "order is required");
    run = json::parse(encode_beacon(sample_beacon()));
    run.erase("module_version");
    CHECK(refused(run) == "module_version is required");
}

TEST_CASE("context.worker_fallback: a reason from the closed list, only on a run of the main thread") {
    Beacon b = sample_beacon();
    b.context.run_context = "main";
    b.context.worker_fallback = "worker_load";
    const std::string text = encode_beacon(b);
    const DecodeResult ok = decode_beacon(text);
    REQUIRE_MESSAGE(ok.beacon, ok.error);
    CHECK(ok.beacon->context.worker_fallback == "worker_load");
    CHECK(encode_beacon(*ok.beacon) == text);
    const json main = json::parse(text);
#define H3PROBE_EVERY_FALLBACK(name, what)                            \
    {                                                                 \
        json j = main;                                                \
        j["context"]["worker_fallback"] = #name;                      \
        CHECK_MESSAGE(decode_beacon(j.dump()).beacon, #name);         \
    }
    H3PROBE_WORKER_FALLBACK_REASONS(H3PROBE_EVERY_FALLBACK)
#undef H3PROBE_EVERY_FALLBACK

    json unknown = main;
    unknown["context"]["worker_fallback"] = "blocked";
    CHECK(decode_beacon(unknown.dump()).error == "context.worker_fallback has an unknown value \"blocked\"");
    json in_worker = main;
    in_worker["context"]["run_context"] = "worker";
    CHECK(decode_beacon(in_worker.dump()).error == "context.worker_fallback is only for run_context main");
    // A run in the Worker writes it empty; a module older than the field leaves it out.
    in_worker["context"]["worker_fallback"] = "";
    CHECK(decode_beacon(in_worker.dump()).beacon.has_value());
    json older = main;
    older["context"].erase("worker_fallback");
    const DecodeResult old = decode_beacon(older.dump());
    REQUIRE(old.beacon);
    CHECK(old.beacon->context.worker_fallback.empty());
}

// The browser module's JSON writer: number text, microsecond rounding, string escaping; checked against nlohmann/json's
// parser, which is what the collector reads beacons with.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "json_writer.hpp"

using namespace h3probe;
using nlohmann::json;

namespace {
std::string ms_text(double v) {
    std::string s;
    append_ms(s, v);
    return s;
}
}  // namespace

TEST_CASE("numbers: shortest text up to 15 significant digits, read back exactly") {
    CHECK(number_text(0) == "0");
    CHECK(number_text(1) == "1");
    CHECK(number_text(-2) == "-2");
    CHECK(number_text(0.1) == "0.1");
    CHECK(number_text(1.5) == "1.5");
    CHECK(number_text(0.0001) == "0.0001");
    CHECK(number_text(1e-7) == "1e-7");
    CHECK(number_text(120000) == "120000");
    CHECK(number_text(1e20) == "100000000000000000000");
    CHECK(number_text(1e21) == "1e21");  // where JS switches to exponent notation too
    CHECK(number_text(1.5e300) == "1.5e300");
    CHECK(number_text(NAN) == "null");
    CHECK(number_text(INFINITY) == "null");
    // Every value read from a decimal of at most 15 digits comes back as the same double.
    for (const double v : {0.3, 0.123456789012345, 1e-5, 3.14159, 99.99, 0.05, 123456789.123456, 1e-8, 2.5e30}) {
        const std::string t = number_text(v);
        CAPTURE(t);
        CHECK(json::parse(t).get<double>() == v);
    }
}

TEST_CASE("times in ms are rounded to the microsecond, trailing zeros dropped") {
    CHECK(ms_text(12.3456789) == "12.346");
    CHECK(ms_text(12.3454) == "12.345");
    CHECK(ms_text(100) == "100");
    CHECK(ms_text(0.1) == "0.1");
    CHECK(ms_text(0.0004) == "0");
    CHECK(ms_text(0.0005) == "0.001");
    CHECK(ms_text(-0.5) == "-0.5");
    CHECK(ms_text(1e10 + 0.123) == "10000000000.123");  // kMaxTimestampMs keeps its microseconds
    CHECK(ms_text(NAN) == "null");
    // Rounding twice gives the same text: a decoded beacon encodes to the bytes it came from.
    for (const double v : {12.3456789, 1234.5675, 0.0015, 599999.9999}) {
        const std::string once = ms_text(v);
        CHECK(ms_text(json::parse(once).get<double>()) == once);
    }
}

TEST_CASE("the writer escapes strings and puts commas where JSON wants them") {
    JsonWriter w;
    w.begin_object();
    w.key("s").string("quote \" backslash \\ newline \n tab \t bell \x07 del \x7f");
    w.key("utf8").string("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
    w.key("bad").string("a\xFF" "b\xC3" "c\xED\xA0\x80" "d");  // invalid byte, cut sequence, surrogate
    w.key("list").begin_array().integer(1).integer(-2).null().boolean(true).begin_object().end_object().end_array();
    w.key("empty").begin_array().end_array();
    w.key("opt").ms(std::optional<double>()).key("flag").boolean(std::optional<bool>(false));
    w.end_object();
    const std::string text = w.take();
    CHECK(text.find(R"("s":"quote \" backslash \\ newline \n tab \t bell \u0007 del )") != std::string::npos);
    const json j = json::parse(text);  // strict: throws on invalid UTF-8 or bad syntax
    CHECK(j["s"] == "quote \" backslash \\ newline \n tab \t bell \x07 del \x7f");
    CHECK(j["utf8"] == "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
    CHECK(j["bad"] == "a\xEF\xBF\xBD" "b\xEF\xBF\xBD" "c\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD" "d");
    CHECK(j["list"] == json::parse(R"([1,-2,null,true,{}])"));
    CHECK(j["empty"] == json::array());
    CHECK(j["opt"].is_null());
    CHECK(j["flag"] == false);
}

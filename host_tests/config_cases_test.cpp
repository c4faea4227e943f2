// The shared table of config cases (host_tests/config_cases.json) through the core's rules: each case accepted or
// refused as the table says. web/test/unit/configRules.test.mjs runs the gate's statement of the same rules over it.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "config.hpp"

using namespace h3probe;
using nlohmann::json;

namespace {
json read_cases() {
    std::ifstream in(H3PROBE_SOURCE_DIR "/host_tests/config_cases.json");
    std::stringstream text;
    text << in.rdbuf();
    return json::parse(text.str());
}

// A value as the table writes it: JSON as it is, or {"concat": [[text, times], ...]}.
json value_of(const json& v) {
    if (!v.is_object() || !v.contains("concat")) return v;
    std::string s;
    for (const json& part : v["concat"])
        for (int i = 0; i < part[1].get<int>(); ++i) s += part[0].get<std::string>();
    return s;
}
}  // namespace

TEST_CASE("the shared config cases: the core accepts exactly those the table accepts") {
    const json table = read_cases();
    REQUIRE(table["cases"].size() >= 50);
    for (const json& c : table["cases"]) {
        json config = table["base"];
        if (c.contains("value")) config[c["key"].get<std::string>()] = value_of(c["value"]);
        const ConfigResult r = parse_config(config.dump());
        const std::string name = c["name"].get<std::string>();
        const std::string errors = r.errors.empty() ? "" : r.errors.front();
        CAPTURE(name);
        CAPTURE(errors);
        CHECK(r.errors.empty() == c["accepted"].get<bool>());
        CHECK(r.config.has_value() == c["accepted"].get<bool>());
    }
}

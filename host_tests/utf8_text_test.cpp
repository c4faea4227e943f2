// Text from the page made safe for the beacon: valid UTF-8, cut at character boundaries.
#include <doctest/doctest.h>

#include "utf8_text.hpp"

using h3probe::utf8_text;

TEST_CASE("utf8_text keeps valid characters whole and marks invalid bytes") {
    CHECK(utf8_text("h\xC3\xA9llo", 100) == "h\xC3\xA9llo");
    CHECK(utf8_text("h\xC3\xA9llo", 2) == "h");            // é does not fit in 2 bytes: not split
    CHECK(utf8_text("\xF0\x9F\x98\x80!", 5) == "\xF0\x9F\x98\x80!");
    CHECK(utf8_text("\xED\xA0\x80", 10) == "???");           // an encoded surrogate (what a lone JS surrogate becomes)
    CHECK(utf8_text("\xC0\xAF", 10) == "??");                // overlong
}

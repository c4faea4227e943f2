// Text from the page's world made safe for the beacon: valid UTF-8, cut at a character boundary.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace h3probe {

// Replaces each byte that does not start a valid UTF-8 sequence with '?', and keeps at most max_bytes bytes without
// splitting a character. (The beacon's decoder limits fields in bytes and rejects invalid UTF-8.)
std::string utf8_text(std::string_view s, std::size_t max_bytes);

// Length of the valid UTF-8 sequence starting at s[i], or 0 if none starts there (RFC 3629: no overlongs, no
// surrogates, nothing above U+10FFFF).
std::size_t utf8_sequence_length(std::string_view s, std::size_t i);

}  // namespace h3probe

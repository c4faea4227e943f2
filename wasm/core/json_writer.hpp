// A small JSON writer for what the core sends (the beacon) and the number text of its messages. The browser module
// links this instead of a JSON library; the collector still parses with nlohmann/json (docs/record/module-size.md).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace h3probe {

// Appends `v` with at most 15 significant digits, the shortest text that reads back as `v` whenever `v` was itself
// read from a decimal of 15 or fewer digits; "null" when not finite (JSON has no NaN or infinity).
void append_number(std::string& out, double v);  // exact for magnitudes 1e-8 .. 1e36; beyond them the last digit may be off
// Appends a time in milliseconds rounded to the microsecond: at most 3 decimals, trailing zeros dropped.
void append_ms(std::string& out, double v);
std::string number_text(double v);

class JsonWriter {
public:
    JsonWriter& begin_object() { return open('{'); }
    JsonWriter& end_object() { return close('}'); }
    JsonWriter& begin_array() { return open('['); }
    JsonWriter& end_array() { return close(']'); }
    // The key of the next value; keys are the core's own field names, written as they are.
    JsonWriter& key(const char* k);
    // Escapes quotes, backslashes and control characters; a byte that does not start valid UTF-8 becomes U+FFFD.
    JsonWriter& string(std::string_view s);
    JsonWriter& integer(long long v);
    JsonWriter& number(double v);
    JsonWriter& ms(double v);
    JsonWriter& ms(const std::optional<double>& v) { return v ? ms(*v) : null(); }
    JsonWriter& boolean(bool v);
    JsonWriter& boolean(const std::optional<bool>& v) { return v ? boolean(*v) : null(); }
    JsonWriter& null();

    const std::string& text() const { return out_; }
    std::string take() { return std::move(out_); }

private:
    JsonWriter& open(char c);
    JsonWriter& close(char c);
    void value_start();

    std::string out_;
    bool need_comma_ = false;
};

}  // namespace h3probe

// Number and string formatting without printf or iostream (either would pull several KB into the browser module).
#include "json_writer.hpp"

#include <cmath>

#include "utf8_text.hpp"

namespace h3probe {
namespace {

constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                             1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

// v * 10^e; exact powers up to 1e22, so a single correctly rounded operation for |e| <= 22.
double scale(double v, int e) {
    for (; e > 22; e -= 22) v *= 1e22;
    for (; e < -22; e += 22) v /= 1e22;
    return e >= 0 ? v * kPow10[e] : v / kPow10[-e];
}

// Rounds half away from zero, like std::llround, which is 200 bytes of libc in the module; |x| stays below 2^53 here.
long long round_to_integer(double x) {
    auto n = static_cast<long long>(x);
    const double rest = x - static_cast<double>(n);  // exact below 2^52
    return rest >= 0.5 ? n + 1 : rest <= -0.5 ? n - 1 : n;
}

void append_digits(std::string& out, unsigned long long n) {
    char buf[20];
    int i = 20;
    do buf[--i] = static_cast<char>('0' + n % 10);
    while (n /= 10);
    out.append(buf + i, buf + 20);
}

// Appends n * 10^e (n > 0) as a JSON number: plain notation unless that would need many zeros.
void append_decimal(std::string& out, unsigned long long n, int e) {
    while (n % 10 == 0) n /= 10, ++e;
    std::string d;
    append_digits(d, n);
    const int len = static_cast<int>(d.size());
    const int point = len + e;  // digits before the decimal point
    if (e >= 0 && point <= 21) {
        out += d;
        out.append(static_cast<std::size_t>(e), '0');
    } else if (e < 0 && point > 0) {
        out.append(d, 0, static_cast<std::size_t>(point)).append(1, '.').append(d, static_cast<std::size_t>(point));
    } else if (e < 0 && point > -6) {
        out.append("0.").append(static_cast<std::size_t>(-point), '0').append(d);
    } else {
        out.append(1, d[0]);
        if (len > 1) out.append(1, '.').append(d, 1);
        out.append(1, 'e');
        const int x = point - 1;
        if (x < 0) out.append(1, '-');
        append_digits(out, static_cast<unsigned long long>(x < 0 ? -x : x));
    }
}

}  // namespace

void append_number(std::string& out, double v) {
    if (!std::isfinite(v)) return void(out += "null");
    if (v == 0) return void(out += '0');
    if (v < 0) out += '-', v = -v;
    // 15 significant digits: n in [1e14, 1e15), value n * 10^(k - 14).
    int k = static_cast<int>(std::floor(std::log10(v)));
    auto n = static_cast<unsigned long long>(round_to_integer(scale(v, 14 - k)));
    if (n >= 1000000000000000ULL) n = static_cast<unsigned long long>(round_to_integer(scale(v, 14 - ++k)));
    else if (n < 100000000000000ULL) n = static_cast<unsigned long long>(round_to_integer(scale(v, 14 - --k)));
    append_decimal(out, n, k - 14);
}

void append_ms(std::string& out, double v) {
    if (!std::isfinite(v) || std::fabs(v) >= 9e12) return append_number(out, v);
    const long long us = round_to_integer(v * 1000);
    if (us == 0) return void(out += '0');
    if (us < 0) out += '-';
    append_decimal(out, static_cast<unsigned long long>(us < 0 ? -us : us), -3);
}

std::string number_text(double v) {
    std::string s;
    append_number(s, v);
    return s;
}

JsonWriter& JsonWriter::key(const char* k) {
    value_start();
    out_ += '"';
    out_ += k;
    out_ += "\":";
    need_comma_ = false;
    return *this;
}

void JsonWriter::value_start() {
    if (need_comma_) out_ += ',';
    need_comma_ = true;
}

JsonWriter& JsonWriter::open(char c) {
    value_start();
    out_ += c;
    need_comma_ = false;
    return *this;
}

JsonWriter& JsonWriter::close(char c) {
    out_ += c;
    need_comma_ = true;
    return *this;
}

JsonWriter& JsonWriter::string(std::string_view s) {
    value_start();
    out_ += '"';
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x80) {
            const std::size_t n = utf8_sequence_length(s, i);
            if (n == 0) out_ += "\xEF\xBF\xBD", ++i;  // U+FFFD REPLACEMENT CHARACTER
            else out_.append(s, i, n), i += n;
            continue;
        }
        ++i;
        if (c == '"' || c == '\\') {
            out_ += '\\';
            out_ += static_cast<char>(c);
        } else if (c < 0x20) {
            const char* named = c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : c == '\b' ? "\\b" : c == '\f' ? "\\f" : nullptr;
            if (named) {
                out_ += named;
            } else {
                out_ += "\\u00";
                out_ += "0123456789abcdef"[c >> 4];
                out_ += "0123456789abcdef"[c & 15];
            }
        } else {
            out_ += static_cast<char>(c);
        }
    }
    out_ += '"';
    return *this;
}

JsonWriter& JsonWriter::integer(long long v) {
    value_start();
    if (v < 0) out_ += '-';
    append_digits(out_, v < 0 ? 0ULL - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v));
    return *this;
}

JsonWriter& JsonWriter::number(double v) {
    value_start();
    append_number(out_, v);
    return *this;
}

JsonWriter& JsonWriter::ms(double v) {
    value_start();
    append_ms(out_, v);
    return *this;
}

JsonWriter& JsonWriter::boolean(bool v) {
    value_start();
    out_ += v ? "true" : "false";
    return *this;
}

JsonWriter& JsonWriter::null() {
    value_start();
    out_ += "null";
    return *this;
}

}  // namespace h3probe

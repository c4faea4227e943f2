// strtod for the Node module (linked with -Wl,--wrap=strtod, so every call in the module comes here). nlohmann/json's
// lexer converts each number of a beacon with strtod, and musl's does its arithmetic in long double, which is 128-bit
// floating point in software on WebAssembly: the largest share of the beacon decoder's time (docs/record/collector.md).
// fast_float (Debian's libfast-float-dev) rounds correctly, as musl does, so both give the same double; anything it
// does not take whole (leading space or '+', hex, inf and nan, overflow and underflow, where errno matters) goes to
// musl's as before.
#include <cctype>
#include <cmath>
#include <cstring>

#include <fast_float/fast_float.h>

extern "C" double __real_strtod(const char* text, char** end);

extern "C" double __wrap_strtod(const char* text, char** end) {
    if (text != nullptr && (std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '-' || text[0] == '.')) {
        double value = 0;
        const fast_float::from_chars_result r = fast_float::from_chars(text, text + std::strlen(text), value);
        if (r.ec == std::errc() && std::isfinite(value) && value != 0) {
            if (end != nullptr) *end = const_cast<char*>(r.ptr);
            return value;
        }
    }
    return __real_strtod(text, end);
}

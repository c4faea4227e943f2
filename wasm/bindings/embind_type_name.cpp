// embind's __getTypeName, which the JS glue calls only to name an unbound type in an error message, formats a type's
// id with sprintf("%p") when RTTI is off (emscripten 3.1.6, system/lib/embind/bind.cpp; the call is to musl's
// integer-only siprintf). That one call alone links musl's printf core into the browser module, as large as a
// good part of the gate's whole budget. This definition is linked ahead of libc's and writes exactly that format; any other format traps, so a
// later use of sprintf in the browser module fails loudly instead of printing wrong text. See docs/record/module-size.md.
#include <cstdarg>
#include <cstdint>

extern "C" int siprintf(char* out, const char* format, ...) {
    if (format[0] != '%' || format[1] != 'p' || format[2] != '\0') __builtin_trap();
    va_list args;
    va_start(args, format);
    auto v = reinterpret_cast<std::uintptr_t>(va_arg(args, void*));
    va_end(args);
    char digits[2 * sizeof v];
    int n = 0;
    do digits[n++] = "0123456789abcdef"[v & 15];
    while (v >>= 4);
    char* p = out;
    *p++ = '0';
    *p++ = 'x';
    while (n > 0) *p++ = digits[--n];
    *p = '\0';
    return static_cast<int>(p - out);
}

// Exact sums of doubles and their squares (see exact_sum.hpp).
#include "exact_sum.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace h3probe {
namespace {

constexpr std::int64_t kBase = std::int64_t{1} << 32;

int bit_width(std::uint32_t v) {
    int n = 0;
    for (; v; v >>= 1) ++n;
    return n;
}

}  // namespace

void ExactSum::add_bits(std::uint64_t v, int bit, bool negative) {
    if (v == 0) return;
    const auto at = static_cast<std::size_t>(bit / 32);
    const int s = bit % 32;
    const std::uint64_t part[3] = {(v << s) & 0xffffffffu, (v << s) >> 32, s ? v >> (64 - s) : 0};
    // Room for the largest square at once (2^4200): one allocation per sum, not one per new digit.
    if (digits_.size() < at + 4) digits_.resize(std::max<std::size_t>(at + 4, 136), 0);
    for (std::size_t k = 0; k < 3; ++k) digits_[at + k] += negative ? -static_cast<std::int64_t>(part[k]) : static_cast<std::int64_t>(part[k]);
    // Each add moves a digit by less than 2^32: carried long before an int64 could overflow.
    if (++pending_ >= (1u << 29)) normalize();
}

void ExactSum::add(const ExactSum& other) {
    if (digits_.size() < other.digits_.size() + 1) digits_.resize(other.digits_.size() + 1, 0);
    for (std::size_t i = 0; i < other.digits_.size(); ++i) digits_[i] += other.digits_[i];
    normalize();
}

void ExactSum::normalize() {
    pending_ = 0;
    for (std::size_t i = 0; i < digits_.size(); ++i) {
        const std::int64_t d = digits_[i];
        if (i + 1 == digits_.size()) {
            if (d >= -kBase / 2 && d < kBase / 2) break;
            digits_.push_back(0);
        }
        // The remainder in [0, 2^32), the floor quotient carried.
        digits_[i] = d & 0xffffffff;
        digits_[i + 1] += (d - digits_[i]) / kBase;
    }
    while (digits_.size() > 1 && digits_.back() == 0 && digits_[digits_.size() - 2] < kBase / 2) digits_.pop_back();
    if (digits_.size() == 1 && digits_[0] == 0) digits_.clear();
}

std::vector<std::uint32_t> ExactSum::magnitude(bool& negative) const {
    ExactSum n = *this;
    n.normalize();
    negative = !n.digits_.empty() && n.digits_.back() < 0;
    std::vector<std::uint32_t> out(n.digits_.size());
    std::uint64_t carry = 1;  // two's complement of the digits when negative: invert and add one
    for (std::size_t i = 0; i < out.size(); ++i) {
        const auto d = static_cast<std::uint32_t>(static_cast<std::uint64_t>(n.digits_[i]));
        if (!negative) {
            out[i] = d;
            continue;
        }
        const std::uint64_t v = std::uint64_t{static_cast<std::uint32_t>(~d)} + carry;
        out[i] = static_cast<std::uint32_t>(v);
        carry = v >> 32;
    }
    while (!out.empty() && out.back() == 0) out.pop_back();
    return out;
}

ExactSum ExactSum::of(const std::vector<std::uint32_t>& magnitude, bool negative) {
    ExactSum out;
    out.digits_.assign(magnitude.size() + 1, 0);
    for (std::size_t i = 0; i < magnitude.size(); ++i) out.digits_[i] = negative ? -std::int64_t{magnitude[i]} : std::int64_t{magnitude[i]};
    out.normalize();
    return out;
}

std::string ExactSum::text() const {
    bool negative;
    const std::vector<std::uint32_t> m = magnitude(negative);
    if (m.empty()) return "0";
    std::string out = negative ? "-" : "";
    for (std::size_t i = m.size(); i-- > 0;)
        for (int k = 7; k >= 0; --k) {
            const unsigned nibble = (m[i] >> (4 * k)) & 0xf;
            if (out.size() > (negative ? 1u : 0u) || nibble) out.push_back("0123456789abcdef"[nibble]);
        }
    return out;
}

bool ExactSum::parse(const std::string& text) {
    const std::size_t first = !text.empty() && text[0] == '-' ? 1 : 0;
    if (text.size() == first) return false;
    std::vector<std::uint32_t> m((text.size() - first + 7) / 8, 0);
    for (std::size_t i = text.size(), k = 0; i-- > first; ++k) {
        const char c = text[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
        m[k / 8] |= static_cast<std::uint32_t>(c <= '9' ? c - '0' : c - 'a' + 10) << (4 * (k % 8));
    }
    *this = of(m, first == 1);
    return true;
}

double ExactSum::value(int unit) const {
    bool negative;
    const std::vector<std::uint32_t> m = magnitude(negative);
    if (m.empty()) return 0;
    const int length = 32 * static_cast<int>(m.size() - 1) + bit_width(m.back());
    const auto bit = [&](int b) { return (m[static_cast<std::size_t>(b / 32)] >> (b % 32)) & 1u; };
    // The top 64 bits, and whether any bit below them is set (folded into the lowest: one conversion then rounds as
    // the whole number would).
    const int low = std::max(0, length - 64);
    std::uint64_t top = 0;
    for (int b = length - 1; b >= low; --b) top = (top << 1) | bit(b);
    for (int b = 0; b < low && !(top & 1u); ++b) top |= bit(b);
    const double size = std::ldexp(static_cast<double>(top), low + unit);
    return negative ? -size : size;
}

ExactSum ExactSum::times(const ExactSum& other) const {
    bool na, nb;
    const std::vector<std::uint32_t> a = magnitude(na), b = other.magnitude(nb);
    std::vector<std::uint32_t> r(a.size() + b.size() + 1, 0);
    for (std::size_t i = 0; i < a.size(); ++i) {
        std::uint64_t carry = 0;
        for (std::size_t j = 0; j < b.size() || carry; ++j) {
            const std::uint64_t v = (j < b.size() ? std::uint64_t{a[i]} * b[j] : 0) + r[i + j] + carry;
            r[i + j] = static_cast<std::uint32_t>(v);
            carry = v >> 32;
        }
    }
    return of(r, na != nb);
}

ExactSum ExactSum::negated() const {
    bool negative;
    const std::vector<std::uint32_t> m = magnitude(negative);
    return of(m, !negative);
}

void MomentSums::add(const MomentSums& other) {
    n += other.n;
    sum.add(other.sum);
    sum_sq.add(other.sum_sq);
}

Moments MomentSums::moments() const {
    constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
    Moments m;
    m.n = static_cast<std::size_t>(n);
    m.mean = n ? sum.value(ExactSum::kValueUnit) / static_cast<double>(n) : kNaN;
    if (n < 2) {
        m.var = kNaN;
        return m;
    }
    // (n sum_sq - sum^2) / (n (n - 1)): the numerator exact (never negative), rounded once.
    ExactSum count;
    count.add_bits(n, 0, false);
    ExactSum numerator = sum_sq.times(count);
    numerator.add(sum.times(sum).negated());
    m.var = numerator.value(ExactSum::kSquareUnit) / (static_cast<double>(n) * static_cast<double>(n - 1));
    return m;
}

void MomentAccumulator::add(double x) {
    if (!std::isfinite(x)) return;
    // x = ±mantissa * 2^shift units of 2^-1074.
    std::uint64_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    const int exponent = static_cast<int>((bits >> 52) & 0x7ff);
    const std::uint64_t mantissa = (bits & ((std::uint64_t{1} << 52) - 1)) | (exponent ? std::uint64_t{1} << 52 : 0);
    const int shift = exponent ? exponent - 1 : 0;
    const bool negative = (bits >> 63) != 0;
    Bin& bin = bins_[static_cast<std::size_t>(shift) % bins_.size()];
    // A bin holds 2^22 values at most: Σ mantissa² < 2^106 · 2^22 fits 128 bits, the mantissas' halves 64.
    if (bin.shift != shift || bin.count == (1u << 22)) {
        flush(bin, done_);
        bin = Bin{};
        bin.shift = shift;
    }
    const auto high = static_cast<std::int64_t>(mantissa >> 27), low = static_cast<std::int64_t>(mantissa & ((1u << 27) - 1));
    bin.high += negative ? -high : high;
    bin.low += negative ? -low : low;
    bin.squares += static_cast<u128>(mantissa) * mantissa;
    ++bin.count;
}

void MomentAccumulator::flush(const Bin& bin, MomentSums& into) {
    if (bin.shift < 0) return;
    into.n += bin.count;
    into.sum.add_bits(static_cast<std::uint64_t>(bin.high < 0 ? -bin.high : bin.high), bin.shift + 27, bin.high < 0);
    into.sum.add_bits(static_cast<std::uint64_t>(bin.low < 0 ? -bin.low : bin.low), bin.shift, bin.low < 0);
    into.sum_sq.add_bits(static_cast<std::uint64_t>(bin.squares), 2 * bin.shift, false);
    into.sum_sq.add_bits(static_cast<std::uint64_t>(bin.squares >> 64), 2 * bin.shift + 64, false);
}

MomentSums MomentAccumulator::sums() const {
    MomentSums out = done_;
    for (const Bin& bin : bins_) flush(bin, out);
    return out;
}

}  // namespace h3probe

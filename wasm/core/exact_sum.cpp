// Exact sums of doubles and their squares (see exact_sum.hpp).
#include "exact_sum.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace h3probe {
namespace {

constexpr std::int64_t kBase = std::int64_t{1} << 32;
constexpr std::uint32_t kNormalizeEvery = 1u << 29;  // adds of < 2^32 each keep an int64 digit far from overflow

// A finite double as mantissa * 2^shift units of 2^-1074 (shift >= 0), and its sign.
struct Parts {
    std::uint64_t mantissa;
    int shift;
    bool negative;
};
Parts parts_of(double x) {
    std::uint64_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    const int exponent = static_cast<int>((bits >> 52) & 0x7ff);
    const std::uint64_t fraction = bits & ((std::uint64_t{1} << 52) - 1);
    if (exponent == 0) return {fraction, 0, (bits >> 63) != 0};  // subnormal (or zero): fraction * 2^-1074
    return {fraction | (std::uint64_t{1} << 52), exponent - 1, (bits >> 63) != 0};
}

int bit_width(std::uint32_t v) {
    int n = 0;
    while (v) {
        ++n;
        v >>= 1;
    }
    return n;
}

}  // namespace

void ExactSum::add_bits(std::uint64_t v, int bit, bool negative) {
    if (v == 0) return;
    const auto at = static_cast<std::size_t>(bit / 32);
    const int s = bit % 32;
    const std::uint64_t low = v << s;
    const std::uint64_t part[3] = {low & 0xffffffffu, low >> 32, s ? v >> (64 - s) : 0};
    // Room for the largest square at once (2^4200): one allocation per sum, not one per new digit.
    if (digits_.size() < at + 4) digits_.resize(std::max<std::size_t>(at + 4, 136), 0);
    for (std::size_t k = 0; k < 3; ++k) {
        const auto d = static_cast<std::int64_t>(part[k]);
        digits_[at + k] += negative ? -d : d;
    }
    if (++pending_ >= kNormalizeEvery) normalize();
}

void ExactSum::add(double x) {
    const Parts p = parts_of(x);
    add_bits(p.mantissa, p.shift, p.negative);
}

void ExactSum::add_square(double x) {
    // mantissa^2 = h^2 2^54 + 2 h l 2^27 + l^2 with mantissa = h 2^27 + l: three products that fit 64 bits.
    const Parts p = parts_of(x);
    const std::uint64_t h = p.mantissa >> 27, l = p.mantissa & ((std::uint64_t{1} << 27) - 1);
    add_bits(h * h, 2 * p.shift + 54, false);
    add_bits(2 * h * l, 2 * p.shift + 27, false);
    add_bits(l * l, 2 * p.shift, false);
}

void ExactSum::add(const ExactSum& other) {
    ExactSum o = other;
    o.normalize();
    if (digits_.size() < o.digits_.size() + 1) digits_.resize(o.digits_.size() + 1, 0);
    for (std::size_t i = 0; i < o.digits_.size(); ++i) digits_[i] += o.digits_[i];
    normalize();
}

void ExactSum::normalize() {
    pending_ = 0;
    for (std::size_t i = 0; i < digits_.size(); ++i) {
        const std::int64_t d = digits_[i];
        const bool top = i + 1 == digits_.size();
        if (top && d >= -kBase / 2 && d < kBase / 2) break;
        if (top) digits_.push_back(0);
        // Floor division by 2^32 (an arithmetic shift): the digit keeps the remainder in [0, 2^32).
        const std::int64_t carry = (d - (d & 0xffffffff)) / kBase;
        digits_[i] = d & 0xffffffff;
        digits_[i + 1] += carry;
    }
    while (digits_.size() > 1 && digits_.back() == 0 && digits_[digits_.size() - 2] < kBase / 2) digits_.pop_back();
    if (digits_.size() == 1 && digits_[0] == 0) digits_.clear();
}

bool ExactSum::negative() const {
    ExactSum n = *this;
    n.normalize();
    return !n.digits_.empty() && n.digits_.back() < 0;
}

std::vector<std::uint32_t> ExactSum::magnitude() const {
    ExactSum n = *this;
    n.normalize();
    std::vector<std::uint32_t> out(n.digits_.size());
    const bool neg = !n.digits_.empty() && n.digits_.back() < 0;
    // Two's complement of the digits when negative: invert and add one.
    std::uint64_t carry = 1;
    for (std::size_t i = 0; i < out.size(); ++i) {
        const auto d = static_cast<std::uint32_t>(static_cast<std::uint64_t>(n.digits_[i]) & 0xffffffffu);
        if (!neg) {
            out[i] = d;
            continue;
        }
        const std::uint64_t v = static_cast<std::uint64_t>(static_cast<std::uint32_t>(~d)) + carry;
        out[i] = static_cast<std::uint32_t>(v);
        carry = v >> 32;
    }
    while (!out.empty() && out.back() == 0) out.pop_back();
    return out;
}

ExactSum ExactSum::from_magnitude(const std::vector<std::uint32_t>& digits, bool negative) {
    ExactSum out;
    out.digits_.assign(digits.size() + 1, 0);
    for (std::size_t i = 0; i < digits.size(); ++i) out.digits_[i] = negative ? -std::int64_t{digits[i]} : std::int64_t{digits[i]};
    out.normalize();
    return out;
}

std::string ExactSum::text() const {
    const std::vector<std::uint32_t> m = magnitude();
    if (m.empty()) return "0";
    static const char hex[] = "0123456789abcdef";
    std::string out = negative() ? "-" : "";
    bool leading = true;
    for (std::size_t i = m.size(); i-- > 0;) {
        for (int k = 7; k >= 0; --k) {
            const unsigned nibble = (m[i] >> (4 * k)) & 0xf;
            if (leading && nibble == 0) continue;
            leading = false;
            out.push_back(hex[nibble]);
        }
    }
    return out;
}

bool ExactSum::parse(const std::string& text) {
    const bool neg = !text.empty() && text[0] == '-';
    const std::size_t first = neg ? 1 : 0;
    if (text.size() == first) return false;
    std::vector<std::uint32_t> m((text.size() - first + 7) / 8, 0);
    for (std::size_t i = text.size(), k = 0; i-- > first; ++k) {
        const char c = text[i];
        unsigned v;
        if (c >= '0' && c <= '9') v = static_cast<unsigned>(c - '0');
        else if (c >= 'a' && c <= 'f') v = static_cast<unsigned>(c - 'a' + 10);
        else return false;
        m[k / 8] |= v << (4 * (k % 8));
    }
    *this = from_magnitude(m, neg);
    return true;
}

double ExactSum::value(int unit) const {
    const std::vector<std::uint32_t> m = magnitude();
    if (m.empty()) return 0;
    const int length = 32 * static_cast<int>(m.size() - 1) + bit_width(m.back());
    // The top 64 bits, and whether any bit below them is set (folded into the lowest: one conversion then rounds as
    // the whole number would).
    const int low = std::max(0, length - 64);
    std::uint64_t top = 0;
    for (int b = length - 1; b >= low; --b) top = (top << 1) | ((m[static_cast<std::size_t>(b / 32)] >> (b % 32)) & 1u);
    bool sticky = false;
    for (int b = 0; b < low && !sticky; ++b) sticky = (m[static_cast<std::size_t>(b / 32)] >> (b % 32)) & 1u;
    const double size = std::ldexp(static_cast<double>(top | (sticky ? 1u : 0u)), low + unit);
    return negative() ? -size : size;
}

ExactSum ExactSum::times(const ExactSum& other) const {
    const std::vector<std::uint32_t> a = magnitude(), b = other.magnitude();
    std::vector<std::uint32_t> r(a.size() + b.size(), 0);
    for (std::size_t i = 0; i < a.size(); ++i) {
        std::uint64_t carry = 0;
        for (std::size_t j = 0; j < b.size(); ++j) {
            const std::uint64_t v = std::uint64_t{a[i]} * b[j] + r[i + j] + carry;
            r[i + j] = static_cast<std::uint32_t>(v);
            carry = v >> 32;
        }
        for (std::size_t k = i + b.size(); carry; ++k) {
            const std::uint64_t v = std::uint64_t{r[k]} + carry;
            r[k] = static_cast<std::uint32_t>(v);
            carry = v >> 32;
        }
    }
    return from_magnitude(r, negative() != other.negative());
}

ExactSum ExactSum::times(std::uint64_t n) const {
    return times(from_magnitude({static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(n >> 32)}, false));
}

ExactSum ExactSum::minus(const ExactSum& other) const {
    ExactSum out = *this;
    out.add(from_magnitude(other.magnitude(), !other.negative()));
    return out;
}

bool ExactSum::operator==(const ExactSum& other) const {
    return negative() == other.negative() && magnitude() == other.magnitude();
}

void MomentSums::add(double x) {
    if (!std::isfinite(x)) return;
    ++n;
    sum.add(x);
    sum_sq.add_square(x);
}

void MomentSums::add(const MomentSums& other) {
    n += other.n;
    sum.add(other.sum);
    sum_sq.add(other.sum_sq);
}

void MomentAccumulator::add(double x) {
    if (!std::isfinite(x)) return;
    const Parts p = parts_of(x);
    Bin& bin = bins_[static_cast<std::size_t>(p.shift) % bins_.size()];
    // A bin holds 2^22 values at most: Σ mantissa² < 2^106 · 2^22 fits 128 bits, the mantissas' halves 64.
    if (bin.shift != p.shift || bin.count == (1u << 22)) {
        flush(bin, done_);
        bin = Bin{};
        bin.shift = p.shift;
    }
    const auto high = static_cast<std::int64_t>(p.mantissa >> 27), low = static_cast<std::int64_t>(p.mantissa & ((1u << 27) - 1));
    bin.high += p.negative ? -high : high;
    bin.low += p.negative ? -low : low;
    bin.squares += static_cast<u128>(p.mantissa) * p.mantissa;
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

void MomentAccumulator::add(const MomentAccumulator& other) { done_.add(other.sums()); }

MomentSums MomentAccumulator::sums() const {
    MomentSums out = done_;
    for (const Bin& bin : bins_) flush(bin, out);
    return out;
}

Moments MomentSums::moments() const {
    constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
    Moments m;
    m.n = static_cast<std::size_t>(n);
    m.mean = n ? sum.value(ExactSum::kValueUnit) / static_cast<double>(n) : kNaN;
    // (n sum_sq - sum^2) / (n (n - 1)): the numerator exact (never negative), rounded once.
    m.var = n >= 2 ? sum_sq.times(n).minus(sum.times(sum)).value(ExactSum::kSquareUnit) /
                         (static_cast<double>(n) * static_cast<double>(n - 1))
                   : kNaN;
    return m;
}

}  // namespace h3probe

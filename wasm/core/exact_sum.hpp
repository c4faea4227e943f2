// Exact sums of doubles and of their squares, so that a sample's mean and variance are the same bits whatever order a
// source adds its values in: the report's paired differences from memory (value_aggregates.cpp) and from a
// warehouse's SQL (web/server/clickhouseRunSql.mjs, exactLimbsSql) give one moment, not two that differ in their last
// digits. A finite double is a whole number of 2^-1074 (its mantissa times a power of two), and its square a whole
// number of 2^-2148: each sum is such a whole number, held in base-2^32 digits, and nothing is rounded until the
// moments are read.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "paired_runs.hpp"

namespace h3probe {

class ExactSum {
public:
    // The units: a sum of values counts 2^-1074, a sum of squares 2^-2148.
    static constexpr int kValueUnit = -1074;
    static constexpr int kSquareUnit = -2148;

    void add_bits(std::uint64_t v, int bit, bool negative);  // ± v * 2^bit
    void add(const ExactSum& other);
    // The whole number as text: hexadecimal digits, '-' first when negative, "0" for zero; parse() reads it back
    // (false, and the sum unchanged, for anything else).
    std::string text() const;
    bool parse(const std::string& text);
    double value(int unit) const;  // the sum times 2^unit, rounded to the nearest double
    ExactSum times(const ExactSum& other) const;
    ExactSum negated() const;

private:
    // Carries every digit into [0, 2^32) but the last, which keeps the sign.
    void normalize();
    std::vector<std::uint32_t> magnitude(bool& negative) const;  // normalized |sum|, no leading zero digit
    static ExactSum of(const std::vector<std::uint32_t>& magnitude, bool negative);

    std::vector<std::int64_t> digits_;  // little-endian base 2^32; between normalizations each may exceed it
    std::uint32_t pending_ = 0;         // adds since the last normalization
};

// A sample's count, sum and sum of squares, exact: what a source hands the inference for the moments of the paired
// differences (report_aggregates.hpp).
struct MomentSums {
    std::uint64_t n = 0;
    ExactSum sum, sum_sq;
    void add(const MomentSums& other);
    // n, the mean (NaN if none) and the sample variance (NaN if fewer than 2), each rounded once from the exact sums.
    Moments moments() const;
};

// MomentSums built value by value, fast: the values of one binary exponent are summed in machine integers first (their
// mantissas, and their squares in 128 bits), and reach the exact sums when another exponent takes their place or the
// sums are read.
class MomentAccumulator {
public:
    void add(double x);  // finite values only; others are not counted
    void add(const MomentAccumulator& other) { done_.add(other.sums()); }
    MomentSums sums() const;

private:
    __extension__ typedef unsigned __int128 u128;
    struct Bin {
        int shift = -1;                  // the values' exponent (ExactSum's units); -1: empty
        std::int64_t high = 0, low = 0;  // Σ ±(mantissa >> 27), Σ ±(mantissa & (2^27 - 1))
        u128 squares = 0;                // Σ mantissa²
        std::uint32_t count = 0;
    };
    static void flush(const Bin& bin, MomentSums& into);
    MomentSums done_;
    std::array<Bin, 16> bins_{};  // by shift % 16
};

}  // namespace h3probe

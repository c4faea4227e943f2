// Each arm's failure rate and their paired difference. A request that failed (a network or HTTP error: role failed,
// request_class.hpp) stays in its arm, as a failure there: HTTP/3 failing more often than HTTP/2 is a result a team
// must see beside the latency. The rate of an arm is a ratio of run totals, p_a = sum F_ai / sum N_ai (F: the run's
// failed requests in the arm, N: its requests that hold a value), over the runs of the report's estimand; the run is
// the unit of variance and the two arms of a run are paired.
#pragma once

#include <cstddef>
#include <cstdint>

namespace h3probe {

// The integer sums the comparison needs, over runs: the same from C++ over records and from SQL over class counts.
struct FailureSums {
    std::uint64_t runs = 0;
    std::uint64_t f2 = 0, n2 = 0, f3 = 0, n3 = 0;
    std::uint64_t f2f2 = 0, f2n2 = 0, n2n2 = 0, f3f3 = 0, f3n3 = 0, n3n3 = 0;  // within each arm
    std::uint64_t f2f3 = 0, f2n3 = 0, n2f3 = 0, n2n3 = 0;                    // across the arms
    void add_run(std::uint64_t F2, std::uint64_t N2, std::uint64_t F3, std::uint64_t N3);
    void add(const FailureSums& other);
};

struct FailureComparison {
    std::size_t runs = 0;
    std::uint64_t failed_h2 = 0, requests_h2 = 0, failed_h3 = 0, requests_h3 = 0;
    double rate_h2 = 0, rate_h3 = 0;  // NaN when the arm has no request
    double diff = 0;                  // rate_h3 - rate_h2
    double ci_lo = 0, ci_hi = 0;      // NaN with fewer than 2 runs
    bool significant = false;         // the interval excludes 0
};

// The delta method for the difference of two ratios of run totals, paired by run: with N-bar_a = N_a / runs and the
// linearisation r_ai = (F_ai - p_a N_ai) / N-bar_a,
//   Var(diff) = sum_i (r_3i - r_2i)^2 / (runs (runs - 1)),   CI = diff -/+ z sqrt(Var)
// (Deng, Knoblich & Lu 2018, the ratio metric; the two arms' residuals of one run correlate through its network).
// The sums expand (r_3i - r_2i)^2 into the integer sums above, so no per-run value is needed.
FailureComparison compare_failures(const FailureSums& s, double confidence);

}  // namespace h3probe

// Exact sample quantiles and the small per-arm summary carried in every beacon.
#pragma once

#include <cstddef>
#include <vector>

namespace h3probe {

// Quantile p in [0, 1] of values sorted ascending, by linear interpolation between order statistics:
// Hyndman & Fan (1996) definition 7, the default of numpy.percentile and R's quantile(). NaN if empty.
double quantile_sorted(const std::vector<double>& sorted, double p);

// The same for several p at once over unsorted values. Uses OrderStatistics (radix selection, no sort).
std::vector<double> quantiles(std::vector<double> values, const std::vector<double>& ps);

// Order statistics of a sample without sorting it (radix select): one pass builds a histogram of the leading 16 bits
// of each value's order-preserving 64-bit key; a second pass copies out only the values of the few buckets that hold
// a requested rank, and those are selected by the next 16 bits or, once small, by std::nth_element. Two sequential
// passes over the data instead of O(n log n) sorting or repeated partitioning: this is what makes exact quantiles
// of 10 M values cheaper than numpy.percentile (which partitions). The histogram is kept, so later requests (the
// interval bounds after the estimates) cost one more copy-out pass.
class OrderStatistics {
public:
    // Owns the values.
    explicit OrderStatistics(std::vector<double> values);
    // Reads data[0, n) in place; the caller keeps it alive and unchanged while this object is used.
    OrderStatistics(const double* data, std::size_t n);

    std::size_t size() const { return n_; }

    // Finds all these 0-based ranks in one pass (ranks >= size() are ignored).
    void select(const std::vector<std::size_t>& ranks);

    // The value of 0-based rank r (r < size()), selecting it first if needed.
    double at(std::size_t rank);

    // Type-7 quantile (as quantile_sorted). NaN if empty or p outside [0, 1].
    double quantile(double p);

    // The 0-based ranks quantile(p) reads: floor((n - 1) p) and the one after it (clamped to the last).
    static void quantile_ranks(std::size_t n, double p, std::size_t& lo, std::size_t& hi);

private:
    std::vector<double> owned_;
    const double* data_;
    std::size_t n_;
    std::vector<std::size_t> bucket_start_;                // top-level histogram, cumulative (65537 entries)
    std::vector<std::pair<std::size_t, double>> known_;    // (rank, value), sorted by rank
};

struct Summary {
    std::size_t n = 0;
    double min = 0, median = 0, max = 0;  // meaningless when n == 0
};

Summary summarize(std::vector<double> values);

}  // namespace h3probe

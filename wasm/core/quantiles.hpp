// Exact sample quantiles and the small per-arm summary carried in every beacon.
#pragma once

#include <cstddef>
#include <vector>

namespace h3probe {

// Quantile p in [0, 1] of values sorted ascending, by linear interpolation between order statistics:
// Hyndman & Fan (1996) definition 7, the default of numpy.percentile and R's quantile(). NaN if empty.
double quantile_sorted(const std::vector<double>& sorted, double p);

// The same for several p at once over unsorted values. Uses OrderStatistics (selection, not a full sort).
std::vector<double> quantiles(std::vector<double> values, const std::vector<double>& ps);

// Order statistics of a sample without sorting it: each requested 0-based rank is put in its sorted place by
// std::nth_element on the gap between ranks already placed, so k ranks of n values cost about O(n log k), not
// O(n log n). This is what makes exact quantiles of 10 M values cheap (numpy.percentile partitions the same way).
class OrderStatistics {
public:
    explicit OrderStatistics(std::vector<double> values);

    std::size_t size() const { return data_.size(); }

    // Places all these ranks at once (divide and conquer over the sorted rank list). Ranks >= size() are ignored.
    void select(std::vector<std::size_t> ranks);

    // The value of 0-based rank r (r < size()), selecting it first if needed.
    double at(std::size_t rank);

    // Type-7 quantile (as quantile_sorted). NaN if empty or p outside [0, 1].
    double quantile(double p);

    // The 0-based ranks quantile(p) reads: floor((n - 1) p) and the one after it (clamped to the last).
    static void quantile_ranks(std::size_t n, double p, std::size_t& lo, std::size_t& hi);

private:
    void select_in(std::size_t first, std::size_t last, const std::size_t* rank_begin, const std::size_t* rank_end);

    std::vector<double> data_;
    std::vector<std::size_t> placed_;  // sorted ranks already in their final place
};

struct Summary {
    std::size_t n = 0;
    double min = 0, median = 0, max = 0;  // meaningless when n == 0
};

Summary summarize(std::vector<double> values);

}  // namespace h3probe

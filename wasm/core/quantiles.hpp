// Exact sample quantiles and the small per-arm summary carried in every beacon.
#pragma once

#include <cstddef>
#include <vector>

namespace h3probe {

// Quantile p in [0, 1] of values sorted ascending, by linear interpolation between order statistics:
// Hyndman & Fan (1996) definition 7, the default of numpy.percentile and R's quantile(). NaN if empty.
double quantile_sorted(const std::vector<double>& sorted, double p);

// The same for several p at once over unsorted values (copied and sorted once).
std::vector<double> quantiles(std::vector<double> values, const std::vector<double>& ps);

struct Summary {
    std::size_t n = 0;
    double min = 0, median = 0, max = 0;  // meaningless when n == 0
};

Summary summarize(std::vector<double> values);

}  // namespace h3probe

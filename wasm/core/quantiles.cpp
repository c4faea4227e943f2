// Exact quantiles (Hyndman-Fan type 7) over sorted data.
#include "quantiles.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace h3probe {

double quantile_sorted(const std::vector<double>& sorted, double p) {
    if (sorted.empty() || !(p >= 0 && p <= 1)) return std::numeric_limits<double>::quiet_NaN();
    const double h = (static_cast<double>(sorted.size()) - 1) * p;
    const auto lo = static_cast<std::size_t>(std::floor(h));
    const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
    return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

std::vector<double> quantiles(std::vector<double> values, const std::vector<double>& ps) {
    std::sort(values.begin(), values.end());
    std::vector<double> out;
    out.reserve(ps.size());
    for (double p : ps) out.push_back(quantile_sorted(values, p));
    return out;
}

Summary summarize(std::vector<double> values) {
    Summary s;
    s.n = values.size();
    if (values.empty()) return s;
    std::sort(values.begin(), values.end());
    s.min = values.front();
    s.max = values.back();
    s.median = quantile_sorted(values, 0.5);
    return s;
}

}  // namespace h3probe

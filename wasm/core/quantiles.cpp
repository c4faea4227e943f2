// Exact quantiles (Hyndman-Fan type 7) over sorted data, and order statistics by selection.
#include "quantiles.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

namespace h3probe {

double quantile_sorted(const std::vector<double>& sorted, double p) {
    if (sorted.empty() || !(p >= 0 && p <= 1)) return std::numeric_limits<double>::quiet_NaN();
    std::size_t lo = 0, hi = 0;
    OrderStatistics::quantile_ranks(sorted.size(), p, lo, hi);
    const double h = (static_cast<double>(sorted.size()) - 1) * p;
    return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

std::vector<double> quantiles(std::vector<double> values, const std::vector<double>& ps) {
    OrderStatistics os(std::move(values));
    std::vector<std::size_t> ranks;
    for (double p : ps) {
        if (!(p >= 0 && p <= 1) || os.size() == 0) continue;
        std::size_t lo = 0, hi = 0;
        OrderStatistics::quantile_ranks(os.size(), p, lo, hi);
        ranks.push_back(lo);
        ranks.push_back(hi);
    }
    os.select(std::move(ranks));
    std::vector<double> out;
    out.reserve(ps.size());
    for (double p : ps) out.push_back(os.quantile(p));
    return out;
}

OrderStatistics::OrderStatistics(std::vector<double> values) : data_(std::move(values)) {}

void OrderStatistics::quantile_ranks(std::size_t n, double p, std::size_t& lo, std::size_t& hi) {
    const double h = (static_cast<double>(n) - 1) * p;
    lo = std::min(static_cast<std::size_t>(std::floor(h)), n - 1);
    hi = std::min(lo + 1, n - 1);
}

void OrderStatistics::select(std::vector<std::size_t> ranks) {
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    while (!ranks.empty() && ranks.back() >= data_.size()) ranks.pop_back();
    // Drop ranks already placed; group the rest by the gap (between placed ranks) they fall in.
    std::vector<std::size_t> todo;
    std::set_difference(ranks.begin(), ranks.end(), placed_.begin(), placed_.end(), std::back_inserter(todo));
    std::size_t i = 0;
    while (i < todo.size()) {
        const auto next_placed = std::upper_bound(placed_.begin(), placed_.end(), todo[i]);
        const std::size_t gap_first = next_placed == placed_.begin() ? 0 : *(next_placed - 1) + 1;
        const std::size_t gap_last = next_placed == placed_.end() ? data_.size() : *next_placed;
        std::size_t j = i;
        while (j < todo.size() && todo[j] < gap_last) ++j;
        select_in(gap_first, gap_last, todo.data() + i, todo.data() + j);
        i = j;
    }
    std::vector<std::size_t> merged;
    merged.reserve(placed_.size() + todo.size());
    std::merge(placed_.begin(), placed_.end(), todo.begin(), todo.end(), std::back_inserter(merged));
    placed_.swap(merged);
}

// Places the ranks [rank_begin, rank_end) (sorted, all in [first, last)) within data_[first, last).
void OrderStatistics::select_in(std::size_t first, std::size_t last, const std::size_t* rank_begin,
                                const std::size_t* rank_end) {
    while (rank_begin != rank_end) {
        const std::size_t* mid = rank_begin + (rank_end - rank_begin) / 2;
        std::nth_element(data_.begin() + first, data_.begin() + *mid, data_.begin() + last);
        select_in(*mid + 1, last, mid + 1, rank_end);  // right half by recursion, left half by iteration
        last = *mid;
        rank_end = mid;
    }
}

double OrderStatistics::at(std::size_t rank) {
    if (!std::binary_search(placed_.begin(), placed_.end(), rank)) select({rank});
    return data_[rank];
}

double OrderStatistics::quantile(double p) {
    if (data_.empty() || !(p >= 0 && p <= 1)) return std::numeric_limits<double>::quiet_NaN();
    std::size_t lo = 0, hi = 0;
    quantile_ranks(data_.size(), p, lo, hi);
    const double h = (static_cast<double>(data_.size()) - 1) * p;
    const double a = at(lo);
    return a + (h - static_cast<double>(lo)) * (at(hi) - a);
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

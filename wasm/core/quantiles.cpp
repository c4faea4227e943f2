// Exact quantiles (Hyndman-Fan type 7) over sorted data, and order statistics by selection.
#include "quantiles.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace h3probe {

double quantile_sorted(const std::vector<double>& sorted, double p) {
    if (sorted.empty() || !(p >= 0 && p <= 1)) return std::numeric_limits<double>::quiet_NaN();
    const double h = (static_cast<double>(sorted.size()) - 1) * p;
    const auto lo = std::min(static_cast<std::size_t>(std::floor(h)), sorted.size() - 1);
    const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
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
    os.select(ranks);
    std::vector<double> out;
    out.reserve(ps.size());
    for (double p : ps) out.push_back(os.quantile(p));
    return out;
}

namespace {

constexpr std::size_t kBuckets = 1 << 16;
constexpr std::size_t kSmall = 1 << 15;  // below this many values, std::nth_element beats another histogram pass

// An unsigned key in the same order as the double: flip all bits of negatives, only the sign bit of positives.
inline std::uint64_t order_key(double x) {
    std::uint64_t u;
    std::memcpy(&u, &x, sizeof u);
    return (u >> 63) ? ~u : (u | 0x8000000000000000ULL);
}

// Places the sorted local ranks of `values` (all < size) by nth_element, divide and conquer over the rank list.
void nth_elements(std::vector<double>& values, std::size_t first, std::size_t last, const std::size_t* rb,
                  const std::size_t* re) {
    while (rb != re) {
        const std::size_t* mid = rb + (re - rb) / 2;
        std::nth_element(values.begin() + static_cast<std::ptrdiff_t>(first), values.begin() + static_cast<std::ptrdiff_t>(*mid),
                         values.begin() + static_cast<std::ptrdiff_t>(last));
        nth_elements(values, *mid + 1, last, mid + 1, re);
        last = *mid;
        re = mid;
    }
}

// Cumulative histogram of key bits [shift, shift + 16): start[b] = number of values in buckets < b.
std::vector<std::size_t> histogram(const double* data, std::size_t n, int shift) {
    std::vector<std::size_t> start(kBuckets + 1, 0);
    std::vector<std::uint32_t> count(kBuckets, 0);
    for (std::size_t i = 0; i < n; ++i) ++count[(order_key(data[i]) >> shift) & 0xFFFF];
    for (std::size_t b = 0; b < kBuckets; ++b) start[b + 1] = start[b] + count[b];
    return start;
}

void select_ranks(const double* data, std::size_t n, const std::vector<std::size_t>& start, int shift,
                  const std::vector<std::size_t>& ranks, std::vector<double>& out);

// Values of `ranks` (sorted, unique, < n) of data[0, n), into out[i] for ranks[i]. `start` is the histogram of
// data at `shift` (or empty: then the data are few enough to select directly).
void select_ranks(const double* data, std::size_t n, const std::vector<std::size_t>& start, int shift,
                  const std::vector<std::size_t>& ranks, std::vector<double>& out) {
    out.assign(ranks.size(), 0);
    if (ranks.empty()) return;
    if (start.empty()) {
        std::vector<double> copy(data, data + n);
        nth_elements(copy, 0, n, ranks.data(), ranks.data() + ranks.size());
        for (std::size_t i = 0; i < ranks.size(); ++i) out[i] = copy[ranks[i]];
        return;
    }
    // Which bucket holds each rank; one copy-out pass fills only those buckets.
    std::vector<std::uint16_t> slot(kBuckets, 0);
    std::vector<std::size_t> bucket_of_slot;
    std::vector<std::size_t> rank_bucket(ranks.size());
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        const std::size_t b = static_cast<std::size_t>(std::upper_bound(start.begin(), start.end(), ranks[i]) - start.begin()) - 1;
        rank_bucket[i] = b;
        if (slot[b] == 0) {
            bucket_of_slot.push_back(b);
            slot[b] = static_cast<std::uint16_t>(bucket_of_slot.size());
        }
    }
    std::vector<std::vector<double>> members(bucket_of_slot.size());
    for (std::size_t s = 0; s < bucket_of_slot.size(); ++s)
        members[s].reserve(start[bucket_of_slot[s] + 1] - start[bucket_of_slot[s]]);
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint16_t s = slot[(order_key(data[i]) >> shift) & 0xFFFF];
        if (s != 0) members[s - 1u].push_back(data[i]);
    }
    for (std::size_t s = 0; s < bucket_of_slot.size(); ++s) {
        const std::size_t b = bucket_of_slot[s];
        std::vector<std::size_t> local;
        std::vector<std::size_t> which;
        for (std::size_t i = 0; i < ranks.size(); ++i)
            if (rank_bucket[i] == b) {
                local.push_back(ranks[i] - start[b]);
                which.push_back(i);
            }
        const auto& m = members[s];
        std::vector<double> values;
        if (m.size() > kSmall) {
            // A bucket of one repeated value (ties: whole-millisecond timers) needs no further passes.
            const auto mm = std::minmax_element(m.begin(), m.end());
            if (*mm.first == *mm.second) {
                for (std::size_t j : which) out[j] = *mm.first;
                continue;
            }
        }
        const bool refine = m.size() > kSmall && shift >= 16;
        select_ranks(m.data(), m.size(), refine ? histogram(m.data(), m.size(), shift - 16) : std::vector<std::size_t>{},
                     shift - 16, local, values);
        for (std::size_t j = 0; j < which.size(); ++j) out[which[j]] = values[j];
    }
}

}  // namespace

OrderStatistics::OrderStatistics(std::vector<double> values)
    : owned_(std::move(values)), data_(owned_.data()), n_(owned_.size()) {}

OrderStatistics::OrderStatistics(const double* data, std::size_t n) : data_(data), n_(n) {}

void OrderStatistics::quantile_ranks(std::size_t n, double p, std::size_t& lo, std::size_t& hi) {
    const double h = (static_cast<double>(n) - 1) * p;
    lo = std::min(static_cast<std::size_t>(std::floor(h)), n - 1);
    hi = std::min(lo + 1, n - 1);
}

void OrderStatistics::select(const std::vector<std::size_t>& requested) {
    std::vector<std::size_t> ranks;
    for (std::size_t r : requested) {
        if (r >= n_) continue;
        const auto it = std::lower_bound(known_.begin(), known_.end(), r,
                                         [](const std::pair<std::size_t, double>& k, std::size_t v) { return k.first < v; });
        if (it == known_.end() || it->first != r) ranks.push_back(r);
    }
    if (ranks.empty()) return;
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    if (bucket_start_.empty() && n_ > kSmall) bucket_start_ = histogram(data_, n_, 48);
    std::vector<double> values;
    select_ranks(data_, n_, bucket_start_, 48, ranks, values);
    for (std::size_t i = 0; i < ranks.size(); ++i) known_.emplace_back(ranks[i], values[i]);
    std::sort(known_.begin(), known_.end());
}

double OrderStatistics::at(std::size_t rank) {
    auto find = [&] {
        return std::lower_bound(known_.begin(), known_.end(), rank,
                                [](const std::pair<std::size_t, double>& k, std::size_t v) { return k.first < v; });
    };
    auto it = find();
    if (it == known_.end() || it->first != rank) {
        select({rank});
        it = find();
    }
    return it->second;
}

double OrderStatistics::quantile(double p) {
    if (n_ == 0 || !(p >= 0 && p <= 1)) return std::numeric_limits<double>::quiet_NaN();
    std::size_t lo = 0, hi = 0;
    quantile_ranks(n_, p, lo, hi);
    const double h = (static_cast<double>(n_) - 1) * p;
    const double a = at(lo);
    return a + (h - static_cast<double>(lo)) * (at(hi) - a);
}

Summary summarize(std::vector<double> values) {
    Summary s;
    s.n = values.size();
    if (values.empty()) return s;
    // One run's arm: a few values (at most kMaxSamples), so an insertion sort, which is much smaller code in the
    // browser module than std::sort and as fast at this size.
    for (std::size_t i = 1; i < values.size(); ++i) {
        const double v = values[i];
        std::size_t j = i;
        for (; j > 0 && values[j - 1] > v; --j) values[j] = values[j - 1];
        values[j] = v;
    }
    s.min = values.front();
    s.max = values.back();
    s.median = quantile_sorted(values, 0.5);
    return s;
}

}  // namespace h3probe

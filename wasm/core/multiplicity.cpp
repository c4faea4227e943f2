// Per-cell p-values and the Benjamini-Hochberg adjustment across the report (see multiplicity.hpp).
#include "multiplicity.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "report.hpp"

namespace h3probe {
namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}  // namespace

std::vector<double> benjamini_hochberg(const std::vector<double>& p) {
    std::vector<double> q(p.size(), kNaN);
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < p.size(); ++i)
        if (!std::isnan(p[i])) order.push_back(i);
    // Largest p first: the running minimum of m p_(k) / k from the top is the step-up adjustment.
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p[a] > p[b]; });
    const double m = static_cast<double>(order.size());
    double running = 1;
    for (std::size_t j = 0; j < order.size(); ++j) {
        const double rank = m - static_cast<double>(j);  // 1-based rank in ascending order
        running = std::min(running, m * p[order[j]] / rank);
        q[order[j]] = running;
    }
    return q;
}

void mark_discoveries(std::vector<GroupReport>& groups, double confidence) {
    std::vector<double> p;
    for (auto& g : groups) {
        for (const auto& row : g.analysis.rows) p.push_back(row.p_value);
    }
    const std::vector<double> q = benjamini_hochberg(p);
    const double level = 1 - confidence;
    std::size_t k = 0;
    for (auto& g : groups)
        for (auto& row : g.analysis.rows) {
            row.q_value = q[k++];
            row.discovery = row.q_value <= level;
        }
}

}  // namespace h3probe

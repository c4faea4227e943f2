// Computes the per-protocol percentile table from the samples that count for each arm.
#include "arm_comparison.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "quantiles.hpp"

namespace h3probe {

const std::vector<double>& default_percentiles() {
    static const std::vector<double> ps = {0.50, 0.75, 0.90, 0.95, 0.99};
    return ps;
}

ArmComparison compare_arms(std::vector<double> h2, std::vector<double> h3, const std::vector<double>& ps) {
    ArmComparison c;
    c.n_h2 = h2.size();
    c.n_h3 = h3.size();
    if (h2.empty() || h3.empty()) return c;
    std::sort(h2.begin(), h2.end());
    std::sort(h3.begin(), h3.end());
    for (double p : ps) {
        PercentileRow row;
        row.p = p;
        row.h2 = quantile_sorted(h2, p);
        row.h3 = quantile_sorted(h3, p);
        row.diff_ms = row.h3 - row.h2;
        row.diff_pct = row.h2 > 0 ? 100.0 * row.diff_ms / row.h2 : 0.0;
        c.rows.push_back(row);
    }
    return c;
}

std::string to_json(const ArmComparison& c) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : c.rows)
        rows.push_back({{"p", r.p}, {"h2", r.h2}, {"h3", r.h3}, {"diff_ms", r.diff_ms}, {"diff_pct", r.diff_pct}});
    return nlohmann::json{{"n_h2", c.n_h2}, {"n_h3", c.n_h3}, {"rows", rows}}.dump();
}

}  // namespace h3probe

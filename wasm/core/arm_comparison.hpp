// The headline table: per-protocol percentiles of network time and the HTTP/3 - HTTP/2 difference.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace h3probe {

struct PercentileRow {
    double p = 0;        // in [0, 1]
    double h2 = 0, h3 = 0;
    double diff_ms = 0;  // h3 - h2: negative means HTTP/3 was faster
    double diff_pct = 0; // 100 * diff_ms / h2
};

struct ArmComparison {
    std::size_t n_h2 = 0, n_h3 = 0;
    std::vector<PercentileRow> rows;  // empty unless both arms have values
};

// The Dropbox table's percentiles: p50, p75, p90, p95, p99.
const std::vector<double>& default_percentiles();

ArmComparison compare_arms(std::vector<double> h2, std::vector<double> h3,
                           const std::vector<double>& ps = default_percentiles());

std::string to_json(const ArmComparison& c);

}  // namespace h3probe

// The report reads many cells at once (groups x percentiles: 9 regions x 5 percentiles is 45 intervals), and some
// exclude 0 by chance. The verdict therefore counts its comparisons: each cell's two-sided p-value comes from the same
// delta-method statistic and the same reference as its interval (delta_p_value in quantile_ci.hpp: Δ ms / se_ms
// against Student's t with the row's df degrees of freedom), and the Benjamini-Hochberg step-up procedure ("Controlling
// the false discovery rate: a practical and powerful approach to multiple testing", JRSS B 57(1), 1995) keeps the
// expected share of false claims among the cells it keeps at most the level. Under no effect anywhere, BH claims any
// difference with probability at most the level if the p-values are calibrated and independent or positively
// dependent (nested groups and neighbouring percentiles are positively correlated). BH reads the p-values near
// level / cells, far into their tail, so the small-sample reference matters there (docs/design.md, R17). Each cell's
// own decision (significant: its p-value < 1 - confidence) is unchanged: it answers that one cell.
#pragma once

#include <cstddef>
#include <vector>

#include "quantile_ci.hpp"

namespace h3probe {

struct GroupReport;

// Benjamini-Hochberg at `level` over p (NaN entries are not in the family): the adjusted p-values (q_i = min over
// ranks k >= rank(i) of m p_(k) / k, capped at 1; NaN where p is NaN). Cell i survives iff q_i <= level.
std::vector<double> benjamini_hochberg(const std::vector<double>& p);

// Sets q_value and discovery of every row of every group (overall included) as one family from their p_value (set with
// the row's interval: delta_p_value, or the bootstrap's), at level 1 - confidence (the same alpha as the intervals).
void mark_discoveries(std::vector<GroupReport>& groups, double confidence);

}  // namespace h3probe

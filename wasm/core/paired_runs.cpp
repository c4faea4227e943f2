// Paired within-run differences and the order-effect test.
#include "paired_runs.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "quantiles.hpp"
#include "standard_normal.hpp"

namespace h3probe {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

nlohmann::json num(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }

struct MeanVar {
    double mean = kNaN, var = kNaN;
};

MeanVar mean_var(const std::vector<double>& xs) {
    MeanVar m;
    if (xs.empty()) return m;
    double sum = 0;
    for (double x : xs) sum += x;
    m.mean = sum / static_cast<double>(xs.size());
    if (xs.size() < 2) return m;
    double ss = 0;
    for (double x : xs) ss += (x - m.mean) * (x - m.mean);
    m.var = ss / static_cast<double>(xs.size() - 1);
    return m;
}

std::vector<double> finite_only(const std::vector<double>& xs) {
    std::vector<double> out;
    out.reserve(xs.size());
    for (double x : xs)
        if (std::isfinite(x)) out.push_back(x);
    return out;
}

}  // namespace

std::vector<double> paired_median_differences(const std::vector<double>& h2_values, const std::vector<std::int32_t>& h2_runs,
                                              const std::vector<double>& h3_values, const std::vector<std::int32_t>& h3_runs) {
    std::unordered_map<std::int32_t, std::vector<double>> h2_by_run, h3_by_run;
    std::vector<std::int32_t> run_order;
    // A negative id is a run of its own (make_run_clustered_sample): it pairs with nothing, even an equal id.
    for (std::size_t i = 0; i < std::min(h2_values.size(), h2_runs.size()); ++i) {
        if (h2_runs[i] < 0) continue;
        auto& v = h2_by_run[h2_runs[i]];
        if (v.empty()) run_order.push_back(h2_runs[i]);
        v.push_back(h2_values[i]);
    }
    for (std::size_t i = 0; i < std::min(h3_values.size(), h3_runs.size()); ++i)
        if (h3_runs[i] >= 0) h3_by_run[h3_runs[i]].push_back(h3_values[i]);
    std::vector<double> diffs;
    for (std::int32_t run : run_order) {
        const auto it = h3_by_run.find(run);
        if (it == h3_by_run.end()) continue;
        diffs.push_back(quantiles(it->second, {0.5})[0] - quantiles(h2_by_run[run], {0.5})[0]);
    }
    return diffs;
}

PairedDifferenceSummary summarize_paired_differences(const std::vector<double>& diffs_in, double confidence) {
    PairedDifferenceSummary s;
    const std::vector<double> diffs = finite_only(diffs_in);
    s.n = diffs.size();
    s.mean = s.median = s.p10 = s.p90 = kNaN;
    s.ci_mean_lo = s.ci_mean_hi = s.ci_median_lo = s.ci_median_hi = kNaN;
    if (diffs.empty()) return s;
    const auto q = quantiles(diffs, {0.5, 0.1, 0.9});
    s.median = q[0];
    s.p10 = q[1];
    s.p90 = q[2];
    const MeanVar mv = mean_var(diffs);
    s.mean = mv.mean;
    const double z = two_sided_z(confidence);
    if (s.n >= 2 && confidence > 0 && confidence < 1) {
        const double se = std::sqrt(mv.var / static_cast<double>(s.n));
        s.ci_mean_lo = s.mean - z * se;
        s.ci_mean_hi = s.mean + z * se;
        std::vector<std::int32_t> own_run(s.n, -1);  // each difference is a run of its own
        const auto median = quantile_intervals_delta(make_run_clustered_sample(diffs, own_run), {0.5}, confidence)[0];
        s.ci_median_lo = median.lo;
        s.ci_median_hi = median.hi;
    }
    return s;
}

std::string to_json(const PairedDifferenceSummary& s) {
    return nlohmann::json{{"n", s.n},
                          {"mean", num(s.mean)},
                          {"median", num(s.median)},
                          {"p10", num(s.p10)},
                          {"p90", num(s.p90)},
                          {"ci_mean", {num(s.ci_mean_lo), num(s.ci_mean_hi)}},
                          {"ci_median", {num(s.ci_median_lo), num(s.ci_median_hi)}}}
        .dump();
}

OrderEffect order_effect(const std::vector<double>& diffs_h2_first, const std::vector<double>& diffs_h3_first,
                         double confidence) {
    OrderEffect e;
    const auto a = finite_only(diffs_h2_first);
    const auto b = finite_only(diffs_h3_first);
    e.n_h2_first = a.size();
    e.n_h3_first = b.size();
    const MeanVar ma = mean_var(a), mb = mean_var(b);
    e.mean_h2_first = ma.mean;
    e.mean_h3_first = mb.mean;
    e.diff = mb.mean - ma.mean;
    e.ci_lo = e.ci_hi = e.p_value = kNaN;
    if (a.size() < 2 || b.size() < 2 || !(confidence > 0 && confidence < 1)) return e;
    const double se = std::sqrt(ma.var / static_cast<double>(a.size()) + mb.var / static_cast<double>(b.size()));
    const double z = two_sided_z(confidence);
    e.ci_lo = e.diff - z * se;
    e.ci_hi = e.diff + z * se;
    if (se > 0) e.p_value = 2 * normal_cdf(-std::fabs(e.diff) / se);
    else e.p_value = e.diff == 0 ? 1.0 : 0.0;
    return e;
}

std::string to_json(const OrderEffect& e) {
    return nlohmann::json{{"n_h2_first", e.n_h2_first},
                          {"n_h3_first", e.n_h3_first},
                          {"mean_h2_first", num(e.mean_h2_first)},
                          {"mean_h3_first", num(e.mean_h3_first)},
                          {"diff", num(e.diff)},
                          {"ci", {num(e.ci_lo), num(e.ci_hi)}},
                          {"p_value", num(e.p_value)}}
        .dump();
}

}  // namespace h3probe

// Inference from aggregates (see report_aggregates.hpp), and the aggregates' entries as they cross the binding.
#include "report_aggregates.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <tuple>

#include "confidence_sequence.hpp"
#include "multiplicity.hpp"
#include "quantiles.hpp"
#include "sample_size.hpp"
#include "standard_normal.hpp"

namespace h3probe {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
bool finite(double x) { return std::isfinite(x); }

// Reads the aggregates of one group; what is missing goes to needs (once) and reads as NaN / null.
class Lookup {
public:
    Lookup(const GroupAggregates& g, std::size_t index, Needs& needs) : g_(g), index_(index), needs_(needs) {}

    const SampleAggregates& sample(SampleKind s) const { return g_.sample[static_cast<int>(s)]; }

    double stat(SampleKind s, std::uint64_t rank) {
        const auto& m = sample(s).order_stats;
        if (auto it = m.find(rank); it != m.end()) return it->second;
        if (asked_ranks_.insert({static_cast<int>(s), rank}).second) needs_.ranks.push_back({index_, s, rank});
        return kNaN;
    }

    // Type-7 quantile from the two order statistics it reads (as OrderStatistics::quantile).
    double quantile(SampleKind s, double p) {
        const std::uint64_t n = sample(s).n;
        if (n == 0 || !(p >= 0 && p <= 1)) return kNaN;
        std::size_t lo = 0, hi = 0;
        OrderStatistics::quantile_ranks(static_cast<std::size_t>(n), p, lo, hi);
        const double h = (static_cast<double>(n) - 1) * p;
        const double a = stat(s, lo);
        return a + (h - static_cast<double>(lo)) * (stat(s, hi) - a);
    }

    const BelowSums* below(SampleKind s, double q) {
        const auto& m = sample(s).below;
        if (auto it = m.find(q); it != m.end()) return &it->second;
        if (asked_below_.insert({static_cast<int>(s), q}).second) needs_.below.push_back({index_, s, q});
        return nullptr;
    }

    const CrossSums* cross(double q2, double q3) {
        if (auto it = g_.cross.find({q2, q3}); it != g_.cross.end()) return &it->second;
        if (asked_cross_.insert({q2, q3}).second) needs_.cross.push_back({index_, q2, q3});
        return nullptr;
    }

    // One arm's delta interval at p (quantile_ci.hpp) from the aggregates; fit receives the delta fit (sum_sq NaN when
    // there is none) and sums the sums it used (null when missing). with_se: also the standard error (more ranks).
    QuantileInterval interval(SampleKind s, double p, double z, DeltaFit& fit, const BelowSums*& sums, bool with_se = true) {
        QuantileInterval qi;
        qi.p = p;
        qi.estimate = quantile(s, p);
        qi.lo = qi.hi = qi.se = qi.df = qi.design_effect = qi.slope_noise = kNaN;
        fit = DeltaFit{};
        fit.sum_sq = kNaN;
        sums = nullptr;
        const auto& a = sample(s);
        if (a.n == 0 || !finite(qi.estimate) || a.runs < 2) return qi;
        sums = below(s, qi.estimate);
        if (!sums) return qi;
        fit = delta_fit(static_cast<std::size_t>(a.n), static_cast<std::size_t>(a.runs), p, *sums, z);
        qi.design_effect = fit.design_effect;
        if (!fit.bounds) return qi;
        qi.lo = stat(s, fit.l - 1);
        qi.hi = stat(s, fit.u - 1);
        if (!with_se) return qi;
        qi.se = quantile_se(qi.estimate, quantile(s, fit.window_lo), quantile(s, fit.window_hi), fit);
        qi.df = quantile_df(fit, static_cast<std::size_t>(a.n), static_cast<std::size_t>(a.runs));
        qi.slope_noise = quantile_slope_noise(fit, static_cast<std::size_t>(a.n));
        return qi;
    }

private:
    const GroupAggregates& g_;
    std::size_t index_;
    Needs& needs_;
    std::set<std::pair<int, std::uint64_t>> asked_ranks_;
    std::set<std::pair<int, double>> asked_below_;
    std::set<std::pair<double, double>> asked_cross_;
};

ArmsAnalysis analysis_from(Lookup& g, std::uint64_t runs_paired, const ReportOptions& o) {
    ArmsAnalysis a;
    a.method = IntervalMethod::delta;
    a.confidence = o.confidence;
    const auto& h2 = g.sample(SampleKind::h2);
    const auto& h3 = g.sample(SampleKind::h3);
    a.n_h2 = h2.n;
    a.n_h3 = h3.n;
    a.runs_h2 = h2.runs;
    a.runs_h3 = h3.runs;
    a.runs_paired = runs_paired;
    if (h2.n == 0 || h3.n == 0) return a;
    const bool enough_runs = h2.runs >= kMinRunsForInterval && h3.runs >= kMinRunsForInterval && o.confidence > 0 &&
                             o.confidence < 1;
    const double z = two_sided_z(o.confidence);
    const std::size_t units = delta_units(a);
    for (double p : o.percentiles) {
        DeltaFit f2, f3;
        const BelowSums *s2 = nullptr, *s3 = nullptr;
        const QuantileInterval i2 = g.interval(SampleKind::h2, p, z, f2, s2);
        const QuantileInterval i3 = g.interval(SampleKind::h3, p, z, f3, s3);
        double rho = kNaN;
        // The cross sums are asked for with the sums (not once the sums say they are needed): one round less.
        const CrossSums* c = finite(i2.estimate) && finite(i3.estimate) && h2.runs >= 2 && h3.runs >= 2
                                 ? g.cross(i2.estimate, i3.estimate) : nullptr;
        if (f2.sum_sq > 0 && f3.sum_sq > 0 && s2 && s3) {
            if (c) {
                const double cross = delta_cross(*c, static_cast<std::size_t>(h2.n), s2->below,
                                                 static_cast<std::size_t>(h3.n), s3->below);
                rho = std::max(-1.0, std::min(1.0, cross / std::sqrt(f2.sum_sq * f3.sum_sq)));
            }
        }
        a.rows.push_back(delta_difference_row(p, i2, i3, rho, enough_runs, o.confidence, units));
        a.rows.back().min_runs = min_runs_for_interval(p, z);
        // The anytime-valid interval over the group's runs (either arm): the units the delta method counts.
        if (!mark_unfinished(a.rows.back(), i2, i3) && enough_runs) set_confidence_sequence(a.rows.back(), units, o.confidence);
        a.h2.push_back(i2);
        a.h3.push_back(i3);
    }
    return a;
}

PairedDifferenceSummary paired_from(Lookup& g, const Moments& m, double confidence) {
    PairedDifferenceSummary s;
    s.n = m.n;
    s.mean = s.median = s.p10 = s.p90 = kNaN;
    s.ci_mean_lo = s.ci_mean_hi = s.ci_median_lo = s.ci_median_hi = kNaN;
    if (m.n == 0) return s;
    s.median = g.quantile(SampleKind::diff, 0.5);
    s.p10 = g.quantile(SampleKind::diff, 0.1);
    s.p90 = g.quantile(SampleKind::diff, 0.9);
    s.mean = m.mean;
    if (s.n >= 2 && confidence > 0 && confidence < 1) {
        const double z = two_sided_z(confidence);
        const double se = std::sqrt(m.var / static_cast<double>(s.n));
        s.ci_mean_lo = s.mean - z * se;
        s.ci_mean_hi = s.mean + z * se;
        DeltaFit fit;
        const BelowSums* sums = nullptr;
        const QuantileInterval median = g.interval(SampleKind::diff, 0.5, z, fit, sums, false);
        s.ci_median_lo = median.lo;
        s.ci_median_hi = median.hi;
    }
    return s;
}

}  // namespace

void plan_from_report_row(GroupReport& r, const ReportOptions& o) {
    if (!r.sample_size) return;
    for (const QuantileDifferenceRow& row : r.analysis.rows)
        if (row.p == o.size_p)
            plan_from_difference(*r.sample_size, row, r.runs_h2, r.runs_h3, o.size_mde, o.size_alpha, o.size_power);
}

std::vector<GroupReport> infer_report(const std::vector<GroupAggregates>& groups, const ReportOptions& o, Needs& needs) {
    std::vector<GroupReport> out;
    for (std::size_t i = 0; i < groups.size(); ++i) {
        const GroupAggregates& agg = groups[i];
        Lookup g(agg, i, needs);
        GroupReport r = agg.counts;
        const auto& h2 = g.sample(SampleKind::h2);
        r.runs_h2 = h2.runs;
        r.runs_h3 = g.sample(SampleKind::h3).runs;
        r.analysis = analysis_from(g, agg.runs_paired, o);
        if (agg.counts.failure_sums.runs > 0) r.failures = compare_failures(agg.counts.failure_sums, o.confidence);
        if (agg.diffs.n >= 2) r.paired = paired_from(g, agg.diffs.moments(), o.confidence);
        if (agg.diffs_h2_first.n >= 2 && agg.diffs_h3_first.n >= 2)
            r.order = order_effect_from(agg.diffs_h2_first.moments(), agg.diffs_h3_first.moments(), o.confidence);
        if (h2.n >= 2 && h2.runs >= 2) {
            QuantileInterval qi;
            qi.estimate = qi.se = qi.design_effect = kNaN;
            if (o.size_alpha > 0 && o.size_alpha < 1 && o.size_power > 0 && o.size_power < 1 && o.size_mde > 0) {
                DeltaFit fit;
                const BelowSums* sums = nullptr;
                qi = g.interval(SampleKind::h2, o.size_p, two_sided_z(1 - o.size_alpha), fit, sums);
            }
            r.sample_size = plan_from_interval(static_cast<std::size_t>(h2.n), static_cast<std::size_t>(h2.runs), qi,
                                               o.size_mde, o.size_alpha, o.size_power);
            plan_from_report_row(r, o);
        }
        if (!o.cdf_probabilities.empty()) {
            for (SampleKind s : {SampleKind::h2, SampleKind::h3}) {
                if (g.sample(s).n == 0) continue;
                auto& cdf = s == SampleKind::h2 ? r.cdf_h2 : r.cdf_h3;
                for (double p : o.cdf_probabilities) cdf.push_back(g.quantile(s, p));
            }
        }
        out.push_back(std::move(r));
    }
    // The multiplicity adjustment needs every cell of the report, so only once nothing is missing; so do the looks.
    if (needs.empty()) mark_discoveries(out, o.confidence);
    if (needs.empty() && o.cumulative) mark_sequence_looks(out, 1);
    return out;
}

std::vector<GroupReport> infer_from(AggregateSource& source, const ReportOptions& options, std::string& error) {
    std::vector<GroupAggregates> aggregates = source.start();
    for (int round = 0;; ++round) {
        Needs needs;
        std::vector<GroupReport> reports = infer_report(aggregates, options, needs);
        if (needs.empty()) return reports;
        if (error = next_round_error(round); !error.empty()) return {};
        source.fill(aggregates, needs);
    }
}

std::string next_round_error(int round) {
    if (round + 1 < kMaxInferenceRounds) return "";
    return "the inference still needs aggregates after " + std::to_string(kMaxInferenceRounds) + " rounds";
}

std::vector<RankValue> entries(const std::map<std::uint64_t, double>& m) {
    std::vector<RankValue> out;
    for (const auto& [rank, value] : m) out.push_back({rank, value});
    return out;
}

std::vector<BelowEntry> entries(const std::map<double, BelowSums>& m) {
    std::vector<BelowEntry> out;
    for (const auto& [threshold, sums] : m) out.push_back({threshold, sums});
    return out;
}

std::vector<CrossEntry> entries(const std::map<std::pair<double, double>, CrossSums>& m) {
    std::vector<CrossEntry> out;
    for (const auto& [q, sums] : m) out.push_back({q.first, q.second, sums});
    return out;
}

void from_entries(const std::vector<RankValue>& list, std::map<std::uint64_t, double>& m) {
    for (const RankValue& e : list) m[e.rank] = e.value;
}

void from_entries(const std::vector<BelowEntry>& list, std::map<double, BelowSums>& m) {
    for (const BelowEntry& e : list) m[e.threshold] = e.sums;
}

void from_entries(const std::vector<CrossEntry>& list, std::map<std::pair<double, double>, CrossSums>& m) {
    for (const CrossEntry& e : list) m[{e.q2, e.q3}] = e.sums;
}

std::string check_aggregates(Aggregates& a) {
    if (a.version != kAggregatesVersion)
        return "aggregates of format " + std::to_string(a.version) + "; this h3probe reads format " + std::to_string(kAggregatesVersion);
    for (GroupAggregates& g : a.groups) {
        for (int arm = 0; arm < 2; ++arm) {
            g.counts.arm_requests[arm] = 0;
            for (std::size_t c : g.counts.classes[arm]) g.counts.arm_requests[arm] += c;
        }
    }
    return "";
}

}  // namespace h3probe

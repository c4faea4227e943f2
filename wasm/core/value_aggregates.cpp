// The aggregates infer_report() asks for, from values in memory (see value_aggregates.hpp).
#include "value_aggregates.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "bootstrap.hpp"
#include "limits.hpp"
#include "multiplicity.hpp"

namespace h3probe {
namespace {

// Median (type 7) of a run's few values; sorts them in place.
double median_in_place(std::vector<double>& v) {
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// S_i of every run of the sample: its values at or below q.
std::vector<std::uint32_t> per_run_below(const RunClusteredSample& s, double q) {
    std::vector<std::uint32_t> below(s.runs(), 0);
    for (std::size_t i = 0; i < s.size(); ++i) below[s.run[i]] += s.values[i] <= q ? 1u : 0u;
    return below;
}

// For each run of the h2 arm, the dense index of the h3 run with the same id, or -1: the one pairing of the arms.
std::vector<std::int32_t> partner_runs(const RunClusteredSample& h2, const RunClusteredSample& h3) {
    std::vector<std::int32_t> partner(h2.runs(), -1);
    std::uint32_t max_id = 0;
    for (std::uint32_t id : h3.run_id) max_id = std::max(max_id, id);
    // A direct table when ids are compact (record indices, the report's case), else a sorted merge.
    if (max_id <= 4 * (h2.runs() + h3.runs()) + 1024) {
        std::vector<std::int32_t> dense3(std::size_t{max_id} + 1, -1);
        for (std::size_t j = 0; j < h3.runs(); ++j) dense3[h3.run_id[j]] = static_cast<std::int32_t>(j);
        for (std::size_t i = 0; i < h2.runs(); ++i)
            if (h2.run_id[i] <= max_id) partner[i] = dense3[h2.run_id[i]];
        return partner;
    }
    const auto keyed = [](const RunClusteredSample& s) {
        std::vector<std::pair<std::uint32_t, std::int32_t>> k(s.runs());
        for (std::size_t i = 0; i < s.runs(); ++i) k[i] = {s.run_id[i], static_cast<std::int32_t>(i)};
        std::sort(k.begin(), k.end());
        return k;
    };
    const auto k2 = keyed(h2), k3 = keyed(h3);
    for (std::size_t i = 0, j = 0; i < k2.size() && j < k3.size();) {
        if (k2[i].first < k3[j].first) ++i;
        else if (k3[j].first < k2[i].first) ++j;
        else partner[static_cast<std::size_t>(k2[i++].second)] = k3[j++].second;
    }
    return partner;
}

}  // namespace

void add_run(RunClusteredSample& s, const std::vector<double>& values, std::uint32_t id) {
    const auto dense = static_cast<std::uint32_t>(s.run_size.size());
    s.run_size.push_back(static_cast<std::uint32_t>(values.size()));
    s.run_id.push_back(id);
    // push_back into reserved vectors: a range insert per run (a few values) costs more in call overhead.
    for (const double v : values) {
        s.values.push_back(v);
        s.run.push_back(dense);
    }
}

double paired_difference(std::vector<double> (&values)[2]) {
    constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
    if (values[0].empty() || values[1].empty()) return kNone;
    const double h2 = median_in_place(values[0]), h3 = median_in_place(values[1]);
    // A median above every finished time lies among requests that did not finish (kUnfinishedValue): no time to subtract.
    if (h2 > kMaxDurationMs || h3 > kMaxDurationMs) return kNone;
    return h3 - h2;
}

void add_values(ValueGroup& g, const std::vector<double> (&values)[2], std::uint32_t id, double diff) {
    for (int arm = 0; arm < 2; ++arm)
        if (!values[arm].empty()) add_run(g.arm[arm], values[arm], id);
    if (!std::isnan(diff)) g.diffs.push_back(diff);
}

void add_run(ValueGroup& g, const std::vector<double> (&values)[2], std::uint32_t id, int order, double diff) {
    add_values(g, values, id, diff);
    if (!std::isnan(diff)) g.sums[static_cast<std::size_t>(std::min(std::max(order, 0), 2))].add(diff);
}

void add_run(ValueGroup& g, std::vector<double> (&values)[2], std::uint32_t id, int order) {
    const double diff = paired_difference(values);
    add_run(g, values, id, order, diff);
}

void add_difference(ValueGroup& g, double d, int order) {
    g.diffs.push_back(d);
    g.sums[static_cast<std::size_t>(order == 0 || order == 1 ? order : 2)].add(d);
}

void sum_parts(ValueGroup& whole, const std::vector<const ValueGroup*>& parts) {
    whole.sums = {};
    for (const ValueGroup* part : parts)
        for (std::size_t k = 0; k < whole.sums.size(); ++k) whole.sums[k].add(part->sums[k]);
}

ValueAggregates::ValueAggregates(std::vector<const ValueGroup*> groups) : groups_(std::move(groups)), stats_(groups_.size()) {}

std::vector<GroupAggregates> ValueAggregates::start() {
    std::vector<GroupAggregates> out(groups_.size());
    for (std::size_t i = 0; i < groups_.size(); ++i) {
        const ValueGroup& d = *groups_[i];
        GroupAggregates& a = out[i];
        a.counts = d.counts;
        for (int arm = 0; arm < 2; ++arm) {
            a.sample[arm].n = d.arm[arm].size();
            a.sample[arm].runs = d.arm[arm].runs();
        }
        a.sample[2].n = a.sample[2].runs = d.diffs.size();
        for (const MomentAccumulator& s : d.sums) a.diffs.add(s.sums());
        a.diffs_h2_first = d.sums[0].sums();
        a.diffs_h3_first = d.sums[1].sums();
    }
    // Runs with values in both arms: counted by the pairing itself (diffs may be absent, e.g. in a simulation).
    for (std::size_t i = 0; i < groups_.size(); ++i)
        for (std::int32_t j : partner_runs(groups_[i]->arm[0], groups_[i]->arm[1])) out[i].runs_paired += j >= 0;
    return out;
}

void ValueAggregates::fill(std::vector<GroupAggregates>& aggs, const Needs& needs) {
    std::map<std::pair<std::size_t, int>, std::vector<std::size_t>> ranks;
    for (const auto& r : needs.ranks)
        ranks[{r.group, static_cast<int>(r.sample)}].push_back(static_cast<std::size_t>(r.rank));
    for (auto& [key, list] : ranks) {
        OrderStatistics& os = stats(key.first, key.second);
        os.select(list);
        auto& out = aggs[key.first].sample[static_cast<std::size_t>(key.second)].order_stats;
        for (std::size_t r : list) out[r] = os.at(r);
    }
    // Each run's count at or below a threshold, computed once per round: the sums and the cross sums share it.
    std::map<std::tuple<std::size_t, int, double>, std::vector<std::uint32_t>> below_of;
    const auto run_below = [&](std::size_t group, int arm, double q) -> const std::vector<std::uint32_t>& {
        auto [it, fresh] = below_of.try_emplace({group, arm, q});
        if (fresh) it->second = per_run_below(groups_[group]->arm[arm], q);
        return it->second;
    };
    for (const auto& b : needs.below) {
        const ValueGroup& d = *groups_[b.group];
        BelowSums sums;
        if (b.sample == SampleKind::diff) {
            for (double x : d.diffs) sums.below += x <= b.threshold;
            sums.below_sq = sums.below_size = sums.below;
            sums.size_sq = d.diffs.size();
        } else {
            const int arm = static_cast<int>(b.sample);
            const RunClusteredSample& s = d.arm[arm];
            const auto& below = run_below(b.group, arm, b.threshold);
            for (std::size_t i = 0; i < s.runs(); ++i) {
                const std::uint64_t S = below[i], n = s.run_size[i];
                sums.below += S;
                sums.below_sq += S * S;
                sums.below_size += S * n;
                sums.size_sq += n * n;
            }
        }
        aggs[b.group].sample[static_cast<std::size_t>(b.sample)].below[b.threshold] = sums;
    }
    std::map<std::size_t, std::vector<std::int32_t>> partners;  // per group
    for (const auto& c : needs.cross) {
        const ValueGroup& d = *groups_[c.group];
        auto [it, fresh] = partners.try_emplace(c.group);
        if (fresh) it->second = partner_runs(d.arm[0], d.arm[1]);
        const auto& partner = it->second;
        const auto& b2 = run_below(c.group, 0, c.q2);
        const auto& b3 = run_below(c.group, 1, c.q3);
        CrossSums sums;
        for (std::size_t i = 0; i < partner.size(); ++i) {
            if (partner[i] < 0) continue;
            const auto j = static_cast<std::size_t>(partner[i]);
            const std::uint64_t s2 = b2[i], n2 = d.arm[0].run_size[i], s3 = b3[j], n3 = d.arm[1].run_size[j];
            sums.s2s3 += s2 * s3;
            sums.s2n3 += s2 * n3;
            sums.n2s3 += n2 * s3;
            sums.n2n3 += n2 * n3;
        }
        aggs[c.group].cross[{c.q2, c.q3}] = sums;
    }
}

OrderStatistics& ValueAggregates::stats(std::size_t group, int sample) {
    auto& slot = stats_[group][static_cast<std::size_t>(sample)];
    if (!slot) {
        const ValueGroup& d = *groups_[group];
        const std::vector<double>& v = sample == 2 ? d.diffs : d.arm[sample].values;
        slot = std::make_unique<OrderStatistics>(v.data(), v.size());
    }
    return *slot;
}

std::vector<GroupReport> infer_values(std::vector<const ValueGroup*> groups, const ReportOptions& options, std::string& error) {
    ValueAggregates source(groups);
    std::vector<GroupReport> out = infer_from(source, options, error);
    if (!error.empty() || options.method != IntervalMethod::bootstrap) return out;
    // The bootstrap replaces the rows' intervals, standard errors and p-values, and so the sample-size plans and the
    // discoveries across them.
    for (std::size_t i = 0; i < out.size(); ++i) {
        bootstrap_intervals(out[i].analysis, groups[i]->arm[0], groups[i]->arm[1]);
        plan_from_report_row(out[i], options);
    }
    mark_discoveries(out, options.confidence);
    return out;
}

std::vector<const ValueGroup*> pointers_to(const std::vector<ValueGroup>& groups) {
    std::vector<const ValueGroup*> out;
    for (const ValueGroup& g : groups) out.push_back(&g);
    return out;
}

std::vector<GroupReport> infer_values(const std::vector<ValueGroup>& groups, const ReportOptions& options,
                                      std::string& error) {
    return infer_values(pointers_to(groups), options, error);
}

void append_group(ValueGroup& into, const ValueGroup& from) {
    GroupReport& c = into.counts;
    const GroupReport& f = from.counts;
    c.runs += f.runs;
    c.requests += f.requests;
    c.missing_metric += f.missing_metric;
    for (int arm = 0; arm < 2; ++arm) {
        c.arm_requests[arm] += f.arm_requests[arm];
        for (int k = 0; k < kRequestClassCount; ++k) c.classes[arm][k] += f.classes[arm][k];
        RunClusteredSample& s = into.arm[arm];
        const RunClusteredSample& t = from.arm[arm];
        const auto offset = static_cast<std::uint32_t>(s.runs());
        s.values.insert(s.values.end(), t.values.begin(), t.values.end());
        for (std::uint32_t r : t.run) s.run.push_back(r + offset);
        s.run_size.insert(s.run_size.end(), t.run_size.begin(), t.run_size.end());
        s.run_id.insert(s.run_id.end(), t.run_id.begin(), t.run_id.end());
    }
    into.diffs.insert(into.diffs.end(), from.diffs.begin(), from.diffs.end());
    for (std::size_t k = 0; k < into.sums.size(); ++k) into.sums[k].add(from.sums[k]);
}

std::vector<GroupReport> infer_cumulative(const std::vector<const ValueGroup*>& groups, const ReportOptions& options,
                                          std::string& error) {
    std::vector<GroupReport> out;
    std::vector<ValueGroup> upto(1);
    for (const ValueGroup* g : groups) {
        append_group(upto[0], *g);
        upto[0].counts.name = g->counts.name;
        std::vector<GroupReport> look = infer_values(upto, options, error);
        if (!error.empty()) return {};
        out.push_back(std::move(look[0]));
    }
    return out;
}

}  // namespace h3probe

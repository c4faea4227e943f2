// Reading the per-run records into groups, and the statistics per group (see report.hpp).
#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <map>
#include <tuple>

#include "quantiles.hpp"
#include "report_aggregates.hpp"
#include "stored_run.hpp"

namespace h3probe {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kUsable[2] = {static_cast<int>(RequestClass::usable_control),
                            static_cast<int>(RequestClass::usable_treatment)};

struct GroupData {
    GroupReport report;
    RunClusteredSample arm[2];  // built here directly: the records come run by run, so a run's values are adjacent
    std::vector<double> diffs, diffs_h2_first, diffs_h3_first;
};

// Median (type 7) of a run's few values; sorts them in place.
double median_in_place(std::vector<double>& v) {
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// One run's values as a new run of the sample; run is the run's id, the same in both arms.
void add_run(RunClusteredSample& s, const std::vector<double>& values, std::int32_t run) {
    const auto dense = static_cast<std::uint32_t>(s.run_size.size());
    s.run_size.push_back(static_cast<std::uint32_t>(values.size()));
    s.run_id.push_back(run);
    // push_back into reserved vectors: a range insert per run (a few values) cost more in call overhead.
    for (const double v : values) {
        s.values.push_back(v);
        s.run.push_back(dense);
    }
}

// One record's fixed part, checked. Returns an error message, or "" with the record's parts set.
struct RecordHead {
    std::uint8_t group = 0, order = 0;
    int classes = 0;            // classes per arm in this record's format
    std::size_t head_bytes = 0;  // the group byte and the counts
    const std::uint8_t* by_class[2] = {nullptr, nullptr};
    std::size_t n[2] = {0, 0};  // usable requests per arm: the float64s that follow
};
std::string read_head(const std::uint8_t* data, std::size_t size, std::size_t at, std::int32_t run, std::size_t groups,
                      RecordHead& h) {
    // The message is built only for a record that fails: this runs twice per run on every report.
    const auto where = [&] { return "run record " + std::to_string(run) + " (byte " + std::to_string(at) + ")"; };
    h.group = data[at];
    if (h.group == 0 || h.group >= groups) return where() + " names no group";
    if (size - at - 1 < 2) return where() + " is cut short";
    const std::uint8_t* counts = data + at + 1;
    if (counts[0] < 1 || counts[0] > kRunRecordVersion)
        return where() + " has format " + std::to_string(counts[0]) + ", not 1 to " + std::to_string(kRunRecordVersion);
    if (size - at - 1 < arm_counts_bytes(counts[0])) return where() + " is cut short";
    h.classes = kRecordClasses[counts[0]];
    h.head_bytes = 1 + arm_counts_bytes(counts[0]);
    h.order = counts[1];
    h.by_class[0] = counts + 2;
    h.by_class[1] = counts + 2 + h.classes;
    h.n[0] = h.by_class[0][kUsable[0]];
    h.n[1] = h.by_class[1][kUsable[1]];
    if ((size - at - h.head_bytes) / 8 < h.n[0] + h.n[1]) return where() + " holds fewer values than its counts say";
    return "";
}

// Reads every record into its group and into overall (groups[0]). Two passes: the first checks every record and
// sizes each sample, so that the second fills them without growing a vector (copies were most of the time).
std::string read_records(const std::uint8_t* data, std::size_t size, std::vector<GroupData>& groups) {
    std::vector<std::array<std::size_t, 4>> sizes(groups.size());  // values and runs per arm
    RecordHead h;
    std::int32_t run = 0;
    for (std::size_t at = 0; at < size; ++run) {
        if (auto error = read_head(data, size, at, run, groups.size(), h); !error.empty()) return error;
        for (std::size_t g : {std::size_t{0}, std::size_t{h.group}})
            for (int arm = 0; arm < 2; ++arm) {
                sizes[g][2 * arm] += h.n[arm];
                sizes[g][2 * arm + 1] += h.n[arm] > 0;
            }
        at += h.head_bytes + 8 * (h.n[0] + h.n[1]);
    }
    for (std::size_t g = 0; g < groups.size(); ++g)
        for (int arm = 0; arm < 2; ++arm) {
            RunClusteredSample& s = groups[g].arm[arm];
            s.values.reserve(sizes[g][2 * arm]);
            s.run.reserve(sizes[g][2 * arm]);
            s.run_size.reserve(sizes[g][2 * arm + 1]);
            s.run_id.reserve(sizes[g][2 * arm + 1]);
        }

    std::vector<double> own[2];
    run = 0;
    for (std::size_t at = 0; at < size; ++run) {
        read_head(data, size, at, run, groups.size(), h);
        at += h.head_bytes;
        GroupData* targets[2] = {&groups[h.group], &groups[0]};
        GroupReport& r = targets[0]->report;
        std::size_t measured = 0;
        for (int arm = 0; arm < 2; ++arm)
            for (int c = 0; c < h.classes; ++c) {
                r.classes[arm][c] += h.by_class[arm][c];
                r.arm_requests[arm] += h.by_class[arm][c];
                measured += h.by_class[arm][c];
            }
        if (measured > 0) ++r.runs;
        r.requests += measured;

        for (int arm = 0; arm < 2; ++arm) {
            own[arm].clear();
            for (std::size_t i = 0; i < h.n[arm]; ++i, at += 8) {
                double v;
                std::memcpy(&v, data + at, sizeof v);
                if (std::isnan(v)) ++r.missing_metric;
                else own[arm].push_back(v);
            }
            if (own[arm].empty()) continue;
            for (GroupData* t : targets) add_run(t->arm[arm], own[arm], run);
        }
        if (!own[0].empty() && !own[1].empty()) {
            const double d = median_in_place(own[1]) - median_in_place(own[0]);
            for (GroupData* t : targets) {
                t->diffs.push_back(d);
                if (h.order == 0) t->diffs_h2_first.push_back(d);
                if (h.order == 1) t->diffs_h3_first.push_back(d);
            }
        }
    }
    return "";
}

// The in-process half of the aggregates: what infer_report() asks for, computed from the groups' values in memory
// (order statistics by radix selection, sums by one pass over a sample per threshold).
class ValueAggregates {
public:
    explicit ValueAggregates(std::vector<GroupData>& groups) : groups_(groups), stats_(groups.size()) {}

    std::vector<GroupAggregates> start() const {
        std::vector<GroupAggregates> out(groups_.size());
        for (std::size_t i = 0; i < groups_.size(); ++i) {
            const GroupData& d = groups_[i];
            GroupAggregates& a = out[i];
            a.counts = d.report;
            for (int arm = 0; arm < 2; ++arm) {
                a.sample[arm].n = d.arm[arm].size();
                a.sample[arm].runs = d.arm[arm].runs();
            }
            a.sample[2].n = a.sample[2].runs = d.diffs.size();
            a.runs_paired = d.diffs.size();  // a run has a difference exactly when both its arms have values
            a.diffs = moments(d.diffs);
            a.diffs_h2_first = moments(d.diffs_h2_first);
            a.diffs_h3_first = moments(d.diffs_h3_first);
        }
        return out;
    }

    void fill(std::vector<GroupAggregates>& aggs, const Needs& needs) {
        std::map<std::pair<std::size_t, int>, std::vector<std::size_t>> ranks;
        for (const auto& r : needs.ranks) ranks[{r.group, static_cast<int>(r.sample)}].push_back(r.rank);
        for (auto& [key, list] : ranks) {
            OrderStatistics& os = stats(key.first, key.second);
            os.select(list);
            auto& out = aggs[key.first].sample[key.second].order_stats;
            for (std::size_t r : list) out[r] = os.at(r);
        }
        // Each run's count at or below a threshold, computed once per round: the sums and the cross sums share it.
        std::map<std::tuple<std::size_t, int, double>, std::vector<std::uint32_t>> below_of;
        const auto run_below = [&](std::size_t group, int arm, double q) -> const std::vector<std::uint32_t>& {
            auto [it, fresh] = below_of.try_emplace({group, arm, q});
            if (fresh) it->second = per_run_below(groups_[group].arm[arm], q);
            return it->second;
        };
        for (const auto& b : needs.below) {
            const GroupData& d = groups_[b.group];
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
            aggs[b.group].sample[static_cast<int>(b.sample)].below[b.threshold] = sums;
        }
        std::map<std::size_t, std::vector<std::int32_t>> partners;  // per group: h3 dense index of each h2 run, or -1
        for (const auto& c : needs.cross) {
            const GroupData& d = groups_[c.group];
            auto [it, fresh] = partners.try_emplace(c.group);
            if (fresh) {
                // Runs are record indices in both arms: a table from the h3 arm's run id to its dense index pairs them.
                std::vector<std::int32_t> dense3;
                for (std::size_t j = 0; j < d.arm[1].runs(); ++j) {
                    const auto id = static_cast<std::size_t>(d.arm[1].run_id[j]);
                    if (id >= dense3.size()) dense3.resize(id + 1, -1);
                    dense3[id] = static_cast<std::int32_t>(j);
                }
                it->second.assign(d.arm[0].runs(), -1);
                for (std::size_t i = 0; i < d.arm[0].runs(); ++i) {
                    const auto id = static_cast<std::size_t>(d.arm[0].run_id[i]);
                    if (id < dense3.size()) it->second[i] = dense3[id];
                }
            }
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

private:
    static std::vector<std::uint32_t> per_run_below(const RunClusteredSample& s, double q) {
        std::vector<std::uint32_t> below(s.runs(), 0);
        for (std::size_t i = 0; i < s.size(); ++i) below[s.run[i]] += s.values[i] <= q ? 1u : 0u;
        return below;
    }
    OrderStatistics& stats(std::size_t group, int sample) {
        auto& slot = stats_[group][static_cast<std::size_t>(sample)];
        if (!slot) {
            const GroupData& d = groups_[group];
            const std::vector<double>& v = sample == 2 ? d.diffs : d.arm[sample].values;
            slot = std::make_unique<OrderStatistics>(v.data(), v.size());
        }
        return *slot;
    }
    std::vector<GroupData>& groups_;
    std::vector<std::array<std::unique_ptr<OrderStatistics>, kSampleKinds>> stats_;
};

void analyse(GroupData& d, const ReportOptions& o) {
    GroupReport& r = d.report;
    const RunClusteredSample& h2 = d.arm[0];
    const RunClusteredSample& h3 = d.arm[1];
    r.runs_h2 = h2.runs();
    r.runs_h3 = h3.runs();
    r.analysis = analyze_arms(h2, h3, o.percentiles, o.method, o.confidence);
    if (d.diffs.size() >= 2) r.paired = summarize_paired_differences(d.diffs, o.confidence);
    // Only a randomised order gives both groups; Dropbox's fixed h2-first order cannot be tested.
    if (d.diffs_h2_first.size() >= 2 && d.diffs_h3_first.size() >= 2)
        r.order = order_effect(d.diffs_h2_first, d.diffs_h3_first, o.confidence);
    if (h2.size() >= 2 && h2.runs() >= 2)
        r.sample_size = plan_sample_size(h2, o.size_p, o.size_mde, o.size_alpha, o.size_power);
    if (!o.cdf_probabilities.empty()) {
        if (h2.size() > 0) r.cdf_h2 = quantiles(h2.values, o.cdf_probabilities);
        if (h3.size() > 0) r.cdf_h3 = quantiles(h3.values, o.cdf_probabilities);
    }
}

}  // namespace

Report build_report(const std::uint8_t* records, std::size_t size, const std::vector<std::string>& group_names,
                    const ReportOptions& options) {
    Report out;
    std::vector<GroupData> groups(group_names.size() + 1);
    groups[0].report.name = "overall";
    for (std::size_t i = 0; i < group_names.size(); ++i) groups[i + 1].report.name = group_names[i];
    out.error = read_records(records, size, groups);
    if (!out.error.empty()) return out;

    // overall's counts are its groups' (its samples were filled while reading).
    GroupReport& all = groups[0].report;
    for (std::size_t i = 1; i < groups.size(); ++i) {
        const GroupReport& g = groups[i].report;
        for (int arm = 0; arm < 2; ++arm) {
            all.arm_requests[arm] += g.arm_requests[arm];
            for (int c = 0; c < kRequestClassCount; ++c) all.classes[arm][c] += g.classes[arm][c];
        }
        all.runs += g.runs;
        all.requests += g.requests;
        all.missing_metric += g.missing_metric;
    }
    if (options.method == IntervalMethod::delta) {
        // Aggregates from the values, then the same inference as from a warehouse's aggregates (report_aggregates).
        ValueAggregates values(groups);
        std::vector<GroupAggregates> aggs = values.start();
        for (int round = 0;; ++round) {
            Needs needs;
            std::vector<GroupReport> reports = infer_report(aggs, options, needs);
            if (needs.empty()) {
                out.groups = std::move(reports);
                return out;
            }
            if (round == 8) {
                out.error = "the inference still needs aggregates after 8 rounds";
                return out;
            }
            values.fill(aggs, needs);
        }
    }
    for (GroupData& g : groups) {
        analyse(g, options);
        out.groups.push_back(std::move(g.report));
    }
    return out;
}

std::size_t treatment_ok(const GroupReport& g) {
    const auto& t = g.classes[1];
    return t[static_cast<int>(RequestClass::fallback)] + t[static_cast<int>(RequestClass::usable_treatment)] +
           t[static_cast<int>(RequestClass::protocol_unknown)] + t[static_cast<int>(RequestClass::protocol_mismatch)];
}

double fallback_rate(const GroupReport& g) {
    const std::size_t ok = treatment_ok(g);
    const std::size_t fallbacks = g.classes[1][static_cast<int>(RequestClass::fallback)];
    return ok ? static_cast<double>(fallbacks) / static_cast<double>(ok) : kNaN;
}

}  // namespace h3probe

// Reading the per-run records into groups, and the statistics per group (see report.hpp).
#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <map>
#include <tuple>

#include "bootstrap.hpp"
#include "confidence_sequence.hpp"
#include "stored_run.hpp"
#include "value_aggregates.hpp"

namespace h3probe {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kUsable[2] = {static_cast<int>(RequestClass::usable_control),
                            static_cast<int>(RequestClass::usable_treatment)};

// One record's fixed part, checked. Returns an error message, or "" with the record's parts set.
struct RecordHead {
    std::size_t group = 0;
    std::uint8_t order = 0;
    std::size_t head_bytes = 0;  // the group number and the counts
    const std::uint8_t* by_class[2] = {nullptr, nullptr};
    std::size_t n[2] = {0, 0};  // usable requests per arm: the float64s that follow
};
std::string read_head(const std::uint8_t* data, std::size_t size, std::size_t at, std::int32_t run, std::size_t groups,
                      RecordHead& h) {
    // The message is built only for a record that fails: this runs twice per run on every report.
    const auto where = [&] { return "run record " + std::to_string(run) + " (byte " + std::to_string(at) + ")"; };
    if (size - at < kGroupNumberBytes) return where() + " is cut short";
    h.group = read_group_number(data + at);
    if (h.group == 0 || h.group >= groups) return where() + " names no group";
    if (size - at - kGroupNumberBytes < 2) return where() + " is cut short";
    const std::uint8_t* counts = data + at + kGroupNumberBytes;
    if (counts[0] != kRunRecordVersion)
        return where() + " has format " + std::to_string(counts[0]) + ", not " + std::to_string(kRunRecordVersion);
    if (size - at - kGroupNumberBytes < kArmCountsBytes) return where() + " is cut short";
    h.head_bytes = kGroupNumberBytes + kArmCountsBytes;
    h.order = counts[1];
    h.by_class[0] = counts + 2;
    h.by_class[1] = counts + 2 + kRequestClassCount;
    h.n[0] = h.by_class[0][kUsable[0]];
    h.n[1] = h.by_class[1][kUsable[1]];
    if ((size - at - h.head_bytes) / 8 < h.n[0] + h.n[1]) return where() + " holds fewer values than its counts say";
    return "";
}

// Reads every record into its group and into overall (groups[0]). Two passes: the first checks every record and
// sizes each sample, so that the second fills them without growing a vector (a growing vector copies every value).
std::string read_records(const std::uint8_t* data, std::size_t size, std::vector<ValueGroup>& groups) {
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
        ValueGroup* targets[2] = {&groups[h.group], &groups[0]};
        GroupReport& r = targets[0]->counts;
        std::size_t measured = 0;
        for (int arm = 0; arm < 2; ++arm)
            for (int c = 0; c < kRequestClassCount; ++c) {
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
        }
        for (ValueGroup* t : targets) add_run(*t, own, static_cast<std::uint32_t>(run), h.order);
    }
    return "";
}

}  // namespace

Report build_report(const std::uint8_t* records, std::size_t size, const std::vector<std::string>& group_names,
                    const ReportOptions& options) {
    Report out;
    std::vector<ValueGroup> groups(group_names.size() + 1);
    groups[0].counts.name = "overall";
    for (std::size_t i = 0; i < group_names.size(); ++i) groups[i + 1].counts.name = group_names[i];
    out.error = read_records(records, size, groups);
    if (!out.error.empty()) return out;

    // overall's counts are its groups' (its samples were filled while reading).
    GroupReport& all = groups[0].counts;
    for (std::size_t i = 1; i < groups.size(); ++i) {
        const GroupReport& g = groups[i].counts;
        for (int arm = 0; arm < 2; ++arm) {
            all.arm_requests[arm] += g.arm_requests[arm];
            for (int c = 0; c < kRequestClassCount; ++c) all.classes[arm][c] += g.classes[arm][c];
        }
        all.runs += g.runs;
        all.requests += g.requests;
        all.missing_metric += g.missing_metric;
    }
    if (options.cumulative) {
        // overall, then the looks: each group with every group before it (delta intervals, as the sequence is).
        std::vector<ValueGroup> whole(1);
        whole[0] = std::move(groups[0]);
        out.groups = infer_values(whole, options, out.error);
        if (!out.error.empty()) return out;
        whole.clear();
        groups.erase(groups.begin());
        std::vector<GroupReport> looks = infer_cumulative(groups, options, out.error);
        for (auto& look : looks) out.groups.push_back(std::move(look));
        mark_sequence_looks(out.groups, 1);
        return out;
    }
    // The same inference as from a warehouse's aggregates; the bootstrap then replaces the rows' intervals.
    out.groups = infer_values(groups, options, out.error);
    if (options.method == IntervalMethod::bootstrap)
        for (std::size_t i = 0; i < out.groups.size(); ++i)
            bootstrap_intervals(out.groups[i].analysis, groups[i].arm[0], groups[i].arm[1]);
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

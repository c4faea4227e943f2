// Whether the arms measure the same page loads, and whether the sample is like the users' (see comparability.hpp).
#include "comparability.hpp"

namespace h3probe {
namespace {

bool past(std::size_t n, std::size_t of, double share, std::size_t min) {
    return of > 0 && n >= min && static_cast<double>(n) > share * static_cast<double>(of);
}

}  // namespace

std::vector<UnequalExclusion> unequal_exclusions(const GroupReport& g) {
    std::size_t requests[2] = {0, 0};
    for (int arm = 0; arm < 2; ++arm) {
        for (int c = 0; c < kRequestClassCount; ++c) {
            if (static_cast<RequestClass>(c) != RequestClass::prewarm) requests[arm] += g.classes[arm][c];
        }
    }
    std::vector<UnequalExclusion> out;
    if (requests[0] == 0 || requests[1] == 0) return out;
    for (int c = 0; c < kRequestClassCount; ++c) {
        const auto cls = static_cast<RequestClass>(c);
        if (role_of(cls) != ClassRole::fault) continue;  // every other class stays in its arm (request_class.hpp)
        const std::size_t a = g.classes[0][c], b = g.classes[1][c];
        const double gap = static_cast<double>(b) / static_cast<double>(requests[1]) -
                           static_cast<double>(a) / static_cast<double>(requests[0]);
        const std::size_t more = a > b ? a - b : b - a;
        if ((gap > kUnequalExclusionShare || gap < -kUnequalExclusionShare) && more >= kUnequalExclusionMinRequests) {
            out.push_back({cls, a, b, requests[0], requests[1]});
        }
    }
    return out;
}

const char* to_string(SampleBiasKind kind) {
    switch (kind) {
        case SampleBiasKind::failed_runs: return "failed_runs";
        case SampleBiasKind::load_errors: return "load_errors";
        case SampleBiasKind::main_thread: return "main_thread";
        case SampleBiasKind::fallback_gap: return "fallback_gap";
    }
    return "";
}

std::vector<SampleBias> sample_biases(const SampleFacts& f, const std::vector<GroupFallbacks>& groups) {
    std::vector<SampleBias> out;
    const std::size_t failed = f.failed + f.timed_out;
    if (past(failed, f.runs, kFailedRunShare, kFailedRunMinRuns)) out.push_back({SampleBiasKind::failed_runs, failed, f.runs, "", 0, 0});
    const std::size_t loads = f.load_errors + f.runs;
    if (past(f.load_errors, loads, kLoadErrorShare, kLoadErrorMinLoads))
        out.push_back({SampleBiasKind::load_errors, f.load_errors, loads, "", 0, 0});
    if (past(f.main_thread, f.runs, kMainThreadShare, kMainThreadMinRuns))
        out.push_back({SampleBiasKind::main_thread, f.main_thread, f.runs, "", 0, 0});
    if (groups.size() < 3) return out;  // overall and one group: nothing to compare it with
    const GroupFallbacks& all = groups[0];
    for (std::size_t i = 1; i < groups.size(); ++i) {
        const GroupFallbacks& g = groups[i];
        if (g.completed == 0 || g.completed >= all.completed || g.fallbacks > all.fallbacks) continue;
        const std::size_t rest_n = all.fallbacks - g.fallbacks, rest_of = all.completed - g.completed;
        const double rest_rate = static_cast<double>(rest_n) / static_cast<double>(rest_of);
        const double rate = static_cast<double>(g.fallbacks) / static_cast<double>(g.completed);
        const double over = static_cast<double>(g.fallbacks) - rest_rate * static_cast<double>(g.completed);
        if (rate - rest_rate > kFallbackGapShare && over >= static_cast<double>(kFallbackGapMinRequests))
            out.push_back({SampleBiasKind::fallback_gap, g.fallbacks, g.completed, g.name, rest_n, rest_of});
    }
    return out;
}

}  // namespace h3probe

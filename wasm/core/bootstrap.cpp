// The run-level bootstrap (see bootstrap.hpp).
#include "bootstrap.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "quantiles.hpp"
#include "request_class.hpp"
#include "standard_normal.hpp"

namespace h3probe {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool finite(double x) { return std::isfinite(x); }

// Poisson(1) by inversion of a 32-bit uniform against P(K <= k) scaled to 2^32, k = 0..12 (P(K > 12) < 2^-32).
struct PoissonOne {
    std::uint32_t threshold[13];
    PoissonOne() {
        double term = std::exp(-1.0), cdf = 0;
        for (int k = 0; k < 13; ++k) {
            cdf += term;
            term /= (k + 1);
            threshold[k] = static_cast<std::uint32_t>(std::min(std::ldexp(cdf, 32), 4294967295.0));
        }
    }
    // Branch-free: K = #{k : r >= threshold[k]} (the compiler turns this into a few vector compares).
    std::uint8_t draw(std::uint32_t r) const {
        unsigned k = 0;
        for (int j = 0; j < 12; ++j) k += r >= threshold[j] ? 1u : 0u;
        return static_cast<std::uint8_t>(k);
    }
};

// The splitmix64 output function: a bijective 64-bit mix, used to hash (seed, replicate, run) into a weight.
std::uint64_t mix64(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ULL;

// The percentile interval of the differences' replicates at level 1 - alpha by order statistics, not interpolation:
// [x_(k), x_(B + 1 - k)] with k = max(1, floor(B alpha / 2)). Why ranks: with every h2 replicate > 0, d_b <= 0 exactly
// when h3_b / h2_b <= 1, so the k-th smallest difference and the k-th smallest ratio fall on the same side of 0 and
// of 1: the intervals of Δ ms and Δ % exclude 0 together (one decision per cell), which interpolating between two
// replicates of different orders would not guarantee. NaN when a replicate is not finite.
void replicate_interval(std::vector<double> xs, double alpha, double& lo, double& hi) {
    lo = hi = kNaN;
    if (xs.empty() || std::any_of(xs.begin(), xs.end(), [](double x) { return !finite(x); })) return;
    std::sort(xs.begin(), xs.end());
    const std::size_t B = xs.size();
    const auto k = std::max<std::size_t>(1, static_cast<std::size_t>(std::floor(static_cast<double>(B) * alpha / 2)));
    if (k > B + 1 - k) return;
    lo = xs[k - 1];
    hi = xs[B - k];
}

// Pearson correlation of paired replicates (pairs with a non-finite member skipped); NaN if undefined.
double replicate_correlation(const std::vector<double>& x, const std::vector<double>& y) {
    double n = 0, sx = 0, sy = 0;
    for (std::size_t b = 0; b < x.size(); ++b)
        if (finite(x[b]) && finite(y[b])) {
            n += 1;
            sx += x[b];
            sy += y[b];
        }
    if (n < 2) return kNaN;
    const double mx = sx / n, my = sy / n;
    double sxx = 0, syy = 0, sxy = 0;
    for (std::size_t b = 0; b < x.size(); ++b)
        if (finite(x[b]) && finite(y[b])) {
            sxx += (x[b] - mx) * (x[b] - mx);
            syy += (y[b] - my) * (y[b] - my);
            sxy += (x[b] - mx) * (y[b] - my);
        }
    return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : kNaN;
}

}  // namespace

std::vector<std::vector<double>> bootstrap_quantile_replicates(const RunClusteredSample& sample,
                                                               const std::vector<double>& ps, unsigned replicates,
                                                               std::uint64_t seed, const Jitter& jitter) {
    const std::size_t P = ps.size();
    std::vector<std::vector<double>> out(P, std::vector<double>(replicates, kNaN));
    const std::size_t N = sample.size();
    const std::size_t n_runs = sample.runs();
    if (N == 0) return out;

    // Sort once; keep values and run indices as separate arrays, because a walk reads the run of every value it
    // passes but the value only at the few positions it stops at.
    std::vector<std::pair<double, std::uint32_t>> pairs(N);
    for (std::size_t i = 0; i < N; ++i) pairs[i] = {sample.values[i], sample.run[i]};
    if (!jitter.width.empty()) {
        // Each value moved by width * (U - 1/2), U from a hash of (seed, stream, run id, its place in the run): the
        // same value of the same run moves the same way in every replicate, so the jitter only unties the grid.
        std::vector<std::uint32_t> place(n_runs, 0);
        const std::uint64_t key = mix64(seed ^ mix64(jitter.stream + kGolden));
        for (std::size_t i = 0; i < N; ++i) {
            const std::uint32_t r = sample.run[i];
            const std::uint64_t h = mix64(key ^ mix64((std::uint64_t{sample.run_id[r]} << 8 | place[r]++) + kGolden));
            double& x = pairs[i].first;
            const double w = r < jitter.width.size() ? jitter.width[r] : 0;
            if (w > 0 && x <= kMaxDurationMs)
                x = std::max(0.0, x + w * (static_cast<double>(h >> 11) * 0x1p-53 - 0.5));
        }
    }
    std::sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<double> v(N);
    std::vector<std::uint32_t> run(N);
    for (std::size_t i = 0; i < N; ++i) {
        v[i] = pairs[i].first;
        run[i] = pairs[i].second;
    }
    decltype(pairs)().swap(pairs);

    // Each run's own splitmix64 stream: base_i from (seed, run id), replicate b reads its (b+1)-th output. Keyed by
    // the run id, so the other arm bootstrapped with the same seed gives the same run the same weights.
    std::vector<std::uint64_t> base(n_runs);
    const std::uint64_t seed_mix = mix64(seed + kGolden);
    for (std::size_t i = 0; i < n_runs; ++i) base[i] = mix64(seed_mix ^ mix64(std::uint64_t{sample.run_id[i]} + kGolden));

    static const PoissonOne poisson;
    std::vector<std::uint8_t> w(n_runs);
    const std::uint32_t* size = sample.run_size.data();
    const std::uint32_t* run_of = run.data();
    const std::uint8_t* weight = w.data();
    struct Target {
        std::uint64_t position;  // 0-based position in the weighted sample
        double* slot;
    };
    std::vector<Target> targets;
    std::vector<double> at_lo(P), at_hi(P), frac(P);

    for (unsigned b = 0; b < replicates; ++b) {
        const std::uint64_t step = kGolden * (static_cast<std::uint64_t>(b) + 1);
        std::uint64_t M = 0;
        for (std::size_t i = 0; i < n_runs; ++i) {
            w[i] = poisson.draw(static_cast<std::uint32_t>(mix64(base[i] + step) >> 32));
            M += static_cast<std::uint64_t>(w[i]) * size[i];
        }
        if (M == 0) continue;
        targets.clear();
        for (std::size_t k = 0; k < P; ++k) {
            if (!(ps[k] >= 0 && ps[k] <= 1)) continue;
            const double h = static_cast<double>(M - 1) * ps[k];
            const std::uint64_t lo = std::min(static_cast<std::uint64_t>(h), M - 1);
            frac[k] = h - static_cast<double>(lo);
            targets.push_back({lo, &at_lo[k]});
            targets.push_back({std::min(lo + 1, M - 1), &at_hi[k]});
        }
        if (targets.empty()) continue;
        std::sort(targets.begin(), targets.end(), [](const Target& x, const Target& y) { return x.position < y.position; });
        // Value i (sorted) covers the weighted positions [sum before it, sum with it). Walk from whichever end is
        // nearer the farthest target: the report's ps (p50 .. p99) are reached from the top in half the values.
        if (2 * targets.front().position >= M) {
            std::size_t t = targets.size();
            std::uint64_t next = M - 1 - targets[t - 1].position;  // positions counted from the top
            std::uint64_t sum = 0;
            for (std::size_t i = N; i-- > 0;) {
                sum += weight[run_of[i]];
                if (sum <= next) continue;
                while (t > 0 && M - 1 - targets[t - 1].position < sum) *targets[--t].slot = v[i];
                if (t == 0) break;
                next = M - 1 - targets[t - 1].position;
            }
        } else {
            std::size_t t = 0;
            std::uint64_t next = targets[0].position;
            std::uint64_t sum = 0;
            for (std::size_t i = 0; i < N; ++i) {
                sum += weight[run_of[i]];
                if (sum <= next) continue;
                while (t < targets.size() && targets[t].position < sum) *targets[t++].slot = v[i];
                if (t == targets.size()) break;
                next = targets[t].position;
            }
        }
        for (std::size_t k = 0; k < P; ++k)
            if (ps[k] >= 0 && ps[k] <= 1) out[k][b] = at_lo[k] + frac[k] * (at_hi[k] - at_lo[k]);
    }
    return out;
}

double timer_grid(const double* values, std::size_t n) {
    static constexpr double kLadder[] = {5, 2, 1, 0.5, 0.2, 0.1};
    bool any = false;
    for (std::size_t i = 0; i < n; ++i) any = any || values[i] <= kMaxDurationMs;
    if (!any) return 0;
    for (const double g : kLadder) {
        bool on = true;
        for (std::size_t i = 0; i < n && on; ++i) {
            if (values[i] > kMaxDurationMs) continue;
            const double steps = values[i] / g;
            on = std::fabs(steps - std::nearbyint(steps)) <= 1e-9 * std::max(1.0, steps);
        }
        if (on) return g;
    }
    return 0;
}

namespace {

// Each run's grid from its values in both arms (a run is one page in one browser), as each arm's jitter widths.
void run_grids(const RunClusteredSample& h2, const RunClusteredSample& h3, Jitter& j2, Jitter& j3) {
    std::unordered_map<std::uint32_t, std::vector<double>> by_id;
    for (const RunClusteredSample* s : {&h2, &h3}) {
        std::size_t at = 0;
        for (std::size_t r = 0; r < s->runs(); at += s->run_size[r], ++r) {
            auto& v = by_id[s->run_id[r]];
            v.insert(v.end(), s->values.begin() + static_cast<std::ptrdiff_t>(at),
                     s->values.begin() + static_cast<std::ptrdiff_t>(at + s->run_size[r]));
        }
    }
    for (auto& [id, v] : by_id) v.assign(1, timer_grid(v.data(), v.size()));
    for (auto [s, j] : {std::pair{&h2, &j2}, std::pair{&h3, &j3}}) {
        j->width.resize(s->runs());
        for (std::size_t r = 0; r < s->runs(); ++r) j->width[r] = by_id[s->run_id[r]][0];
    }
    j2.stream = 2;
    j3.stream = 3;
}

// The two-sided p-value of the replicate differences' test of 0, by the rule that marks the interval: 2 min(#{d_b <= 0},
// #{d_b >= 0}) / B, capped at 1. With k = floor(B alpha / 2) and B alpha / 2 whole (400 replicates at 95 %), p < alpha
// exactly when fewer than k replicates lie on one side of 0, which is when [d_(k), d_(B+1-k)] excludes 0.
double replicate_p_value(const std::vector<double>& d) {
    double below = 0, above = 0;
    for (double x : d) {
        if (!finite(x)) return kNaN;
        below += x <= 0;
        above += x >= 0;
    }
    return d.empty() ? kNaN : std::min(1.0, 2 * std::min(below, above) / static_cast<double>(d.size()));
}

}  // namespace

void bootstrap_intervals(ArmsAnalysis& a, const RunClusteredSample& h2, const RunClusteredSample& h3,
                         const BootstrapOptions& options) {
    a.method = IntervalMethod::bootstrap;
    std::vector<double> ps;
    for (const auto& row : a.rows) ps.push_back(row.p);
    const bool enough_runs = h2.runs() >= kMinRunsForInterval && h3.runs() >= kMinRunsForInterval &&
                             a.confidence > 0 && a.confidence < 1 && options.replicates >= 2;
    // One seed for both arms: a run id weighs the same in both, so a replicate resamples page loads, not arms.
    std::vector<std::vector<double>> b2, b3;
    if (enough_runs) {
        Jitter j2, j3;
        if (options.jitter) run_grids(h2, h3, j2, j3);
        b2 = bootstrap_quantile_replicates(h2, ps, options.replicates, options.seed, j2);
        b3 = bootstrap_quantile_replicates(h3, ps, options.replicates, options.seed, j3);
    }
    const double alpha = 1 - a.confidence;
    const double z = enough_runs ? two_sided_z(a.confidence) : kNaN;
    for (std::size_t k = 0; k < a.rows.size(); ++k) {
        QuantileDifferenceRow& row = a.rows[k];
        if (row.unfinished) continue;  // no interval where requests that did not finish lie (mark_unfinished)
        row.ci_ms_lo = row.ci_ms_hi = row.ci_pct_lo = row.ci_pct_hi = kNaN;
        row.ci_pct_unbounded = false;
        row.ci_h2_lo = row.ci_h2_hi = row.ci_h3_lo = row.ci_h3_hi = row.corr = kNaN;
        row.se_ms = row.se_pct = row.se_h2 = row.se_h3 = row.df = row.p_value = kNaN;
        // The count-only rule (min_runs_for_interval) holds for every method: no interval where an arm has fewer runs.
        if (enough_runs && h2.runs() >= row.min_runs && h3.runs() >= row.min_runs) {
            const std::size_t B = options.replicates;
            std::vector<double> d(B), rel(B);
            for (std::size_t b = 0; b < B; ++b) {
                d[b] = b3[k][b] - b2[k][b];
                rel[b] = b2[k][b] > 0 ? 100 * (b3[k][b] / b2[k][b] - 1) : kNaN;
            }
            replicate_interval(d, alpha, row.ci_ms_lo, row.ci_ms_hi);
            if (row.h2 > 0) replicate_interval(rel, alpha, row.ci_pct_lo, row.ci_pct_hi);
            replicate_interval(b2[k], alpha, row.ci_h2_lo, row.ci_h2_hi);
            replicate_interval(b3[k], alpha, row.ci_h3_lo, row.ci_h3_hi);
            row.corr = replicate_correlation(b2[k], b3[k]);
            // The standard errors the interval implies (its half-width over z): what a z, a width or a plan reads.
            row.se_ms = (row.ci_ms_hi - row.ci_ms_lo) / (2 * z);
            row.se_pct = (row.ci_pct_hi - row.ci_pct_lo) / (2 * z);
            row.se_h2 = (row.ci_h2_hi - row.ci_h2_lo) / (2 * z);
            row.se_h3 = (row.ci_h3_hi - row.ci_h3_lo) / (2 * z);
            row.p_value = replicate_p_value(d);
        }
        mark_significance(row);
    }
}

}  // namespace h3probe

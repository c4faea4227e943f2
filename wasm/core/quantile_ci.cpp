// Run-clustered quantile intervals: the delta-method outer interval and the Poisson-weight run bootstrap.
#include "quantile_ci.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <nlohmann/json.hpp>

#include "quantiles.hpp"
#include "standard_normal.hpp"

namespace h3probe {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// splitmix64 (Steele, Lea & Flood 2014): small, fast, and the same stream natively and in WASM.
struct SplitMix64 {
    std::uint64_t state;
    std::uint64_t next() {
        std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
};

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

bool finite(double x) { return std::isfinite(x); }

// Type-7 quantile of bootstrap replicates (a copy: nth_element reorders).
double replicate_quantile(std::vector<double> xs, double p) {
    xs.erase(std::remove_if(xs.begin(), xs.end(), [](double x) { return !finite(x); }), xs.end());
    if (xs.empty()) return kNaN;
    return quantiles(std::move(xs), {p})[0];
}

}  // namespace

RunClusteredSample make_run_clustered_sample(const std::vector<double>& values, const std::vector<std::int32_t>& run_ids) {
    RunClusteredSample s;
    const std::size_t n = std::min(values.size(), run_ids.size());
    s.values.reserve(n);
    s.run.reserve(n);
    std::int32_t max_id = -1;
    for (std::size_t i = 0; i < n; ++i) max_id = std::max(max_id, run_ids[i]);
    // Dense re-indexing: a direct table when ids are compact enough (the usual case: row ids), else sort + search.
    // (The table costs 4 bytes per possible id: bounded at ~16 bytes per value, also in WASM's heap.)
    const bool direct = max_id >= 0 && static_cast<std::size_t>(max_id) <= 4 * n + 1024;
    std::vector<std::int32_t> table;
    std::vector<std::int32_t> sorted_ids;
    if (direct) {
        table.assign(static_cast<std::size_t>(max_id) + 1, -1);
    } else {
        sorted_ids.assign(run_ids.begin(), run_ids.begin() + static_cast<std::ptrdiff_t>(n));
        std::sort(sorted_ids.begin(), sorted_ids.end());
        sorted_ids.erase(std::unique(sorted_ids.begin(), sorted_ids.end()), sorted_ids.end());
        table.assign(sorted_ids.size(), -1);
    }
    for (std::size_t i = 0; i < n; ++i) {
        if (!finite(values[i])) continue;
        const std::int32_t id = run_ids[i];
        std::uint32_t dense;
        if (id < 0) {
            dense = static_cast<std::uint32_t>(s.run_size.size());
            s.run_size.push_back(0);
        } else {
            const std::size_t slot = direct ? static_cast<std::size_t>(id)
                                            : static_cast<std::size_t>(std::lower_bound(sorted_ids.begin(), sorted_ids.end(), id) -
                                                                       sorted_ids.begin());
            if (table[slot] < 0) {
                table[slot] = static_cast<std::int32_t>(s.run_size.size());
                s.run_size.push_back(0);
            }
            dense = static_cast<std::uint32_t>(table[slot]);
        }
        s.values.push_back(values[i]);
        s.run.push_back(dense);
        ++s.run_size[dense];
    }
    return s;
}

std::vector<QuantileInterval> quantile_intervals_delta(const RunClusteredSample& sample, const std::vector<double>& ps,
                                                       double confidence) {
    std::vector<QuantileInterval> out(ps.size());
    const std::size_t N = sample.size();
    const std::size_t n_runs = sample.runs();
    OrderStatistics os(sample.values.data(), sample.values.size());
    {
        std::vector<std::size_t> ranks;
        for (double p : ps) {
            if (N == 0 || !(p >= 0 && p <= 1)) continue;
            std::size_t lo = 0, hi = 0;
            OrderStatistics::quantile_ranks(N, p, lo, hi);
            ranks.push_back(lo);
            ranks.push_back(hi);
        }
        os.select(ranks);
    }
    const double z = two_sided_z(confidence);
    const double Nd = static_cast<double>(N);
    std::vector<std::uint32_t> below(n_runs);
    std::vector<std::size_t> bound_ranks;
    std::vector<std::pair<double, double>> rank_bounds(ps.size(), {kNaN, kNaN});  // 1-based l, u
    for (std::size_t k = 0; k < ps.size(); ++k) {
        QuantileInterval& qi = out[k];
        qi.p = ps[k];
        qi.estimate = os.quantile(ps[k]);
        qi.lo = qi.hi = qi.se = qi.design_effect = kNaN;
        if (N == 0 || !finite(qi.estimate) || n_runs < 2) continue;
        // S_i: values of run i at or below the estimate (one streaming pass in input order).
        std::fill(below.begin(), below.end(), 0);
        const double q = qi.estimate;
        const double* v = sample.values.data();
        const std::uint32_t* r = sample.run.data();
        for (std::size_t i = 0; i < N; ++i) below[r[i]] += v[i] <= q ? 1u : 0u;
        std::uint64_t total_below = 0;
        for (std::uint32_t s : below) total_below += s;
        const double F = static_cast<double>(total_below) / Nd;
        double sum_sq = 0;
        for (std::size_t i = 0; i < n_runs; ++i) {
            const double e = static_cast<double>(below[i]) - F * static_cast<double>(sample.run_size[i]);
            sum_sq += e * e;
        }
        const double n = static_cast<double>(n_runs);
        const double var_F = n / ((n - 1) * Nd * Nd) * sum_sq;
        if (F > 0 && F < 1) qi.design_effect = var_F / (F * (1 - F) / Nd);
        if (n_runs < kMinRunsForInterval) continue;
        const double s = Nd * std::sqrt(var_F);
        const double l = std::floor(Nd * ps[k] - z * s + 0.5);
        const double u = std::ceil(Nd * ps[k] + z * s + 0.5);
        if (l < 1 || u > Nd) continue;
        rank_bounds[k] = {l, u};
        bound_ranks.push_back(static_cast<std::size_t>(l) - 1);
        bound_ranks.push_back(static_cast<std::size_t>(u) - 1);
    }
    os.select(bound_ranks);
    for (std::size_t k = 0; k < ps.size(); ++k) {
        if (!finite(rank_bounds[k].first)) continue;
        QuantileInterval& qi = out[k];
        qi.lo = os.at(static_cast<std::size_t>(rank_bounds[k].first) - 1);
        qi.hi = os.at(static_cast<std::size_t>(rank_bounds[k].second) - 1);
        qi.se = (qi.hi - qi.lo) / (2 * z);
    }
    return out;
}

std::vector<std::vector<double>> bootstrap_quantile_replicates(const RunClusteredSample& sample,
                                                               const std::vector<double>& ps, unsigned replicates,
                                                               std::uint64_t seed, bool use_bands) {
    const std::size_t P = ps.size();
    std::vector<std::vector<double>> out(P, std::vector<double>(replicates, kNaN));
    const std::size_t N = sample.size();
    const std::size_t n_runs = sample.runs();
    if (N == 0) return out;
    auto valid = [&](std::size_t k) { return ps[k] >= 0 && ps[k] <= 1; };

    // Sort once; keep values and run indices as separate arrays, because a walk reads the run of every value it
    // passes but the value only at the few positions it stops at.
    std::vector<std::pair<double, std::uint32_t>> pairs(N);
    for (std::size_t i = 0; i < N; ++i) pairs[i] = {sample.values[i], sample.run[i]};
    std::sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<double> v(N);
    std::vector<std::uint32_t> run(N);
    for (std::size_t i = 0; i < N; ++i) {
        v[i] = pairs[i].first;
        run[i] = pairs[i].second;
    }
    decltype(pairs)().swap(pairs);

    // Bands: a replicate's quantile lies, with overwhelming probability, within a few run-clustered standard
    // deviations (in ranks) of the sample's. Per band k, above[k * runs + i] counts run i's values past the band, so a
    // replicate gets the weight past the band from one pass over the runs (sum w_i above_ik, a few multiply-adds per
    // run) and walks only the band itself: O(runs + bands) per replicate instead of O(N). A replicate whose
    // quantile falls outside a band (practically never) takes the full walk, so the result is exact either way.
    std::uint32_t largest_run = 0;
    for (std::uint32_t size : sample.run_size) largest_run = std::max(largest_run, size);
    std::vector<std::size_t> band_first(P, 0), band_last(P, 0);
    bool banded = use_bands && N >= (1u << 16) && largest_run <= 0xFFFF;
    if (banded) {
        std::vector<std::uint32_t> below(n_runs);
        for (std::size_t k = 0; k < P && banded; ++k) {
            if (!valid(k)) continue;
            const auto centre = static_cast<std::size_t>(static_cast<double>(N - 1) * ps[k]);
            std::fill(below.begin(), below.end(), 0);
            for (std::size_t i = 0; i <= centre; ++i) ++below[run[i]];
            const double F = static_cast<double>(centre + 1) / static_cast<double>(N);
            double sum_sq = 0;
            for (std::size_t i = 0; i < n_runs; ++i) {
                const double e = static_cast<double>(below[i]) - F * static_cast<double>(sample.run_size[i]);
                sum_sq += e * e;
            }
            const double n = static_cast<double>(n_runs);
            const double sd_ranks = std::sqrt(n / std::max(n - 1, 1.0) * sum_sq);  // N sd(F^), in ranks
            const auto half = static_cast<std::size_t>(std::ceil(12 * sd_ranks)) + 1024;
            band_first[k] = centre > half ? centre - half : 0;
            band_last[k] = std::min(N, centre + half + 1);
        }
        // Bands must not overlap (they do only for small N, where the full walk is cheap anyway).
        std::vector<std::size_t> by_position;
        for (std::size_t k = 0; k < P; ++k)
            if (valid(k)) by_position.push_back(k);
        std::sort(by_position.begin(), by_position.end(), [&](std::size_t a, std::size_t b) { return band_first[a] < band_first[b]; });
        for (std::size_t j = 1; j < by_position.size(); ++j)
            if (band_first[by_position[j]] < band_last[by_position[j - 1]]) banded = false;
    }
    std::vector<std::uint16_t> above;
    if (banded) {
        above.assign(n_runs * P, 0);
        for (std::size_t k = 0; k < P; ++k)
            if (valid(k))
                for (std::size_t i = band_last[k]; i < N; ++i) ++above[k * n_runs + run[i]];
    }

    static const PoissonOne poisson;
    std::vector<std::uint8_t> w(n_runs);
    std::vector<std::uint64_t> weight_above(P);
    std::vector<std::uint64_t> lo_pos(P), hi_pos(P);
    std::vector<double> at_lo(P), at_hi(P), frac(P);
    const std::uint32_t* run_of = run.data();
    const std::uint8_t* weight = w.data();

    // The exact walk over all values (from whichever end is nearer the targets).
    struct Target {
        std::uint64_t position;
        double* slot;
    };
    std::vector<Target> targets;
    auto full_walk = [&](std::uint64_t M) {
        targets.clear();
        for (std::size_t k = 0; k < P; ++k)
            if (valid(k)) {
                targets.push_back({lo_pos[k], &at_lo[k]});
                targets.push_back({hi_pos[k], &at_hi[k]});
            }
        if (targets.empty()) return;
        std::sort(targets.begin(), targets.end(), [](const Target& a, const Target& c) { return a.position < c.position; });
        if (2 * targets.front().position >= M) {
            // Walk down from the largest value: value i covers weighted positions [M - above, M - above_before).
            std::size_t t = targets.size();
            std::uint64_t next = M - 1 - targets[t - 1].position;
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
    };
    // Walks band k down from its top, starting from the weight past it; false if a target is not inside the band.
    auto band_walk = [&](std::size_t k, std::uint64_t M) {
        const std::uint64_t hi_from_top = M - 1 - hi_pos[k], lo_from_top = M - 1 - lo_pos[k];
        std::uint64_t sum = weight_above[k];
        if (hi_from_top < sum) return false;  // the quantile is above the band
        bool hi_done = false;
        for (std::size_t i = band_last[k]; i-- > band_first[k];) {
            sum += weight[run_of[i]];
            if (!hi_done && hi_from_top < sum) {
                at_hi[k] = v[i];
                hi_done = true;
            }
            if (lo_from_top < sum) {
                at_lo[k] = v[i];
                return hi_done;
            }
        }
        return false;  // the quantile is below the band
    };

    for (unsigned b = 0; b < replicates; ++b) {
        SplitMix64 rng{seed ^ (0xA24BAED4963EE407ULL * (b + 1))};
        std::uint64_t M = 0;
        for (std::size_t i = 0; i < n_runs; i += 2) {
            const std::uint64_t r = rng.next();  // two 32-bit uniforms
            w[i] = poisson.draw(static_cast<std::uint32_t>(r));
            if (i + 1 < n_runs) w[i + 1] = poisson.draw(static_cast<std::uint32_t>(r >> 32));
        }
        // Dot products over the runs, one tight loop each (vectorisable; accumulators stay in registers).
        const std::uint32_t* size = sample.run_size.data();
        for (std::size_t i = 0; i < n_runs; ++i) M += static_cast<std::uint64_t>(weight[i]) * size[i];
        if (banded)
            for (std::size_t k = 0; k < P; ++k) {
                if (!valid(k)) continue;
                const std::uint16_t* a = &above[k * n_runs];
                std::uint64_t sum = 0;
                for (std::size_t i = 0; i < n_runs; ++i) sum += static_cast<std::uint32_t>(weight[i] * a[i]);
                weight_above[k] = sum;
            }
        if (M == 0) continue;
        for (std::size_t k = 0; k < P; ++k) {
            if (!valid(k)) continue;
            const double h = static_cast<double>(M - 1) * ps[k];
            lo_pos[k] = std::min(static_cast<std::uint64_t>(h), M - 1);
            hi_pos[k] = std::min(lo_pos[k] + 1, M - 1);
            frac[k] = h - static_cast<double>(lo_pos[k]);
        }
        bool done = banded;
        for (std::size_t k = 0; k < P && done; ++k)
            if (valid(k)) done = band_walk(k, M);
        if (!done) full_walk(M);
        for (std::size_t k = 0; k < P; ++k)
            if (valid(k)) out[k][b] = at_lo[k] + frac[k] * (at_hi[k] - at_lo[k]);
    }
    return out;
}

ArmsAnalysis analyze_arms(const RunClusteredSample& h2, const RunClusteredSample& h3, const std::vector<double>& ps,
                          IntervalMethod method, double confidence, const BootstrapOptions& bootstrap) {
    ArmsAnalysis a;
    a.method = method;
    a.confidence = confidence;
    a.n_h2 = h2.size();
    a.n_h3 = h3.size();
    a.runs_h2 = h2.runs();
    a.runs_h3 = h3.runs();
    if (h2.size() == 0 || h3.size() == 0) return a;
    const bool enough_runs = h2.runs() >= kMinRunsForInterval && h3.runs() >= kMinRunsForInterval &&
                             confidence > 0 && confidence < 1;
    const double z = two_sided_z(confidence);

    // Point estimates (and, for delta, the per-arm intervals) come from the exact quantiles either way.
    const auto q2 = quantile_intervals_delta(h2, ps, confidence);
    const auto q3 = quantile_intervals_delta(h3, ps, confidence);
    std::vector<std::vector<double>> b2, b3;
    if (method == IntervalMethod::bootstrap && enough_runs) {
        b2 = bootstrap_quantile_replicates(h2, ps, bootstrap.replicates, bootstrap.seed);
        b3 = bootstrap_quantile_replicates(h3, ps, bootstrap.replicates, bootstrap.seed ^ 0x5DEECE66DULL);
    }
    const double alpha = 1 - confidence;
    for (std::size_t k = 0; k < ps.size(); ++k) {
        QuantileDifferenceRow row;
        row.p = ps[k];
        row.h2 = q2[k].estimate;
        row.h3 = q3[k].estimate;
        row.diff_ms = row.h3 - row.h2;
        row.diff_pct = row.h2 > 0 ? 100.0 * row.diff_ms / row.h2 : kNaN;
        row.ci_ms_lo = row.ci_ms_hi = row.ci_pct_lo = row.ci_pct_hi = kNaN;
        row.ci_h2_lo = row.ci_h2_hi = row.ci_h3_lo = row.ci_h3_hi = kNaN;
        if (enough_runs && method == IntervalMethod::delta) {
            row.ci_h2_lo = q2[k].lo;
            row.ci_h2_hi = q2[k].hi;
            row.ci_h3_lo = q3[k].lo;
            row.ci_h3_hi = q3[k].hi;
            if (finite(q2[k].se) && finite(q3[k].se)) {
                const double se = std::sqrt(q2[k].se * q2[k].se + q3[k].se * q3[k].se);
                row.ci_ms_lo = row.diff_ms - z * se;
                row.ci_ms_hi = row.diff_ms + z * se;
                if (row.h2 > 0) {
                    const double r = row.h3 / row.h2;
                    const double var_r = (q3[k].se * q3[k].se + r * r * q2[k].se * q2[k].se) / (row.h2 * row.h2);
                    row.ci_pct_lo = 100 * (r - 1 - z * std::sqrt(var_r));
                    row.ci_pct_hi = 100 * (r - 1 + z * std::sqrt(var_r));
                }
            }
        } else if (enough_runs && method == IntervalMethod::bootstrap && bootstrap.replicates >= 2) {
            const std::size_t B = bootstrap.replicates;
            std::vector<double> d(B), rel(B);
            for (std::size_t b = 0; b < B; ++b) {
                d[b] = b3[k][b] - b2[k][b];
                rel[b] = b2[k][b] > 0 ? 100 * (b3[k][b] / b2[k][b] - 1) : kNaN;
            }
            row.ci_ms_lo = replicate_quantile(d, alpha / 2);
            row.ci_ms_hi = replicate_quantile(d, 1 - alpha / 2);
            if (row.h2 > 0) {
                row.ci_pct_lo = replicate_quantile(rel, alpha / 2);
                row.ci_pct_hi = replicate_quantile(rel, 1 - alpha / 2);
            }
            row.ci_h2_lo = replicate_quantile(b2[k], alpha / 2);
            row.ci_h2_hi = replicate_quantile(b2[k], 1 - alpha / 2);
            row.ci_h3_lo = replicate_quantile(b3[k], alpha / 2);
            row.ci_h3_hi = replicate_quantile(b3[k], 1 - alpha / 2);
        }
        row.significant = finite(row.ci_ms_lo) && finite(row.ci_ms_hi) && (row.ci_ms_lo > 0 || row.ci_ms_hi < 0);
        a.rows.push_back(row);
    }
    return a;
}

std::string to_json(const ArmsAnalysis& a) {
    auto num = [](double x) { return finite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); };
    auto pair = [&](double lo, double hi) { return nlohmann::json::array({num(lo), num(hi)}); };
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : a.rows)
        rows.push_back({{"p", r.p},
                        {"h2", num(r.h2)},
                        {"h3", num(r.h3)},
                        {"diff_ms", num(r.diff_ms)},
                        {"diff_pct", num(r.diff_pct)},
                        {"ci_ms", pair(r.ci_ms_lo, r.ci_ms_hi)},
                        {"ci_pct", pair(r.ci_pct_lo, r.ci_pct_hi)},
                        {"significant", r.significant},
                        {"ci_h2", pair(r.ci_h2_lo, r.ci_h2_hi)},
                        {"ci_h3", pair(r.ci_h3_lo, r.ci_h3_hi)}});
    return nlohmann::json{{"method", a.method == IntervalMethod::delta ? "delta" : "bootstrap"},
                          {"confidence", a.confidence},
                          {"n_h2", a.n_h2},
                          {"n_h3", a.n_h3},
                          {"runs_h2", a.runs_h2},
                          {"runs_h3", a.runs_h3},
                          {"rows", rows}}
        .dump();
}

}  // namespace h3probe

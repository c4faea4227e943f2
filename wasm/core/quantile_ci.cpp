// Run-clustered quantile intervals: per-arm delta-method intervals, the run-paired h3 - h2 difference, the run bootstrap.
#include "quantile_ci.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>


#include "quantiles.hpp"
#include "standard_normal.hpp"

namespace h3probe {
namespace {

// Exact integer arithmetic for the residual sums (a GCC/Clang extension; __extension__ keeps -Wpedantic quiet).
__extension__ typedef __int128 i128;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

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

// The splitmix64 output function: a bijective 64-bit mix, used to hash (seed, replicate, run) into a weight.
std::uint64_t mix64(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ULL;

// Type-7 quantile of bootstrap replicates (a copy: nth_element reorders).
double replicate_quantile(std::vector<double> xs, double p) {
    xs.erase(std::remove_if(xs.begin(), xs.end(), [](double x) { return !finite(x); }), xs.end());
    if (xs.empty()) return kNaN;
    return quantiles(std::move(xs), {p})[0];
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

// For each dense run of h2, the dense run of h3 with the same (non-negative) id, or -1.
std::vector<std::int32_t> partner_runs(const RunClusteredSample& h2, const RunClusteredSample& h3) {
    std::vector<std::int32_t> partner(h2.runs(), -1);
    std::int32_t max_id = -1;
    for (std::int32_t id : h3.run_id) max_id = std::max(max_id, id);
    if (max_id < 0) return partner;
    // Direct table when ids are compact (row ids, the usual case), else a sorted merge.
    if (static_cast<std::size_t>(max_id) <= 4 * (h2.runs() + h3.runs()) + 1024) {
        std::vector<std::int32_t> dense3(static_cast<std::size_t>(max_id) + 1, -1);
        for (std::size_t j = 0; j < h3.runs(); ++j)
            if (h3.run_id[j] >= 0) dense3[static_cast<std::size_t>(h3.run_id[j])] = static_cast<std::int32_t>(j);
        for (std::size_t i = 0; i < h2.runs(); ++i) {
            const std::int32_t id = h2.run_id[i];
            if (id >= 0 && id <= max_id) partner[i] = dense3[static_cast<std::size_t>(id)];
        }
        return partner;
    }
    auto keyed = [](const RunClusteredSample& s) {
        std::vector<std::pair<std::int32_t, std::int32_t>> k;
        for (std::size_t i = 0; i < s.runs(); ++i)
            if (s.run_id[i] >= 0) k.push_back({s.run_id[i], static_cast<std::int32_t>(i)});
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

// One arm's delta-method state across the ps: the exact quantiles, then per p the per-run counts S_i at or below the
// estimate and their sums (the aggregates), the fit from those sums (delta_fit: the inference), then (finish) the
// values at the ranks the fit asked for. Split in steps so that analyze_arms can take the cross sums of both arms'
// S_i for one p at a time without keeping them for every p.
class DeltaArm {
public:
    DeltaArm(const RunClusteredSample& sample, const std::vector<double>& ps, double confidence)
        : s_(sample), ps_(ps), os_(sample.values.data(), sample.values.size()), z_(two_sided_z(confidence)),
          out_(ps.size()), fits_(ps.size()) {
        std::vector<std::size_t> ranks;
        for (double p : ps) {
            if (sample.size() == 0 || !(p >= 0 && p <= 1)) continue;
            std::size_t lo = 0, hi = 0;
            OrderStatistics::quantile_ranks(sample.size(), p, lo, hi);
            ranks.push_back(lo);
            ranks.push_back(hi);
        }
        os_.select(ranks);
    }

    // Fills out_[k] but its bounds; returns sum_i e_i^2, or NaN (residuals undefined) if there is no estimate.
    double fit(std::size_t k) {
        const std::size_t N = s_.size(), n_runs = s_.runs();
        QuantileInterval& qi = out_[k];
        qi.p = ps_[k];
        qi.estimate = os_.quantile(ps_[k]);
        qi.lo = qi.hi = qi.se = qi.se_woodruff = qi.design_effect = kNaN;
        fits_[k] = DeltaFit{};
        fits_[k].sum_sq = kNaN;
        below_.clear();
        if (N == 0 || !finite(qi.estimate) || n_runs < 2) return kNaN;
        // S_i: values of run i at or below the estimate (one streaming pass in input order), then their sums.
        below_.assign(n_runs, 0);
        const double q = qi.estimate;
        const double* v = s_.values.data();
        const std::uint32_t* r = s_.run.data();
        for (std::size_t i = 0; i < N; ++i) below_[r[i]] += v[i] <= q ? 1u : 0u;
        sums_ = BelowSums{};
        for (std::size_t i = 0; i < n_runs; ++i) {
            const std::uint64_t S = below_[i], n = s_.run_size[i];
            sums_.below += S;
            sums_.below_sq += S * S;
            sums_.below_size += S * n;
            sums_.size_sq += n * n;
        }
        const DeltaFit f = delta_fit(N, n_runs, ps_[k], sums_, z_);
        fits_[k] = f;
        qi.design_effect = f.design_effect;
        if (f.bounds) {
            bound_ranks_.push_back(f.l - 1);
            bound_ranks_.push_back(f.u - 1);
            for (double pw : {f.woodruff_lo, f.woodruff_hi}) {
                std::size_t lo = 0, hi = 0;
                OrderStatistics::quantile_ranks(N, pw, lo, hi);
                bound_ranks_.push_back(lo);
                bound_ranks_.push_back(hi);
            }
        }
        return f.sum_sq;
    }

    // The last fit's S_i per dense run (empty when it had no residuals) and sum of S_i.
    const std::vector<std::uint32_t>& below() const { return below_; }
    std::uint64_t total_below() const { return sums_.below; }

    std::vector<QuantileInterval> finish() {
        os_.select(bound_ranks_);
        for (std::size_t k = 0; k < ps_.size(); ++k) {
            if (!fits_[k].bounds) continue;
            QuantileInterval& qi = out_[k];
            qi.lo = os_.at(fits_[k].l - 1);
            qi.hi = os_.at(fits_[k].u - 1);
            qi.se = (qi.hi - qi.lo) / (2 * z_);
            qi.se_woodruff = (os_.quantile(fits_[k].woodruff_hi) - os_.quantile(fits_[k].woodruff_lo)) / (2 * z_);
        }
        return std::move(out_);
    }

private:
    const RunClusteredSample& s_;
    const std::vector<double>& ps_;
    OrderStatistics os_;
    double z_;
    std::vector<QuantileInterval> out_;
    std::vector<DeltaFit> fits_;
    std::vector<std::size_t> bound_ranks_;
    std::vector<std::uint32_t> below_;
    BelowSums sums_;
};

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
            s.run_id.push_back(-1);
        } else {
            const std::size_t slot = direct ? static_cast<std::size_t>(id)
                                            : static_cast<std::size_t>(std::lower_bound(sorted_ids.begin(), sorted_ids.end(), id) -
                                                                       sorted_ids.begin());
            if (table[slot] < 0) {
                table[slot] = static_cast<std::int32_t>(s.run_size.size());
                s.run_size.push_back(0);
                s.run_id.push_back(id);
            }
            dense = static_cast<std::uint32_t>(table[slot]);
        }
        s.values.push_back(values[i]);
        s.run.push_back(dense);
        ++s.run_size[dense];
    }
    return s;
}

DeltaFit delta_fit(std::size_t N, std::size_t n_runs, double p, const BelowSums& sums, double z) {
    DeltaFit f;
    f.F = f.var_F = f.sum_sq = f.design_effect = f.woodruff_lo = f.woodruff_hi = kNaN;
    if (N == 0 || n_runs < 2) return f;
    // sum_i (S_i - F N_i)^2 with F = T / N, times N^2, in exact integer arithmetic: N^2 sum S^2 - 2 T N sum S N + T^2 sum N^2
    // (a residual sum that is 0 comes out exactly 0, and C++ and SQL, given the same sums, give the same bits).
    const i128 n = static_cast<i128>(N), t = static_cast<i128>(sums.below);
    const i128 scaled = n * n * static_cast<i128>(sums.below_sq) - 2 * t * n * static_cast<i128>(sums.below_size) +
                        t * t * static_cast<i128>(sums.size_sq);
    const double Nd = static_cast<double>(N);
    f.sum_sq = static_cast<double>(scaled) / (Nd * Nd);
    f.F = static_cast<double>(sums.below) / Nd;
    const double runs = static_cast<double>(n_runs);
    f.var_F = runs / ((runs - 1) * Nd * Nd) * f.sum_sq;
    if (f.F > 0 && f.F < 1) f.design_effect = f.var_F / (f.F * (1 - f.F) / Nd);
    if (n_runs < kMinRunsForInterval || !(z > 0 && finite(z))) return f;
    const double sd = Nd * std::sqrt(f.var_F);
    const double l = std::floor(Nd * p - z * sd + 0.5);
    const double u = std::ceil(Nd * p + z * sd + 0.5);
    if (l < 1 || u > Nd) return f;
    f.bounds = true;
    f.l = static_cast<std::size_t>(l);
    f.u = static_cast<std::size_t>(u);
    const double spread = z * std::sqrt(f.var_F);
    f.woodruff_lo = std::max(0.0, p - spread);
    f.woodruff_hi = std::min(1.0, p + spread);
    return f;
}

double delta_cross(const CrossSums& c, std::size_t N2, std::uint64_t below2, std::size_t N3, std::uint64_t below3) {
    // sum_i (S2_i - F2 N2_i)(S3_i - F3 N3_i), F_a = T_a / N_a, times N2 N3, exactly.
    const i128 n2 = static_cast<i128>(N2), n3 = static_cast<i128>(N3);
    const i128 t2 = static_cast<i128>(below2), t3 = static_cast<i128>(below3);
    const i128 scaled = n2 * n3 * static_cast<i128>(c.s2s3) - t3 * n2 * static_cast<i128>(c.s2n3) -
                        t2 * n3 * static_cast<i128>(c.n2s3) + t2 * t3 * static_cast<i128>(c.n2n3);
    return static_cast<double>(scaled) / (static_cast<double>(N2) * static_cast<double>(N3));
}

QuantileDifferenceRow delta_difference_row(double p, const QuantileInterval& q2, const QuantileInterval& q3, double rho,
                                           bool enough_runs, double z) {
    QuantileDifferenceRow row;
    row.p = p;
    row.h2 = q2.estimate;
    row.h3 = q3.estimate;
    row.diff_ms = row.h3 - row.h2;
    row.diff_pct = row.h2 > 0 ? 100.0 * row.diff_ms / row.h2 : kNaN;
    row.ci_ms_lo = row.ci_ms_hi = row.ci_pct_lo = row.ci_pct_hi = kNaN;
    row.ci_h2_lo = row.ci_h2_hi = row.ci_h3_lo = row.ci_h3_hi = kNaN;
    row.corr = kNaN;
    if (enough_runs) {
        row.ci_h2_lo = q2.lo;
        row.ci_h2_hi = q2.hi;
        row.ci_h3_lo = q3.lo;
        row.ci_h3_hi = q3.hi;
        row.corr = rho;
        // rho is NaN only when an arm's residuals are all zero (no run-level spread at this quantile): then
        // that arm's se is 0 too, or its interval undefined, and the covariance term vanishes either way.
        const double r_cov = finite(rho) ? rho : 0.0;
        const double s2 = q2.se_woodruff, s3 = q3.se_woodruff;
        if (finite(s2) && finite(s3)) {
            const double cov = r_cov * s2 * s3;
            const double se = std::sqrt(std::max(0.0, s3 * s3 + s2 * s2 - 2 * cov));
            row.ci_ms_lo = row.diff_ms - z * se;
            row.ci_ms_hi = row.diff_ms + z * se;
            if (row.h2 > 0) {
                const double h2v = row.h2, h3v = row.h3;
                const double var_r = s3 * s3 / (h2v * h2v) + h3v * h3v * s2 * s2 / (h2v * h2v * h2v * h2v) -
                                     2 * h3v * cov / (h2v * h2v * h2v);
                const double r = h3v / h2v;
                const double se_r = std::sqrt(std::max(0.0, var_r));
                row.ci_pct_lo = 100 * (r - 1 - z * se_r);
                row.ci_pct_hi = 100 * (r - 1 + z * se_r);
            }
        }
    }
    row.significant = finite(row.ci_ms_lo) && finite(row.ci_ms_hi) && (row.ci_ms_lo > 0 || row.ci_ms_hi < 0);
    return row;
}

std::vector<QuantileInterval> quantile_intervals_delta(const RunClusteredSample& sample, const std::vector<double>& ps,
                                                       double confidence) {
    DeltaArm arm(sample, ps, confidence);
    for (std::size_t k = 0; k < ps.size(); ++k) arm.fit(k);
    return arm.finish();
}

std::vector<std::vector<double>> bootstrap_quantile_replicates(const RunClusteredSample& sample,
                                                               const std::vector<double>& ps, unsigned replicates,
                                                               std::uint64_t seed, std::uint64_t own_run_stream) {
    const std::size_t P = ps.size();
    std::vector<std::vector<double>> out(P, std::vector<double>(replicates, kNaN));
    const std::size_t N = sample.size();
    const std::size_t n_runs = sample.runs();
    if (N == 0) return out;

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

    // Each run's own splitmix64 stream: base_i from (seed, key), replicate b reads its (b+1)-th output. The key is
    // the run id, so another sample bootstrapped with the same seed gives the same run the same weights. A run
    // without an id gets the key 2^63 | stream << 32 | dense index, never an id's (ids are < 2^31), and mix64 is a
    // bijection, so no two keys share a stream by accident.
    std::vector<std::uint64_t> base(n_runs);
    const std::uint64_t seed_mix = mix64(seed + kGolden);
    for (std::size_t i = 0; i < n_runs; ++i) {
        const std::int32_t id = sample.run_id[i];
        const std::uint64_t key = id >= 0 ? static_cast<std::uint64_t>(id)
                                          : (std::uint64_t{1} << 63) | ((own_run_stream & 0x7FFFFFFFULL) << 32) | i;
        base[i] = mix64(seed_mix ^ mix64(key + kGolden));
    }

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

ArmsAnalysis analyze_arms(const RunClusteredSample& h2, const RunClusteredSample& h3, const std::vector<double>& ps,
                          IntervalMethod method, double confidence, const BootstrapOptions& bootstrap,
                          ArmPairing pairing) {
    ArmsAnalysis a;
    a.method = method;
    a.confidence = confidence;
    a.n_h2 = h2.size();
    a.n_h3 = h3.size();
    a.runs_h2 = h2.runs();
    a.runs_h3 = h3.runs();
    const std::vector<std::int32_t> partner = partner_runs(h2, h3);
    for (std::int32_t j : partner) a.runs_paired += j >= 0;
    if (h2.size() == 0 || h3.size() == 0) return a;
    const bool paired = pairing == ArmPairing::by_run_id;
    const bool enough_runs = h2.runs() >= kMinRunsForInterval && h3.runs() >= kMinRunsForInterval &&
                             confidence > 0 && confidence < 1;
    const double z = two_sided_z(confidence);

    // Point estimates (and, for delta, the per-arm intervals and rho) come from the exact quantiles either way.
    std::vector<double> rho(ps.size(), kNaN);
    DeltaArm d2(h2, ps, confidence), d3(h3, ps, confidence);
    for (std::size_t k = 0; k < ps.size(); ++k) {
        const double ss2 = d2.fit(k), ss3 = d3.fit(k);
        if (!paired) {
            rho[k] = 0;
            continue;
        }
        if (!(ss2 > 0 && ss3 > 0)) continue;
        const std::vector<std::uint32_t>& b2 = d2.below();
        const std::vector<std::uint32_t>& b3 = d3.below();
        CrossSums c;
        for (std::size_t i = 0; i < partner.size(); ++i) {
            if (partner[i] < 0) continue;
            const auto j = static_cast<std::size_t>(partner[i]);
            const std::uint64_t s2 = b2[i], n2 = h2.run_size[i], s3 = b3[j], n3 = h3.run_size[j];
            c.s2s3 += s2 * s3;
            c.s2n3 += s2 * n3;
            c.n2s3 += n2 * s3;
            c.n2n3 += n2 * n3;
        }
        const double cross = delta_cross(c, h2.size(), d2.total_below(), h3.size(), d3.total_below());
        rho[k] = std::max(-1.0, std::min(1.0, cross / std::sqrt(ss2 * ss3)));
    }
    const auto q2 = d2.finish();
    const auto q3 = d3.finish();

    std::vector<std::vector<double>> b2, b3;
    if (method == IntervalMethod::bootstrap && enough_runs) {
        // Paired: one seed, so a run id weighs the same in both arms. Independent: a second seed for h3.
        b2 = bootstrap_quantile_replicates(h2, ps, bootstrap.replicates, bootstrap.seed, 2);
        b3 = bootstrap_quantile_replicates(h3, ps, bootstrap.replicates,
                                           paired ? bootstrap.seed : bootstrap.seed ^ 0x5DEECE66DULL, 3);
    }
    const double alpha = 1 - confidence;
    for (std::size_t k = 0; k < ps.size(); ++k) {
        if (method == IntervalMethod::delta) {
            a.rows.push_back(delta_difference_row(ps[k], q2[k], q3[k], rho[k], enough_runs, z));
            continue;
        }
        // bootstrap: the point estimates as delta's, the intervals from the replicates.
        QuantileDifferenceRow row = delta_difference_row(ps[k], q2[k], q3[k], kNaN, false, z);
        if (enough_runs && bootstrap.replicates >= 2) {
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
            row.corr = replicate_correlation(b2[k], b3[k]);
        }
        row.significant = finite(row.ci_ms_lo) && finite(row.ci_ms_hi) && (row.ci_ms_lo > 0 || row.ci_ms_hi < 0);
        a.rows.push_back(row);
    }
    return a;
}


}  // namespace h3probe

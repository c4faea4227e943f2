// The calibration suite's harness: experiments of the frozen families through the report's inference, judged per cell.
#include "suite.hpp"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <cstdlib>
#include <thread>
#include <tuple>

#include "standard_normal.hpp"
#include "value_aggregates.hpp"

namespace h3probe::calib {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double thread_cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// FNV-1a over a unit's names and size: its experiments' seed, the same whatever the threads or the other units.
std::uint64_t unit_seed(std::uint64_t seed, const std::string& family, const std::string& variant, int size) {
    std::uint64_t h = 1469598103934665603ULL ^ seed;
    for (const std::string& s : {family, std::string("|"), variant, std::string("|"), std::to_string(size)})
        for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
    return h;
}

// Type 7 of sorted values.
double sorted_quantile(const std::vector<double>& v, double p) {
    if (v.empty()) return kNaN;
    const double h = p * static_cast<double>(v.size() - 1);
    const auto k = static_cast<std::size_t>(h);
    return k + 1 < v.size() ? v[k] + (h - static_cast<double>(k)) * (v[k + 1] - v[k]) : v[k];
}

double sd_of(const std::vector<double>& v) {
    if (v.size() < 2) return kNaN;
    double mean = 0, m2 = 0, n = 0;
    for (double x : v) {
        n += 1;
        const double d = x - mean;
        mean += d / n;
        m2 += d * (x - mean);
    }
    return std::sqrt(m2 / (n - 1));
}

// One experiment's reading of a cell: estimate, SE, interval, the report's decision, and why there was no interval.
struct Reading {
    double estimate = kNaN, se = kNaN, lo = kNaN, hi = kNaN;
    bool excludes_zero = false;
    int reason = -1;  // -1: an interval; else NoInterval
};

CellStats summarise(const std::vector<Reading>& readings, double p, double truth, double z) {
    CellStats c;
    c.p = p;
    c.truth = truth;
    c.experiments = static_cast<int>(readings.size());
    std::vector<double> estimates, zs;
    double width = 0;
    for (const Reading& r : readings) {
        if (std::isfinite(r.estimate)) estimates.push_back(r.estimate);
        c.excluded_zero += r.excludes_zero;
        if (r.reason >= 0) {
            ++c.none[r.reason];
            continue;
        }
        ++c.with_interval;
        width += r.hi - r.lo;
        if (!std::isfinite(truth)) continue;
        if (r.hi < truth) ++c.miss_low;
        else if (r.lo > truth) ++c.miss_high;
        else ++c.covered;
        zs.push_back((r.estimate - truth) / r.se);
    }
    std::sort(zs.begin(), zs.end());
    c.sd_z = sd_of(zs);
    c.iqr_z = (sorted_quantile(zs, 0.75) - sorted_quantile(zs, 0.25)) / 1.349;
    c.far_z = zs.empty() ? kNaN
                         : static_cast<double>(std::count_if(zs.begin(), zs.end(), [](double x) { return std::fabs(x) > budgets().far_z; })) /
                               static_cast<double>(zs.size());
    c.sd = sd_of(estimates);
    double sum = 0;
    for (double x : estimates) sum += x;
    c.bias = estimates.empty() ? kNaN : sum / static_cast<double>(estimates.size()) - truth;
    const double oracle = 2 * z * c.sd;
    c.width_ratio = c.with_interval > 0 && oracle > 0 ? width / c.with_interval / oracle : kNaN;
    return c;
}

std::string cache_path(const SuiteOptions& o, const Family& f, const Variant& v, const std::vector<double>& ps, long runs) {
    std::string name = f.name + "__" + v.name + "__" + std::to_string(runs);
    for (double p : ps) name += "_" + std::to_string(static_cast<int>(std::lround(p * 1000)));
    for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') c = '_';
    return o.truth_cache + "/" + o.source_hash.substr(0, 16) + "/" + name + ".txt";
}

}  // namespace

const char* reason_name(NoInterval r) {
    static const char* names[] = {"refused", "unfinished", "SE 0", "unbounded", "undefined"};
    return names[static_cast<int>(r)];
}

int CellStats::no_interval() const {
    int n = 0;
    for (int x : none) n += x;
    return n;
}

bool Verdict::pass() const { return aa && cover && miss_low && miss_high && sd_z && iqr_z && far && width && interval; }

Verdict judge(const CellStats& c, bool aa) {
    const Budgets& b = budgets();
    Verdict v;
    const double E = c.experiments;
    const auto outside = [](double x, double lo, double hi, double scale) {
        return std::isfinite(x) ? std::max({0.0, lo - x, x - hi}) / scale : std::numeric_limits<double>::infinity();
    };
    const auto check = [&](bool& ok, const char* name, double term) {
        ok = term == 0;
        if (!ok) v.failed += std::string(v.failed.empty() ? "" : ", ") + name;
        v.score = std::max(v.score, term);
    };
    if (c.none[static_cast<int>(NoInterval::refused)] == c.experiments) {
        v.refused_all = true;
        v.interval = v.cover = false;
        v.failed = "refused";
        return v;
    }
    if (aa) check(v.aa, "A/A", outside(c.excluded_zero / E, b.aa_lo, b.aa_hi, 0.01));
    check(v.cover, "coverage", outside(c.covered / E, b.cover_lo, b.cover_hi, 0.01));
    check(v.miss_low, "low misses", outside(c.miss_low / E, b.miss_lo, b.miss_hi, 0.01));
    check(v.miss_high, "high misses", outside(c.miss_high / E, b.miss_lo, b.miss_hi, 0.01));
    check(v.sd_z, "SD z", outside(c.sd_z, b.z_lo, b.z_hi, 0.1));
    check(v.iqr_z, "IQR z", outside(c.iqr_z, b.z_lo, b.z_hi, 0.1));
    check(v.far, "z beyond ±4", outside(c.far_z, 0, b.far_max, b.far_max));
    check(v.width, "width", outside(c.width_ratio, 0, b.width_max, 0.25));
    check(v.interval, "no interval", c.no_interval() / E / 0.01);
    return v;
}

Truth variant_truth(const Family& f, const Variant& v, const std::vector<double>& ps, const SuiteOptions& o) {
    Truth t;
    if (v.aa) return Truth(kEstimands, std::vector<std::vector<double>>(2, std::vector<double>(ps.size(), 0.0)));
    if (closed_form_truth(*v.model, ps, t)) return t;
    const long runs = o.truth_runs > 0 ? o.truth_runs : truth_runs();
    const std::string path = o.truth_cache.empty() ? "" : cache_path(o, f, v, ps, runs);
    if (!path.empty()) {
        std::ifstream in(path);
        t.assign(kEstimands, std::vector<std::vector<double>>(2));
        std::string word;
        std::size_t read = 0;
        for (auto& e : t)
            for (auto& arm : e)
                for (std::size_t k = 0; k < ps.size() && in >> word; ++k, ++read) arm.push_back(std::strtod(word.c_str(), nullptr));
        if (read == kEstimands * 2 * ps.size()) return t;
    }
    t = monte_carlo_truth(*v.model, ps, runs, truth_seed());
    if (!path.empty()) {
        std::filesystem::create_directories(std::filesystem::path(path).parent_path());
        std::ofstream out(path + ".part");
        char b[64];
        for (const auto& e : t)
            for (const auto& arm : e)
                for (double q : arm) {
                    std::snprintf(b, sizeof b, "%a\n", q);
                    out << b;
                }
        out.close();
        std::filesystem::rename(path + ".part", path);
    }
    return t;
}

UnitResult run_unit(const Unit& u, const std::vector<double>& ps, int experiments, std::uint64_t seed, const Truth& truth,
                    IntervalMethod method) {
    const double started = thread_cpu_seconds();
    const Family& f = families()[u.family];
    const Variant& v = f.variants[u.variant];
    const int estimands = f.h3_worked ? 2 : 1;
    const std::size_t P = ps.size();
    RunGenerator gen(*v.model, unit_seed(seed, f.name, v.name, u.size));
    ReportOptions options;
    options.percentiles = ps;
    options.confidence = suite_confidence();
    options.method = method;
    // readings[estimand][p][metric][experiment]
    std::vector<std::vector<std::vector<std::vector<Reading>>>> readings(
        static_cast<std::size_t>(estimands), std::vector<std::vector<std::vector<Reading>>>(P, std::vector<std::vector<Reading>>(2)));
    std::vector<ValueGroup> groups(static_cast<std::size_t>(estimands));
    std::vector<double> values[2];
    for (int e = 0; e < experiments; ++e) {
        for (ValueGroup& g : groups) g = ValueGroup{};
        for (int r = 0; r < u.size; ++r) {
            const RunValues& run = gen.next();
            for (int est = 0; est < estimands; ++est) {
                if (est == 1 && !run.worked) continue;
                values[0] = run.values[0];
                values[1] = run.values[1];
                add_run(groups[static_cast<std::size_t>(est)], values, static_cast<std::uint32_t>(r), r & 1);
            }
        }
        // The report's path: the in-process aggregate source, then infer_report() round by round.
        std::string error;
        const std::vector<GroupReport> reports = infer_values(groups, options, error);
        for (std::size_t est = 0; est < static_cast<std::size_t>(estimands); ++est) {
            const ArmsAnalysis* a = error.empty() && est < reports.size() ? &reports[est].analysis : nullptr;
            for (std::size_t k = 0; k < P; ++k) {
                Reading ms, pct;
                if (!a || k >= a->rows.size()) {
                    ms.reason = pct.reason = static_cast<int>(NoInterval::other);
                } else {
                    const QuantileDifferenceRow& row = a->rows[k];
                    ms.estimate = row.diff_ms;
                    pct.estimate = row.diff_pct;
                    ms.se = row.se_ms;
                    pct.se = row.se_pct;
                    ms.lo = row.ci_ms_lo;
                    ms.hi = row.ci_ms_hi;
                    pct.lo = row.ci_pct_lo;
                    pct.hi = row.ci_pct_hi;
                    ms.excludes_zero = pct.excludes_zero = row.significant;
                    // Refused first: the count alone decides it, whatever the values (a row may also be unfinished).
                    if (a->runs_h2 < row.min_runs || a->runs_h3 < row.min_runs) ms.reason = static_cast<int>(NoInterval::refused);
                    else if (row.unfinished) ms.reason = static_cast<int>(NoInterval::unfinished);
                    else if (!std::isfinite(row.ci_ms_lo) || !std::isfinite(row.ci_ms_hi)) ms.reason = static_cast<int>(NoInterval::other);
                    else if (!(row.se_ms > 0)) ms.reason = static_cast<int>(NoInterval::se_zero);
                    if (ms.reason >= 0) pct.reason = ms.reason;
                    else if (row.ci_pct_unbounded) pct.reason = static_cast<int>(NoInterval::unbounded);
                    else if (!std::isfinite(row.ci_pct_lo) || !std::isfinite(row.ci_pct_hi)) pct.reason = static_cast<int>(NoInterval::other);
                    else if (!(row.se_pct > 0) || !(row.ci_pct_hi > row.ci_pct_lo)) pct.reason = static_cast<int>(NoInterval::se_zero);
                }
                readings[est][k][0].push_back(ms);
                readings[est][k][1].push_back(pct);
            }
        }
    }
    UnitResult out;
    out.unit = u;
    out.cells.assign(kEstimands, {});
    const double z = two_sided_z(suite_confidence());
    for (std::size_t est = 0; est < static_cast<std::size_t>(estimands); ++est)
        for (std::size_t k = 0; k < P; ++k) {
            const double t2 = truth[est][0][k], t3 = truth[est][1][k];
            const double d_ms = std::isfinite(t2) && std::isfinite(t3) ? t3 - t2 : kNaN;
            const double d_pct = std::isfinite(d_ms) && t2 > 0 ? 100 * (t3 / t2 - 1) : kNaN;
            out.cells[est].push_back({summarise(readings[est][k][0], ps[k], v.aa ? 0 : d_ms, z),
                                      summarise(readings[est][k][1], ps[k], v.aa ? 0 : d_pct, z)});
        }
    out.cpu_seconds = thread_cpu_seconds() - started;
    return out;
}

int experiments_for(const SuiteOptions& o, int size) {
    if (auto it = o.experiments_at.find(size); it != o.experiments_at.end()) return it->second;
    return o.experiments > 0 ? o.experiments : default_experiments();
}

std::vector<UnitResult> run_suite(const SuiteOptions& o, std::FILE* progress) {
    const auto& all = families();
    std::vector<std::size_t> fams = o.families;
    if (fams.empty())
        for (std::size_t i = 0; i < all.size(); ++i) fams.push_back(i);
    const std::vector<int> sizes = o.sizes.empty() ? suite_sizes() : o.sizes;
    const std::vector<double> ps = o.ps.empty() ? suite_percentiles() : o.ps;
    const unsigned threads = std::max(1u, o.threads);
    std::mutex lock;
    const auto in_parallel = [&](std::size_t jobs, const auto& job) {
        std::atomic<std::size_t> next{0};
        std::vector<std::thread> pool;
        for (unsigned t = 0; t < std::min<std::size_t>(threads, jobs); ++t)
            pool.emplace_back([&] {
                for (std::size_t j; (j = next++) < jobs;) job(j);
            });
        for (auto& t : pool) t.join();
    };
    // The truths, one job a variant.
    std::vector<std::pair<std::size_t, std::size_t>> variants;
    for (std::size_t f : fams)
        for (std::size_t v = 0; v < all[f].variants.size(); ++v) variants.push_back({f, v});
    std::vector<Truth> truths(variants.size());
    in_parallel(variants.size(), [&](std::size_t j) {
        const double t0 = thread_cpu_seconds();
        truths[j] = variant_truth(all[variants[j].first], all[variants[j].first].variants[variants[j].second], ps, o);
        if (progress && thread_cpu_seconds() - t0 > 1) {
            std::lock_guard<std::mutex> g(lock);
            std::fprintf(progress, "truth %s / %s: %.0f s CPU\n", all[variants[j].first].name.c_str(),
                         all[variants[j].first].variants[variants[j].second].name.c_str(), thread_cpu_seconds() - t0);
        }
    });
    // The units, the largest first (so that the last ones to finish are short).
    std::vector<std::pair<Unit, std::size_t>> units;
    for (std::size_t j = 0; j < variants.size(); ++j)
        for (int s : sizes) units.push_back({{variants[j].first, variants[j].second, s}, j});
    const auto cost = [&](const Unit& u) { return static_cast<double>(u.size) * experiments_for(o, u.size); };
    std::stable_sort(units.begin(), units.end(), [&](const auto& a, const auto& b) { return cost(a.first) > cost(b.first); });
    std::vector<UnitResult> results(units.size());
    std::atomic<std::size_t> done{0};
    in_parallel(units.size(), [&](std::size_t j) {
        results[j] = run_unit(units[j].first, ps, experiments_for(o, units[j].first.size), o.seed, truths[units[j].second], o.method);
        if (progress) {
            std::lock_guard<std::mutex> g(lock);
            const Unit& u = units[j].first;
            std::fprintf(progress, "[%zu/%zu] %s / %s, %d runs: %.1f s CPU\n", ++done, units.size(), all[u.family].name.c_str(),
                         all[u.family].variants[u.variant].name.c_str(), u.size, results[j].cpu_seconds);
        }
    });
    // Back in the table's order: family, variant, size.
    std::stable_sort(results.begin(), results.end(), [](const UnitResult& a, const UnitResult& b) {
        return std::tie(a.unit.family, a.unit.variant, a.unit.size) < std::tie(b.unit.family, b.unit.variant, b.unit.size);
    });
    return results;
}

namespace {

std::string fmt(const char* f, double x) {
    if (!std::isfinite(x)) return "–";
    char b[64];
    std::snprintf(b, sizeof b, f, x);
    return b;
}
// A share in % with its Monte-Carlo 95 % bounds (normal approximation to the binomial over the experiments).
std::string share_mc(int k, int n) {
    const double x = static_cast<double>(k) / n, h = 1.96 * std::sqrt(x * (1 - x) / n);
    char b[64];
    std::snprintf(b, sizeof b, "%.1f [%.1f, %.1f]", 100 * x, 100 * std::max(0.0, x - h), 100 * std::min(1.0, x + h));
    return b;
}
std::string none_text(const CellStats& c) {
    if (c.no_interval() == 0) return "0";
    std::string s = fmt("%.1f", 100.0 * c.no_interval() / c.experiments) + " (";
    bool first = true;
    for (int r = 0; r < kNoIntervalReasons; ++r)
        if (c.none[r]) {
            s += std::string(first ? "" : ", ") + reason_name(static_cast<NoInterval>(r)) + " " + std::to_string(c.none[r]);
            first = false;
        }
    return s + ")";
}
std::string figures(const CellStats& c, bool aa) {
    if (c.none[0] == c.experiments) return "no interval: refused in every experiment";
    std::string s = std::to_string(c.experiments) + " experiments: " + (aa ? "A/A excl. 0 " + fmt("%.1f %%", 100.0 * c.excluded_zero / c.experiments) + ", " : std::string());
    s += "coverage " + fmt("%.1f %%", 100.0 * c.covered / c.experiments) + ", misses " + fmt("%.1f", 100.0 * c.miss_low / c.experiments) +
         " / " + fmt("%.1f %%", 100.0 * c.miss_high / c.experiments) + ", SD z " + fmt("%.2f", c.sd_z) + ", IQR z " +
         fmt("%.2f", c.iqr_z) + ", z beyond ±4 " + fmt("%.2f %%", 100 * c.far_z) + ", width " + fmt("%.2f", c.width_ratio);
    if (c.no_interval()) s += ", no interval " + none_text(c);
    return s;
}

template <typename Visit>
void each_cell(const std::vector<UnitResult>& results, const Visit& visit) {
    for (const UnitResult& r : results)
        for (std::size_t est = 0; est < r.cells.size(); ++est)
            for (const auto& by_metric : r.cells[est])
                for (std::size_t m = 0; m < by_metric.size(); ++m) visit(r, static_cast<int>(est), static_cast<int>(m), by_metric[m]);
}

}  // namespace

void print_cells(std::FILE* out, const std::vector<UnitResult>& results, const std::vector<double>&) {
    std::fprintf(out, "| family | variant | runs (experiments) | p | estimand | Δ | truth | no interval %% | A/A excl. 0 %% [MC 95 %%] | "
                      "coverage %% [MC 95 %%] | low / high misses %% | SD z | IQR z ÷ 1.349 | z beyond ±4 %% | width ÷ oracle | "
                      "failed |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    each_cell(results, [&](const UnitResult& r, int est, int m, const CellStats& c) {
        const Family& f = families()[r.unit.family];
        const Variant& v = f.variants[r.unit.variant];
        const Verdict verdict = judge(c, v.aa);
        std::fprintf(out, "| %s | %s | %d (%d) | p%g | %s | %s | %s | %s | %s | %s | %s / %s | %s | %s | %s | %s | %s |\n", f.name.c_str(),
                     v.name.c_str(), r.unit.size, c.experiments, 100 * c.p, estimand_name(static_cast<Estimand>(est)), m == 0 ? "ms" : "%",
                     fmt("%.3f", c.truth).c_str(), none_text(c).c_str(),
                     v.aa ? share_mc(c.excluded_zero, c.experiments).c_str() : "–", share_mc(c.covered, c.experiments).c_str(),
                     fmt("%.1f", 100.0 * c.miss_low / c.experiments).c_str(), fmt("%.1f", 100.0 * c.miss_high / c.experiments).c_str(),
                     fmt("%.2f", c.sd_z).c_str(), fmt("%.2f", c.iqr_z).c_str(), fmt("%.2f", 100 * c.far_z).c_str(),
                     fmt("%.2f", c.width_ratio).c_str(), verdict.pass() ? "pass" : verdict.failed.c_str());
    });
}

void print_summary(std::FILE* out, const std::vector<UnitResult>& results, const std::vector<double>&) {
    struct Tally {
        int cells = 0, failing = 0, refused = 0, some_none = 0;
        int by_budget[9] = {};
        double worst = -1;
        std::string where, what;
    };
    std::vector<Tally> tally(families().size());
    std::vector<bool> seen(families().size(), false);
    each_cell(results, [&](const UnitResult& r, int est, int m, const CellStats& c) {
        const Family& f = families()[r.unit.family];
        const Variant& v = f.variants[r.unit.variant];
        const Verdict verdict = judge(c, v.aa);
        Tally& t = tally[r.unit.family];
        seen[r.unit.family] = true;
        ++t.cells;
        t.failing += !verdict.pass();
        if (verdict.refused_all) {
            ++t.refused;
            return;
        }
        t.some_none += c.no_interval() > 0;
        const bool ok[9] = {verdict.aa, verdict.cover, verdict.miss_low, verdict.miss_high, verdict.sd_z,
                            verdict.iqr_z, verdict.far, verdict.width, verdict.interval};
        for (int b = 0; b < 9; ++b) t.by_budget[b] += !ok[b];
        if (verdict.score > t.worst) {
            t.worst = verdict.score;
            t.where = v.name + ", " + std::to_string(r.unit.size) + " runs, p" + fmt("%g", 100 * c.p) + ", " +
                      estimand_name(static_cast<Estimand>(est)) + ", Δ " + (m == 0 ? "ms" : "%");
            t.what = figures(c, v.aa) + (verdict.pass() ? " (passes)" : " — fails: " + verdict.failed);
        }
    });
    std::fprintf(out, "| family | cells | failing | refused (fewer runs than p needs) | failing by budget: A/A · coverage · low · "
                      "high · SD z · IQR z · z beyond ±4 · width · no interval | worst cell | its figures |\n"
                      "|---|---|---|---|---|---|---|\n");
    for (std::size_t i = 0; i < tally.size(); ++i) {
        if (!seen[i]) continue;
        const Tally& t = tally[i];
        std::string by;
        for (int b = 0; b < 9; ++b) by += (b ? " · " : "") + std::to_string(t.by_budget[b]);
        std::fprintf(out, "| %s | %d | %d | %d | %s | %s | %s |\n", families()[i].name.c_str(), t.cells, t.failing, t.refused,
                     by.c_str(), t.where.c_str(), t.what.c_str());
    }
}

}  // namespace h3probe::calib

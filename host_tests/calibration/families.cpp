// THE FROZEN CALIBRATION SUITE (issue 52, step 1). This file is the suite's definition: the families of data, how a
// run of each is drawn and what the report sees of it, the truth, the sizes, percentiles and budgets. It was written
// before any change to the interval method, and its SHA-256 is recorded in docs/design.md ("The calibration suite");
// host_tests/calibration_suite_test.cpp fails when they differ. Change it only on purpose, record the new hash, and say
// in review why the suite, not the method, had to change.
#include "families.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

#include "request_class.hpp"
#include "standard_normal.hpp"

namespace h3probe::calib {

// A network a run is on (a mixture within one group): a share of the runs, a level multiplying their values, a scale
// of their log spread, and HTTP/3's effect there (its values times h3_scale where it worked).
struct Network {
    double share = 1, level = 1, sigma_scale = 1, h3_scale = 1;
};

// Whole-arm delays: one delay added to every request of an arm of a run (a stall that holds the arm, as HTTP/2's
// head-of-line blocking does). h2_only: the HTTP/2 arm alone (an effect); each_arm: each arm on its own,
// independently; both_arms: one delay on both arms of the run together.
enum class Delay { none, h2_only, each_arm, both_arms };

// The data model of one family variant. Requests are lognormal around their run's level; every other feature is off
// at its default.
struct Model {
    double median_ms = 40;  // the median of a request before networks, tails, delays and users
    double sigma = 0.5;     // SD of log(request): the run's level and the request's own draw together
    double within = 0.7;    // within-run correlation of log values: the run level's share of sigma^2
    double cross = 0.9;     // correlation of the two arms' run levels (log)
    // A mixture of networks within the group: share, level, scale of the log spread, HTTP/3's effect there.
    std::vector<Network> networks;
    // Pareto tails: a request (request_pareto) gains pareto_ms * U^(-1 / alpha) ms; a run (run_pareto) has its level
    // in both arms multiplied by U^(-1 / alpha) (index alpha <= 2: no variance).
    double request_pareto = 0, run_pareto = 0, pareto_alpha = 1.5, pareto_ms = 20;
    // Whole-arm delays: one delay added to every request of an arm of a run, with probability delay_share per run
    // (each_arm: per arm), delay_ms * Exp(1) (continuous) or, with slow_mode, delay_ms * exp(0.1 Z): a separate narrow
    // mode of slow runs, which delay_share = 1 - p puts at percentile p.
    Delay delay = Delay::none;
    double delay_share = 0, delay_ms = 0;
    bool slow_mode = false;
    // The browser's timer grid in ms (0: none). A request's time is the difference of two timestamps, each floored to
    // the grid, its start at a uniform phase: grid * floor(t / grid + V), V ~ U(0, 1): t rounded down or up with the
    // chance that keeps its mean, as a browser's network_ms is. The truth is the exact times' (monte_carlo_truth).
    double grid_ms = 0;
    int requests[2] = {5, 5};  // per arm (HTTP/2, HTTP/3)
    // Missing at random: each value absent with this probability (a metric the browser did not give: the report drops
    // the value and keeps the run, which then may hold one arm only among its values).
    double missing = 0;
    // The slowest missing: with this probability per run and arm, the arm's slowest request did not finish (the run
    // ended first): the report holds it as kUnfinishedValue, slower than every finished one, and the run leaves
    // h3_worked.
    double unfinished = 0;
    // Runs with one arm only (slow runs 4 times as often as fast ones): the report leaves them out whole
    // (run_estimands), so experiments and truth alike are made of the runs with both arms.
    double one_arm = 0;
    // Users repeating across runs: a user's runs share a log level N(0, user_sigma^2); a user makes 1 + Geometric
    // runs, runs_per_user on average, one after the other.
    double user_sigma = 0, runs_per_user = 1;
    // Fallbacks: with this probability per run (slow runs 4 times as often) every HTTP/3 request goes over HTTP/2,
    // drawn as HTTP/2's are (no effect); it stays in its arm as assigned and the run leaves h3_worked.
    double fallback = 0;
    // HTTP/3's effect where it worked, in this order: above tail_from_ms a value's excess times tail_scale (the tail
    // only); the value times h3_scale (scale) and its network's h3_scale (one subpopulation); plus h3_shift_ms
    // (location). The A/A twin has none.
    double tail_from_ms = 0, tail_scale = 1, h3_scale = 1, h3_shift_ms = 0;
};

Declared declared(const Model& m) { return {m.median_ms, m.sigma, m.within, m.cross, m.grid_ms, {m.requests[0], m.requests[1]}}; }

const char* estimand_name(Estimand e) { return e == Estimand::as_assigned ? "as_assigned" : "h3_worked"; }

// ---- the generator ---------------------------------------------------------------------------------------------

struct RunGenerator::State {
    explicit State(const Model& model, std::uint64_t seed) : m(model), rng(seed) {}
    const Model& m;
    std::mt19937_64 rng;
    std::normal_distribution<double> normal{0.0, 1.0};
    std::uniform_real_distribution<double> uniform{0.0, 1.0};
    double user_level = 0;
    long user_runs_left = 0;
    RunValues run;

    double u() { return uniform(rng); }
    double z() { return normal(rng); }
    double pareto() { return std::pow(1 - u(), -1 / m.pareto_alpha); }
    double delay() { return m.delay_ms * (m.slow_mode ? std::exp(0.1 * z()) : -std::log(1 - u())); }

    // One run as drawn, before the report's selection (run.compared says whether the report compares it).
    void draw() {
        if (m.user_sigma > 0 && user_runs_left-- <= 0) {
            user_level = m.user_sigma * z();
            // 1 + Geometric(q) runs, mean 1 + (1 - q) / q = runs_per_user.
            const double q = 1 / m.runs_per_user;
            user_runs_left = q >= 1 ? 0 : static_cast<long>(std::floor(std::log(1 - u()) / std::log(1 - q)));
        }
        const Network one{};
        const Network* net = &one;
        if (!m.networks.empty()) {
            // The first network whose share the uniform draw falls in, counting the shares off; the last takes the rest.
            std::size_t i = 0;
            for (double x = u(); i + 1 < m.networks.size() && !(x < m.networks[i].share); ++i) x -= m.networks[i].share;
            net = &m.networks[i];
        }
        const double sigma = m.sigma * net->sigma_scale;
        const double run_sd = sigma * std::sqrt(m.within), request_sd = sigma * std::sqrt(1 - m.within);
        const double shared = z();
        double level[2];
        for (double& l : level) l = run_sd * (std::sqrt(m.cross) * shared + std::sqrt(1 - m.cross) * z());
        double base = m.median_ms * net->level * std::exp(user_level);
        if (m.run_pareto > 0 && u() < m.run_pareto) base *= pareto();
        // Slow runs (their shared level above the median) fall back and lose an arm 4 times as often as fast ones:
        // 1.6 and 0.4 times the share, the share on average.
        const double slow = shared > 0 ? 1.6 : 0.4;
        const bool fallback = m.fallback > 0 && u() < m.fallback * slow;
        run.compared = !(m.one_arm > 0 && u() < m.one_arm * slow);
        double arm_delay[2] = {0, 0};
        if (m.delay == Delay::both_arms && u() < m.delay_share) arm_delay[0] = arm_delay[1] = delay();
        for (int a = 0; a < 2; ++a)
            if ((m.delay == Delay::each_arm || (m.delay == Delay::h2_only && a == 0)) && u() < m.delay_share)
                arm_delay[a] = delay();
        run.worked = !fallback;
        for (int a = 0; a < 2; ++a) {
            std::vector<double>& out = run.values[a];
            out.clear();
            const bool effect = a == 1 && !fallback;
            for (int k = 0; k < m.requests[a]; ++k) {
                double v = base * std::exp(level[a] + request_sd * z());
                if (m.request_pareto > 0 && u() < m.request_pareto) v += m.pareto_ms * pareto();
                v += arm_delay[a];
                if (effect) {
                    if (m.tail_scale != 1 && v > m.tail_from_ms) v = m.tail_from_ms + (v - m.tail_from_ms) * m.tail_scale;
                    v = v * m.h3_scale * net->h3_scale + m.h3_shift_ms;
                }
                if (m.grid_ms > 0) v = m.grid_ms * std::floor(v / m.grid_ms + u());
                out.push_back(v);
            }
            if (m.unfinished > 0 && u() < m.unfinished && !out.empty()) {
                *std::max_element(out.begin(), out.end()) = kUnfinishedValue;
                run.worked = false;
            }
            if (m.missing > 0)
                out.erase(std::remove_if(out.begin(), out.end(), [&](double) { return u() < m.missing; }), out.end());
        }
    }
};

RunGenerator::RunGenerator(const Model& model, std::uint64_t seed) : s_(std::make_unique<State>(model, seed)) {}
RunGenerator::~RunGenerator() = default;

const RunValues& RunGenerator::next() {
    do s_->draw();
    while (!s_->run.compared);
    return s_->run;
}

// ---- the truth -------------------------------------------------------------------------------------------------

namespace {

// Values into 2^18 log bins over [1e-3, 1e9) ms (the last bins hold kUnfinishedValue), each bin keeping its count,
// smallest and largest value; values below 1e-3 (0 on a grid) in a bin of their own.
class Histogram {
public:
    static constexpr int kBins = 1 << 18;
    static constexpr double kLow = 1e-3, kDecades = 12.000001;
    Histogram() : count_(kBins + 1, 0), lo_(kBins + 1, kInf), hi_(kBins + 1, -kInf) {}
    void add(double v) {
        const std::size_t b = bin(v);
        ++count_[b];
        ++n_;
        lo_[b] = std::min(lo_[b], v);
        hi_[b] = std::max(hi_[b], v);
    }
    // Type 7 at p: the value at rank p (n - 1), interpolated between its two neighbours; inside a bin that holds
    // several values, at their rank's place on the line from the bin's smallest to its largest.
    double quantile(double p) const {
        const double h = p * static_cast<double>(n_ - 1);
        const auto k = static_cast<std::uint64_t>(std::floor(h));
        const double a = at_rank(k), b = at_rank(std::min(k + 1, n_ - 1));
        return a + (h - std::floor(h)) * (b - a);
    }

private:
    static constexpr double kInf = std::numeric_limits<double>::infinity();
    static std::size_t bin(double v) {
        if (!(v >= kLow)) return 0;
        const double x = std::log10(v / kLow) / kDecades * kBins;
        return 1 + static_cast<std::size_t>(std::min(static_cast<double>(kBins - 1), x));
    }
    double at_rank(std::uint64_t r) const {
        std::uint64_t below = 0;
        for (std::size_t b = 0; b < count_.size(); ++b) {
            if (below + count_[b] > r) {
                if (lo_[b] == hi_[b] || count_[b] == 1) return lo_[b];
                return lo_[b] + (hi_[b] - lo_[b]) * (static_cast<double>(r - below) + 0.5) / static_cast<double>(count_[b]);
            }
            below += count_[b];
        }
        return hi_.back();
    }
    std::vector<std::uint64_t> count_;
    std::vector<double> lo_, hi_;
    std::uint64_t n_ = 0;
};

}  // namespace

long truth_runs() { return 10'000'000; }
std::uint64_t truth_seed() { return 0x7472757468ULL; }

// On a timer grid the truth is the quantile of the exact times, before the browser rounds them: the grid is the
// instrument's, not the users'. (The quantile of the rounded values is a grid point, which an estimate approaches only
// once its spread is well under a grid step, and which can differ from the exact one by up to a step either way.)
Truth monte_carlo_truth(const Model& model, const std::vector<double>& ps, long runs, std::uint64_t seed) {
    std::vector<Histogram> hist(2 * kEstimands);
    Model exact = model;
    exact.grid_ms = 0;
    RunGenerator gen(exact, seed);
    for (long r = 0; r < runs; ++r) {
        const RunValues& run = gen.next();
        for (int a = 0; a < 2; ++a)
            for (double v : run.values[a]) {
                hist[static_cast<std::size_t>(a)].add(v);
                if (run.worked) hist[static_cast<std::size_t>(2 + a)].add(v);
            }
    }
    Truth out(kEstimands, std::vector<std::vector<double>>(2));
    for (int e = 0; e < kEstimands; ++e)
        for (int a = 0; a < 2; ++a)
            for (double p : ps) {
                const double q = hist[static_cast<std::size_t>(2 * e + a)].quantile(p);
                out[static_cast<std::size_t>(e)][static_cast<std::size_t>(a)].push_back(
                    q > kMaxDurationMs ? std::numeric_limits<double>::infinity() : q);
            }
    return out;
}

bool closed_form_truth(const Model& m, const std::vector<double>& ps, Truth& out) {
    if (!m.networks.empty() || m.request_pareto > 0 || m.run_pareto > 0 || m.delay != Delay::none ||
        m.missing > 0 || m.unfinished > 0 || m.one_arm > 0 || m.user_sigma > 0 || m.fallback > 0 || m.tail_scale != 1)
        return false;
    out.assign(kEstimands, std::vector<std::vector<double>>(2));
    for (auto& e : out)
        for (double p : ps) {
            const double q = m.median_ms * std::exp(m.sigma * normal_quantile(p));
            e[0].push_back(q);
            e[1].push_back(q * m.h3_scale + m.h3_shift_ms);
        }
    return true;
}

// ---- the families ----------------------------------------------------------------------------------------------

namespace {

// The A/A twin: HTTP/3 drawn as HTTP/2 is (no effect anywhere; a delay on HTTP/2 alone becomes one on each arm).
Model aa(Model m) {
    m.tail_scale = m.h3_scale = 1;
    m.h3_shift_ms = 0;
    for (Network& n : m.networks) n.h3_scale = 1;
    if (m.delay == Delay::h2_only) m.delay = Delay::each_arm;
    return m;
}
Variant variant(std::string name, const Model& m, bool is_aa = false) {
    return {std::move(name), std::make_shared<const Model>(is_aa ? aa(m) : m), is_aa};
}
// A family of the A/A twin of `base` and its effects (each base with one effect set).
Family family(std::string name, std::string what, const Model& base, std::vector<std::pair<std::string, Model>> effects,
              bool h3_worked = false) {
    Family f{std::move(name), std::move(what), {variant("A/A", base, true)}, h3_worked};
    for (auto& e : effects) f.variants.push_back(variant(e.first, e.second));
    return f;
}
// HTTP/3 10 % faster: every value times 0.9 (the default effect of a family).
Model scaled(Model m, double s = 0.9) {
    m.h3_scale = s;
    return m;
}
std::string num(double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", x);
    return b;
}

std::vector<Family> make_families() {
    std::vector<Family> out;
    const Model base;  // 40 ms median, sigma 0.5, within-run correlation 0.7, the arms' run levels correlated 0.9
    // Within-run correlation, low to near 1 (0.99: requests of a run nearly equal, one network state per run).
    for (double w : {0.1, 0.5, 0.9, 0.99}) {
        Model m = base;
        m.within = w;
        out.push_back(family("within-run " + num(w), "within-run correlation of log values " + num(w) + ", arms' run levels 0.9",
                             m, {{"scale -10%", scaled(m)}}));
    }
    // The arms' run levels, uncorrelated to nearly one.
    for (double c : {0.0, 0.5, 0.99}) {
        Model m = base;
        m.cross = c;
        out.push_back(family("cross-arm " + num(c), "correlation of the arms' run levels " + num(c) + ", within-run 0.7", m,
                             {{"scale -10%", scaled(m)}}));
    }
    // Whole-arm delays, continuous (Exp, mean 40 ms, a tenth of runs): on each arm, on both together; HTTP/2 alone
    // is the effect.
    {
        Model m = base;
        m.delay_share = 0.1;
        m.delay_ms = 40;
        Model both = m, one = m;
        m.delay = Delay::each_arm;
        both.delay = Delay::both_arms;
        one.delay = Delay::h2_only;
        Family f = family("arm delay", "a delay (Exp, mean 40 ms) on every request of an arm in 10 % of runs", m,
                          {{"HTTP/2 only", one}});
        f.variants.insert(f.variants.begin() + 1, variant("A/A both arms", both, true));
        out.push_back(f);
    }
    // A separate slow mode (delay 150 ms x exp(0.1 Z)) whose share 1 - p puts it at each percentile.
    for (double p : {0.5, 0.75, 0.9, 0.95, 0.99}) {
        Model m = base;
        m.delay_share = 1 - p;
        m.delay_ms = 150;
        m.slow_mode = true;
        Model both = m, one = m;
        m.delay = Delay::each_arm;
        both.delay = Delay::both_arms;
        one.delay = Delay::h2_only;
        Family f = family("slow mode at p" + num(100 * p), "a narrow slow mode (+150 ms) on a whole arm in " + num(100 * (1 - p)) + " % of runs",
                          m, {{"HTTP/2 only", one}});
        f.variants.insert(f.variants.begin() + 1, variant("A/A both arms", both, true));
        out.push_back(f);
    }
    // Timer grids, on requests that are nearly equal within a run and 25 ms at the median (ties where a grid is coarse).
    for (double g : {0.1, 1.0, 5.0}) {
        Model m = base;
        m.median_ms = 25;
        m.within = 0.9;
        m.grid_ms = g;
        out.push_back(family("grid " + num(g) + " ms", "values on a " + num(g) + " ms timer grid, median 25 ms, within-run 0.9", m,
                             {{"scale -10%", scaled(m)}}));
    }
    // Pareto tails (index 1.5): 8 % of requests gain 20 ms x Pareto; 5 % of runs have their level x Pareto.
    {
        Model r = base, run = base;
        r.request_pareto = 0.08;
        run.run_pareto = 0.05;
        out.push_back(family("pareto requests", "8 % of requests gain 20 ms x Pareto(1.5)", r, {{"scale -10%", scaled(r)}}));
        out.push_back(family("pareto runs", "5 % of runs have their level x Pareto(1.5)", run, {{"scale -10%", scaled(run)}}));
    }
    // Requests per arm.
    {
        Model one = base, mar = base, slowest = base, unequal = base, one_arm = base;
        one.requests[0] = one.requests[1] = 1;
        mar.missing = 0.3;
        slowest.unfinished = 0.03;
        unequal.requests[1] = 2;
        one_arm.one_arm = 0.2;
        out.push_back(family("1 request", "one request per arm", one, {{"scale -10%", scaled(one)}}));
        out.push_back(family("missing at random", "each value missing with probability 0.3 (1-5 per arm)", mar,
                             {{"scale -10%", scaled(mar)}}));
        out.push_back(family("slowest unfinished", "in 3 % of runs an arm's slowest request did not finish", slowest,
                             {{"scale -10%", scaled(slowest)}}, true));
        out.push_back(family("arm-unequal", "5 HTTP/2 requests, 2 HTTP/3", unequal, {{"scale -10%", scaled(unequal)}}));
        out.push_back(family("one-arm runs", "20 % of runs hold one arm (slow runs 4x as often): left out by the report",
                             one_arm, {{"scale -10%", scaled(one_arm)}}));
    }
    // A mixture of networks: fixed lines, cable, mobile; effects across it and in mobile alone.
    {
        Model m = base;
        m.networks = {{0.55, 0.6, 0.8, 1}, {0.30, 1.2, 1.0, 1}, {0.15, 3.0, 1.5, 1}};
        Model sub = m;
        sub.networks.back().h3_scale = 0.8;
        out.push_back(family("network mixture", "55 % fixed (0.6x), 30 % cable (1.2x), 15 % mobile (3x, wider)", m,
                             {{"scale -10%", scaled(m)}, {"mobile only -20%", sub}}));
    }
    // Users repeating across runs.
    {
        Model m = base;
        m.user_sigma = 0.4;
        m.runs_per_user = 4;
        out.push_back(family("repeat users", "users make 4 runs on average, sharing a level (log SD 0.4)", m,
                             {{"scale -10%", scaled(m)}}));
    }
    // Effects in location, scale, the tail only.
    {
        Model loc = base, tail = base;
        loc.h3_shift_ms = -3;
        tail.tail_from_ms = 80;
        tail.tail_scale = 0.7;
        out.push_back(family("effects", "the base model with HTTP/3 effects of each kind", base,
                             {{"location -3 ms", loc}, {"scale -10%", scaled(base)}, {"tail only", tail}}));
    }
    // Fallbacks: both estimands differ.
    {
        Model m = base;
        m.fallback = 0.1;
        out.push_back(family("fallbacks", "10 % of runs fall back to HTTP/2 (slow runs 4x as often)", m,
                             {{"scale -15% where it worked", scaled(m, 0.85)}}, true));
    }
    return out;
}

}  // namespace

const std::vector<Family>& families() {
    static const std::vector<Family> all = make_families();
    return all;
}

const std::vector<int>& suite_sizes() {
    static const std::vector<int> sizes = {10, 30, 100, 300, 1500, 10000};
    return sizes;
}
const std::vector<double>& suite_percentiles() {
    static const std::vector<double> ps = {0.5, 0.75, 0.9, 0.95, 0.99};
    return ps;
}
int default_experiments() { return 10000; }
double suite_confidence() { return 0.95; }

const Budgets& budgets() {
    static const Budgets b{0.04, 0.06, 0.94, 0.96, 0.015, 0.035, 0.90, 1.10, 4, 0.002, 1.25};
    return b;
}

}  // namespace h3probe::calib

// The frozen calibration suite's definitions (issue 52, step 1): the data families, how a run of each is drawn, what
// the report sees of it, the true quantiles each family's experiments are judged against, and the budgets. All of it
// lives in families.cpp, one file, whose SHA-256 docs/design.md records ("The calibration suite"): a host test fails
// when the two differ, so any change to what the suite asks shows in review. The harness that runs the report's
// inference on these families and judges it (suite.hpp) reads them and defines nothing of its own.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace h3probe::calib {

// A family variant's data model: defined in families.cpp (the frozen file), opaque here. What a test checks the
// generator against is its declared parameters (declared()).
struct Model;
struct Declared {
    double median_ms, sigma, within, cross, grid_ms;
    int requests[2];
};
Declared declared(const Model& model);

// What the report sees of one run: each arm's values (after the grid, missing and unfinished), whether it counts at
// all (both arms measured), and whether it counts in h3_worked (no fallback, no unfinished request).
struct RunValues {
    std::vector<double> values[2];
    bool compared = true, worked = true;
};

// Draws runs of a model one after another (users repeat across consecutive runs, so a generator is a stream).
class RunGenerator {
public:
    RunGenerator(const Model& model, std::uint64_t seed);
    ~RunGenerator();
    RunGenerator(const RunGenerator&) = delete;
    RunGenerator& operator=(const RunGenerator&) = delete;
    // The next run the report compares (runs with one arm only are drawn and left out, as the report leaves them).
    const RunValues& next();

private:
    struct State;
    std::unique_ptr<State> s_;
};

// The two estimands the report makes (docs/design.md 3.3); a family has h3_worked only where it differs.
enum class Estimand { as_assigned = 0, h3_worked = 1 };
inline constexpr int kEstimands = 2;
const char* estimand_name(Estimand e);

struct Variant {
    std::string name;  // "A/A", or the effect's name
    std::shared_ptr<const Model> model;
    bool aa = false;   // the true Δ is 0 at every percentile by construction (HTTP/3 drawn as HTTP/2 is)
};
struct Family {
    std::string name, what;
    std::vector<Variant> variants;
    bool h3_worked = false;  // the family makes the two estimands differ: both are judged
};

// Every family, in the table's order.
const std::vector<Family>& families();
// The group sizes (runs the report compares), the percentiles, the experiments per cell by default, the confidence.
const std::vector<int>& suite_sizes();
const std::vector<double>& suite_percentiles();
int default_experiments();
double suite_confidence();

// The truth: for each estimand, each arm's quantile at each p ([estimand][arm][p]); +inf where the quantile lies
// among requests that did not finish. Drawn from truth_runs() runs of the model (truth_seed()), each arm's values into
// a log-binned histogram whose bins keep their smallest and largest value, the quantile read at type 7's rank (linear
// inside a bin, a relative error under 1e-4, far below any cell's spread). On a timer grid, of the exact times before
// the browser rounds them: the users' latency, not the instrument's grid point.
using Truth = std::vector<std::vector<std::vector<double>>>;
long truth_runs();
std::uint64_t truth_seed();
Truth monte_carlo_truth(const Model& model, const std::vector<double>& ps, long runs, std::uint64_t seed);
// Closed form where one exists (one lognormal network, no tail, delay, selection or users, any grid; the effect a scale
// and a shift): each arm's marginal is lognormal(log median, sigma), HTTP/3's then scaled and shifted. False otherwise.
bool closed_form_truth(const Model& model, const std::vector<double>& ps, Truth& out);

// The budgets of issue 52, per cell (a family variant, a size, a percentile, an estimand, Δ ms or Δ %), never pooled.
struct Budgets {
    double aa_lo, aa_hi;          // A/A: share of 95 % intervals excluding 0
    double cover_lo, cover_hi;    // coverage of the true Δ
    double miss_lo, miss_hi;      // each side's misses
    double z_lo, z_hi;            // SD of z and IQR(z) / 1.349, z = (estimate - truth) / SE
    double far_z, far_max;        // P(|z| > far_z) at most far_max
    double width_max;             // mean width / the oracle's (±1.96 × the true SD of the estimate, around it)
};
const Budgets& budgets();

}  // namespace h3probe::calib

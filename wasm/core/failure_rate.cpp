// Each arm's failure rate and the paired interval of their difference (see failure_rate.hpp).
#include "failure_rate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "standard_normal.hpp"

namespace h3probe {

void FailureSums::add_run(std::uint64_t F2, std::uint64_t N2, std::uint64_t F3, std::uint64_t N3) {
    ++runs;
    f2 += F2, n2 += N2, f3 += F3, n3 += N3;
    f2f2 += F2 * F2, f2n2 += F2 * N2, n2n2 += N2 * N2, f3f3 += F3 * F3, f3n3 += F3 * N3, n3n3 += N3 * N3;
    f2f3 += F2 * F3, f2n3 += F2 * N3, n2f3 += N2 * F3, n2n3 += N2 * N3;
}

void FailureSums::add(const FailureSums& o) {
    runs += o.runs;
    f2 += o.f2, n2 += o.n2, f3 += o.f3, n3 += o.n3;
    f2f2 += o.f2f2, f2n2 += o.f2n2, n2n2 += o.n2n2, f3f3 += o.f3f3, f3n3 += o.f3n3, n3n3 += o.n3n3;
    f2f3 += o.f2f3, f2n3 += o.f2n3, n2f3 += o.n2f3, n2n3 += o.n2n3;
}

FailureComparison compare_failures(const FailureSums& s, double confidence) {
    constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
    const auto d = [](std::uint64_t x) { return static_cast<double>(x); };
    FailureComparison c;
    c.runs = static_cast<std::size_t>(s.runs);
    c.failed_h2 = s.f2, c.requests_h2 = s.n2, c.failed_h3 = s.f3, c.requests_h3 = s.n3;
    c.rate_h2 = s.n2 ? d(s.f2) / d(s.n2) : kNaN;
    c.rate_h3 = s.n3 ? d(s.f3) / d(s.n3) : kNaN;
    c.diff = c.rate_h3 - c.rate_h2;
    c.ci_lo = c.ci_hi = kNaN;
    if (s.runs < 2 || !s.n2 || !s.n3 || !(confidence > 0 && confidence < 1)) return c;
    const double runs = d(s.runs), p2 = c.rate_h2, p3 = c.rate_h3;
    const double m2 = d(s.n2) / runs, m3 = d(s.n3) / runs;  // N-bar of each arm
    const double r22 = (d(s.f2f2) - 2 * p2 * d(s.f2n2) + p2 * p2 * d(s.n2n2)) / (m2 * m2);
    const double r33 = (d(s.f3f3) - 2 * p3 * d(s.f3n3) + p3 * p3 * d(s.n3n3)) / (m3 * m3);
    const double r23 = (d(s.f2f3) - p2 * d(s.n2f3) - p3 * d(s.f2n3) + p2 * p3 * d(s.n2n3)) / (m2 * m3);
    const double var = std::max(0.0, r33 + r22 - 2 * r23) / (runs * (runs - 1));
    const double half = two_sided_z(confidence) * std::sqrt(var);
    c.ci_lo = c.diff - half;
    c.ci_hi = c.diff + half;
    c.significant = c.ci_lo > 0 || c.ci_hi < 0;
    return c;
}

}  // namespace h3probe

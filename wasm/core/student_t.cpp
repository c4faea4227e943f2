// Student's t tail through the regularized incomplete beta function, evaluated by its continued fraction (Lentz's
// method); the critical value by Newton's method on that tail, from the normal's.
#include "student_t.hpp"

#include <cmath>
#include <limits>

#include "standard_normal.hpp"

namespace h3probe {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kPi = 3.14159265358979323846;

// The continued fraction of I_x(a, b) / (x^a (1 - x)^b / (a B(a, b))), which converges fast for x < (a + 1) / (a + b + 2).
double beta_fraction(double a, double b, double x) {
    constexpr double kTiny = 1e-300, kEps = 1e-15;
    double c = 1, d = 1 - (a + b) * x / (a + 1);
    if (std::fabs(d) < kTiny) d = kTiny;
    d = 1 / d;
    double f = d;
    for (int m = 1; m <= 1000; ++m) {
        for (int half = 0; half < 2; ++half) {
            // The even term m (b - m) x / ((a + 2m - 1)(a + 2m)), then the odd term -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)).
            const double num = half == 0 ? m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
                                         : -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
            d = 1 + num * d;
            if (std::fabs(d) < kTiny) d = kTiny;
            c = 1 + num / c;
            if (std::fabs(c) < kTiny) c = kTiny;
            d = 1 / d;
            const double step = c * d;
            f *= step;
            if (half == 1 && std::fabs(step - 1) < kEps) return f;
        }
    }
    return f;
}

// I_x(a, b), the regularized incomplete beta function, for a, b > 0 and x in [0, 1].
double incomplete_beta(double a, double b, double x) {
    if (x <= 0) return 0;
    if (x >= 1) return 1;
    const double log_front = a * std::log(x) + b * std::log1p(-x) + std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b);
    if (x < (a + 1) / (a + b + 2)) return std::exp(log_front) * beta_fraction(a, b, x) / a;
    return 1 - std::exp(log_front) * beta_fraction(b, a, 1 - x) / b;
}

}  // namespace

double student_t_two_sided_p(double t, double df) {
    if (std::isnan(t) || !(df > 0)) return kNaN;
    if (std::isinf(df)) return 2 * normal_cdf(-std::fabs(t));
    if (std::isinf(t)) return 0;
    return incomplete_beta(df / 2, 0.5, df / (df + t * t));
}

double student_t_two_sided_critical(double confidence, double df) {
    if (!(confidence > 0 && confidence < 1) || !(df > 0)) return kNaN;
    const double alpha = 1 - confidence;
    double c = two_sided_z(confidence);
    if (std::isinf(df)) return c;
    // The t tail is heavier than the normal's, so the root lies above z; Newton on log P(|T| >= c) = log alpha, whose
    // derivative is -2 f(c) / P with f the t density, is monotone from there.
    for (int i = 0; i < 100; ++i) {
        const double p = student_t_two_sided_p(c, df);
        const double log_density = std::lgamma((df + 1) / 2) - std::lgamma(df / 2) - 0.5 * std::log(df * kPi) -
                                   (df + 1) / 2 * std::log1p(c * c / df);
        const double step = (std::log(p) - std::log(alpha)) * p / (2 * std::exp(log_density));
        c += step;
        if (std::fabs(step) < 1e-12 * c) break;
    }
    return c;
}

}  // namespace h3probe

#include "analysis/student_t.h"

#include <cmath>
#include <limits>

namespace gpuoverlap {

SampleSpread sample_spread(const std::vector<double>& values) {
  SampleSpread s;
  s.n = values.size();
  if (values.empty()) return s;
  for (double v : values) s.mean += v;
  s.mean /= static_cast<double>(s.n);
  if (s.n < 2) return s;
  for (double v : values) s.variance += (v - s.mean) * (v - s.mean);
  s.variance /= static_cast<double>(s.n - 1);
  s.standard_error = std::sqrt(s.variance / static_cast<double>(s.n));
  return s;
}

namespace {

// The continued fraction of the regularized incomplete beta function I_x(a, b) (DLMF 8.17.22),
// evaluated by the modified Lentz method. Converges quickly for x < (a + 1) / (a + b + 2).
double incomplete_beta_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300, kEpsilon = 1e-15;
  auto guard = [](double v) { return std::abs(v) < kTiny ? kTiny : v; };
  double c = 1.0, d = 1.0 / guard(1.0 - (a + b) * x / (a + 1.0));
  double fraction = d;
  for (int m = 1; m <= 500; ++m) {
    const double even = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
    d = 1.0 / guard(1.0 + even * d);
    c = guard(1.0 + even / c);
    fraction *= d * c;
    const double odd = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
    d = 1.0 / guard(1.0 + odd * d);
    c = guard(1.0 + odd / c);
    const double step = d * c;
    fraction *= step;
    if (std::abs(step - 1.0) < kEpsilon) break;
  }
  return fraction;
}

double regularized_incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double log_front =
      a * std::log(x) + b * std::log1p(-x) + std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b);
  if (x < (a + 1.0) / (a + b + 2.0))
    return std::exp(log_front) * incomplete_beta_fraction(a, b, x) / a;
  return 1.0 - std::exp(log_front) * incomplete_beta_fraction(b, a, 1.0 - x) / b;
}

}  // namespace

double student_t_upper_tail(double t, double df) {
  if (std::isnan(t)) return std::numeric_limits<double>::quiet_NaN();
  const double tail = 0.5 * regularized_incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
  return t >= 0 ? tail : 1.0 - tail;
}

double student_t_quantile_upper(double upper_tail, double df) {
  if (upper_tail == 0.5) return 0;
  if (upper_tail > 0.5) return -student_t_quantile_upper(1.0 - upper_tail, df);
  // The tail falls monotonically in t: bisection, bracketed by doubling.
  double low = 0, high = 1;
  while (student_t_upper_tail(high, df) > upper_tail && high < 1e300) high *= 2;
  for (int i = 0; i < 200 && high - low > 1e-12 * high; ++i) {
    const double middle = (low + high) / 2;
    (student_t_upper_tail(middle, df) > upper_tail ? low : high) = middle;
  }
  return (low + high) / 2;
}

}  // namespace gpuoverlap

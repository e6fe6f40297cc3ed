#include "timeline/statistics.h"

#include <algorithm>
#include <cmath>

namespace gpuoverlap {

std::optional<double> percentile(std::vector<double> values, double p) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const double clamped = std::clamp(p, 0.0, 100.0);
  const double rank = clamped / 100.0 * static_cast<double>(values.size() - 1);
  const auto lower = static_cast<std::size_t>(std::floor(rank));
  const auto upper = static_cast<std::size_t>(std::ceil(rank));
  const double fraction = rank - static_cast<double>(lower);
  return values[lower] + (values[upper] - values[lower]) * fraction;
}

}  // namespace gpuoverlap

namespace gpuoverlap {

std::optional<LinearFit> linear_fit(const std::vector<double>& x, const std::vector<double>& y) {
  const std::size_t n = std::min(x.size(), y.size());
  if (n < 2) return std::nullopt;
  // Centred sums: ticks (1e12 and more) against ns would lose every digit in raw sums.
  double mean_x = 0, mean_y = 0;
  for (std::size_t i = 0; i < n; ++i) mean_x += x[i], mean_y += y[i];
  mean_x /= static_cast<double>(n);
  mean_y /= static_cast<double>(n);
  double sxx = 0, sxy = 0, syy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double dx = x[i] - mean_x, dy = y[i] - mean_y;
    sxx += dx * dx;
    sxy += dx * dy;
    syy += dy * dy;
  }
  if (sxx == 0) return std::nullopt;
  LinearFit fit;
  fit.points = n;
  fit.slope = sxy / sxx;
  fit.intercept = mean_y - fit.slope * mean_x;
  double residual = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double r = y[i] - (fit.slope * x[i] + fit.intercept);
    residual += r * r;
  }
  fit.r_squared = syy == 0 ? (residual == 0 ? 1.0 : 0.0) : 1.0 - residual / syy;
  return fit;
}

}  // namespace gpuoverlap

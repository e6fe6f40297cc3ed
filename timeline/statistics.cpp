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

std::optional<double> percentile_without(const std::vector<double>& sorted_all,
                                         const std::vector<double>& sorted_removed, double p) {
  if (sorted_removed.size() >= sorted_all.size()) return std::nullopt;
  const std::size_t left = sorted_all.size() - sorted_removed.size();
  const double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(left - 1);
  const auto lower = static_cast<std::size_t>(std::floor(rank));
  const auto upper = static_cast<std::size_t>(std::ceil(rank));
  // From the top down: a value of `sorted_all` equal to the largest not yet removed is that
  // one, removed; any other is the next of what is left, at index `r`.
  double lower_value = 0, upper_value = 0;
  std::size_t all = sorted_all.size(), removed = sorted_removed.size();
  for (std::size_t r = left; r-- > lower;) {
    while (removed > 0 && sorted_all[all - 1] == sorted_removed[removed - 1]) --all, --removed;
    const double value = sorted_all[--all];
    if (r == upper) upper_value = value;
    if (r == lower) lower_value = value;
  }
  return lower_value + (upper_value - lower_value) * (rank - static_cast<double>(lower));
}

PercentileInterval percentile_interval(std::vector<double> values, double p, double confidence) {
  PercentileInterval out;
  const std::size_t n = values.size();
  if (n == 0) return out;
  std::sort(values.begin(), values.end());
  const double q = std::clamp(p / 100.0, 1e-12, 1.0 - 1e-12);
  const double tail = (1.0 - confidence) / 2.0;
  // P(B = k) for B ~ Binomial(n, q), in log space (n may be 10^5), accumulated into the CDF.
  std::vector<double> cdf(n + 1);
  double sum = 0;
  for (std::size_t k = 0; k <= n; ++k) {
    const double log_pmf = std::lgamma(double(n) + 1) - std::lgamma(double(k) + 1) -
                           std::lgamma(double(n - k) + 1) + double(k) * std::log(q) +
                           double(n - k) * std::log1p(-q);
    sum += std::exp(log_pmf);
    cdf[k] = sum;
  }
  // Lower rank l (1-based): the largest with P(B <= l - 1) <= tail, so x_(l) <= the percentile
  // with probability >= 1 - tail. Upper rank u: the smallest with P(B >= u) <= tail.
  for (std::size_t l = n; l >= 1; --l)
    if (cdf[l - 1] <= tail) {
      out.low = values[l - 1];
      break;
    }
  for (std::size_t u = 1; u <= n; ++u)
    if (1.0 - cdf[u - 1] <= tail) {
      out.high = values[u - 1];
      break;
    }
  return out;
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

ShareInterval wilson_interval(std::size_t hits, std::size_t trials, double z) {
  const double n = static_cast<double>(trials);
  const double share = static_cast<double>(hits) / n;
  const double z2 = z * z;
  const double centre = (share + z2 / (2 * n)) / (1 + z2 / n);
  const double half = z / (1 + z2 / n) * std::sqrt(share * (1 - share) / n + z2 / (4 * n * n));
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

}  // namespace gpuoverlap

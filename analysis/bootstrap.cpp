#include "analysis/bootstrap.h"

#include <algorithm>
#include <random>

#include "timeline/statistics.h"

namespace gpuoverlap {

Interval bootstrap_percentile_difference(const std::vector<double>& baseline,
                                         const std::vector<double>& candidate, double p,
                                         int resamples, double confidence, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  auto resample = [&random](const std::vector<double>& sample, std::vector<double>& into) {
    std::uniform_int_distribution<std::size_t> pick(0, sample.size() - 1);
    for (double& v : into) v = sample[pick(random)];
  };
  std::vector<double> a(baseline.size()), b(candidate.size()), differences;
  differences.reserve(static_cast<std::size_t>(resamples));
  for (int i = 0; i < resamples; ++i) {
    resample(baseline, a);
    resample(candidate, b);
    differences.push_back(*percentile(b, p) - *percentile(a, p));
  }
  const double tail = (1.0 - confidence) / 2.0 * 100.0;
  return {*percentile(differences, tail), *percentile(differences, 100.0 - tail)};
}

}  // namespace gpuoverlap

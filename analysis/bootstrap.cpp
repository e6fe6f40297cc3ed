#include "analysis/bootstrap.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "timeline/statistics.h"

namespace gpuoverlap {

namespace {

// percentile() of timeline/statistics.h on a scratch copy, by selection instead of a sort:
// the bootstrap calls it thousands of times per metric.
double percentile_in_place(std::vector<double>& values, double p) {
  const double rank = p / 100.0 * static_cast<double>(values.size() - 1);
  const std::size_t below = static_cast<std::size_t>(std::floor(rank));
  const double fraction = rank - static_cast<double>(below);
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(below),
                   values.end());
  const double low = values[below];
  if (fraction == 0 || below + 1 >= values.size()) return low;
  const double high =
      *std::min_element(values.begin() + static_cast<std::ptrdiff_t>(below) + 1, values.end());
  return low + (high - low) * fraction;
}

// Resamples both samples `resamples` times; for each resample and each p in `ps`, calls
// combine(percentile_p(baseline resample), percentile_p(candidate resample)) and returns the
// `confidence` interval of each p's values.
template <typename Combine>
std::vector<Interval> bootstrap(const std::vector<double>& baseline,
                                const std::vector<double>& candidate, const std::vector<double>& ps,
                                int resamples, double confidence, std::uint64_t seed,
                                Combine combine) {
  std::mt19937_64 random(seed);
  auto resample = [&random](const std::vector<double>& sample, std::vector<double>& into) {
    std::uniform_int_distribution<std::size_t> pick(0, sample.size() - 1);
    for (double& v : into) v = sample[pick(random)];
  };
  std::vector<double> a(baseline.size()), b(candidate.size());
  std::vector<std::vector<double>> values(ps.size());
  for (auto& v : values) v.reserve(static_cast<std::size_t>(resamples));
  for (int i = 0; i < resamples; ++i) {
    resample(baseline, a);
    resample(candidate, b);
    for (std::size_t k = 0; k < ps.size(); ++k)
      values[k].push_back(combine(percentile_in_place(a, ps[k]), percentile_in_place(b, ps[k])));
  }
  const double tail = (1.0 - confidence) / 2.0 * 100.0;
  std::vector<Interval> out;
  for (auto& v : values) out.push_back({*percentile(v, tail), *percentile(v, 100.0 - tail)});
  return out;
}

}  // namespace

Interval bootstrap_percentile_difference(const std::vector<double>& baseline,
                                         const std::vector<double>& candidate, double p,
                                         int resamples, double confidence, std::uint64_t seed) {
  return bootstrap(baseline, candidate, {p}, resamples, confidence, seed,
                   [](double a, double b) { return b - a; })[0];
}

}  // namespace gpuoverlap

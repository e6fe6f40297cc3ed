#include "history/change_points.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace gpuoverlap::history {

namespace {

// The best split of x (all of it, one segment): its index and score. n^2 / 2 distances, then
// one pass moving the split right, each step moving one value from the right side to the left.
struct Split {
  std::size_t at = 0;
  double score = -1;
};
Split best_split(const std::vector<double>& x, std::size_t min_segment) {
  const std::size_t n = x.size();
  Split best;
  if (n < 2 * min_segment) return best;
  // row[i]: sum over j of |x_i - x_j|, split into the part left of the split and the rest.
  double within_left = 0, within_right = 0, across = 0;
  std::vector<double> to_left(n, 0.0), to_right(n, 0.0);  // of each value, to each side
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      const double d = std::fabs(x[i] - x[j]);
      within_right += d;
      to_right[i] += d, to_right[j] += d;
    }
  for (std::size_t t = 1; t < n; ++t) {
    // x[t - 1] moves from the right side to the left.
    const std::size_t v = t - 1;
    within_right -= to_right[v];
    across += to_right[v] - to_left[v];
    within_left += to_left[v];
    for (std::size_t i = 0; i < n; ++i) {
      if (i == v) continue;
      const double d = std::fabs(x[i] - x[v]);
      to_right[i] -= d, to_left[i] += d;
    }
    const double m = static_cast<double>(t), k = static_cast<double>(n - t);
    if (t < min_segment || n - t < min_segment) continue;
    const double energy =
        2.0 * across / (m * k) - within_left / (m * (m - 1) / 2) - within_right / (k * (k - 1) / 2);
    const double score = m * k / (m + k) * energy;
    if (score > best.score) best = {t, score};
  }
  return best;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void search(const std::vector<double>& values, std::size_t begin, std::size_t end,
            const ChangePointSettings& settings, std::mt19937_64& random,
            std::vector<ChangePoint>& out) {
  std::vector<double> segment(values.begin() + static_cast<std::ptrdiff_t>(begin),
                              values.begin() + static_cast<std::ptrdiff_t>(end));
  const Split split = best_split(segment, settings.min_segment);
  if (split.score <= 0) return;
  std::size_t as_good = 0;
  std::vector<double> shuffled = segment;
  for (std::size_t p = 0; p < settings.permutations; ++p) {
    std::shuffle(shuffled.begin(), shuffled.end(), random);
    if (best_split(shuffled, settings.min_segment).score >= split.score) ++as_good;
  }
  const double p_value =
      static_cast<double>(as_good + 1) / static_cast<double>(settings.permutations + 1);
  if (p_value > settings.alpha) return;
  ChangePoint point;
  point.index = begin + split.at;
  point.p_value = p_value;
  out.push_back(point);
  search(values, begin, point.index, settings, random, out);
  search(values, point.index, end, settings, random, out);
}

}  // namespace

std::vector<ChangePoint> change_points(const std::vector<double>& values,
                                       const ChangePointSettings& settings) {
  std::vector<ChangePoint> out;
  ChangePointSettings checked = settings;
  checked.min_segment = std::max<std::size_t>(2, settings.min_segment);  // a side's spread
  for (double v : values)
    if (!std::isfinite(v)) return out;  // the caller's data is checked; NaN has no level
  std::mt19937_64 random(checked.seed);
  search(values, 0, values.size(), checked, random, out);
  std::sort(out.begin(), out.end(),
            [](const ChangePoint& a, const ChangePoint& b) { return a.index < b.index; });
  // Each level as far as its neighbours: the median and a bootstrap interval of the step.
  for (std::size_t c = 0; c < out.size(); ++c) {
    const std::size_t from = c == 0 ? 0 : out[c - 1].index, at = out[c].index;
    const std::size_t to = c + 1 < out.size() ? out[c + 1].index : values.size();
    const std::vector<double> before(values.begin() + static_cast<std::ptrdiff_t>(from),
                                     values.begin() + static_cast<std::ptrdiff_t>(at));
    const std::vector<double> after(values.begin() + static_cast<std::ptrdiff_t>(at),
                                    values.begin() + static_cast<std::ptrdiff_t>(to));
    out[c].before = median_of(before);
    out[c].after = median_of(after);
    out[c].step = out[c].before != 0 ? out[c].after / out[c].before - 1 : 0;
    std::vector<double> steps;
    std::uniform_int_distribution<std::size_t> pick_before(0, before.size() - 1),
        pick_after(0, after.size() - 1);
    std::vector<double> b(before.size()), a(after.size());
    for (int r = 0; r < 999; ++r) {
      for (double& v : b) v = before[pick_before(random)];
      for (double& v : a) v = after[pick_after(random)];
      const double mb = median_of(b);
      if (mb != 0) steps.push_back(median_of(a) / mb - 1);
    }
    if (!steps.empty()) {
      std::sort(steps.begin(), steps.end());
      out[c].step_low = steps[static_cast<std::size_t>(0.025 * (steps.size() - 1))];
      out[c].step_high = steps[static_cast<std::size_t>(0.975 * (steps.size() - 1))];
    }
  }
  return out;
}

}  // namespace gpuoverlap::history

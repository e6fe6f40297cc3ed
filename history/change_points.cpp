#include "history/change_points.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <numeric>
#include <random>
#include <thread>

namespace gpuoverlap::history {

namespace {

// The best split of x (all of it, one segment): its index and score. n^2 / 2 distances, then
// one pass moving the split right, each step moving one value from the right side to the left.
// Called 1 + permutations times per segment, so the buffers are the caller's, reused.
struct Split {
  std::size_t at = 0;
  double score = -1;
};
struct SplitBuffers {
  std::vector<double> distance, to_left, to_right;
};
Split best_split(const std::vector<double>& x, std::size_t min_segment, SplitBuffers& buffers) {
  const std::size_t n = x.size();
  Split best;
  if (n < 2 * min_segment) return best;
  // distance[v * n + i] = |x_v - x_i|; to_left[i], to_right[i]: the sums of x_i's distances to
  // the values left and right of the split.
  double within_left = 0, within_right = 0, across = 0;
  buffers.distance.resize(n * n);
  buffers.to_left.assign(n, 0.0);
  buffers.to_right.assign(n, 0.0);
  double* const distance = buffers.distance.data();
  double* const to_left = buffers.to_left.data();
  double* const to_right = buffers.to_right.data();
  for (std::size_t i = 0; i < n; ++i) {
    distance[i * n + i] = 0;
    for (std::size_t j = i + 1; j < n; ++j) {
      const double d = std::fabs(x[i] - x[j]);
      distance[i * n + j] = distance[j * n + i] = d;
      within_right += d;
      to_right[i] += d, to_right[j] += d;
    }
  }
  for (std::size_t t = 1; t < n; ++t) {
    // x[t - 1] moves from the right side to the left. Only the values still on the right are
    // read again, so only theirs are brought up to date (the same sums, in the same order, as
    // updating all of them).
    const std::size_t v = t - 1;
    within_right -= to_right[v];
    across += to_right[v] - to_left[v];
    within_left += to_left[v];
    const double* const from_v = distance + v * n;
    for (std::size_t i = t; i < n; ++i) {
      to_right[i] -= from_v[i];
      to_left[i] += from_v[i];
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
            const ChangePointSettings& settings, std::mt19937_64& random, SplitBuffers& buffers,
            std::vector<ChangePoint>& out) {
  std::vector<double> segment(values.begin() + static_cast<std::ptrdiff_t>(begin),
                              values.begin() + static_cast<std::ptrdiff_t>(end));
  const Split split = best_split(segment, settings.min_segment, buffers);
  if (split.score <= 0) return;
  std::size_t as_good = 0;
  std::vector<double> shuffled = segment;
  for (std::size_t p = 0; p < settings.permutations; ++p) {
    std::shuffle(shuffled.begin(), shuffled.end(), random);
    if (best_split(shuffled, settings.min_segment, buffers).score >= split.score) ++as_good;
  }
  const double p_value =
      static_cast<double>(as_good + 1) / static_cast<double>(settings.permutations + 1);
  if (p_value > settings.alpha) return;
  ChangePoint point;
  point.index = begin + split.at;
  point.p_value = p_value;
  out.push_back(point);
  search(values, begin, point.index, settings, random, buffers, out);
  search(values, point.index, end, settings, random, buffers, out);
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
  SplitBuffers buffers;
  search(values, 0, values.size(), checked, random, buffers, out);
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

std::vector<std::vector<ChangePoint>> change_points_of_each(
    const std::vector<std::vector<double>>& series, const ChangePointSettings& settings,
    unsigned threads) {
  std::vector<std::vector<ChangePoint>> out(series.size());
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, series.size()));
  // Each thread takes the next series not yet taken and writes only its own out[i].
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < series.size(); i = next++)
      out[i] = change_points(series[i], settings);
  };
  if (threads <= 1) {
    work();
    return out;
  }
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  return out;
}

}  // namespace gpuoverlap::history

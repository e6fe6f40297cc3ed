// Change points in one series of runs (a workload's duration p50 on one machine, run after
// run): where its level moved, found by E-divisive means (Matteson & James, "A Nonparametric
// Approach for Multiple Change Point Analysis of Multivariate Data", JASA 2014), the method
// MongoDB's CI and its open-source descendant Hunter (Apache Otava) use for performance
// history. A regression is a change point, not a comparison with one baseline.
//
// The method, univariate, as built here:
// - A split at t of a segment x[a, b) is scored by Q(t) = m k / (m + k) * E, with m = t - a,
//   k = b - t and E = 2 mean|x_i - y_j| - mean|x_i - x_i'| - mean|y_j - y_j'| (the energy
//   distance between the two sides, alpha = 1). The best split is the t of the largest Q with
//   at least min_segment values on each side.
// - It is kept when a permutation test says so: the segment's values shuffled `permutations`
//   times, the best Q of each shuffle; p = (shuffles scoring at least Q, plus one) / (shuffles
//   plus one). p <= alpha keeps it, and both sides are searched again (binary segmentation).
// - The shuffles come from a fixed seed: the same series always gives the same points.
// No assumption of normal noise or of one change; O(n^2) per score, so a series is judged over
// its newest runs (the callers' window), not its whole history.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpuoverlap::history {

struct ChangePointSettings {
  double alpha = 0.01;             // the permutation test's level, per split tested
  std::size_t permutations = 199;  // shuffles per test: p can reach 1/200
  std::size_t min_segment = 4;     // values on each side of a split, at least (2 or more)
  std::uint64_t seed = 20141103;   // the shuffles' generator
};

struct ChangePoint {
  std::size_t index = 0;  // the first value of the new level
  double p_value = 1;
  // The levels on either side, each as far as the neighbouring change points: medians, and
  // the step as after / before - 1 with a 95 % interval (the medians of bootstrap resamples
  // of both sides, from the same fixed seed).
  double before = 0, after = 0;
  double step = 0, step_low = 0, step_high = 0;
};

// Every change point of `values` (in order, oldest first), sorted by index.
std::vector<ChangePoint> change_points(const std::vector<double>& values,
                                       const ChangePointSettings& settings = {});

// change_points() of every series, out[i] of series[i], on up to `threads` threads (0: as many
// as the hardware runs at once). The answer is the one of calling change_points() on each in
// turn: every series' shuffles start from the seed, whichever thread judges it.
std::vector<std::vector<ChangePoint>> change_points_of_each(
    const std::vector<std::vector<double>>& series, const ChangePointSettings& settings = {},
    unsigned threads = 0);

}  // namespace gpuoverlap::history

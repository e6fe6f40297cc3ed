// Order statistics and least-squares fits for the summaries, the clock checks and the self-test.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace gpuoverlap {

// Percentile p in [0, 100] by linear interpolation between closest ranks (numpy's default,
// so numbers agree with the Python plots). Empty input gives nullopt.
std::optional<double> percentile(std::vector<double> values, double p);

// y = slope * x + intercept by ordinary least squares. r_squared is 1 - SS_res / SS_tot
// (1 when y is constant and fitted exactly). nullopt with fewer than two points or when all
// x are equal. Contract: x.size() == y.size().
struct LinearFit {
  double slope = 0;
  double intercept = 0;
  double r_squared = 0;
  std::size_t points = 0;
};
std::optional<LinearFit> linear_fit(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace gpuoverlap

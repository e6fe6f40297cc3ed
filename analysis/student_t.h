// Student's t distribution, for intervals over a handful of rounds or runs (where the normal
// approximation is too narrow: with 6 rounds, the 97.5 % point is 2.57, not 1.96).
#pragma once

#include <cstddef>
#include <vector>

namespace gpuoverlap {

// A sample's mean, its variance (divided by n - 1) and the standard error of the mean: what
// a Student's t interval over rounds, runs or blocks needs. variance and standard_error are 0
// for fewer than two values, mean is 0 for none.
struct SampleSpread {
  double mean = 0, variance = 0, standard_error = 0;
  std::size_t n = 0;
};
SampleSpread sample_spread(const std::vector<double>& values);

// P(T > t) for T ~ Student's t with `df` degrees of freedom. Contract: df > 0.
double student_t_upper_tail(double t, double df);

// The t with P(T > t) = upper_tail, for 0 < upper_tail < 1. Contract: df > 0.
double student_t_quantile_upper(double upper_tail, double df);

}  // namespace gpuoverlap

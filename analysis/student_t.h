// Student's t distribution, for intervals over a handful of rounds or runs (where the normal
// approximation is too narrow: with 6 rounds, the 97.5 % point is 2.57, not 1.96).
#pragma once

namespace gpuoverlap {

// P(T > t) for T ~ Student's t with `df` degrees of freedom. Contract: df > 0.
double student_t_upper_tail(double t, double df);

// The t with P(T > t) = upper_tail, for 0 < upper_tail < 1. Contract: df > 0.
double student_t_quantile_upper(double upper_tail, double df);

}  // namespace gpuoverlap

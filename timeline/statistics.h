// Order statistics and least-squares fits for the summaries, the clock checks and the self-test.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace gpuoverlap {

// Percentile p in [0, 100] by linear interpolation between closest ranks (numpy's default,
// so numbers agree with the Python plots). Empty input gives nullopt.
std::optional<double> percentile(std::vector<double> values, double p);

// percentile() of `sorted_all` with the values of `sorted_removed` taken out (once each), as
// for a leave-one-out threshold, without copying or sorting again: for a high p it walks only
// the top of both. Contract: both sorted ascending, `sorted_removed` a sub-multiset of
// `sorted_all`. nullopt when nothing is left.
std::optional<double> percentile_without(const std::vector<double>& sorted_all,
                                         const std::vector<double>& sorted_removed, double p);

// A distribution-free confidence interval of the p-th percentile from order statistics: the
// sample's ranks l and u chosen from Binomial(n, p/100) so that [x_(l), x_(u)] holds the
// true percentile with at least `confidence`. A side is nullopt when the sample is too small
// to bound it (the upper bound of a p99 needs at least 367 values at 95 %).
struct PercentileInterval {
  std::optional<double> low, high;
};
PercentileInterval percentile_interval(std::vector<double> values, double p,
                                       double confidence = 0.95);

// Wilson's score interval of a share: `hits` of `trials`, as a fraction in [0, 1]; `z` the
// normal quantile of the two-sided level (1.96: 95 %). Unlike the normal approximation it stays
// inside [0, 1] and is not empty at 0 or 1 hits, where overlap shares often are. Contract:
// hits <= trials, trials > 0.
struct ShareInterval {
  double low = 0, high = 0;
};
ShareInterval wilson_interval(std::size_t hits, std::size_t trials, double z = 1.959964);

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

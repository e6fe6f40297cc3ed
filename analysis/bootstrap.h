// Percentile bootstrap of the difference of a percentile between two independent samples
// (compare's frames method).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace gpuoverlap {

struct Interval {
  double low = 0, high = 0;
};

// The `confidence` interval of percentile_p(candidate) - percentile_p(baseline), from
// `resamples` resamplings of each sample with replacement. Deterministic for a given seed, so
// a CI gate gives the same verdict on the same files. Contract: both samples non-empty.
Interval bootstrap_percentile_difference(const std::vector<double>& baseline,
                                         const std::vector<double>& candidate, double p,
                                         int resamples = 2000, double confidence = 0.95,
                                         std::uint64_t seed = 0x9e3779b97f4a7c15ull);

}  // namespace gpuoverlap

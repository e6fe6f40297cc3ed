// Order statistics for the summaries.
#pragma once

#include <optional>
#include <vector>

namespace gpuoverlap {

// Percentile p in [0, 100] by linear interpolation between closest ranks (numpy's default,
// so numbers agree with the Python plots). Empty input gives nullopt.
std::optional<double> percentile(std::vector<double> values, double p);

}  // namespace gpuoverlap

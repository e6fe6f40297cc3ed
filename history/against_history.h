// A new run judged against the runs its machine made before (`history compare`, `compare
// --against-history`): per metric, the new value against the median and range of the same
// metric over the machine's last runs. Changed means beyond the threshold from their median
// *and* outside every one of them: a spread the machine always had is never called a change.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "history/history_rows.h"

namespace gpuoverlap::history {

// (scenario, series, metric, clock) -> the machine's earlier values, oldest first.
using MetricKey = std::tuple<std::string, std::string, std::string, std::string>;
using PastValues = std::map<MetricKey, std::vector<double>>;

inline constexpr std::size_t kMinPastRuns = 3;

struct Judgement {
  MetricRow metric;
  std::size_t runs = 0;  // earlier runs with the metric
  // With at least kMinPastRuns earlier runs:
  std::optional<double> median, low, high;  // their median and range
  std::optional<double> change;             // value / median - 1
  bool judged = false, changed = false;
};

// Every metric of `run`, judged against `past` (its last runs only: the caller trims).
std::vector<Judgement> judge_against(const std::vector<MetricRow>& run, const PastValues& past,
                                     double threshold_pct);

}  // namespace gpuoverlap::history

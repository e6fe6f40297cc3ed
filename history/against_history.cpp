#include "history/against_history.h"

#include <algorithm>
#include <cmath>

namespace gpuoverlap::history {

std::vector<Judgement> judge_against(const std::vector<MetricRow>& run, const PastValues& past,
                                     double threshold_pct) {
  std::vector<Judgement> out;
  for (const MetricRow& m : run) {
    Judgement j;
    j.metric = m;
    const auto it = past.find({m.scenario, m.series, m.metric, m.clock});
    if (it != past.end()) j.runs = it->second.size();
    if (j.runs >= kMinPastRuns) {
      std::vector<double> sorted = it->second;
      std::sort(sorted.begin(), sorted.end());
      const std::size_t n = sorted.size();
      j.median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
      j.low = sorted.front();
      j.high = sorted.back();
      j.change = *j.median != 0 ? m.value / *j.median - 1 : 0;
      j.judged = true;
      const bool outside = m.value < *j.low || m.value > *j.high;
      j.changed = outside && std::fabs(*j.change) * 100 > threshold_pct;
    }
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace gpuoverlap::history

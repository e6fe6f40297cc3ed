// Baseline vs candidate: for every scenario, workload and metric (start, end, duration, each
// dependency's gap) the p50 and p95 of both runs, and whether the change is real. A change
// counts when the whole 95% bootstrap interval of the difference lies beyond the threshold,
// i.e. beyond threshold_pct of the baseline (and at least min_change_us): a change the noise
// of either run could explain never fails the gate.
#pragma once

#include <string>
#include <vector>

#include "analysis/bootstrap.h"
#include "analysis/results.h"

namespace gpuoverlap {

struct CompareOptions {
  double threshold_pct = 10.0;
  double min_change_us = 1.0;
  Clock clock = Clock::poll;
  int resamples = 2000;
};

struct CompareRow {
  std::string scenario, workload, metric;  // metric: "start", "end", "duration", "gap <- X"
  double baseline[2] = {0, 0};             // p50, p95 (µs)
  double candidate[2] = {0, 0};
  Interval difference[2];  // bootstrap interval of candidate - baseline
  std::string verdict;     // "ok", "slower", "faster"
};

struct CompareResult {
  std::vector<CompareRow> rows;
  std::vector<std::string> unmatched;  // baseline scenarios/workloads the candidate lacks
  bool changed = false;                // some row is slower or faster beyond the threshold
  // Where each side ran (platform_of its first scenario), and whether the APIs differ: a
  // Vulkan run against a D3D12 run compares the APIs' translations and drivers too.
  std::string baseline_platform, candidate_platform;
  bool different_apis = false;
};

CompareResult compare_runs(const LoadedRun& baseline, const LoadedRun& candidate,
                           const CompareOptions& options);
std::string compare_table(const CompareResult& result, const CompareOptions& options);
std::string compare_csv(const CompareResult& result);

}  // namespace gpuoverlap

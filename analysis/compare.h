// Baseline vs candidate: for every scenario, workload and metric (start, end, duration, each
// dependency's gap) the p50 and p95 of both sides, and whether the change is real. For every
// scenario with a game frame (a [cpu] table, a study's foreground) the same for what a player
// feels: the frame interval, the shares of late frames and stutters, the CPU phase, the
// critical path and the worst wake-up (frames.csv). A study's rounds are pooled per condition
// (a study may run a different number of rounds on each side), and each condition's decision
// in verdict.json is compared too.
//
// Two methods, chosen by how many runs each side has (the table says which):
// - `runs` (more than one run on either side): the unit of evidence is the run. Each run
//   gives one p50 and one p95 per metric; a metric changed when every candidate run lies
//   beyond every baseline run by more than the threshold. Runs of one configuration differ
//   from each other by more than their frames suggest (on the H100, `no-barriers` settles
//   into one of a few schedules per run, and a p95 flips between two values), and only other
//   runs can show that. Under no change, with n baseline and m candidate runs in random
//   order, a metric is wholly beyond the baseline by chance with probability at most
//   2 / C(n+m, m) before the threshold is applied (a permutation argument; 0.8 % at 5 + 5).
// - `frames` (one run per side): the frames are the unit; a change counts when the whole 95 %
//   bootstrap interval of the difference lies beyond the threshold (for a share of frames, the
//   Agresti-Caffo interval of the difference of two proportions). It cannot see run-to-run
//   variation: measured on the H100, it raised a false alarm on 11 of 20 pairs of identical
//   runs (docs/results/2026-11-24-h100-compare-noise/).
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/bootstrap.h"
#include "analysis/decision.h"
#include "analysis/results.h"
#include "core/enum_names.h"

namespace gpuoverlap {

enum class CompareMethod { frames, runs };

struct CompareOptions {
  // Unset: 10 % with one run per side, 5 % with several (whose noise the runs account for).
  std::optional<double> threshold_pct;
  double min_change_us = 1.0;
  // A share of frames (late, stutters) changes by at least this many percentage points.
  double min_change_share_pct = 1.0;
  Clock clock = Clock::poll;
  int resamples = 2000;  // the frames method's bootstrap
};

// Which table a row belongs to, and what its two statistics are.
enum class CompareSection {
  workloads,    // a workload's start, end, duration or gap: p50 and p95, µs
  frames,       // a frame's interval, CPU phase, critical path, wake-up: p50 and p99, µs
  frame_share,  // late frames or stutters: one statistic, the share of frames in %
};
inline constexpr EnumNames<CompareSection, 3> kCompareSectionNames{
    {{CompareSection::workloads, "workloads"},
     {CompareSection::frames, "frames"},
     {CompareSection::frame_share, "frame_share"}}};

// A row's outcome against the threshold (the CSV's `verdict` column).
enum class CompareOutcome { ok, slower, faster };
inline constexpr EnumNames<CompareOutcome, 3> kCompareOutcomeNames{
    {{CompareOutcome::ok, "ok"},
     {CompareOutcome::slower, "slower"},
     {CompareOutcome::faster, "faster"}}};
std::string_view to_string(CompareOutcome outcome);

struct CompareRow {
  std::string scenario, workload, metric;  // metric: "start", "end", "duration", "gap <- X"
  CompareSection section = CompareSection::workloads;
  // p50 and p95 (frames: p99) in µs, or [0] the share in %. With several runs: the median over
  // the side's runs of each run's value.
  double baseline[2] = {0, 0};
  double candidate[2] = {0, 0};
  // frames: the bootstrap interval of candidate - baseline. runs: the smallest and largest
  // difference between a candidate run and a baseline run.
  Interval difference[2];
  CompareOutcome outcome = CompareOutcome::ok;
};

// A study condition whose decision (verdict.json) is not the same on both sides: each run's
// decision, and the most frequent per side. A change from one decided call to the other
// (non-intrusive against intrusive), each held by more than half of its side's runs, fails the
// gate; a move to or from inconclusive, or a side split between calls, is reported.
struct DecisionChange {
  std::string study, condition;
  std::vector<std::optional<Decision>> baseline, candidate;  // per run; nullopt: none there
  std::optional<Decision> baseline_mode, candidate_mode;
  bool gates = false;
};

struct CompareResult {
  CompareMethod method = CompareMethod::frames;
  std::size_t baseline_runs = 0, candidate_runs = 0;
  double threshold_pct = 10.0;  // the one applied
  // runs: 2 / C(n+m, m), the chance that an unchanged metric separates (before the threshold).
  double chance_per_metric = 0;
  std::vector<CompareRow> rows;
  std::vector<DecisionChange> decision_changes;
  std::vector<std::string> unmatched;  // baseline scenarios/metrics a run lacks
  std::vector<std::string> warnings;   // too few runs, mixed platforms within a side
  bool changed = false;  // a row slower or faster beyond the threshold, or a decision that gates
  // Where each side ran (platform_of its first scenario), and whether the APIs differ: a
  // Vulkan run against a D3D12 run compares the APIs' translations and drivers too.
  std::string baseline_platform, candidate_platform;
  bool different_apis = false;
};

// Contract: both sides non-empty. The first baseline run names the scenarios and metrics.
CompareResult compare_runs(std::span<const LoadedRun> baseline,
                           std::span<const LoadedRun> candidate, const CompareOptions& options);
// One run per side (the frames method).
inline CompareResult compare_runs(const LoadedRun& baseline, const LoadedRun& candidate,
                                  const CompareOptions& options) {
  return compare_runs({&baseline, 1}, {&candidate, 1}, options);
}

// The unit compare matches a scenario by: its name, or a study round's condition
// ("study/condition", the round's suffix taken off), whose rounds are pooled.
std::string compare_unit(const LoadedScenario& scenario);

// The interval (95 %) of the difference of two proportions, candidate - baseline, in
// percentage points (Agresti and Caffo, 2000: one success and one failure added to each side).
// Contract: both counts of frames non-zero.
Interval share_difference_interval(std::size_t baseline_hits, std::size_t baseline_frames,
                                   std::size_t candidate_hits, std::size_t candidate_frames);

// 2 / C(n+m, m), capped at 1.
double separation_chance(std::size_t baseline_runs, std::size_t candidate_runs);

std::string to_string(CompareMethod method);
// compare --csv's columns. `section` and `upper_percentile` came last: a `frames` row's
// *_p95_* columns hold its p99, a `frame_share` row's *_p50_* columns a share in % (points) and
// its *_p95_* columns are empty.
inline constexpr std::array<std::string_view, 14> kCompareColumns{
    "scenario",         "workload",        "metric",           "baseline_p50_us",
    "candidate_p50_us", "diff_p50_low_us", "diff_p50_high_us", "baseline_p95_us",
    "candidate_p95_us", "diff_p95_low_us", "diff_p95_high_us", "verdict",
    "section",          "upper_percentile"};

std::string compare_table(const CompareResult& result, const CompareOptions& options);
std::string compare_csv(const CompareResult& result);

}  // namespace gpuoverlap

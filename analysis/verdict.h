// The non-intrusiveness verdict of a study (DESIGN.md section 5): every condition's per-frame
// metrics against the baseline's, with bootstrap confidence intervals of the median and p99
// ratios and a Mann-Whitney rank test, and whether the positive control was detected (if it
// was not, the study had no power to see intrusion and no condition is called
// non-intrusive). API neutral: it reads the in-memory timelines the suite runner returns.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "engine/suite_runner.h"

namespace gpuoverlap {

// The columns first, then ours (append, never reorder).
inline constexpr std::array<std::string_view, 18> kVerdictColumns = {
    "condition",       "metric",     "baseline_p50", "p50",    "ratio_p50",
    "ci_low",          "ci_high",    "baseline_p99", "p99",    "ratio_p99",
    "verdict",         "p99_ci_low", "p99_ci_high",  "rank_p", "frames",
    "baseline_frames", "control",    "note"};

struct VerdictSettings {
  // A condition is intrusive on a metric when the median ratio's whole interval lies above
  // 1 + p50_margin (and the rank test agrees at alpha), or the p99 ratio's lies above
  // 1 + p99_margin; non-intrusive when both intervals lie below. Differences smaller than
  // min_difference_us are never intrusive (sub-microsecond noise on tiny values).
  double p50_margin = 0.05;
  double p99_margin = 0.25;
  double alpha = 0.01;
  double min_difference_us = 1.0;
  double confidence = 0.95;
  int resamples = 2000;
  std::uint64_t seed = 0x9e3779b97f4a7c15ull;
  std::size_t min_frames = 20;  // fewer usable frames than this: inconclusive
};

struct VerdictRow {
  std::string condition, metric;
  double baseline_p50 = 0, p50 = 0, baseline_p99 = 0, p99 = 0;
  std::optional<double> ratio_p50, ci_low, ci_high, ratio_p99, p99_ci_low, p99_ci_high;
  double rank_p = 1;
  std::size_t frames = 0, baseline_frames = 0;
  bool control = false;
  std::string verdict;  // non-intrusive | intrusive | inconclusive | inconclusive (no power)
  std::string note;
};

struct ConditionVerdict {
  std::string condition;
  bool control = false;
  std::string verdict;            // over its metrics: intrusive if any is, non-intrusive if all are
  std::size_t frames = 0;         // measured frames
  std::size_t active_frames = 0;  // of them, frames its background work overlapped
};

struct StudyVerdict {
  std::string study;
  std::string baseline;
  std::uint32_t rounds = 1;  // each condition's frames are pooled over its rounds
  std::string gpu_clock;     // the clock of the gpu_duration metrics: "ts" or "poll"
  std::vector<VerdictRow> rows;
  std::vector<ConditionVerdict> conditions;  // baseline excluded
  bool has_control = false;
  bool control_detected = false;
  std::string summary;  // one line per condition, for the terminal and verdict.json
};

// Per-frame samples of one condition, by metric name: cpu_frame_us, cpu_submit_us,
// submit_to_start_us, poll_gap_max_us, gpu_duration_us:<workload> (on `gpu_clock`). Only ok
// frames; with `active_only`, only frames some background compile overlapped.
std::vector<std::pair<std::string, std::vector<double>>> verdict_metrics(
    const Scenario& scenario, const ScenarioTimeline& timeline, const std::string& gpu_clock,
    bool active_only);

// Mann-Whitney U, one-sided: the p-value of "candidate tends to be larger than baseline"
// (normal approximation with tie correction and continuity correction). 1 when either is
// empty.
double rank_test_greater_p(const std::vector<double>& baseline,
                           const std::vector<double>& candidate);

// The study's verdict. Contract: `outcomes` are the scenarios of one study (every round of
// every condition), each measured; exactly one condition has no background (the baseline).
// A condition's rounds are pooled.
Result<StudyVerdict> judge_study(const std::vector<const ScenarioOutcome*>& outcomes,
                                 const VerdictSettings& settings);

std::string verdict_csv(const StudyVerdict& verdict);
nlohmann::json verdict_json(const StudyVerdict& verdict, const VerdictSettings& settings);

// For every study in the outcome: judge it and write OUT/<study>/verdict.csv and
// verdict.json; the summary goes to `log`. A study whose conditions did not all complete is
// reported and skipped.
Status write_study_verdicts(const SuiteOutcome& outcome, const std::filesystem::path& out,
                            const VerdictSettings& settings, std::ostream& log);

}  // namespace gpuoverlap

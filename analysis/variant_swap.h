// The benefit side of background processing: a scenario that binds committed variants
// (BackgroundSpec::bind_committed) runs its compute workloads with the build-time pipelines
// first and with the committed variant after the swap. This compares each workload's GPU
// duration on the frames before the swap with the frames after it.
//
// Method: the ratio of the medians (after / before) over all frames, and a 95 % interval from
// blocks of consecutive frames (6 per side by default): Welch's t on the logs of the block
// medians. Blocks rather than frames, because consecutive frames share the machine's state
// (clocks, temperature); a frame-level interval would be too narrow. The swap happens once
// per run, so drift during the run is not separated from the swap: for a claim, repeat the run
// (`compare` of several runs) or read the block medians' trend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/results.h"
#include "core/enum_names.h"
#include "engine/suite_runner.h"

namespace gpuoverlap {

// What a swap did to a workload's duration: faster or slower where the ratio's interval
// excludes 1, no difference where it holds it, too few frames where there is no interval.
enum class SwapCall { faster, slower, no_difference, too_few_frames };
inline constexpr EnumNames<SwapCall, 4> kSwapCallNames{
    {{SwapCall::faster, "faster"},
     {SwapCall::slower, "slower"},
     {SwapCall::no_difference, "no difference detected"},
     {SwapCall::too_few_frames, "too few frames for an interval"}}};
inline std::string_view to_string(SwapCall call) { return name_of(kSwapCallNames, call); }

struct VariantSwap {
  std::string workload;
  std::uint64_t variant = 0;  // the compile it ran after the swap (background.csv's number)
  Clock clock = Clock::poll;  // ts where both sides have timestamps, else poll
  std::size_t before_frames = 0, after_frames = 0;
  double before_median_us = 0, after_median_us = 0;
  double ratio = 1;  // after / before medians
  // The 95 % interval of the ratio; unset with fewer than 2 blocks on a side.
  std::optional<double> ratio_low, ratio_high;
  SwapCall call = SwapCall::too_few_frames;
};

// One workload's frames, in frame order: the variant it ran (0: build-time) and its GPU
// duration. Before: frames with variant 0 ahead of the first swap; after: frames running the
// last variant bound. Nullopt when either side has no frame.
struct SwapSample {
  std::uint32_t frame = 0;
  std::uint64_t variant = 0;
  double duration_us = 0;
};
std::optional<VariantSwap> judge_swap(const std::string& workload, Clock clock,
                                      const std::vector<SwapSample>& samples,
                                      std::size_t blocks = 6);

// Every workload of a scenario that ran a committed variant, from its records (ok rows only).
std::vector<VariantSwap> variant_swaps(const LoadedScenario& scenario);
std::vector<VariantSwap> variant_swaps(const Scenario& scenario, const ScenarioTimeline& timeline);

// "Compute A (ts): 512.3 -> 498.1 us, x0.972 [0.965, 0.980] after compile #10: faster"
std::string describe(const VariantSwap& swap);
// The run's lines for every scenario that swapped; empty when none did.
std::string variant_swap_lines(const SuiteOutcome& outcome);

// A study condition that binds committed variants: per compute workload, the benefit over its
// rounds. Each round is one before/after comparison (judge_swap); the rounds' log ratios give
// the geometric mean and a 95 % Student's t interval, so the unit is the round, as in the
// cost verdict (analysis/verdict.h). A study of one round keeps that round's block interval.
struct StudyBenefit {
  std::string condition, workload;
  Clock clock = Clock::poll;
  std::size_t rounds = 0;
  double ratio = 1;
  std::optional<double> ratio_low, ratio_high;
  SwapCall call = SwapCall::too_few_frames;
};
// Contract: `outcomes` are the scenarios of one study (any order).
std::vector<StudyBenefit> study_benefits(const std::vector<const ScenarioOutcome*>& outcomes);
// "managed-bound: Compute A (ts) x0.978 [0.975, 0.981] over 12 rounds: faster"
std::string describe(const StudyBenefit& benefit);

}  // namespace gpuoverlap

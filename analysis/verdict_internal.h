// Private to the study verdict's files (verdict.cpp and the verdict_*.cpp, background_progress.cpp,
// study_progress.cpp and write_verdicts.cpp beside it): the evidence's types and the steps they
// share. Nothing outside analysis/ includes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/verdict.h"

namespace gpuoverlap::verdict_internal {

using Samples = std::vector<std::pair<std::string, std::vector<double>>>;

// One unit of evidence: a round of the baseline and the same round of a condition (or a block
// of each, for a study of one round), metric by metric.
struct Unit {
  Samples baseline, condition;
};

// verdict_units.cpp: which frames are evidence, and how a condition's pair with the baseline's.

// An alternating condition's two sides (BackgroundSpec::alternate_frames): frames of running
// blocks that its background work overlapped, against frames of held blocks that no compile
// overlapped. A compile still finishing from the block before would put the condition's own
// load into its baseline, and so hide intrusion.
bool running_side(const FrameRecord& f);
bool held_side(const FrameRecord& f);
bool any_frame(const FrameRecord&);

std::uint32_t alternate_frames(const Scenario& s);

// The units of one condition: its rounds paired with the baseline's by round number, or, for a
// study of one round, `blocks` blocks of consecutive frames of each. An alternating condition
// (alternate_frames > 0) is its own baseline: each pair of adjacent blocks of each of its runs.
// `block`: the condition's alternate_frames (0: none). `condition_side`: the condition's frames
// that are evidence (those its background work overlapped; every frame in a study of
// neighbours).
std::vector<Unit> units_of(const std::vector<const ScenarioOutcome*>& baseline_rounds,
                           const std::vector<const ScenarioOutcome*>& rounds, Clock gpu_clock,
                           const VerdictSettings& settings, std::uint32_t block,
                           bool (*condition_side)(const FrameRecord&));

// The rounds of one condition, their samples concatenated metric by metric.
Samples pooled_metrics(const std::vector<const ScenarioOutcome*>& rounds, Clock gpu_clock,
                       bool (*use_frame)(const FrameRecord&));

const std::vector<double>& samples_of(const Samples& samples, std::string_view metric);

// verdict_metric.cpp: the endpoint tests.

// Judges one metric of one condition. `baseline` and `sample` are all usable frames (for the
// descriptive columns and the tail's threshold); `units` the same metric per unit. `tests` is
// K, the condition's intrusion tests.
VerdictRow judge_metric(const std::string& condition, const Endpoint& endpoint,
                        std::size_t metric_index, const std::vector<double>& baseline,
                        const std::vector<double>& sample, const std::vector<Unit>& units,
                        std::size_t tests, const VerdictSettings& settings);

// verdict_pacing.cpp: the frame's period, and its pacing in words.

// The period a frame's effects are shares of: the pace, or unpaced the baseline's median frame
// interval.
std::optional<double> frame_period_us(const Scenario& s, const Samples& baseline);

// "327 of 523 frames late (beyond 8.40 ms; baseline 4 of 600), 36 stutters (2), frame
// interval p50 9,428 µs (8,001), 1 % low 88 fps (121)".
std::string describe_pacing(const PacingSummary& p, const PacingSummary& baseline,
                            double late_line_us);

// background_progress.cpp: how much background work a condition got done.

BackgroundProgress background_progress(const std::string& condition, std::uint32_t threads,
                                       const std::vector<const ScenarioOutcome*>& rounds);

// The control's smallest dose's progress (its rate of unmanaged compiles), or none without a
// positive control.
const BackgroundProgress* control_rate_of(const std::vector<ConditionVerdict>& conditions);

// verdict_summary.cpp: StudyVerdict::summary, one line per condition, then the study's.
// `baseline_rounds`: the baseline's scenarios; `neighbours`: a study of neighbours.
std::string study_summary(const StudyVerdict& verdict, const Scenario& foreground,
                          const std::vector<const ScenarioOutcome*>& baseline_rounds,
                          bool neighbours);

// study_progress.cpp: where a study stands.

// A row that more rounds could still decide; the control's rows do not hold a study back.
// Nor do the null control's: they check the error control, and the study need not wait on them.
bool undecided(const VerdictRow& r);

// The scenarios of each study in `outcome`, in run order; a study with a failed scenario is
// marked incomplete.
struct StudyOutcomes {
  std::map<std::string, std::vector<const ScenarioOutcome*>> studies;
  std::map<std::string, bool> complete;
};

StudyOutcomes study_outcomes(const SuiteOutcome& outcome);

}  // namespace gpuoverlap::verdict_internal

// The report's first screen: the five questions the suite promises to answer, answered for
// the run's device from the scenarios that ask them, each with its number, a verdict word and
// the figure that shows it. A question whose scenarios did not run says which to run.
//
// 1. Does DIRECT overlap COMPUTE?              `default` (else high-priority-compute)
// 2. Do dispatches on one queue overlap?       `no-barriers`
// 3. What does each barrier kind cost?         `barrier-cost` (else the `three-dispatches` family)
// 4. Is background processing non-intrusive?   each study's verdict.json
// 5. How fast does high-priority compute get the GPU?   every preemption scenario's summary
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/csv_table.h"
#include "analysis/results.h"
#include "analysis/study_files.h"
#include "preemption/preemption_analysis.h"
#include "queues/queue_model.h"
#include "scenarios/preemption_spec.h"

namespace gpuoverlap {

// Per frame of one scenario, on `clock`: did a workload of one kind of queue run while a
// workload of another (cross-queue) or of the same queue (same-queue) ran? Only ok records.
struct OverlapCount {
  std::size_t frames = 0;      // ok frames with at least two workloads on the clock
  std::size_t overlapped = 0;  // of them, frames where some such pair overlapped
  double overlap_p50_us = 0;   // median over overlapped frames of the frame's longest overlap
};
// Pairs of a DIRECT-queue and a COMPUTE-queue workload (records.csv `queue_type`).
OverlapCount direct_compute_overlap(const LoadedScenario& scenario, Clock clock);
// Pairs of workloads on the same queue (records.csv `queue`).
OverlapCount same_queue_overlap(const LoadedScenario& scenario, Clock clock);

// The clock a question is answered on: timestamps where the scenario has them, else the poll
// clock; nullopt where no ok record has either.
std::optional<Clock> answer_clock(const LoadedScenario& scenario);

// One preemption scenario's urgent-job latency from its summary.csv (the poll clock's row,
// else the timestamp clock's): a cell of a matrix, or a preemption preset run alone.
struct PreemptionCell {
  std::string relative;  // the scenario's folder under the results
  std::string load;      // the load's name ("?" where meta.json names none)
  // Asked and granted (none where meta.json says neither).
  std::optional<QueuePriority> priority, priority_granted;
  preemption::ProcessMode process = preemption::ProcessMode::same;
  Clock clock = Clock::poll;
  std::optional<preemption::PreemptionClass> preemption_class;  // none where summary.csv names none
  double p50_us = 0, p99_us = 0, misses = 0;
  std::optional<double> load_slowdown;
};
struct PreemptionCells {
  std::vector<PreemptionCell> cells;  // in run order
  std::vector<std::string> damaged;   // scenarios whose summary.csv could not be read
};
PreemptionCells preemption_cells(const LoadedRun& run);

// A priority as the files name it; "?" where they named none.
std::string priority_text(const std::optional<QueuePriority>& priority);
// A class as summary.csv names it; "" where it named none.
std::string name_or_blank(const std::optional<preemption::PreemptionClass>& preemption_class);

// Answer 5's line for one load (and process mode): its class and each
// priority's p50 / p99, and whether priority changed anything (the highest priority's p50 and
// p99 against the lowest's, beyond 1.5x either way, or another class). `cells`: that load's
// cells, any order.
std::string preemption_load_line(const std::string& load, preemption::ProcessMode process,
                                 std::vector<const PreemptionCell*> cells);

// The dependency gaps (consumer start minus producer end) of every scenario the answers read
// (answer_scenarios: at the results' top level, or its rounds measured alone, pooled) that has
// one, on its answer_clock: what each barrier costs.
struct BarrierGap {
  std::string scenario, producer, consumer, barrier;
  Clock clock = Clock::poll;
  std::vector<double> values_us;
};
std::vector<BarrierGap> barrier_gaps(const LoadedRun& run);

// A scenario against its legacy twin, the same work behind legacy barriers: "<base>-legacy"
// against "<base>" and every "<base>-<variant>" at the results' top level whose default
// barrier is not legacy (mip-chain against mip-chain-legacy, three-dispatches-enhanced against
// three-dispatches-legacy). Compared on the frame-level endpoint, frames.csv's gpu_span_us
// (first workload's start to last one's end, on the timestamps where a frame has them): p50
// of each and a 95 % bootstrap interval over frames of the difference.
//
// Frames of one run each, and the twins run one after the other: the interval cannot see the
// run-to-run (A/A) noise, which on an H100 moved such a difference by up to 0.3 % of the span
// between two runs, its sign included (docs/results/2026-11-26-h100-barrier-twins). So a
// difference counts only beyond a margin of kTwinMarginOfSpan of the twin's span: dearer or
// cheaper where the whole interval lies beyond it, "same" where it lies within it,
// "undecided" where it straddles it.
//
// Besides that endpoint, which decides, each clock the two runs share gives a diagnostic entry:
// the frame's span from its records on that clock (first start to last end, frames whose every
// workload has the clock, on the poll clock none of their stamps disturbed), judged the same way,
// where each side has at least kTwinMinClockFrames such frames (a busy host's poll clock may
// leave one, and an interval of one frame against one says nothing).
inline constexpr double kTwinMarginOfSpan = 0.005;
inline constexpr std::size_t kTwinMinClockFrames = 10;
// A twin's call, as above.
enum class TwinOutcome { dearer, cheaper, same, undecided };
inline constexpr EnumNames<TwinOutcome, 4> kTwinOutcomeNames{
    {{TwinOutcome::dearer, "dearer"},
     {TwinOutcome::cheaper, "cheaper"},
     {TwinOutcome::same, "same"},
     {TwinOutcome::undecided, "undecided"}}};
struct BarrierTwin {
  std::string scenario, legacy_twin, barrier;  // barrier: the scenario's default barrier
  std::optional<Clock> clock;                  // nullopt: frames.csv's gpu_span_us, the endpoint
  std::size_t frames = 0, twin_frames = 0;
  double span_p50_us = 0, twin_span_p50_us = 0;
  double difference_low_us = 0, difference_high_us = 0;  // scenario minus twin, 95 %
  double margin_us() const { return kTwinMarginOfSpan * twin_span_p50_us; }
  TwinOutcome outcome() const {
    if (difference_low_us > margin_us()) return TwinOutcome::dearer;
    if (difference_high_us < -margin_us()) return TwinOutcome::cheaper;
    if (difference_low_us >= -margin_us() && difference_high_us <= margin_us())
      return TwinOutcome::same;
    return TwinOutcome::undecided;
  }
};
// Per twin, the endpoint's entry first, then one per clock (poll, ts, clk) both runs have.
std::vector<BarrierTwin> barrier_twins(const LoadedRun& run);

// The scenario's folder under the results ("default", "study/cond/round-1"); a lone scenario
// directory: its name.
std::string relative_of(const LoadedRun& run, const LoadedScenario& s);
// True for a scenario at the results' top level (a preset run on its own).
bool is_top_level(const LoadedRun& run, const LoadedScenario& s);

// The scenarios the answers read, in run order: each one at the results' top level, and, in a
// device's folder of `run --concurrency-rounds`, each scenario's rounds measured alone
// ("S/alone/round-N", the neighbours study's `alone` condition) pooled into one named S, their
// frames numbered one round after another. The `together` rounds measure the neighbours'
// disturbance (answer 6), not the device's own answers.
struct AnswerScenario {
  std::string name;                // the folder at the top level, or the study's name
  const LoadedScenario* scenario;  // the run's own, or one of AnswerScenarios::pooled
  bool pooled_rounds = false;
};
struct AnswerScenarios {
  std::vector<AnswerScenario> entries;
  std::vector<std::unique_ptr<LoadedScenario>> pooled;  // owns the pooled scenarios
  // The entry named `name`; nullptr when there is none.
  const AnswerScenario* find(const std::string& name) const;
};
AnswerScenarios answer_scenarios(const LoadedRun& run);

// A study of the run: its folder under the results (the first folder of its scenarios) and
// its verdict files, read once (analysis/study_files.h). In run order.
// `neighbours`: a study of neighbours (run --concurrency-rounds: this device with the run's
// other devices busy against alone), not of background work.
struct StudyFile {
  std::string name;
  bool neighbours = false;
  // verdict.json; none where it is missing or unreadable (no_verdict_reason says why).
  std::optional<LoadedStudyVerdict> verdict;
  // Why verdict.json could not be read where it exists ("" when it was read or is missing),
  // without the file's path (`conditions[0].verdict: 'fine' is none of …`).
  std::string verdict_error;
  // verdict.csv's rows, and why they could not be read ("" when they could).
  std::vector<VerdictRow> rows;
  std::string rows_error;
};
std::vector<StudyFile> read_studies(const LoadedRun& run);

// Why a study has no verdict: verdict.json's damage where it exists, else what its scenarios'
// statuses say (missing_verdict_reason).
std::string no_verdict_reason(const LoadedRun& run, const StudyFile& study);

// A verdict.csv row's effect as text, what its endpoint tests: the median's ratio where it tests
// that, the tail's excess where it tests that, each with its interval when `intervals`
// (" ×1.008 [0.980, 1.026], tail +0.5 pts [-0.2, +1.2]"); "" when neither has a value.
std::string endpoint_effect(const VerdictRow& row, bool intervals);

// A study of neighbours' answer in one line of Markdown: "**not disturbed** (cpu_frame_us
// ×1.002 [0.998, 1.006], …; 3 rounds)" from its verdict.csv's primary rows, or why there is none.
std::string neighbours_answer(const LoadedRun& run, const StudyFile& study);

// What report.md reads beside the records, read once and shared by the answers, the tables
// and the details page.
struct ReportInputs {
  std::vector<StudyFile> studies;
  PreemptionCells preemption;
};
ReportInputs read_report_inputs(const LoadedRun& run);

// The "## Answers" section (Markdown, at most about 40 lines). A study or preemption scenario
// whose files could not be read is named in its answer.
std::string answers_section(const LoadedRun& run, const ReportInputs& inputs);

}  // namespace gpuoverlap

// A scenario: queues, workloads on them, and the dependencies (with their barriers) between
// workloads. Parsed and fully validated before any GPU work starts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "background/background_spec.h"
#include "barriers/barrier_model.h"
#include "core/enum_names.h"
#include "core/result.h"
#include "jobs/cpu_spec.h"
#include "queues/queue_model.h"
#include "resources/texture.h"
#include "scenarios/preemption_spec.h"
#include "workloads/workload.h"

namespace gpuoverlap {

struct QueueSpec {
  std::string name;
  QueueType type = QueueType::direct;
  QueuePriority priority = QueuePriority::normal;
};

struct DependencySpec {
  // Index into Scenario::workloads: recorded earlier on the same queue, or on another queue
  // (then a fence joins them; scenarios/frame_plan.h).
  std::size_t producer = 0;
  BarrierRequest barrier;
};

// The defaults of a scenario file's keys, one place each: the model, the parser and the run
// settings (engine/executor.h) read them here.
inline constexpr std::uint32_t kDefaultGroups = 8;
inline constexpr std::uint32_t kDefaultIterations = 64;
inline constexpr std::uint32_t kDefaultFrames = 100;
inline constexpr std::uint32_t kDefaultWarmupFrames = 10;

struct WorkloadSpec {
  std::string name;
  std::size_t queue = 0;  // index into Scenario::queues
  WorkloadKind kind = WorkloadKind::compute;
  std::uint32_t groups = kDefaultGroups;
  std::uint32_t iterations = kDefaultIterations;
  std::vector<DependencySpec> depends_on;
  // A draw that renders into a declared texture's subresource instead of a render target of
  // its own, or a dispatch that writes it (unordered access) instead of its output buffer; its
  // threads are that mip's pixels (groups does not apply). Consumers read that subresource.
  std::optional<TextureTarget> target;
  // A copy's size (workloads/workload.h); 0 for a dispatch or a draw.
  std::uint64_t bytes = 0;
};

inline constexpr std::size_t kMaxWorkloadsPerScenario = 64;
inline constexpr std::uint32_t kMaxFrames = 1'000'000;

struct FramePlan;

// What a study measures: background work against the frame, or a device's neighbours
// (meta.json's scenario.study.kind).
enum class StudyKind { background, neighbours };
inline constexpr EnumNames<StudyKind, 2> kStudyKindNames{
    {{StudyKind::background, "background"}, {StudyKind::neighbours, "neighbours"}}};

struct Scenario {
  std::string name;  // also the output directory name
  std::string description;
  std::string source;  // file path or "preset:<name>", for messages and meta.json
  std::uint32_t frames = kDefaultFrames;
  std::uint32_t warmup_frames = kDefaultWarmupFrames;
  BarrierKind default_barrier = BarrierKind::legacy;
  SplitPolicy default_split_policy = SplitPolicy::event;
  // Timestamp queries around each workload (`timestamps = false` in a file turns them off for
  // this scenario; --no-timestamps for every scenario). An end-of-workload timestamp may drain
  // the queue on some drivers (engine/executor.h, RunSettings::timestamp_queries), so a
  // scenario about same-queue overlap may want them off.
  bool timestamps = true;
  std::vector<std::string> warnings;  // barrier-rule warnings found while parsing
  std::vector<QueueSpec> queues;
  std::vector<TextureSpec> textures;    // [[texture]], in file order
  std::vector<WorkloadSpec> workloads;  // in recording order per queue
  // Background work during the scenario ([background]); none when absent.
  std::optional<background::BackgroundSpec> background;
  // The frame's CPU side ([cpu]): a job system that runs the frame's CPU work before its GPU
  // work is recorded and submitted, and the frame pacing (jobs/cpu_spec.h). None: the frame is
  // recording and submitting alone, as before.
  std::optional<jobs::CpuFrameSpec> cpu;
  // A preemption scenario ([preemption], scenarios/preemption_spec.h): the queues and
  // workloads are made from it, and the executor runs its submission loop instead of frames.
  std::optional<preemption::PreemptionSpec> preemption;
  // Set when the scenario is one condition of a study (a file with `foreground` and
  // [[condition]] tables, see expand_study): the study's name and this condition's. The
  // scenario is then named "<study>/<condition>" and written to that subdirectory.
  std::string study;
  std::string condition;
  // The study's null control (`control = "null"`): no background work, like the baseline, but
  // judged against it as a condition (an A/A test of the verdict's error control).
  bool null_control = false;
  // The study's negative control (`control = "idle-spinners"`, background/idle_spinners.h): on
  // a neutral harness it must be non-intrusive; called intrusive, the study reports a harness
  // fault.
  bool negative_control = false;
  std::uint32_t round = 0;   // 1-based round of the study (0 outside a study)
  std::uint32_t rounds = 0;  // the study's rounds as planned (more may be added, below)
  // While the study's verdict is undecided, rounds are added until this much time (all its
  // scenarios' wall time) is spent or it has run study_max_rounds; 0: none are added.
  double study_budget_s = 0;
  std::uint32_t study_max_rounds = 0;
  std::uint32_t study_round_ms = 0;  // StudySpec::round_ms (0: none)
  // A study of neighbours (`run --concurrency-rounds`, engine/concurrent_suite.h), not of
  // background work: its conditions are "alone" (the baseline: the device measured while the
  // run's other devices are idle) and "together" (while they run the same scenario). Never
  // read from a file.
  bool neighbours_study = false;
  StudyKind study_kind() const {
    return neighbours_study ? StudyKind::neighbours : StudyKind::background;
  }
  // The study's conditions this host cannot run as asked (background::why_not_here: no cgroup
  // it may create, no SMT siblings), left out of its rounds: name, why. Every scenario of the
  // study carries the same list, so its verdict can say so.
  std::vector<std::pair<std::string, std::string>> study_not_run;
  // A condition of the study keeps freed memory (allocator = "keep", process-wide): every
  // scenario of it runs with glibc's thresholds fixed (core/kept_memory.h).
  bool study_fixes_allocator = false;
  // Set when the scenario is a version of a `run --live` session after the first: an edit
  // made in the viewer while the previous version ran (scenarios/scenario_edit.h). The
  // version is named "<first>-edit-<version - 1>" and written to that directory.
  struct LiveVersion {
    std::uint32_t version = 1;              // 1: the scenario as it was started
    std::string previous;                   // the version it replaced
    std::vector<std::string> changes;       // the edits, in the script's words (describe(Edit))
    std::uint64_t first_session_frame = 0;  // measured frames of the session before it
  };
  std::optional<LiveVersion> live;
  // What each queue records and submits in a frame (scenarios/frame_plan.h), computed once
  // where the scenario is validated (the parser, preemption::make_scenario) and shared by its
  // copies: the device records it, the exporters describe it, `validate --explain` prints it.
  // Every copy keeps the same queues, workloads and dependencies (a study condition differs in
  // its background, a preemption run in its load sizes), so the plan stays true for all.
  std::shared_ptr<const FramePlan> plan;

  // Workload indices of one queue, in recording order.
  std::vector<std::size_t> workloads_on(std::size_t queue) const;
};

// The threads (pixels) workload `w` runs: its groups, or for a draw or dispatch into a declared
// texture that mip's pixels.
WorkloadShape workload_shape(const Scenario& scenario, std::size_t w);

// The bytes of workload `w`'s output, as a readback copy of it moves them: a dispatch's buffer
// (4 per thread), a draw's R32F render target, a declared texture's subresource, a copy's bytes.
std::uint64_t output_bytes(const Scenario& scenario, std::size_t w);

// A copy that reads back its one producer's output (`depends_on`) instead of an upload buffer.
inline bool is_readback(const WorkloadSpec& w) {
  return w.kind == WorkloadKind::copy && !w.depends_on.empty();
}

// Parses and validates TOML text. `source_name` names the file in every message, which reads
// "<source_name>:<line>: <reason>".
Result<Scenario> parse_scenario(std::string_view toml_text, const std::string& source_name);

// Reads a file, then parse_scenario.
Result<Scenario> load_scenario_file(const std::string& path);

// A study: one foreground scenario measured under several conditions in one command, each
// condition differing only in its background work (docs/scenario-format.md, "Studies").
inline constexpr double kDefaultStudyBudgetS = 600;
inline constexpr std::uint32_t kDefaultStudyMaxRounds = 100;
inline constexpr std::uint32_t kMaxStudyRoundMs = 3'600'000;  // an hour per condition's round

struct ConditionSpec {
  std::string name;
  std::optional<background::BackgroundSpec> background;  // none: the baseline or the null control
  bool null_control = false;  // `control = "null"`: the baseline's settings, judged as a condition
  // `control = "idle-spinners"`: the negative control, background = {idle_spinners = true}.
  bool negative_control = false;
};
struct StudySpec {
  std::string name;
  std::string description;
  std::string source;
  std::string foreground;  // a preset name or scenario file
  // Measured frames per condition over all rounds, warm-up frames per round; override the
  // foreground's.
  std::optional<std::uint32_t> frames, warmup_frames;
  // The conditions run interleaved in this many rounds (order reversed every other round),
  // so slow drift of the machine (clocks, temperature, other load) spreads over every
  // condition instead of biasing the one measured last.
  std::uint32_t rounds = 1;
  // While the verdict is undecided, more rounds are run (each as long as the planned ones)
  // until budget_s of wall time is spent or max_rounds have run. A study of one round is
  // never extended (its verdict's units are blocks of frames, not rounds).
  double budget_s = kDefaultStudyBudgetS;
  std::uint32_t max_rounds = kDefaultStudyMaxRounds;
  // Each condition's round measures its frames or for this long, whichever ends first, so
  // that every condition gets the same time: one that slows the frames (a positive control
  // at a high dose) measures fewer of them instead of making the round longer. 0: no limit.
  std::uint32_t round_ms = 0;
  std::vector<ConditionSpec> conditions;  // exactly one without background: the baseline
  // false: a preset study too long for `run --all`, which names it and says how to run it.
  bool in_run_all = true;
  // How the foreground's frame loop waits for its jobs in every condition (its [cpu]'s
  // loop_wait overridden: an engine's style, jobs/cpu_spec.h); none keeps the foreground's. The
  // foreground must have a [cpu] table.
  std::optional<jobs::LoopWait> foreground_loop_wait;
};

// The next round of a study: a copy of every condition of `last_round` (the scenarios of its
// last round, in run order), numbered one higher and run in the opposite order, as
// expand_study interleaves. Contract: `last_round` is one round of one study with rounds > 1.
std::vector<Scenario> next_study_round(const std::vector<Scenario>& last_round);

// True when the TOML text is a study (it has a `foreground` key or [[condition]] tables).
bool is_study(std::string_view toml_text);
Result<StudySpec> parse_study(std::string_view toml_text, const std::string& source_name);

// One scenario per condition and round, in run order: the foreground with the condition's
// background, named "<study>/<condition>" (one round) or "<study>/<condition>/round-<r>",
// each round measuring ceil(frames / rounds) frames.
std::vector<Scenario> expand_study(const StudySpec& study, const Scenario& foreground);

// True when the TOML text has a [preemption] table (docs/preemption.md).
bool is_preemption(std::string_view toml_text);
// A preemption scenario, or with arrays in load/priority/process, one per combination (a
// matrix named "<name>/<load>-<priority>[-<process>]").
Result<std::vector<Scenario>> parse_preemption(std::string_view toml_text,
                                               const std::string& source_name);

// ceil(total / rounds): the frames one round of a study measures.
std::uint32_t frames_per_round(std::uint32_t total, std::uint32_t rounds);

}  // namespace gpuoverlap

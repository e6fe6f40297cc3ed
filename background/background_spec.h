// What a scenario's [background] table asks for (docs/scenario-format.md): the processing
// mode and measurements action the application sets, how much compile work the task source
// (the "driver") generates, the processor's limits, the positive control, and the spec's
// workflows. Plain data: parsed by scenarios/, carried out by background_session.h.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "background/background_processor.h"
#include "core/enum_names.h"
#include "core/result.h"

namespace gpuoverlap::background {

// The spec's usage scenarios ("Usage Scenarios"), run before the measured frames.
enum class Workflow {
  none,
  // ALLOW_INTRUSIVE_MEASUREMENTS + DISCARD_PREVIOUS, then render and COMMIT_RESULTS (waiting
  // for the event) until FurtherMeasurementsDesired is false; then measure with ALLOWED.
  benchmark_priming,
  // PIX: ALLOW_INTRUSIVE_MEASUREMENTS + DISCARD_PREVIOUS, then replay the frame and
  // COMMIT_RESULTS_HIGH_PRIORITY until FurtherMeasurementsDesired is false or max_passes;
  // then measure with DISABLE_PROFILING_BY_SYSTEM (developer mode).
  single_frame_analysis,
};

inline constexpr EnumNames<Workflow, 3> kWorkflowNames{
    {{Workflow::none, "none"},
     {Workflow::benchmark_priming, "benchmark-priming"},
     {Workflow::single_frame_analysis, "single-frame-analysis"}}};

std::string_view to_string(Workflow workflow);
std::optional<Workflow> parse_workflow(std::string_view text);

// Where the runtime's compile threads may run (BackgroundSpec::cpus).
enum class CpuPlacementKind {
  any,       // wherever the OS puts them (the spec's model)
  reserved,  // the last `reserved` CPUs of the frame loop's, taken from the frame's workers
  list,      // the CPUs listed; the foreground keeps its own placement
  siblings,  // the SMT siblings of the cores the foreground keeps (the spec's SMT warning)
};
inline constexpr EnumNames<CpuPlacementKind, 4> kCpuPlacementKindNames{
    {{CpuPlacementKind::any, "any"},
     {CpuPlacementKind::reserved, "reserved"},
     {CpuPlacementKind::list, "list"},
     {CpuPlacementKind::siblings, "siblings"}}};

struct CpuPlacement {
  CpuPlacementKind kind = CpuPlacementKind::any;
  std::uint32_t reserved = 0;  // reserved only, at least 1
  std::vector<int> cpus;       // list only, increasing, each a CPU the process may use
};

// "any", "reserved:2", "siblings", or the list as ranges ("0-3,8").
std::string describe(const CpuPlacement& placement);
// Parses what describe() writes; a list may also be a TOML array (the parser turns it into
// this text first). Empty optional: not of that form (the caller names the key and the file).
std::optional<CpuPlacement> parse_cpu_placement(std::string_view text);

// What one scenario's placement is on this machine: the CPUs the compile threads are restricted
// to (empty: anywhere) and those the foreground (frame loop and job workers) keeps off.
struct ResolvedPlacement {
  std::vector<int> background_cpus;
  std::vector<int> foreground_off;
};
// Contract: `frame_cpus` are the CPUs the frame loop's thread may run on (the poller's are
// already left out), increasing; `siblings` is the machine's SMT groups (host_info.h). An
// error says why this machine cannot give the placement (too few CPUs, no SMT visible).
Result<ResolvedPlacement> resolve_placement(const CpuPlacement& placement,
                                            const std::vector<int>& frame_cpus,
                                            const std::vector<std::vector<int>>& siblings);

// Why `placement` cannot be had among the CPUs the calling thread may use (under `run`, the
// stamp poller's CPU is already left out): a listed CPU it may not use, or reserving so many
// that the foreground keeps fewer than two (the frame loop's and a worker's). Empty when it
// fits (siblings are checked at run time). Reserved CPUs are the last N by number: on a
// machine with SMT they may be siblings of the foreground's cores.
std::optional<std::string> placement_misfit_here(const CpuPlacement& placement);

// How the compile threads allocate (BackgroundSpec::allocator).
enum class Allocator {
  system,  // the C library's defaults (glibc: memory above its thresholds mapped and unmapped)
  keep,    // freed memory kept for the next compile (glibc: M_MMAP_THRESHOLD, M_TRIM_THRESHOLD)
};
inline constexpr EnumNames<Allocator, 2> kAllocatorNames{
    {{Allocator::system, "system"}, {Allocator::keep, "keep"}}};

// When the runtime may start a compile (BackgroundSpec::dispatch).
enum class Dispatch {
  any,   // whenever a thread is free (the spec's runtime)
  gaps,  // only outside the frame's CPU phase: the game's task system hands the work over
};
inline constexpr EnumNames<Dispatch, 2> kDispatchNames{
    {{Dispatch::any, "any"}, {Dispatch::gaps, "gaps"}}};

struct BackgroundSpec {
  ProcessingMode mode = ProcessingMode::allowed;
  MeasurementsAction action = MeasurementsAction::keep_all;
  // Set mode and action before every measured frame instead of once before the first (a tool
  // that keeps committing; with COMMIT_RESULTS_HIGH_PRIORITY, the boost never lapses).
  bool action_every_frame = false;
  // Compiles the source queues when it first sees the foreground's pipelines, and again per
  // commit pass that finds more to optimise.
  std::uint32_t tasks = 8;
  // Queue a new compile whenever one finishes (while the mode allows it), so background work
  // spans every measured frame however long the run.
  bool continuous = true;
  std::uint32_t max_concurrent = 2;
  // What the runtime's compile threads ask of the OS (core/thread_policy.h): the spec's idle
  // priority by default. Not the boost threads', nor the positive control's.
  ThreadPolicy policy = ThreadPolicy::idle;
  // Where the compile threads run (docs/background.md, "Placement").
  CpuPlacement cpus;
  Allocator allocator = Allocator::system;
  // The compile threads in a child cgroup (v2) of the process's own with cpu.idle = 1: the
  // kernel's idle class for a group, as a systemd slice would set it. Needs a cgroup the
  // process may write (delegation); where it may not, the condition is not run.
  bool cgroup_idle = false;
  Dispatch dispatch = Dispatch::any;
  bool developer_mode = false;
  // The positive control: this many normal-priority threads run the same compiles outside
  // the processor, back to back, for the whole scenario. 0: none. The processor gets no work
  // then (mode, action and workflow do not apply).
  std::uint32_t unmanaged_threads = 0;
  // The negative control (background/idle_spinners.h): one idle-priority thread per CPU the
  // foreground may use, allocating, freeing and touching memory of their own (no system call) for the whole scenario. The
  // processor gets no work then, as with unmanaged_threads.
  bool idle_spinners = false;
  // A control (positive or negative) runs its own threads: the processor gets no work.
  bool outside_processor() const { return unmanaged_threads > 0 || idle_spinners; }
  Workflow workflow = Workflow::none;
  std::uint32_t training_frames = 5;  // frames rendered per workflow pass
  std::uint32_t max_passes = 8;       // PIX's MaxPassesInCaseDriverDoesntConverge
  // The source's PGO model: commit passes until it reports a steady state
  // (FurtherMeasurementsDesired false).
  std::uint32_t converge_after_passes = 2;
  std::uint32_t commit_timeout_ms = 60'000;  // deadline for one commit's event
  // Waiting on the background, as a benchmark or PIX waits for its results: before measured
  // frame N the foreground asks for COMMIT_RESULTS with an event and goes on rendering; the
  // time from the request to the event is recorded. Where the measured frames end first (their
  // count, a study's round_ms), the request is made there if it was not yet, and the foreground
  // then blocks on the event (up to commit_timeout_ms), so the frames judged stay the game's.
  // The processor's own work only: not with a workflow, bind_committed or the control.
  std::optional<std::uint32_t> commit_at_frame;
  // Each compile ends with the backend's pipeline creation (vkCreateComputePipelines), the
  // driver's real compiler work. false: shaderc only, no driver call: tells CPU load apart
  // from what the driver's pipeline creation itself does to the GPU.
  bool create_pipelines = true;
  // From the frame after a commit completes, each compute workload runs the newest variant
  // committed for it instead of its build-time pipeline, as a driver swaps in a recompiled
  // shader. Needs a commit: a workflow, or action commit_results[_high_priority].
  bool bind_committed = false;
  // With bind_committed: measured frames run with the build-time pipelines before the commit
  // (or the workflow) starts, so a run has its own before and after. 0: half of the measured
  // frames (none with a single frame). Must leave at least one frame after.
  std::uint32_t before_frames = 0;
  // Fold each pipeline's iteration count into its variants (the PGO model). false: variants
  // read it from the push constants as the build-time shader does, so a bound variant is the
  // same code: the control for a before/after difference that drift alone would make.
  bool fold_iterations = true;
  // The study's within-run pairing (docs/background.md, "Alternating blocks"): the measured
  // frames come in blocks of this many, and the background work is held (no compile starts) in
  // every other block, in the order on, off, off, on, on, off, ... so that each pair of
  // adjacent blocks has one of each, and a linear drift favours neither across two pairs. The
  // verdict then compares each pair's two blocks, which ran a fraction of a second apart,
  // instead of rounds that ran seconds apart. 0: off (the background runs in every frame).
  std::uint32_t alternate_frames = 0;
};

// Whether measured frame `measured_frame` falls in a held block (alternate_frames > 0).
bool held_in_block(std::uint32_t alternate_frames, std::uint32_t measured_frame);

// The foreground's wait for a commit (BackgroundSpec::commit_at_frame), on
// CLOCK_MONOTONIC_RAW.
struct CommitWait {
  std::optional<std::uint32_t> requested_before_frame;  // measured frame; none: after the last
  std::int64_t requested_ns = 0;
  std::size_t pending_at_request = 0;        // compiles queued or running when it was asked for
  std::optional<std::int64_t> signalled_ns;  // none: not within commit_timeout_ms
  // How long the foreground blocked on the event after its measured frames (0 when it was
  // signalled before they ended).
  double blocked_ms = 0;
  std::optional<double> to_event_ms() const {
    if (!signalled_ns) return std::nullopt;
    return static_cast<double>(*signalled_ns - requested_ns) / 1e6;
  }
};

// One background compile, managed or unmanaged, on CLOCK_MONOTONIC_RAW.
struct BackgroundTaskRecord {
  std::uint64_t id = 0;        // managed: the processor's id; unmanaged: from 1 per run
  bool managed = true;         // false: the positive control's threads
  std::string label;           // "compile #<n> <pipeline> (iterations <k>)"
  std::int64_t queued_ns = 0;  // unmanaged: = start_ns
  std::int64_t start_ns = 0;   // 0 when cancelled before it started
  std::int64_t finish_ns = 0;
  int worker = -1;             // thread index within its pool
  bool boosted = false;        // ran on a COMMIT_RESULTS_HIGH_PRIORITY thread
  bool idle_priority = false;  // its thread was SCHED_IDLE
  std::string outcome;         // delivered | dropped (pipeline destroyed) | cancelled |
                               // skipped (stopping) | compiled (no pipeline) |
                               // failed: <reason>
  double compile_ms = 0;       // shaderc
  double build_ms = 0;         // the backend's pipeline creation
  // The thread that ran it (its OS id, the CPUs it started and ended on) and what the compile
  // cost that thread: on-CPU and kernel time, run delay, page faults, switches.
  ThreadSpan thread;
};

// One line for logs and `validate`, e.g. "allowed + keep_all, 8 compiles kept queued, at most
// 2 at once".
std::string describe(const BackgroundSpec& spec);
nlohmann::json to_json(const BackgroundSpec& spec);  // meta.json

// Why this machine cannot run `spec` as asked, checked before any GPU work (a study reports
// such a condition as not run, never runs it under another setting): a cgroup it may not
// create, no SMT siblings for cpus = "siblings", a glibc-only allocator elsewhere. Empty when
// it can.
std::optional<std::string> why_not_here(const BackgroundSpec& spec);

}  // namespace gpuoverlap::background

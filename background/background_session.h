// Background work during one scenario: the runtime (BackgroundProcessor), the task source
// that plays the driver, and the positive control, set up from a scenario's [background]
// table. API neutral: the backend hands in how a compiled variant becomes a pipeline (for
// Vulkan, vkCreateComputePipelines on the scenario's device), so the compiles are the
// driver's real work while this code builds and is tested without a GPU.
//
// The task source's model of a driver's PGO: it watches the pipelines the
// foreground creates; on first sight (in the ALLOWED and ALLOW_INTRUSIVE_MEASUREMENTS modes)
// it queues `tasks` compiles of specialised variants; each commit pass queues `tasks` more
// until `converge_after_passes` passes, after which FurtherMeasurementsDesired is false;
// DISCARD_PREVIOUS forgets the passes and the variants delivered. With `continuous`, every
// finished compile queues the next while the mode allows work, so the background load lasts
// as long as the scenario. Each variant folds its pipeline's own iteration count into the
// shader (so it computes what the pipeline computes) and a salt, the compile's number, so no
// two compiles of a run produce the same SPIR-V (a driver's shader cache cannot skip one).
//
// Committed variants (BackgroundSpec::bind_committed): when a commit completes, the newest
// variant delivered for each watched pipeline (since the last DISCARD_PREVIOUS) becomes its
// committed variant, and take_committed() hands the set to the frame loop, which binds it
// from its next frame. The handles stay owned by the backend's VariantSlot.
//
// Lifetime: construct before the foreground creates its pipelines, call stop() before the
// device that `build` uses is destroyed. After stop() returns, no compile is running and
// none will start.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "background/background_processor.h"
#include "background/background_spec.h"
#include "background/idle_spinners.h"
#include "background/variant_slot.h"
#include "core/cgroup_idle.h"
#include "core/kept_memory.h"
#include "core/result.h"

namespace gpuoverlap::background {

// A backend's pipeline, as an opaque 64-bit handle (a VkPipeline is one).
using PipelineHandle = std::uint64_t;

// What the driver's SetBackgroundProcessingMode answered (PipelineBuilder::driver_mode).
struct DriverModeResult {
  std::string result;  // "S_OK", or why not: "unsupported by this runtime (E_NOTIMPL)"
  std::optional<bool> further_measurements_desired;  // set when the call succeeded
};

// Every call made to the driver, counted by what it answered.
struct DriverModeCalls {
  std::string api;  // e.g. "ID3D12Device6::SetBackgroundProcessingMode"; empty: none made
  std::uint32_t calls = 0;
  std::map<std::string, std::uint32_t> results;  // by DriverModeResult::result
  std::optional<bool> last_further_measurements_desired;
};

struct PipelineBuilder {
  // Turns SPIR-V into a pipeline. Called from several background threads at once.
  std::function<Result<PipelineHandle>(const std::vector<std::uint32_t>& spirv)> build;
  // Frees a pipeline whose owner was destroyed before the compile finished.
  std::function<void(PipelineHandle)> dispose;
  // The driver's own background processing, where the API has it (D3D12:
  // ID3D12Device6::SetBackgroundProcessingMode): called with every mode and action the
  // runtime is given, from the frame loop's thread, after the runtime's own call. It answers
  // what the API returned; empty where the API has no such call (Vulkan).
  std::function<DriverModeResult(ProcessingMode, MeasurementsAction)> driver_mode;
  std::string driver_mode_api;  // what driver_mode calls, for meta.json
};

// Background work in flight at one instant.
struct BackgroundActivity {
  std::uint32_t managed_running = 0;  // processor callbacks running (idle or boosted)
  std::uint32_t boosted_running = 0;  // of them, on high-priority commit threads
  std::uint32_t managed_queued = 0;
  std::uint32_t unmanaged_running = 0;
};

// A variant a commit made available to the foreground.
struct CommittedVariant {
  PipelineHandle pipeline = 0;
  std::uint64_t compile = 0;  // the compile's number ("compile #<n>" in background.csv)
};

// The outcome of a workflow (BackgroundSpec::workflow) run before the measured frames.
struct WorkflowOutcome {
  std::uint32_t passes = 0;  // commits made
  std::uint32_t frames_rendered = 0;
  bool converged = false;              // FurtherMeasurementsDesired became false
  std::vector<double> commit_wait_ms;  // per pass, set_mode to the event being signalled
};

// What a spec asks of the host beyond the policy (BackgroundSpec::cpus, cgroup_idle,
// allocator), set up before the compile threads start and held until the session ends.
struct HostPlacement {
  ResolvedPlacement cpus;
  std::shared_ptr<IdleCgroup> cgroup;
  std::shared_ptr<KeptMemory> kept_memory;
};
// Resolves `spec`'s CPUs against the calling thread's (the frame loop's: the poller's CPU is
// already left out), creates its idle cgroup and keeps freed memory, or says why this host
// cannot (a study checks that first, why_not_here, and reports the condition as not run).
Result<HostPlacement> place_on_host(const BackgroundSpec& spec);

class BackgroundSession {
 public:
  // place_on_host, then the session: what a backend calls.
  static Result<std::unique_ptr<BackgroundSession>> open(const BackgroundSpec& spec,
                                                         PipelineBuilder builder);
  // Contract: `spec` was validated by the scenario parser. `apply_policy`: the compile threads
  // ask the OS for spec.policy (SCHED_IDLE by default), as the runtime does; tests of the
  // session's logic turn it off, because on a loaded machine an idle thread may get no CPU for
  // a minute.
  BackgroundSession(const BackgroundSpec& spec, PipelineBuilder builder, bool apply_policy = true,
                    HostPlacement placement = {});
  ~BackgroundSession();  // stop()
  BackgroundSession(const BackgroundSession&) = delete;
  BackgroundSession& operator=(const BackgroundSession&) = delete;

  // The foreground created a pipeline running perlin.hlsl's cs_main with `iterations`.
  // Variants are delivered through `back`; the owner's VariantSlot disposes of them. A workload
  // without a shader (a copy) is watched too, with `has_shader` false, so that the
  // committed set stays one entry per workload; it is never compiled.
  void watch(const std::string& name, std::uint32_t iterations,
             std::shared_ptr<BackPointer<PipelineHandle>> back, bool has_shader = true);

  // Starts what runs from the first frame: the unmanaged control's threads, or the first
  // compiles of the watched pipelines. Call once, after every watch().
  void start();

  // SetBackgroundProcessingMode with the spec's mode and action (once before the measured
  // frames, or before each with action_every_frame). A commit waits for nothing here, unless
  // bind_committed: then it waits for the commit's event (up to commit_timeout_ms, else an
  // Error) and the committed variants are ready for take_committed(). Returns
  // FurtherMeasurementsDesired.
  Result<bool> apply_measurement_mode();

  // The spec's workflow (BackgroundSpec::workflow), driven by the frame loop: call
  // begin_workflow() before the first training frame and workflow_frame_rendered() after
  // each; render another while it answers true. Every `training_frames` frames it commits
  // and waits for the commit's event (up to commit_timeout_ms, else an Error). Bounded by
  // max_passes. With Workflow::none (or the unmanaged control) there are no training frames.
  Status begin_workflow();
  Result<bool> workflow_frame_rendered();
  const WorkflowOutcome& workflow_outcome() const { return workflow_; }
  // The driver's answers to the modes passed on to it (empty without PipelineBuilder::
  // driver_mode). The frame loop's thread only.
  const DriverModeCalls& driver_mode_calls() const { return driver_calls_; }

  BackgroundActivity activity() const;

  // The frame loop's thread, at a frame boundary: when a commit completed since the last call
  // (a workflow's pass, or the commit apply_measurement_mode waited for), the committed variant
  // of each watched pipeline, in watch() order (nullopt: none delivered yet); otherwise
  // nullopt. Only with BackgroundSpec::bind_committed: without it commits are not tracked.
  std::optional<std::vector<std::optional<CommittedVariant>>> take_committed();

  // From now on no compile starts and a compile that finishes skips its pipeline creation;
  // returns at once (any thread). A missed frame deadline calls it before its grace period,
  // so the background threads are already winding down while the frame is diagnosed.
  void request_stop();
  // The study's alternation (BackgroundSpec::alternate_frames), at a frame boundary: while
  // held, no compile starts, managed (BackgroundProcessor::hold) or unmanaged; compiles already
  // running finish, and background.csv shows when they did. Not a processing mode: the
  // application's mode and the task source's queue stay as they are, so releasing resumes
  // exactly the work the condition had.
  void hold(bool held);
  // The frame loop's thread: the frame's CPU phase begins (true: before its workers are
  // released) or ends (false: after it is submitted). With dispatch = "gaps" no compile starts
  // in between, and a running one waits there between its shaderc compile and its pipeline
  // creation (at most a second, so a stalled loop cannot stall the runtime); otherwise nothing.
  void cpu_phase(bool running);
  // BackgroundSpec::commit_at_frame, the frame loop's thread only. request_commit asks for
  // COMMIT_RESULTS (in the mode in force) with an event and returns at once; only the first
  // call asks. finish_commit_wait, after the measured frames, asks if nothing was asked yet,
  // then blocks on the event up to commit_timeout_ms: a wait that runs out is a result
  // (CommitWait::signalled_ns empty), not an error. None without commit_at_frame.
  Status request_commit(std::optional<std::uint32_t> before_measured_frame);
  Result<std::optional<CommitWait>> finish_commit_wait();
  // The placement the session holds (empty CPUs: anywhere): the foreground keeps off
  // placement().cpus.foreground_off.
  const HostPlacement& placement() const { return placement_; }
  // request_stop, cancels what waits, lets the running compiles finish, joins every thread.
  // Bounded by one shaderc compile per thread: shaderc cannot be interrupted inside a
  // compile. Idempotent.
  void stop();

  // Every compile of the session, managed first (in queue order), then unmanaged.
  std::vector<BackgroundTaskRecord> records() const;
  const BackgroundSpec& spec() const { return spec_; }
  // The negative control's threads (BackgroundSpec::idle_spinners), once started; else null.
  const IdleSpinners* idle_spinners() const { return spinners_.get(); }
  // The settings the processor actually uses (limits resolved), for meta.json.
  const ProcessorSettings& processor_settings() const;
  // Why the OS refused a compile thread its policy; none when every thread got it.
  std::optional<std::string> policy_refused() const;
  // The scheduling each kind of background thread ran under, as the threads reported it:
  // "idle" and "boost" (the processor's), "unmanaged" (the positive control's). Kinds that
  // never started a thread are left out.
  std::vector<std::pair<std::string, SchedulingSeen::Seen>> thread_scheduling() const;

 private:
  class Source;
  struct Watched {
    std::string name;
    std::uint32_t iterations;
    std::shared_ptr<BackPointer<PipelineHandle>> back;
    bool has_shader = true;
  };
  struct Compile {
    std::uint64_t number;
    Watched target;
    std::size_t target_index;  // into watched_
    std::uint64_t epoch;       // discards_ when queued: a later DISCARD_PREVIOUS drops it
  };
  bool compilable_locked() const;  // some watched workload has a shader
  struct CompileResult {
    std::string outcome;
    double compile_ms = 0, build_ms = 0;
  };

  // The runtime's set_mode, then the driver's (PipelineBuilder::driver_mode) with the same
  // mode and action. The runtime's answer is the one the workflow follows.
  Result<bool> set_mode(ProcessingMode mode, MeasurementsAction action,
                        std::shared_ptr<CompletionEvent> event = nullptr);
  CompileResult run_compile(const Compile& compile);
  void mark_committed();  // delivered_ becomes committed_
  // "compile #<n> <pipeline> (iterations <k>)", as background.csv shows it.
  std::string label_of(const Compile& compile) const;
  Compile next_compile_locked();
  void queue_compiles(std::size_t count);  // managed
  void unmanaged_loop(int worker);

  const BackgroundSpec spec_;
  const PipelineBuilder builder_;
  const HostPlacement placement_;
  std::unique_ptr<Source> source_;
  std::unique_ptr<BackgroundProcessor> processor_;

  mutable std::mutex mutex_;
  std::vector<Watched> watched_;
  std::uint64_t next_compile_ = 1;
  std::size_t next_target_ = 0;  // the watched entry the next compile starts looking from
  ProcessingMode mode_ = ProcessingMode::allowed;
  std::uint32_t passes_ = 0;  // commit passes since the last DISCARD_PREVIOUS
  bool started_ = false;
  std::map<std::string, CompileResult> managed_results_;  // by label
  std::vector<BackgroundTaskRecord> unmanaged_records_;
  SchedulingSeen unmanaged_seen_;
  // bind_committed: the newest variant delivered per watched pipeline, and the set the last
  // completed commit made available; discards_ counts DISCARD_PREVIOUS calls.
  std::vector<std::optional<CommittedVariant>> delivered_, committed_;
  std::uint64_t discards_ = 0;
  // Set under mutex_; read first without it, so that the frame loop, which asks every frame,
  // takes mutex_ (which compile threads hold) only in the frame after a commit.
  std::atomic<bool> fresh_commit_{false};

  WorkflowOutcome workflow_;  // the frame loop's thread only
  // commit_at_frame's request and its event, the frame loop's thread only.
  std::optional<CommitWait> commit_wait_;
  std::shared_ptr<CompletionEvent> commit_wait_event_;
  DriverModeCalls driver_calls_;  // the frame loop's thread only
  std::uint32_t frames_in_pass_ = 0;
  bool workflow_active_ = false;

  std::atomic<bool> stopping_{false};
  // hold() for the unmanaged threads, which wait on it between compiles.
  std::mutex hold_mutex_;
  std::condition_variable hold_cv_;
  bool held_ = false;
  bool stopped_ = false;  // stop() ran (only the owning thread calls stop)
  std::atomic<std::uint32_t> unmanaged_running_{0};
  std::vector<std::thread> unmanaged_threads_;
  std::unique_ptr<IdleSpinners> spinners_;
};

}  // namespace gpuoverlap::background

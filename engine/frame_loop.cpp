#include "engine/frame_loop.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "background/background_session.h"
#include "core/clock.h"
#include "core/cpu_affinity.h"
#include "core/cpu_relax.h"
#include "core/kept_memory.h"
#include "core/scope_exit.h"
#include "core/system_error.h"
#include "core/thread_accounting.h"
#include "core/thread_policy.h"
#include "engine/frame_loop_meta.h"
#include "engine/frame_records.h"
#include "engine/loop_phases.h"
#include "engine/sched_attribution.h"
#include "jobs/busy_work.h"
#include "jobs/job_system.h"
#include "queues/deadline_diagnosis.h"
#include "queues/stamp_poller.h"
#include "timeline/clock_agreement.h"

namespace gpuoverlap {
namespace {

// Counts the workloads whose start and end stamps carry `frame` now.
std::pair<std::size_t, std::size_t> stamps_seen(const StampView& stamps, std::uint32_t frame) {
  std::size_t started = 0, finished = 0;
  for (std::size_t w = 0; w < stamps.slots(); ++w) {
    const std::uint32_t* slot = stamps.slot(w);
    started += __atomic_load_n(slot + kStampStartFrameWord, __ATOMIC_ACQUIRE) == frame ? 1 : 0;
    finished += __atomic_load_n(slot + kStampEndFrameWord, __ATOMIC_ACQUIRE) == frame ? 1 : 0;
  }
  return {started, finished};
}

// A frame past its deadline: the stamps at the deadline, then a bounded grace period for the
// GPU and the stamps (queues/deadline_diagnosis.h).
DeadlineFacts missed_deadline_facts(ScenarioBackend& backend, const RunSettings& settings,
                                    std::size_t workloads, std::uint32_t frame, std::uint32_t index,
                                    std::int64_t t0_ns, const PollResult& polled,
                                    GpuStatus wait_status, bool& gpu_may_be_busy) {
  DeadlineFacts f;
  f.frame = frame_label(index, settings.warmup_frames);
  f.timeout_ms = settings.frame_timeout_ms;
  f.workloads = workloads;
  // Long enough for a frame that is merely late to finish, short enough not to hold a stuck
  // run: a tenth of a second at least, at most a second.
  f.grace_ms = std::clamp(double(settings.frame_timeout_ms), 100.0, 1000.0);
  if (settings.stamping) {
    for (std::size_t w = 0; w < polled.start_ns.size(); ++w) {
      f.started_at_deadline += polled.start_ns[w] ? 1 : 0;
      f.finished_at_deadline += polled.end_ns[w] ? 1 : 0;
    }
  }
  const std::int64_t grace_end_ns = monotonic_raw_ns() + std::int64_t(f.grace_ms * 1e6);
  if (wait_status == GpuStatus::ok) {
    f.gpu_finished = true;
  } else {
    const GpuOutcome late = backend.wait_frame(frame, grace_end_ns);
    if (late.status == GpuStatus::ok) {
      f.gpu_finished = true;
      f.gpu_finished_ms = double(monotonic_raw_ns() - t0_ns) / 1e6;
      gpu_may_be_busy = false;  // nothing of this frame runs any more
    }
    f.device_lost = late.status == GpuStatus::device_lost;
  }
  if (!settings.stamping) {
    // Nothing to wait for but the fences.
    f.started_after_grace = f.finished_after_grace = f.gpu_finished ? f.workloads : 0;
    return f;
  }
  // Stamps written before the fence signalled are visible by now, or within the grace period
  // on a device whose stamp memory is slow to become visible; re-read until all are, or the
  // grace period ends (no sleep: a few reads of mapped memory).
  const StampView stamps = backend.stamps();
  for (;;) {
    std::tie(f.started_after_grace, f.finished_after_grace) = stamps_seen(stamps, frame);
    const bool all = f.started_after_grace == f.workloads && f.finished_after_grace == f.workloads;
    if (all || monotonic_raw_ns() >= grace_end_ns || !f.gpu_finished) break;
  }
  return f;
}

// Waits until `target_ns` (CLOCK_MONOTONIC_RAW): asleep until shortly before it, then spinning,
// so a paced frame starts on time without the frame loop's thread holding a core for the whole
// idle part of the period.
void wait_until_ns(std::int64_t target_ns) {
  constexpr std::int64_t kSpinNs = 100'000;
  const std::int64_t sleep_ns = target_ns - monotonic_raw_ns() - kSpinNs;
  if (sleep_ns > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(sleep_ns));
  while (monotonic_raw_ns() < target_ns) GPUOVERLAP_CPU_RELAX();
}

// How often a frame takes a fresh CPU/GPU clock calibration (engine/frame_records.h).
constexpr std::uint32_t kCalibrateEveryFrames = 16;
// How long the release waits, spinning, for the poller's first pass (queues/stamp_poller.h):
// far more than a wake-up of a thread on an idle CPU (a few to tens of µs), far less than a
// frame.
constexpr std::int64_t kPollerReadySpinNs = 200'000;

// One run of the frame loop: the state it keeps across frames, and its steps (run_frames calls
// the public ones in order; run_frame, each frame's).
class FrameLoop {
 public:
  FrameLoop(ScenarioBackend& backend, const Scenario& scenario, const RunSettings& settings,
            const ProgressCallback& progress, FrameLoopOutcome& outcome);
  void plan_background();
  void place_cpu_phase();
  void start();
  void run();
  void finish();
  // The threads whose waits the kernel's record explains; before finish(), which stops the
  // workers.
  ForegroundThreads foreground_threads() const {
    ForegroundThreads threads;
    threads.frame_loop = current_thread_id();
    if (settings_.stamping) threads.poller = poller_.thread_id();
    if (job_system_) threads.workers = job_system_->worker_thread_ids();
    return threads;
  }

 private:
  // How a frame ends: the run stops, a training frame was rendered (it does not count), or a
  // warm-up or measured frame was.
  enum class FrameEnd { stop, training, counted };

  bool begin_training();
  void lap_accounting();
  void frame_started(std::int64_t start_ns, LoopPhase next);
  void pace_until(std::int64_t target_ns);
  FrameEnd run_frame(std::uint32_t index);
  void swap_in_committed(const LoopFrame& f);
  bool ends_before(const LoopFrame& f);
  void fail(const LoopFrame& f, const Error& error, RecordStatus status);
  bool set_background_for(const LoopFrame& f);
  bool run_cpu_phase(LoopFrame& f);
  bool record_and_submit(LoopFrame& f);
  void release_and_wait(LoopFrame& f);
  void end_poll_unreleased();
  bool next_cpu_phase_during_wait(LoopFrame& f);
  GpuOutcome wait_for_gpu(std::int64_t deadline_ns);
  void add_records(const LoopFrame& f);
  FrameEnd after_frame(const LoopFrame& f);
  void stop_background(nlohmann::json& meta);

  ScenarioBackend& backend_;
  const Scenario& scenario_;
  const RunSettings& settings_;
  const ProgressCallback& progress_;
  FrameLoopOutcome& outcome_;
  ScenarioTimeline& timeline_;
  background::BackgroundSession* const background_;
  const std::size_t slots_;
  const StampView stamps_;
  std::uint32_t total_;
  const std::int64_t timeout_ns_;
  const bool shader_clock_;
  const std::vector<std::uint32_t> valid_bits_;
  double worst_deviation_ns_ = 0;
  // One polling thread for the whole run, started here and asleep between frames (queues/
  // stamp_poller.h: what the frame loop does for it per frame).
  StampPoller poller_;
  std::optional<std::int64_t> first_measured_t0_ns_;
  // Calibrations of measured frames, for the drift; one every kCalibrateEveryFrames frames, and
  // the frames between use the latest (the drift between two says how far that can be off).
  std::vector<GpuCalibration> calibrations_;
  std::optional<GpuCalibration> last_calibration_;
  std::uint32_t frames_since_calibration_ = 0;

  const background::BackgroundSpec* bg_spec_ = nullptr;
  bool binds_ = false;
  bool has_workflow_ = false;
  std::uint32_t before_frames_ = 0;
  bool training_ = false;
  bool workflow_pending_ = false;  // begun at the first measured frame past the before

  std::vector<int> foreground_off_;
  std::optional<jobs::CpuFrameSpec> placed_cpu_;
  std::string allocator_state_;  // meta.json "allocator"
  std::optional<std::vector<int>> loop_cpus_before_;
  std::optional<ScopeExit<std::function<void()>>> loop_cpus_back_;
  const jobs::CpuFrameSpec* cpu_ = nullptr;
  std::unique_ptr<jobs::JobSystem> job_system_;
  std::int64_t period_ns_ = 0;
  std::int64_t delay_ns_ = 0;
  std::optional<std::int64_t> last_frame_start_ns_;  // the frame before's, warm-up included
  std::uint64_t stutters_ = 0;
  // The committed variant each workload runs (its compile number; 0: the build-time
  // pipeline), and every change of it, for meta.json.
  std::vector<std::uint64_t> bound_;
  nlohmann::json swaps_ = nlohmann::json::array();
  std::uint32_t frame_ = 0;
  bool held_ = false;  // BackgroundSpec::alternate_frames
  // RunSettings::end_requested or measure_limit_ms, after this many frames, and which.
  std::optional<std::size_t> ended_early_;
  std::string ended_why_;
  bool live_edit_ended_ = false;  // the live session restarts at once: no commit is waited for
  std::optional<std::int64_t> first_measured_start_ns_;  // measure_limit_ms counts from here
  std::int64_t loop_start_ns_ = 0;
  // Where the frame loop's thread spends each frame interval, and what the scheduler did to it
  // meanwhile: closed at each frame's start, written with the next measured frame's record.
  LoopPhaseClock phases_;
  std::optional<LoopPhaseTimes> interval_phases_;
  ThreadAccounting accounting_at_start_;
  SchedstatFile loop_schedstat_;  // the frame loop's own, opened once in start()
  std::optional<ThreadAccounting> interval_accounting_;
  GroupAccountingClock workers_clock_;
  std::vector<std::int64_t> worker_ids_;
  std::optional<GroupAccounting> interval_workers_;
};

FrameLoop::FrameLoop(ScenarioBackend& backend, const Scenario& scenario,
                     const RunSettings& settings, const ProgressCallback& progress,
                     FrameLoopOutcome& outcome)
    : backend_(backend),
      scenario_(scenario),
      settings_(settings),
      progress_(progress),
      outcome_(outcome),
      timeline_(outcome.timeline),
      background_(backend.background()),
      slots_(scenario.workloads.size()),
      stamps_(backend.stamps()),
      total_(settings.warmup_frames + settings.frames),
      timeout_ns_(std::int64_t{settings.frame_timeout_ms} * 1'000'000),
      shader_clock_(backend.facts().shader_clock.recorded),
      valid_bits_(timestamp_valid_bits_per_workload(backend.facts(), scenario)),
      poller_(settings.poller) {
  if (settings_.on_start) settings_.on_start(scenario_, to_json(backend_.facts()));
}

// Background work starts with the first frame. A workflow first renders training frames
// (unmeasured, before the warm-up) until it has converged or used its passes; then the
// measurement's mode is set. With bind_committed, the first `before_frames` measured frames
// come first, with the build-time pipelines, and the workflow or the commit after them.
void FrameLoop::plan_background() {
  bg_spec_ = background_ ? &background_->spec() : nullptr;
  const bool managed = bg_spec_ && !bg_spec_->outside_processor();
  binds_ = managed && bg_spec_->bind_committed;
  has_workflow_ = managed && bg_spec_->workflow != background::Workflow::none;
  if (binds_) {
    // Half by default; with a single measured frame there is no before part (the commit
    // comes first), rather than a failure that would stop a whole suite run with --frames 1.
    before_frames_ = bg_spec_->before_frames ? bg_spec_->before_frames : settings_.frames / 2;
    if (bg_spec_->before_frames && before_frames_ >= settings_.frames) {
      timeline_.failure = make_error(
          "background: before_frames = " + std::to_string(before_frames_) +
          " leaves no measured frame after the commit, of " + std::to_string(settings_.frames) +
          " (lower before_frames, or run more frames)");
      total_ = 0;
    }
  }
  workflow_pending_ = has_workflow_;
}

bool FrameLoop::begin_training() {
  workflow_pending_ = false;
  if (Status s = background_->begin_workflow(); !s) {
    timeline_.failure = s.error().with_context("background: ");
    return false;
  }
  training_ = true;
  return true;
}

// The frame's CPU side ([cpu]): the busy work is calibrated once per process, before any
// background work starts, so every condition of a study does the same work.
// With the background on CPUs of its own (cpus = "reserved:N" or "siblings"), the frame loop
// and its workers keep off them, and a frame whose workers came from "cores" has that many
// fewer, each with its own share of work as before (jobs::resolve_cores).
void FrameLoop::place_cpu_phase() {
  foreground_off_ = background_ ? background_->placement().cpus.foreground_off : std::vector<int>{};
  placed_cpu_ = scenario_.cpu;
  if (placed_cpu_ && !foreground_off_.empty()) {
    placed_cpu_->keep_off_cpus = foreground_off_;
    if (placed_cpu_->workers_from_cores) {
      const auto given = static_cast<std::uint32_t>(
          std::min<std::size_t>(foreground_off_.size(), placed_cpu_->workers - 1));
      jobs::resolve_cores(*placed_cpu_, placed_cpu_->workers + 1 - given);
    }
  }
  if (scenario_.study_fixes_allocator) fix_default_thresholds();
  allocator_state_ = kept_memory_state();
  loop_cpus_before_ = this_thread_cpus();
  // The loop's thread gets its CPUs back when the run ends, on every path.
  loop_cpus_back_.emplace([this] {
    if (!foreground_off_.empty() && loop_cpus_before_) restrict_this_thread_to(*loop_cpus_before_);
  });
  if (!foreground_off_.empty() && !keep_this_thread_off(foreground_off_))
    timeline_.failure = make_error(
        "the frame loop could not keep off CPUs " + describe_cpus(foreground_off_) + " (cpus = \"" +
        background::describe(bg_spec_->cpus) + "\"): " + last_system_error());
  if (timeline_.failure) total_ = 0;
  cpu_ = placed_cpu_ ? &*placed_cpu_ : nullptr;
  if (cpu_ && total_ > 0)
    job_system_ =
        std::make_unique<jobs::JobSystem>(*cpu_, jobs::calibrate_once().iterations_per_us);
  period_ns_ = cpu_ ? static_cast<std::int64_t>(cpu_->frame_period_ms * 1e6) : std::int64_t{0};
  // An injected delay (RunSettings::injected_frame_delay_us): each frame starts this much after
  // its pace, or after the loop came round when unpaced. Stutters stay judged by the period.
  delay_ns_ = static_cast<std::int64_t>(settings_.injected_frame_delay_us) * 1000;
}

// The background work starts, and with it the clocks of the loop's time.
void FrameLoop::start() {
  if (background_) {
    background_->start();
    if (has_workflow_ && !binds_ && total_ > 0 && !begin_training()) total_ = 0;
  }
  bound_.assign(slots_, 0);
  // The stamps' frame number: after any frame this backend ran before (stamps start zeroed,
  // so never 0), because a reused backend's stamps and semaphores still hold its last run's.
  frame_ = backend_.last_frame();
  // Everything a measured frame appends to is sized now: a vector that grows past glibc's
  // mmap threshold (128 KiB) moves and unmaps its old block, and an munmap sends a TLB-flush
  // interrupt to every CPU running a thread of this process, the background's included.
  timeline_.records.reserve(std::size_t{total_} * slots_);
  timeline_.frames.reserve(total_);
  calibrations_.reserve(total_ / kCalibrateEveryFrames + 2);
  loop_schedstat_ = SchedstatFile::of_calling_thread();
  loop_start_ns_ = monotonic_raw_ns();
  accounting_at_start_ = read_thread_accounting(loop_schedstat_);
}

// What the scheduler did to the frame loop and the workers since the last frame's start, read
// just before the next frame's jobs are released: the workers are between frames, and every
// read is a pread of a file opened once.
void FrameLoop::lap_accounting() {
  const ThreadAccounting now = read_thread_accounting(loop_schedstat_);
  interval_accounting_ = accounting_between(accounting_at_start_, now);
  accounting_at_start_ = now;
  if (job_system_) {
    // The workers' ids, asked for (a new vector) only until every worker has published its
    // own: after that the frame path allocates nothing for them.
    if (worker_ids_.empty() ||
        std::find(worker_ids_.begin(), worker_ids_.end(), 0) != worker_ids_.end())
      worker_ids_ = job_system_->worker_thread_ids();
    interval_workers_ = workers_clock_.lap(worker_ids_);
  }
}

// A frame starts at `start_ns` (its release); the thread goes on in `next`.
// Contract: lap_accounting() came just before.
void FrameLoop::frame_started(std::int64_t start_ns, LoopPhase next) {
  interval_phases_ = phases_.frame_started(start_ns, next);
}

// The pace: asleep, then spinning, until `target_ns`; late if the thread woke after it.
void FrameLoop::pace_until(std::int64_t target_ns) {
  phases_.enter(LoopPhase::pace, monotonic_raw_ns());
  wait_until_ns(target_ns);
  phases_.enter(LoopPhase::woke_late, target_ns);
}

void FrameLoop::run() {
  for (std::uint32_t index = 0; index < total_;) {
    const FrameEnd end = run_frame(index);
    if (end == FrameEnd::stop) break;
    if (end == FrameEnd::training) continue;  // training frames are not warm-up or measured frames
    // Progress (a line on a terminal) is written for the warm-up and at the end, never between
    // measured frames: a write to a terminal can block on it.
    if (progress_ && (index < settings_.warmup_frames || index + 1 == total_))
      progress_(index + 1, total_);
    ++index;
  }
}

// One frame: its background modes, CPU phase, recording and submission, release and wait,
// records; and whether the run goes on.
FrameLoop::FrameEnd FrameLoop::run_frame(std::uint32_t index) {
  ++frame_;
  if (workflow_pending_ && !training_ && index >= settings_.warmup_frames + before_frames_ &&
      !begin_training())
    return FrameEnd::stop;
  LoopFrame f;
  f.index = index;
  f.frame = frame_;
  f.measured = !training_ && index >= settings_.warmup_frames;
  f.measured_frame = f.measured ? index - settings_.warmup_frames : 0;
  if (binds_) swap_in_committed(f);
  if (ends_before(f) || !set_background_for(f) || !run_cpu_phase(f) || !record_and_submit(f))
    return FrameEnd::stop;
  release_and_wait(f);
  if (f.measured) add_records(f);
  return after_frame(f);
}

void FrameLoop::swap_in_committed(const LoopFrame& f) {
  if (auto committed = background_->take_committed()) {
    // The frame after a commit completed: the foreground swaps in what it committed.
    for (std::size_t w = 0; w < slots_ && w < committed->size(); ++w) {
      if (scenario_.workloads[w].kind != WorkloadKind::compute) continue;
      const auto& variant = (*committed)[w];
      const std::uint64_t compile = variant ? variant->compile : 0;
      if (compile == bound_[w]) continue;
      backend_.bind_compute_variant(w, variant ? variant->pipeline : 0);
      bound_[w] = compile;
      swaps_.push_back({{"workload", scenario_.workloads[w].name},
                        {"compile", compile},
                        {"measured_frame",
                         f.measured ? nlohmann::json(f.measured_frame) : nlohmann::json(nullptr)},
                        {"training", training_}});
    }
  }
}

// Whether the run ends before this frame: a live edit took effect, the time limit passed, or
// the run was interrupted.
bool FrameLoop::ends_before(const LoopFrame& f) {
  if (f.measured && !timeline_.frames.empty() && settings_.end_requested &&
      settings_.end_requested()) {
    ended_early_ = timeline_.frames.size();
    ended_why_ = "a live edit took effect (run --live)";
    live_edit_ended_ = true;
    return true;
  }
  // The first measured frame's start is where the time limit counts from; warm-up frames
  // (and a condition's slow start) do not use it up.
  if (f.measured && first_measured_start_ns_ && settings_.measure_limit_ms > 0 &&
      monotonic_raw_ns() - *first_measured_start_ns_ >=
          std::int64_t{settings_.measure_limit_ms} * 1'000'000) {
    ended_early_ = timeline_.frames.size();
    ended_why_ = "the time limit of " + std::to_string(settings_.measure_limit_ms) +
                 " ms per run (a study's round_ms)";
    return true;
  }
  if (f.measured && !first_measured_start_ns_) first_measured_start_ns_ = monotonic_raw_ns();
  if (settings_.should_stop && settings_.should_stop()) {
    timeline_.failure = make_error("interrupted after " + std::to_string(f.index) + " of " +
                                   std::to_string(total_) + " frames");
    return true;
  }
  return false;
}

// The frame failed before its release: the run's failure, and a measured frame's rows.
void FrameLoop::fail(const LoopFrame& f, const Error& error, RecordStatus status) {
  timeline_.failure = error.with_context(frame_label(f.index, settings_.warmup_frames) + ": ");
  if (f.measured) {
    for (std::size_t w = 0; w < slots_; ++w) {
      WorkloadFrameRecord record;
      record.frame = f.measured_frame;
      record.workload = w;
      record.status = status;
      timeline_.records.push_back(record);
    }
    FrameRecord frame_record;
    frame_record.frame = f.measured_frame;
    frame_record.status = status;
    timeline_.frames.push_back(frame_record);
  }
}

// The background's mode, commit request and hold for this frame; false when one failed.
bool FrameLoop::set_background_for(const LoopFrame& f) {
  const std::uint32_t mode_from = before_frames_;  // 0 unless bind_committed
  if (background_ && f.measured && !has_workflow_ &&
      (f.measured_frame == mode_from ||
       (background_->spec().action_every_frame && f.measured_frame > mode_from))) {
    // SetBackgroundProcessingMode as the application would call it, outside the frame's
    // measured CPU time.
    if (auto further = background_->apply_measurement_mode(); !further) {
      timeline_.failure = further.error().with_context("background: ");
      return false;
    }
  }
  // Waiting on the background (commit_at_frame): asked for before the frame, then the frame
  // loop goes on rendering; the time to the event is read after the measured frames.
  if (background_ && f.measured && bg_spec_->commit_at_frame &&
      f.measured_frame == *bg_spec_->commit_at_frame)
    if (Status asked = background_->request_commit(f.measured_frame); !asked) {
      timeline_.failure = asked.error().with_context("background: ");
      return false;
    }
  // The alternation's hold, set between frames like the mode: a held block's frames start
  // no compile (those already running finish, and the frames they overlap show it).
  const bool hold = background_ && f.measured &&
                    background::held_in_block(bg_spec_->alternate_frames, f.measured_frame);
  if (hold != held_) background_->hold(held_ = hold);
  return true;
}

// The CPU phase: the frame's jobs, paced (begun already when the frame before's GPU work
// outlasted this frame's start, with two frames in flight), then recorded and submitted.
// False when the jobs missed the deadline.
bool FrameLoop::run_cpu_phase(LoopFrame& f) {
  if (!job_system_) return true;
  if (!job_system_->in_progress()) {
    if (last_frame_start_ns_ && (period_ns_ > 0 || delay_ns_ > 0))
      pace_until(delay_ns_ > 0
                     ? std::max(*last_frame_start_ns_ + period_ns_, monotonic_raw_ns()) + delay_ns_
                     : *last_frame_start_ns_ + period_ns_);
    if (background_) background_->cpu_phase(true);  // dispatch = "gaps": before the release
    lap_accounting();
    frame_started(job_system_->begin_frame(), LoopPhase::jobs);
  } else {
    phases_.enter(LoopPhase::jobs, monotonic_raw_ns());
  }
  f.cpu_phase = job_system_->wait_frame(monotonic_raw_ns() + timeout_ns_);
  if (!f.cpu_phase) {
    fail(f,
         make_error("the frame's CPU jobs did not all run within the frame's deadline (" +
                    std::to_string(settings_.frame_timeout_ms) + " ms)"),
         RecordStatus::timeout);
    return false;
  }
  return true;
}

// Records and submits the frame, then reads a calibration; false when either failed.
bool FrameLoop::record_and_submit(LoopFrame& f) {
  if (background_ && !f.cpu_phase) background_->cpu_phase(true);  // recording is the CPU phase
  if (!f.cpu_phase) lap_accounting();
  // The poller is woken now, so that its wake-up overlaps the recording and submission and it
  // is spinning by the release (release_and_wait); the GPU work cannot start before that.
  if (settings_.stamping)
    poller_.arm(stamps_.slot_words, frame_, monotonic_raw_ns() + timeout_ns_ + timeout_ns_);
  f.cpu_start_ns = monotonic_raw_ns();
  f.frame_start_ns = f.cpu_phase ? f.cpu_phase->release_ns : f.cpu_start_ns;
  if (f.cpu_phase)
    phases_.enter(LoopPhase::submit, f.cpu_start_ns);
  else
    frame_started(f.cpu_start_ns, LoopPhase::submit);
  // This frame's interval, closed at its start (here, or in the frame before's GPU wait with
  // two frames in flight, which also closes the next one before this record is written).
  f.phases_of_interval = interval_phases_;
  f.accounting_of_interval = interval_accounting_;
  f.workers_of_interval = interval_workers_;
  if (last_frame_start_ns_)
    f.frame_interval_us = ns_to_us_since(f.frame_start_ns, *last_frame_start_ns_);
  last_frame_start_ns_ = f.frame_start_ns;
  if (Status s = backend_.record_frame(frame_); !s) {
    end_poll_unreleased();
    fail(f, s.error(), RecordStatus::gpu_error);
    return false;
  }
  if (const GpuOutcome submitted = backend_.submit_frame(frame_);
      submitted.status != GpuStatus::ok) {
    end_poll_unreleased();
    fail(f, failure_of(submitted, "submitting the frame"),
         submitted.status == GpuStatus::device_lost ? RecordStatus::device_lost
                                                    : RecordStatus::gpu_error);
    outcome_.gpu_may_be_busy = true;
    return false;
  }
  f.cpu_submitted_ns = monotonic_raw_ns();
  if (background_) background_->cpu_phase(false);
  phases_.enter(LoopPhase::tool, f.cpu_submitted_ns);
  // A calibrated-timestamp read is a driver call that may share a lock with the background's
  // pipeline creation: one every kCalibrateEveryFrames frames, the latest one between. The
  // first and the last measured frame always have their own, so the drift spans the run.
  const bool first_or_last_measured =
      f.measured && (f.measured_frame == 0 || f.index + 1 == total_);
  if (!last_calibration_ || ++frames_since_calibration_ >= kCalibrateEveryFrames ||
      first_or_last_measured) {
    frames_since_calibration_ = 0;
    if (auto fresh = backend_.calibrate()) {
      last_calibration_ = fresh;
      worst_deviation_ns_ =
          std::max(worst_deviation_ns_, static_cast<double>(fresh->max_deviation_ns));
      if (f.measured) calibrations_.push_back(*fresh);
      f.calibrated = true;
    }
  }
  f.calibration = last_calibration_;
  return true;
}

// Releases the frame's gate and waits for its GPU work and stamps, each with a deadline; then
// reads its timestamps.
void FrameLoop::release_and_wait(LoopFrame& f) {
  // Release: the poller, woken before the recording, is spinning by now, so no stamp is seen
  // late. It is waited for only briefly and never by yielding: a poller the scheduler keeps off
  // a CPU is not waited for, its windows say how late it saw the stamps.
  if (settings_.stamping) {
    f.poller_ready = poller_.wait_until_polling(monotonic_raw_ns() + kPollerReadySpinNs);
    poller_.shorten_deadline(monotonic_raw_ns() + timeout_ns_);
  }
  f.t0_ns = monotonic_raw_ns();
  phases_.enter(LoopPhase::gpu_wait, f.t0_ns);
  f.waited = backend_.release_gate(frame_);
  // Two frames in flight: the next frame's CPU phase begins at its pace while this frame's
  // GPU work still runs (the wait's first deadline is that start), as a swapchain lets a game.
  bool gpu_done = false;
  if (f.waited.status == GpuStatus::ok && job_system_ && cpu_->frames_in_flight >= 2 &&
      !training_ && f.index + 1 < total_)
    gpu_done = next_cpu_phase_during_wait(f);
  if (f.waited.status == GpuStatus::ok && !gpu_done) f.waited = wait_for_gpu(f.t0_ns + timeout_ns_);
  f.waited_ns = monotonic_raw_ns();
  phases_.enter(LoopPhase::tool, f.waited_ns);
  // The GPU is done (or given up on): stamps still missing a little after now never come.
  // "A little" is generous because the poller is one thread among many: with a game frame's
  // workers busy on every core (and a competitor beside them) it can wait a scheduler time
  // slice or more for a core. It ends as soon as every stamp is seen, so only a lost stamp,
  // which ends the run, waits the whole 100 ms.
  if (settings_.stamping) {
    poller_.shorten_deadline(monotonic_raw_ns() + 100'000'000);
    f.polled = poller_.wait();
  } else {
    f.polled.start_ns.resize(slots_);
    f.polled.end_ns.resize(slots_);
  }

  if (f.waited.status == GpuStatus::ok)
    f.timestamps = backend_.read_timestamps();
  else
    outcome_.gpu_may_be_busy = true;
}

// A frame that failed before its release: its poll, armed before the recording, ends now.
void FrameLoop::end_poll_unreleased() {
  if (!settings_.stamping) return;
  poller_.shorten_deadline(0);
  (void)poller_.wait();
}

// The frame loop's wait for this frame's GPU work until `deadline_ns`, in the game's style
// ([cpu] gpu_wait): the driver's blocking wait, or polls of the frame's completion (a wait whose
// deadline has passed: it only asks) with nothing, or a sched_yield, between them.
GpuOutcome FrameLoop::wait_for_gpu(std::int64_t deadline_ns) {
  const jobs::LoopWait style = scenario_.cpu ? scenario_.cpu->gpu_wait : jobs::LoopWait::block;
  if (style == jobs::LoopWait::block) return backend_.wait_frame(frame_, deadline_ns);
  for (;;) {
    const std::int64_t now_ns = monotonic_raw_ns();
    const GpuOutcome polled = backend_.wait_frame(frame_, std::min(now_ns, deadline_ns));
    if (polled.status != GpuStatus::timeout || now_ns >= deadline_ns) return polled;
    if (style == jobs::LoopWait::yield)
      std::this_thread::yield();
    else
      GPUOVERLAP_CPU_RELAX();
  }
}

// The wait for the frame until the next frame's start, where that comes before the frame's
// deadline; the next frame's jobs begin there if the GPU is still busy. True when the wait is
// over: the GPU is done, or failed.
bool FrameLoop::next_cpu_phase_during_wait(LoopFrame& f) {
  const std::int64_t next_start_ns = f.frame_start_ns + period_ns_ + delay_ns_;
  if (next_start_ns >= f.t0_ns + timeout_ns_) return false;
  f.waited = wait_for_gpu(next_start_ns);
  // Done, or failed: nothing to wait for.
  const bool gpu_done = f.waited.status != GpuStatus::timeout;
  if (!gpu_done) {
    // A wait may return before its deadline (a spurious wake): the pace still holds.
    // Waiting for the GPU until the pace's start; woken late if after it.
    wait_until_ns(next_start_ns);
    phases_.enter(LoopPhase::woke_late, next_start_ns);
    if (background_) background_->cpu_phase(true);
    lap_accounting();
    frame_started(job_system_->begin_frame(), LoopPhase::gpu_wait);
    f.waited = GpuOutcome::ok();
  }
  return gpu_done;
}

// A measured frame's records, passed on to RunSettings::on_frame.
void FrameLoop::add_records(const LoopFrame& f) {
  if (!first_measured_t0_ns_) first_measured_t0_ns_ = f.t0_ns;
  const FrameRecord& frame_record = add_frame_records(timeline_, f,
                                                      {.scenario = scenario_,
                                                       .stamps = stamps_,
                                                       .valid_bits = valid_bits_,
                                                       .variants = bound_,
                                                       .origin_ns = *first_measured_t0_ns_,
                                                       .period_ns = period_ns_,
                                                       .held = held_,
                                                       .stamping = settings_.stamping,
                                                       .shader_clock = shader_clock_});
  if (frame_record.stutter) ++stutters_;
  if (settings_.on_frame)
    settings_.on_frame(scenario_, frame_record,
                       std::span<const WorkloadFrameRecord>(timeline_.records).last(slots_));
}

// After the frame's records: a failed wait or a missed deadline ends the run; a workflow's
// training frame tells the workflow.
FrameLoop::FrameEnd FrameLoop::after_frame(const LoopFrame& f) {
  if (f.waited.status == GpuStatus::device_lost || f.waited.status == GpuStatus::failed) {
    timeline_.failure =
        failure_of(f.waited, "waiting for " + frame_label(f.index, settings_.warmup_frames));
    return FrameEnd::stop;
  }
  if (f.waited.status == GpuStatus::timeout || f.polled.timed_out) {
    // Past the deadline: say what happened (late, still running, stuck, stamps lost), from
    // the stamps at the deadline and a bounded grace period after it. The rows stay
    // `timeout`, as they were at the deadline. Background compiles stop starting now, not
    // after the grace period.
    if (background_) background_->request_stop();
    const Error timeout_code = f.waited.error ? *f.waited.error : backend_.timeout_error();
    timeline_.failure = Error{describe_missed_deadline(missed_deadline_facts(
                                  backend_, settings_, slots_, frame_, f.index, f.t0_ns, f.polled,
                                  f.waited.status, outcome_.gpu_may_be_busy)),
                              timeout_code.api_code, timeout_code.api_code_name};
    return FrameEnd::stop;
  }
  if (training_) {
    auto more = background_->workflow_frame_rendered();
    if (!more) {
      timeline_.failure = more.error().with_context("background: ");
      return FrameEnd::stop;
    }
    training_ = *more;
    if (!training_)
      if (auto further = background_->apply_measurement_mode(); !further) {
        timeline_.failure = further.error().with_context("background: ");
        return FrameEnd::stop;
      }
    return FrameEnd::training;
  }
  return FrameEnd::counted;
}

// The end: the workers and the background stopped, the timeline's meta.
void FrameLoop::finish() {
  const std::int64_t loop_end_ns = monotonic_raw_ns();
  if (first_measured_t0_ns_) timeline_.time_origin_ns = *first_measured_t0_ns_;
  nlohmann::json meta = to_json(backend_.facts());
  if (cpu_)
    meta["cpu"] = cpu_meta(*cpu_, job_system_.get(), stutters_, settings_.injected_frame_delay_us);
  meta["threads"] = thread_scheduling_meta(job_system_.get());
  // Which threads to look for in a scheduler trace, and when the measured frames ran there
  // (CLOCK_MONOTONIC_RAW, the trace's mono_raw clock): from the first measured frame's start
  // to the last one's end.
  meta["threads"]["frame_loop"]["thread_id"] = current_thread_id();
  if (settings_.stamping) meta["threads"]["poller"] = {{"thread_id", poller_.thread_id()}};
  if (first_measured_start_ns_)
    meta["measured_span_ns"] = {{"start", *first_measured_start_ns_}, {"end", loop_end_ns}};
  meta["allocator"] = allocator_state_;
  // The workers stop before the background work: workers that spin (wait = "spin") hold every
  // core but the poller's, so an idle-priority compile still in flight, which stopping waits
  // for, would get no CPU until they stopped (7-29 s per scenario on the H100 machine with the
  // poller on a CPU of its own).
  job_system_.reset();  // joins the workers, also when a failure left a frame's jobs running
  if (background_ && !timeline_.failure && !live_edit_ended_) {
    // Where the measured frames ended before commit_at_frame asked (their count, a study's
    // round_ms) it asks now; then the foreground blocks on the event, as a benchmark waits for
    // its results. After the workers stopped: spinning workers would starve an idle-priority
    // compile, and the wait would measure them rather than the policy.
    background_->cpu_phase(false);
    if (auto waited = background_->finish_commit_wait(); !waited)
      timeline_.failure = waited.error().with_context("background: ");
    else
      timeline_.commit_wait = *waited;
  }
  if (background_) stop_background(meta);
  // Where the scenario's time went (the executor adds opening and closing the device): the
  // frames before the measured ones (training, warm-up), the measured ones, and stopping the
  // background work and the workers after them.
  const std::int64_t measured_from_ns = first_measured_start_ns_.value_or(loop_end_ns);
  meta["phases_ms"] = {{"before_measured", rounded_ms(measured_from_ns - loop_start_ns_)},
                       {"measured", rounded_ms(loop_end_ns - measured_from_ns)},
                       {"after_frames", rounded_ms(monotonic_raw_ns() - loop_end_ns)}};
  if (ended_early_)
    meta["ended_early"] = {
        {"measured_frames", *ended_early_}, {"of", settings_.frames}, {"why", ended_why_}};
  meta["clocks"]["timestamp"]["max_calibration_deviation_ns"] = worst_deviation_ns_;
  if (!calibrations_.empty())
    meta["clocks"]["timestamp"]["drift"] = calibration_drift(calibrations_);
  if (shader_clock_)
    meta["clocks"]["shader_clock"]["verification"] = verify_shader_clock_timebase(timeline_);
  timeline_.meta = meta;
}

// The background work stopped, its records and meta.json's "background".
void FrameLoop::stop_background(nlohmann::json& meta) {
  const std::int64_t stop_start_ns = monotonic_raw_ns();
  background_->stop();
  const double stop_wait_ms = static_cast<double>(monotonic_raw_ns() - stop_start_ns) / 1e6;
  timeline_.background_tasks = background_->records();
  meta["background"] = background_meta(*background_, stop_wait_ms);
  if (const auto& wait = timeline_.commit_wait)
    meta["background"]["commit_wait"] = commit_wait_meta(*wait, bg_spec_->commit_timeout_ms);
  if (binds_) {
    meta["background"]["before_frames"] = before_frames_;
    meta["background"]["swaps"] = swaps_;
  }
  annotate_background_activity(timeline_);
  add_background_scheduling(meta["threads"], *background_);
}

}  // namespace

FrameLoopOutcome run_frames(ScenarioBackend& backend, const Scenario& scenario,
                            const RunSettings& settings, const ProgressCallback& progress) {
  FrameLoopOutcome outcome;
  ForegroundThreads threads;
  const bool custom_slice = scenario.cpu && scenario.cpu->slice_ms;
  const ScopeExit default_slice([custom_slice] {
    if (custom_slice) (void)set_this_thread_slice_ns(0);
  });
  {
    FrameLoop loop(backend, scenario, settings, progress, outcome);
    loop.plan_background();
    loop.place_cpu_phase();
    loop.start();
    // The game's custom slice ([cpu] slice_ms) on the frame loop's thread too, for this scenario
    // only (the next one starts from the kernel's default again), and after the threads the
    // loop starts, which would inherit it: the poller's and the background's keep the default.
    // meta.json's threads.frame_loop reads it back.
    if (custom_slice)
      (void)set_this_thread_slice_ns(static_cast<std::uint64_t>(*scenario.cpu->slice_ms * 1e6));
    // The kernel's record covers the frames only: started after the threads the loop starts,
    // stopped after its last frame, both outside the measured frames.
    SchedTraceScope sched_trace(settings.sched_trace);
    loop.run();
    sched_trace.stop();
    threads = loop.foreground_threads();
    loop.finish();
    sched_trace.attach(outcome.timeline, threads);
  }  // the loop's thread gets its CPUs back, the stamp poller goes
  return outcome;
}

}  // namespace gpuoverlap

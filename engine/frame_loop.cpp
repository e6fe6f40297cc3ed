#include "engine/frame_loop.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
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
#include "engine/device_clocks.h"
#include "engine/loop_phases.h"
#include "jobs/busy_work.h"
#include "jobs/job_system.h"
#include "queues/deadline_diagnosis.h"
#include "queues/stamp_poller.h"
#include "timeline/clock_agreement.h"
#include "timeline/statistics.h"

namespace gpuoverlap {
namespace {

// How the GPU clock moves against the CPU clock over the run, from the per-frame calibrations:
// the rate difference (ppm, least squares) and how far single calibrations stray from it.
nlohmann::json calibration_drift(const std::vector<GpuCalibration>& calibrations) {
  std::vector<double> gpu_ns, cpu_ns, deviations;
  for (const GpuCalibration& c : calibrations) {
    gpu_ns.push_back(static_cast<double>(c.gpu_ticks - calibrations.front().gpu_ticks) *
                     c.tick_period_ns);
    cpu_ns.push_back(static_cast<double>(c.cpu_ns - calibrations.front().cpu_ns));
    deviations.push_back(static_cast<double>(c.max_deviation_ns));
  }
  nlohmann::json drift = {{"calibrations", calibrations.size()},
                          {"deviation_ns_p50", *percentile(deviations, 50)},
                          {"deviation_ns_max", *percentile(deviations, 100)}};
  if (auto fit = linear_fit(gpu_ns, cpu_ns)) {
    double worst = 0;
    for (std::size_t i = 0; i < gpu_ns.size(); ++i)
      worst = std::max(worst, std::fabs(cpu_ns[i] - (fit->slope * gpu_ns[i] + fit->intercept)));
    drift["rate_ppm"] = (fit->slope - 1.0) * 1e6;
    drift["max_residual_ns"] = worst;
    drift["span_s"] = gpu_ns.back() / 1e9;
  }
  return drift;
}

RecordStatus status_for(GpuStatus status) {
  if (status == GpuStatus::timeout) return RecordStatus::timeout;
  if (status == GpuStatus::device_lost) return RecordStatus::device_lost;
  return RecordStatus::gpu_error;
}

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

// The shader clock of a stamp, when the stamp is this frame's: the clock words are written
// before the stamp they belong to, so only then are they this frame's too.
std::optional<std::uint64_t> shader_clock_ticks(const std::uint32_t* slot, std::size_t stamp_word,
                                                std::size_t clock_word, std::uint32_t frame) {
  if (__atomic_load_n(slot + stamp_word, __ATOMIC_ACQUIRE) != frame) return std::nullopt;
  return std::uint64_t{__atomic_load_n(slot + clock_word, __ATOMIC_RELAXED)} |
         std::uint64_t{__atomic_load_n(slot + clock_word + 1, __ATOMIC_RELAXED)} << 32;
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

// The frame's span on the GPU: its first workload's start to its last one's end, on the
// timestamps, else on the poll clock. The GPU's own clock first: with every core busy the
// poller can be descheduled and see a whole frame's stamps at once (a span of 0 on the H100
// machine with spinning workers and a competitor).
std::optional<double> gpu_span_us(std::span<const WorkloadFrameRecord> records) {
  for (const char* clock : {"ts", "poll"}) {
    std::optional<double> first, last;
    bool complete = true;
    for (const WorkloadFrameRecord& r : records) {
      const auto start = start_on(r, clock), end = end_on(r, clock);
      if (!start || !end) {
        complete = false;
        break;
      }
      first = first ? std::min(*first, *start) : *start;
      last = last ? std::max(*last, *end) : *end;
    }
    if (complete && first && last) return *last - *first;
  }
  return std::nullopt;
}

// The background session's part of meta.json, after it stopped.
nlohmann::json background_meta(const background::BackgroundSession& session, double stop_wait_ms) {
  nlohmann::json bg = background::to_json(session.spec());
  // How long the end of the run waited for compiles in flight (one compile per thread at
  // most): the bound on background work outliving the frames.
  bg["stop_wait_ms"] = std::round(stop_wait_ms * 10.0) / 10.0;
  bg["processor"] = {
      {"max_concurrent", session.processor_settings().max_concurrent},
      {"high_priority_threads", session.processor_settings().high_priority_threads},
      {"policy", to_string(session.processor_settings().policy)},
      // Before policies: whether the threads asked for SCHED_IDLE.
      {"idle_priority", session.processor_settings().policy == ThreadPolicy::idle},
      {"policy_refused", session.policy_refused() ? nlohmann::json(*session.policy_refused())
                                                  : nlohmann::json(nullptr)}};
  // Where the compile threads were asked to run and what the foreground gave up for it; the
  // threads' own read-back is meta.json's threads.background_idle (cpus, cgroup).
  const background::HostPlacement& placement = session.placement();
  bg["processor"]["cpus"] = placement.cpus.background_cpus.empty()
                                ? std::string("any")
                                : describe_cpus(placement.cpus.background_cpus);
  bg["processor"]["foreground_off_cpus"] = describe_cpus(placement.cpus.foreground_off);
  bg["processor"]["cgroup"] = placement.cgroup ? nlohmann::json(placement.cgroup->relative_path())
                                               : nlohmann::json(nullptr);
  bg["processor"]["allocator"] = kept_memory_state();
  const background::WorkflowOutcome& w = session.workflow_outcome();
  if (session.spec().workflow != background::Workflow::none)
    bg["workflow_outcome"] = {{"passes", w.passes},
                              {"training_frames_rendered", w.frames_rendered},
                              {"converged", w.converged},
                              {"commit_wait_ms", w.commit_wait_ms}};
  // The driver's own background processing (D3D12), told the same modes as the runtime.
  const background::DriverModeCalls& driver = session.driver_mode_calls();
  if (driver.calls > 0) {
    bg["driver_mode"] = {{"api", driver.api}, {"calls", driver.calls}, {"results", driver.results}};
    if (driver.last_further_measurements_desired)
      bg["driver_mode"]["last_further_measurements_desired"] =
          *driver.last_further_measurements_desired;
  }
  return bg;
}

// One kind of thread's scheduling and affinity: "cpus" is the first thread's (ranges, or
// "n/a: why"); where threads of the kind differ (pinned workers, one CPU each), "cpus_of_all"
// joins them and "cpus_unlike_the_first" counts them.
nlohmann::json scheduling_json(const SchedulingSeen::Seen& seen) {
  const ThreadScheduling& s = seen.first;
  nlohmann::json j = {{"policy", s.policy}, {s.level_name, s.level}, {"threads", seen.threads}};
  if (seen.differing > 0) j["threads_unlike_the_first"] = seen.differing;
  j["cpus"] = s.cpus ? describe_cpus(*s.cpus) : "n/a: " + thread_cpus_unavailable_reason();
  if (s.cgroup) j["cgroup"] = *s.cgroup;
  if (seen.cpus_unlike_the_first > 0) {
    j["cpus_of_all"] = describe_cpus(seen.cpus_of_all);
    j["cpus_unlike_the_first"] = seen.cpus_unlike_the_first;
  }
  return j;
}

// The scheduling each kind of thread of this run ran under, read back from the threads (a
// verdict on non-intrusiveness is about the OS scheduler, so what it was told is part of the
// result). Called from the frame loop's thread; the stamp poller's placement is meta.json's
// "poller" (poller_placement.h).
// meta.json's "threads": the frame loop's and the workers' (read before the workers stop)...
nlohmann::json thread_scheduling_meta(const jobs::JobSystem* job_system) {
  nlohmann::json threads;
  const ThreadScheduling loop = this_thread_scheduling();
  threads["frame_loop"] = scheduling_json({loop, 1, 0, loop.cpus.value_or(std::vector<int>{}), 0});
  threads["frame_loop"]["pinned"] = false;
  // frames.csv's loop_run_delay_us: kept, or why not (Windows keeps no such figure).
  threads["frame_loop"]["run_delay"] = read_thread_accounting().run_delay_ns
                                           ? std::string("kept")
                                           : std::string("n/a: ") + run_delay_unavailable_reason();
  if (job_system) {
    if (const auto seen = job_system->worker_scheduling()) {
      threads["job_workers"] = scheduling_json(*seen);
      threads["job_workers"]["pinned"] = job_system->spec().pin_workers;
    }
  }
  return threads;
}

// ... and the background threads', once they stopped.
void add_background_scheduling(nlohmann::json& threads,
                               const background::BackgroundSession& background) {
  for (const auto& [kind, seen] : background.thread_scheduling())
    threads["background_" + kind] = scheduling_json(seen);
}

}  // namespace

FrameLoopOutcome run_frames(ScenarioBackend& backend, const Scenario& scenario,
                            const RunSettings& settings, const ProgressCallback& progress) {
  FrameLoopOutcome outcome;
  ScenarioTimeline& timeline = outcome.timeline;
  background::BackgroundSession* const background = backend.background();
  const std::size_t slots = scenario.workloads.size();
  const StampView stamps = backend.stamps();
  std::uint32_t total = settings.warmup_frames + settings.frames;
  const std::int64_t timeout_ns = std::int64_t{settings.frame_timeout_ms} * 1'000'000;
  const bool shader_clock = backend.facts().shader_clock.recorded;
  const std::vector<std::uint32_t> valid_bits =
      timestamp_valid_bits_per_workload(backend.facts(), scenario);
  double worst_deviation_ns = 0;
  StampPoller poller(settings.poller);
  if (settings.on_start) settings.on_start(scenario, to_json(backend.facts()));
  std::optional<std::int64_t> first_measured_t0_ns;
  std::vector<GpuCalibration> calibrations;  // one per measured frame, for the drift

  // Background work starts with the first frame. A workflow first renders training frames
  // (unmeasured, before the warm-up) until it has converged or used its passes; then the
  // measurement's mode is set. With bind_committed, the first `before_frames` measured frames
  // come first, with the build-time pipelines, and the workflow or the commit after them.
  const background::BackgroundSpec* bg_spec = background ? &background->spec() : nullptr;
  const bool managed = bg_spec && bg_spec->unmanaged_threads == 0;
  const bool binds = managed && bg_spec->bind_committed;
  const bool has_workflow = managed && bg_spec->workflow != background::Workflow::none;
  std::uint32_t before_frames = 0;
  if (binds) {
    // Half by default; with a single measured frame there is no before part (the commit
    // comes first), rather than a failure that would stop a whole suite run with --frames 1.
    before_frames = bg_spec->before_frames ? bg_spec->before_frames : settings.frames / 2;
    if (bg_spec->before_frames && before_frames >= settings.frames) {
      timeline.failure = make_error("background: before_frames = " + std::to_string(before_frames) +
                                    " leaves no measured frame after the commit, of " +
                                    std::to_string(settings.frames) +
                                    " (lower before_frames, or run more frames)");
      total = 0;
    }
  }
  bool training = false;
  bool workflow_pending = has_workflow;  // begun at the first measured frame past the before
  auto begin_training = [&]() {
    workflow_pending = false;
    if (Status s = background->begin_workflow(); !s) {
      timeline.failure = s.error().with_context("background: ");
      return false;
    }
    training = true;
    return true;
  };
  // The frame's CPU side ([cpu]): the busy work is calibrated once per process, before any
  // background work starts, so every condition of a study does the same work.
  // With the background on CPUs of its own (cpus = "reserved:N" or "siblings"), the frame loop
  // and its workers keep off them, and a frame whose workers came from "cores" has that many
  // fewer, each with its own share of work as before (jobs::resolve_cores).
  const std::vector<int> foreground_off =
      background ? background->placement().cpus.foreground_off : std::vector<int>{};
  std::optional<jobs::CpuFrameSpec> placed_cpu = scenario.cpu;
  if (placed_cpu && !foreground_off.empty()) {
    placed_cpu->keep_off_cpus = foreground_off;
    if (placed_cpu->workers_from_cores) {
      const auto given = static_cast<std::uint32_t>(
          std::min<std::size_t>(foreground_off.size(), placed_cpu->workers - 1));
      jobs::resolve_cores(*placed_cpu, placed_cpu->workers + 1 - given);
    }
  }
  if (scenario.study_fixes_allocator) fix_default_thresholds();
  const std::string allocator_state = kept_memory_state();  // meta.json "allocator"
  const std::optional<std::vector<int>> loop_cpus_before = this_thread_cpus();
  const ScopeExit loop_cpus_back([&] {
    if (!foreground_off.empty() && loop_cpus_before) restrict_this_thread_to(*loop_cpus_before);
  });
  if (!foreground_off.empty() && !keep_this_thread_off(foreground_off))
    timeline.failure = make_error(
        "the frame loop could not keep off CPUs " + describe_cpus(foreground_off) + " (cpus = \"" +
        background::describe(bg_spec->cpus) + "\"): " + last_system_error());
  if (timeline.failure) total = 0;
  const jobs::CpuFrameSpec* const cpu = placed_cpu ? &*placed_cpu : nullptr;
  std::unique_ptr<jobs::JobSystem> job_system;
  if (cpu && total > 0)
    job_system = std::make_unique<jobs::JobSystem>(*cpu, jobs::calibrate_once().iterations_per_us);
  const std::int64_t period_ns =
      cpu ? static_cast<std::int64_t>(cpu->frame_period_ms * 1e6) : std::int64_t{0};
  // An injected delay (RunSettings::injected_frame_delay_us): each frame starts this much after
  // its pace, or after the loop came round when unpaced. Stutters stay judged by the period.
  const std::int64_t delay_ns = static_cast<std::int64_t>(settings.injected_frame_delay_us) * 1000;
  std::optional<std::int64_t> last_frame_start_ns;  // the frame before's, warm-up included
  std::uint64_t stutters = 0;
  if (background) {
    background->start();
    if (has_workflow && !binds && total > 0 && !begin_training()) total = 0;
  }
  // The committed variant each workload runs (its compile number; 0: the build-time
  // pipeline), and every change of it, for meta.json.
  std::vector<std::uint64_t> bound(slots, 0);
  nlohmann::json swaps = nlohmann::json::array();
  // The stamps' frame number: after any frame this backend ran before (stamps start zeroed,
  // so never 0), because a reused backend's stamps and semaphores still hold its last run's.
  std::uint32_t frame = backend.last_frame();
  bool held = false;  // BackgroundSpec::alternate_frames
  // RunSettings::end_requested or measure_limit_ms, after this many frames, and which.
  std::optional<std::size_t> ended_early;
  std::string ended_why;
  bool live_edit_ended = false;  // the live session restarts at once: no commit is waited for
  std::optional<std::int64_t> first_measured_start_ns;  // measure_limit_ms counts from here
  const std::int64_t loop_start_ns = monotonic_raw_ns();
  // Where the frame loop's thread spends each frame interval, and what the scheduler did to it
  // meanwhile: closed at each frame's start, written with the next measured frame's record.
  LoopPhaseClock phases;
  std::optional<LoopPhaseTimes> interval_phases;
  ThreadAccounting accounting_at_start = read_thread_accounting();
  std::optional<ThreadAccounting> interval_accounting;
  GroupAccountingClock workers_clock;
  std::optional<GroupAccounting> interval_workers;
  // A frame starts at `start_ns` (its release); the thread goes on in `next`.
  auto frame_started = [&](std::int64_t start_ns, LoopPhase next) {
    interval_phases = phases.frame_started(start_ns, next);
    const ThreadAccounting now = read_thread_accounting();
    interval_accounting = accounting_between(accounting_at_start, now);
    accounting_at_start = now;
    if (job_system) interval_workers = workers_clock.lap(job_system->worker_thread_ids());
  };
  // The pace: asleep, then spinning, until `target_ns`; late if the thread woke after it.
  auto pace_until = [&](std::int64_t target_ns) {
    phases.enter(LoopPhase::pace, monotonic_raw_ns());
    wait_until_ns(target_ns);
    phases.enter(LoopPhase::woke_late, target_ns);
  };
  for (std::uint32_t index = 0; index < total;) {
    ++frame;
    if (workflow_pending && !training && index >= settings.warmup_frames + before_frames &&
        !begin_training())
      break;
    const bool measured = !training && index >= settings.warmup_frames;
    const std::uint32_t measured_frame = measured ? index - settings.warmup_frames : 0;
    if (binds)
      if (auto committed = background->take_committed()) {
        // The frame after a commit completed: the foreground swaps in what it committed.
        for (std::size_t w = 0; w < slots && w < committed->size(); ++w) {
          if (scenario.workloads[w].kind != WorkloadKind::compute) continue;
          const auto& variant = (*committed)[w];
          const std::uint64_t compile = variant ? variant->compile : 0;
          if (compile == bound[w]) continue;
          backend.bind_compute_variant(w, variant ? variant->pipeline : 0);
          bound[w] = compile;
          swaps.push_back({{"workload", scenario.workloads[w].name},
                           {"compile", compile},
                           {"measured_frame",
                            measured ? nlohmann::json(measured_frame) : nlohmann::json(nullptr)},
                           {"training", training}});
        }
      }
    if (measured && !timeline.frames.empty() && settings.end_requested &&
        settings.end_requested()) {
      ended_early = timeline.frames.size();
      ended_why = "a live edit took effect (run --live)";
      live_edit_ended = true;
      break;
    }
    // The first measured frame's start is where the time limit counts from; warm-up frames
    // (and a condition's slow start) do not use it up.
    if (measured && first_measured_start_ns && settings.measure_limit_ms > 0 &&
        monotonic_raw_ns() - *first_measured_start_ns >=
            std::int64_t{settings.measure_limit_ms} * 1'000'000) {
      ended_early = timeline.frames.size();
      ended_why = "the time limit of " + std::to_string(settings.measure_limit_ms) +
                  " ms per run (a study's round_ms)";
      break;
    }
    if (measured && !first_measured_start_ns) first_measured_start_ns = monotonic_raw_ns();
    if (settings.should_stop && settings.should_stop()) {
      timeline.failure = make_error("interrupted after " + std::to_string(index) + " of " +
                                    std::to_string(total) + " frames");
      break;
    }
    auto fail = [&](const Error& error, RecordStatus status) {
      timeline.failure = error.with_context(frame_label(index, settings.warmup_frames) + ": ");
      if (measured) {
        for (std::size_t w = 0; w < slots; ++w) {
          WorkloadFrameRecord record;
          record.frame = measured_frame;
          record.workload = w;
          record.status = status;
          timeline.records.push_back(record);
        }
        FrameRecord frame_record;
        frame_record.frame = measured_frame;
        frame_record.status = status;
        timeline.frames.push_back(frame_record);
      }
    };
    const std::uint32_t mode_from = before_frames;  // 0 unless bind_committed
    if (background && measured && !has_workflow &&
        (measured_frame == mode_from ||
         (background->spec().action_every_frame && measured_frame > mode_from))) {
      // SetBackgroundProcessingMode as the application would call it, outside the frame's
      // measured CPU time.
      if (auto further = background->apply_measurement_mode(); !further) {
        timeline.failure = further.error().with_context("background: ");
        break;
      }
    }
    // Waiting on the background (commit_at_frame): asked for before the frame, then the frame
    // loop goes on rendering; the time to the event is read after the measured frames.
    if (background && measured && bg_spec->commit_at_frame &&
        measured_frame == *bg_spec->commit_at_frame)
      if (Status asked = background->request_commit(measured_frame); !asked) {
        timeline.failure = asked.error().with_context("background: ");
        break;
      }
    // The alternation's hold, set between frames like the mode: a held block's frames start
    // no compile (those already running finish, and the frames they overlap show it).
    const bool hold = background && measured &&
                      background::held_in_block(bg_spec->alternate_frames, measured_frame);
    if (hold != held) background->hold(held = hold);
    // The CPU phase: the frame's jobs, paced (begun already when the frame before's GPU work
    // outlasted this frame's start, with two frames in flight), then recorded and submitted.
    std::optional<jobs::FrameJobsResult> cpu_phase;
    if (job_system) {
      if (!job_system->in_progress()) {
        if (last_frame_start_ns && (period_ns > 0 || delay_ns > 0))
          pace_until(delay_ns > 0
                         ? std::max(*last_frame_start_ns + period_ns, monotonic_raw_ns()) + delay_ns
                         : *last_frame_start_ns + period_ns);
        if (background) background->cpu_phase(true);  // dispatch = "gaps": before the release
        frame_started(job_system->begin_frame(), LoopPhase::jobs);
      } else {
        phases.enter(LoopPhase::jobs, monotonic_raw_ns());
      }
      cpu_phase = job_system->wait_frame(monotonic_raw_ns() + timeout_ns);
      if (!cpu_phase) {
        fail(make_error("the frame's CPU jobs did not all run within the frame's deadline (" +
                        std::to_string(settings.frame_timeout_ms) + " ms)"),
             RecordStatus::timeout);
        break;
      }
    }
    if (background && !cpu_phase) background->cpu_phase(true);  // recording is the CPU phase
    const std::int64_t cpu_start_ns = monotonic_raw_ns();
    const std::int64_t frame_start_ns = cpu_phase ? cpu_phase->release_ns : cpu_start_ns;
    if (cpu_phase)
      phases.enter(LoopPhase::submit, cpu_start_ns);
    else
      frame_started(cpu_start_ns, LoopPhase::submit);
    // This frame's interval, closed at its start (here, or in the frame before's GPU wait with
    // two frames in flight, which also closes the next one before this record is written).
    const std::optional<LoopPhaseTimes> phases_of_interval = interval_phases;
    const std::optional<ThreadAccounting> accounting_of_interval = interval_accounting;
    const std::optional<GroupAccounting> workers_of_interval = interval_workers;
    std::optional<double> frame_interval_us;
    if (last_frame_start_ns)
      frame_interval_us = ns_to_us_since(frame_start_ns, *last_frame_start_ns);
    last_frame_start_ns = frame_start_ns;
    if (Status s = backend.record_frame(frame); !s) {
      fail(s.error(), RecordStatus::gpu_error);
      break;
    }
    if (const GpuOutcome submitted = backend.submit_frame(frame);
        submitted.status != GpuStatus::ok) {
      fail(failure_of(submitted, "submitting the frame"), submitted.status == GpuStatus::device_lost
                                                              ? RecordStatus::device_lost
                                                              : RecordStatus::gpu_error);
      outcome.gpu_may_be_busy = true;
      break;
    }
    const std::int64_t cpu_submitted_ns = monotonic_raw_ns();
    if (background) background->cpu_phase(false);
    phases.enter(LoopPhase::tool, cpu_submitted_ns);
    const std::optional<GpuCalibration> calibration = backend.calibrate();
    if (calibration) {
      worst_deviation_ns =
          std::max(worst_deviation_ns, static_cast<double>(calibration->max_deviation_ns));
      if (measured) calibrations.push_back(*calibration);
    }

    // Release: the poller spins before t0, so no stamp can be missed.
    if (settings.stamping) poller.arm(stamps.slot_words, frame, monotonic_raw_ns() + timeout_ns);
    const std::int64_t t0_ns = monotonic_raw_ns();
    phases.enter(LoopPhase::gpu_wait, t0_ns);
    GpuOutcome waited = backend.release_gate(frame);
    // Two frames in flight: the next frame's CPU phase begins at its pace while this frame's
    // GPU work still runs (the wait's first deadline is that start), as a swapchain lets a game.
    bool gpu_done = false;
    if (waited.status == GpuStatus::ok && job_system && cpu->frames_in_flight >= 2 && !training &&
        index + 1 < total) {
      const std::int64_t next_start_ns = frame_start_ns + period_ns + delay_ns;
      if (next_start_ns < t0_ns + timeout_ns) {
        waited = backend.wait_frame(frame, next_start_ns);
        gpu_done = waited.status != GpuStatus::timeout;  // done, or failed: nothing to wait for
        if (!gpu_done) {
          // A wait may return before its deadline (a spurious wake): the pace still holds.
          // Waiting for the GPU until the pace's start; woken late if after it.
          wait_until_ns(next_start_ns);
          phases.enter(LoopPhase::woke_late, next_start_ns);
          if (background) background->cpu_phase(true);
          frame_started(job_system->begin_frame(), LoopPhase::gpu_wait);
          waited = GpuOutcome::ok();
        }
      }
    }
    if (waited.status == GpuStatus::ok && !gpu_done)
      waited = backend.wait_frame(frame, t0_ns + timeout_ns);
    const std::int64_t waited_ns = monotonic_raw_ns();
    phases.enter(LoopPhase::tool, waited_ns);
    // The GPU is done (or given up on): stamps still missing a little after now never come.
    // "A little" is generous because the poller is one thread among many: with a game frame's
    // workers busy on every core (and a competitor beside them) it can wait a scheduler time
    // slice or more for a core. It ends as soon as every stamp is seen, so only a lost stamp,
    // which ends the run, waits the whole 100 ms.
    PollResult polled;
    if (settings.stamping) {
      poller.shorten_deadline(monotonic_raw_ns() + 100'000'000);
      polled = poller.wait();
    } else {
      polled.start_ns.resize(slots);
      polled.end_ns.resize(slots);
    }

    std::vector<std::optional<TimestampTicks>> timestamps;
    if (waited.status == GpuStatus::ok)
      timestamps = backend.read_timestamps();
    else
      outcome.gpu_may_be_busy = true;

    if (measured) {
      if (!first_measured_t0_ns) first_measured_t0_ns = t0_ns;
      FrameRecord frame_record;
      frame_record.frame = measured_frame;
      frame_record.cpu_start_us = ns_to_us_since(frame_start_ns, *first_measured_t0_ns);
      // The application's part only: the CPU phase ([cpu]), recording and submitting, then
      // releasing and waiting. The tool's own work between and after (the calibration read,
      // starting the poller thread, collecting its stamps) would put the tool's threads into
      // the metric.
      frame_record.cpu_frame_us =
          ns_to_us_since(cpu_submitted_ns, frame_start_ns) + ns_to_us_since(waited_ns, t0_ns);
      frame_record.frame_interval_us = frame_interval_us;
      if (frame_interval_us && period_ns > 0 &&
          *frame_interval_us * 1e3 > 1.5 * static_cast<double>(period_ns)) {
        frame_record.stutter = true;
        ++stutters;
      }
      if (cpu_phase) {
        frame_record.cpu_phase_us = cpu_phase->makespan_us();
        frame_record.critical_path_us = cpu_phase->critical_path_us();
        frame_record.wake_max_us = cpu_phase->wake_max_us();
        frame_record.workers_missed = cpu_phase->missed_workers;
        const auto [least, most] =
            std::minmax_element(cpu_phase->busy_us.begin(), cpu_phase->busy_us.end());
        frame_record.worker_busy_min_us = *least;
        frame_record.worker_busy_max_us = *most;
      }
      if (frame_interval_us && phases_of_interval) {
        auto us = [&](LoopPhase p) { return static_cast<double>(phases_of_interval->at(p)) / 1e3; };
        frame_record.loop_jobs_us = us(LoopPhase::jobs);
        frame_record.loop_submit_us = us(LoopPhase::submit);
        frame_record.loop_tool_us = us(LoopPhase::tool);
        frame_record.loop_gpu_wait_us = us(LoopPhase::gpu_wait);
        frame_record.loop_pace_us = us(LoopPhase::pace);
        frame_record.loop_woke_late_us = us(LoopPhase::woke_late);
      }
      if (frame_interval_us && accounting_of_interval) {
        const ThreadAccounting& a = *accounting_of_interval;
        if (a.run_delay_ns)
          frame_record.loop_run_delay_us = static_cast<double>(*a.run_delay_ns) / 1e3;
        if (a.on_cpu_ns) frame_record.loop_on_cpu_us = static_cast<double>(*a.on_cpu_ns) / 1e3;
        frame_record.loop_switches_voluntary = a.voluntary_switches;
        frame_record.loop_switches_involuntary = a.involuntary_switches;
        if (a.cpu >= 0) frame_record.loop_cpu = a.cpu;
      }
      if (cpu_phase && frame_record.loop_cpu)
        frame_record.workers_on_loop_cpu = static_cast<std::uint32_t>(
            std::count(cpu_phase->cpu_by_worker.begin(), cpu_phase->cpu_by_worker.end(),
                       *frame_record.loop_cpu));
      if (frame_interval_us && workers_of_interval) {
        frame_record.workers_run_delay_us =
            static_cast<double>(workers_of_interval->run_delay_ns) / 1e3;
        frame_record.workers_run_delay_max_us =
            static_cast<double>(workers_of_interval->run_delay_max_ns) / 1e3;
        frame_record.workers_on_cpu_us = static_cast<double>(workers_of_interval->on_cpu_ns) / 1e3;
      }
      frame_record.cpu_submit_us = ns_to_us_since(cpu_submitted_ns, cpu_start_ns);
      frame_record.bg_held = held;
      if (settings.stamping) {
        frame_record.poll_gap_max_us = static_cast<double>(polled.max_scan_gap_ns) / 1000.0;
        frame_record.poll_scans = polled.scans;
        if (polled.cpu >= 0) frame_record.poller_cpu = polled.cpu;
        if (polled.run_delay_ns)
          frame_record.poller_run_delay_us = static_cast<double>(*polled.run_delay_ns) / 1e3;
      }
      for (std::size_t w = 0; w < slots; ++w) {
        WorkloadFrameRecord r;
        r.frame_t0_us = ns_to_us_since(t0_ns, *first_measured_t0_ns);
        r.frame = measured_frame;
        r.workload = w;
        r.variant = bound[w];
        if (polled.start_ns[w]) {
          r.poll_start_us = ns_to_us_since(*polled.start_ns[w], t0_ns);
          r.poll_start_window_us = static_cast<double>(polled.start_window_ns[w]) / 1000.0;
        }
        if (polled.end_ns[w]) {
          r.poll_end_us = ns_to_us_since(*polled.end_ns[w], t0_ns);
          r.poll_end_window_us = static_cast<double>(polled.end_window_ns[w]) / 1000.0;
        }
        // A copy's stamps are written by the copy engine's commands, with no shader clock.
        if (shader_clock && waited.status == GpuStatus::ok &&
            scenario.workloads[w].kind != WorkloadKind::copy) {
          const std::uint32_t* slot = stamps.slot(w);
          r.clk_start_ticks =
              shader_clock_ticks(slot, kStampStartFrameWord, kStampStartClockWord, frame);
          r.clk_end_ticks = shader_clock_ticks(slot, kStampEndFrameWord, kStampEndClockWord, frame);
        }
        if (calibration)
          place_device_clocks(r, *calibration, valid_bits[w],
                              w < timestamps.size() ? timestamps[w] : std::nullopt, t0_ns);
        if (waited.status != GpuStatus::ok)
          r.status = status_for(waited.status);
        else if (settings.stamping && (!r.poll_start_us || !r.poll_end_us))
          r.status = RecordStatus::timeout;
        if (r.poll_start_us && (!frame_record.submit_to_start_us ||
                                *r.poll_start_us < *frame_record.submit_to_start_us))
          frame_record.submit_to_start_us = r.poll_start_us;
        if (r.status != RecordStatus::ok && frame_record.status == RecordStatus::ok)
          frame_record.status = r.status;
        timeline.records.push_back(r);
      }
      frame_record.gpu_span_us =
          gpu_span_us(std::span<const WorkloadFrameRecord>(timeline.records).last(slots));
      timeline.frames.push_back(frame_record);
      if (settings.on_frame)
        settings.on_frame(scenario, frame_record,
                          std::span<const WorkloadFrameRecord>(timeline.records).last(slots));
    }
    if (waited.status == GpuStatus::device_lost || waited.status == GpuStatus::failed) {
      timeline.failure =
          failure_of(waited, "waiting for " + frame_label(index, settings.warmup_frames));
      break;
    }
    if (waited.status == GpuStatus::timeout || polled.timed_out) {
      // Past the deadline: say what happened (late, still running, stuck, stamps lost), from
      // the stamps at the deadline and a bounded grace period after it. The rows stay
      // `timeout`, as they were at the deadline. Background compiles stop starting now, not
      // after the grace period.
      if (background) background->request_stop();
      const Error timeout_code = waited.error ? *waited.error : backend.timeout_error();
      timeline.failure = Error{describe_missed_deadline(missed_deadline_facts(
                                   backend, settings, slots, frame, index, t0_ns, polled,
                                   waited.status, outcome.gpu_may_be_busy)),
                               timeout_code.api_code, timeout_code.api_code_name};
      break;
    }
    if (training) {
      auto more = background->workflow_frame_rendered();
      if (!more) {
        timeline.failure = more.error().with_context("background: ");
        break;
      }
      training = *more;
      if (!training)
        if (auto further = background->apply_measurement_mode(); !further) {
          timeline.failure = further.error().with_context("background: ");
          break;
        }
      continue;  // training frames are not warm-up or measured frames
    }
    if (progress) progress(index + 1, total);
    ++index;
  }
  const std::int64_t loop_end_ns = monotonic_raw_ns();
  if (first_measured_t0_ns) timeline.time_origin_ns = *first_measured_t0_ns;
  nlohmann::json meta = to_json(backend.facts());
  if (cpu) {
    nlohmann::json cpu_meta = jobs::to_json(*cpu);
    cpu_meta["busy_work_calibration"] = jobs::to_json(jobs::calibrate_once());
    if (job_system) {
      cpu_meta["job_iterations"] = job_system->job_iterations();
      if (cpu->pin_workers)
        cpu_meta["pinned_cpus"] = {{"cpus", job_system->pinned_cpus()},
                                   {"failures", job_system->pinning_failures()}};
      if (!cpu->keep_off_cpus.empty())
        cpu_meta["keep_off_failures"] = job_system->keep_off_failures();
    }
    cpu_meta["stutters"] = stutters;
    // Only a game frame's loop applies it (RunSettings::injected_frame_delay_us).
    if (settings.injected_frame_delay_us > 0)
      cpu_meta["injected_frame_delay_us"] = settings.injected_frame_delay_us;
    meta["cpu"] = cpu_meta;
  }
  meta["threads"] = thread_scheduling_meta(job_system.get());
  meta["allocator"] = allocator_state;
  // The workers stop before the background work: workers that spin (wait = "spin") hold every
  // core but the poller's, so an idle-priority compile still in flight, which stopping waits
  // for, would get no CPU until they stopped (7-29 s per scenario on the H100 machine with the
  // poller on a CPU of its own).
  job_system.reset();  // joins the workers, also when a failure left a frame's jobs running
  if (background && !timeline.failure && !live_edit_ended) {
    // Where the measured frames ended before commit_at_frame asked (their count, a study's
    // round_ms) it asks now; then the foreground blocks on the event, as a benchmark waits for
    // its results. After the workers stopped: spinning workers would starve an idle-priority
    // compile, and the wait would measure them rather than the policy.
    background->cpu_phase(false);
    if (auto waited = background->finish_commit_wait(); !waited)
      timeline.failure = waited.error().with_context("background: ");
    else
      timeline.commit_wait = *waited;
  }
  if (background) {
    const std::int64_t stop_start_ns = monotonic_raw_ns();
    background->stop();
    const double stop_wait_ms = static_cast<double>(monotonic_raw_ns() - stop_start_ns) / 1e6;
    timeline.background_tasks = background->records();
    meta["background"] = background_meta(*background, stop_wait_ms);
    if (const auto& wait = timeline.commit_wait)
      meta["background"]["commit_wait"] = {
          {"requested_before_frame", wait->requested_before_frame
                                         ? nlohmann::json(*wait->requested_before_frame)
                                         : nlohmann::json(nullptr)},
          {"at_end", !wait->requested_before_frame.has_value()},
          {"pending_at_request", wait->pending_at_request},
          {"signalled", wait->signalled_ns.has_value()},
          {"to_event_ms",
           wait->to_event_ms() ? nlohmann::json(*wait->to_event_ms()) : nlohmann::json(nullptr)},
          {"blocked_ms", wait->blocked_ms},
          {"timeout_ms", bg_spec->commit_timeout_ms}};
    if (binds) {
      meta["background"]["before_frames"] = before_frames;
      meta["background"]["swaps"] = swaps;
    }
    annotate_background_activity(timeline);
    add_background_scheduling(meta["threads"], *background);
  }
  // Where the scenario's time went (the executor adds opening and closing the device): the
  // frames before the measured ones (training, warm-up), the measured ones, and stopping the
  // background work and the workers after them.
  const std::int64_t measured_from_ns = first_measured_start_ns.value_or(loop_end_ns);
  meta["phases_ms"] = {{"before_measured", rounded_ms(measured_from_ns - loop_start_ns)},
                       {"measured", rounded_ms(loop_end_ns - measured_from_ns)},
                       {"after_frames", rounded_ms(monotonic_raw_ns() - loop_end_ns)}};
  if (ended_early)
    meta["ended_early"] = {
        {"measured_frames", *ended_early}, {"of", settings.frames}, {"why", ended_why}};
  meta["clocks"]["timestamp"]["max_calibration_deviation_ns"] = worst_deviation_ns;
  if (!calibrations.empty()) meta["clocks"]["timestamp"]["drift"] = calibration_drift(calibrations);
  if (shader_clock)
    meta["clocks"]["shader_clock"]["verification"] = verify_shader_clock_timebase(timeline);
  timeline.meta = meta;
  return outcome;
}

}  // namespace gpuoverlap

#include "engine/frame_loop_meta.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "background/background_session.h"
#include "core/cpu_affinity.h"
#include "core/host_info.h"
#include "core/kept_memory.h"
#include "core/thread_accounting.h"
#include "jobs/busy_work.h"
#include "jobs/job_system.h"
#include "timeline/statistics.h"

namespace gpuoverlap {
namespace {

// One kind of thread's scheduling and affinity: "cpus" is the first thread's (ranges, or
// "n/a: why"); where threads of the kind differ (pinned workers, one CPU each), "cpus_of_all"
// joins them and "cpus_unlike_the_first" counts them.
nlohmann::json scheduling_json(const SchedulingSeen::Seen& seen) {
  const ThreadScheduling& s = seen.first;
  nlohmann::json j = {{"policy", s.policy}, {s.level_name, s.level}, {"threads", seen.threads}};
  if (seen.differing > 0) j["threads_unlike_the_first"] = seen.differing;
  j["cpus"] = s.cpus ? describe_cpus(*s.cpus) : "n/a: " + thread_cpus_unavailable_reason();
  if (s.cgroup) j["cgroup"] = *s.cgroup;
  if (s.slice_ns) j["slice_ns"] = *s.slice_ns;
  if (seen.cpus_unlike_the_first > 0) {
    j["cpus_of_all"] = describe_cpus(seen.cpus_of_all);
    j["cpus_unlike_the_first"] = seen.cpus_unlike_the_first;
  }
  return j;
}

}  // namespace

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

nlohmann::json cpu_meta(const jobs::CpuFrameSpec& cpu, const jobs::JobSystem* job_system,
                        std::uint64_t stutters, std::uint32_t injected_frame_delay_us) {
  nlohmann::json j = jobs::to_json(cpu);
  j["busy_work_calibration"] = jobs::to_json(jobs::calibrate_once());
  if (job_system) {
    j["job_iterations"] = job_system->job_iterations();
    if (cpu.pin_workers)
      j["pinned_cpus"] = {{"cpus", job_system->pinned_cpus()},
                          {"failures", job_system->pinning_failures()}};
    if (!cpu.keep_off_cpus.empty()) j["keep_off_failures"] = job_system->keep_off_failures();
  }
  j["stutters"] = stutters;
  // Only a game frame's loop applies it (RunSettings::injected_frame_delay_us).
  if (injected_frame_delay_us > 0) j["injected_frame_delay_us"] = injected_frame_delay_us;
  return j;
}

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
  if (const background::IdleSpinners* spinners = session.idle_spinners())
    bg["idle_spinners"] = {{"threads", spinners->threads()},
                           {"cycles", spinners->cycles()},
                           {"refused", spinners->refused()}};
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

nlohmann::json commit_wait_meta(const background::CommitWait& wait,
                                std::uint32_t commit_timeout_ms) {
  return {{"requested_before_frame", wait.requested_before_frame
                                         ? nlohmann::json(*wait.requested_before_frame)
                                         : nlohmann::json(nullptr)},
          {"at_end", !wait.requested_before_frame.has_value()},
          {"pending_at_request", wait.pending_at_request},
          {"signalled", wait.signalled_ns.has_value()},
          {"to_event_ms",
           wait.to_event_ms() ? nlohmann::json(*wait.to_event_ms()) : nlohmann::json(nullptr)},
          {"blocked_ms", wait.blocked_ms},
          {"timeout_ms", commit_timeout_ms}};
}

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

void add_background_scheduling(nlohmann::json& threads,
                               const background::BackgroundSession& background) {
  for (const auto& [kind, seen] : background.thread_scheduling())
    threads["background_" + kind] = scheduling_json(seen);
}

}  // namespace gpuoverlap

#include "jobs/cpu_spec.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpuoverlap::jobs {

std::string_view to_string(WaitMode mode) { return name_of(kWaitModeNames, mode); }
std::optional<WaitMode> parse_wait_mode(std::string_view text) {
  return value_of(kWaitModeNames, text);
}

void resolve_cores(CpuFrameSpec& spec, std::uint32_t usable) {
  if (!spec.workers_from_cores) return;
  spec.workers = std::max(1u, usable - std::min(usable, 1u));
  if (spec.jobs_per_worker)
    spec.jobs_per_frame =
        std::clamp(*spec.jobs_per_worker * spec.workers, spec.critical_jobs, kMaxJobsPerFrame);
  if (spec.cpu_ms_per_worker) spec.cpu_ms_per_frame = *spec.cpu_ms_per_worker * spec.workers;
}

std::string describe(const CpuFrameSpec& s) {
  std::string out = fmt::format("{} worker{}{}, {} jobs, {:.3g} ms of work per frame", s.workers,
                                s.workers == 1 ? "" : "s",
                                s.workers_from_cores ? " (the usable cores less the poller's)" : "",
                                s.jobs_per_frame, s.cpu_ms_per_frame);
  if (s.critical_jobs > 0)
    out += fmt::format(", a chain of {} ({:.3g} ms)", s.critical_jobs, s.critical_path_ms());
  out += fmt::format(", workers {}", to_string(s.wait));
  if (s.wait == WaitMode::spin_then_sleep) out += fmt::format(" ({:g} us)", s.spin_us);
  if (s.slice_ms) out += fmt::format(", a {:g} ms slice", *s.slice_ms);
  if (s.loop_wait != LoopWait::block)
    out += fmt::format(", the frame loop waits for them by {}",
                       s.loop_wait == LoopWait::spin ? "spinning" : "yielding");
  if (s.gpu_wait != LoopWait::block)
    out += fmt::format(", the frame loop waits for the GPU by {}",
                       s.gpu_wait == LoopWait::spin ? "spinning" : "yielding");
  out += s.frame_period_ms > 0 ? fmt::format(", {:g} ms period", s.frame_period_ms)
                               : std::string(", unpaced");
  out +=
      fmt::format(", {} frame{} in flight", s.frames_in_flight, s.frames_in_flight == 1 ? "" : "s");
  return out;
}

nlohmann::json to_json(const CpuFrameSpec& s) {
  nlohmann::json j = {
      {"workers", s.workers},
      {"workers_from_cores", s.workers_from_cores},
      {"usable_cpus", usable_cpus()},
      {"jobs_per_frame", s.jobs_per_frame},
      {"cpu_ms_per_frame", s.cpu_ms_per_frame},
      {"job_ms", s.job_ms()},
      {"critical_jobs", s.critical_jobs},
      {"critical_path_ms", s.critical_path_ms()},
      {"wait", to_string(s.wait)},
      {"spin_us", s.spin_us},
      {"loop_wait", name_of(kLoopWaitNames, s.loop_wait)},
      {"gpu_wait", name_of(kLoopWaitNames, s.gpu_wait)},
      {"slice_ms", s.slice_ms ? nlohmann::json(*s.slice_ms) : nlohmann::json(nullptr)},
      {"frame_period_ms", s.frame_period_ms},
      {"frames_in_flight", s.frames_in_flight},
      {"pin_workers", s.pin_workers}};
  if (!s.keep_off_cpus.empty()) j["keep_off_cpus"] = describe_cpus(s.keep_off_cpus);
  if (s.jobs_per_worker) j["jobs_per_worker"] = *s.jobs_per_worker;
  if (s.cpu_ms_per_worker) j["cpu_ms_per_worker"] = *s.cpu_ms_per_worker;
  if (const auto& c = s.period_calibration)
    j["period_calibration"] = {{"period_ms_in_file", c->period_ms_in_file},
                               {"unpaced_interval_p50_ms", c->unpaced_interval_p50_ms},
                               {"frames", c->frames},
                               {"from", c->from}};
  return j;
}

}  // namespace gpuoverlap::jobs

#include "jobs/cpu_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#if defined(_WIN32)
#include <windows.h>
#else
#include <pthread.h>
#include <sched.h>
#endif

namespace gpuoverlap::jobs {

std::string_view to_string(WaitMode mode) { return name_of(kWaitModeNames, mode); }
std::optional<WaitMode> parse_wait_mode(std::string_view text) {
  return value_of(kWaitModeNames, text);
}

std::uint32_t usable_cpus() {
#if defined(_WIN32)
  DWORD_PTR process_mask = 0, system_mask = 0;
  if (GetProcessAffinityMask(GetCurrentProcess(), &process_mask, &system_mask) && process_mask) {
    std::uint32_t count = 0;
    for (; process_mask; process_mask &= process_mask - 1) ++count;
    return count;
  }
#else
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
#endif
  return std::max(1u, std::thread::hardware_concurrency());
}

std::vector<int> usable_cpu_ids() {
  std::vector<int> ids;
#if defined(_WIN32)
  DWORD_PTR process_mask = 0, system_mask = 0;
  if (GetProcessAffinityMask(GetCurrentProcess(), &process_mask, &system_mask))
    for (int cpu = 0; cpu < static_cast<int>(8 * sizeof(DWORD_PTR)); ++cpu)
      if (process_mask & (DWORD_PTR{1} << cpu)) ids.push_back(cpu);
#else
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &set)) ids.push_back(cpu);
#endif
  return ids;
}

bool pin_current_thread(int cpu) {
#if defined(_WIN32)
  if (cpu < 0 || cpu >= static_cast<int>(8 * sizeof(DWORD_PTR))) return false;
  return SetThreadAffinityMask(GetCurrentThread(), DWORD_PTR{1} << cpu) != 0;
#else
  if (cpu < 0 || cpu >= CPU_SETSIZE) return false;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
#endif
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
  out += s.frame_period_ms > 0 ? fmt::format(", {:g} ms period", s.frame_period_ms)
                               : std::string(", unpaced");
  out +=
      fmt::format(", {} frame{} in flight", s.frames_in_flight, s.frames_in_flight == 1 ? "" : "s");
  return out;
}

nlohmann::json to_json(const CpuFrameSpec& s) {
  nlohmann::json j = {{"workers", s.workers},
                      {"workers_from_cores", s.workers_from_cores},
                      {"usable_cpus", usable_cpus()},
                      {"jobs_per_frame", s.jobs_per_frame},
                      {"cpu_ms_per_frame", s.cpu_ms_per_frame},
                      {"job_ms", s.job_ms()},
                      {"critical_jobs", s.critical_jobs},
                      {"critical_path_ms", s.critical_path_ms()},
                      {"wait", to_string(s.wait)},
                      {"spin_us", s.spin_us},
                      {"frame_period_ms", s.frame_period_ms},
                      {"frames_in_flight", s.frames_in_flight},
                      {"pin_workers", s.pin_workers}};
  if (s.jobs_per_worker) j["jobs_per_worker"] = *s.jobs_per_worker;
  if (s.cpu_ms_per_worker) j["cpu_ms_per_worker"] = *s.cpu_ms_per_worker;
  return j;
}

}  // namespace gpuoverlap::jobs

#include "scenarios/cpu_device_sizes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpuoverlap {

std::optional<CpuDevicePeriod> cpu_device_period(const std::vector<double>& unpaced_interval_us,
                                                 double period_ms_in_file) {
  if (unpaced_interval_us.size() < 5) return std::nullopt;
  std::vector<double> sorted = unpaced_interval_us;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  const double p50_ms = (n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2])) / 1000;
  return CpuDevicePeriod{std::max(period_ms_in_file, std::ceil(kCpuDevicePeriodHeadroom * p50_ms)),
                         p50_ms, static_cast<std::uint32_t>(n)};
}

SizeProfile apply_cpu_device_sizes(std::vector<Scenario>& scenarios, const SizesGiven& given,
                                   const CpuDeviceSizes& limits) {
  std::size_t lowered = 0;
  for (Scenario& s : scenarios) {
    const Scenario before = s;
    if (!given.frames)
      s.frames = std::min(
          s.frames, s.rounds > 0 ? frames_per_round(limits.study_frames, s.rounds) : limits.frames);
    if (!given.warmup) s.warmup_frames = std::min(s.warmup_frames, limits.warmup_frames);
    if (s.preemption) {
      if (!given.duration_ms)
        s.preemption->duration_ms =
            std::min(s.preemption->duration_ms, limits.preemption_duration_ms);
      if (!given.target_ms)
        s.preemption->target_ms = std::min(s.preemption->target_ms, limits.preemption_target_ms);
    }
    if (!given.study_budget) s.study_budget_s = std::min(s.study_budget_s, limits.study_budget_s);
    if (!given.study_round) s.study_round_ms = limits.study_round_ms;
    // A spinning worker would hold a core that the software GPU renders on.
    if (s.cpu && s.cpu->wait == jobs::WaitMode::spin) s.cpu->wait = jobs::WaitMode::spin_then_sleep;
    const bool changed =
        s.frames != before.frames || s.warmup_frames != before.warmup_frames ||
        s.study_budget_s != before.study_budget_s || s.study_round_ms != before.study_round_ms ||
        (s.cpu && s.cpu->wait != before.cpu->wait) ||
        (s.preemption && (s.preemption->duration_ms != before.preemption->duration_ms ||
                          s.preemption->target_ms != before.preemption->target_ms));
    lowered += changed ? 1 : 0;
  }
  SizeProfile profile;
  profile.meta = {
      {"profile", "cpu-device"},
      {"why",
       "the device is the CPU (a software driver such as lavapipe): the scenario files' sizes "
       "are for GPUs; sizes the command line set are kept"},
      {"frames", limits.frames},
      {"warmup_frames", limits.warmup_frames},
      {"study_frames_per_condition", limits.study_frames},
      {"preemption_duration_ms", limits.preemption_duration_ms},
      {"preemption_target_ms", limits.preemption_target_ms},
      {"study_budget_s", limits.study_budget_s},
      {"study_round_ms", limits.study_round_ms},
      {"cpu_wait",
       "a game frame's workers that spin wait spin_then_sleep instead: a spinning worker would "
       "hold a core that the software GPU renders on"},
      {"scenarios_lowered", lowered}};
  if (lowered > 0)
    profile.log_line = fmt::format(
        "CPU device: smaller default sizes for {} of {} scenarios (at most {} frames after {} "
        "warm-up, {} per study condition, no rounds added to an undecided study and no time limit "
        "per round, preemption {} ms of urgent jobs on a {} ms load, a game frame's workers spin "
        "then sleep); --frames, "
        "--warmup, --study-budget-s, "
        "--study-round-ms, --duration-ms, --target-ms set them, --full-size keeps the files'",
        lowered, scenarios.size(), limits.frames, limits.warmup_frames, limits.study_frames,
        limits.preemption_duration_ms, limits.preemption_target_ms);
  return profile;
}

SizeProfile files_sizes(const std::string& why) {
  return {{{"profile", "files"}, {"why", why}}, ""};
}

}  // namespace gpuoverlap

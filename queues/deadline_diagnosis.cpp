#include "queues/deadline_diagnosis.h"

#include <fmt/format.h>

namespace gpuoverlap {

std::string frame_label(std::uint32_t index, std::uint32_t warmup_frames) {
  if (index < warmup_frames) return fmt::format("warm-up frame {} of {}", index + 1, warmup_frames);
  return fmt::format("frame {}", index - warmup_frames);
}

std::string describe_missed_deadline(const DeadlineFacts& f) {
  if (f.device_lost)
    return fmt::format(
        "{}: the device was lost ({} of {} workloads had started and {} finished by the "
        "--timeout-ms {} deadline)",
        f.frame, f.started_at_deadline, f.workloads, f.finished_at_deadline, f.timeout_ms);
  const bool all_stamps =
      f.started_after_grace == f.workloads && f.finished_after_grace == f.workloads;
  if (f.gpu_finished && all_stamps)
    return fmt::format(
        "{} missed its deadline: the GPU finished it {}, past --timeout-ms {}; every stamp "
        "arrived, after the deadline (a frame this long needs a larger --timeout-ms)",
        f.frame,
        f.gpu_finished_ms ? fmt::format("{:.1f} ms after its release", *f.gpu_finished_ms)
                          : std::string("just after the deadline"),
        f.timeout_ms);
  if (f.gpu_finished)
    return fmt::format(
        "{}: the GPU finished, but {} of {} workloads' stamps never reached the CPU within "
        "{:.0f} ms after (stamp memory not coherent on this device?)",
        f.frame, f.workloads - std::min(f.started_after_grace, f.finished_after_grace), f.workloads,
        f.grace_ms);
  const bool progress = f.started_after_grace > f.started_at_deadline ||
                        f.finished_after_grace > f.finished_at_deadline;
  if (progress)
    return fmt::format(
        "{}: the GPU was still running at the --timeout-ms {} deadline ({} of {} workloads "
        "started, {} finished; {:.0f} ms later {} started, {} finished); stopped the scenario "
        "(a frame this long needs a larger --timeout-ms)",
        f.frame, f.timeout_ms, f.started_at_deadline, f.workloads, f.finished_at_deadline,
        f.grace_ms, f.started_after_grace, f.finished_after_grace);
  return fmt::format(
      "{}: the GPU had not finished it at the --timeout-ms {} deadline nor {:.0f} ms later, and "
      "no stamp moved in between ({} of {} workloads started, {} finished): a workload longer "
      "than that, or a stuck GPU; stopped the scenario",
      f.frame, f.timeout_ms, f.grace_ms, f.started_at_deadline, f.workloads,
      f.finished_at_deadline);
}

}  // namespace gpuoverlap

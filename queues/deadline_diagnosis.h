// What happened to a frame that missed its deadline, from what the CPU saw at the deadline
// and during a short grace period after it. API neutral: the backend gathers the facts.
//
// Why: "the GPU finished but some stamps never reached the CPU (stamp memory not coherent?)"
// was printed for frames that merely finished a hair after the deadline (the poller gave up
// just before the fence signalled): 8 of 36 runs with --timeout-ms 75 on an H100.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace gpuoverlap {

struct DeadlineFacts {
  std::string frame;  // as frame_label() names it
  std::uint32_t timeout_ms = 0;
  double grace_ms = 0;
  std::size_t workloads = 0;
  // Workloads whose start / end stamp the CPU had seen by the deadline, and by the end of the
  // grace period.
  std::size_t started_at_deadline = 0, finished_at_deadline = 0;
  std::size_t started_after_grace = 0, finished_after_grace = 0;
  // The GPU reported the frame complete (its fences), and when, in ms from the release.
  bool gpu_finished = false;
  std::optional<double> gpu_finished_ms;
  bool device_lost = false;  // waiting in the grace period reported the device lost
};

// One sentence for the run's failure: late (finished past the deadline, every stamp arrived),
// still running (stamps arrived during the grace period), not finished and no stamp moved
// (a workload longer than deadline and grace, or a stuck GPU: stamps cannot tell them apart),
// device lost, or stamps lost (the GPU finished, stamps missing after the grace period).
std::string describe_missed_deadline(const DeadlineFacts& facts);

// Frame numbers as frames.csv counts them: measured frames from 0; warm-up frames apart.
// `index` counts every frame run (warm-up first).
std::string frame_label(std::uint32_t index, std::uint32_t warmup_frames);

}  // namespace gpuoverlap

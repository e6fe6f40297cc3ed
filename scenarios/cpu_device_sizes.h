// Smaller default sizes for a device that is the CPU itself (lavapipe). The presets are sized
// for a GPU: on lavapipe a `default` frame takes ~0.1 s, and the suite as written took most of
// an hour on 2 cores. There nothing can overlap and timings measure CPU scheduling
// (docs/output-format.md, "How to read results"), so fewer frames lose nothing a user could
// read from them. Applied automatically, announced and recorded in meta.json; never to a size
// the user set.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "scenarios/scenario.h"

namespace gpuoverlap {

struct CpuDeviceSizes {
  // What a CPU device can show: one queue, so no overlap, and frames 10-100x a GPU's. 20
  // frames give a scenario's percentiles and barrier gaps; 120 per study condition keep its
  // controls decided (the positive control late in most frames, the null control on time).
  // With 30 and 180, the main job measured for 251 s on 2 cores; with these, 178 s.
  std::uint32_t frames = 20;         // measured frames per scenario
  std::uint32_t warmup_frames = 3;   // per scenario, per study round
  std::uint32_t study_frames = 120;  // per study condition, over all its rounds
  double preemption_duration_ms = 1000;
  double preemption_target_ms = 50;
  // No rounds added to an undecided study: on the CPU no verdict is a measurement of a GPU.
  double study_budget_s = 0;
  // No time limit on a study's round (round_ms): the limit is sized for a GPU's frames, and a
  // CPU device's take 10-100x longer, so it would leave too few frames per round.
  std::uint32_t study_round_ms = 0;
};

// Which sizes the command line set; those are left alone.
struct SizesGiven {
  bool frames = false, warmup = false, duration_ms = false, target_ms = false, study_budget = false,
       study_round = false;
};

struct SizeProfile {
  nlohmann::json meta;   // for every meta.json: the profile, its limits and why
  std::string log_line;  // what the run prints; empty when nothing was lowered
};

// Lowers (never raises) every size not in `given` to the limits; a study's round time limit is
// replaced by the CPU device's (none). Contract: scenarios are
// validated; they stay valid (the limits are inside every range the parser checks).
SizeProfile apply_cpu_device_sizes(std::vector<Scenario>& scenarios, const SizesGiven& given,
                                   const CpuDeviceSizes& limits = {});

// A paced game frame on a CPU device: the files' periods are a GPU's (8 ms), and a CPU
// device's frame takes 10-100x that, so every frame would be a stutter and pacing could not be
// judged. Such a frame is paced instead at a period the device sustains: the median interval
// of the same frame run unpaced (the study's baseline, once per study before its first
// condition: engine/suite_runner.h), times this headroom, rounded up to a whole millisecond.
inline constexpr double kCpuDevicePeriodHeadroom = 1.15;
inline constexpr std::uint32_t kCpuDevicePeriodCalibrationFrames = 12;
struct CpuDevicePeriod {
  double period_ms = 0;
  double unpaced_interval_p50_ms = 0;
  std::uint32_t intervals = 0;
};
// The period for `unpaced_interval_us` (a calibration run's frame intervals); none with fewer
// than 5 intervals. Never shorter than `period_ms_in_file`.
std::optional<CpuDevicePeriod> cpu_device_period(const std::vector<double>& unpaced_interval_us,
                                                 double period_ms_in_file);

// The meta.json record of a run at the files' own sizes.
SizeProfile files_sizes(const std::string& why);

}  // namespace gpuoverlap

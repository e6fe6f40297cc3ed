// GPU timestamp ticks -> CPU nanoseconds, from one calibration point (a GPU tick count and the
// CPU time read at the same instant, as VK_EXT_calibrated_timestamps returns them).
#pragma once

#include <cstdint>

namespace gpuoverlap {

struct GpuCalibration {
  std::uint64_t gpu_ticks = 0;         // device timestamp at the calibration instant
  std::int64_t cpu_ns = 0;             // CLOCK_MONOTONIC_RAW at the same instant
  double tick_period_ns = 1.0;         // VkPhysicalDeviceLimits::timestampPeriod
  std::uint32_t valid_bits = 64;       // the queue family's timestampValidBits
  std::uint64_t max_deviation_ns = 0;  // uncertainty of the pairing, reported in meta.json
};

// Contract: `ticks` was read within half the counter's wrap period of the calibration; a
// counter of fewer than 64 valid bits that wrapped in between is unwrapped.
std::int64_t gpu_ticks_to_cpu_ns(const GpuCalibration& calibration, std::uint64_t ticks);

inline double ns_to_us_since(std::int64_t t_ns, std::int64_t t0_ns) {
  return static_cast<double>(t_ns - t0_ns) / 1000.0;
}

}  // namespace gpuoverlap

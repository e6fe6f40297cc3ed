#include "timeline/clock_conversion.h"

#include <cmath>

namespace gpuoverlap {

std::int64_t gpu_ticks_to_cpu_ns(const GpuCalibration& calibration, std::uint64_t ticks) {
  const std::uint32_t bits =
      calibration.valid_bits == 0 || calibration.valid_bits > 64 ? 64 : calibration.valid_bits;
  std::int64_t delta_ticks;
  if (bits == 64) {
    delta_ticks = static_cast<std::int64_t>(ticks - calibration.gpu_ticks);
  } else {
    const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
    const std::uint64_t raw = (ticks - calibration.gpu_ticks) & mask;
    // Sign-extend from `bits`: a tick before the calibration gives a negative delta.
    const std::uint64_t sign = std::uint64_t{1} << (bits - 1);
    delta_ticks = static_cast<std::int64_t>(raw ^ sign) - static_cast<std::int64_t>(sign);
  }
  return calibration.cpu_ns + static_cast<std::int64_t>(std::llround(
                                  static_cast<double>(delta_ticks) * calibration.tick_period_ns));
}

}  // namespace gpuoverlap

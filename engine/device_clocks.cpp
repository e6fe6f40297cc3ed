#include "engine/device_clocks.h"

namespace gpuoverlap {

void place_device_clocks(WorkloadFrameRecord& record, const GpuCalibration& calibration,
                         std::uint32_t timestamp_valid_bits,
                         const std::optional<TimestampTicks>& timestamps, std::int64_t origin_ns) {
  record.calibration_deviation_us = static_cast<double>(calibration.max_deviation_ns) / 1000.0;
  GpuCalibration c = calibration;
  if (timestamp_valid_bits > 0 && timestamps) {
    c.valid_bits = timestamp_valid_bits;
    record.ts_start_us = ns_to_us_since(gpu_ticks_to_cpu_ns(c, timestamps->start), origin_ns);
    record.ts_end_us = ns_to_us_since(gpu_ticks_to_cpu_ns(c, timestamps->end), origin_ns);
  }
  if (record.clk_start_ticks && record.clk_end_ticks) {
    c.valid_bits = 64;
    record.clk_start_us =
        ns_to_us_since(gpu_ticks_to_cpu_ns(c, *record.clk_start_ticks), origin_ns);
    record.clk_end_us = ns_to_us_since(gpu_ticks_to_cpu_ns(c, *record.clk_end_ticks), origin_ns);
  }
}

}  // namespace gpuoverlap

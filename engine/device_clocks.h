// Placing a workload's device clocks on the CPU clock, the same way for a frame and for a
// preemption submission: timestamp queries and the shader clock, through one calibration.
#pragma once

#include <cstdint>
#include <optional>

#include "engine/scenario_backend.h"
#include "timeline/records.h"

namespace gpuoverlap {

// Sets `record`'s calibration deviation, its ts_* (when the queue has timestamps,
// `timestamp_valid_bits` > 0, and `timestamps` is set) and its clk_* µs (when its
// clk_*_ticks are set; read tentatively as timestamp ticks, which
// verify_shader_clock_timebase confirms or rejects), all in µs since `origin_ns`.
void place_device_clocks(WorkloadFrameRecord& record, const GpuCalibration& calibration,
                         std::uint32_t timestamp_valid_bits,
                         const std::optional<TimestampTicks>& timestamps, std::int64_t origin_ns);

}  // namespace gpuoverlap

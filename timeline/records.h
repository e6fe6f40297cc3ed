// The measured data of one scenario, shared by the CSV export, the summary and (later) the
// plots and viewer. Times are microseconds from the frame's gate release t0 on the CPU clock
// (CLOCK_MONOTONIC_RAW); an empty optional means "this clock is not available".
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace gpuoverlap {

struct Scenario;

enum class RecordStatus {
  ok,           // both stamps arrived and all clocks are consistent
  timeout,      // a stamp did not arrive before the frame's deadline
  device_lost,  // the device was lost during the frame
  gpu_error,    // another API failure during the frame (see meta.json "failure")
};

std::string_view to_string(RecordStatus status);

struct WorkloadFrameRecord {
  std::uint32_t frame = 0;   // measured frame, 0-based, warm-up frames excluded
  std::size_t workload = 0;  // index into Scenario::workloads
  std::optional<double> poll_start_us;
  std::optional<double> poll_end_us;
  std::optional<double> ts_start_us;
  std::optional<double> ts_end_us;
  // Shader clock (VK_KHR_shader_clock, device scope) read by the stamping threads, on the CPU
  // clock only once its timebase was verified for this run (see clock_agreement.h); the raw
  // ticks are kept either way for analysis (the self-test's fits).
  std::optional<double> clk_start_us;
  std::optional<double> clk_end_us;
  std::optional<std::uint64_t> clk_start_ticks;
  std::optional<std::uint64_t> clk_end_ticks;
  // The frame's timestamp calibration uncertainty (vkGetCalibratedTimestampsEXT's max
  // deviation), part of every comparison of a GPU clock with the CPU clock.
  double calibration_deviation_us = 0;
  // ClockDisagreement bits (clock_agreement.h): clocks of this row that disagree beyond the
  // run's tolerance. 0 = all available clocks agree.
  std::uint32_t disagreements = 0;
  RecordStatus status = RecordStatus::ok;
  // The frame's gate release t0, in µs after the first measured frame's t0 (same clock):
  // places frames on one time axis (trace.json).
  double frame_t0_us = 0;
};

// A record's start or end on one clock: "poll", "ts" or "clk"; nullopt when that clock has
// no value (or the name is none of the three).
std::optional<double> start_on(const WorkloadFrameRecord& record, std::string_view clock);
std::optional<double> end_on(const WorkloadFrameRecord& record, std::string_view clock);

struct ScenarioTimeline {
  std::vector<WorkloadFrameRecord> records;        // frame-major, workload-minor
  nlohmann::json meta = nlohmann::json::object();  // device, queues, clocks (executor's part)
  // Set when the scenario stopped early (GPU timeout, device loss). The records up to that
  // point are still valid and are written out.
  std::optional<Error> failure;
};

}  // namespace gpuoverlap

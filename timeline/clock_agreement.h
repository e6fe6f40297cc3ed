// The three clocks of a record checked against each other, and the shader clock's timebase
// verified by measurement. API neutral: works on records, so it is tested without a GPU.
//
// Why the clocks differ even when nothing is wrong: the poll clock is when the CPU *saw* a
// stamp (the GPU event plus write propagation plus detection); a start timestamp is taken at
// TOP_OF_PIPE, before the first thread runs, and an end timestamp after the queue drained;
// the shader clock is read by the stamping thread itself. A tolerance covers those offsets;
// a disagreement beyond it means a row's clocks should not be trusted.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "timeline/records.h"

namespace gpuoverlap {

enum ClockDisagreement : std::uint32_t {
  kStartPollTs = 1u << 0,
  kEndPollTs = 1u << 1,
  kStartPollClk = 1u << 2,
  kEndPollClk = 1u << 3,
  kStartTsClk = 1u << 4,
  kEndTsClk = 1u << 5,
};

// "start:poll-ts;end:poll-clk" (records.csv column `flags`); empty for 0.
std::string disagreement_names(std::uint32_t flags);

struct AgreementTolerance {
  double absolute_us = 10.0;  // floor, µs
  double relative = 0.01;     // fraction of the row's duration (longest clock)
};

// Tolerance of one row: max(absolute, relative x duration) plus the frame's calibration
// deviation when a GPU clock is compared with the CPU clock.
double row_tolerance_us(const WorkloadFrameRecord& record, const AgreementTolerance& tolerance);

// Sets `disagreements` on every ok row from the clocks it has. Returns the number of rows
// flagged.
std::size_t flag_disagreements(ScenarioTimeline& timeline, const AgreementTolerance& tolerance);

// The poll clock's detection windows of a scenario judged: a stamp whose window exceeds the
// tolerance is disturbed (its row's poll_disturbed bit). `tolerance_us`: nullopt for the
// default, max(kDisturbanceWindowFactor x the p10 window of the scenario's stamps,
// kDisturbanceFloorUs). The p10 window is a pass or two of a poller that kept its CPU: the scan
// period this host gives, even where most stamps were disturbed (a positive control's threads
// time-slicing the poller's core made the p50 window 4 ms on an H200). The floor is the
// undisturbed detection precision the self-test asks for (p99 2 µs): a narrower window is no
// disturbance. Returns meta.json's "poll_window": the tolerance and its origin, the windows'
// p10/p50/p99/max, the stamps with a window and the disturbed ones. Rows without windows are
// left alone.
inline constexpr double kDisturbanceWindowFactor = 8.0;
inline constexpr double kDisturbanceFloorUs = 2.0;
nlohmann::json mark_poll_disturbance(ScenarioTimeline& timeline,
                                     std::optional<double> tolerance_us);

// Verifies the hypothesis that clk_*_us (converted from shader clock ticks as if they were
// device timestamp ticks) are on the CPU clock: a stamping thread reads the clock before it
// writes its stamp, so the poller must see every stamp at or after the clock value
// (poll - clk >= -(calibration deviation + 2 µs)), and by a detection delay whose median is
// under 1 ms. Rejected or unverifiable, the clk_*_us columns are cleared (the raw ticks stay).
// Returns meta.json's clocks.shader_clock.verification: the verdict, its reason, and the
// detection delay (p50/p99/max) when accepted; plus a least-squares fit of ticks against poll
// time (ticks per ns, R^2) as a diagnostic of the clock's real unit.
nlohmann::json verify_shader_clock_timebase(ScenarioTimeline& timeline);

}  // namespace gpuoverlap

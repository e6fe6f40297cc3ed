// One row of records.csv: the one form of a measured record that leaves the engine. The
// exporter writes it, the live feed (viewer/live_feed.cpp) shows it and every reader of a
// results folder (analysis/results.h) reads it back into it, so the mapping from a
// WorkloadFrameRecord (keyed by workload index) to named columns exists once: record_row().
// Names are text as the scenario gives them; what the engine has as enums stays enums, so no
// reader compares a status or a kind as a string.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "queues/queue_model.h"
#include "timeline/records.h"
#include "workloads/workload.h"

namespace gpuoverlap {

struct Scenario;
struct WorkloadSpec;

struct RecordRow {
  std::uint32_t frame = 0;
  std::string workload, queue;
  QueueType queue_type = QueueType::direct;
  QueuePriority priority = QueuePriority::normal;
  WorkloadKind kind = WorkloadKind::compute;
  // Empty where they do not apply: a draw into a declared texture covers its mip's pixels and
  // a copy moves bytes (no groups), a copy has no iterations.
  std::optional<std::uint32_t> groups, iterations;
  std::string depends_on, barrier;  // ';'-joined, as the CSV has them
  RecordStatus status = RecordStatus::ok;
  std::optional<double> poll_start_us, poll_end_us, ts_start_us, ts_end_us;
  // The poll times' detection windows and the stamps judged disturbed (PollDisturbance bits);
  // empty and 0 in results older than the columns, and live until the scenario has ended (its
  // windows set the tolerance).
  std::optional<double> poll_start_window_us, poll_end_window_us;
  std::uint32_t poll_disturbed = 0;
  std::optional<double> clk_start_us, clk_end_us;  // empty in results older than the columns
  std::string flags;                               // clock disagreements, "" when none
  std::uint64_t variant = 0;  // the committed background variant it ran; 0: build-time
  // The frame's gate release (a preemption submission's submit) in µs after the first
  // measured frame's; empty in results older than the column.
  std::optional<double> frame_t0_us;
  bool operator==(const RecordRow&) const = default;
};

// The row of `record`, a record of `scenario` (its workload index must be one of the
// scenario's workloads).
RecordRow record_row(const Scenario& scenario, const WorkloadFrameRecord& record);

// records.csv's line of `row` (kRecordColumns' order, "\n" at the end) in scenario `scenario`.
std::string record_csv_line(std::string_view scenario, const RecordRow& row);

// records.csv's depends_on and barrier columns of a workload: its producers' names, and their
// barriers' labels ("none" without any), ';'-separated in the order of its dependencies.
std::string dependency_names(const Scenario& scenario, const WorkloadSpec& workload);
std::string barrier_names(const WorkloadSpec& workload);

}  // namespace gpuoverlap

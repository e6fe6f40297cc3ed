#include "timeline/record_row.h"

#include <fmt/format.h>

#include "scenarios/scenario.h"
#include "timeline/clock_agreement.h"
#include "timeline/export.h"

namespace gpuoverlap {

std::string dependency_names(const Scenario& s, const WorkloadSpec& w) {
  std::string names;
  for (const auto& d : w.depends_on) {
    if (!names.empty()) names += ';';
    names += s.workloads[d.producer].name;
  }
  return names;
}

std::string barrier_names(const WorkloadSpec& w) {
  if (w.depends_on.empty()) return "none";
  std::string names;
  for (const auto& d : w.depends_on) {
    if (!names.empty()) names += ';';
    names += barrier_label(d.barrier);
  }
  return names;
}

RecordRow record_row(const Scenario& s, const WorkloadFrameRecord& r) {
  const WorkloadSpec& w = s.workloads[r.workload];
  const QueueSpec& q = s.queues[w.queue];
  RecordRow row;
  row.frame = r.frame;
  row.workload = w.name;
  row.queue = q.name;
  row.queue_type = q.type;
  row.priority = q.priority;
  row.kind = w.kind;
  if (!w.target && w.kind != WorkloadKind::copy) row.groups = w.groups;
  if (w.kind != WorkloadKind::copy) row.iterations = w.iterations;
  row.depends_on = dependency_names(s, w);
  row.barrier = barrier_names(w);
  row.status = r.status;
  row.poll_start_us = r.poll_start_us;
  row.poll_end_us = r.poll_end_us;
  row.ts_start_us = r.ts_start_us;
  row.ts_end_us = r.ts_end_us;
  row.poll_start_window_us = r.poll_start_window_us;
  row.poll_end_window_us = r.poll_end_window_us;
  row.poll_disturbed = r.poll_disturbed;
  row.clk_start_us = r.clk_start_us;
  row.clk_end_us = r.clk_end_us;
  row.flags = disagreement_names(r.disagreements);
  row.variant = r.variant;
  row.frame_t0_us = r.frame_t0_us;
  return row;
}

namespace {

template <typename Integer>
std::string optional_integer(const std::optional<Integer>& value) {
  return value ? std::to_string(*value) : std::string{};
}

}  // namespace

std::string record_csv_line(std::string_view scenario, const RecordRow& r) {
  // The barrier labels are fixed words joined by ';' and never need quoting.
  return fmt::format(
      "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
      csv_field(scenario), r.frame, csv_field(r.workload), csv_field(r.queue),
      to_string(r.queue_type), to_string(r.priority), to_string(r.kind),
      optional_integer(r.groups), optional_integer(r.iterations), csv_field(r.depends_on),
      r.barrier, csv_number(r.poll_start_us), csv_number(r.poll_end_us),
      csv_number(r.ts_start_us), csv_number(r.ts_end_us), to_string(r.status),
      csv_number(r.frame_t0_us), csv_number(r.clk_start_us), csv_number(r.clk_end_us),
      csv_field(r.flags), r.variant ? std::to_string(r.variant) : std::string{},
      csv_number(r.poll_start_window_us), csv_number(r.poll_end_window_us),
      csv_field(poll_disturbance_names(r.poll_disturbed)));
}

}  // namespace gpuoverlap

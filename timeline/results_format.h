// The results folder's format, declared once. run.json and meta.json carry `format_version`;
// each CSV that readers load back declares its columns here, each with the first format version
// whose every file has it, so that a reader checks a file's columns in one place
// (analysis/csv_table.h, check_columns) and knows what an older folder may lack.
//
// Versions:
//   0  folders written before the format had a number (no `format_version`): only the columns
//      of each file's first release are sure, the others were appended over time;
//   1  the first numbered format: every column listed with `since` 0 or 1;
//   2  frames.csv's harness columns (poller_thread_id, poller_wake_us,
//      harness_reschedule_points, calibrated);
//   3  frames.csv's scheduling-record columns (sched_loop_runnable_us,
//      sched_loop_to_background_us, sched_workers_runnable_us, sched_workers_to_background_us,
//      sched_loop_longest) and sched_waits.csv (run --sched-trace).
// Contract: columns are appended, never reordered or renamed; a new column gets the next
// version, and kResultsFormatVersion moves with it. A reader refuses a folder of a newer
// version than it knows (analysis/results.h, format_version_of; plots/plot.py,
// check_format_version).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace gpuoverlap {

inline constexpr std::uint32_t kResultsFormatVersion = 3;

struct ColumnSpec {
  std::string_view name;
  std::uint32_t since = 0;  // the first format version whose every file has this column
};

// The names alone, in order: the header a writer writes and the list a reader asks for.
template <std::size_t N>
constexpr std::array<std::string_view, N> column_names(const std::array<ColumnSpec, N>& specs) {
  std::array<std::string_view, N> names{};
  for (std::size_t i = 0; i < N; ++i) names[i] = specs[i].name;
  return names;
}

}  // namespace gpuoverlap

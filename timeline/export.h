// Writes a scenario's results: records.csv, summary.csv, frames.csv, dependencies.csv,
// overlap.csv, meta.json, trace.json.gz (Chrome trace events, gzip-compressed, see trace_export.h)
// and, with background work, background.csv in one directory, each through an atomic rename, so an
// interrupted run never leaves a half file. Column lists are the documented contract
// (docs/output-format.md): append, never reorder.
#pragma once

#include <array>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "timeline/records.h"

namespace gpuoverlap {

// `variant`: the committed background variant the workload ran (the compile's number,
// BackgroundSpec::bind_committed); empty for its build-time pipeline. `poll_*_window_us`: each
// poll time's detection window; `poll_disturbed`: "start", "end", "start;end" for stamps whose
// window exceeded the run's tolerance (meta.json "poll_window"). Results written before these
// three columns have none.
inline constexpr std::array<std::string_view, 24> kRecordColumns = {"scenario",
                                                                    "frame",
                                                                    "workload",
                                                                    "queue",
                                                                    "queue_type",
                                                                    "priority",
                                                                    "kind",
                                                                    "groups",
                                                                    "iterations",
                                                                    "depends_on",
                                                                    "barrier",
                                                                    "poll_start_us",
                                                                    "poll_end_us",
                                                                    "ts_start_us",
                                                                    "ts_end_us",
                                                                    "status",
                                                                    "frame_t0_us",
                                                                    "clk_start_us",
                                                                    "clk_end_us",
                                                                    "flags",
                                                                    "variant",
                                                                    "poll_start_window_us",
                                                                    "poll_end_window_us",
                                                                    "poll_disturbed"};

// The last seven columns are filled only on a preemption scenario's urgent rows
// (preemption/preemption_analysis.h); empty elsewhere.
// `poll_disturbed` (the poll row only): the workload's stamps whose detection window exceeded
// the run's tolerance; `poll_window_p99_us`: the p99 of its stamps' windows.
inline constexpr std::array<std::string_view, 24> kSummaryColumns = {
    "scenario",        "workload",        "queue",          "clock",
    "frames",          "start_p5_us",     "start_p50_us",   "start_p95_us",
    "end_p5_us",       "end_p50_us",      "end_p95_us",     "duration_p5_us",
    "duration_p50_us", "duration_p95_us", "flagged_rows",   "latency_p50_us",
    "latency_p95_us",  "latency_p99_us",  "latency_max_us", "deadline_misses",
    "load_slowdown",   "preemption",      "poll_disturbed", "poll_window_p99_us"};

// Appended, never reordered: readers of older runs find the first twelve.
inline constexpr std::array<std::string_view, 39> kFrameColumns = {"scenario",
                                                                   "frame",
                                                                   "cpu_start_us",
                                                                   "cpu_frame_us",
                                                                   "cpu_submit_us",
                                                                   "submit_to_start_us",
                                                                   "poll_gap_max_us",
                                                                   "bg_managed",
                                                                   "bg_boosted",
                                                                   "bg_unmanaged",
                                                                   "status",
                                                                   "bg_held",
                                                                   "frame_interval_us",
                                                                   "stutter",
                                                                   "gpu_span_us",
                                                                   "cpu_phase_us",
                                                                   "critical_path_us",
                                                                   "wake_max_us",
                                                                   "workers_missed",
                                                                   "worker_busy_min_us",
                                                                   "worker_busy_max_us",
                                                                   "poll_scans",
                                                                   "poller_cpu",
                                                                   "loop_jobs_us",
                                                                   "loop_submit_us",
                                                                   "loop_tool_us",
                                                                   "loop_gpu_wait_us",
                                                                   "loop_pace_us",
                                                                   "loop_woke_late_us",
                                                                   "loop_run_delay_us",
                                                                   "loop_on_cpu_us",
                                                                   "loop_switches_voluntary",
                                                                   "loop_switches_involuntary",
                                                                   "loop_cpu",
                                                                   "workers_run_delay_us",
                                                                   "workers_run_delay_max_us",
                                                                   "workers_on_cpu_us",
                                                                   "poller_run_delay_us",
                                                                   "workers_on_loop_cpu"};

// Append, never reorder: files from before the thread's columns are read by every tool.
inline constexpr std::array<std::string_view, 23> kBackgroundColumns = {"scenario",
                                                                        "id",
                                                                        "kind",
                                                                        "label",
                                                                        "worker",
                                                                        "boosted",
                                                                        "idle_priority",
                                                                        "queued_us",
                                                                        "start_us",
                                                                        "finish_us",
                                                                        "outcome",
                                                                        "compile_ms",
                                                                        "build_ms",
                                                                        "ran",
                                                                        "thread_id",
                                                                        "cpu_start",
                                                                        "cpu_end",
                                                                        "on_cpu_ms",
                                                                        "system_ms",
                                                                        "run_delay_ms",
                                                                        "minor_faults",
                                                                        "switches_voluntary",
                                                                        "switches_involuntary"};

// One summary row per workload and clock.
struct SummaryRow {
  std::size_t workload = 0;
  std::string clock;                                             // "poll", "ts" or "clk"
  std::size_t frames = 0;                                        // ok frames with this clock
  std::optional<double> start_us[3], end_us[3], duration_us[3];  // p5, p50, p95
  std::size_t flagged_rows = 0;  // the workload's rows whose clocks disagree (any clock)
  // The poll row: the workload's disturbed stamps and the p99 of its stamps' windows.
  std::optional<std::size_t> poll_disturbed;
  std::optional<double> poll_window_p99_us;
  // A preemption scenario's urgent job on this clock: latency p50/p95/p99/max (µs), deadline
  // misses, the load's slowdown and the classification.
  struct Preemption {
    std::optional<double> latency_us[4];
    std::size_t deadline_misses = 0;
    std::optional<double> load_slowdown;
    std::string classification;
  };
  std::optional<Preemption> preemption;
};

std::vector<SummaryRow> summarize(const Scenario& scenario, const ScenarioTimeline& timeline);

struct WorkloadSpec;

// records.csv's depends_on and barrier columns of a workload: its producers' names, and their
// barriers' labels ("none" without any), ';'-separated in the order of its dependencies.
std::string dependency_names(const Scenario& scenario, const WorkloadSpec& workload);
std::string barrier_names(const WorkloadSpec& workload);

// CSV text; quoting per RFC 4180 where a field needs it.
std::string records_csv(const Scenario& scenario, const ScenarioTimeline& timeline);
std::string summary_csv(const Scenario& scenario, const std::vector<SummaryRow>& rows);
// frames.csv: one row per measured frame (FrameRecord).
std::string frames_csv(const Scenario& scenario, const ScenarioTimeline& timeline);
// background.csv: one row per background compile; times in µs from time_origin_ns (negative
// before the first measured frame: training and warm-up).
std::string background_csv(const Scenario& scenario, const ScenarioTimeline& timeline);
std::string csv_field(std::string_view text);
// A measured value with 3 decimals (µs to the nanosecond); empty when not measured.
std::string csv_number(const std::optional<double>& value);
// One CSV line (fields quoted where needed, "\n" at the end).
std::string csv_line(const std::string_view* fields, std::size_t count);
template <std::size_t N>
std::string csv_line(const std::array<std::string_view, N>& fields) {
  return csv_line(fields.data(), N);
}

Status write_scenario_results(const std::filesystem::path& directory, const Scenario& scenario,
                              const ScenarioTimeline& timeline, const nlohmann::json& meta);
// The same with the summary given, and more files (name, content) written beside the rest.
struct ExtraFile {
  std::string name;
  std::string content;
};
Status write_scenario_results(const std::filesystem::path& directory, const Scenario& scenario,
                              const ScenarioTimeline& timeline, const nlohmann::json& meta,
                              const std::vector<SummaryRow>& summary,
                              const std::vector<ExtraFile>& extra_files);

}  // namespace gpuoverlap

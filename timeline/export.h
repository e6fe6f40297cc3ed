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
#include "timeline/results_format.h"

namespace gpuoverlap {

// `variant`: the committed background variant the workload ran (the compile's number,
// BackgroundSpec::bind_committed); empty for its build-time pipeline. `poll_*_window_us`: each
// poll time's detection window; `poll_disturbed`: "start", "end", "start;end" for stamps whose
// window exceeded the run's tolerance (meta.json "poll_window"). Results written before these
// three columns have none.
inline constexpr std::array<ColumnSpec, 24> kRecordFile = {{{"scenario", 0},
                                                            {"frame", 0},
                                                            {"workload", 0},
                                                            {"queue", 0},
                                                            {"queue_type", 0},
                                                            {"priority", 0},
                                                            {"kind", 0},
                                                            {"groups", 0},
                                                            {"iterations", 0},
                                                            {"depends_on", 0},
                                                            {"barrier", 0},
                                                            {"poll_start_us", 0},
                                                            {"poll_end_us", 0},
                                                            {"ts_start_us", 0},
                                                            {"ts_end_us", 0},
                                                            {"status", 0},
                                                            {"frame_t0_us", 1},
                                                            {"clk_start_us", 1},
                                                            {"clk_end_us", 1},
                                                            {"flags", 1},
                                                            {"variant", 1},
                                                            {"poll_start_window_us", 1},
                                                            {"poll_end_window_us", 1},
                                                            {"poll_disturbed", 1}}};
inline constexpr auto kRecordColumns = column_names(kRecordFile);

// The last seven columns are filled only on a preemption scenario's urgent rows
// (preemption/preemption_analysis.h); empty elsewhere.
// `poll_disturbed` (the poll row only): the workload's stamps whose detection window exceeded
// the run's tolerance; `poll_window_p99_us`: the p99 of its stamps' windows.
inline constexpr std::array<ColumnSpec, 24> kSummaryFile = {
    {{"scenario", 0},        {"workload", 0},        {"queue", 0},
     {"clock", 0},           {"frames", 0},          {"start_p5_us", 0},
     {"start_p50_us", 0},    {"start_p95_us", 0},    {"end_p5_us", 0},
     {"end_p50_us", 0},      {"end_p95_us", 0},      {"duration_p5_us", 0},
     {"duration_p50_us", 0}, {"duration_p95_us", 0}, {"flagged_rows", 1},
     {"latency_p50_us", 1},  {"latency_p95_us", 1},  {"latency_p99_us", 1},
     {"latency_max_us", 1},  {"deadline_misses", 1}, {"load_slowdown", 1},
     {"preemption", 1},      {"poll_disturbed", 1},  {"poll_window_p99_us", 1}}};
inline constexpr auto kSummaryColumns = column_names(kSummaryFile);

// Appended, never reordered: readers of older runs find the first twelve.
inline constexpr std::array<ColumnSpec, 48> kFrameFile = {{{"scenario", 1},
                                                           {"frame", 0},
                                                           {"cpu_start_us", 1},
                                                           {"cpu_frame_us", 1},
                                                           {"cpu_submit_us", 1},
                                                           {"submit_to_start_us", 1},
                                                           {"poll_gap_max_us", 1},
                                                           {"bg_managed", 1},
                                                           {"bg_boosted", 1},
                                                           {"bg_unmanaged", 1},
                                                           {"status", 0},
                                                           {"bg_held", 1},
                                                           {"frame_interval_us", 1},
                                                           {"stutter", 1},
                                                           {"gpu_span_us", 1},
                                                           {"cpu_phase_us", 1},
                                                           {"critical_path_us", 1},
                                                           {"wake_max_us", 1},
                                                           {"workers_missed", 1},
                                                           {"worker_busy_min_us", 1},
                                                           {"worker_busy_max_us", 1},
                                                           {"poll_scans", 1},
                                                           {"poller_cpu", 1},
                                                           {"loop_jobs_us", 1},
                                                           {"loop_submit_us", 1},
                                                           {"loop_tool_us", 1},
                                                           {"loop_gpu_wait_us", 1},
                                                           {"loop_pace_us", 1},
                                                           {"loop_woke_late_us", 1},
                                                           {"loop_run_delay_us", 1},
                                                           {"loop_on_cpu_us", 1},
                                                           {"loop_switches_voluntary", 1},
                                                           {"loop_switches_involuntary", 1},
                                                           {"loop_cpu", 1},
                                                           {"workers_run_delay_us", 1},
                                                           {"workers_run_delay_max_us", 1},
                                                           {"workers_on_cpu_us", 1},
                                                           {"poller_run_delay_us", 1},
                                                           {"workers_on_loop_cpu", 1},
                                                           {"poller_thread_id", 2},
                                                           {"poller_wake_us", 2},
                                                           {"harness_reschedule_points", 2},
                                                           {"calibrated", 2},
                                                           {"sched_loop_runnable_us", 3},
                                                           {"sched_loop_to_background_us", 3},
                                                           {"sched_workers_runnable_us", 3},
                                                           {"sched_workers_to_background_us", 3},
                                                           {"sched_loop_longest", 3}}};
inline constexpr auto kFrameColumns = column_names(kFrameFile);

// sched_waits.csv (run --sched-trace): one row per off-CPU stretch of a foreground thread.
inline constexpr std::array<ColumnSpec, 19> kSchedWaitFile = {{
    {"scenario", 3},       {"thread", 3},         {"thread_id", 3},     {"frame", 3},
    {"off_us", 3},         {"on_us", 3},          {"runnable_us", 3},   {"cpu_out", 3},
    {"cpu_in", 3},         {"lost_by", 3},        {"holder", 3},        {"holder_kind", 3},
    {"holder_prio", 3},    {"given_back_by", 3},  {"waker", 3},         {"waker_kind", 3},
    {"waker_waited_us", 3}, {"lost_events", 3},   {"text", 3}}};
inline constexpr auto kSchedWaitColumns = column_names(kSchedWaitFile);

// Append, never reorder: files from before the thread's columns are read by every tool.
inline constexpr std::array<ColumnSpec, 23> kBackgroundFile = {{{"scenario", 0},
                                                                {"id", 0},
                                                                {"kind", 0},
                                                                {"label", 0},
                                                                {"worker", 0},
                                                                {"boosted", 0},
                                                                {"idle_priority", 0},
                                                                {"queued_us", 0},
                                                                {"start_us", 0},
                                                                {"finish_us", 0},
                                                                {"outcome", 0},
                                                                {"compile_ms", 0},
                                                                {"build_ms", 0},
                                                                {"ran", 0},
                                                                {"thread_id", 1},
                                                                {"cpu_start", 1},
                                                                {"cpu_end", 1},
                                                                {"on_cpu_ms", 1},
                                                                {"system_ms", 1},
                                                                {"run_delay_ms", 1},
                                                                {"minor_faults", 1},
                                                                {"switches_voluntary", 1},
                                                                {"switches_involuntary", 1}}};
inline constexpr auto kBackgroundColumns = column_names(kBackgroundFile);

// One summary row per workload and clock.
struct SummaryRow {
  std::size_t workload = 0;
  Clock clock = Clock::poll;
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

// CSV text; quoting per RFC 4180 where a field needs it.
std::string records_csv(const Scenario& scenario, const ScenarioTimeline& timeline);
std::string summary_csv(const Scenario& scenario, const std::vector<SummaryRow>& rows);
// frames.csv: one row per measured frame (FrameRecord).
std::string frames_csv(const Scenario& scenario, const ScenarioTimeline& timeline);
// sched_waits.csv: one row per SchedWaitRow.
std::string sched_waits_csv(const Scenario& scenario, const ScenarioTimeline& timeline);
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

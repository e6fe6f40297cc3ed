#include "timeline/export.h"

#include <fmt/format.h>

#include <bit>
#include <system_error>

#include "core/atomic_file.h"
#include "core/gzip.h"
#include "scenarios/scenario.h"
#include "timeline/clock_agreement.h"
#include "timeline/dependency_analysis.h"
#include "timeline/record_row.h"
#include "timeline/statistics.h"
#include "timeline/trace_export.h"

namespace gpuoverlap {

std::string csv_line(const std::string_view* fields, std::size_t count) {
  std::string line;
  for (std::size_t i = 0; i < count; ++i) {
    if (i) line += ',';
    line += csv_field(fields[i]);
  }
  return line + "\n";
}

std::string csv_number(const std::optional<double>& value) {
  return value ? fmt::format("{:.3f}", *value) : std::string{};
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string records_csv(const Scenario& s, const ScenarioTimeline& timeline) {
  std::string out = csv_line(kRecordColumns);
  for (const WorkloadFrameRecord& r : timeline.records)
    out += record_csv_line(s.name, record_row(s, r));
  return out;
}

std::vector<SummaryRow> summarize(const Scenario& s, const ScenarioTimeline& timeline) {
  std::vector<SummaryRow> rows;
  constexpr double kPercentiles[3] = {5.0, 50.0, 95.0};
  for (std::size_t w = 0; w < s.workloads.size(); ++w) {
    std::size_t flagged = 0;
    for (const WorkloadFrameRecord& r : timeline.records)
      if (r.workload == w && r.disagreements) ++flagged;
    for (const Clock clock : kClocks) {
      std::vector<double> starts, ends, durations;
      for (const WorkloadFrameRecord& r : timeline.records) {
        if (r.workload != w || r.status != RecordStatus::ok) continue;
        const auto start = start_on(r, clock), end = end_on(r, clock);
        if (!start || !end) continue;
        starts.push_back(*start);
        ends.push_back(*end);
        durations.push_back(*end - *start);
      }
      if (starts.empty()) continue;  // clock unavailable: no row rather than an empty one
      SummaryRow row;
      row.workload = w;
      row.clock = clock;
      row.frames = starts.size();
      row.flagged_rows = flagged;
      if (clock == Clock::poll) {
        std::size_t disturbed = 0;
        std::vector<double> windows;
        for (const WorkloadFrameRecord& r : timeline.records) {
          if (r.workload != w) continue;
          disturbed += std::popcount(r.poll_disturbed);
          for (const auto& window : {r.poll_start_window_us, r.poll_end_window_us})
            if (window) windows.push_back(*window);
        }
        if (!windows.empty()) {
          row.poll_disturbed = disturbed;
          row.poll_window_p99_us = percentile(windows, 99);
        }
      }
      for (int i = 0; i < 3; ++i) {
        row.start_us[i] = percentile(starts, kPercentiles[i]);
        row.end_us[i] = percentile(ends, kPercentiles[i]);
        row.duration_us[i] = percentile(durations, kPercentiles[i]);
      }
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

std::string summary_csv(const Scenario& s, const std::vector<SummaryRow>& rows) {
  std::string out = csv_line(kSummaryColumns);
  for (const SummaryRow& r : rows) {
    const WorkloadSpec& w = s.workloads[r.workload];
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},", csv_field(s.name),
                       csv_field(w.name), csv_field(s.queues[w.queue].name), to_string(r.clock),
                       r.frames, csv_number(r.start_us[0]), csv_number(r.start_us[1]),
                       csv_number(r.start_us[2]), csv_number(r.end_us[0]), csv_number(r.end_us[1]),
                       csv_number(r.end_us[2]), csv_number(r.duration_us[0]),
                       csv_number(r.duration_us[1]), csv_number(r.duration_us[2]), r.flagged_rows);
    if (r.preemption)
      out += fmt::format("{},{},{},{},{},{},{},", csv_number(r.preemption->latency_us[0]),
                         csv_number(r.preemption->latency_us[1]),
                         csv_number(r.preemption->latency_us[2]),
                         csv_number(r.preemption->latency_us[3]), r.preemption->deadline_misses,
                         csv_number(r.preemption->load_slowdown), r.preemption->classification);
    else
      out += ",,,,,,,";
    out += fmt::format("{},{}\n", r.poll_disturbed ? std::to_string(*r.poll_disturbed) : "",
                       csv_number(r.poll_window_p99_us));
  }
  return out;
}

namespace {

// A whole number, or an empty field.
template <typename Integer>
std::string optional_text(const std::optional<Integer>& value) {
  return value ? std::to_string(*value) : std::string();
}

}  // namespace

std::string frames_csv(const Scenario& s, const ScenarioTimeline& timeline) {
  std::string out = csv_line(kFrameColumns);
  for (const FrameRecord& f : timeline.frames)
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},"
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
        csv_field(s.name), f.frame, csv_number(f.cpu_start_us), csv_number(f.cpu_frame_us),
        csv_number(f.cpu_submit_us), csv_number(f.submit_to_start_us),
        csv_number(f.poll_gap_max_us), f.bg_managed, f.bg_boosted, f.bg_unmanaged,
        to_string(f.status), f.bg_held ? 1 : 0, csv_number(f.frame_interval_us), f.stutter ? 1 : 0,
        csv_number(f.gpu_span_us), csv_number(f.cpu_phase_us), csv_number(f.critical_path_us),
        csv_number(f.wake_max_us),
        f.cpu_phase_us ? std::to_string(f.workers_missed) : std::string(),
        csv_number(f.worker_busy_min_us), csv_number(f.worker_busy_max_us),
        f.poll_scans ? std::to_string(*f.poll_scans) : std::string(),
        f.poller_cpu ? std::to_string(*f.poller_cpu) : std::string(), csv_number(f.loop_jobs_us),
        csv_number(f.loop_submit_us), csv_number(f.loop_tool_us), csv_number(f.loop_gpu_wait_us),
        csv_number(f.loop_pace_us), csv_number(f.loop_woke_late_us),
        csv_number(f.loop_run_delay_us), csv_number(f.loop_on_cpu_us),
        optional_text(f.loop_switches_voluntary), optional_text(f.loop_switches_involuntary),
        optional_text(f.loop_cpu), csv_number(f.workers_run_delay_us),
        csv_number(f.workers_run_delay_max_us), csv_number(f.workers_on_cpu_us),
        csv_number(f.poller_run_delay_us), optional_text(f.workers_on_loop_cpu),
        optional_text(f.poller_thread_id), csv_number(f.poller_wake_us),
        optional_text(f.harness_reschedule_points),
        f.calibrated ? std::to_string(*f.calibrated ? 1 : 0) : std::string(),
        csv_number(f.sched_loop_runnable_us), csv_number(f.sched_loop_to_background_us),
        csv_number(f.sched_workers_runnable_us), csv_number(f.sched_workers_to_background_us),
        csv_field(f.sched_loop_longest));
  return out;
}

std::string sched_waits_csv(const Scenario& s, const ScenarioTimeline& timeline) {
  std::string out = csv_line(kSchedWaitColumns);
  for (const SchedWaitRow& w : timeline.sched_waits)
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                       csv_field(s.name), csv_field(w.thread), w.thread_id, optional_text(w.frame),
                       csv_number(std::optional<double>(w.off_us)),
                       csv_number(std::optional<double>(w.on_us)),
                       csv_number(std::optional<double>(w.runnable_us)), w.cpu_out, w.cpu_in,
                       csv_field(w.lost_by), csv_field(w.holder), csv_field(w.holder_kind),
                       w.holder_prio >= 0 ? std::to_string(w.holder_prio) : std::string(),
                       csv_field(w.given_back_by), csv_field(w.waker), csv_field(w.waker_kind),
                       csv_number(w.waker_waited_us), w.lost_events ? 1 : 0, csv_field(w.text));
  return out;
}

std::string background_csv(const Scenario& s, const ScenarioTimeline& timeline) {
  std::string out = csv_line(kBackgroundColumns);
  auto relative_us = [&](std::int64_t ns) -> std::optional<double> {
    if (ns == 0) return std::nullopt;
    return static_cast<double>(ns - timeline.time_origin_ns) / 1000.0;
  };
  auto ms = [](const std::optional<std::int64_t>& ns) -> std::optional<double> {
    if (!ns) return std::nullopt;
    return static_cast<double>(*ns) / 1e6;
  };
  auto cpu_text = [](int cpu) { return cpu >= 0 ? std::to_string(cpu) : std::string(); };
  for (const background::BackgroundTaskRecord& t : timeline.background_tasks) {
    // A compile that never ran has no thread: its thread columns stay empty.
    const bool ran_on_thread = t.thread.thread_id != 0;
    const ThreadAccounting& used = t.thread.used;
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_field(s.name),
        t.id, t.managed ? "managed" : "unmanaged", csv_field(t.label), t.worker, t.boosted ? 1 : 0,
        t.idle_priority ? 1 : 0, csv_number(relative_us(t.queued_ns)),
        csv_number(relative_us(t.start_ns)), csv_number(relative_us(t.finish_ns)),
        csv_field(t.outcome), csv_number(std::optional<double>(t.compile_ms)),
        csv_number(std::optional<double>(t.build_ms)), t.start_ns != 0 ? 1 : 0,
        ran_on_thread ? std::to_string(t.thread.thread_id) : std::string(),
        cpu_text(t.thread.cpu_start), cpu_text(t.thread.cpu_end), csv_number(ms(used.on_cpu_ns)),
        csv_number(ms(used.system_ns)), csv_number(ms(used.run_delay_ns)),
        optional_text(used.minor_faults), optional_text(used.voluntary_switches),
        optional_text(used.involuntary_switches));
  }
  return out;
}

Status write_scenario_results(const std::filesystem::path& directory, const Scenario& s,
                              const ScenarioTimeline& timeline, const nlohmann::json& meta) {
  return write_scenario_results(directory, s, timeline, meta, summarize(s, timeline), {});
}

Status write_scenario_results(const std::filesystem::path& directory, const Scenario& s,
                              const ScenarioTimeline& timeline, const nlohmann::json& meta,
                              const std::vector<SummaryRow>& summary,
                              const std::vector<ExtraFile>& extra_files) {
  std::error_code ec;
  std::filesystem::create_directories(directory, ec);
  if (ec) return make_error("cannot create " + directory.string() + ": " + ec.message());
  // The per-frame, per-workload table is most of a results folder: written compressed (pandas
  // and every reader of gpuoverlap read .csv.gz as it is; `zcat` shows it).
  auto records = gzip_compress(records_csv(s, timeline));
  if (!records) return records.error().with_context("records.csv.gz: ");
  GPUOVERLAP_TRY(write_file_atomically(directory / "records.csv.gz", *records));
  GPUOVERLAP_TRY(write_file_atomically(directory / "summary.csv", summary_csv(s, summary)));
  for (const ExtraFile& file : extra_files)
    GPUOVERLAP_TRY(write_file_atomically(directory / file.name, file.content));
  GPUOVERLAP_TRY(write_file_atomically(directory / "dependencies.csv",
                                       dependencies_csv(s, dependency_gaps(s, timeline))));
  GPUOVERLAP_TRY(write_file_atomically(directory / "overlap.csv",
                                       overlap_csv(s, pairwise_overlap(s, timeline))));
  GPUOVERLAP_TRY(write_file_atomically(directory / "frames.csv", frames_csv(s, timeline)));
  if (s.background)
    GPUOVERLAP_TRY(
        write_file_atomically(directory / "background.csv", background_csv(s, timeline)));
  if (timeline.sched_recorded) {
    GPUOVERLAP_TRY(
        write_file_atomically(directory / "sched_waits.csv", sched_waits_csv(s, timeline)));
    if (!timeline.sched_record_gz.empty())  // else meta.json's sched_trace.file_why_not says why
      GPUOVERLAP_TRY(
          write_file_atomically(directory / "sched_record.txt.gz", timeline.sched_record_gz));
  }
  nlohmann::json versioned = meta;
  versioned["format_version"] = kResultsFormatVersion;
  GPUOVERLAP_TRY(write_file_atomically(directory / "meta.json", versioned.dump(2) + "\n"));
  // The trace is the largest file and derived from the records: written compressed (the Perfetto
  // UI and chrome://tracing open .json.gz as it is), quickly: with the kernel record's lanes it
  // is megabytes of JSON a scenario, compressed between a study's rounds, where zlib's default
  // level took twice as long as its fastest, for a file a quarter smaller.
  auto trace = gzip_compress(chrome_trace(s, timeline, meta), GzipEffort::fast);
  if (!trace) return trace.error().with_context("trace.json.gz: ");
  GPUOVERLAP_TRY(write_file_atomically(directory / "trace.json.gz", *trace));
  return ok_status();
}

}  // namespace gpuoverlap

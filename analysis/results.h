// Results as written by `gpuoverlap run`, read back from disk (records.csv.gz through
// fast-cpp-csv-parser, meta.json, run.json), and the per-frame metrics derived from them:
// start, end, duration of each workload and the gap of each dependency (consumer start minus
// producer end), per clock. Shared by `compare` and `report`, so both count the same way.
#pragma once

#include <array>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "analysis/scenario_meta.h"
#include "core/enum_names.h"
#include "core/result.h"
#include "queues/queue_model.h"
#include "scenarios/scenario.h"
#include "timeline/record_row.h"
#include "timeline/records.h"
#include "workloads/workload.h"

namespace gpuoverlap {

// The records of a scenario are records.csv's rows: RecordRow (timeline/record_row.h), the
// type the exporter writes and the live feed shows.

// One measured frame of frames.csv: the frame-level figures a player feels. Results older
// than a column leave it empty.
struct LoadedFrame {
  std::uint32_t frame = 0;
  bool ok = true;        // status "ok"
  bool stutter = false;  // paced, and the interval above 1.5 periods
  std::optional<double> frame_interval_us, gpu_span_us, cpu_phase_us, wake_max_us;
  std::optional<double> critical_path_us;  // a [cpu] table with critical_jobs; else empty
  bool operator==(const LoadedFrame&) const = default;
};

// One background compile of background.csv: when it ran and on which thread. Results older
// than the thread columns leave them empty.
struct LoadedBackgroundTask {
  bool managed = true;
  std::string label;
  int worker = -1;
  bool boosted = false;
  std::optional<double> start_us, finish_us;  // µs from the first measured frame's t0
  std::string outcome;
  std::optional<std::int64_t> thread_id;
  std::optional<int> cpu_start, cpu_end;
  std::optional<double> on_cpu_ms, system_ms, run_delay_ms;
  std::optional<std::int64_t> minor_faults;
  bool operator==(const LoadedBackgroundTask&) const = default;
};

// One row of sched_waits.csv (run --sched-trace; timeline/export.h kSchedWaitColumns): an
// off-CPU stretch of a foreground thread, times µs from the first measured frame's t0.
struct LoadedSchedWait {
  std::string thread;  // "frame loop", "worker 3", "poller"
  std::optional<std::uint32_t> frame;
  double off_us = 0, on_us = 0, runnable_us = 0;
  std::string lost_by, holder, holder_kind, given_back_by, text;
  bool blocked = false;  // lost_by is "blocked": asleep, then runnable from its wake-up
  bool operator==(const LoadedSchedWait&) const = default;
};

// sched_waits.csv of one scenario (untrusted: a missing column, a bad number, a stretch that
// ends before it begins or a kind none of schedtrace's is an Error naming the file).
Result<std::vector<LoadedSchedWait>> load_sched_waits(const std::filesystem::path& csv,
                                                      std::uint32_t version);

// A JSON file of a results folder (run.json, meta.json; untrusted: at most kMaxJsonFileBytes,
// a regular file, valid JSON, else an Error naming it). Its fields are the reader's to check.
Result<nlohmann::json> read_results_json(const std::filesystem::path& path);

// background.csv of one scenario (untrusted: a missing column the folder's version must have
// (kBackgroundFile), a bad number or kind is an Error naming the file).
// `version`: the folder's format version (meta.json's; timeline/results_format.h).
Result<std::vector<LoadedBackgroundTask>> load_background(const std::filesystem::path& csv,
                                                          std::uint32_t version = 0);

// One row of summary.csv (timeline/export.h, kSummaryColumns): one workload on one clock, as
// `run` summarized it from the records it wrote. Only what a reader without the records uses;
// results older than a column leave it empty.
struct LoadedSummaryRow {
  std::string scenario, workload, queue;
  Clock clock = Clock::poll;
  std::size_t frames = 0;  // ok frames with the clock (its disturbed stamps included)
  std::optional<double> duration_p50_us;
  // A preemption scenario's urgent job: submission to its first thread, over its ok
  // submissions with a start on the clock (on poll without the disturbed starts).
  std::optional<double> latency_p50_us, latency_p99_us;
  // The poll row: the workload's stamps judged disturbed (empty before the column).
  std::optional<std::size_t> poll_disturbed;
  bool operator==(const LoadedSummaryRow&) const = default;
};

// summary.csv of one scenario (untrusted: a missing column the folder's version must have
// (kSummaryFile), an unknown clock or a bad number is an Error naming the file).
Result<std::vector<LoadedSummaryRow>> load_summary(const std::filesystem::path& summary_csv,
                                                   std::uint32_t version = 0);

// What a scenario is: an urgent job against a load (preemption) or frames of workloads.
enum class ScenarioKind { frames, preemption };

// The study a scenario is a condition of (meta.json's scenario.study).
struct StudyMembership {
  std::string name, condition;
  StudyKind kind = StudyKind::background;
  std::uint32_t round = 0;
};

struct LoadedScenario {
  std::string name;
  std::filesystem::path directory;
  // meta.json as read (a live run: as the feed built it), kept to be written through; no reader
  // walks it. Read once into the typed members below (read_meta), where the scenario is loaded.
  nlohmann::json meta_json;
  ScenarioMeta meta;
  // What the scenario is (a live run: from the scenario itself), so that no reader decides it
  // from meta's members.
  ScenarioKind kind = ScenarioKind::frames;
  bool game_frame = false;  // its frames are a game frame's ([cpu])
  std::optional<StudyMembership> study;
  std::vector<RecordRow> records;
  std::vector<std::string> workloads;  // in the scenario's order
  std::vector<LoadedFrame> frames;     // frames.csv; empty where a scenario has none
  std::vector<LoadedBackgroundTask> background_tasks;  // background.csv; empty without one
  std::vector<LoadedSchedWait> sched_waits;            // sched_waits.csv; empty without one
  // false: its records were never kept (loaded with RecordsRequired::no); `records` is empty
  // and `summary` holds its summary.csv instead.
  bool has_records = true;
  std::vector<LoadedSummaryRow> summary;  // read only where has_records is false
};

// Sets `meta`, `kind`, `game_frame` and `study` from `scenario.meta_json` (untrusted: a member
// of another shape reads as absent).
void read_meta(LoadedScenario& scenario);

// frames.csv of one scenario (untrusted: a missing column or a bad number is an Error naming
// the file, line and column).
Result<std::vector<LoadedFrame>> load_frames(const std::filesystem::path& frames_csv,
                                             std::uint32_t version = 0);

// A folder's results format (run.json's or meta.json's `format_version`; 0 where a file written
// before the format had a number has none), or an Error in one line when it is newer than this
// build reads (timeline/results_format.h).
Result<std::uint32_t> format_version_of(const nlohmann::json& file, const std::string& where);

// What a player feels, as PresentMon and CapFrameX report it, over a scenario's ok frames: the
// frame interval (start to start) p50/p99/p99.9, the 1 % low (the frame rate of the slowest
// 1 % of intervals, at least one), stutters per 1000 frames, and with a game frame's CPU side
// the CPU phase p50/p99 and the worst wake-up's p99. nullopt: no frame has an interval.
struct FrameTimeStats {
  std::size_t frames = 0, stutters = 0;
  double interval_p50_us = 0, interval_p99_us = 0, interval_p999_us = 0;
  double one_percent_low_fps = 0;
  std::optional<double> cpu_phase_p50_us, cpu_phase_p99_us, wake_max_p99_us;
  double stutters_per_1000() const;
};
std::optional<FrameTimeStats> frame_time_stats(const std::vector<LoadedFrame>& frames);
// The report's and viewer's line after its label "Frame time": "(start to start, ms): p50
// 8.000, p99 …; 1 % low 50.0 fps; 10.0 stutters per 1000 frames (…)[; CPU phase …]."
std::string describe(const FrameTimeStats& stats);

struct LoadedRun {
  std::filesystem::path directory;
  nlohmann::json run = nlohmann::json::object();  // run.json; empty for a lone scenario directory
  std::vector<LoadedScenario> scenarios;
};

// Why study `study` of `run` has no verdict.json, in words: how many of its scenarios
// (run.json's "<study>/..." entries) were unsupported by the runtime, failed or did not run,
// or, where run.json says nothing of them, that the file is missing or unreadable.
std::string missing_verdict_reason(const LoadedRun& run, const std::string& study);

// Whether `directory` is one scenario's results: it has records.csv.gz (or records.csv, as
// results written before the table was compressed have).
bool has_records(const std::filesystem::path& directory);

// Whether a reader needs each scenario's records. Every reader does (report, compare, the
// viewer: what they show rests on the frames) but the history's ingest, which keeps what
// summary.csv gives of a scenario whose records were never kept (many results under
// docs/results/ were committed so). With `no`, a scenario directory without records but with
// meta.json and summary.csv loads with has_records false; one without summary.csv either is
// refused as with `yes`.
enum class RecordsRequired { yes, no };

// A directory written by `gpuoverlap run --out` (with run.json), or one scenario directory
// (with records; with RecordsRequired::no also one with meta.json and summary.csv and no
// run.json).
Result<LoadedRun> load_results(const std::filesystem::path& directory,
                               RecordsRequired records = RecordsRequired::yes);
Result<LoadedScenario> load_scenario_results(const std::filesystem::path& directory,
                                             RecordsRequired records = RecordsRequired::yes);

// A folder written by `gpuoverlap selftest`: selftest.json (the device, host, start and
// command line) and selftest.csv, whose columns are these (selftest_csv writes them).
inline constexpr std::array<std::string_view, 9> kSelftestColumns = {
    "check", "metric", "clock", "config", "value", "unit", "target", "verdict", "detail"};
struct LoadedSelftestRow {
  std::string check, metric, clock, config;
  std::optional<double> value;  // empty where the check had nothing to measure
  std::string unit, target, verdict;
};
struct LoadedSelftest {
  std::filesystem::path directory;
  nlohmann::json summary;  // selftest.json
  std::vector<LoadedSelftestRow> rows;
};
// Whether `directory` is a self-test's results: selftest.json and no run.json.
bool is_selftest(const std::filesystem::path& directory);
Result<LoadedSelftest> load_selftest(const std::filesystem::path& directory);

// The device folders of a run on several devices (`run --device all` or a list: run.json's
// `devices`, each a results folder of its own), resolved under `directory`; empty for a run on
// one device, a lone scenario or a self-test.
struct DeviceFolder {
  std::filesystem::path directory;
  nlohmann::json device = nlohmann::json::object();  // as its meta.json's "device"
};
Result<std::vector<DeviceFolder>> device_folders(const std::filesystem::path& directory);

// A run.json `directory` entry, resolved under `root`. It is untrusted (results folders are
// sent around with bug reports): absolute paths and paths that climb out of `root` are errors.
Result<std::filesystem::path> scenario_directory(const std::filesystem::path& root,
                                                 const std::string& relative);

// Per-frame values of one metric, over the frames with status ok that have the clock; on the
// poll clock without the frames whose stamps were disturbed (counted apart).
struct MetricSeries {
  std::string workload;  // for a gap: the consumer
  std::string metric;    // "start", "end", "duration" or "gap"
  std::string producer;  // for a gap: the producer
  std::string barrier;   // for a gap: its barrier kind
  std::vector<double> values_us;
  // Poll clock: frames left out because a stamp the value rests on was disturbed.
  std::size_t disturbed_frames = 0;
};

std::vector<MetricSeries> metric_series(const LoadedScenario& scenario, Clock clock);

}  // namespace gpuoverlap

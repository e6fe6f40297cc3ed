#include "analysis/results.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <sstream>
#include <string_view>

#include "analysis/csv_table.h"
#include "core/input_file.h"
#include "schedtrace/thread_waits.h"
#include "timeline/export.h"
#include "timeline/statistics.h"

namespace gpuoverlap {

Result<nlohmann::json> read_results_json(const std::filesystem::path& path) {
  auto text = read_input_file(path, kMaxJsonFileBytes);
  if (!text) return text.error();
  nlohmann::json parsed = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return make_error(path.string() + ": not valid JSON");
  return parsed;
}

namespace {

enum class JsonType { object, array, string, boolean, number, object_or_null };

bool has_type(const nlohmann::json& j, JsonType type) {
  switch (type) {
    case JsonType::object:
      return j.is_object();
    case JsonType::array:
      return j.is_array();
    case JsonType::string:
      return j.is_string();
    case JsonType::boolean:
      return j.is_boolean();
    case JsonType::number:
      return j.is_number();
    case JsonType::object_or_null:
      return j.is_object() || j.is_null();
  }
  return false;
}

// As a message says what a field must be.
constexpr EnumNames<JsonType, 6> kJsonTypeWords{{{JsonType::object, "an object"},
                                                 {JsonType::array, "a list"},
                                                 {JsonType::string, "a string"},
                                                 {JsonType::boolean, "true or false"},
                                                 {JsonType::number, "a number"},
                                                 {JsonType::object_or_null, "an object or null"}}};

std::string type_name(JsonType type) { return std::string(name_of(kJsonTypeWords, type)); }

// A field the readers of meta.json or run.json use, with the type they rely on; `items`: the
// type of each element of a list.
struct JsonField {
  const char* pointer;
  JsonType type;
  std::optional<JsonType> items = std::nullopt;
};

// Checks the fields present in `j` (absent ones are fine: older results lack some). After
// this, report, compare and verdicts read them without a type check of their own.
Status check_fields(const nlohmann::json& j, std::initializer_list<JsonField> fields,
                    const std::string& where) {
  if (!j.is_object()) return make_error(where + ": not a JSON object");
  for (const JsonField& field : fields) {
    const nlohmann::json::json_pointer pointer(field.pointer);
    // contains() on a pointer whose parent has another type would throw; parents come first
    // in the lists below, so a parent of the wrong type has already been reported.
    if (!j.contains(pointer)) continue;
    const nlohmann::json& value = j.at(pointer);
    if (!has_type(value, field.type))
      return make_error(where + ": '" + std::string(field.pointer + 1) + "' must be " +
                        type_name(field.type));
    if (field.items)
      for (const auto& item : value)
        if (!has_type(item, *field.items))
          return make_error(where + ": each entry of '" + std::string(field.pointer + 1) +
                            "' must be " + type_name(*field.items));
  }
  return ok_status();
}

}  // namespace

Result<std::uint32_t> format_version_of(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object() || !j.contains("format_version")) return std::uint32_t{0};
  const nlohmann::json& v = j["format_version"];
  if (!v.is_number_unsigned() || v.get<std::uint64_t>() > 1'000'000)
    return make_error(where + ": 'format_version' must be a whole number");
  const auto version = v.get<std::uint32_t>();
  if (version > kResultsFormatVersion)
    return make_error(fmt::format(
        "{}: results format {}, newer than this gpuoverlap reads ({}): read it with the "
        "gpuoverlap that wrote it or a newer one",
        where, version, kResultsFormatVersion));
  return version;
}

namespace {

Status check_meta(const nlohmann::json& meta, const std::string& where) {
  return check_fields(meta,
                      {{"/scenario", JsonType::object},
                       {"/scenario/name", JsonType::string},
                       {"/scenario/description", JsonType::string},
                       {"/failure", JsonType::object_or_null},
                       {"/queues", JsonType::array, JsonType::object},
                       {"/priority_notes", JsonType::array, JsonType::string},
                       {"/settings", JsonType::object},
                       {"/settings/timestamp_queries", JsonType::boolean},
                       {"/preemption", JsonType::object},
                       {"/preemption/spec", JsonType::object},
                       {"/preemption/load_sizes", JsonType::array, JsonType::object},
                       {"/preemption/calibrated", JsonType::boolean},
                       {"/clock_agreement", JsonType::object},
                       {"/clocks", JsonType::object},
                       {"/clocks/shader_clock", JsonType::object},
                       {"/clocks/shader_clock/verification", JsonType::object},
                       {"/device", JsonType::object},
                       {"/tool", JsonType::object},
                       {"/host", JsonType::object},
                       {"/threads", JsonType::object},
                       {"/sizes", JsonType::object},
                       {"/sizes/profile", JsonType::string}},
                      where);
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ';');) parts.push_back(part);
  return parts;
}

}  // namespace

Result<std::filesystem::path> scenario_directory(const std::filesystem::path& root,
                                                 const std::string& relative) {
  const std::filesystem::path sub(relative);
  if (sub.empty() || sub.is_absolute() || sub.has_root_name())
    return make_error("scenario directory '" + relative + "' is not relative to the results");
  for (const auto& part : sub.lexically_normal())
    if (part == "..")
      return make_error("scenario directory '" + relative + "' leaves the results directory");
  return root / sub.lexically_normal();
}

namespace {

// records.csv(.gz) of `directory` into `s`: its records, workloads and name.
Status load_records(const std::filesystem::path& directory, LoadedScenario& s,
                    std::uint32_t version) {
  // records.csv.gz since results were compressed; records.csv before (and by hand).
  std::filesystem::path records = directory / "records.csv.gz";
  std::error_code exists_ec;
  if (!std::filesystem::exists(records, exists_ec) &&
      std::filesystem::exists(directory / "records.csv", exists_ec))
    records = directory / "records.csv";
  try {
    const auto table = read_csv(records.string(), kRecordColumns, /*allow_missing=*/true);
    check_columns(table, kRecordFile, version);
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
      RecordRow record;
      record.frame = static_cast<std::uint32_t>(table.unsigned_integer(r, "frame"));
      record.workload = table.at(r, "workload");
      record.queue = table.at(r, "queue");
      record.queue_type = table.named(r, "queue_type", kQueueTypeNames);
      record.priority = table.named(r, "priority", kQueuePriorityNames);
      record.kind = table.named(r, "kind", kWorkloadKindNames);
      record.groups = table.optional_unsigned(r, "groups");
      record.iterations = table.optional_unsigned(r, "iterations");
      record.depends_on = table.at(r, "depends_on");
      record.barrier = table.at(r, "barrier");
      record.status = table.named(r, "status", kRecordStatusNames);
      record.poll_start_us = table.number(r, "poll_start_us");
      record.poll_end_us = table.number(r, "poll_end_us");
      record.ts_start_us = table.number(r, "ts_start_us");
      record.ts_end_us = table.number(r, "ts_end_us");
      record.clk_start_us = table.number(r, "clk_start_us");
      record.clk_end_us = table.number(r, "clk_end_us");
      record.flags = table.at(r, "flags");
      record.frame_t0_us = table.number(r, "frame_t0_us");
      record.variant = table.at(r, "variant").empty() ? 0 : table.unsigned_integer(r, "variant");
      record.poll_start_window_us = table.number(r, "poll_start_window_us");
      record.poll_end_window_us = table.number(r, "poll_end_window_us");
      record.poll_disturbed = table.named(r, "poll_disturbed", kPollDisturbanceNames);
      if (std::find(s.workloads.begin(), s.workloads.end(), record.workload) == s.workloads.end())
        s.workloads.push_back(record.workload);
      if (s.name.empty()) s.name = table.at(r, "scenario");
      s.records.push_back(std::move(record));
    }
  } catch (const std::exception& e) {  // io::error::* and the checks of csv_table.h
    return make_error(csv_failure(records.string(), e));
  }
  return ok_status();
}

// A scenario directory whose records were never kept but whose summary is (RecordsRequired::no).
bool summary_only(const std::filesystem::path& directory) {
  std::error_code ec;
  return !has_records(directory) &&
         std::filesystem::is_regular_file(directory / "summary.csv", ec) &&
         std::filesystem::is_regular_file(directory / "meta.json", ec);
}

}  // namespace

void read_meta(LoadedScenario& s) {
  s.meta = read_scenario_meta(s.meta_json);
  s.kind = s.meta_json.is_object() && s.meta_json.contains("preemption") ? ScenarioKind::preemption
                                                                         : ScenarioKind::frames;
  s.game_frame = s.meta_json.is_object() && s.meta_json.contains("cpu");
  s.study.reset();
  const nlohmann::json about = s.meta_json.is_object()
                                   ? s.meta_json.value("scenario", nlohmann::json::object())
                                   : nlohmann::json();
  const nlohmann::json study =
      about.is_object() ? about.value("study", nlohmann::json()) : nlohmann::json();
  if (!study.is_object() || !study.value("name", nlohmann::json()).is_string()) return;
  StudyMembership membership;
  membership.name = study["name"].get<std::string>();
  const nlohmann::json condition = study.value("condition", nlohmann::json());
  if (condition.is_string()) membership.condition = condition.get<std::string>();
  const nlohmann::json kind = study.value("kind", nlohmann::json());
  if (kind.is_string())
    membership.kind =
        value_of(kStudyKindNames, kind.get<std::string>()).value_or(StudyKind::background);
  const nlohmann::json round = study.value("round", nlohmann::json());
  // Signed or unsigned as the JSON was built (a parsed 3 is unsigned, a constructed one not).
  if (round.is_number_integer() && round.get<std::int64_t>() > 0 &&
      round.get<std::int64_t>() <= std::numeric_limits<std::uint32_t>::max())
    membership.round = static_cast<std::uint32_t>(round.get<std::int64_t>());
  s.study = std::move(membership);
}

Result<LoadedScenario> load_scenario_results(const std::filesystem::path& directory,
                                             RecordsRequired records_required) {
  LoadedScenario s;
  s.directory = directory;
  auto meta = read_results_json(directory / "meta.json");
  if (!meta) return meta.error();
  // The version first: a newer folder is refused in one line before its content is judged.
  const auto version = format_version_of(*meta, (directory / "meta.json").string());
  if (!version) return version.error();
  GPUOVERLAP_TRY(check_meta(*meta, (directory / "meta.json").string()));
  s.meta_json = *meta;
  if (records_required == RecordsRequired::no && summary_only(directory)) {
    auto summary = load_summary(directory / "summary.csv", *version);
    if (!summary) return summary.error();
    s.has_records = false;
    s.summary = std::move(*summary);
    for (const LoadedSummaryRow& row : s.summary)
      if (std::find(s.workloads.begin(), s.workloads.end(), row.workload) == s.workloads.end())
        s.workloads.push_back(row.workload);
    // summary.csv names its scenario in each row, as records.csv does.
    if (!s.summary.empty()) s.name = s.summary.front().scenario;
  } else {
    GPUOVERLAP_TRY(load_records(directory, s, *version));
  }
  if (s.name.empty())
    s.name = s.meta_json.value("scenario", nlohmann::json::object())
                 .value("name", directory.filename().string());
  read_meta(s);
  const std::filesystem::path frames = directory / "frames.csv";
  std::error_code ec;
  if (std::filesystem::exists(frames, ec)) {
    auto loaded = load_frames(frames, *version);
    if (!loaded) return loaded.error();
    s.frames = std::move(*loaded);
  }
  const std::filesystem::path background = directory / "background.csv";
  if (std::filesystem::exists(background, ec)) {
    auto loaded = load_background(background, *version);
    if (!loaded) return loaded.error();
    s.background_tasks = std::move(*loaded);
  }
  const std::filesystem::path sched = directory / "sched_waits.csv";
  if (std::filesystem::exists(sched, ec)) {
    auto loaded = load_sched_waits(sched, *version);
    if (!loaded) return loaded.error();
    s.sched_waits = std::move(*loaded);
  }
  return s;
}

namespace {}  // namespace

Result<std::vector<LoadedBackgroundTask>> load_background(const std::filesystem::path& csv,
                                                          std::uint32_t version) {
  std::vector<LoadedBackgroundTask> tasks;
  try {
    const auto table = read_csv(csv.string(), kBackgroundColumns, /*allow_missing=*/true);
    check_columns(table, kBackgroundFile, version);
    auto whole = [&](std::size_t r, std::string_view column) -> std::optional<std::int64_t> {
      if (table.at(r, column).empty()) return std::nullopt;
      return static_cast<std::int64_t>(
          table.unsigned_integer(r, column, std::numeric_limits<std::int64_t>::max()));
    };
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
      LoadedBackgroundTask t;
      const std::string& kind = table.at(r, "kind");
      if (kind != "managed" && kind != "unmanaged")
        throw std::runtime_error(CsvTable<kBackgroundColumns.size()>::where(r, "kind") + ": '" +
                                 kind + "' is none of managed, unmanaged");
      t.managed = kind == "managed";
      t.label = table.at(r, "label");
      // -1: cancelled before any thread took it.
      if (const auto worker = table.number(r, "worker"); worker && *worker >= -1 && *worker < 1e6)
        t.worker = static_cast<int>(*worker);
      t.boosted = table.at(r, "boosted") == "1";
      t.start_us = table.number(r, "start_us");
      t.finish_us = table.number(r, "finish_us");
      t.outcome = table.at(r, "outcome");
      t.thread_id = whole(r, "thread_id");
      if (const auto cpu = whole(r, "cpu_start")) t.cpu_start = static_cast<int>(*cpu);
      if (const auto cpu = whole(r, "cpu_end")) t.cpu_end = static_cast<int>(*cpu);
      t.on_cpu_ms = table.number(r, "on_cpu_ms");
      t.system_ms = table.number(r, "system_ms");
      t.run_delay_ms = table.number(r, "run_delay_ms");
      t.minor_faults = whole(r, "minor_faults");
      tasks.push_back(std::move(t));
    }
  } catch (const std::exception& e) {  // io::error::* and the checks of csv_table.h
    return make_error(csv_failure(csv.string(), e));
  }
  return tasks;
}

Result<std::vector<LoadedSchedWait>> load_sched_waits(const std::filesystem::path& csv,
                                                      std::uint32_t version) {
  std::vector<LoadedSchedWait> waits;
  try {
    const auto table = read_csv(csv.string(), kSchedWaitColumns, /*allow_missing=*/true);
    check_columns(table, kSchedWaitFile, version);
    using Table = CsvTable<kSchedWaitColumns.size()>;
    auto required = [&](std::size_t r, std::string_view column) {
      const auto value = table.number(r, column);
      if (!value) throw std::runtime_error(Table::where(r, column) + ": empty");
      return *value;
    };
    auto named = [&](std::size_t r, std::string_view column, auto table_of_names) {
      const std::string& text = table.at(r, column);
      if (!value_of(table_of_names, text))
        throw std::runtime_error(Table::where(r, column) + ": '" + text + "' is none of " +
                                 names_list(table_of_names));
      return text;
    };
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
      LoadedSchedWait w;
      w.thread = table.at(r, "thread");
      if (!table.at(r, "frame").empty())
        w.frame = static_cast<std::uint32_t>(table.unsigned_integer(r, "frame", kMaxFrames));
      w.off_us = required(r, "off_us");
      w.on_us = required(r, "on_us");
      w.runnable_us = required(r, "runnable_us");
      if (w.on_us < w.off_us || w.runnable_us < 0 || w.runnable_us > w.on_us - w.off_us + 0.01)
        throw std::runtime_error(Table::where(r, "runnable_us") +
                                 ": the stretch's times do not fit (off, on, runnable)");
      w.lost_by = named(r, "lost_by", kLostByNames);
      w.blocked = value_of(kLostByNames, w.lost_by) == LostBy::blocked;
      w.holder = table.at(r, "holder");
      w.holder_kind = named(r, "holder_kind", kThreadKindNames);
      w.given_back_by = named(r, "given_back_by", kGivenBackByNames);
      w.text = table.at(r, "text");
      waits.push_back(std::move(w));
    }
  } catch (const std::exception& e) {  // io::error::* and the checks of csv_table.h
    return make_error(csv_failure(csv.string(), e));
  }
  return waits;
}

Result<std::vector<LoadedSummaryRow>> load_summary(const std::filesystem::path& summary_csv,
                                                   std::uint32_t version) {
  std::vector<LoadedSummaryRow> rows;
  try {
    const auto table = read_csv(summary_csv.string(), kSummaryColumns, /*allow_missing=*/true);
    check_columns(table, kSummaryFile, version);
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
      LoadedSummaryRow row;
      row.scenario = table.at(r, "scenario");
      row.workload = table.at(r, "workload");
      row.queue = table.at(r, "queue");
      row.clock = table.named(r, "clock", kClockNames);
      row.frames = table.unsigned_integer(r, "frames");
      row.duration_p50_us = table.number(r, "duration_p50_us");
      row.latency_p50_us = table.number(r, "latency_p50_us");
      row.latency_p99_us = table.number(r, "latency_p99_us");
      if (!table.at(r, "poll_disturbed").empty())
        row.poll_disturbed = table.unsigned_integer(r, "poll_disturbed");
      rows.push_back(std::move(row));
    }
  } catch (const std::exception& e) {  // io::error::* and the checks of csv_table.h
    return make_error(csv_failure(summary_csv.string(), e));
  }
  return rows;
}

Result<std::vector<LoadedFrame>> load_frames(const std::filesystem::path& frames_csv,
                                             std::uint32_t version) {
  std::vector<LoadedFrame> frames;
  try {
    const auto table = read_csv(frames_csv.string(), kFrameColumns, /*allow_missing=*/true);
    check_columns(table, kFrameFile, version);
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
      LoadedFrame f;
      f.frame = static_cast<std::uint32_t>(table.unsigned_integer(r, "frame"));
      f.ok = table.at(r, "status") == "ok";
      f.stutter = table.at(r, "stutter") == "1";
      f.frame_interval_us = table.number(r, "frame_interval_us");
      f.gpu_span_us = table.number(r, "gpu_span_us");
      f.cpu_phase_us = table.number(r, "cpu_phase_us");
      f.wake_max_us = table.number(r, "wake_max_us");
      f.critical_path_us = table.number(r, "critical_path_us");
      frames.push_back(f);
    }
  } catch (const std::exception& e) {  // io::error::* and the checks of csv_table.h
    return make_error(csv_failure(frames_csv.string(), e));
  }
  return frames;
}

double FrameTimeStats::stutters_per_1000() const {
  return 1000.0 * static_cast<double>(stutters) /
         static_cast<double>(std::max<std::size_t>(frames, 1));
}

std::optional<FrameTimeStats> frame_time_stats(const std::vector<LoadedFrame>& frames) {
  std::vector<double> interval, phase, wake;
  FrameTimeStats stats;
  for (const LoadedFrame& f : frames) {
    if (!f.ok) continue;
    ++stats.frames;
    if (f.stutter) ++stats.stutters;
    if (f.frame_interval_us) interval.push_back(*f.frame_interval_us);
    if (f.cpu_phase_us) phase.push_back(*f.cpu_phase_us);
    if (f.wake_max_us) wake.push_back(*f.wake_max_us);
  }
  if (interval.empty()) return std::nullopt;
  stats.interval_p50_us = *percentile(interval, 50);
  stats.interval_p99_us = *percentile(interval, 99);
  stats.interval_p999_us = *percentile(interval, 99.9);
  std::sort(interval.begin(), interval.end());
  const std::size_t slowest = std::max<std::size_t>(1, interval.size() / 100);
  double slow_sum_us = 0;
  for (std::size_t i = interval.size() - slowest; i < interval.size(); ++i)
    slow_sum_us += interval[i];
  stats.one_percent_low_fps = 1e6 / (slow_sum_us / static_cast<double>(slowest));
  if (!phase.empty()) {
    stats.cpu_phase_p50_us = percentile(phase, 50);
    stats.cpu_phase_p99_us = percentile(phase, 99);
  }
  if (!wake.empty()) stats.wake_max_p99_us = percentile(wake, 99);
  return stats;
}

std::string describe(const FrameTimeStats& stats) {
  std::string out = fmt::format(
      "(start to start, ms): p50 {:.3f}, p99 {:.3f}, p99.9 {:.3f}; 1 % low {:.1f} "
      "fps; {:.1f} stutters per 1000 frames ({} of {}: later than 1.5 periods)",
      stats.interval_p50_us / 1000, stats.interval_p99_us / 1000, stats.interval_p999_us / 1000,
      stats.one_percent_low_fps, stats.stutters_per_1000(), stats.stutters, stats.frames);
  if (stats.cpu_phase_p50_us)
    out += fmt::format("; CPU phase p50 {:.3f} ms, p99 {:.3f} ms; worst wake-up p99 {:.1f} µs",
                       *stats.cpu_phase_p50_us / 1000, *stats.cpu_phase_p99_us / 1000,
                       stats.wake_max_p99_us.value_or(0.0));
  return out + ".";
}

bool has_records(const std::filesystem::path& directory) {
  std::error_code ec;
  return std::filesystem::exists(directory / "records.csv.gz", ec) ||
         std::filesystem::exists(directory / "records.csv", ec);
}

Result<LoadedRun> load_results(const std::filesystem::path& directory,
                               RecordsRequired records_required) {
  LoadedRun run;
  run.directory = directory;
  std::error_code ec;
  if (!std::filesystem::is_directory(directory, ec))
    return make_error(directory.string() + ": not a directory");
  // One scenario's directory: with its records, or (where the reader does without them) with
  // its summary and no run.json.
  if (has_records(directory) ||
      (records_required == RecordsRequired::no && summary_only(directory) &&
       !std::filesystem::exists(directory / "run.json", ec))) {
    auto s = load_scenario_results(directory, records_required);
    if (!s) return s.error();
    run.scenarios.push_back(std::move(*s));
    return run;
  }
  auto run_json = read_results_json(directory / "run.json");
  if (!run_json)
    return make_error(
        directory.string() +
        ": no run.json and no records.csv.gz (not a directory written by gpuoverlap run)");
  run.run = *run_json;
  const std::string where = (directory / "run.json").string();
  if (auto version = format_version_of(run.run, where); !version) return version.error();
  GPUOVERLAP_TRY(check_fields(
      run.run,
      {{"/scenarios", JsonType::array, JsonType::object}, {"/failure", JsonType::object_or_null}},
      where));
  // A run on several devices has the same scenarios once per device: each is named with its
  // device's folder in front ("gpu1/default"), as its directory is.
  GPUOVERLAP_TRY(check_fields(run.run, {{"/devices", JsonType::array, JsonType::object}}, where));
  std::vector<std::string> device_prefixes;
  for (const auto& device : run.run.value("devices", nlohmann::json::array()))
    if (device.value("directory", nlohmann::json()).is_string())
      device_prefixes.push_back(device["directory"].get<std::string>() + "/");
  const nlohmann::json scenarios = run.run.value("scenarios", nlohmann::json::array());
  for (const auto& entry : scenarios) {
    if (!entry.value("directory", nlohmann::json("")).is_string())
      return make_error(where + ": a 'scenarios' entry without a 'directory' string");
    const std::string sub = entry.value("directory", "");
    if (sub.empty()) continue;  // failed before writing anything
    auto inside = scenario_directory(directory, sub);
    if (!inside) return inside.error().with_context(where + ": ");
    auto s = load_scenario_results(*inside, records_required);
    if (!s) return s.error();
    for (const std::string& prefix : device_prefixes)
      if (sub.starts_with(prefix)) s->name = prefix + s->name;
    run.scenarios.push_back(std::move(*s));
  }
  return run;
}

Result<std::vector<DeviceFolder>> device_folders(const std::filesystem::path& directory) {
  std::vector<DeviceFolder> out;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(directory / "run.json", ec)) return out;
  auto run = read_results_json(directory / "run.json");
  if (!run) return run.error();
  const std::string where = (directory / "run.json").string();
  GPUOVERLAP_TRY(check_fields(*run, {{"/devices", JsonType::array, JsonType::object}}, where));
  for (const auto& device : run->value("devices", nlohmann::json::array())) {
    const auto described = device.value("device", nlohmann::json::object());
    if (!described.is_object())
      return make_error(where + ": a 'devices' entry whose 'device' is not an object");
    const auto folder = device.value("directory", nlohmann::json());
    if (!folder.is_string() || folder.get<std::string>().empty())
      return make_error(where + ": a 'devices' entry without a 'directory'");
    auto inside = scenario_directory(directory, folder.get<std::string>());
    if (!inside) return inside.error().with_context(where + ": ");
    out.push_back({*inside, described});
  }
  return out;
}

bool is_selftest(const std::filesystem::path& directory) {
  std::error_code ec;
  return std::filesystem::is_regular_file(directory / "selftest.json", ec) &&
         !std::filesystem::exists(directory / "run.json", ec);
}

Result<LoadedSelftest> load_selftest(const std::filesystem::path& directory) {
  LoadedSelftest out;
  out.directory = directory;
  auto summary = read_results_json(directory / "selftest.json");
  if (!summary) return summary.error();
  GPUOVERLAP_TRY(check_fields(*summary,
                              {{"/device", JsonType::object},
                               {"/host", JsonType::object},
                               {"/tool", JsonType::object},
                               {"/started_at", JsonType::string},
                               {"/command_line", JsonType::string},
                               {"/passed", JsonType::boolean}},
                              (directory / "selftest.json").string()));
  out.summary = std::move(*summary);
  const std::string csv = (directory / "selftest.csv").string();
  try {
    const auto table = read_csv(csv, kSelftestColumns);
    for (std::size_t r = 0; r < table.rows.size(); ++r)
      out.rows.push_back({table.at(r, "check"), table.at(r, "metric"), table.at(r, "clock"),
                          table.at(r, "config"), table.number(r, "value"), table.at(r, "unit"),
                          table.at(r, "target"), table.at(r, "verdict")});
  } catch (const std::exception& e) {
    return make_error(csv_failure(csv, e));
  }
  return out;
}

std::vector<MetricSeries> metric_series(const LoadedScenario& s, Clock clock) {
  auto start_of = [clock](const RecordRow& r) { return start_on(r, clock); };
  auto end_of = [clock](const RecordRow& r) { return end_on(r, clock); };
  // On the poll clock a disturbed stamp (its window past the run's tolerance) says when the
  // poller got its CPU back, not when the GPU wrote it: its frames are left out and counted.
  auto disturbed = [clock](const RecordRow& r, std::uint32_t bit) {
    return disturbed_on(r.poll_disturbed, clock, bit);
  };
  std::map<std::pair<std::uint32_t, std::string>, const RecordRow*> by_frame;
  for (const RecordRow& r : s.records)
    if (r.status == RecordStatus::ok) by_frame[{r.frame, r.workload}] = &r;

  std::vector<MetricSeries> out;
  for (const std::string& workload : s.workloads) {
    MetricSeries start{workload, "start", "", "", {}, 0}, end{workload, "end", "", "", {}, 0},
        duration{workload, "duration", "", "", {}, 0};
    std::map<std::string, MetricSeries> gaps;  // by producer
    for (const auto& [key, r] : by_frame) {
      if (key.second != workload) continue;
      const auto a = start_of(*r), b = end_of(*r);
      if (!a || !b) continue;
      const bool start_disturbed = disturbed(*r, kPollStartDisturbed);
      const bool end_disturbed = disturbed(*r, kPollEndDisturbed);
      if (start_disturbed)
        ++start.disturbed_frames;
      else
        start.values_us.push_back(*a);
      if (end_disturbed)
        ++end.disturbed_frames;
      else
        end.values_us.push_back(*b);
      if (start_disturbed || end_disturbed)
        ++duration.disturbed_frames;
      else
        duration.values_us.push_back(*b - *a);
      const auto producers = split(r->depends_on);
      const auto barriers = split(r->barrier);
      for (std::size_t i = 0; i < producers.size(); ++i) {
        const auto p = by_frame.find({key.first, producers[i]});
        if (p == by_frame.end() || !end_of(*p->second)) continue;
        auto& gap =
            gaps.try_emplace(producers[i], MetricSeries{workload,
                                                        "gap",
                                                        producers[i],
                                                        i < barriers.size() ? barriers[i] : "",
                                                        {},
                                                        0})
                .first->second;
        if (start_disturbed || disturbed(*p->second, kPollEndDisturbed))
          ++gap.disturbed_frames;
        else
          gap.values_us.push_back(*a - *end_of(*p->second));
      }
    }
    // A series whose every frame was disturbed has nothing to judge: left out, as one whose
    // clock is missing.
    for (MetricSeries* m : {&start, &end, &duration})
      if (!m->values_us.empty()) out.push_back(std::move(*m));
    for (auto& [producer, gap] : gaps)
      if (!gap.values_us.empty()) out.push_back(std::move(gap));
  }
  return out;
}

std::string missing_verdict_reason(const LoadedRun& run, const std::string& study) {
  std::size_t scenarios = 0;
  std::map<std::string, std::size_t> by_status;
  const auto listed = run.run.find("scenarios");
  if (listed != run.run.end() && listed->is_array())
    for (const nlohmann::json& s : *listed) {
      if (!s.is_object() || !s.contains("name") || !s["name"].is_string()) continue;
      if (!s["name"].get<std::string>().starts_with(study + "/")) continue;
      ++scenarios;
      ++by_status[s.value("status", std::string("?"))];
    }
  const std::size_t unsupported = by_status["unsupported"], failed = by_status["failed"];
  if (unsupported + failed == 0)
    return fmt::format("`{}/verdict.json` is missing or unreadable", study);
  std::string why =
      fmt::format("not judged: of its {} scenario{}, ", scenarios, scenarios == 1 ? "" : "s");
  if (unsupported > 0) why += fmt::format("{} unsupported by this runtime", unsupported);
  if (unsupported > 0 && failed > 0) why += ", ";
  if (failed > 0) why += fmt::format("{} failed", failed);
  return why;
}

}  // namespace gpuoverlap

#include "history/history_rows.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "timeline/statistics.h"

namespace gpuoverlap::history {

namespace {

std::string text_at(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return "?";
  const auto it = object.find(key);
  return it != object.end() && it->is_string() && !it->get<std::string>().empty()
             ? it->get<std::string>()
             : "?";
}

std::optional<std::int64_t> integer_at(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return std::nullopt;
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<std::int64_t>();
}

// FNV-1a, 64 bits: stable across builds and platforms, which std::hash is not. A content key,
// not a defence against someone forging one.
struct Fnv1a {
  std::uint64_t state = 14695981039346656037ull;
  void add(std::string_view bytes) {
    for (unsigned char c : bytes) state = (state ^ c) * 1099511628211ull;
  }
};

// The file's bytes added to `hash`, with its name and length first so that moving bytes from
// one file to the next changes the key; a missing file adds its name alone.
Status add_file(Fnv1a& hash, const std::filesystem::path& root, const std::filesystem::path& file) {
  const std::string name = std::filesystem::relative(file, root).generic_string();
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    hash.add(name + "\n-\n");
    return ok_status();
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) return make_error("could not read " + file.string(), ErrorCategory::environment);
  hash.add(fmt::format("{}\n{}\n", name, bytes.str().size()));
  hash.add(bytes.str());
  return ok_status();
}

void add_percentiles(std::vector<MetricRow>& out, const std::string& scenario,
                     const std::string& series, const std::string& name, const std::string& clock,
                     const std::vector<double>& values) {
  if (values.empty()) return;
  const PercentileInterval interval = percentile_interval(values, 50);
  const auto frames = static_cast<std::int64_t>(values.size());
  out.push_back({scenario, series, name + "_p50_us", clock, *percentile(values, 50), interval.low,
                 interval.high, frames});
  out.push_back({scenario, series, name + "_p99_us", clock, *percentile(values, 99), std::nullopt,
                 std::nullopt, frames});
}

}  // namespace

std::string MachineFingerprint::key() const {
  auto number = [](const std::optional<std::int64_t>& v) {
    return v ? std::to_string(*v) : std::string("?");
  };
  return fmt::format("{}|{}|{}|{}|{}|{}|{}", gpu, number(vendor_id), number(device_id), driver, api,
                     os, cpu);
}

MachineFingerprint machine_of(const nlohmann::json& meta) {
  MachineFingerprint m;
  const nlohmann::json device = meta.is_object() ? meta.value("device", nlohmann::json()) : nullptr;
  const nlohmann::json host = meta.is_object() ? meta.value("host", nlohmann::json()) : nullptr;
  m.gpu = text_at(device, "name");
  m.vendor_id = integer_at(device, "vendor_id");
  m.device_id = integer_at(device, "device_id");
  const std::string driver_name = text_at(device, "driver_name");
  const std::string driver_info = text_at(device, "driver_info");
  m.driver = driver_name == "?" && driver_info == "?" ? "?" : driver_name + " " + driver_info;
  m.api = api_of(meta);
  m.os = text_at(host, "kernel");
  m.cpu = text_at(host, "cpu_model");
  m.cpu_cores = integer_at(host, "logical_cpus");
  return m;
}

Result<std::string> content_key(const LoadedRun& run) {
  Fnv1a hash;
  GPUOVERLAP_TRY(add_file(hash, run.directory, run.directory / "run.json"));
  for (const LoadedScenario& s : run.scenarios)
    for (const char* file : {"meta.json", "summary.csv"})
      GPUOVERLAP_TRY(add_file(hash, run.directory, s.directory / file));
  return fmt::format("{:016x}", hash.state);
}

std::vector<MetricRow> metric_rows(const LoadedRun& run) {
  std::vector<MetricRow> out;
  for (const LoadedScenario& s : run.scenarios) {
    // A preemption scenario's urgent job starts from its submission: its start is the
    // latency (preemption/preemption_analysis.h).
    const bool preemption = s.meta.is_object() && s.meta.contains("preemption");
    for (const Clock clock : {Clock::poll, Clock::ts, Clock::clk})
      for (const MetricSeries& series : metric_series(s, clock)) {
        const std::string clock_name(to_string(clock));
        if (series.metric == "duration")
          add_percentiles(out, s.name, series.workload, "duration", clock_name, series.values_us);
        if (preemption && series.metric == "start" && series.workload == "urgent")
          add_percentiles(out, s.name, series.workload, "latency", clock_name, series.values_us);
      }
    std::vector<double> intervals;
    for (const LoadedFrame& f : s.frames)
      if (f.ok && f.frame_interval_us) intervals.push_back(*f.frame_interval_us);
    add_percentiles(out, s.name, "frame", "frame_interval", "cpu", intervals);
  }
  return out;
}

Result<RunRow> run_row(const LoadedRun& run) {
  if (run.scenarios.empty())
    return make_error(run.directory.string() + ": no scenario results to keep");
  RunRow row;
  auto key = content_key(run);
  if (!key) return key.error();
  row.content_key = *key;
  row.machine = machine_of(run.scenarios.front().meta);
  for (const LoadedScenario& s : run.scenarios)
    if (machine_of(s.meta).key() != row.machine.key())
      return make_error(fmt::format(
          "{}: its scenarios ran on different machines ('{}' and '{}'); keep each device's "
          "results as a run of its own",
          run.directory.string(), row.machine.key(), machine_of(s.meta).key()));
  const nlohmann::json& first = run.scenarios.front().meta;
  row.started_at = text_at(run.run, "started_at");
  if (row.started_at == "?") row.started_at = text_at(first, "started_at");
  const nlohmann::json tool = run.run.is_object() && run.run.contains("tool")
                                  ? run.run["tool"]
                                  : first.value("tool", nlohmann::json());
  row.tool_revision = text_at(tool, "git_revision");
  row.command_line = text_at(run.run, "command_line");
  if (row.command_line == "?") row.command_line = text_at(first, "command_line");
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(run.directory, ec);
  row.directory = (ec ? run.directory : absolute).lexically_normal().string();
  row.scenarios = static_cast<std::int64_t>(run.scenarios.size());
  row.metrics = metric_rows(run);
  return row;
}

}  // namespace gpuoverlap::history

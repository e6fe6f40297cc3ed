#include "analysis/report.h"

#include <fmt/format.h>

#include <algorithm>

#include "analysis/csv_table.h"
#include "analysis/variant_swap.h"
#include "core/input_file.h"
#include "timeline/export.h"
#include "timeline/statistics.h"

namespace gpuoverlap {

namespace {

std::string spread(const std::vector<double>& values) {
  return fmt::format("{:.1f} ({:.1f}–{:.1f})", *percentile(values, 50), *percentile(values, 5),
                     *percentile(values, 95));
}

// A JSON field as Markdown table-cell text ('|' escaped, so "GRAPHICS|COMPUTE" stays one cell).
std::string text(const nlohmann::json& j, const char* key) {
  const std::string raw = j.contains(key) && !j[key].is_null()
                              ? (j[key].is_string() ? j[key].get<std::string>() : j[key].dump())
                              : std::string("?");
  std::string escaped;
  for (char c : raw) {
    if (c == '|') escaped += '\\';
    escaped += c;
  }
  return escaped;
}

// A preemption scenario: what ran, and the urgent job's latency per clock from summary.csv.
void preemption_section(std::string& out, const LoadedScenario& s) {
  const nlohmann::json& p = s.meta["preemption"];
  const nlohmann::json spec = p.value("spec", nlohmann::json::object());
  std::string sizes;
  for (const auto& size : p.value("load_sizes", nlohmann::json::array()))
    sizes += (sizes.empty() ? "" : "; ") + text(size, "description");
  out += fmt::format(
      "\nPreemption: a {} load ({}{}) on DIRECT; an urgent job every {} ms for {} ms at {} "
      "priority (granted {}), {} process; {} ticks skipped.\n\n",
      text(spec, "load"), sizes,
      !p.value("calibrated", false) ? ""
      : p.contains("sizes_from")
          ? ", calibrated to " + text(spec, "target_ms") + " ms by " + text(p, "sizes_from")
          : ", calibrated to " + text(spec, "target_ms") + " ms",
      text(spec, "period_ms"), text(spec, "duration_ms"), text(spec, "priority"),
      text(p, "priority_granted"), text(p, "process"), text(p, "skipped_ticks"));
  if (p.contains("calibration_note")) out += "Calibration: " + text(p, "calibration_note") + "\n\n";
  const std::filesystem::path summary_path = s.directory / "summary.csv";
  std::string rows;
  try {
    const auto summary = read_csv(summary_path.string(), kSummaryColumns);
    // Through number(): a damaged file's "nan" or text is refused, not copied into the page.
    auto cell = [&](std::size_t r, std::string_view column) {
      const auto value = summary.number(r, column);
      return value ? fmt::format("{:g}", *value) : std::string("–");
    };
    for (std::size_t r = 0; r < summary.rows.size(); ++r)
      if (summary.at(r, "workload") == "urgent")
        rows += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", summary.at(r, "clock"),
                            cell(r, "latency_p50_us"), cell(r, "latency_p95_us"),
                            cell(r, "latency_p99_us"), cell(r, "latency_max_us"),
                            cell(r, "deadline_misses"), cell(r, "load_slowdown"),
                            summary.at(r, "preemption"));
  } catch (const std::exception& e) {
    out +=
        fmt::format("The latency table is missing: {}: {}.\n\n", summary_path.string(), e.what());
    return;
  }
  out +=
      "| clock | latency p50 µs | p95 | p99 | max | deadline misses | load slowdown | class "
      "|\n|---|---|---|---|---|---|---|---|\n" +
      rows;
  out +=
      "\nPer submission: `preemption.csv`. Below, a record is a submission: times are from "
      "its submit.\n\n";
}

// What a player feels and the game frame's CPU side (results.h, FrameTimeStats). Results
// older than these columns, or without frames.csv, have no such line.
void frame_time_section(std::string& out, const LoadedScenario& s) {
  if (const auto stats = frame_time_stats(s.frames))
    out += "**Frame time** " + describe(*stats) + "\n\n";
}

void scenario_section(std::string& out, const LoadedRun& run, const LoadedScenario& s) {
  const nlohmann::json& meta = s.meta;
  const nlohmann::json scenario = meta.value("scenario", nlohmann::json::object());
  out += fmt::format("## {}\n\n{}\n\n", s.name, text(scenario, "description"));
  if (meta.contains("failure") && !meta["failure"].is_null())
    out += fmt::format("**Stopped early:** {}\n\n", text(meta["failure"], "message"));
  const auto relative = std::filesystem::relative(s.directory, run.directory).generic_string();
  const std::string prefix = relative == "." ? "" : relative + "/";
  out +=
      "| queue | type | family | device queue | priority requested → granted "
      "|\n|---|---|---|---|---|\n";
  for (const auto& q : meta.value("queues", nlohmann::json::array()))
    out += fmt::format("| {} | {} | {} ({}) | {}{} | {} → {} |\n", text(q, "name"), text(q, "type"),
                       text(q, "family"), text(q, "family_flags"), text(q, "queue_index"),
                       q.contains("shares_queue_of") && !q["shares_queue_of"].is_null()
                           ? ", shared with " + text(q, "shares_queue_of")
                           : "",
                       text(q, "priority_requested"), text(q, "priority_granted"));
  for (const auto& note : meta.value("priority_notes", nlohmann::json::array()))
    out += "\nNote: " + note.get<std::string>() + "\n";
  const auto settings = meta.value("settings", nlohmann::json::object());
  if (meta.contains("preemption"))
    preemption_section(out, s);
  else
    out += fmt::format("\n{} frames after {} warm-up; timestamp queries {}.\n\n",
                       text(settings, "frames"), text(settings, "warmup_frames"),
                       settings.value("timestamp_queries", true) ? "on" : "off (--no-timestamps)");
  // plot.py mirrors the results' layout under plots/ (a lone scenario directory: its name).
  std::error_code ec;
  std::filesystem::path own = std::filesystem::absolute(s.directory, ec).lexically_normal();
  if (own.filename().empty()) own = own.parent_path();  // "dir/" names dir
  if (ec || own.filename().empty()) own = s.name;
  const std::string plots_prefix =
      "plots/" + (prefix.empty() ? own.filename().string() + "/" : prefix);
  for (const char* plot : {"timeline", "preemption", "clocks"})
    if (std::filesystem::exists(run.directory / (plots_prefix + plot + ".png")))
      out += fmt::format("![{} {}]({}{}.png)\n\n", s.name, plot, plots_prefix, plot);

  std::size_t flagged = 0;
  for (const LoadedRecord& r : s.records) flagged += r.flags.empty() ? 0 : 1;
  const auto agreement = meta.value("clock_agreement", nlohmann::json::object());
  if (flagged > 0)
    out += fmt::format(
        "**{} of {} rows have clocks that disagree** beyond the tolerance ({}); see the `flags` "
        "column of records.csv.\n\n",
        flagged, s.records.size(), text(agreement, "tolerance"));
  const auto shader_clock = meta.value("clocks", nlohmann::json::object())
                                .value("shader_clock", nlohmann::json::object())
                                .value("verification", nlohmann::json::object());
  if (shader_clock.contains("verdict"))
    out += fmt::format(
        "Shader clock: {}{}.\n\n", text(shader_clock, "verdict"),
        shader_clock.contains("reason") ? " (" + text(shader_clock, "reason") + ")" : "");

  if (!meta.contains("preemption")) frame_time_section(out, s);
  for (Clock clock : {Clock::poll, Clock::ts, Clock::clk}) {
    const auto series = metric_series(s, clock);
    if (series.empty()) continue;
    out += fmt::format("**{} clock**, µs from the frame's gate release, p50 (p5–p95):\n\n",
                       clock == Clock::poll ? "Poll"
                       : clock == Clock::ts ? "Timestamp"
                                            : "Shader");
    out += "| workload | frames | start | end | duration |\n|---|---|---|---|---|\n";
    std::string gaps;
    for (std::size_t i = 0; i < series.size(); ++i) {
      if (series[i].metric == "start" && i + 2 < series.size())
        out += fmt::format("| {} | {} | {} | {} | {} |\n", series[i].workload,
                           series[i].values_us.size(), spread(series[i].values_us),
                           spread(series[i + 1].values_us), spread(series[i + 2].values_us));
      if (series[i].metric == "gap")
        gaps += fmt::format("| {} → {} | {} | {} |\n", series[i].producer, series[i].workload,
                            series[i].barrier, spread(series[i].values_us));
    }
    if (!gaps.empty())
      out +=
          "\nDependency gaps (consumer start − producer end):\n\n| dependency | barrier | gap "
          "|\n|---|---|---|\n" +
          gaps;
    out += "\n";
  }
  if (const std::vector<VariantSwap> swaps = variant_swaps(s); !swaps.empty()) {
    out +=
        "**Committed variants** (`bind_committed`): GPU duration before and after the swap, "
        "median µs, and the ratio after / before with its 95 % interval (blocks of frames):\n\n"
        "| workload | clock | before | after | ratio | interval | variant | frames before + "
        "after | call |\n|---|---|---|---|---|---|---|---|---|\n";
    for (const VariantSwap& w : swaps)
      out +=
          fmt::format("| {} | {} | {:.1f} | {:.1f} | {:.3f} | {} | compile #{} | {} + {} | {} |\n",
                      w.workload, w.clock, w.before_median_us, w.after_median_us, w.ratio,
                      w.ratio_low ? fmt::format("{:.3f} – {:.3f}", *w.ratio_low, *w.ratio_high)
                                  : std::string("–"),
                      w.variant, w.before_frames, w.after_frames, w.call);
    out += "\n";
  }
  if (std::filesystem::exists(s.directory / "trace.json"))
    out += fmt::format(
        "Trace: [{}trace.json]({}trace.json) (open in https://ui.perfetto.dev or "
        "chrome://tracing). ",
        prefix, prefix);
  out += fmt::format(
      "Data: [{0}records.csv]({0}records.csv), [{0}summary.csv]({0}summary.csv), "
      "[{0}meta.json]({0}meta.json).\n\n",
      prefix);
}

// The first component of a scenario's directory relative to the results: the preset, study or
// matrix it belongs to.
std::string group_of(const LoadedRun& run, const LoadedScenario& s) {
  const auto relative = s.directory.lexically_relative(run.directory);
  return relative.empty() || relative == "." ? s.name : relative.begin()->string();
}

// Where the run's time went, per preset, study or matrix (run.json `seconds`).
void time_section(std::string& out, const LoadedRun& run) {
  const auto entries = run.run.value("scenarios", nlohmann::json::array());
  std::vector<std::pair<std::string, std::pair<double, int>>> groups;  // in run order
  double total = 0;
  for (const auto& e : entries) {
    if (!e.is_object() || !e.contains("seconds") || !e["seconds"].is_number()) continue;
    const nlohmann::json& entry_directory = e.contains("directory") ? e["directory"] : e;
    const std::string directory =
        entry_directory.is_string() ? entry_directory.get<std::string>() : std::string();
    const std::string group = directory.substr(0, directory.find('/'));
    const double seconds = e["seconds"].get<double>();
    total += seconds;
    auto found =
        std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == group; });
    if (found == groups.end()) found = groups.insert(groups.end(), {group, {0.0, 0}});
    found->second.first += seconds;
    found->second.second += 1;
  }
  if (groups.empty()) return;
  out +=
      fmt::format("**Time:** {:.0f} s measuring (device setup included) in {} scenarios: ", total,
                  entries.size());
  std::sort(groups.begin(), groups.end(),
            [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  for (std::size_t i = 0; i < groups.size(); ++i)
    out += fmt::format(
        "{}{} {:.1f} s{}", i ? ", " : "", groups[i].first.empty() ? "?" : groups[i].first,
        groups[i].second.first,
        groups[i].second.second > 1 ? fmt::format(" ({} scenarios)", groups[i].second.second) : "");
  out += ".\n\n";
}

// A study's verdict (OUT/<study>/verdict.json, written by `run`), before its conditions.
void study_sections(std::string& out, const LoadedRun& run) {
  std::vector<std::string> studies;
  for (const LoadedScenario& s : run.scenarios) {
    const auto scenario = s.meta.value("scenario", nlohmann::json::object());
    if (!scenario.contains("study")) continue;
    const std::string group = group_of(run, s);
    if (std::find(studies.begin(), studies.end(), group) == studies.end()) studies.push_back(group);
  }
  for (const std::string& study : studies) {
    out += fmt::format("## Study {}\n\n", study);
    const std::filesystem::path path = run.directory / study / "verdict.json";
    nlohmann::json verdict;
    if (auto text = read_input_file(path, kMaxJsonFileBytes))
      verdict = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (!verdict.is_object() || !verdict.contains("summary") || !verdict["summary"].is_string()) {
      out += fmt::format("No verdict: `{}/verdict.json` is missing or unreadable.\n\n", study);
      continue;
    }
    out += "```\n" + verdict["summary"].get<std::string>() + "```\n\n";
    if (std::filesystem::exists(run.directory / "plots" / study / "verdict.png"))
      out += fmt::format("![{0} verdict](plots/{0}/verdict.png)\n\n", study);
    out += fmt::format(
        "Per metric and condition, with intervals: [{0}/verdict.csv]({0}/verdict.csv); the "
        "rule: `{0}/verdict.json`. Each condition and round follows below.\n\n",
        study);
  }
}

}  // namespace

std::string markdown_report(const LoadedRun& run) {
  std::string out = fmt::format("# gpuoverlap report: {}\n\n", run.directory.filename().string());
  if (!run.scenarios.empty()) {
    const nlohmann::json& meta = run.scenarios.front().meta;
    const auto device = meta.value("device", nlohmann::json::object());
    const auto tool = meta.value("tool", nlohmann::json::object());
    const auto host = meta.value("host", nlohmann::json::object());
    out += "| | |\n|---|---|\n";
    out += fmt::format("| device | {} ({}, vendor {} device {}) |\n", text(device, "name"),
                       text(device, "type"), text(device, "vendor_id"), text(device, "device_id"));
    out += fmt::format("| driver | {} {} |\n| {} | {} |\n", text(device, "driver_name"),
                       text(device, "driver_info"), api_of(meta), text(device, "api_version"));
    if (device.is_object() && device.contains("runtime"))
      out += fmt::format("| runtime | {} |\n", text(device, "runtime"));
    out += fmt::format("| host | {} ({}) |\n", text(host, "hostname"), text(host, "kernel"));
    if (host.is_object() && host.contains("cpu_model"))
      out += fmt::format("| CPU | {}: {} logical CPUs, {} usable by this process |\n",
                         text(host, "cpu_model"), text(host, "logical_cpus"),
                         text(host, "usable_cpus"));
    out += fmt::format("| gpuoverlap | {} |\n| command | `{}` |\n| started | {} |\n\n",
                       text(tool, "git_revision"), text(meta, "command_line"),
                       text(meta, "started_at"));
  }
  if (run.run.contains("failure") && !run.run["failure"].is_null())
    out += fmt::format("**The run failed:** {}\n\n", text(run.run["failure"], "message"));
  if (!run.scenarios.empty()) {
    const auto sizes = run.scenarios.front().meta.value("sizes", nlohmann::json::object());
    if (sizes.value("profile", "") == "cpu-device")
      out += fmt::format(
          "**Smaller sizes:** {} (at most {} frames per scenario, {} per study condition, "
          "preemption {} ms on a {} ms load; `--full-size` runs the files' sizes).\n\n",
          text(sizes, "why"), text(sizes, "frames"), text(sizes, "study_frames_per_condition"),
          text(sizes, "preemption_duration_ms"), text(sizes, "preemption_target_ms"));
  }
  time_section(out, run);
  study_sections(out, run);
  for (const LoadedScenario& s : run.scenarios) scenario_section(out, run, s);
  return out;
}

}  // namespace gpuoverlap

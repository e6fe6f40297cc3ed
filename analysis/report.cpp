#include "analysis/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "analysis/answers.h"
#include "analysis/csv_table.h"
#include "analysis/variant_swap.h"
#include "analysis/verdict.h"
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
// A member of meta.json in a table cell: "?" where absent, a '|' escaped.
std::string shown(const MetaText& value) {
  const std::string raw = value.value_or("?");
  std::string escaped;
  for (char c : raw) {
    if (c == '|') escaped += '\\';
    escaped += c;
  }
  return escaped;
}

std::string text(const nlohmann::json& j, const char* key) {
  return shown(j.contains(key) && !j[key].is_null()
                   ? MetaText(j[key].is_string() ? j[key].get<std::string>() : j[key].dump())
                   : std::nullopt);
}

// A preemption scenario: what ran, and the urgent job's latency per clock from summary.csv.
void preemption_section(std::string& out, const LoadedScenario& s) {
  const MetaPreemption p = s.meta.preemption.value_or(MetaPreemption{});
  std::string sizes;
  for (const MetaText& size : p.load_sizes) sizes += (sizes.empty() ? "" : "; ") + shown(size);
  out += fmt::format(
      "\nPreemption: a {} load ({}{}) on DIRECT; an urgent job every {} ms for {} ms at {} "
      "priority (granted {}), {} process; {} ticks skipped.\n\n",
      shown(p.load), sizes,
      !p.calibrated  ? ""
      : p.sizes_from ? ", calibrated to " + shown(p.target_ms) + " ms by " + shown(p.sizes_from)
                     : ", calibrated to " + shown(p.target_ms) + " ms",
      shown(p.period_ms), shown(p.duration_ms), shown(p.priority), shown(p.priority_granted),
      shown(p.process), shown(p.skipped_ticks));
  if (p.calibration_note) out += "Calibration: " + shown(p.calibration_note) + "\n\n";
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
  const ScenarioMeta& meta = s.meta;
  out += fmt::format("## {}\n\n{}\n\n", s.name, shown(meta.description));
  if (meta.failed) out += fmt::format("**Stopped early:** {}\n\n", shown(meta.failure));
  const auto relative = std::filesystem::relative(s.directory, run.directory).generic_string();
  const std::string prefix = relative == "." ? "" : relative + "/";
  out +=
      "| queue | type | family | device queue | priority requested → granted "
      "|\n|---|---|---|---|---|\n";
  for (const MetaQueue& q : meta.queues)
    out += fmt::format("| {} | {} | {} ({}) | {}{} | {} → {} |\n", shown(q.name), shown(q.type),
                       shown(q.family), shown(q.family_flags), shown(q.queue_index),
                       q.shares_queue_of ? ", shared with " + shown(q.shares_queue_of) : "",
                       shown(q.priority_requested), shown(q.priority_granted));
  for (const std::string& note : meta.priority_notes) out += "\nNote: " + note + "\n";
  if (s.kind == ScenarioKind::preemption)
    preemption_section(out, s);
  else
    out += fmt::format("\n{} frames after {} warm-up; timestamp queries {}.\n\n",
                       shown(meta.frames), shown(meta.warmup_frames),
                       meta.timestamp_queries ? "on" : "off (--no-timestamps)");
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
  for (const RecordRow& r : s.records) flagged += r.flags.empty() ? 0 : 1;
  if (flagged > 0)
    out += fmt::format(
        "**{} of {} rows have clocks that disagree** beyond the tolerance ({}); see the `flags` "
        "column of the records.\n\n",
        flagged, s.records.size(), shown(meta.clock_tolerance));
  if (meta.shader_clock_verdict)
    out +=
        fmt::format("Shader clock: {}{}.\n\n", shown(meta.shader_clock_verdict),
                    meta.shader_clock_reason ? " (" + shown(meta.shader_clock_reason) + ")" : "");

  if (s.kind != ScenarioKind::preemption) frame_time_section(out, s);
  for (Clock clock : kClocks) {
    const auto series = metric_series(s, clock);
    if (series.empty()) continue;
    out += fmt::format("**{} clock**, µs from the frame's gate release, p50 (p5–p95):\n\n",
                       clock == Clock::poll ? "Poll"
                       : clock == Clock::ts ? "Timestamp"
                                            : "Shader");
    out += "| workload | frames | start | end | duration |\n|---|---|---|---|---|\n";
    std::string gaps;
    auto cell = [&](const std::string& workload, const char* metric) {
      for (const MetricSeries& m : series)
        if (m.workload == workload && m.metric == metric) return spread(m.values_us);
      return std::string("–");  // every frame's stamp disturbed on this clock
    };
    std::size_t disturbed = 0;
    for (std::size_t i = 0; i < series.size(); ++i) {
      if (series[i].metric == "duration") disturbed += series[i].disturbed_frames;
      if (series[i].metric == "start")
        out += fmt::format("| {} | {} | {} | {} | {} |\n", series[i].workload,
                           series[i].values_us.size(), spread(series[i].values_us),
                           cell(series[i].workload, "end"), cell(series[i].workload, "duration"));
      if (series[i].metric == "gap")
        gaps += fmt::format("| {} → {} | {} | {} |\n", series[i].producer, series[i].workload,
                            series[i].barrier, spread(series[i].values_us));
    }
    if (!gaps.empty())
      out +=
          "\nDependency gaps (consumer start − producer end):\n\n| dependency | barrier | gap "
          "|\n|---|---|---|\n" +
          gaps;
    if (disturbed > 0)
      out += fmt::format(
          "\nLeft out: {} row{} whose poll stamps were disturbed (a detection window past the "
          "run's tolerance: the poller lost its CPU; `poll_disturbed` in the records).\n",
          disturbed, disturbed == 1 ? "" : "s");
    out += "\n";
  }
  if (const std::vector<VariantSwap> swaps = variant_swaps(s); !swaps.empty()) {
    out +=
        "**Committed variants** (`bind_committed`): GPU duration before and after the swap, "
        "median µs, and the ratio after / before with its 95 % interval (blocks of frames):\n\n"
        "| workload | clock | before | after | ratio | interval | variant | frames before + "
        "after | call |\n|---|---|---|---|---|---|---|---|---|\n";
    for (const VariantSwap& w : swaps)
      out += fmt::format(
          "| {} | {} | {:.1f} | {:.1f} | {:.3f} | {} | compile #{} | {} + {} | {} |\n", w.workload,
          to_string(w.clock), w.before_median_us, w.after_median_us, w.ratio,
          w.ratio_low ? fmt::format("{:.3f} – {:.3f}", *w.ratio_low, *w.ratio_high)
                      : std::string("–"),
          w.variant, w.before_frames, w.after_frames, to_string(w.call));
    out += "\n";
  }
  // trace.json.gz since the trace was compressed; trace.json in older results.
  for (const char* trace : {"trace.json.gz", "trace.json"})
    if (std::filesystem::exists(s.directory / trace)) {
      out += fmt::format(
          "Trace: [{0}{1}]({0}{1}) (open in https://ui.perfetto.dev or chrome://tracing). ", prefix,
          trace);
      break;
    }
  const char* const records =
      std::filesystem::exists(s.directory / "records.csv.gz") ? "records.csv.gz" : "records.csv";
  out += fmt::format(
      "Data: [{0}{1}]({0}{1}), [{0}summary.csv]({0}summary.csv), "
      "[{0}meta.json]({0}meta.json).\n\n",
      prefix, records);
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

// One verdict.csv cell of the study table: the decision and its effect ("**intrusive** ×1.080,
// tail +9.3 pts").
std::string endpoint_cell(const VerdictRow& row) {
  const std::string cell =
      row.decision == Decision::intrusive ? "**intrusive**" : std::string(to_string(row.decision));
  return cell + endpoint_effect(row, /*intervals=*/false);
}

// Per study: conditions × primary endpoints (decision and effect), progress, the control's
// dose-response, how the study stopped, and the diagnostics that moved.
void study_tables(std::string& out, const LoadedRun& run, const std::vector<StudyFile>& studies,
                  const std::string& details_name) {
  for (const StudyFile& file : studies) {
    const std::string& study = file.name;
    if (file.neighbours)
      out += fmt::format(
          "## Neighbours: study `{}`\n\nThis device with the run's other devices running the "
          "same scenario (`together`) against it alone (`alone`, the baseline), rounds "
          "interleaved: a verdict of **intrusive** means the other devices' work disturbs this "
          "one's. The compiles/s column does not apply here.\n\n",
          study);
    else
      out += fmt::format("## Background processing: study `{}`\n\n", study);
    if (!file.rows_error.empty())
      out += fmt::format("No verdict table: `{}/verdict.csv`: {}.\n\n", study, file.rows_error);
    if (!file.verdict) {
      out += fmt::format("No verdict: {}.\n\n", no_verdict_reason(run, file));
      continue;
    }
    const StudyVerdict& verdict = file.verdict->verdict;
    const std::vector<VerdictRow>& rows = file.rows;
    // Primary endpoints in verdict.csv's order.
    std::vector<std::string> endpoints;
    for (const VerdictRow& r : rows)
      if (r.role == EndpointRole::primary &&
          std::find(endpoints.begin(), endpoints.end(), r.metric) == endpoints.end())
        endpoints.push_back(r.metric);
    out += "| condition | verdict | compiles/s |";
    for (const std::string& e : endpoints) out += " " + e + " |";
    out += "\n|---|---|---|";
    for (std::size_t i = 0; i < endpoints.size(); ++i) out += "---|";
    out += "\n";
    std::string moved;
    for (std::size_t i = 0; i < verdict.conditions.size(); ++i) {
      const ConditionVerdict& c = verdict.conditions[i];
      const std::string rate = c.spinners ? std::string("none (spinners)")
                               : file.verdict->has_compile_rate[i]
                                   ? fmt::format("{:.1f}", c.progress.compiles_per_s)
                                   : std::string("?");
      const std::string word =
          c.starved ? "non-intrusive but starved" : std::string(to_string(c.decision));
      out += fmt::format("| {}{} | {} | {} |", c.condition,
                         c.control            ? " (control)"
                         : c.null_control     ? " (null control: the baseline again)"
                         : c.negative_control ? " (negative control: idle threads on every CPU)"
                                              : "",
                         word, rate);
      for (const std::string& e : endpoints) {
        std::string cell = "–";
        for (const VerdictRow& r : rows)
          if (r.condition == c.condition && r.metric == e) {
            cell = endpoint_cell(r);
            break;
          }
        out += " " + cell + " |";
      }
      out += "\n";
      // Diagnostics that moved: reported, never deciding.
      for (const VerdictRow& r : rows) {
        if (r.condition != c.condition || r.role != EndpointRole::diagnostic ||
            r.decision != Decision::diagnostic_worse)
          continue;
        moved += fmt::format("{}{} {}", moved.empty() ? "" : "; ", c.condition, r.metric);
        if (r.effect_us)
          moved += fmt::format(
              " {:+.1f} µs{}", *r.effect_us,
              r.effect_share ? fmt::format(" ({:+.2f} % of the period)", 100.0 * *r.effect_share)
                             : "");
      }
    }
    out += "\n";
    // Each dose by its threads; by its condition too where two have as many (on a machine of
    // two cores, `unmanaged`, one thread per core, doses what `unmanaged-2` does).
    std::string dose;
    for (const ControlDose& d : verdict.doses) {
      const bool shared =
          std::count_if(verdict.doses.begin(), verdict.doses.end(),
                        [&](const ControlDose& o) { return o.threads == d.threads; }) > 1;
      dose += fmt::format("{}{} thread{}{}: {}", dose.empty() ? "" : "; ", d.threads,
                          d.threads == 1 ? "" : "s", shared ? " (" + d.condition + ")" : "",
                          to_string(d.decision));
    }
    if (!verdict.has_control)
      out += "No positive control in this study: a non-intrusive verdict is unchecked. ";
    else if (!verdict.control_detected)
      out += "The positive control was **not detected**: the study had no power. ";
    else if (verdict.detected_from_threads)
      out += fmt::format("The positive control was detected from {} normal-priority thread{}. ",
                         *verdict.detected_from_threads,
                         *verdict.detected_from_threads == 1 ? "" : "s");
    if (!dose.empty()) out += "Control doses: " + dose + ". ";
    if (file.verdict->rounds)
      out += fmt::format("Rounds: {}, {}. ", file.verdict->rounds->run, file.verdict->rounds->stop);
    out += "\n\n";
    out +=
        "Cells: the decision on that primary endpoint, the median's ratio to the baseline "
        "(×) and the tail's excess over it in percentage points of frames. Only primary "
        "endpoints decide (docs/background.md, \"The verdict\").";
    if (!moved.empty()) out += " Diagnostics that moved: " + moved + ".";
    out += "\n\n";
    if (std::filesystem::exists(run.directory / "plots" / study / "forest.png"))
      out += fmt::format(
          "![{0}: each condition's effect against the margins](plots/{0}/forest.png)"
          "\n\n",
          study);
    if (std::filesystem::exists(run.directory / "plots" / study / "verdict.png"))
      out += fmt::format(
          "Each metric's distribution per condition: "
          "[plots/{0}/verdict.png](plots/{0}/verdict.png).\n\n",
          study);
    out += fmt::format(
        "Every metric with its interval: [{0}/verdict.csv]({0}/verdict.csv); the rule and "
        "settings: [{0}/verdict.json]({0}/verdict.json); each condition's rounds: "
        "[{1}]({1}).\n\n",
        study, details_name);
  }
}

// Every preemption scenario, one row each: a matrix reads as one table.
void preemption_table(std::string& out, const LoadedRun& run, const PreemptionCells& read) {
  if (read.cells.empty() && read.damaged.empty()) return;
  out += "## Preemption\n\nThe urgent job's latency, from its submit to its first thread.\n\n";
  out +=
      "| scenario | load | priority → granted | process | clock | p50 µs | p99 µs | later than "
      "the period | load slowdown | class |\n|---|---|---|---|---|---|---|---|---|---|\n";
  for (const PreemptionCell& c : read.cells)
    out += fmt::format("| {} | {} | {} → {} | {} | {} | {:.1f} | {:.1f} | {:.0f} | {} | {} |\n",
                       c.relative, c.load, priority_text(c.priority),
                       priority_text(c.priority_granted), to_string(c.process), to_string(c.clock),
                       c.p50_us, c.p99_us, c.misses,
                       c.load_slowdown ? fmt::format("{:.3f}", *c.load_slowdown) : "–",
                       c.preemption_class ? name_or_blank(c.preemption_class) : "–");
  std::set<std::string> matrices;  // the folders of cells, each drawn as one heat map
  for (const PreemptionCell& c : read.cells)
    if (const auto slash = c.relative.rfind('/'); slash != std::string::npos)
      matrices.insert(c.relative.substr(0, slash));
  std::string maps;
  for (const std::string& m : matrices)
    if (std::filesystem::exists(run.directory / "plots" / m / "matrix.png"))
      maps += fmt::format(
          "\n![{0}: the urgent job's p99 per load and priority](plots/{0}/matrix.png)\n", m);
  for (const std::string& d : read.damaged)
    out += fmt::format(
        "| {} | the latency table is missing (`{}/summary.csv` unreadable) |||||||||\n", d, d);
  out += maps + "\n";
}

// Every dependency of the scenarios run on their own: what each barrier costs.
void barrier_table(std::string& out, const LoadedRun& run) {
  const std::vector<BarrierGap> gaps = barrier_gaps(run);
  if (gaps.empty()) return;
  out +=
      "## Barriers\n\nThe gap from a producer's end to its consumer's start, µs, p50 (p5–p95), "
      "on the timestamp clock where the scenario has it, else the poll clock; a copy's on the "
      "poll clock (its timestamp ends with its bytes, its end stamp where what follows it can "
      "start).\n\n"
      "| scenario | dependency | barrier | clock | frames | gap |\n|---|---|---|---|---|---|\n";
  for (const BarrierGap& g : gaps)
    out += fmt::format("| {} | {} → {} | {} | {} | {} | {} |\n", g.scenario, g.producer, g.consumer,
                       g.barrier.empty() ? "–" : g.barrier, to_string(g.clock), g.values_us.size(),
                       spread(g.values_us));
  out += "\n";
}

// Each scenario against its legacy twin on the frame-level endpoint (the verdict of question 3)
// and on every clock both have (diagnostics: where the clocks disagree, the cost is not the
// barrier's alone).
void twin_table(std::string& out, const LoadedRun& run) {
  const std::vector<BarrierTwin> twins = barrier_twins(run);
  if (twins.empty()) return;
  out += fmt::format(
      "## Barrier twins\n\nThe same work behind another barrier than its legacy twin's: the "
      "frame's GPU span p50, µs, and the difference's 95 % interval over frames, judged against "
      "±{:g} % of the twin's span. `frame`: frames.csv's `gpu_span_us`, which decides; a clock: "
      "the span of the frame's records on that clock.\n\n"
      "| scenario | twin | barrier | span from | frames | span | twin's span | difference | "
      "verdict |\n|---|---|---|---|---|---|---|---|---|\n",
      kTwinMarginOfSpan * 100);
  for (const BarrierTwin& t : twins)
    out += fmt::format(
        "| {} | {} | {} | {} | {} / {} | {:.1f} | {:.1f} | {:+.1f} [{:+.1f}, {:+.1f}] "
        "| {} (±{:.1f}) |\n",
        t.scenario, t.legacy_twin, t.barrier,
        t.clock ? std::string(to_string(*t.clock)) : std::string("frame"), t.frames, t.twin_frames,
        t.span_p50_us, t.twin_span_p50_us, t.span_p50_us - t.twin_span_p50_us, t.difference_low_us,
        t.difference_high_us, name_of(kTwinOutcomeNames, t.outcome()), t.margin_us());
  out += "\n";
}

// The scenarios run on their own (not a study's round, not a matrix's cell), one row each.
void scenarios_table(std::string& out, const LoadedRun& run, const std::string& details_name) {
  std::string rows;
  for (const LoadedScenario& s : run.scenarios) {
    if (!is_top_level(run, s) || s.kind == ScenarioKind::preemption) continue;
    std::size_t ok = 0, flagged = 0;
    std::set<std::uint32_t> frames;
    for (const RecordRow& r : s.records) {
      frames.insert(r.frame);
      ok += r.status == RecordStatus::ok ? 1 : 0;
      flagged += r.flags.empty() ? 0 : 1;
    }
    std::string frame_time = "–";
    if (const auto stats = frame_time_stats(s.frames))
      frame_time = fmt::format(
          "{:.3f} / {:.3f}{}", stats->interval_p50_us / 1000.0, stats->interval_p99_us / 1000.0,
          stats->stutters ? fmt::format(", {} stutters", stats->stutters) : "");
    std::string status =
        ok == s.records.size() ? "ok" : fmt::format("{} of {} rows ok", ok, s.records.size());
    if (s.meta.failed) status = "**stopped early**";
    rows += fmt::format("| {} | {} | {} | {} | {} |\n", relative_of(run, s), frames.size(), status,
                        frame_time, flagged ? std::to_string(flagged) : "0");
  }
  if (rows.empty()) return;
  out += "## Scenarios\n\nEach scenario's queues, timing tables per clock, plots and data: " +
         fmt::format("[{0}]({0}).\n\n", details_name) +
         "| scenario | frames | rows | frame time p50 / p99 ms | rows whose clocks disagree "
         "|\n|---|---|---|---|---|\n" +
         rows + "\n";
}

}  // namespace

ReportPages markdown_report(const LoadedRun& run, const std::string& details_name) {
  const std::string name = run.directory.filename().empty()
                               ? run.directory.parent_path().filename().string()
                               : run.directory.filename().string();
  std::string out = fmt::format("# gpuoverlap report: {}\n\n", name);
  const ReportInputs inputs = read_report_inputs(run);
  out += answers_section(run, inputs);
  out += "## Where it ran\n\n";
  if (!run.scenarios.empty()) {
    const ScenarioMeta& meta = run.scenarios.front().meta;
    const MetaDevice& device = meta.device;
    const MetaHost& host = meta.host;
    out += "| | |\n|---|---|\n";
    out += fmt::format("| device | {} ({}, vendor {} device {}) |\n", shown(device.name),
                       shown(device.type), shown(device.vendor_id), shown(device.device_id));
    out += fmt::format("| driver | {} {} |\n| {} | {} |\n", shown(device.driver_name),
                       shown(device.driver_info), api_of(meta), shown(device.api_version));
    if (device.runtime) out += fmt::format("| runtime | {} |\n", shown(device.runtime));
    out += fmt::format("| host | {} ({}) |\n", shown(host.hostname), shown(host.kernel));
    if (host.cpu_model)
      out += fmt::format("| CPU | {}: {} logical CPUs, {} usable by this process |\n",
                         shown(host.cpu_model), shown(host.logical_cpus), shown(host.usable_cpus));
    // What decides how long a thread waits for a CPU: the tick, the preemption model and the
    // scheduler with its slice.
    if (host.scheduler)
      out += fmt::format(
          "| scheduler | {}, HZ {}, preemption {}, base slice {} |\n", shown(host.scheduler),
          shown(host.tick_hz), shown(host.preemption_model),
          host.base_slice_ns ? shown(host.base_slice_ns) + " ns" : std::string("not readable"));
    // Over every scenario: the queue priorities asked for and granted, and the clock checks.
    std::set<std::string> priorities;
    std::size_t rows = 0, disagree = 0;
    bool timestamps = false;
    for (const LoadedScenario& s : run.scenarios) {
      for (const MetaQueue& q : s.meta.queues)
        priorities.insert(fmt::format("{} {} → {}", shown(q.type), shown(q.priority_requested),
                                      shown(q.priority_granted)));
      for (const RecordRow& r : s.records) {
        ++rows;
        disagree += r.flags.empty() ? 0 : 1;
        timestamps = timestamps || r.ts_start_us.has_value();
      }
    }
    std::string granted;
    for (const std::string& p : priorities) granted += (granted.empty() ? "" : ", ") + p;
    out += fmt::format("| queue priorities, requested → granted | {} |\n", granted);
    out += fmt::format(
        "| clocks | poll{}{}; {} of {} rows have clocks that disagree beyond the tolerance |\n",
        timestamps ? ", timestamp queries" : "",
        meta.shader_clock_verdict ? ", shader clock " + shown(meta.shader_clock_verdict) : "",
        disagree, rows);
    out += fmt::format("| gpuoverlap | {} |\n| command | `{}` |\n| started | {} |\n\n",
                       shown(meta.git_revision), shown(meta.command_line), shown(meta.started_at));
  }
  if (run.run.contains("failure") && !run.run["failure"].is_null())
    out += fmt::format("**The run failed:** {}\n\n", text(run.run["failure"], "message"));
  if (!run.scenarios.empty()) {
    const MetaSizes& sizes = run.scenarios.front().meta.sizes;
    if (sizes.profile == "cpu-device")
      out += fmt::format(
          "**Smaller sizes:** {} (at most {} frames per scenario, {} per study condition, "
          "preemption {} ms on a {} ms load; `--full-size` runs the files' sizes).\n\n",
          shown(sizes.why), shown(sizes.frames), shown(sizes.study_frames_per_condition),
          shown(sizes.preemption_duration_ms), shown(sizes.preemption_target_ms));
  }
  time_section(out, run);
  study_tables(out, run, inputs.studies, details_name);
  preemption_table(out, run, inputs.preemption);
  barrier_table(out, run);
  twin_table(out, run);
  scenarios_table(out, run, details_name);

  std::string details = fmt::format(
      "# gpuoverlap report, every scenario: {}\n\nThe answers and tables: "
      "[report.md](report.md).\n\n",
      name);
  for (const StudyFile& study : inputs.studies)
    if (study.verdict)
      details +=
          fmt::format("## Study {}\n\n```\n{}```\n\n", study.name, study.verdict->verdict.summary);
  for (const LoadedScenario& s : run.scenarios) scenario_section(details, run, s);
  return {std::move(out), std::move(details)};
}

}  // namespace gpuoverlap

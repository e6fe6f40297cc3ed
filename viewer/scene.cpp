#include "viewer/scene.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "analysis/csv_table.h"
#include "analysis/study_files.h"
#include "analysis/verdict.h"
#include "core/input_file.h"
#include "timeline/statistics.h"

namespace gpuoverlap::viewer {

namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find(';', begin), text.size());
    if (end > begin) out.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return out;
}

std::string text_of(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return "?";
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "?";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

std::string upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

// verdict.json's margins and control doses (untrusted: what is missing or malformed leaves
// the defaults; the verdict.csv beside it is what the table shows).
void read_study_settings(const std::filesystem::path& path, StudyVerdictTable& table) {
  const auto loaded = load_verdict_json(path);
  if (!loaded) return;
  table.p50_margin = loaded->settings.p50_margin;
  table.tail_margin = loaded->settings.tail_margin;
  for (const ControlDose& d : loaded->verdict.doses)
    if (d.threads > 0) table.doses.push_back({d.condition, d.threads});
  std::sort(table.doses.begin(), table.doses.end(),
            [](const StudyDose& a, const StudyDose& b) { return a.threads < b.threads; });
  table.detected_from_threads = loaded->verdict.detected_from_threads;
  for (const ConditionVerdict& c : loaded->verdict.conditions)
    if (c.time_account) table.time_accounts.emplace_back(c.condition, c.time_account->line);
}

// One frame's window on `clock`: its t0 (records' frame_t0_us) and its last workload's end,
// from t0; none without the records' frame_t0_us (results older than it) or an ok record.
std::optional<std::pair<double, double>> frame_window(const LoadedScenario& scenario, Clock clock,
                                                      std::uint32_t frame) {
  std::optional<double> t0_us, frame_end_us;
  for (const RecordRow& r : scenario.records) {
    if (r.frame != frame || r.status != RecordStatus::ok) continue;
    if (r.frame_t0_us) t0_us = r.frame_t0_us;
    if (const auto end = end_on(r, clock)) frame_end_us = std::max(frame_end_us.value_or(0), *end);
  }
  if (!t0_us || !frame_end_us) return std::nullopt;
  return std::pair(*t0_us, *frame_end_us);
}

// Under one frame's lanes, the frame loop's states by the kernel's record (sched_waits.csv, run
// --sched-trace): a lane of the stretches it was ready without a CPU, a lane of those it
// slept, within the frame (from its t0 to its last workload's end on `clock`), each wait's
// words in the hover text. Nothing without the record.
void add_frame_loop_lanes(const LoadedScenario& scenario, Clock clock, std::uint32_t frame,
                          layout::TimelineInput& input) {
  if (scenario.sched_waits.empty()) return;
  const auto window = frame_window(scenario, clock, frame);
  if (!window) return;
  const auto [t0_us, frame_end_us] = *window;
  const std::string queue = "frame loop (kernel record)";
  layout::WorkloadTiming runnable, asleep;
  runnable.name = "frame loop: ready, no CPU";
  runnable.cpu_state = "runnable";
  asleep.name = "frame loop: asleep";
  asleep.cpu_state = "asleep";
  runnable.queue = asleep.queue = queue;
  for (const LoadedSchedWait& w : scenario.sched_waits) {
    if (w.thread != "frame loop") continue;
    const double off_us = w.off_us - t0_us, on_us = w.on_us - t0_us;
    if (on_us < 0 || off_us > frame_end_us) continue;
    const double runnable_from_us = on_us - w.runnable_us;
    if (w.blocked && runnable_from_us > off_us)
      asleep.segments.push_back({std::max(off_us, 0.0), std::min(runnable_from_us, frame_end_us)});
    if (w.runnable_us > 0) {
      runnable.segments.push_back({std::max(runnable_from_us, 0.0), std::min(on_us, frame_end_us)});
      runnable.detail += (runnable.detail.empty() ? "" : "\n") + w.text;
    }
  }
  if (runnable.segments.empty() && asleep.segments.empty()) return;
  input.queues.push_back({queue, "frame loop (kernel's record: sched_waits.csv)"});
  input.workloads.push_back(std::move(runnable));
  input.workloads.push_back(std::move(asleep));
}

}  // namespace

std::vector<std::uint32_t> frame_numbers(const LoadedScenario& scenario) {
  std::set<std::uint32_t> frames;
  for (const RecordRow& r : scenario.records) frames.insert(r.frame);
  return {frames.begin(), frames.end()};
}

std::vector<Clock> available_clocks(const LoadedScenario& scenario) {
  std::vector<Clock> out;
  for (Clock clock : kClocks)
    for (const RecordRow& r : scenario.records)
      if (r.status == RecordStatus::ok && start_on(r, clock) && end_on(r, clock)) {
        out.push_back(clock);
        break;
      }
  return out;
}

namespace {

// Beside one frame's workloads, the background compiles that ran during it (background.csv):
// a lane per compile thread under a "background" header, its bar the compiles' span within the
// frame (from the frame's t0 to its last workload's end on `clock`). Nothing without the
// records' frame_t0_us (results older than it) or without background.csv.
void add_background_lanes(const LoadedScenario& scenario, Clock clock, std::uint32_t frame,
                          layout::TimelineInput& input) {
  if (scenario.background_tasks.empty()) return;
  const auto window = frame_window(scenario, clock, frame);
  if (!window) return;
  const auto [t0_us, frame_end_us] = *window;
  const std::string queue = "background";
  // Lanes in first-seen order, named as trace.json names the compile threads.
  std::map<std::string, std::size_t> lanes;
  for (const LoadedBackgroundTask& t : scenario.background_tasks) {
    if (!t.start_us || t.worker < 0) continue;  // cancelled before it ran
    const std::string name =
        t.managed
            ? fmt::format("{} thread {}", t.boosted ? "high-priority commit" : "idle", t.worker)
            : fmt::format("unmanaged thread {}", t.worker);
    auto [lane, fresh] = lanes.try_emplace(name, input.workloads.size());
    if (fresh) {
      layout::WorkloadTiming timing;
      timing.name = name;
      timing.queue = queue;
      timing.background = true;
      input.workloads.push_back(std::move(timing));
    }
    // Within the frame: from its t0 to its last workload's end; a compile still running when
    // the run ended has no finish and runs to the frame's end.
    const double from_us = *t.start_us - t0_us;
    const double to_us = t.finish_us ? *t.finish_us - t0_us : frame_end_us;
    if (to_us < 0 || from_us > frame_end_us) continue;
    const double start_us = std::max(from_us, 0.0), end_us = std::min(to_us, frame_end_us);
    layout::WorkloadTiming& w = input.workloads[lane->second];
    w.start_us = std::min(w.start_us.value_or(start_us), start_us);
    w.end_us = std::max(w.end_us.value_or(end_us), end_us);
    std::string line = t.label;
    if (t.thread_id) line += fmt::format(", thread {}", *t.thread_id);
    if (t.cpu_start && t.cpu_end)
      line += *t.cpu_start == *t.cpu_end ? fmt::format(", CPU {}", *t.cpu_start)
                                         : fmt::format(", CPU {} to {}", *t.cpu_start, *t.cpu_end);
    if (t.on_cpu_ms) line += fmt::format(", {:.1f} ms on a CPU", *t.on_cpu_ms);
    if (t.system_ms) line += fmt::format(" ({:.1f} ms in the kernel)", *t.system_ms);
    if (t.minor_faults) line += fmt::format(", {} page faults", *t.minor_faults);
    if (t.run_delay_ms) line += fmt::format(", waited {:.1f} ms for a CPU", *t.run_delay_ms);
    w.detail += (w.detail.empty() ? "" : "\n") + line;
  }
  if (!lanes.empty()) input.queues.push_back({queue, "background compiles (CPU threads)"});
}

}  // namespace

layout::TimelineInput timeline_input(const LoadedScenario& scenario, Clock clock,
                                     std::optional<std::uint32_t> frame) {
  layout::TimelineInput input;
  // Lanes: meta.json's queues (untrusted: anything missing reads "?"), else the records'.
  for (const MetaQueue& q : scenario.meta.queues) {
    if (!q.name) continue;
    const std::string granted = q.priority_granted.value_or("?");
    input.queues.push_back(
        {*q.name, fmt::format("{} ({}{})", *q.name, upper(q.type.value_or("?")),
                              granted == "normal" || granted == "?" ? "" : ", " + granted)});
  }
  for (const RecordRow& r : scenario.records)
    if (std::none_of(input.queues.begin(), input.queues.end(),
                     [&](const layout::QueueLane& q) { return q.name == r.queue; }))
      input.queues.push_back(
          {r.queue, fmt::format("{} ({})", r.queue, upper(std::string(to_string(r.queue_type))))});

  std::map<std::string, std::size_t> index;
  for (const std::string& name : scenario.workloads) {
    index[name] = input.workloads.size();
    layout::WorkloadTiming timing;
    timing.name = name;
    input.workloads.push_back(std::move(timing));
  }
  std::vector<std::vector<double>> starts(input.workloads.size()), ends(input.workloads.size());
  std::set<std::pair<std::string, std::string>> edges;
  for (const RecordRow& r : scenario.records) {
    const auto it = index.find(r.workload);
    if (it == index.end()) continue;
    layout::WorkloadTiming& w = input.workloads[it->second];
    w.queue = r.queue;
    w.graphics = r.kind == WorkloadKind::graphics;
    const auto producers = split_list(r.depends_on);
    const auto barriers = split_list(r.barrier);
    for (std::size_t p = 0; p < producers.size(); ++p)
      if (edges.insert({producers[p], r.workload}).second)
        input.dependencies.push_back(
            {producers[p], r.workload, p < barriers.size() ? barriers[p] : ""});
    if (r.status != RecordStatus::ok) continue;
    const auto start = start_on(r, clock), end = end_on(r, clock);
    if (start && end) {
      starts[it->second].push_back(*start);
      ends[it->second].push_back(*end);
    }
    if (frame && r.frame == *frame) {
      w.start_us = start;
      w.end_us = end;
      w.flagged = !r.flags.empty();
      if (clock == Clock::poll) {
        w.start_window_us = r.poll_start_window_us;
        w.end_window_us = r.poll_end_window_us;
        w.disturbed = r.poll_disturbed != 0;
      }
    }
  }
  for (std::size_t w = 0; w < input.workloads.size(); ++w) {
    if (starts[w].empty()) continue;
    input.workloads[w].whisker_start_us = percentile(starts[w], 5);
    input.workloads[w].whisker_end_us = percentile(ends[w], 95);
    if (!frame) {
      input.workloads[w].start_us = percentile(starts[w], 50);
      input.workloads[w].end_us = percentile(ends[w], 50);
    }
  }
  if (frame) add_background_lanes(scenario, clock, *frame, input);
  if (frame) add_frame_loop_lanes(scenario, clock, *frame, input);
  return input;
}

std::vector<FrameSpan> frame_spans(const LoadedScenario& scenario, Clock clock) {
  std::map<std::uint32_t, std::pair<double, double>> spans;
  for (const RecordRow& r : scenario.records) {
    if (r.status != RecordStatus::ok) continue;
    const auto start = start_on(r, clock), end = end_on(r, clock);
    if (!start || !end) continue;
    auto [it, fresh] = spans.try_emplace(r.frame, *start, *end);
    if (!fresh)
      it->second = {std::min(it->second.first, *start), std::max(it->second.second, *end)};
  }
  std::vector<FrameSpan> out;
  for (const auto& [frame, span] : spans) out.push_back({frame, span.second - span.first});
  return out;
}

std::vector<OverlapCell> overlap_matrix(const LoadedScenario& scenario, Clock clock) {
  // Each workload's span per frame, ok records only; the dependencies from every record.
  std::map<std::string, std::map<std::uint32_t, std::pair<double, double>>> spans;
  std::set<std::pair<std::string, std::string>> depends;  // consumer, producer
  for (const RecordRow& r : scenario.records) {
    for (const std::string& producer : split_list(r.depends_on))
      depends.emplace(r.workload, producer);
    if (r.status != RecordStatus::ok) continue;
    const auto start = start_on(r, clock), end = end_on(r, clock);
    if (start && end) spans[r.workload][r.frame] = {*start, *end};
  }
  std::vector<OverlapCell> out;
  for (std::size_t i = 0; i < scenario.workloads.size(); ++i)
    for (std::size_t j = i + 1; j < scenario.workloads.size(); ++j) {
      OverlapCell cell{scenario.workloads[i], scenario.workloads[j], 0, 0, 0, false};
      cell.dependent = depends.contains({cell.a, cell.b}) || depends.contains({cell.b, cell.a});
      std::vector<double> overlaps;
      const auto& a = spans[cell.a];
      const auto& b = spans[cell.b];
      for (const auto& [frame, span_a] : a) {
        const auto it = b.find(frame);
        if (it == b.end()) continue;
        ++cell.frames;
        const double overlap =
            std::min(span_a.second, it->second.second) - std::max(span_a.first, it->second.first);
        if (overlap > 0) overlaps.push_back(overlap);
      }
      cell.overlapped = overlaps.size();
      if (!overlaps.empty()) cell.overlap_p50_us = *percentile(overlaps, 50);
      out.push_back(std::move(cell));
    }
  return out;
}

UrgentLatencies urgent_latencies(const LoadedScenario& scenario, Clock clock, std::size_t bins) {
  UrgentLatencies out;
  if (scenario.kind != ScenarioKind::preemption || bins == 0) return out;
  // preemption::make_scenario names the urgent job "urgent".
  for (const RecordRow& r : scenario.records) {
    if (r.workload != "urgent" || r.status != RecordStatus::ok) continue;
    const auto start = start_on(r, clock);
    if (!start) continue;
    out.points.push_back(
        {r.frame, r.frame_t0_us ? std::optional<double>(*r.frame_t0_us / 1000.0) : std::nullopt,
         *start});
  }
  std::sort(out.points.begin(), out.points.end(), [](const LatencyPoint& a, const LatencyPoint& b) {
    return a.submission < b.submission;
  });
  if (out.points.empty()) return out;
  double largest = 0;
  for (const LatencyPoint& p : out.points) largest = std::max(largest, p.latency_us);
  out.bin_us = largest > 0 ? largest / static_cast<double>(bins) : 1;
  out.histogram.assign(bins, 0);
  for (const LatencyPoint& p : out.points) {
    const auto bin = static_cast<std::size_t>(std::max(0.0, p.latency_us) / out.bin_us);
    ++out.histogram[std::min(bin, bins - 1)];
  }
  return out;
}

OverlapGrid overlap_grid(const std::vector<std::string>& workloads,
                         const std::vector<OverlapCell>& matrix) {
  OverlapGrid grid;
  grid.workloads = workloads;
  grid.cells.assign(workloads.size(), std::vector<std::optional<std::size_t>>(workloads.size()));
  std::map<std::string, std::size_t> index;
  for (std::size_t w = 0; w < workloads.size(); ++w) index.emplace(workloads[w], w);
  for (std::size_t c = 0; c < matrix.size(); ++c) {
    const auto a = index.find(matrix[c].a), b = index.find(matrix[c].b);
    if (a == index.end() || b == index.end() || a->second == b->second) continue;
    grid.cells[a->second][b->second] = grid.cells[b->second][a->second] = c;
  }
  return grid;
}

namespace {

// The folder a scenario's name puts it in ("preemption-matrix" of "preemption-matrix/x"), ""
// at the top level.
std::string group_of_name(const std::string& name) {
  const std::size_t slash = name.rfind('/');
  return slash == std::string::npos ? std::string() : name.substr(0, slash);
}

// A preemption scenario's setup, as read_meta decided its kind.
const MetaPreemption* preemption_of(const LoadedScenario& s) {
  if (s.kind != ScenarioKind::preemption || !s.meta.preemption) return nullptr;
  return &*s.meta.preemption;
}

std::size_t index_of(std::vector<std::string>& names, const std::string& name) {
  const auto it = std::find(names.begin(), names.end(), name);
  if (it != names.end()) return static_cast<std::size_t>(it - names.begin());
  names.push_back(name);
  return names.size() - 1;
}

}  // namespace

std::optional<PreemptionGrid> preemption_grid(const LoadedRun& run, std::size_t scenario,
                                              Clock clock) {
  if (scenario >= run.scenarios.size() || !preemption_of(run.scenarios[scenario]))
    return std::nullopt;
  PreemptionGrid grid;
  grid.group = group_of_name(run.scenarios[scenario].name);
  grid.clock = clock;
  std::vector<std::tuple<std::size_t, std::size_t, std::size_t>> placed;  // load, column, entry
  for (std::size_t i = 0; i < run.scenarios.size(); ++i) {
    const LoadedScenario& s = run.scenarios[i];
    const MetaPreemption* p = preemption_of(s);
    if (!p || group_of_name(s.name) != grid.group) continue;
    PreemptionGridCell cell;
    cell.scenario = i;
    cell.load = p->load.value_or("?");
    cell.priority = p->priority.value_or("?");
    cell.process = value_of(preemption::kProcessModeNames, p->spec_process.value_or("?"))
                       .value_or(preemption::ProcessMode::same);
    if (p->period_ms_number) cell.period_us = 1000.0 * *p->period_ms_number;
    std::vector<double> latencies;
    for (const RecordRow& r : s.records) {
      if (r.workload != "urgent") continue;  // preemption::make_scenario's name for it
      ++cell.submissions;
      const auto start = start_on(r, clock), end = end_on(r, clock);
      // As summary.csv: a disturbed poll start is when the poller looked (left out).
      if (r.status == RecordStatus::ok && start &&
          !disturbed_on(r.poll_disturbed, clock, kPollStartDisturbed))
        latencies.push_back(*start);
      if (r.status != RecordStatus::ok || !end || (cell.period_us > 0 && *end > cell.period_us))
        ++cell.misses;
    }
    cell.p50_us = percentile(latencies, 50);
    cell.p99_us = percentile(latencies, 99);
    const std::string column = cell.process == preemption::ProcessMode::same
                                   ? cell.priority
                                   : cell.priority + ", 2nd process";
    placed.emplace_back(index_of(grid.loads, cell.load), index_of(grid.columns, column),
                        grid.entries.size());
    grid.entries.push_back(std::move(cell));
  }
  grid.cells.assign(grid.loads.size(),
                    std::vector<std::optional<std::size_t>>(grid.columns.size()));
  for (const auto& [load, column, entry] : placed) grid.cells[load][column] = entry;
  return grid;
}

Result<std::optional<StudyVerdictTable>> study_verdict(const std::filesystem::path& root,
                                                       const LoadedScenario& scenario) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path top = fs::weakly_canonical(root, error);
  for (fs::path dir = fs::weakly_canonical(scenario.directory, error);; dir = dir.parent_path()) {
    const fs::path file = dir / "verdict.csv";
    if (fs::is_regular_file(file, error)) {
      StudyVerdictTable table;
      table.file = file;
      auto rows = load_verdict_csv(file);
      if (!rows) return rows.error();
      table.rows = std::move(*rows);
      read_study_settings(dir / "verdict.json", table);
      return std::optional<StudyVerdictTable>(std::move(table));
    }
    if (dir == top || !dir.has_relative_path() || dir.parent_path() == dir) break;
    // Never above the folder opened: a scenario folder outside it (a link) stops the search.
    if (std::mismatch(top.begin(), top.end(), dir.begin(), dir.end()).first != top.end()) break;
  }
  return std::optional<StudyVerdictTable>();
}

std::vector<std::size_t> forest_rows(const StudyVerdictTable& table, bool with_diagnostics) {
  auto shown = [&](const VerdictRow& r) {
    return r.role == EndpointRole::primary ||
           (with_diagnostics && r.decision != Decision::diagnostic_within);
  };
  std::vector<std::string> metrics;
  for (bool primary : {true, false})
    for (const VerdictRow& r : table.rows)
      if ((r.role == EndpointRole::primary) == primary && shown(r)) index_of(metrics, r.metric);
  std::vector<std::size_t> out;
  for (const std::string& metric : metrics)
    for (std::size_t i = 0; i < table.rows.size(); ++i)
      if (table.rows[i].metric == metric && shown(table.rows[i])) out.push_back(i);
  return out;
}

std::vector<DoseSeries> dose_response(const StudyVerdictTable& table) {
  std::vector<DoseSeries> out;
  if (table.doses.size() < 2) return out;
  for (const StudyDose& dose : table.doses)
    for (std::size_t i = 0; i < table.rows.size(); ++i) {
      const VerdictRow& r = table.rows[i];
      if (r.role != EndpointRole::primary || !tests_median(r.tests) ||
          r.condition != dose.condition)
        continue;
      auto series = std::find_if(out.begin(), out.end(),
                                 [&](const DoseSeries& d) { return d.metric == r.metric; });
      if (series == out.end()) series = out.insert(out.end(), DoseSeries{r.metric, {}});
      series->points.emplace_back(dose.threads, i);
    }
  return out;
}

std::vector<std::string> device_lines(const ScenarioMeta& meta) {
  std::vector<std::string> out;
  auto shown = [](const MetaText& text) { return text.value_or("?"); };
  const MetaDevice& device = meta.device;
  out.push_back(fmt::format("{} on {} (driver {} {})", shown(device.api), shown(device.name),
                            shown(device.driver_name), shown(device.driver_info)));
  for (const MetaQueue& q : meta.queues)
    out.push_back(fmt::format("queue {}: {} on family {} index {}, priority {} (requested {})",
                              shown(q.name), upper(shown(q.type)), shown(q.family),
                              shown(q.queue_index), shown(q.priority_granted),
                              shown(q.priority_requested)));
  return out;
}

std::vector<RunDevice> run_devices(const LoadedRun& run) {
  std::vector<RunDevice> out;
  if (!run.run.is_object()) return out;
  const auto devices = run.run.find("devices");
  if (devices == run.run.end() || !devices->is_array()) return out;
  for (const nlohmann::json& d : *devices) {
    if (!d.is_object() || !d.contains("directory") || !d["directory"].is_string() ||
        d["directory"].get<std::string>().empty())
      continue;
    out.push_back(
        {d["directory"].get<std::string>(), text_of(d.value("device", nlohmann::json()), "name")});
  }
  return out;
}

DeviceScenarioName split_device(const std::vector<RunDevice>& devices, const std::string& name) {
  for (std::size_t d = 0; d < devices.size(); ++d) {
    const std::string prefix = devices[d].folder + "/";
    if (name.size() > prefix.size() && name.starts_with(prefix))
      return {d, name.substr(prefix.size())};
  }
  return {std::nullopt, name};
}

std::optional<std::size_t> find_scenario(const LoadedRun& run,
                                         const std::vector<RunDevice>& devices,
                                         const std::string& name) {
  for (std::size_t i = 0; i < run.scenarios.size(); ++i)
    if (run.scenarios[i].name == name) return i;
  for (const RunDevice& device : devices)
    for (std::size_t i = 0; i < run.scenarios.size(); ++i)
      if (run.scenarios[i].name == device.folder + "/" + name) return i;
  return std::nullopt;
}

std::vector<DeviceBand> device_bands(const LoadedRun& run, const std::vector<RunDevice>& devices,
                                     std::size_t scenario, Clock clock,
                                     std::optional<std::uint32_t> frame) {
  std::vector<DeviceBand> out;
  if (devices.empty() || scenario >= run.scenarios.size()) return out;
  const DeviceScenarioName chosen = split_device(devices, run.scenarios[scenario].name);
  if (!chosen.device) return out;  // a scenario of no device's folder: shown alone
  for (std::size_t d = 0; d < devices.size(); ++d) {
    DeviceBand band;
    band.device = d;
    band.label = devices[d].folder + ": " + devices[d].name;
    for (std::size_t i = 0; i < run.scenarios.size() && !band.scenario; ++i)
      if (run.scenarios[i].name == devices[d].folder + "/" + chosen.name) band.scenario = i;
    if (band.scenario) {
      const LoadedScenario& s = run.scenarios[*band.scenario];
      const auto frames = frame_numbers(s);
      if (frame && std::binary_search(frames.begin(), frames.end(), *frame)) band.frame = frame;
      const auto clocks = available_clocks(s);
      band.has_clock = std::find(clocks.begin(), clocks.end(), clock) != clocks.end();
      band.input = timeline_input(s, clock, band.frame);
    }
    out.push_back(std::move(band));
  }
  return out;
}

layout::View fit_bands(const std::vector<DeviceBand>& bands, layout::View view) {
  layout::TimelineInput all;
  for (const DeviceBand& band : bands)
    if (band.input)
      all.workloads.insert(all.workloads.end(), band.input->workloads.begin(),
                           band.input->workloads.end());
  return layout::fit(all, view);
}

std::size_t ScenarioTreeNode::leaves() const {
  std::size_t n = scenario ? 1 : 0;
  for (const ScenarioTreeNode& c : children) n += c.leaves();
  return n;
}

bool ScenarioTreeNode::contains(std::size_t scenario_index) const {
  if (scenario == scenario_index) return true;
  for (const ScenarioTreeNode& c : children)
    if (c.contains(scenario_index)) return true;
  return false;
}

std::vector<ScenarioTreeNode> scenario_tree(const std::vector<std::string>& names) {
  std::vector<ScenarioTreeNode> roots;
  for (std::size_t i = 0; i < names.size(); ++i) {
    std::vector<ScenarioTreeNode>* level = &roots;
    std::size_t begin = 0;
    for (;;) {
      const std::size_t slash = names[i].find('/', begin);
      const std::string part = names[i].substr(begin, slash - begin);
      auto found = std::find_if(level->begin(), level->end(), [&](const ScenarioTreeNode& n) {
        return n.label == part && (slash != std::string::npos ? !n.scenario : !n.children.size());
      });
      if (found == level->end())
        found = level->insert(level->end(), ScenarioTreeNode{part, {}, {}});
      if (slash == std::string::npos) {
        found->scenario = i;
        break;
      }
      level = &found->children;
      begin = slash + 1;
    }
  }
  return roots;
}

}  // namespace gpuoverlap::viewer

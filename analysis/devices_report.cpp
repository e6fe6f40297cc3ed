#include "analysis/devices_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "analysis/answers.h"
#include "timeline/statistics.h"

namespace gpuoverlap {

namespace {

// One cell: a value with its 95 % interval where it has one.
struct Cell {
  double value = 0;
  std::optional<double> low, high;
  std::string text;
  bool share = false;  // a share in %, else a time in µs
};
using Row = std::vector<std::optional<Cell>>;  // a cell per device

std::optional<Cell> median_cell(const std::vector<double>& values_us, const std::string& suffix) {
  if (values_us.empty()) return std::nullopt;
  const PercentileInterval interval = percentile_interval(values_us, 50);
  Cell c;
  c.value = *percentile(values_us, 50);
  c.low = interval.low;
  c.high = interval.high;
  c.text = fmt::format("{:.4g} µs", c.value);
  if (c.low && c.high) c.text += fmt::format(" [{:.4g}, {:.4g}]", *c.low, *c.high);
  c.text += suffix;
  return c;
}

std::optional<Cell> share_cell(const OverlapCount& count, Clock clock) {
  if (count.frames == 0) return std::nullopt;
  const ShareInterval interval = wilson_interval(count.overlapped, count.frames);
  Cell c;
  c.value = 100.0 * static_cast<double>(count.overlapped) / static_cast<double>(count.frames);
  c.low = 100.0 * interval.low;
  c.high = 100.0 * interval.high;
  c.text = fmt::format("{:.0f} % [{:.0f}, {:.0f}] of {} frames ({})", c.value, *c.low, *c.high,
                       count.frames, to_string(clock));
  c.share = true;
  return c;
}

// Apart: two devices whose intervals do not overlap, by more than `compare` calls a change
// (kApartShare of the smaller time and kApartMinUs; kApartPoints for a share). Intervals alone
// would call a difference of one timer tick between two GPUs of one model apart, which is
// real but of no consequence.
constexpr double kApartShare = 0.10, kApartMinUs = 1.0, kApartPoints = 10.0;

bool apart(const std::optional<Cell>& a, const std::optional<Cell>& b) {
  if (!a || !b || !a->low || !a->high || !b->low || !b->high) return false;
  if (!(*a->high < *b->low || *b->high < *a->low)) return false;
  const double difference = std::abs(a->value - b->value);
  if (a->share) return difference >= kApartPoints;
  return difference >=
         std::max(kApartShare * std::min(std::abs(a->value), std::abs(b->value)), kApartMinUs);
}

bool apart(const Row& row) {
  for (std::size_t i = 0; i < row.size(); ++i)
    for (std::size_t j = i + 1; j < row.size(); ++j)
      if (apart(row[i], row[j])) return true;
  return false;
}

// A table: a row per label in first-seen order, a column per device, and "apart" where the
// intervals say so. Rows come from `cells(device) -> [(label, cell)]`.
void add_table(std::string& out, const std::vector<DeviceResults>& devices,
               const std::string& first_column,
               const std::function<std::vector<std::pair<std::string, std::optional<Cell>>>(
                   const DeviceResults&)>& cells) {
  std::vector<std::string> labels;
  std::map<std::string, Row> rows;
  for (std::size_t d = 0; d < devices.size(); ++d)
    for (auto& [label, cell] : cells(devices[d])) {
      auto [it, added] = rows.try_emplace(label, Row(devices.size()));
      if (added) labels.push_back(label);
      it->second[d] = std::move(cell);
    }
  if (labels.empty()) {
    out += "Not run on these devices.\n\n";
    return;
  }
  out += "| " + first_column + " |";
  for (const DeviceResults& d : devices) out += " " + d.folder + " |";
  out += " apart |\n|---|";
  for (std::size_t i = 0; i < devices.size(); ++i) out += "---|";
  out += "---|\n";
  for (const std::string& label : labels) {
    const Row& row = rows.at(label);
    out += "| " + label + " |";
    for (const auto& cell : row) out += " " + (cell ? cell->text : std::string("–")) + " |";
    out += apart(row) ? " **yes** |\n" : " |\n";
  }
  out += "\n";
}

std::string text_of(const nlohmann::json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_string()) return "?";
  return object[key].get<std::string>();
}

}  // namespace

std::string devices_report(const std::vector<DeviceResults>& devices) {
  // `run --api both`: one device through several APIs, a folder per API; otherwise devices.
  std::set<std::string> apis;
  for (const DeviceResults& d : devices) apis.insert(text_of(d.device, "api"));
  const bool per_api = devices.size() > 1 && apis.size() == devices.size();
  std::string out = per_api
                        ? fmt::format("# gpuoverlap report: {} APIs on one device side by side\n\n",
                                      devices.size())
                        : fmt::format("# gpuoverlap report: {} device{} side by side\n\n",
                                      devices.size(), devices.size() == 1 ? "" : "s");
  out +=
      "Each folder is a results folder of its own, with its own report. Below, one table per "
      "question with a column per folder; **apart** marks a row where two folders' 95 % "
      "intervals (of the median, or of a share) do not overlap and their difference is one "
      "`compare` would call (10 % and 1 µs; 10 points for a share). The intervals are over "
      "frames of one run each: they cannot see how runs differ from run to run (a schedule that "
      "changes between runs); for a gate, compare several runs per folder.\n\n";
  out += "| folder | API | device | UUID or LUID | PCI | driver | scenarios | report |\n";
  out += "|---|---|---|---|---|---|---|---|\n";
  for (const DeviceResults& d : devices) {
    const std::string uuid = text_of(d.device, "uuid");
    out +=
        fmt::format("| {} | {} | {} | {} | {} | {} {} | {} | [{}/report.md]({}/report.md) |\n",
                    d.folder, text_of(d.device, "api"), text_of(d.device, "name"),
                    uuid != "?" ? uuid : text_of(d.device, "luid"),
                    text_of(d.device, "pci_address"), text_of(d.device, "driver_name"),
                    text_of(d.device, "driver_info"), d.run.scenarios.size(), d.folder, d.folder);
  }
  out += "\n";

  // Each device's scenarios as its answers read them (a run with --concurrency-rounds: each
  // scenario's rounds measured alone, pooled), built once.
  std::map<const DeviceResults*, AnswerScenarios> answered;
  for (const DeviceResults& d : devices) answered.emplace(&d, answer_scenarios(d.run));
  auto overlap = [&answered](const std::string& scenario, bool cross) {
    return [&answered, scenario, cross](const DeviceResults& d) {
      std::vector<std::pair<std::string, std::optional<Cell>>> cells;
      const AnswerScenario* entry = answered.at(&d).find(scenario);
      const LoadedScenario* s = entry ? entry->scenario : nullptr;
      const std::optional<Clock> clock = s ? answer_clock(*s) : std::nullopt;
      if (clock)
        cells.emplace_back(
            "`" + scenario + "`",
            share_cell(cross ? direct_compute_overlap(*s, *clock) : same_queue_overlap(*s, *clock),
                       *clock));
      return cells;
    };
  };
  out +=
      "## Does DIRECT overlap COMPUTE?\n\nFrames where a DIRECT and a COMPUTE workload ran at "
      "once.\n\n";
  add_table(out, devices, "scenario", overlap("default", true));
  out +=
      "## Do dispatches on one queue overlap?\n\nFrames where two workloads of one queue ran "
      "at once.\n\n";
  add_table(out, devices, "scenario", overlap("no-barriers", false));

  out +=
      "## What does each barrier cost?\n\nThe gap from producer end to consumer start, "
      "median.\n\n";
  add_table(out, devices, "scenario · dependency (barrier)", [](const DeviceResults& d) {
    std::vector<std::pair<std::string, std::optional<Cell>>> cells;
    for (const BarrierGap& g : barrier_gaps(d.run))
      cells.emplace_back(
          fmt::format("`{}` · {} > {} ({})", g.scenario, g.producer, g.consumer, g.barrier),
          median_cell(g.values_us, fmt::format(" ({})", to_string(g.clock))));
    return cells;
  });

  out +=
      "## How fast does high-priority compute get the GPU?\n\nThe urgent job's latency from "
      "its submission, p50 and p99.\n\n";
  add_table(out, devices, "scenario", [](const DeviceResults& d) {
    std::vector<std::pair<std::string, std::optional<Cell>>> cells;
    for (const PreemptionCell& c : preemption_cells(d.run).cells) {
      Cell cell;
      cell.value = c.p50_us;
      cell.text = fmt::format("{:.4g} / {:.4g} µs ({})", c.p50_us, c.p99_us, to_string(c.clock));
      cells.emplace_back("`" + c.relative + "`", cell);
    }
    return cells;
  });

  out += "## Is background processing non-intrusive?\n\nEach study condition's decision.\n\n";
  // Each device's studies (their verdict.json files), read once for the tables below.
  std::map<const DeviceResults*, std::vector<StudyFile>> studies;
  for (const DeviceResults& d : devices) studies[&d] = read_studies(d.run);
  add_table(out, devices, "study · condition", [&](const DeviceResults& d) {
    std::vector<std::pair<std::string, std::optional<Cell>>> cells;
    for (const StudyFile& study : studies.at(&d)) {
      if (!study.verdict || study.neighbours) continue;
      for (const ConditionVerdict& c : study.verdict->verdict.conditions) {
        Cell cell;
        cell.text = to_string(c.decision);
        cells.emplace_back("`" + study.name + "` · " + c.condition, cell);
      }
    }
    return cells;
  });

  // Only a run with --concurrency-rounds has studies of neighbours.
  bool neighbours = false;
  for (const auto& [device, files] : studies)
    for (const StudyFile& study : files) neighbours = neighbours || study.neighbours;
  if (neighbours) {
    out +=
        "## Does one GPU's work disturb another's?\n\nEach device with the others running the "
        "same scenario against it alone, rounds interleaved, with the study's statistics "
        "(median ratio with its interval per frame-level endpoint; docs/multi-gpu.md).\n\n";
    add_table(out, devices, "scenario", [&](const DeviceResults& d) {
      std::vector<std::pair<std::string, std::optional<Cell>>> cells;
      for (const StudyFile& study : studies.at(&d)) {
        if (!study.neighbours) continue;
        Cell cell;
        cell.text = neighbours_answer(d.run, study);
        cells.emplace_back("`" + study.name + "`", cell);
      }
      return cells;
    });
  }

  out +=
      "## Each workload's duration\n\nMedian on the scenario's answer clock (timestamps where "
      "there are, else the poll clock), scenarios at the top level (or their rounds measured "
      "alone, pooled).\n\n";
  add_table(out, devices, "scenario · workload", [&answered](const DeviceResults& d) {
    std::vector<std::pair<std::string, std::optional<Cell>>> cells;
    for (const AnswerScenario& entry : answered.at(&d).entries) {
      const LoadedScenario& s = *entry.scenario;
      const std::optional<Clock> clock = answer_clock(s);
      if (!clock) continue;
      for (const MetricSeries& m : metric_series(s, *clock))
        if (m.metric == "duration")
          cells.emplace_back(fmt::format("`{}` · {}", entry.name, m.workload),
                             median_cell(m.values_us, fmt::format(" ({})", to_string(*clock))));
    }
    return cells;
  });
  return out;
}

}  // namespace gpuoverlap

// `gpuoverlap history`: runs kept in a database (history/), and listed from it.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <tuple>

#include "app/command_registry.h"
#include "app/commands.h"
#include "app/exit_status.h"

#if GPUOVERLAP_HAS_HISTORY
#include "analysis/results.h"
#include "core/atomic_file.h"
#include "history/against_history.h"
#include "history/change_points.h"
#include "history/history_store.h"
#include "timeline/export.h"
#endif

namespace gpuoverlap::commands {

#if GPUOVERLAP_HAS_HISTORY
namespace {

// --db, else GPUOVERLAP_DB: where the history is (validated here, at the edge).
Result<history::Location> location_of(const std::string& db) {
  const char* from_environment = std::getenv("GPUOVERLAP_DB");
  return history::parse_location(!db.empty() ? db : from_environment ? from_environment : "");
}

Result<history::Store> open_history(const std::string& db) {
  auto location = location_of(db);
  if (!location) return location.error();
  return history::Store::open(*location);
}

// What a results folder contributes: a run's (run.json or one scenario) or a self-test's. A
// scenario whose records were never kept contributes its summary.csv's numbers (the only
// reader that does without records: a history of what was measured, not a report of it).
Result<history::RunRow> row_of(const std::filesystem::path& directory) {
  if (is_selftest(directory)) {
    auto selftest = load_selftest(directory);
    if (!selftest) return selftest.error();
    return history::run_row(*selftest);
  }
  auto run = load_results(directory, RecordsRequired::no);
  if (!run) return run.error();
  return history::run_row(*run);
}

}  // namespace

int command_history_ingest(const HistoryArguments& args) {
  // Every folder is read and checked before anything is written: a damaged one stops the
  // command with nothing kept.
  std::vector<history::RunRow> rows;
  std::vector<std::string> folders;  // of each row, for the messages
  for (const std::string& directory : args.results) {
    // A run on several devices is one run of each device's machine.
    auto devices = device_folders(directory);
    if (!devices) return fail(devices.error());
    std::vector<std::filesystem::path> each;
    for (const DeviceFolder& device : *devices) each.push_back(device.directory);
    if (each.empty()) each.push_back(directory);
    for (const std::filesystem::path& folder : each) {
      auto row = row_of(folder);
      if (!row) return fail(row.error());
      rows.push_back(std::move(*row));
      folders.push_back(folder.string());
    }
  }
  auto store = open_history(args.db);
  if (!store) return fail(store.error());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    auto kept = store->ingest(rows[i]);
    if (!kept) return fail(kept.error().with_context(folders[i] + ": "));
    std::cout << (kept->added
                      ? fmt::format("run {}: kept {} ({} scenarios, {} metrics)", kept->run_id,
                                    folders[i], rows[i].scenarios, kept->metrics)
                      : fmt::format("run {}: {} was kept already", kept->run_id, folders[i]))
              << "\n";
  }
  std::cout << "history: " << store->location().shown << "\n";
  return kExitOk;
}

Status check_history_location(const std::string& db) {
  auto location = location_of(db);
  if (!location) return location.error();
  return ok_status();
}

int keep_run_in_history(const std::string& db, const std::filesystem::path& results, int status) {
  // Only a run that completed: a failed or interrupted one would put a partial run in its
  // series.
  if (status != kExitOk) {
    std::cerr << "history: not kept (the run did not complete)\n";
    return status;
  }
  // The folder this run has just written: unreadable now is the machine's doing.
  auto run = load_results(results);
  if (!run)
    return fail(run.error().with_context("history: ").with_category(ErrorCategory::environment));
  auto row = history::run_row(*run);
  if (!row) return fail(row.error().with_context("history: "));
  auto store = open_history(db);
  if (!store) return fail(store.error());
  auto kept = store->ingest(*row);
  if (!kept) return fail(kept.error());
  std::cout << fmt::format("history: run {} in {}\n", kept->run_id, store->location().shown);
  return kExitOk;
}

int command_history_list(const HistoryArguments& args) {
  auto store = open_history(args.db);
  if (!store) return fail(store.error());
  if (args.machines) {
    auto machines = store->machines();
    if (!machines) return fail(machines.error());
    std::cout << fmt::format("{:>4}  {:>5}  {:<32} {:<36} {:<24} {:<7} {}\n", "id", "runs", "gpu",
                             "device uuid", "driver", "api", "os, cpu");
    for (const history::MachineEntry& m : *machines)
      std::cout << fmt::format(
          "{:>4}  {:>5}  {:<32} {:<36} {:<24} {:<7} {}, {} ({} CPUs)\n", m.id, m.runs,
          m.fingerprint.gpu, m.fingerprint.device_uuid, m.fingerprint.driver, m.fingerprint.api,
          m.fingerprint.os, m.fingerprint.cpu,
          m.fingerprint.cpu_cores ? std::to_string(*m.fingerprint.cpu_cores) : std::string("?"));
    return kExitOk;
  }
  auto runs = store->runs();
  if (!runs) return fail(runs.error());
  auto machines = store->machines();
  if (!machines) return fail(machines.error());
  // A machine by its id (what `history list --machines` and the series name) and, so the list
  // reads without that table, its GPU and API.
  std::map<std::int64_t, std::string> machine_names;
  for (const history::MachineEntry& m : *machines) {
    std::string gpu = m.fingerprint.gpu;
    if (gpu.size() > 28) gpu = gpu.substr(0, 27) + "~";
    machine_names[m.id] = fmt::format("{} {} ({})", m.id, gpu, m.fingerprint.api);
  }
  auto machine_name = [&](std::int64_t id) {
    const auto found = machine_names.find(id);
    return found == machine_names.end() ? std::to_string(id) : found->second;
  };
  std::cout << fmt::format("{:>4}  {:<20}  {:<40}  {:>9}  {:>7}  {:<14} {}\n", "id", "started",
                           "machine", "scenarios", "metrics", "revision", "folder");
  for (const history::RunEntry& r : *runs)
    std::cout << fmt::format("{:>4}  {:<20}  {:<40}  {:>9}  {:>7}  {:<14} {}\n", r.id, r.started_at,
                             machine_name(r.machine_id), r.scenarios, r.metrics, r.tool_revision,
                             r.directory);
  return kExitOk;
}

namespace {

std::string series_name(const history::SeriesKey& k) {
  return fmt::format("{} · {} · {} · {} · machine {}", k.scenario, k.series, k.metric, k.clock,
                     k.machine_id);
}

std::string step_text(const history::ChangePoint& c) {
  return fmt::format("{:+.1f} % [{:+.1f}, {:+.1f}] ({:.4g} -> {:.4g}, p {:.3f})", 100 * c.step,
                     100 * c.step_low, 100 * c.step_high, c.before, c.after, c.p_value);
}

// A change as its metric reads it: worse or better where the metric has a direction.
std::string change_word(const std::string& metric, double change) {
  switch (history::better_of(metric)) {
    case history::Better::lower:
      return change > 0 ? "CHANGED (worse)" : "CHANGED (better)";
    case history::Better::higher:
      return change < 0 ? "CHANGED (worse)" : "CHANGED (better)";
    case history::Better::neither:
      break;
  }
  return "CHANGED";
}

std::vector<double> values_of(const history::Series& s) {
  std::vector<double> values;
  for (const history::SeriesPoint& p : s.points) values.push_back(p.value);
  return values;
}

}  // namespace

int command_history_trend(const HistoryArguments& args) {
  auto store = open_history(args.db);
  if (!store) return fail(store.error());
  const history::SeriesKey match{args.machine, args.scenario, args.series, args.metric, args.clock};
  auto found = store->series(match, "", args.window);
  if (!found) return fail(found.error());
  if (found->empty())
    return fail(make_error(
        "history trend: no series matches (see `gpuoverlap history list`; --scenario, "
        "--series, --metric and --clock name it, as report.md and summary.csv spell them)"));
  history::ChangePointSettings settings;
  settings.alpha = args.alpha;
  const bool csv_only = args.csv == "-";
  std::string csv =
      "machine,scenario,series,metric,clock,run,started_at,value,low,high,change_step,"
      "change_low,change_high\n";
  std::ostringstream table;
  for (const history::Series& s : *found) {
    const auto points = history::change_points(values_of(s), settings);
    table << series_name(s.key) << '\n';
    table << fmt::format("  {:>5}  {:<20}  {:>12}  {:>25}\n", "run", "started", "value",
                         "interval");
    for (std::size_t i = 0; i < s.points.size(); ++i) {
      const history::SeriesPoint& p = s.points[i];
      const std::string interval =
          p.low || p.high ? fmt::format("[{}, {}]", p.low ? fmt::format("{:.4g}", *p.low) : "-",
                                        p.high ? fmt::format("{:.4g}", *p.high) : "-")
                          : std::string();
      std::string line = fmt::format("  {:>5}  {:<20}  {:>12.4g}  {:>25}", p.run_id, p.started_at,
                                     p.value, interval);
      const history::ChangePoint* change = nullptr;
      for (const history::ChangePoint& c : points)
        if (c.index == i) change = &c;
      if (change) line += "  <- change " + step_text(*change);
      table << line << '\n';
      auto number = [](const std::optional<double>& v) {
        return v ? fmt::format("{}", *v) : std::string();
      };
      csv +=
          fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{}\n", s.key.machine_id,
                      csv_field(s.key.scenario), csv_field(s.key.series), csv_field(s.key.metric),
                      csv_field(s.key.clock), p.run_id, csv_field(p.started_at), p.value,
                      number(p.low), number(p.high), change ? fmt::format("{}", change->step) : "",
                      change ? fmt::format("{}", change->step_low) : "",
                      change ? fmt::format("{}", change->step_high) : "");
    }
  }
  if (csv_only) {
    std::cout << csv;
    return kExitOk;
  }
  std::cout << table.str();
  if (!args.csv.empty())
    if (Status s = write_file_atomically(args.csv, csv); !s) return fail(s.error());
  return kExitOk;
}

int command_history_compare(const HistoryArguments& args) {
  if (args.results.size() != 1)
    return fail(make_error("compare against the history: name one results folder"));
  auto row = row_of(args.results.front());
  if (!row) return fail(row.error());
  auto store = open_history(args.db);
  if (!store) return fail(store.error());
  auto machine = store->machine_id(row->machine);
  if (!machine) return fail(machine.error());
  if (!*machine)
    return fail(make_error(fmt::format(
        "{}: the history has no run of this machine ({}) to compare with: ingest some first",
        args.results.front(), row->machine.key())));
  // Its own earlier ingest, if any, is not part of what it is judged against.
  std::int64_t own_run = 0;
  if (auto runs = store->runs(); runs)
    for (const history::RunEntry& r : *runs)
      if (r.content_key == row->content_key) own_run = r.id;
  auto found = store->series(history::SeriesKey{**machine, "", "", "", ""}, "", args.last + 1);
  if (!found) return fail(found.error());
  history::PastValues past;
  for (const history::Series& s : *found) {
    std::vector<double>& values = past[{s.key.scenario, s.key.series, s.key.metric, s.key.clock}];
    for (const history::SeriesPoint& p : s.points)
      if (p.run_id != own_run) values.push_back(p.value);
    if (values.size() > args.last) values.erase(values.begin(), values.end() - args.last);
  }
  std::size_t changed = 0, judged = 0;
  const auto judgements = history::judge_against(row->metrics, past, args.threshold_pct);
  std::cout << fmt::format("{:<64} {:>10} {:>24} {:>10} {:>8}  {}\n", "metric", "median",
                           "[min, max] (runs)", "this run", "change", "verdict");
  for (const history::Judgement& j : judgements) {
    judged += j.judged;
    changed += j.changed;
    if (!j.changed) continue;
    const history::MetricRow& m = j.metric;
    std::cout << fmt::format(
        "{:<64} {:>10.4g} {:>24} {:>10.4g} {:>+7.1f}%  {}\n",
        fmt::format("{} · {} · {} · {}", m.scenario, m.series, m.metric, m.clock), *j.median,
        fmt::format("[{:.4g}, {:.4g}] ({})", *j.low, *j.high, j.runs), m.value, 100 * *j.change,
        change_word(m.metric, *j.change));
  }
  std::cout << fmt::format(
      "{} of {} metrics changed against the last {} runs of machine {} (beyond {} % from their "
      "median and outside all of them); {} with fewer than {} earlier runs not judged\n",
      changed, judged, args.last, **machine, args.threshold_pct, judgements.size() - judged,
      history::kMinPastRuns);
  return changed > 0 ? kExitFailed : kExitOk;
}

int command_history_regressions(const HistoryArguments& args) {
  auto store = open_history(args.db);
  if (!store) return fail(store.error());
  const history::SeriesKey match{args.machine, args.scenario, args.series, "", args.clock};
  auto found = store->series(match, args.metric_suffix, args.window);
  if (!found) return fail(found.error());
  struct Found {
    const history::Series* series;
    history::ChangePoint point;
    bool recent;
  };
  std::vector<Found> all;
  history::ChangePointSettings settings;
  settings.alpha = args.alpha;
  std::vector<std::vector<double>> values;
  for (const history::Series& s : *found) values.push_back(values_of(s));
  const auto points = history::change_points_of_each(values, settings);
  for (std::size_t i = 0; i < found->size(); ++i)
    for (const history::ChangePoint& c : points[i])
      all.push_back({&(*found)[i], c, c.index + args.newest >= (*found)[i].points.size()});
  // Newest first: by the start of the run where each began.
  std::sort(all.begin(), all.end(), [](const Found& a, const Found& b) {
    return a.series->points[a.point.index].started_at > b.series->points[b.point.index].started_at;
  });
  std::size_t worse_recent = 0;
  for (const Found& f : all) {
    const history::SeriesPoint& at = f.series->points[f.point.index];
    // Worse where the metric has a direction and the whole interval lies on its bad side.
    const bool worse =
        history::step_is_worse(f.series->key.metric, f.point.step_low, f.point.step_high);
    worse_recent += worse && f.recent;
    std::cout << fmt::format("{:<7} run {:>5} ({})  {}  {}{}\n", worse ? "WORSE" : "moved",
                             at.run_id, at.started_at, series_name(f.series->key),
                             step_text(f.point), f.recent ? "  [newest]" : "");
  }
  std::cout << fmt::format(
      "{} change point{} in {} series (the newest {} runs of each, alpha {}); {} worse in the "
      "newest {} run{}\n",
      all.size(), all.size() == 1 ? "" : "s", found->size(), args.window, args.alpha, worse_recent,
      args.newest, args.newest == 1 ? "" : "s");
  return worse_recent > 0 ? kExitFailed : kExitOk;
}

#else

int command_history_trend(const HistoryArguments& args) { return command_history_ingest(args); }
int command_history_compare(const HistoryArguments& args) { return command_history_ingest(args); }
int command_history_regressions(const HistoryArguments& args) {
  return command_history_ingest(args);
}

Status check_history_location(const std::string&) {
  return make_error("--history: not in this build (the Windows build has no SOCI)",
                    ErrorCategory::environment);
}

int keep_run_in_history(const std::string&, const std::filesystem::path&, int) {
  return command_history_ingest(HistoryArguments{});
}

int command_history_ingest(const HistoryArguments&) {
  return fail(
      make_error("history: not in this build (the Windows build has no SOCI); keep the "
                 "results on Linux",
                 ErrorCategory::environment));
}
int command_history_list(const HistoryArguments& args) { return command_history_ingest(args); }

#endif

namespace {

// The options trend and regressions share: which series, and the change-point test's window
// and level.
void add_series_options(CLI::App* command, HistoryArguments& history_args, const char* db_help) {
  command->add_option("--db", history_args.db, db_help);
  command->add_option("--scenario", history_args.scenario,
                      "The scenario, as run.json names it (default: every one)");
  command->add_option("--series", history_args.series,
                      "The workload, or \"frame\" for the frame-level figures (default: every "
                      "one)");
  command->add_option("--clock", history_args.clock,
                      "poll, ts, clk, or cpu for the frame-level figures (default: every one)");
  command
      ->add_option("--machine", history_args.machine,
                   "The machine's id (history list --machines; default: every one)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 62));
  command
      ->add_option("--window", history_args.window,
                   "Judge the newest N runs of each series (default 60; 12 to 1000: fewer "
                   "cannot reach the test's level, more costs N^2)")
      ->check(CLI::Range(std::size_t{12}, std::size_t{1000}));
  command
      ->add_option("--alpha", history_args.alpha,
                   "The permutation test's level per split (default 0.01; at least 0.005, the "
                   "smallest p 199 shuffles can give)")
      ->check(CLI::Range(0.005, 0.5));
}

}  // namespace

void add_history_commands(CommandRegistry& registry) {
  auto args = std::make_shared<HistoryArguments>();
  auto* history = registry.app.add_subcommand(
      "history",
      "The results history: runs kept in a database (a SQLite file, or PostgreSQL for a team), "
      "one schema on both (docs/history.md). Its place: --db, else the GPUOVERLAP_DB "
      "environment variable");
  history->require_subcommand(1);
  const char* db_help =
      "The history: a SQLite file (made if missing) or postgresql://user@host/dbname (default: "
      "$GPUOVERLAP_DB)";
  auto* history_ingest = history->add_subcommand(
      "ingest",
      "Keep results folders written by gpuoverlap run: the machine, the run and its summaries "
      "per scenario, one transaction per run; a run kept already is left as it is");
  history_ingest->add_option("results", args->results, "Results folders")->required();
  history_ingest->add_option("--db", args->db, db_help);
  auto* history_list =
      history->add_subcommand("list", "The runs kept, oldest first (or the machines)");
  history_list->add_option("--db", args->db, db_help);
  history_list->add_flag("--machines", args->machines,
                         "List the machines (GPU, driver, API, OS, CPU) instead");
  auto* history_trend = history->add_subcommand(
      "trend",
      "A series run by run (a metric of a scenario's workload on one clock and machine), with "
      "its change points (E-divisive means, docs/history.md)");
  auto* history_compare = history->add_subcommand(
      "compare",
      "Judge a results folder against the last --last runs of its machine: exit 1 when a "
      "metric moved beyond --threshold-pct from their median and outside all of them");
  history_compare->add_option("results", args->results, "Results folder")->required()->expected(1);
  history_compare->add_option("--db", args->db, db_help);
  history_compare->add_option("--last", args->last, "How many of the machine's runs (default 10)")
      ->check(CLI::Range(std::size_t{3}, std::size_t{100000}));
  history_compare
      ->add_option("--threshold-pct", args->threshold_pct,
                   "Smallest change from the runs' median that fails (default 5)")
      ->check(CLI::Range(0.0, 1000.0));
  auto* history_regressions = history->add_subcommand(
      "regressions",
      "Change points in every series, newest first, with the run where each began and the step "
      "with its interval; exit 1 when a step up (worse: every metric kept is a time) begins in "
      "the newest --newest runs of its series");
  for (CLI::App* command : {history_trend, history_regressions})
    add_series_options(command, *args, db_help);
  history_trend->add_option("--csv", args->csv,
                            "Also write the series as CSV to this file ('-': standard output "
                            "alone), which `plots/plot.py history FILE` draws");
  history_trend->add_option("--metric", args->metric,
                            "duration_p50_us (default), duration_p99_us, frame_interval_p50_us, "
                            "frame_interval_p99_us");
  history_regressions->add_option(
      "--metric-suffix", args->metric_suffix,
      "Judge the metrics whose name ends so (default _p50_us: the medians)");
  history_regressions
      ->add_option("--newest", args->newest,
                   "A step up that begins in the newest N runs of its series fails (default 1)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000}));
  registry.add(history_ingest, [args] { return command_history_ingest(*args); });
  registry.add(history_list, [args] { return command_history_list(*args); });
  registry.add(history_trend, [args] { return command_history_trend(*args); });
  registry.add(history_compare, [args] { return command_history_compare(*args); });
  registry.add(history_regressions, [args] { return command_history_regressions(*args); });
}

}  // namespace gpuoverlap::commands

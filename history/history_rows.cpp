#include "history/history_rows.h"

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "analysis/answers.h"
#include "analysis/csv_table.h"
#include "analysis/verdict.h"
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

// A preemption scenario's urgent job's latency on `clock`, as the preemption analysis counts
// it (preemption::summarize_clock, and so summary.csv and the report): each ok submission with
// a start on the clock, from its submission to that start (a record's start is relative to
// its submission); on poll without the starts judged disturbed. Unlike a duration it needs no
// end: a job whose end the poller missed still started.
std::vector<double> urgent_latencies_us(const LoadedScenario& s, Clock clock) {
  std::vector<double> latencies;
  for (const RecordRow& r : s.records) {
    if (r.workload != "urgent" || r.status != RecordStatus::ok) continue;
    const std::optional<double> start = start_on(r, clock);
    if (!start || disturbed_on(r.poll_disturbed, clock, kPollStartDisturbed)) continue;
    latencies.push_back(*start);
  }
  return latencies;
}

// A scenario whose records were never kept: what its summary.csv gives, under the names the
// records give (docs/history.md). Per workload and clock its duration p50, and a preemption
// scenario's urgent latency p50 and p99; no duration p99 (summary.csv keeps p5 and p95) and
// no interval (that needs the values). `frames`: the summary's, the ok frames with the clock.
// A poll row whose stamps were judged disturbed is left out: summary.csv's duration counts
// their frames, which the records path leaves out, so the two would not be one series.
void add_summary(std::vector<MetricRow>& out, const LoadedScenario& s, bool preemption) {
  for (const LoadedSummaryRow& row : s.summary) {
    const std::string clock(to_string(row.clock));
    const auto frames = static_cast<std::int64_t>(row.frames);
    if (row.duration_p50_us && !(row.clock == Clock::poll && row.poll_disturbed.value_or(0) > 0))
      out.push_back({s.name, row.workload, "duration_p50_us", clock, *row.duration_p50_us,
                     std::nullopt, std::nullopt, frames});
    if (!preemption || row.workload != "urgent") continue;
    if (row.latency_p50_us)
      out.push_back({s.name, row.workload, "latency_p50_us", clock, *row.latency_p50_us,
                     std::nullopt, std::nullopt, frames});
    if (row.latency_p99_us)
      out.push_back({s.name, row.workload, "latency_p99_us", clock, *row.latency_p99_us,
                     std::nullopt, std::nullopt, frames});
  }
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// A share of frames in %, with Wilson's 95 % interval.
void add_share(std::vector<MetricRow>& out, const std::string& scenario, const std::string& metric,
               const std::string& clock, std::size_t hits, std::size_t frames) {
  if (frames == 0) return;
  const ShareInterval interval = wilson_interval(hits, frames);
  out.push_back({scenario, "frame", metric, clock,
                 100.0 * static_cast<double>(hits) / static_cast<double>(frames),
                 100.0 * interval.low, 100.0 * interval.high, static_cast<std::int64_t>(frames)});
}

// The report's first two answers as numbers: the share of frames in which a DIRECT and a COMPUTE
// workload overlapped (where the scenario has both) and in which two workloads of one queue did
// (where a queue has two), on the answer clock.
void add_overlap_shares(std::vector<MetricRow>& out, const std::string& scenario,
                        const LoadedScenario& s, Clock clock) {
  std::set<QueueType> types;
  std::map<std::string, std::set<std::string>> workloads_of_queue;
  for (const RecordRow& r : s.records) {
    if (r.status != RecordStatus::ok) continue;
    types.insert(r.queue_type);
    workloads_of_queue[r.queue].insert(r.workload);
  }
  const std::string clock_name(to_string(clock));
  if (types.size() > 1) {
    const OverlapCount cross = direct_compute_overlap(s, clock);
    add_share(out, scenario, "cross_queue_overlap_pct", clock_name, cross.overlapped, cross.frames);
  }
  if (std::any_of(workloads_of_queue.begin(), workloads_of_queue.end(),
                  [](const auto& q) { return q.second.size() > 1; })) {
    const OverlapCount same = same_queue_overlap(s, clock);
    add_share(out, scenario, "same_queue_overlap_pct", clock_name, same.overlapped, same.frames);
  }
}

// A study's primary endpoints per condition from verdict.csv (older files without `role`:
// every metric): the median's ratio and the tail's excess in points, each with its bounds,
// and the decision; and each condition's compile rate from verdict.json.
Status add_study(std::vector<MetricRow>& out, const LoadedRun& run, const StudyFile& study) {
  std::error_code ec;
  if (!study.rows_error.empty() &&
      std::filesystem::exists(run.directory / study.name / "verdict.csv", ec))
    return make_error(study.rows_error);
  for (const VerdictRow& row : study.rows) {
    if (row.role != EndpointRole::primary) continue;
    const auto frames = static_cast<std::int64_t>(row.frames);
    if (row.ratio_p50)
      out.push_back({study.name, row.condition, row.metric + ":ratio_p50", "study", *row.ratio_p50,
                     row.ci_low, row.ci_high, frames});
    if (row.tail_excess) {
      auto points = [](std::optional<double> v) {
        return v ? std::optional<double>(100.0 * *v) : std::nullopt;
      };
      out.push_back({study.name, row.condition, row.metric + ":tail_excess_pts", "study",
                     100.0 * *row.tail_excess, points(row.tail_ci_low), points(row.tail_ci_high),
                     frames});
    }
    if (const auto code = decision_code(row.decision))
      out.push_back({study.name, row.condition, row.metric + ":decision", "study", *code,
                     std::nullopt, std::nullopt, frames});
  }
  if (!study.verdict) return ok_status();
  const std::vector<ConditionVerdict>& conditions = study.verdict->verdict.conditions;
  for (std::size_t i = 0; i < conditions.size(); ++i) {
    const ConditionVerdict& c = conditions[i];
    const auto frames = static_cast<std::int64_t>(c.frames);
    // The condition's own decision, over its primary endpoints.
    if (const auto code = decision_code(c.decision))
      out.push_back({study.name, c.condition, "decision", "study", *code, std::nullopt,
                     std::nullopt, frames});
    if (study.verdict->has_compile_rate[i])
      out.push_back({study.name, c.condition, "compiles_per_s", "cpu", c.progress.compiles_per_s,
                     std::nullopt, std::nullopt, frames});
  }
  return ok_status();
}

}  // namespace

std::string MachineFingerprint::key() const {
  auto number = [](const std::optional<std::int64_t>& v) {
    return v ? std::to_string(*v) : std::string("?");
  };
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}", gpu, number(vendor_id), number(device_id), driver,
                     api, os, cpu, device_uuid);
}

namespace {

// A member of meta.json as the history keeps it: "?" where absent or empty.
std::string kept(const MetaText& text) { return text && !text->empty() ? *text : "?"; }

}  // namespace

MachineFingerprint machine_of(const ScenarioMeta& meta) {
  MachineFingerprint m;
  m.gpu = kept(meta.device.name);
  m.vendor_id = meta.device.vendor_number;
  m.device_id = meta.device.device_number;
  const std::string driver_name = kept(meta.device.driver_name);
  const std::string driver_info = kept(meta.device.driver_info);
  m.driver = driver_name == "?" && driver_info == "?" ? "?" : driver_name + " " + driver_info;
  m.api = api_of(meta);
  m.os = kept(meta.host.kernel);
  m.cpu = kept(meta.host.cpu_model);
  m.cpu_cores = meta.host.logical_cpu_count;
  m.device_uuid = kept(meta.device.uuid);
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

Better better_of(std::string_view metric) {
  for (std::string_view lower : {"_us", "_ms", ":ratio_p50", ":tail_excess_pts", "decision"})
    if (ends_with(metric, lower)) return Better::lower;
  if (ends_with(metric, "_overlap_pct") || metric == "compiles_per_s") return Better::higher;
  return Better::neither;
}

bool step_is_worse(std::string_view metric, double step_low, double step_high) {
  switch (better_of(metric)) {
    case Better::lower:
      return step_low > 0;
    case Better::higher:
      return step_high < 0;
    case Better::neither:
      return false;
  }
  return false;
}

std::optional<double> decision_code(Decision decision) {
  if (decision == Decision::non_intrusive) return 0.0;
  if (is_inconclusive(decision)) return 1.0;
  if (decision == Decision::intrusive) return 2.0;
  return std::nullopt;  // a diagnostic's move
}

Result<std::vector<MetricRow>> metric_rows(const LoadedRun& run) {
  std::vector<MetricRow> out;
  for (const LoadedScenario& s : run.scenarios) {
    // A preemption scenario's urgent job starts from its submission: its start is the
    // latency (preemption/preemption_analysis.h).
    const bool preemption = s.kind == ScenarioKind::preemption;
    if (!s.has_records) add_summary(out, s, preemption);
    for (const Clock clock : kClocks) {
      if (!s.has_records) continue;  // no records: its summary's, above
      const std::string clock_name(to_string(clock));
      for (const MetricSeries& series : metric_series(s, clock))
        if (series.metric == "duration")
          add_percentiles(out, s.name, series.workload, "duration", clock_name, series.values_us);
      if (preemption)
        add_percentiles(out, s.name, "urgent", "latency", clock_name,
                        urgent_latencies_us(s, clock));
    }
    std::vector<double> intervals;
    for (const LoadedFrame& f : s.frames)
      if (f.ok && f.frame_interval_us) intervals.push_back(*f.frame_interval_us);
    add_percentiles(out, s.name, "frame", "frame_interval", "cpu", intervals);
  }
  // The overlap shares of the scenarios the answers read: each run on its own, or its rounds
  // measured alone pooled (run --concurrency-rounds), named as the scenario.
  const AnswerScenarios answered = answer_scenarios(run);
  for (const AnswerScenario& entry : answered.entries) {
    if (entry.scenario->kind == ScenarioKind::preemption) continue;
    if (const std::optional<Clock> clock = answer_clock(*entry.scenario))
      add_overlap_shares(out, entry.name, *entry.scenario, *clock);
  }
  // What each barrier costs: the gap from producer to consumer (analysis/answers.h).
  for (const BarrierGap& gap : barrier_gaps(run))
    add_percentiles(out, gap.scenario, gap.producer + " > " + gap.consumer, "barrier_gap",
                    std::string(to_string(gap.clock)), gap.values_us);
  for (const StudyFile& study : read_studies(run)) GPUOVERLAP_TRY(add_study(out, run, study));
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
  const ScenarioMeta& first = run.scenarios.front().meta;
  row.started_at = text_at(run.run, "started_at");
  if (row.started_at == "?") row.started_at = kept(first.started_at);
  row.tool_revision = run.run.is_object() && run.run.contains("tool")
                          ? text_at(run.run["tool"], "git_revision")
                          : kept(first.git_revision);
  row.command_line = text_at(run.run, "command_line");
  if (row.command_line == "?") row.command_line = kept(first.command_line);
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(run.directory, ec);
  row.directory = (ec ? run.directory : absolute).lexically_normal().string();
  row.scenarios = static_cast<std::int64_t>(run.scenarios.size());
  auto metrics = metric_rows(run);
  if (!metrics) return metrics.error();
  row.metrics = std::move(*metrics);
  return row;
}

Result<RunRow> run_row(const LoadedSelftest& selftest) {
  RunRow row;
  Fnv1a hash;
  for (const char* file : {"selftest.json", "selftest.csv"})
    GPUOVERLAP_TRY(add_file(hash, selftest.directory, selftest.directory / file));
  row.content_key = fmt::format("{:016x}", hash.state);
  row.machine = machine_of(read_scenario_meta(selftest.summary));
  row.started_at = text_at(selftest.summary, "started_at");
  row.tool_revision = text_at(selftest.summary.value("tool", nlohmann::json()), "git_revision");
  row.command_line = text_at(selftest.summary, "command_line");
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(selftest.directory, ec);
  row.directory = (ec ? selftest.directory : absolute).lexically_normal().string();
  row.scenarios = 1;
  // One row per (check, configuration, metric, clock); a repeated one keeps its first value.
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  for (const LoadedSelftestRow& r : selftest.rows) {
    if (!r.value) continue;
    const std::string series = r.config.empty() ? r.check : r.check + " " + r.config;
    const std::string metric = r.unit.empty() ? r.metric : r.metric + " [" + r.unit + "]";
    const std::string clock = r.clock.empty() ? "-" : r.clock;
    if (!seen.insert({series, metric, clock}).second) continue;
    row.metrics.push_back(
        {"selftest", series, metric, clock, *r.value, std::nullopt, std::nullopt, 0});
  }
  if (row.metrics.empty())
    return make_error(selftest.directory.string() + ": the self-test measured nothing to keep");
  return row;
}

}  // namespace gpuoverlap::history

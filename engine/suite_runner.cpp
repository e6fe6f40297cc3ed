#include "engine/suite_runner.h"

#include <fmt/format.h>

#if defined(_WIN32)
#include <windows.h>  // gmtime_s
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <set>

#include "core/atomic_file.h"
#include "core/clock.h"
#include "core/cpu_affinity.h"
#include "core/cpu_steal.h"
#include "core/host_info.h"
#include "git_revision.h"
#include "jobs/cpu_spec.h"
#include "preemption/preemption_analysis.h"
#include "scenarios/cpu_device_sizes.h"
#include "scenarios/frame_plan.h"
#include "scenarios/suite_estimate.h"

namespace gpuoverlap {

namespace {

nlohmann::json scenario_description(const Scenario& s) {
  const FramePlan& plan = frame_plan_of(s);
  nlohmann::json queues = nlohmann::json::array();
  for (const auto& q : s.queues)
    queues.push_back(
        {{"name", q.name}, {"type", to_string(q.type)}, {"priority", to_string(q.priority)}});
  nlohmann::json workloads = nlohmann::json::array();
  for (const auto& w : s.workloads) {
    nlohmann::json deps = nlohmann::json::array();
    const std::size_t consumer = static_cast<std::size_t>(&w - s.workloads.data());
    for (std::size_t i = 0; i < w.depends_on.size(); ++i) {
      const DependencySpec& d = w.depends_on[i];
      const DependencyPlan& planned = plan.dependency(consumer, i);
      nlohmann::json d3d12 = nlohmann::json::array();
      for (const PlacedBarrier& b : planned.barriers)
        d3d12.push_back({{"at", b.placement == Placement::after_producer ? "after producer"
                                                                         : "before consumer"},
                         {"barrier", describe(b.barrier)}});
      nlohmann::json dep = {{"workload", s.workloads[d.producer].name},
                            {"barrier", barrier_label(d.barrier)},
                            {"reads_output", planned.reads_output},
                            {"cross_queue", planned.cross_queue},
                            {"barrier_queue", s.queues[planned.barrier_queue].name},
                            {"d3d12", d3d12}};
      if (!planned.note.empty()) dep["note"] = planned.note;
      deps.push_back(dep);
    }
    nlohmann::json workload = {{"name", w.name},
                               {"queue", s.queues[w.queue].name},
                               {"kind", to_string(w.kind)},
                               {"groups", w.groups},
                               {"threads", workload_shape(s, workloads.size()).threads},
                               {"iterations", w.iterations},
                               {"depends_on", deps}};
    if (w.kind == WorkloadKind::copy) {
      // A copy has no shader: no groups, threads or iterations (null, as records.csv leaves
      // them empty), and its size in bytes.
      workload["groups"] = workload["threads"] = workload["iterations"] = nullptr;
      workload["bytes"] = w.bytes;
    }
    if (w.target)
      workload["target"] = {{"texture", s.textures[w.target->texture].name},
                            {"mip", w.target->mip},
                            {"slice", w.target->slice},
                            {"discard", w.target->discard}};
    workloads.push_back(workload);
  }
  nlohmann::json out = {{"name", s.name},
                        {"description", s.description},
                        {"source", s.source},
                        {"default_barrier", to_string(s.default_barrier)},
                        {"default_split_policy", to_string(s.default_split_policy)},
                        {"warnings", s.warnings},
                        {"queues", queues},
                        {"workloads", workloads}};
  if (!s.textures.empty()) {
    nlohmann::json textures = nlohmann::json::array();
    for (const TextureSpec& t : s.textures) {
      textures.push_back({{"name", t.name},
                          {"format", to_string(t.format)},
                          {"width", t.width},
                          {"height", t.height},
                          {"mips", t.mips},
                          {"slices", t.slices}});
      if (!t.heap.empty()) textures.back()["heap"] = t.heap;
    }
    out["textures"] = textures;
  }
  if (s.preemption) out["preemption"] = preemption::to_json(*s.preemption);
  if (!s.study.empty())
    out["study"] = {{"name", s.study},
                    {"condition", s.condition},
                    {"round", s.round},
                    {"rounds", s.rounds},
                    {"kind", name_of(kStudyKindNames, s.study_kind())}};
  if (s.null_control) out["study"]["null_control"] = true;
  if (s.negative_control) out["study"]["negative_control"] = true;
  if (s.background) out["background"] = background::to_json(*s.background);
  out["timestamps"] = s.timestamps;
  if (s.live)
    out["live"] = {{"version", s.live->version},
                   {"previous", s.live->previous},
                   {"changes", s.live->changes},
                   {"first_session_frame", s.live->first_session_frame}};
  return out;
}

nlohmann::json error_json(const Error& e) {
  nlohmann::json j = {{"message", e.message}};
  if (e.api_code != 0) j["api_code"] = e.api_code, j["api_code_name"] = e.api_code_name;
  return j;
}

// run.json's entry of each scenario, its directory relative to `root`.
nlohmann::json scenario_entries(const SuiteOutcome& outcome, const std::filesystem::path& root) {
  nlohmann::json scenarios = nlohmann::json::array();
  for (const auto& s : outcome.scenarios)
    scenarios.push_back(
        {{"name", s.scenario.name},
         // Relative to the results root: a study's or matrix's scenarios are nested
         // (<study>/<condition>/round-<r>), so the last component alone names nothing.
         {"directory", s.written ? s.directory.lexically_relative(root).generic_string() : ""},
         {"status", s.unsupported() ? "unsupported"
                    : s.failure     ? "failed"
                                    : "ok"},
         {"seconds", std::round(s.seconds * 10) / 10},
         // Writing its files, after `seconds` (meta.json's phases_ms split those).
         {"write_seconds", std::round(s.write_seconds * 100) / 100},
         {"failure", s.failure ? error_json(*s.failure) : nlohmann::json(nullptr)}});
  return scenarios;
}

Status write_run_json(const SuiteOptions& options, const std::string& started_at,
                      const SuiteOutcome& outcome) {
  if (!options.write_run_json) return ok_status();
  nlohmann::json run = {
      {"format_version", kResultsFormatVersion},
      {"started_at", started_at},
      {"command_line", options.command_line},
      {"tool", {{"name", "gpuoverlap"}, {"git_revision", GPUOVERLAP_GIT_REVISION}}},
      {"scenarios", scenario_entries(outcome, options.out_directory)},
      {"failure", outcome.failure ? error_json(*outcome.failure) : nlohmann::json(nullptr)}};
  return write_file_atomically(options.out_directory / "run.json", run.dump(2) + "\n");
}

// The key of the scenarios one calibrated period serves: a study's conditions and rounds
// share one (their frames are compared), any other scenario has its own.
std::string pacing_group(const Scenario& s) { return s.study.empty() ? s.name : s.study; }

bool paced_frame(const Scenario& s) {
  return s.cpu && s.cpu->frame_period_ms > 0 && !s.preemption && !s.cpu->period_calibration;
}

// The period a CPU device sustains for scenarios[at]'s group (cpu_device_sizes.h): the group's
// baseline (its first scenario without background work, else scenarios[at] without it) run
// unpaced and unwritten, before any of the group runs; then every scenario of the group from
// `at` on is paced at it. A calibration that fails leaves the files' period and says why.
// `warmup_frames`: --warmup where given. The probe gets none of the run's per-frame hooks (a
// live window or script sees no unwritten frames), only its stop request.
void calibrate_cpu_device_pacing(ScenarioExecutor& executor, std::vector<Scenario>& scenarios,
                                 std::size_t at, const RunSettings& run,
                                 std::optional<std::uint32_t> warmup_frames, std::ostream& log) {
  const std::string group = pacing_group(scenarios[at]);
  Scenario probe = scenarios[at];
  for (std::size_t j = at; j < scenarios.size(); ++j)
    if (pacing_group(scenarios[j]) == group && !scenarios[j].background &&
        !scenarios[j].null_control) {
      probe = scenarios[j];
      break;
    }
  probe.background.reset();
  const double period_ms_in_file = probe.cpu->frame_period_ms;
  probe.cpu->frame_period_ms = 0;
  RunSettings settings = run;
  settings.frames = kCpuDevicePeriodCalibrationFrames;
  settings.warmup_frames = warmup_frames.value_or(probe.warmup_frames);
  settings.timestamp_queries = run.timestamp_queries && probe.timestamps;
  settings.measure_limit_ms = 0;
  settings.on_frame = {};
  settings.on_start = {};
  settings.end_requested = {};
  const Result<ScenarioTimeline> timeline = executor.run(probe, settings, {});
  std::vector<double> intervals_us;
  if (timeline && !timeline->failure)
    for (const FrameRecord& f : timeline->frames)
      if (f.frame_interval_us) intervals_us.push_back(*f.frame_interval_us);
  const std::optional<CpuDevicePeriod> period = cpu_device_period(intervals_us, period_ms_in_file);
  if (!period) {
    const std::string why = !timeline           ? timeline.error().message
                            : timeline->failure ? timeline->failure->message
                                                : "too few frames";
    log << fmt::format(
               "{}: the device is the CPU, but its frame period could not be measured "
               "({}); paced at the files' {:g} ms\n",
               group, why, period_ms_in_file)
        << std::flush;
    return;
  }
  const jobs::CpuFrameSpec::PeriodCalibration calibration{
      period_ms_in_file, period->unpaced_interval_p50_ms, period->intervals, probe.name};
  for (std::size_t j = at; j < scenarios.size(); ++j)
    if (pacing_group(scenarios[j]) == group && paced_frame(scenarios[j])) {
      scenarios[j].cpu->frame_period_ms = period->period_ms;
      scenarios[j].cpu->period_calibration = calibration;
    }
  log << fmt::format(
             "{}: the device is the CPU: paced at {:g} ms, {:g}x its unpaced frame "
             "interval (median {:.1f} ms over {} frames of {}), not the files' {:g} ms\n",
             group, period->period_ms, kCpuDevicePeriodHeadroom, period->unpaced_interval_p50_ms,
             period->intervals, probe.name, period_ms_in_file)
      << std::flush;
}

}  // namespace

std::string utc_now_iso8601() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
#if defined(_WIN32)
  gmtime_s(&tm, &now);
#else
  gmtime_r(&now, &tm);
#endif
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

nlohmann::json host_description() {
  const HostInfo host = describe_host();
  nlohmann::json j = {
      {"hostname", host.hostname},
      {"kernel", host.kernel},
      {"kernel_version", host.kernel_version},
      {"preemption", {{"model", host.preemption.model}, {"source", host.preemption.source}}},
      {"tick_hz", host.tick_hz ? nlohmann::json(*host.tick_hz) : nullptr},
      {"scheduler",
       {{"name", host.scheduler.name},
        {"source", host.scheduler.source},
        {"base_slice_ns", host.scheduler.base_slice_ns
                              ? nlohmann::json(*host.scheduler.base_slice_ns)
                              : nlohmann::json(nullptr)},
        {"base_slice_source", host.scheduler.base_slice_source}}},
      {"machine", host.machine},
      {"cpu_model", host.cpu_model},
      {"logical_cpus", host.logical_cpus},
      // The CPUs this process may run on: what the game foreground's workers
      // and the background threads share.
      {"usable_cpus", jobs::usable_cpus()}};
  // The SMT groups among those CPUs (what cpus = "siblings" places on), and whether a
  // hypervisor may hide them: a VM showing no SMT says nothing about its host's cores.
  const std::vector<std::vector<int>> groups = smt_groups(usable_cpu_ids());
  nlohmann::json shared = nlohmann::json::array();
  for (const std::vector<int>& group : groups)
    if (group.size() > 1) shared.push_back(describe_cpus(group));
  j["smt"] = {
      {"cores", groups.empty() ? nlohmann::json(nullptr) : nlohmann::json(groups.size())},
      {"shows_smt", groups.empty() ? nlohmann::json(nullptr) : nlohmann::json(!shared.empty())},
      {"sibling_groups", shared},
      {"source", smt_groups_source()},
      {"virtual_machine",
       host.virtual_machine ? nlohmann::json(*host.virtual_machine) : nlohmann::json(nullptr)}};
  if (host.virtual_machine.value_or(false) && shared.empty() && !groups.empty())
    j["smt"]["note"] =
        "a virtual machine that shows no SMT may still run two of its vCPUs on one core's "
        "hardware threads";
  return j;
}

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// One scenario as the suite's steps pass it on, from its start to its files.
struct ScenarioRun {
  std::size_t index = 0;  // in this run (a study's added rounds count on)
  ScenarioOutcome result;
  nlohmann::json hook_meta;  // SuiteOptions::before_scenario's
  std::chrono::steady_clock::time_point start;
  RunSettings settings;
  std::string label;    // "[<index + 1>/<scenarios>] <name>"
  std::string started;  // meta.json's started_at
  std::optional<CpuTimes> cpu_before, cpu_after;
  std::int64_t run_start_ns = 0, run_end_ns = 0;
};

// One run of the suite: its state across scenarios, and each step of a scenario.
class SuiteRun {
 public:
  SuiteRun(ScenarioExecutor& executor, const std::vector<Scenario>& given,
           const SuiteOptions& options, std::ostream& log, const MoreScenarios& more,
           const std::string& started_at, SuiteOutcome& outcome);
  void run();

 private:
  SuiteEstimate make_estimate() const;
  bool record(ScenarioOutcome finished, bool ends_suite);
  bool add_more();
  void before_scenario(std::size_t i);
  bool run_scenario(std::size_t i);
  ScenarioRun begin(std::size_t i);
  std::string time_so_far(std::size_t i) const;
  Result<ScenarioTimeline> measure(ScenarioRun& run);
  bool unmeasured(ScenarioRun& run, const Error& error);
  nlohmann::json meta_of(const ScenarioRun& run, ScenarioTimeline& timeline) const;
  bool write(ScenarioRun& run, ScenarioTimeline&& timeline, nlohmann::json& meta);

  ScenarioExecutor& executor_;
  const SuiteOptions& options_;
  std::ostream& log_;
  const MoreScenarios& more_;
  const std::string& started_at_;
  SuiteOutcome& outcome_;
  std::vector<Scenario> scenarios_;
  SuiteEstimate estimate_;
  std::set<std::string> pacing_groups_tried_;  // cpu_device_pacing's calibrations
  std::set<std::string> studies_announced_;    // their conditions not run, said once
  const std::chrono::steady_clock::time_point suite_start_;
};

SuiteRun::SuiteRun(ScenarioExecutor& executor, const std::vector<Scenario>& given,
                   const SuiteOptions& options, std::ostream& log, const MoreScenarios& more,
                   const std::string& started_at, SuiteOutcome& outcome)
    : executor_(executor),
      options_(options),
      log_(log),
      more_(more),
      started_at_(started_at),
      outcome_(outcome),
      scenarios_(given),
      estimate_(make_estimate()),
      suite_start_(std::chrono::steady_clock::now()) {}

SuiteEstimate SuiteRun::make_estimate() const {
  std::vector<FramesToRun> frames_each;
  for (const Scenario& s : scenarios_)
    frames_each.push_back({.warmup = options_.warmup_frames.value_or(s.warmup_frames),
                           .measured = options_.frames.value_or(s.frames)});
  SuiteEstimate estimate(scenarios_, frames_each);
  for (std::size_t done = 0; done < outcome_.scenarios.size(); ++done)
    estimate.finished(done, outcome_.scenarios[done].seconds);
  return estimate;
}

// Keeps a finished scenario and rewrites run.json, so that a later crash loses nothing. True
// when the suite stops: after a failure that ends it, or when run.json cannot be written.
bool SuiteRun::record(ScenarioOutcome finished, bool ends_suite) {
  if (ends_suite && !outcome_.failure) outcome_.failure = finished.failure;
  outcome_.scenarios.push_back(std::move(finished));
  Status written = write_run_json(options_, started_at_, outcome_);
  if (!written && !outcome_.failure) outcome_.failure = written.error();
  return ends_suite || !written;
}

void SuiteRun::run() {
  for (std::size_t i = 0;; ++i) {
    if (i == scenarios_.size() && !add_more()) break;
    before_scenario(i);
    if (!run_scenario(i)) break;
  }
}

// The scenarios ran out: more of them (MoreScenarios), or false to finish.
bool SuiteRun::add_more() {
  std::vector<Scenario> extra = more_ ? more_(outcome_) : std::vector<Scenario>{};
  if (extra.empty()) return false;
  scenarios_.insert(scenarios_.end(), extra.begin(), extra.end());
  estimate_ = make_estimate();
  return true;
}

void SuiteRun::before_scenario(std::size_t i) {
  // Once per group: one that failed keeps the files' period for all its scenarios, so a
  // study never mixes periods.
  if (options_.cpu_device_pacing && paced_frame(scenarios_[i]) &&
      pacing_groups_tried_.insert(pacing_group(scenarios_[i])).second)
    calibrate_cpu_device_pacing(executor_, scenarios_, i, options_.run, options_.warmup_frames,
                                log_);
  // A study's conditions this host cannot run, once, before its first scenario.
  if (!scenarios_[i].study.empty() && studies_announced_.insert(scenarios_[i].study).second)
    for (const auto& [condition, why] : scenarios_[i].study_not_run)
      log_ << scenarios_[i].study << "/" << condition << ": not run on this host: " << why << "\n";
}

// Scenario `i`: run, written and recorded; false when the suite stops.
bool SuiteRun::run_scenario(std::size_t i) {
  ScenarioRun run = begin(i);
  Result<ScenarioTimeline> timeline = measure(run);
  if (!timeline) return unmeasured(run, timeline.error());
  nlohmann::json meta = meta_of(run, *timeline);
  return write(run, std::move(*timeline), meta);
}

// The scenario's settings and its line in the log.
ScenarioRun SuiteRun::begin(std::size_t i) {
  ScenarioRun run;
  run.index = i;
  ScenarioOutcome& result = run.result;
  result.scenario = scenarios_[i];
  run.hook_meta =
      options_.before_scenario ? options_.before_scenario(i, result.scenario) : nlohmann::json();
  run.start = std::chrono::steady_clock::now();
  result.directory = options_.out_directory / result.scenario.name;
  RunSettings& settings = run.settings;
  settings = options_.run;
  settings.frames = options_.frames.value_or(result.scenario.frames);
  settings.warmup_frames = options_.warmup_frames.value_or(result.scenario.warmup_frames);
  settings.timestamp_queries = options_.run.timestamp_queries && result.scenario.timestamps;
  if (!result.scenario.study.empty()) settings.measure_limit_ms = result.scenario.study_round_ms;
  run.label = fmt::format("[{}/{}] {}", i + 1, scenarios_.size(), result.scenario.name);
  const std::string when = time_so_far(i);
  if (result.scenario.preemption)
    log_ << run.label << ": " << preemption::describe(*result.scenario.preemption) << when << "\n"
         << std::flush;
  else
    log_ << run.label << ": " << settings.warmup_frames << " warm-up + " << settings.frames
         << " frames" << when << "\n"
         << std::flush;
  return run;
}

// Elapsed time and, once each kind of scenario ahead has been seen, the time left.
std::string SuiteRun::time_so_far(std::size_t i) const {
  std::string when;
  if (i > 0) {
    when = " (" + format_duration(seconds_since(suite_start_)) + " in";
    if (const auto left = estimate_.remaining_s(i)) {
      when += ", about " + format_duration(*left) + " left";
      // A study may add rounds until its budget is spent: say how long that could take.
      if (const auto most = estimate_.remaining_at_most_s(i); most && *most > *left + 1)
        when += ", at most " + format_duration(*most) + " if a study uses its budget";
    }
    when += ")";
  }
  return when;
}

// The executor's run of the scenario, timed, with the host's CPU times around it.
Result<ScenarioTimeline> SuiteRun::measure(ScenarioRun& run) {
  const bool preemption = run.result.scenario.preemption.has_value();
  auto progress = [&](std::uint32_t done, std::uint32_t total) {
    if (options_.show_progress)
      log_ << "\r" << run.label << (preemption ? ": ms " : ": frame ") << done << "/" << total
           << std::flush;
  };
  run.started = utc_now_iso8601();
  run.cpu_before = read_cpu_times();
  run.run_start_ns = monotonic_ns();
  Result<ScenarioTimeline> timeline = executor_.run(run.result.scenario, run.settings, progress);
  run.run_end_ns = monotonic_ns();
  run.cpu_after = read_cpu_times();
  if (run.cpu_before && run.cpu_after)
    run.result.host_steal_ms = steal_ms(*run.cpu_before, *run.cpu_after);
  if (options_.show_progress) log_ << "\r\033[K" << std::flush;
  run.result.seconds = seconds_since(run.start);
  estimate_.finished(run.index, run.result.seconds);
  return timeline;
}

// The executor returned no timeline: the scenario is recorded as failed or unsupported. False
// when the suite stops.
bool SuiteRun::unmeasured(ScenarioRun& run, const Error& error) {
  ScenarioOutcome& result = run.result;
  result.failure = error.with_context("scenario '" + result.scenario.name + "': ");
  if (result.unsupported()) {
    // Refused before any GPU work: the device is intact, so the rest of the suite runs.
    log_ << run.label << ": unsupported by this runtime, skipped: " << error.message << "\n"
         << std::flush;
    return !record(std::move(result), false);
  }
  record(std::move(result), true);
  return false;
}

// The scenario's meta.json, but for what depends on its kind (write): the timeline's meta with
// the scenario, the settings, the clocks' agreement (rows flagged in `timeline`), the poll
// clock's disturbance (marked in `timeline`), the tool, the host and the hook's and options'.
nlohmann::json SuiteRun::meta_of(const ScenarioRun& run, ScenarioTimeline& timeline) const {
  const RunSettings& settings = run.settings;
  nlohmann::json meta = timeline.meta;
  meta["scenario"] = scenario_description(run.result.scenario);
  meta["settings"] = {{"frames", settings.frames},
                      {"warmup_frames", settings.warmup_frames},
                      {"frame_timeout_ms", settings.frame_timeout_ms},
                      {"priority_fallback", settings.priority_fallback},
                      {"timestamp_queries", settings.timestamp_queries},
                      {"stamp_memory", to_string(settings.stamp_memory)},
                      {"shader_clock", settings.shader_clock},
                      {"stamping", settings.stamping},
                      {"study_shares_device", settings.study_shares_device},
                      {"reuse_devices", settings.reuse_devices},
                      {"washout_ms", settings.washout_ms},
                      {"measure_limit_ms", settings.measure_limit_ms}};
  const std::size_t flagged = flag_disagreements(timeline, options_.agreement);
  meta["clock_agreement"] = {
      {"tolerance", fmt::format("max({} us, {}% of the row's duration) + the frame's "
                                "calibration deviation for a GPU clock against the CPU clock",
                                options_.agreement.absolute_us, options_.agreement.relative * 100)},
      {"absolute_us", options_.agreement.absolute_us},
      {"relative", options_.agreement.relative},
      {"flagged_rows", flagged},
      {"rows", timeline.records.size()}};
  // The poll clock's uncertainty: each stamp's window judged, and what the host took from
  // the poller (a hypervisor's steal over the scenario; Linux only).
  meta["poll_window"] = mark_poll_disturbance(timeline, options_.poll_window_tolerance_us);
  const std::optional<double> steal = run.cpu_before && run.cpu_after
                                          ? steal_fraction(*run.cpu_before, *run.cpu_after)
                                          : std::nullopt;
  meta["poll_window"]["cpu_steal"] = steal ? nlohmann::json(*steal) : nlohmann::json(nullptr);
  meta["tool"] = {{"name", "gpuoverlap"}, {"git_revision", GPUOVERLAP_GIT_REVISION}};
  meta["command_line"] = options_.command_line;
  if (run.hook_meta.is_object()) meta.update(run.hook_meta);
  meta["started_at"] = run.started;
  meta["finished_at"] = utc_now_iso8601();
  // The executor's run on the stamps' CPU clock: which scenarios of one process (devices run
  // at once) ran at the same time, to the microsecond.
  meta["run_span_ns"] = {{"start", run.run_start_ns}, {"end", run.run_end_ns}};
  meta["host"] = host_description();
  meta["time_origin"] =
      "each frame's gate release t0 on CLOCK_MONOTONIC_RAW; times in microseconds";
  meta["failure"] = timeline.failure ? error_json(*timeline.failure) : nlohmann::json(nullptr);
  for (const auto& [key, value] : options_.extra_meta.items()) meta[key] = value;
  return meta;
}

// The scenario's summary and files (a preemption scenario's as it ran), its line in the log and
// its record; false when the suite stops.
bool SuiteRun::write(ScenarioRun& run, ScenarioTimeline&& timeline, nlohmann::json& meta) {
  ScenarioOutcome& result = run.result;
  std::vector<ExtraFile> extra_files;
  if (result.scenario.preemption) {
    // Written as it ran (the load's calibrated size), which the outcome keeps too.
    if (timeline.preemption)
      result.scenario = preemption::as_run(result.scenario, timeline.preemption->load_sizes);
    meta["scenario"] = scenario_description(result.scenario);
    meta["time_origin"] =
        "each record's frame_t0_us is its submission's CPU time (just before vkQueueSubmit2), "
        "in microseconds from the first urgent submission on CLOCK_MONOTONIC_RAW; its start "
        "and end are from that submission";
    result.summary = preemption::summary_rows(result.scenario, timeline);
    extra_files.push_back(
        {"preemption.csv", preemption::preemption_csv(result.scenario, timeline)});
  } else {
    result.summary = summarize(result.scenario, timeline);
  }
  const auto write_start = std::chrono::steady_clock::now();
  if (Status s = write_scenario_results(result.directory, result.scenario, timeline, meta,
                                        result.summary, extra_files);
      !s) {
    result.failure = s.error();
  } else {
    result.written = true;
  }
  result.write_seconds = seconds_since(write_start);
  if (timeline.failure && !result.failure)
    result.failure = timeline.failure->with_context("scenario '" + result.scenario.name + "': ");
  // Moved, not copied: a traced scenario's timeline holds thousands of waits and CPU slices,
  // and the copy was time between a study's rounds. The record's compressed text is in its
  // file now; no reader of the outcome wants it.
  timeline.sched_record_gz = {};
  result.timeline = std::move(timeline);
  log_ << run.label << ": " << (result.failure ? "FAILED: " + result.failure->message : "ok")
       << " in " << format_duration(result.seconds) << " -> " << result.directory.string() << "\n"
       << std::flush;
  // A timed-out or lost device is not trusted with the next scenario.
  const bool failed = result.failure.has_value();
  return !record(std::move(result), failed);
}

}  // namespace

SuiteOutcome run_suite(ScenarioExecutor& executor, const std::vector<Scenario>& given,
                       const SuiteOptions& options, std::ostream& log, const MoreScenarios& more) {
  SuiteOutcome outcome;
  const std::string started_at = utc_now_iso8601();
  std::error_code ec;
  std::filesystem::create_directories(options.out_directory, ec);
  if (ec) {
    outcome.failure =
        make_error("cannot create " + options.out_directory.string() + ": " + ec.message());
    return outcome;
  }
  SuiteRun(executor, given, options, log, more, started_at, outcome).run();
  if (Status s = write_run_json(options, started_at, outcome); !s && !outcome.failure)
    outcome.failure = s.error();
  return outcome;
}

std::string live_session_csv(const SuiteOutcome& outcome, const std::filesystem::path& out) {
  std::string csv;
  for (std::size_t i = 0; i < outcome.scenarios.size(); ++i) {
    const ScenarioOutcome& s = outcome.scenarios[i];
    if (!s.scenario.live) continue;
    if (csv.empty()) csv = "version,scenario,directory,first_session_frame,frames,ended,changes\n";
    const std::size_t frames = s.timeline ? s.timeline->frames.size() : 0;
    const bool early = s.timeline && s.timeline->meta.contains("ended_early");
    const bool followed = i + 1 < outcome.scenarios.size();
    const std::string ended = s.failure ? "failed: " + s.failure->message
                              : early   ? (followed ? "edit" : "end")
                                        : "all frames";
    std::string changes;
    for (const std::string& change : s.scenario.live->changes)
      changes += (changes.empty() ? "" : "; ") + change;
    csv += fmt::format(
        "{},{},{},{},{},{},{}\n", s.scenario.live->version, csv_field(s.scenario.name),
        csv_field(s.written ? s.directory.lexically_relative(out).generic_string() : ""),
        s.scenario.live->first_session_frame, frames, csv_field(ended), csv_field(changes));
  }
  return csv;
}

std::string preemption_summary_table(const SuiteOutcome& outcome) {
  std::vector<preemption::TableLine> lines;
  for (const ScenarioOutcome& s : outcome.scenarios) {
    if (!s.scenario.preemption || !s.timeline) continue;
    preemption::ClockSummary c = preemption::summarize_clock(s.scenario, *s.timeline, Clock::poll);
    if (c.measured == 0) c = preemption::summarize_clock(s.scenario, *s.timeline, Clock::ts);
    lines.push_back({s.scenario.name, c});
  }
  std::string out = preemption::preemption_table(lines);
  if (!out.empty())
    out +=
        "  latency: CPU submit to the urgent job's first thread; misses: completed later than "
        "one period; slowdown: the load's median duration against it alone\n";
  return out;
}

std::string summary_table(const SuiteOutcome& outcome) {
  std::string out;
  auto cell = [](const std::optional<double>& v) {
    return v ? fmt::format("{:>10.1f}", *v) : fmt::format("{:>10}", "-");
  };
  for (const ScenarioOutcome& s : outcome.scenarios) {
    if (s.scenario.preemption) continue;  // preemption_summary_table
    out += fmt::format("\n{} ({})\n", s.scenario.name,
                       s.unsupported() ? "unsupported"
                       : s.failure     ? "FAILED"
                                       : "ok");
    if (s.summary.empty()) continue;
    out += fmt::format("  {:<20} {:<10} {:<5} {:>6} {:>10} {:>10} {:>10}\n", "workload", "queue",
                       "clock", "frames", "start p50", "end p50", "dur p50");
    for (const SummaryRow& r : s.summary) {
      const WorkloadSpec& w = s.scenario.workloads[r.workload];
      out += fmt::format("  {:<20} {:<10} {:<5} {:>6} {} {} {}\n", w.name,
                         s.scenario.queues[w.queue].name, to_string(r.clock), r.frames,
                         cell(r.start_us[1]), cell(r.end_us[1]), cell(r.duration_us[1]));
    }
  }
  if (!out.empty()) out += "\n  times in microseconds from the frame's gate release\n";
  return out;
}

Status write_devices_run_json(const std::filesystem::path& out, const std::string& started_at,
                              const std::string& command_line, const std::vector<DeviceRun>& runs,
                              const nlohmann::json& concurrent) {
  nlohmann::json devices = nlohmann::json::array();
  nlohmann::json scenarios = nlohmann::json::array();
  nlohmann::json failure = nullptr;
  for (const DeviceRun& run : runs) {
    devices.push_back(
        {{"index", run.index},
         {"directory", run.directory.lexically_relative(out).generic_string()},
         {"device", run.device},
         {"status", run.outcome.failure ? "failed" : "ok"},
         {"failure", run.outcome.failure ? error_json(*run.outcome.failure) : nlohmann::json()}});
    for (auto& entry : scenario_entries(run.outcome, out)) scenarios.push_back(std::move(entry));
    if (failure.is_null() && run.outcome.failure) failure = error_json(*run.outcome.failure);
  }
  return write_run_index_json(out, started_at, command_line, devices, concurrent, scenarios,
                              failure);
}

Status write_run_index_json(const std::filesystem::path& out, const std::string& started_at,
                            const std::string& command_line, const nlohmann::json& devices,
                            const nlohmann::json& concurrent, const nlohmann::json& scenarios,
                            const nlohmann::json& failure) {
  const nlohmann::json run = {
      {"format_version", kResultsFormatVersion},
      {"started_at", started_at},
      {"command_line", command_line},
      {"tool", {{"name", "gpuoverlap"}, {"git_revision", GPUOVERLAP_GIT_REVISION}}},
      {"devices", devices},
      {"concurrent", concurrent},
      {"scenarios", scenarios},
      {"failure", failure}};
  return write_file_atomically(out / "run.json", run.dump(2) + "\n");
}

}  // namespace gpuoverlap

#include "analysis/study_files.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <tuple>

#include "analysis/csv_table.h"
#include "core/input_file.h"
#include "timeline/export.h"
#include "timeline/statistics.h"

namespace gpuoverlap {

namespace {

std::string verdict_number(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? fmt::format("{:.4f}", *v) : "";
}

}  // namespace

std::string verdict_csv(const StudyVerdict& v) {
  std::string out = csv_line(kVerdictColumns);
  for (const VerdictRow& r : v.rows)
    out += fmt::format(
        "{},{},{:.4f},{:.4f},{},{},{},{:.4f},{:.4f},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}"
        ",{},{},{},{},{},{}\n",
        csv_field(r.condition), csv_field(r.metric), r.baseline_p50, r.p50,
        verdict_number(r.ratio_p50), verdict_number(r.ci_low), verdict_number(r.ci_high),
        r.baseline_p99, r.p99, verdict_number(r.ratio_p99), csv_field(to_string(r.decision)),
        verdict_number(r.p99_ci_low), verdict_number(r.p99_ci_high), verdict_number(r.rank_p),
        r.frames, r.baseline_frames, r.control ? 1 : 0, csv_field(r.note),
        verdict_number(r.tail_rate), verdict_number(r.baseline_tail_rate),
        verdict_number(r.tail_excess), verdict_number(r.tail_ci_low),
        verdict_number(r.tail_ci_high), r.units, verdict_number(r.detectable_ratio),
        verdict_number(r.detectable_tail), csv_field(r.pairing),
        csv_field(name_of(kEndpointRoleNames, r.role)),
        csv_field(name_of(kEndpointTestsNames, r.tests)), verdict_number(r.effect_us),
        verdict_number(r.effect_share));
  return out;
}

namespace {

nlohmann::json pacing_json(const std::optional<PacingSummary>& p) {
  if (!p) return nullptr;
  return {{"frames", p->frames},
          {"late", p->late},
          {"stutters", p->stutters},
          {"interval_p50_us", p->interval_p50_us},
          {"one_percent_low_fps", p->one_percent_low_fps}};
}

nlohmann::json optional_json(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json host_bursts_json(const HostBursts& b,
                                const std::optional<BurstReference>& reference) {
  if (!reference) return nullptr;
  return {{"frames", b.frames},
          {"rounds", b.rounds},
          {"waited_for_cpu", b.waited_for_cpu},
          {"ran_longer", b.ran_longer},
          {"off_cpu", b.off_cpu},
          {"unknown", b.unknown},
          {"steal_ms_in_burst_rounds", optional_json(b.steal_ms_in_burst_rounds)},
          {"line", describe_host_bursts(b, *reference)}};
}

nlohmann::json not_run_json(const std::vector<std::pair<std::string, std::string>>& not_run) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [condition, why] : not_run)
    out.push_back({{"condition", condition}, {"why", why}});
  return out;
}

nlohmann::json phase_shift_json(const PhaseShift& p) {
  return {{"phase", p.phase},
          {"baseline_mean_us", p.baseline_mean_us},
          {"condition_mean_us", p.condition_mean_us},
          {"shift_us", p.shift_us},
          {"low_us", optional_json(p.low_us)},
          {"high_us", optional_json(p.high_us)}};
}

nlohmann::json sched_account_json(const std::optional<SchedAccount>& a) {
  if (!a) return nullptr;
  return {{"rounds", a->rounds},
          {"frames", a->frames},
          {"runnable_ms", a->runnable_ms},
          {"to_background_ms", a->to_background_ms},
          {"run_delay_ms", optional_json(a->run_delay_ms)},
          {"most_way", a->most_way},
          {"most_times", a->most_times},
          {"most_ms", a->most_ms},
          {"most_p50_ms", a->most_p50_ms},
          {"line", a->line}};
}

nlohmann::json time_account_json(const std::optional<TimeAccount>& a) {
  if (!a) return nullptr;
  nlohmann::json phases = nlohmann::json::array();
  for (const PhaseShift& p : a->phases) phases.push_back(phase_shift_json(p));
  return {{"interval", phase_shift_json(a->interval)},
          {"phases", phases},
          {"run_delay", a->run_delay ? phase_shift_json(*a->run_delay) : nlohmann::json(nullptr)},
          {"frames", a->frames},
          {"late_frames", a->late_frames},
          {"late_overlapping_background", a->late_overlapping_background},
          {"intervals_with_compiles", a->intervals_with_compiles},
          {"intervals_sharing_cpu", a->intervals_sharing_cpu},
          {"frames_with_worker_cpus", a->frames_with_worker_cpus},
          {"frames_worker_on_loop_cpu", a->frames_worker_on_loop_cpu},
          {"baseline_frames_with_worker_cpus", a->baseline_frames_with_worker_cpus},
          {"baseline_frames_worker_on_loop_cpu", a->baseline_frames_worker_on_loop_cpu},
          {"line", a->line}};
}

}  // namespace

nlohmann::json verdict_json(const StudyVerdict& v, const VerdictSettings& s) {
  nlohmann::json conditions = nlohmann::json::array();
  for (const ConditionVerdict& c : v.conditions)
    conditions.push_back(
        {{"condition", c.condition},
         {"control", c.control},
         {"null_control", c.null_control},
         {"negative_control", c.negative_control},
         {"spinners", c.spinners},
         {"pacing", pacing_json(c.pacing)},
         {"time_account", time_account_json(c.time_account)},
         {"sched", sched_account_json(c.sched)},
         {"host_bursts", host_bursts_json(c.bursts, v.burst_reference)},
         {"burst_note", c.burst_note},
         {"resolvable",
          {{"median_ratio", optional_json(c.resolvable_ratio)},
           {"tail_excess", optional_json(c.resolvable_tail)},
           {"units", c.units}}},
         {"verdict", to_string(c.decision)},
         {"pairing", c.pairing},
         {"frames", c.frames},
         {"active_frames", c.active_frames},
         {"starved", c.starved},
         {"scheduling", c.scheduling},
         {"spec_scheduling", c.spec_scheduling},
         {"progress",
          {{"compiles", c.progress.compiles},
           {"seconds", c.progress.seconds},
           {"compiles_per_s", c.progress.compiles_per_s},
           {"queue_to_done_p50_ms", c.progress.queue_to_done_p50_ms
                                        ? nlohmann::json(*c.progress.queue_to_done_p50_ms)
                                        : nullptr},
           {"queue_to_done_p99_ms", c.progress.queue_to_done_p99_ms
                                        ? nlohmann::json(*c.progress.queue_to_done_p99_ms)
                                        : nullptr},
           {"on_cpu_ms_per_compile", optional_json(c.progress.on_cpu_ms_per_compile)},
           {"kernel_share", optional_json(c.progress.kernel_share)},
           {"minor_faults_per_compile", optional_json(c.progress.minor_faults_per_compile)},
           {"run_delay_ms_per_compile", optional_json(c.progress.run_delay_ms_per_compile)},
           {"commit_to_event_ms", c.progress.commit_to_event_ms},
           {"commit_to_event_p50_ms", optional_json(percentile(c.progress.commit_to_event_ms, 50))},
           {"commits_not_signalled", c.progress.commits_not_signalled},
           {"commits_asked_at_end", c.progress.commits_asked_at_end}}}});
  nlohmann::json doses = nlohmann::json::array();
  for (const ControlDose& d : v.doses)
    doses.push_back({{"condition", d.condition},
                     {"threads", d.threads},
                     {"verdict", to_string(d.decision)},
                     {"strongest_metric", d.metric},
                     {"ratio_p50", d.ratio_p50 ? nlohmann::json(*d.ratio_p50) : nullptr},
                     {"tail_excess", d.tail_excess ? nlohmann::json(*d.tail_excess) : nullptr}});
  return {
      {"study", v.study},
      {"baseline", v.baseline},
      {"control_doses", doses},
      {"detected_from_threads",
       v.detected_from_threads ? nlohmann::json(*v.detected_from_threads) : nullptr},
      {"must_intrude", v.must_intrude_threads
                           ? nlohmann::json{{"threads", *v.must_intrude_threads},
                                            {"why", v.must_intrude_why},
                                            {"detected", v.must_intrude_detected}}
                           : nlohmann::json(nullptr)},
      {"rounds", v.rounds},
      {"unit", v.unit},
      {"tests_per_condition", v.tests},
      {"gpu_clock", std::string(to_string(v.gpu_clock))},
      {"period_us", v.period_us ? nlohmann::json(*v.period_us) : nullptr},
      {"has_control", v.has_control},
      {"control_detected", v.control_detected},
      {"has_null", v.has_null},
      {"null_false_alarm", v.null_false_alarm},
      {"has_negative", v.has_negative},
      {"harness_fault", v.harness_fault},
      {"burst_line_us", v.burst_reference ? nlohmann::json(v.burst_reference->line_us()) : nullptr},
      {"cpu_phase_of_asked", optional_json(v.cpu_phase_of_asked)},
      {"baseline_host_bursts", host_bursts_json(v.baseline_bursts, v.burst_reference)},
      {"late_line_us", optional_json(v.late_line_us)},
      {"stutter_line_us", optional_json(v.stutter_line_us)},
      {"baseline_pacing", pacing_json(v.baseline_pacing)},
      {"baseline_sched", sched_account_json(v.baseline_sched)},
      {"conditions", conditions},
      {"summary", v.summary},
      {"not_run", not_run_json(v.not_run)},
      {"settings",
       {{"p50_margin", s.p50_margin},
        {"tail_margin", s.tail_margin},
        {"alpha", s.alpha},
        {"min_difference_us", s.min_difference_us},
        {"late_tolerance_us", optional_json(s.late_tolerance_us)},
        {"blocks", s.blocks},
        {"min_units", s.min_units},
        {"min_unit_frames", s.min_unit_frames},
        {"min_frames", s.min_frames},
        {"rule",
         "only primary endpoints (role primary: the frame-level ones) decide; diagnostics "
         "are reported with their effect and never decide. A paced frame's primary "
         "endpoints are its pacing: the frame interval's median (median test), late_frames "
         "(the share of intervals beyond late_line_us: the period plus late_tolerance_us, "
         "by default the larger of 5 % of the period and the median over the baseline's "
         "rounds of each round's p95 interval, less the period, at most half a period) and "
         "stutters (beyond stutter_line_us, 1.5 periods), both tail tests. "
         "per unit (a round paired with the baseline's same round; a block of frames for a "
         "study of one round): the ratio of the medians, and the share of frames beyond the "
         "baseline's p99 * (1 + p50_margin) + min_difference_us minus the baseline's share. "
         "Student's t over the units gives one-sided bounds: lower at 1 - alpha/K (K = "
         "tests_per_condition), "
         "upper at 1 - alpha. intrusive: a lower bound beyond its margin (the median's also "
         "by more than min_difference_us); non-intrusive: both upper bounds within (or the "
         "median's difference under min_difference_us); otherwise inconclusive. Conditions "
         "use only frames their background work overlapped. An alternating condition "
         "(pairing alternating:N) is judged against itself instead: a unit is a pair of "
         "adjacent N-frame blocks of one of its runs, the frames of the running block that "
         "background work overlapped against the frames of the held block that none did. "
         "Host bursts (a CPU phase of burst_line_us or more, 3 times the baseline's median): "
         "a condition decided only with the rounds in which the baseline or the null control "
         "had them, and not the same way without them, is inconclusive (burst_note)."}}}};
}

nlohmann::json study_rounds_json(const StudyRounds& r) {
  return {{"rounds_planned", r.planned},
          {"rounds_run", r.run},
          {"seconds", r.seconds},
          {"budget_s", r.budget_s},
          {"max_rounds", r.max_rounds},
          {"decided", r.decided},
          {"stop", r.stop}};
}

Result<std::vector<VerdictRow>> load_verdict_csv(const std::filesystem::path& file) {
  std::vector<VerdictRow> rows;
  try {
    const auto csv = read_csv(file.string(), kVerdictColumns, /*allow_missing=*/true);
    // verdict.csv has no format version of its own: the first release's columns are sure.
    check_columns(csv, kVerdictFile, /*version=*/0);
    const bool has_role = csv.present[csv.index("role")];
    const bool has_tests = csv.present[csv.index("tests")];
    auto count = [&](std::size_t r, std::string_view column) -> std::size_t {
      return csv.at(r, column).empty() ? 0 : csv.unsigned_integer(r, column);
    };
    auto figure = [&](std::size_t r, std::string_view column) {
      return csv.number(r, column).value_or(0);
    };
    for (std::size_t r = 0; r < csv.rows.size(); ++r) {
      VerdictRow row;
      row.condition = csv.at(r, "condition");
      row.metric = csv.at(r, "metric");
      row.baseline_p50 = figure(r, "baseline_p50");
      row.p50 = figure(r, "p50");
      row.ratio_p50 = csv.number(r, "ratio_p50");
      row.ci_low = csv.number(r, "ci_low");
      row.ci_high = csv.number(r, "ci_high");
      row.baseline_p99 = figure(r, "baseline_p99");
      row.p99 = figure(r, "p99");
      row.ratio_p99 = csv.number(r, "ratio_p99");
      row.decision = csv.named(r, "verdict", kDecisionNames);
      row.p99_ci_low = csv.number(r, "p99_ci_low");
      row.p99_ci_high = csv.number(r, "p99_ci_high");
      row.rank_p = csv.number(r, "rank_p");
      row.frames = count(r, "frames");
      row.baseline_frames = count(r, "baseline_frames");
      row.control = csv.at(r, "control") == "1";
      row.note = csv.at(r, "note");
      row.tail_rate = csv.number(r, "tail_rate");
      row.baseline_tail_rate = csv.number(r, "baseline_tail_rate");
      row.tail_excess = csv.number(r, "tail_excess");
      row.tail_ci_low = csv.number(r, "tail_ci_low");
      row.tail_ci_high = csv.number(r, "tail_ci_high");
      row.units = count(r, "units");
      row.detectable_ratio = csv.number(r, "detectable_ratio");
      row.detectable_tail = csv.number(r, "detectable_tail");
      row.pairing = csv.at(r, "pairing");
      row.role = has_role ? csv.named(r, "role", kEndpointRoleNames) : EndpointRole::primary;
      row.tests =
          has_tests ? csv.named(r, "tests", kEndpointTestsNames) : EndpointTests::median_and_tail;
      row.effect_us = csv.number(r, "effect_us");
      row.effect_share = csv.number(r, "effect_share");
      rows.push_back(std::move(row));
    }
  } catch (const std::exception& e) {
    return make_error(csv_failure(file.string(), e));
  }
  return rows;
}

namespace {

// verdict.json's members, typed: absent or null reads as the default (an older version lacked
// it); present with another type throws, naming the member.
class JsonFields {
 public:
  JsonFields(const nlohmann::json& object, std::string where)
      : object_(object), where_(std::move(where)) {
    if (!object_.is_object()) throw std::runtime_error(where_ + ": not an object");
  }
  const nlohmann::json* find(const char* key) const {
    const auto it = object_.find(key);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }
  std::optional<double> optional_number(const char* key) const {
    const nlohmann::json* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_number() || !std::isfinite(v->get<double>())) throw wrong(key, "a finite number");
    return v->get<double>();
  }
  double number(const char* key, double fallback = 0) const {
    return optional_number(key).value_or(fallback);
  }
  std::optional<std::uint64_t> optional_count(const char* key) const {
    const nlohmann::json* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_number_unsigned()) throw wrong(key, "a whole number");
    return v->get<std::uint64_t>();
  }
  std::size_t count(const char* key) const {
    return static_cast<std::size_t>(optional_count(key).value_or(0));
  }
  std::uint32_t count32(const char* key) const {
    const std::uint64_t v = optional_count(key).value_or(0);
    if (v > std::numeric_limits<std::uint32_t>::max()) throw wrong(key, "a 32-bit count");
    return static_cast<std::uint32_t>(v);
  }
  bool flag(const char* key) const {
    const nlohmann::json* v = find(key);
    if (!v) return false;
    if (!v->is_boolean()) throw wrong(key, "true or false");
    return v->get<bool>();
  }
  std::string text(const char* key) const {
    const nlohmann::json* v = find(key);
    if (!v) return {};
    if (!v->is_string()) throw wrong(key, "a string");
    return v->get<std::string>();
  }
  Decision decision(const char* key) const {
    const std::string name = text(key);
    if (const auto d = parse_decision(name)) return *d;
    throw std::runtime_error(where_ + "." + key + ": '" + name + "' is none of " +
                             names_list(kDecisionNames));
  }
  // One of an enum's names; `fallback` when absent or empty (an older version lacked it, or
  // wrote "" for a verdict judged on nothing).
  template <class Enum, std::size_t N>
  Enum named(const char* key, const EnumNames<Enum, N>& names, Enum fallback) const {
    const std::string name = text(key);
    if (name.empty()) return fallback;
    if (const auto value = value_of(names, name)) return *value;
    throw std::runtime_error(where_ + "." + key + ": '" + name + "' is none of " +
                             names_list(names));
  }
  // An array member: each element through `read` (absent: none).
  template <class Read>
  void each(const char* key, Read read) const {
    const nlohmann::json* v = find(key);
    if (!v) return;
    if (!v->is_array()) throw wrong(key, "a list");
    for (std::size_t i = 0; i < v->size(); ++i)
      read(JsonFields((*v)[i], where_ + "." + key + "[" + std::to_string(i) + "]"));
  }
  // An object member through `read`; nullopt when absent or null.
  template <class Read>
  auto object(const char* key, Read read) const
      -> std::optional<decltype(read(std::declval<JsonFields>()))> {
    const nlohmann::json* v = find(key);
    if (!v) return std::nullopt;
    return read(JsonFields(*v, where_ + "." + key));
  }
  bool has(const char* key) const { return find(key) != nullptr; }

 private:
  std::runtime_error wrong(const char* key, const char* what) const {
    return std::runtime_error(where_ + "." + key + ": not " + what);
  }
  const nlohmann::json& object_;
  std::string where_;
};

PacingSummary pacing_of(const JsonFields& p) {
  PacingSummary out;
  out.frames = p.count("frames");
  out.late = p.count("late");
  out.stutters = p.count("stutters");
  out.interval_p50_us = p.number("interval_p50_us");
  out.one_percent_low_fps = p.number("one_percent_low_fps");
  return out;
}

PhaseShift phase_shift_of(const JsonFields& p) {
  PhaseShift out;
  out.phase = p.text("phase");
  out.baseline_mean_us = p.number("baseline_mean_us");
  out.condition_mean_us = p.number("condition_mean_us");
  out.shift_us = p.number("shift_us");
  out.low_us = p.optional_number("low_us");
  out.high_us = p.optional_number("high_us");
  return out;
}

SchedAccount sched_account_of(const JsonFields& a) {
  SchedAccount out;
  out.rounds = a.count("rounds");
  out.frames = a.count("frames");
  out.runnable_ms = a.optional_number("runnable_ms").value_or(0);
  out.to_background_ms = a.optional_number("to_background_ms").value_or(0);
  out.run_delay_ms = a.optional_number("run_delay_ms");
  out.most_way = a.text("most_way");
  out.most_times = a.count("most_times");
  out.most_ms = a.optional_number("most_ms").value_or(0);
  out.most_p50_ms = a.optional_number("most_p50_ms").value_or(0);
  out.line = a.text("line");
  return out;
}

TimeAccount time_account_of(const JsonFields& a) {
  TimeAccount out;
  out.interval = a.object("interval", phase_shift_of).value_or(PhaseShift{});
  a.each("phases", [&](const JsonFields& p) { out.phases.push_back(phase_shift_of(p)); });
  out.run_delay = a.object("run_delay", phase_shift_of);
  out.frames = a.count("frames");
  out.late_frames = a.count("late_frames");
  out.late_overlapping_background = a.count("late_overlapping_background");
  out.intervals_with_compiles = a.count("intervals_with_compiles");
  out.intervals_sharing_cpu = a.count("intervals_sharing_cpu");
  out.frames_with_worker_cpus = a.count("frames_with_worker_cpus");
  out.frames_worker_on_loop_cpu = a.count("frames_worker_on_loop_cpu");
  out.baseline_frames_with_worker_cpus = a.count("baseline_frames_with_worker_cpus");
  out.baseline_frames_worker_on_loop_cpu = a.count("baseline_frames_worker_on_loop_cpu");
  out.line = a.text("line");
  return out;
}

BackgroundProgress progress_of(const JsonFields& p, const std::string& condition) {
  BackgroundProgress out;
  out.condition = condition;
  out.compiles = p.count("compiles");
  out.seconds = p.number("seconds");
  out.compiles_per_s = p.number("compiles_per_s");
  out.queue_to_done_p50_ms = p.optional_number("queue_to_done_p50_ms");
  out.queue_to_done_p99_ms = p.optional_number("queue_to_done_p99_ms");
  out.on_cpu_ms_per_compile = p.optional_number("on_cpu_ms_per_compile");
  out.kernel_share = p.optional_number("kernel_share");
  out.minor_faults_per_compile = p.optional_number("minor_faults_per_compile");
  out.run_delay_ms_per_compile = p.optional_number("run_delay_ms_per_compile");
  if (const nlohmann::json* waits = p.find("commit_to_event_ms")) {
    if (!waits->is_array()) throw std::runtime_error("commit_to_event_ms: not a list");
    for (const nlohmann::json& w : *waits) {
      if (!w.is_number()) throw std::runtime_error("commit_to_event_ms: not a list of numbers");
      out.commit_to_event_ms.push_back(w.get<double>());
    }
  }
  out.commits_not_signalled = p.count("commits_not_signalled");
  out.commits_asked_at_end = p.count("commits_asked_at_end");
  return out;
}

}  // namespace

Result<LoadedStudyVerdict> load_verdict_json(const std::filesystem::path& file) {
  auto text = read_input_file(file, kMaxJsonFileBytes);
  if (!text) return text.error();
  const nlohmann::json json = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  LoadedStudyVerdict out;
  StudyVerdict& v = out.verdict;
  try {
    if (json.is_discarded()) throw std::runtime_error("not JSON");
    const JsonFields top(json, "verdict.json");
    if (!top.has("conditions")) throw std::runtime_error("no conditions");
    v.study = top.text("study");
    v.baseline = top.text("baseline");
    v.rounds = top.count32("rounds");
    v.unit = top.text("unit");
    v.tests = top.count("tests_per_condition");
    v.gpu_clock = top.named("gpu_clock", kClockNames, Clock::poll);
    v.period_us = top.optional_number("period_us");
    v.has_control = top.flag("has_control");
    v.control_detected = top.flag("control_detected");
    v.has_null = top.flag("has_null");
    v.null_false_alarm = top.flag("null_false_alarm");
    v.has_negative = top.flag("has_negative");  // files from before the negative control lack both
    v.harness_fault = top.flag("harness_fault");
    if (const auto threads = top.optional_count("detected_from_threads"))
      v.detected_from_threads = static_cast<std::uint32_t>(*threads);
    if (const auto must = top.object("must_intrude", [](const JsonFields& m) {
          return std::tuple(m.count32("threads"), m.text("why"), m.flag("detected"));
        }))
      std::tie(v.must_intrude_threads, v.must_intrude_why, v.must_intrude_detected) = *must;
    v.cpu_phase_of_asked = top.optional_number("cpu_phase_of_asked");
    v.late_line_us = top.optional_number("late_line_us");
    v.stutter_line_us = top.optional_number("stutter_line_us");
    v.baseline_pacing = top.object("baseline_pacing", pacing_of);
    v.baseline_sched = top.object("baseline_sched", sched_account_of);
    v.summary = top.text("summary");
    top.each("not_run", [&](const JsonFields& n) {
      v.not_run.emplace_back(n.text("condition"), n.text("why"));
    });
    top.each("control_doses", [&](const JsonFields& d) {
      ControlDose dose;
      dose.condition = d.text("condition");
      dose.threads = d.count32("threads");
      dose.decision = d.decision("verdict");
      dose.metric = d.text("strongest_metric");
      dose.ratio_p50 = d.optional_number("ratio_p50");
      dose.tail_excess = d.optional_number("tail_excess");
      v.doses.push_back(std::move(dose));
    });
    top.each("conditions", [&](const JsonFields& c) {
      ConditionVerdict cv;
      cv.condition = c.text("condition");
      if (cv.condition.empty())
        throw std::runtime_error("verdict.json: a condition without a name");
      cv.control = c.flag("control");
      cv.null_control = c.flag("null_control");
      cv.negative_control = c.flag("negative_control");
      cv.spinners = c.flag("spinners");  // files before it: false
      cv.pacing = c.object("pacing", pacing_of);
      cv.time_account = c.object("time_account", time_account_of);
      cv.sched = c.object("sched", sched_account_of);  // files before the record lack it
      cv.burst_note = c.text("burst_note");
      // Files from before the resolution was reported lack it.
      if (const auto r = c.object("resolvable", [](const JsonFields& f) {
            return std::tuple(f.optional_number("median_ratio"), f.optional_number("tail_excess"),
                              f.count("units"));
          }))
        std::tie(cv.resolvable_ratio, cv.resolvable_tail, cv.units) = *r;
      cv.decision = c.decision("verdict");
      cv.pairing = c.text("pairing");
      cv.frames = c.count("frames");
      cv.active_frames = c.count("active_frames");
      cv.starved = c.flag("starved");
      cv.scheduling = c.text("scheduling");
      cv.spec_scheduling = c.flag("spec_scheduling");
      const auto progress = c.object("progress", [&](const JsonFields& p) {
        return std::pair(progress_of(p, cv.condition), p.has("compiles_per_s"));
      });
      if (progress)
        cv.progress = progress->first;
      else
        cv.progress.condition = cv.condition;
      out.has_compile_rate.push_back(progress && progress->second);
      v.conditions.push_back(std::move(cv));
    });
    if (const auto settings = top.object("settings", [](const JsonFields& s) {
          VerdictSettings out;
          out.p50_margin = s.number("p50_margin", out.p50_margin);
          out.tail_margin = s.number("tail_margin", out.tail_margin);
          out.alpha = s.number("alpha", out.alpha);
          out.min_difference_us = s.number("min_difference_us", out.min_difference_us);
          out.late_tolerance_us = s.optional_number("late_tolerance_us");
          if (s.has("blocks")) out.blocks = s.count("blocks");
          if (s.has("min_units")) out.min_units = s.count("min_units");
          if (s.has("min_unit_frames")) out.min_unit_frames = s.count("min_unit_frames");
          if (s.has("min_frames")) out.min_frames = s.count("min_frames");
          return out;
        }))
      out.settings = *settings;
    out.rounds = top.object("progress", [](const JsonFields& p) {
      StudyRounds r;
      r.planned = p.count32("rounds_planned");
      r.run = p.count32("rounds_run");
      r.seconds = p.number("seconds");
      r.budget_s = p.number("budget_s");
      r.max_rounds = p.count32("max_rounds");
      r.decided = p.flag("decided");
      r.stop = p.text("stop");
      return r;
    });
  } catch (const std::exception& e) {
    return make_error(file.string() + ": " + e.what());
  }
  return out;
}

}  // namespace gpuoverlap

// The study's verdict (judge_study), in steps: the conditions and their rounds, the baseline's
// evidence, each condition's decision over its endpoints, then the study's: the control's doses,
// decisions the host's bursts made alone withdrawn, no power, starved conditions.
#include "analysis/verdict.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/verdict_internal.h"

namespace gpuoverlap {

namespace verdict_internal {

namespace {

// A study's conditions in first-seen order, each with its rounds, and which one is the baseline.
struct StudyConditions {
  std::vector<std::pair<std::string, std::vector<const ScenarioOutcome*>>> conditions;
  std::string baseline_name;
  // A study of neighbours (engine/concurrent_suite.h): the device alone is the baseline, and
  // every frame of a condition is evidence, as no background work marks the frames it touched.
  bool neighbours = false;

  const std::vector<const ScenarioOutcome*>& baseline_rounds() const {
    return std::find_if(conditions.begin(), conditions.end(),
                        [&](const auto& c) { return c.first == baseline_name; })
        ->second;
  }
};

Result<StudyConditions> group_conditions(const std::vector<const ScenarioOutcome*>& outcomes) {
  StudyConditions study;
  const bool neighbours = !outcomes.empty() && outcomes.front()->scenario.neighbours_study;
  study.neighbours = neighbours;
  std::string& baseline_name = study.baseline_name;
  auto& conditions = study.conditions;
  for (const ScenarioOutcome* o : outcomes) {
    if (!o->timeline) return make_error("condition '" + o->scenario.condition + "' has no results");
    if (o->scenario.neighbours_study != neighbours)
      return make_error("a study of neighbours mixed with one of background work");
    if (neighbours ? o->scenario.condition == "alone"
                   : !o->scenario.background && !o->scenario.null_control) {
      if (!baseline_name.empty() && baseline_name != o->scenario.condition)
        return make_error("two baseline conditions ('" + baseline_name + "' and '" +
                          o->scenario.condition + "')");
      baseline_name = o->scenario.condition;
    }
    auto it = std::find_if(conditions.begin(), conditions.end(),
                           [&](const auto& c) { return c.first == o->scenario.condition; });
    if (it == conditions.end()) {
      conditions.push_back({o->scenario.condition, {}});
      it = conditions.end() - 1;
    }
    if (std::find(it->second.begin(), it->second.end(), o) != it->second.end())
      return make_error("condition '" + o->scenario.condition + "' given twice");
    it->second.push_back(o);
  }
  if (baseline_name.empty())
    return make_error(neighbours ? "no baseline condition (the device alone)"
                                 : "no baseline condition (one without [background])");
  return study;
}

// What every condition is judged against: the baseline's samples over all its rounds, the
// endpoints, and which of them the baseline has samples of.
struct BaselineEvidence {
  Samples metrics;
  std::vector<Endpoint> endpoints;
  std::vector<bool> measurable;
};

// The study's figures the baseline sets (its rounds, the GPU clock, the unit, the period, a
// paced frame's lines and pacing, the tests, the host bursts' line), into `out`.
BaselineEvidence judge_baseline(const std::vector<const ScenarioOutcome*>& outcomes,
                                const StudyConditions& study, const VerdictSettings& settings,
                                StudyVerdict& out) {
  const std::vector<const ScenarioOutcome*>& baseline = study.baseline_rounds();
  BaselineEvidence evidence;
  out.study = outcomes.front()->scenario.study;
  out.rounds = 1;
  for (const ScenarioOutcome* o : outcomes) out.rounds = std::max(out.rounds, o->scenario.round);
  out.baseline = study.baseline_name;
  // Timestamps when the baseline has them for every workload, else the poll clock.
  out.gpu_clock = Clock::ts;
  for (const ScenarioOutcome* r : baseline)
    for (const WorkloadFrameRecord& rec : r->timeline->records)
      if (rec.status == RecordStatus::ok && !(rec.ts_start_us && rec.ts_end_us))
        out.gpu_clock = Clock::poll;
  evidence.metrics = pooled_metrics(baseline, out.gpu_clock, any_frame);
  out.unit = baseline.size() == 1 ? "block" : "round";
  const Scenario& foreground = baseline.front()->scenario;
  out.not_run = foreground.study_not_run;
  out.period_us = frame_period_us(foreground, evidence.metrics);
  const bool paced = foreground.cpu && foreground.cpu->frame_period_ms > 0;
  std::optional<double> tolerance_us;
  if (paced) {
    std::vector<std::vector<double>> rounds_interval_us;
    for (const ScenarioOutcome* r : baseline)
      rounds_interval_us.push_back(
          samples_of(verdict_metrics(r->scenario, *r->timeline, out.gpu_clock, any_frame),
                     "frame_interval_us"));
    tolerance_us =
        late_tolerance_us(*out.period_us, rounds_interval_us, settings.late_tolerance_us);
    out.late_line_us = *out.period_us + *tolerance_us;
    out.stutter_line_us = 1.5 * *out.period_us;
    out.baseline_pacing = pacing_summary(samples_of(evidence.metrics, "frame_interval_us"),
                                         *out.late_line_us, *out.stutter_line_us);
  }
  // Endpoints the baseline has no sample of (no stamps, no chain) are not judged at all.
  evidence.endpoints = verdict_endpoints(foreground, tolerance_us);
  evidence.measurable.assign(evidence.endpoints.size(), false);
  out.tests = 0;
  for (std::size_t m = 0; m < evidence.endpoints.size() && m < evidence.metrics.size(); ++m) {
    evidence.measurable[m] = !evidence.metrics[m].second.empty();
    if (evidence.measurable[m] && evidence.endpoints[m].primary)
      out.tests += (evidence.endpoints[m].median ? 1 : 0) + (evidence.endpoints[m].tail ? 1 : 0);
  }
  out.tests = std::max<std::size_t>(out.tests, 1);
  out.burst_reference = burst_reference(baseline);
  if (out.burst_reference) out.baseline_bursts = find_host_bursts(baseline, *out.burst_reference);
  out.baseline_sched = sched_account(baseline);
  return evidence;
}

// A condition's positive-control threads, and how its compile threads were scheduled.
void describe_scheduling(ConditionVerdict& cv,
                         const std::optional<background::BackgroundSpec>& background,
                         bool neighbours) {
  cv.control_threads = background && !neighbours ? background->unmanaged_threads : 0;
  cv.control = cv.control_threads > 0;
  // The negative control runs no compiles: it has no scheduling of compile threads to name.
  if (background && !cv.control && !neighbours && !background->idle_spinners) {
    using namespace background;
    cv.spec_scheduling = background->policy == ThreadPolicy::idle &&
                         background->cpus.kind == CpuPlacementKind::any &&
                         background->allocator == Allocator::system && !background->cgroup_idle &&
                         background->dispatch == Dispatch::any;
    cv.scheduling = std::string(to_string(background->policy));
    if (background->cpus.kind != CpuPlacementKind::any)
      cv.scheduling += ", cpus " + describe(background->cpus);
    if (background->allocator == Allocator::keep) cv.scheduling += ", memory kept";
    if (background->cgroup_idle) cv.scheduling += ", idle cgroup";
    if (background->dispatch == Dispatch::gaps) cv.scheduling += ", in the frame's gaps";
  }
}

// The rows of one condition, one per endpoint the baseline measured: against the baseline, or an
// alternating condition (`block` > 0) against its own held blocks. `metrics`: the condition's
// evidence frames' samples; `use`: which of its frames are evidence.
std::vector<VerdictRow> judge_rows(const std::string& condition,
                                   const std::vector<const ScenarioOutcome*>& rounds,
                                   const Samples& metrics, std::uint32_t block,
                                   bool (*use)(const FrameRecord&),
                                   const std::vector<const ScenarioOutcome*>& baseline_rounds,
                                   const BaselineEvidence& baseline,
                                   const VerdictSettings& settings, const StudyVerdict& out) {
  // An alternating condition's baseline is its own held blocks.
  const Samples own_baseline = block ? pooled_metrics(rounds, out.gpu_clock, held_side) : Samples{};
  const Samples& reference = block ? own_baseline : baseline.metrics;
  const std::vector<Unit> units =
      units_of(baseline_rounds, rounds, out.gpu_clock, settings, block, use);
  const std::size_t count = std::min({metrics.size(), reference.size(), baseline.endpoints.size()});
  std::vector<VerdictRow> judged;
  for (std::size_t m = 0; m < count; ++m) {
    if (!baseline.measurable[m]) continue;
    judged.push_back(judge_metric(condition, baseline.endpoints[m], m, reference[m].second,
                                  metrics[m].second, units, out.tests, settings));
    if (judged.back().effect_us && out.period_us && *out.period_us > 0)
      judged.back().effect_share = *judged.back().effect_us / *out.period_us;
  }
  return judged;
}

// One dose of the positive control: its verdict, and its strongest effect among its rows
// [first, last).
ControlDose control_dose(const ConditionVerdict& cv, std::vector<VerdictRow>::const_iterator first,
                         std::vector<VerdictRow>::const_iterator last,
                         const VerdictSettings& settings) {
  ControlDose dose{cv.condition, cv.control_threads, cv.decision, "", {}, {}};
  // The strongest effect: the intrusive row that clears its margin by the most, in units of
  // the margin (a median ratio and a tail share are not otherwise comparable).
  double best = 0;
  for (auto row = first; row != last; ++row) {
    if (row->decision != Decision::intrusive) continue;
    const double median_clear =
        row->ci_low ? std::log(*row->ci_low) / std::log1p(settings.p50_margin) : 0;
    const double tail_clear =
        row->tail_ci_low && settings.tail_margin > 0 ? *row->tail_ci_low / settings.tail_margin : 0;
    if (std::max(median_clear, tail_clear) > best) {
      best = std::max(median_clear, tail_clear);
      dose.metric = row->metric;
      dose.ratio_p50 = row->ratio_p50;
      dose.tail_excess = row->tail_excess;
    }
  }
  return dose;
}

// ConditionVerdict::resolvable_*: the worst of its primary rows, each over the tests it makes.
void set_resolvable(ConditionVerdict& cv, std::vector<VerdictRow>::const_iterator first,
                    std::vector<VerdictRow>::const_iterator last) {
  for (auto r = first; r != last; ++r) {
    if (r->role != EndpointRole::primary) continue;
    cv.units = std::max(cv.units, r->units);
    if (tests_median(r->tests) && r->detectable_ratio)
      cv.resolvable_ratio = std::max(cv.resolvable_ratio.value_or(0.0), *r->detectable_ratio);
    if (tests_tail(r->tests) && r->detectable_tail)
      cv.resolvable_tail = std::max(cv.resolvable_tail.value_or(0.0), *r->detectable_tail);
  }
}

// Judges one condition (not the baseline) over its rounds: its rows go to out.rows, its verdict to
// out.conditions, a positive control's dose to out.doses.
void judge_condition(const std::string& name, const std::vector<const ScenarioOutcome*>& rounds,
                     const StudyConditions& study, const BaselineEvidence& baseline,
                     const VerdictSettings& settings, StudyVerdict& out) {
  const bool neighbours = study.neighbours;
  bool (*const evidence)(const FrameRecord&) = neighbours ? any_frame : background_overlapped;
  ConditionVerdict cv;
  cv.condition = name;
  describe_scheduling(cv, rounds.front()->scenario.background, neighbours);
  // The null control has no background work to mark frames: every frame is evidence.
  cv.null_control = !neighbours && rounds.front()->scenario.null_control;
  cv.negative_control = !neighbours && rounds.front()->scenario.negative_control;
  const auto& background = rounds.front()->scenario.background;
  cv.spinners = !neighbours && background && background->idle_spinners;
  if (cv.spinners && !cv.negative_control) cv.scheduling = "idle-priority spinners";
  // Neither the null control nor spinners (the negative control among them) run compiles that
  // mark frames: every frame is evidence.
  bool (*const use)(const FrameRecord&) = cv.null_control || cv.spinners ? any_frame : evidence;
  for (const ScenarioOutcome* r : rounds) {
    cv.frames += r->timeline->frames.size();
    for (const FrameRecord& f : r->timeline->frames)
      if (use(f)) ++cv.active_frames;
  }
  out.has_control = out.has_control || cv.control;
  out.has_null = out.has_null || cv.null_control;
  out.has_negative = out.has_negative || cv.negative_control;
  const std::uint32_t block = neighbours ? 0 : alternate_frames(rounds.front()->scenario);
  const Samples metrics = pooled_metrics(rounds, out.gpu_clock, block ? running_side : use);
  if (out.late_line_us)
    cv.pacing = pacing_summary(samples_of(metrics, "frame_interval_us"), *out.late_line_us,
                               *out.stutter_line_us);
  if (!block)
    cv.time_account = account_time(study.baseline_rounds(), rounds, use, out.late_line_us);
  std::vector<VerdictRow> judged = judge_rows(cv.condition, rounds, metrics, block, use,
                                              study.baseline_rounds(), baseline, settings, out);
  cv.pairing = block ? fmt::format("alternating:{}", block) : out.unit;
  bool any_intrusive = false, all_fine = true;
  for (VerdictRow& row : judged) {
    row.control = cv.control;
    row.null_control = cv.null_control;
    row.negative_control = cv.negative_control;
    row.pairing = cv.pairing;
    const bool primary = row.role == EndpointRole::primary;
    if (primary && !cv.spinners && cv.active_frames < settings.min_frames &&
        row.decision != Decision::intrusive) {
      row.decision = Decision::inconclusive;
      row.note = fmt::format("background work overlapped only {} of {} frames", cv.active_frames,
                             cv.frames);
    }
    if (primary) {
      any_intrusive = any_intrusive || row.decision == Decision::intrusive;
      all_fine = all_fine && row.decision == Decision::non_intrusive;
    }
    out.rows.push_back(std::move(row));
  }
  cv.progress = background_progress(cv.condition, cv.control_threads, rounds);
  cv.sched = sched_account(rounds);
  if (out.burst_reference) cv.bursts = find_host_bursts(rounds, *out.burst_reference);
  cv.decision = any_intrusive ? Decision::intrusive
                : all_fine    ? Decision::non_intrusive
                              : Decision::inconclusive;
  if (cv.control && any_intrusive) out.control_detected = true;
  if (cv.null_control && any_intrusive) out.null_false_alarm = true;
  if (cv.negative_control && any_intrusive) out.harness_fault = true;
  const auto first_row = out.rows.end() - static_cast<std::ptrdiff_t>(judged.size());
  set_resolvable(cv, first_row, out.rows.end());
  if (cv.control) out.doses.push_back(control_dose(cv, first_row, out.rows.end(), settings));
  out.conditions.push_back(cv);
}

// The controls by threads, fewest first, the smallest dose detected, and whether a dose that
// must intrude on `foreground` was.
void order_doses(StudyVerdict& out, const Scenario& foreground) {
  std::stable_sort(
      out.doses.begin(), out.doses.end(),
      [](const ControlDose& a, const ControlDose& b) { return a.threads < b.threads; });
  for (const ControlDose& d : out.doses)
    if (d.decision == Decision::intrusive) {
      out.detected_from_threads = d.threads;
      break;
    }
  if (const auto must = must_intrude_dose(foreground)) {
    out.must_intrude_threads = must->threads;
    out.must_intrude_why = must->why;
    out.must_intrude_detected =
        std::any_of(out.doses.begin(), out.doses.end(), [&](const ControlDose& d) {
          return d.threads >= must->threads && d.decision == Decision::intrusive;
        });
  }
}

// A round in which the host burst with nothing else running (the baseline's or the null
// control's bursts) may not decide a condition alone: judged again without such rounds, a
// decision that changes is withdrawn. Only where enough rounds remain to judge at all.
void withdraw_burst_decisions(const std::vector<const ScenarioOutcome*>& outcomes,
                              const VerdictSettings& settings, StudyVerdict& out) {
  std::vector<std::uint32_t> burst_rounds = out.baseline_bursts.rounds;
  for (const ConditionVerdict& cv : out.conditions)
    if (cv.null_control)
      burst_rounds.insert(burst_rounds.end(), cv.bursts.rounds.begin(), cv.bursts.rounds.end());
  std::sort(burst_rounds.begin(), burst_rounds.end());
  burst_rounds.erase(std::unique(burst_rounds.begin(), burst_rounds.end()), burst_rounds.end());
  const auto in_burst_round = [&](const ScenarioOutcome* o) {
    return std::binary_search(burst_rounds.begin(), burst_rounds.end(), o->scenario.round);
  };
  std::vector<const ScenarioOutcome*> calm;
  for (const ScenarioOutcome* o : outcomes)
    if (!in_burst_round(o)) calm.push_back(o);
  if (burst_rounds.empty() || out.rounds < burst_rounds.size() + settings.min_units) return;
  VerdictSettings without = settings;
  without.guard_host_bursts = false;
  const auto calm_verdict = judge_study(calm, without);
  if (!calm_verdict.ok()) return;
  for (ConditionVerdict& cv : out.conditions) {
    if (cv.control || cv.null_control || cv.negative_control) continue;
    if (cv.decision != Decision::intrusive && cv.decision != Decision::non_intrusive) continue;
    const auto again =
        std::find_if(calm_verdict->conditions.begin(), calm_verdict->conditions.end(),
                     [&](const ConditionVerdict& c) { return c.condition == cv.condition; });
    // Without the control detected there, the calm rounds lose power, which contradicts
    // no decision: only a decision of their own does.
    if (again == calm_verdict->conditions.end() || again->decision == cv.decision ||
        again->decision == Decision::no_power)
      continue;
    cv.burst_note = fmt::format(
        "{} only with round{} {}, where the host burst with nothing else running; without "
        "{}: {}",
        to_string(cv.decision), burst_rounds.size() == 1 ? "" : "s", fmt::join(burst_rounds, ", "),
        burst_rounds.size() == 1 ? "it" : "them", to_string(again->decision));
    cv.decision = Decision::inconclusive;
    for (VerdictRow& row : out.rows)
      if (row.condition == cv.condition && row.role == EndpointRole::primary &&
          (row.decision == Decision::intrusive || row.decision == Decision::non_intrusive)) {
        row.note += std::string(row.note.empty() ? "" : "; ") + "withdrawn: " + cv.burst_note;
        row.decision = Decision::inconclusive;
      }
  }
}

// No power: the positive control was not told apart from the baseline, so a condition that
// looks non-intrusive may only show that this setup cannot see intrusion.
// The null control keeps its own call: it checks the error control, not the power.
void call_no_power(StudyVerdict& out) {
  if (!out.has_control || out.control_detected) return;
  for (VerdictRow& row : out.rows)
    if (!row.control && !row.null_control && !row.negative_control &&
        row.role == EndpointRole::primary)
      row.decision = Decision::no_power;
  for (ConditionVerdict& cv : out.conditions)
    if (!cv.control && !cv.null_control && !cv.negative_control) cv.decision = Decision::no_power;
}

// Progress beside the cost: the control's smallest dose is the rate of unmanaged compiles;
// a non-intrusive condition that got under 5 % of it done is starved.
void mark_starved(StudyVerdict& out, bool neighbours) {
  const BackgroundProgress* control_rate = control_rate_of(out.conditions);
  for (ConditionVerdict& cv : out.conditions) {
    if (neighbours || cv.control || cv.null_control || cv.spinners ||
        cv.decision != Decision::non_intrusive)
      continue;
    cv.starved = cv.progress.compiles == 0 ||
                 (control_rate && cv.progress.compiles_per_s < 0.05 * control_rate->compiles_per_s);
  }
}

// StudyVerdict::cpu_phase_of_asked: none without the host bursts' line (from the baseline's CPU
// phase) or busy work asked of the workers.
std::optional<double> phase_of_asked(const StudyVerdict& out, const Scenario& foreground) {
  if (!out.burst_reference) return std::nullopt;
  const double asked_ms = foreground.cpu ? foreground.cpu->cpu_ms_per_worker_share() : 0.0;
  if (!(asked_ms > 0)) return std::nullopt;
  return out.burst_reference->cpu_phase_p50_us / 1000.0 / asked_ms;
}

}  // namespace

}  // namespace verdict_internal

std::string describe_resolvable(const ConditionVerdict& cv) {
  std::vector<std::string> parts;
  if (cv.resolvable_ratio) parts.push_back(fmt::format("a median x{:.3f}", *cv.resolvable_ratio));
  if (cv.resolvable_tail)
    parts.push_back(fmt::format("a tail of {:+.1f} points", 100.0 * *cv.resolvable_tail));
  if (parts.empty()) return {};
  const std::string_view unit = cv.pairing == "round"   ? "round"
                                : cv.pairing == "block" ? "block"
                                                        : "block pair";
  return fmt::format("its {} {}{} could resolve {} (half the time)", cv.units, unit,
                     cv.units == 1 ? "" : "s", fmt::join(parts, " or "));
}

bool must_intrude_reached(const StudyVerdict& verdict) {
  return verdict.must_intrude_threads &&
         std::any_of(verdict.doses.begin(), verdict.doses.end(), [&](const ControlDose& d) {
           return d.threads >= *verdict.must_intrude_threads;
         });
}

std::optional<MustIntrudeDose> must_intrude_dose(const Scenario& foreground) {
  if (!foreground.cpu) return std::nullopt;
  const jobs::CpuFrameSpec& cpu = *foreground.cpu;
  const double work_ms = cpu.cpu_ms_per_worker_share();
  if (!(cpu.frame_period_ms > 0) || !(2.0 * work_ms > cpu.frame_period_ms)) return std::nullopt;
  MustIntrudeDose dose;
  dose.threads = cpu.workers + 1;
  dose.why = fmt::format(
      "one normal-priority thread on each of the frame's {} CPUs: with half of each CPU, a "
      "worker's {:.1f} ms of work per frame takes {:.1f} ms, past the {:.1f} ms period",
      dose.threads, work_ms, 2.0 * work_ms, cpu.frame_period_ms);
  return dose;
}

Result<StudyVerdict> judge_study(const std::vector<const ScenarioOutcome*>& outcomes,
                                 const VerdictSettings& settings) {
  using namespace verdict_internal;
  const Result<StudyConditions> study = group_conditions(outcomes);
  if (!study) return study.error();
  StudyVerdict out;
  const BaselineEvidence baseline = judge_baseline(outcomes, *study, settings, out);
  for (const auto& [name, rounds] : study->conditions) {
    if (name == study->baseline_name) continue;
    judge_condition(name, rounds, *study, baseline, settings, out);
  }
  const Scenario& foreground = study->baseline_rounds().front()->scenario;
  order_doses(out, foreground);
  if (settings.guard_host_bursts && !study->neighbours)
    withdraw_burst_decisions(outcomes, settings, out);
  call_no_power(out);
  mark_starved(out, study->neighbours);
  if (!study->neighbours) out.cpu_phase_of_asked = phase_of_asked(out, foreground);
  out.summary = study_summary(out, foreground, study->baseline_rounds(), study->neighbours);
  return out;
}

}  // namespace gpuoverlap

// StudyVerdict::summary: a line per condition (its call, the compiles it got done and their
// cost, its pacing, where its time went, its host bursts), then the study's (the baseline's
// bursts, the null and positive controls, the control's dose-response).
#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "analysis/verdict_internal.h"

namespace gpuoverlap::verdict_internal {

namespace {

// A study of neighbours: each device's call with the others running, against it alone.
std::string neighbours_summary(const StudyVerdict& verdict,
                               const std::vector<const ScenarioOutcome*>& baseline_rounds) {
  std::string summary;
  std::size_t baseline_frames = 0;
  for (const ScenarioOutcome* r : baseline_rounds) baseline_frames += r->timeline->frames.size();
  for (const ConditionVerdict& cv : verdict.conditions)
    summary += fmt::format(
        "{}: {} ({} frames with the other devices running it, against {} alone)\n", cv.condition,
        cv.decision == Decision::intrusive       ? "disturbed by the other devices"
        : cv.decision == Decision::non_intrusive ? "not disturbed by the other devices"
                                                 : to_string(cv.decision),
        cv.frames, baseline_frames);
  summary +=
      "a study of neighbours has no positive control: \"not disturbed\" holds within the "
      "margins, for effects at least verdict.csv's detectable_ratio\n";
  return summary;
}

// One condition's line.
std::string condition_line(const ConditionVerdict& cv, const StudyVerdict& verdict,
                           const BackgroundProgress* control_rate) {
  std::string rate = fmt::format("{:.1f} compiles/s", cv.progress.compiles_per_s);
  if (!cv.control && control_rate)
    rate +=
        fmt::format(" (unmanaged, {} thread{}: {:.1f})", control_rate->control_threads,
                    control_rate->control_threads == 1 ? "" : "s", control_rate->compiles_per_s);
  if (const std::string cost = describe_compile_cost(cv.progress); !cost.empty())
    rate += "; " + cost;
  if (const std::string waits = describe_commit_waits(cv.progress); !waits.empty())
    rate += "; " + waits;
  std::string pacing;
  if (cv.pacing && verdict.baseline_pacing)
    pacing = "; " + describe_pacing(*cv.pacing, *verdict.baseline_pacing, *verdict.late_line_us);
  if (cv.time_account) pacing += "; " + cv.time_account->line;
  if (cv.sched) pacing += "; " + cv.sched->line;
  if (verdict.burst_reference)
    if (const std::string bursts = describe_host_bursts(cv.bursts, *verdict.burst_reference);
        !bursts.empty())
      pacing += "; " + bursts;
  if (!cv.burst_note.empty()) pacing += "; withdrawn: " + cv.burst_note;
  if (is_inconclusive(cv.decision))
    if (const std::string resolvable = describe_resolvable(cv); !resolvable.empty())
      pacing += "; " + resolvable;
  // A dose below the one detected takes the study's rounds only once every condition is
  // decided (study_progress.h): its call may rest on the first rounds alone, however many
  // frames they made late.
  if (cv.control && is_inconclusive(cv.decision) && verdict.detected_from_threads &&
      cv.control_threads < *verdict.detected_from_threads)
    pacing += fmt::format(
        "; a dose below the one detected ({} threads): it takes more rounds only once every "
        "condition is decided",
        *verdict.detected_from_threads);
  if (cv.null_control)
    return fmt::format("{} (null control, the baseline's settings again): {} ({} frames{})\n",
                       cv.condition, to_string(cv.decision), cv.frames, pacing);
  if (cv.negative_control)
    return fmt::format(
        "{} (negative control, idle-priority threads on every foreground CPU): {} ({} "
        "frames{})\n",
        cv.condition, to_string(cv.decision), cv.frames, pacing);
  if (cv.spinners)
    return fmt::format(
        "{} (idle-priority threads on every foreground CPU, no compiles): {} ({} frames{})\n",
        cv.condition, to_string(cv.decision), cv.frames, pacing);
  return fmt::format(
      "{}{}: {}, {} ({} of {} frames overlapped background work{}){}\n", cv.condition,
      cv.control ? " (positive control)" : "",
      cv.starved ? std::string_view("non-intrusive but starved") : to_string(cv.decision), rate,
      cv.active_frames, cv.frames,
      cv.pairing.starts_with("alternating:")
          ? "; against its own held blocks of " +
                cv.pairing.substr(std::string_view("alternating:").size()) + " frames"
          : "",
      pacing);
}

}  // namespace

std::string study_summary(const StudyVerdict& verdict, const Scenario& foreground,
                          const std::vector<const ScenarioOutcome*>& baseline_rounds,
                          bool neighbours) {
  if (neighbours) return neighbours_summary(verdict, baseline_rounds);
  std::string summary;
  const BackgroundProgress* control_rate = control_rate_of(verdict.conditions);
  for (const ConditionVerdict& cv : verdict.conditions)
    summary += condition_line(cv, verdict, control_rate);
  for (const auto& [condition, why] : verdict.not_run)
    summary += fmt::format("{}: not run on this host: {}\n", condition, why);
  if (verdict.baseline_sched)
    summary += fmt::format("baseline: {}\n", verdict.baseline_sched->line);
  if (verdict.burst_reference) {
    const std::string bursts =
        describe_host_bursts(verdict.baseline_bursts, *verdict.burst_reference);
    summary += fmt::format("baseline: {}\n", bursts.empty() ? "no host bursts" : bursts);
    // Set by judge_study where the frame asked for busy work (cpu_ms_per_frame).
    if (verdict.cpu_phase_of_asked && *verdict.cpu_phase_of_asked < kLessWorkThanAsked)
      summary += fmt::format(
          "the game frame did less work than asked: the baseline's CPU phase p50 {:.2f} ms "
          "against {:.2f} ms of busy work per worker; the busy-work calibration "
          "(meta.json cpu.busy_work_calibration) ran slower than the frames, so this study "
          "measured a lighter game than its file says\n",
          verdict.burst_reference->cpu_phase_p50_us / 1000.0,
          foreground.cpu->cpu_ms_per_worker_share());
  }
  if (verdict.has_null)
    summary += verdict.null_false_alarm
                   ? "null control called intrusive: its rounds differed from the baseline's "
                     "by more than the error control allows on this host, so an intrusive "
                     "call here may be false\n"
                   : "null control not called intrusive: the error control held\n";
  if (verdict.has_negative)
    summary += verdict.harness_fault
                   ? "HARNESS FAULT: the negative control (idle-priority threads the kernel "
                     "should run only on idle CPUs) was called intrusive: the measurement "
                     "itself disturbs the frame, so no call of this study can be trusted\n"
                   : "negative control not called intrusive: the harness left the frame alone\n";
  if (!verdict.has_control)
    summary += "no positive control in this study: a non-intrusive verdict is unchecked\n";
  else
    summary += verdict.control_detected
                   ? "positive control detected: the study can see intrusion\n"
                   : "positive control NOT detected: inconclusive (no power)\n";
  if (verdict.doses.size() > 1 || (verdict.doses.size() == 1 && verdict.detected_from_threads)) {
    summary += "control dose-response:";
    for (const ControlDose& d : verdict.doses) {
      summary += fmt::format(" {} thread{}: {}", d.threads, d.threads == 1 ? "" : "s",
                             to_string(d.decision));
      if (!d.metric.empty())
        summary += fmt::format(" ({} x{:.3f}, tail {:+.1f} points)", d.metric,
                               d.ratio_p50.value_or(0), 100.0 * d.tail_excess.value_or(0));
      summary += &d == &verdict.doses.back() ? "\n" : ";";
    }
    if (verdict.detected_from_threads)
      summary += fmt::format(
          "the smallest dose detected is {} normal-priority compile thread{}: intrusion weaker "
          "than that dose's may go unseen\n",
          *verdict.detected_from_threads, *verdict.detected_from_threads == 1 ? "" : "s");
  }
  if (verdict.has_control && verdict.must_intrude_threads) {
    const bool reached = must_intrude_reached(verdict);
    summary += fmt::format("the dose that must intrude is {} threads ({}): {}\n",
                           *verdict.must_intrude_threads, verdict.must_intrude_why,
                           !reached ? "no dose of this study reaches it"
                           : verdict.must_intrude_detected
                               ? "detected"
                               : "NOT detected: this study cannot see even certain intrusion");
  }
  return summary;
}

}  // namespace gpuoverlap::verdict_internal

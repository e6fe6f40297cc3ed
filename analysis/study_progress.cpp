// Sequential stopping: where a study stands after its rounds so far (undecided rows, the
// control's pending doses, the budget), and the next round of the studies that may run one.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

#include "analysis/verdict_internal.h"

namespace gpuoverlap {

namespace verdict_internal {

bool undecided(const VerdictRow& r) {
  return !r.control && !r.null_control && !r.negative_control && r.role == EndpointRole::primary &&
         is_inconclusive(r.decision);
}

StudyOutcomes study_outcomes(const SuiteOutcome& outcome) {
  StudyOutcomes out;
  for (const ScenarioOutcome& s : outcome.scenarios) {
    if (s.scenario.study.empty()) continue;
    out.studies[s.scenario.study].push_back(&s);
    out.complete.try_emplace(s.scenario.study, true);
    if (s.failure || !s.timeline) out.complete[s.scenario.study] = false;
  }
  return out;
}

}  // namespace verdict_internal

namespace {

// Whether `condition` takes the study's next round (next_study_rounds), given `p`'s undecided
// rows and pending doses. The budget goes where a round can still change a call:
// - the baseline, always (every condition is paired with its round);
// - a condition with undecided primary rows;
// - the positive control's undecided doses while none is detected (without one the study has
//   no power); once one is, the doses below it, only after every other condition is decided;
// - never a decided condition, nor the null or the negative control: each checks the rounds
//   the study ran (the error control, the harness) and holds at any number of rounds, so more
//   of theirs would only halve the rounds the undecided conditions get.
bool takes_next_round(const StudyVerdict& verdict, const StudyProgress& p,
                      const std::string& condition) {
  if (condition == verdict.baseline) return true;
  const auto cv = std::find_if(verdict.conditions.begin(), verdict.conditions.end(),
                               [&](const ConditionVerdict& c) { return c.condition == condition; });
  if (cv == verdict.conditions.end()) return true;
  if (!is_inconclusive(cv->decision) || cv->null_control || cv->negative_control) return false;
  if (!cv->control) return true;
  if (!verdict.detected_from_threads) return true;
  return p.undecided == 0 && cv->control_threads < *verdict.detected_from_threads;
}

// Each condition's latest round, in the order the study's last round ran them, and after them
// the conditions whose latest round is an earlier one (a control dose that waited while a
// condition was undecided, taking rounds again): what the next round repeats, if each takes it.
std::vector<const ScenarioOutcome*> latest_rounds(
    const std::vector<const ScenarioOutcome*>& outcomes, std::uint32_t last_round) {
  std::map<std::string, const ScenarioOutcome*> latest;
  for (const ScenarioOutcome* o : outcomes) {
    const ScenarioOutcome*& kept = latest[o->scenario.condition];
    if (!kept || o->scenario.round > kept->scenario.round) kept = o;
  }
  std::vector<const ScenarioOutcome*> out;
  for (const ScenarioOutcome* o : outcomes)
    if (o->scenario.round == last_round) out.push_back(o);
  for (const ScenarioOutcome* o : outcomes)
    if (latest.at(o->scenario.condition) == o && o->scenario.round != last_round) out.push_back(o);
  return out;
}

}  // namespace

StudyProgress study_progress(const std::vector<const ScenarioOutcome*>& outcomes,
                             const StudyVerdict& verdict) {
  StudyProgress p;
  p.rounds = verdict.rounds;
  // A condition intrusive on one primary endpoint is decided, whatever its other rows say:
  // only the rows of conditions still undecided hold the study back.
  for (const VerdictRow& r : verdict.rows) {
    const auto cv =
        std::find_if(verdict.conditions.begin(), verdict.conditions.end(),
                     [&](const ConditionVerdict& c) { return c.condition == r.condition; });
    const bool condition_decided = cv != verdict.conditions.end() && !is_inconclusive(cv->decision);
    p.undecided += verdict_internal::undecided(r) && !condition_decided ? 1 : 0;
  }
  p.decided = p.undecided == 0;
  const std::uint32_t smallest_detected =
      verdict.detected_from_threads.value_or(std::numeric_limits<std::uint32_t>::max());
  for (const ConditionVerdict& c : verdict.conditions)
    p.control_pending +=
        c.control && is_inconclusive(c.decision) && c.control_threads < smallest_detected ? 1 : 0;
  // What another round would cost: the latest round of the conditions that would take it.
  for (const ScenarioOutcome* o : outcomes) p.seconds += o->seconds;
  for (const ScenarioOutcome* o : latest_rounds(outcomes, p.rounds))
    if (takes_next_round(verdict, p, o->scenario.condition)) p.last_round_seconds += o->seconds;
  const Scenario& s = outcomes.front()->scenario;
  // Decided with the control's smaller doses pending: what stops it is still said, after
  // "decided", so the verdict reads as decided.
  const std::string state = p.decided
                                ? fmt::format("decided ({} smaller control dose{} undecided)",
                                              p.control_pending, p.control_pending == 1 ? "" : "s")
                                : "undecided";
  if (p.decided && p.control_pending == 0)
    p.stop = "decided";
  else if (s.rounds <= 1)
    p.stop = state + "; a study of one round is not extended";
  else if (s.neighbours_study)
    p.stop = state + "; a study of neighbours runs the rounds --concurrency-rounds gives";
  else if (s.study_budget_s <= 0)
    p.stop = state + "; no budget for more rounds (budget_s = 0)";
  else if (p.rounds >= s.study_max_rounds)
    p.stop = fmt::format("{} after max_rounds = {} rounds", state, s.study_max_rounds);
  else if (p.seconds + p.last_round_seconds > s.study_budget_s)
    p.stop =
        fmt::format("{}; budget spent ({:.0f} s of {:.0f} s, the next round would take {:.0f} s)",
                    state, p.seconds, s.study_budget_s, p.last_round_seconds);
  return p;
}

std::vector<Scenario> next_study_rounds(const SuiteOutcome& outcome,
                                        const VerdictSettings& settings, std::ostream& log) {
  std::vector<Scenario> next;
  if (outcome.failure) return next;  // the suite stops at a failure
  const verdict_internal::StudyOutcomes found = verdict_internal::study_outcomes(outcome);
  for (const auto& [study, outcomes] : found.studies) {
    if (!found.complete.at(study)) continue;
    const auto verdict = judge_study(outcomes, settings);
    if (!verdict) continue;  // write_study_verdicts reports it
    const StudyProgress progress = study_progress(outcomes, *verdict);
    if (!progress.stop.empty()) continue;
    // Sequential stopping per condition (takes_next_round): the baseline and what a round can
    // still decide take the next round; the rest stop.
    std::vector<Scenario> last_round;
    std::size_t stopped = 0;
    for (const ScenarioOutcome* o : latest_rounds(outcomes, progress.rounds)) {
      if (!takes_next_round(*verdict, progress, o->scenario.condition)) {
        ++stopped;
        continue;
      }
      last_round.push_back(o->scenario);
      last_round.back().round = progress.rounds;  // a dose back from waiting: numbered on
    }
    log << fmt::format(
               "study {}: {} endpoints undecided and {} smaller control doses after {} rounds "
               "({:.0f} s of {:.0f} s); adding round {} for {} condition{} ({} stopped: decided, "
               "or a control whose call needs no more rounds)\n",
               study, progress.undecided, progress.control_pending, progress.rounds,
               progress.seconds, outcomes.front()->scenario.study_budget_s, progress.rounds + 1,
               last_round.size() - 1, last_round.size() == 2 ? "" : "s", stopped)
        << std::flush;
    for (Scenario& s : next_study_round(last_round)) next.push_back(std::move(s));
  }
  return next;
}

}  // namespace gpuoverlap
